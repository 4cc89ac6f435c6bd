# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: verify_report
short_description: Render the fabric report as a text table or as one self-contained HTML page
version_added: 0.1.0
author: fabric.infiniband developers (@fabric-infiniband)
description:
  - Takes the result of the filter C(fabric.infiniband.verify_checks) and renders it.
  - V(text) is one row per node and one column per check category (V(ok), V(FAIL), V(WAITING) when the check waits for the
    node's reboot, or V(-) when not asked), followed by the firmware table (per RDMA device of a physical function its host,
    device, PCI address, model, PSID, the running firmware version, the version a rule of C(firmware_versions) asks and that
    rule, and the firmware check's word), by the failing checks with what was expected and what was found, and by the nodes
    that wait with what they wait for.
  - V(html) is one page without external assets or scripts, with the same tables (failing cells red, waiting cells amber), the
    failing checks, the waiting nodes, and an inline SVG picture of the fabric (switches in a row, the HCAs below grouped by the
    switch they are cabled to, named by host and coloured by the node's verdict, and the links labelled with their port
    numbers).
options:
  _input:
    description: The result of C(fabric.infiniband.verify_checks).
    type: dict
    required: true
  format:
    description: V(text) or V(html).
    type: str
    default: text
  title:
    description: The title of the HTML page.
    type: str
    default: Fabric report
"""

EXAMPLES = r"""
- name: Write the HTML report
  ansible.builtin.copy:
    content: "{{ __report | fabric.infiniband.verify_report('html') }}"
    dest: fabric-report/fabric-report.html
    mode: "0644"
  delegate_to: localhost
"""

RETURN = r"""
_value:
  description: The report as text or HTML.
  type: str
"""

from html import escape

from ansible.errors import AnsibleFilterError

# the word and the (fill, stroke) colours of each status
_WORD = {"ok": "ok", "fail": "FAIL", "waiting": "WAITING", "not asked": "-"}  # traffic rows: pass, FAIL, planned, unpaired
_COLOURS = {"ok": ("#e3f4e1", "#2e7d32"), "fail": ("#fde2e1", "#c62828"), "waiting": ("#fff3d6", "#b26a00"),
            "unknown": ("#eeeeee", "#757575")}


def _status(check):
    # results of verify_checks before the waiting state had no status for every check
    return check.get("status") or ("not asked" if check["ok"] is None else ("ok" if check["ok"] else "fail"))


def _cell(checks, key):
    """The word and status of a category's cell: the worst of its checks (fail, then waiting, then ok)."""
    statuses = {_status(c) for c in checks if c["category"] == key}
    for status in ("fail", "waiting", "ok"):
        if status in statuses:
            return _WORD[status], status
    return "-", "not asked"


def _host_status(entry):
    return entry.get("status") or ("ok" if entry["ok"] else "fail")


def _rows(report):
    keys = [c["key"] for c in report["categories"]]
    rows = []
    for entry in report["hosts"]:
        cells = [_cell(entry["checks"], key) for key in keys]
        status = _host_status(entry)
        rows.append((entry["host"], cells, _WORD[status], status))
    return rows


def render_text(report):
    titles = ["host"] + [c["title"] for c in report["categories"]] + ["result"]
    rows = [[host] + [text for text, _status in cells] + [result] for host, cells, result, _status in _rows(report)]
    out = _table(titles, rows) + ["", report["summary"]]
    fabric = report.get("fabric") or {}
    if fabric.get("error"):
        out.append("topology: %s" % fabric["error"])
    else:
        out.append("topology from %s: %d switches, %d HCAs, %d links" % (
            fabric.get("host"), len(fabric.get("switches") or []), len(fabric.get("hcas") or []), len(fabric.get("links") or [])))
    firmware = _firmware_rows(report)
    if firmware:
        out += ["", "Firmware (the running version of each RDMA device; asked: what the entry of firmware_versions that names the card asks):"]
        out += _table(_FIRMWARE_TITLES, [cells for cells, _status in firmware])
    if report.get("unmatched_firmware"):
        out += ["", "Firmware rules that match no card (they burn nothing; check the PSID or model):"]
        out += ["  " + line for line in report["unmatched_firmware"]]
    if report.get("traffic") is not None:
        out += [""] + _traffic_text(report["traffic"])
    if report["failures"]:
        out += ["", "Failing checks:"] + ["  " + failure for failure in report["failures"]]
    if report.get("waiting"):
        out += ["", "Waiting for a reboot (WAITING: what fails now and the boot changes):"] + ["  " + line for line in report["waiting"]]
    return "\n".join(out) + "\n"


# asked: the version of the entry of firmware_versions that names the card (">= " with at_least); that entry's index
_FIRMWARE_TITLES = ["host", "device", "PCI address", "model", "PSID", "running", "asked", "firmware_versions", "result"]


def _firmware_rows(report):
    """The firmware table's rows, ``(cells, status)``, from each host's ``firmware`` (none in a report without them)."""
    rows = []
    for entry in report["hosts"]:
        for row in entry.get("firmware") or []:
            asked = "-" if row.get("wanted") is None else "%s%s" % (">= " if row.get("at_least") else "", row["wanted"])
            rule = "-" if row.get("rule") is None else "[%d]" % row["rule"]
            status = row.get("status") or "not asked"
            rows.append(([entry["host"], row.get("device") or "-", row.get("pci_address") or "-", row.get("model") or "-",
                          row.get("psid") or "-", row.get("version") or "-", asked, rule, _WORD.get(status, status)], status))
    return rows


def _table(titles, rows):
    """A text table: the titles, a rule, the rows, each column as wide as its widest cell."""
    widths = [max(len(str(r[i])) for r in [titles] + rows) for i in range(len(titles))]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip() for r in [titles] + rows]
    return [lines[0], "  ".join("-" * w for w in widths)] + lines[1:]


