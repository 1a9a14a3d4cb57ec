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

import contextlib
import socket
import threading
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import uvicorn

from .app import Feed, asgi_app
from .guard import is_loopback

if TYPE_CHECKING:
    from ..core.scheduler import Scheduler

__all__ = ["ServerHandle", "bind_socket", "serve", "url_host"]


class _ThreadServer(uvicorn.Server):
    """uvicorn without signal handlers: the host process keeps its own."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


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
        self.feed.stopping.set()
        self.feed.wait_streams(timeout / 2)
        self._server.should_exit = True
        self._thread.join(timeout / 2)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(0.5)
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
    return ServerHandle(server, thread, f"http://{url_host(host)}:{real_port}", feed)


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
