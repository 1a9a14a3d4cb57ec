"""Every public figure on a fixed set of logs: the renders behind the docs gallery and the checks.

A *sample* is a log of a given size on a given clock: ``empty``, ``one task``,
``demo`` (the example scenario: all eight cases, a periodic task, an Event, an
error, a cancel, a drop) and ``large`` (tens of thousands of rows), each on a
``virtual`` and a ``real`` clock. The real-clock large sample is a virtual clock
started at an epoch-like time (what a real clock's values look like), so that it
takes a second to build rather than minutes to record.

:data:`FIGURES` draws each public plot from a sample. ``tests/test_figures.py``
renders every figure of every sample and checks it
(:func:`~tempsched_lab.plots._check.figure_problems`); ``docs/gallery.py`` puts
the same renders side by side.

>>> sample = SAMPLES["one task", "virtual"]
>>> fig = FIGURES["lateness"](sample.load())
>>> fig.axes[0].get_title(loc="left")
'Lateness: how long after its due time each run started'
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..core.decision import Case
from ..core.queues import QueueSnapshot, make_queue
from ..core.scheduler import PastTimeError, Scheduler
from ..reading.replay import replay_snapshot
from ..time.clock import VirtualClock
from ..time.scale import time_scale_of
from ._axes import root_figure
from .depth import plot_queue_depth
from .designs import picture_of, plot_queue, queue_designs
from .examples import example_frame
from .lateness import plot_lateness
from .summary import plot_summary
from .timeline import plot_timeline
from .tree import plot_decision_tree

__all__ = ["DESIGNS", "FIGURES", "SAMPLES", "Loaded", "Sample"]

#: The queue designs drawn, by figure name (every design of the queue registry, in its order).
DESIGNS = {picture_of(design).title: design for design in queue_designs()}
#: Where the large virtual sample's clock starts when it stands for a real clock.
EPOCH_START = 1_796_000_000.0


@dataclass(frozen=True)
class Loaded:
    """A sample's log frame and, per design, a snapshot of its queue at its fullest."""

    frame: pd.DataFrame
    snapshots: dict[str, QueueSnapshot]
    at: float | None  # the clock time of the snapshots (None: an empty queue)


@dataclass(frozen=True)
class Sample:
    """A log of some size (``name``) on some clock (``clock``), built on demand."""

    name: str
    clock: str
    build: Callable[[], pd.DataFrame]

    def load(self) -> Loaded:
        """Build (once) the frame and the queue snapshots."""
        return _load(self)


@cache
def _load(sample: Sample) -> Loaded:
    frame = sample.build()
    snapshots = {}
    sizes = frame["queue_size"].astype("float64").to_numpy()
    at = None
    for design in DESIGNS.values():
        if np.isfinite(sizes).any() and np.nanmax(sizes) > 0:
            row = int(np.nanargmax(sizes))
            at = float(frame["t"].iloc[row])
            upto = int(frame["seq"].iloc[row])
            snapshots[design] = replay_snapshot(frame, upto=upto, queue=design)
        else:
            snapshots[design] = make_queue(design).snapshot()
    return Loaded(frame, snapshots, at)


def _noop(*args: Any) -> None:
    """The samples' plain action."""


def _work(seconds: float, name: str | None = None) -> str | None:
    time.sleep(seconds)
    return name


def _fail() -> None:
    raise RuntimeError("this task fails on purpose")


def _virtual_empty() -> pd.DataFrame:
    return Scheduler(VirtualClock()).log.to_frame()


def _virtual_one() -> pd.DataFrame:
    clock = VirtualClock()
    s = Scheduler(clock)
    s.schedule(_noop, at=1.0, label="only task")
    clock.run_until_idle()
    s.shutdown()
    return s.log.to_frame()


def _large(start: float) -> pd.DataFrame:
    """10,000 one-shot tasks over 100 s, 3 periodic ones, duplicates and cancels (~43k rows)."""
    clock = VirtualClock(start=start)
    s = Scheduler(clock)
    rng = random.Random(7)
    ids = []
    for i in range(10_000):
        due = start + 1.0 + round(rng.random() * 100.0, 3)
        ids.append(s.schedule(_noop, at=due, args=(i,), label=f"job {i % 9}"))
        if i % 500 == 0:
            s.schedule(_noop, at=due, args=(i,), label=f"job {i % 9}")  # a duplicate
    for j in range(3):
        s.schedule(_noop, at=start + 0.5 + 0.1 * j, period=0.5, label=f"sensor {j}")
    for task_id in ids[::97]:
        s.cancel(task_id)
    clock.run_until(start + 101.5)
    s.shutdown()
    return s.log.to_frame()


