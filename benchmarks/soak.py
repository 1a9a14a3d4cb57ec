"""A long soak: a 1 kHz periodic task plus churn on the real clock, resident memory over time.

    python benchmarks/soak.py --seconds 60                 # log in memory, unbounded
    python benchmarks/soak.py --seconds 60 --spill DIR     # bounded log, spilled to DIR

Prints the resident set size every 5 s and, at the end, the rows recorded, the rows
read back from the spill directory, and the audit. A report, not a test.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time


def rss_mib() -> float:
    with open(f"/proc/{os.getpid()}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def noop(*args: object) -> None:
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--spill", help="spill directory (default: keep the log in memory)")
    parser.add_argument("--max-rows", type=int, default=20_000)
    args = parser.parse_args(argv)
    from tempsched_lab import Scheduler, audit, read_log

    options = {}
    spill = args.spill
    if spill == "tmp":
        spill = tempfile.mkdtemp(prefix="tempsched-soak-")
    if spill:
        options = {"max_log_rows": args.max_rows, "log_spill": spill}
    stop = threading.Event()
    samples = []
    with Scheduler(**options) as s:
        s.schedule(noop, delay=0.001, period=0.001, label="poller")

        def churn() -> None:
            while not stop.is_set():
                ids = [s.schedule(noop, delay=0.05 + 0.001 * i, args=(i,)) for i in range(20)]
                for tid in ids[::2]:
                    s.cancel(tid)
                time.sleep(0.01)

        worker = threading.Thread(target=churn)
        worker.start()
        start = time.monotonic()
        while (elapsed := time.monotonic() - start) < args.seconds:
            time.sleep(min(5.0, args.seconds - elapsed))
            at, rss, rows = time.monotonic() - start, rss_mib(), s.log.next_seq
            samples.append((at, rss, rows))
            print(f"{at:6.1f} s  RSS {rss:7.1f} MiB  rows {rows:,}", flush=True)
        stop.set()
        worker.join()
    rows = s.log.next_seq
    print(f"rows recorded: {rows:,} ({rows / args.seconds:,.0f}/s)")
    if spill:
        frame = read_log(spill)
        print(f"rows read back from {spill}: {len(frame):,}; audit: {audit(frame)}")
    if len(samples) >= 3:
        first, last = samples[1], samples[-1]
        rate = (last[1] - first[1]) / (last[0] - first[0])
        print(f"RSS growth after warm-up: {rate:+.2f} MiB/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
