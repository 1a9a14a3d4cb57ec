"""Write a file all at once or not at all: a temporary name in the same directory, then a rename.

A reader (or a crash) never sees half a file under the real name: either the old
file (or nothing) or the whole new one. ``os.replace`` is atomic within one file
system, which is why the temporary file lives next to the target. With
``fsync=True`` the data (and the rename) also survive a power cut.

A write that is killed (``kill -9``, a power cut) leaves its temporary file behind:
:func:`remove_stale_temporaries` removes such leftovers of one target, and only
those that nobody has written to for :data:`STALE_AFTER` seconds, so a write in
progress in another process is never touched.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

__all__ = ["STALE_AFTER", "atomic_path", "remove_stale_temporaries", "temporary_name"]

#: Seconds without a write after which a temporary file is a leftover of a write that died.
#: Writing a log updates its file's modification time as it goes (a million-row CSV takes
#: ~12 s), so an hour of silence is never a write still under way.
STALE_AFTER = 3600.0
#: Our temporary names: ``.`` + the target's name + ``.`` + 8 hex digits + ``.tmp``.
_TEMPORARY = re.compile(r"\.(?P<target>.+)\.[0-9a-f]{8}\.tmp")


def temporary_name(path: Path) -> Path:
    """A fresh hidden name next to ``path`` (``.name.1a2b3c4d.tmp``); readers skip such names."""
    return path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")


def remove_stale_temporaries(
    directory: Path,
    targets: Iterable[str] | Callable[[str], object] | None = None,
    *,
    older_than: float = STALE_AFTER,
) -> list[Path]:
    """Remove our temporary files in ``directory`` that were left behind by a killed write.

    Only names of our own pattern (``.<target>.<8 hex digits>.tmp``, see
    :func:`temporary_name`), only for the target names in ``targets`` (names, or a
    test such as a compiled pattern's ``fullmatch``; ``None``: any target), and only those not
    written to for ``older_than`` seconds (``0``: any age, for a directory whose
    writer is known to be done). Files that vanish meanwhile or cannot be removed
    are left alone; returns the paths removed.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> old = folder / ".run.csv.0badc0de.tmp"
    >>> _ = old.write_text("half a log")
    >>> os.utime(old, (0, 0))  # last written in 1970: its writer is long gone
    >>> _ = (folder / ".run.csv.12345678.tmp").write_text("a write under way")
    >>> [p.name for p in remove_stale_temporaries(folder, ["run.csv"])]
    ['.run.csv.0badc0de.tmp']
    """
    if targets is None or callable(targets):
        wanted = targets
    else:
        names = set(targets)
        wanted = names.__contains__
    limit = time.time() - older_than
    removed: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMPORARY.fullmatch(entry.name)
        if match is None or (wanted is not None and not wanted(match["target"])):
            continue
        try:
            if not entry.is_file(follow_symlinks=False) or entry.stat().st_mtime > limit:
                continue
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(Path(entry.path))
    return removed


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
