"""Running one task: record its start, call it, record how it ended.

A :class:`Runner` is what every executor strategy calls (see
:mod:`tempsched_lab.executors`); it works outside the scheduler's lock and
reports to its :class:`RunHost` (the scheduler), whose two state transitions
``run_started`` / ``run_ended`` take the lock and write the log rows.

Whatever a task raises is recorded as that run's failure and never reaches the
thread running it, with one exception: a ``KeyboardInterrupt`` or
``SystemExit`` raised in the main thread (Ctrl-C during a long virtual-clock
run of inline tasks) is recorded, then re-raised to stop the run there.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, Future
from typing import Any, Protocol

from .task import Task

__all__ = ["Run", "RunHost", "Runner", "in_task"]

#: One run handed to an executor: the task, the due time of this run, when it was dispatched.
Run = tuple[Task, float, float]

#: ``in_task.token`` is the token of the scheduler whose task this thread is running (if any).
in_task = threading.local()


class RunHost(Protocol):
    """What a :class:`Runner` needs from the scheduler."""

    #: identifies the scheduler in ``in_task.token`` (picklable: it crosses to process pools)
    token: int
    #: where coroutine actions are awaited (``None``: ``asyncio.run`` in the running thread)
    loop: asyncio.AbstractEventLoop | None

    def run_started(self, task: Task, due: float, dispatched: float) -> float:
        """Record the start (under the lock); returns the start time."""
        ...

    def run_ended(
        self, task: Task, due: float, started: float | None, result: Any, exc: BaseException | None
    ) -> None:
        """Record the end (under the lock); re-arm or settle the task."""
        ...


class Runner:
    """Runs tasks for one scheduler, in whatever thread an executor gives it."""

    __slots__ = ("_host",)

    def __init__(self, host: RunHost) -> None:
        self._host = host

    def run(self, task: Task, due: float, dispatched: float) -> None:
        """Run ``task`` here: start row, the call, then a finish or error row."""
        host = self._host
        started = host.run_started(task, due, dispatched)
        outer = getattr(in_task, "token", None)
        in_task.token = host.token
        try:
            action: Callable[..., Any] = task.action  # type: ignore[assignment]  # never an Event
            kwargs = task.kwargs
            result = action(*task.args, **kwargs) if kwargs else action(*task.args)
            if result is not None and hasattr(result, "__await__"):
                self._await(task, due, started, result)  # the end is recorded when it is done
                return
        except BaseException as exc:
            host.run_ended(task, due, started, None, exc)
            if isinstance(exc, (KeyboardInterrupt, SystemExit)) and (
                threading.current_thread() is threading.main_thread()
            ):
                raise  # Ctrl-C or exit in the main thread stops the caller, after recording
        else:
            host.run_ended(task, due, started, result, None)
        finally:
            in_task.token = outer

    def _await(self, task: Task, due: float, started: float, awaitable: Any) -> None:
        """Await a coroutine action on the scheduler's loop (or here, with ``asyncio.run``)."""
        host = self._host
        loop = host.loop
        if loop is None or loop.is_closed():
            try:
                result = asyncio.run(_awaited(awaitable))
            except BaseException as exc:
                host.run_ended(task, due, started, None, exc)
            else:
                host.run_ended(task, due, started, result, None)
            return

        def done(fut: Any) -> None:
            try:
                exc = fut.exception() if not fut.cancelled() else asyncio.CancelledError()
                result = None if exc is not None else fut.result()
            except BaseException as inner:
                exc, result = inner, None
            host.run_ended(task, due, started, result, exc)

        if _loop_of_this_thread() is loop:  # a loop-driven clock runs us on the loop itself
            loop.create_task(_awaited(awaitable)).add_done_callback(done)
        else:
            asyncio.run_coroutine_threadsafe(_awaited(awaitable), loop).add_done_callback(done)

    def run_remote(self, executor: Executor, task: Task, due: float, dispatched: float) -> None:
        """Hand the action to an external executor; the start is the hand-over."""
        host = self._host
        started = host.run_started(task, due, dispatched)
        action: Callable[..., Any] = task.action  # type: ignore[assignment]  # never an Event
        future = executor.submit(call_marked, host.token, action, task.args, task.kwargs)

        def done(fut: Future[Any]) -> None:
            try:
                if fut.cancelled():
                    from concurrent.futures import CancelledError

                    exc: BaseException | None = CancelledError(
                        "the executor cancelled the run before it started"
                    )
                    result = None
                else:
                    exc = fut.exception()
                    result = None if exc is not None else fut.result()
            except BaseException as inner:  # an executor whose future misbehaves
                exc, result = inner, None
            host.run_ended(task, due, started, result, exc)

        future.add_done_callback(done)

    def not_started(self, task: Task, due: float, exc: BaseException) -> None:
        """The executor refused the run (shut down, no thread): recorded as a failed run."""
        self._host.run_ended(task, due, None, None, exc)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _loop_of_this_thread() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def call_marked(
    token: int, action: Callable[..., Any], args: Any, kwargs: Mapping[str, Any] | None
) -> Any:
    """Call ``action`` with ``in_task.token`` set, so a task can tell it runs for a scheduler.

    Module-level, so process pools can pickle it.
    """
    outer = getattr(in_task, "token", None)
    in_task.token = token
    try:
        return action(*args, **kwargs) if kwargs else action(*args)
    finally:
        in_task.token = outer
