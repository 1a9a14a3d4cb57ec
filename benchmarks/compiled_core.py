"""What would compiling the core buy? A measured experiment, not a build option.

Copies the package to a temporary directory, compiles its hot modules with
mypyc (shipped with mypy, a test dependency) and counts the speed workloads'
instructions on that copy with ``instructions.py``, next to the interpreted
package. The copy needs two changes to compile and run, made here and nowhere
else:

* classes that inherit from a builtin (``TimePoint(list)``, the exceptions) are
  marked ``@mypyc_attr(native_class=False)``: found from mypyc's own errors;
* the live-scheduler registry keeps strong references (a native class takes no
  weak references), so schedulers in the copy are never garbage-collected.

``clock.py`` stays interpreted (mypyc cannot compile ``continue`` inside
``try/finally``). The result says whether a compiled build would reach the
speed issue's targets; docs/benchmarks.md records it.

    python benchmarks/compiled_core.py --json benchmarks/results/compiled_core.json

Needs ``valgrind``, a C compiler and the ``bench`` extra; ~5 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from instructions import ROOT, measure, print_ratios

#: The modules every schedule and every virtual-time run go through.
MODULES = [
    "tempsched_lab/core/task.py",
    "tempsched_lab/core/decision.py",
    "tempsched_lab/log/eventlog.py",
    "tempsched_lab/core/queues/base.py",
    "tempsched_lab/core/queues/sorteddict.py",
    "tempsched_lab/core/scheduler.py",
]
WORKLOADS = [
    "ours_schedule_log", "ours_schedule_nolog", "ours_schedule_many_log",
    "ours_schedule_many_nolog", "ours_sim_log", "ours_sim_nolog",
]  # fmt: skip
PEERS = ["reference_schedule", "sched_enterabs", "simpy_sim"]
_BUILTIN_BASE = re.compile(r"(\S+\.py):(\d+): error: Inheriting from most builtin types")


def build(copy: Path) -> None:
    """Compile MODULES in ``copy``, marking builtin subclasses non-native as mypyc asks."""
    registry = copy / "tempsched_lab/core/registry.py"
    text = registry.read_text()
    strong = re.sub(r"^_LIVE: .*$", "_LIVE: Any = {}", text, count=1, flags=re.M)
    if strong == text:
        raise SystemExit("registry.py: no `_LIVE: ...` line to replace")
    registry.write_text(strong)
    mypyc = Path(sys.executable).with_name("mypyc")
    for _attempt in range(3):
        proc = subprocess.run(
            [str(mypyc), *MODULES], cwd=copy, capture_output=True, text=True, check=False
        )
        if proc.returncode == 0:
            return
        found = _BUILTIN_BASE.findall(proc.stdout + proc.stderr)
        if not found:
            raise SystemExit(f"mypyc failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        by_file: dict[str, list[int]] = {}
        for name, line in found:
            by_file.setdefault(name, []).append(int(line))
        for name, lines in by_file.items():
            path = copy / name
            source = path.read_text().splitlines(keepends=True)
            for line in sorted(lines, reverse=True):
                source.insert(line - 1, "@mypyc_attr(native_class=False)\n")
            source.insert(0, "from mypy_extensions import mypyc_attr\n")
            path.write_text("".join(source))
    raise SystemExit("mypyc: still failing after marking the builtin subclasses")


def check_compiled(copy: Path) -> None:
    code = "import tempsched_lab.core.scheduler as m; print(m.__file__)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=copy, capture_output=True, text=True, check=True
    ).stdout.strip()
    if not out.endswith(".so"):
        raise SystemExit(f"the copy imports interpreted code: {out}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=5000, help="operations per workload")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp)
        shutil.copytree(ROOT / "tempsched_lab", copy / "tempsched_lab")
        shutil.copy(ROOT / "pyproject.toml", copy)  # mypy's strict settings
        build(copy)
        check_compiled(copy)
        print("-- compiled core")
        compiled = measure(WORKLOADS, args.n, str(copy))
    print("-- interpreted package, and the peers")
    interpreted = measure(WORKLOADS + PEERS, args.n)
    peers = {name: interpreted[name] for name in PEERS if name in interpreted}
    print("\n== compiled core")
    targets = print_ratios({**compiled, **peers})
    print("\n== interpreted")
    print_ratios(interpreted)
    if args.json:
        payload = {"n": args.n, "modules": MODULES, "compiled": compiled,
                   "interpreted": interpreted, "targets_compiled": targets}  # fmt: skip
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
