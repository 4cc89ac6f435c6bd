#!/usr/bin/env python3
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A real kube-apiserver with its own etcd on 127.0.0.1, for the k8s_network scenario (no kubelet, no node).

  apiserver.py start DIR   build (or reuse) the binaries with build.sh, make a CA, serving and client
                           certificates and a service-account key in DIR, start etcd and kube-apiserver,
                           wait for /readyz, write DIR/kubeconfig (cluster-admin through a client certificate)
  apiserver.py stop DIR    stop both (by the process ids recorded in DIR) and remove DIR's data
  apiserver.py status DIR  print whether they run

Standard library only; the certificates are made with the openssl command. Ports: FABRIC_K8S_PORT
(kube-apiserver, 16443) and FABRIC_K8S_ETCD_PORT (etcd client, 16379; peer port +1).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def _run(argv, stderr=subprocess.PIPE, **kwargs):
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE, stderr=stderr, text=True, **kwargs)


def _port_free(port):
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _certs(pki):
    """A CA, the API server's serving certificate, a cluster-admin client certificate, the service-account key."""
    os.makedirs(pki, exist_ok=True)

    def openssl(*args):
        _run(["openssl", *args], cwd=pki)

    # The extensions Python's strict verification (3.13) wants: key usage on the CA, key identifiers on every certificate.
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
            "-subj", "/CN=fabric-lab-ca", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-addext", "subjectKeyIdentifier=hash")
    common = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n" \
             "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n"
    with open(os.path.join(pki, "server.ext"), "w", encoding="utf-8") as ext:
        ext.write(common + "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc,IP:10.96.0.1\n"
                  "extendedKeyUsage=serverAuth\n")
    with open(os.path.join(pki, "client.ext"), "w", encoding="utf-8") as ext:
        ext.write(common + "extendedKeyUsage=clientAuth\n")
    for name, subject in (("server", "/CN=kube-apiserver"), ("admin", "/O=system:masters/CN=fabric-lab-admin")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr", "-subj", subject)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
                "-out", name + ".crt", "-extfile", "server.ext" if name == "server" else "client.ext")
    openssl("genrsa", "-out", "sa.key", "2048")
    openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub")


def _b64(path):
    with open(path, "rb") as handle:
        return base64.b64encode(handle.read()).decode()


def _kubeconfig(state, pki, port):
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "fabric-lab",
        "clusters": [{"name": "fabric-lab", "cluster": {"server": "https://127.0.0.1:%d" % port,
                                                         "certificate-authority-data": _b64(os.path.join(pki, "ca.crt"))}}],
        "users": [{"name": "fabric-lab-admin", "user": {"client-certificate-data": _b64(os.path.join(pki, "admin.crt")),
                                                         "client-key-data": _b64(os.path.join(pki, "admin.key"))}}],
        "contexts": [{"name": "fabric-lab", "context": {"cluster": "fabric-lab", "user": "fabric-lab-admin"}}],
    }
    path = os.path.join(state, "kubeconfig")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=2)
    return path


def _spawn(state, name, argv):
    log = open(os.path.join(state, name + ".log"), "ab")  # noqa: SIM115 - the child keeps it
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    with open(os.path.join(state, name + ".pid"), "w", encoding="utf-8") as handle:
        handle.write("%d\n" % proc.pid)
    return proc


def _ready(port, pki, proc, timeout):
    context = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
    context.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen("https://127.0.0.1:%d/readyz" % port, context=context, timeout=2) as answer:
                if answer.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.3)
    return False


