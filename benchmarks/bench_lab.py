"""The lab's figures of record: one run's events per second against SimPy, sweeps on 3 engines.

Usage::

    python benchmarks/bench_lab.py [--repeats 5] [--json benchmarks/results/lab.json]
                                   [--only events,sweep,growth,startup,steps] [--quick]

Sections (a report, not a test: the machine is shared and noisy; alternating
order, medians over ``--repeats``; every JSON sample carries the 1-minute load
average when it was taken):

* ``events``: one simulated run of one workload (Poisson arrivals, timers set
  ~20 ms ahead, exponential runs at half load), as log rows per wall second:
  the lab's whole run (``simulate`` + the log frame + the measures), the
  simulation alone (log on), the bare scheduler (log off: no measures
  possible), and the same model written by hand in SimPy (a process per
  request, a ``Resource`` as the server) with a hand-written log of the same
  four rows per request (schedule, dispatch, start, finish), alone and with
  the same measures computed from it with numpy; and the lab's run with
  ``record="metrics"`` (running totals, no log frame: the same measures,
  checked equal to the full run's p99 here). Both give the same start
  times (checked: the p99 lateness agrees to 1e-9 s), for one server
  (ours: the inline executor) and for four (ours: the simulated pool).
* ``sweep``: one sweep's wall time serially, on a process pool of 2 (started
  for the call, as ``run(workers=2)`` does) and on a 2-worker ``LocalCluster``
  (started beforehand; its start-up is reported apart): speed-up and
  efficiency (speed-up / 2).
* ``growth``: how the wall time grows with the number of runs (fixed size)
  and with the events per run (fixed count), serially, with a least-squares
  line: a fixed cost per run plus a cost per event.
* ``startup``: a process pool of 2's time to its first result: spawn,
  forkserver, forkserver with the lab's preload (each in a fresh interpreter).
* ``steps``: what counting the queue's steps costs (``count_steps=True``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from tempsched_lab.lab import Experiment, exponential, poisson, simulate  # noqa: E402
from tempsched_lab.lab.metrics import run_metrics  # noqa: E402

MEAN_RUN = 0.0001  # 0.1 ms runs at 5,000 tasks/s: one server busy half the time
#: (servers, the lab's executor, mean run): one server at half load, four at three quarters
EVENT_CASES = (
    (1, {"executor": "inline"}, 0.0001),
    (4, {"executor": "pool", "max_workers": 4}, 0.0006),
)


def load() -> float:
    return os.getloadavg()[0]


def workload(
    rate: float = 5_000.0, horizon: float = 2.0, seed: int = 1, mean: float = MEAN_RUN
) -> Any:
    return poisson(rate, horizon, seed=seed, duration=exponential(mean), lead=exponential(0.02))


# -- events per second: ours against SimPy -----------------------------------------------------


def simpy_run(w: Any, servers: int) -> tuple[list[tuple[Any, ...]], float]:
    """The workload in SimPy, written by hand: a process per request, a Resource as the server.

    Returns the hand-written log (4 rows per request) and the wall seconds.
    """
    import simpy

    frame = w.frame
    submit = frame["submit"].tolist()
    due = frame["due"].tolist()
    duration = frame["duration"].tolist()
    started = time.perf_counter()
    env = simpy.Environment()
    server = simpy.Resource(env, capacity=servers)
    log: list[tuple[Any, ...]] = []
    append = log.append

    def request(i: int) -> Any:
        yield env.timeout(submit[i])
        append((env.now, "schedule", i, due[i]))
        yield env.timeout(due[i] - env.now)
        append((env.now, "dispatch", i, due[i]))
        with server.request() as turn:
            yield turn
            append((env.now, "start", i, due[i]))
            yield env.timeout(duration[i])
            append((env.now, "finish", i, due[i]))

    for i in range(len(submit)):
        env.process(request(i))
    env.run()
    return log, time.perf_counter() - started


def simpy_measures(log: list[tuple[Any, ...]]) -> dict[str, float]:
    starts = np.array([(t, d) for t, kind, _, d in log if kind == "start"])
    lateness = starts[:, 0] - starts[:, 1]
    return {
        "runs": float(len(lateness)),
        "lateness_p50": float(np.quantile(lateness, 0.5)),
        "lateness_p99": float(np.quantile(lateness, 0.99)),
        "lateness_max": float(lateness.max()),
    }


def bench_events(repeats: int) -> dict[str, Any]:
    out: dict[str, Any] = {"cases": {}}
    for servers, config, mean in EVENT_CASES:
        w = workload(mean=mean)
        out["requests"], out["workload"] = len(w), w.describe()
        samples: dict[str, list[float]] = {}
        rows = 0
        check: dict[str, float] = {}
        for _ in range(repeats):
            order = [
                "lab run",
                "lab run, metrics only",
                "simulate, log on",
                "simulate, log off",
                "SimPy + log",
                "SimPy + log + measures",
            ]
            for name in order:
                samples.setdefault(name, [])
                if name == "lab run":
                    t = time.perf_counter()
                    sim = simulate(w, **config)
                    m = run_metrics(sim.frame)
                    wall = time.perf_counter() - t
                    rows = len(sim.frame)
                    check["ours_p99"] = m["lateness_p99"]
                    ours_starts = np.sort(sim.frame.query("kind == 'start'")["t"].to_numpy())
                elif name == "lab run, metrics only":
                    t = time.perf_counter()
                    m = simulate(w, record="metrics", **config).metrics()
                    wall = time.perf_counter() - t
                    check["metrics_only_p99"] = m["lateness_p99"]
                elif name == "simulate, log on":
                    wall = simulate(w, **config).sim_wall
                elif name == "simulate, log off":
                    wall = simulate(w, log=False, **config).sim_wall
                elif name == "SimPy + log":
                    log, wall = simpy_run(w, servers)
                else:
                    t = time.perf_counter()
                    log, _ = simpy_run(w, servers)
                    check["simpy_p99"] = simpy_measures(log)["lateness_p99"]
                    check["simpy_rows"] = len(log)
                    wall = time.perf_counter() - t
                    simpy_starts = np.sort([row[0] for row in log if row[1] == "start"])
                samples[name].append(wall)
        # the same model: every run starts at the same time in both (float noise aside)
        assert len(ours_starts) == len(simpy_starts) == len(w)
        assert np.abs(ours_starts - simpy_starts).max() < 1e-9, check
        assert abs(check["ours_p99"] - check["simpy_p99"]) < 1e-9, check
        assert check["metrics_only_p99"] == check["ours_p99"], check
        ours_rows_per_request = rows / len(w)
        medians = {k: statistics.median(v) for k, v in samples.items()}
        out["cases"][f"{servers} server(s)"] = {
            "config": config,
            "mean_run_s": mean,
            "load_per_server": 5_000.0 * mean / servers,
            "log_rows": rows,
            "simpy_rows": check["simpy_rows"],
            "rows_per_request": ours_rows_per_request,
            "p99_ours": check["ours_p99"],
            "p99_simpy": check["simpy_p99"],
            "median_s": medians,
            "events_per_s": {k: check["simpy_rows"] / v for k, v in medians.items()},
            "vs_simpy_measures": {
                k: v / medians["SimPy + log + measures"] for k, v in medians.items()
            },
            "samples": samples,
            "load": load(),
        }
    return out


# -- sweeps on three engines ------------------------------------------------------------------


def sweep(rate: float = 5_000.0, horizon: float = 2.0, repeats: int = 2) -> Experiment:
    return Experiment(
        poisson,
        grid={"queue": ["sorteddict", "heap", "wheel"], "max_workers": [1, 2, 4]},
        fixed={
            "executor": "pool",
            "rate": rate,
            "horizon": horizon,
            "duration": exponential(MEAN_RUN),
            "lead": exponential(0.02),
        },
        repeats=repeats,
        seed=7,
    )


def bench_sweep(repeats: int) -> dict[str, Any]:
    from distributed import Client, LocalCluster

    t = time.perf_counter()
    cluster = LocalCluster(
        n_workers=2,
        processes=True,
        threads_per_worker=1,
        host="127.0.0.1",
        dashboard_address=":0",
        silence_logs=logging.ERROR,
    )
    client = Client(cluster)
    client.wait_for_workers(2, timeout=60)
    cluster_start = time.perf_counter() - t
    sample = sweep()
    samples: dict[str, list[float]] = {
        "serial": [],
        "process pool of 2": [],
        "LocalCluster of 2": [],
    }
    loads: list[float] = []
    reference = None
    try:
        for _ in range(repeats):
            for name in list(samples):
                e = sweep()
                t = time.perf_counter()
                if name == "serial":
                    results = e.run(progress=None)
                elif name == "process pool of 2":
                    results = e.run(workers=2, progress=None)
                else:
                    results = e.run(client, progress=None)
                samples[name].append(time.perf_counter() - t)
                loads.append(load())
                rows = results.drop(columns="wall")
                if reference is None:
                    reference = rows
                assert rows.equals(reference), name
    finally:
        client.close()
        cluster.close()
    medians = {k: statistics.median(v) for k, v in samples.items()}
    serial = medians["serial"]
    assert reference is not None
    return {
        "runs": len(sample.runs),
        "events": int(reference["events"].sum()),
        "cluster_start_s": cluster_start,
        "median_s": medians,
        "speedup": {k: serial / v for k, v in medians.items()},
        "efficiency": {k: serial / v / (1 if k == "serial" else 2) for k, v in medians.items()},
        "samples": samples,
        "load": loads,
    }


# -- growth -------------------------------------------------------------------------------------


def bench_growth(repeats: int, quick: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"by_runs": [], "by_events": []}
    for runs in (4, 8, 16) if quick else (4, 8, 16, 32):
        walls = []
        for _ in range(repeats):
            e = Experiment(
                poisson,
                grid={"queue": ["sorteddict"]},
                fixed={"rate": 2_000.0, "horizon": 0.25, "duration": exponential(MEAN_RUN)},
                repeats=runs,
                seed=3,
            )
            t = time.perf_counter()
            r = e.run(progress=None)
            walls.append(time.perf_counter() - t)
        out["by_runs"].append(
            {
                "runs": runs,
                "events": int(r["events"].sum()),
                "wall_s": statistics.median(walls),
                "load": load(),
            }
        )
    for horizon in (0.25, 1.0, 4.0) if quick else (0.25, 1.0, 4.0, 16.0):
        walls = []
        for _ in range(repeats):
            e = Experiment(
                poisson,
                grid={"queue": ["sorteddict"]},
                fixed={"rate": 2_000.0, "horizon": horizon, "duration": exponential(MEAN_RUN)},
                repeats=4,
                seed=3,
            )
            t = time.perf_counter()
            r = e.run(progress=None)
            walls.append(time.perf_counter() - t)
        out["by_events"].append(
            {
                "events_per_run": float(r["events"].mean()),
                "runs": 4,
                "wall_s": statistics.median(walls),
                "load": load(),
            }
        )
    x = np.array([row["events_per_run"] for row in out["by_events"]])
    y = np.array([row["wall_s"] / row["runs"] for row in out["by_events"]])
    slope, intercept = np.polyfit(x, y, 1)
    out["fit_per_run"] = {
        "fixed_s": float(intercept),
        "per_event_us": float(slope * 1e6),
        "events_per_s": float(1 / slope),
    }
    return out


# -- process pool start-up -------------------------------------------------------------------------

_STARTUP = r"""
import multiprocessing, sys, time
from concurrent.futures import ProcessPoolExecutor
mode = sys.argv[1]
t = time.perf_counter()
if mode == "lab (forkserver + preload)":
    from tempsched_lab.lab.backends import process_pool
    pool = process_pool(2)
