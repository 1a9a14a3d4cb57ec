"""Instruction counts per operation under callgrind: a measure that other load cannot move.

Timed benchmarks on a shared 2-core machine swing by 2-3x with the load; the
number of instructions CPython executes for a workload does not. Each workload
runs twice in a fresh interpreter under ``valgrind --tool=callgrind`` (with 0
and with N operations); the difference divided by N is the cost of one
operation. Ratios between peers measured this way track their time ratios on a
quiet machine (checked against ``benchmarks/run.py``) and are exact enough to
enforce "no workload slower by more than 5 %".

    python benchmarks/instructions.py            # every workload, a table, the target ratios
    python benchmarks/instructions.py --only schedule,sim --n 5000
    python benchmarks/instructions.py --before /tmp/before   # every ours_* workload: now vs then

``--before DIR`` runs every ``ours_*`` workload on this checkout and on the
checkout in ``DIR`` (e.g. ``git worktree add /tmp/before c9564c5``) and prints
the change, flagging anything that costs more than 5 % more instructions. A
workload the older version cannot run (``schedule_many`` is new) is compared
with its one-by-one equivalent there, and labelled so.

A log's full chunks (4,096 rows since issue 35; 65,536 before) are compacted by a
background thread; each workload waits for it at its end, so its instructions count
whenever N is large enough to fill a chunk (at the default N = 5,000 too, since issue
35: a comparison with an older checkout counts compaction on one side only; see ``--n``).

Every workload starts after its modules are imported and one full collection of the
garbage collector (see ``_SETTLE``): counts then repeat to within a few instructions a
call from one process to the next, the compactor thread's share included.

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
from collections.abc import Callable
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
    "ours_schedule_spill_log": (
        # a spilled log (reserved.json, numbered.bin); N = 5,000 < a chunk: no segment write
        "ours: schedule(), log on, spilled to a directory",
        "import tempfile\n"
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "s = Scheduler(VirtualClock(start=1e9), log_spill=tempfile.mkdtemp())\n"
        "for i in range(N): s.schedule(noop, at=1.5e9 + i)\n",
    ),
    "ours_schedule_many_log": (
        "ours: schedule_many() of N requests, log on",
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "s = Scheduler(VirtualClock(start=1e9))\n"
        "s.schedule_many([(noop, 1.5e9 + i) for i in range(N)])\n",
    ),
    "ours_schedule_many_nolog": (
        "ours: schedule_many() of N requests, log off",
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "s = Scheduler(VirtualClock(start=1e9), log=False)\n"
        "s.schedule_many([(noop, 1.5e9 + i) for i in range(N)])\n",
    ),
    "ours_schedule_heap_log": (
        "ours: schedule(), heap design, log on",
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "s = Scheduler(VirtualClock(start=1e9), queue='heap')\n"
        "for i in range(N): s.schedule(noop, at=1.5e9 + i)\n",
    ),
    "ours_schedule_wheel_log": (
        "ours: schedule(), wheel design, log on",
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "s = Scheduler(VirtualClock(start=1e9), queue='wheel')\n"
        "for i in range(N): s.schedule(noop, at=1.5e9 + i)\n",
    ),
    "ours_cancel_log": (
        "ours: schedule() then cancel() in random order, log on (both counted)",
        "import random\n"
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "s = Scheduler(VirtualClock(start=1e9))\n"
        "ids = [s.schedule(noop, at=1.5e9 + i) for i in range(N)]\n"
        "random.Random(2).shuffle(ids)\n"
        "for tid in ids: s.cancel(tid)\n",
    ),
    "ours_cancel_nolog": (
        "ours: schedule() then cancel() in random order, log off (both counted)",
        "import random\n"
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "s = Scheduler(VirtualClock(start=1e9), log=False)\n"
        "ids = [s.schedule(noop, at=1.5e9 + i) for i in range(N)]\n"
        "random.Random(2).shuffle(ids)\n"
        "for tid in ids: s.cancel(tid)\n",
    ),
    "ours_cancel_heap_log": (
        "ours: schedule() then cancel() in random order, heap design, log on (both counted)",
        "import random\n"
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "s = Scheduler(VirtualClock(start=1e9), queue='heap')\n"
        "ids = [s.schedule(noop, at=1.5e9 + i) for i in range(N)]\n"
        "random.Random(2).shuffle(ids)\n"
        "for tid in ids: s.cancel(tid)\n",
    ),
    "ours_cancel_wheel_log": (
        "ours: schedule() then cancel() in random order, wheel design, log on (both counted)",
        "import random\n"
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "s = Scheduler(VirtualClock(start=1e9), queue='wheel')\n"
        "ids = [s.schedule(noop, at=1.5e9 + i) for i in range(N)]\n"
        "random.Random(2).shuffle(ids)\n"
        "for tid in ids: s.cancel(tid)\n",
    ),
    "ours_burst_inline_log": (
        "ours: N tasks at one instant, fired inline as one group by a VirtualClock, log on",
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "c = VirtualClock(); s = Scheduler(c, executor='inline')\n"
        "for i in range(N): s.schedule(noop, at=1.0, args=(i,))\n"
        "c.run_until_idle()\n",
    ),
    "ours_burst_inline_nolog": (
        "ours: N tasks at one instant, fired inline as one group, log off",
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "c = VirtualClock(); s = Scheduler(c, executor='inline', log=False)\n"
        "for i in range(N): s.schedule(noop, at=1.0, args=(i,))\n"
        "c.run_until_idle()\n",
    ),
    "ours_alternate_log": (
        "ours: schedule one task, then fire it (2,000 others pending), log on",
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "c = VirtualClock(); s = Scheduler(c, executor='inline')\n"
        "for i in range(2000): s.schedule(noop, at=1e6 + i)\n"
        "for i in range(N):\n"
        "    s.schedule(noop, at=c.now() + 0.5)\n"
        "    c.advance(1.0)\n",
    ),
    "ours_periodic_inline_log": (
        "ours: N runs of one periodic task fired inline (2,000 others pending), log on",
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "c = VirtualClock(); s = Scheduler(c, executor='inline')\n"
        "for i in range(2000): s.schedule(noop, at=1e6 + i)\n"
        "s.schedule(noop, at=0.5, period=1.0)\n"
        "c.advance(N)\n",
    ),
    "ours_periodic_inline_nolog": (
        "ours: N runs of one periodic task fired inline (2,000 others pending), log off",
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "c = VirtualClock(); s = Scheduler(c, executor='inline', log=False)\n"
        "for i in range(2000): s.schedule(noop, at=1e6 + i)\n"
        "s.schedule(noop, at=0.5, period=1.0)\n"
        "c.advance(N)\n",
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
    "ours_sim_many_nolog": (
        "ours: virtual-time simulation, all scheduled with schedule_many(), log off",
        "import random\n"
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "rng = random.Random(1); ts = [rng.uniform(0, 1000) for _ in range(N)]\n"
        "c = VirtualClock(); s = Scheduler(c, log=False)\n"
        "s.schedule_many([(noop, t) for t in ts])\n"
        "c.run_until_idle()\n",
    ),
    "ours_sim_metrics": (
        "ours: virtual-time simulation, metrics-only recorder (running totals, no rows)",
        "import random\n"
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "try:\n    from tempsched_lab.core.recorder import MetricsRecorder\n"
        "except ImportError:  # a checkout before the layers as folders (issue 40)\n"
        "    from tempsched_lab.recorder import MetricsRecorder\n"
        "rng = random.Random(1); ts = [rng.uniform(0, 1000) for _ in range(N)]\n"
        "c = VirtualClock(); s = Scheduler(c, recorder=MetricsRecorder)\n"
        "for t in ts: s.schedule(noop, at=t)\n"
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


def _in_function(body: str) -> str:
    """A workload running ``body`` N times in a function, with a row's usual names at hand."""
    setup = (
        "import threading, time\n"
        "class W:\n    __slots__ = ('room',)\n"
        "class R:\n    def step(self, now, task, due, dispatched):\n        pass\n"
        "def f(N, r=R(), wall=time.time, local=threading.local(), w=W(),\n"
        "      fields=[[] for _ in range(11)], kinds=bytearray()):\n"
        "    local.name = 'main'; w.room = N + 1\n"
        "    for i in range(N):\n"
    )
    return setup + "".join(f"        {line}\n" for line in body.splitlines()) + "f(N)\n"


