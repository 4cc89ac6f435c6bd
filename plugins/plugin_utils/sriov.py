# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The sriov role's decisions (controller side), for its action (plugins/action/sriov.py) and the verify role.

- :func:`plan`: the VFs, VF GUIDs and SR-IOV firmware parameters of a host, from the fact infiniband_hca and the role's
  settings; bad input raises with the variable's name and what it accepts (also the filter
  ``fabric.infiniband.sriov_plan``, which ``verify_checks`` uses).
- :func:`guid_changes`: the existing VFs whose GUIDs the plan would change (refused without
  ``sriov_allow_guid_change``), and where the old and new GUIDs come from.
- :func:`fleet`: what the fleet check knows of the other hosts of the inventory, also those outside the play (--limit,
  a job slice): their VF GUIDs planned from their settings (with a reading of their adapters where one is needed and
  known, this run's or a fact cache's), what they published, where their GUIDs fall by their settings (their scheme
  space and listed GUIDs), and the hosts whose VF GUIDs cannot be known from this run (:func:`inventory_guids`,
  :func:`their_guids`, :func:`their_space`).
- :func:`space_collisions`: where this host's VF GUIDs and another host's meet by the scheme's space, known from the
  settings alone (also of a host whose adapters were not read): one prefix and host id taken by two hosts, a listed GUID
  inside another host's scheme space; refused whatever consent is given (:func:`space_message`).
- :func:`duplicate_guids`: VF GUIDs used more than once on the fabric (this run's plans, what other hosts published,
  physical port GUIDs); refused whatever consent is given.
- :func:`firmware_status`: the mlxconfig results of the plan's cards: which wait for a reboot or a power cycle.
- :func:`short_pfs`: the PFs whose firmware allows fewer VFs than asked, with no firmware change waiting.
- the messages of the refusals (:func:`guid_change_message`, which names the hosts that cannot be seen,
  :func:`duplicate_message`, :func:`short_message`).
"""

from __future__ import annotations

from ansible.errors import AnsibleError, AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.fabric.infiniband.plugins.module_utils import guid
from ansible_collections.fabric.infiniband.plugins.module_utils import pci
from ansible_collections.fabric.infiniband.plugins.module_utils import sriov
from ansible_collections.fabric.infiniband.plugins.plugin_utils import node_state

LINK_STATES = ("auto", "enable", "disable")
PF_KEYS = ("pf", "num_vfs", "link_state", "guids")
MAX_VFS = 127  # the largest NUM_OF_VFS of any ConnectX (mlxconfig rejects more)
# the settings that decide a host's VF GUIDs, with the role's defaults (another host's variables do not hold them)
GUID_SETTINGS = {"sriov_pfs": [], "sriov_guid_mode": "scheme", "sriov_guid_prefix": "0x02fa", "sriov_guid_host_id": None}
# where a host that cannot be seen can be made visible (the message of a refused GUID change)
UNSEEN_HOW = ("Include them: run without --limit (or with them in it); or keep the facts of a run that read them in a fact "
              "cache (ANSIBLE_CACHE_PLUGIN=jsonfile; AWX: the job template's use_fact_cache); or fix their GUIDs in their "
              "inventory with a guids list for each PF (sriov_pfs[].guids); for a host in this play, run the role's plan entry "
              "point (or playbooks/preflight.yml, as playbooks/nodes.yml does) on every host before the role")

# whether the node's pending record may hold the role's entry (the action asks it)
may_hold = node_state.may_hold


def _pfs_of_host(hca):
    """The host's NVIDIA/Mellanox PFs in PCI order, each with the names it can be given by."""
    out = []
    for entry in hca.get("hcas") or []:
        if entry.get("is_vf") or not entry.get("pci_address") or not entry.get("model"):
            continue
        out.append(entry)
    out.sort(key=lambda e: e["pci_address"])
    return out


def _find(pfs, name, where):
    try:
        text = pci.selector(name, where).lower()
    except pci.PciAddressError as exc:
        raise AnsibleFilterError(str(exc)) from None
    for index, entry in enumerate(pfs):
        names = {entry["pci_address"].lower(), str(entry.get("rdma_device") or "").lower()}
        names.update(n.lower() for n in entry.get("netdevs") or [])
        if text in names:
            return index, entry
    return None, None


