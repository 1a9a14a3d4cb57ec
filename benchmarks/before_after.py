"""Timed before/after: the benchmark suite on this checkout and on an older one, alternating.

Usage::

    git worktree add /tmp/before c9564c5
    python benchmarks/before_after.py --before /tmp/before [--rounds 2] [--reps 3]
                                      [--only schedule,sim] [--json out.json]
    python benchmarks/before_after.py --from-json out.json     # the table again
    python benchmarks/before_after.py --before /tmp/before --more out.json --rounds 1 \
                                      --json out.json           # add rounds to a saved run

Each round runs ``run.py`` twice, once importing ``tempsched_lab`` from this
checkout and once from ``--before`` (``run.py --ours-from``), in alternating
order, with our variants and a few unchanged peers as controls (the bare
``Event.wait`` baseline, asyncio, SimPy). For every workload's headline metric
the change is the median over rounds of (now / before), each from the medians
of one round's two runs; a change of more than 5 % in the slower direction is
flagged. The controls' change shows how much the machine's load moved between
the runs: a change of ours inside the controls' spread is not a finding.

Workloads the older version lacks (``schedule_many``) are compared with the
same job done one call at a time there, and labelled so. For a measure that
load cannot move, see ``instructions.py --before``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import report  # noqa: E402

#: workload -> [(metric, "higher" | "lower" is better)]
METRICS: dict[str, list[tuple[str, str]]] = {
    "schedule": [("schedule_rate", "higher"), ("cancel_rate", "higher")],
    "bulk": [("schedule_rate", "higher")],
    "sim": [("total_s", "lower")],
    "lateness": [("p50_us", "lower"), ("p99_us", "lower")],
    "burst": [("last_ms", "lower"), ("first_ms", "lower")],
    "periodic": [("jitter_p99_us", "lower"), ("runs_per_s", "higher")],
    "memory": [("bytes_per_task", "lower")],
    "log": [("to_frame_s", "lower"), ("stored_bytes_per_row", "lower")],
}
CONTROLS = "baseline,asyncio,SimPy"
SLOWER = 0.05


def _one_by_one(workload: str, case: str, peer: str) -> tuple[str, str, str] | None:
    """Where the older version did the same job without ``schedule_many``."""
    if "/schedule_many/" not in peer:
        return None
    if workload == "bulk":  # the schedule workload's rate, same design, size and log setting
        design, _, log = peer.removeprefix("ours ").split("/")
        return "schedule", case, f"ours {design}/pool/{log}"
    if workload == "sim":
        return "sim", case, peer.replace("/schedule_many/", "/schedule/")
    return None


def run_suite(before: Path | None, out: Path, args: argparse.Namespace) -> None:
    """One ``run.py`` run (this checkout, or ``before``) writing ``out``."""
    cmd = [sys.executable, str(HERE / "run.py"), "--json", str(out), "--reps", str(args.reps)]
    cmd += ["--peers", f"ours,{CONTROLS}"]
    if args.only:
        only = args.only.split(",")
        if "bulk" in only and "schedule" not in only:  # the older version's one-by-one rates
            only.append("schedule")
        cmd += ["--only", ",".join(only)]
    if before is not None:
        cmd += ["--ours-from", str(before)]
    label = f"before ({before})" if before else "now"
    print(f"[before_after] {label}: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def compare(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (workload, case, peer, metric) measured in the "now" runs."""
    rows: list[dict[str, Any]] = []
    first = rounds[0]["now"]["results"]
    for workload, metrics in METRICS.items():
        for case, entries in first.get(workload, {}).items():
            for peer in entries:
                for metric, better in metrics:
                    row = _row(rounds, workload, case, peer, metric, better)
                    if row is not None:
                        rows.append(row)
    return rows


