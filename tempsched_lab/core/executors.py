"""Where runs happen: one small strategy class per kind of executor, and the batch pool.

The scheduler hands each due batch to its :class:`Launcher` (``launch(runs)``,
outside its lock) and never looks at what kind it is:

* :class:`InlineLauncher`: in the thread that fired the batch (the worker, or the
  one stepping a virtual clock): deterministic, the default under a virtual clock;
* :class:`ThreadPerRunLauncher`: a new thread per run, as the reference does;
* :class:`PoolLauncher`: the bounded :class:`BatchThreadPool` below (the default
  under a real clock);
* :class:`ExecutorLauncher`: any ``concurrent.futures.Executor`` (process pools
  and cluster executors included).

:func:`make_launcher` turns the ``executor=`` argument into one of them.

The ``"pool"`` executor's :class:`BatchThreadPool` is fed a whole due group at
once. ``concurrent.futures.ThreadPoolExecutor`` creates a ``Future`` and a work
item per ``submit`` and wakes a thread each time: about 20 µs per task on a
2-core machine, so 1,000 tasks due at one instant took 21-25 ms just to hand over
(measured in ``benchmarks/``). The scheduler needs no futures (runs record
their own end), so this pool takes a due group in one call: one lock, one
``extend``, one wake-up.

Waking every thread for a burst of short runs is slower than one thread
draining it: each run takes the scheduler's lock twice (to number its start and
finish rows), and several threads contending for that lock and the GIL hand
both back and forth on every run (1,000 no-op runs: 18-27 ms with 2-6 threads,
4-7 ms with one, measured). So the pool wakes **one** thread per hand-over and
adds a thread only when the queue *stops draining*: a run that blocks for
longer than ``spill`` seconds (0.5 ms by default) while work waits brings the
next thread in, up to ``max_workers``.

>>> import threading
>>> pool = BatchThreadPool(max_workers=2)
>>> done = threading.Event()
>>> pool.submit_batch(lambda ev: ev.set(), [(done,)])
>>> done.wait(5)
True
>>> pool.shutdown()
"""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from .runs import Launcher, LauncherFactory

if TYPE_CHECKING:
    from .runs import Run, Runner

__all__ = [
    "BatchThreadPool",
    "ExecutorLauncher",
    "InlineLauncher",
    "Launcher",
    "LauncherFactory",
    "PoolLauncher",
    "ThreadPerRun",
    "ThreadPerRunLauncher",
    "make_launcher",
]


class InlineLauncher(Launcher):
    """Runs each task in the thread that fired its batch.

    A ``KeyboardInterrupt`` (or ``SystemExit``) raised in the main thread stops
    the batch there: the interrupted run is recorded as failed, the runs after it
    stay dispatched and start first at the next firing, and the interrupt reaches
    the caller (``clock.run_until`` or the like), so a long virtual run can be
    stopped with Ctrl-C and resumed.
    """

    kind = "inline"
    runs_in_caller = True

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._backlog: collections.deque[Run] = collections.deque()

    def launch(self, runs: Sequence[Run]) -> None:
        backlog = self._backlog
        backlog.extend(runs)
        run = self._runner.run
        while backlog:
            task, due, dispatched = backlog.popleft()
            run(task, due, dispatched)

    def pending_since(self) -> float | None:
        backlog = self._backlog
        return backlog[0][2] if backlog else None

    def busy(self) -> bool:
        return False

    def shutdown(self, wait: bool, timeout: float | None) -> None:
        return None


class ThreadPerRunLauncher(Launcher):
    """A new thread per run (the reference's model; unbounded).

    Daemon threads by default, so a program can exit with runs in flight (they
    are cut short); ``daemon=False`` lets every run finish first, as the
    reference does (see :class:`ThreadPerRun`).
    """

    kind = "thread"

    def __init__(self, runner: Runner, on_idle: Callable[[], None], *, daemon: bool = True) -> None:
        self._runner = runner
        self._on_idle = on_idle
        self.daemon = daemon
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()

    def launch(self, runs: Sequence[Run]) -> None:
        for task, due, dispatched in runs:
            thread = threading.Thread(target=self._run, args=(task, due, dispatched),
                                      name=f"tempsched-run-{task.id}",
                                      daemon=self.daemon)  # fmt: skip
            with self._lock:
                self._threads.add(thread)
            try:
                thread.start()
            except BaseException as exc:  # a failed thread start must not lose the run
                with self._lock:
                    self._threads.discard(thread)
                self._runner.not_started(task, due, exc)

    def _run(self, task: Any, due: float, dispatched: float) -> None:
        try:
            self._runner.run(task, due, dispatched)
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())
                idle = not self._threads
            if idle:
                self._on_idle()

    def pending_since(self) -> float | None:
        return None

    def busy(self) -> bool:
        with self._lock:
            return bool(self._threads)

    def shutdown(self, wait: bool, timeout: float | None) -> None:
        return None  # runs end by themselves; the scheduler waits for them through busy()


