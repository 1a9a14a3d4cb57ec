"""Command line: ``tempsched-lab demo [--virtual] [--seconds S] [--out DIR]``,
``tempsched-lab serve NOTEBOOK [VOILA OPTIONS]``,
``tempsched-lab tail URL_OR_DIR [[NAME=]URL_OR_DIR ...] [--token-file [NAME=]F] [--from-start]``,
``tempsched-lab teach build (--student | --instructor) SRC DEST``,
``tempsched-lab teach list``, ``tempsched-lab teach show NAME [--seed N] [--answer]``,
``--version``.

It behaves like a Unix tool: no arguments prints the help; a wrong argument is
named, with the usage, exit status 2; output to a pipe that closes early (``|
head``) ends quietly, as the Python documentation recommends (standard output
is pointed at ``os.devnull`` and the exit status is 1), and the demo still
writes every file.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TextIO

from ._version import __version__
from .demo import OUTPUTS

#: Exit statuses, as ``--help`` lists them.
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _writes() -> str:
    width = max(map(len, OUTPUTS))
    return "\n".join(f"    {name:<{width}}  {what}" for name, what in OUTPUTS.items())


_DEMO_PRINTS = (
    "It prints each step of the event log as it happens (its time, the task and what\n"
    "happened; at most 40 lines at once and 20 a second, the rest counted on one\n"
    "line), then the count of each decision case, the lateness, the audit and each\n"
    "file as it is written."
)

_EPILOG = f"""\
what each command writes:
  demo, into --out (default ./tempsched-demo/):
{_writes()}
  serve writes nothing: it serves a notebook as a web page (Voila) until Ctrl-C.
  tail writes nothing: it prints a served scheduler's rows as they come.
  teach build writes the notebooks of SRC into DEST (--student: without the
    cells tagged `solution`); teach list and teach show write nothing.

exit status: 0 done; 1 the audit failed, a file could not be written, or
standard output was closed early (the files are written all the same);
2 bad arguments; 130 interrupted (Ctrl-C)."""


class CommandParser(argparse.ArgumentParser):
    """An argument parser that knows its sub-commands' parsers (``commands[name]``)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.commands: dict[str, argparse.ArgumentParser] = {}


