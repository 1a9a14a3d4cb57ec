"""Serve a scheduler: a live, resumable, authenticated feed of its moment and log rows.

* :func:`asgi_app` builds an ASGI app (Starlette) to mount in a service's own
  Starlette/FastAPI app: ``app.mount("/scheduler", asgi_app(scheduler, token=...))``;
* :func:`serve` runs that app under uvicorn in a daemon thread, for services that
  are not ASGI (Flask, a worker, a script), and returns a :class:`ServerHandle`.

The routes and the wire format are documented in ``docs/serving.md``; the JSON
helpers both ends share live in :mod:`tempsched_lab.serve.wire`, which imports
neither starlette nor uvicorn (a client needs only ``httpx``). Needs the ``serve``
extra: ``pip install 'tempsched-lab[serve]'``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from ..scheduler import Scheduler
    from .server import ServerHandle

__all__ = ["ServerHandle", "asgi_app", "serve"]


def asgi_app(
    scheduler: Scheduler,
    *,
    token: str | None = None,
    control_token: str | None = None,
    **options: Any,
) -> Starlette:
    """An ASGI app serving ``scheduler``'s feed under ``/v1/...``; see :func:`.app.asgi_app`."""
    from .app import asgi_app as build

    return build(scheduler, token=token, control_token=control_token, **options)


def serve(
    scheduler: Scheduler,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    control_token: str | None = None,
    **options: Any,
) -> ServerHandle:
    """Serve ``scheduler``'s feed from a daemon thread; see :func:`.server.serve`."""
    from .server import serve as start

    return start(
        scheduler, host=host, port=port, token=token, control_token=control_token, **options
    )


def __getattr__(name: str) -> Any:
    if name == "ServerHandle":
        from .server import ServerHandle

        return ServerHandle
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