def _check_int(value, where, low, high):
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(str(value), 10)
        except ValueError:
            raise AnsibleFilterError("%s must be a whole number from %d to %d, got %r" % (where, low, high, value)) from None
    if not low <= value <= high:
        raise AnsibleFilterError("%s must be from %d to %d, got %d" % (where, low, high, value))
    return value


def _recreate_problem(where, entry, num):
    """The refusal of a change between two non-zero VF counts without consent (module_utils/sriov.py decides), or None."""
    current = (entry.get("sriov") or {}).get("num_vfs") or 0
    _writes, why = sriov.count_writes(current, num, None, False)
    if not why:
        return None
    return ("%s.num_vfs is %d, but PF %s (%s) has %d VFs now: the kernel changes a VF count only through 0, which destroys every "
            "VF of the PF and takes them from the pods using them. Accepted: num_vfs %d (as now) or 0 (remove them); any other "
            "count with sriov_allow_vf_recreate: true, after draining the node. Nothing was changed."
            % (where, num, entry["pci_address"], entry.get("rdma_device"), current, current))


def plan(hca, pfs, host_name, guid_mode="scheme", guid_prefix="0x02fa", host_id=None, link_state="auto",
         firmware_num_vfs=0, allow_vf_recreate=True):
    if not isinstance(hca, dict) or "hcas" not in hca:
        raise AnsibleFilterError("sriov_plan expects the registered result of fabric.infiniband.hca_info")
    if not isinstance(pfs, list):
        raise AnsibleFilterError("sriov_pfs must be a list of mappings with pf and num_vfs, got %s" % type(pfs).__name__)
    if guid_mode not in ("scheme", "none"):
        raise AnsibleFilterError("sriov_guid_mode must be scheme or none, got %r" % (guid_mode,))
    if link_state not in LINK_STATES:
        raise AnsibleFilterError("sriov_link_state must be one of %s, got %r" % (", ".join(LINK_STATES), link_state))
    floor = _check_int(firmware_num_vfs, "sriov_firmware_num_vfs", 0, MAX_VFS)
    prefix = None
    if guid_mode == "scheme":
        try:
            prefix = sriov.parse_prefix(guid_prefix, "sriov_guid_prefix")
        except guid.GuidError as exc:
            raise AnsibleFilterError(str(exc)) from None
        host = sriov.host_id(host_name) if host_id is None else _check_int(host_id, "sriov_guid_host_id", 0, 0xFFFFFFFF)
    host_pfs = _pfs_of_host(hca)
    plan = {"pfs": [], "cards": [], "guids": []}
    cards = {}
    seen = {}
    for pos, item in enumerate(pfs):
        where = "sriov_pfs[%d]" % pos
        if not isinstance(item, dict):
            raise AnsibleFilterError("%s must be a mapping with pf and num_vfs" % where)
        unknown = sorted(set(item) - set(PF_KEYS))
        if unknown:
            raise AnsibleFilterError("%s has unknown keys %s; accepted: %s" % (where, ", ".join(unknown), ", ".join(PF_KEYS)))
        if "pf" not in item or "num_vfs" not in item:
            raise AnsibleFilterError("%s needs pf (PCI address, RDMA device or netdev) and num_vfs" % where)
        num = _check_int(item["num_vfs"], where + ".num_vfs", 0, MAX_VFS)
        index, entry = _find(host_pfs, item["pf"], where + ".pf")
        if entry is None:
            raise AnsibleFilterError("%s.pf %s is not a PF of this host; its PFs: %s" % (
                where, item["pf"], ", ".join("%s (%s)" % (e["pci_address"], e.get("rdma_device")) for e in host_pfs) or "none"))
        if entry["pci_address"] in seen:
            raise AnsibleFilterError("%s.pf %s is the same PF as sriov_pfs[%d]" % (where, item["pf"], seen[entry["pci_address"]]))
        seen[entry["pci_address"]] = pos
        if not boolean(allow_vf_recreate, strict=False):
            why = _recreate_problem(where, entry, num)
            if why:
                raise AnsibleFilterError(why)
        state = item.get("link_state", link_state)
        if state not in LINK_STATES:
            raise AnsibleFilterError("%s.link_state must be one of %s, got %r" % (where, ", ".join(LINK_STATES), state))
        ports = entry.get("ports") or []
        ib = bool(ports) and ports[0].get("link_layer") == "InfiniBand"
        guids = []
        if item.get("guids") is not None:
            given = item["guids"]
            if not isinstance(given, list) or len(given) < num:
                raise AnsibleFilterError("%s.guids must list at least num_vfs (%d) GUIDs, one per VF" % (where, num))
            # every GUID listed is checked, also those beyond num_vfs (kept for later): a typo fails now
            try:
                checked = [guid.require(value, "%s.guids[%d]" % (where, vf)) for vf, value in enumerate(given)]
            except guid.GuidError as exc:
                raise AnsibleFilterError(str(exc)) from None
            guids = checked[:num]
        elif guid_mode == "scheme" and ib:
            guids = [sriov.format_guid(sriov.scheme_guid(prefix, host, index, vf)) for vf in range(num)]
        if guids and not ib:
            raise AnsibleFilterError("%s.guids: %s is not an InfiniBand port (%s); VF GUIDs exist on InfiniBand ports only"
                                     % (where, entry["pci_address"], ports[0].get("link_layer") if ports else "no port"))
        sriov_files = entry.get("sriov") or {}
        plan["pfs"].append({
            "pf": entry["pci_address"], "card": entry["card_address"], "pf_index": index,
            "rdma_device": entry.get("rdma_device"), "netdev": (ports[0].get("netdev") if ports else None),
            "num_vfs": num, "link_state": state, "total_vfs": sriov_files.get("total_vfs"),
            "ready_now": num == 0 or (sriov_files.get("total_vfs") or 0) >= num,
            "vfs": [{"index": vf, "guid": value} for vf, value in enumerate(guids)],
        })
        plan["guids"].extend(guids)
        card = cards.setdefault(entry["card_address"], {"card": entry["card_address"], "model": entry["model"],
                                                        "device": None, "num_vfs": floor})
        card["num_vfs"] = max(card["num_vfs"], num)
    for address in sorted(cards):
        card = cards[address]
        functions = [e for e in host_pfs if e["card_address"] == address]
        # the card's first function carries its firmware configuration
        card["device"] = functions[0]["pci_address"]
        # sriov_totalvfs is the NUM_OF_VFS the firmware runs (no file while SRIOV_EN is off); enough is
        # enough: a firmware that allows more VFs than asked for is left alone, rather than a reboot to lower it
        totals = [(e.get("sriov") or {}).get("total_vfs") for e in functions]
        card["total_vfs"] = None if None in totals else min(totals)
        card["params"] = {"SRIOV_EN": "True", "NUM_OF_VFS": card["num_vfs"]}
        if card["num_vfs"] and (card["total_vfs"] or 0) < card["num_vfs"]:
            plan["cards"].append(card)
    plan["boot"] = {"pfs": [{key: pf[key] for key in ("pf", "num_vfs", "link_state", "vfs")} for pf in plan["pfs"]]}
    plan["operator_pool"] = [{"pci_address": pf["pf"], "guids": [guid.colon_form(vf["guid"]) for vf in pf["vfs"]]}
                             for pf in plan["pfs"] if pf["vfs"]]
    dupes = sorted({g for g in plan["guids"] if plan["guids"].count(g) > 1})
    if dupes:
        raise AnsibleFilterError("sriov_pfs: the GUIDs %s are given to more than one VF of this host" % ", ".join(dupes))
    return plan


