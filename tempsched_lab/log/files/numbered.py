"""How far a spilled log numbered its rows, on disk at every few rows: ``numbered.bin``.

``reserved.json`` bounds the ``seq`` numbers a log may have handed out a chunk ahead
(16,384 rows): renewing it costs a file write and a rename, too dear for every row. A
process killed with ``SIGKILL`` then left a restart to announce the whole chunk as a gap
("at most 16,382 rows") when a few were lost. ``numbered.bin`` says how far the log got
within :data:`STEP` rows: before the log hands its recorder room for the next ``STEP``
rows, it stores the new bound into a memory map of this file (two stores into the page
cache, no system call: a write that outlives the process, as ``reserved.json``'s does,
not the machine). A restart reads the bound back (:func:`read_numbered`) and starts its
numbering there: after every number the killed process gave a row, and at most ``STEP``
numbers after the last one it gave (``STEP`` when its last row took the last number of a
bound, since the next bound is stored before the next row comes).

The file is 32 bytes: two slots, each a little-endian int64 bound and its bitwise
complement. A bound is stored in slot A, then in slot B; a process killed in the
middle of a store leaves the other slot whole, holding the previous bound, which still
bounds every row (the log numbers no row past the previous bound before the store
returns). The reader takes the larger of the whole slots.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), NUMBERED)
>>> mark = open_numbered(path, 100)
>>> read_numbered(path)
100
>>> store_numbered(mark, 164)
>>> read_numbered(path)
164
>>> mark.close()
"""

from __future__ import annotations

import mmap
import os
import struct

__all__ = ["NUMBERED", "STEP", "open_numbered", "read_numbered", "store_numbered"]

#: The file's name in a spill directory.
NUMBERED = "numbered.bin"
#: Rows numbered between two stores of the bound: a restart after a kill names at most
#: ``STEP`` numbers that no row had. A store (``_Spill.number``) costs about 6,000
#: instructions (0.7 us), under 100 a row at 64; ``schedule()`` on a spilled log measured
#: no dearer (callgrind, docs/benchmarks.md).
STEP = 64
_SLOT = struct.Struct("<qq")
_SIZE = 2 * _SLOT.size


def _slot(bound: int) -> bytes:
    return _SLOT.pack(bound, ~bound)


def open_numbered(path: str, bound: int) -> mmap.mmap | None:
    """Create ``path`` holding ``bound`` and map it for :func:`store_numbered`; ``None``
    when it cannot be made (a full disk: the restart falls back on ``reserved.json``).

    The bytes are written, not only sized, so that the file's blocks exist: a store into
    a map over a hole of a full disk would kill the process (``SIGBUS``).
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    except OSError:
        return None
    try:
        data = _slot(bound) * 2
        if os.write(fd, data) != len(data):
            return None
        return mmap.mmap(fd, _SIZE)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)  # (the map keeps the file)


def store_numbered(mark: mmap.mmap, bound: int) -> None:
    """Say in the mapped file that no row has a ``seq`` at or past ``bound``: slot A, then B."""
    _SLOT.pack_into(mark, 0, bound, ~bound)
    _SLOT.pack_into(mark, _SLOT.size, bound, ~bound)


def read_numbered(path: str | os.PathLike[str]) -> int | None:
    """The bound in ``path``: the larger of its whole slots; ``None`` when the file is
    missing, short, or neither slot is whole (a damaged file says nothing)."""
    try:
        with open(path, "rb") as file:
            data = file.read(_SIZE)
    except OSError:
        return None
    if len(data) < _SIZE:
        return None
    whole = []
    for offset in (0, _SLOT.size):
        bound, check = _SLOT.unpack_from(data, offset)
        if check == ~bound and bound >= 0:
            whole.append(bound)
    return max(whole) if whole else None
