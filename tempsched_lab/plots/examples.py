"""A fixed, deterministic scenario for the plots' examples, tests and gallery.

:func:`example_frame` runs the demo scenario (:func:`tempsched_lab.scenarios.schedule_demo`)
on a :class:`~tempsched_lab.VirtualClock` with a
:class:`~tempsched_lab.scenarios.SimulatedWorker`: one simulated worker thread
whose tasks take *virtual* time, so the log shows real queueing delay and run
durations, yet every number is the same on every machine. The scenario
exercises all eight decision cases, a periodic task, an Event, an error, a
cancel and the shutdown of pending work.

>>> frame = example_frame()
>>> sorted(set(frame["case"].dropna().astype(int)))
[1, 2, 3, 4, 5, 6, 7, 8]
>>> bool((frame.loc[frame["kind"] == "start", "queue_delay"] > 0).any())
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.scheduler import Scheduler
from ..scenarios import (
    SimulatedWorker,
    _fail_after,
    quiet_failures,
    run_simulation,
    schedule_demo,
    takes,
)
from ..time.clock import VirtualClock

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["example_frame", "example_scheduler"]


def example_scheduler(*, queue: str = "wheel", until: float = 4.0) -> Scheduler:
    """Run the example scenario and return its (shut down) scheduler.

    ``queue="wheel"`` (the default) uses a small wheel (16 slots of 0.1 s) so
    that due times off the tick grid are dispatched a little late, giving the
    lateness plot something to show besides queueing.
    """
    clock = VirtualClock()
    worker = SimulatedWorker()
    options = {"slots": 16, "tick": 0.1} if queue == "wheel" else {}
    s = Scheduler(clock, executor=worker, queue=queue, queue_options=options)
    job = takes(clock, 0.15)
    ids = schedule_demo(
        s,
        t0=0.0,
        work=job,
        slow=takes(clock, 0.6),
        fail=_fail_after(clock, 0.05),
        beat=takes(clock, 0.05),
    )
    s.schedule(job, at=6.0, label="never reached")  # dropped at shutdown
    with quiet_failures():  # the failing task fails on purpose
        run_simulation(clock, worker, 0.4)
        s.cancel(ids["cancelled"])
        s.schedule(job, at=3.2, label="late request")  # a decision taken while time runs
        run_simulation(clock, worker, until)
    s.shutdown()
    return s


def example_frame(*, queue: str = "wheel", until: float = 4.0) -> pd.DataFrame:
    """The example scenario's event log as a frame (77 rows, 12 tasks).

    >>> len(example_frame())
    77
    """
    return example_scheduler(queue=queue, until=until).log.to_frame()