def _number(text):
    text = guid.normalize(text) if text else None
    number = None if text is None else int(text, 16)
    return number or None  # a VF without a GUID shows the zero GUID


def _scheme(number, prefix, pf_index, vf_index):
    """The host id of a GUID of the scheme at this PF and VF position, else None."""
    if number is None or prefix is None or number >> 48 != prefix:
        return None
    if (number >> 8) & 0xFF != pf_index & 0xFF or number & 0xFF != vf_index & 0xFF:
        return None
    return (number >> 16) & 0xFFFFFFFF


def _named(host, names):
    found = sorted(n for n in names or [] if sriov.host_id(str(n)) == host)
    return " (derived from the inventory name %s)" % ", ".join(found) if found else ""


def guid_changes(plan, hca, host_name, pfs=None, guid_prefix="0x02fa", host_id=None, names=None):
    try:
        prefix = sriov.parse_prefix(guid_prefix, "sriov_guid_prefix")
    except guid.GuidError:
        prefix = None  # the plan refuses it; no VF GUID then counts as derived by the scheme
    derived = sriov.host_id(host_name)
    by_address = {str(e.get("pci_address") or "").lower(): e for e in (hca or {}).get("hcas") or [] if isinstance(e, dict)}
    pfs = pfs or []
    lines, old_ids = [], set()
    for pos, pf in enumerate((plan or {}).get("pfs") or []):
        entry = by_address.get(str(pf.get("pf")).lower()) or {}
        vf_addresses = ((entry.get("sriov") or {}).get("vfs")) or []
        changed = []
        for vf in pf.get("vfs") or []:
            index, want = vf.get("index"), vf.get("guid")
            if not want or index is None or index >= len(vf_addresses):
                continue
            now = (by_address.get(str(vf_addresses[index]).lower()) or {}).get("node_guid")
            number = _number(now)
            if number is None or number == _number(want):
                continue
            changed.append((index, sriov.format_guid(number), str(want).lower(), _scheme(number, prefix, pf.get("pf_index", 0), index)))
        if not changed:
            continue
        item = pfs[pos] if pos < len(pfs) and isinstance(pfs[pos], dict) else {}
        if item.get("guids") is not None:
            new_from = "sriov_pfs[%d].guids" % pos
            old_ids.add(None)  # a host id would not keep a list's GUIDs
        elif host_id is not None:
            new_from = "the scheme with sriov_guid_host_id %d (0x%08x)" % (int(host_id), int(host_id))
        else:
            new_from = "the scheme with host id 0x%08x, derived from the inventory name %s" % (derived, host_name)
        ids = sorted({c[3] for c in changed if c[3] is not None})
        if len(ids) == len({c[3] for c in changed}) and ids:
            old_ids.update(ids)
            elsewhere = ", not derived from %s: the host was renamed in the inventory, or sriov_guid_host_id changed" % host_name
            old_from = "; ".join("the scheme with host id 0x%08x%s" % (i, _named(i, set(names or []) | {host_name}) or elsewhere)
                                 for i in ids)
        else:
            old_ids.add(None)
            old_from = "not this prefix's scheme at this position: a guids list of sriov_pfs, another sriov_guid_prefix, " \
                       "or set outside this role"
        lines.append("%s: VFs %s carry %s (%s); this run gives them %s (%s)" % (
            pf.get("pf"), ", ".join(str(c[0]) for c in changed), ", ".join(c[1] for c in changed), old_from,
            ", ".join(c[2] for c in changed), new_from))
    if lines and len(old_ids) == 1 and None not in old_ids:
        (old,) = old_ids
        lines.append("to keep the GUIDs the VFs carry, set sriov_guid_host_id: %d (0x%08x) for %s" % (old, old, host_name))
    return lines


