"""The live schedulers of this process: so that a re-run notebook cell does not leave two behind.

``Scheduler(name="...")`` replaces a live scheduler of the same name (shutting
the old one down with a warning); without a name, inside IPython, creating a
real-clock scheduler from the same line as a live one warns. In a child process made
by ``os.fork()`` the parent's schedulers become dead copies (see
:func:`_after_fork_in_child`).
"""

from __future__ import annotations

import os
import sys
import warnings
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .scheduler import Scheduler

__all__ = ["live_schedulers", "register"]

_LIVE: weakref.WeakValueDictionary[Any, Scheduler] = weakref.WeakValueDictionary()


def live_schedulers() -> list[Scheduler]:
    """Schedulers created in this process that are not shut down yet."""
    return [s for s in list(_LIVE.values()) if not s.closed]


def register(scheduler: Scheduler, name: str | None) -> tuple[str, int] | None:
    """Record a new scheduler; returns where it was created (in IPython, for the warning).

    ``stacklevel`` of the warnings points at the caller of ``Scheduler(...)``.
    """
    if name is not None:
        old = _LIVE.get(name)
        if old is not None and not old.closed:
            warnings.warn(
                f"a live scheduler named {name!r} exists ({old!r}); shutting it down so "
                "that a re-run cell does not leave two behind",
                stacklevel=4,
            )
            old.shutdown(wait=False)
        _LIVE[name] = scheduler
        return None
    _LIVE[id(scheduler)] = scheduler
    if not scheduler.clock.virtual and _in_ipython():
        site = _creation_site()
        twins = [s for s in live_schedulers() if s is not scheduler and s._site == site]
        if twins:
            warnings.warn(
                f"{len(twins)} live scheduler(s) created by this same line are still "
                "running (a re-run cell?). Call .shutdown() on the old one, or pass "
                "name=... so that re-creating it replaces it.",
                stacklevel=4,
            )
        return site
    return None


def _after_fork_in_child() -> None:
    """In a child of ``os.fork()``: every scheduler of the parent becomes a dead copy.

    Its worker thread and its runs stayed in the parent; a lock one of the parent's
    threads held at the fork would be held for good here. So each inherited scheduler
    gets fresh locks (reading it never deadlocks) and a worker error naming the fork
    (``schedule()`` raises instead of returning IDs that never run), never writes the
    parent's spill directory, and forgets the parent's subscriber threads. A new
    scheduler made in the child works as usual.
    """
    parent, child = _PID[0], os.getpid()
    _PID[0] = child
    for scheduler in list(_LIVE.values()):
        scheduler._inherited_by_fork(parent, child)


#: This process's ID as of the last fork seen (``[pid]``, updated in the child).
_PID = [os.getpid()]
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _creation_site() -> tuple[str, int]:
    """File and line of the first caller outside this package."""
    here = os.path.dirname(__file__)
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(here):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:  # pragma: no cover
        return ("?", 0)
    return (frame.f_code.co_filename, frame.f_lineno)


def _in_ipython() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        return ipython.get_ipython() is not None
    except Exception:
        return False