def start(state):
    started = time.monotonic()
    if _running(state):
        print("lab-k8s: already running; kubeconfig %s" % os.path.join(state, "kubeconfig"))
        return 0
    port = int(os.environ.get("FABRIC_K8S_PORT", "16443"))
    etcd_port = int(os.environ.get("FABRIC_K8S_ETCD_PORT", "16379"))
    for used in (port, etcd_port, etcd_port + 1):
        if not _port_free(used):
            sys.exit("lab-k8s: port %d on 127.0.0.1 is in use (set FABRIC_K8S_PORT / FABRIC_K8S_ETCD_PORT)" % used)
    built = _run([os.path.join(HERE, "build.sh")], stderr=None).stdout.strip().splitlines()[-1]
    bins = os.path.join(built, "bin")
    os.makedirs(state, exist_ok=True)
    pki = os.path.join(state, "pki")
    _certs(pki)
    etcd = _spawn(state, "etcd", [
        os.path.join(bins, "etcd"), "--name", "lab", "--data-dir", os.path.join(state, "etcd-data"),
        "--listen-client-urls", "http://127.0.0.1:%d" % etcd_port, "--advertise-client-urls", "http://127.0.0.1:%d" % etcd_port,
        "--listen-peer-urls", "http://127.0.0.1:%d" % (etcd_port + 1),
        "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % (etcd_port + 1),
        "--initial-cluster", "lab=http://127.0.0.1:%d" % (etcd_port + 1), "--unsafe-no-fsync",
    ])
    apiserver = _spawn(state, "kube-apiserver", [
        os.path.join(bins, "kube-apiserver"), "--etcd-servers", "http://127.0.0.1:%d" % etcd_port,
        "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", str(port),
        "--tls-cert-file", os.path.join(pki, "server.crt"), "--tls-private-key-file", os.path.join(pki, "server.key"),
        "--client-ca-file", os.path.join(pki, "ca.crt"), "--authorization-mode", "RBAC",
        "--service-account-key-file", os.path.join(pki, "sa.pub"),
        "--service-account-signing-key-file", os.path.join(pki, "sa.key"),
        "--service-account-issuer", "https://kubernetes.default.svc", "--service-cluster-ip-range", "10.96.0.0/16",
        "--allow-privileged=true", "--endpoint-reconciler-type", "none", "--cert-dir", os.path.join(state, "serving"),
        "--enable-admission-plugins", "NamespaceLifecycle,ServiceAccount", "--disable-admission-plugins", "StorageObjectInUseProtection",
    ])
    if not _ready(port, pki, apiserver, 90):
        etcd_state = "running" if etcd.poll() is None else "exited"
        with open(os.path.join(state, "kube-apiserver.log"), encoding="utf-8", errors="replace") as log:
            tail = "".join(log.readlines()[-15:])
        stop(state)
        sys.exit("lab-k8s: kube-apiserver did not become ready (etcd %s); its log ends with:\n%s"
                 % (etcd_state, tail))
    path = _kubeconfig(state, pki, port)
    print("lab-k8s: kube-apiserver ready on https://127.0.0.1:%d in %.1f s; kubeconfig %s"
          % (port, time.monotonic() - started, path))
    return 0


def _pids(state):
    pids = {}
    for name in ("kube-apiserver", "etcd"):
        try:
            with open(os.path.join(state, name + ".pid"), encoding="utf-8") as handle:
                pids[name] = int(handle.read().strip())
        except (OSError, ValueError):
            continue
    return pids


def _alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    with open("/proc/%d/stat" % pid, encoding="utf-8") as stat:
        return stat.read().split(") ", 1)[1][0] != "Z"


def _running(state):
    pids = _pids(state)
    return bool(pids) and all(_alive(pid) for pid in pids.values())


def stop(state):
    for name, pid in _pids(state).items():
        if _alive(pid):
            os.kill(pid, signal.SIGTERM)
            for _ in range(50):
                if not _alive(pid):
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, signal.SIGKILL)
        os.unlink(os.path.join(state, name + ".pid"))
    for leftover in ("etcd-data", "pki", "serving"):
        _run(["rm", "-rf", "--", os.path.join(state, leftover)])
    print("lab-k8s: stopped")
    return 0


def status(state):
    pids = _pids(state)
    for name, pid in pids.items():
        print("%s %d %s" % (name, pid, "running" if _alive(pid) else "gone"))
    return 0 if pids and _running(state) else 3


def main(argv):
    if len(argv) != 3 or argv[1] not in ("start", "stop", "status"):
        sys.exit(__doc__)
    state = os.path.abspath(argv[2])
    return {"start": start, "stop": stop, "status": status}[argv[1]](state)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