def _firmware_html(report):
    rows = _firmware_rows(report)
    if not rows:
        return ""
    head = "".join("<th>%s</th>" % escape(t) for t in _FIRMWARE_TITLES)
    body = "".join('<tr><td class="host">%s</td>%s<td class="%s">%s</td></tr>' % (
        escape(cells[0]), "".join("<td>%s</td>" % escape(str(c)) for c in cells[1:-1]), _CLASS.get(status, "na"), escape(cells[-1]))
        for cells, status in rows)
    return ("<h2>Firmware</h2><p>The running firmware of each RDMA device of a physical function; asked: what the entry of "
            "firmware_versions that names the card asks (&gt;= with at_least).</p>"
            "<table><thead><tr>%s</tr></thead><tbody>%s</tbody></table>" % (head, body))


_TRAFFIC_TITLES = ["server", "HCA", "client", "HCA", "rate Gb/s", "write BW Gb/s", "min Gb/s", "read lat us", "max us", "result"]


def _figure(value):
    if value is None:
        return "-"
    return ("%.3f" % value).rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def _hca_cell(hca, port):
    """``mlx5_0/1``; the HCA alone where no port is known; ``-`` where the row has no HCA (an unpaired rail)."""
    if not hca:
        return "-"
    return "%s/%s" % (hca, port) if port else str(hca)


def _traffic_cells(row):
    return [row.get("server") or "-", _hca_cell(row.get("server_hca"), row.get("server_port")),
            row.get("client") or "-", _hca_cell(row.get("client_hca"), row.get("client_port")),
            _figure(row.get("rate_gbps")), _figure(row.get("bw_gbps")), _figure(row.get("min_bw_gbps")),
            _figure(row.get("lat_us")), _figure(row.get("max_lat_us")), _WORD.get(row.get("status"), row.get("status") or "-")]


def _traffic_text(rows):
    """The traffic table: one row per run (pair and rail), with its figures and thresholds."""
    if not rows:
        return ["Traffic: no pair to run"]
    return ["Traffic (ib_write_bw, ib_read_lat):"] + _table(_TRAFFIC_TITLES, [_traffic_cells(row) for row in rows])


