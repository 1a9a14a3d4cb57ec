"""The workloads: each runs once on one peer and returns one sample (a dict of metrics).

A sample's metrics are plain floats/ints (``None`` when not measured); keys
starting with ``note`` hold text. A workload the peer cannot do raises
:class:`~peers.Unsupported`, which the runner reports as "n/a".

Times are measured with ``time.perf_counter`` for durations and with the
peer's own clock (:meth:`~peers.Peer.clock`) for due times and in-task stamps.
"""

from __future__ import annotations

import gc
import itertools
import math
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from peers import OursPeer, Peer, SimPeer, Unsupported

__all__ = [
    "Sample",
    "bulk",
    "burst",
    "lateness",
    "log_to_frame",
    "memory",
    "percentile",
    "periodic",
    "schedule_cancel",
    "simulation",
    "warm_up_log",
]

Sample = dict[str, Any]

#: How far ahead throughput tasks are placed: nothing fires while they are measured.
FAR_AHEAD = 3600.0


def noop(*args: Any) -> None:
    """The task of the throughput workloads."""


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation, as numpy's default."""
    if not values:
        return math.nan
    data = sorted(values)
    pos = (len(data) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def _wait_until(clock: Callable[[], float], target: float) -> None:
    """Sleep (without holding the GIL) until ``clock()`` reaches ``target``."""
    while (remaining := target - clock()) > 0:
        time.sleep(min(remaining, 0.05))


def _wait_filled(stamps: list[float], deadline: float) -> None:
    """Poll until every stamp is set or ``time.monotonic()`` passes ``deadline``."""
    while time.monotonic() < deadline:
        if not any(math.isnan(s) for s in stamps):
            return
        time.sleep(0.005)


# -- 1 and 2: schedule and cancel throughput -------------------------------------------------------


@dataclass
class CancelPlan:
    """How to measure a scanning cancel: a time budget, then extrapolation."""

    budget: float  # seconds of cancelling before extrapolating
    chunk: int = 50  # cancels between two budget checks


def schedule_cancel(
    peer: Peer, n: int, plan: CancelPlan, seed: int, sizes: tuple[int, ...] = ()
) -> Sample:
    """Schedule ``n`` no-op tasks at distinct far-future times, then cancel all in random order.

    A peer capped below ``n`` (``peer.max_pending``) is measured at its cap, or
    reported "n/a" when its cap is one of the other ``sizes`` (measured there).
    The same holds for the cancel part and ``peer.max_cancel_pending``.

    Scanning cancels (``peer.cancel_scans``) run under ``plan.budget``; when the
    budget runs out the total is extrapolated assuming each cancel costs in
    proportion to the number of pending tasks (true of a linear scan), and the
    sample says so (``cancel_extrapolated``, ``cancel_measured``).
    """
    if peer.no_throughput:
        raise Unsupported(peer.no_throughput)
    sample: Sample = {"n": n}
    cap = peer.max_pending
    n_sched = n if cap is None else min(n, cap)
    if n_sched < n:
        if n_sched in sizes:
            raise Unsupported(f"capped at {cap:,} pending: see case n={cap}")
        sample["note_schedule"] = f"capped at {n_sched:,} pending"
    do_cancel = peer.no_cancel is None and (
        peer.max_cancel_pending is None or n_sched <= peer.max_cancel_pending
    )
    if peer.no_cancel is None and not do_cancel:
        sample["note_cancel"] = (
            f"cancel capped at N={peer.max_cancel_pending:,} (it scans every pending task): "
            f"see case n={peer.max_cancel_pending}"
        )
    peer.open()
    try:
        handles, timed = _schedule_far_ahead(peer, n_sched)
        sample["n_scheduled"] = n_sched
        sample.update(timed)
        if do_cancel:
            order = list(handles)
            random.Random(seed).shuffle(order)
            del handles
            gc.collect()
            sample.update(_cancel(peer, order, plan))
    finally:
        peer.close()
    return sample


def _schedule_far_ahead(peer: Peer, n: int) -> tuple[list[Any], Sample]:
    """One timed ``schedule_batch`` of ``n`` no-ops at distinct times an hour ahead."""
    base = peer.clock() + FAR_AHEAD
    times = [base + i * 1e-3 for i in range(n)]
    gc.collect()
    cpu0, t0 = time.process_time(), time.perf_counter()
    handles = peer.schedule_batch(noop, times)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return handles, {
        "schedule_rate": n / elapsed,
        "schedule_s": elapsed,
        "schedule_cpu_rate": n / cpu if cpu > 0 else math.nan,
    }


def _cancel(peer: Peer, order: list[Any], plan: CancelPlan) -> Sample:
    n = len(order)
    if not peer.cancel_scans:
        cpu0, t0 = time.process_time(), time.perf_counter()
        peer.cancel_batch(order)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        return {
            "cancel_rate": n / elapsed,
            "cancel_s": elapsed,
            "cancel_cpu_rate": n / cpu if cpu > 0 else math.nan,
            "cancel_measured": n,
        }
    done = 0
    cpu0, t0 = time.process_time(), time.perf_counter()
    elapsed = 0.0
    while done < n:
        peer.cancel_batch(order[done : done + plan.chunk])
        done = min(n, done + plan.chunk)
        elapsed = time.perf_counter() - t0
        if elapsed > plan.budget:
            break
    cpu = time.process_time() - cpu0
    out: Sample = {"cancel_measured": done}
    if done < n:
        # cost of a cancel ~ pending count m: we measured m = n .. n-done+1
        measured_work = done * (2 * n - done + 1) / 2
        total_work = n * (n + 1) / 2
        elapsed = elapsed * total_work / measured_work
        cpu = cpu * total_work / measured_work
        out["cancel_extrapolated"] = True
        out["note_cancel"] = (
            f"extrapolated: a {plan.budget:g} s budget stopped the {n:,} cancels early (see "
            "cancel_measured in the JSON); total assumes cost per cancel ~ pending count"
        )
    out["cancel_s"] = elapsed
    out["cancel_rate"] = n / elapsed
    out["cancel_cpu_rate"] = n / cpu if cpu > 0 else math.nan
    return out


# -- bulk scheduling -------------------------------------------------------------------------------


def bulk(peer: Peer, n: int) -> Sample:
    """Schedule ``n`` no-op tasks at distinct far-future times with one batch call.

    For ``sched`` the batch is ``enterabs`` in a loop; for ours one
    ``schedule_many`` call (the request list is built inside the timing).
    """
    peer.open()
    try:
        handles, sample = _schedule_far_ahead(peer, n)
        if len(handles) != n:
            raise RuntimeError(f"{peer.key}: {len(handles)} handles for {n} tasks")
        del handles
    finally:
        peer.close()
    return {"n": n, **sample}


# -- virtual-time simulation -----------------------------------------------------------------------


def simulation(peer: Peer, n: int, seed: int, horizon: float = 1000.0) -> Sample:
    """``n`` one-shot callbacks at uniform random times in ``[0, horizon)``: schedule all, run.

    Every callback must have run once by the end (checked). ``total_s`` is the
    wall time of both phases; ``cpu_s`` the process's CPU time over them (any
    background thread included, e.g. the log's compactor).
    """
    if not isinstance(peer, SimPeer):
        raise Unsupported("not a simulation adapter")
    rng = random.Random(seed)
    times = [rng.uniform(0.0, horizon) for _ in range(n)]
    hits = [0]

    def cb(*_args: Any) -> None:
        hits[0] += 1

    gc.collect()
    cpu0 = time.process_time()
    schedule_s, run_s = peer.simulate(times, cb)
    cpu = time.process_time() - cpu0
    if hits[0] != n:
        raise RuntimeError(f"{peer.key}: {hits[0]} of {n} callbacks ran")
    sample: Sample = {
        "n": n,
        "schedule_s": schedule_s,
        "run_s": run_s,
        "total_s": schedule_s + run_s,
        "cpu_s": cpu,
        "events_per_s": n / (schedule_s + run_s),
    }
    t0 = time.perf_counter()
    if peer.kind == "ours" and _settle_log():
        sample["compact_after_s"] = time.perf_counter() - t0
    return sample


# -- 3: lateness -----------------------------------------------------------------------------------


def _make_stamper(clock: Callable[[], float], stamps: list[float]) -> Callable[[int], None]:
    def task(i: int) -> None:
        stamps[i] = clock()

    return task


def _lateness_stats(late: list[float], prefix: str = "") -> Sample:
    got = [x for x in late if not math.isnan(x)]
    us = [x * 1e6 for x in got]
    return {
        f"{prefix}p50_us": percentile(us, 50),
        f"{prefix}p99_us": percentile(us, 99),
        f"{prefix}max_us": max(us) if us else math.nan,
        f"{prefix}early": sum(1 for x in got if x < 0),
        f"{prefix}ran": len(got),
    }


def _arm(
    peer: Peer, lead: float, schedule: Callable[[float], Any], attempts: int = 5
) -> tuple[float, Any, int]:
    """Open ``peer`` and call ``schedule(base)`` with ``base = now + lead``.

    A sample is valid only if the scheduling ended before ``base``. When it did
    not (a loaded machine, a slow peer), or the peer refused a time already
    past, the peer is closed and the attempt is repeated with a longer lead.
    Returns ``(base, whatever schedule returned, retries)``; the peer stays open.
    """
    for attempt in range(attempts):
        peer.open()
        base = peer.clock() + lead
        t0 = time.perf_counter()
        try:
            state = schedule(base)
            in_time = peer.clock() < base
        except Exception:
            if peer.clock() < base:
                peer.close()
                raise
            in_time = False
        if in_time:
            return base, state, attempt
        took = time.perf_counter() - t0
        peer.close()
        lead = max(2 * lead, 2 * took + 0.05)
    raise RuntimeError(f"scheduling overran its lead {attempts} times (last lead {lead:.2f} s)")


def lateness(peer: Peer, n: int, spread: float, lead: float, seed: int) -> Sample:
    """``n`` tasks evenly spread over ``spread`` seconds, inserted in random order.

    Lateness = in-task stamp (peer's clock) - due time. For ours with the log
    on, the log's ``dispatch`` and ``start`` rows give a second measurement
    (``log_*`` keys: start; ``dispatch_*``: when the worker handed the task over).
    """
    order = list(range(n))
    random.Random(seed).shuffle(order)
    args = [(i,) for i in order]
    lead = max(lead, 0.05 + n * peer.setup_cost)

    def schedule(base: float) -> tuple[list[float], list[float]]:
        stamps = [math.nan] * n
        due = [base + spread * i / n for i in range(n)]
        peer.schedule_batch(_make_stamper(peer.clock, stamps), [due[i] for i in order], args)
        return stamps, due

    base, (stamps, due), retries = _arm(peer, lead, schedule)
    sample: Sample = {"n": n, "spread_s": spread, "retries": retries}
    try:
        peer.start()
        _wait_until(peer.clock, base + spread + 0.02)
        _wait_filled(stamps, time.monotonic() + 2.0)
        sample.update(_lateness_stats([s - d for s, d in zip(stamps, due, strict=True)]))
        if isinstance(peer, OursPeer) and peer.log:
            frame = peer.scheduler.log.to_frame()
            for kind, prefix in (("start", "log_"), ("dispatch", "dispatch_")):
                rows = frame[frame["kind"] == kind]
                sample.update(_lateness_stats([float(x) for x in rows["lateness"]], prefix))
    finally:
        peer.close()
    return sample


# -- 4: burst --------------------------------------------------------------------------------------


def burst(peer: Peer, n: int, lead: float) -> Sample:
    """``n`` tasks due at one instant: time from that instant until the last one starts.

    For ours with the log on, ``taken_ms`` is when the worker took the due
    group out of the queue (the ``t`` of the log's ``dispatch`` rows).
    """
    lead = max(lead, 0.1 + n * peer.setup_cost)

    def schedule(at: float) -> list[float]:
        stamps = [math.nan] * n
        peer.schedule_batch(_make_stamper(peer.clock, stamps), [at] * n, [(i,) for i in range(n)])
        return stamps

    at, stamps, retries = _arm(peer, lead, schedule)
    sample: Sample = {"n": n, "retries": retries}
    try:
        peer.start()
        _wait_until(peer.clock, at)
        _wait_filled(stamps, time.monotonic() + 10.0)
        got = [s for s in stamps if not math.isnan(s)]
        sample["ran"] = len(got)
        sample["early"] = sum(1 for s in got if s < at)
        sample["first_ms"] = (min(got) - at) * 1e3 if got else math.nan
        sample["last_ms"] = (max(got) - at) * 1e3 if len(got) == n else math.nan
        if len(got) < n:
            sample["note_missing"] = f"only {len(got)} of {n} ran within 10 s"
        if isinstance(peer, OursPeer) and peer.log:
            frame = peer.scheduler.log.to_frame()
            rows = frame[frame["kind"] == "dispatch"]
            if len(rows):  # the worker takes the whole due group at one time
                sample["taken_ms"] = (float(rows["t"].min()) - at) * 1e3
    finally:
        peer.close()
    return sample


# -- 5: periodic -----------------------------------------------------------------------------------


def periodic(peer: Peer, rate: float, duration: float, lead: float) -> Sample:
    """A periodic task at ``rate`` Hz for ``duration`` s, first run ``lead`` s ahead.

    Over the runs stamped before ``first + duration`` (stamps on the peer's
    clock): achieved rate, jitter of the intervals between runs, drift (last
    run minus its ideal time ``first + k * period``, k = its run index, so
    skipped runs count as drift), the last run's offset from the nearest grid
    point (``grid_offset_us``), runs missed on the grid (negative: extra runs)
    and early runs (run k before ``first + k * period``).
    """
    if peer.no_periodic:
        raise Unsupported(peer.no_periodic)
    period = 1.0 / rate
    stamps: list[float] = []
    clock = peer.clock

    def task() -> None:
        stamps.append(clock())

    sample: Sample = {"rate_hz": rate, "duration_s": duration}
    peer.open()
    try:
        first = peer.clock() + lead
        handle = peer.start_periodic(task, first, period)
        end = first + duration
        _wait_until(peer.clock, end + 2 * period + 0.01)
        peer.stop_periodic(handle)
        time.sleep(0.02)
    finally:
        peer.close()
    runs = [s for s in stamps if s < end]
    sample["runs"] = len(runs)
    sample["runs_per_s"] = len(runs) / duration
    sample["rate_error_pct"] = (len(runs) / duration - rate) / rate * 100
    if len(runs) >= 2:
        intervals = [b - a for a, b in itertools.pairwise(runs)]
        sample["interval_mean_us"] = statistics.fmean(intervals) * 1e6
        sample["jitter_std_us"] = statistics.pstdev(intervals) * 1e6
        sample["jitter_p99_us"] = percentile([abs(x - period) * 1e6 for x in intervals], 99)
    if runs:
        k = len(runs) - 1
        sample["drift_us"] = (runs[-1] - (first + k * period)) * 1e6
        grid = round((runs[-1] - first) / period)
        sample["grid_offset_us"] = (runs[-1] - (first + grid * period)) * 1e6
        sample["missed"] = grid + 1 - len(runs)  # negative: extra runs
        sample["early"] = sum(1 for i, s in enumerate(runs) if s < first + i * period)
        sample["first_late_us"] = (runs[0] - first) * 1e6
    return sample


# -- the log's background work --------------------------------------------------------------------


def _settle_log() -> bool:
    """Wait until the log's background compactor is idle (``False``: this version has none)."""
    try:
        from tempsched_lab.log.compactor import wait_compacted
    except ImportError:
        try:  # a checkout before the layers as folders (issue 40)
            from tempsched_lab.compactor import wait_compacted
        except ImportError:  # versions before the compactor keep rows as tuples
            return False
    if not wait_compacted(timeout=60.0):
        raise RuntimeError("the log's compactor did not finish within 60 s")
    return True


def warm_up_log(rows: int = 140_000) -> None:
    """Import numpy and pandas and compact log chunks once, so no later measurement counts them.

    The first compaction imports numpy and builds module-level tables; memory
    measured after this counts only what the scheduler keeps.
    """
    import numpy  # noqa: F401
    import pandas  # noqa: F401

    sched = _build_log(rows)
    _settle_log()
    sched.log.to_frame()
    sched.shutdown(wait=False)
    del sched
    gc.collect()


# -- 6: memory -------------------------------------------------------------------------------------


def memory(peer: Peer, n: int) -> Sample:
    """Bytes traced by ``tracemalloc`` per pending task, with ``n`` tasks pending.

    The peer is created before tracing starts; the list of handles the loop
    returns is deleted before the reading, so only what the scheduler keeps counts.
    The log's background compactor (when the version has one) is waited for
    before the reading: its compacted chunks are what the log keeps.
    """
    if peer.no_throughput:
        raise Unsupported(peer.no_throughput)
    sample: Sample = {"n": n}
    n_used = n if peer.max_pending is None else min(n, peer.max_pending)
    if n_used < n:
        sample["note_memory"] = f"capped at {n_used:,} pending"
    peer.open()
    try:
        base = peer.clock() + FAR_AHEAD
        times = [base + i * 1e-3 for i in range(n_used)]
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            handles = peer.schedule_batch(noop, times)
            del handles
            if isinstance(peer, OursPeer) and peer.log:
                _settle_log()
            gc.collect()
            after = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        sample["n_used"] = n_used
        sample["bytes_per_task"] = (after - before) / n_used
    finally:
        peer.close()
    return sample


# -- 7: the event log ------------------------------------------------------------------------------


def _build_log(rows: int, log: bool = True, batch: int = 10_000) -> Any:
    """A virtual-clock scheduler whose log holds ``rows`` rows (schedule + cancel pairs)."""
    from tempsched_lab import Scheduler, VirtualClock

    sched = Scheduler(VirtualClock(), executor="inline", log=log)
    schedule, cancel = sched.schedule, sched.cancel
    made = 0
    while made < rows:
        k = min(batch, (rows - made) // 2) or 1
        ids = [schedule(noop, at=1.0 + (made + i) * 1e-3) for i in range(k)]
        for task_id in ids:
            cancel(task_id)
        made += 2 * k
    return sched


def log_to_frame(rows: int, mem_rows: int) -> Sample:
    """``log.to_frame()`` time for a ``rows``-row log, and bytes per stored row.

    The log is built by scheduling and cancelling with a virtual clock and the
    inline executor. Bytes per row: ``tracemalloc`` growth while building a
    ``mem_rows``-row log minus the growth of the same steps with ``log=False``,
    divided by the rows. The frame's own size is ``memory_usage(deep=True)``.
    Versions that compact full chunks of rows in a background thread are timed
    once that thread is idle (``settle_s``: how long the wait took).
    """
    sample: Sample = {"rows": rows}
    sched = _build_log(rows)
    try:
        sample["rows_built"] = len(sched.log)
        t0 = time.perf_counter()
        if _settle_log():  # the log at rest: its background compaction finished
            sample["settle_s"] = time.perf_counter() - t0
        gc.collect()
        t0 = time.perf_counter()
        frame = sched.log.to_frame()
        sample["to_frame_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        sched.log.to_frame()
        sample["to_frame_again_s"] = time.perf_counter() - t0
        sample["frame_bytes_per_row"] = float(frame.memory_usage(deep=True).sum()) / len(frame)
        del frame
    finally:
        sched.shutdown(wait=False)
    del sched
    grown = {}
    for log in (True, False):
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            keep = _build_log(mem_rows, log=log)
            _settle_log()
            gc.collect()
            grown[log] = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        keep.shutdown(wait=False)
        del keep
    sample["mem_rows"] = mem_rows
    sample["stored_bytes_per_row"] = (grown[True] - grown[False]) / mem_rows
    return sample
