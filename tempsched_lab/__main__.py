"""Command line: ``tempsched-lab demo [--virtual] [--seconds S] [--out DIR]``, ``--version``."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from . import __version__

#: What ``demo`` writes (kept in step with :data:`tempsched_lab.demo.OUTPUTS`).
_WRITES = "event-log.csv (and .parquet), summary.png, timeline.png, dashboard.html"


class CommandParser(argparse.ArgumentParser):
    """An argument parser that knows its sub-commands' parsers (``commands[name]``)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.commands: dict[str, argparse.ArgumentParser] = {}


def build_parser() -> CommandParser:
    """The argument parser (exit code 2 and the right usage message on bad arguments)."""
    parser = CommandParser(
        prog="tempsched-lab", description="Explore, teach and run temporal scheduling."
    )
    parser.add_argument("--version", action="version", version=f"tempsched-lab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="command")
    demo = sub.add_parser(
        "demo",
        help="run a scenario exercising all eight decision cases",
        description=(
            "Run a scenario exercising all eight decision cases, periodic tasks, an Event, a "
            f"cancel and a failing task, then write {_WRITES} into --out."
        ),
    )
    demo.add_argument(
        "--virtual",
        action="store_true",
        help="run on a virtual clock: deterministic and no waiting (about 2 s, spent drawing)",
    )
    demo.add_argument(
        "--seconds", type=float, default=3.0, help="scenario length in seconds (default 3)"
    )
    demo.add_argument(
        "--out",
        type=Path,
        default=Path("tempsched-demo"),
        help="output folder (default ./tempsched-demo)",
    )
    parser.commands["demo"] = demo
    return parser


def _parse(parser: CommandParser, argv: list[str] | None) -> argparse.Namespace:
    """Parse ``argv``; arguments a sub-command does not know are reported with its own usage."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.commands.get(args.command, parser).error(
            f"unrecognized arguments: {' '.join(extra)}"
        )
    return args


def progress_bar(stream: TextIO, *, plain_steps: int = 4) -> Callable[[float], None]:
    """A progress display: a bar redrawn in place on a terminal, a few plain lines otherwise.

    When ``stream`` is not a terminal (a log file, a pipe, a notebook), it
    prints one line per ``1 / plain_steps`` of the way, so the output stays short.

    >>> import io
    >>> out = io.StringIO()
    >>> show = progress_bar(out)
    >>> for i in range(101):
    ...     show(i / 100)
    >>> print(out.getvalue(), end="")
    progress   0%
    progress  25%
    progress  50%
    progress  75%
    progress 100%
    """
    width = 30
    if stream.isatty():
        last = [-1]

        def bar(fraction: float) -> None:
            fraction = max(0.0, min(1.0, fraction))
            filled = round(fraction * width)
            if filled == last[0] and fraction < 1.0:
                return
            last[0] = filled
            end = "\n" if fraction >= 1.0 else ""
            stream.write(f"\r[{'#' * filled}{'-' * (width - filled)}] {fraction * 100:5.1f}%{end}")
            stream.flush()

        return bar
    printed = [-1]

    def lines(fraction: float) -> None:
        step = int(max(0.0, min(1.0, fraction)) * plain_steps + 1e-9)
        if step <= printed[0]:
            return
        printed[0] = step
        stream.write(f"progress {step * 100 // plain_steps:3d}%\n")
        stream.flush()

    return lines


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tempsched-lab`` console script; returns the exit code."""
    parser = build_parser()
    args = _parse(parser, argv)
    if not args.seconds > 0 or args.seconds > 3600:
        parser.commands["demo"].error(f"--seconds {args.seconds:g}: must be > 0 and at most 3600")
    out: Path = args.out
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".tempsched-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        print(f"tempsched-lab: error: cannot write to --out {out}: {exc}", file=sys.stderr)
        return 1

    def say(text: str) -> None:
        print(text, flush=True)

    started = time.perf_counter()
    mode = "a virtual clock (no waiting)" if args.virtual else "the real clock"
    say(f"running the demo scenario for {args.seconds:g} s on {mode}...")
    from .demo import OUTPUTS, run_demo, summary_text, write_outputs

    result = run_demo(virtual=args.virtual, seconds=args.seconds, progress=progress_bar(sys.stdout))
    say(summary_text(result))
    say(f"writing into {out}/ ...")
    for path in write_outputs(result, out):
        say(f"  wrote {path}: {OUTPUTS.get(path.name, '')}")
    say(f"done in {time.perf_counter() - started:.1f} s")
    return 0 if result.report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
