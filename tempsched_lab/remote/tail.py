"""``tempsched-lab tail URL_OR_DIR``: a served scheduler's (or a spill's) rows as they come.

One line per row, the sentence the dashboard's log panel shows (the lines of
:class:`~tempsched_lab.reading.narration.Narrator`, every row said), and one line per
change of the link (``-- reconnecting ...``, ``-- rows 120..180 (61 rows) are
missing: ...``, ``-- closed: ...``), like ``tail -f``. Lines are written from the
calling thread only; the feed's thread never prints.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .link import Link
from .mirror import RemoteScheduler

if TYPE_CHECKING:
    from ..log.eventlog import EventLog
    from ..reading.narration import Narrator

__all__ = ["open_source", "source_name", "tail", "tail_many"]

#: Seconds between two looks for new rows.
POLL = 0.1
#: Rows already there that ``tail`` shows before following (like ``tail -f``).
LAST = 10


def open_source(
    source: str, *, token: str | None = None, from_start: bool = True
) -> RemoteScheduler:
    """A mirror of ``source``: a served scheduler's URL, its spill root (whose runs record
    where they serve: followed across restarts), or a spill directory."""
    from ..log.files.lineage import SERVING

    if source.startswith(("http://", "https://")) or (Path(source) / SERVING).is_file():
        from .stream import attach

        return attach(source, token=token, from_start=from_start)
    if token is not None:
        raise ValueError("--token-file: a token is for a URL, not a directory")
    from .follow import attach_dir

    return attach_dir(Path(source), follow=True)


def tail(
    mirror: RemoteScheduler,
    say: Callable[[str], None],
    *,
    from_start: bool = False,
    gone: Callable[[], bool] = lambda: False,
    stop: threading.Event | None = None,
    poll: float = POLL,
) -> int:
    """Say ``mirror``'s rows (from its first with ``from_start``, else its last :data:`LAST`)
    and each change of its link, until it is closed, ``gone()`` (the reader left) or ``stop``.

    Returns the rows said.
    """
    from ..reading.narration import (
        Narrator,  # the teaching layer's lines (loaded by the CLI anyway)
    )

    stop = stop if stop is not None else threading.Event()
    scale = mirror.time_scale

    def narrator_of(log: EventLog) -> Narrator:
        return Narrator(log, say, rate=1e12, burst=2**62, time_scale=scale)

    if from_start:
        done, gaps_said = 0, 0  # logs of the mirror said whole, gaps said
        narrator = narrator_of(([*mirror.earlier, mirror.log])[0])
    else:
        done, gaps_said = len(mirror.earlier), len(mirror.gaps)
        narrator = narrator_of(mirror.log)
        narrator._next = max(mirror.log.next_seq - LAST, 0)
    said = 0
    link: Link | None = None
    while not gone():
        closed = mirror.closed  # read before the rows: the rows said include all before it
        logs = [*mirror.earlier, mirror.log]
        while done < len(logs) - 1:  # gaps since: the rows before each, then the gap
            said += narrator.poll()
            done += 1
            narrator = narrator_of(logs[done])
            gaps_said = _say_gaps(mirror, gaps_said, say)
        gaps_said = _say_gaps(mirror, gaps_said, say)
        said += narrator.poll()
        now = mirror.link
        if (now != link and now.state in ("reconnecting", "failed", "closed")) or (
            now.state == "live" and link is not None and link.state in ("reconnecting", "failed")
        ):
            say(f"-- {now.text(scale)}")
        link = now
        if closed or stop.wait(poll):
            break
    return said


def _say_gaps(mirror: RemoteScheduler, said: int, say: Callable[[str], None]) -> int:
    gaps = list(mirror.gaps)
    for gap in gaps[said:]:
        say(f"-- {gap.text()}: {gap.why}" if gap.why else f"-- {gap.text()}")
    return len(gaps)


# -- several sources at once (``tempsched-lab tail A B C``) -----------------------------------


def source_name(source: str) -> str:
    """The name a source goes by when none is given: a URL's ``host:port``, a directory's
    name (``runs/api`` -> ``api``).

    >>> source_name("http://127.0.0.1:8001/scheduler"), source_name("runs/batch/")
    ('127.0.0.1:8001', 'batch')
    """
    if source.startswith(("http://", "https://")):
        from urllib.parse import urlsplit

        return urlsplit(source).netloc or source
    return Path(source).name or source


def tail_many(
    mirrors: dict[str, RemoteScheduler],
    say: Callable[[str], None],
    *,
    from_start: bool = False,
    gone: Callable[[], bool] = lambda: False,
    poll: float = POLL,
) -> int:
    """:func:`tail` of several mirrors at once, each line prefixed with its service's name
    (``api: task #3 ...``, ``batch: -- closed ...``), until every one is closed or ``gone()``.

    Each mirror is followed by its own thread, which only queues its lines; they are
    said from the calling thread, in the order they were queued (a service's own lines
    keep their order). Returns the rows said.

    >>> sources = {"api": attach(url_a), "batch": attach_dir(Path("runs/b"))}  # doctest: +SKIP
    >>> tail_many(sources, print)  # doctest: +SKIP
    """
    import queue

    lines: queue.SimpleQueue[str] = queue.SimpleQueue()
    stop = threading.Event()
    said: dict[str, int] = {}

    def follow(name: str, mirror: RemoteScheduler) -> None:
        said[name] = tail(
            mirror,
            lambda text: lines.put(f"{name}: {text}"),
            from_start=from_start,
            stop=stop,
            poll=poll,
        )

    threads = [
        threading.Thread(target=follow, args=item, name=f"tempsched-tail-{item[0]}", daemon=True)
        for item in mirrors.items()
    ]
    for thread in threads:
        thread.start()

    def drain() -> None:
        while True:
            try:
                say(lines.get_nowait())
            except queue.Empty:
                return

    try:
        while any(thread.is_alive() for thread in threads):
            drain()
            if gone():
                break
            stop.wait(poll)
    finally:
        stop.set()
        for thread in threads:
            thread.join(5)
    if not gone():
        drain()
    return sum(said.values())