def _row(
    rounds: list[dict[str, Any]], workload: str, case: str, peer: str, metric: str, better: str
) -> dict[str, Any] | None:
    nows, befores, ratios = [], [], []
    note = ""
    for rnd in rounds:
        now = report.median_of(rnd["now"]["results"], workload, case, peer, metric)
        then = report.median_of(rnd["before"]["results"], workload, case, peer, metric)
        if then is None and (alt := _one_by_one(workload, case, peer)) is not None:
            then = report.median_of(rnd["before"]["results"], *alt, metric)
            note = f"before: {alt[2]} ({alt[0]}), one call per task"
        if now is None:
            continue
        nows.append(now)
        if then is not None:
            befores.append(then)
            if then != 0:
                ratios.append(now / then)
    if not nows:
        return None
    change = statistics.median(ratios) - 1.0 if ratios else None
    slower = None
    if change is not None:
        slower = change > SLOWER if better == "lower" else change < -SLOWER / (1 + SLOWER)
    return {
        "workload": workload,
        "case": case,
        "peer": peer,
        "metric": metric,
        "better": better,
        "now": statistics.median(nows),
        "before": statistics.median(befores) if befores else None,
        "change": change,
        "per_round": ratios,
        "slower": slower,
        "control": not peer.startswith("ours"),
        "note": note,
    }


def render(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """The comparison as Markdown."""

    def fmt(v: float | None) -> str:
        if v is None:
            return "-"
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.3f}"

    lines = [
        f"Rounds: {meta['rounds']}, repetitions per run: {meta['reps']}; load average "
        f"(1 min) over the samples: now runs {meta['load_now']}, before runs "
        f"{meta['load_before']}.",
        "",
        "| workload | case | variant | metric | before | now | change | per round | flag |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        change = "-" if r["change"] is None else f"{r['change']:+.1%}"
        rounds = ", ".join(f"{x - 1:+.0%}" for x in r["per_round"])
        flag = "control" if r["control"] else ("**slower > 5 %**" if r["slower"] else "")
        if r["note"]:
            flag = (flag + " " if flag else "") + f"({r['note']})"
        better = "higher is better" if r["better"] == "higher" else "lower is better"
        lines.append(
            f"| {r['workload']} | {r['case']} | {r['peer']} | {r['metric']} ({better}) | "
            f"{fmt(r['before'])} | {fmt(r['now'])} | {change} | {rounds} | {flag} |"
        )
    return "\n".join(lines)


def _loads(runs: list[dict[str, Any]]) -> str:
    values = sorted(
        s["load1"]
        for run in runs
        for cases in run["results"].values()
        for entries in cases.values()
        for entry in entries.values()
        for s in entry.get("samples", [])
    )
    if not values:
        return "-"
    return f"median {values[len(values) // 2]:.2f} (min {values[0]:.2f}, max {values[-1]:.2f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="checkout of the older version")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--only", help="workloads, as run.py --only")
    parser.add_argument("--json", type=Path, help="write every run and the comparison here")
    parser.add_argument("--from-json", type=Path, help="run nothing: render a saved comparison")
    parser.add_argument(
        "--more", type=Path, help="a saved comparison (--json) whose rounds these rounds join"
    )
    args = parser.parse_args(argv)
    if args.from_json:
        data = json.loads(args.from_json.read_text())
        print(render(data["rows"], data["meta"]))
        return 0
    if args.before is None:
        parser.error("--before DIR is required (or --from-json)")
    rounds: list[dict[str, Any]] = []
    if args.more:
        saved = json.loads(args.more.read_text())
        rounds = saved["rounds"]
        args.reps = saved["meta"]["reps"]  # the joined rounds must be alike
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            i = len(rounds)
            order = [None, args.before] if i % 2 == 0 else [args.before, None]
            rnd: dict[str, Any] = {}
            for which in order:
                out = Path(tmp) / f"round{i}-{'before' if which else 'now'}.json"
                run_suite(which, out, args)
                rnd["before" if which else "now"] = json.loads(out.read_text())
            rounds.append(rnd)
    meta = {
        "rounds": len(rounds),
        "reps": args.reps,
        "before": str(args.before),
        "before_commit": rounds[0]["before"]["meta"].get("git_commit"),
        "now_commit": rounds[0]["now"]["meta"].get("git_commit"),
        "load_now": _loads([r["now"] for r in rounds]),
        "load_before": _loads([r["before"] for r in rounds]),
        "cpu_count": os.cpu_count(),
    }
    rows = compare(rounds)
    print(render(rows, meta))
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "rows": rows, "rounds": rounds}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
