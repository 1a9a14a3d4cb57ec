"""Follow a served scheduler over HTTP: its moment once, then its rows as Server-Sent Events.

:func:`attach` asks ``GET /v1/moment`` (who the scheduler is: name, time origin,
queue design, log identity, keep-alive interval), then a daemon thread reads
``GET /v1/rows`` (SSE, with ``httpx`` and ``httpx-sse``) and hands each event to the
mirror: ``rows`` are applied (each exactly once, in ``seq`` order), a ``gap`` is
named, ``closed`` ends the mirror. When the connection drops, the link turns
``reconnecting`` at once and the thread tries again after a backoff (doubling from
:data:`BACKOFF` to :data:`BACKOFF_MAX` seconds, with full jitter; a connection that
was live for less than :data:`BACKOFF_MAX` seconds does not start the count again),
resuming with ``Last-Event-ID`` = the last ``seq`` applied, so nothing is skipped or
applied twice.

An event the mirror cannot read (not JSON, not rows, rows out of order, over
:data:`MAX_EVENT_BYTES` or not finished within the read timeout) never ends the
thread: the link turns ``failed`` naming the event, and the thread tries again,
backing off up to :data:`FAILED_BACKOFF_MAX` seconds between attempts. A connection
that stays silent longer than the read timeout (:func:`read_timeout` of the feed's
keep-alive interval, ``ping`` in its moment: 20 s for the default 15 s) counts as
dropped. The thread never prints; what happens is in
:attr:`RemoteScheduler.link <tempsched_lab.remote.RemoteScheduler.link>`.

See ``docs/serving.md`` for the wire.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..core.task import CancelResult
from ..log.files.lineage import serving
from ..serve.wire import moment_from_json
from .link import Link, LinkState
from .mirror import RemoteScheduler

if TYPE_CHECKING:
    import httpx

__all__ = [
    "BACKOFF",
    "BACKOFF_MAX",
    "FAILED_BACKOFF_MAX",
    "MAX_EVENT_BYTES",
    "READ_TIMEOUT",
    "StreamFeed",
    "attach",
    "read_timeout",
]

#: Seconds before the first reconnection attempt (doubled at each failed one).
BACKOFF = 0.25
#: Seconds between attempts at most.
BACKOFF_MAX = 5.0
#: Seconds between attempts at most while the feed sends events the mirror cannot read.
FAILED_BACKOFF_MAX = 30.0
#: Seconds of silence after which a connection counts as dropped, at least (keep-alives
#: come every ``ping`` seconds, 15 by default: see :func:`read_timeout`).
READ_TIMEOUT = 20.0
#: Seconds to connect (and for the short requests: the moment, a cancel).
CONNECT_TIMEOUT = 5.0
#: Seconds the moment's whole answer may take (a trickled answer is cut there).
MOMENT_TIMEOUT = 15.0
#: Bytes one event may hold at most, unless ``attach(max_event_bytes=)`` says otherwise
#: (the service's events are one batch of rows each: 500 rows, about 0.2 MB, by default).
MAX_EVENT_BYTES = 16 * 2**20
#: The longest keep-alive interval a feed may announce (s); a longer one counts as this.
_PING_MAX = 3600.0
#: A blank line (two line ends: CRLF, LF or a lone CR each), which ends an SSE event.
_BLANK = re.compile(rb"(?:\r\n|\n|\r(?!\n))(?:\r\n|\n|\r(?!\n))")


def read_timeout(ping: object) -> float:
    """Seconds of silence after which a stream whose server pings every ``ping`` seconds
    counts as dropped: a third more than ``ping``, at least :data:`READ_TIMEOUT`
    (``ping`` not a positive number: :data:`READ_TIMEOUT`).

    >>> read_timeout(15.0), read_timeout(30), read_timeout(None)
    (20.0, 40.0, 20.0)
    """
    if isinstance(ping, bool) or not isinstance(ping, (int, float)) or not ping > 0:
        return READ_TIMEOUT
    if not math.isfinite(ping):
        ping = _PING_MAX
    return max(READ_TIMEOUT, min(float(ping), _PING_MAX) * 4 / 3)


class AttachError(ConnectionError):
    """The service could not be reached or refused us (the message says which, never the token)."""


def _headers(token: str | None) -> dict[str, str]:
    return {} if token is None else {"Authorization": f"Bearer {token}"}


def _check_token(name: str, token: str | None) -> None:
    if token is not None and (not isinstance(token, str) or not token or "\n" in token):
        raise ValueError(f"{name}: expected a non-empty one-line string or None")


def _refused(response: httpx.Response, url: str) -> AttachError:
    reason = ""
    try:
        reason = str(response.json().get("error") or response.json().get("detail") or "")
    except (ValueError, AttributeError):
        reason = response.text[:200]
    status = response.status_code
    hint = {401: " (a missing or wrong token)", 403: " (this token may not do that)"}.get(
        status, ""
    )
    return AttachError(f"{url}: HTTP {status}{hint}" + (f": {reason}" if reason else ""))


def attach(
    url: str | os.PathLike[str],
    *,
    token: str | None = None,
    control_token: str | None = None,
    from_start: bool = True,
    max_rows: int | None = None,
    max_event_bytes: int = MAX_EVENT_BYTES,
) -> RemoteScheduler:
    """A live, read-only mirror of the scheduler served at ``url`` (``.../`` where ``/v1/`` is).

    Args:
        url: the app's root, e.g. ``"http://127.0.0.1:8000/scheduler"``; or the service's
            spill root (a :class:`~tempsched_lab.log.files.Lineage` directory, whose runs
            record where they serve): the mirror attaches to the latest run's URL and,
            when it stops answering, follows the address the next run records there (on
            the same host only: the token goes nowhere else).
        token: the read token, if the service has one (sent as ``Authorization: Bearer``).
        control_token: lets :meth:`RemoteScheduler.cancel` reach the service (and the
            dashboard show its controls).
        from_start: fetch every row the service still has (memory, then its spill);
            ``False``: only rows recorded from now on.
        max_rows: keep only the newest ``max_rows`` rows (``None``: every row); older
            ones are dropped, named by :attr:`RemoteScheduler.dropped_rows`.
        max_event_bytes: the most bytes one event may hold: a longer one (a feed that
            never ends its event) turns the link ``failed: event over N bytes``.

    Raises :class:`AttachError` (a ``ConnectionError``) when the service cannot be
    reached or refuses the token: at the call, not later in a thread.

    >>> mirror = attach("http://127.0.0.1:1/")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tempsched_lab.remote.stream.AttachError: http://127.0.0.1:1: cannot connect ...
    """
    import httpx

    lineage_root = None
    if isinstance(url, os.PathLike) or (
        isinstance(url, str) and not url.startswith(("http://", "https://")) and os.path.isdir(url)
    ):
        lineage_root = os.fspath(url)
        record = serving(lineage_root)
        if record is None:
            raise AttachError(
                f"url={lineage_root!r}: a directory, but no run of it recorded where it serves "
                "(serving.json): give the service's URL"
            )
        url = str(record["url"])
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError(f"url={url!r}: expected an http:// or https:// URL, or a spill root")
    _check_token("token", token)
    _check_token("control_token", control_token)
    if (
        isinstance(max_event_bytes, bool)
        or not isinstance(max_event_bytes, int)
        or max_event_bytes < 1024
    ):
        raise ValueError(f"max_event_bytes={max_event_bytes!r}: expected an int of at least 1024")
    root = url.rstrip("/")
    client = httpx.Client(
        headers=_headers(token),
        timeout=httpx.Timeout(CONNECT_TIMEOUT, read=READ_TIMEOUT),
    )
    try:
        data = _moment(client, root, max_event_bytes)
    except BaseException:
        client.close()
        raise
    moment = moment_from_json(data)
    canceller = None
    if control_token is not None:

        def canceller(task_id: int) -> CancelResult:
            return _cancel(root, control_token, task_id)

    mirror = RemoteScheduler(
        root,
        name=data.get("name"),
        time_origin=moment.time_scale.origin,
        design=moment.queue.design,
        canceller=canceller,
        live_clock=True,
        max_rows=max_rows,
    )
    mirror.clock.hear(moment.now, running=not moment.closed)
    feed = StreamFeed(
        mirror, client, root, log_id=data.get("log_id"), max_event_bytes=max_event_bytes
    )
    feed.lineage_root = lineage_root
    mirror.feed = feed
    if not from_start:
        feed.start_at(moment.seq)
    feed.start()
    return mirror


def _moment(client: httpx.Client, root: str, most: int = MAX_EVENT_BYTES) -> dict[str, Any]:
    """``GET /v1/moment``'s object: at most ``most`` bytes, within :data:`MOMENT_TIMEOUT`."""
    import httpx

    deadline = time.monotonic() + MOMENT_TIMEOUT
    try:
        with client.stream("GET", f"{root}/v1/moment", timeout=CONNECT_TIMEOUT) as response:
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > most:
                    raise AttachError(f"{root}/v1/moment: an answer over {most:,} bytes")
                if time.monotonic() > deadline:
                    raise AttachError(
                        f"{root}/v1/moment: the answer took over {MOMENT_TIMEOUT:g} s "
                        f"({len(body):,} bytes so far)"
                    )
    except httpx.HTTPError as exc:
        raise AttachError(f"{root}: cannot connect ({type(exc).__name__}: {exc})") from None
    if response.status_code != 200:
        raise _refused(httpx.Response(response.status_code, content=bytes(body)), root)
    try:
        data = json.loads(bytes(body))
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise AttachError(f"{root}/v1/moment: not a moment (expected a JSON object)")
    return data


