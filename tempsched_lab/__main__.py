"""Command line: ``tempsched-lab demo [--virtual] [--seconds S] [--out DIR]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


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


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tempsched-lab`` console script."""
    args = build_parser().parse_args(argv)
    from .demo import run_demo, summary_text, write_outputs

    if args.seconds <= 0:
        build_parser().error(f"--seconds={args.seconds}: must be > 0")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        probe = args.out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        print(f"tempsched-lab: cannot write to --out {args.out}: {exc}", file=sys.stderr)
        return 1
    mode = "virtual clock" if args.virtual else "real clock"
    print(f"running the demo scenario for {args.seconds:g} s on a {mode}...")
    result = run_demo(virtual=args.virtual, seconds=args.seconds)
    written = write_outputs(result, args.out)
    print(summary_text(result))
    for path in written:
        print(f"wrote {path}")
    return 0 if result.report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
