"""Benchmark tempsched_lab against its peers, side by side in one run.

Usage::

    python benchmarks/run.py [--quick] [--json results.json] [--only NAME,...]
                             [--peers KEY,...] [--reps N] [--markdown report.md]
    python benchmarks/run.py --from-json results.json [--markdown report.md]

Workloads (``--only`` names): ``schedule`` (schedule + cancel throughput;
``cancel`` is an alias), ``bulk`` (``schedule_many`` vs ``sched.enterabs``),
``sim`` (virtual-time simulation vs SimPy), ``lateness``, ``burst``,
``periodic``, ``memory``, ``log``. Every workload runs ``--reps`` times (full:
5, ``--quick``: 3; memory and the log workload at most 3), peers in a rotating
order; tables show medians, and ratios between two peers are medians of
per-repetition ratios.

``--ours-from DIR`` imports ``tempsched_lab`` from another checkout (e.g. an
older commit in a ``git worktree``) to compare versions: see ``before_after.py``.

This is a report, not a test: nothing here asserts a timing. The machine is
shared and noisy; compare peers only within one run.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import json
import math
import os
import platform
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # run as a script or imported from elsewhere
    sys.path.insert(0, str(HERE))

import peers as peers_mod  # noqa: E402
import report  # noqa: E402
import workloads as wl  # noqa: E402
from peers import Peer, Unsupported  # noqa: E402

WORKLOADS = ("schedule", "bulk", "sim", "lateness", "burst", "periodic", "memory", "log")
ALIASES = {
    "cancel": "schedule",
    "throughput": "schedule",
    "frame": "log",
    "to_frame": "log",
    "simulation": "sim",
    "schedule_many": "bulk",
}
PACKAGES = (
    "tempsched-lab",
    "temporal-scheduler",
    "APScheduler",
    "simpy",
    "sortedcontainers",
    "pandas",
    "numpy",
    "pyarrow",
)


@dataclass
class Config:
    """Sizes and repetitions of one run."""

    mode: str = "full"
    reps: int = 5
    sizes: list[int] = field(default_factory=lambda: [10_000, 100_000])
    bulk_sizes: list[int] = field(default_factory=lambda: [10_000, 100_000])
    sim_sizes: list[int] = field(default_factory=lambda: [20_000, 100_000])
    cancel_budget_s: float = 6.0
    timer_cap: int = 10_000
    lateness_n: int = 500
    lateness_spread_s: float = 2.0
    lead_s: float = 0.2
    burst_sizes: list[int] = field(default_factory=lambda: [1_000, 2_000])
    periodic_rates: list[float] = field(default_factory=lambda: [100.0, 1000.0])
    periodic_s: float = 2.0
    memory_n: int = 100_000
    memory_reps: int = 3
    aps_memory_cap: int = 20_000
    frame_rows: int = 1_000_000
    frame_mem_rows: int = 100_000
    log_reps: int = 3
    seed: int = 12345

    @classmethod
    def quick(cls) -> Config:
        """Small sizes: the whole run stays under a minute."""
        return cls(
            mode="quick",
            reps=3,
            sizes=[10_000],
            bulk_sizes=[10_000],
            sim_sizes=[20_000],
            cancel_budget_s=0.3,
            timer_cap=500,
            lateness_n=100,
            lateness_spread_s=0.15,
            lead_s=0.05,
            burst_sizes=[1_000],
            periodic_s=0.1,
            memory_n=10_000,
            memory_reps=1,
            aps_memory_cap=2_000,
            frame_rows=100_000,
            frame_mem_rows=20_000,
            log_reps=1,
        )


class Runner:
    """Runs the workloads, peer by peer in rotating order, and keeps every sample."""

    def __init__(self, cfg: Config, peer_filter: list[str] | None) -> None:
        self.cfg = cfg
        self.peer_filter = peer_filter
        self.results: report.Results = {}
        self.t0 = time.monotonic()
        self._unavailable: dict[str, str] = {}
        self.timings: dict[str, float] = {}
        gc.collect()
        gc.freeze()  # what is alive now is never garbage: later collections skip it

    # -- plumbing ----------------------------------------------------------------------------------
    def log(self, text: str) -> None:
        """Progress on stderr."""
        print(f"[{time.monotonic() - self.t0:7.1f}s] {text}", file=sys.stderr, flush=True)

    def _selected(self, peers: list[Peer]) -> list[Peer]:
        if not self.peer_filter:
            return peers
        return [p for p in peers if any(f.lower() in p.key.lower() for f in self.peer_filter)]

    def _check(self, peer: Peer) -> str | None:
        if peer.key not in self._unavailable:
            reason = peer.available()
            self._unavailable[peer.key] = reason or ""
            if reason:
                self.log(f"{peer.key}: not available: {reason}")
        return self._unavailable[peer.key] or None

    def run_cases(
        self,
        workload: str,
        cases: list[tuple[str, Callable[[Peer, int], wl.Sample]]],
        peers: list[Peer],
        reps: int,
    ) -> None:
        """Run every case ``reps`` times on every peer and summarize."""
        peers = self._selected(peers)
        started = time.monotonic()
        table = self.results.setdefault(workload, {})
        for case, fn in cases:
            entries = table.setdefault(case, {})
            for p in peers:
                entries[p.key] = {"status": "ok", "reason": None, "samples": []}
                reason = self._check(p)
                if reason:
                    entries[p.key].update(status="n/a", reason=f"not available: {reason}")
            for rep in range(reps):
                shift = rep % len(peers) if peers else 0
                for p in peers[shift:] + peers[:shift]:
                    entry = entries[p.key]
                    if entry["status"] != "ok":
                        continue
                    self.log(f"{workload} {case} rep {rep + 1}/{reps}: {p.key}")
                    threads_before = threading.active_count()
                    try:
                        sample = fn(p, rep)
                    except Unsupported as exc:
                        entry.update(status="n/a", reason=str(exc), samples=[])
                        continue
                    except Exception as exc:
                        traceback.print_exc()
                        entry.update(status="error", reason=f"{type(exc).__name__}: {exc}")
                        continue
                    sample["rep"] = rep
                    sample["load1"] = os.getloadavg()[0]
                    leftover = _settle_threads(threads_before)
                    if leftover > 0:
                        sample["note_threads"] = f"{leftover} thread(s) still alive after close"
                    entry["samples"].append(sample)
                    gc.collect()
            for entry in entries.values():
                if entry["status"] == "ok" and not entry["samples"]:
                    entry.update(status="n/a", reason="no sample")
                report.summarize(entry)
        self.timings[workload] = self.timings.get(workload, 0.0) + time.monotonic() - started

    # -- workloads ---------------------------------------------------------------------------------
    def _peers(self, kind: str) -> list[Peer]:
        base = peers_mod.all_peers()
        for p in base:
            if isinstance(p, peers_mod.TimerPeer):
                p.max_pending = self.cfg.timer_cap
        return base + list(peers_mod.ours_variants(kind, self.cfg.mode == "quick"))

    def schedule(self) -> None:
        """1 and 2: schedule N tasks, then cancel them all in random order."""
        cfg = self.cfg
        plan = wl.CancelPlan(cfg.cancel_budget_s)
        sizes = tuple(cfg.sizes)
        cases = [
            (f"n={n}", _bind(wl.schedule_cancel, n=n, plan=plan, seed=cfg.seed, sizes=sizes))
            for n in cfg.sizes
        ]
        self.run_cases("schedule", cases, self._peers("throughput"), cfg.reps)

    def bulk(self) -> None:
        """Bulk scheduling: ``schedule_many`` against ``sched.enterabs`` in a loop."""
        cfg = self.cfg
        cases = [(f"n={n}", _bind(wl.bulk, n=n)) for n in cfg.bulk_sizes]
        self.run_cases("bulk", cases, peers_mod.bulk_peers(), cfg.reps)

    def sim(self) -> None:
        """Virtual-time simulation: schedule every one-shot callback, then run to the end."""
        cfg = self.cfg
        cases = [(f"n={n}", _bind(wl.simulation, n=n, seed=cfg.seed)) for n in cfg.sim_sizes]
        self.run_cases("sim", cases, peers_mod.sim_peers(), cfg.reps)

    def lateness(self) -> None:
        """3: lateness of tasks spread over a few seconds."""
        cfg = self.cfg
        case = f"n={cfg.lateness_n} over {cfg.lateness_spread_s:g}s"
        fn = _bind(
            wl.lateness,
            n=cfg.lateness_n,
            spread=cfg.lateness_spread_s,
            lead=cfg.lead_s,
            seed=cfg.seed,
        )
        self.run_cases("lateness", [(case, fn)], self._peers("timing"), cfg.reps)

    def burst(self) -> None:
        """4: many tasks due at one instant."""
        cfg = self.cfg
        cases = [(f"n={n}", _bind(wl.burst, n=n, lead=cfg.lead_s)) for n in cfg.burst_sizes]
        self.run_cases("burst", cases, self._peers("timing"), cfg.reps)

    def periodic(self) -> None:
        """5: one periodic task at 100 Hz and 1 kHz."""
        cfg = self.cfg
        cases = [
            (f"{r:g}Hz", _bind(wl.periodic, rate=r, duration=cfg.periodic_s, lead=cfg.lead_s))
            for r in cfg.periodic_rates
        ]
        self.run_cases("periodic", cases, self._peers("timing"), cfg.reps)

    def memory(self) -> None:
        """6: bytes per pending task."""
        cfg = self.cfg
        line_up: list[Peer] = [
            *(
                peers_mod.OursPeer(q, "pool", log)
                for log in (True, False)
                for q in ("sorteddict", "heap", "wheel")
            ),
            peers_mod.ReferencePeer(),
            peers_mod.SchedPeer(),
            peers_mod.AsyncioPeer(),
            peers_mod.APSchedulerPeer(),
            _NoMemory(peers_mod.TimerPeer(), "one OS thread per task: tracemalloc cannot see it"),
        ]
        for p in line_up:
            if isinstance(p, peers_mod.APSchedulerPeer):
                p.max_pending = cfg.aps_memory_cap
        fn = _bind(wl.memory, n=cfg.memory_n)
        reps = min(cfg.reps, cfg.memory_reps)
        self.log("memory: warming up numpy, pandas and the log's compaction (not measured)")
        wl.warm_up_log()
        self.run_cases("memory", [(f"n={cfg.memory_n}", fn)], line_up, reps)

    def log_workload(self) -> None:
        """7: the event log: to_frame() time and bytes per row (log on/off comes from 1)."""
        cfg = self.cfg

        def fn(_peer: Peer, _rep: int) -> wl.Sample:
            return wl.log_to_frame(cfg.frame_rows, cfg.frame_mem_rows)

        ours = _Label("ours")
        reps = min(cfg.reps, cfg.log_reps)
        self.run_cases("log", [(f"rows={cfg.frame_rows}", fn)], [ours], reps)


class _Label(Peer):
    """A stand-in peer for workloads that build their own scheduler."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.kind = "ours"

    def clock(self) -> float:
        return time.monotonic()

    def available(self) -> str | None:
        return None


