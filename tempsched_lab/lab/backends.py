"""Where an experiment's runs go: this process, any ``concurrent.futures`` executor, Dask.

A run is a :class:`RunTask` (the workload or the function that builds it, the
parameters, the seed) and its result a :class:`RunOutcome` (the measures, the
lateness sample, the wall time, or what went wrong). :func:`execute` turns the
one into the other and is all a worker process needs: it is a module-level
function, and the task travels pickled with ``cloudpickle`` when it is installed
(it comes with Dask), so a workload function written in a notebook works on a
process pool too.

* ``executor=None``: runs one after the other in this process;
* ``workers=N``: a process pool of N workers made for the call, started with
  ``forkserver`` (``spawn`` where there is none): never ``fork``, which copies
  a process with threads running (the log's compactor, a live dashboard's
  refresher) in whatever state their locks are;
* any ``concurrent.futures.Executor``: yours (it stays open afterwards);
* a ``distributed.Client``: its ``get_executor(pure=False)`` (a run is an
  event, never a cached result).

Whatever the engine, each run computes the same rows (a run is a pure function
of its task), so the results are identical to a serial run's, wall times aside.

>>> from tempsched_lab.lab import bursts
>>> task = RunTask(0, bursts, {"size": 2, "every": 1.0, "horizon": 1.0}, {}, seed=5)
>>> outcome = execute(task)
>>> outcome.ok, outcome.metrics["runs"]
(True, 2)
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import pickle
import signal
import threading
import time
import traceback
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .config import run_config
from .mainguard import check_main_guard

if TYPE_CHECKING:
    import numpy as np

__all__ = ["RunOutcome", "RunTask", "execute", "outcomes", "process_pool", "stop_pool"]


@dataclass
class RunTask:
    """One run to make: how to get its workload, its parameters and seed, what to keep."""

    index: int
    #: a Workload, or a function called as ``workload(**workload_params, seed=seed)``
    workload: Any
    workload_params: dict[str, Any]
    config_params: dict[str, Any]
    seed: int
    count_steps: bool = False
    keep_samples: bool = True
    #: parameters as the results frame shows them (kept with the run's log)
    shown: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunOutcome:
    """What a run gave back: its measures, or the error that stopped it."""

    index: int
    metrics: dict[str, Any] | None = None
    #: the runs' lateness, sorted, thinned to at most 10,001 order statistics
    samples: np.ndarray | None = None
    #: how many runs the sample stands for
    sample_size: int = 0
    wall: float = 0.0
    #: "workload" (building the workload failed) or "run" (the simulation failed)
    stage: str | None = None
    error: str | None = None
    error_traceback: str | None = None
    #: the exception itself, in this process only (dropped when pickled)
    exception: BaseException | None = None

    @property
    def ok(self) -> bool:
        """True when the run finished."""
        return self.error is None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["exception"] = None  # may not pickle; its text travels in error/error_traceback
        return state


def build_workload(task: RunTask) -> Any:
    """The task's workload: itself, or what its function builds from the parameters and seed."""
    from .workload import Workload

    if isinstance(task.workload, Workload):
        return task.workload
    workload = task.workload(**task.workload_params, seed=task.seed)
    if not isinstance(workload, Workload):
        raise TypeError(
            f"the workload function returned {type(workload).__name__}, expected a Workload"
        )
    return workload


def execute(task: RunTask) -> RunOutcome:
    """Make one run: build its workload, simulate, measure. Errors are returned, not raised.

    ``KeyboardInterrupt`` and ``SystemExit`` are not caught: they stop the caller.
    """
    from .metrics import thinned
    from .simulate import simulate

    started = time.perf_counter()
    outcome = RunOutcome(task.index)
    stage = "workload"
    try:
        workload = build_workload(task)
        stage = "run"
        sim = simulate(
            workload,
            run_config(task.config_params),
            count_steps=task.count_steps,
            extra={**task.shown, "seed": task.seed},
        )
        outcome.metrics = sim.metrics()
        if task.keep_samples:
            lateness = sim.lateness()
            outcome.samples = thinned(lateness)
            outcome.sample_size = len(lateness)
    except Exception as exc:
        outcome.stage = stage
        outcome.error = f"{type(exc).__name__}: {exc}"
        outcome.error_traceback = "".join(traceback.format_exception(exc))
        outcome.exception = exc
    outcome.wall = time.perf_counter() - started
    return outcome


