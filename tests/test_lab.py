"""The lab: one run's semantics, every measure against the run's own log, experiments.

Parallel engines (process pools, Dask) are in ``test_lab_parallel.py``, the
figures in ``test_lab_figures.py``, the generators in ``test_lab_workloads.py``.
"""

from __future__ import annotations

import io
import json
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempsched_lab import audit, case_counts, lateness_summary
from tempsched_lab.lab import (
    METRICS,
    Experiment,
    ExperimentError,
    NoSuchRun,
    RowMismatchError,
    RunConfig,
    Workload,
    bursts,
    exponential,
    mix,
    periodic_fleet,
    poisson,
    run_metrics,
    simulate,
)
from tempsched_lab.lab.progress import Progress
from tempsched_lab.lab.steps import StepCounter
from tempsched_lab.time.scale import fmt_duration

# -- hand-made workloads whose every step is known ------------------------------------------


def table(*rows, horizon=2.0):
    """Rows of (submit, due, duration[, extra columns]) as a workload labelled 'job'."""
    defaults = {"fails": False, "dup_of": None, "cancel_at": np.nan, "period": np.nan}
    frame = pd.DataFrame(
        [
            {
                "label": "job",
                "submit": s,
                "due": d,
                "duration": u,
                **defaults,
                **(x[0] if x else {}),
            }
            for s, d, u, *x in rows
        ]
    )
    return Workload(frame, horizon=horizon)


THREE = table((0.0, 1.0, 0.5), (0.0, 1.0, 0.25), (1.2, 1.2, 0.0))


def starts(sim):
    rows = sim.frame.query("kind == 'start'")
    return [(int(t), round(s, 9)) for t, s in zip(rows["task_id"], rows["t"], strict=True)]


def test_inline_runs_take_their_time_and_clients_act_meanwhile():
    sim = simulate(THREE, executor="inline")
    assert starts(sim) == [(0, 1.0), (1, 1.5), (2, 1.75)]
    frame = sim.frame
    # request 2 is made at 1.2 s, while task 0 runs (from inside the run, as another thread
    # would): due now, it is accepted, and dispatched when the worker is free again
    made = frame.query("kind == 'schedule' and task_id == 2").iloc[0]
    assert made["t"] == 1.2 and made["case"] == 2  # the group at 1.0 s was dispatched whole
    dispatch = frame.query("kind == 'dispatch' and task_id == 2").iloc[0]
    assert dispatch["t"] == 1.75 and dispatch["lateness"] == pytest.approx(0.55)
    assert frame.query("kind == 'finish'")["duration"].round(9).tolist() == [0.5, 0.25, 0.0]
    assert audit(frame).ok


@pytest.mark.parametrize(
    ("executor", "workers", "expected", "delays"),
    [
        ("pool", 1, [(0, 1.0), (1, 1.5), (2, 1.75)], [0.0, 0.5, 0.55]),
        ("pool", 2, [(0, 1.0), (1, 1.0), (2, 1.25)], [0.0, 0.0, 0.05]),
        ("thread", None, [(0, 1.0), (1, 1.0), (2, 1.2)], [0.0, 0.0, 0.0]),
    ],
)
def test_simulated_threads_hold_runs_and_the_dispatcher_never_waits(
    executor, workers, expected, delays
):
    sim = simulate(THREE, executor=executor, max_workers=workers)
    assert starts(sim) == expected
    frame = sim.frame
    assert frame.query("kind == 'start'")["queue_delay"].round(9).tolist() == delays
    dispatched = frame.query("kind == 'dispatch'")["t"].tolist()
    assert dispatched == [1.0, 1.0, 1.2]  # never late: the backlog is queueing delay
    ends = frame.query("kind == 'finish'").sort_values("task_id")["t"].round(9).tolist()
    assert ends == [round(s + d, 9) for (_, s), d in zip(expected, [0.5, 0.25, 0.0], strict=True)]
    assert audit(frame).ok


# Binary fractions: the periodic grid's arithmetic is exact, so the runs are known exactly.
OVERRUN = table((0.0, 0.0, 0.3125, {"period": 0.125}), horizon=0.875)


