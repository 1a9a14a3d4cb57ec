"""Command line: ``tempsched-lab demo [--virtual] [--seconds S] [--out DIR]``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exit code 2 and a usage message on bad arguments)."""
    parser = argparse.ArgumentParser(
        prog="tempsched-lab", description="Explore, teach and run temporal scheduling."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run a scenario exercising all eight decision cases")
    demo.add_argument("--virtual", action="store_true", help="instant, deterministic run")
    demo.add_argument("--seconds", type=float, default=3.0, help="scenario length (default 3)")
    demo.add_argument(
        "--out",
        type=Path,
        default=Path("tempsched-demo"),
        help="output folder (default ./tempsched-demo)",
    )
    return parser


def _progress_bar(stream: TextIO) -> Callable[[float], None]:
    """A one-line text progress bar (redrawn in place on a terminal)."""
    width = 30
    interactive = stream.isatty()
    last = [-1]

    def show(fraction: float) -> None:
        filled = round(max(0.0, min(1.0, fraction)) * width)
        if filled == last[0] and fraction < 1.0:
            return
        last[0] = filled
        bar = "#" * filled + "-" * (width - filled)
        end = "\n" if fraction >= 1.0 else ("" if interactive else "\n")
        stream.write(f"\r[{bar}] {fraction * 100:5.1f}%{end}")
        stream.flush()

    return show


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tempsched-lab`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.seconds > 0 or args.seconds > 3600:
        parser.error(f"--seconds {args.seconds:g}: must be > 0 and at most 3600")
    out: Path = args.out
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".tempsched-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        print(f"tempsched-lab: error: cannot write to --out {out}: {exc}", file=sys.stderr)
        return 1
    from .demo import run_demo, summary_text, write_outputs

    mode = "virtual clock (instant)" if args.virtual else "real clock"
    print(f"running the demo scenario for {args.seconds:g} s on a {mode}...", flush=True)
    result = run_demo(
        virtual=args.virtual, seconds=args.seconds, progress=_progress_bar(sys.stdout)
    )
    written = write_outputs(result, out)
    print(summary_text(result))
    for path in written:
        print(f"wrote {path}")
    return 0 if result.report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
