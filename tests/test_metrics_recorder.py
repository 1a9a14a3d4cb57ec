"""The metrics-only recorder: every measure equals the one computed from the full log.

Issue 35, item 5: for the same seed, a run made with ``record="metrics"`` (running
totals, no rows) gives exactly the measures :func:`run_metrics` computes from the
same run's full event log: every measure of ``METRICS``, every queue design, the
lab's executors, several seeded workloads (hypothesis draws them).
"""

from __future__ import annotations

import inspect
import math
import threading
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.core.ports import FacadePort
from tempsched_lab.core.recorder import MetricsRecorder, Recorder, StepRecorder
from tempsched_lab.lab import (
    Experiment,
    bursts,
    cron_fleet,
    exponential,
    mix,
    periodic_fleet,
    poisson,
    simulate,
)
from tempsched_lab.lab.metrics import METRICS, recorded_metrics, run_metrics

DESIGNS = ("sorteddict", "heap", "wheel(tick=0.001)")
EXECUTORS = ({"executor": "inline"}, {"executor": "pool", "max_workers": 2}, {"executor": "thread"})


def _same(a: Any, b: Any) -> bool:
    """Equal, of the same type (NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _differences(full: dict[str, Any], totals: dict[str, Any]) -> dict[str, Any]:
    assert list(full) == list(totals) == list(METRICS)
    return {k: (full[k], totals[k]) for k in METRICS if not _same(full[k], totals[k])}


def _workload(kind: str, seed: int) -> Any:
    """A small seeded workload of one kind: each exercises some of the measures."""
    if kind == "poisson":  # cancels, duplicates (cases 5, 7), failures, a backlog
        return poisson(
            2_000,
            0.3,
            seed=seed,
            duration=exponential(0.0006),
            lead=exponential(0.005),
            cancels=0.1,
            duplicates=0.1,
            failures=0.05,
        )
    if kind == "bursts":  # many tasks at one instant: groups, one dispatch of many rows
        return bursts(30, 0.05, 0.3, seed=seed, duration=exponential(0.001), failures=0.1)
    if kind == "periodic":  # re-arms, misfires (runs longer than the period), the stop
        return periodic_fleet(6, 0.01, 0.3, seed=seed, duration=exponential(0.004))
    return mix(  # calendar tasks (trigger rows) with one-shot traffic
        cron_fleet(3, 180.0, seed=seed, rules=("* * * * *", "*/2 * * * *")),
        poisson(0.5, 180.0, seed=seed, duration=exponential(1.0), cancels=0.2),
    )


def _both(workload: Any, **config: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    full = simulate(workload, **config).metrics()
    totals = simulate(workload, record="metrics", **config)
    assert totals.recorder is not None and len(totals.scheduler.log) == 0  # no row built
    return full, totals.metrics()


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("executor", EXECUTORS, ids=lambda e: e["executor"])
def test_every_measure_equal_on_every_design_and_executor(
    design: str, executor: dict[str, Any]
) -> None:
    for kind in ("poisson", "bursts", "periodic", "cron"):
        full, totals = _both(_workload(kind, seed=7), queue=design, **executor)
        assert full["runs"] > 0
        assert not _differences(full, totals), (kind, _differences(full, totals))


def test_the_workloads_reach_every_kind_of_measure() -> None:
    """The fixed workloads above make every count nonzero somewhere (or the test is weak)."""
    seen: dict[str, Any] = {}
    for kind in ("poisson", "bursts", "periodic", "cron"):
        for executor in EXECUTORS[:2]:
            m = simulate(_workload(kind, seed=7), **executor).metrics()
            for key, value in m.items():
                if isinstance(value, (int, float)) and value and value == value:
                    seen[key] = value
    wanted = {"runs", "failed", "cancelled", "misfires", "lateness_p99", "queue_delay_p99"}
    wanted |= {"mean_queue_depth", "case_2", "case_3", "case_4", "case_5", "case_6", "case_7"}
    assert wanted <= set(seen), wanted - set(seen)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["poisson", "bursts", "periodic", "cron"]),
    seed=st.integers(0, 2**32 - 1),
    design=st.sampled_from(DESIGNS),
    executor=st.sampled_from(EXECUTORS[:2]),
    misfire=st.sampled_from(["skip", "run_once", "catch_up"]),
)
def test_measures_equal_on_seeded_workloads(
    kind: str, seed: int, design: str, executor: dict[str, Any], misfire: str
) -> None:
    full, totals = _both(_workload(kind, seed), queue=design, misfire=misfire, **executor)
    assert not _differences(full, totals)


def _script(s: Scheduler, clock: VirtualClock) -> None:
    """Steps the lab's workloads do not take: rejections, events, a dropped task, a stop."""
    with pytest.raises(ValueError):  # case 1: in the past
        s.schedule(print, at=99.0)
    FacadePort(s).record_rejection(print, (), None, None, "user", ValueError("bad"))  # invalid
    event = threading.Event()
    s.schedule(event, at=101.0)
    tid = s.schedule(len, at=102.0, args=("ab",), period=0.5)
    s.schedule(len, at=103.0, args=("abc",))
    s.cancel(12345)  # not found
    clock.advance(2.2)
    s.cancel(tid)
    s.schedule(len, at=150.0, args=("x",))  # dropped by the shutdown
    s.shutdown(wait=False)


