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
            dashboard_address=":0",
            worker_dashboard_address=":0",
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


def test_measures_do_not_depend_on_how_many_threads_blas_uses(tmp_path):
    """A process pool's or a Dask worker's BLAS may run on one thread where this one runs on
    several (Dask's nanny sets OPENBLAS_NUM_THREADS=1): a threaded dot product adds in another
    order, and a run's measures came back different in the last bits (seen in bench_lab.py)."""
    import pickle
    import subprocess
    import sys

    from tempsched_lab.lab import run_metrics, simulate

    w = poisson(6000, 3.0, seed=2, duration=exponential(0.0001), lead=exponential(0.02))
    frame = simulate(w).frame
    assert (frame["queue_size"].notna()).sum() > 20_000  # big enough for BLAS to use threads
    path = tmp_path / "frame.pkl"
    path.write_bytes(pickle.dumps(frame))
    here = run_metrics(frame)
    code = (
        "import pickle, sys\n"
        "from tempsched_lab.lab import run_metrics\n"
        "m = run_metrics(pickle.loads(open(sys.argv[1], 'rb').read()))\n"
        "print(repr(m['mean_queue_depth']), repr(m['lateness_mean']))\n"
    )
    env = {
        **os.environ,
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert [float(v) for v in out] == [here["mean_queue_depth"], here["lateness_mean"]]
