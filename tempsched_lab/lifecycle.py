"""Waiting for a scheduler to go idle, and shutting it down.

The :class:`~tempsched_lab.Scheduler` inherits these methods (one job per module).
"""

from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING

from .runs import in_task
from .task import TaskState, TaskStatus

if TYPE_CHECKING:
    pass

__all__ = ["LifecycleMixin"]


class LifecycleMixin:
    """``wait_idle`` and ``shutdown`` for :class:`~tempsched_lab.Scheduler` (not used alone)."""

    # -- waiting and shutting down ------------------------------------------------------
    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is pending or running (real clock); False on timeout.

        Periodic tasks never leave the scheduler idle: cancel them first.
        """
        if self.clock.virtual:
            raise RuntimeError("wait_idle() needs a real clock; use clock.run_until_idle()")
        with self._lock:
            return self._settled.wait_for(
                lambda: not len(self.queue) and not self._running and not self._threads, timeout
            )

    def shutdown(
        self, wait: bool = True, timeout: float | None = None, cancel_pending: bool = True
    ) -> list[TaskStatus]:
        """Stop the scheduler; returns the tasks it dropped. Idempotent.

        Args:
            wait: wait for the worker and for runs in flight to finish.
            timeout: the longest to wait, in seconds (``None``: no limit).
            cancel_pending: drop pending tasks now (default); ``False`` lets
                pending one-shot tasks run at their times first (periodic tasks
                are not re-armed), then stops.

        Raises ``RuntimeError`` when called with ``wait=True`` from inside one of
        this scheduler's tasks, which would wait for itself.
        """
        if wait and getattr(in_task, "scheduler", None) is self:
            raise RuntimeError(
                "shutdown(wait=True) called from inside one of this scheduler's tasks would "
                "wait for that task itself (a deadlock); use shutdown(wait=False) there"
            )
        if wait and self._worker is threading.current_thread():  # pragma: no cover
            raise RuntimeError("shutdown(wait=True) from the scheduler's worker would deadlock")
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            if self._closed:  # already stopped: nothing to drop, but still honour wait
                if wait:
                    self._join(deadline, lock_held=True)
                return []
            if not cancel_pending and not self.clock.virtual:
                self._draining = True  # the worker closes the scheduler once drained
                self._cond.notify_all()
                if not wait:
                    return []
        if self._draining:
            self._wait_drained(deadline)
        dropped = self._close()
        if wait:
            self._join(deadline)
        elif self._owns_executor and self._executor is not None:
            self._executor.shutdown(wait=False)
        return dropped

    def _close(self) -> list[TaskStatus]:
        """Drop what is pending, mark closed and log it (once)."""
        with self._lock:
            if self._closed:
                return []
            dropped = self._drop_all()
            self._closed = True
            self._draining = False
            self._cond.notify_all()  # the worker exits
            self._settled.notify_all()
            if self._log is not None:
                self._log.shutdown(self.clock.now(), -1, "stopped", math.nan, None,
                                   self.queue.head_size(), len(self.queue),
                                   f"dropped {len(dropped)} task(s)")  # fmt: skip
        if self.clock.virtual:
            self.clock._detach(self)  # type: ignore[attr-defined]
        return dropped

    def _wait_drained(self, deadline: float | None) -> None:
        if self.clock.virtual:
            return  # a virtual clock drains only when stepped; what is left is dropped
        with self._lock:
            while len(self.queue) or self._running:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return
                self._settled.wait(remaining if remaining is not None else 1.0)

    def _drop_all(self) -> list[TaskStatus]:
        """Drop every pending task and stop periodic tasks in flight; the lock is held."""
        dropped: list[TaskStatus] = []
        log = self._log
        now = self.clock.now()
        pending = [task for _, point in self.queue.points() for task in point]
        for task in pending:
            self.queue.remove(task.id)
            self._states[task.id] = TaskState.DROPPED
            dropped.append(TaskStatus(task.id, TaskState.DROPPED, task.due, task.name,
                                      task.period, task.runs))  # fmt: skip
            if log is not None:
                log.shutdown(now, task.id, "dropped", task.due, task.label,
                             self.queue.head_size(), len(self.queue), None)  # fmt: skip
        for task in list(self._running.values()):
            if task.period is not None and not task.stop_requested:
                task.stop_requested = True
                self._states[task.id] = TaskState.DROPPED
                dropped.append(TaskStatus(task.id, TaskState.DROPPED, None, task.name,
                                          task.period, task.runs))  # fmt: skip
                if log is not None:
                    log.shutdown(
                        now,
                        task.id,
                        "dropped",
                        task.due,
                        task.label,
                        self.queue.head_size(),
                        len(self.queue),
                        "periodic task in flight: its run finishes, none follows",
                    )
        return dropped

    def _join(self, deadline: float | None, *, lock_held: bool = False) -> None:
        """Wait for the worker, the owned pool and every run in flight (up to ``deadline``)."""

        def remaining() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        if lock_held:
            self._settled.wait_for(lambda: not self._running and not self._threads, remaining())
            return
        worker = self._worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(remaining())
        if self._owns_executor and self._executor is not None:
            self._executor.shutdown(wait=deadline is None)
        with self._lock:
            self._settled.wait_for(lambda: not self._running and not self._threads, remaining())