def _traffic_html(rows):
    if rows is None:
        return ""
    body = "".join("<tr>%s</tr>" % "".join(
        '<td class="%s">%s</td>' % (_CLASS.get(row.get("status"), "na") if i == len(cells) - 1 else "", escape(str(c)))
        for i, c in enumerate(cells)) for row, cells in ((row, _traffic_cells(row)) for row in rows))
    head = "".join("<th>%s</th>" % escape(t) for t in _TRAFFIC_TITLES)
    return "<h2>Traffic</h2><table><thead><tr>%s</tr></thead><tbody>%s</tbody></table>" % (head, body) if rows else \
        "<h2>Traffic</h2><p>no pair to run</p>"


# --- the picture -------------------------------------------------------------------------------
_SW_W = 170  # switch box
_SW_H = 46
_HCA_W = 150  # HCA box
_HCA_H = 46
_GAP = 24  # between boxes of a row
_ROW_GAP = 150  # between the switch row and the HCA row, room for the port labels
_MARGIN = 30


def _layout(fabric):
    """Positions: switches in a row, each HCA below the first switch it is cabled to."""
    switches = [s["guid"] for s in fabric.get("switches") or []]
    hcas = {h["guid"]: h for h in fabric.get("hcas") or []}
    home = {}
    for link in fabric.get("links") or []:
        ends = [link["from"], link["to"]]
        for here, there in (ends, ends[::-1]):
            if here["guid"] in hcas and there["guid"] in switches:
                home.setdefault(here["guid"], there["guid"])
    groups = {sw: [] for sw in switches}
    loose = []
    for guid in hcas:
        (groups[home[guid]] if guid in home else loose).append(guid)
    for members in groups.values():
        members.sort(key=lambda g: (hcas[g].get("host") or "~", hcas[g].get("rdma_device") or "", hcas[g].get("description") or ""))
    columns = [(sw, groups[sw]) for sw in switches] + ([(None, loose)] if loose else [])
    pos, x = {}, _MARGIN
    sw_y, hca_y = _MARGIN + 20, _MARGIN + 20 + _SW_H + _ROW_GAP
    for sw, members in columns:
        width = max(_SW_W if sw else 0, len(members) * (_HCA_W + _GAP) - _GAP)
        if sw:
            pos[sw] = (x + (width - _SW_W) / 2.0, sw_y, _SW_W, _SW_H)
        for index, guid in enumerate(members):
            start = x + (width - (len(members) * (_HCA_W + _GAP) - _GAP)) / 2.0
            pos[guid] = (start + index * (_HCA_W + _GAP), hca_y, _HCA_W, _HCA_H)
        x += width + 2 * _GAP
    return pos, max(x - _GAP, 300), hca_y + _HCA_H + _MARGIN


def _text_el(x, y, text, size=12, anchor="middle", weight="normal", fill="#212121"):
    return '<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" font-weight="%s" fill="%s">%s</text>' % (
        x, y, size, anchor, weight, fill, escape(str(text)))


