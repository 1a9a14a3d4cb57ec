"""The compat facade's cost: per call (vs the core API) and at import (vs the reference).

Usage::

    python benchmarks/bench_compat.py [--repeats 9] [--instructions] [--json out.json]

Sections:

* ``per_call``: 10,000 ``schedule_task(f, absolute_time=t)`` calls vs 10,000
  core ``schedule(f, at=t)`` calls, then 10,000 ``cancel_task(id)`` vs
  ``cancel(id)``, each on a fresh scheduler on a real clock (the facade's
  wall-clock conversion included), in the same process, interleaved; medians
  of the calling thread's CPU time over ``--repeats`` rounds, in µs per call,
  and the ratios facade / core.
* ``instructions`` (``--instructions``, needs valgrind): the same per-call
  costs counted in instructions with ``benchmarks/instructions.py``, a measure
  the machine's load cannot move.
* ``import``: ``import tempsched_lab.compat``, ``import tempsched_lab`` and
  ``import temporal_scheduler`` (the reference) each in a fresh interpreter,
  median wall time of ``--imports`` runs, and which heavy modules (pandas,
  numpy, matplotlib, ipywidgets, pyarrow) each import loads.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tempsched_lab import Scheduler  # noqa: E402
from tempsched_lab.compat import TemporalScheduler  # noqa: E402
from tempsched_lab.core.executors import ThreadPerRun  # noqa: E402

N = 10_000
HEAVY = ("pandas", "numpy", "matplotlib", "ipywidgets", "pyarrow")


def noop() -> None:
    return None


# -- per call ----------------------------------------------------------------------------------
def _cpu(fn: Callable[[], None]) -> float:
    """CPU seconds of the calling thread running ``fn`` (other jobs' load moves wall time)."""
    t0 = time.thread_time()
    fn()
    return time.thread_time() - t0


def _times() -> list[float]:
    base = time.time() + 3600.0
    return [base + i for i in range(N)]


def _timed(sched: Any, add: Callable[[], None], cancel: Callable[[int], Any]) -> Any:
    """(CPU seconds of ``add()``, of N ``cancel(id)`` calls); then shuts ``sched`` down."""

    def remove() -> None:
        for i in range(N):
            cancel(i)

    out = _cpu(add), _cpu(remove)
    sched.shutdown()
    return out


def core_round() -> tuple[float, float]:
    """N core ``schedule(f, at=t)`` and ``cancel(id)`` calls."""
    s = Scheduler(executor=ThreadPerRun(daemon=False))  # the facade's executor
    schedule, times = s.schedule, _times()

    def add() -> None:  # the call written out: a wrapper would dilute the ratio
        for t in times:
            schedule(noop, at=t)

    return _timed(s, add, s.cancel)  # type: ignore[no-any-return]


def facade_round() -> tuple[float, float]:
    """N ``schedule_task(f, absolute_time=t)`` and ``cancel_task(id)`` calls."""
    ts = TemporalScheduler()
    schedule_task, times = ts.schedule_task, _times()

    def add() -> None:
        for t in times:
            schedule_task(noop, absolute_time=t)

    return _timed(ts, add, ts.cancel_task)  # type: ignore[no-any-return]


def per_call(repeats: int) -> dict[str, float]:
    core_round(), facade_round()  # warm-up
    core: list[tuple[float, float]] = []
    facade: list[tuple[float, float]] = []
    for _ in range(repeats):  # interleaved: a load spike hits both sides alike
        core.append(core_round())
        facade.append(facade_round())
    us = 1e6 / N
    out = {
        "core_schedule_us": statistics.median(c[0] for c in core) * us,
        "facade_schedule_us": statistics.median(f[0] for f in facade) * us,
        "core_cancel_us": statistics.median(c[1] for c in core) * us,
        "facade_cancel_us": statistics.median(f[1] for f in facade) * us,
    }
    # the ratio of each round's pair, then the median: steadier than a ratio of medians
    out["schedule_ratio"] = statistics.median(
        f[0] / c[0] for c, f in zip(core, facade, strict=True)
    )
    out["cancel_ratio"] = statistics.median(f[1] / c[1] for c, f in zip(core, facade, strict=True))
    return out


# -- instruction counts ------------------------------------------------------------------------
_SETUP = {
    "core": "from tempsched_lab import Scheduler\n"
    "from tempsched_lab.core.executors import ThreadPerRun\n"
    "s = Scheduler(executor=ThreadPerRun(daemon=False))\n",
    "facade": "from tempsched_lab.compat import TemporalScheduler\nts = TemporalScheduler()\n",
}
_CALLS = {
    "core": ("for i in range(N): s.schedule(noop, at=base + i)\n",
             "for i in range(N): s.cancel(i)\n"),
    "facade": ("for i in range(N): ts.schedule_task(noop, absolute_time=base + i)\n",
               "for i in range(N): ts.cancel_task(i)\n"),
}  # fmt: skip


def instructions(n: int) -> dict[str, float]:
    """Instructions per call; the process ends with ``os._exit`` so that no shutdown
    (dropping n pending tasks) is counted."""
    from instructions import per_op

    out: dict[str, float] = {}
    for side in ("core", "facade"):
        head = "import os, time\n" + _SETUP[side] + "base = time.time() + 3600.0\n"
        add, remove = _CALLS[side]
        scheduled = per_op(head + add + "os._exit(0)\n", n)
        both = per_op(head + add + remove + "os._exit(0)\n", n)
        out[f"{side}_schedule_instr"] = scheduled
        out[f"{side}_cancel_instr"] = both - scheduled
        print(f"  {side}: schedule {scheduled:,.0f}, cancel {both - scheduled:,.0f}", flush=True)
    out["schedule_ratio_instr"] = out["facade_schedule_instr"] / out["core_schedule_instr"]
    out["cancel_ratio_instr"] = out["facade_cancel_instr"] / out["core_cancel_instr"]
    return out


# -- import time -------------------------------------------------------------------------------
_IMPORT = (
    "import sys, time\n"
    "t0 = time.perf_counter()\n"
    "import {module}\n"
    "t = time.perf_counter() - t0\n"
    "print(t, ','.join(m for m in {heavy!r} if m in sys.modules))\n"
)


def import_time(module: str, runs: int) -> dict[str, Any]:
    """Median seconds to import ``module`` in a fresh interpreter, and the heavy modules loaded."""
    code = _IMPORT.format(module=module, heavy=HEAVY)
    seconds, loaded = [], ""
    for _ in range(runs):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=ROOT, check=True)  # fmt: skip
        value, _, loaded = proc.stdout.strip().partition(" ")
        seconds.append(float(value))
    return {"median_s": statistics.median(seconds), "min_s": min(seconds), "heavy": loaded}


