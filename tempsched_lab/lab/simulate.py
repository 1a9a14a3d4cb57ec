"""One run: a workload played on a scheduler with a virtual clock, as a pure function of its inputs.

:func:`simulate` builds a :class:`~tempsched_lab.VirtualClock` (starting at the
workload's ``start``), a :class:`~tempsched_lab.Scheduler` configured by a
:class:`~tempsched_lab.lab.config.RunConfig`, and plays the workload's
requests through the public API: ``schedule`` when a request is submitted,
``cancel`` at its ``cancel_at``, and at the horizon a ``cancel`` of every
recurring task. The clock then runs until nothing is left.

**Runs take time.** A run "takes" its request's duration on the virtual clock:

* with the ``"inline"`` executor it calls ``VirtualClock.elapse`` (nothing else
  is dispatched meanwhile, as on a real clock where the worker thread is busy).
  The workload's clients do not stop while a run lasts: requests made or
  cancelled during it are made at their own times, from inside the run
  (``schedule`` and ``cancel`` may be called from a task), exactly as another
  thread would make them;
* with ``"pool"`` and ``"thread"``, the simulated threads of
  :class:`~tempsched_lab.lab.pool.VirtualPool` hold it.

Nothing reads the wall clock or a thread's timing, so the same workload and
configuration give the same event log, row for row (the ``wall`` and ``thread``
columns aside), in any process.

Failures on purpose (a workload's ``fails``) raise :class:`WorkloadFailure`;
they are counted in the log and are not reported on the ``tempsched_lab``
logger (a sweep would print thousands of tracebacks).

>>> from tempsched_lab.lab import poisson, exponential
>>> w = poisson(rate=500, horizon=1.0, seed=1, duration=exponential(0.001))
>>> sim = simulate(w, queue="heap")
>>> sim.metrics()["runs"] == len(w)
True
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.recorder import MetricsRecorder
from ..core.scheduler import Scheduler
from ..time.clock import VirtualClock
from .config import RunConfig, run_config
from .pool import VirtualPool
from .steps import StepCounter

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from .workload import Workload

__all__ = ["Simulation", "WorkloadFailure", "simulate"]

#: Effectively no limit on steps at one instant or in a run (a virtual run may be long).
_NO_LIMIT = 1 << 60

_SUBMIT, _CANCEL, _STOP = 0, 1, 2


class WorkloadFailure(RuntimeError):
    """A run that fails on purpose (its request has ``fails=True``)."""


class _QuietFailures(logging.Filter):
    """Drops the scheduler's failure reports made by a thread that is simulating."""

    active = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(self.active, "on", False)


_QUIET = _QuietFailures()
logging.getLogger("tempsched_lab").addFilter(_QUIET)


def _elapse_to(clock: VirtualClock, t: float) -> None:
    """Let virtual time pass until exactly ``t`` (>= now): no rounding drift between steps."""
    now = clock.now()
    if t <= now:
        return
    step = t - now
    while now + step < t:
        step = math.nextafter(step, math.inf)
    while now + step > t:
        step = math.nextafter(step, 0.0)
    clock.elapse(step)


class _Clients:
    """The workload's side: requests made, cancelled and stopped at their times, in order."""

    def __init__(self, scheduler: Scheduler, workload: Workload, actions: dict[str, Any]) -> None:
        import numpy as np

        frame = workload.frame
        start = workload.start
        n = len(frame)
        submit = start + frame["submit"].to_numpy()
        cancel = frame["cancel_at"].to_numpy()
        has_cancel = ~np.isnan(cancel)
        period = frame["period"].to_numpy()
        cron = frame["cron"].notna().to_numpy()
        self.recurring = np.flatnonzero(cron | ~np.isnan(period)).tolist()
        times = [submit, start + cancel[has_cancel]]
        kinds = [np.full(n, _SUBMIT), np.full(int(has_cancel.sum()), _CANCEL)]
        requests = [np.arange(n), np.flatnonzero(has_cancel)]
        if self.recurring:
            times.append(np.array([start + workload.horizon]))
            kinds.append(np.array([_STOP]))
            requests.append(np.array([-1]))
        t, k, r = (np.concatenate(parts) for parts in (times, kinds, requests))
        order = np.lexsort((r, k, t))
        self.times: list[float] = t[order].tolist()
        self.kinds: list[int] = k[order].tolist()
        self.requests: list[int] = r[order].tolist()
        self.cursor = 0
        self.next_time = self.times[0] if self.times else math.inf
        #: task ID per request (a duplicate gets the ID it matched; -1: not made yet)
        self.ids: list[int] = [-1] * n
        self._scheduler = scheduler
        self._actions = [actions[label] for label in frame["label"].tolist()]
        self._due = (start + frame["due"].to_numpy()).tolist()
        self._period = period.tolist()
        self._cron = frame["cron"].tolist()
        self._dup = frame["dup_of"].fillna(-1).to_numpy(dtype="int64").tolist()
        self._tz = workload.tz

    def fire_now(self) -> None:
        """Make every request event due at ``next_time`` (the clock stands there)."""
        times, kinds, requests = self.times, self.kinds, self.requests
        i, t = self.cursor, self.next_time
        s = self._scheduler
        ids = self.ids
        while i < len(times) and times[i] == t:
            kind, r = kinds[i], requests[i]
            self.cursor = i = i + 1
            if kind == _SUBMIT:
                ids[r] = self._submit(s, r)
            elif kind == _CANCEL:
                s.cancel(ids[r])
            else:
                for rec in self.recurring:
                    s.cancel(ids[rec])
        self.next_time = times[i] if i < len(times) else math.inf

    def _submit(self, s: Scheduler, r: int) -> int:
        action = self._actions[r]
        original = self._dup[r]
        if original >= 0:  # a client retrying: the very same request as the original
            return s.schedule(action, at=self._due[original], args=(original,))
        period = self._period[r]
        if period == period:  # not NaN: a periodic task
            return s.schedule(action, at=self._due[r], period=period, args=(r,))
        rule = self._cron[r]
        if isinstance(rule, str):
            return s.schedule(action, cron=rule, tz=self._tz, args=(r,))
        return s.schedule(action, at=self._due[r], args=(r,))


