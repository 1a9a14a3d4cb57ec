"""Spilling under a flood: one thread schedules and cancels as fast as it can, the log spills.

    python benchmarks/spill_backlog.py --seconds 27

The recording thread makes rows faster than one background thread can compact and
write them as segments. Prints, every 3 s, the resident set size, the rows recorded
and the rows not yet on disk (the backlog); at the end the throughput, how long
``shutdown()`` took, and whether the directory reads back every row. A report, not
a test (``tests/test_spill.py`` holds the tests).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from soak import noop, rss_mib


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=27.0)
    parser.add_argument("--max-rows", type=int, default=20_000)
    args = parser.parse_args(argv)
    from tempsched_lab import Scheduler, read_log

    spill = tempfile.mkdtemp(prefix="tempsched-flood-")
    stop = threading.Event()
    s = Scheduler(max_log_rows=args.max_rows, log_spill=spill)
    writer = s.log._spill.writer  # type: ignore[union-attr]

    def flood() -> None:
        at = s.clock.now() + 3600.0
        i = 0
        while not stop.is_set():
            tid = s.schedule(noop, at=at + i * 1e-3)
            s.cancel(tid)
            i += 1

    thread = threading.Thread(target=flood)
    start = time.monotonic()
    thread.start()
    peak = 0.0
    while (elapsed := time.monotonic() - start) < args.seconds:
        time.sleep(min(3.0, args.seconds - elapsed))
        rows = s.log.next_seq
        rss = rss_mib()
        peak = max(peak, rss)
        print(
            f"{time.monotonic() - start:5.1f} s  RSS {rss:6.1f} MiB  rows {rows:>10,}  "
            f"not on disk {rows - writer.rows:>10,}",
            flush=True,
        )
    stop.set()
    thread.join()
    took = time.monotonic() - start
    rows = s.log.next_seq
    t0 = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s.shutdown()
    shut = time.monotonic() - t0
    print(
        f"recorded {rows:,} rows in {took:.1f} s: {rows / took:,.0f} rows/s; "
        f"peak RSS {peak:.0f} MiB"
    )
    print(f"shutdown() took {shut:.1f} s; warnings: {[str(w.message)[:100] for w in caught]}")
    try:
        back = read_log(spill)
    except Exception as exc:  # an incomplete directory must say so
        print(f"read_log: {type(exc).__name__}: {str(exc)[:200]}")
    else:
        print(f"read_log: {len(back):,} of {s.log.next_seq:,} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