def _real_empty() -> pd.DataFrame:
    s = Scheduler(name="catalog-real-empty")
    s.shutdown()
    return s.log.to_frame()


def _real_one() -> pd.DataFrame:
    s = Scheduler(name="catalog-real-one")
    s.schedule(_noop, delay=0.02, label="only task")
    s.wait_idle(timeout=5)
    s.shutdown()
    return s.log.to_frame()


def _real_demo() -> pd.DataFrame:
    """About 0.6 s on the real clock with a pool of two threads: queueing, an error, a cancel..."""
    s = Scheduler(executor="pool", max_workers=2, name="catalog-real-demo")
    t0 = s.clock.now()
    for i in range(4):
        s.schedule(_work, at=t0 + 0.1, args=(0.05, f"report {i}"), label="report")
    s.schedule(_work, at=t0 + 0.1, args=(0.05, "report 0"), label="report")  # a duplicate
    heartbeat = s.schedule(_work, at=t0 + 0.05, period=0.1, args=(0.005,), label="heartbeat")
    s.schedule(_fail, at=t0 + 0.3, label="failing task")
    s.schedule(threading.Event(), at=t0 + 0.25, label="ready flag")
    doomed = s.schedule(_work, at=t0 + 1.0, args=(0.01,), label="cancelled job")
    s.schedule(_work, at=t0 + 30.0, args=(0.01,), label="never reached")
    with contextlib.suppress(PastTimeError):
        s.schedule(_work, at=t0 - 1.0, args=(0.01,), label="too late")
    time.sleep(0.15)
    s.cancel(doomed)
    time.sleep(0.4)
    s.cancel(heartbeat)
    s.shutdown()  # drops "never reached", waits for the runs in flight
    return s.log.to_frame()


#: Every sample, by ``(name, clock)``.
SAMPLES: dict[tuple[str, str], Sample] = {
    (sample.name, sample.clock): sample
    for sample in (
        Sample("empty", "virtual", _virtual_empty),
        Sample("one task", "virtual", _virtual_one),
        Sample("demo", "virtual", example_frame),
        Sample("large", "virtual", lambda: _large(0.0)),
        Sample("empty", "real", _real_empty),
        Sample("one task", "real", _real_one),
        Sample("demo", "real", _real_demo),
        Sample("large", "real", lambda: _large(EPOCH_START)),
    )
}


def _last_case(frame: pd.DataFrame) -> Case | None:
    cases = frame["case"].dropna()
    return Case(int(cases.iloc[-1])) if len(cases) else None


def _queue(design: str) -> Callable[[Loaded], Figure]:
    def draw(loaded: Loaded) -> Figure:
        scale = time_scale_of(loaded.frame)
        snapshot = loaded.snapshots[design]
        if picture_of(design).takes_now and loaded.at is not None:
            # a replayed wheel's cursor never moved: draw its hand at the snapshot's time
            return root_figure(plot_queue(snapshot, time_scale=scale, now=loaded.at))
        return root_figure(plot_queue(snapshot, time_scale=scale))

    return draw


def _window(loaded: Loaded) -> Figure:
    t = loaded.frame["t"].astype("float64")
    span = float(t.max() - t.min()) if len(t) else 1.0
    return root_figure(plot_timeline(loaded.frame, window=max(span / 4, 0.1)))


#: Figure name -> how to draw it from a loaded sample.
FIGURES: dict[str, Callable[[Loaded], Figure]] = {
    "timeline": lambda loaded: root_figure(plot_timeline(loaded.frame)),
    "timeline, last quarter": _window,
    "timeline by thread": lambda loaded: root_figure(plot_timeline(loaded.frame, lanes="thread")),
    "decision tree": lambda loaded: root_figure(
        plot_decision_tree(_last_case(loaded.frame), counts=loaded.frame)
    ),
    "lateness": lambda loaded: root_figure(plot_lateness(loaded.frame)),
    "queue depth": lambda loaded: root_figure(plot_queue_depth(loaded.frame)),
    **{name: _queue(design) for name, design in DESIGNS.items()},
    "summary": lambda loaded: plot_summary(loaded.frame),
}