class Simulation:
    """A finished run: the scheduler (shut down, its log complete), the workload, the measures.

    Attributes:
        workload: what was played.
        config: the scheduler's parameters.
        scheduler: the scheduler, shut down; its ``log`` holds every step (when
            the run was made with ``log=True``), and a
            :class:`~tempsched_lab.widgets.Dashboard` shows it, history included.
        task_ids: the task ID of each request (a duplicate: the ID it matched).
        sim_wall: wall seconds the simulation took (building the frame aside).
        steps: the queue's steps (:mod:`~tempsched_lab.lab.steps`), or ``None``
            when not counted.
        recorder: the run's running totals when it was made with
            ``record="metrics"`` (then it has no log frame), else ``None``.
    """

    def __init__(
        self,
        workload: Workload,
        config: RunConfig,
        scheduler: Scheduler,
        task_ids: list[int],
        sim_wall: float,
        steps: int | None,
        extra: dict[str, Any] | None = None,
        recorder: MetricsRecorder | None = None,
    ) -> None:
        self.workload = workload
        self.config = config
        self.scheduler = scheduler
        self.task_ids = task_ids
        self.sim_wall = sim_wall
        self.steps = steps
        self.extra = dict(extra or {})
        self.recorder = recorder
        self._frame: pd.DataFrame | None = None

    @property
    def frame(self) -> pd.DataFrame:
        """The run's event log as a DataFrame (built once), with the run in ``attrs["lab_run"]``."""
        if self._frame is None:
            if self.recorder is not None:
                raise RuntimeError(
                    "this run was made with record='metrics': it kept its measures, not its "
                    "event log (Experiment.log regenerates it, or simulate with record='full')"
                )
            if not self.scheduler.log.enabled:
                raise RuntimeError("this run was made with log=False: it has no event log")
            frame = self.scheduler.log.to_frame()
            frame.attrs["lab_run"] = json.dumps(self.describe(), sort_keys=True, default=str)
            self._frame = frame
        return self._frame

    def describe(self) -> dict[str, Any]:
        """The run's parameters: the configuration, the workload's name and seed, extras."""
        c = self.config
        return {
            "workload": self.workload.name,
            "seed": self.workload.seed,
            "queue": c.queue,
            "executor": c.executor,
            "max_workers": c.max_workers,
            "misfire": c.misfire,
            "resolution": c.resolution,
            **self.extra,
        }

    def metrics(self) -> dict[str, Any]:
        """The run's measures (:func:`~tempsched_lab.lab.metrics.run_metrics`), from its log,
        or from its running totals (``record="metrics"``: the same values)."""
        from .metrics import recorded_metrics, run_metrics

        if self.recorder is not None:
            return recorded_metrics(self.recorder, steps=self.steps)
        return run_metrics(self.frame, steps=self.steps)

    def lateness(self) -> np.ndarray:
        """Every run's lateness (due -> start, seconds), in start order."""
        from .metrics import lateness_of

        if self.recorder is not None:
            import numpy as np

            return np.array(self.recorder.lateness, dtype="float64")
        return lateness_of(self.frame)

    def __repr__(self) -> str:
        return (
            f"<Simulation {self.workload.name} on {self.config.queue}/{self.config.executor}: "
            f"{len(self.scheduler.log):,} log rows, {self.sim_wall:.3f} s wall>"
        )