def _pf_guids(hca):
    """The node and port GUIDs of the physical functions in a hca_info fact."""
    guids = set()
    for entry in (hca or {}).get("hcas") or []:
        if not isinstance(entry, dict) or entry.get("is_vf"):
            continue
        guids.add(entry.get("node_guid"))
        guids.update(port.get("port_guid") for port in entry.get("ports") or [] if isinstance(port, dict))
    guids.discard(None)
    guids.discard("0x0000000000000000")
    return guids


def _settings_guids(pfs, guid_mode="scheme", guid_prefix="0x02fa", host_id=None):
    """What a host's settings alone say of its VF GUIDs: (the GUIDs its guids lists fix, each to its setting
    ``sriov_pfs[<n>].guids[<m>]``; whether a PF with VFs takes the scheme's), or None for settings its own plan refuses."""
    if not isinstance(pfs, list) or guid_mode not in ("scheme", "none"):
        return None
    try:
        if guid_mode == "scheme":
            sriov.parse_prefix(guid_prefix, "sriov_guid_prefix")
            if host_id is not None:
                _check_int(host_id, "sriov_guid_host_id", 0, 0xFFFFFFFF)
    except (guid.GuidError, AnsibleFilterError):
        return None
    listed, scheme = {}, False
    for pos, item in enumerate(pfs):
        where = "sriov_pfs[%d]" % pos
        if not isinstance(item, dict) or set(item) - set(PF_KEYS) or "pf" not in item or "num_vfs" not in item:
            return None
        try:
            num = _check_int(item["num_vfs"], where + ".num_vfs", 0, MAX_VFS)
            given = item.get("guids")
            if num and given is not None:
                if not isinstance(given, list) or len(given) < num:
                    return None
                # every GUID listed is checked, as the plan does; the first num_vfs are taken
                checked = [guid.require(value, "%s.guids[%d]" % (where, vf)) for vf, value in enumerate(given)]
                for vf, value in enumerate(checked[:num]):
                    if value in listed:
                        return None
                    listed[value] = "%s.guids[%d]" % (where, vf)
            elif num and guid_mode == "scheme":
                scheme = True
        except (guid.GuidError, AnsibleFilterError):
            return None
    return listed, scheme