class _NoMemory(Peer):
    """A peer listed in the memory table as n/a, with the reason."""

    def __init__(self, peer: Peer, reason: str) -> None:
        self.key = peer.key
        self.no_throughput = reason

    def available(self) -> str | None:
        return None


def _bind(fn: Callable[..., wl.Sample], **kwargs: Any) -> Callable[[Peer, int], wl.Sample]:
    """``fn(peer, **kwargs)``, with the repetition mixed into ``seed`` when it takes one."""

    def call(peer: Peer, rep: int) -> wl.Sample:
        extra = dict(kwargs)
        if "seed" in extra:
            extra["seed"] = extra["seed"] + rep
        return fn(peer, **extra)

    return call


def _settle_threads(before: int, timeout: float = 2.0) -> int:
    """Wait a little for threads that a closed peer is still tearing down; returns leftovers."""
    deadline = time.monotonic() + timeout
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    return threading.active_count() - before


# -- metadata and output ---------------------------------------------------------------------------


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _git(*args: str, cwd: Path = HERE.parent) -> str:
    try:
        out = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip()


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_meta(cfg: Config) -> dict[str, Any]:
    """Date, versions, machine and the git state of the library under test."""
    import tempsched_lab

    library = Path(tempsched_lab.__file__).resolve().parent.parent
    dirty = _git("status", "--porcelain", "--", "tempsched_lab", cwd=library)
    return {
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "mode": cfg.mode,
        "config": asdict(cfg),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "loadavg_start": list(os.getloadavg()),
        "packages": {p: _version(p) for p in PACKAGES},
        "git_commit": _git("rev-parse", "--short", "HEAD", cwd=library),
        "library_path": str(library),
        "benchmarks_commit": _git("rev-parse", "--short", "HEAD"),
        "library_uncommitted_changes": dirty.splitlines(),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
    }


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 repetitions, < 1 min")
    parser.add_argument("--json", type=Path, help="write every sample and median to this file")
    parser.add_argument("--markdown", type=Path, help="write the tables to this Markdown file")
    parser.add_argument("--only", help=f"comma-separated workloads: {', '.join(WORKLOADS)}")
    parser.add_argument("--peers", help="comma-separated substrings of peer keys to keep")
    parser.add_argument("--reps", type=int, help="repetitions per workload (default 5, quick 3)")
    parser.add_argument(
        "--from-json", type=Path, help="run nothing: print the tables of a saved --json file"
    )
    parser.add_argument(
        "--ours-from",
        type=Path,
        help="import tempsched_lab from this checkout (e.g. a worktree of an older commit)",
    )
    return parser.parse_args(argv)


