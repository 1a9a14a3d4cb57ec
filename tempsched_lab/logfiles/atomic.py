"""Write a file all at once or not at all: a temporary name in the same directory, then a rename.

A reader (or a crash) never sees half a file under the real name: either the old
file (or nothing) or the whole new one. ``os.replace`` is atomic within one file
system, which is why the temporary file lives next to the target. With
``fsync=True`` the data (and the rename) also survive a power cut.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "temporary_name"]


def temporary_name(path: Path) -> Path:
    """A fresh hidden name next to ``path`` (``.name.1a2b3c4d.tmp``); readers skip such names."""
    return path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")


@contextlib.contextmanager
def atomic_path(path: Path, *, fsync: bool = True, what: str = "the file") -> Iterator[Path]:
    """Yield a temporary path to write; on success it becomes ``path``, on failure it vanishes.

    An ``OSError`` (a full disk, a missing or unwritable directory) is raised again
    as the same type with a message naming ``path`` and the cause.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("all or nothing")
    >>> target.read_text(), [p.name for p in target.parent.iterdir()]
    ('all or nothing', ['out.txt'])
    """
    tmp = temporary_name(path)
    try:
        # Created here (not by mkstemp) so the file gets the usual umask-based mode, not 0600.
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        yield tmp
        if fsync:
            _fsync(tmp, os.O_RDONLY)
        os.replace(tmp, path)
        if fsync:
            _fsync(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise _named(exc, path, what) from exc
        raise


def _fsync(path: Path, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    except OSError:
        if flags & getattr(os, "O_DIRECTORY", 0):
            return  # some file systems cannot sync a directory; the file itself is synced
        raise
    finally:
        os.close(fd)


def _named(exc: OSError, path: Path, what: str) -> OSError:
    cause = exc.strerror or str(exc) or type(exc).__name__
    message = f"cannot write {what} {str(path)!r}: {cause}"
    try:
        return type(exc)(exc.errno, message) if exc.errno is not None else type(exc)(message)
    except TypeError:  # an OSError subclass with a constructor of its own
        return OSError(exc.errno, message)
