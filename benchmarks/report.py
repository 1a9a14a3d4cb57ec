"""Turn the collected samples into medians, pairwise ratios, target checks and Markdown tables.

Results layout (also the JSON layout)::

    results[workload][case][peer_key] = {
        "status": "ok" | "n/a" | "error",
        "reason": str | None,          # why n/a, or the error
        "samples": [sample, ...],      # one dict per repetition, with "rep"
        "median": {metric: value},     # median over the samples
        "notes": [str, ...],           # caps, extrapolations, overruns
    }

Ratios between two peers are taken pair by pair (same repetition, same run)
and the median of those ratios is reported.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Target", "evaluate_targets", "median_of", "pair_ratio", "render", "summarize"]

Results = dict[str, dict[str, dict[str, dict[str, Any]]]]
Getter = Callable[[Results], float | None]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and not math.isnan(value)


def summarize(entry: dict[str, Any]) -> None:
    """Fill ``entry["median"]`` and ``entry["notes"]`` from its samples."""
    samples = entry.get("samples", [])
    keys: list[str] = []
    for s in samples:
        keys += [k for k in s if k not in keys]
    median: dict[str, Any] = {}
    notes: list[str] = []
    for k in keys:
        if k.startswith("note"):
            for s in samples:
                if k in s and s[k] not in notes:
                    notes.append(s[k])
            continue
        values = [s[k] for s in samples if _is_number(s.get(k))]
        if values and k != "rep":
            median[k] = statistics.median(values)
        elif any(s.get(k) is True for s in samples):
            median[k] = True
    entry["median"] = median
    entry["notes"] = notes


def median_of(results: Results, workload: str, case: str, peer: str, metric: str) -> float | None:
    """The median of ``metric``, or ``None`` when not measured."""
    entry = results.get(workload, {}).get(case, {}).get(peer)
    if not entry or entry.get("status") != "ok":
        return None
    value = entry.get("median", {}).get(metric)
    return value if _is_number(value) else None


def pair_ratio(
    results: Results,
    workload: str,
    case: str,
    num: tuple[str, str],
    den: tuple[str, str],
) -> float | None:
    """Median over repetitions of ``num_peer.metric / den_peer.metric`` (same repetition)."""
    cases = results.get(workload, {}).get(case, {})
    a, b = cases.get(num[0]), cases.get(den[0])
    if not a or not b or a.get("status") != "ok" or b.get("status") != "ok":
        return None
    by_rep = {s["rep"]: s for s in b["samples"]}
    ratios = []
    for s in a["samples"]:
        other = by_rep.get(s["rep"])
        if other is None:
            continue
        x, y = s.get(num[1]), other.get(den[1])
        if _is_number(x) and _is_number(y) and y != 0:
            ratios.append(x / y)
    return statistics.median(ratios) if ratios else None


# -- targets ---------------------------------------------------------------------------------------


@dataclass
class Target:
    """One target: a measured value (or pairwise ratio) compared with a threshold."""

    text: str
    peer: str
    value: Getter
    ok: Callable[[float], bool]
    shown: str  # how the threshold reads
    unit: str = ""
    skip: str | None = None  # why the value is not compared (other parameters)
    group: str = "standing"  # "issue 16": the speed issue's table, default options
    on_cpu: Getter | None = None  # the same ratio from CPU time (less moved by other jobs)


#: The default options of ``Scheduler()``: what issue 16's table measures.
DEFAULT = "ours sorteddict/pool/log"
REFERENCE = "temporal-scheduler"
FLOOR = "baseline Event.wait"


def _ours(results: Results, workload: str) -> list[str]:
    keys: list[str] = []
    for case in results.get(workload, {}).values():
        keys += [k for k in case if k.startswith("ours") and k not in keys]
    return keys


def _speed(results: Results, workload: str, case: str, ours: str, peer: str, metric: str,
           faster: str = "higher") -> float | None:  # fmt: skip
    """How many times faster ``ours`` is than ``peer`` (> 1: ours is faster), per repetition.

    ``faster="higher"``: the metric is a rate; ``"lower"``: a duration.
    """
    if faster == "higher":
        return pair_ratio(results, workload, case, (ours, metric), (peer, metric))
    return pair_ratio(results, workload, case, (peer, metric), (ours, metric))


def build_targets(results: Results, quick: bool) -> list[Target]:
    """Issue 16's targets for the default options, then the standing targets for every variant."""
    out: list[Target] = []
    short = "quick mode: shorter run" if quick else None

    def add(text: str, peer: str, get: Getter, ok: Callable[[float], bool], shown: str,
            unit: str = "", skip: str | None = None, group: str = "standing",
            on_cpu: Getter | None = None) -> None:  # fmt: skip
        out.append(Target(text, peer, get, ok, shown, unit, skip, group, on_cpu))

    sc, bk, si, la, bu, pe, me, lo = (
        "schedule", "bulk", "sim", "lateness", "burst", "periodic", "memory", "log"
    )  # fmt: skip
    i16 = "issue 16"
    designs = ("sorteddict", "heap", "wheel")

    # -- issue 16, exactly as its table states them (default options unless named) ------------
    def schedule_vs_reference(p: str, group: str) -> None:
        add("schedule 10k (log on) vs temporal-scheduler schedule_task: speed ratio", p,
            lambda r, p=p: _speed(r, sc, "n=10000", p, REFERENCE, "schedule_rate"),
            lambda v: v >= 1.0, ">= 1.00x", "x", group=group,
            on_cpu=lambda r, p=p: _speed(r, sc, "n=10000", p, REFERENCE,
                                         "schedule_cpu_rate"))  # fmt: skip

    def bulk_vs_sched(p: str, group: str) -> None:
        add("bulk 10k: schedule_many vs sched.enterabs in a loop: speed ratio", p,
            lambda r, p=p: _speed(r, bk, "n=10000", p, "sched", "schedule_rate"),
            lambda v: v >= 1.0, ">= 1.00x", "x", group=group,
            on_cpu=lambda r, p=p: _speed(r, bk, "n=10000", p, "sched",
                                         "schedule_cpu_rate"))  # fmt: skip

    def log_overhead(design: str, group: str) -> None:
        on, off = f"ours {design}/pool/log", f"ours {design}/pool/nolog"
        add("log overhead on schedule 10k: time log on / log off", on,
            lambda r, a=on, b=off: pair_ratio(r, sc, "n=10000", (a, "schedule_s"),
                                              (b, "schedule_s")),
            lambda v: v <= 1.15, "<= 1.15x", "x", group=group,
            on_cpu=lambda r, a=on, b=off: pair_ratio(r, sc, "n=10000", (b, "schedule_cpu_rate"),
                                                     (a, "schedule_cpu_rate")))  # fmt: skip

    def memory_targets(design: str, group: str) -> None:
        for c in results.get(me, {}):
            ref = median_of(results, me, c, REFERENCE, "bytes_per_task")
            on, off = f"ours {design}/pool/log", f"ours {design}/pool/nolog"
            shown = f"<= reference ({ref:,.0f} B)" if ref is not None else "<= reference"
            add(f"memory per pending task ({c}, log on)", on,
                lambda r, p=on, c=c: median_of(r, me, c, p, "bytes_per_task"),
                lambda v, ref=ref: ref is not None and v <= ref, shown, " B",
                None if ref is not None else "reference not measured", group)  # fmt: skip
            add(f"memory per pending task ({c}, log off)", off,
                lambda r, p=off, c=c: median_of(r, me, c, p, "bytes_per_task"),
                lambda v: v <= 300, "<= 300 B", " B", group=group)  # fmt: skip

    def lateness_vs_floor(p: str, limit: float, group: str) -> None:
        for c in results.get(la, {}):
            add("lateness p50 / bare Event.wait p50", p,
                lambda r, p=p, c=c: pair_ratio(r, la, c, (p, "p50_us"), (FLOOR, "p50_us")),
                lambda v, lim=limit: v <= lim, f"<= {limit:.2f}x", "x", group=group)  # fmt: skip

    def burst_last(p: str, group: str) -> None:
        add("burst 1,000 at one instant: last start", p,
            lambda r, p=p: median_of(r, bu, "n=1000", p, "last_ms"),
            lambda v: v <= 3.0, "<= 3 ms", " ms", group=group)  # fmt: skip

    schedule_vs_reference(DEFAULT, i16)
    bulk_vs_sched("ours sorteddict/schedule_many/log", i16)
    for c in results.get(si, {}):
        for how in ("schedule", "schedule_many"):
            p = f"ours sorteddict/{how}/log"
            add(f"simulation {c}, schedule all ({how}) + run, log on, vs SimPy: speed ratio",
                p, lambda r, p=p, c=c: _speed(r, si, c, p, "SimPy", "total_s", "lower"),
                lambda v: v >= 1.0, ">= 1.00x", "x", group=i16,
                on_cpu=lambda r, p=p, c=c: _speed(r, si, c, p, "SimPy", "cpu_s",
                                                  "lower"))  # fmt: skip
    log_overhead("sorteddict", i16)
    lateness_vs_floor(DEFAULT, 1.25, i16)
    lateness_vs_floor("ours sorteddict/inline/log", 1.10, i16)
    burst_last(DEFAULT, i16)
    memory_targets("sorteddict", i16)

    # -- the same thresholds for the other variants (standing) ---------------------------------
    for d in designs[1:]:
        schedule_vs_reference(f"ours {d}/pool/log", "standing")
        bulk_vs_sched(f"ours {d}/schedule_many/log", "standing")
        log_overhead(d, "standing")
        memory_targets(d, "standing")
    for c in results.get(si, {}):
        for how in ("schedule", "schedule_many"):
            p = f"ours sorteddict/{how}/nolog"
            add(f"simulation {c}, schedule all ({how}) + run, log off, vs SimPy: speed ratio",
                p, lambda r, p=p, c=c: _speed(r, si, c, p, "SimPy", "total_s", "lower"),
                lambda v: v >= 1.0, ">= 1.00x", "x",
                on_cpu=lambda r, p=p, c=c: _speed(r, si, c, p, "SimPy", "cpu_s",
                                                  "lower"))  # fmt: skip
    for p in _ours(results, la):
        if p not in (DEFAULT, "ours sorteddict/inline/log") and "/thread/" not in p:
            lateness_vs_floor(p, 1.25, "standing")
    for p in _ours(results, bu):
        if "/pool/" in p and p != DEFAULT:
            burst_last(p, "standing")

    # -- earlier targets, unchanged ------------------------------------------------------------
    for p in _ours(results, sc):
        if p.endswith("/nolog"):
            add("schedule 10k: ours (log off) vs sched, speed ratio", p,
                lambda r, p=p: _speed(r, sc, "n=10000", p, "sched", "schedule_rate"),
                lambda v: v >= 1.0, ">= 1.00x", "x")  # fmt: skip
    for p in _ours(results, sc):
        add("cancel 10k pending: cancels/s", p,
            lambda r, p=p: median_of(r, sc, "n=10000", p, "cancel_rate"),
            lambda v: v >= 300_000, ">= 300,000", "/s")  # fmt: skip
    for c in results.get(la, {}):
        for p in _ours(results, la):
            add("lateness: early runs, all repetitions", p,
                lambda r, p=p, c=c: total_of(r, la, c, p, "early"),
                lambda v: v == 0, "0")  # fmt: skip
    for p in _ours(results, pe):
        add("periodic 100 Hz 2 s: |drift|", p,
            lambda r, p=p: _abs(median_of(r, pe, "100Hz", p, "drift_us")),
            lambda v: v < 500, "< 500 us", " us", short)  # fmt: skip
        add("periodic 100 Hz 2 s: |rate error|", p,
            lambda r, p=p: _abs(median_of(r, pe, "100Hz", p, "rate_error_pct")),
            lambda v: v <= 0.5, "<= 0.5 %", " %", short)  # fmt: skip
        add("periodic 1 kHz 2 s: runs/s", p,
            lambda r, p=p: median_of(r, pe, "1000Hz", p, "runs_per_s"),
            lambda v: v >= 990, ">= 990", "/s", short)  # fmt: skip
    for c in results.get(lo, {}):
        skip = None if c == "rows=1000000" else "the target is for 1,000,000 rows"
        add(f"to_frame() of a {c} log", "ours (VirtualClock, inline)",
            lambda r, c=c: median_of(r, lo, c, "ours", "to_frame_s"),
            lambda v: v < 2.0, "< 2 s", " s", skip)  # fmt: skip
    return out


