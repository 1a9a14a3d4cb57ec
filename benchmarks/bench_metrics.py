"""What ``GET /v1/metrics`` costs: ``schedule()`` throughput scraped and not, and a scrape's cost.

Usage::

    python benchmarks/bench_metrics.py [--rounds 10] [--every 0.25] [--json out.json]

* ``throughput``: a served scheduler in a second process (127.0.0.1); in it, bursts of
  65,536 ``schedule()`` calls (log on), with no scraper, then with a scraper in this
  process asking ``/v1/metrics`` every ``--every`` seconds during the burst (0.25 s: 60
  times Prometheus's default interval of 15 s, a worst case), in ABBA order over
  ``--rounds``; the median of each side and of the rounds' ratios, and the share of the
  service's CPU time its other threads (the compactor, the server, the scrapes) took in
  the bursts (a figure the machine's load moves less than the rates);
* ``per_row``: in this process, one :class:`~tempsched_lab.serve.metrics.LogCounts` update
  over a 200,000-row log held in memory (numpy columns), and over the same rows read as
  row objects (the path of rows that are only on disk): microseconds a row.

Timings are taken on the shared 2-core machine under the load of other work: labelled so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

TOKEN = "bench-metrics-token-0123456789"
PATH = ["/v1/metrics"]

_SERVICE = """
import gc, sys, time
from tempsched_lab import Scheduler
from tempsched_lab.serve import serve
def noop(): return None
s = Scheduler()
with serve(s, token=sys.argv[1]) as server:
    print(server.url, flush=True)
    for line in sys.stdin:
        n = int(line)
        s.log.flush()  # the last round's chunk compacted: not on this round's time
        gc.collect()
        print("go", flush=True)
        began, cpu, own = time.perf_counter(), time.process_time(), time.thread_time()
        for i in range(n):
            s.schedule(noop, delay=3600.0 + i * 1e-3)
        rate = n / (time.perf_counter() - began)
        cpu, own = time.process_time() - cpu, time.thread_time() - own
        print(rate, (cpu - own) / cpu, own / n, cpu / n, flush=True)
