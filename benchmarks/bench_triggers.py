"""Cron triggers: croniter vs cronsim, the trigger's own cost, a week on a virtual clock, DST.

Usage::

    python benchmarks/bench_triggers.py [--repeats 5] [--json out.json]

Sections (times are medians of the CPU time of ``--repeats`` runs after one
warm-up; CPU time because the machine is shared):

* ``libraries``: the next 10,000 fire times of four expressions in
  Europe/Paris from 2026-01-01, with croniter (``get_next(float)``), cronsim
  (``next(it)`` on an aware datetime) and :class:`CronTrigger` (``next_times``
  and 10,000 chained ``next_after`` calls). croniter is skipped when it is not
  installed (``pip install croniter`` to compare).
* ``next_after``: one call from a cold start (new iterator) vs continuing
  from the time it just returned (what the scheduler's re-arm does), in µs.
* ``week``: every fire time of a week (chained ``next_after``) per expression,
  and a Scheduler on a VirtualClock running three cron tasks for a week (each
  re-arms itself at ``trigger.next_after(due)`` until the core takes ``trigger=``).
* ``dst``: what each library answers on the DST days the docs discuss (local
  fire times), to paste into ``docs/triggers.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import date, datetime, timedelta
from importlib import metadata
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cronsim import CronSim

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.core.triggers import CronTrigger

try:
    from croniter import croniter
except ImportError:  # optional: only for the comparison
    croniter = None

PARIS = ZoneInfo("Europe/Paris")
N = 10_000
EXPRESSIONS = ["*/15 * * * *", "0 9 * * mon-fri", "30 2 * * *", "0 0 L * *"]
WEEK_EXPRESSIONS = ["* * * * *", "*/15 * * * *", "0 * * * *", "0 9 * * mon-fri", "30 2 * * *"]
START = datetime(2026, 1, 1, tzinfo=PARIS)
DST_WEEK = datetime(2026, 3, 23, tzinfo=PARIS)  # Monday; clocks spring forward on Sunday


def median_seconds(fn: Callable[[], Any], repeats: int) -> float:
    """Median CPU seconds of ``fn`` (this process's CPU time: the machine is shared, and
    other jobs' load moves wall-clock times of single-threaded code by 2x)."""
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


# -- libraries --------------------------------------------------------------------------------
def run_croniter(expr: str) -> None:
    it = croniter(expr, START)
    for _ in range(N):
        it.get_next(float)


def run_cronsim(expr: str) -> None:
    it = CronSim(expr, START)
    for _ in range(N):
        next(it)


def run_trigger_next_times(expr: str) -> None:
    CronTrigger(expr, tz=PARIS).next_times(START.timestamp(), N)


def run_trigger_chained(expr: str) -> None:
    trigger = CronTrigger(expr, tz=PARIS)
    t = START.timestamp()
    for _ in range(N):
        t = trigger.next_after(t)


def bench_libraries(repeats: int) -> list[dict[str, Any]]:
    rows = []
    runners = {
        "croniter": run_croniter if croniter is not None else None,
        "cronsim": run_cronsim,
        "CronTrigger.next_times": run_trigger_next_times,
        "CronTrigger.next_after chained": run_trigger_chained,
    }
    for expr in EXPRESSIONS:
        for name, runner in runners.items():
            if runner is None:
                continue
            seconds = median_seconds(lambda r=runner, e=expr: r(e), repeats)
            rows.append({"expression": expr, "library": name, "ms_per_10k": seconds * 1e3})
    return rows


# -- next_after: cold vs warm -------------------------------------------------------------------
def bench_next_after(repeats: int) -> list[dict[str, Any]]:
    rows = []
    calls = 2_000
    for expr in EXPRESSIONS:
        trigger = CronTrigger(expr, tz=PARIS)
        times = trigger.next_times(START.timestamp(), calls)
        # Half a second after each fire time: the same search as continuing from it, but
        # never the time it just returned, so every call starts a new iterator.
        starts = [START.timestamp() + 0.5] + [t + 0.5 for t in times[:-1]]

        def cold(trigger=trigger, starts=starts) -> None:
            for t in starts:
                trigger.next_after(t)

        def warm(trigger=trigger, times=times) -> None:
            t = START.timestamp()
            for _ in range(len(times)):
                t = trigger.next_after(t)

        cold_us = median_seconds(cold, repeats) / calls * 1e6
        warm_us = median_seconds(warm, repeats) / calls * 1e6
        rows.append(
            {"expression": expr, "cold_us": cold_us, "warm_us": warm_us, "ratio": cold_us / warm_us}
        )
    return rows


# -- a week -----------------------------------------------------------------------------------
def week_of_fire_times(expr: str) -> int:
    trigger = CronTrigger(expr, tz=PARIS)
    t, end, count = DST_WEEK.timestamp(), (DST_WEEK + timedelta(days=7)).timestamp(), 0
    while (t := trigger.next_after(t)) is not None and t <= end:
        count += 1
    return count


def week_on_a_virtual_clock() -> int:
    """Three cron tasks for the DST week on a VirtualClock; returns the number of runs."""
    start = DST_WEEK.timestamp()
    clock = VirtualClock(start=start)
    s = Scheduler(clock)
    runs = [0]
    triggers = [
        CronTrigger("*/15 * * * *", tz=PARIS),
        CronTrigger("0 9 * * mon-fri", tz=PARIS),
        CronTrigger("30 2 * * *", tz=PARIS),
    ]

    def fire(index: int, due: float) -> None:
        runs[0] += 1
        nxt = triggers[index].next_after(due)
        s.schedule(fire, at=nxt, args=(index, nxt))

    for index, trigger in enumerate(triggers):
        first = trigger.next_after(start)
        s.schedule(fire, at=first, args=(index, first))
    clock.run_until(start + 7 * 86_400)
    s.shutdown()
    return runs[0]


def bench_week(repeats: int) -> list[dict[str, Any]]:
    rows = []
    for expr in WEEK_EXPRESSIONS:
        count = week_of_fire_times(expr)
        ms = median_seconds(lambda e=expr: week_of_fire_times(e), repeats) * 1e3
        rows.append({"what": f"fire times of {expr!r}", "count": count, "ms": ms})
    count = week_on_a_virtual_clock()
    ms = median_seconds(week_on_a_virtual_clock, repeats) * 1e3
    rows.append({"what": "Scheduler + VirtualClock, 3 cron tasks", "count": count, "ms": ms})
    return rows


# -- DST answers --------------------------------------------------------------------------------
DST_CASES = [
    ("Europe/Paris", "30 2 * * *", date(2026, 3, 29), "spring-forward"),
    ("Europe/Paris", "30 2 * * *", date(2026, 10, 25), "fall-back"),
    ("America/New_York", "30 2 * * *", date(2026, 3, 8), "spring-forward"),
    ("America/New_York", "30 1 * * *", date(2026, 11, 1), "fall-back"),
    ("Europe/Paris", "0 * * * *", date(2026, 10, 25), "fall-back (count)"),
    ("Australia/Lord_Howe", "35 * * * *", date(2026, 4, 5), "fall-back 30 min (count)"),
    ("America/Santiago", "*/30 0 6 9 *", date(2026, 9, 6), "midnight skipped (count)"),
]


def answers_on(day: date, zone: ZoneInfo, nexts: Callable[[datetime], list[datetime]]) -> str:
    begin = datetime(day.year, day.month, day.day, tzinfo=zone) - timedelta(seconds=1)
    end = datetime(day.year, day.month, day.day, tzinfo=zone) + timedelta(days=1)
    fires = [d for d in nexts(begin) if d.timestamp() < end.timestamp()]
    # fromtimestamp, not astimezone: astimezone to the same tzinfo returns a nonexistent
    # wall time (APScheduler's "02:30 CET" on the spring-forward day) unchanged
    walls = [datetime.fromtimestamp(d.timestamp(), zone) for d in fires]
    return ", ".join(w.strftime("%H:%M %Z") for w in walls) or "(none)"


def bench_dst() -> list[dict[str, Any]]:
    rows = []
    for zone_name, expr, day, what in DST_CASES:
        zone = ZoneInfo(zone_name)
        libs: dict[str, Callable[[datetime], list[datetime]]] = {}

        def take(it: Any, n: int = 60) -> list[datetime]:
            return [next(it) for _ in range(n)]

        libs["cronsim"] = lambda b, e=expr: take(CronSim(e, b))
        if croniter is not None:
            libs["croniter"] = lambda b, e=expr: take(croniter(e, b).all_next(datetime))
        libs["CronTrigger"] = lambda b, e=expr, z=zone: [
            datetime.fromtimestamp(t, z) for t in CronTrigger(e, tz=z).next_times(b.timestamp(), 60)
        ]
        try:
            from apscheduler.triggers.cron import CronTrigger as APSCron

            stuck: list[str] = []

            def aps(b: datetime, e: str = expr, z: ZoneInfo = zone, stuck=stuck) -> list[datetime]:
                """Ask as its scheduler does: get_next_fire_time(previous, now) after each run."""
                trig, out, prev = APSCron.from_crontab(e, timezone=z), [], None
                now = b
                for _ in range(60):
                    nxt = trig.get_next_fire_time(prev, now)
                    if nxt is None:
                        break
                    # timestamps: datetimes sharing a tzinfo compare as wall times (fold ignored)
                    if out and nxt.timestamp() <= out[-1].timestamp():  # before `now`
                        stuck.append(nxt.strftime("%H:%M %Z"))
                        break
                    out.append(nxt)
                    # one real second later (nxt + timedelta would be wall arithmetic: fold 0)
                    prev, now = nxt, datetime.fromtimestamp(nxt.timestamp() + 1, z)
                return out

            libs["APScheduler 3"] = aps
        except ImportError:
            pass
        row = {"zone": zone_name, "expression": expr, "day": day.isoformat(), "what": what}
        for name, nexts in libs.items():
            text = answers_on(day, zone, nexts)
            if "count" in what:
                text = f"{0 if text == '(none)' else text.count(',') + 1} runs"
            if name == "APScheduler 3" and stuck:
                text += f" (then answers {stuck[0]} again and again)"
            row[name] = text
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    result: dict[str, Any] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "versions": {n: version(n) for n in ("cronsim", "croniter", "APScheduler", "tzdata")},
        "repeats": args.repeats,
    }
    print(f"Python {result['python']}; {result['versions']}")

    result["libraries"] = bench_libraries(args.repeats)
    print(f"\nNext {N:,} fire times (Europe/Paris, from 2026-01-01), median ms:")
    for row in result["libraries"]:
        print(f"  {row['expression']:18} {row['library']:32} {row['ms_per_10k']:8.1f}")

    result["next_after"] = bench_next_after(args.repeats)
    print("\nOne next_after call, µs: cold (new iterator) vs warm (continuing)")
    for row in result["next_after"]:
        print(f"  {row['expression']:18} cold {row['cold_us']:6.1f}  warm {row['warm_us']:6.1f}"
              f"  ratio {row['ratio']:.1f}x")  # fmt: skip

    result["week"] = bench_week(args.repeats)
    print("\nA week (2026-03-23, the spring-forward week), median ms:")
    for row in result["week"]:
        print(f"  {row['what']:42} {row['count']:6} runs  {row['ms']:8.1f} ms")

    result["dst"] = bench_dst()
    print("\nDST days: local fire times (or run counts) per library")
    for row in result["dst"]:
        print(f"  {row['zone']} {row['expression']!r} {row['day']} ({row['what']})")
        for key, value in row.items():
            if key not in ("zone", "expression", "day", "what"):
                print(f"      {key:14} {value}")

    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=str))
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
