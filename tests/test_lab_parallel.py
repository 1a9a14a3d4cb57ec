"""The lab on other engines: a process pool and a Dask cluster give the serial run's rows.

One ``LocalCluster`` (2 worker processes, 1 thread each, loopback only, no
dashboard) serves the module. Every comparison drops only ``wall`` (the wall
time a run took); everything else must be identical, float for float.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import pandas as pd
import pytest

from tempsched_lab.lab import Experiment, ExperimentError, exponential, poisson

pytestmark = pytest.mark.slow


def sweep(workload=poisson, **kwargs):
    options = {
        "grid": {"queue": ["sorteddict", "heap", "wheel(tick=0.001)"], "rate": [300, 1500]},
        "fixed": {"horizon": 0.3, "duration": exponential(0.0005), "lead": exponential(0.005)},
        "repeats": 2,
        "seed": 11,
    }
    options.update(kwargs)
    return Experiment(workload, **options)


def comparable(results):
    return results.drop(columns=["wall"])


@pytest.fixture(scope="module")
def serial():
    return comparable(sweep().run(progress=None))


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            host="127.0.0.1",
            dashboard_address=None,
            worker_dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        client.wait_for_workers(2, timeout=60)
        yield client


def test_a_process_pool_gives_the_serial_rows(serial):
    pd.testing.assert_frame_equal(comparable(sweep().run(workers=2, progress=None)), serial)


def test_any_executor_given_gives_the_serial_rows_and_stays_open(serial):
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        results = sweep().run(pool, progress=None)
        assert pool.submit(abs, -3).result() == 3  # the caller's pool is still usable
    pd.testing.assert_frame_equal(comparable(results), serial)


def test_a_dask_cluster_gives_the_serial_rows(serial, client):
    results = sweep().run(client, progress=None)
    pd.testing.assert_frame_equal(comparable(results), serial)
    ran_on = client.run(os.getpid)
    assert len(ran_on) == 2 and os.getpid() not in ran_on.values()
    assert client.submit(abs, -4).result() == 4  # the client is the caller's, still open


def test_a_workload_function_written_in_place_travels_to_the_workers(serial):
    def my_poisson(rate, horizon, duration, lead, *, seed):  # not importable by a worker
        return poisson(rate, horizon, seed=seed, duration=duration, lead=lead)

    results = sweep(my_poisson, name="poisson").run(workers=2, progress=None)
    pd.testing.assert_frame_equal(comparable(results), serial)


def test_a_workload_that_raises_on_a_worker_names_the_parameter_and_keeps_finished_rows(
    serial, client
):
    for engine in ({"workers": 2}, {"executor": client}):
        e = sweep(grid={"queue": ["heap"], "rate": [300, 1500, -1]})
        with pytest.raises(ExperimentError) as caught:
            e.run(progress=None, **engine)
        error = caught.value
        assert "rate=-1" in str(error) and "raised ValueError" in str(error)
        assert error.stage == "workload" and error.run.params["rate"] == -1
        assert "Traceback" in error.remote_traceback
        kept = e.results
        assert error.run.index not in kept.index
        expected = serial[(serial["queue"] == "heap")].reset_index(drop=True)
        got = comparable(kept).reset_index(drop=True)
        for _, row in got.iterrows():  # every kept row is the serial run's row
            match = expected[(expected["rate"] == row["rate"]) & (expected["seed"] == row["seed"])]
            assert len(match) == 1
            pd.testing.assert_series_equal(match.iloc[0], row, check_names=False, check_dtype=False)


def dying(rate, horizon, *, seed):
    if rate < 0:
        os._exit(3)  # the worker process dies under the run
    return poisson(rate, horizon, seed=seed)


def test_a_worker_that_dies_is_an_engine_error_and_finished_rows_stay():
    e = Experiment(dying, grid={"rate": [100, 200, 300, -1]}, fixed={"horizon": 0.1})
    with pytest.raises(ExperimentError) as caught:
        e.run(workers=2, progress=None)
    assert caught.value.stage == "engine"
    assert "the executor lost it: BrokenProcessPool" in str(caught.value)
    assert set(e.results.index) <= {0, 1, 2}  # whatever finished before the crash