s.shutdown(wait=False)
"""


def _scrape(url: str, stop: threading.Event, every: float, out: list[float]) -> None:
    """Ask ``PATH[0]`` every ``every`` s until ``stop`` (``--path /v1/moment``: the same
    requests without the metrics, to tell the server's cost from the counting's)."""
    import httpx

    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(timeout=60.0) as client:
        while not stop.is_set():
            began = time.perf_counter()
            response = client.get(url + PATH[0], headers=headers)
            assert response.status_code == 200, response.text
            out.append(time.perf_counter() - began)
            stop.wait(every)


def part_throughput(rounds: int, every: float, n: int = 65_536) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVICE, TOKEN],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    url = process.stdout.readline().strip()
    alone: list[float] = []
    scraped: list[float] = []
    scrapes: list[float] = []
    others: dict[bool, list[float]] = {False: [], True: []}
    own_us: dict[bool, list[float]] = {False: [], True: []}  # the scheduler thread's CPU a call
    cpu_us: dict[bool, list[float]] = {False: [], True: []}  # the whole process's CPU a call
    for round_ in range(rounds):
        # ABBA: the queue grows by n tasks each burst, so a fixed order would favour one side
        for with_scraper in (False, True) if round_ % 2 == 0 else (True, False):
            process.stdin.write(f"{n}\n")
            process.stdin.flush()
            assert process.stdout.readline().strip() == "go"
            stop = threading.Event()
            scraper = None
            if with_scraper:
                scraper = threading.Thread(target=_scrape, args=(url, stop, every, scrapes))
                scraper.start()
            rate, other, own, cpu = (float(w) for w in process.stdout.readline().split())
            others[with_scraper].append(other)
            own_us[with_scraper].append(own * 1e6)
            cpu_us[with_scraper].append(cpu * 1e6)
            stop.set()
            if scraper is not None:
                scraper.join(60)
            (scraped if with_scraper else alone).append(rate)
    process.kill()  # (its shutdown would drop the pending tasks, row by row: not measured)
    process.wait(30)
    a, w = statistics.median(alone), statistics.median(scraped)
    pairs = [w_ / a_ for a_, w_ in zip(alone, scraped, strict=True)]
    print(
        f"throughput: schedule() {a:,.0f}/s not scraped, {w:,.0f}/s scraped every {every} s "
        f"({PATH[0]}; {w / a:.3f}; median of the rounds' ratios {statistics.median(pairs):.3f}); "
        f"{len(scrapes)} scrapes, median {statistics.median(scrapes) * 1e3:.1f} ms; the "
        f"service's other threads took {statistics.median(others[True]):.1%} of its CPU in a "
        f"scraped burst, {statistics.median(others[False]):.1%} in one not scraped (medians)"
    )
    own_a, own_w = statistics.median(own_us[False]), statistics.median(own_us[True])
    cpu_a, cpu_w = statistics.median(cpu_us[False]), statistics.median(cpu_us[True])
    print(
        f"CPU a call (medians): the scheduler's thread {own_a:.2f} us not scraped, {own_w:.2f} us "
        f"scraped ({own_a / own_w:.3f}); the whole process {cpu_a:.2f} us and {cpu_w:.2f} us "
        f"({cpu_a / cpu_w:.3f}: the throughput a CPU-bound service keeps)"
    )
    return {
        "n": n,
        "every": every,
        "alone": alone,
        "scraped": scraped,
        "ratio": w / a,
        "pair_ratios": pairs,
        "scrape_s": scrapes,
        "other_threads_cpu_share": {"scraped": others[True], "not_scraped": others[False]},
        "thread_cpu_us_per_call": {"scraped": own_us[True], "not_scraped": own_us[False]},
        "process_cpu_us_per_call": {"scraped": cpu_us[True], "not_scraped": cpu_us[False]},
    }


def _noop() -> None:
    return None


def part_per_row(rows: int = 200_000) -> dict[str, Any]:
    from tempsched_lab import Scheduler, VirtualClock
    from tempsched_lab.serve.metrics import LogCounts
    from tempsched_lab.serve.reader import LogReader
    from tempsched_lab.serve.wire import row_to_json

    s = Scheduler(VirtualClock())
    s.schedule_many([(_noop, 1.0 + i * 1e-3, ()) for i in range(rows // 4)])
    s.clock.run_until_idle()
    s.log.flush()
    n = s.log.next_seq
    counts = LogCounts(LogReader(s.log))
    began = time.perf_counter()
    while counts.update():
        pass
    columns = (time.perf_counter() - began) / n
    objects = [row_to_json(r, s.log.time_origin) for r in s.log.rows()]
    by_rows = LogCounts(LogReader(s.log))
    began = time.perf_counter()
    by_rows._count(objects)
    counting = (time.perf_counter() - began) / n
    assert by_rows.kinds == counts.kinds
    print(
        f"per row: {columns * 1e6:.3f} us counted from memory's columns ({n:,} rows); "
        f"{counting * 1e6:.3f} us counting row objects (their reading not included)"
    )
    return {"rows": n, "columns_us": columns * 1e6, "row_objects_us": counting * 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--every", type=float, default=0.25)
    parser.add_argument("--parts", default="per_row,throughput")
    parser.add_argument("--path", default="/v1/metrics", help="the route the scraper asks")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    PATH[0] = args.path
    results: dict[str, Any] = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "loadavg_before": os.getloadavg(),
    }
    for part in args.parts.split(","):
        if part == "per_row":
            results["per_row"] = part_per_row()
        elif part == "throughput":
            results["throughput"] = part_throughput(args.rounds, args.every)
        else:
            raise SystemExit(f"--parts: unknown part {part!r}")
    results["loadavg_after"] = os.getloadavg()
    print(f"load average before {results['loadavg_before']}, after {results['loadavg_after']}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
