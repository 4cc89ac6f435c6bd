# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``flint`` (MFT) and ``mstflint``: query of a card or of an image file, and burn.

The layout is mstflint's (flint/subcommands.cpp ``QuerySubCommand::printInfo``, ``BurnSubCommand``;
lab/tests/fixtures/README.md names the recorded outputs it matches). Errors go to stdout as
``-E- ...`` with exit code 1, as flint's ``reportErr`` does.

Firmware images are files of the simulator's own (lab/README.md, "Firmware images"): JSON with
``fabricsim_firmware_image``, ``psid``, ``version``, ``device_id`` and optionally ``image_type``.
A burn writes the image to the card's flash (the adapter's ``flash`` entry: version and PSID); the
card runs it after the next activation, which ``state._apply_next`` performs on the same events
as the Next Boot values of mlxconfig: a power-on (unless ``warm_reboot_applies`` is false), a
power cycle, a firmware reset.
"""

from __future__ import annotations

import json
import re

from fabricsim import Result
from fabricsim import catalog
from fabricsim import mlxconfig
from fabricsim import state as sim_state

IMAGE_MAGIC = "fabricsim_firmware_image"
PAD = 23  # the value column of every query line ("%-23s")
PROGRESS = "Burning FW image without signatures - "


class FlintError(Exception):
    """A ``-E-`` message; flint exits with 1."""


def image_type(model):
    """FS3 for ConnectX-4 and ConnectX-4 Lx, FS4 for ConnectX-5 and later (and BlueField)."""
    return "FS3" if model.device_id in (0x1013, 0x1015) else "FS4"


def flash(adapter):
    """``(version, psid)`` on the card's flash: the burnt image when one waits, else the running one."""
    model = catalog.get_model(adapter["model"])
    running = adapter.get("firmware_version", model.fw_version)
    burnt = adapter.get("flash") or {}
    return burnt.get("version", running), burnt.get("psid", adapter.get("psid", model.psid))


