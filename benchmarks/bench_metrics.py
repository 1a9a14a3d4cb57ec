"""What ``GET /v1/metrics`` costs: ``schedule()`` throughput scraped and not, and a scrape's cost.

Usage::

    python benchmarks/bench_metrics.py [--rounds 10] [--every 0.25] [--seconds 4] [--json out.json]

* ``throughput``: each burst in a fresh served scheduler, a second process (127.0.0.1): it
  calls ``schedule()`` (log on, tasks an hour away) for ``--seconds`` of wall time, with no
  scraper, or with a scraper in this process asking ``/v1/metrics`` every ``--every``
  seconds from a random phase (``--seconds`` a multiple of ``--every``: every scraped burst
  is scraped ``seconds / every`` times, each scrape counting the rows since the one before);
  ABBA over ``--rounds`` (round r: not scraped first if r is even). Both sides make one
  request before the burst (the imports and the first count: a service pays them once).
  Reported: the median of each side's rate and of the rounds' ratios, CPU a call (the
  scheduler's thread, the whole process: the figure the machine's load moves less than a
  rate) and the share of the service's CPU its other threads (the compactor, the server,
  the scrapes) took. 0.25 s is 60 times Prometheus's default interval of 15 s, a worst case;
  ``--every 15 --seconds 15``: one scrape a burst, as Prometheus would;
* ``per_row``: in this process, one :class:`~tempsched_lab.serve.metrics.LogCounts` update
  over a 200,000-row log held in memory (compacted), and over the same rows read as row
  objects (the path of rows that are only on disk): microseconds a row.

Timings are taken on the shared 2-core machine under the load of other work: labelled so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
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
    seconds = float(sys.stdin.readline())
    gc.collect()
    print("go", flush=True)
    began, cpu, own = time.perf_counter(), time.process_time(), time.thread_time()
    end, n, delay = began + seconds, 0, 3600.0
    while time.perf_counter() < end:
        for _ in range(1024):
            s.schedule(noop, delay=delay)
            delay += 1e-3
        n += 1024
    rate = n / (time.perf_counter() - began)
    cpu, own = time.process_time() - cpu, time.thread_time() - own
    print(rate, (cpu - own) / cpu, own / n, cpu / n, n, flush=True)
    sys.stdin.readline()
s.shutdown(wait=False)
"""


def _scrape(url: str, stop: threading.Event, every: float, out: list[float]) -> None:
    """Ask ``PATH[0]`` every ``every`` s from a random phase until ``stop`` (``--path
    /v1/moment``: other requests, to tell the server's cost from the metrics')."""
    import httpx

    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(timeout=60.0) as client:
        due = time.perf_counter() + random.uniform(0.0, every)
        while not stop.wait(max(0.0, due - time.perf_counter())):
            began = time.perf_counter()
            response = client.get(url + PATH[0], headers=headers)
            assert response.status_code == 200, response.text
            out.append(time.perf_counter() - began)
            due += every


def _bursts(seconds: float, every: float, scraped: list[bool], scrapes: list[float]) -> list[Any]:
    """One burst in each of ``len(scraped)`` fresh services at the same time (the load of the
    machine the same for all), those marked scraped every ``every`` s: for each, [rate, other
    threads' CPU share, thread CPU a call, process CPU a call, calls]."""
    import httpx

    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _SERVICE, TOKEN],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in scraped
    ]
    stop = threading.Event()
    scrapers = []
    try:
        urls = []
        headers = {"Authorization": f"Bearer {TOKEN}"}
        for process in processes:
            assert process.stdin is not None and process.stdout is not None
            urls.append(process.stdout.readline().strip())
            assert httpx.get(urls[-1] + PATH[0], headers=headers, timeout=60).status_code == 200
        for process in processes:
            process.stdin.write(f"{seconds}\n")  # type: ignore[union-attr]
            process.stdin.flush()  # type: ignore[union-attr]
        for process, url, with_scraper in zip(processes, urls, scraped, strict=True):
            assert process.stdout.readline().strip() == "go"  # type: ignore[union-attr]
            if with_scraper:
                scrapers.append(threading.Thread(target=_scrape, args=(url, stop, every, scrapes)))
                scrapers[-1].start()
        return [
            [float(w) for w in process.stdout.readline().split()]  # type: ignore[union-attr]
            for process in processes
        ]
    finally:
        stop.set()
        for scraper in scrapers:
            scraper.join(60)
        for process in processes:
            process.kill()  # (its shutdown would drop the pending tasks one by one)
            process.wait(30)


def part_throughput(
    rounds: int, every: float, seconds: float, together: bool = False
) -> dict[str, Any]:
    sides: dict[bool, list[list[float]]] = {False: [], True: []}
    scrapes: list[float] = []
    for round_ in range(rounds):
        order = [False, True] if round_ % 2 == 0 else [True, False]
        if together:  # both services at once: the same load on both
            for with_scraper, got in zip(
                order, _bursts(seconds, every, order, scrapes), strict=True
            ):
                sides[with_scraper].append(got)
            continue
        for with_scraper in order:
            sides[with_scraper].append(_bursts(seconds, every, [with_scraper], scrapes)[0])
    alone = [g[0] for g in sides[False]]
    scraped = [g[0] for g in sides[True]]
    others = {k: [g[1] for g in v] for k, v in sides.items()}
    own_us = {k: [g[2] * 1e6 for g in v] for k, v in sides.items()}
    cpu_us = {k: [g[3] * 1e6 for g in v] for k, v in sides.items()}
    a, w = statistics.median(alone), statistics.median(scraped)
    pairs = [w_ / a_ for a_, w_ in zip(alone, scraped, strict=True)]
    cpu_pairs = [a_ / w_ for a_, w_ in zip(cpu_us[False], cpu_us[True], strict=True)]
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
        f"({cpu_a / cpu_w:.3f}: the throughput a CPU-bound service keeps; median of the rounds' "
        f"ratios {statistics.median(cpu_pairs):.3f})"
    )
    return {
        "together": together,
        "seconds": seconds,
        "every": every,
        "alone": alone,
        "scraped": scraped,
        "ratio": w / a,
        "pair_ratios": pairs,
        "process_cpu_ratio": cpu_a / cpu_w,
        "process_cpu_pair_ratios": cpu_pairs,
        "scrape_s": scrapes,
        "calls": {
            "scraped": [g[4] for g in sides[True]],
            "not_scraped": [g[4] for g in sides[False]],
        },
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
        f"per row: {columns * 1e6:.3f} us counted where memory holds it ({n:,} rows, compacted); "
        f"{counting * 1e6:.3f} us counting row objects (their reading not included)"
    )
    return {"rows": n, "columns_us": columns * 1e6, "row_objects_us": counting * 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--every", type=float, default=0.25)
    parser.add_argument("--seconds", type=float, default=4.0, help="a burst's length")
    parser.add_argument(
        "--together", action="store_true", help="both sides at once, in two services"
    )
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
            results["throughput"] = part_throughput(
                args.rounds, args.every, args.seconds, args.together
            )
        else:
            raise SystemExit(f"--parts: unknown part {part!r}")
    results["loadavg_after"] = os.getloadavg()
    print(f"load average before {results['loadavg_before']}, after {results['loadavg_after']}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