def total_of(results: Results, workload: str, case: str, peer: str, metric: str) -> float | None:
    """The sum of ``metric`` over all repetitions, or ``None`` when not measured."""
    entry = results.get(workload, {}).get(case, {}).get(peer)
    if not entry or entry.get("status") != "ok":
        return None
    values = [s[metric] for s in entry["samples"] if _is_number(s.get(metric))]
    return sum(values) if values else None


def _abs(value: float | None) -> float | None:
    return None if value is None else abs(value)


def evaluate_targets(results: Results, quick: bool) -> list[dict[str, Any]]:
    """Every target with its value and PASS / MISS (or a reason it was not evaluated)."""
    out = []
    for target in build_targets(results, quick):
        value = target.value(results)
        if value is None:
            verdict = "n/a"
        elif target.skip:
            verdict = f"n/a ({target.skip})"
        else:
            verdict = "PASS" if target.ok(value) else "MISS"
        out.append(
            {
                "target": target.text,
                "peer": target.peer,
                "value": value,
                "threshold": target.shown,
                "unit": target.unit,
                "verdict": verdict,
                "group": target.group,
                "on_cpu": target.on_cpu(results) if target.on_cpu else None,
                "verdict_on_cpu": (
                    None
                    if target.on_cpu is None or (cpu := target.on_cpu(results)) is None
                    else ("PASS" if target.ok(cpu) else "MISS")
                ),
            }
        )
    return out


