"""Serve a scheduler: a live, resumable, authenticated feed of its moment and log rows.

* :func:`asgi_app` builds an ASGI app (Starlette) to mount in a service's own
  Starlette/FastAPI app: ``app.mount("/scheduler", asgi_app(scheduler, token=...))``;
* :func:`serve` runs that app under uvicorn in a daemon thread, for services that
  are not ASGI (Flask, a worker, a script), and returns a :class:`ServerHandle`.

The routes and the wire format are documented in ``docs/serving.md``; the JSON
helpers both ends share live in :mod:`tempsched_lab.serve.wire`, which imports
neither starlette nor uvicorn (a client needs only ``httpx``): importing this
package loads the server stack only when ``asgi_app``, ``serve`` or
``ServerHandle`` is first used. Needs the ``serve`` extra:
``pip install 'tempsched-lab[serve]'``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import asgi_app
    from .server import ServerHandle, serve

__all__ = ["ServerHandle", "asgi_app", "serve"]

_LAZY = {"asgi_app": "app", "serve": "server", "ServerHandle": "server"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