@pytest.mark.parametrize(
    ("policy", "runs", "misfires", "lateness"),
    [
        ("skip", [0.0, 0.375, 0.75], 4, [0.0, 0.0, 0.0]),
        ("catch_up", [0.0, 0.3125, 0.625], 0, [0.0, 0.1875, 0.375]),
        ("run_once", [0.0, 0.3125, 0.625], 2, [0.0, 0.0625, 0.125]),
    ],
)
def test_misfire_policies_on_an_overrunning_periodic_task(policy, runs, misfires, lateness):
    sim = simulate(OVERRUN, misfire=policy)
    frame = sim.frame
    rows = frame.query("kind == 'start'")
    assert rows["t"].tolist() == runs
    assert rows["lateness"].tolist() == lateness
    m = sim.metrics()
    assert m["misfires"] == misfires and m["runs"] == len(runs)
    # the horizon (0.875 s) falls inside the last run: the stop says so, and no run follows
    stop = frame.query("kind == 'cancel'").iloc[0]
    assert stop["t"] == 0.875 and stop["result"] == "running"
    assert m["cancelled"] == 0  # stopping recurring tasks at the horizon is not a cancel
    assert audit(frame).ok


def test_cancels_duplicates_and_failures_reach_the_log():
    w = table(
        (0.0, 1.0, 0.0),
        (0.0, 1.0, 0.0, {"dup_of": 0}),  # the client retries at once: case 5, no new task
        (0.0, 2.0, 0.0, {"cancel_at": 0.5}),  # cancelled while pending
        (0.0, 3.0, 0.0, {"fails": True}),
        (0.0, 2.0, 0.0, {"cancel_at": 2.5}),  # cancelled after it ran: already done
    )
    sim = simulate(w)
    frame = sim.frame
    assert sim.task_ids == [0, 0, 1, 2, 3]
    assert frame.query("kind == 'schedule'")["case"].tolist() == [2, 5, 4, 4, 8]
    assert frame.query("kind == 'cancel'")["result"].tolist() == ["cancelled", "already_done"]
    error = frame.query("kind == 'error'").iloc[0]
    assert error["task_id"] == 2 and "WorkloadFailure: request 3 fails on purpose" in error["error"]
    m = sim.metrics()
    assert (m["runs"], m["failed"], m["cancelled"], m["case_5"]) == (3, 1, 1, 1)


def test_failures_on_purpose_are_not_reported_on_the_logger(caplog):
    with caplog.at_level("ERROR", logger="tempsched_lab"):
        simulate(poisson(200, 0.5, seed=1, failures=0.5))
    assert not [r for r in caplog.records if r.name == "tempsched_lab"]


def test_a_run_is_a_pure_function_of_its_inputs():
    w = mix(
        poisson(
            1500,
            0.5,
            seed=4,
            duration=exponential(0.0005),
            lead=exponential(0.005),
            cancels=0.1,
            duplicates=0.1,
            failures=0.05,
        ),
        periodic_fleet(5, [0.01, 0.03], 0.5, seed=4, duration=exponential(0.01)),
    )
    varying = ["wall", "wall_time", "thread"]
    for config in (RunConfig(), RunConfig(queue="heap", executor="pool", max_workers=2)):
        a, b = simulate(w, config).frame, simulate(w, config).frame
        pd.testing.assert_frame_equal(a.drop(columns=varying), b.drop(columns=varying))
    other = simulate(poisson(1500, 0.5, seed=5), RunConfig()).frame
    assert len(other) != len(a) or not other["t"].equals(a["t"])


def simpy_starts(workload, servers):
    """The same model written by hand in SimPy: a process per request, a FIFO Resource."""
    simpy = pytest.importorskip("simpy")
    frame = workload.frame
    env = simpy.Environment()
    server = simpy.Resource(env, capacity=servers)
    starts = []

    def request(submit, due, duration):
        yield env.timeout(submit)
        yield env.timeout(due - env.now)
        with server.request() as turn:
            yield turn
            starts.append(env.now)
            yield env.timeout(duration)

    for row in frame.itertuples():
        env.process(request(row.submit, row.due, row.duration))
    env.run()
    return np.sort(starts)


@pytest.mark.parametrize(
    ("servers", "config"),
    [(1, RunConfig()), (3, RunConfig(executor="pool", max_workers=3, queue="heap"))],
    ids=["inline-is-one-server", "pool-of-3"],
)
def test_runs_start_when_an_independent_simpy_model_says(servers, config):
    w = poisson(3000, 0.5, seed=8, duration=exponential(0.0008), lead=exponential(0.01))
    ours = np.sort(simulate(w, config).frame.query("kind == 'start'")["t"].to_numpy())
    theirs = simpy_starts(w, servers)
    assert len(ours) == len(theirs) == len(w)
    assert np.abs(ours - theirs).max() < 1e-9  # float rounding of due - now aside
    assert (ours - np.sort(w.frame["due"].to_numpy()) != 0).any()  # there was queueing