def use_library_from(checkout: Path) -> None:
    """Import ``tempsched_lab`` from ``checkout`` (before anything imported it)."""
    checkout = checkout.resolve()
    if not (checkout / "tempsched_lab" / "__init__.py").is_file():
        raise SystemExit(f"--ours-from {checkout}: no tempsched_lab/__init__.py there")
    if "tempsched_lab" in sys.modules:
        raise SystemExit("--ours-from: tempsched_lab was imported already")
    sys.path.insert(0, str(checkout))
    import tempsched_lab

    found = Path(tempsched_lab.__file__).resolve()
    if checkout not in found.parents:
        raise SystemExit(f"--ours-from {checkout}: imported {found} instead")


def rerender(path: Path, markdown: Path | None) -> int:
    """Print (and write) the tables of a saved run, with the targets evaluated again."""
    data = json.loads(path.read_text())
    meta = data["meta"]
    targets = report.evaluate_targets(data["results"], meta.get("mode") == "quick")
    text = report.render(data["results"], targets, meta)
    print(text)
    if markdown:
        markdown.write_text(text + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run, print the tables, write JSON / Markdown if asked."""
    args = parse_args(argv)
    if args.from_json:
        return rerender(args.from_json, args.markdown)
    if args.ours_from:
        use_library_from(args.ours_from)
    cfg = Config.quick() if args.quick else Config()
    if args.reps:
        cfg.reps = max(1, args.reps)
    selected = list(WORKLOADS)
    if args.only:
        names = [ALIASES.get(n.strip(), n.strip()) for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in WORKLOADS]
        if unknown:
            print(
                f"--only: unknown workload(s) {unknown}; choose from {WORKLOADS}", file=sys.stderr
            )
            return 2
        selected = [w for w in WORKLOADS if w in names]
    peer_filter = [p.strip() for p in args.peers.split(",")] if args.peers else None
    meta = machine_meta(cfg)
    runner = Runner(cfg, peer_filter)
    steps: dict[str, Callable[[], None]] = {
        "schedule": runner.schedule,
        "bulk": runner.bulk,
        "sim": runner.sim,
        "lateness": runner.lateness,
        "burst": runner.burst,
        "periodic": runner.periodic,
        "memory": runner.memory,
        "log": runner.log_workload,
    }
    interrupted = False
    try:
        for name in selected:
            steps[name]()
    except KeyboardInterrupt:
        interrupted = True
        runner.log("interrupted: reporting what was measured")
    meta["total_s"] = round(time.monotonic() - runner.t0, 1)
    meta["workload_s"] = {k: round(v, 1) for k, v in runner.timings.items()}
    meta["loadavg_end"] = list(os.getloadavg())
    loads = sorted(
        s["load1"]
        for cases in runner.results.values()
        for entries in cases.values()
        for entry in entries.values()
        for s in entry.get("samples", [])
    )
    if loads:
        meta["load1_during"] = {
            "min": round(loads[0], 2),
            "median": round(loads[len(loads) // 2], 2),
            "max": round(loads[-1], 2),
        }
    meta["interrupted"] = interrupted
    targets = report.evaluate_targets(runner.results, cfg.mode == "quick")
    text = report.render(runner.results, targets, meta)
    print(text)
    print(f"\nTotal run time: {meta['total_s']} s ({cfg.mode} mode)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"meta": meta, "results": runner.results, "targets": targets}
        args.json.write_text(json.dumps(_clean(payload), indent=1) + "\n")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(text + "\n")
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
