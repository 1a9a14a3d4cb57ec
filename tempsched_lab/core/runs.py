"""Running one task: record its start, call it, record how it ended.

A :class:`Runner` is what every executor strategy calls (see
:mod:`tempsched_lab.core.executors`); it works outside the scheduler's lock and
reports to its :class:`RunHost` (the scheduler's
:class:`~tempsched_lab.core.ports.RunPort`), whose two state transitions
``run_started`` / ``run_ended`` take the lock and write the log rows.

Whatever a task raises is recorded as that run's failure and never reaches the
thread running it, with one exception: a ``KeyboardInterrupt`` or
``SystemExit`` raised in the main thread (Ctrl-C during a long virtual-clock
run of inline tasks) is recorded, then re-raised to stop the run there.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable, Coroutine, Mapping, Sequence
from concurrent.futures import Executor, Future
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .task import Task

_LOG = logging.getLogger(__name__)

if TYPE_CHECKING:
    import asyncio

    from ..time.clock import Clock

__all__ = ["Launcher", "LauncherFactory", "Run", "RunHost", "Runner", "in_task", "run_token"]

#: One run handed to an executor: the task, the due time of this run, when it was dispatched.
Run = tuple[Task, float, float]

#: ``in_task.token`` is the token of the scheduler whose task this thread is running (if any).
in_task = threading.local()

#: The token of the scheduler whose coroutine run the current asyncio task is (if any): the
#: coroutine-side twin of ``in_task`` (a thread runs many coroutines, a task has its own context).
run_token: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "tempsched_run_token", default=None
)


class RunHost(Protocol):
    """What a :class:`Runner` needs from the scheduler: its
    :class:`~tempsched_lab.core.ports.RunPort` (the scheduler's public names are its users')."""

    #: identifies the scheduler in ``in_task.token`` (picklable: it crosses to process pools)
    token: int
    #: where coroutine actions are awaited (``None``: ``asyncio.run`` in the running thread)
    loop: asyncio.AbstractEventLoop | None
    #: the scheduler's clock (its ``now()`` is the time of every row)
    clock: Clock

    def run_started(self, task: Task, due: float, dispatched: float) -> float:
        """Record the start (under the lock); returns the start time."""
        ...

    def run_ended(
        self,
        task: Task,
        due: float,
        started: float | None,
        result: Any,
        exc: BaseException | None,
        worker: str | None = None,
        worker_start: float | None = None,
    ) -> None:
        """Record the end (under the lock); re-arm or settle the task. ``worker`` and
        ``worker_start``: where and when a run handed to a cluster started (or ``None``)."""
        ...


class Runner:
    """Runs tasks for one scheduler, in whatever thread an executor gives it."""

    __slots__ = ("_awaiting", "_host")

    def __init__(self, host: RunHost) -> None:
        self._host = host
        #: coroutine runs in flight on an event loop: their future -> (task, due, start, loop,
        #: (the wrapper, the action's awaitable)); the two are closed if the loop closes first
        self._awaiting: dict[
            Any, tuple[Task, float, float, asyncio.AbstractEventLoop, tuple[Any, Any]]
        ] = {}

    @property
    def token(self) -> int:
        """The scheduler's token (``in_task.token`` inside its runs, in any process)."""
        return self._host.token

    def run(self, task: Task, due: float, dispatched: float, started: float | None = None) -> Any:
        """Run ``task`` here: start row, the call, then a finish or error row.

        ``started``: the start is recorded already (at that time), as the virtual-clock
        fast path does in the same lock hold as the dispatch.

        Returns ``None``, or for a coroutine action still in flight the future of its
        awaiting (an ``asyncio.Task`` on this thread's loop, else a
        ``concurrent.futures.Future``); its end is recorded by the first done callback,
        so a callback added to it afterwards sees the end recorded.
        """
        host = self._host
        if started is None:
            started = host.run_started(task, due, dispatched)
        outer = getattr(in_task, "token", None)
        in_task.token = host.token
        try:
            action: Callable[..., Any] = task.action  # type: ignore[assignment]  # never an Event
            kwargs = task.kwargs
            result = action(*task.args, **kwargs) if kwargs else action(*task.args)
            if result is not None and hasattr(result, "__await__"):
                return self._await(task, due, started, result)  # its end: when it is done
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
        return None

    def _await(self, task: Task, due: float, started: float, awaitable: Any) -> Any:
        """Await a coroutine action on the scheduler's loop (or here, with ``asyncio.run``)."""
        import asyncio  # only coroutine actions need it (importing it costs ~25 ms)

        host = self._host
        loop = host.loop
        token = host.token
        if loop is None or loop.is_closed():
            return self._await_here(task, due, started, awaitable)

        awaiting = self._awaiting

        def done(fut: Any) -> None:
            if awaiting.pop(fut, None) is None:
                return  # already ended as abandoned: its loop was closed under it
            try:
                exc = fut.exception() if not fut.cancelled() else asyncio.CancelledError()
                result = None if exc is not None else fut.result()
            except BaseException as inner:
                exc, result = inner, None
            host.run_ended(task, due, started, result, exc)

        wrapper = _awaited(awaitable, token)
        if _loop_of_this_thread() is loop:  # a loop-driven clock runs us on the loop itself
            in_flight: Any = loop.create_task(wrapper)
        else:
            try:
                in_flight = asyncio.run_coroutine_threadsafe(wrapper, loop)
            except RuntimeError:  # the loop was closed since the check above: run it here
                wrapper.close()  # never started: nothing to warn about
                return self._await_here(task, due, started, awaitable)
        # before its end can be reported
        awaiting[in_flight] = (task, due, started, loop, (wrapper, awaitable))
        in_flight.add_done_callback(done)
        return in_flight

    def _await_here(self, task: Task, due: float, started: float, awaitable: Any) -> None:
        """A coroutine action whose scheduler has no open loop: ``asyncio.run`` in this thread."""
        import asyncio

        host = self._host
        try:
            result = asyncio.run(_awaited(awaitable, host.token))
        except BaseException as exc:
            host.run_ended(task, due, started, None, exc)
        else:
            host.run_ended(task, due, started, result, None)

    def abandon_closed_loops(self) -> int:
        """End every coroutine run whose event loop was closed under it; returns how many.

        A loop closed with ``loop.close()`` while a coroutine awaits never resumes it
        and never calls its done callbacks: the run would stay RUNNING for good and a
        ``shutdown(wait=True)`` would wait for it forever. Such a run is recorded as
        failed with ``asyncio.CancelledError``, as ``asyncio.run`` does when it cancels
        what is left before closing its loop.
        """
        import asyncio

        ended = 0
        for fut, (task, due, started, loop, coroutines) in list(self._awaiting.items()):
            if loop.is_closed() and self._awaiting.pop(fut, None) is not None:
                # a closed loop never runs them: closed here, they finish their ``finally``
                # blocks if they had started, and none is left "never awaited"
                for coroutine in coroutines:
                    if isinstance(coroutine, Coroutine):  # a Future has nothing to close
                        try:
                            coroutine.close()
                        except Exception as exc:  # its own finally failed: still ended below
                            _LOG.debug("closing %r: %s", coroutine, exc)
                error = asyncio.CancelledError(
                    f"the event loop {loop!r} was closed while this run was awaiting on it"
                )
                self._host.run_ended(task, due, started, None, error)
                ended += 1
        return ended

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

    def handed_over(self, task: Task, due: float, dispatched: float) -> float:
        """Record the hand-over of a run to another process (its start row); returns its time.

        For launchers that run the action elsewhere and report its end themselves
        with :meth:`remote_ended` (see :mod:`tempsched_lab.core.dask`).
        """
        return self._host.run_started(task, due, dispatched)

    def wall_offset(self) -> float:
        """What a ``time.time()`` value adds to land on the scheduler's clock (a worker's stamps).

        Measured by the clock's :class:`~tempsched_lab.time.wall.WallScale`: the clock
        read bracketed by two wall reads, the tightest of several brackets kept, so a
        thread switch between the reads does not skew it (read around a lock hold, it
        once skewed a Dask run's mapped times by milliseconds).

        >>> from tempsched_lab import Scheduler
        >>> with Scheduler() as s:
        ...     abs(s._runner.wall_offset()) < 1.0  # a real clock reads like time.time()
        True
        """
        from ..time.wall import WallScale  # only remote runs need it

        return WallScale(self._host.clock).offset

    def remote_ended(
        self,
        task: Task,
        due: float,
        started: float | None,
        result: Any,
        exc: BaseException | None,
        *,
        worker: str | None = None,
        worker_start: float | None = None,
    ) -> None:
        """Record how a handed-over run ended, and where and when it started there.

        ``worker`` (e.g. a Dask worker's address) and ``worker_start`` (on the
        scheduler's clock) reach the log's ``worker`` and ``worker_start`` columns
        through :meth:`RunHost.run_ended`, which declares them.
        """
        if worker is None and worker_start is None:
            self._host.run_ended(task, due, started, result, exc)
        else:
            self._host.run_ended(task, due, started, result, exc, worker, worker_start)