# -- every measure against the run's own log --------------------------------------------------


def measures_from_the_log(frame):
    """The measures of METRICS recomputed from the log's rows, independently of the lab."""
    kind = frame["kind"].astype(str)
    start = frame[kind == "start"]
    lateness = start["lateness"]
    sched = frame[kind == "schedule"]
    recurring = set(sched.loc[sched["period"].notna() | sched["trigger"].notna(), "task_id"])
    cancels = frame[(kind == "cancel") & (frame["result"] == "cancelled")]
    # the queue's depth held from each row that records it until the next one
    origin, depth, since, area = frame.attrs["time_origin"], 0, frame.attrs["time_origin"], 0.0
    for t, size in zip(frame["t"], frame["queue_size"], strict=True):
        if pd.notna(size):
            area += depth * (t - since)
            depth, since = int(size), t
    end = frame["t"].iloc[-1]
    area += depth * (end - since)
    counts = case_counts(frame).set_index("case")["count"]
    return {
        "runs": len(start),
        "failed": int((kind == "error").sum()),
        "cancelled": int((~cancels["task_id"].isin(recurring)).sum()),
        "misfires": int(frame.loc[kind == "missed", "missed"].sum()),
        "lateness_p50": lateness.quantile(0.5),
        "lateness_p99": lateness.quantile(0.99),
        "lateness_max": lateness.max(),
        "lateness_mean": lateness.mean(),
        "queue_delay_p99": start["queue_delay"].quantile(0.99),
        "max_queue_depth": int(frame["queue_size"].max()),
        "mean_queue_depth": area / (end - origin),
        **{f"case_{c}": int(counts[c]) for c in range(1, 9)},
        "queue_steps": None,
        "events": len(frame),
        "virtual_time": end - origin,
    }


MIXED = mix(
    poisson(
        2000,
        0.5,
        seed=6,
        duration=exponential(0.0004),
        lead=exponential(0.004),
        cancels=0.05,
        duplicates=0.05,
        failures=0.02,
    ),
    bursts(100, 0.2, 0.5, seed=6, duration=0.0001),
    periodic_fleet(6, [0.005, 0.02], 0.5, seed=6, duration=exponential(0.006)),
)


@pytest.mark.parametrize(
    "config",
    [
        RunConfig(),
        RunConfig(queue="heap", misfire="catch_up"),
        RunConfig(queue="wheel(tick=0.002)", executor="pool", max_workers=3),
        RunConfig(executor="thread", resolution=0.001, misfire="run_once"),
    ],
    ids=["inline", "heap-catch-up", "wheel-pool", "thread-resolution"],
)
def test_every_measure_equals_what_the_log_says(config):
    frame = simulate(MIXED, config).frame
    assert audit(frame).ok
    got, expected = run_metrics(frame), measures_from_the_log(frame)
    assert list(got) == list(METRICS)
    for name in METRICS:
        if isinstance(expected[name], float):
            assert got[name] == pytest.approx(expected[name], rel=1e-12, abs=1e-15), name
        else:
            assert got[name] == expected[name], name
    # the issue's own wording: p99 is the quantile of the start rows' lateness, exactly
    assert got["lateness_p99"] == frame.query("kind == 'start'")["lateness"].quantile(0.99)
    summary = lateness_summary(frame, by=None)
    assert got["lateness_p99"] == summary.loc[("total", "all"), "p99"]
    # something happened in every class the workload asks for
    assert got["failed"] and got["cancelled"] and got["case_5"] + got["case_7"] > 0