def inventory_guids(pfs, host_name, guid_mode="scheme", guid_prefix="0x02fa", host_id=None):
    """The VF GUIDs that a host's settings fix without a reading of its adapters (another host of the inventory, for the
    fleet check): a list, or None when a PF of it takes the scheme's GUIDs (its PF index is its position among the host's
    PFs, and a PF on Ethernet has none: both need the reading). Settings that its own plan refuses give [] (its own run
    refuses them, so it takes no GUID)."""
    found = _settings_guids(pfs, guid_mode=guid_mode, guid_prefix=guid_prefix, host_id=host_id)
    if found is None:
        return []
    listed, scheme = found
    return None if scheme else list(listed)


def _space(host_name, s, listed, scheme):
    """Where a host's VF GUIDs fall: ``listed`` (GUID to its setting), and with ``scheme`` (a PF takes the scheme's
    GUIDs) the scheme's space of the host, ``prefix`` and ``host_id``, and ``source``: the setting that gave the host id.
    None when the host takes no VF GUID."""
    if not listed and not scheme:
        return None
    out = {"listed": listed, "scheme": bool(scheme), "prefix": None, "host_id": None, "source": None}
    if scheme:
        try:
            out["prefix"] = sriov.parse_prefix(s["sriov_guid_prefix"], "sriov_guid_prefix")
            if s["sriov_guid_host_id"] is None:
                out["host_id"] = sriov.host_id(host_name)
                out["source"] = "derived from the inventory name %s" % host_name
            else:
                number = _check_int(s["sriov_guid_host_id"], "sriov_guid_host_id", 0, 0xFFFFFFFF)
                out["host_id"], out["source"] = number, "sriov_guid_host_id: %d of host %s" % (number, host_name)
        except (guid.GuidError, AnsibleFilterError):
            return None  # its own plan refuses them
    return out


def _plan_space(host_name, the_plan, pfs, s):
    """The space (:func:`_space`) of a host's plan: a PF with a guids list fixes those, any other PF with VFs takes the
    scheme's."""
    pfs = pfs if isinstance(pfs, list) else []
    listed, scheme = {}, False
    for pos, pf in enumerate((the_plan or {}).get("pfs") or []):
        if pos < len(pfs) and isinstance(pfs[pos], dict) and pfs[pos].get("guids") is not None:
            listed.update((str(vf["guid"]).lower(), "sriov_pfs[%d].guids[%d]" % (pos, vf["index"])) for vf in pf.get("vfs") or [])
        elif pf.get("vfs"):
            scheme = True
    return _space(host_name, s, listed, scheme and s["sriov_guid_mode"] == "scheme")


def _merged(settings):
    s = dict(GUID_SETTINGS)
    s.update((k, v) for k, v in (settings or {}).items() if k in GUID_SETTINGS and v is not None)
    return s


def _their(host_name, settings, hca=None, current=False, from_run=()):
    """(:func:`their_guids`, the host's space (:func:`_space`) as far as its own settings tell it, or None)."""
    s = _merged(settings)
    from_run = set(from_run or ())
    if "sriov_pfs" in from_run:
        return None, None
    if from_run:
        # its own mode, prefix and host id are unknown: only the GUIDs of guids lists count
        return inventory_guids(s["sriov_pfs"], host_name), None
    if isinstance(hca, dict) and "hcas" in hca:
        try:
            planned = plan(hca, s["sriov_pfs"], host_name, guid_mode=s["sriov_guid_mode"], guid_prefix=s["sriov_guid_prefix"],
                           host_id=s["sriov_guid_host_id"])
            return planned["guids"], _plan_space(host_name, planned, s["sriov_pfs"], s)
        except (AnsibleError, ValueError, TypeError, KeyError, AttributeError):
            if current:
                return [], None
    found = _settings_guids(s["sriov_pfs"], guid_mode=s["sriov_guid_mode"], guid_prefix=s["sriov_guid_prefix"],
                            host_id=s["sriov_guid_host_id"])
    if found is None:
        return [], None
    listed, scheme = found
    return (None if scheme else list(listed)), _space(host_name, s, listed, scheme)