def _cancel(root: str, control_token: str, task_id: int) -> CancelResult:
    import httpx

    try:
        response = httpx.post(
            f"{root}/v1/cancel",
            json={"task_id": task_id},
            headers=_headers(control_token),
            timeout=CONNECT_TIMEOUT,
        )
    except httpx.HTTPError as exc:
        raise AttachError(f"{root}: cannot cancel ({type(exc).__name__})") from None
    if response.status_code != 200:
        raise _refused(response, f"{root}/v1/cancel")
    return CancelResult(response.json()["result"])


class StreamFeed:
    """The thread that reads a served scheduler's rows into a mirror (see the module docstring)."""

    def __init__(
        self,
        mirror: RemoteScheduler,
        client: httpx.Client,
        root: str,
        *,
        log_id: Any = None,
        max_event_bytes: int = MAX_EVENT_BYTES,
    ) -> None:
        self.mirror = mirror
        self.client = client
        self.root = root
        self.log_id = log_id
        self.connections = 0  #: connections made to the stream so far
        self.max_event_bytes = max_event_bytes
        #: seconds of silence after which the stream counts as dropped (the feed's ping)
        self.read_timeout = READ_TIMEOUT
        self._live_since: float | None = None  # time.monotonic() when the stream went live
        #: the service's spill root, whose runs record where they serve (``None``: unknown)
        self.lineage_root: str | None = None
        #: the addresses followed after restarts on another port, in order
        self.moves: list[str] = []
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._sock_lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name="tempsched-attach", daemon=True)
        self._live_only = False
        mirror.add_stopper(self.stop)

    def start_at(self, seq: int) -> None:
        """Begin at ``seq`` instead of the first row (rows before it are not asked for)."""
        self.mirror.begin_at(seq)
        self._live_only = True

    def start(self) -> None:
        """Start reading (a daemon thread)."""
        self.thread.start()

    def drop(self) -> None:
        """Cut the current connection as a network failure would (the feed reconnects)."""
        with self._sock_lock:
            sock = self._sock
        if sock is not None:
            with contextlib.suppress(OSError):  # closed already
                sock.shutdown(socket.SHUT_RDWR)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop reading: the blocked read is woken at once (its socket shut down)."""
        self._stop.set()
        with self._sock_lock:
            sock = self._sock
        if sock is not None:
            with contextlib.suppress(OSError):  # closed already
                sock.shutdown(socket.SHUT_RDWR)
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join(timeout)
        self.client.close()

    def _run(self) -> None:
        import httpx
        import httpx_sse

        failures = 0  # attempts since the last connection that went well
        while not self._stop.is_set():
            why = ""
            state: LinkState = "reconnecting"
            self._live_since = None
            try:
                if self._stream():
                    return  # closed: the service shut down, or the mirror ended
                why = "the service ended the stream"
            except _Fatal as exc:
                self.mirror.end(str(exc), restarted=exc.restarted)
                return
            except _BadEvent as exc:
                why, state = str(exc), "failed"
            except (httpx.HTTPError, httpx_sse.SSEError, OSError, ValueError, KeyError) as exc:
                why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            if self._stop.is_set():
                break
            # a connection live for a while starts the count again (not one cut at once)
            lived = 0.0 if self._live_since is None else time.monotonic() - self._live_since
            failures = 1 if state == "reconnecting" and lived >= BACKOFF_MAX else failures + 1
            link = self.mirror.link
            since = link.since if link.state in ("reconnecting", "failed") else None
            self.mirror.set_link(
                Link(
                    state,
                    since=since if since is not None else self.mirror.clock.now(),
                    why=why,
                    attempts=failures,
                )
            )
            if state == "reconnecting" and self._moved():
                continue  # at once: the service serves elsewhere now
            most = FAILED_BACKOFF_MAX if state == "failed" else BACKOFF_MAX
            delay = min(most, BACKOFF * 2 ** min(failures - 1, 30))
            self._stop.wait(random.uniform(delay / 2, delay))  # jitter: restarts do not herd
        if not self.mirror.closed:
            self.mirror.end("the mirror was closed")

    def _moved(self) -> bool:
        """The lineage records a new address for the service (a restart on another port,
        the same host): follow it; True if it did."""
        from urllib.parse import urlsplit

        if self.lineage_root is None:
            return False
        record = serving(self.lineage_root)
        if record is None:
            return False
        url = str(record["url"]).rstrip("/")
        if url == self.root or urlsplit(url).hostname != urlsplit(self.root).hostname:
            return False
        self.root = url
        self.moves.append(url)
        return True

    def _stream(self) -> bool:
        """One connection: the moment, then rows until it drops; True once the mirror is closed."""
        import httpx_sse

        data = _moment(self.client, self.root, self.max_event_bytes)
        log_id = data.get("log_id")
        if log_id != self.log_id and self.log_id is not None:
            held = self.mirror.applied
            raise _Fatal(
                "the service restarted with a new log (its rows start over at seq 0): this "
                + (
                    f"mirror holds its previous log's rows up to seq {held - 1}; any later row "
                    "of that log never reached it (its spill directory may hold them)"
                    if held
                    else "mirror held no row of its previous log"
                ),
                restarted=True,
            )
        try:
            moment = moment_from_json(data)
        except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
            raise _BadEvent(f"the moment: {_why(exc)}") from None
        self.read_timeout = read_timeout(data.get("ping"))
        self.mirror.clock.hear(moment.now, running=not moment.closed)
        applied = self.mirror.applied
        headers: dict[str, str] = {}
        params: dict[str, str] = {}
        if applied > 0 or self._live_only:
            headers["Last-Event-ID"] = str(applied - 1)
        else:
            params["after"] = "-1"
        # the rows' times are relative to the serving process's clock: a restarted service
        # (the same log, continued) has a new origin; the mirror keeps its own
        origin = moment.time_scale.origin
        import httpx

        timeout = httpx.Timeout(CONNECT_TIMEOUT, read=self.read_timeout)
        with self.client.stream(
            "GET", f"{self.root}/v1/rows", headers=headers, params=params, timeout=timeout
        ) as response:
            if response.status_code in (401, 403, 404):
                response.read()
                raise _Fatal(str(_refused(response, f"{self.root}/v1/rows")))
            if response.status_code != 200:
                response.read()
                raise OSError(str(_refused(response, f"{self.root}/v1/rows")))
            self._hold_socket(response)
            self.connections += 1
            self._live_since = time.monotonic()
            self.mirror.set_link(Link("live", since=self.mirror.clock.now()))
            bounded = _bounded(
                response, self.max_event_bytes, self.read_timeout, lambda: self.mirror.applied
            )
            try:
                for event in httpx_sse.EventSource(bounded).iter_sse():
                    if self._stop.is_set():
                        return True
                    try:
                        if self._handle(event, origin):
                            return True
                    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
                        size = len(event.data.encode())
                        raise _BadEvent(
                            f"a {event.event or 'message'!r} event"
                            + (f" (id {event.id[:40]!r})" if event.id else "")
                            + f" of {size:,} bytes, after seq {self.mirror.applied - 1}: "
                            + _why(exc)
                        ) from None
            finally:
                with self._sock_lock:
                    self._sock = None
        return self._stop.is_set()

    def _handle(self, event: Any, origin: float) -> bool:
        """Apply one event; True when it closed the mirror. Raises what decoding it raised."""
        if event.event == "rows":
            rows = json.loads(event.data)
            if not isinstance(rows, list):
                raise TypeError(f"expected a JSON array of rows, got {type(rows).__name__}")
            self.mirror.apply_json(rows, origin)
        elif event.event == "gap":
            gap = json.loads(event.data)
            self.mirror.gap(
                int(gap["from"]),
                int(gap["to"]),
                str(gap.get("why", "")),
                at_most=gap.get("at_most") is True,
            )
        elif event.event == "closed":
            self.mirror.end("the service shut down")
            return True
        return False

    def _hold_socket(self, response: httpx.Response) -> None:
        """Keep the connection's socket, so that :meth:`stop` can wake a blocked read."""
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        with self._sock_lock:
            self._sock = sock if isinstance(sock, socket.socket) else None


