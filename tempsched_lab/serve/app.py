"""The feed's routes (Starlette): moment, rows (Server-Sent Events), ranges (Arrow IPC), control.

``asgi_app(scheduler)`` builds them behind one :class:`~.guard.Guard`. Routes, all
under the app's root and versioned (``docs/serving.md`` has the details and curl
examples):

* ``GET /v1/moment``: the scheduler's :class:`~tempsched_lab.Moment` as JSON
  (:func:`~.wire.moment_to_json`);
* ``GET /v1/rows``: ``text/event-stream``; ``rows`` events (a JSON array of row
  objects, ``id:`` the last ``seq`` in it), ``gap`` events (rows that exist nowhere
  any more, named), ``closed`` once the scheduler shut down and every row was sent;
  resumes after ``Last-Event-ID`` (or ``?after=SEQ``);
* ``GET /v1/log?start=&stop=``: rows ``[start, stop)`` as an Arrow IPC stream, sent a
  record batch at a time (:mod:`~.ranges`);
* ``GET /v1/metrics``: counts of the log's rows in the Prometheus text format
  (OpenMetrics on request; :mod:`.metrics`);
* ``POST /v1/cancel``, ``/v1/pause``, ``/v1/resume``: only with a control token.

**No per-client queue.** A stream holds a cursor and asks the log for the rows after
it (:class:`~.reader.LogReader`), waking every ``poll`` seconds to compare the
cursor with ``log.next_seq``. A log tap would wake it sooner, but it turns every row
of the scheduler onto the log's slow path (``EventLog.append``, the row's dict and the
tap's call, under the scheduler's lock): ``schedule()`` with the log on 28,821 -> 65,320
instructions (2.27x), a periodic task's inline run 55,275 -> 193,568 (3.50x) with a tap
that only sets an event (callgrind, ``benchmarks/bench_serve.py --parts tap``), while a
poll reads one attribute off the lock and adds at most ``poll`` (25 ms) of latency.

**Polite readers.** Reading, encoding and sending rows runs in the service's interpreter
(~70,000 instructions a row against ~28,800 for the ``schedule()`` that recorded it): while
the scheduler is busy the streams share a CPU-time budget (:class:`~.budget.ReaderBudget`,
``share``), lagging and then catching up rather than taking its throughput.

**One log across restarts.** A scheduler that spills into a
:class:`~tempsched_lab.log.files.Lineage` run keeps its lineage's ``log_id``; the reader
serves the earlier runs' segments too and names the rows between runs that exist nowhere.
"""

from __future__ import annotations

import atexit
import json
import math
import re
import threading
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..log.files.lineage import Lineage
from ..time.clock import VirtualClock
from .budget import HOLD, SHARE, ReaderBudget
from .guard import Guard, check_token, install_redactor
from .metrics import LogCounts, exposition
from .ranges import RangeWriter
from .reader import Gap, LogReader
from .wire import dumps_rows, moment_to_json

if TYPE_CHECKING:
    from ..core.scheduler import Scheduler

__all__ = ["Feed", "asgi_app"]

ARROW = "application/vnd.apache.arrow.stream"
#: The most rows ``GET /v1/log`` gives at once (ask again for the next range).
MAX_RANGE = 1_000_000
_INT = re.compile(r"-?[0-9]{1,18}")
_CONTROL_PATHS = frozenset({"/v1/cancel", "/v1/pause", "/v1/resume"})
_MAX_BODY = 4_096
#: Batches read at once by a feed's streams: one, the readers' turn (serve/budget.py). Its
#: limiter queues the streams in arrival order (anyio's is FIFO), so every reader gets a turn.
_READS = 1
#: Bytes of an encoded event handed to the server at a time: a stalled reader's socket
#: then holds one slice in the server's buffer besides the event itself.
_SLICE = 65_536


_T = TypeVar("_T")
#: Seconds the interpreter's exit waits, at most, for the feeds' reads in flight.
PARK_TIMEOUT = 5.0


class Stopped(Exception):
    """The feed is stopped (its server closing, the interpreter exiting): no more reads."""


class BadInput(Exception):
    """A request the feed refuses with 400 and this reason."""


