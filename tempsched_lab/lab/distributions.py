"""Distributions of durations (how long a run takes, how far ahead a request is made).

Each distribution is a small frozen record with a :meth:`~Distribution.sample`
method that draws from a ``numpy.random.Generator``: the generators of
:mod:`tempsched_lab.lab.workloads` pass theirs, so a workload is a pure function
of its seed. ``describe()`` gives the one line a workload's metadata and the
figures' notes show.

* :func:`fixed` (every value the same),
* :func:`exponential` (memoryless: service times of an M/M/1 queue),
* :func:`uniform`,
* :func:`lognormal` and :func:`pareto` (heavy tails: most runs short, a few
  very long, as measured service times usually are).

Values are seconds, never negative.

>>> import numpy as np
>>> rng = np.random.default_rng(1)
>>> exponential(0.002).sample(rng, 3).round(5).tolist()
[0.00215, 0.00062, 0.01075]
>>> pareto(alpha=2.5, minimum=0.001).describe()
'pareto(alpha=2.5, minimum=1.00 ms)'
>>> as_distribution(0.5)
fixed(500.00 ms)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..time.scale import fmt_duration

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "Distribution",
    "as_distribution",
    "exponential",
    "fixed",
    "lognormal",
    "pareto",
    "uniform",
]


def _seconds(name: str, value: Any, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name}={value!r}: expected a number of seconds")
    result = float(value)
    if not math.isfinite(result) or result < 0 or (positive and result == 0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{name}={value!r}: expected a finite number of seconds {bound}")
    return result


@dataclass(frozen=True, slots=True)
class Distribution:
    """A distribution of non-negative durations (seconds); see the module's functions.

    ``kind`` names the family; ``a`` and ``b`` are its parameters (their
    meaning depends on the family, see :func:`fixed`, :func:`exponential`,
    :func:`uniform`, :func:`lognormal`, :func:`pareto`).
    """

    kind: str
    a: float
    b: float = 0.0

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` values drawn with ``rng`` (seconds, float64)."""
        import numpy as np

        if self.kind == "fixed":
            return np.full(n, self.a)
        if self.kind == "exponential":
            return rng.exponential(self.a, n)
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b, n)
        if self.kind == "lognormal":
            return self.a * np.exp(self.b * rng.standard_normal(n))
        if self.kind == "pareto":
            return self.b * (1.0 + rng.pareto(self.a, n))  # Lomax + 1 = Pareto of scale b
        raise ValueError(f"kind={self.kind!r}: unknown distribution")

    @property
    def mean(self) -> float:
        """The distribution's mean in seconds (``inf`` for a Pareto tail with ``alpha <= 1``).

        >>> lognormal(0.001, 1.0).mean > 0.001
        True
        """
        if self.kind == "fixed":
            return self.a
        if self.kind == "exponential":
            return self.a
        if self.kind == "uniform":
            return (self.a + self.b) / 2
        if self.kind == "lognormal":
            return self.a * math.exp(self.b**2 / 2)
        if self.kind == "pareto":
            return math.inf if self.a <= 1 else self.a * self.b / (self.a - 1)
        raise ValueError(f"kind={self.kind!r}: unknown distribution")

    def describe(self) -> str:
        """One line, durations in the time language: ``exponential(mean=2.00 ms)``."""
        if self.kind == "fixed":
            return f"fixed({fmt_duration(self.a)})"
        if self.kind == "exponential":
            return f"exponential(mean={fmt_duration(self.a)})"
        if self.kind == "uniform":
            return f"uniform({fmt_duration(self.a)}, {fmt_duration(self.b)})"
        if self.kind == "lognormal":
            return f"lognormal(median={fmt_duration(self.a)}, sigma={self.b:g})"
        return f"pareto(alpha={self.a:g}, minimum={fmt_duration(self.b)})"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form (saved in a workload file's metadata)."""
        return {"kind": self.kind, "a": self.a, "b": self.b}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Distribution:
        """The inverse of :meth:`to_dict`."""
        return cls(str(data["kind"]), float(data["a"]), float(data.get("b", 0.0)))

    def __repr__(self) -> str:
        return self.describe()


def fixed(seconds: float) -> Distribution:
    """Every value is ``seconds``.

    >>> fixed(0.001).describe()
    'fixed(1.00 ms)'
    """
    return Distribution("fixed", _seconds("seconds", seconds))


def exponential(mean: float) -> Distribution:
    """Exponential values with this ``mean`` (seconds, > 0).

    >>> exponential(0.002).mean
    0.002
    """
    return Distribution("exponential", _seconds("mean", mean, positive=True))


def uniform(low: float, high: float) -> Distribution:
    """Values spread evenly over ``[low, high)`` seconds.

    >>> uniform(0.0, 0.01).mean
    0.005
    """
    lo, hi = _seconds("low", low), _seconds("high", high)
    if hi < lo:
        raise ValueError(f"high={high!r} is below low={low!r}")
    return Distribution("uniform", lo, hi)


def lognormal(median: float, sigma: float) -> Distribution:
    """Log-normal values: ``median * exp(sigma * N(0, 1))`` (a heavy right tail as sigma grows).

    >>> lognormal(0.001, 0.5).describe()
    'lognormal(median=1.00 ms, sigma=0.5)'
    """
    spread = _seconds("sigma", sigma)  # a plain non-negative number
    return Distribution("lognormal", _seconds("median", median, positive=True), spread)


def pareto(alpha: float, minimum: float) -> Distribution:
    """Pareto values at least ``minimum`` seconds, tail index ``alpha`` (smaller: heavier).

    With ``alpha <= 2`` the variance is infinite; with ``alpha <= 1`` the mean too.

    >>> pareto(3.0, 0.001).mean
    0.0015
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha > 0:
        raise ValueError(f"alpha={alpha!r}: expected a number > 0")
    if not math.isfinite(alpha):
        raise ValueError(f"alpha={alpha!r}: expected a finite number")
    return Distribution("pareto", float(alpha), _seconds("minimum", minimum, positive=True))


def as_distribution(value: Any, name: str = "duration") -> Distribution:
    """``value`` itself if it is a :class:`Distribution`; a number becomes :func:`fixed`.

    >>> as_distribution("slow")
    Traceback (most recent call last):
    ...
    TypeError: duration='slow': expected seconds or a distribution (fixed, exponential, ...)
    """
    if isinstance(value, Distribution):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Distribution("fixed", _seconds(name, value))
    raise TypeError(
        f"{name}={value!r}: expected seconds or a distribution (fixed, exponential, ...)"
    )
