"""What serving a scheduler costs and how fast its feed is (issue 33, "Measured").

Usage::

    python benchmarks/bench_serve.py [--parts tap,latency,catchup,live,throughput,rss]
                                     [--seconds 20] [--rss-seconds 60] [--json out.json]

Parts (each a real second process for the service, 127.0.0.1, the client in this one):

* ``tap``: instructions (callgrind, ``benchmarks/instructions.py``) of ``schedule()`` and of
  a periodic task's inline runs with the log on, without and with a log tap of the kind a
  push notification would need: why the feed polls ``log.next_seq`` instead;
* ``latency``: the example service at ~1,000 rows/s (``--load 240``: 4 rows per run, plus
  its own tasks); each row's latency = the client's ``time.time()`` when its event arrives
  minus the row's ``wall`` (the service's ``time.time()`` when it recorded the row; one
  machine, one clock); p50, p99, max;
* ``catchup``: a finished 200,000-row log served from memory; one reader reads it from
  ``after=-1`` to ``closed``: the rows per second a reader takes in (its ceiling);
* ``live``: the example service at increasing loads; whether one reader stays within a
  second of the live end (its lag at the end of each stretch);
* ``throughput``: in the service process, ``schedule()`` calls per second (a burst of
  65,536, log on: one chunk a burst, compacted before the next) with no reader, then with one
  reader following live (a client that only drains the socket), in ABBA order over
  ``rounds``; the readers' share of the service's CPU time in the bursts; ``--share`` sets
  ``asgi_app(share=...)``;
* ``rss``: the example service at ~1,000 rows/s with a bounded log (``--max-log-rows
  20000``, spilled) and one reader that connects and never reads: its RSS every second.

Timings are taken on the shared 2-core machine under the load of other work: labelled so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _start(command: list[str]) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_env(),
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http://"):
        process.kill()
        raise RuntimeError(f"the service printed {url!r} instead of its URL")
    return process, url


#: the feed's readers' share of the service's interpreter while it is busy (``--share``)
SHARE = ["0.02"]


def _example(*args: str) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "tempsched_lab.serve.example", "--port", "0"]
    return _start([*command, "--share", SHARE[0], *args])


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _drain(url: str, stop: threading.Event) -> None:
    """Read the stream's bytes and nothing more, until ``stop``: a client that costs the
    machine little (the throughput part measures the service's cost, not the client's
    parsing, which on a 2-core machine shared with other work would take a core from it)."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    path = "/" + url.split("//")[1].split("/", 1)[1] if "/" in url.split("//")[1] else ""
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(f"GET {path}/v1/rows HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        sock.settimeout(0.05)  # (a held-back stream sends nothing for a while: look at stop)
        while not stop.is_set():
            try:
                if not sock.recv(1 << 16):
                    return
            except TimeoutError:
                continue


def _follow(url: str, stop: threading.Event, on_rows: Any, path: str = "/v1/rows") -> None:
    import httpx
    from httpx_sse import connect_sse

    with (
        httpx.Client(timeout=httpx.Timeout(30.0)) as client,
        connect_sse(client, "GET", url + path) as source,
    ):
        for event in source.iter_sse():
            if event.event == "rows":
                on_rows(json.loads(event.data), time.time())
            if stop.is_set() or event.event == "closed":
                return


# -- tap ----------------------------------------------------------------------------------
def part_tap(n: int = 5_000, only_reader: bool = False) -> dict[str, Any]:
    from instructions import per_op

    schedule = (
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "s = Scheduler(VirtualClock(start=1e9))\n"
        "{tap}"
        "for i in range(N): s.schedule(noop, at=1.5e9 + i)\n"
    )
    periodic = (
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "clock = VirtualClock()\n"
        "s = Scheduler(clock)\n"
        "{tap}"
        "s.schedule(noop, period=1.0)\n"
        "clock.run_until(N + 0.5)\n"
    )
    # what a push notification needs: a tap per row (it gets the row's dict) that wakes a loop
    tap = "import threading\nwake = threading.Event()\ns.log.tap(lambda row: wake.set())\n"
    # what a reader costs the service per row: read by cursor, converted, encoded (the feed's
    # own path: LogReader.read in 500-row batches, then dumps_rows), against schedule()
    reader = (
        schedule.format(tap="") + "from tempsched_lab.serve.reader import LogReader\n"
        "from tempsched_lab.serve.wire import dumps_rows\n"
        "r = LogReader(s.log)\n"
        "c = 0\n"
        "while c < s.log.next_seq:\n"
        "    rows = r.read(c).rows\n"
        "    dumps_rows(rows)\n"
        "    c = rows[-1]['seq'] + 1\n"
    )
    out: dict[str, Any] = {"n": n}
    plain = per_op(schedule.format(tap=""), n)
    read = per_op(reader, n) - plain
    out["reader_per_row"] = {"schedule": plain, "reader": read, "ratio": read / plain}
    print(f"a reader costs {read:,.0f} instructions per row; schedule() {plain:,.0f}", flush=True)
    if only_reader:
        return out
    for name, code in (("schedule", schedule), ("periodic_run", periodic)):
        plain = per_op(code.format(tap=""), n)
        tapped = per_op(code.format(tap=tap), n)
        out[name] = {"no_tap": plain, "tap": tapped, "ratio": tapped / plain}
        print(f"tap: {name}: {plain:,.0f} -> {tapped:,.0f} instructions ({tapped / plain:.2f}x)")
    return out


# -- latency ------------------------------------------------------------------------------
def part_latency(seconds: float) -> dict[str, Any]:
    process, url = _example("--load", "240", "--tick", "1.0", "--burst-every", "3600")
    latencies: list[float] = []
    received = [0]
    stop = threading.Event()
    start = time.time() + 2.0  # past the start-up

    def on_rows(rows: list[dict[str, Any]], now: float) -> None:
        received[0] += len(rows)
        latencies.extend(now - r["wall"] for r in rows if r["wall"] >= start)

    reader = threading.Thread(target=_follow, args=(url, stop, on_rows), daemon=True)
    reader.start()
    stop.wait(seconds + 2.0)
    stop.set()
    reader.join(10)
    _stop(process)
    rate = len(latencies) / seconds
    out = {
        "seconds": seconds,
        "rows": len(latencies),
        "rows_per_s": rate,
        "p50_ms": 1e3 * _percentile(latencies, 0.50),
        "p99_ms": 1e3 * _percentile(latencies, 0.99),
        "max_ms": 1e3 * max(latencies),
    }
    print(
        f"latency at {rate:,.0f} rows/s: p50 {out['p50_ms']:.1f} ms, p99 {out['p99_ms']:.1f} ms, "
        f"max {out['max_ms']:.1f} ms ({len(latencies):,} rows)"
    )
    return out


# -- catch-up -----------------------------------------------------------------------------
_FINISHED = """
import sys
from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.serve import serve
def job(i): return i
s = Scheduler(VirtualClock())
n = int(sys.argv[1]) // 4
s.schedule_many([(job, 1.0 + (i % 1000) * 0.001, (i,)) for i in range(n)])
s.clock.run_until_idle()
s.shutdown()
with serve(s, share=float(sys.argv[2])) as server:
    print(server.url, flush=True)
    print(s.log.next_seq, flush=True)
    sys.stdin.read()
"""


def part_catchup(rows: int = 200_000) -> dict[str, Any]:
    process, url = _start([sys.executable, "-c", _FINISHED, str(rows), SHARE[0]])
    assert process.stdout is not None
    total = int(process.stdout.readline())
    got = [0]
    stop = threading.Event()
    began = time.perf_counter()
    _follow(url, stop, lambda r, now: got.__setitem__(0, got[0] + len(r)), "/v1/rows?after=-1")
    elapsed = time.perf_counter() - began
    assert process.stdin is not None
    process.stdin.close()
    process.wait(30)
    out = {"rows": total, "received": got[0], "seconds": elapsed, "rows_per_s": got[0] / elapsed}
    print(f"catch-up: {got[0]:,} rows in {elapsed:.2f} s = {out['rows_per_s']:,.0f} rows/s")
    return out


# -- live ---------------------------------------------------------------------------------
def part_live(seconds: float, loads: tuple[int, ...] = (250, 1000, 2500, 5000)) -> dict[str, Any]:
    import httpx

    out: dict[str, Any] = {}
    for load in loads:
        process, url = _example("--load", str(load), "--tick", "1.0", "--burst-every", "3600")
        last = [-1]
        stop = threading.Event()

        def on_rows(rows: list[dict[str, Any]], now: float, last: list[int] = last) -> None:
            last[0] = rows[-1]["seq"]

        reader = threading.Thread(target=_follow, args=(url, stop, on_rows), daemon=True)
        reader.start()
        stop.wait(2.0)
        first = httpx.get(url + "/v1/moment", timeout=30).json()["seq"]
        began = time.perf_counter()
        stop.wait(seconds)
        end = httpx.get(url + "/v1/moment", timeout=30).json()["seq"]
        elapsed = time.perf_counter() - began
        lag = end - 1 - last[0]
        stop.set()
        reader.join(10)
        _stop(process)
        rate = (end - first) / elapsed
        out[str(load)] = {"rows_per_s": rate, "lag_rows": lag, "lag_s": lag / max(rate, 1)}
        print(f"live: load {load} runs/s = {rate:,.0f} rows/s; reader lag {lag:,} rows")
    return out


# -- scheduling throughput ------------------------------------------------------------------
_THROUGHPUT = """
import gc, sys, time
from tempsched_lab import Scheduler
from tempsched_lab.serve import serve
def noop(): return None
s = Scheduler()
with serve(s, share=float(sys.argv[1])) as server:
    print(server.url, flush=True)
    for line in sys.stdin:
        n, readers = (int(word) for word in line.split())
        while server.feed.streams != readers:  # the last round's stream is gone, or ours came
            time.sleep(0.01)
        s.log.flush()  # the last round's chunk compacted: not on this round's time
        gc.collect()
        began, cpu, own = time.perf_counter(), time.process_time(), time.thread_time()
        for i in range(n):
            s.schedule(noop, delay=3600.0 + i * 1e-3)
        print(n / (time.perf_counter() - began), flush=True)
        cpu, own = time.process_time() - cpu, time.thread_time() - own
        print(server.feed.budget.held_back, own, cpu, flush=True)
s.shutdown(wait=False)
"""


def part_throughput(rounds: int = 10, n: int = 65_536) -> dict[str, Any]:
    process, url = _start([sys.executable, "-c", _THROUGHPUT, SHARE[0]])
    assert process.stdin is not None and process.stdout is not None
    alone: list[float] = []
    watched: list[float] = []
    held: list[float] = []  # seconds the readers were held back so far (ReaderBudget)
    others: list[float] = []
    baseline: list[float] = []  # the same without a reader (the compactor, the server's loop)
    for round_ in range(rounds):
        # ABBA: the queue grows by n tasks each time, so a fixed order would always give the
        # reader the larger queue (and heap)
        for with_reader in (False, True) if round_ % 2 == 0 else (True, False):
            stop = threading.Event()
            reader = None
            if with_reader:
                reader = threading.Thread(target=_drain, args=(url, stop), daemon=True)
                reader.start()
            process.stdin.write(f"{n} {int(with_reader)}\n")
            process.stdin.flush()
            rate = float(process.stdout.readline())
            back, own, cpu = (float(w) for w in process.stdout.readline().split())
            held.append(back)
            # the other threads' share of the process's CPU time in the burst
            (others if with_reader else baseline).append((cpu - own) / cpu)
            (watched if with_reader else alone).append(rate)
            if reader is not None:
                stop.set()
                reader.join(30)
    process.kill()  # (its shutdown would drop 200,000 pending tasks, row by row: not measured)
    process.wait(30)
    a, w = statistics.median(alone), statistics.median(watched)
    out = {"n": n, "share": SHARE[0], "alone": alone, "one_reader": watched, "ratio": w / a}
    out["held_back_s"] = held[-1]
    out["reader_cpu_share"] = others  # the feed's threads' share of the process's CPU
    out["no_reader_cpu_share"] = baseline
    pairs = [w / a for a, w in zip(alone, watched, strict=True)]
    out["pair_ratios"] = pairs
    print(
        f"throughput: schedule() {a:,.0f}/s alone, {w:,.0f}/s with one reader ({w / a:.2f}; "
        f"median of the rounds' ratios {statistics.median(pairs):.2f}); the feed took "
        f"{statistics.median(others):.1%} of the process's CPU in the bursts (median; "
        f"{statistics.median(baseline):.1%} is taken by its other threads without a reader)"
    )
    return out


# -- memory with a stalled reader ----------------------------------------------------------
def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _rss_run(seconds: float, spill: str, stalled_reader: bool) -> dict[str, Any]:
    process, url = _example(
        "--load", "240", "--max-log-rows", "20000", "--spill", spill, "--burst-every", "3600"
    )
    stalled = None
    if stalled_reader:
        host, port = url.split("//")[1].split("/")[0].split(":")
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect((host, int(port)))
        request = f"GET /scheduler/v1/rows?after=-1 HTTP/1.1\r\nHost: {host}\r\n\r\n"
        stalled.sendall(request.encode())
    samples: list[tuple[float, int]] = []
    began = time.perf_counter()
    tick = threading.Event()
    while time.perf_counter() - began < seconds:
        samples.append((round(time.perf_counter() - began, 1), _rss_kb(process.pid)))
        tick.wait(1.0)
    if stalled is not None:
        stalled.close()
    _stop(process)
    values = [kb for _, kb in samples]
    half = values[len(values) // 2 :]
    return {
        "samples_kb": samples,
        "first_kb": values[0],
        "last_kb": values[-1],
        "max_kb": max(values),
        "second_half_range_kb": max(half) - min(half),
    }


def part_rss(seconds: float, spill: str) -> dict[str, Any]:
    out: dict[str, Any] = {"seconds": seconds}
    for name, stalled in (("no_reader", False), ("stalled_reader", True)):
        run = out[name] = _rss_run(seconds, f"{spill}-{name}", stalled)
        print(
            f"rss, {name.replace('_', ' ')}, over {seconds:.0f} s: {run['first_kb'] / 1024:.1f} -> "
            f"{run['last_kb'] / 1024:.1f} MB (max {run['max_kb'] / 1024:.1f} MB; the second half "
            f"spans {run['second_half_range_kb'] / 1024:.1f} MB)"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default="tap,latency,catchup,live,throughput,rss")
    # (reader: the reader's instructions per row alone; tap also counts them)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rss-seconds", type=float, default=60.0)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--share", default="0.02", help="asgi_app(share=...): the readers' share while busy"
    )
    args = parser.parse_args()
    SHARE[0] = args.share
    parts = args.parts.split(",")
    results: dict[str, Any] = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "loadavg_before": os.getloadavg(),
        "share": args.share,
    }
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for part in parts:
            if part == "tap":
                results["tap"] = part_tap()
            elif part == "reader":
                results["reader"] = part_tap(only_reader=True)
            elif part == "latency":
                results["latency"] = part_latency(args.seconds)
            elif part == "catchup":
                results["catchup"] = part_catchup()
            elif part == "live":
                results["live"] = part_live(args.seconds / 2)
            elif part == "throughput":
                results["throughput"] = part_throughput()
            elif part == "rss":
                results["rss"] = part_rss(args.rss_seconds, tmp + "/spill")
            else:
                raise SystemExit(f"--parts: unknown part {part!r}")
    results["loadavg_after"] = os.getloadavg()
    print(f"load average before {results['loadavg_before']}, after {results['loadavg_after']}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
