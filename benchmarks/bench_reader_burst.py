"""Ten readers catching up at once beside a busy service: its rows/s, and who took its CPU.

Usage::

    python benchmarks/bench_reader_burst.py [--share 0.02] [--rounds 6] [--seconds 2]
                                            [--readers 10] [--root CHECKOUT] [--json out.json]

The example service runs as a second process (``--load 5000``: a periodic task 5,000 times
a second, ~24,000 rows/s on the idle machine) until its log holds more than one catch-up
window (70,000 rows). Then, in ABBA order over ``--rounds``, stretches of ``--seconds``:

* A: no reader;
* B: ``--readers`` clients connect together at the stretch's start, each from
  ``after=-1`` (the whole log to catch up), and read the stream's bytes and nothing more
  (a client that costs the machine little), until the stretch ends.

For each stretch: the service's rows/s (``/v1/moment``'s ``seq`` at its start and end) and
the CPU time of each of the service's threads (``/proc/PID/task/*/stat``, Linux): the
scheduler's thread (the one that worked most before any reader came) and the others. The
ratio to report is B's rows/s over A's (medians, and each ABBA pair's own), and the share of
the service's CPU its other threads took in B against A. ``--root`` runs the example service
of another checkout (``git worktree add /tmp/before main``: the code before a change).

Timings on the shared 2-core machine swing with other work: the CPU split is the measure to
trust (issue 41, finding 8: the first burst cut the service to 0.07-0.09 of its rows/s).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BACKLOG = 70_000


def _cpu(pid: int) -> dict[int, float]:
    """CPU seconds (user + system) of each thread of process ``pid``."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, float] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / tick
    return out


def _seq(url: str) -> int:
    with urllib.request.urlopen(url + "/v1/moment", timeout=30) as answer:
        seq: int = json.loads(answer.read())["seq"]
        return seq


def _drain(url: str, stop: threading.Event, got: list[int]) -> None:
    """Read the stream's bytes from ``after=-1`` until ``stop`` (counted into ``got``)."""
    address, path = url.split("//")[1].split("/", 1)
    host, port = address.split(":")
    with socket.create_connection((host, int(port))) as sock:
        request = f"GET /{path}/v1/rows?after=-1 HTTP/1.1\r\nHost: {address}\r\n\r\n"
        sock.sendall(request.encode())
        sock.settimeout(0.05)
        while not stop.is_set():
            try:
                data = sock.recv(1 << 16)
            except TimeoutError:
                continue
            if not data:
                return
            got[0] += len(data)


def _stretch(
    pid: int, url: str, seconds: float, readers: int
) -> tuple[float, dict[int, float], int]:
    stop = threading.Event()
    got = [0]
    threads = [
        threading.Thread(target=_drain, args=(url, stop, got), daemon=True) for _ in range(readers)
    ]
    seq, cpu, began = _seq(url), _cpu(pid), time.monotonic()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    seq2, cpu2, ended = _seq(url), _cpu(pid), time.monotonic()
    stop.set()
    for thread in threads:
        thread.join(10)
    spent = {tid: c - cpu.get(tid, 0.0) for tid, c in cpu2.items()}
    return (seq2 - seq) / (ended - began), spent, got[0]


def run(share: str, rounds: int, seconds: float, readers: int, root: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "tempsched_lab.serve.example", "--port", "0"]
    command += ["--load", "5000", "--share", share]
    env = dict(os.environ, PYTHONPATH=str(root))
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=root
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    try:
        while _seq(url) < BACKLOG:
            time.sleep(0.2)
        before = _cpu(process.pid)
        time.sleep(1.0)
        base = {tid: c - before.get(tid, 0.0) for tid, c in _cpu(process.pid).items()}
        scheduler = max(base, key=lambda tid: base[tid])
        alone: list[float] = []
        burst: list[float] = []
        others_alone: list[float] = []
        others_burst: list[float] = []
        sent: list[int] = []
        for round_ in range(rounds):
            for with_readers in (False, True) if round_ % 2 == 0 else (True, False):
                rate, spent, got = _stretch(
                    process.pid, url, seconds, readers if with_readers else 0
                )
                total = sum(spent.values()) or 1e-9
                others = (total - spent.get(scheduler, 0.0)) / total
                (burst if with_readers else alone).append(rate)
                (others_burst if with_readers else others_alone).append(others)
                if with_readers:
                    sent.append(got)
                label = f"{readers} readers" if with_readers else "no reader"
                print(
                    f"  round {round_} {label:>10}: {rate:9,.0f} rows/s, other threads "
                    f"{others:5.1%} of its CPU ({total:.2f} s), {got:,} bytes sent",
                    flush=True,
                )
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
    a, b = statistics.median(alone), statistics.median(burst)
    pairs = [y / x for x, y in zip(alone, burst, strict=True) if x > 0]
    out = {
        "share": share,
        "root": str(root),
        "readers": readers,
        "seconds": seconds,
        "alone": alone,
        "burst": burst,
        "ratio": b / a,
        "pair_ratios": pairs,
        "first_burst_ratio": burst[0] / alone[0] if alone[0] else None,
        "others_alone": others_alone,
        "others_burst": others_burst,
        "bytes_sent": sent,
        "load": os.getloadavg(),
        "python": platform.python_version(),
    }
    print(
        f"share={share}: {a:,.0f} rows/s alone, {b:,.0f} with {readers} readers bursting "
        f"(ratio {b / a:.2f}; pairs' median {statistics.median(pairs):.2f}; the first burst "
        f"{out['first_burst_ratio']:.2f}); the other threads took "
        f"{statistics.median(others_burst):.1%} of the CPU in a burst, "
        f"{statistics.median(others_alone):.1%} without (medians); load {os.getloadavg()[0]:.1f}"
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--share", default="0.02")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--readers", type=int, default=10)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to serve from")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    out = run(args.share, args.rounds, args.seconds, args.readers, args.root.resolve())
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