#: The parts of one operation (``--parts``), to say what costs what. They reach into the
#: package's internals (``Task``, the queue design): a diagnosis, not an API.
PARTS: dict[str, tuple[str, str]] = {
    "part_loop_call": (
        "a Python loop calling a function with one argument (the floor of any call)",
        "for i in range(N): noop(1.5e9 + i)\n",
    ),
    "part_task_record": (
        "Task(at, action, (), None, None): the request record",
        "try:\n    from tempsched_lab.core.task import Task\n"
        "except ImportError:  # before issue 40\n    from tempsched_lab.task import Task\n"
        "for i in range(N): Task(1.5e9 + i, noop, (), None, None)\n",
    ),
    "part_lock": (
        "with lock: (a threading.Lock taken and released)",
        "import threading\nlock = threading.Lock()\nfor i in range(N):\n    with lock: pass\n",
    ),
    "part_queue_insert": (
        "Task() + SortedDictQueue.insert at distinct increasing times",
        "try:\n    from tempsched_lab.core.task import Task\n"
        "    from tempsched_lab.core.queues.sorteddict import SortedDictQueue\n"
        "except ImportError:  # before issue 40\n    from tempsched_lab.task import Task\n"
        "    from tempsched_lab.queues.sorteddict import SortedDictQueue\n"
        "q = SortedDictQueue()\n"
        "for i in range(N):\n"
        "    t = Task(1.5e9 + i, noop, (), None, None); t.id = i; q.insert(t)\n",
    ),
    "part_clock_now": (
        "VirtualClock.now()",
        "from tempsched_lab import VirtualClock\nc = VirtualClock()\nfor i in range(N): c.now()\n",
    ),
    "part_schedule_random_log": (
        "ours: schedule() at the simulation's random times, log on (no run)",
        "import random\n"
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "rng = random.Random(1); ts = [rng.uniform(0, 1000) for _ in range(N)]\n"
        "c = VirtualClock(); s = Scheduler(c)\n"
        "for t in ts: s.schedule(noop, at=t)\n",
    ),
    "part_schedule_random_nolog": (
        "ours: schedule() at the simulation's random times, log off (no run)",
        "import random\n"
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "rng = random.Random(1); ts = [rng.uniform(0, 1000) for _ in range(N)]\n"
        "c = VirtualClock(); s = Scheduler(c, log=False)\n"
        "for t in ts: s.schedule(noop, at=t)\n",
    ),
    "part_simpy_schedule": (
        "SimPy: env.timeout(t).callbacks.append(cb) only (no run)",
        "import random, simpy\n"
        "rng = random.Random(1); ts = [rng.uniform(0, 1000) for _ in range(N)]\n"
        "env = simpy.Environment()\n"
        "for t in ts: env.timeout(t).callbacks.append(noop)\n",
    ),
    # A row's fixed costs, each inside a function (local names, as in the recorder): what any
    # recorded step pays, whatever the log's storage (the floor of docs/benchmarks.md).
    "part_row_loop": ("a loop in a function (the floor of the next five)", _in_function("pass")),
    "part_row_call": (
        "a method call with four arguments (a recorder call's frame)",
        _in_function("r.step(1.0, r, 5.0, 1.0)"),
    ),
    "part_row_wall": ("time.time() (a row's wall clock)", _in_function("wall()")),
    "part_row_thread": (
        "a threading.local attribute (a row's thread name)",
        _in_function("local.name"),
    ),
    "part_row_fields": (
        "a start row's 7 fields appended flat, its kind byte and the writer's room count",
        _in_function(
            "fields[4] += (1.0, 2.0, 'main', i, 5.0, 'job', 1.0)\n"
            "kinds.append(4)\nw.room -= 1\nif w.room <= 0:\n    pass"
        ),
    ),
}