@settings(max_examples=10, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    rate=st.floats(50, 3000),
    design=st.sampled_from(["sorteddict", "heap", "wheel(tick=0.001)"]),
    executor=st.sampled_from(["inline", "pool", "thread"]),
    misfire=st.sampled_from(["skip", "run_once", "catch_up"]),
    fractions=st.tuples(st.floats(0, 0.5), st.floats(0, 0.5), st.floats(0, 0.5)),
)
def test_any_run_keeps_the_logs_laws_and_its_measures_match_the_log(
    seed, rate, design, executor, misfire, fractions
):
    cancels, duplicates, failures = fractions
    w = mix(
        poisson(
            rate,
            0.2,
            seed=seed,
            duration=exponential(0.001),
            lead=exponential(0.01),
            cancels=cancels,
            duplicates=duplicates,
            failures=failures,
        ),
        periodic_fleet(3, [0.004, 0.01], 0.2, seed=seed, duration=exponential(0.005)),
    )
    config = RunConfig(queue=design, executor=executor, misfire=misfire)
    sim = simulate(w, config)
    frame = sim.frame
    report = audit(frame)
    assert report.ok, report
    got, expected = run_metrics(frame), measures_from_the_log(frame)
    for name in ("runs", "failed", "cancelled", "misfires", "max_queue_depth", "events"):
        assert got[name] == expected[name], name
    assert got["mean_queue_depth"] == pytest.approx(expected["mean_queue_depth"], rel=1e-9)
    # one-shot requests all ran or were cancelled: nothing acknowledged is lost
    one_shots = w.frame[w.frame["period"].isna() & w.frame["dup_of"].isna()]
    assert got["runs"] + got["cancelled"] >= len(one_shots) - int(
        (frame["result"] == "already_done").sum()
    )


# -- counting the queue's steps ---------------------------------------------------------------


def test_queue_steps_are_counted_the_same_every_time_and_differ_by_design():
    w = poisson(1000, 0.3, seed=2, lead=exponential(0.05))
    counts = {q: simulate(w, queue=q, count_steps=True).steps for q in ("sorteddict", "heap")}
    again = simulate(w, queue="heap", count_steps=True).steps
    assert counts["heap"] == again and counts["heap"] > 0 and counts["sorteddict"] > 0
    assert counts["heap"] != counts["sorteddict"]
    assert simulate(w).metrics()["queue_steps"] is None  # not counted unless asked


def test_the_step_counter_puts_back_a_tracer_it_found():
    calls = []

    def tracer(frame, event, arg):
        calls.append(event)

    sys.settrace(tracer)
    try:
        with StepCounter():
            pass
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(None)


# -- experiments --------------------------------------------------------------------------------


def small_experiment(**kwargs):
    options = {
        "grid": {"queue": ["sorteddict", "heap"], "rate": [200, 600]},
        "fixed": {"horizon": 0.25, "duration": exponential(0.001), "lead": exponential(0.01)},
        "repeats": 2,
        "seed": 3,
    }
    options.update(kwargs)
    return Experiment(poisson, **options)


def comparable(results):
    return results.drop(columns=["wall"])


def test_an_experiment_gives_one_tidy_row_per_run():
    e = small_experiment()
    results = e.run(progress=None)
    assert len(results) == 8 == len(e.runs)
    assert results.index.name == "run" and results.index.tolist() == list(range(8))
    assert list(results.columns) == ["queue", "rate", "repeat", "seed", *METRICS, "wall"]
    assert results["runs"].dtype == "int64" and results["queue_steps"].dtype == "Int64"
    assert (results["wall"] > 0).all()
    assert results.groupby(["queue", "rate"]).size().tolist() == [2, 2, 2, 2]


def test_same_seed_same_rows_different_seed_different_rows():
    a = comparable(small_experiment().run(progress=None))
    b = comparable(small_experiment().run(progress=None))
    pd.testing.assert_frame_equal(a, b)
    c = comparable(small_experiment(seed=4).run(progress=None))
    assert not a["seed"].equals(c["seed"]) and not a["runs"].equals(c["runs"])


def test_the_configurations_of_a_repeat_play_the_same_workload():
    e = small_experiment()
    by_key = {}
    for run in e.runs:
        by_key.setdefault((run.params["rate"], run.repeat), []).append(run)
    for runs in by_key.values():
        first = e.workload_of(runs[0])
        assert all(e.workload_of(r).equals(first) for r in runs[1:])
    repeats = [r for r in e.runs if r.params == e.runs[0].params]
    assert not e.workload_of(repeats[0]).equals(e.workload_of(repeats[1]))


def test_any_runs_log_is_regenerated_exactly_from_its_seed():
    e = small_experiment()
    results = e.run(progress=None)
    row = results.iloc[5]
    frame = e.log(row)
    assert json.loads(frame.attrs["lab_run"])["seed"] == int(row["seed"])
    again = measures_from_the_log(frame)
    assert again["runs"] == row["runs"] and again["lateness_p99"] == row["lateness_p99"]
    assert (
        e.log(5)
        .drop(columns=["wall", "wall_time"])
        .equals(frame.drop(columns=["wall", "wall_time"]))
    )
    e._rows[5]["runs"] += 1  # a row that no longer matches its run is caught
    with pytest.raises(RuntimeError, match="did not reproduce: runs"):
        e.log(5)


