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
recent ones meanwhile, and :func:`worker_runs` joins them with a log frame; :func:`lanes_by_worker`
turns a frame into the view ``plot_timeline(..., lanes="thread")`` draws with
one lane per worker.

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

from ..log.kinds import Kind
from .runs import Launcher, call_marked

if TYPE_CHECKING:
    import pandas as pd

    from .runs import Run, Runner
    from .task import Task

__all__ = ["DaskExecutor", "DaskLauncher", "Placement", "lanes_by_worker", "worker_runs"]

_ATTR = "_tempsched_ran"  # set on an exception raised on a worker: (address, start, end)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one run went on the cluster and how its journey went (times on the scheduler's clock).

    ``submitted`` is the start row's time (the hand-over); ``worker_start`` and
    ``worker_end`` are when the run started and ended on ``worker``, from that
    worker's wall clock (``None`` when the run never started there: cancelled,
    lost, refused).
    """

    token: int
    task_id: int
    due: float
    submitted: float
    worker: str | None
    worker_start: float | None
    worker_end: float | None
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
    worker, start and end attached (attribute ``_tempsched_ran``), so a failed
    run says where it failed too.
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
            setattr(exc, _ATTR, (where, start, time.time()))
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


class DaskLauncher(Launcher):
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
            offset = runner.wall_offset()
            key = _key(task)
            try:
                future = submit(run_on_worker, token, task.action, task.args, task.kwargs,
                                key=key, **options)  # fmt: skip
            except BaseException as exc:  # a closed client: the run is recorded as failed
                ex._done(Placement(token, task.id, due, submitted, None, None, None, "refused",
                                   key))  # fmt: skip
                runner.remote_ended(task, due, submitted, None, exc)
                continue
            ex._track(key, token, task.id, future)
            future.add_done_callback(partial(self._ended, task, due, submitted, offset, token, key))

    def _ended(
        self, task: Task, due: float, submitted: float, offset: float, token: int, key: str,
        future: Any,
    ) -> None:  # fmt: skip
        """In Dask's callback thread: map the future's end onto the scheduler's states."""
        result: Any = None
        exc: BaseException | None = None
        where: str | None = None
        start = end = None
        status = str(getattr(future, "status", "error"))
        try:
            if status == "finished":
                result, where, start, end = future.result()
            elif status == "error":
                exc = future.exception()
                where, start, end = getattr(exc, _ATTR, (None, None, None))
            else:  # cancelled or lost: the cluster dropped it
                exc = CancelledError(f"the Dask cluster dropped the run before it ended ({status})")
        except BaseException as inner:  # a result that cannot be fetched, a broken client
            exc, result = inner, None
        # the worker's wall clock onto the scheduler's (same machine: exact to the offset's
        # reading; across machines: as good as their clock synchronisation)
        worker_start = None if start is None else start + offset
        worker_end = None if end is None else end + offset
        outcome = "finished" if exc is None else "error" if status == "finished" else status
        self.executor._done(
            Placement(token, task.id, due, submitted, where, worker_start, worker_end, outcome, key)
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
    hand-over), ``worker``, ``worker_start``, ``worker_end`` (on the worker),
    ``ended`` (its finish or error row), ``outcome`` (``finish``/``error``),
    ``lateness`` (due -> started on the worker), ``hop`` (submitted -> started on
    the worker). ``worker`` and ``worker_start`` come from the log's columns when
    it has them, else from ``placements`` (e.g. :attr:`DaskExecutor.placements`),
    which alone know ``worker_end``.
    """
    import pandas as pd

    keys = ["task_id", "due"]
    kind = frame["kind"].astype(str)
    dispatched = frame.loc[kind == Kind.DISPATCH, [*keys, "t"]].rename(columns={"t": "dispatched"})
    starts = frame.loc[kind == Kind.START, [*keys, "label", "t"]].rename(columns={"t": "submitted"})
    has_where = "worker" in frame.columns and "worker_start" in frame.columns
    where_cols = ["worker", "worker_start"] if has_where else []
    ends = frame.loc[kind.isin([Kind.FINISH, Kind.ERROR]), [*keys, "t", "kind", *where_cols]]
    ends = ends.rename(columns={"t": "ended", "kind": "outcome"})
    ends["outcome"] = ends["outcome"].astype(str)
    placed = pd.DataFrame(
        [(p.task_id, p.due, p.worker, p.worker_start, p.worker_end) for p in placements or ()],
        columns=[*keys, "worker", "worker_start", "worker_end"],
    ).drop_duplicates(subset=keys, keep="last")
    if has_where:
        placed = placed[[*keys, "worker_end"]]
    ends = ends.merge(placed, on=keys, how="left")
    runs = starts.merge(dispatched, on=keys, how="left").merge(ends, on=keys, how="left")
    for column in ("worker_start", "worker_end"):
        runs[column] = runs[column].astype("float64")
    runs["lateness"] = runs["worker_start"] - runs["due"]
    runs["hop"] = runs["worker_start"] - runs["submitted"]
    columns = ["task_id", "label", "due", "dispatched", "submitted", "worker", "worker_start",
               "worker_end", "ended", "outcome", "lateness", "hop"]  # fmt: skip
    out = runs[columns].sort_values(["submitted", "task_id"], kind="stable")
    out = out.reset_index(drop=True)
    out.attrs = dict(frame.attrs)
    return out


def lanes_by_worker(
    frame: pd.DataFrame, placements: Iterable[Placement] | None = None
) -> pd.DataFrame:
    """A copy of ``frame`` with each run on its worker: for ``plot_timeline(lanes="thread")``.

    Every run that reached a worker has its ``start`` row moved to when it
    started there (``t``, ``lateness`` and ``queue_delay`` follow) with the
    worker's address as its ``thread``, and, where the placements know it, its
    ``finish``/``error`` row moved to when it ended there (``duration`` becomes
    the time on the worker). A thread-lane timeline then shows one lane per
    worker with each run where and when it really ran. Other rows are left as
    they are; ``frame`` itself is not changed.
    """
    import pandas as pd

    runs = worker_runs(frame, placements).dropna(subset=["worker", "worker_start"])
    out = frame.copy()
    if runs.empty:
        return out
    keys = ["task_id", "due"]
    kind = out["kind"].astype(str)

    def rows_of(mask: Any) -> Any:
        return out.loc[mask, keys].reset_index().merge(runs, on=keys, how="inner")

    starts = rows_of(kind == Kind.START)
    rows = starts["index"].to_numpy()
    shift = starts["worker_start"].to_numpy() - out.loc[rows, "t"].to_numpy()
    out.loc[rows, "t"] = starts["worker_start"].to_numpy()
    for column in ("lateness", "queue_delay"):
        if column in out.columns:
            out.loc[rows, column] = out.loc[rows, column].to_numpy() + shift
    if "thread" in out.columns:
        threads = out["thread"].astype("object")
        threads.loc[rows] = starts["worker"].astype(str).to_numpy()
        out["thread"] = threads.astype("category")
    ends = rows_of(kind.isin([Kind.FINISH, Kind.ERROR])).dropna(subset=["worker_end"])
    end_rows = ends["index"].to_numpy()
    out.loc[end_rows, "t"] = ends["worker_end"].to_numpy()
    if "duration" in out.columns:
        out.loc[end_rows, "duration"] = (ends["worker_end"] - ends["worker_start"]).to_numpy()
    if "time" in out.columns:
        moved = list(rows) + list(end_rows)
        out.loc[moved, "time"] = pd.to_datetime(out.loc[moved, "t"].to_numpy(), unit="s", utc=True)
    return out
