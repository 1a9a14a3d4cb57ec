"""Text for logs and errors: a value's ``repr`` cut short, an exception in one line; never raise.

The lowest module of the package's records: tasks, checks and triggers all name values with it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["describe_exception", "short_repr"]

_REPR_LIMIT = 80


def short_repr(value: Any, limit: int = _REPR_LIMIT) -> str:
    """``repr`` cut to a readable length; never raises.

    >>> short_repr((1, 'a')), short_repr(10**400)[:12]
    ("(1, 'a')", '100000000000')
    >>> len(short_repr(10**400))
    80
    """
    if type(value) is tuple and not value:
        return "()"
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ (or an int too long to print) must not break anything
        text = f"<unrepresentable {type(value).__name__}>"
    if not isinstance(text, str):
        text = f"<unrepresentable {type(value).__name__}>"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def describe_exception(exc: BaseException) -> str:
    """``"TypeName: message"`` for a log row; never raises (a broken ``__str__`` is named).

    >>> class Bad(Exception):
    ...     def __str__(self):
    ...         raise RuntimeError("no")
    >>> describe_exception(Bad()), describe_exception(ValueError("x"))
    ('Bad: <str() of the exception raised RuntimeError>', 'ValueError: x')
    """
    name = type(exc).__name__
    try:
        message = str(exc)
        if not isinstance(message, str):
            raise TypeError("__str__ returned a non-string")
    except Exception as inner:
        message = f"<str() of the exception raised {type(inner).__name__}>"
    return f"{name}: {message}" if message else name