def test_a_row_of_another_experiment_or_an_edited_row_is_refused_naming_what_differs():
    """Issue 32, finding 5. Before: log(row) played the run of the row's number in this
    experiment and checked it against this experiment's own row, so any foreign or edited
    row silently gave another run's log."""
    e = small_experiment()
    results = e.run(progress=None)
    other_seed = small_experiment(seed=4).run(progress=None)
    with pytest.raises(
        RowMismatchError, match=r"the row named 5 is not run 5 .* seed \d+ \(run 5:"
    ):
        e.log(other_seed.iloc[5])
    longer = small_experiment(
        fixed={"horizon": 0.4, "duration": exponential(0.001), "lead": exponential(0.01)}
    )
    row = longer.run(progress=None).iloc[5]
    with pytest.raises(RowMismatchError, match=r"fixed .*'horizon': 0.4.* \(this experiment: "):
        e.log(row)
    row.attrs = {}  # its parameters and seed are this experiment's: only its measures tell
    with pytest.raises(RuntimeError, match=r"did not reproduce: runs .*the row given says"):
        e.log(row)
    edited = results.iloc[5].copy()
    edited["rate"] = 999
    with pytest.raises(RowMismatchError, match=r"rate 999 \(run 5: 200\)"):
        e.log(edited)
    edited = results.iloc[5].copy()
    edited["lateness_p99"] += 0.5
    with pytest.raises(RuntimeError, match="did not reproduce: lateness_p99"):
        e.log(edited)
    with pytest.raises(RowMismatchError, match=r"column\(s\) \['speed'\]"):
        e.log(pd.concat([results.iloc[5], pd.Series({"speed": 1})]).rename(5))
    with pytest.raises(RowMismatchError, match="Run 1 is not run 1"):
        e.log(small_experiment(seed=4).runs[1])
    assert len(e.log(results.iloc[5])) == results.loc[5, "events"]  # its own row still plays


def test_a_run_number_beyond_the_runs_names_the_number_and_the_range():
    e = small_experiment()
    results = e.run(progress=None)
    for asked in (8, -1, results.iloc[2].rename(99)):
        with pytest.raises(NoSuchRun) as caught:
            e.log(asked)
        text = str(caught.value)
        assert text.startswith("run ") and "no such run; this experiment has runs 0..7" in text
        assert "lateness" not in text  # not the whole row
    assert isinstance(caught.value, KeyError)
    with pytest.raises(NoSuchRun, match=r"run='five': expected a run number"):
        e.lateness_sample("five")


def test_a_list_of_grids_sets_keys_where_they_apply():
    e = Experiment(
        poisson,
        grid=[{"executor": ["inline"]}, {"executor": ["pool"], "max_workers": [1, 3]}],
        fixed={"rate": 300, "horizon": 0.2, "duration": exponential(0.002)},
        seed=1,
    )
    results = e.run(progress=None)
    assert results["executor"].tolist() == ["inline", "pool", "pool"]
    assert results["max_workers"].isna().tolist() == [True, False, False]
    assert results["runs"].nunique() == 1  # same requests, all run
    p99 = results["lateness_p99"].tolist()
    assert p99[2] <= p99[1]  # more threads, no later


def test_a_fixed_workload_runs_as_it_is():
    w = bursts(20, 0.1, 0.3, seed=9, duration=0.004)
    e = Experiment(w, grid={"executor": ["inline", "thread"]})
    results = e.run(progress=None)
    assert results["seed"].tolist() == [9, 9]
    assert results["lateness_max"].tolist()[1] == 0.0 < results["lateness_max"].tolist()[0]
    with pytest.raises(ValueError, match="repeats=2"):
        Experiment(w, grid={"queue": ["heap"]}, repeats=2)
    with pytest.raises(ValueError, match="'rate'"):
        Experiment(w, grid={"rate": [1]})


