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

__all__ = ["open_source", "tail"]

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
