"""Dask: the scheduler decides *when*, a Dask cluster does the running.

Pass a ``distributed.Client`` (or ``client.get_executor()``) as the executor::

    from distributed import Client, LocalCluster
    client = Client(LocalCluster(n_workers=2))
    s = Scheduler(executor=client)          # or executor=DaskExecutor(client, retries=1)

Each due run becomes one Dask task (``pure=False``: a run is an event, never a
cached value). The scheduler's log keeps the three steps of a run's journey
apart: the ``dispatch`` row (due -> dispatched: the scheduler's lateness), the
``start`` row written at the **hand-over** to the cluster (its ``queue_delay``),
and, reported back by the worker, **where** and **when** the run started there
(due -> submitted -> started on the worker). A run ends with a ``finish`` or
``error`` row like any other: an exception raised on the worker, a run the
cluster cancelled or lost, a worker that died under it (Dask retries the task
elsewhere, or reports ``KilledWorker`` once its ``allowed-failures`` are used
up) are all recorded as failed runs, never lost silently.

Where and when a run started on its worker are written to the log's ``worker``
and ``worker_start`` columns when the scheduler records them (see
``docs/async-and-clusters.md``); :attr:`DaskExecutor.placements` keeps the
recent ones meanwhile, and :func:`worker_runs` joins them with a log frame.

``distributed`` is an optional dependency (``pip install 'tempsched-lab[dask]'``),
imported when a ``DaskExecutor`` is made. The workers import this module to run
the small wrapper around each action: install ``tempsched-lab`` where they run,
as you do for your own code.
"""

from __future__ import annotations

import collections
import contextlib
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import CancelledError
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from .runs import call_marked

if TYPE_CHECKING:
    import pandas as pd

    from .runs import Run, Runner
    from .task import Task

__all__ = ["DaskExecutor", "DaskLauncher", "Placement", "worker_runs"]

_ATTR = "_tempsched_ran"  # set on an exception raised on a worker: (worker address, start)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one run went on the cluster and how its journey went (times on the scheduler's clock).

    ``submitted`` is the start row's time (the hand-over); ``worker_start`` is when
    the run started on ``worker``, from that worker's wall clock (``None`` when the
    run never started there: cancelled, lost, refused).
    """

    token: int
    task_id: int
    due: float
    submitted: float
    worker: str | None
    worker_start: float | None
    outcome: str
    key: str

    @property
    def hop(self) -> float | None:
        """Seconds from the hand-over to the start on the worker (the submit hop)."""
        return None if self.worker_start is None else self.worker_start - self.submitted


def run_on_worker(
    token: int, action: Callable[..., Any], args: Any, kwargs: Mapping[str, Any] | None
) -> tuple[Any, str | None, float, float]:
    """Run ``action`` on a Dask worker; returns ``(result, worker address, start, end)``.

    Times are the worker's ``time.time()``. An exception is re-raised with the
    worker and start attached (attribute ``_tempsched_ran``), so a failed run
    says where it failed too.
    """
    start = time.time()
    where: str | None
    try:
        from distributed import get_worker

        where = str(get_worker().address)
    except (ImportError, ValueError):  # not on a Dask worker (a test calling it directly)
        where = None
    try:
        result = call_marked(token, action, args, kwargs)
    except BaseException as exc:
        with contextlib.suppress(Exception):  # an exception class without a __dict__
            setattr(exc, _ATTR, (where, start))
        raise
    return result, where, start, time.time()


def _client_of(target: object) -> tuple[Any, dict[str, Any]]:
    """The ``distributed.Client`` behind ``target`` and the submit options it carries."""
    import distributed
    from distributed.cfexecutor import ClientExecutor

    if isinstance(target, distributed.Client):
        client, options = target, {}
    elif isinstance(target, ClientExecutor):  # client.get_executor(**options)
        client = target._client
        options = dict(getattr(target, "_kwargs", {}))
    else:
        raise TypeError(
            f"client={target!r}: expected a distributed.Client or client.get_executor()"
        )
    if client.asynchronous:
        raise ValueError(
            f"client={client!r}: an asynchronous Client; the scheduler submits from its own "
            "thread, so give it a synchronous one (Client(...) without asynchronous=True)"
        )
    return client, options


class DaskExecutor:
    """Runs a scheduler's tasks as Dask tasks (``Scheduler(executor=DaskExecutor(client))``).

    Args:
        client: a ``distributed.Client`` (synchronous), or ``client.get_executor(...)``
            (its options are kept).
        keep: how many recent :attr:`placements` to keep.
        **submit_options: passed to ``client.submit`` for every run (``workers=``,
            ``resources=``, ``retries=``, ``priority=``...); ``pure`` is always False.

    The client stays the caller's: shutting the scheduler down never closes it.
    Shut the scheduler down *before* closing the client, or runs still on the
    cluster end as cancelled.
    """

    kind = "dask"

    def __init__(self, client: Any, *, keep: int = 10_000, **submit_options: Any) -> None:
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
            raise ValueError(f"keep={keep!r}: expected an int >= 0")
        if "key" in submit_options:
            raise ValueError("key=...: each run gets its own key; it cannot be shared")
        self.client, options = _client_of(client)
        self.submit_options: dict[str, Any] = {**options, **submit_options, "pure": False}
        #: the most recent runs' placements, oldest first
        self.placements: collections.deque[Placement] = collections.deque(maxlen=keep)
        self._lock = threading.Lock()
        self._in_flight: dict[str, tuple[int, int, Any]] = {}

    def make_launcher(self, runner: Runner, on_idle: Callable[[], None]) -> DaskLauncher:
        """The launcher the scheduler hands its due batches to."""
        return DaskLauncher(self, runner)

    def in_flight(self, task_id: int | None = None) -> list[Any]:
        """The Dask futures of runs on the cluster now (of one task, if ``task_id`` is given)."""
        with self._lock:
            return [f for _, tid, f in self._in_flight.values() if task_id in (None, tid)]

    def _track(self, key: str, token: int, task_id: int, future: Any) -> None:
        with self._lock:
            self._in_flight[key] = (token, task_id, future)

    def _done(self, placement: Placement) -> None:
        with self._lock:
            self._in_flight.pop(placement.key, None)
            self.placements.append(placement)

    def __repr__(self) -> str:
        return f"DaskExecutor({self.client!r}, {len(self._in_flight)} in flight)"


class DaskLauncher:
    """Submits each run of a due batch to the cluster; the end comes back in a callback."""

    kind = "dask"

    def __init__(self, executor: DaskExecutor, runner: Runner) -> None:
        self.executor = executor
        self._runner = runner

    def launch(self, runs: Sequence[Run]) -> None:
        ex, runner = self.executor, self._runner
        submit, options = ex.client.submit, ex.submit_options
        token = runner.token
        for task, due, dispatched in runs:
            submitted = runner.handed_over(task, due, dispatched)
            wall = time.time()
            key = _key(task)
            try:
                future = submit(run_on_worker, token, task.action, task.args, task.kwargs,
                                key=key, **options)  # fmt: skip
            except BaseException as exc:  # a closed client: the run is recorded as failed
                ex._done(Placement(token, task.id, due, submitted, None, None, "refused", key))
                runner.remote_ended(task, due, submitted, None, exc)
                continue
            ex._track(key, token, task.id, future)
            future.add_done_callback(partial(self._ended, task, due, submitted, wall, token, key))

    def _ended(
        self, task: Task, due: float, submitted: float, wall: float, token: int, key: str,
        future: Any,
    ) -> None:  # fmt: skip
        """In Dask's callback thread: map the future's end onto the scheduler's states."""
        result: Any = None
        exc: BaseException | None = None
        where: str | None = None
        start: float | None = None
        status = str(getattr(future, "status", "error"))
        try:
            if status == "finished":
                result, where, start, _ = future.result()
            elif status == "error":
                exc = future.exception()
                where, start = getattr(exc, _ATTR, (None, None))
            else:  # cancelled or lost: the cluster dropped it
                exc = CancelledError(f"the Dask cluster dropped the run before it ended ({status})")
        except BaseException as inner:  # a result that cannot be fetched, a broken client
            exc, result = inner, None
        worker_start = None if start is None else submitted + (start - wall)
        outcome = "finished" if exc is None else "error" if status == "finished" else status
        self.executor._done(
            Placement(token, task.id, due, submitted, where, worker_start, outcome, key)
        )
        self._runner.remote_ended(
            task, due, submitted, result, exc, worker=where, worker_start=worker_start
        )

    def pending_since(self) -> float | None:
        return None

    def busy(self) -> bool:
        return False  # runs on the cluster are the scheduler's running tasks

    def shutdown(self, wait: bool, timeout: float | None) -> None:
        return None  # the client is the caller's: it stays usable


