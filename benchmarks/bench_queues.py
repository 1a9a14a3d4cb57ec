"""Time the three queue designs: insert, remove by ID, and draining everything due.

Usage::

    python benchmarks/bench_queues.py [--quick] [--json out.json] [--repeats 3]

For n = 10^3 ... 10^6 pending tasks (``--quick`` stops at 10^5) at distinct random
due times, each design is timed on three operations, each run three times (the
median is kept):

* ``insert``: insert the n tasks into an empty queue;
* ``remove``: remove all n by ID, in random order;
* ``drain``: pop everything, the way a scheduler's worker does it: ask
  ``next_time()``, then ``pop_due(next_time)``, until the queue is empty.

Two horizons: every due time within one revolution of the default wheel
(256 slots x 10 ms = 2.56 s), and spread over 100 revolutions (256 s).
The garbage collector is paused while timing (as :mod:`timeit` does).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tempsched_lab.core.queues import TimerQueue, TimingWheelQueue, make_queue
from tempsched_lab.core.task import Task, make_task

DESIGNS = ("sorteddict", "heap", "wheel")
OPS = ("insert", "remove", "drain")
_WHEEL = TimingWheelQueue()
REVOLUTION = _WHEEL.slots * _WHEEL.tick  # 2.56 s with the defaults
HORIZONS = {"1 revolution": REVOLUTION, "100 revolutions": 100 * REVOLUTION}


def _action() -> None:
    """The tasks' action (never run)."""


def make_tasks(n: int, horizon: float, rng: random.Random) -> list[Task]:
    """n tasks at distinct random due times in [0, horizon)."""
    dues: set[float] = set()
    while len(dues) < n:
        dues.add(rng.random() * horizon)
    ordered = list(dues)
    rng.shuffle(ordered)
    return [make_task(i, due, _action, (), None, None, None) for i, due in enumerate(ordered)]


def _fill(queue: TimerQueue, tasks: list[Task]) -> None:
    insert = queue.insert
    for task in tasks:
        insert(task)


def _remove(queue: TimerQueue, order: list[int]) -> None:
    remove = queue.remove
    for task_id in order:
        remove(task_id)


def _drain(queue: TimerQueue) -> int:
    next_time = queue.next_time
    pop_due = queue.pop_due
    calls = 0
    t = next_time()
    while t is not None:
        pop_due(t)
        calls += 1
        t = next_time()
    return calls


def _timed(fn: Callable[[], Any]) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
    finally:
        gc.enable()


def run_one(design: str, tasks: list[Task], order: list[int]) -> dict[str, float]:
    """One run of the three operations; returns seconds per operation."""
    queue = make_queue(design)
    out = {"insert": _timed(lambda: _fill(queue, tasks))}
    out["remove"] = _timed(lambda: _remove(queue, order))
    assert len(queue) == 0
    _fill(queue, tasks)
    out["drain"] = _timed(lambda: _drain(queue))
    assert len(queue) == 0
    return out


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


def fmt_ns(ns: float) -> str:
    return f"{ns / 1000:.2f} µs" if ns >= 10_000 else f"{ns:.0f} ns"


def fmt_rate(rate: float) -> str:
    return f"{rate / 1e6:.2f} M/s" if rate >= 1e6 else f"{rate / 1e3:.0f} k/s"


def table(results: list[dict[str, Any]]) -> str:
    """A Markdown table: ns/op and ops/s per design, speed relative to sorteddict."""
    by_key = {(r["horizon"], r["n"], r["op"], r["design"]): r for r in results}
    head = ["horizon", "op", "n", *DESIGNS, *(f"{d} vs sorteddict" for d in DESIGNS[1:])]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    keys = sorted(
        {(r["horizon"], r["n"], r["op"]) for r in results},
        key=lambda k: (list(HORIZONS).index(k[0]), OPS.index(k[2]), k[1]),
    )
    for horizon, n, op in keys:
        cells = [horizon, op, f"10^{len(str(n)) - 1}"]
        base = by_key[(horizon, n, op, DESIGNS[0])]["median_s"]
        for design in DESIGNS:
            r = by_key[(horizon, n, op, design)]
            cells.append(f"{fmt_ns(r['ns_per_op'])} ({fmt_rate(r['ops_per_s'])})")
        for design in DESIGNS[1:]:
            cells.append(f"×{base / by_key[(horizon, n, op, design)]['median_s']:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="stop at 10^5 tasks")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measure (median kept)")
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args(argv)

    sizes = [10**3, 10**4, 10**5] if args.quick else [10**3, 10**4, 10**5, 10**6]
    rng = random.Random(args.seed)
    results: list[dict[str, Any]] = []
    started = time.perf_counter()
    for horizon_name, horizon in HORIZONS.items():
        for n in sizes:
            tasks = make_tasks(n, horizon, rng)
            order = [task.id for task in tasks]
            rng.shuffle(order)
            runs: dict[str, list[dict[str, float]]] = {d: [] for d in DESIGNS}
            for _ in range(args.repeats):
                for design in DESIGNS:  # interleaved, so drifts in machine load hit all
                    runs[design].append(run_one(design, tasks, order))
            for design in DESIGNS:
                for op in OPS:
                    seconds = [run[op] for run in runs[design]]
                    median = statistics.median(seconds)
                    results.append(
                        {
                            "horizon": horizon_name,
                            "horizon_s": horizon,
                            "n": n,
                            "design": design,
                            "op": op,
                            "seconds": seconds,
                            "median_s": median,
                            "ns_per_op": median / n * 1e9,
                            "ops_per_s": n / median,
                        }
                    )
            print(
                f"  done: {horizon_name}, n={n} ({time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
    meta = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "machine": machine(),
        "quick": args.quick,
        "repeats": args.repeats,
        "wheel": {"slots": _WHEEL.slots, "tick": _WHEEL.tick},
        "total_s": round(time.perf_counter() - started, 1),
    }
    print(f"# bench_queues: {meta['date']}, Python {meta['python']}, {meta['machine']}")
    print(f"# median of {args.repeats} runs; ratios are speed relative to sorteddict (>1 faster)")
    print(table(results))
    if args.json is not None:
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
