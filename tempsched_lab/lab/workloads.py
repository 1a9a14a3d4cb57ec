"""Workload generators: seeded, pure functions that draw a :class:`~.workload.Workload`.

=========================  ============================================================
:func:`poisson`            requests arriving at random (a Poisson process at ``rate``)
:func:`bursts`             ``size`` requests due at one instant, every ``every`` seconds
:func:`periodic_fleet`     ``tasks`` periodic tasks with periods and phase jitter
:func:`cron_fleet`         ``tasks`` calendar tasks with cron rules
:func:`mix`                several workloads as one
=========================  ============================================================

Every generator is **pure**: it draws only from ``numpy.random.default_rng(seed)``,
so the same arguments and seed give the same workload, row for row. Durations
(:mod:`~tempsched_lab.lab.distributions`) are *virtual*: a run "takes" its
duration on the virtual clock (``VirtualClock.elapse``), it does not sleep.

Options common to the one-shot generators: ``cancels`` (the fraction of
requests cancelled at a random moment between their submission and their due
time), ``duplicates`` (the fraction repeated at once, as a client retrying: the
repeat is decided as case 5 or 7 and adds nothing), ``failures`` (the
probability that a request's runs raise).

>>> from tempsched_lab.lab import exponential
>>> w = poisson(rate=1000, horizon=0.5, seed=7, duration=exponential(0.0005))
>>> w
<Workload poisson: 508 requests over 500.00 ms (poisson 508), seed 7>
>>> w.equals(poisson(rate=1000, horizon=0.5, seed=7, duration=exponential(0.0005)))
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .distributions import Distribution, as_distribution
from .workload import Workload, _number

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["bursts", "cron_fleet", "mix", "periodic_fleet", "poisson"]


def _fraction(name: str, value: Any) -> float:
    result = _number(name, value)
    if not 0.0 <= result <= 1.0:
        raise ValueError(f"{name}={value!r}: expected a fraction between 0 and 1")
    return result


def _count(name: str, value: Any, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        import numpy as np

        if not isinstance(value, np.integer):
            raise TypeError(f"{name}={value!r}: expected an int")
    if int(value) < minimum:
        raise ValueError(f"{name}={value!r}: expected an int >= {minimum}")
    return int(value)


def _rng(seed: Any) -> np.random.Generator:
    import numpy as np

    if seed is None or isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed={seed!r}: expected an int (a workload is drawn from its seed)")
    if int(seed) < 0:
        raise ValueError(f"seed={seed!r}: expected an int >= 0")
    return np.random.default_rng(int(seed))


class _OneShots:
    """The options every one-shot generator takes, checked, and the columns they make."""

    def __init__(
        self, duration: Any, lead: Any, cancels: Any, duplicates: Any, failures: Any
    ) -> None:
        self.duration = as_distribution(duration)
        self.lead = as_distribution(lead, "lead")
        self.cancels = _fraction("cancels", cancels)
        self.duplicates = _fraction("duplicates", duplicates)
        self.failures = _fraction("failures", failures)

    def record(self) -> dict[str, Any]:
        """The options for a workload's ``params`` (JSON-able)."""
        return {
            "duration": self.duration.describe(),
            "lead": self.lead.describe(),
            "cancels": self.cancels,
            "duplicates": self.duplicates,
            "failures": self.failures,
        }

    def columns(
        self, rng: np.random.Generator, label: str, submit: np.ndarray, due: np.ndarray
    ) -> dict[str, Any]:
        """Durations, failures, cancels, then duplicates inserted after their originals."""
        import numpy as np

        n = len(submit)
        durations = self.duration.sample(rng, n)
        fails = rng.random(n) < self.failures
        cancelled = rng.random(n) < self.cancels
        cancel_at = np.where(cancelled, submit + rng.random(n) * (due - submit), np.nan)
        repeated = (rng.random(n) < self.duplicates) & ~cancelled
        # each repeated request is followed at once by its duplicate (a client retrying)
        order = np.repeat(np.arange(n), np.where(repeated, 2, 1))
        is_dup = np.zeros(len(order), dtype=bool)
        is_dup[1:] = order[1:] == order[:-1]
        position = np.flatnonzero(~is_dup)  # where each original lands
        dup_of = np.where(is_dup, position[order], -1)
        return {
            "label": np.full(len(order), _label(label), dtype=object),
            "submit": submit[order],
            "due": due[order],
            "period": np.full(len(order), np.nan),
            "duration": durations[order],
            "fails": fails[order],
            "cancel_at": np.where(is_dup, np.nan, cancel_at[order]),
            "dup_of": dup_of,
        }


