# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Build an unsigned flat apt repository of stand-in packages, laid out as NVIDIA publishes DOCA.

    python3 build_repo.py SPEC.json MIRROR

SPEC.json: {"path": "3.3.0/debian12/x86_64", "origin": "...", "packages": [{"name", "version",
"depends", "files": {"lib/...": "content"}}]}. Writes MIRROR/<path>/<name>_<version>_all.deb (with
dpkg-deb), Packages and Release; signing is left to gpg (InRelease, Release.gpg).
"""

import email.utils
import hashlib
import json
import os
import subprocess
import sys
import tempfile


def build_deb(pkg, repo, work):
    root = os.path.join(work, pkg["name"])
    os.makedirs(os.path.join(root, "DEBIAN"))
    control = ["Package: %s" % pkg["name"], "Version: %s" % pkg["version"], "Architecture: all",
               "Maintainer: fabric.infiniband tests <tests@fabric-infiniband.invalid>"]
    if pkg.get("depends"):
        control.append("Depends: %s" % pkg["depends"])
    control.append("Description: stand-in for DOCA-OFED's %s (fabric.infiniband molecule test)" % pkg["name"])
    with open(os.path.join(root, "DEBIAN", "control"), "w") as handle:
        handle.write("\n".join(control) + "\n")
    for rel, content in pkg.get("files", {}).items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(content)
    deb = "%s_%s_all.deb" % (pkg["name"], pkg["version"])
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", root, os.path.join(repo, deb)],
                   check=True, stdout=subprocess.DEVNULL)
    return "\n".join(control[:-1]) + "\n", deb


def digest(path):
    with open(path, "rb") as handle:
        data = handle.read()
    return len(data), hashlib.sha256(data).hexdigest()


def main(spec_path, mirror):
    with open(spec_path) as handle:
        spec = json.load(handle)
    repo = os.path.join(mirror, spec["path"])
    os.makedirs(repo, exist_ok=True)
    stanzas = []
    with tempfile.TemporaryDirectory() as work:
        for pkg in spec["packages"]:
            control, deb = build_deb(pkg, repo, work)
            size, sha = digest(os.path.join(repo, deb))
            description = "Description: stand-in for DOCA-OFED's %s (fabric.infiniband molecule test)\n" % pkg["name"]
            stanzas.append(control + "Filename: ./%s\nSize: %d\nSHA256: %s\n%s" % (deb, size, sha, description))
    with open(os.path.join(repo, "Packages"), "w") as handle:
        handle.write("\n".join(stanzas))
    size, sha = digest(os.path.join(repo, "Packages"))
    with open(os.path.join(repo, "Release"), "w") as handle:
        handle.write("Origin: %s\nLabel: %s\nDate: %s\nSHA256:\n %s %d Packages\n"
                     % (spec["origin"], spec["origin"], email.utils.formatdate(usegmt=True), sha, size))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
