# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The scenario's read of the API server, for verify.yml (tasks/k8s.yml): every kind it asserts on, with one client in one
process, printed as JSON {kind: [object, ...]}. Eight runs of kubernetes.core.k8s_info took about 12 s here (each one imports
the Kubernetes client again); this takes about 1.5 s and reads the same objects from the same API.

    read_cluster.py <kubeconfig> <label selector>

CustomResourceDefinitions and NetworkAttachmentDefinitions are read whatever their labels; the other kinds only with the
role's label. A kind the server does not serve (the NAD CRD removed) reads as no object, as k8s_info gives it: the client's
discovery cache (a file that outlives the process) is read again once when a kind it lists answers 404."""

import json
import sys

from kubernetes import config
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

KINDS = (
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", False),
    ("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", False),
    ("apps/v1", "DaemonSet", True),
    ("apps/v1", "Deployment", True),
    ("v1", "ConfigMap", True),
    ("v1", "ServiceAccount", True),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", True),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", True),
)


def objects(client, api_version, kind, selector, fresh=False):
    if fresh:
        client.resources.invalidate_cache()
    try:
        resource = client.resources.get(api_version=api_version, kind=kind)
        found = resource.get(label_selector=selector).to_dict()
    except ResourceNotFoundError:
        return []
    except NotFoundError:
        if fresh:
            return []  # still listed by the server's discovery, but no longer served: its CRD is being removed
        return objects(client, api_version, kind, selector, fresh=True)
    # a list's items carry no apiVersion and kind of their own; k8s_info adds them, and so does this
    return [dict(item, apiVersion=api_version, kind=kind) for item in found.get("items") or []]


def main(kubeconfig, selector):
    client = DynamicClient(config.new_client_from_config(config_file=kubeconfig))
    state = dict((kind, objects(client, api_version, kind, selector if labelled else None)) for api_version, kind, labelled in KINDS)
    json.dump(state, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
