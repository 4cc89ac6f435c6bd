# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""plugins/action/sriov.py: under --limit, the GUID checks see the hosts outside the play through their hostvars (issue 33,
class 1): a collision is refused whatever consent is given, and a GUID change while a host cannot be seen names it. The
step runs with the node replaced: its reading is given, and a module it would run is recorded (none may run here)."""

from __future__ import annotations

import pytest

from ansible_collections.fabric.infiniband.plugins.action.sriov import ActionModule
from ansible_collections.fabric.infiniband.plugins.module_utils import sriov as sriov_utils
from ansible_collections.fabric.infiniband.plugins.plugin_utils.role_step import StepFailed
from ansible_collections.fabric.infiniband.tests.unit.plugins.action.step_harness import bare_step

PF = "0000:3b:00.0"
RUN = "ctl:1:1"


def _scheme(host, count=2, prefix=0x02FA):
    return [sriov_utils.format_guid(sriov_utils.scheme_guid(prefix, host, 0, vf)) for vf in range(count)]


def _hca(vf_guids=(), run_id=RUN):
    """A ConnectX-6 PF (index 0) with one VF per GUID given."""
    vfs = ["0000:3b:00.%d" % (2 + i) for i in range(len(vf_guids))]
    hcas = [{"pci_address": PF, "card_address": "0000:3b:00", "rdma_device": "mlx5_0", "model": "ConnectX-6", "is_vf": False,
             "node_guid": "0x0c42a10300aa0010", "netdevs": ["ibp59s0f0"], "sriov": {"total_vfs": 8, "num_vfs": len(vfs), "vfs": vfs},
             "ports": [{"port": 1, "link_layer": "InfiniBand", "netdev": "ibp59s0f0", "port_guid": "0x0c42a10300aa0010"}]}]
    hcas += [{"pci_address": a, "card_address": "0000:3b:00", "is_vf": True, "physfn": PF, "model": "ConnectX-6 VF",
              "node_guid": g, "ports": []} for a, g in zip(vfs, vf_guids)]
    return {"hcas": hcas, "run_id": run_id}


def _step(others, settings, hca, preflight=False, play=("node01",), from_run=()):
    """node01's step with ``settings``, its reading ``hca``, the other hosts' hostvars ``others`` and the GUID settings this
    run's extra vars set (``from_run``). Returns the modules it ran and what it published; a refusal raises StepFailed."""
    hostvars = dict(others, node01={})
    action = bare_step(ActionModule, {"inventory_hostname": "node01", "hostvars": hostvars, "groups": {"all": sorted(hostvars)},
                                      "ansible_play_hosts": list(play)}, facts={"infiniband_hca": hca}, preflight=preflight, run_id=RUN)
    action.settings = dict({"sriov_guid_mode": "scheme", "sriov_guid_prefix": "0x02fa", "sriov_guid_host_id": None,
                            "sriov_allow_guid_change": False}, **settings)
    ran = []
    # a module's name, with "+boot_unit" when its arguments carry the boot-time unit
    action.module = lambda name, args, **kwargs: ran.append(name + ("+boot_unit" if args.get("boot_unit") else "")) or {}
    action.hca = lambda **kwargs: hca
    action._run_settings = lambda: tuple(from_run)
    action.step()
    return ran, action._out_facts


NODE02_SCHEME = {"sriov_pfs": [{"pf": PF, "num_vfs": 2}]}


def test_a_collision_with_a_host_outside_the_play_is_refused_whatever_the_consent():
    """node01's VFs carry other GUIDs; with consent it would take GUIDs that node02, outside --limit, has in its inventory.
    (Since issue 33's scheme spaces: node02's list lies inside node01's scheme space, which is refused first, naming it.)"""
    taken = _scheme(0x0A0B0C0D)
    others = {"node02": {"sriov_pfs": [{"pf": PF, "num_vfs": 2, "guids": taken}]}}
    settings = {"sriov_pfs": [{"pf": PF, "num_vfs": 2}], "sriov_guid_host_id": 0x0A0B0C0D, "sriov_allow_guid_change": True}
    for preflight in (True, False):
        with pytest.raises(StepFailed) as err:
            _step(others, settings, _hca(_scheme(0x01010101)), preflight=preflight)
        message = str(err.value)
        assert message.startswith("node01: VF GUIDs of two hosts share a space of the scheme"), message
        assert ("sriov_pfs[0].guids[0], sriov_pfs[0].guids[1] of node02 (%s) fall in the scheme space of node01: prefix 0x02fa "
                "with host id 168496141 (0x0a0b0c0d, sriov_guid_host_id: 168496141 of host node01)" % ", ".join(taken)) in message
        assert "sriov_allow_guid_change does not allow this" in message
        assert message.endswith("Nothing was changed.")
    # a list that is not inside node01's space but equals GUIDs it takes is a duplicate, as before
    with pytest.raises(StepFailed) as err:
        _step({"node02": {"sriov_pfs": [{"pf": PF, "num_vfs": 1, "guids": ["0x02fa00000000aa00"]}]}},
              {"sriov_pfs": [{"pf": PF, "num_vfs": 1, "guids": ["0x02fa00000000aa00"]}]}, _hca())
    assert str(err.value).startswith("VF GUIDs used more than once: 0x02fa00000000aa00 on node01, node02")


