"""What a ``/v1/metrics`` scrape costs in instructions (callgrind): load cannot move it.

Usage::

    python benchmarks/metrics_instructions.py [--n 16384] [--k 20] [--json out.json]

Fresh interpreters under ``valgrind --tool=callgrind``, each with a scheduler (log on) and
its :class:`~tempsched_lab.serve.metrics.LogCounts`, one scrape and one count done first
(the imports: not counted here), then:

* ``base``: nothing more; ``calls``: N ``schedule()`` calls;
* ``scraped``: the same N calls, then one scrape (``exposition``: the count of the N new
  rows where they are, compacted or not yet, and the encoding), as a scraper meets them;
* ``recounted``: the N calls, then K counts of the whole log by fresh ``LogCounts``
  (``update`` alone, every chunk compacted): the count's cost a row, its noise divided by K;
* ``repeated``: ``scraped``, then K scrapes with nothing new (the cached answer).

Each waits for the log's compaction (``log.flush()``) after the calls (and the scrape), so
that the compactor's work is counted on every side; the order in which the compactor thread
and the main thread run still moves a total by up to ~2 million instructions, which is why
the per-row and nothing-new figures are taken K times.

``(calls - base) / N`` is one ``schedule()`` call; ``(scraped - calls) / (calls - base)``
what one scrape every N calls costs of the scheduler's instructions: the share of throughput
a CPU-bound, single-interpreter service gives up to it (its HTTP request aside: that is
measured in ``bench_metrics.py``, as CPU time).
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
reader = LogReader(s.log)
counts = LogCounts(reader)
s.schedule(noop, at=1.4e9)
exposition(counts, None)
LogCounts(reader).update()
s.log.flush()
for i in range({calls}):
    s.schedule(noop, at=1.5e9 + i)
for _ in range({scrapes}):
    exposition(counts, None)
s.log.flush()
for _ in range({recount}):
    assert LogCounts(reader).update() == s.log.next_seq
for _ in range({again}):
    exposition(counts, None)
assert counts.cursor == (s.log.next_seq if {scrapes} else 1)
"""


def count(calls: int, scrapes: int = 0, recount: int = 0, again: int = 0) -> int:
    """Instructions of a fresh interpreter running the workload above."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        code = _CODE.format(
            root=str(ROOT), calls=calls, scrapes=scrapes, recount=recount, again=again
        )
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
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    n, k = args.n, args.k
    got = {
        "base": count(0),
        "calls": count(n),
        "scraped": count(n, scrapes=1),
        "recounted": count(n, recount=k),
        "repeated": count(n, scrapes=1, again=k),
    }
    call = (got["calls"] - got["base"]) / n
    rows = n + 2  # (the first call's rows and the calls')
    per_row = (got["recounted"] - got["calls"]) / (k * rows)
    scrape = got["scraped"] - got["calls"]
    again = (got["repeated"] - got["scraped"]) / k
    print(
        f"n = {n:,}: schedule() {call:,.0f} instructions a call; the count {per_row:,.1f} a row "
        f"({per_row / call:.2%} of the call that recorded it; compacted rows, {k} counts); one "
        f"scrape of the {n:,} new rows {scrape:,} instructions = {scrape / (call * n):.2%} of "
        f"their calls; a scrape with nothing new {again:,.0f}"
    )
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {**got, "n": n, "k": k, "call": call, "count_per_row": per_row,
                 "scrape": scrape, "scrape_share": scrape / (call * n), "nothing_new": again},
                indent=1,
            )
        )  # fmt: skip


if __name__ == "__main__":
    main()