def _short(text, limit=24):
    text = str(text or "")
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def render_svg(fabric):
    if fabric.get("error") and not fabric.get("switches"):
        return '<p class="error">No topology: %s</p>' % escape(str(fabric["error"]))
    pos, width, height = _layout(fabric)
    switches = {s["guid"]: s for s in fabric.get("switches") or []}
    hcas = {h["guid"]: h for h in fabric.get("hcas") or []}
    lines, labels, boxes = [], [], []
    # each switch's links to HCAs leave its bottom edge spread out in the HCAs' order, so the port labels do not pile up
    starts, fan = {}, {}
    for link in fabric.get("links") or []:
        ends = [link["from"], link["to"]]
        for here, there in (ends, ends[::-1]):
            if here["guid"] in switches and there["guid"] in hcas and there["guid"] in pos:
                fan.setdefault(here["guid"], []).append((pos[there["guid"]][0], here["port"], there["guid"]))
    for sw, members in fan.items():
        x, _y, w, _h = pos[sw]
        members.sort()
        step = (w - 24) / float(max(len(members) - 1, 1))
        for index, (_x, port, hca) in enumerate(members):
            starts[(sw, port, hca)] = x + 12 + (index * step if len(members) > 1 else (w - 24) / 2.0)
    for link in fabric.get("links") or []:
        a, b = link["from"], link["to"]
        if a["guid"] not in pos or b["guid"] not in pos:
            continue
        if b["guid"] in switches and a["guid"] in hcas:
            a, b = b, a
        ax, ay, aw, ah = pos[a["guid"]]
        bx, by, bw, bh = pos[b["guid"]]
        speed = "%s%s" % (link.get("width") or "", link.get("speed") or "")
        if a["guid"] in switches and b["guid"] in switches:
            # switch to switch: an arc above the row
            x1, x2, y = ax + aw / 2.0, bx + bw / 2.0, ay
            lines.append('<path d="M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f" fill="none" stroke="#546e7a" stroke-width="2"/>' % (
                x1, y, x1, y - 40, x2, y - 40, x2, y))
            labels.append(_text_el(x1 + 12, y - 6, a["port"], 10, fill="#37474f"))
            labels.append(_text_el(x2 - 12, y - 6, b["port"], 10, fill="#37474f"))
            continue
        x1, y1 = starts.get((a["guid"], a["port"], b["guid"]), ax + aw / 2.0), ay + ah
        x2, y2 = bx + bw / 2.0, by
        status = hcas.get(b["guid"], {}).get("status", "unknown")
        colour = _COLOURS.get(status, _COLOURS["unknown"])[1]
        lines.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"><title>%s</title></line>' % (
            x1, y1, x2, y2, colour, escape(speed)))
        # port numbers a fifth of the way along from each end
        labels.append('<g>%s%s</g>' % (
            _label_box(x1 + (x2 - x1) * 0.18, y1 + (y2 - y1) * 0.18, a["port"]),
            _label_box(x1 + (x2 - x1) * 0.82, y1 + (y2 - y1) * 0.82, b["port"])))
    for guid, switch in switches.items():
        x, y, w, h = pos[guid]
        boxes.append('<g><title>%s</title><rect x="%.1f" y="%.1f" width="%d" height="%d" rx="6" fill="#cfd8dc" stroke="#37474f" '
                     'stroke-width="2"/>%s%s</g>' % (
                         escape("%s LID %s" % (switch["guid"], switch.get("lid"))), x, y, w, h,
                         _text_el(x + w / 2.0, y + 19, _short(switch.get("description") or "switch"), 13, weight="bold"),
                         _text_el(x + w / 2.0, y + 36, "LID %s, %s ports" % (switch.get("lid"), switch.get("num_ports")), 11)))
    for guid, hca in hcas.items():
        x, y, w, h = pos[guid]
        fill, stroke = _COLOURS.get(hca.get("status"), _COLOURS["unknown"])
        name = hca.get("host") or _short(hca.get("description") or guid)
        detail = hca.get("rdma_device") if hca.get("host") else "not in the play"
        lid = ", ".join(str(lid) for lid in hca.get("lids") or [])
        boxes.append('<g class="hca %s"><title>%s</title><rect x="%.1f" y="%.1f" width="%d" height="%d" rx="6" fill="%s" stroke="%s" '
                     'stroke-width="2"/>%s%s</g>' % (
                         escape(str(hca.get("status"))), escape("%s %s %s" % (hca.get("description"), guid, hca.get("status"))),
                         x, y, w, h, fill, stroke,
                         _text_el(x + w / 2.0, y + 19, name, 13, weight="bold"),
                         _text_el(x + w / 2.0, y + 36, "%s%s" % (detail, ", LID " + lid if lid else ""), 11)))
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" '
            'aria-label="fabric topology" font-family="sans-serif">%s%s%s</svg>' % (
                width, height, width, height, "".join(lines), "".join(boxes), "".join(labels)))


def _label_box(x, y, text):
    return ('<rect x="%.1f" y="%.1f" width="22" height="15" rx="3" fill="#ffffff" stroke="#90a4ae"/>%s' % (
        x - 11, y - 8, _text_el(x, y + 4, text, 10, fill="#263238")))