def _actions(
    clock: VirtualClock,
    workload: Workload,
    clients_ref: list[_Clients],
    inline: bool,
) -> dict[str, Callable[[int], str]]:
    """One action per label (its name is the label in the log); ``action(i)`` is request i's run."""
    frame = workload.frame
    durations = frame["duration"].tolist()
    fails = frame["fails"].tolist()
    elapse, now = clock.elapse, clock.now

    def make(label: str) -> Callable[[int], str]:
        if inline:

            def run(i: int) -> str:
                clients = clients_ref[0]
                end = now() + durations[i]
                if clients.next_time < end:  # clients act while this run lasts
                    while clients.next_time < end:
                        _elapse_to(clock, clients.next_time)
                        clients.fire_now()
                    _elapse_to(clock, end)
                else:
                    elapse(durations[i])
                if fails[i]:
                    raise WorkloadFailure(f"request {i} fails on purpose (the workload's failures)")
                return "done"

        else:  # a simulated thread holds the time; the action is called when the run ends

            def run(i: int) -> str:
                if fails[i]:
                    raise WorkloadFailure(f"request {i} fails on purpose (the workload's failures)")
                return "done"

        run.__qualname__ = run.__name__ = label
        return run

    return {label: make(label) for label in frame["label"].unique().tolist()}


def simulate(
    workload: Workload,
    config: RunConfig | None = None,
    *,
    log: bool = True,
    count_steps: bool = False,
    extra: dict[str, Any] | None = None,
    **params: Any,
) -> Simulation:
    """Play ``workload`` on a scheduler with a virtual clock; returns the finished run.

    Args:
        workload: the requests (:class:`~tempsched_lab.lab.workload.Workload`).
        config: the scheduler's parameters; or give them as keywords
            (``queue="heap", executor="pool", max_workers=2, misfire="skip",
            resolution=None``; see :mod:`~tempsched_lab.lab.config`).
        log: record the run (``False``: only to time the bare scheduler; there
            are no measures then); how is ``config.record``: ``"full"`` (the event
            log) or ``"metrics"`` (only the measures, as running totals, no rows
            built: see :mod:`~tempsched_lab.lab.config`).
        count_steps: count the queue's steps (:mod:`~tempsched_lab.lab.steps`;
            slows the run down about 3-4 times).
        extra: more facts to keep in :meth:`Simulation.describe` (an experiment
            passes the run's parameters).

    >>> from tempsched_lab.lab import bursts
    >>> sim = simulate(bursts(size=3, every=1.0, horizon=2.0, seed=0, duration=0.1))
    >>> sim.frame.query("kind == 'start'")["t"].round(3).tolist()
    [0.0, 0.1, 0.2, 1.0, 1.1, 1.2]
    """
    from .workload import Workload

    if not isinstance(workload, Workload):
        raise TypeError(f"workload={type(workload).__name__}: expected a Workload")
    if config is None:
        config = run_config(params)
    elif params:
        raise TypeError(f"give config= or keyword parameters, not both ({sorted(params)})")
    started = time.perf_counter()
    clock = VirtualClock(start=workload.start, max_steps_at_same_time=_NO_LIMIT)
    inline = config.executor == "inline"
    durations = workload.frame["duration"].tolist()
    pool = (
        None if inline else VirtualPool(clock, config.workers, lambda task: durations[task.args[0]])
    )
    totals: list[MetricsRecorder] = []

    def keep_totals(event_log: Any, queue: Any) -> MetricsRecorder:
        totals.append(MetricsRecorder(event_log, queue))
        return totals[0]

    scheduler = Scheduler(
        clock,
        executor="inline" if pool is None else pool,
        queue=config.design,
        queue_options=config.queue_options,
        misfire=config.misfire,
        resolution=config.resolution,
        log=log,
        recorder=keep_totals if log and config.record == "metrics" else None,
    )
    clients_ref: list[_Clients] = []
    actions = _actions(clock, workload, clients_ref, inline)
    clients = _Clients(scheduler, workload, actions)
    clients_ref.append(clients)
    counter = StepCounter() if count_steps else None
    quiet = _QuietFailures.active
    quiet.on = True
    try:
        if counter is not None:
            counter.__enter__()
        try:
            while clients.next_time < math.inf:
                t = clients.next_time
                if t > clock.now():
                    # runs on the way may act for the clients themselves; a long window is
                    # the workload's own (no step limit, as for run_until_idle below)
                    clock.run_until(t, max_steps=None)
                    continue
                clients.fire_now()
            clock.run_until_idle(max_steps=_NO_LIMIT)
        finally:
            if counter is not None:
                counter.__exit__(None, None, None)
            scheduler.shutdown(wait=False)
            if pool is not None:
                pool.close()
    finally:
        quiet.on = False
    sim_wall = time.perf_counter() - started
    steps = None if counter is None else counter.count
    recorder = totals[0] if totals else None
    return Simulation(workload, config, scheduler, clients.ids, sim_wall, steps, extra, recorder)
