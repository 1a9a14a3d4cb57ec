"""A Dask cluster as the executor: runs on worker processes, their ends back in the log.

One ``LocalCluster`` (2 worker processes, 1 thread each, loopback only, no
dashboard) is started for this module and torn down after it. Tests that kill a
worker come last: the nanny restarts it, and the cluster is whole again after.
"""

from __future__ import annotations

import os
import signal
import time

import pandas as pd
import pytest

from tempsched_lab import CancelResult, Scheduler, TaskState, audit

distributed = pytest.importorskip("distributed")

from tempsched_lab.core.dask import (  # noqa: E402
    DaskExecutor,
    lanes_by_worker,
    run_on_worker,
    worker_runs,
)

pytestmark = pytest.mark.slow


# -- what runs on the workers (module level: the workers import it by reference) -----------


def work(i):
    time.sleep(0.005)
    return i


def fail():
    raise ValueError("failed on the worker")


def announce_and_wait(queue_name, event_name):
    """Say where this run started (a cluster-wide queue), then wait for the go."""
    from distributed import Event, Queue, get_worker

    Queue(queue_name).put(get_worker().address)
    Event(event_name).wait(60)
    return "released"


# -- the cluster -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2,
        processes=True,
        threads_per_worker=1,
        host="127.0.0.1",
        dashboard_address=":0",
        worker_dashboard_address=":0",
    ) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=60)
        yield client


def workers(client):
    return set(client.scheduler_info()["workers"])


def named(prefix):
    return f"{prefix}-{time.monotonic_ns()}"


def started_on(client, queue_name, n, timeout=30):
    queue = distributed.Queue(queue_name, client=client)
    return [queue.get(timeout=timeout) for _ in range(n)]


def kill_worker(cluster, address):
    for nanny in cluster.workers.values():
        if nanny.worker_address == address:
            os.kill(nanny.process.process.pid, signal.SIGKILL)
            return
    raise AssertionError(f"no worker at {address}")


# -- tests -----------------------------------------------------------------------------------


def test_two_hundred_runs_spread_over_the_workers_and_come_back(client):
    ex = DaskExecutor(client)
    with Scheduler(executor=ex) as s:
        assert s.executor_kind == "dask"
        base = s.clock.now() + 0.2
        ids = [s.schedule(work, at=base + 0.003 * i, args=(i,)) for i in range(200)]
        assert s.wait_idle(60)
    assert all(s.status(i).state is TaskState.DONE for i in ids)
    frame = s.log.to_frame()
    assert (frame["kind"] == "finish").sum() == 200
    assert set(frame.loc[frame["kind"] == "finish", "result"]) == {"int"}
    runs = worker_runs(frame, ex.placements)
    assert len(runs) == 200 and (runs["outcome"] == "finish").all()
    assert set(runs["worker"]) == workers(client)  # both workers ran some
    # due <= dispatched <= submitted <= started on the worker <= ended
    assert (runs["dispatched"] >= runs["due"]).all()
    assert (runs["submitted"] >= runs["dispatched"]).all()
    assert (runs["hop"] >= 0).all() and (runs["lateness"] >= 0).all()
    assert (runs["worker_end"] >= runs["worker_start"]).all()
    assert (runs["ended"] >= runs["worker_end"]).all()  # the scheduler hears of it afterwards
    for _, on_one in runs.sort_values("worker_start").groupby("worker"):  # one thread each:
        gaps = on_one["worker_start"].to_numpy()[1:] - on_one["worker_end"].to_numpy()[:-1]
        assert (gaps >= 0).all()  # its runs never overlap
    assert audit(frame).ok, audit(frame)
    lanes = lanes_by_worker(frame, ex.placements)
    starts = lanes[lanes["kind"] == "start"].drop(columns=["worker", "worker_start"])
    moved = starts.merge(runs, on=["task_id", "due"])
    assert (moved["thread"].astype(str) == moved["worker"]).all()
    assert (moved["t"] == moved["worker_start"]).all()
    assert frame.loc[frame["kind"] == "start", "thread"].str.startswith("tempsched").all()
    if "worker" in frame.columns:  # once the log carries it, it agrees with the placements
        finish = frame[frame["kind"] == "finish"]
        assert set(finish["worker"]) == workers(client)


def test_the_executor_of_a_client_and_the_client_itself_are_accepted(client):
    for executor in (client, client.get_executor(retries=1)):
        out = []
        with Scheduler(executor=executor) as s:
            tid = s.schedule(work, delay=0.01, args=(7,))
            s.schedule(out.append, delay=0.02, args=("ran on a worker",))  # a bound method
            assert s.wait_idle(30)
        assert s.executor_kind == "dask" and s.status(tid).state is TaskState.DONE
        assert out == []  # it ran in a worker process: this list never saw it


def test_periodic_runs_keep_their_id_and_grid_on_the_cluster(client):
    ex = DaskExecutor(client)
    with Scheduler(executor=ex) as s:
        tid = s.schedule(work, period=0.05, args=(1,))
        deadline = time.monotonic() + 30
        while s.status(tid).runs < 6 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert s.cancel(tid) in (CancelResult.CANCELLED, CancelResult.RUNNING)
        assert s.wait_idle(30)
    runs = worker_runs(s.log.to_frame(), ex.placements)
    assert len(runs) >= 6 and set(runs["task_id"]) == {tid}
    steps = (runs["due"].diff().dropna() / 0.05).round()
    assert (steps >= 1).all()  # fixed rate: due times on the grid base + k * period
    assert runs["worker"].notna().all() and (runs["lateness"] >= 0).all()


