# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Private file writing shared by the modules of this collection (pending record, boot units).

A file is written whole into a temporary file in its own directory and renamed over the old one
with ``module.atomic_move``, so that a reader (or a run killed half-way) never sees half a file.
"""

from __future__ import annotations

import os
import tempfile

DIR_MODE = 0o755


def make_dirs(directory, mode=DIR_MODE):
    """Create ``directory`` and its missing parents with ``mode``, whatever the umask."""
    missing = []
    while directory and not os.path.isdir(directory):
        missing.append(directory)
        directory = os.path.dirname(directory)
    for path in reversed(missing):
        os.mkdir(path, mode)
        os.chmod(path, mode)


def write_atomic(module, path, data, mode):
    """Write ``data`` (bytes) to ``path`` with ``mode``, creating missing directories.

    Raises OSError (the temporary file removed) when a directory or the file cannot be written.
    """
    directory = os.path.dirname(path) or "."
    make_dirs(directory)
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
    except (IOError, OSError):
        os.unlink(tmp)
        raise
    module.atomic_move(tmp, path)
