"""Watch a scheduler that runs elsewhere: a read-only mirror fed by its served stream or its spill.

* :func:`attach` (``tempsched_lab.attach``): follow a scheduler served with
  :mod:`tempsched_lab.serve` over HTTP (Server-Sent Events, resumed by ``seq``);
* :func:`attach_dir` (``tempsched_lab.attach_dir``): follow (or replay) a log's
  spill directory as its segments appear.

Both return a :class:`RemoteScheduler`, which a
:class:`~tempsched_lab.widgets.Dashboard` shows like a local scheduler, with its
:class:`Link` state in a banner. See ``docs/serving.md``.
"""

from __future__ import annotations

from .fleet import ClockOffset, Fleet
from .follow import attach_dir
from .link import Gap, Link, LinkState
from .mirror import MirrorClock, ReadOnlyMirrorError, RemoteScheduler
from .stream import AttachError, attach  # httpx is loaded by the first attach, not here

__all__ = [
    "AttachError",
    "ClockOffset",
    "Fleet",
    "Gap",
    "Link",
    "LinkState",
    "MirrorClock",
    "ReadOnlyMirrorError",
    "RemoteScheduler",
    "attach",
    "attach_dir",
]
