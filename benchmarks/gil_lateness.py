"""How late a 1 kHz periodic task starts while another thread of the same process computes.

    python benchmarks/gil_lateness.py --seconds 5

Runs a 1 kHz periodic task on the real clock (inline runs: the start is the worker's
own) for ``--seconds``, three times: alone; beside one CPU-bound Python thread at the
interpreter's switch interval (``sys.getswitchinterval()``, 5 ms by default); and
beside the same thread with the interval set to 0.5 ms. Prints the lateness of the
starts (start time minus due time) from the log. A report, not a test.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time


def noop() -> None:
    return None


def spin(stop: threading.Event) -> None:
    x = 0
    while not stop.is_set():
        for _ in range(10_000):  # pure Python: holds the GIL until the interpreter takes it
            x += 1


def measure(seconds: float, hog: bool) -> dict[str, float]:
    from tempsched_lab import Scheduler

    stop = threading.Event()
    thread = threading.Thread(target=spin, args=(stop,), daemon=True)
    if hog:
        thread.start()
    with Scheduler(executor="inline") as s:
        s.schedule(noop, delay=0.01, period=0.001, label="1 kHz")
        time.sleep(seconds)
    stop.set()
    if hog:
        thread.join()
    frame = s.log.to_frame()
    late = frame.loc[frame["kind"] == "start", "lateness"] * 1e3
    return {
        "runs": float(len(late)),
        "p50": float(late.quantile(0.5)),
        "p99": float(late.quantile(0.99)),
        "max": float(late.max()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    default = sys.getswitchinterval()
    rows = [("alone", False, default), ("a CPU-bound thread", True, default)]
    rows.append(("a CPU-bound thread", True, 0.0005))
    print(f"1 kHz periodic task, {args.seconds:g} s each; lateness of the starts in ms")
    print(f"{'beside':<20} {'switch interval':>15} {'runs':>6} {'p50':>7} {'p99':>7} {'max':>7}")
    for name, hog, interval in rows:
        sys.setswitchinterval(interval)
        try:
            r = measure(args.seconds, hog)
        finally:
            sys.setswitchinterval(default)
        print(
            f"{name:<20} {interval * 1e3:>12.1f} ms {r['runs']:>6.0f} {r['p50']:>7.3f} "
            f"{r['p99']:>7.3f} {r['max']:>7.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
