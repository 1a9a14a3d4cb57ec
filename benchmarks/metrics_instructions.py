"""What a ``/v1/metrics`` scrape costs in instructions (callgrind): load cannot move it.

Usage::

    python benchmarks/metrics_instructions.py [--n 16384] [--json out.json]

Four fresh interpreters under ``valgrind --tool=callgrind``, each with a scheduler (log on)
and its :class:`~tempsched_lab.serve.metrics.LogCounts`, one scrape done first (the imports,
the first count: not counted here):

* ``base``: nothing more; ``calls``: N ``schedule()`` calls; ``scraped``: the same N calls,
  then one scrape (``exposition``: the count of the N new rows and the encoding); ``twice``:
  the same, then a second scrape with no new row (the encoding and the fixed costs alone).
  Each waits for the log's compaction at its end (``log.flush()``), so that the compactor's
  work is counted on every side.

``(calls - base) / N`` is one ``schedule()`` call; ``(scraped - calls) / N`` what one scrape
costs per row it counts, and ``twice - scraped`` a scrape's fixed part. A scrape every N calls
then costs ``(scraped - calls) / (calls - base)`` of the scheduler's instructions: the share of
throughput a CPU-bound, single-interpreter service gives up to it (its HTTP request aside:
that is measured in ``bench_metrics.py``, as CPU time).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

_CODE = """
import sys
sys.path.insert(0, {root!r})
from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.serve.metrics import LogCounts, exposition
from tempsched_lab.serve.reader import LogReader
def noop(): return None
s = Scheduler(VirtualClock(start=1e9))
counts = LogCounts(LogReader(s.log))
s.schedule(noop, at=1.4e9)
exposition(counts, None)
s.log.flush()
for i in range({calls}):
    s.schedule(noop, at=1.5e9 + i)
for _ in range({scrapes}):
    exposition(counts, None)
s.log.flush()
assert counts.cursor == (s.log.next_seq if {scrapes} else 1)
"""


def count(calls: int, scrapes: int) -> int:
    """Instructions of a fresh interpreter running the workload above."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        code = _CODE.format(root=str(ROOT), calls=calls, scrapes=scrapes)
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
             "-c", code],
            check=True,
            capture_output=True,
        )  # fmt: skip
        text = out.read_text()
        return int(re.search(r"^summary: (\d+)", text, re.M)[1])  # type: ignore[index]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=16_384)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    n = args.n
    got = {
        "base": count(0, 0),
        "calls": count(n, 0),
        "scraped": count(n, 1),
        "twice": count(n, 2),
    }
    call = (got["calls"] - got["base"]) / n
    per_row = (got["scraped"] - got["calls"]) / n
    fixed = got["twice"] - got["scraped"]
    print(
        f"n = {n:,}: schedule() {call:,.0f} instructions a call; a scrape {per_row:,.0f} a row it "
        f"counts ({per_row / call:.1%} of the call that recorded it), its fixed part "
        f"{fixed:,} (a scrape with no new row)"
    )
    if args.json is not None:
        args.json.write_text(json.dumps({"n": n, **got, "call": call, "per_row": per_row}))


if __name__ == "__main__":
    main()
