"""Throughput and size of event-log files: CSV, Parquet and spill segments, for a 1M-row log.

Usage::

    python benchmarks/bench_logfiles.py [--rows 1000000] [--repeats 3] [--chunk 65536]
                                        [--dir /tmp] [--json out.json]

The log (built on a VirtualClock, not timed): ``rows/4`` one-shot tasks at
random times with 7 labels (schedule, dispatch, start, finish rows), 1 % of
them failing (error rows with a traceback), one periodic task.

Timed, each the median of ``--repeats`` runs:

* ``write_log(frame, path)`` and ``read_log(path)`` for CSV and Parquet, with
  ``fsync`` on (the default) and off;
* format 1, for the ratio: plain pandas (``to_csv``/``to_parquet``) and reading
  back with ``read_csv``/``read_parquet`` plus ``normalize_frame``, as the
  previous ``write_frame``/``read_log`` did (no atomic rename, no checks);
* spilling: ``SegmentWriter.write`` of ``--chunk``-row chunks (each call's
  latency: the time a background spill thread is busy per chunk), then
  ``read_log(directory)``.

Reported: seconds, rows/s, bytes per row on disk, and format 2 / format 1 ratios.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.log.files import SegmentWriter, normalize_frame, read_log, write_log
from tempsched_lab.log.files.normalize import STORED, TEXT_COLUMNS


def _noop(*args: Any) -> None:
    """The tasks' action."""


def _fail(i: int) -> None:
    raise ValueError(f"task {i} failed")


def build_log(rows: int, seed: int = 1) -> pd.DataFrame:
    """About ``rows`` rows of a realistic mix (see the module docstring)."""
    rng = random.Random(seed)
    clock = VirtualClock()
    s = Scheduler(clock)
    s.schedule(_noop, at=0.5, period=1.0, label="heartbeat")
    for i in range(rows // 4):
        action = _fail if i % 100 == 0 else _noop
        s.schedule(action, at=round(rng.uniform(1, 1000), 3), args=(i,), label=f"job {i % 7}")
    clock.run_until(1000.0)
    s.shutdown()
    return s.log.to_frame()


def seconds(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleaved(variants: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Median seconds of each variant, run in turn within every repeat.

    On a shared machine the load drifts by 2x over a minute; running the variants
    side by side keeps their ratios honest even when the absolute times move.
    """
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, fn in variants.items():
            times[name].append(seconds(fn))
    return {name: statistics.median(values) for name, values in times.items()}


def files(frame: pd.DataFrame, directory: Path, repeats: int) -> list[dict[str, Any]]:
    """write_log/read_log per format, fsync on and off, against plain pandas."""
    stored = frame[list(STORED)]
    text = {name: object for name in (*TEXT_COLUMNS, "woke")}  # as format 1's read_log did
    format1 = {  # format 1: what write_frame/read_log did before format 2
        "csv": (
            lambda p: stored.to_csv(p, index=False),
            lambda p: normalize_frame(
                pd.read_csv(p, keep_default_na=False, na_values=[""], dtype=text)
            ),
        ),
        "parquet": (
            lambda p: stored.to_parquet(p, index=False),
            lambda p: normalize_frame(pd.read_parquet(p)),
        ),
    }
    results = []
    for fmt, (format1_write, format1_read) in format1.items():
        path = directory / f"log.{fmt}"
        old = directory / f"plain.{fmt}"
        med = interleaved(
            {
                "write_s": lambda p=path: write_log(frame, p),
                "write_nosync_s": lambda p=path: write_log(frame, p, fsync=False),
                "format1_write_s": lambda p=old, w=format1_write: w(p),
                "read_s": lambda p=path: read_log(p),
                "format1_read_s": lambda p=old, r=format1_read: r(p),
            },
            repeats,
        )
        row = {
            "format": fmt,
            "rows": len(frame),
            **med,
            "bytes_per_row": path.stat().st_size / len(frame),
            "format1_bytes_per_row": old.stat().st_size / len(frame),
        }
        results.append(row)
        print(
            f"{fmt:<8} write {row['write_s']:6.2f} s ({len(frame) / row['write_s']:>9,.0f} rows/s; "
            f"{row['write_nosync_s']:.2f} s without fsync)  read {row['read_s']:6.2f} s "
            f"({len(frame) / row['read_s']:>9,.0f} rows/s)  {row['bytes_per_row']:6.1f} B/row\n"
            f"{'':<8} format 1: write {row['format1_write_s']:.2f} s, read "
            f"{row['format1_read_s']:.2f} s, {row['format1_bytes_per_row']:.1f} B/row; ratio 2/1 "
            f"write {row['write_s'] / row['format1_write_s']:.2f}, "
            f"read {row['read_s'] / row['format1_read_s']:.2f}"
        )
    return results


def spill(frame: pd.DataFrame, directory: Path, chunk: int, repeats: int) -> dict[str, Any]:
    """SegmentWriter.write per chunk, then read_log(directory)."""
    latencies: list[float] = []
    totals: list[float] = []
    target = directory / "spill"
    for _ in range(repeats):
        shutil.rmtree(target, ignore_errors=True)
        t0 = time.perf_counter()
        with SegmentWriter(target, time_origin=frame.attrs.get("time_origin", 0.0)) as writer:
            for start in range(0, len(frame), chunk):
                t1 = time.perf_counter()
                writer.write(frame.iloc[start : start + chunk])
                latencies.append(time.perf_counter() - t1)
        totals.append(time.perf_counter() - t0)
    size = sum(p.stat().st_size for p in target.iterdir())
    read_s = statistics.median(seconds(lambda: read_log(target)) for _ in range(repeats))
    row = {
        "rows": len(frame),
        "chunk": chunk,
        "segments": writer.segments,
        "write_s": statistics.median(totals),
        "chunk_write_median_s": statistics.median(latencies),
        "chunk_write_max_s": max(latencies),
        "read_s": read_s,
        "bytes_per_row": size / len(frame),
    }
    print(
        f"spill    {row['segments']} segments of {chunk:,} rows: write {row['write_s']:.2f} s "
        f"({len(frame) / row['write_s']:,.0f} rows/s), per chunk median "
        f"{row['chunk_write_median_s'] * 1000:.0f} ms, max {row['chunk_write_max_s'] * 1000:.0f} ms"
        f"; read_log(dir) {read_s:.2f} s ({len(frame) / read_s:,.0f} rows/s); "
        f"{row['bytes_per_row']:.1f} B/row"
    )
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=65_536)
    parser.add_argument("--dir", type=Path, default=None, help="where to write (default: /tmp)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    frame = build_log(args.rows)
    print(f"log: {len(frame):,} rows")
    directory = Path(tempfile.mkdtemp(prefix="bench_logfiles_", dir=args.dir))
    try:
        results = {
            "files": files(frame, directory, args.repeats),
            "spill": spill(frame, directory, args.chunk, args.repeats),
        }
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    if args.json:
        import pyarrow

        meta = {
            "python": platform.python_version(),
            "pandas": pd.__version__,
            "pyarrow": pyarrow.__version__,
            "machine": platform.machine(),
            "repeats": args.repeats,
        }
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