def their_guids(host_name, settings, hca=None, current=False, from_run=()):
    """The VF GUIDs of another host's plan, as the fleet check can know them, or None when it cannot.

    ``settings``: the host's variables of GUID_SETTINGS (missing or null: the role's defaults); ``hca``: its fact
    infiniband_hca when there is one, ``current`` when it was read in this run (a reading of another run, from a fact
    cache, still gives the PFs' order); ``from_run``: the names of those settings that this run's extra vars (-e) set,
    which are not the host's own when it is outside the play. A plan that its settings make fail gives [] when the
    reading is current (its own run refuses them); with an older reading, the GUIDs its settings fix without one."""
    return _their(host_name, settings, hca=hca, current=current, from_run=from_run)[0]


def their_space(host_name, settings, hca=None, current=False, from_run=()):
    """Where another host's VF GUIDs fall, known from its settings also when its GUIDs cannot be planned (no reading of
    its adapters): the GUIDs of its guids lists (``listed``: GUID to ``sriov_pfs[<n>].guids[<m>]``), and when a PF of it
    takes the scheme's GUIDs (``scheme``), its ``prefix`` and ``host_id`` and the ``source`` of that host id. None when
    it takes no VF GUID, its settings are refused by its own plan, or they come from this run's extra vars
    (``from_run``, see :func:`their_guids`)."""
    return _their(host_name, settings, hca=hca, current=current, from_run=from_run)[1]


def fleet(others, play=(), preflight=False):
    """What the fleet check of one host knows of the other hosts of the inventory.

    ``others``: host name to a dict with ``settings``, ``hca``, ``current``, ``from_run`` (see :func:`their_guids`) and
    ``published`` (its fact sriov_vf_guids: this run, an earlier play, or a fact cache; None when it has none); ``play``:
    the hosts whose own step runs in this play. Returns ``planned`` (host to the VF GUIDs of its plan), ``known`` (host to
    what it published: the GUIDs its VFs may carry now), ``hca`` (host to its reading, for the physical GUIDs), ``space``
    (host to where its VF GUIDs fall, from its settings: :func:`their_space`, for :func:`space_collisions`) and
    ``unseen`` (host to why its VF GUIDs cannot be known in this run). A host whose scheme GUIDs cannot be planned
    without a reading of its adapters (a host of the play that this run has not read yet, or one outside it with no fact
    cache) is checked by its space for collisions, and stays unseen: the GUIDs its VFs carry now are not known, so a GUID
    change is refused while it cannot be seen. In the preflight (``preflight``), a host of the play that is known
    neither way is left to the role's step after it, when the preflight has read every host of the play."""
    view = {"planned": {}, "known": {}, "hca": {}, "space": {}, "unseen": {}}
    play = set(play or ())
    for name in sorted(others or {}):
        info = others[name] or {}
        hca, published = info.get("hca"), info.get("published")
        if isinstance(hca, dict):
            view["hca"][name] = hca
        if isinstance(published, list):
            view["known"][name] = published
        guids, space = _their(name, info.get("settings"), hca=hca, current=bool(info.get("current")),
                              from_run=info.get("from_run"))
        if space is not None:
            view["space"][name] = space
        # A host known by its space alone is checked by it for collisions (space_collisions), but what its VFs carry now
        # is not known: it stays unseen, which refuses a GUID change (never the new VFs of a host).
        if guids is not None:
            view["planned"][name] = guids
        elif isinstance(published, list) or (name in play and preflight):
            continue
        elif name in play:
            view["unseen"][name] = "in this play, but its adapters were not read in this run before this step"
        elif info.get("from_run"):
            view["unseen"][name] = ("outside this play; %s of this run's extra vars (-e) is not its own setting, and it "
                                    "published no sriov_vf_guids" % ", ".join(sorted(info["from_run"])))
        else:
            view["unseen"][name] = ("outside this play, with neither a reading of its adapters nor sriov_vf_guids (no "
                                    "fact cache), and its sriov_pfs take the scheme's GUIDs, whose PF index needs that reading")
    return view