def _shown(value: str) -> str:
    """A client's value quoted for an error text, cut to 40 characters."""
    return repr(value if len(value) <= 40 else value[:37] + "...")


def _seq_param(name: str, text: str, *, low: int) -> int:
    if not _INT.fullmatch(text):
        raise BadInput(f"{name}={_shown(text)}: expected an integer seq (a row number)")
    value = int(text)
    if value < low:
        raise BadInput(f"{name}={value}: expected a seq of at least {low}")
    return value


class Feed:
    """One scheduler's feed: its reader, its identity, and the streams open on it.

    ``asgi_app`` makes one per app (``app.state.feed``); :func:`~.server.serve`'s handle
    and the example service use it to end streams and to wait for them.
    """

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        ping: float = 15.0,
        poll: float = 0.025,
        batch: int = 500,
        share: float = SHARE,
    ) -> None:
        self.scheduler = scheduler
        #: the lineage the log spills into (a service that continues its log across restarts)
        self.lineage = Lineage.of_run(scheduler.log.spill_directory)
        self.reader = LogReader(scheduler.log, batch=batch, lineage=self.lineage)
        #: this log's name: a client that meets another one met a new log (a lineage keeps
        #: one across its runs, so a restarted service's readers resume where they were)
        self.log_id = uuid.uuid4().hex if self.lineage is None else self.lineage.log_id
        self.ping = ping
        self.poll = poll
        #: the readers' share of the interpreter while the service is busy (see ReaderBudget)
        self.budget = ReaderBudget(share)
        #: set to end every stream (the server is closing)
        self.stopping = threading.Event()
        self._streams = 0
        self._count_lock = threading.Lock()
        self._paused_rate: float | None = None
        self._reads = 0  # reads in worker threads now (rows, segments, Arrow batches)
        _FEEDS.add(self)
        #: the streams' reads running at once: a batch's row objects and JSON text live
        #: while it is read, so N readers catching up together would hold N of them
        self._limiter: anyio.CapacityLimiter | None = None

    @property
    def streams(self) -> int:
        """Streams open now."""
        return self._streams

    def _opened(self, delta: int) -> None:
        with self._count_lock:
            self._streams += delta

    def moment_json(self) -> dict[str, Any]:
        """``GET /v1/moment``'s answer (takes the scheduler's lock: call it off the loop)."""
        s = self.scheduler
        moment = s.moment()
        first = self.reader.first_held()
        data = moment_to_json(moment, name=s.name, first_seq=first, log_id=self.log_id)
        data["ping"] = self.ping  # a mirror's read timeout follows it (remote/stream.py)
        return data

    def finished(self) -> bool:
        """The scheduler is shut down and will record no more rows."""
        s = self.scheduler
        return s.closed and s.running == 0

    # -- the stream ---------------------------------------------------------------------
    async def events(self, cursor: int) -> AsyncIterator[ServerSentEvent | memoryview]:
        """Events for a reader whose last row is ``cursor`` (``-1``: none yet)."""
        reader = self.reader
        self._opened(1)
        try:
            while not self.stopping.is_set():
                done = self.finished()  # read before the end: no row can follow it
                end = reader.next_seq
                self.budget.busy(end)  # a look at every poll: the verdict is never stale
                if cursor + 1 < end:
                    if self._limiter is None:  # made on the loop it serves
                        self._limiter = anyio.CapacityLimiter(_READS)
                    try:
                        # queued in arrival order for the readers' one turn at a time
                        gap, last, count, event, busy = await anyio.to_thread.run_sync(
                            self.reading, self._read, cursor + 1, limiter=self._limiter
                        )
                    except Stopped:
                        return
                    if gap is not None:
                        yield ServerSentEvent(
                            data=json.dumps(gap.to_json()), event="gap", id=str(gap.last)
                        )
                        cursor = gap.last
                        continue
                    if count:
                        began = time.thread_time()  # the event's sending, here
                        # the encoded event alone: no row object or JSON text waits with it
                        # while a stalled reader's socket is full, and it goes out in
                        # slices (the server's send buffer holds a slice, not a copy)
                        view = memoryview(event)
                        del event
                        for at in range(0, len(view), _SLICE):
                            yield view[at : at + _SLICE]
                        view.release()
                        self.budget.spent(time.thread_time() - began, busy)
                        cursor = last
                        if count >= reader.batch:
                            continue  # more is waiting: no pause while catching up
                elif done:
                    yield ServerSentEvent(data=json.dumps({"seq": end}), event="closed")
                    return
                await anyio.sleep(self.poll)
        finally:
            self._opened(-1)

    def _read(self, start: int) -> tuple[Gap | None, int, int, bytes, bool]:
        """A batch from ``start`` as ``(gap, last seq, rows, the encoded rows event, busy)``,
        read in the readers' turn (:meth:`~.budget.ReaderBudget.turn`: waited for here, in
        a worker thread, so the wait costs the service nothing) and charged by its CPU time
        (``time.thread_time`` is this thread's alone). The row objects and their JSON text
        are dropped here: a stream holds the event's bytes only (a stalled reader's socket
        may keep it waiting)."""
        reader, budget = self.reader, self.budget
        while (wait := budget.turn(reader.next_seq)) > 0:
            # in slices, each a look: a pause earned while busy ends when the service is idle
            if self.stopping.wait(min(wait, HOLD)):
                raise Stopped("the feed is stopped: no more reads")
        busy = budget.turn_busy
        began = time.thread_time()
        try:
            batch = reader.read(start, most=reader.batch if busy else None)
            if batch.gap is not None or not batch.rows:
                return batch.gap, start - 1, 0, b"", busy
            last, count = int(batch.rows[-1]["seq"]), len(batch.rows)
            data = dumps_rows(batch.rows)
            del batch
            event = ServerSentEvent(data=data, event="rows", id=str(last)).encode()
            del data
            return None, last, count, event, busy
        finally:
            budget.done(time.thread_time() - began, reader.next_seq)

    def reading(self, read: Callable[..., _T], *args: Any) -> _T:
        """``read(*args)``, counted as a read in flight (in a worker thread), so that
        :meth:`park` can wait for it; refused once the feed is parked."""
        with self._count_lock:
            if self.stopping.is_set():
                raise Stopped("the feed is stopped: no more reads")
            self._reads += 1
        try:
            return read(*args)
        finally:
            with self._count_lock:
                self._reads -= 1

    def park(self, timeout: float = PARK_TIMEOUT) -> bool:
        """End every stream and wait (at most ``timeout`` s) for the reads in flight: no
        thread of the feed is then inside pyarrow or the log. True if none is.

        Run at the interpreter's exit for every feed (``atexit``): a script that serves
        a spilled log and ends without ``close()`` while readers catch up would otherwise
        finalize with worker threads inside pyarrow (an abort, status 134). Final: a
        parked feed reads nothing more.
        """
        with self._count_lock:
            self.stopping.set()
        deadline = time.monotonic() + timeout
        while self._reads and time.monotonic() < deadline:
            threading.Event().wait(0.01)
        return self._reads == 0

    def wait_streams(self, timeout: float) -> bool:
        """Wait (bounded) until no stream is open; True if none is."""
        deadline = time.monotonic() + timeout
        while self._streams and time.monotonic() < deadline:
            threading.Event().wait(0.02)
        return self._streams == 0


