"""How due tasks run: dispatch, executors, periodic re-arms and the worker loop.

The :class:`~tempsched_lab.Scheduler` inherits these methods; they are kept
here so that each module has one job. Every method that touches shared state
says whether the scheduler's lock must be held.
"""

from __future__ import annotations

import math
import threading
import traceback
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from .schema import ORIGIN_CODE
from .task import Task, TaskState

if TYPE_CHECKING:
    pass

__all__ = ["RunsMixin", "in_task", "round_up"]

_WAIT_MAX = min(threading.TIMEOUT_MAX, 3600.0)  # re-check at least hourly
_RUNNING = int(TaskState.RUNNING)
_PERIODIC = ORIGIN_CODE["periodic"]

#: ``in_task.scheduler`` is the scheduler whose task this thread is running (if any).
in_task = threading.local()


class RunsMixin:
    """Dispatch and execution for :class:`~tempsched_lab.Scheduler` (not used alone)."""

    # -- dispatching ----------------------------------------------------------------
    def _next_fire_time(self) -> float | None:
        with self._lock:
            return self.queue.next_time()

    def _take_due(self, now: float) -> list[tuple[Task, float, float]]:
        """Pop every due group and record the dispatches; the lock is held."""
        groups = self.queue.pop_due(now)
        if not groups:
            return []
        log = self._log
        batch: list[tuple[Task, float, float]] = []
        running = self._running
        states = self._states
        queue = self.queue
        fire = self._fire
        if log is not None:  # what every dispatch row of this batch shares
            head, ready, size = queue.head_time(), queue.head_size(), len(queue)
        for group in groups:
            for task in group.tasks:
                due = task.due
                task.last_due = due
                running[task.id] = task
                states[task.id] = _RUNNING
                if log is not None:
                    log.dispatch(now, task.id, due, due if fire is None else fire(due),
                                 task.label, head, ready, size)  # fmt: skip
                if isinstance(task.action, threading.Event):
                    task.action.set()
                    task.runs += 1
                    if log is not None:
                        log.event_set(now, task.id, due, task.label)
                    self._finished(task, now, None)  # a periodic Event re-arms: the head moves
                    if log is not None:
                        head, ready, size = queue.head_time(), queue.head_size(), len(queue)
                else:
                    batch.append((task, due, now))
        return batch

    def _launch(self, batch: list[tuple[Task, float, float]]) -> None:
        """Hand each run to the executor; the lock is NOT held."""
        kind = self._executor_kind
        if kind == "batch":
            try:
                self._executor.submit_batch(self._run, batch)  # type: ignore[union-attr]
                return
            except BaseException:  # a closed pool: each run is recorded as failed below
                pass
        for task, due, dispatched in batch:
            try:
                if kind == "inline":
                    self._run(task, due, dispatched)
                elif kind in ("threads", "batch"):
                    self._executor.submit(self._run, task, due, dispatched)  # type: ignore[union-attr]
                elif kind == "thread":
                    th = threading.Thread(target=self._run_in_thread, args=(task, due, dispatched),
                                          name=f"tempsched-run-{task.id}", daemon=True)  # fmt: skip
                    with self._lock:
                        self._threads.add(th)
                    try:
                        th.start()
                    except BaseException:
                        with self._lock:
                            self._threads.discard(th)
                        raise
                else:
                    self._submit_remote(task, due, dispatched)
            except BaseException as exc:  # a failed thread start must not kill the worker
                self._run_failed(task, due, exc)

    def _run_in_thread(self, task: Task, due: float, dispatched: float) -> None:
        try:
            self._run(task, due, dispatched)
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())
                if not self._threads:
                    self._settled.notify_all()

    def _run(self, task: Task, due: float, dispatched: float) -> None:
        """Run one task in the current thread and record its start and its end."""
        clock = self.clock
        with self._lock:
            started = clock.now()
            task.runs += 1
            if self._log is not None:
                self._log.start(started, task.id, due, task.label, dispatched)
        outer = getattr(in_task, "scheduler", None)
        in_task.scheduler = self
        try:
            kwargs = task.kwargs
            result = task.action(*task.args, **kwargs) if kwargs else task.action(*task.args)
        except BaseException as exc:
            self._run_failed(task, due, exc, started)
        else:
            with self._lock:
                now = clock.now()
                if self._log is not None:
                    self._log.finish(now, task.id, due, task.label, now - started,
                                     type(result).__name__)  # fmt: skip
                self._finished(task, now, None)
        finally:
            in_task.scheduler = outer

    def _run_failed(self, task: Task, due: float, exc: BaseException,
                    started: float | None = None) -> None:  # fmt: skip
        with self._lock:
            now = self.clock.now()
            if self._log is not None:
                tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
                self._log.error(now, task.id, due, task.label,
                                math.nan if started is None else now - started,
                                f"{type(exc).__name__}: {exc}", tb)  # fmt: skip
            self._exceptions[task.id] = exc
            self._finished(task, now, exc)

    def _submit_remote(self, task: Task, due: float, dispatched: float) -> None:
        """Run on an external executor (process pool...): start = handed over."""
        with self._lock:
            started = self.clock.now()
            task.runs += 1
            if self._log is not None:
                self._log.start(started, task.id, due, task.label, dispatched)
        kwargs = task.kwargs or {}
        future = self._executor.submit(task.action, *task.args, **kwargs)  # type: ignore[union-attr]

        def done(fut: Future[Any]) -> None:
            exc = fut.exception()
            if exc is not None:
                self._run_failed(task, due, exc, started)
                return
            with self._lock:
                now = self.clock.now()
                if self._log is not None:
                    self._log.finish(now, task.id, due, task.label, now - started,
                                     type(fut.result()).__name__)  # fmt: skip
                self._finished(task, now, None)

        future.add_done_callback(done)

    def _finished(self, task: Task, now: float, exc: BaseException | None) -> None:
        """A run ended: re-arm a periodic task or settle its final state; the lock is held."""
        self._running.pop(task.id, None)
        periodic = task.period is not None
        if periodic and not (task.stop_requested or self._closed or self._draining):
            self._rearm(task, now)  # wakes the worker itself if the head moved earlier
            return
        if task.stop_requested and task.period is not None:
            state = TaskState.CANCELLED
        elif task.stop_requested and self._closed:
            state = TaskState.DROPPED
        else:
            state = TaskState.FAILED if exc is not None else TaskState.DONE
        if self._states[task.id] != TaskState.DROPPED:
            self._states[task.id] = state
        if not self._running:  # only idle/drain waiters care, and only about "none running"
            self._settled.notify_all()
            if self._draining:
                self._cond.notify_all()  # a draining worker closes the scheduler when done

    def _rearm(self, task: Task, now: float) -> None:
        """Schedule a periodic task's next run (same ID), as a decision of origin ``periodic``."""
        period = task.period
        assert period is not None
        fixed_delay, policy = self._options.get(task.id, (False, self.misfire))
        if fixed_delay:
            task.base, task.slot_index = now + period, 0
            due = task.base
        else:
            # Slot k is due at base + k * period, computed by one multiplication: adding the
            # period run after run would accumulate rounding (on an epoch-sized clock each
            # 1 ms step rounds by up to 0.1 us: a 1 kHz grid ran 72 ppm fast that way).
            base, k = task.base, task.slot_index + 1
            due = base + k * period
            if due < now:
                first_future = max(k + 1, math.ceil((now - base) / period))
                while base + first_future * period < now:  # float safety
                    first_future += 1
                late = first_future - k  # slots k .. first_future - 1 are already past
                missed = 0
                if policy == "skip":
                    missed, k = late, first_future
                elif policy == "run_once":
                    missed, k = late - 1, first_future - 1
                if missed and self._log is not None:
                    self._log.missed(now, task.id, due, task.label, period, missed,
                                     policy)  # fmt: skip
                due = base + k * period
            task.slot_index = k
        if self.resolution is not None:
            due = round_up(due, self.resolution)
        head_before = self.queue.head_time()
        # a re-arm is never rejected (catch-up runs may be due in the past) nor merged
        case, _ = self.queue.classify(due, now, reject_past=False, dedupe=False)
        task.due = due
        self._store(task, case, now, head_before, _PERIODIC)

    # -- the worker (real clock) --------------------------------------------------------
    def _work(self) -> None:
        cond = self._cond
        clock = self.clock
        queue = self.queue
        try:
            with cond:
                while True:
                    if self._closed:
                        break
                    if self._draining and not len(queue) and not self._running:
                        cond.release()
                        try:
                            self._close()
                        finally:
                            cond.acquire()
                        break
                    now = clock.now()
                    nxt = queue.next_time()
                    if nxt is None or nxt > now:
                        wait = None if nxt is None else min(nxt - now, _WAIT_MAX)
                        self._waiting = True
                        try:
                            notified = cond.wait(wait)
                        finally:
                            self._waiting = False
                        if self._log is not None and not self._closed:
                            self._log.wake(clock.now(), notified, wait, queue.head_time(),
                                           queue.head_size(), len(queue))  # fmt: skip
                        continue
                    batch = self._take_due(now)
                    if batch:
                        cond.release()
                        try:
                            self._launch(batch)
                        finally:
                            cond.acquire()
        except BaseException as exc:  # pragma: no cover - a bug; made loud, never silent
            self._worker_error = exc
            raise
        finally:
            with cond:
                cond.notify_all()
                self._settled.notify_all()

    def _fire_due(self, now: float) -> None:
        """Called by a virtual clock: dispatch everything due at ``now``."""
        with self._lock:
            if self._closed:
                return
            batch = self._take_due(now)
        self._launch(batch)


def round_up(due: float, resolution: float) -> float:
    """``due`` rounded up to a multiple of ``resolution`` (never earlier than ``due``)."""
    k = math.ceil(due / resolution)
    result = k * resolution
    while result < due:
        k += 1
        result = k * resolution
    return result