# -- bad input: clear errors naming the parameter; finished rows kept ---------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"grid": {"queue": ["heap"], "speed": [1]}}, ValueError, "grid key 'speed': unknown"),
        ({"grid": {}}, ValueError, "is empty"),
        ({"grid": []}, ValueError, "is empty"),
        ({"grid": {"queue": []}}, ValueError, r"grid\['queue'\] is empty"),
        ({"grid": {"queue": ["fifo"]}}, ValueError, "queue='fifo'"),
        ({"grid": {"queue": ["wheel(tick=0)"]}}, ValueError, r"queue='wheel\(tick=0\)'"),
        ({"grid": {"queue": ["wheel(tick={{}})"]}}, ValueError, r"queue='wheel\(tick=\{\{\}\}\)'"),
        ({"grid": {"executor": ["process"]}}, ValueError, "executor='process'"),
        ({"grid": {"misfire": ["never"]}}, ValueError, "misfire='never'"),
        ({"grid": {"executor": ["inline"], "max_workers": [2]}}, ValueError, "max_workers=2"),
        ({"grid": {"queue": ["heap"], "seed": [1]}}, ValueError, "'seed': reserved"),
        ({"grid": {"queue": ["heap"]}, "fixed": {"queue": "wheel"}}, ValueError, "both"),
        ({"grid": {"queue": ["heap"]}, "repeats": 0}, ValueError, "repeats=0"),
        ({"grid": {"queue": ["heap"]}, "seed": -1}, ValueError, "seed=-1"),
        ({"grid": "heap"}, TypeError, "grid="),
    ],
)
def test_bad_experiments_are_refused_before_any_run(kwargs, error, message):
    with pytest.raises(error, match=message):
        Experiment(poisson, **{"fixed": {"horizon": 0.1, "rate": 10}, **kwargs})


def test_a_workload_function_without_seed_is_refused():
    def no_seed(rate):
        return poisson(rate, 0.1, seed=1)

    with pytest.raises(TypeError, match="must take seed="):
        Experiment(no_seed, grid={"rate": [1]})


def test_a_workload_that_raises_names_the_run_and_keeps_the_finished_rows():
    e = Experiment(poisson, grid={"rate": [200, 300, -5, 400]}, fixed={"horizon": 0.1}, seed=1)
    with pytest.raises(ExperimentError) as caught:
        e.run(progress=None)
    error = caught.value
    text = str(error)
    assert "run 2 of 4 (rate=-5, repeat=0" in text
    assert "the workload poisson(rate=-5, horizon=0.1, seed=" in text
    assert "raised ValueError: rate=-5: expected a number > 0" in text
    assert error.stage == "workload" and error.run.index == 2
    assert error.results.index.tolist() == [0, 1] == e.results.index.tolist()
    assert "ValueError" in error.remote_traceback
    assert isinstance(error.__cause__, ValueError)


CALLS: list[float] = []


def counting_poisson(rate, horizon, *, seed):
    CALLS.append(rate)
    if rate == 300 and CALLS.count(300) == 1:
        raise RuntimeError("the data set is not there yet")
    return poisson(rate, horizon, seed=seed)


def test_resume_makes_only_the_missing_runs():
    CALLS.clear()
    e = Experiment(counting_poisson, grid={"rate": [100, 200, 300, 400]}, fixed={"horizon": 0.1})
    with pytest.raises(ExperimentError, match="not there yet"):
        e.run(progress=None)
    assert CALLS == [100, 200, 300] and len(e.results) == 2
    results = e.run(progress=None, resume=True)
    assert CALLS == [100, 200, 300, 300, 400]
    assert results.index.tolist() == [0, 1, 2, 3]
    fresh = Experiment(poisson, grid={"rate": [100, 200, 300, 400]}, fixed={"horizon": 0.1})
    pd.testing.assert_frame_equal(
        comparable(results), comparable(fresh.run(progress=None)), check_like=False
    )


def interrupted_poisson(rate, horizon, *, seed):
    if rate == 300:
        raise KeyboardInterrupt
    return poisson(rate, horizon, seed=seed)


def test_an_interrupt_keeps_the_rows_already_finished():
    e = Experiment(interrupted_poisson, grid={"rate": [100, 200, 300, 400]}, fixed={"horizon": 0.1})
    with pytest.raises(KeyboardInterrupt) as caught:
        e.run(progress=None)
    assert caught.value.results.index.tolist() == [0, 1] == e.results.index.tolist()


# -- progress ----------------------------------------------------------------------------------