#: Differences of two workloads that isolate one part (label, minuend, subtrahend).
PART_DIFFS: list[tuple[str, str, str]] = [
    ("the log's share of schedule()", "ours_schedule_log", "ours_schedule_nolog"),
    ("schedule() beyond Task() + queue insert (log off)", "ours_schedule_nolog",
     "part_queue_insert"),
    ("queue insert alone", "part_queue_insert", "part_task_record"),
    ("firing one task, log on (simulation - its scheduling)", "ours_sim_log",
     "part_schedule_random_log"),
    ("firing one task, log off", "ours_sim_nolog", "part_schedule_random_nolog"),
    ("SimPy firing one callback (env.run share)", "simpy_sim", "part_simpy_schedule"),
    ("cancel() alone, log on", "ours_cancel_log", "ours_schedule_log"),
    ("a row's fixed cost: the recorder call's frame", "part_row_call", "part_row_loop"),
    ("a row's fixed cost: the wall clock", "part_row_wall", "part_row_loop"),
    ("a row's fixed cost: the thread's name", "part_row_thread", "part_row_loop"),
    ("a row's fixed cost: 7 fields stored flat, kind, room", "part_row_fields", "part_row_loop"),
    ("cancel() alone, log off", "ours_cancel_nolog", "ours_schedule_nolog"),
]  # fmt: skip