def _pickled(task: RunTask) -> bytes:
    try:
        import cloudpickle  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - comes with the dask extra
        return pickle.dumps(task)
    return bytes(cloudpickle.dumps(task))


def execute_pickled(payload: bytes) -> RunOutcome:
    """:func:`execute` of a pickled task (what a worker process runs)."""
    result: RunOutcome = execute(pickle.loads(payload))
    return result


#: What the fork server imports once, so that each worker it forks starts with them loaded
#: (a pool of 2 gave its first results in 1.5 s instead of 3.1 s, measured in bench_lab.py).
PRELOAD = ("numpy", "pandas", "tempsched_lab.lab.backends", "tempsched_lab.lab.simulate")


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A process pool of ``workers`` processes started with forkserver (spawn if none).

    The fork server (one per Python process, started on first use) is asked to
    preload :data:`PRELOAD`; a fork server already running keeps what it has.
    """
    if "forkserver" in multiprocessing.get_all_start_methods():
        server = multiprocessing.get_context("forkserver")
        server.set_forkserver_preload(list(PRELOAD))
        return ProcessPoolExecutor(max_workers=workers, mp_context=server)
    spawn = multiprocessing.get_context("spawn")  # pragma: no cover - Windows
    return ProcessPoolExecutor(max_workers=workers, mp_context=spawn)  # pragma: no cover


def stop_pool(pool: ProcessPoolExecutor, grace: float = 5.0) -> None:
    """Stop a pool at once: cancel what waits, terminate the workers still computing.

    ``shutdown(cancel_futures=True)`` alone cancels only the runs the pool has
    not handed to its call queue yet, and leaves the workers computing the
    runs they hold (a script interrupted with Ctrl-C then exits when they
    finish, a notebook's workers compute on in the background). The workers
    get SIGTERM, then SIGKILL after ``grace`` seconds; the pool's manager
    thread sees them end, fails what was in flight and closes its queues.
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(ValueError, ProcessLookupError):  # closed, or ended already
            process.terminate()
    deadline = time.monotonic() + grace
    for process in processes:
        with contextlib.suppress(ValueError):
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():  # pragma: no cover - a worker that ignores SIGTERM
                process.kill()
                process.join(grace)
    if manager is not None:
        manager.join(grace)


def _is_dask_client(executor: Any) -> bool:
    return type(executor).__module__.split(".")[0] == "distributed" and hasattr(
        executor, "get_executor"
    )


def _window(pool: Executor, workers: int | None) -> int | None:
    """How many runs to hand the engine at once (``None``: all of them).

    A process pool gets as many as it has workers, the next one when one
    finishes: a run handed over waits in the pool's call queue, where no
    ``cancel`` reaches it, so an interrupt would still start it. A Dask
    executor takes them all (a cancelled Dask future never starts).
    """
    if workers is not None:
        return workers
    size = getattr(pool, "_max_workers", None)  # concurrent.futures' own pools
    return size if isinstance(size, int) and size > 0 else None


def outcomes(
    tasks: Iterable[RunTask],
    executor: Any = None,
    workers: int | None = None,
    on_submit: Callable[[int], None] | None = None,
) -> Generator[RunOutcome, None, None]:
    """Run ``tasks`` where asked; yield each outcome as it arrives (serially: in order).

    A process pool holds at most one run per worker at a time (the next is
    submitted when one finishes), so stopping the iteration (an error raised
    by the consumer, a ``KeyboardInterrupt``, closing the generator) starts
    nothing more: the runs not started are cancelled, and a pool made here is
    stopped at once, its workers still computing terminated (:func:`stop_pool`).
    A pool or a cluster of the caller's is left open; what it computes at
    that moment runs to its end there.
    """
    tasks = list(tasks)
    if executor is not None and workers is not None:
        raise ValueError(
            f"workers={workers!r} with executor={executor!r}: give one of them "
            "(workers= makes a process pool of that size)"
        )
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
    ):
        raise ValueError(f"workers={workers!r}: expected a positive int")
    if executor is None and (workers is None or workers == 1):
        for task in tasks:
            yield execute(task)
        return
    owned = executor is None
    if owned:
        assert workers is not None
        check_main_guard(f"run(workers={workers})")
        with _interrupt_deferred():  # a Ctrl-C here would leak the pool: raised once it is made
            pool: Executor = process_pool(workers)
    elif _is_dask_client(executor):
        pool = executor.get_executor(pure=False)
    elif isinstance(executor, Executor):
        if isinstance(executor, ProcessPoolExecutor) and _spawns(executor):
            check_main_guard("run(executor)")
        pool = executor
    else:
        raise TypeError(
            f"executor={executor!r}: expected None, a concurrent.futures.Executor or a "
            "distributed.Client"
        )
    window = _window(pool, workers if owned else None)
    waiting = collections.deque(tasks)
    running: dict[Future[RunOutcome], RunTask] = {}
    finished = False

    def submit_more() -> None:
        while waiting and (window is None or len(running) < window):
            task = waiting.popleft()
            # a process pool starts a worker inside submit(): a Ctrl-C there left one that
            # the pool did not know yet, computing on after the script (issue 41, finding 15)
            with _interrupt_deferred():
                running[pool.submit(execute_pickled, _pickled(task))] = task
            if on_submit is not None:
                on_submit(task.index)

    try:
        submit_more()
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: running[f].index):
                task = running.pop(future)
                yield _outcome_of(future, task)
            submit_more()
        finished = True
    finally:
        if not finished:
            waiting.clear()
            for future in running:
                future.cancel()
            if owned:
                assert isinstance(pool, ProcessPoolExecutor)
                with _interrupt_deferred():  # a second Ctrl-C lets the stop end first
                    stop_pool(pool)
        elif owned:
            pool.shutdown(wait=True)


