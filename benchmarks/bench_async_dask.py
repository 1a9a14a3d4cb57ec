"""Lateness on the event loop's clock vs the worker thread's, and the Dask submit hop.

Usage::

    python benchmarks/bench_async_dask.py [--repeats 5] [--skip-dask] [--json out.json]

Sections (each a report, not a test: the machine is shared and noisy; compare
rows of one run, medians over ``--repeats`` repetitions in rotating order):

* ``spread``: 200 no-op timers spread over 1 s (one every 5 ms) on a
  ``RealClock`` with its worker thread (``inline`` and ``pool`` executors) and
  on an :class:`~tempsched_lab.aio.AsyncScheduler` (``loop.call_at``, runs on the
  loop). Lateness = the ``start`` row's ``t - due``: median, p99, max, and the
  smallest (never below 0: no run starts early).
* ``burst``: 1,000 no-op timers due at one instant: how late the last one
  started (the cost of handing a due group over).
* ``dask``: 100 no-op runs, one every 20 ms, on a ``LocalCluster`` of 2 worker
  processes: the scheduler's own lateness (due -> dispatch), the hand-over
  (dispatch -> submitted) and the submit hop (submitted -> started on the
  worker), medians and p90, next to the pool's due -> start for the same plan.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import platform
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tempsched_lab import RealClock, Scheduler
from tempsched_lab.aio import AsyncScheduler


def noop(*args: object) -> None:
    return None


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def start_lateness(s: Scheduler) -> list[float]:
    frame = s.log.to_frame()
    return frame.loc[frame["kind"] == "start", "lateness"].tolist()


def plan(s: Scheduler, n: int, step: float) -> None:
    base = s.clock.now() + 0.5  # room to schedule them all before the first is due
    for i in range(n):
        s.schedule(noop, at=base + i * step, args=(i,))


def thread_case(executor: str, n: int, step: float) -> list[float]:
    with Scheduler(RealClock(), executor=executor) as s:
        plan(s, n, step)
        s.wait_idle(60)
    return start_lateness(s)


def loop_case(n: int, step: float) -> list[float]:
    async def main() -> list[float]:
        async with AsyncScheduler() as s:
            plan(s, n, step)
            await s.idle(60)
        return start_lateness(s)

    return asyncio.run(main())


CASES: dict[str, Callable[[int, float], list[float]]] = {
    "thread clock, inline": lambda n, step: thread_case("inline", n, step),
    "thread clock, pool": lambda n, step: thread_case("pool", n, step),
    "loop clock (AsyncScheduler)": loop_case,
}


def rotate(names: list[str], k: int) -> list[str]:
    return names[k % len(names) :] + names[: k % len(names)]


def spread(repeats: int) -> dict[str, dict[str, float]]:
    stats: dict[str, dict[str, list[float]]] = {name: {} for name in CASES}
    for rep in range(repeats):
        for name in rotate(list(CASES), rep):
            late = CASES[name](200, 0.005)
            for key, value in (("median", statistics.median(late)),
                               ("p99", quantile(late, 0.99)), ("max", max(late)),
                               ("min", min(late))):  # fmt: skip
                stats[name].setdefault(key, []).append(value)
    return {name: {k: statistics.median(v) for k, v in by.items()} for name, by in stats.items()}


def burst(repeats: int) -> dict[str, float]:
    out: dict[str, list[float]] = {name: [] for name in CASES}
    for rep in range(repeats):
        for name in rotate(list(CASES), rep):
            out[name].append(max(CASES[name](1000, 0.0)))
    return {name: statistics.median(v) for name, v in out.items()}


def dask_hop(repeats: int) -> dict[str, dict[str, float]]:
    from distributed import Client, LocalCluster

    from tempsched_lab.core.dask import DaskExecutor, worker_runs

    parts: dict[str, list[list[float]]] = {}
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, Client(
        cluster
    ) as client:  # fmt: skip
        client.run(__import__, "tempsched_lab.core.dask")  # warm: the first import is not the hop
        for _ in range(repeats):
            ex = DaskExecutor(client)
            with Scheduler(executor=ex) as s:
                plan(s, 100, 0.02)
                s.wait_idle(120)
            runs = worker_runs(s.log.to_frame(), ex.placements)
            for key, values in (
                ("due -> dispatch", runs["dispatched"] - runs["due"]),
                ("dispatch -> submitted", runs["submitted"] - runs["dispatched"]),
                ("submitted -> worker start (hop)", runs["hop"]),
                ("due -> worker start", runs["lateness"]),
            ):
                parts.setdefault(key, []).append(values.dropna().tolist())
        pool = [thread_case("pool", 100, 0.02) for _ in range(repeats)]
        parts["pool: due -> start (same plan)"] = pool
    return {
        key: {
            "median": statistics.median(statistics.median(v) for v in reps),
            "p90": statistics.median(quantile(v, 0.9) for v in reps),
        }
        for key, reps in parts.items()
    }


def ms(x: float) -> str:
    return f"{x * 1e3:8.3f} ms"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"python": platform.python_version(), "repeats": args.repeats}

    result["spread"] = spread(args.repeats)
    print("spread: 200 timers over 1 s, start lateness (medians of repetitions)")
    for name, st in result["spread"].items():
        print(f"  {name:<30} median {ms(st['median'])}  p99 {ms(st['p99'])}  "
              f"max {ms(st['max'])}  min {ms(st['min'])}")  # fmt: skip
    result["burst"] = burst(args.repeats)
    print("burst: 1,000 timers at one instant, the last start's lateness")
    for name, value in result["burst"].items():
        print(f"  {name:<30} {ms(value)}")
    if not args.skip_dask:
        result["dask"] = dask_hop(args.repeats)
        print("dask: 100 runs, one every 20 ms, LocalCluster of 2 processes")
        for key, st in result["dask"].items():
            print(f"  {key:<34} median {ms(st['median'])}  p90 {ms(st['p90'])}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