def duplicate_guids(guids_by_host, known=None, hca=None, host=None):
    """One ``<guid> on <host>, <host>`` line per GUID that two or more hosts share, sorted.

    ``guids_by_host``: host name to the VF GUIDs of this run's plans (also of hosts outside the play, from their
    settings); ``known``: host name to the VF GUIDs hosts published earlier (the fact sriov_vf_guids, this run or a fact
    cache), which their VFs may still carry: both count, and a host never collides with itself; ``hca``: host name to its
    fact infiniband_hca, whose physical functions' GUIDs count as ``<host> PF``. With ``host``, only the GUIDs that
    host's VFs use."""
    owners = {}
    for source in (known or {}, guids_by_host or {}):
        for name in sorted(source):
            for value in source[name] or []:
                names = owners.setdefault(str(value).lower(), [])
                if name not in names:
                    names.append(name)
    # A PF GUID counts once per host however many ports show it; only a VF GUID can make it a duplicate.
    for name in sorted(hca or {}):
        for value in sorted(_pf_guids(hca[name])):
            if str(value).lower() in owners:
                owners[str(value).lower()].append("%s PF" % name)
    return ["%s on %s" % (value, ", ".join(sorted(names))) for value, names in sorted(owners.items())
            if len(names) > 1 and (host is None or host in names)]


def guid_sources(plan, pfs):
    """This host's VF GUID to the setting it comes from: ``sriov_pfs[<n>].guids[<m>]``, or its PF and VF of the scheme."""
    out = {}
    pfs = pfs if isinstance(pfs, list) else []
    for pos, pf in enumerate((plan or {}).get("pfs") or []):
        listed = pos < len(pfs) and isinstance(pfs[pos], dict) and pfs[pos].get("guids") is not None
        for vf in pf.get("vfs") or []:
            where = ("sriov_pfs[%d].guids[%d]" % (pos, vf["index"]) if listed
                     else "sriov_pfs[%d] VF %d (the scheme: sriov_guid_prefix, host id, PF index %d)" % (pos, vf["index"], pf.get("pf_index", 0)))
            out[str(vf.get("guid")).lower()] = where
    return out


def duplicate_message(dupes, sources=None):
    sources = sources or {}
    ours = ["%s is %s" % (line.split(" ", 1)[0], sources[line.split(" ", 1)[0]]) for line in dupes
            if line.split(" ", 1)[0] in sources]
    return ("VF GUIDs used more than once: %s (PF: a physical port's GUID; a host outside this play counts with what it "
            "published and what its inventory asks).%s Give one of those hosts its own sriov_guid_host_id (derived host ids "
            "can collide), or fix the guids lists in sriov_pfs. sriov_allow_guid_change does not allow this: two VFs with "
            "one GUID break both. Nothing was changed."
            % ("; ".join(dupes), (" This host's: %s." % "; ".join(ours)) if ours else ""))


def _in_space(value, space):
    number = _number(value)
    return (number is not None and space["scheme"] and number >> 48 == space["prefix"]
            and (number >> 16) & 0xFFFFFFFF == space["host_id"])


def _space_text(name, space):
    return "the scheme space of %s: prefix 0x%04x with host id %d (0x%08x, %s)" % (
        name, space["prefix"], space["host_id"], space["host_id"], space["source"])


def _listed_in(owner, listed, name, space):
    """The line for the GUIDs of ``owner``'s guids lists that fall in ``name``'s scheme space, or None."""
    inside = [(where, value) for value, where in listed.items() if _in_space(value, space)]
    if not inside:
        return None
    return "%s of %s (%s) %s in %s" % (", ".join(w for w, _v in inside), owner, ", ".join(v for _w, v in inside),
                                       "falls" if len(inside) == 1 else "fall", _space_text(name, space))


def space_collisions(host_name, the_plan, pfs, settings, spaces):
    """The places where this host's VF GUIDs and another host's meet by the scheme's space, known from the settings alone
    (also for a host whose adapters were not read): one line each, sorted by host. ``the_plan``, ``pfs``, ``settings``
    (GUID_SETTINGS): this host's; ``spaces``: host name to :func:`their_space` (:func:`fleet`'s ``space``).

    - both take the scheme's GUIDs with one prefix and host id: refused even when every GUID of both plans is known and
      none is shared yet, as their VFs get the same GUIDs wherever their PF and VF positions meet;
    - a GUID of this host's guids lists inside another host's scheme space, or another host's listed GUID inside this
      host's."""
    mine = _plan_space(host_name, the_plan, pfs, _merged(settings))
    if mine is None:
        return []
    lines = []
    for name in sorted(spaces or {}):
        theirs = spaces[name]
        if name == host_name or not theirs:
            continue
        if mine["scheme"] and theirs["scheme"] and (mine["prefix"], mine["host_id"]) == (theirs["prefix"], theirs["host_id"]):
            lines.append("%s (%s) and %s (%s) both take prefix 0x%04x with host id %d (0x%08x)" % (
                host_name, mine["source"], name, theirs["source"], mine["prefix"], mine["host_id"], mine["host_id"]))
        for line in (_listed_in(host_name, mine["listed"], name, theirs), _listed_in(name, theirs["listed"], host_name, mine)):
            if line:
                lines.append(line)
    return lines