def test_progress_lines_say_done_left_and_an_estimate():
    out = io.StringIO()
    ticks = iter([0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 4.5])
    p = Progress(4, mode="lines", stream=out, every=0.0, clock=lambda: next(ticks))
    for done in (1, 2, 3, 4):
        p.update(done)
    p.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "lab: 0 of 4 runs done, 4 left"
    assert lines[1] == "lab: 1 of 4 runs done, 3 left, about 3.000 s to go"
    assert lines[-2] == "lab: 4 of 4 runs done, 0 left"
    assert lines[-1] == "lab: 4 runs done in 4.500 s"


def test_progress_lines_are_coalesced():
    out = io.StringIO()
    clock = iter(np.arange(0.0, 100.0, 0.5))
    p = Progress(100, mode="lines", stream=out, every=10.0, clock=lambda: float(next(clock)))
    for done in range(1, 100):
        p.update(done)
    assert len(out.getvalue().splitlines()) < 10


def test_the_progress_widget_shows_the_same_numbers():
    pytest.importorskip("ipywidgets")
    ticks = iter([0.0, 0.0, 1.0, 2.0])
    p = Progress(2, mode="widget", clock=lambda: next(ticks))
    p.update(1)
    assert p.widget.children[0].value == 1 and p.widget.children[0].max == 2
    assert "1 of 2 runs done, 1 left" in p.widget.children[1].value
    p.close(KeyboardInterrupt())
    assert p.widget.children[0].bar_style == "danger"
    assert "stopped by KeyboardInterrupt" in p.widget.children[1].value


def test_a_bar_made_beforehand_is_filled_by_the_sweep():
    # notebook 10 shows its bar in a cell before the sweep's (under Voila a cell's outputs come
    # when the cell has run): the sweep counts in that bar, from its own start
    out = io.StringIO()
    ticks = iter([0.0, 0.0, 10.0, 10.0] + [11.0] * 50)
    bar = Progress(1, mode="lines", stream=out, every=0.0, clock=lambda: next(ticks))
    results = small_experiment(repeats=1).run(progress=bar)
    lines = out.getvalue().splitlines()
    assert lines[0] == "lab: 0 of 1 runs done, 1 left"  # made, before the sweep
    assert lines[1] == "lab: 0 of 4 runs done, 4 left"  # the sweep begins: its own total
    assert lines[-1] == "lab: 4 runs done in 1.000 s"  # timed from the sweep's start
    assert bar.done == bar.total == len(results) == 4


def test_an_experiment_reports_progress_in_lines_outside_notebooks(capsys):
    small_experiment(repeats=1).run()
    err = capsys.readouterr().err
    assert "lab: 0 of 4 runs done, 4 left" in err and "lab: 4 runs done in" in err


def test_the_docs_list_every_measure():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "lab.md").read_text()
    table = [line for line in page.splitlines() if line.startswith("| `")]
    missing = [m for m in METRICS if not any(f"`{m}`" in line for line in table)]
    assert not missing, f"docs/lab.md's table of measures lacks {missing}"


# -- tables for a paper --------------------------------------------------------------------------


def test_summaries_and_paired_comparisons_agree_with_the_rows():
    from tempsched_lab.lab import compare, summarize

    e = small_experiment(grid={"queue": ["sorteddict", "heap", "wheel"], "rate": [300]}, repeats=4)
    results = e.run(progress=None)
    table = summarize(results, "lateness_p99", by="queue")
    means = results.groupby("queue", sort=False)["lateness_p99"].mean()
    assert table["mean"].tolist() == pytest.approx(means.tolist())
    assert (table["ci_low"] <= table["mean"]).all() and (table["mean"] <= table["ci_high"]).all()
    assert table.equals(summarize(results, "lateness_p99", by="queue"))  # seeded: the same table
    paired = compare(e, "lateness_p99", between="queue", baseline="sorteddict")
    heap = paired[paired["queue"] == "heap"].iloc[0]
    assert heap["pairs"] == 4 and heap["mean_diff"] == 0.0 == heap["ci_low"] == heap["ci_high"]
    wheel = paired[paired["queue"] == "wheel"].iloc[0]
    by_repeat = results.pivot(index="repeat", columns="queue", values="lateness_p99")
    assert wheel["mean_diff"] == pytest.approx(
        (by_repeat["wheel"] - by_repeat["sorteddict"]).mean()
    )
    assert wheel["lower_share"] == 0.0 and wheel["ci_low"] > 0  # the 10 ms tick: always later
    with pytest.raises(ValueError, match="baseline='fifo'"):
        compare(results, "lateness_p99", between="queue", baseline="fifo")


