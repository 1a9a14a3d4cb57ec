"""Where ours spends its time and memory: cProfile and tracemalloc on the hot paths.

Usage::

    python benchmarks/profile_ours.py [--n 10000] [--top 12] [--queue sorteddict]
                                      [--memory-n 100000]

Sections: scheduling ``n`` tasks (log on, log off), cancelling them,
``schedule_many`` of ``n`` (log on), a burst of ``n // 10`` tasks dispatched
through a ``VirtualClock`` with the inline executor (the worker's per-task path
without threads, so cProfile sees it), the virtual-time simulation of issue 16
(``n`` one-shot tasks at random times, log on: scheduling, then the run), and
``tracemalloc`` by source line for ``n`` pending tasks (log off, then log on,
after the log's compactor finished).
Profiling inflates every call; read the shares, not the absolute times.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import random
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def noop(*args: Any) -> None:
    """A task that does nothing."""


def _profile(title: str, fn: Callable[[], Any], top: int) -> None:
    gc.collect()
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    text = out.getvalue()
    body = text[text.index("ncalls") :] if "ncalls" in text else text
    total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
    print(f"## {title} (profiled total {total:.3f} s, sorted by own time)\n")
    print(body.rstrip() + "\n")


def main(argv: list[str] | None = None) -> int:
    """Print the profiles."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--queue", default="sorteddict")
    parser.add_argument(
        "--memory-n", type=int, default=100_000, help="pending tasks for the memory section"
    )
    args = parser.parse_args(argv)
    from tempsched_lab import Scheduler, VirtualClock

    n, q = args.n, args.queue
    for log in (True, False):
        s = Scheduler(queue=q, log=log)
        base = s.clock.now() + 3600
        times = [base + i * 1e-3 for i in range(n)]
        ids: list[int] = []

        def schedule_all(s: Any = s, times: list[float] = times, ids: list[int] = ids) -> None:
            ids.extend(s.schedule(noop, at=t) for t in times)

        def cancel_all(s: Any = s, ids: list[int] = ids) -> None:
            for task_id in ids:
                s.cancel(task_id)

        _profile(f"schedule {n:,} ({q}, log={log})", schedule_all, args.top)
        random.Random(1).shuffle(ids)
        _profile(f"cancel {n:,} ({q}, log={log})", cancel_all, args.top)
        s.shutdown()

    s = Scheduler(queue=q)
    base = s.clock.now() + 3600
    requests = [(noop, base + i * 1e-3) for i in range(n)]
    _profile(f"schedule_many of {n:,} ({q}, log on)", lambda: s.schedule_many(requests), args.top)
    s.shutdown()

    rng = random.Random(1)
    sim_times = [rng.uniform(0.0, 1000.0) for _ in range(n)]
    clock = VirtualClock()
    s = Scheduler(clock, executor="inline", queue=q)

    def schedule_sim(s: Any = s) -> None:
        for t in sim_times:
            s.schedule(noop, at=t)

    _profile(f"simulation: schedule {n:,} at random times ({q}, log on)", schedule_sim, args.top)
    _profile(f"simulation: run them to the end ({q}, log on)", clock.run_until_idle, args.top)
    s.shutdown()

    clock = VirtualClock()
    s = Scheduler(clock, executor="inline", queue=q)
    k = max(1, n // 10)
    for i in range(k):
        s.schedule(noop, at=1.0, args=(i,))
    title = f"burst of {k:,} at one instant, dispatched inline (VirtualClock, {q}, log on)"
    _profile(title, clock.run_until_idle, args.top)
    s.shutdown()

    import numpy  # noqa: F401  (imported before tracing: its memory is not a task's)

    for log in (False, True):
        _memory_by_line(args.memory_n, q, log, args.top)
    return 0


def _memory_by_line(n: int, q: str, log: bool, top: int) -> None:
    """``tracemalloc`` growth by source line while ``n`` tasks are scheduled."""
    from tempsched_lab import Scheduler

    try:
        from tempsched_lab.log.compactor import wait_compacted
    except ImportError:
        try:  # a checkout before the layers as folders (issue 40)
            from tempsched_lab.compactor import wait_compacted
        except ImportError:  # older versions: rows stay tuples
            wait_compacted = None  # type: ignore[assignment]
    if wait_compacted is not None:
        wait_compacted()  # the earlier sections' logs: their compaction is not this section's
    s = Scheduler(queue=q, log=log)
    base = s.clock.now() + 3600
    times = [base + i * 1e-3 for i in range(n)]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for t in times:
        s.schedule(noop, at=t)
    if wait_compacted is not None:
        wait_compacted()
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    stats = after.compare_to(before, "lineno")
    total = sum(st.size_diff for st in stats)
    print(f"## memory for {n:,} pending tasks ({q}, log={log}): {total / n:.0f} B/task\n")
    for st in stats[:top]:
        frame = st.traceback[0]
        where = Path(frame.filename)
        name = where.relative_to(ROOT) if where.is_relative_to(ROOT) else where.name
        print(f"{st.size_diff / n:8.1f} B/task  {name}:{frame.lineno}")
    print()
    s.shutdown()


if __name__ == "__main__":
    sys.exit(main())