# -- rendering -------------------------------------------------------------------------------------


def _fmt(value: Any, digits: int = 0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) or abs(value) >= 1000 or digits == 0:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


class _Notes:
    """Footnotes shared by one table."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def mark(self, text: str) -> str:
        if text not in self.items:
            self.items.append(text)
        return f"[{self.items.index(text) + 1}]"

    def render(self) -> list[str]:
        return [f"[{i}] {text}  " for i, text in enumerate(self.items, 1)]


def _table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _peers_of(results: Results, workload: str) -> list[str]:
    keys: list[str] = []
    for case in results.get(workload, {}).values():
        keys += [k for k in case if k not in keys]
    return keys


def _cell(
    results: Results,
    workload: str,
    case: str,
    peer: str,
    metric: str,
    notes: _Notes,
    digits: int = 0,
    mark_notes: tuple[str, ...] = (),
) -> str:
    entry = results.get(workload, {}).get(case, {}).get(peer)
    if entry is None:
        return "-"
    if entry["status"] != "ok":
        label = "n/a" if entry["status"] == "n/a" else "error"
        return f"{label} {notes.mark(str(entry.get('reason')))}"
    text = _fmt(entry["median"].get(metric), digits)
    for note in entry.get("notes", []):
        if any(m in note for m in mark_notes):
            text += " " + notes.mark(note)
    return text


def render(results: Results, targets: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """All tables as Markdown."""
    out: list[str] = []
    reps = meta.get("config", {}).get("reps")
    out.append(f"Medians of {reps} repetitions unless noted. Run mode: {meta.get('mode')}.")
    load = meta.get("load1_during")
    if load:
        out.append(
            f"1-minute load average during the samples: min {load['min']}, median "
            f"{load['median']}, max {load['max']} (2 cores; other jobs share the machine)."
        )
    out.append("")
    sections: list[tuple[str, Callable[[Results, _Notes], list[str]]]] = [
        ("Schedule and cancel throughput", _schedule_table),
        ("Bulk scheduling", _bulk_table),
        ("Virtual-time simulation", _sim_table),
        ("Lateness", _lateness_table),
        ("Burst", _burst_table),
        ("Periodic", _periodic_table),
        ("Memory per pending task", _memory_table),
        ("Event log (ours only)", _log_table),
    ]
    for title, fn in sections:
        notes = _Notes()
        body = fn(results, notes)
        if not body:
            continue
        out += [f"### {title}", "", *body, ""]
        if notes.items:
            out += [*notes.render(), ""]
    groups = [
        ("issue 16", "Targets of issue 16 (default options unless the variant says otherwise)"),
        ("standing", "Standing targets (other variants, earlier targets)"),
    ]
    for group, title in groups:
        chosen = [t for t in targets if t.get("group", "standing") == group]
        if not chosen:
            continue
        rows = [
            [
                t["target"],
                t["peer"],
                _fmt(t["value"], 3 if t["unit"] == "x" else 2) + t["unit"]
                if t["value"] is not None
                else "-",
                t["threshold"],
                t["verdict"],
                _fmt(t["on_cpu"], 3) + f"x ({t['verdict_on_cpu']})"
                if t.get("on_cpu") is not None
                else "",
            ]
            for t in chosen
        ]
        out += [f"### {title}", ""]
        header = ["target", "variant", "value", "threshold", "verdict", "same on CPU time"]
        out += _table(header, rows)
        out.append("")
    return "\n".join(out)


Column = tuple[str, str, int, tuple[str, ...]]  # header, metric, digits, notes to mark


def _case_tables(
    results: Results, workload: str, columns: list[Column], notes: _Notes, caption: str
) -> list[str]:
    """One table per case of ``workload``: a row per peer, a column per metric."""
    lines: list[str] = []
    for case in results.get(workload, {}):
        rows = []
        for peer in _peers_of(results, workload):
            row = [peer]
            for _, metric, digits, marks in columns:
                row.append(_cell(results, workload, case, peer, metric, notes, digits, marks))
            rows.append(row)
        header = ["peer", *(c[0] for c in columns)]
        lines += [caption.format(case=case), "", *_table(header, rows), ""]
    return lines


def _schedule_table(results: Results, notes: _Notes) -> list[str]:
    columns: list[Column] = [
        ("schedule/s", "schedule_rate", 0, ("capped at",)),
        ("schedule/s per CPU s", "schedule_cpu_rate", 0, ()),
        ("cancel/s", "cancel_rate", 0, ("extrapolated", "capped at N")),
        ("cancel/s per CPU s", "cancel_cpu_rate", 0, ()),
    ]
    caption = (
        "Case {case}: wall-clock rates (the measure), and the same work divided by the "
        "process's CPU time (less sensitive to other load on the machine)."
    )
    return _case_tables(results, "schedule", columns, notes, caption)


def _bulk_table(results: Results, notes: _Notes) -> list[str]:
    columns: list[Column] = [
        ("schedule/s", "schedule_rate", 0, ()),
        ("schedule/s per CPU s", "schedule_cpu_rate", 0, ()),
    ]
    caption = (
        "Case {case}: one batch of distinct far-future times; ours with one "
        "`schedule_many` call (request list built inside the timing), `sched` with "
        "`enterabs` in a loop."
    )
    lines = _case_tables(results, "bulk", columns, notes, caption)
    return lines + _ratio_lines(results, "bulk", "sched", "schedule_rate", "higher")


def _sim_table(results: Results, notes: _Notes) -> list[str]:
    columns: list[Column] = [
        ("total s", "total_s", 3, ()),
        ("schedule all s", "schedule_s", 3, ()),
        ("run s", "run_s", 3, ()),
        ("CPU s", "cpu_s", 3, ()),
        ("events/s", "events_per_s", 0, ()),
        ("compaction after s", "compact_after_s", 3, ()),
    ]
    caption = (
        "Case {case} one-shot callbacks at uniform random times in [0, 1000): schedule "
        "all, then run to the end (ours: `VirtualClock`, inline executor). CPU s counts "
        'every thread (the log\'s compactor too); "compaction after" is the wait for '
        "the compactor once the run returned (not in total)."
    )
    lines = _case_tables(results, "sim", columns, notes, caption)
    return lines + _ratio_lines(results, "sim", "SimPy", "total_s", "lower")


def _ratio_lines(results: Results, workload: str, peer: str, metric: str, faster: str) -> list[str]:
    """A table of ours' speed relative to ``peer``, per case (median of per-repetition ratios)."""
    cases = list(results.get(workload, {}))
    ours = _ours(results, workload)
    if not cases or not ours:
        return []
    rows = [
        [p]
        + [
            _fmt(v, 3) + "x"
            if (v := _speed(results, workload, c, p, peer, metric, faster)) is not None
            else "-"
            for c in cases
        ]
        for p in ours
    ]
    header = ["variant", *(f"{c}: speed vs {peer}" for c in cases)]
    return [
        f"Speed relative to {peer} (> 1: ours is faster; median of per-repetition ratios):",
        "",
        *_table(header, rows),
        "",
    ]