def build_parser() -> CommandParser:
    """The argument parser (exit code 2 and the right usage message on bad arguments)."""
    parser = CommandParser(
        prog="tempsched-lab",
        description="Explore, teach and run temporal scheduling.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tempsched-lab {__version__}")
    sub = parser.add_subparsers(
        dest="command", title="commands", metavar="command", help="one of these:"
    )
    demo = sub.add_parser(
        "demo",
        help="run a scenario exercising all eight decision cases; writes the files below",
        description=(
            "Run a scenario exercising all eight decision cases, periodic tasks, an Event,\n"
            "a cancel and a failing task: on the real clock for --seconds, or on a virtual\n"
            "clock with --virtual. Importing pandas and matplotlib and drawing the pictures\n"
            "take about 5 s of CPU more (the 3 s demo: 9 s in all on an idle 2-core machine,\n"
            "14-16 s on a busy one).\n"
            f"{_DEMO_PRINTS}"
        ),
        epilog=f"writes into --out:\n{_writes()}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument(
        "--virtual",
        action="store_true",
        help="run on a virtual clock: deterministic and no waiting (the command still takes "
        "about 5 s, importing and drawing)",
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
    serve = sub.add_parser(
        "serve",
        help="serve a notebook as a web page with Voila (on 127.0.0.1; nothing from a CDN)",
        usage=SERVE_USAGE,
        description=(
            "Serve NOTEBOOK as a web page with Voila (the 'notebooks' extra), on 127.0.0.1,\n"
            "with the project's page template: Voila's own asks a CDN for two icon fonts\n"
            "that no page of ours shows (offline, in a classroom, those requests only fail).\n"
            "Each cell's output shows as soon as the cell has run (Voila's progressive\n"
            "rendering), so the first picture does not wait for the last cell; turn it off\n"
            "with --VoilaConfiguration.progressive_rendering=False.\n"
            "NOTEBOOK is required; options after it are optional and go to Voila as they\n"
            "are (--port=8866, --no-browser, ...).\n"
            "Plain `voila NOTEBOOK` serves the same page, with those two requests."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "notebook",
        type=Path,
        nargs="?",
        metavar="NOTEBOOK",
        help="required: the notebook (.ipynb) to serve, or a folder of them",
    )
    serve.add_argument(
        "voila_options",
        nargs=argparse.REMAINDER,
        metavar="VOILA_OPTION",
        help="optional: passed to Voila as they are",
    )
    parser.commands["serve"] = serve
    tail = sub.add_parser(
        "tail",
        help="print a served scheduler's (or a spill directory's) decisions as they happen",
        description=(
            "Print each row of a scheduler's event log as it is recorded, one sentence per\n"
            "row (the dashboard's log panel's), like `tail -f`: SOURCE is the URL of a\n"
            "scheduler served with tempsched_lab.serve (http://127.0.0.1:8000/scheduler) or\n"
            "a log's spill directory. The last 10 rows first (every row with --from-start),\n"
            "then the new ones, and a line starting with `--` when the link changes\n"
            "(reconnecting, a gap of missing rows, closed). Ends when the scheduler shuts\n"
            "down (or the directory's log is closed), or on Ctrl-C."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tail.add_argument(
        "source",
        nargs="+",
        metavar="SOURCE",
        help="a URL (http://...) or a spill directory; several: NAME=SOURCE each (or the "
        "name is the URL's host:port, the directory's name), every line prefixed `NAME: `",
    )
    tail.add_argument(
        "--token-file",
        action="append",
        default=None,
        metavar="[NAME=]FILE",
        help="a file holding the read token (a token is never given on the command line, "
        "where `ps` shows it); with several sources, NAME=FILE for each served one",
    )
    tail.add_argument(
        "--from-start", action="store_true", help="every row the source still has, first"
    )
    parser.commands["tail"] = tail
    _teach_parser(sub, parser)
    return parser


def _teach_parser(sub: argparse._SubParsersAction[CommandParser], parser: CommandParser) -> None:
    teach = sub.add_parser(
        "teach",
        help="exercises that check: list them, show one by seed, build a student's notebooks",
        description=(
            "Exercises for a class (docs/teaching.md):\n"
            "  teach list                          the exercises by name\n"
            "  teach show NAME [--seed N] [--answer]  one exercise's problem (and answer)\n"
            "  teach build --student SRC DEST      the notebooks of SRC (a notebook or a\n"
            "                                      folder) without the cells tagged\n"
            "                                      `solution`, written into DEST\n"
            "  teach build --instructor SRC DEST   the same, every cell kept"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = teach.add_subparsers(dest="action", metavar="action", help="one of these:")
    actions.required = True
    actions.add_parser("list", help="the exercises by name, with a line each")
    show = actions.add_parser("show", help="one exercise's problem, by name and seed")
    show.add_argument("name", help="the exercise's name (teach list)")
    show.add_argument("--seed", type=int, default=0, help="the exercise's seed (0)")
    show.add_argument("--answer", action="store_true", help="the worked solution too")
    build = actions.add_parser("build", help="the notebooks for students or for teachers")
    build.add_argument("source", help="a notebook (.ipynb) or a folder of them")
    build.add_argument("target", help="where to write them (a folder, or a .ipynb path)")
    who = build.add_mutually_exclusive_group(required=True)
    who.add_argument("--student", action="store_true", help="leave the solution cells out")
    who.add_argument("--instructor", action="store_true", help="keep every cell")
    parser.commands["teach build"] = build
    parser.commands["teach show"] = show
    parser.commands["teach"] = teach


def _parse(parser: CommandParser, argv: list[str]) -> argparse.Namespace:
    """Parse ``argv``; an argument nobody knows is named, with the usage of where it was given."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.commands.get(args.command, parser).error(
            f"unrecognized arguments: {' '.join(extra)}"
        )
    if args.command is None:
        parser.error("a command is needed: demo, serve, tail or teach (see tempsched-lab --help)")
    return args


class Output:
    """Prints lines to ``stream``; once its reader has gone (a closed pipe), quietly nothing.

    The Python documentation's recipe for ``BrokenPipeError`` (see the ``signal``
    module, "Note on SIGPIPE"): point the stream's file descriptor at
    ``os.devnull`` so that the interpreter's last flush cannot fail again, and
    carry on; :attr:`closed` tells the caller to exit with status 1.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.closed = False

    def __call__(self, text: str) -> None:
        if self.closed:
            return
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except BrokenPipeError:
            self.close_quietly()

    def close_quietly(self) -> None:
        """Send whatever is still to be written to ``os.devnull``."""
        self.closed = True
        try:
            fd = self.stream.fileno()
        except (AttributeError, OSError, ValueError):  # not a real file (a test's StringIO)
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)


def demo(args: argparse.Namespace, say: Output) -> int:
    """The ``demo`` command: run, print as it goes, write the files; returns the exit status."""
    out: Path = args.out
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".tempsched-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        print(f"tempsched-lab: error: cannot write to --out {out}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    started = time.perf_counter()
    mode = "a virtual clock (no waiting)" if args.virtual else "the real clock"
    say(f"running the demo scenario for {args.seconds:g} s on {mode}; each step as it happens:")
    from .demo import run_demo, summary_text, write_outputs
    from .reading.narration import Narrator

    say(Narrator.header())

    result = run_demo(virtual=args.virtual, seconds=args.seconds, say=say)
    say(summary_text(result))
    say(f"writing into {out}/ ...")
    status = EXIT_OK if result.report.ok else EXIT_FAILED
    for output in write_outputs(result, out):
        if output.skipped:
            say(f"  skipped {output.path}: {output.skipped}")
        else:
            say(f"  wrote {output.path}: {output.what}")
    took = time.perf_counter() - started
    ran = result.run_seconds
    say(f"done in {took:.1f} s: the scenario {ran:.1f} s, importing and drawing {took - ran:.1f} s")
    return status


def _named(items: list[str]) -> list[tuple[str, str]]:
    """``NAME=VALUE`` items as ``(NAME, VALUE)`` (a bare VALUE, or a URL: ``("", VALUE)``)."""
    import re

    out = []
    for item in items:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)=(.+)", item)
        out.append((match[1], match[2]) if match else ("", item))
    return out


def _sources(args: argparse.Namespace) -> tuple[dict[str, str], dict[str, Path], str | None]:
    """The ``tail`` command's sources by name, and their token files; or the usage error."""
    from .remote.tail import source_name

    sources: dict[str, str] = {}
    for name, source in _named(args.source):
        name = name or source_name(source)
        if name in sources:
            return {}, {}, f"SOURCE {source}: the name {name!r} is taken (give NAME=SOURCE)"
        sources[name] = source
    tokens: dict[str, Path] = {}
    for name, file in _named(args.token_file or []):
        if not name and len(sources) == 1:
            name = next(iter(sources))
        elif not name:
            return {}, {}, f"--token-file {file}: with several sources, give NAME={file}"
        if name not in sources:
            return {}, {}, f"--token-file {name}={file}: no source is named {name!r}"
        if name in tokens:
            return {}, {}, f"--token-file {name}={file}: {name!r} has a token file already"
        tokens[name] = Path(file)
    return sources, tokens, None


def tail(args: argparse.Namespace, say: Output) -> int:
    """The ``tail`` command: follow served schedulers or spill directories; returns the status."""
    from .remote.mirror import RemoteScheduler
    from .remote.tail import open_source, tail_many
    from .remote.tail import tail as follow

    sources, files, error = _sources(args)
    if error:
        print(f"tempsched-lab: error: tail: {error}", file=sys.stderr)
        return EXIT_USAGE
    tokens: dict[str, str] = {}
    for name, file in files.items():
        try:
            tokens[name] = file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeError) as exc:
            print(f"tempsched-lab: error: --token-file {file}: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if not tokens[name]:
            print(f"tempsched-lab: error: --token-file {file} is empty", file=sys.stderr)
            return EXIT_USAGE
    mirrors: dict[str, RemoteScheduler] = {}
    try:
        for name, source in sources.items():
            try:
                mirrors[name] = open_source(
                    source, token=tokens.get(name), from_start=args.from_start
                )
            except (OSError, ValueError) as exc:  # unreachable, refused, not a spill directory
                where = f"{name}: " if len(sources) > 1 else ""
                print(f"tempsched-lab: error: tail: {where}{exc}", file=sys.stderr)
                return EXIT_FAILED
        if len(mirrors) == 1:
            follow(
                next(iter(mirrors.values())),
                say,
                from_start=args.from_start,
                gone=lambda: say.closed,
            )
        else:
            tail_many(mirrors, say, from_start=args.from_start, gone=lambda: say.closed)
    finally:
        for mirror in mirrors.values():
            mirror.close()
    return EXIT_OK


#: How ``serve`` is called: what is required and what is optional.
SERVE_USAGE = "tempsched-lab serve [-h] NOTEBOOK [VOILA_OPTION ...]"


#: JupyterLab extensions a Voila page of ``serve`` does not load (see :func:`voila_command`).
VOILA_SKIPS = ["@jupyter-notebook/lab-extension"]


def voila_command(notebook: Path, options: list[str]) -> tuple[list[str], dict[str, str]]:
    """The Voila command line and environment that :func:`serve` runs.

    >>> cmd, env = voila_command(Path("notebooks/05_live_dashboard.ipynb"), ["--port=8866"])
    >>> cmd[1:5], cmd[-1]
    (['-m', 'voila', 'notebooks/05_live_dashboard.ipynb', '--template=tempsched'], '--port=8866')
    >>> [o for o in cmd if "denylist" in o]
    ["--VoilaConfiguration.extension_denylist=['@jupyter-notebook/lab-extension']"]
    >>> Path(env["JUPYTER_PATH"].split(os.pathsep)[0]).name
    'voila_template'
    """
    templates = Path(__file__).resolve().parent / "widgets" / "voila_template"
    env = dict(os.environ)
    env["JUPYTER_PATH"] = os.pathsep.join(
        p for p in (str(templates), os.environ.get("JUPYTER_PATH", "")) if p
    )
    ip = (
        []
        if any(o.startswith(("--ip", "--Voila.ip")) for o in options)
        else ["--Voila.ip=127.0.0.1"]
    )
    # each cell's output is sent as soon as the cell has run: the first picture shows while later
    # cells still run (first widget of notebook 09 under load: 11.9 s whole, 6.6 s progressive;
    # docs/widgets.md, "First paint in Voila"). Voila 0.5 dropped a cell's outputs after a
    # widget the page had not heard of yet: the tempsched template's page splits them.
    progressive = (
        []
        if any("progressive_rendering" in o for o in options)
        else ["--VoilaConfiguration.progressive_rendering=True"]
    )
    # Notebook 7's JupyterLab extension (installed with `notebook`, the notebooks extra) fails
    # to load in Voila 0.5's page ("The getter for the shared module is not a function",
    # @jupyterlab/docregistry) and adds nothing a Voila page shows: Voila is told to skip it
    skip = (
        []
        if any("extension_denylist" in o or "extension_allowlist" in o for o in options)
        else [f"--VoilaConfiguration.extension_denylist={VOILA_SKIPS!r}"]
    )
    command = [
        sys.executable, "-m", "voila", str(notebook), "--template=tempsched", *ip, *progressive,
        *skip,
    ]  # fmt: skip
    return [*command, *options], env


def serve(args: argparse.Namespace) -> int:
    """The ``serve`` command: Voila with the project's page template; returns Voila's status."""
    import importlib.util
    import subprocess

    notebook: Path | None = args.notebook
    if notebook is None:
        print(
            f"usage: {SERVE_USAGE}\n"
            "tempsched-lab serve: error: NOTEBOOK is required (a .ipynb file, or a folder of "
            "them); Voila options after it are optional",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if not notebook.exists():  # a notebook, or a folder of them (Voila lists it)
        print(f"tempsched-lab: error: serve: no notebook at {str(notebook)!r}", file=sys.stderr)
        return EXIT_USAGE
    if importlib.util.find_spec("voila") is None:
        print(
            "tempsched-lab: error: serve needs Voila: pip install 'tempsched-lab[notebooks]'",
            file=sys.stderr,
        )
        return EXIT_FAILED
    command, env = voila_command(notebook, list(args.voila_options))
    if os.name == "posix":  # Voila takes this process's place: its signals, its exit status
        sys.stdout.flush()
        os.execve(command[0], command, env)
    return subprocess.call(command, env=env)  # pragma: no cover (Windows)


def teach(args: argparse.Namespace, parser: argparse.ArgumentParser, say: Output) -> int:
    """``tempsched-lab teach list | show NAME | build --student|--instructor SRC DEST``."""
    from .teach import catalog, exercise

    if args.action == "list":
        width = max(map(len, catalog()))
        for name, summary in catalog().items():
            say(f"{name:<{width}}  {summary}")
        return EXIT_OK
    if args.action == "show":
        try:
            ex = exercise(args.name, seed=args.seed)
        except ValueError as exc:
            parser.error(str(exc))
        say(f"{ex.title} ({ex.share})\n\n{ex.problem}\n\nAnswer as {ex.answer_form}.")
        if args.answer:
            say("\n" + ex.solution())
        return EXIT_OK
    from .teach.build import build_notebooks

    try:
        built = build_notebooks(args.source, args.target, student=args.student)
    except ImportError as exc:
        print(f"tempsched-lab teach build: {exc} (pip install nbformat)", file=sys.stderr)
        return EXIT_FAILED
    except ValueError as exc:
        parser.error(str(exc))
    except OSError as exc:
        print(f"tempsched-lab teach build: {exc}", file=sys.stderr)
        return EXIT_FAILED
    for b in built:
        kept = f"{b.cells - b.removed} of {b.cells} cells"
        say(f"{b.target}: {kept} ({b.removed} solution cells left out)")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tempsched-lab`` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    say = Output(sys.stdout)
    if hasattr(sys.stdout, "reconfigure"):  # a label or a sentence may not fit the terminal's
        sys.stdout.reconfigure(errors="backslashreplace")  # encoding: never fail on it
    parser = build_parser()
    try:
        if not argv:
            parser.print_help()
            sys.stdout.flush()
            return EXIT_OK
        args = _parse(parser, argv)
        if args.command == "serve":
            return serve(args)
        if args.command == "tail":
            status = tail(args, say)
        elif args.command == "teach":
            command = parser.commands.get(f"teach {args.action}", parser.commands["teach"])
            status = teach(args, command, say)
        else:
            if not args.seconds > 0 or args.seconds > 3600:
                parser.commands["demo"].error(
                    f"--seconds {args.seconds:g}: must be > 0 and at most 3600"
                )
            status = demo(args, say)
        sys.stdout.flush()
    except BrokenPipeError:  # the help or the version, to a reader that has gone
        say.close_quietly()
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("tempsched-lab: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_FAILED if say.closed else status


if __name__ == "__main__":
    sys.exit(main())