def test_a_host_outside_the_play_is_planned_from_a_fact_caches_reading():
    """node02 set the same sriov_guid_host_id: its GUIDs come from the scheme, with the PF order of its cached reading.
    (Since issue 33: one host id on two hosts is refused as such, before the GUIDs they share.)"""
    others = {"node02": {"sriov_pfs": [{"pf": PF, "num_vfs": 2}], "sriov_guid_host_id": 5,
                         "ansible_facts": {"infiniband_hca": _hca(run_id="an-earlier-run")}}}
    with pytest.raises(StepFailed, match=r"node01 \(sriov_guid_host_id: 5 of host node01\) and node02 \(sriov_guid_host_id: 5 of "
                                         r"host node02\) both take prefix 0x02fa with host id 5 \(0x00000005\)"):
        _step(others, {"sriov_pfs": [{"pf": PF, "num_vfs": 2}], "sriov_guid_host_id": 5}, _hca())
    # and what a host published (a fact cache) counts, also where its inventory moved on
    others = {"node02": dict(NODE02_SCHEME, sriov_vf_guids=_scheme(5))}
    with pytest.raises(StepFailed, match="on node01, node02"):
        _step(others, {"sriov_pfs": [{"pf": PF, "num_vfs": 2}], "sriov_guid_host_id": 5}, _hca())


def test_a_guid_change_is_refused_while_a_host_cannot_be_seen_even_with_consent():
    """node02, outside --limit, with no fact cache: what its VFs carry now cannot be known, whether its GUIDs come from its own
    settings (its scheme space is known, which checks collisions but not what it carries) or from this run's -e."""
    settings = {"sriov_pfs": [{"pf": PF, "num_vfs": 2}], "sriov_allow_guid_change": True}
    with pytest.raises(StepFailed) as err:
        _step({"node02": NODE02_SCHEME}, settings, _hca(_scheme(0x01010101)), from_run=("sriov_pfs",))
    message = str(err.value)
    assert message.startswith("node01: this run would change the GUIDs of existing VFs"), message
    assert "cannot see: node02 (outside this play" in message and "run without --limit" in message
    assert message.endswith("Nothing was changed.")
    # the same refusal in the preflight, before any change on any node
    with pytest.raises(StepFailed, match="cannot see: node02"):
        _step({"node02": NODE02_SCHEME}, settings, _hca(_scheme(0x01010101)), preflight=True, from_run=("sriov_pfs",))
    # node02's own settings, with no reading: its scheme space (another host id) is known, but not what its VFs carry
    with pytest.raises(StepFailed, match="cannot see: node02 \\(outside this play, with neither a reading"):
        _step({"node02": NODE02_SCHEME}, settings, _hca(_scheme(0x01010101)))


def test_a_guid_change_goes_on_when_every_host_is_seen():
    settings = {"sriov_pfs": [{"pf": PF, "num_vfs": 2}], "sriov_allow_guid_change": True}
    seen = {"node02": dict(NODE02_SCHEME, sriov_vf_guids=[]),                                   # published
            "node03": dict(NODE02_SCHEME, ansible_facts={"infiniband_hca": _hca(run_id="old")}),  # a cached reading
            "node04": {"sriov_pfs": [{"pf": PF, "num_vfs": 1, "guids": ["0x02fa00000000aa00"]}]},  # a list
            "opensm01": {}}                                                                         # no VF asked
    ran, facts = _step(seen, settings, _hca(_scheme(0x01010101)), preflight=True)
    assert ran == [] and facts["sriov_vf_guids"] == _scheme(sriov_utils.host_id("node01"))
    # new VFs (no GUID changes) are made whatever cannot be seen
    ran, facts = _step({"node02": NODE02_SCHEME}, {"sriov_pfs": [{"pf": PF, "num_vfs": 2}]}, _hca(), preflight=True)
    assert facts["sriov_vf_guids"] == _scheme(sriov_utils.host_id("node01"))


def test_a_host_of_the_play_not_read_yet_is_checked_by_its_scheme_space():
    """In the step, node02 of the play, not read yet, is named as unseen (a GUID change waits for its reading), and its scheme
    space is checked (new VFs of one host id on both are refused)."""
    settings = {"sriov_pfs": [{"pf": PF, "num_vfs": 2}], "sriov_allow_guid_change": True}
    play = ("node01", "node02")
    _step({"node02": NODE02_SCHEME}, settings, _hca(_scheme(0x01010101)), preflight=True, play=play)
    with pytest.raises(StepFailed, match="node02 \\(in this play, but its adapters were not read in this run before this step\\)"):
        _step({"node02": NODE02_SCHEME}, settings, _hca(_scheme(0x01010101)), play=play)
    # new VFs (no GUID change) go on beside a host of another host id that was not read
    ran, _facts = _step({"node02": NODE02_SCHEME}, {"sriov_pfs": [{"pf": PF, "num_vfs": 2}]}, _hca(), play=play)
    assert ran[-1:] == ["sriov_vfs+boot_unit"]
    # the role alone on two fresh hosts given one sriov_guid_host_id: neither was read when the other's step ran
    for preflight in (True, False):
        with pytest.raises(StepFailed, match=r"node01 \(sriov_guid_host_id: 7 of host node01\) and node02 \(sriov_guid_host_id: 7"):
            _step({"node02": dict(NODE02_SCHEME, sriov_guid_host_id=7)}, {"sriov_pfs": [{"pf": PF, "num_vfs": 2}],
                  "sriov_guid_host_id": 7}, _hca(), preflight=preflight, play=play)
    # after the preflight, its reading of this run plans it
    ran, _facts = _step({"node02": dict(NODE02_SCHEME, ansible_facts={"infiniband_hca": _hca()})}, settings,
                        _hca(_scheme(0x01010101)), play=play)
    assert ran[-1:] == ["sriov_vfs+boot_unit"]