else:
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context(mode))
from tempsched_lab.lab import bursts
from tempsched_lab.lab.backends import RunTask, _pickled, execute_pickled
task = RunTask(0, bursts, {"size": 2, "every": 1.0, "horizon": 1.0}, {}, seed=5)
[f.result() for f in [pool.submit(execute_pickled, _pickled(task)) for _ in range(4)]]
print(time.perf_counter() - t)
pool.shutdown()
"""


def bench_startup(repeats: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    samples: dict[str, list[float]] = {
        "spawn": [],
        "forkserver": [],
        "lab (forkserver + preload)": [],
    }
    for _ in range(repeats):
        for mode in samples:
            done = subprocess.run(
                [sys.executable, "-c", _STARTUP, mode],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            samples[mode].append(float(done.stdout.strip().splitlines()[-1]))
    return {
        "median_s": {k: statistics.median(v) for k, v in samples.items()},
        "samples": samples,
        "load": load(),
    }


def bench_steps(repeats: int) -> dict[str, Any]:
    w = workload(horizon=1.0)
    walls: dict[str, list[float]] = {"off": [], "on": []}
    for _ in range(repeats):
        for mode in walls:
            t = time.perf_counter()
            simulate(w, queue="heap", count_steps=mode == "on")
            walls[mode].append(time.perf_counter() - t)
    medians = {k: statistics.median(v) for k, v in walls.items()}
    return {"median_s": medians, "slowdown": medians["on"] / medians["off"], "load": load()}


# -- report ---------------------------------------------------------------------------------------


def report(results: dict[str, Any]) -> str:
    lines: list[str] = []
    events = results.get("events")
    if events:
        lines.append(f"events: {events['workload']}")
        for case, data in events["cases"].items():
            lines.append(
                f"  {case} at load {data['load_per_server']:.2f} per server ("
                f"{data['log_rows']:,} log rows, SimPy {data['simpy_rows']:,}; "
                f"p99 ours {data['p99_ours'] * 1e3:.4f} ms = SimPy "
                f"{data['p99_simpy'] * 1e3:.4f} ms)"
            )
            lines.append("  | variant | median s | events/s | / SimPy + log + measures |")
            lines.append("  |---|---|---|---|")
            for name, wall in data["median_s"].items():
                lines.append(
                    f"  | {name} | {wall:.3f} | {data['events_per_s'][name]:,.0f} | "
                    f"{data['vs_simpy_measures'][name]:.2f}x |"
                )
    sweep_data = results.get("sweep")
    if sweep_data:
        lines.append(
            f"sweep: {sweep_data['runs']} runs, {sweep_data['events']:,} events; "
            f"cluster start {sweep_data['cluster_start_s']:.1f} s"
        )
        lines.append("  | engine | median s | speed-up | efficiency |")
        lines.append("  |---|---|---|---|")
        for name, wall in sweep_data["median_s"].items():
            lines.append(
                f"  | {name} | {wall:.2f} | {sweep_data['speedup'][name]:.2f}x | "
                f"{sweep_data['efficiency'][name]:.0%} |"
            )
    growth = results.get("growth")
    if growth:
        lines.append("growth, by runs:")
        for row in growth["by_runs"]:
            lines.append(f"  {row['runs']} runs ({row['events']:,} events): {row['wall_s']:.2f} s")
        lines.append("growth, by events per run (4 runs):")
        for row in growth["by_events"]:
            lines.append(f"  {row['events_per_run']:,.0f} events/run: {row['wall_s']:.2f} s")
        fit = growth["fit_per_run"]
        lines.append(
            f"  fit: {fit['fixed_s'] * 1e3:.1f} ms per run + {fit['per_event_us']:.2f} us "
            f"per event ({fit['events_per_s']:,.0f} events/s)"
        )
    startup = results.get("startup")
    if startup:
        lines.append(
            "pool of 2, first 4 results: "
            + ", ".join(f"{k} {v:.2f} s" for k, v in startup["median_s"].items())
        )
    steps = results.get("steps")
    if steps:
        lines.append(
            f"count_steps: {steps['median_s']['off']:.3f} s -> "
            f"{steps['median_s']['on']:.3f} s ({steps['slowdown']:.1f}x)"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="events,sweep,growth,startup,steps")
    parser.add_argument("--quick", action="store_true", help="fewer repeats and sizes")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    repeats = 2 if args.quick else args.repeats
    only = set(args.only.split(","))
    results: dict[str, Any] = {
        "meta": {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "load_start": load(),
            "repeats": repeats,
            "when": time.strftime("%Y-%m-%d %H:%M"),
        },
    }
    sections = {
        "events": lambda: bench_events(repeats),
        "sweep": lambda: bench_sweep(max(1, repeats // 2 + 1)),
        "growth": lambda: bench_growth(max(1, repeats // 2), args.quick),
        "startup": lambda: bench_startup(max(1, repeats // 2 + 1)),
        "steps": lambda: bench_steps(repeats),
    }
    for name, run in sections.items():
        if name in only:
            print(f"[{name}] ...", file=sys.stderr, flush=True)
            results[name] = run()
    results["meta"]["load_end"] = load()
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
