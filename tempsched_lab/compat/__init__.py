"""The reference API, ``TemporalScheduler``, over :class:`~tempsched_lab.Scheduler`.

A program written for the ``temporal-scheduler`` package runs after changing
only its import line::

    # from temporal_scheduler import TemporalScheduler
    from tempsched_lab.compat import TemporalScheduler

The constructor and the methods take the same arguments and return the same
types (task IDs 0, 1, 2, ...; ``True``/``False`` from ``cancel_task``; a dict
from ``status``), and raise the same errors. Arguments are kept as given
(``task_args`` may be any iterable; duplicates compare them as given), absolute
times are read on the ``time.time()`` scale at each call, and ``ts.timer``
offers the reference's queue introspection as a read-only view. Underneath is
our :class:`~tempsched_lab.Scheduler` (:attr:`TemporalScheduler.scheduler`):
every decision is recorded in its event log with origin ``"compat"``, tasks
never run early, periodic tasks keep a fixed rate. ``docs/compat.md`` lists
every deliberate difference and why.

>>> from tempsched_lab import VirtualClock
>>> clock = VirtualClock(start=100.0)
>>> ts = TemporalScheduler(clock=clock)
>>> ts.schedule_task(print, absolute_time=105.0, task_args=("hello",))
0
>>> ts.status(0)["scheduled_execution"]
105.0
>>> len(ts.timer.current_event_actions), len(ts.timer.events)
(1, 0)
>>> clock.run_until(110.0)
hello
110.0
>>> ts.shutdown()
"""

from __future__ import annotations

from .facade import TemporalScheduler
from .timer import TimerView

__all__ = ["TemporalScheduler", "TimerView"]