_UNSAFE = re.compile(r"[^0-9A-Za-z_.]+")


def _key(task: Task) -> str:
    """A unique Dask key whose prefix (what Dask's dashboard groups by) is the task's label."""
    name = _UNSAFE.sub("_", task.name)[:60] or "run"
    return f"{name}-t{task.id}-{uuid.uuid4().hex}"


def worker_runs(frame: pd.DataFrame, placements: Iterable[Placement] | None = None) -> pd.DataFrame:
    """One row per run handed to a cluster: its journey from due to the worker, and where.

    Columns: ``task_id``, ``label``, ``due``, ``dispatched``, ``submitted`` (the
    hand-over), ``worker``, ``worker_start``, ``ended`` (its finish or error
    row), ``outcome`` (``finish``/``error``), ``lateness`` (due -> started on the
    worker), ``hop`` (submitted -> started on the worker). ``worker`` and
    ``worker_start`` come from the log's columns when it has them, else from
    ``placements`` (e.g. :attr:`DaskExecutor.placements`).
    """
    import pandas as pd

    keys = ["task_id", "due"]
    kind = frame["kind"].astype(str)
    dispatched = frame.loc[kind == "dispatch", [*keys, "t"]].rename(columns={"t": "dispatched"})
    starts = frame.loc[kind == "start", [*keys, "label", "t"]].rename(columns={"t": "submitted"})
    end_cols = [*keys, "t", "kind"]
    has_where = "worker" in frame.columns and "worker_start" in frame.columns
    ends = frame.loc[kind.isin(["finish", "error"]), end_cols + (["worker", "worker_start"]
                                                                 if has_where else [])]  # fmt: skip
    ends = ends.rename(columns={"t": "ended", "kind": "outcome"})
    ends["outcome"] = ends["outcome"].astype(str)
    if not has_where:
        where = pd.DataFrame(
            [(p.task_id, p.due, p.worker, p.worker_start) for p in placements or ()],
            columns=[*keys, "worker", "worker_start"],
        )
        ends = ends.merge(where, on=keys, how="left")
    runs = starts.merge(dispatched, on=keys, how="left").merge(ends, on=keys, how="left")
    runs["worker_start"] = runs["worker_start"].astype("float64")
    runs["lateness"] = runs["worker_start"] - runs["due"]
    runs["hop"] = runs["worker_start"] - runs["submitted"]
    columns = ["task_id", "label", "due", "dispatched", "submitted", "worker", "worker_start",
               "ended", "outcome", "lateness", "hop"]  # fmt: skip
    out = runs[columns].sort_values(["submitted", "task_id"], kind="stable")
    out = out.reset_index(drop=True)
    out.attrs = dict(frame.attrs)
    return out