def _frame(columns: dict[str, Any]) -> pd.DataFrame:
    import pandas as pd

    dup = columns.pop("dup_of", None)
    frame = pd.DataFrame(columns)
    if dup is not None:
        frame["dup_of"] = pd.array([None if d < 0 else int(d) for d in dup], dtype="Int64")
    return frame


def poisson(
    rate: float,
    horizon: float,
    *,
    seed: int,
    duration: Distribution | float = 0.0,
    lead: Distribution | float = 0.0,
    cancels: float = 0.0,
    duplicates: float = 0.0,
    failures: float = 0.0,
    label: str = "poisson",
) -> Workload:
    """Requests arriving at random, ``rate`` per second on average, over ``[0, horizon)``.

    The arrivals are a Poisson process: their number is Poisson(``rate x
    horizon``) and, given it, their times are independent and uniform. Each
    request is made when it arrives and asks to run ``lead`` later (0: as soon as
    possible; a distribution: timers set ahead, which makes the decision tree
    insert earlier than the head, case 3, or at new time points, case 4).

    Args:
        rate: arrivals per second (> 0).
        horizon: seconds of arrivals.
        seed: the seed of the draw (an int >= 0).
        duration: how long each run takes (seconds or a distribution).
        lead: how far ahead of its due time a request is made.
        cancels, duplicates, failures: fractions (see the module's docstring).
        label: the runs' label.

    >>> from tempsched_lab.lab import exponential
    >>> w = poisson(rate=200, horizon=1.0, seed=3, lead=exponential(0.05), cancels=0.1)
    >>> len(w), int(w.frame["cancel_at"].notna().sum())
    (176, 23)
    """
    import numpy as np

    rate = _number("rate", rate, positive=True)
    horizon = _number("horizon", horizon, positive=True)
    options = _OneShots(duration, lead, cancels, duplicates, failures)
    rng = _rng(seed)
    n = int(rng.poisson(rate * horizon))
    arrivals = np.sort(rng.uniform(0.0, horizon, n))
    due = arrivals + options.lead.sample(rng, n)
    frame = _frame(options.columns(rng, label, arrivals, due))
    params = {"rate": rate, "horizon": horizon, **options.record()}
    return Workload(frame, horizon=horizon, name=label, seed=int(seed), params={"poisson": params})


def bursts(
    size: int,
    every: float,
    horizon: float,
    *,
    seed: int,
    first: float = 0.0,
    duration: Distribution | float = 0.0,
    lead: Distribution | float = 0.0,
    cancels: float = 0.0,
    duplicates: float = 0.0,
    failures: float = 0.0,
    label: str = "burst",
) -> Workload:
    """``size`` requests due at one instant, at ``first``, ``first + every``... before ``horizon``.

    Each request is made ``lead`` before its instant (never before 0): with the
    default 0, a whole burst arrives at once (one ``schedule_many``: the first
    request opens the time point, the others join it, cases 6 or 8).

    >>> w = bursts(size=4, every=0.25, horizon=1.0, seed=0)
    >>> sorted(w.frame["due"].unique().tolist()), len(w)
    ([0.0, 0.25, 0.5, 0.75], 16)
    """
    import numpy as np

    size = _count("size", size, minimum=1)
    every = _number("every", every, positive=True)
    horizon = _number("horizon", horizon, positive=True)
    first = _number("first", first, minimum=0.0)
    options = _OneShots(duration, lead, cancels, duplicates, failures)
    rng = _rng(seed)
    instants = first + every * np.arange(max(0, math.ceil((horizon - first) / every)))
    instants = instants[instants < horizon]
    due = np.repeat(instants, size)
    submit = np.maximum(0.0, due - options.lead.sample(rng, len(due)))
    order = np.argsort(submit, kind="stable")
    frame = _frame(options.columns(rng, label, submit[order], due[order]))
    params = {"size": size, "every": every, "horizon": horizon, "first": first, **options.record()}
    return Workload(frame, horizon=horizon, name=label, seed=int(seed), params={"bursts": params})