def space_message(host_name, lines):
    """The refusal of :func:`space_collisions`' lines."""
    todo = []
    if any(" both take prefix " in line for line in lines):
        todo.append("Two hosts with one prefix and host id give their VFs the same GUIDs wherever their PF and VF positions "
                    "meet. A host id must be unique per sriov_guid_prefix: give each host its own sriov_guid_host_id, or "
                    "leave it unset to derive it from the inventory name.")
    if any(" in the scheme space of " in line for line in lines):
        todo.append("A listed GUID inside another host's scheme space is that host's GUID once it has a VF at that PF and "
                    "VF position: list GUIDs of a prefix or host id that no host takes.")
    return ("%s: VF GUIDs of two hosts share a space of the scheme (<sriov_guid_prefix><host id><PF index><VF index>), "
            "known from their settings whether or not their adapters were read: %s. %s sriov_allow_guid_change does not "
            "allow this. Nothing was changed." % (host_name, "; ".join(lines), " ".join(todo)))


def unseen_text(unseen, most=20):
    """The hosts that cannot be seen, grouped by why (at most ``most`` names, then how many more)."""
    groups = {}
    for name in sorted(unseen):
        groups.setdefault(unseen[name], []).append(name)
    parts = []
    for why, names in sorted(groups.items(), key=lambda item: item[1][0]):
        shown = ", ".join(names[:most]) + (" and %d more" % (len(names) - most) if len(names) > most else "")
        parts.append("%s (%s)" % (shown, why))
    return "; ".join(parts)


def guid_change_message(host_name, changes, unseen=None, allowed=False):
    """The refusal of a GUID change: without consent, or (consent or not) while hosts of the inventory cannot be seen."""
    parts = ["%s: this run would change the GUIDs of existing VFs and rebind them: %s." % (host_name, "; ".join(changes))]
    if not allowed:
        parts.append("Set sriov_allow_guid_change: true for this host to change them (drain the node first; update OpenSM "
                     "partitions that name the old GUIDs).")
    if unseen:
        parts.append("%s the new GUIDs cannot be checked against the VF GUIDs of %d host%s of the inventory that this run "
                     "cannot see: %s. A GUID change is made only against the whole fleet, and sriov_allow_guid_change does "
                     "not waive that. %s." % (
                         "Even with it," if not allowed else "But", len(unseen), "" if len(unseen) == 1 else "s",
                         unseen_text(unseen), UNSEEN_HOW))
    parts.append("Nothing was changed.")
    return " ".join(parts)


def firmware_status(results):
    """Judge the mlxconfig results of the plan's cards (each with ``item``, the plan's card): the cards whose SR-IOV
    settings wait for a reboot (``waiting``: devices; ``cards``: their card addresses), whether one asks a power cycle,
    and the reason recorded with them."""
    waiting = [r for r in results if r.get("reboot_required")]
    devices = [r["item"]["device"] for r in waiting]
    return {
        "waiting": devices,
        "cards": [r["item"]["card"] for r in waiting],
        "power_cycle": any(r.get("power_cycle_required") for r in waiting),
        "reason": "SR-IOV (SRIOV_EN, NUM_OF_VFS) of %s is set for the next boot; the boot-time unit makes the VFs then"
                  % ", ".join(devices),
        "stuck_msg": "The firmware of %s still runs the old SR-IOV settings. Rebooting again will not help: check the card's "
                     "firmware version and its mlxconfig query, or power the node off and on by hand." % ", ".join(devices),
    }


def short_pfs(plan, waiting_cards):
    """The PFs whose firmware allows fewer VFs than asked now, with no firmware change of their card waiting."""
    return [pf for pf in plan["pfs"] if not pf["ready_now"] and pf["card"] not in waiting_cards]


def short_message(short):
    return ("The firmware allows fewer VFs than asked for, and no firmware change waits for a reboot: %sset sriov_firmware: "
            "true (or raise NUM_OF_VFS with mlxconfig) and reboot."
            % "".join("%s wants %s, sriov_totalvfs is %s; " % (pf["pf"], pf["num_vfs"], pf["total_vfs"]) for pf in short))