class PoolLauncher(Launcher):
    """The bounded :class:`BatchThreadPool`: a due batch is handed over in one call."""

    kind = "pool"

    def __init__(self, runner: Runner, max_workers: int | None) -> None:
        self._runner = runner
        self.pool = BatchThreadPool(max_workers)

    def launch(self, runs: Sequence[Run]) -> None:
        try:
            self.pool.submit_batch(self._runner.run, runs)
        except BaseException as exc:  # a closed pool: each run is recorded as not started
            for task, due, _ in runs:
                self._runner.not_started(task, due, exc)

    def pending_since(self) -> float | None:
        return None

    def busy(self) -> bool:
        return False

    def shutdown(self, wait: bool, timeout: float | None) -> None:
        self.pool.shutdown(wait=wait, timeout=timeout)


class ExecutorLauncher(Launcher):
    """Any ``concurrent.futures.Executor``: a thread pool runs our runner; others get the action.

    A ``ThreadPoolExecutor`` runs the whole run (start, action, end) in its
    thread. Any other executor (a process pool, a cluster's executor, a custom
    subclass) receives the action itself wrapped in a picklable marker, so the
    start is recorded at hand-over and the end when its future completes.
    """

    kind = "executor"

    def __init__(self, runner: Runner, executor: Executor) -> None:
        self._runner = runner
        self.executor = executor
        self._in_process = isinstance(executor, ThreadPoolExecutor)

    def launch(self, runs: Sequence[Run]) -> None:
        runner = self._runner
        for task, due, dispatched in runs:
            try:
                if self._in_process:
                    self.executor.submit(runner.run, task, due, dispatched)
                else:
                    runner.run_remote(self.executor, task, due, dispatched)
            except BaseException as exc:  # a shut-down executor: the run is recorded
                runner.not_started(task, due, exc)

    def pending_since(self) -> float | None:
        return None

    def busy(self) -> bool:
        return False

    def shutdown(self, wait: bool, timeout: float | None) -> None:
        return None  # the caller's executor: the caller shuts it down


class ThreadPerRun:
    """``executor=ThreadPerRun(daemon=False)``: a thread per run that the interpreter waits for.

    >>> from tempsched_lab import Scheduler
    >>> with Scheduler(executor=ThreadPerRun(daemon=False)) as s:
    ...     s.executor_kind
    'thread'
    """

    def __init__(self, *, daemon: bool = True) -> None:
        if daemon is not True and daemon is not False:
            raise TypeError(f"daemon={daemon!r}: expected True or False")
        self.daemon = daemon

    def make_launcher(self, runner: Runner, on_idle: Callable[[], None]) -> ThreadPerRunLauncher:
        """The launcher for one scheduler."""
        return ThreadPerRunLauncher(runner, on_idle, daemon=self.daemon)

    def __repr__(self) -> str:
        return f"ThreadPerRun(daemon={self.daemon})"


def make_launcher(
    executor: str | Executor | LauncherFactory | None,
    *,
    virtual: bool,
    runner: Runner,
    max_workers: int | None,
    on_idle: Callable[[], None],
) -> Launcher:
    """The launcher for ``Scheduler(executor=...)`` (``None``: inline if virtual, else pool).

    Besides the names and ``concurrent.futures`` executors, ``executor`` may be any
    object with ``make_launcher(runner, on_idle) -> Launcher`` (a launcher factory;
    a ``distributed.Client`` is wrapped in :class:`tempsched_lab.core.dask.DaskExecutor`).
    """
    if executor is None:
        executor = "inline" if virtual else "pool"
    if type(executor).__module__.split(".")[0] == "distributed":  # a dask Client
        from .dask import DaskExecutor

        executor = DaskExecutor(executor)
    if isinstance(executor, LauncherFactory):  # LoopExecutor, DaskExecutor, your own
        return executor.make_launcher(runner, on_idle)
    if isinstance(executor, Executor):
        return ExecutorLauncher(runner, executor)
    if max_workers is not None and (
        isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1
    ):
        raise ValueError(f"max_workers={max_workers!r}: expected a positive integer")
    if executor == "pool":
        return PoolLauncher(runner, max_workers)
    if executor == "thread":
        return ThreadPerRunLauncher(runner, on_idle)
    if executor == "inline":
        return InlineLauncher(runner)
    raise ValueError(
        f"executor={executor!r}: expected 'pool', 'thread', 'inline' or a "
        "concurrent.futures.Executor"
    )