def _choices(
    rng: np.random.Generator, name: str, value: Any, n: int, *, positive: bool = True
) -> np.ndarray:
    """``n`` values: a number repeated, drawn from a distribution, or picked from a list."""
    import numpy as np

    if isinstance(value, Distribution):
        values = value.sample(rng, n)
        if positive and (values <= 0).any():
            raise ValueError(f"{name}={value!r}: drew a value <= 0; use a distribution above 0")
        return values
    if isinstance(value, Sequence) and not isinstance(value, str):
        options = [_number(name, v, positive=positive) for v in value]
        if not options:
            raise ValueError(f"{name}=[]: expected at least one value")
        return np.asarray(options)[rng.integers(0, len(options), n)]
    return np.full(n, _number(name, value, positive=positive))


def periodic_fleet(
    tasks: int,
    period: Any,
    horizon: float,
    *,
    seed: int,
    jitter: float = 1.0,
    duration: Distribution | float = 0.0,
    failures: float = 0.0,
    label: str = "periodic",
) -> Workload:
    """``tasks`` periodic tasks made at time 0, each running every ``period`` until ``horizon``.

    ``period``: seconds, a list to pick from (each task draws one), or a
    distribution. Phase jitter: each task's first run is at a random offset in
    ``[0, jitter x period)`` (0: every task starts at 0, in step, the
    thundering herd). A task whose ``duration`` exceeds its period overruns:
    the misfire policy decides what happens to the runs it misses. Each
    task's runs all take its drawn duration; a failing task fails every run and
    keeps its schedule.

    >>> w = periodic_fleet(tasks=3, period=[0.1, 0.2], horizon=1.0, seed=2, jitter=0.0)
    >>> w.frame[["submit", "due", "period"]].to_dict("list")
    {'submit': [0.0, 0.0, 0.0], 'due': [0.0, 0.0, 0.0], 'period': [0.2, 0.1, 0.1]}
    """
    import numpy as np

    tasks = _count("tasks", tasks, minimum=1)
    horizon = _number("horizon", horizon, positive=True)
    jitter = _fraction("jitter", jitter)
    dist = as_distribution(duration)
    failures = _fraction("failures", failures)
    rng = _rng(seed)
    periods = _choices(rng, "period", period, tasks)
    phase = periods * jitter * rng.random(tasks)
    columns = {
        "label": np.full(tasks, _label(label), dtype=object),
        "submit": np.zeros(tasks),
        "due": phase,
        "period": periods,
        "duration": dist.sample(rng, tasks),
        "fails": rng.random(tasks) < failures,
    }
    desc = period.describe() if isinstance(period, Distribution) else period
    params = {
        "tasks": tasks,
        "period": desc,
        "horizon": horizon,
        "jitter": jitter,
        "duration": dist.describe(),
        "failures": failures,
    }
    return Workload(
        _frame(columns),
        horizon=horizon,
        name=label,
        seed=int(seed),
        params={"periodic_fleet": params},
    )


