# -*- coding: utf-8 -*-
# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Private file reading and writing shared by the modules of this collection (pending record, boot units,
kernel module files).

A file is written whole into a temporary file in its own directory and renamed over the old one
with ``module.atomic_move``, so that a reader (or a run killed half-way) never sees half a file.
"""

from __future__ import annotations

import os
import stat
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


def inspect(path):
    """``(content bytes, mode, uid, gid)`` of the regular file at ``path`` (a symlink is followed), or None
    when nothing is there.

    Raises ValueError when ``path`` is not a regular file, OSError when it cannot be read.
    """
    if not os.path.lexists(path):
        return None
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise ValueError("%s exists and is not a regular file" % path)
    with open(path, "rb") as handle:
        return handle.read(), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid
