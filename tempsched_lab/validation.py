"""Argument checks for ``schedule``: every error names the argument and the value."""

from __future__ import annotations

import math
import numbers
import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

__all__ = ["MAX_HORIZON", "MISFIRE_POLICIES", "check_action", "check_args", "check_kwargs",
           "check_period", "check_time"]  # fmt: skip

#: The farthest ahead a task may be scheduled (about 31.7 years), far below the
#: platform's longest wait, so no request can overflow a timeout.
MAX_HORIZON = 1e9

#: What a fixed-rate periodic task does with runs it missed (overrun or late wake-up).
MISFIRE_POLICIES = ("skip", "run_once", "catch_up")


def check_action(action: Any) -> Callable[..., Any] | threading.Event:
    """A callable or a ``threading.Event``."""
    if isinstance(action, threading.Event) or callable(action):
        return action
    raise TypeError(f"action={action!r}: expected a callable or a threading.Event")


def check_number(name: str, value: Any) -> float:
    """A finite real number (not bool, not Decimal) as a float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name}={value!r}: expected a real number (int or float), got {type(value).__name__}"
        )
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{name}={value!r}: expected a finite number")
    return result


def check_time(name: str, value: Any, now: float, from_datetime: Callable[[datetime], float]
               ) -> float:  # fmt: skip
    """An absolute time: a number on the clock's scale or a ``datetime``; within range."""
    if isinstance(value, datetime):
        try:
            result = from_datetime(value)
        except (OverflowError, OSError, ValueError) as exc:
            raise ValueError(f"{name}={value!r}: cannot convert to a time: {exc}") from None
    else:
        result = check_number(name, value)
    if abs(result - now) > MAX_HORIZON:
        raise ValueError(
            f"{name}={value!r}: more than {MAX_HORIZON:g} s (~31 years) away from now={now!r}"
        )
    return result


def check_delay(value: Any) -> float:
    """A delay in seconds (negative means the past: case 1, decided by the tree)."""
    result = check_number("delay", value)
    if result > MAX_HORIZON:
        raise ValueError(f"delay={value!r}: longer than {MAX_HORIZON:g} s (~31 years)")
    return result


def check_period(value: Any) -> float | None:
    """``None`` or a positive finite number of seconds."""
    if value is None:
        return None
    result = check_number("period", value)
    if result <= 0:
        raise ValueError(f"period={value!r}: must be > 0 (a period of 0 would be a busy loop)")
    if result > MAX_HORIZON:
        raise ValueError(f"period={value!r}: longer than {MAX_HORIZON:g} s (~31 years)")
    return result


def check_args(value: Any) -> tuple[Any, ...]:
    """Positional arguments as a tuple (a list is accepted)."""
    if type(value) is tuple:
        return value
    if isinstance(value, (tuple, list)):
        return tuple(value)
    raise TypeError(f"args={value!r}: expected a tuple or a list of positional arguments")


def check_kwargs(value: Any) -> dict[str, Any] | None:
    """Keyword arguments as a fresh dict (``None`` when empty)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"kwargs={value!r}: expected a mapping of keyword arguments")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise TypeError(f"kwargs={value!r}: keys must be strings, got {bad[0]!r}")
    return dict(value) or None


def check_label(value: Any) -> str | None:
    """``None`` or a string."""
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"label={value!r}: expected a string or None")


def check_misfire(value: Any) -> str:
    """One of :data:`MISFIRE_POLICIES`."""
    if value not in MISFIRE_POLICIES:
        raise ValueError(f"misfire={value!r}: expected one of {MISFIRE_POLICIES}")
    return value