def test_a_failure_on_a_worker_is_a_failed_run_that_says_where(client):
    ex = DaskExecutor(client)
    with Scheduler(executor=ex) as s:
        tid = s.schedule(fail, delay=0.01)
        assert s.wait_idle(30)
    assert s.status(tid).state is TaskState.FAILED
    assert isinstance(s.exception(tid), ValueError)
    frame = s.log.to_frame()
    error = frame[frame["kind"] == "error"].iloc[0]
    assert "ValueError: failed on the worker" in error["error"]
    assert 'raise ValueError("failed on the worker")' in error["detail"]  # the worker's traceback
    placed = ex.placements[-1]
    assert placed.task_id == tid and placed.worker in workers(client)
    assert placed.outcome == "error" and placed.hop is not None and placed.hop >= 0


def test_cancel_while_queued_on_the_cluster(client):
    """Both workers busy: a periodic and a one-shot run wait on the cluster, then are cancelled."""
    ex = DaskExecutor(client)
    queue, go = named("started"), named("go")
    with Scheduler(executor=ex) as s:
        for _ in range(2):
            s.schedule(announce_and_wait, delay=0.001, args=(queue, go))
        assert len(set(started_on(client, queue, 2))) == 2  # each worker holds one
        periodic = s.schedule(work, delay=0.001, period=0.05, args=(2,))
        oneshot = s.schedule(work, delay=0.001, args=(3,))
        deadline = time.monotonic() + 10
        while len(ex.in_flight()) < 4 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert s.status(periodic).state is TaskState.RUNNING  # dispatched: on the cluster
        # the scheduler's cancel: the run in flight goes on, the periodic task is not re-armed
        assert s.cancel(periodic) is CancelResult.RUNNING
        # the cluster's cancel of a queued run: recorded as a failed run, never lost
        client.cancel(ex.in_flight(oneshot))
        distributed.Event(go, client=client).set()
        assert s.wait_idle(30)
    assert s.status(periodic).state is TaskState.CANCELLED
    assert s.status(oneshot).state is TaskState.FAILED
    assert "dropped the run" in str(s.exception(oneshot))
    frame = s.log.to_frame()
    assert (frame.loc[frame["task_id"] == periodic, "kind"] == "start").sum() == 1
    runs = worker_runs(frame, ex.placements).set_index("task_id")
    assert runs.loc[oneshot, "outcome"] == "error"
    assert pd.isna(runs.loc[oneshot, "worker_start"])  # it never started on a worker
    assert runs.loc[periodic, "outcome"] == "finish"


def test_shutdown_leaves_the_client_usable(client):
    s = Scheduler(executor=client)
    s.schedule(work, delay=0.01, args=(1,))
    s.schedule(work, delay=60, args=(2,))
    time.sleep(0.1)
    dropped = s.shutdown(wait=True, timeout=30)
    assert len(dropped) == 1 and s.closed
    assert client.status == "running"
    assert client.submit(work, 41).result(timeout=30) == 41


def test_a_closed_client_gives_failed_runs_not_lost_ones(cluster):
    closed = distributed.Client(cluster)
    ex = DaskExecutor(closed)
    closed.close()
    with Scheduler(executor=ex) as s:
        tid = s.schedule(work, delay=0.01, args=(1,))
        assert s.wait_idle(30)
    assert s.status(tid).state is TaskState.FAILED
    assert ex.placements[-1].outcome == "refused"


def test_bad_arguments_are_named(client):
    with pytest.raises(TypeError, match="client='nope'"):
        DaskExecutor("nope")
    with pytest.raises(ValueError, match="keep=-1"):
        DaskExecutor(client, keep=-1)
    with pytest.raises(ValueError, match="key="):
        DaskExecutor(client, key="shared")


def test_the_wrapper_reports_where_and_when_even_off_a_worker():
    result, where, start, end = run_on_worker(0, work, (5,), None)
    assert (result, where) == (5, None) and start <= end
    with pytest.raises(ValueError) as info:
        run_on_worker(0, fail, (), None)
    assert info.value._tempsched_ran[0] is None


# -- workers that die under a run (last: the nanny restarts them) ----------------------------


def test_a_worker_killed_mid_run_is_retried_by_dask_and_recorded_once(cluster, client):
    ex = DaskExecutor(client)
    queue, go = named("started"), named("go")
    with Scheduler(executor=ex) as s:
        tid = s.schedule(announce_and_wait, delay=0.01, args=(queue, go))
        [first] = started_on(client, queue, 1)
        kill_worker(cluster, first)
        [second] = started_on(client, queue, 1)  # Dask ran it again elsewhere
        distributed.Event(go, client=client).set()
        assert s.wait_idle(60)
    assert second != first
    assert s.status(tid).state is TaskState.DONE
    frame = s.log.to_frame()
    assert (frame.loc[frame["task_id"] == tid, "kind"] == "finish").sum() == 1
    assert ex.placements[-1].worker == second
    client.wait_for_workers(2, timeout=60)


def test_a_worker_killed_with_no_retries_left_is_a_failed_run(cluster, client):
    ex = DaskExecutor(client)
    queue, go = named("started"), named("go")
    scheduler = cluster.scheduler
    allowed = scheduler.allowed_failures
    scheduler.allowed_failures = 0
    try:
        with Scheduler(executor=ex) as s:
            tid = s.schedule(announce_and_wait, delay=0.01, args=(queue, go))
            [where] = started_on(client, queue, 1)
            kill_worker(cluster, where)
            assert s.wait_idle(60)
    finally:
        scheduler.allowed_failures = allowed
        distributed.Event(go, client=client).set()
    assert s.status(tid).state is TaskState.FAILED
    assert type(s.exception(tid)).__name__ == "KilledWorker"
    frame = s.log.to_frame()
    assert "KilledWorker" in frame.loc[frame["kind"] == "error", "error"].iloc[0]
    client.wait_for_workers(2, timeout=60)
