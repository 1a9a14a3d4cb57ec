"""Serve a scheduler's feed from a daemon thread, for services that are not ASGI apps.

Like ``prometheus_client.start_http_server``: ``serve(scheduler)`` binds the socket
in the caller's thread (an error, such as a port in use or a refused address, is
raised right there), then runs uvicorn in a daemon thread. It installs no signal
handler (the host's Ctrl-C stays the host's), touches no logging configuration,
writes no access log (URLs could carry what a client should not have sent), and
never keeps the interpreter alive. ``close()`` ends the streams, stops the server
and waits for its thread, within a bound.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import socket
import threading
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .app import Feed, asgi_app
from .guard import is_loopback

if TYPE_CHECKING:
    from ..core.scheduler import Scheduler

__all__ = [
    "HEAD_TIMEOUT",
    "ServerHandle",
    "bind_socket",
    "head_timed_protocol",
    "serve",
    "url_host",
]

#: Seconds a client has to send a whole request (its head, and its body if any) once it
#: began one or connected: then the connection is closed. uvicorn alone waits for ever.
HEAD_TIMEOUT = 10.0


class _ThreadServer(uvicorn.Server):
    """uvicorn without signal handlers: the host process keeps its own."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


class _HeadTimedH11(H11Protocol):
    """uvicorn's h11 protocol with a bound on receiving a request: a connection whose
    request is not whole ``head_timeout`` seconds after it connected, or after the first
    byte of its next request, is closed. Trickling bytes does not extend the time. Once
    a request is whole (a stream included), the timer is off."""

    head_timeout = HEAD_TIMEOUT
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY):
            self._arm()  # a request begun, not whole yet: its time runs (once armed, kept)
        else:
            self._disarm()

    def on_response_complete(self) -> None:
        self._disarm()  # idle until the next request: uvicorn's keep-alive timeout
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.head_timeout, self._head_late)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
            self.transport.close()


def head_timed_protocol(head_timeout: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol that closes a connection whose request is not whole within
    ``head_timeout`` seconds (``uvicorn.Config(app, http=head_timed_protocol(10.0))``).

    >>> head_timed_protocol(2.5).head_timeout
    2.5
    """
    if (
        isinstance(head_timeout, bool)
        or not isinstance(head_timeout, (int, float))
        or not 0 < head_timeout < float("inf")
    ):
        raise ValueError(f"head_timeout={head_timeout!r}: expected a positive number of seconds")
    return type("HeadTimedH11", (_HeadTimedH11,), {"head_timeout": float(head_timeout)})


class ServerHandle:
    """A running feed server: ``url``, ``close()``, and a context manager.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> with serve(Scheduler(VirtualClock())) as server:  # doctest: +SKIP
    ...     print(server.url)
    http://127.0.0.1:40123
    """

    def __init__(self, server: _ThreadServer, thread: threading.Thread, url: str, feed: Feed):
        self._server = server
        self._thread = thread
        #: the base URL of the feed (routes are ``url + "/v1/..."``); the real port
        self.url = url
        #: the app's feed (its open streams, its log id)
        self.feed = feed

    @property
    def running(self) -> bool:
        """Whether the server thread is alive."""
        return self._thread.is_alive()

    def close(self, timeout: float = 5.0) -> bool:
        """End every stream, stop the server and wait for its thread (at most ``timeout`` s).

        Streams end without a ``closed`` event (the scheduler may go on): readers see
        the connection end and may reconnect elsewhere. Idempotent. True if the thread
        ended in time.
        """
        _OPEN.discard(self)
        deadline = time.monotonic() + timeout
        self.feed.stopping.set()
        self.feed.wait_streams(timeout / 2)
        self._server.should_exit = True
        self._thread.join(max(0.0, deadline - time.monotonic()))
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(0.5)
        self.feed.park(max(0.0, deadline - time.monotonic()))  # reads in flight done
        return not self._thread.is_alive()

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self.running else "closed"
        return f"<ServerHandle {self.url} {state}>"


def serve(
    scheduler: Scheduler,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    control_token: str | None = None,
    ready_timeout: float = 10.0,
    head_timeout: float = HEAD_TIMEOUT,
    **options: Any,
) -> ServerHandle:
    """Serve ``scheduler``'s feed over HTTP from a daemon thread; returns a :class:`ServerHandle`.

    Args:
        scheduler: the scheduler to serve.
        host: the address to bind: loopback (``127.0.0.1``, ``::1``, ``localhost``)
            unless a ``token`` is given; any other address without one is refused
            before a socket is made.
        port: the port; ``0`` picks a free one (``handle.url`` has it).
        token, control_token: see :func:`~tempsched_lab.serve.app.asgi_app`.
        ready_timeout: the longest to wait for the server to accept connections.
        head_timeout: seconds a client has to send a whole request once it connected
            (or began its next one on a kept-alive connection); then it is closed, so
            half-sent requests cannot pile up (uvicorn alone keeps them for ever).
        options: passed to ``asgi_app`` (``ping``, ``poll``, ``batch``, ``share``).

    Reach another machine's feed through an SSH tunnel rather than a public port
    (``ssh -N -L 8765:127.0.0.1:8765 host``; docs/serving.md).
    """
    if not isinstance(host, str) or not host:
        raise TypeError(f"host={host!r}: expected an address as a str")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"port={port!r}: expected an int in 0..65535 (0: any free port)")
    if token is None and not is_loopback(host):
        raise ValueError(
            f"host={host!r} is not a loopback address: serving a scheduler beyond this "
            "machine needs a token (token=secrets.token_urlsafe(32)), or keep host='127.0.0.1' "
            "and reach it through an SSH tunnel"
        )
    protocol = head_timed_protocol(head_timeout)
    app = asgi_app(scheduler, token=token, control_token=control_token, **options)
    feed: Feed = app.state.feed
    sock = bind_socket(host, port)
    real_port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_config=None,
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
        ws="none",
        http=protocol,
    )
    server = _ThreadServer(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="tempsched-serve", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + ready_timeout
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.005)
    if not server.started:
        server.should_exit = True
        thread.join(1.0)
        sock.close()
        raise RuntimeError(f"the feed server did not start within {ready_timeout} s")
    handle = ServerHandle(server, thread, f"http://{url_host(host)}:{real_port}", feed)
    _OPEN.add(handle)
    return handle


#: Servers not closed yet: closed at the interpreter's exit.
_OPEN: set[ServerHandle] = set()


@atexit.register
def _close_all() -> None:
    """At exit, before the feeds are parked (``atexit`` runs this first: registered later):
    a script that ends without ``close()`` stops its servers, within a bound."""
    for handle in list(_OPEN):
        handle.close(timeout=2.0)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``localhost`` = 127.0.0.1), made here so that
    an error (a port in use) is raised in the caller's thread, and ``port=0`` is known."""
    bind = "127.0.0.1" if host == "localhost" else host.strip("[]")
    sock = socket.socket(socket.AF_INET6 if ":" in bind else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((bind, port))
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def url_host(host: str) -> str:
    """``host`` as a URL writes it (an IPv6 address in brackets)."""
    bind = "127.0.0.1" if host == "localhost" else host.strip("[]")
    return f"[{bind}]" if ":" in bind else bind
