#!/usr/bin/env bash
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# A cold power cycle of a molecule node, as `lab/labctl.py power-cycle` gives one to a lab node:
# the simulator's power_cycle rule (firmware Next Boot becomes Current on every card, also those a
# warm reboot does not load), then the container restarts. Molecule's nodes keep their state inside
# the container (labctl's on the host), so the rule runs there, before the restart. Like labctl's,
# it counts two power-ons in the state's boot_count (the cold one, then the container's start).
set -euo pipefail
node=${1:?node (container name)}
podman exec "${node}" python3 -c 'import sys
sys.path.insert(0, "/usr/lib/fabricsim")
from fabricsim import state
state.mutate("/var/lib/fabricsim/state.json", state.power_cycle)'
podman restart -t 10 "${node}" >/dev/null