def _lateness_table(results: Results, notes: _Notes) -> list[str]:
    columns: list[Column] = [
        ("p50 us", "p50_us", 0, ("overran",)),
        ("p99 us", "p99_us", 0, ()),
        ("max us", "max_us", 0, ()),
        ("early", "early", 0, ()),
        ("ran", "ran", 0, ()),
        ("log start p50 us", "log_p50_us", 0, ()),
        ("log start p99 us", "log_p99_us", 0, ()),
        ("log dispatch p50 us", "dispatch_p50_us", 0, ()),
    ]
    caption = (
        "Case {case}: in-task stamp minus due time on the peer's own clock; for ours also "
        "the log's start and dispatch rows."
    )
    return _case_tables(results, "lateness", columns, notes, caption)


def _burst_table(results: Results, notes: _Notes) -> list[str]:
    columns: list[Column] = [
        ("last starts ms", "last_ms", 2, ("overran", "only")),
        ("first starts ms", "first_ms", 2, ()),
        ("early", "early", 0, ()),
        ("log: group taken ms", "taken_ms", 2, ()),
    ]
    caption = "Case {case} tasks due at one instant: time from that instant (peer's clock)."
    return _case_tables(results, "burst", columns, notes, caption)


def _periodic_table(results: Results, notes: _Notes) -> list[str]:
    columns: list[Column] = [
        ("runs/s", "runs_per_s", 1, ()),
        ("rate error %", "rate_error_pct", 2, ()),
        ("jitter std us", "jitter_std_us", 0, ()),
        ("jitter p99 us", "jitter_p99_us", 0, ()),
        ("drift us", "drift_us", 0, ()),
        ("grid offset us", "grid_offset_us", 0, ()),
        ("missed (-extra)", "missed", 0, ()),
        ("early runs", "early", 0, ()),
    ]
    caption = (
        "Case {case}: jitter p99 is of |interval - period|; drift = last run - "
        "(first + (runs - 1) x period)."
    )
    return _case_tables(results, "periodic", columns, notes, caption)


