"""Instruction counts per operation under callgrind: a measure that other load cannot move.

Timed benchmarks on a shared 2-core machine swing by 2-3x with the load; the
number of instructions CPython executes for a workload does not. Each workload
runs twice in a fresh interpreter under ``valgrind --tool=callgrind`` (with 0
and with N operations); the difference divided by N is the cost of one
operation. Ratios between peers measured this way track their time ratios on a
quiet machine (checked against ``benchmarks/run.py``) and are exact enough to
enforce "no workload slower by more than 5 %".

    python benchmarks/instructions.py            # every workload, a table
    python benchmarks/instructions.py --only schedule,sim --n 5000

Needs ``valgrind`` (Debian: ``apt-get install valgrind``) and the ``bench`` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: name -> (description, setup code, code run N times as `for i in range(N):` body or a block)
WORKLOADS: dict[str, tuple[str, str]] = {
    "ours_schedule_log": (
        "ours: schedule(), log on, distinct times",
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "s = Scheduler(VirtualClock(start=1e9))\n"
        "for i in range(N): s.schedule(noop, at=1.5e9 + i)\n",
    ),
    "ours_schedule_nolog": (
        "ours: schedule(), log off",
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "s = Scheduler(VirtualClock(start=1e9), log=False)\n"
        "for i in range(N): s.schedule(noop, at=1.5e9 + i)\n",
    ),
    "ours_schedule_many_log": (
        "ours: schedule_many() of N requests, log on",
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "s = Scheduler(VirtualClock(start=1e9))\n"
        "s.schedule_many([(noop, 1.5e9 + i) for i in range(N)])\n",
    ),
    "ours_cancel_log": (
        "ours: cancel() in random order, log on",
        "import random\n"
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "s = Scheduler(VirtualClock(start=1e9))\n"
        "ids = [s.schedule(noop, at=1.5e9 + i) for i in range(N)]\n"
        "random.Random(2).shuffle(ids)\n"
        "import sys; sys.setprofile(None)\n"
        "for tid in ids: s.cancel(tid)\n",
    ),
    "reference_schedule": (
        "temporal-scheduler: schedule_task()",
        "import time\n"
        "from temporal_scheduler import TemporalScheduler\n"
        "ts = TemporalScheduler()\n"
        "now = time.time() + 1000\n"
        "for i in range(N): ts.schedule_task(noop, absolute_time=now + i)\n"
        "ts.shutdown(wait_until_done=False)\n",
    ),
    "sched_enterabs": (
        "stdlib sched: enterabs() in a loop",
        "import sched, time\n"
        "s = sched.scheduler(time.monotonic, time.sleep)\n"
        "for i in range(N): s.enterabs(1e9 + i, 0, noop)\n",
    ),
    "ours_sim_log": (
        "ours: virtual-time simulation (schedule all, run to the end), log on",
        "import random\n"
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "rng = random.Random(1); ts = [rng.uniform(0, 1000) for _ in range(N)]\n"
        "c = VirtualClock(); s = Scheduler(c)\n"
        "for t in ts: s.schedule(noop, at=t)\n"
        "c.run_until_idle()\n",
    ),
    "ours_sim_many_log": (
        "ours: virtual-time simulation, all scheduled with schedule_many(), log on",
        "import random\n"
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "rng = random.Random(1); ts = [rng.uniform(0, 1000) for _ in range(N)]\n"
        "c = VirtualClock(); s = Scheduler(c)\n"
        "s.schedule_many([(noop, t) for t in ts])\n"
        "c.run_until_idle()\n",
    ),
    "ours_sim_nolog": (
        "ours: virtual-time simulation, log off",
        "import random\n"
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "rng = random.Random(1); ts = [rng.uniform(0, 1000) for _ in range(N)]\n"
        "c = VirtualClock(); s = Scheduler(c, log=False)\n"
        "for t in ts: s.schedule(noop, at=t)\n"
        "c.run_until_idle()\n",
    ),
    "simpy_sim": (
        "SimPy: env.timeout(t).callbacks.append(cb); env.run()",
        "import random, simpy\n"
        "rng = random.Random(1); ts = [rng.uniform(0, 1000) for _ in range(N)]\n"
        "env = simpy.Environment()\n"
        "for t in ts: env.timeout(t).callbacks.append(noop)\n"
        "env.run()\n",
    ),
}

_PRELUDE = "import sys\nN = int(sys.argv[1])\ndef noop(*args, **kwargs):\n    return None\n"


def count(code: str, n: int, path: str | None = None) -> int:
    """Instructions (callgrind's Ir) of a fresh interpreter running ``code`` with N=n."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "workload.py"
        script.write_text(_PRELUDE + code)
        out = Path(tmp) / "callgrind.out"
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
             str(script), str(n)],
            capture_output=True, text=True, cwd=ROOT, env=_env(path),
        )  # fmt: skip
        found = re.search(r"Collected : (\d+)", proc.stderr)
        if proc.returncode != 0 or found is None:
            raise RuntimeError(f"callgrind failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return int(found.group(1))


def _env(path: str | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    if path:  # measure another checkout of the package (e.g. the previous commit)
        env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
    return env


def per_op(code: str, n: int, path: str | None = None) -> float:
    """Instructions of one operation: (count with N=n - count with N=0) / n."""
    return (count(code, n, path) - count(code, 0, path)) / n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated workload names (substrings)")
    parser.add_argument("--n", type=int, default=5000, help="operations per workload")
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--path", help="import tempsched_lab from this checkout instead")
    args = parser.parse_args(argv)
    names = list(WORKLOADS)
    if args.only:
        keep = [k.strip() for k in args.only.split(",")]
        names = [name for name in names if any(k in name for k in keep)]
    results: dict[str, float] = {}
    for name in names:
        description, code = WORKLOADS[name]
        try:
            results[name] = per_op(code, args.n, args.path)
        except RuntimeError as exc:
            print(f"{name}: {exc}", file=sys.stderr)
            continue
        print(f"{name:26s} {results[name]:>10,.0f} instructions/op  ({description})", flush=True)
    ratios = [
        ("schedule: reference / ours (log on)", "reference_schedule", "ours_schedule_log"),
        ("log overhead on schedule (on / off)", "ours_schedule_log", "ours_schedule_nolog"),
        ("bulk: sched.enterabs / schedule_many", "sched_enterabs", "ours_schedule_many_log"),
        ("simulation: SimPy / ours (log on)", "simpy_sim", "ours_sim_log"),
        ("simulation: SimPy / ours (bulk, log on)", "simpy_sim", "ours_sim_many_log"),
        ("simulation: SimPy / ours (log off)", "simpy_sim", "ours_sim_nolog"),
    ]
    for label, a, b in ratios:
        if a in results and b in results:
            print(f"{label:40s} {results[a] / results[b]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