def is_version(text):
    """Whether ``text`` is a firmware version as flint prints it (``16.35.3006``)."""
    return bool(re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", text))


def read_image(path):
    """The image file's ``{psid, version, device_id, image_type}``, or FlintError as flint words it."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise FlintError("Cannot open Image: %s. No such file or directory" % path) from None
    except OSError as exc:
        raise FlintError("Cannot open Image: %s. %s" % (path, exc.strerror)) from None
    except ValueError:
        raise FlintError("Cannot open Image: %s. Invalid image format" % path) from None
    if not isinstance(data, dict) or data.get(IMAGE_MAGIC) != 1 or not isinstance(data.get("psid"), str) \
            or not isinstance(data.get("version"), str) or not is_version(data["version"]):
        raise FlintError("Cannot open Image: %s. Invalid image format" % path)
    return {"psid": data["psid"], "version": data["version"], "device_id": data.get("device_id"),
            "image_type": data.get("image_type", "FS4")}


def line(key, value):
    return "%-*s%s\n" % (PAD, key + ":", value)


class Flint:
    """One invocation of flint/mstflint."""

    def __init__(self, state, argv, name):
        self.state = state
        self.argv = list(argv)
        self.name = name
        self.out = []
        self.device = None
        self.image = None
        self.yes = False
        self.allow_psid_change = False
        self.command = []
        self.kind = "query"
        self.log_device = None

    def p(self, text):
        self.out.append(text)

    def parse(self):
        i = 0
        while i < len(self.argv):
            arg = self.argv[i]
            if arg in ("-d", "--device", "-i", "--image"):
                i += 1
                if i == len(self.argv):
                    raise FlintError("Missing argument for %s" % arg)
                if arg in ("-d", "--device"):
                    self.device = self.argv[i]
                else:
                    self.image = self.argv[i]
            elif arg in ("-y", "--yes"):
                self.yes = True
            elif arg in ("--allow_psid_change", "-allow_psid_change"):
                self.allow_psid_change = True
            elif arg in ("-qq", "--qq", "--no_fw_ctrl", "--use_fw"):
                pass
            elif arg in ("-v", "--version"):
                self.p("%s, %s %s, built on the fabric.infiniband simulator\n"
                       % (self.name, "mft" if self.name == "flint" else "mstflint",
                          self.state["tools"].get("firmware_version")))
                return False
            elif arg.startswith("-"):
                raise FlintError("Bad argument: %s" % arg)
            else:
                self.command.append(arg)
            i += 1
        return True

    def open_device(self):
        """The card's adapter and function; under lockdown or for an unknown device, flint's open error."""
        if sim_state.lockdown(self.state) != "none":
            raise FlintError("Cannot open Device: %s. Operation not permitted. MFE_CR_ERROR" % self.device)
        tool = mlxconfig.Tool(self.state, [], "mlxconfig" if self.name == "flint" else "mstconfig")
        try:
            func = tool.open_device(self.device)
        except mlxconfig.MlxError:
            raise FlintError("Cannot open Device: %s. No such file or directory. MFE_NO_DEV" % self.device) from None
        self.log_device = func.bdf
        return func

    # ------------------------------------------------------------------ query
    def query_device(self, full):
        func = self.open_device()
        ad, model = func.adapter, func.model
        running = ad.get("firmware_version", model.fw_version)
        version, psid = flash(ad)
        self.p(line("Image type", image_type(model)))
        if self.state["tools"].get("flint_query") == "running_only":
            # old MFT builds (issue 33): the running version alone, whatever the flash holds
            self.p(line("FW Version(Running)", running))
        else:
            self.p(line("FW Version", version))
            if version != running:
                self.p(line("FW Version(Running)", running))
        if full:
            self.p(line("Part Number", model.part_name))
            self.p(line("Description", model.description))
        self.p(line("Product Version", version))
        guid = "%016x" % int(ad["node_guid"], 16)
        self.p(line("Description", "UID                GuidsNumber"))
        self.p(line("Base GUID", "%s        8" % guid))
        self.p(line("Base MAC", "%s            8" % (guid[:6] + guid[10:])))
        self.p(line("Image VSD", "N/A"))
        self.p(line("Device VSD", "N/A"))
        self.p(line("PSID", psid))
        self.p(line("Security Attributes", "secure-fw" if model.bluefield else "N/A"))
        if full:
            self.p(line("Default Update Method", "fw_ctrl" if image_type(model) == "FS4" else "Legacy"))
        return 0

    def query_image(self):
        self.kind = "read"  # no device is opened: the call log's firmware queries count devices
        img = read_image(self.image)
        self.p(line("Image type", img["image_type"]))
        self.p(line("FW Version", img["version"]))
        self.p(line("Product Version", img["version"]))
        self.p(line("Description", "UID                GuidsNumber"))
        self.p(line("Base GUID", "N/A                     4"))
        self.p(line("Base MAC", "N/A                     4"))
        self.p(line("Image VSD", "N/A"))
        self.p(line("Device VSD", "N/A"))
        self.p(line("PSID", img["psid"]))
        self.p(line("Security Attributes", "N/A"))
        if img["image_type"] in ("FS4", "FS5"):
            self.p(line("Security Ver", "0"))
        return 0

    # ------------------------------------------------------------------ burn
    def burn(self):
        self.kind = "write"
        func = self.open_device()
        img = read_image(self.image)
        ad, model = func.adapter, func.model
        if img["device_id"] is not None and int(img["device_id"]) != model.device_id:
            fs = image_type(model)
            raise FlintError("The given device requires an %s image type, but the given image file does not contain "
                             "an %s FW image" % (fs, fs))
        current, psid = flash(ad)
        self.p("\n    Current FW version on flash:  %s\n" % current)
        self.p("    New FW version:               %s\n" % img["version"])
        order = sim_state.version_tuple(current) >= sim_state.version_tuple(img["version"])
        if order:
            self.p("\n    Note: The new FW version is %s the current FW version on flash.\n"
                   % ("the same as" if current == img["version"] else "older than"))
            self.ask()
        self.p("\n")
        if img["psid"] != psid:
            if not self.allow_psid_change:
                self.p("\n")
                if sim_state.version_tuple(self.state["tools"].get("firmware_version", "4.21.0")) >= (4, 36, 0):
                    raise FlintError("PSID mismatch. Device PSID (%s) differs from image PSID (%s)." % (psid, img["psid"]))
                raise FlintError("PSID mismatch. The PSID on flash (%s) differs from the PSID in the given image (%s)."
                                 % (psid, img["psid"]))
            self.p("\n    You are about to replace current PSID on flash - \"%s\" with a different PSID - \"%s\".\n"
                   "    Note: It is highly recommended not to change the PSID.\n" % (psid, img["psid"]))
            self.ask()
        for percent in (0, 37):
            self.p("\r%s%3d%%" % (PROGRESS, percent))
        if sim_state.take_fault(self.state, "firmware_burn"):
            # a failsafe burn writes the other flash bank: the card keeps the image it had
            raise FlintError("Burning %s image failed: Flash write failed (injected fault)" % image_type(model))
        self.p("\r%s100%%\r%sOK  \n" % (PROGRESS, PROGRESS))
        self.p("\rRestoring signature                     - OK\n")
        running = ad.get("firmware_version", model.fw_version)
        if img["version"] == running and img["psid"] == ad.get("psid", model.psid):
            ad.pop("flash", None)
        else:
            ad["flash"] = {"version": img["version"], "psid": img["psid"]}
        if sim_state.reset_levels(ad):
            reset = "mlxfwreset" if self.name == "flint" else "mstfwreset"
            self.p("-I- To load new FW, issue system-level reset or use %s where applicable.\n" % reset)
        else:
            self.p("-I- To load new FW, issue system-level reset.\n")
        return 0

    def ask(self):
        if not self.yes:
            self.p("\n Do you want to continue ? (y/n) [n] : ")
            raise FlintError("Aborted by user")
        self.p("\n Do you want to continue ? (y/n) [n] : y\n")

    # ------------------------------------------------------------------ dispatch
    def execute(self):
        try:
            if not self.parse():
                return 0
            cmd = self.command[0] if self.command else None
            if cmd in ("q", "query"):
                full = self.command[1:2] == ["full"]
                if self.device:
                    return self.query_device(full)
                if self.image:
                    return self.query_image()
                raise FlintError("Please specify Device.")
            if cmd in ("b", "burn"):
                if not self.device:
                    raise FlintError("Please specify Device.")
                if not self.image:
                    raise FlintError("Please specify Image file.")
                return self.burn()
            raise FlintError("Unknown command \"%s\"" % (cmd or ""))
        except FlintError as exc:
            self.p("-E- %s\n" % exc)
            return 1


def run(state, argv, tool="mstflint", stdin=None):  # pylint: disable=unused-argument
    """Run flint (``tool="flint"``) or mstflint; returns a Result. Answers come from ``-y`` only."""
    t = Flint(state, argv, tool)
    rc = t.execute()
    return Result(rc, "".join(t.out), "", t.kind, t.log_device)