def test_the_results_carry_a_manifest_to_make_the_sweep_again():
    e = small_experiment()
    results = e.run(progress=None)
    manifest = json.loads(results.attrs["manifest"])
    assert manifest == json.loads(json.dumps(e.manifest(), default=str))
    assert manifest["grid"] == [{"queue": ["sorteddict", "heap"], "rate": [200, 600]}]
    assert manifest["fixed"]["duration"] == "exponential(mean=1.00 ms)"
    assert manifest["seed"] == 3 and manifest["repeats"] == 2 and manifest["runs"] == 8
    assert manifest["workload"] == "tempsched_lab.lab.workloads.poisson"
    assert set(manifest["versions"]) == {"tempsched_lab", "python", "numpy", "pandas"}


def test_a_cron_fleet_runs_on_its_rules_until_the_horizon():
    pytest.importorskip("cronsim")
    from tempsched_lab.lab import cron_fleet

    w = cron_fleet(2, 3600.0, seed=1, rules=["*/5 * * * *"], duration=1.0)  # from 1970-01-01
    sim = simulate(w, executor="thread")  # a thread each: both start on the minute
    frame = sim.frame
    starts = frame.query("kind == 'start'")
    assert sorted(set(starts["t"])) == [300.0 * k for k in range(1, 13)]  # 00:05 .. 01:00
    assert starts.groupby("task_id").size().tolist() == [12, 12]
    rules = frame.query("kind == 'schedule'")["trigger"]
    assert rules.eq("Every fifth minute of every hour (UTC)").all()
    assert (frame.query("kind == 'cancel'")["t"] == 3600.0).all()  # stopped at the horizon
    assert audit(frame).ok


def test_tables_show_times_with_units_and_leave_the_frame_alone():
    from tempsched_lab.lab import compare, summarize, with_units

    e = small_experiment(grid={"queue": ["sorteddict", "wheel"], "rate": [300]}, repeats=2)
    results = e.run(progress=None)
    shown = with_units(results)
    p99 = results["lateness_p99"].iloc[-1]
    assert shown["lateness_p99"].iloc[-1] == fmt_duration(p99) != f"{p99}"
    assert shown["wall"].str.endswith((" s", " ms", " µs")).all()
    assert shown["runs"].tolist() == results["runs"].tolist()  # counts stay numbers
    assert results["lateness_p99"].dtype == "float64"  # the frame users compute with is intact
    # a summary of a time measure is in that measure's unit; of a count, plain numbers
    summary = with_units(summarize(results, "lateness_p99", by="queue"))
    assert summary["mean"].str.endswith("s").all()
    assert with_units(summarize(results, "runs", by="queue"))["mean"].dtype == "float64"
    paired = with_units(compare(results, "lateness_p99", between="queue", baseline="sorteddict"))
    assert paired["mean_diff"].iloc[0].endswith("s")
    # a workload's moments are seconds since the start; its durations carry their unit
    w = poisson(200, horizon=0.5, seed=1, duration=exponential(0.0005))
    table = with_units(w.frame)
    assert table["submit"].iloc[0] == f"{w.frame['submit'].iloc[0]:.4f} s"
    assert table["duration"].iloc[0] == fmt_duration(w.frame["duration"].iloc[0])
    assert (table["cancel_at"] == "").all()  # missing reads as blank, not "nan"


# -- the main guard (issue 34, item 5; the scripts themselves run in test_lab_processes.py) ----


@pytest.mark.parametrize(
    ("source", "line", "guarded"),
    [
        ("run()\n", 1, False),
        ('if __name__ == "__main__":\n    run()\n', 2, True),
        ('if "__main__" == __name__:\n    run()\n', 2, True),
        ('if __name__ != "__main__":\n    pass\nelse:\n    run()\n', 4, True),
        ('if __name__ == "__main__":\n    pass\nelse:\n    run()\n', 4, False),
        ('try:\n    if __name__ == "__main__":\n        run()\nexcept E:\n    pass\n', 3, True),
        ("def main():\n    run()\n\nmain()\n", 4, False),
        ("if DEBUG:\n    run()\n", 2, False),
        ('with ctx:\n    if __name__ == "__main__":\n        x = run(\n            2)\n', 4, True),
    ],
)
def test_the_main_guard_is_told_from_the_statements_around_the_call(source, line, guarded):
    import ast

    from tempsched_lab.lab.mainguard import _guarded

    assert _guarded(ast.parse(source).body, line) is guarded