def _memory_table(results: Results, notes: _Notes) -> list[str]:
    columns: list[Column] = [("bytes/task", "bytes_per_task", 0, ("capped",))]
    caption = "Case {case}: tracemalloc growth per pending task."
    return _case_tables(results, "memory", columns, notes, caption)


def _log_table(results: Results, notes: _Notes) -> list[str]:
    lines: list[str] = []
    sc = results.get("schedule", {}).get("n=10000", {})
    rows = []
    for design in ("sorteddict", "heap", "wheel"):
        on, off = f"ours {design}/pool/log", f"ours {design}/pool/nolog"
        if on in sc and off in sc:
            ratio = pair_ratio(
                results, "schedule", "n=10000", (on, "schedule_s"), (off, "schedule_s")
            )
            rows.append([design, _fmt(ratio, 2) + "x" if ratio is not None else "-"])
    if rows:
        lines += [
            "Log overhead when scheduling 10,000 tasks (time with log / time without,",
            "pairwise per repetition):",
            "",
        ]
        lines += [*_table(["queue design", "log on / log off"], rows), ""]
    w = "log"
    for case in results.get(w, {}):
        header = [
            "log",
            "to_frame() s",
            "again (cached chunks) s",
            "stored bytes/row",
            "frame bytes/row",
        ]
        row = [case]
        for m, d in (
            ("to_frame_s", 3),
            ("to_frame_again_s", 3),
            ("stored_bytes_per_row", 0),
            ("frame_bytes_per_row", 0),
        ):
            row.append(_cell(results, w, case, "ours", m, notes, d))
        lines += [*_table(header, [row]), ""]
    return lines