def imports(runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for module in ("tempsched_lab.compat", "tempsched_lab", "temporal_scheduler"):
        try:
            out[module] = import_time(module, runs)
        except subprocess.CalledProcessError as exc:
            out[module] = {"error": exc.stderr[-300:]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--imports", type=int, default=15, help="fresh interpreters per import")
    parser.add_argument("--instructions", action="store_true", help="also count instructions")
    parser.add_argument("--n-instr", type=int, default=3000, help="calls per instruction count")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"python": platform.python_version(), "n": N}
    print(f"per call ({N:,} calls, median of {args.repeats} interleaved rounds, CPU time):")
    calls = per_call(args.repeats)
    results["per_call"] = calls
    for what in ("schedule", "cancel"):
        core, facade = calls[f"core_{what}_us"], calls[f"facade_{what}_us"]
        ratio = calls[f"{what}_ratio"]
        print(f"  {what:8s} core {core:6.2f} µs   facade {facade:6.2f} µs   ratio {ratio:.2f}")
    if args.instructions:
        print(f"instructions per call ({args.n_instr:,} calls, callgrind):")
        counted = instructions(args.n_instr)
        results["instructions"] = counted
        print(f"  ratios: schedule {counted['schedule_ratio_instr']:.3f}, "
              f"cancel {counted['cancel_ratio_instr']:.3f}")  # fmt: skip
    print(f"import in a fresh interpreter (median of {args.imports}):")
    results["import"] = imports(args.imports)
    for module, row in results["import"].items():
        if "error" in row:
            print(f"  {module:22s} not importable")
            continue
        heavy = row["heavy"] or "none"
        print(f"  {module:22s} {row['median_s'] * 1e3:7.1f} ms (min {row['min_s'] * 1e3:.1f} ms)"
              f"   heavy modules loaded: {heavy}")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