#: Every feed made in this process, parked at the interpreter's exit.
_FEEDS: weakref.WeakSet[Feed] = weakref.WeakSet()


@atexit.register
def _park_all() -> None:
    """At exit: no feed's thread inside pyarrow or the log while the interpreter finalizes
    (each feed waits for its reads in flight, all of them within :data:`PARK_TIMEOUT`)."""
    deadline = time.monotonic() + PARK_TIMEOUT
    feeds = list(_FEEDS)
    for feed in feeds:
        with feed._count_lock:
            feed.stopping.set()
    for feed in feeds:
        feed.park(max(0.0, deadline - time.monotonic()))


# -- routes ---------------------------------------------------------------------------------
def _feed(request: Request) -> Feed:
    feed: Feed = request.app.state.feed
    return feed


def _headers(feed: Feed) -> dict[str, str]:
    return {"X-Tempsched-Log-Id": feed.log_id, "Cache-Control": "no-store"}


async def moment_route(request: Request) -> Response:
    feed = _feed(request)
    data = await anyio.to_thread.run_sync(feed.reading, feed.moment_json)
    return JSONResponse(data, headers=_headers(feed))


def _cursor(request: Request, end: int) -> int:
    """The last seq the reader has: ``Last-Event-ID``, else ``?after=``, else the live end."""
    header = request.headers.get("last-event-id")
    if header is not None:
        value = _seq_param("Last-Event-ID", header.strip(), low=0)
        name = "Last-Event-ID"
    else:
        after = request.query_params.get("after")
        if after is None:
            return end - 1
        value = _seq_param("after", after.strip(), low=-1)
        name = "after"
    if value >= end:
        rows = f"seq 0..{end - 1}" if end else "none yet"
        raise BadInput(
            f"{name}={value}: this log has {end:,} rows ({rows}); a seq from another log? "
            "(GET /v1/moment: log_id names this one)"
        )
    return value