_PRELUDE = "import sys\nN = int(sys.argv[1])\ndef noop(*args, **kwargs):\n    return None\n"
# Before the workload runs: its modules imported and one full collection (``gc.collect()``),
# so that every count starts from the same collector state: the young generations empty and
# the imports' objects all in the oldest one, which then sets how often a full collection
# comes (when the objects promoted since grow past a quarter of it). Callgrind, n = 5,000,
# three processes each (load ~1.5): ``schedule()`` log on 29,169 / 29,169 / 29,169 and log
# off 21,066-21,070 with it; 29,037-29,064 and 21,015-21,016 without (a spread of 27 where
# a session had seen ~250, from where the compactor thread's allocations fell). Not
# ``gc.freeze()`` as well: it takes the imports out of that quarter, so full collections
# come every quarter of the *workload's* objects, which no process importing the package,
# let alone a notebook's kernel, sees: log on 30,435 and log off 22,233 (+1,266 and
# +1,167; spread 3). Both sides of ``--before`` run the same prelude (issue 40).
_SETTLE = "import gc\ngc.collect()\n"
#: ``--no-collector``: the same, then the collector off, to count a change's own
#: instructions. With it on, when full collections fall moves with the number of objects
#: allocated, so a change that allocates a few objects fewer can count a few hundred
#: instructions a call *more* (issue 40: a cheaper compaction of the first chunk, -420
#: instructions a row compacted, counted +260 a ``schedule()`` call with the collector on).
_SETTLE_NO_COLLECTOR = _SETTLE + "gc.disable()\n"
_IMPORTED = re.compile(r"^\s*(?:from|import)\s+([A-Za-z_][\w]*)", re.MULTILINE)


def _script(code: str) -> str:
    """The file callgrind runs: the prelude, the workload's top-level packages imported (each
    that exists; a checkout may lack one), one full collection, the workload, the epilogue."""
    warm = "".join(
        f"try:\n    import {name}\nexcept ImportError:\n    pass\n"
        for name in dict.fromkeys(_IMPORTED.findall(code))
    )
    return _PRELUDE + warm + _SETTLE + code + _EPILOGUE


# The log's compactor thread must finish inside the count (else what it did depends on timing).
_EPILOGUE = (
    "\nif 'tempsched_lab' in sys.modules:\n"
    "    try:\n"
    "        from tempsched_lab.log.compactor import wait_compacted\n"
    "    except ImportError:\n"
    "        try:  # a checkout before the layers as folders (issue 40)\n"
    "            from tempsched_lab.compactor import wait_compacted\n"
    "        except ImportError:  # before the compactor\n"
    "            wait_compacted = None\n"
    "    if wait_compacted is not None:\n"
    "        wait_compacted()\n"
)

