"""Who may read and who may control: bearer tokens checked on every route, the stream included.

One ASGI middleware in front of every route (:class:`Guard`), so no route can be
added without it. The rules (``docs/serving.md``, "Tokens"):

* with a read ``token``, every route needs ``Authorization: Bearer <token>``
  (or the control token); 401 with ``WWW-Authenticate: Bearer`` without it or with
  a wrong one;
* without a read token, read routes answer loopback clients only (403 otherwise):
  a service bound to another address must configure a token; and only requests
  addressed to this machine (``Host`` of ``127.0.0.1``, ``localhost`` or ``[::1]``)
  from no page or a page of the same origin (``Origin``), as Jupyter's server does:
  a web page the user opens cannot read the feed by DNS rebinding (403 otherwise);
* control routes exist only with a ``control_token`` (404 otherwise) and need it
  (401 without or wrong, 403 for the read token);
* a token in the query string (``?token=``, ``?%74oken=``, ``?a=1;token=``,
  ``?+token=``) is refused with 400: query strings end up in access logs, proxies'
  logs and browser histories; the access log shows no query but the feed's own
  cursors (:class:`TokenRedactor`);
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
from urllib.parse import unquote_plus, urlsplit

__all__ = [
    "CONTROL",
    "READ",
    "Guard",
    "TokenRedactor",
    "check_token",
    "foreign_request",
    "install_redactor",
    "is_loopback",
    "redact_query",
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


def _host_name(value: str) -> str | None:
    """The host name of a ``Host`` header or an ``Origin``'s authority (``None``: unreadable)."""
    try:
        name = urlsplit("//" + value).hostname
    except ValueError:
        return None
    return name


def _shown(value: str) -> str:
    """A client's value quoted for an error text, cut to 40 characters."""
    return repr(value if len(value) <= 40 else value[:37] + "...")


def foreign_request(scope: Scope) -> str | None:
    """Why a request to a feed without a token is refused as foreign (``None``: it is not).

    A feed without a token answers loopback clients; a web page the user opens is
    such a client too, through the browser: with DNS rebinding its requests reach
    ``127.0.0.1`` carrying ``Host: evil.example``. So, as Jupyter's server does, the
    ``Host`` must name this machine's loopback (``127.0.0.1``, ``localhost``,
    ``[::1]``, any port: an SSH tunnel may forward another), and an ``Origin``, when a
    page sends one, must be the feed's own (``http://`` + the ``Host``).

    >>> def scope(*headers): return {"headers": [(k.encode(), v.encode()) for k, v in headers]}
    >>> foreign_request(scope(("host", "127.0.0.1:8765"))) is None
    True
    >>> foreign_request(scope(("host", "evil.example:8765")))
    "Host 'evil.example:8765' is not this machine's loopback address"
    >>> foreign_request(scope(("host", "localhost:8765"), ("origin", "https://evil.example")))
    "Origin 'https://evil.example' is not this feed's own page"
    """
    host = origin = None
    for key, value in scope.get("headers", ()):
        if key == b"host":
            host = bytes(value).decode("latin-1")
        elif key == b"origin":
            origin = bytes(value).decode("latin-1")
    if host is not None and not is_loopback(_host_name(host)):
        return f"Host {_shown(host)} is not this machine's loopback address"
    if origin is not None:
        parts = urlsplit(origin) if "://" in origin else None
        same = (
            parts is not None
            and parts.scheme in ("http", "https")
            and host is not None
            and parts.netloc.lower() == host.lower()
            and not parts.path.strip("/")
        )
        if not same:
            return f"Origin {_shown(origin)} is not this feed's own page"
    return None


def _credentials_in(query: bytes) -> bool:
    """Whether a query string holds a credential-like parameter, however it is spelled:
    percent-encoded (``%74oken``), after a ``;`` or with spaces (``+token``)."""
    text = unquote_plus(query.decode("latin-1"), encoding="latin-1")
    for part in re.split(r"[&;]", text):
        if part.partition("=")[0].strip().lower() in TOKEN_PARAMS:
            return True
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
        if _credentials_in(scope.get("query_string", b"")):
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
            foreign = foreign_request(scope)
            if foreign is not None:
                await _answer(
                    send,
                    403,
                    f"{foreign}: a feed without a token answers requests addressed to "
                    "127.0.0.1, localhost or [::1] from no page or its own only (a web page "
                    "could reach it by DNS rebinding); configure token=... to serve others",
                )
                return
            level = READ
        scope.setdefault("state", {})["tempsched_access"] = level
        await self.app(scope, receive, send)


#: A query the access log may show: the feed's own cursors, numbers only.
_SAFE_QUERY = re.compile(
    r"(?:after|start|stop)=-?[0-9]{1,20}(?:&(?:after|start|stop)=-?[0-9]{1,20})*"
)
_LOGGED_QUERY = re.compile(r"(?:\?|%3[fF])([^\s\"]+)")


def redact_query(text: str) -> str:
    """``text`` (a path, a request line) with its query blanked (from a ``?``, or a ``%3F``
    in the path), unless the query is only the feed's numeric cursors (``after``,
    ``start``, ``stop``).

    >>> redact_query("/v1/rows?after=12"), redact_query("/v1/rows?a=1;token=abc")
    ('/v1/rows?after=12', '/v1/rows?[redacted]')
    """

    def blank(match: re.Match[str]) -> str:
        return match.group(0) if _SAFE_QUERY.fullmatch(match.group(1)) else "?[redacted]"

    return _LOGGED_QUERY.sub(blank, text) if "?" in text or "%3" in text else text


class TokenRedactor(logging.Filter):
    """Blanks the query of every request line an access log writes (``?[redacted]``),
    except the feed's numeric cursors (``?after=12``).

    The guard refuses credentials in a query, but the ASGI server logs the request
    line itself (uvicorn's ``uvicorn.access`` logger writes the path with its query)
    before anyone refuses it, and a token can be spelled in more ways than a pattern
    of names catches (``?%74oken=``, ``?a=1;token=``, ``?+token=``): so no query is
    shown at all. :func:`install_redactor` puts this filter on that logger.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple):
            record.args = tuple(redact_query(a) if isinstance(a, str) else a for a in args)
        if isinstance(record.msg, str):
            record.msg = redact_query(record.msg)
        return True


def install_redactor(logger_name: str = "uvicorn.access") -> None:
    """Put a :class:`TokenRedactor` on ``logger_name`` (once)."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(f, TokenRedactor) for f in logger.filters):
        logger.addFilter(TokenRedactor())
