# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""fabricsim: the ConnectX hardware simulator of the fabric.infiniband lab (see lab/README.md).

Every simulated tool is ``run(state, argv, ...) -> Result``; ``fabricsim.cli.main(tool, argv)``
wraps it with loading/saving the state and the call log.
"""

from collections import namedtuple

# What a simulated tool produced (rc, stdout, stderr); ``kind`` and ``device`` go to the call log.
# A plain namedtuple: importing typing would cost every simulated tool call about 10 ms.
Result = namedtuple("Result", ["rc", "stdout", "stderr", "kind", "device"], defaults=["read", None])


def read_answer(stdin, pending=None):
    """One line of an interactive answer: ``stdin`` is None (EOF), a string, or a file object.

    ``pending`` is the tool's list of output chunks not yet shown; a stdin object with a ``show``
    method (the CLI's) gets them printed before the read, as the real tool flushes its prompt.
    """
    if stdin is None:
        return ""
    if isinstance(stdin, str):
        return stdin.splitlines()[0] if stdin else ""
    if pending is not None and hasattr(stdin, "show"):
        stdin.show("".join(pending))
        pending.clear()
    try:
        line = stdin.readline()
    except (OSError, ValueError):
        return ""
    return line.rstrip("\n")
