"""Follow a served scheduler over HTTP: its moment once, then its rows as Server-Sent Events.

:func:`attach` asks ``GET /v1/moment`` (who the scheduler is: name, time origin,
queue design, log identity), then a daemon thread reads ``GET /v1/rows`` (SSE,
with ``httpx`` and ``httpx-sse``) and hands each event to the mirror: ``rows`` are
applied (each exactly once, in ``seq`` order), a ``gap`` is named, ``closed`` ends
the mirror. When the connection drops, the link turns ``reconnecting`` at once
and the thread tries again after a backoff (doubling from :data:`BACKOFF` to
:data:`BACKOFF_MAX` seconds, with full jitter), resuming with ``Last-Event-ID`` =
the last ``seq`` applied, so nothing is skipped or applied twice. A connection
that stays silent longer than :data:`READ_TIMEOUT` (the server sends a keep-alive
at least every 15 s) counts as dropped. The thread never prints; what happens is
in :attr:`RemoteScheduler.link <tempsched_lab.remote.RemoteScheduler.link>`.

See ``docs/serving.md`` for the wire.
"""

from __future__ import annotations

import contextlib
import json
import random
import socket
import threading
from typing import TYPE_CHECKING, Any

from ..core.task import CancelResult
from ..serve.wire import moment_from_json
from .link import Link
from .mirror import RemoteScheduler

if TYPE_CHECKING:
    import httpx

__all__ = ["BACKOFF", "BACKOFF_MAX", "READ_TIMEOUT", "StreamFeed", "attach"]

#: Seconds before the first reconnection attempt (doubled at each failed one).
BACKOFF = 0.25
#: Seconds between attempts at most.
BACKOFF_MAX = 5.0
#: Seconds of silence after which a connection counts as dropped (keep-alives come every 15 s).
READ_TIMEOUT = 20.0
#: Seconds to connect (and for the short requests: the moment, a cancel).
CONNECT_TIMEOUT = 5.0


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
    url: str,
    *,
    token: str | None = None,
    control_token: str | None = None,
    from_start: bool = True,
) -> RemoteScheduler:
    """A live, read-only mirror of the scheduler served at ``url`` (``.../`` where ``/v1/`` is).

    Args:
        url: the app's root, e.g. ``"http://127.0.0.1:8000/scheduler"``.
        token: the read token, if the service has one (sent as ``Authorization: Bearer``).
        control_token: lets :meth:`RemoteScheduler.cancel` reach the service (and the
            dashboard show its controls).
        from_start: fetch every row the service still has (memory, then its spill);
            ``False``: only rows recorded from now on.

    Raises :class:`AttachError` (a ``ConnectionError``) when the service cannot be
    reached or refuses the token: at the call, not later in a thread.

    >>> mirror = attach("http://127.0.0.1:1/")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tempsched_lab.remote.stream.AttachError: http://127.0.0.1:1: cannot connect ...
    """
    import httpx

    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError(f"url={url!r}: expected an http:// or https:// URL")
    _check_token("token", token)
    _check_token("control_token", control_token)
    root = url.rstrip("/")
    client = httpx.Client(
        headers=_headers(token),
        timeout=httpx.Timeout(CONNECT_TIMEOUT, read=READ_TIMEOUT),
    )
    try:
        data = _moment(client, root)
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
    )
    mirror.clock.hear(moment.now, running=not moment.closed)
    feed = StreamFeed(mirror, client, root, log_id=data.get("log_id"))
    mirror.feed = feed
    if not from_start:
        feed.start_at(moment.seq)
    feed.start()
    return mirror


def _moment(client: httpx.Client, root: str) -> dict[str, Any]:
    import httpx

    try:
        response = client.get(f"{root}/v1/moment", timeout=CONNECT_TIMEOUT)
    except httpx.HTTPError as exc:
        raise AttachError(f"{root}: cannot connect ({type(exc).__name__}: {exc})") from None
    if response.status_code != 200:
        raise _refused(response, root)
    data = response.json()
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
        self, mirror: RemoteScheduler, client: httpx.Client, root: str, *, log_id: Any = None
    ) -> None:
        self.mirror = mirror
        self.client = client
        self.root = root
        self.log_id = log_id
        self.connections = 0  #: connections made to the stream so far
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

        failures = 0
        while not self._stop.is_set():
            why = ""
            try:
                if self._stream():
                    return  # closed: the service shut down, or the mirror ended
                why = "the service ended the stream"
            except _Fatal as exc:
                self.mirror.end(str(exc), restarted=exc.restarted)
                return
            except (httpx.HTTPError, httpx_sse.SSEError, OSError, ValueError, KeyError) as exc:
                why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            if self._stop.is_set():
                break
            # a connection that went live starts the count again
            failures = 1 if self.mirror.link.state in ("live", "gap") else failures + 1
            since = self.mirror.link.since if self.mirror.link.state == "reconnecting" else None
            self.mirror.set_link(
                Link(
                    "reconnecting",
                    since=since if since is not None else self.mirror.clock.now(),
                    why=why,
                    attempts=failures,
                )
            )
            delay = min(BACKOFF_MAX, BACKOFF * 2 ** (failures - 1))
            self._stop.wait(random.uniform(delay / 2, delay))  # jitter: restarts do not herd
        if not self.mirror.closed:
            self.mirror.end("the mirror was closed")

    def _stream(self) -> bool:
        """One connection: the moment, then rows until it drops; True once the mirror is closed."""
        import httpx_sse

        data = _moment(self.client, self.root)
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
        moment = moment_from_json(data)
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
        with httpx_sse.connect_sse(
            self.client, "GET", f"{self.root}/v1/rows", headers=headers, params=params
        ) as source:
            response = source.response
            if response.status_code in (401, 403, 404):
                response.read()
                raise _Fatal(str(_refused(response, f"{self.root}/v1/rows")))
            if response.status_code != 200:
                response.read()
                raise OSError(str(_refused(response, f"{self.root}/v1/rows")))
            self._hold_socket(response)
            self.connections += 1
            self.mirror.set_link(Link("live", since=self.mirror.clock.now()))
            try:
                for event in source.iter_sse():
                    if self._stop.is_set():
                        return True
                    if event.event == "rows":
                        self.mirror.apply_json(json.loads(event.data), origin)
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
            finally:
                with self._sock_lock:
                    self._sock = None
        return self._stop.is_set()

    def _hold_socket(self, response: httpx.Response) -> None:
        """Keep the connection's socket, so that :meth:`stop` can wake a blocked read."""
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        with self._sock_lock:
            self._sock = sock if isinstance(sock, socket.socket) else None


class _Fatal(Exception):
    """A refusal that retrying will not change (a wrong token, a new log)."""

    def __init__(self, why: str, *, restarted: bool = False) -> None:
        super().__init__(why)
        self.restarted = restarted