def _why(exc: BaseException) -> str:
    """An exception in words, cut to a line (a hostile feed's text may be huge)."""
    text = str(exc)
    text = text if len(text) <= 200 else text[:200] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _bounded(
    response: httpx.Response, most: int, seconds: float, last: Callable[[], int]
) -> httpx.Response:
    """``response`` as a stream that raises :class:`_BadEvent` once an event under way holds
    over ``most`` bytes, or has not ended ``seconds`` after its first byte arrived.

    Only the bytes since the last blank line are counted: ``httpx-sse`` decodes the
    events; this bounds what it can be made to hold.
    """
    import httpx

    def chunks() -> Iterator[bytes]:
        since = 0  # bytes of the event under way
        began = 0.0  # time.monotonic() when its first byte came
        tail = b""  # the end of the previous chunk: a blank line may straddle two
        for chunk in response.iter_bytes():
            window = tail + chunk
            # a CR at the very end may be half of a CRLF: left for the next window
            scan = window[:-1] if window.endswith(b"\r") else window
            end = -1
            for match in _BLANK.finditer(scan):
                end = match.end()
            now = time.monotonic()
            if end >= 0:
                since = len(window) - end
                began = now
            else:
                if since == 0:
                    began = now
                since += len(chunk)
            if since > most:
                raise _BadEvent(
                    f"event over {most:,} bytes: {since:,} bytes without an end, "
                    f"after seq {last() - 1}"
                )
            if since and now - began > seconds:
                raise _BadEvent(
                    f"event not ended within {seconds:g} s ({since:,} bytes so far), "
                    f"after seq {last() - 1}"
                )
            tail = window[-3:]
            yield chunk

    class _Stream(httpx.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            return chunks()

    return httpx.Response(
        response.status_code,
        headers={"content-type": response.headers.get("content-type", "")},
        stream=_Stream(),
    )


class _BadEvent(Exception):
    """The feed sent what the mirror cannot read: the link turns ``failed`` naming it."""


class _Fatal(Exception):
    """A refusal that retrying will not change (a wrong token, a new log)."""

    def __init__(self, why: str, *, restarted: bool = False) -> None:
        super().__init__(why)
        self.restarted = restarted