def test_rows_the_lab_never_makes_count_the_same() -> None:
    clock = VirtualClock(start=100.0)
    full_scheduler = Scheduler(clock)
    _script(full_scheduler, clock)
    made: list[MetricsRecorder] = []

    def keep(log: Any, queue: Any) -> MetricsRecorder:
        made.append(MetricsRecorder(log, queue))
        return made[-1]

    clock = VirtualClock(start=100.0)
    totals_scheduler = Scheduler(clock, recorder=keep)
    _script(totals_scheduler, clock)
    frame = full_scheduler.log.to_frame()
    assert {"reject", "event_set", "cancel", "shutdown"} <= set(frame["kind"].astype(str))
    full, totals = run_metrics(frame), recorded_metrics(made[0])
    assert totals["case_1"] == 1 and totals["events"] == len(frame) > 10
    assert not _differences(full, totals)
    assert len(totals_scheduler.log) == 0


def test_a_run_without_a_step_has_the_empty_measures() -> None:
    made: list[MetricsRecorder] = []
    Scheduler(
        VirtualClock(), recorder=lambda log, q: made.append(MetricsRecorder(log, q)) or made[0]
    )
    m = recorded_metrics(made[0])
    assert m["runs"] == m["events"] == m["max_queue_depth"] == 0
    assert m["mean_queue_depth"] == m["virtual_time"] == 0.0 and math.isnan(m["lateness_p50"])


def test_both_recorders_declare_every_step_of_the_protocol() -> None:
    steps = {
        name
        for name, member in vars(StepRecorder).items()
        if callable(member) and not name.startswith("_")
    }
    full_only = {"log"}  # the Recorder's own public attribute: the log it writes
    assert steps == {n for n in dir(Recorder) if not n.startswith("_")} - full_only
    for implementation in (Recorder, MetricsRecorder):
        for name in steps:
            ours = inspect.signature(getattr(implementation, name))
            declared = inspect.signature(getattr(StepRecorder, name))
            assert list(ours.parameters) == list(declared.parameters), (implementation, name)
    checked: StepRecorder = MetricsRecorder(Scheduler(VirtualClock()).log, _queue())
    assert checked.failed(0.0, None, 0.0, 0.0, ValueError()) is None  # type: ignore[arg-type]


def _queue() -> Any:
    from tempsched_lab.core.queues import make_queue

    return make_queue("heap")


def test_experiment_record_metrics_gives_the_full_results_and_logs() -> None:
    params: dict[str, Any] = {
        "grid": {"queue": ["heap", "wheel"], "executor": ["inline", "pool"]},
        "fixed": {"rate": 1_000, "horizon": 0.2, "duration": exponential(0.001), "cancels": 0.1},
        "repeats": 2,
        "seed": 3,
    }
    full = Experiment(poisson, **params).run(progress=None)
    lean = Experiment(poisson, record="metrics", **params)
    results = lean.run(progress=None)
    columns = list(METRICS)
    pd.testing.assert_frame_equal(full[columns], results[columns], check_exact=True)
    assert lean.manifest()["record"] == "metrics"
    log = lean.log(3)  # regenerated whole; check=True: its measures are the row's again
    assert (log["kind"] == "start").sum() == results.loc[3, "runs"]


def test_a_metrics_run_says_it_has_no_log_frame() -> None:
    sim = simulate(bursts(3, 1.0, 2.0, seed=0), record="metrics")
    with pytest.raises(RuntimeError, match="record='metrics'"):
        sim.frame  # noqa: B018
    assert sim.lateness().tolist() == [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]


def test_bad_record_and_recorder_are_named() -> None:
    with pytest.raises(ValueError, match="record='rows'"):
        Experiment(poisson, grid={"rate": [1]}, fixed={"horizon": 1.0}, record="rows")
    with pytest.raises(ValueError, match="record='rows'"):
        simulate(bursts(3, 1.0, 2.0, seed=0), record="rows")
    with pytest.raises(TypeError, match="recorder=3"):
        Scheduler(VirtualClock(), recorder=3)  # type: ignore[arg-type]
