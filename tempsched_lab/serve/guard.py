"""Who may read and who may control: bearer tokens checked on every route, the stream included.

One ASGI middleware in front of every route (:class:`Guard`), so no route can be
added without it. The rules (``docs/serving.md``, "Tokens"):

* with a read ``token``, every route needs ``Authorization: Bearer <token>``
  (or the control token); 401 with ``WWW-Authenticate: Bearer`` without it or with
  a wrong one;
* without a read token, read routes answer loopback clients only (403 otherwise):
  a service bound to another address must configure a token;
* control routes exist only with a ``control_token`` (404 otherwise) and need it
  (401 without or wrong, 403 for the read token);
* a token in the query string (``?token=``) is refused with 400: query strings
  end up in access logs, proxies' logs and browser histories;
* tokens are compared in constant time (:func:`hmac.compare_digest`) and never
  appear in a response, an error text or a log line of ours.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

__all__ = [
    "CONTROL",
    "READ",
    "Guard",
    "TokenRedactor",
    "check_token",
    "install_redactor",
    "is_loopback",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

READ = "read"
CONTROL = "control"
#: Query parameters that look like credentials: refused wherever they appear.
TOKEN_PARAMS = frozenset({"token", "access_token", "control_token", "auth", "authorization"})
#: The shortest token accepted (``secrets.token_urlsafe(32)`` gives 43 characters).
MIN_TOKEN = 16
_ALLOWED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=")


def check_token(name: str, value: object) -> bytes | None:
    """A configured token as bytes, or ``None``; a ``ValueError`` that never shows the value.

    >>> check_token("token", None) is None
    True
    >>> check_token("token", "short")
    Traceback (most recent call last):
    ...
    ValueError: token: expected at least 16 characters (got 5); e.g. secrets.token_urlsafe(32)
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a str or None (got a {type(value).__name__})")
    if len(value) < MIN_TOKEN:
        raise ValueError(
            f"{name}: expected at least {MIN_TOKEN} characters (got {len(value)}); "
            "e.g. secrets.token_urlsafe(32)"
        )
    if not set(value) <= _ALLOWED:
        raise ValueError(
            f"{name}: expected letters, digits and -._~+/= only (the token68 of RFC 6750), "
            "e.g. secrets.token_urlsafe(32)"
        )
    return value.encode("ascii")


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (an address, or ``localhost``) is this machine's loopback.

    >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("0.0.0.0"), is_loopback("x")
    (True, True, False, False)
    """
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _bearer(scope: Scope) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == b"authorization":
            scheme, _, credentials = bytes(value).partition(b" ")
            if scheme.lower() == b"bearer" and credentials.strip():
                return credentials.strip()
            return b""  # present but not a bearer token: a wrong token
    return None


async def _answer(send: Send, status: int, error: str, *, challenge: bool = False) -> None:
    body = json.dumps({"error": error}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    if challenge:
        headers.append((b"www-authenticate", b'Bearer realm="tempsched"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware: authenticate every request, then pass it on with its access level.

    ``scope["state"]["tempsched_access"]`` is ``"read"`` or ``"control"`` for the routes.
    ``control_paths``: the paths (relative to the app's root) that need the control token.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: bytes | None,
        control_token: bytes | None,
        control_paths: frozenset[str],
    ) -> None:
        self.app = app
        self.token = token
        self.control_token = control_token
        self.control_paths = control_paths

    def _level(self, presented: bytes) -> str | None:
        # Both comparisons always run: the time taken says nothing about which matched.
        control = self.control_token is not None and hmac.compare_digest(
            presented, self.control_token
        )
        read = self.token is not None and hmac.compare_digest(presented, self.token)
        return CONTROL if control else READ if read else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        if any(key.lower() in TOKEN_PARAMS for key, _ in parse_qsl(query, True)):
            await _answer(
                send,
                400,
                "credentials are not accepted in the query string (it ends up in logs): "
                "send the header 'Authorization: Bearer <token>'",
            )
            return
        root = scope.get("root_path", "")
        path = scope.get("path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        control_route = path in self.control_paths
        if control_route and self.control_token is None:
            await _answer(send, 404, "not found")
            return
        presented = _bearer(scope)
        level = None if presented is None else self._level(presented)
        if presented is not None and level is None:
            await _answer(send, 401, "wrong token", challenge=True)
            return
        if control_route:
            if level is None:
                await _answer(send, 401, "this route needs the control token", challenge=True)
                return
            if level != CONTROL:
                await _answer(send, 403, "this route needs the control token, not the read token")
                return
        elif level is None:
            if self.token is not None:
                await _answer(send, 401, "this feed needs a token", challenge=True)
                return
            client = scope.get("client")
            if not is_loopback(client[0] if client else None):
                await _answer(
                    send,
                    403,
                    "this feed has no token: it answers loopback clients only "
                    "(configure token=... to serve other addresses)",
                )
                return
            level = READ
        scope.setdefault("state", {})["tempsched_access"] = level
        await self.app(scope, receive, send)


_QUERY_SECRET = re.compile(
    r"([?&](?:" + "|".join(sorted(TOKEN_PARAMS)) + r")=)[^&\s\"]*", re.IGNORECASE
)


class TokenRedactor(logging.Filter):
    """Blanks credential-like query values (``?token=...``) in access-log lines.

    The guard refuses such requests, but the ASGI server logs the request line
    itself (uvicorn's ``uvicorn.access`` logger writes the path with its query), so
    :func:`install_redactor` puts this filter on that logger.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and any(isinstance(a, str) and "=" in a for a in args):
            record.args = tuple(
                _QUERY_SECRET.sub(r"\1[redacted]", a) if isinstance(a, str) else a for a in args
            )
        if isinstance(record.msg, str) and "=" in record.msg:
            record.msg = _QUERY_SECRET.sub(r"\1[redacted]", record.msg)
        return True


def install_redactor(logger_name: str = "uvicorn.access") -> None:
    """Put a :class:`TokenRedactor` on ``logger_name`` (once)."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(f, TokenRedactor) for f in logger.filters):
        logger.addFilter(TokenRedactor())