_CSS = """
body{font-family:sans-serif;margin:24px;color:#212121}
table{border-collapse:collapse;margin:12px 0}
th,td{border:1px solid #bdbdbd;padding:4px 10px;text-align:center}
th{background:#eceff1}
td.host{text-align:left;font-weight:bold}
td.ok{background:#e3f4e1;color:#2e7d32}
td.fail{background:#fde2e1;color:#c62828;font-weight:bold}
td.waiting{background:#fff3d6;color:#b26a00;font-weight:bold}
td.na{color:#9e9e9e}
.summary.ok{color:#2e7d32}.summary.fail{color:#c62828}.summary.waiting{color:#b26a00}
li{margin:2px 0}.error{color:#c62828}
.legend span{display:inline-block;padding:2px 8px;margin-right:8px;border-radius:4px}
"""


_CLASS = {"ok": "ok", "fail": "fail", "waiting": "waiting", "pass": "ok"}


def render_html(report, title="Fabric report"):
    head = "".join("<th>%s</th>" % escape(c["title"]) for c in report["categories"])
    body = []
    for host, cells, result, host_status in _rows(report):
        tds = "".join('<td class="%s">%s</td>' % (_CLASS.get(status, "na"), escape(text)) for text, status in cells)
        body.append('<tr><td class="host">%s</td>%s<td class="%s">%s</td></tr>' % (
            escape(host), tds, _CLASS.get(host_status, "fail"), result))
    failures = "".join("<li>%s</li>" % escape(f) for f in report["failures"])
    waiting = "".join("<li>%s</li>" % escape(w) for w in report.get("waiting") or [])
    statuses = {row[3] for row in _rows(report)}
    if any(row.get("status") == "fail" for row in report.get("traffic") or []):
        statuses.add("fail")
    summary_class = "fail" if "fail" in statuses else ("waiting" if "waiting" in statuses else "ok")
    fabric = report.get("fabric") or {}
    legend = "".join('<span style="background:%s;color:%s">%s</span>' % (fill, stroke, name)
                     for name, (fill, stroke) in (("node passes", _COLOURS["ok"]), ("node fails", _COLOURS["fail"]),
                                                  ("node waits for a reboot", _COLOURS["waiting"]),
                                                  ("not in the play", _COLOURS["unknown"])))
    source = "from %s" % fabric.get("host") if fabric.get("host") else ""
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>%s</title><style>%s</style></head><body>' % (escape(title), _CSS),
        "<h1>%s</h1>" % escape(title),
        '<p class="summary %s">%s</p>' % (summary_class, escape(report["summary"])),
        "<h2>Fabric %s</h2>" % escape(source),
        '<p class="legend">%s</p>' % legend,
        render_svg(fabric),
        "<h2>Nodes</h2>",
        "<table><thead><tr><th>host</th>%s<th>result</th></tr></thead><tbody>%s</tbody></table>" % (head, "".join(body)),
        "<p>ok: passes; FAIL: fails; WAITING: fails until the reboot (or power cycle) the node waits for; -: not asked of this node.</p>",
        _firmware_html(report),
        ("<h2>Firmware rules that match no card</h2><p>They burn nothing; check the PSID or model.</p><ul>%s</ul>" % "".join(
            "<li>%s</li>" % escape(line) for line in report["unmatched_firmware"])) if report.get("unmatched_firmware") else "",
        _traffic_html(report.get("traffic")),
        ("<h2>Failing checks</h2><ul>%s</ul>" % failures) if failures else "",
        ("<h2>Waiting for a reboot</h2><ul>%s</ul>" % waiting) if waiting else "",
        "</body></html>",
        "",
    ])


def verify_report(report, format="text", title="Fabric report"):  # pylint: disable=redefined-builtin
    if not isinstance(report, dict) or "hosts" not in report:
        raise AnsibleFilterError("verify_report expects the result of fabric.infiniband.verify_checks")
    if format == "text":
        return render_text(report)
    if format == "html":
        return render_html(report, title)
    raise AnsibleFilterError("verify_report: format must be text or html, got %r" % (format,))


class FilterModule:
    def filters(self):
        return {"verify_report": verify_report}