async def rows_route(request: Request) -> Response:
    feed = _feed(request)
    cursor = _cursor(request, feed.reader.next_seq)
    return EventSourceResponse(
        feed.events(cursor), ping=feed.ping, headers=_headers(feed), send_timeout=None
    )


async def log_route(request: Request) -> Response:
    feed = _feed(request)
    end = feed.reader.next_seq
    params = request.query_params
    start = _seq_param("start", params.get("start", "0").strip(), low=0)
    stop = _seq_param("stop", params.get("stop", str(end)).strip(), low=0)
    if stop < start:
        raise BadInput(f"start={start}, stop={stop}: expected start <= stop")
    if stop > end:
        raise BadInput(f"stop={stop}: this log has {end:,} rows (stop may be at most {end})")
    if stop - start > MAX_RANGE:
        raise BadInput(
            f"start={start}, stop={stop}: {stop - start:,} rows; at most {MAX_RANGE:,} at once"
        )
    answer = RangeWriter(feed.reader, start, stop, log_id=feed.log_id)
    gap = await anyio.to_thread.run_sync(feed.reading, answer.gap)
    if gap is not None:
        return JSONResponse(
            {"error": "rows of this range exist nowhere any more", "gap": gap.to_json()},
            status_code=409,
            headers=_headers(feed),
        )
    # a batch at a time, each made in a worker thread: memory stays a few batches (ranges.py)
    pieces = answer.pieces()
    done = object()

    async def body() -> AsyncIterator[bytes]:
        while not feed.stopping.is_set():  # stopped: the answer is cut (no end-of-stream)
            try:
                piece = await anyio.to_thread.run_sync(feed.reading, next, pieces, done)
            except Stopped:
                return
            if piece is done:
                return
            assert isinstance(piece, bytes)
            yield piece

    return StreamingResponse(body(), media_type=ARROW, headers=_headers(feed))


async def metrics_route(request: Request) -> Response:
    counts: LogCounts = request.app.state.metrics
    accept = request.headers.get("accept")
    body, content_type = await anyio.to_thread.run_sync(exposition, counts, accept)
    return Response(body, headers={"Content-Type": content_type, "Cache-Control": "no-store"})


async def _json_body(request: Request, *, optional: bool = False) -> dict[str, Any]:
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > _MAX_BODY:
            raise BadInput(f"the body is larger than {_MAX_BODY:,} bytes")
    if not raw.strip() and optional:
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise BadInput("the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise BadInput("expected a JSON object as the body")
    return data


async def cancel_route(request: Request) -> Response:
    feed = _feed(request)
    data = await _json_body(request)
    task_id = data.get("task_id")
    if isinstance(task_id, bool) or not isinstance(task_id, int):
        raise BadInput(f"task_id={_shown(json.dumps(task_id))}: expected an integer task ID")
    s = feed.scheduler
    try:
        s.status(task_id)
    except (KeyError, ValueError, TypeError, OverflowError):
        raise BadInput(f"task_id={_shown(str(task_id))}: no task has this ID") from None
    result = await anyio.to_thread.run_sync(s.cancel, task_id)
    return JSONResponse({"task_id": task_id, "result": result.value}, headers=_headers(feed))


def _virtual_clock(feed: Feed) -> VirtualClock:
    clock = feed.scheduler.clock
    if not isinstance(clock, VirtualClock):
        raise HTTPException(
            409,
            f"this scheduler's clock ({type(clock).__name__}) cannot be paused: "
            "only a VirtualClock plays and pauses",
        )
    return clock


async def pause_route(request: Request) -> Response:
    feed = _feed(request)
    clock = _virtual_clock(feed)
    rate = clock.rate
    if rate > 0:
        feed._paused_rate = rate
    await anyio.to_thread.run_sync(clock.pause)
    return JSONResponse({"paused": True, "rate_before": rate}, headers=_headers(feed))


async def resume_route(request: Request) -> Response:
    feed = _feed(request)
    clock = _virtual_clock(feed)
    data = await _json_body(request, optional=True)
    rate = data.get("rate", feed._paused_rate or 1.0)
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate):
        raise BadInput(f"rate={_shown(json.dumps(rate))}: expected a positive number")
    if not 0 < rate <= 1e9:
        raise BadInput(f"rate={rate!r}: expected a number in (0, 1e9]")
    if feed.scheduler.closed:
        raise HTTPException(409, "the scheduler is shut down")
    await anyio.to_thread.run_sync(clock.play, float(rate))
    return JSONResponse({"paused": False, "rate": float(rate)}, headers=_headers(feed))