@contextlib.contextmanager
def _interrupt_deferred() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) back while the pool's own machinery runs; deliver it after.

    ``KeyboardInterrupt`` raised inside ``ProcessPoolExecutor.submit`` (which starts a
    worker through the fork server) or inside :func:`stop_pool` leaves the pool half-made:
    a worker started but not registered, which no stop reaches, computes the run after
    Ctrl-C. Python runs signal handlers in the main thread between bytecodes, so the
    handler is swapped for one that only notes the signal, and the signal is raised again,
    under the handler that was there (Python's, Jupyter's), once the block ends. Elsewhere
    than in the main thread (no SIGINT arrives there) it changes nothing.

    >>> steps = []
    >>> try:
    ...     with _interrupt_deferred():
    ...         signal.raise_signal(signal.SIGINT)
    ...         steps.append("the block ended")
    ... except KeyboardInterrupt:
    ...     steps.append("then Ctrl-C")
    >>> steps
    ['the block ended', 'then Ctrl-C']
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            signal.raise_signal(signal.SIGINT)


def _spawns(pool: ProcessPoolExecutor) -> bool:
    """Whether the pool's workers start by importing the main script (not ``fork``)."""
    context = getattr(pool, "_mp_context", None)
    method = context.get_start_method() if context is not None else None
    return method != "fork"


def _outcome_of(future: Future[RunOutcome], task: RunTask) -> RunOutcome:
    """The run's outcome, or an ``"engine"`` outcome when the engine lost it."""
    try:
        return future.result()
    except Exception as exc:  # the engine lost the run (a worker died, a lost key)
        return RunOutcome(
            task.index,
            stage="engine",
            error=f"{type(exc).__name__}: {exc}",
            error_traceback="".join(traceback.format_exception(exc)),
            exception=exc,
        )


def shown_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """Parameters as a results frame holds them: distributions as their one-line description."""
    from .distributions import Distribution

    return {k: v.describe() if isinstance(v, Distribution) else v for k, v in params.items()}
