# Copyright (c) 2026, fabric.infiniband developers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The simulated sysfs, laid over the real one with FUSE.

The filesystem shows the real sysfs (read through a private, non-recursive bind of ``/sys``)
with the simulator's entries (``sysfs.tree()``) added on top; writes to simulated files go
through ``sysfs.write()``, which applies the kernel's rules and raises the errno the kernel
would.  ``node.py`` mounts it and binds its subtrees over ``/sys/{class,bus,devices,module,kernel}``
so that every program in the node, the modules included, reads ``/sys`` as on a real host.
"""

import errno
import os
import stat
import threading
import time

from fabricsim import state as sim_state
from fabricsim import sysfs

# The module is named ``fusepy`` in Debian's python3-fusepy and ``fuse`` on PyPI; it needs libfuse
# at import.  Without it the class below still works (tests call its methods directly).
try:
    from fusepy import FUSE, Operations, fuse_get_context
except ImportError:  # pragma: no cover - depends on the distribution
    try:
        from fuse import FUSE, Operations, fuse_get_context
    except (ImportError, OSError):
        FUSE, Operations, fuse_get_context = None, object, None


def _caller_uid():
    """The uid of the process a FUSE request comes from (0 outside a request: the tests call the methods)."""
    if fuse_get_context is None:
        return 0
    try:
        return fuse_get_context()[0]
    except Exception:  # pylint: disable=broad-exception-caught
        return 0


def _error(number):
    """fusepy answers the kernel with -errno for any OSError an operation raises."""
    return OSError(number, os.strerror(number))

_STAT_KEYS = ("st_mode", "st_size", "st_nlink", "st_uid", "st_gid", "st_atime", "st_mtime", "st_ctime")
_SYSFS_ATTR_SIZE = 4096  # what sysfs reports for every attribute file


class SimTree:
    """The simulated entries and a parent -> children index, rebuilt when the state file changes."""

    def __init__(self, state_path):
        self.state_path = state_path
        self._key = None
        self.entries = {}
        self.children = {}
        self.opaque = ()
        self.lock = threading.Lock()

    def refresh(self):
        try:
            st = os.stat(self.state_path)
            key = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            key = None
        with self.lock:
            if key == self._key and self.entries:
                return
            entries = sysfs.tree(sim_state.load(self.state_path)) if key else {}
            children = {}
            for path in entries:
                parent, name = path.rsplit("/", 1)
                children.setdefault(parent or "/", set()).add(name)
            self.opaque = tuple(p for p, e in entries.items() if isinstance(e, sysfs.Dir) and e.opaque)
            self.entries, self.children, self._key = entries, children, key

    def hides(self, path):
        """Whether the real entry ``path`` lies under an opaque simulated directory."""
        return any(path.startswith(p + "/") for p in self.opaque)


class SysfsOverlay(Operations):
    """fusepy operations: simulated entries first, the real sysfs underneath."""

    def __init__(self, real_root, state_path):
        self.real_root = real_root
        self.state_path = state_path
        self.sim = SimTree(state_path)
        self.started = time.time()

    # --- helpers -----------------------------------------------------------------------
    def _entry(self, path):
        self.sim.refresh()
        return self.sim.entries.get(path)

    def _real(self, path):
        """The real sysfs path behind ``path`` (a name that cannot exist when an opaque directory hides it)."""
        if self.sim.hides(path):
            return self.real_root + "/.fabricsim-hidden" + path
        return self.real_root + path

    def _attrs(self, mode, size=0, nlink=1):
        now = self.started
        return {"st_mode": mode, "st_size": size, "st_nlink": nlink, "st_uid": 0, "st_gid": 0,
                "st_atime": now, "st_mtime": now, "st_ctime": now}

    # --- read side ---------------------------------------------------------------------
    def getattr(self, path, fh=None):
        entry = self._entry(path)
        if entry is None and path in self.sim.children:
            entry = sysfs.Dir()
        if entry is not None:
            if isinstance(entry, sysfs.Dir):
                return self._attrs(stat.S_IFDIR | 0o755, 0, 2)
            if isinstance(entry, sysfs.Link):
                return self._attrs(stat.S_IFLNK | 0o777, len(entry.target))
            return self._attrs(stat.S_IFREG | (0o644 if entry.writable else 0o444), _SYSFS_ATTR_SIZE)
        try:
            st = os.lstat(self._real(path))
        except OSError as exc:
            raise _error(exc.errno) from None
        return {key: getattr(st, key) for key in _STAT_KEYS}

    def readdir(self, path, fh):
        self.sim.refresh()
        names = set(self.sim.children.get(path, ()))
        real = self._real(path)
        if path in self.sim.opaque:
            pass
        elif os.path.isdir(real):
            try:
                names.update(os.listdir(real))
            except OSError:
                pass
        elif not names and self._entry(path) is None:
            raise _error(errno.ENOENT)
        return [".", ".."] + sorted(names)

    def readlink(self, path):
        entry = self._entry(path)
        if isinstance(entry, sysfs.Link):
            return entry.target
        try:
            return os.readlink(self._real(path))
        except OSError as exc:
            raise _error(exc.errno) from None

    def open(self, path, flags):
        entry = self._entry(path)
        wants_write = flags & (os.O_WRONLY | os.O_RDWR)
        if entry is None:
            if wants_write:
                raise _error(errno.EROFS)
            if not os.path.exists(self._real(path)):
                raise _error(errno.ENOENT)
            return 0
        if isinstance(entry, sysfs.Dir):
            raise _error(errno.EISDIR)
        if wants_write and not entry.writable:
            raise _error(errno.EACCES)  # kernfs: attribute without a store method
        return 0

    def read(self, path, size, offset, fh):
        entry = self._entry(path)
        if entry is not None:
            content = entry.content
            if callable(content):  # a counter that rises while it is read (porthealth.LiveCounter)
                content = content()
            if isinstance(content, bytes):
                # A binary attribute (config): as pci_read_config(), only the first 64 bytes for a reader
                # without CAP_SYS_ADMIN (the uid stands in for the capability).
                if _caller_uid() != 0:
                    content = content[:64]
                return content[offset:offset + size]
            return content.encode()[offset:offset + size]
        try:
            with open(self._real(path), "rb") as handle:
                handle.seek(offset)
                return handle.read(size)
        except OSError as exc:
            raise _error(exc.errno) from None

    # --- write side --------------------------------------------------------------------
    def write(self, path, data, offset, fh):
        entry = self._entry(path)
        if entry is None:
            raise _error(errno.EROFS)
        try:
            count = sim_state.mutate(self.state_path, lambda st: sysfs.write(st, path, bytes(data), offset))
        except OSError as exc:
            raise _error(exc.errno or errno.EIO) from None
        return len(data) if count is None else count

    def truncate(self, path, length, fh=None):
        # ``echo N > file`` opens with O_TRUNC; sysfs ignores it, so do we.
        if self._entry(path) is None:
            raise _error(errno.EROFS)
        return 0

    def flush(self, path, fh):
        # Answered ENOSYS once, the kernel sends no FLUSH again (fuse's no_flush): a close costs no round trip to this
        # daemon, as closing a sysfs attribute costs the kernel nothing. Nothing is buffered here to flush.
        raise _error(errno.ENOSYS)

    def statfs(self, path):
        return {"f_bsize": 4096, "f_frsize": 4096, "f_blocks": 0, "f_bfree": 0, "f_bavail": 0,
                "f_files": 0, "f_ffree": 0, "f_namemax": 255}


def serve(mountpoint, real_root, state_path):
    """Serve until unmounted (blocks).

    The kernel keeps a looked-up name for a second (entry_timeout), so that a path is not looked up
    again component by component on every open: an hca_info read costs about 0.12 s of this daemon's
    answers instead of 0.21 (a real sysfs answers in microseconds). Attributes are never cached
    (attr_timeout=0) and a name that does not exist is never remembered, so an entry the simulator
    removes is gone at once (its next stat or open fails with ENOENT) and a new one (a VF's virtfn link)
    is there at once.
    """
    if FUSE is None:
        raise RuntimeError("fusepy and libfuse are needed to serve the simulated sysfs")
    FUSE(SysfsOverlay(real_root, state_path), mountpoint, foreground=True, nothreads=True,
         allow_other=True, direct_io=True, attr_timeout=0, entry_timeout=1.0, fsname="fabricsim-sysfs")
