"""Memory per pending task, measured as a side-by-side benchmark does it: RSS growth.

Usage::

    python benchmarks/bench_memory.py [--n 100000] [--runs 3] [--json out.json]

Each sample is a fresh interpreter that builds one scheduler (its worker thread
started, nothing pending), reads its resident set size (``/proc/self/statm``),
schedules ``n`` tasks far in the future with distinct arguments (``args=(i,)``),
collects garbage and reads the RSS again: (after - before) / n bytes per task.
Nothing is waited for in between (no compactor, no warm-up): what a user's
script sees. ``tracemalloc`` in the same process (a second pass, after the RSS
reading) gives the bytes Python objects hold, and the breakdown by allocation
site is printed with ``--where``.

Variants: ours with the log on and off (default queue, real clock); the log on
with numpy and pandas imported before the first reading (a script that also builds
frames: the log itself imports neither until a frame is asked for); and the
reference package ``temporal-scheduler`` (``schedule_task(..., task_args=(i,))``).
Before issue 35 the log compacted 65,536-row chunks into numpy arrays (1,096 B per
task, log on; the compaction's numpy and pandas import counted or not depending on
the timing); it now compacts 4,096-row chunks into plain columns
(``tempsched_lab/log/columns.py``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: the scheduler of the variant, made in the child: ``add(i)`` schedules task i, ``close()``
_VARIANT = r"""
import time
if "numpy imported" in VARIANT:  # what a script that builds frames has imported
    import numpy, pandas
def noop(*args):
    return None
if VARIANT.startswith("ours"):
    from tempsched_lab import Scheduler
    s = Scheduler(log="log on" in VARIANT)
    now = s.clock.now() + 1e6
    def add(i):
        s.schedule(noop, at=now + i, args=(i,))
    def close():
        s.shutdown(wait=False)
else:
    from temporal_scheduler import TemporalScheduler
    s = TemporalScheduler()
    now = time.time() + 1e6
    def add(i):
        s.schedule_task(noop, absolute_time=now + i, task_args=(i,))
    def close():
        s.shutdown(wait_until_done=False)
"""

_CHILD = r"""
import gc, json, os, sys, time
N = int(sys.argv[1]); VARIANT = sys.argv[2]
PAGE = os.sysconf("SC_PAGE_SIZE")
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE
exec(sys.argv[4])
gc.collect()
before = rss()
for i in range(N):
    add(i)
gc.collect()
after = rss()
out = {"rss_per_task": (after - before) / N}
close()
print(json.dumps(out))
"""

_TRACED = r"""
import gc, json, os, sys, time, tracemalloc
N = int(sys.argv[1]); VARIANT = sys.argv[2]; WHERE = int(sys.argv[3])
exec(sys.argv[4])
gc.collect()
tracemalloc.start(1)
first = tracemalloc.take_snapshot() if WHERE else None
before = tracemalloc.get_traced_memory()[0]
for i in range(N):
    add(i)
gc.collect()
after = tracemalloc.get_traced_memory()[0]
out = {"traced_per_task": (after - before) / N}
if WHERE:
    stats = tracemalloc.take_snapshot().compare_to(first, "lineno")[:WHERE]
    out["where"] = [[str(st.traceback), st.size_diff / N] for st in stats]
close()
print(json.dumps(out))
"""

VARIANTS = (
    "ours, log on",
    "ours, log on, numpy imported first",
    "ours, log off",
    "reference",
)


def sample(code: str, n: int, variant: str, where: int = 0) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", code, str(n), variant, str(where), _VARIANT],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--where", type=int, default=0, help="top allocation sites to show")
    parser.add_argument("--only", default=";".join(VARIANTS), help="variants, ';'-separated")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    variants = [v for v in VARIANTS if v in args.only.split(";")]
    results: dict[str, Any] = {"n": args.n, "runs": args.runs, "variants": {}}
    samples: dict[str, list[float]] = {v: [] for v in variants}
    for _ in range(args.runs):  # alternating order: one of each per round
        for v in variants:
            samples[v].append(sample(_CHILD, args.n, v)["rss_per_task"])
    print(f"RSS growth per pending task, n = {args.n:,}, {args.runs} fresh processes each")
    print("| variant | runs (B) | median | spread | tracemalloc (B) |")
    print("|---|---|---|---|---|")
    for v in variants:
        values = samples[v]
        med = statistics.median(values)
        spread = (max(values) - min(values)) / med if med else 0.0
        traced = sample(_TRACED, args.n, v, args.where)
        results["variants"][v] = {"rss": values, "median": med, "spread": spread, **traced}
        runs = ", ".join(f"{x:.0f}" for x in values)
        print(f"| {v} | {runs} | {med:.0f} | {spread:.1%} | {traced['traced_per_task']:.0f} |")
        for site, size in traced.get("where", []):
            print(f"    {size:8.1f} B  {site}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