async def _awaited(awaitable: Any, token: int) -> Any:
    run_token.set(token)  # this task's own context: seen by the coroutine, nowhere else
    return await awaitable


def _loop_of_this_thread() -> asyncio.AbstractEventLoop | None:
    import asyncio

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


class Launcher(Protocol):
    """Starts runs somewhere; the scheduler calls :meth:`launch` outside its lock.

    ``runs_in_caller`` and :meth:`abandon_if_closed` have defaults, which a launcher gets
    by naming this class as a base (``class MyLauncher(Launcher): ...``), as every
    built-in launcher does; the scheduler calls every member declared here, nothing else.
    """

    #: a short name for reprs and the docs: "inline", "thread", "pool", "executor"
    kind: str
    #: True when ``launch()`` runs each run to its end in the calling thread, in order,
    #: before it returns; the scheduler may then record a lone run's start with its
    #: dispatch on a virtual clock, where time cannot move in between.
    runs_in_caller: bool = False

    def launch(self, runs: Sequence[Run]) -> None:
        """Start every run of a due batch (each records its own start and end)."""
        ...

    def pending_since(self) -> float | None:
        """When the oldest run handed over but not started yet was dispatched (inline only)."""
        ...

    def busy(self) -> bool:
        """True while threads this launcher started are still alive."""
        ...

    def shutdown(self, wait: bool, timeout: float | None) -> None:
        """Stop; with ``wait``, wait for what it owns (never for a caller's executor)."""
        ...

    def abandon_if_closed(self) -> None:
        """Runs awaiting on an event loop that was closed can never end: record them as
        failed, so nobody waits for them forever (asked while the scheduler waits).
        Default: nothing can be abandoned."""
        return None


@runtime_checkable
class LauncherFactory(Protocol):
    """An executor that makes its own launcher: ``ThreadPerRun``, ``LoopExecutor``,
    ``DaskExecutor``, your own (what ``executor=`` takes besides names and executors)."""

    def make_launcher(self, runner: Runner, on_idle: Callable[[], None]) -> Launcher:
        """The launcher for one scheduler."""
        ...
