"""Argument checks for ``schedule``: every error names the argument and the value (cut short)."""

from __future__ import annotations

import math
import numbers
import threading
from collections.abc import Callable, Mapping
from typing import Any

from .reprs import short_repr

__all__ = [
    "MAX_HORIZON",
    "MIN_RESOLUTION",
    "check_action",
    "check_args",
    "check_delay",
    "check_flag",
    "check_kwargs",
    "check_label",
    "check_number",
    "check_period",
    "check_resolution",
]

#: The farthest ahead a task may be scheduled (about 31.7 years), far below the
#: platform's longest wait, so no request can overflow a timeout.
MAX_HORIZON = 1e9

#: The finest ``resolution`` grid accepted (1 µs): an epoch-sized clock value (~1.8e9 s)
#: has a float resolution of ~0.24 µs, so a finer grid could not be represented.
MIN_RESOLUTION = 1e-6


def check_action(action: Any) -> Callable[..., Any] | threading.Event:
    """A callable or a ``threading.Event``."""
    if isinstance(action, threading.Event) or callable(action):
        return action  # type: ignore[no-any-return]
    raise TypeError(f"action={short_repr(action)}: expected a callable or a threading.Event")


def check_number(name: str, value: Any) -> float:
    """A finite real number (not bool, not Decimal) as a float.

    >>> check_number("at", 10**400)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: at=1000000000...: expected a finite number of seconds (too large for a float)
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name}={short_repr(value)}: expected a real number (int or float), "
            f"got {type(value).__name__}"
        )
    try:
        result = float(value)
    except (OverflowError, ValueError):
        raise ValueError(
            f"{name}={short_repr(value)}: expected a finite number of seconds (too large for a "
            "float)"
        ) from None
    if not math.isfinite(result):
        raise ValueError(f"{name}={short_repr(value)}: expected a finite number")
    return result


def check_delay(value: Any) -> float:
    """A delay in seconds (negative means the past: case 1, decided by the tree)."""
    if type(value) is float and math.isfinite(value) and value <= MAX_HORIZON:
        return value
    result = check_number("delay", value)
    if result > MAX_HORIZON:
        raise ValueError(f"delay={short_repr(value)}: longer than {MAX_HORIZON:g} s (~31 years)")
    return result


def check_period(value: Any) -> float:
    """A positive finite number of seconds, at most :data:`MAX_HORIZON`."""
    result = check_number("period", value)
    if result <= 0:
        raise ValueError(
            f"period={short_repr(value)}: must be > 0 (a period of 0 would be a busy loop)"
        )
    if result > MAX_HORIZON:
        raise ValueError(f"period={short_repr(value)}: longer than {MAX_HORIZON:g} s (~31 years)")
    return result


def check_resolution(value: Any) -> float | None:
    """``None`` or a grid step of at least :data:`MIN_RESOLUTION` seconds.

    >>> check_resolution(1e-9)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: resolution=1e-09: expected at least 1e-06 s (a finer grid ...
    """
    if value is None:
        return None
    result = check_number("resolution", value)
    if not result >= MIN_RESOLUTION:
        raise ValueError(
            f"resolution={short_repr(value)}: expected at least {MIN_RESOLUTION:g} s (a finer "
            "grid cannot be told apart on an epoch-sized clock)"
        )
    if result > MAX_HORIZON:
        raise ValueError(f"resolution={short_repr(value)}: longer than {MAX_HORIZON:g} s")
    return result


def check_args(value: Any) -> tuple[Any, ...]:
    """Positional arguments as a tuple (a list is accepted)."""
    if type(value) is tuple:
        return value
    if isinstance(value, (tuple, list)):
        return tuple(value)
    raise TypeError(f"args={short_repr(value)}: expected a tuple or a list of positional arguments")


def check_kwargs(value: Any) -> dict[str, Any] | None:
    """Keyword arguments as a fresh dict (``None`` when empty)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"kwargs={short_repr(value)}: expected a mapping of keyword arguments")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise TypeError(f"kwargs={short_repr(value)}: keys must be strings, got {bad[0]!r}")
    return dict(value) or None


def check_label(value: Any) -> str | None:
    """``None`` or a string."""
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"label={short_repr(value)}: expected a string or None")


def check_flag(name: str, value: Any) -> bool:
    """A real ``bool`` (``"yes"`` or ``1`` are refused: they hide mistakes)."""
    if value is True or value is False:
        return value
    raise TypeError(f"{name}={short_repr(value)}: expected True or False")