#: Targets on instruction ratios: (label, numerator, denominator, ok, threshold text).
#: A speed ratio is peer / ours (> 1: ours executes fewer instructions).
TARGETS: list[tuple[str, str, str, Callable[[float], bool], str]] = [
    ("schedule, log on: reference / ours", "reference_schedule", "ours_schedule_log",
     lambda r: r >= 1.0, ">= 1.00"),
    ("bulk: sched.enterabs / schedule_many (log on)", "sched_enterabs",
     "ours_schedule_many_log", lambda r: r >= 1.0, ">= 1.00"),
    ("simulation, log on: SimPy / ours (schedule)", "simpy_sim", "ours_sim_log",
     lambda r: r >= 1.0, ">= 1.00"),
    ("simulation, log on: SimPy / ours (schedule_many)", "simpy_sim", "ours_sim_many_log",
     lambda r: r >= 1.0, ">= 1.00"),
    ("log overhead on schedule: log on / log off", "ours_schedule_log", "ours_schedule_nolog",
     lambda r: r <= 1.15, "<= 1.15"),
]  # fmt: skip

#: Other ratios worth printing (no target).
RATIOS: list[tuple[str, str, str]] = [
    ("bulk: sched.enterabs / schedule_many (log off)", "sched_enterabs",
     "ours_schedule_many_nolog"),
    ("simulation, log off: SimPy / ours (schedule)", "simpy_sim", "ours_sim_nolog"),
    ("simulation, log off: SimPy / ours (schedule_many)", "simpy_sim", "ours_sim_many_nolog"),
    ("schedule_many / schedule (log on)", "ours_schedule_many_log", "ours_schedule_log"),
]  # fmt: skip

#: What an older version runs instead of a workload it lacks (the same job, one call at a time).
ONE_BY_ONE = {
    "ours_schedule_many_log": "ours_schedule_log",
    "ours_schedule_many_nolog": "ours_schedule_nolog",
    "ours_sim_many_log": "ours_sim_log",
    "ours_sim_many_nolog": "ours_sim_nolog",
}

#: More instructions than before by more than this is flagged (issue 15: "no workload slower
#: by more than 5 %").
SLOWER = 1.05