def cron_fleet(
    tasks: int,
    horizon: float,
    *,
    seed: int,
    rules: Sequence[str] = ("* * * * *",),
    tz: str = "UTC",
    start: float = 0.0,
    duration: Distribution | float = 0.0,
    failures: float = 0.0,
    label: str = "cron",
) -> Workload:
    """``tasks`` calendar tasks, made at time 0, each with a cron rule picked from ``rules``.

    Cron rules read the calendar: ``start`` (epoch seconds) places the virtual
    clock's 0 on a date, ``tz`` is the rules' time zone (see
    :mod:`tempsched_lab.core.triggers`; needs ``pip install 'tempsched-lab[cron]'``).
    The rules are checked here, so a bad one fails before any run.

    >>> w = cron_fleet(tasks=2, horizon=3600.0, seed=0, rules=["*/5 * * * *"])
    >>> w.frame[["cron", "due"]].to_dict("list")
    {'cron': ['*/5 * * * *', '*/5 * * * *'], 'due': [nan, nan]}
    """
    import numpy as np

    from ..core.triggers import CronTrigger

    tasks = _count("tasks", tasks, minimum=1)
    horizon = _number("horizon", horizon, positive=True)
    if isinstance(rules, str) or not isinstance(rules, Sequence) or not rules:
        raise TypeError(f"rules={rules!r}: expected a non-empty list of cron rules")
    for rule in rules:
        CronTrigger(rule, tz=tz)  # a bad rule or zone raises here, naming it
    dist = as_distribution(duration)
    failures = _fraction("failures", failures)
    rng = _rng(seed)
    picked = np.asarray(list(rules), dtype=object)[rng.integers(0, len(rules), tasks)]
    columns = {
        "label": np.full(tasks, _label(label), dtype=object),
        "submit": np.zeros(tasks),
        "cron": picked,
        "duration": dist.sample(rng, tasks),
        "fails": rng.random(tasks) < failures,
    }
    params = {
        "tasks": tasks,
        "horizon": horizon,
        "rules": list(rules),
        "tz": tz,
        "duration": dist.describe(),
        "failures": failures,
    }
    return Workload(
        _frame(columns),
        horizon=horizon,
        start=start,
        tz=tz,
        name=label,
        seed=int(seed),
        params={"cron_fleet": params},
    )


def mix(*workloads: Workload, name: str | None = None) -> Workload:
    """Several workloads as one: their requests merged in submission order, renumbered.

    The horizon is the longest; start and time zone must agree. The seed is
    kept when all parts share one.

    >>> w = mix(poisson(100, 1.0, seed=1), bursts(10, 0.5, 1.0, seed=1))
    >>> w.counts(), w.horizon
    ({'burst': 20, 'poisson': 100}, 1.0)
    """
    import numpy as np
    import pandas as pd

    if not workloads or not all(isinstance(w, Workload) for w in workloads):
        raise TypeError("mix(): expected one or more Workload objects")
    starts = {w.start for w in workloads}
    zones = {w.tz for w in workloads}
    if len(starts) > 1 or len(zones) > 1:
        raise ValueError(
            f"mix(): the parts disagree on start {sorted(starts)} or tz {sorted(zones)}"
        )
    frames: list[pd.DataFrame] = []
    offset = 0
    for w in workloads:
        part = w.frame.copy()
        part["dup_of"] = part["dup_of"] + offset
        part["part"] = len(frames)
        frames.append(part)
        offset += len(part)
    both = pd.concat(frames, ignore_index=True)
    order = np.lexsort(
        (both["request"].to_numpy(), both["part"].to_numpy(), both["submit"].to_numpy())
    )
    new_number = np.empty(len(order), dtype="int64")
    new_number[order] = np.arange(len(order))
    merged = both.iloc[order].reset_index(drop=True)
    old = merged["dup_of"]
    merged["dup_of"] = pd.array(
        [None if pd.isna(d) else int(new_number[int(d)]) for d in old], dtype="Int64"
    )
    merged = merged.drop(columns=["part", "request"])
    seeds = {w.seed for w in workloads}
    return Workload(
        merged,
        horizon=max(w.horizon for w in workloads),
        start=workloads[0].start,
        tz=workloads[0].tz,
        name=name or "+".join(w.name for w in workloads),
        seed=seeds.pop() if len(seeds) == 1 else None,
        params={"mix": [w.params for w in workloads]},
    )


def _label(label: Any) -> str:
    if not isinstance(label, str) or not label:
        raise TypeError(f"label={label!r}: expected a non-empty string")
    return label
