"""An example service: a small Starlette app whose scheduler works, with its feed mounted.

Run it as a process of its own (the way a real service runs)::

    python -m tempsched_lab.serve.example --port 0 --spill runs/ --token-file token.txt

It prints the feed's URL as its **first stdout line** (``http://127.0.0.1:PORT/scheduler``;
the routes are that URL + ``/v1/...``) and, with ``--spill``, ``spill <directory>`` as the
second: ``DIR`` is a :class:`~tempsched_lab.log.files.Lineage`, each run spills to a new
``DIR/run-NNN`` and **continues the same log** (its rows numbered after the previous
run's, the same ``log_id``), so a reader of a restarted service resumes where it was, and
the rows a killed process never wrote are one named gap. Each run records where it serves
(``DIR/serving.json``); with ``--port 0`` a restart takes the port the previous run served
on when it is free, so its URL stays the same across restarts. Its scheduler does what
services do:

* ``heartbeat``: a periodic task every ``--tick`` seconds (0.2 s);
* ``sync``: a periodic task every second that takes a few milliseconds;
* ``burst``: every ``--burst-every`` seconds, ``--burst-size`` one-shot jobs at random
  times within the next second (requests arriving together);
* ``report``: a cron task every minute (``* * * * *``; needs the ``cron`` extra, skipped
  with a note on stderr without it);
* ``load``: with ``--load N``, a periodic task N times a second (for benchmarks).

``--clock-skew SECONDS`` sets the service's clock wrong on purpose: its wall clock reads that
many seconds ahead of this machine's (behind if negative), as a host whose clock drifted
would (:func:`skew_wall_clock`). Its rows' ``wall`` and ``t``, its ``/v1/moment`` and its
cron times are all on that clock; a :class:`~tempsched_lab.Fleet` watching it estimates
the offset (notebook 12).

SIGTERM or Ctrl-C shuts the scheduler down first (its log closed complete on disk),
lets open streams send their last rows and ``event: closed``, then stops the server.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import random
import signal
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from ..core.scheduler import Scheduler
from ..log.files.lineage import record_serving, serving
from ..restarts import continuing_scheduler
from .app import Feed, asgi_app
from .budget import SHARE
from .server import HEAD_TIMEOUT, _ThreadServer, bind_socket, head_timed_protocol, url_host

__all__ = ["build_service", "main", "skew_wall_clock"]

FEED_PATH = "/scheduler"
#: The largest ``--clock-skew`` taken (s): a day either way.
MAX_SKEW = 86_400.0


def skew_wall_clock(seconds: float) -> None:
    """Make this process's wall clock read ``seconds`` ahead (behind if negative) from now on,
    as on a host whose clock is set wrong: ``time.time`` and ``time.time_ns`` are replaced.

    Call it before the scheduler is made: its clock, its log's ``wall`` column (the recorder
    keeps ``time.time`` when it is made), its cron times, the ``now`` it serves all follow.
    It is for the example service's ``--clock-skew`` only (a process of its own): it changes
    the whole process, every library in it included.

    >>> skew_wall_clock(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: clock_skew=nan: expected seconds between -86400 and 86400
    """
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, (int, float))
        or not -MAX_SKEW <= seconds <= MAX_SKEW
    ):
        raise ValueError(
            f"clock_skew={seconds!r}: expected seconds between {-MAX_SKEW:g} and {MAX_SKEW:g}"
        )
    real, real_ns, skew, skew_ns = time.time, time.time_ns, float(seconds), round(seconds * 1e9)

    def skewed() -> float:
        return real() + skew

    def skewed_ns() -> int:
        return real_ns() + skew_ns

    time.time, time.time_ns = skewed, skewed_ns


def _heartbeat() -> None:
    return None


def _sync() -> None:
    time.sleep(random.uniform(0.001, 0.005))


def _job(i: int) -> int:
    return i * i


def _report() -> str:
    return "report written"


def _burst(scheduler: Scheduler, size: int) -> None:
    for i in range(size):
        scheduler.schedule(_job, delay=random.uniform(0.0, 1.0), args=(i,), label="job")


def build_service(
    *,
    spill: Path | None = None,
    token: str | None = None,
    control_token: str | None = None,
    tick: float = 0.2,
    burst_every: float = 5.0,
    burst_size: int = 50,
    load: float = 0.0,
    max_log_rows: int | None = None,
    ping: float = 15.0,
    spill_interval: float | None = 1.0,
    share: float = SHARE,
) -> tuple[Starlette, Scheduler, Feed]:
    """The service's app, its scheduler (working already) and its feed.

    ``spill``: the lineage's root (each run spills to the next ``spill/run-NNN``,
    continuing the log of the runs before).
    """
    options: dict[str, Any] = {"name": "example-service", "executor": "pool"}
    options["max_log_rows"] = max_log_rows
    if spill is None:
        scheduler = Scheduler(**options)
    else:
        # a quiet service's rows reach the disk within this many seconds, so a SIGKILL loses
        # at most that much of its log (docs/event-log.md, "A time-bounded flush")
        options["log_spill_interval"] = spill_interval
        scheduler = continuing_scheduler(spill, **options)
    scheduler.schedule(_heartbeat, period=tick, label="heartbeat")
    scheduler.schedule(_sync, period=1.0, label="sync")
    scheduler.schedule(_burst, period=burst_every, args=(scheduler, burst_size), label="burst")
    if load > 0:
        scheduler.schedule(_heartbeat, period=1.0 / load, label="load")
    try:
        scheduler.schedule(_report, cron="* * * * *", label="report")
    except ImportError as exc:
        print(f"example service: no cron task ({exc})", file=sys.stderr)
    feed_app = asgi_app(scheduler, token=token, control_token=control_token, ping=ping, share=share)
    feed: Feed = feed_app.state.feed

    async def home(request: Request) -> JSONResponse:
        return JSONResponse({"service": "tempsched_lab example", "feed": FEED_PATH})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        scheduler.shutdown(wait=False)  # (the signal path shut it down already, waiting)

    app = Starlette(
        routes=[Route("/", home), Mount(FEED_PATH, app=feed_app)],
        lifespan=lifespan,
    )
    return app, scheduler, feed


def _bind(host: str, port: int, root: Path | None) -> socket.socket:
    """The service's socket: on ``port``; ``port=0`` with a spill root: the port the
    previous run served on when it is free (a restart keeps its address), else any."""
    if port == 0 and root is not None:
        previous = serving(root)
        if previous is not None:
            with contextlib.suppress(OSError):  # taken by now: any free port
                return bind_socket(host, previous["port"])
    return bind_socket(host, port)


def _read_token(path: str | None, what: str) -> str | None:
    if path is None:
        return None
    try:
        return Path(path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise SystemExit(f"{what}: cannot read {path} ({type(exc).__name__})") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the example service until SIGTERM or Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m tempsched_lab.serve.example")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--spill", help="spill to DIR/run-NNN, continuing the log of the runs before (a lineage)"
    )
    parser.add_argument("--token-file", help="file holding the read token")
    parser.add_argument("--control-token-file", help="file holding the control token")
    parser.add_argument(
        "--spill-interval",
        type=float,
        default=1.0,
        help="with --spill: the longest a row waits in memory before it is on disk (s)",
    )
    parser.add_argument("--tick", type=float, default=0.2, help="heartbeat period (s)")
    parser.add_argument(
        "--burst-every", type=float, default=5.0, help="a burst of one-off tasks this often (s)"
    )
    parser.add_argument("--burst-size", type=int, default=50, help="tasks per burst")
    parser.add_argument("--load", type=float, default=0.0, help="extra periodic runs per second")
    parser.add_argument(
        "--max-log-rows", type=int, default=None, help="rows kept in memory (default: all)"
    )
    parser.add_argument(
        "--ping", type=float, default=15.0, help="keep-alive comment on idle streams (s)"
    )
    parser.add_argument(
        "--share",
        type=float,
        default=SHARE,
        help="the feed's readers' share of the interpreter while the service is busy",
    )
    parser.add_argument(
        "--clock-skew",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="set the service's clock wrong on purpose: it reads SECONDS ahead of this "
        "machine's wall clock (behind if negative; its rows, its /v1/moment and its cron "
        f"times follow it; at most {MAX_SKEW:g} either way). For trying a fleet's clock "
        "offsets (notebook 12)",
    )
    parser.add_argument("--access-log", action="store_true", help="log each request (stderr)")
    args = parser.parse_args(argv)
    if not -MAX_SKEW <= args.clock_skew <= MAX_SKEW:  # (nan fails this too)
        print(
            f"example service: --clock-skew {args.clock_skew!r}: expected seconds between "
            f"{-MAX_SKEW:g} and {MAX_SKEW:g}",
            file=sys.stderr,
        )
        return 2
    if args.clock_skew:  # before the scheduler is made: everything in it reads the skewed clock
        skew_wall_clock(args.clock_skew)
    token = _read_token(args.token_file, "--token-file")
    control = _read_token(args.control_token_file, "--control-token-file")
    from .guard import check_token, is_loopback

    if token is None and not is_loopback(args.host):
        print(f"--host {args.host} is not loopback: give --token-file", file=sys.stderr)
        return 2
    try:  # before anything starts: a bad token file is one line, not a traceback
        check_token("--token-file", token)
        check_token("--control-token-file", control)
    except ValueError as exc:
        print(f"example service: {exc}", file=sys.stderr)
        return 2
    app, scheduler, feed = build_service(
        spill=None if args.spill is None else Path(args.spill),
        token=token,
        control_token=control,
        tick=args.tick,
        burst_every=args.burst_every,
        burst_size=args.burst_size,
        load=args.load,
        max_log_rows=args.max_log_rows,
        ping=args.ping,
        spill_interval=args.spill_interval,
        share=args.share,
    )
    sock = _bind(args.host, args.port, None if args.spill is None else Path(args.spill))
    port = sock.getsockname()[1]
    log_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    log_config["handlers"]["access"]["stream"] = "ext://sys.stderr"  # stdout: the URL only
    config = uvicorn.Config(
        app,
        log_config=log_config,
        access_log=args.access_log,
        timeout_graceful_shutdown=5,
        ws="none",
        http=head_timed_protocol(HEAD_TIMEOUT),  # half-sent requests closed, not kept
        log_level="info",
    )
    server = _ThreadServer(config)  # no uvicorn signal handlers: ours below, in order
    stopping = threading.Event()

    def stop() -> None:
        scheduler.shutdown(wait=True, timeout=10)  # every row recorded, the log on disk
        feed.wait_streams(5.0)  # open streams send their last rows and "closed"
        server.should_exit = True

    def on_signal(signum: int, frame: Any) -> None:
        if stopping.is_set():
            server.force_exit = True
            return
        stopping.set()
        threading.Thread(target=stop, name="example-stop", daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    url = f"http://{url_host(args.host)}:{port}{FEED_PATH}"
    if scheduler.log.spill_directory is not None:
        # where this run serves: the next run keeps the port, a watcher finds it again
        record_serving(scheduler.log.spill_directory, url)
    print(url, flush=True)
    if scheduler.log.spill_directory is not None:
        print(f"spill {scheduler.log.spill_directory}", flush=True)
    server.run(sockets=[sock])
    scheduler.shutdown(wait=True, timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