def count(code: str, n: int, path: str | None = None) -> int:
    """Instructions (callgrind's Ir) of a fresh interpreter running ``code`` with N=n."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "workload.py"
        script.write_text(_script(code))
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


def measure(names: list[str], n: int, path: str | None = None) -> dict[str, float]:
    """Instructions per operation of each named workload (failures reported on stderr)."""
    results: dict[str, float] = {}
    for name in names:
        description, code = WORKLOADS[name]
        try:
            results[name] = per_op(code, n, path)
        except RuntimeError as exc:
            print(f"{name}: {exc}", file=sys.stderr)
            continue
        print(f"{name:26s} {results[name]:>10,.0f} instructions/op  ({description})", flush=True)
    return results


def print_ratios(results: dict[str, float]) -> list[dict[str, object]]:
    """The target ratios with PASS / MISS, then the other ratios; returns the targets."""
    out: list[dict[str, object]] = []
    print(f"\n{'ratio (instructions)':50s} {'value':>7s}  {'target':8s} verdict")
    for label, a, b, ok, shown in TARGETS:
        if a in results and b in results:
            value = results[a] / results[b]
            verdict = "PASS" if ok(value) else "MISS"
            print(f"{label:50s} {value:7.2f}  {shown:8s} {verdict}")
            out.append({"ratio": label, "value": value, "threshold": shown, "verdict": verdict})
    for label, a, b in RATIOS:
        if a in results and b in results:
            print(f"{label:50s} {results[a] / results[b]:7.2f}")
    return out


def before_after(
    names: list[str],
    n: int,
    before: str,
    now: dict[str, float] | None = None,
    then: dict[str, float] | None = None,
) -> dict[str, dict[str, object]]:
    """Every ``ours_*`` workload in ``names`` on this checkout and on ``before``; the changes.

    ``now`` / ``then``: counts already measured (same ``n``) on this checkout / on
    ``before`` (a workload that failed there is simply absent); not measured again.
    """
    ours = [name for name in names if name.startswith("ours_")]
    now = dict(now or {})
    todo = [name for name in ours if name not in now]
    print(f"-- this checkout ({ROOT}){': measuring ' + str(todo) if todo else ''}")
    now.update(measure(todo, n))
    if then is None:
        print(f"-- before ({before})")
        then = measure(ours, n, before)
    then = dict(then)
    missing = [name for name in ours if name not in then and name in ONE_BY_ONE]
    extra = sorted({ONE_BY_ONE[name] for name in missing} - set(then))
    if extra:
        print(f"-- before, the one-by-one equivalents of {missing}")
        then.update(measure(extra, n, before))
    missing = [name for name in missing if ONE_BY_ONE[name] in then]
    table: dict[str, dict[str, object]] = {}
    print(f"\n{'workload':26s} {'now':>10s} {'before':>10s} {'change':>8s}")
    for name in ours:
        if name not in now:
            continue
        base, note = then.get(name), ""
        if base is None and name in missing:
            base, note = then[ONE_BY_ONE[name]], f"before: {ONE_BY_ONE[name]} (no bulk API)"
        if base is None:
            print(f"{name:26s} {now[name]:>10,.0f} {'n/a':>10s}")
            table[name] = {"now": now[name], "before": None}
            continue
        change = now[name] / base - 1.0
        flag = "SLOWER > 5 %" if now[name] > SLOWER * base else ""
        text = f"{name:26s} {now[name]:>10,.0f} {base:>10,.0f} {change:>+8.1%}  {flag} {note}"
        print(text.rstrip())
        table[name] = {"now": now[name], "before": base, "change": change, "note": note,
                       "slower": bool(flag)}  # fmt: skip
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated workload names (substrings)")
    parser.add_argument("--n", type=int, default=5000, help="operations per workload")
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--path", help="import tempsched_lab from this checkout instead")
    parser.add_argument(
        "--before", help="compare every ours_* workload with the checkout in this directory"
    )
    parser.add_argument(
        "--no-collector",
        action="store_true",
        help="count with the garbage collector off (a change's own instructions)",
    )
    parser.add_argument(
        "--parts", action="store_true", help="also count the parts of an operation (PARTS)"
    )
    parser.add_argument(
        "--now-json", help="with --before: reuse this checkout's counts from a --json file"
    )
    parser.add_argument(
        "--before-json", help="with --before: reuse the older checkout's counts (--path --json)"
    )
    args = parser.parse_args(argv)
    if args.no_collector:
        global _SETTLE
        _SETTLE = _SETTLE_NO_COLLECTOR
    if args.parts:
        WORKLOADS.update(PARTS)
    names = list(WORKLOADS)
    if args.only:
        keep = [k.strip() for k in args.only.split(",")]
        names = [name for name in names if any(k in name for k in keep)]
    if args.before:
        known: list[dict[str, float] | None] = []
        for option, path in (("--now-json", args.now_json), ("--before-json", args.before_json)):
            if not path:
                known.append(None)
                continue
            saved = json.loads(Path(path).read_text())
            if saved.get("n") != args.n:
                parser.error(f"{option} {path}: counted with n={saved.get('n')}, not {args.n}")
            known.append(saved["per_op"])
        table = before_after(names, args.n, args.before, *known)
        if args.json:
            Path(args.json).write_text(json.dumps({"n": args.n, "before_after": table}, indent=2))
        return 0
    results = measure(names, args.n, args.path)
    targets = print_ratios(results)
    if args.parts:
        print()
        for label, a, b in PART_DIFFS:
            if a in results and b in results:
                print(f"{label:55s} {results[a] - results[b]:>10,.0f} instructions/op")
    if args.json:
        payload = {"n": args.n, "per_op": results, "targets": targets}
        Path(args.json).write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