class BatchThreadPool:
    """Up to ``max_workers`` daemon threads running ``fn(*args)`` items in FIFO order.

    Threads start lazily. A call that raises is swallowed (the scheduler's runs
    record their own errors), so a pool thread never dies.

    Args:
        max_workers: the most threads (default ``min(32, cpu_count + 4)``, as
            ``ThreadPoolExecutor``).
        name: the prefix of the threads' names.
        spill: how long queued work may wait while every awake thread is busy
            before another thread is woken or started (seconds).
    """

    _BUSY_RECHECK = 0.05  # seconds between checks while every thread is busy

    def __init__(
        self, max_workers: int | None = None, name: str = "tempsched-pool", spill: float = 0.0005
    ) -> None:
        if max_workers is None:
            max_workers = min(32, (os.cpu_count() or 1) + 4)
        if isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1:
            raise ValueError(f"max_workers={max_workers!r}: expected a positive integer")
        if isinstance(spill, bool) or not isinstance(spill, (int, float)) or not spill > 0:
            raise ValueError(f"spill={spill!r}: expected a positive number of seconds")
        self.max_workers = max_workers
        self.name = name
        self.spill = float(spill)
        self._work: collections.deque[tuple[Callable[..., Any], tuple[Any, ...]]] = (
            collections.deque()
        )
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._taken = 0  # items popped so far: the watcher's measure of progress
        self._closed = False
        self._watcher: threading.Thread | None = None
        self._watch = threading.Condition(threading.Lock())

    def submit_batch(self, fn: Callable[..., Any], items: Iterable[tuple[Any, ...]]) -> None:
        """Queue ``fn(*item)`` for every item, in order, with one wake-up of the pool."""
        with self._cond:
            if self._closed:
                raise RuntimeError("the pool is shut down")
            before = len(self._work)
            self._work.extend((fn, item) for item in items)
            if len(self._work) == before:
                return
            self._wake_one()
        with self._watch:
            if self._watcher is None:
                self._watcher = threading.Thread(
                    target=self._watch_progress, name=f"{self.name}-watcher", daemon=True
                )
                self._watcher.start()
            self._watch.notify()

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Queue one call."""
        self.submit_batch(fn, (args,))

    def _wake_one(self) -> bool:
        """Wake an idle thread or start a new one; the lock is held. False at the bound."""
        if self._idle:
            self._cond.notify(1)
            return True
        if len(self._threads) < self.max_workers:
            thread = threading.Thread(
                target=self._loop, name=f"{self.name}-{len(self._threads)}", daemon=True
            )
            thread.start()
            self._threads.append(thread)
            return True
        return False

    def _loop(self) -> None:
        work = self._work
        cond = self._cond
        # The condition's own lock, entered in C (`with cond` enters in Python), and
        # try/except rather than contextlib.suppress: ~5,900 fewer instructions per item
        # (~1,500 and ~4,400, counted with callgrind).
        lock = self._lock
        while True:
            with lock:
                while not work:
                    if self._closed:
                        return
                    self._idle += 1
                    try:
                        cond.wait()
                    finally:
                        self._idle -= 1
                fn, args = work.popleft()
                self._taken += 1
            try:  # noqa: SIM105 (contextlib.suppress is the dearer spelling, see above)
                fn(*args)
            except BaseException:  # runs record their own errors; a pool thread never dies
                pass

    def _watch_progress(self) -> None:
        """While work waits, add a thread each time nothing was taken for ``spill`` seconds."""
        while True:
            with self._watch:
                while not self._work and not self._closed:
                    self._watch.wait()
            if self._closed:
                return
            with self._cond:
                taken = self._taken
            with self._watch:
                self._watch.wait(self.spill)
            with self._cond:
                stalled = bool(self._work) and self._taken == taken
                at_bound = stalled and not self._wake_one()
            if at_bound:  # every thread is busy: a finishing one takes the next item itself
                with self._watch:
                    self._watch.wait(self._BUSY_RECHECK)
            if self._closed:
                return

    @property
    def threads(self) -> int:
        """Threads started so far."""
        return len(self._threads)

    def shutdown(self, wait: bool = True, timeout: float | None = None) -> None:
        """Stop taking work; threads finish what is queued, then exit. Idempotent."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            threads = list(self._threads)
        with self._watch:
            self._watch.notify_all()
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join(timeout)

    def __repr__(self) -> str:
        return (
            f"<BatchThreadPool {len(self._threads)}/{self.max_workers} threads, "
            f"{len(self._work)} queued{', closed' if self._closed else ''}>"
        )