async def _stopped(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": str(exc)}, status_code=503)


async def _bad_input(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": str(exc)}, status_code=400)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)


def asgi_app(
    scheduler: Scheduler,
    *,
    token: str | None = None,
    control_token: str | None = None,
    ping: float = 15.0,
    poll: float = 0.025,
    batch: int = 500,
    share: float = SHARE,
) -> Starlette:
    """An ASGI app that serves ``scheduler``'s feed; mount it in a Starlette/FastAPI service.

    Args:
        scheduler: the scheduler to serve (read by cursor; never written to).
        token: the read token (``Authorization: Bearer <token>`` on every route);
            ``None``: read routes answer loopback clients only.
        control_token: enables ``POST /v1/cancel``, ``/v1/pause``, ``/v1/resume``
            for requests bearing it (it grants reading too); ``None``: they answer 404.
        ping: seconds between keep-alive comments on an idle stream.
        poll: seconds between a stream's looks at the log's end (the latency it adds).
        batch: the most rows per ``rows`` event while following the live end.
        share: the most of the service's interpreter its readers take, together, while
            the rest of the process is busy (a CPU-time duty cycle,
            :class:`~.budget.ReaderBudget`): they lag, then catch up, losing nothing.
            ``1.0``: readers are never held back.

    Tokens must be at least 16 characters (``secrets.token_urlsafe(32)``); errors about
    them never show them.

    >>> from starlette.applications import Starlette
    >>> from starlette.routing import Mount
    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> scheduler = Scheduler(VirtualClock())
    >>> service = Starlette(routes=[Mount("/scheduler", app=asgi_app(scheduler))])
    """
    read = check_token("token", token)
    control = check_token("control_token", control_token)
    if read is not None and read == control:
        raise ValueError("token and control_token are the same: give the control token its own")
    for name, value in (("ping", ping), ("poll", poll)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f"{name}={value!r}: expected a positive number of seconds")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch={batch!r}: expected a positive number of rows")
    routes = [
        Route("/v1/moment", moment_route, methods=["GET"]),
        Route("/v1/rows", rows_route, methods=["GET"]),
        Route("/v1/log", log_route, methods=["GET"]),
        Route("/v1/metrics", metrics_route, methods=["GET"]),
    ]
    if control is not None:
        routes += [
            Route("/v1/cancel", cancel_route, methods=["POST"]),
            Route("/v1/pause", pause_route, methods=["POST"]),
            Route("/v1/resume", resume_route, methods=["POST"]),
        ]
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(
                Guard,
                token=read,
                control_token=control,
                control_paths=_CONTROL_PATHS,
            )
        ],
        exception_handlers={
            BadInput: _bad_input,
            Stopped: _stopped,
            HTTPException: _http_error,
        },
    )
    budget = ReaderBudget(share)  # checks share (before anything is built)
    app.state.feed = Feed(scheduler, ping=ping, poll=poll, batch=batch, share=budget.share)
    app.state.metrics = LogCounts(app.state.feed.reader)
    install_redactor()  # the server's access log writes request lines, queries included
    return app
