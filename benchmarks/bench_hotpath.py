"""``schedule()`` on the hot path: this checkout and an older one, side by side (issue 40).

Usage::

    git worktree add /tmp/at-07dca75 07dca75
    python benchmarks/bench_hotpath.py --before /tmp/at-07dca75 [--rounds 4] [--json out.json]

Each round runs one fresh process per checkout, in alternating order (this checkout first
in even rounds, the older one first in odd ones). A process imports ``tempsched_lab``
from its checkout, then times ``n`` calls of ``schedule(noop, at=t)`` at distinct times on
a ``VirtualClock``, log on and log off, ``reps`` times each, a fresh scheduler each time,
and keeps the best. The log's full chunks are compacted by its background thread as
usual (in the count where ``n`` fills one). Printed: calls per second, the median over
rounds of each checkout's best, and log on / log off for each.

A report, not a test: on a shared machine compare only runs of one invocation.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import tempsched_lab
from tempsched_lab import Scheduler, VirtualClock
assert tempsched_lab.__file__.startswith(sys.argv[1]), tempsched_lab.__file__
n, reps = int(sys.argv[2]), int(sys.argv[3])
def noop():
    return None
out = {}
for name, log in (("log_on", True), ("log_off", False)):
    best = float("inf")
    for _ in range(reps):
        s = Scheduler(VirtualClock(start=1e9), log=log)
        schedule = s.schedule
        t0 = time.perf_counter()
        for i in range(n):
            schedule(noop, at=1.5e9 + i)
        best = min(best, time.perf_counter() - t0)
        s.shutdown()
    out[name] = n / best
print(json.dumps(out))
"""


def run_one(checkout: Path, n: int, reps: int) -> dict[str, float]:
    """Calls per second (best of ``reps``), log on and off, in a fresh process."""
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(checkout.resolve()), str(n), str(reps)],
        capture_output=True, text=True, check=True, cwd="/", env={**os.environ, "PYTHONPATH": ""},
    )  # fmt: skip
    result: dict[str, float] = json.loads(proc.stdout)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout of the older one")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--n", type=int, default=10_000, help="schedule() calls timed")
    parser.add_argument("--reps", type=int, default=5, help="repetitions (best kept)")
    parser.add_argument("--json", type=Path, help="write every round and the medians here")
    args = parser.parse_args(argv)
    sides = {"now": ROOT, "before": args.before}
    rounds: list[dict[str, Any]] = []
    for i in range(args.rounds):
        order = ["now", "before"] if i % 2 == 0 else ["before", "now"]
        rounds.append({side: run_one(sides[side], args.n, args.reps) for side in order})
        print(f"round {i}: {rounds[-1]}", file=sys.stderr, flush=True)
    medians = {
        side: {k: statistics.median(r[side][k] for r in rounds) for k in ("log_on", "log_off")}
        for side in sides
    }
    print(f"{'':8s} {'log on':>12s} {'log off':>12s} {'on/off':>7s}   (calls/s, median of bests)")
    for side, m in medians.items():
        ratio = m["log_off"] / m["log_on"]
        print(f"{side:8s} {m['log_on']:>12,.0f} {m['log_off']:>12,.0f} {ratio:>7.2f}x")
    change = medians["now"]["log_on"] / medians["before"]["log_on"] - 1
    print(f"log on, now vs before: {change:+.1%} calls/s")
    if args.json:
        meta = {"n": args.n, "reps": args.reps, "before": str(args.before),
                "load1": os.getloadavg()[0], "cpu_count": os.cpu_count()}  # fmt: skip
        payload = {"meta": meta, "rounds": rounds, "medians": medians}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
