"""Triggers: when a recurring task falls due, by period or by calendar.

A trigger answers ``next_after(t)``: the first fire time strictly after ``t``,
in epoch seconds (``None`` when it has none left). The scheduler asks it after
each run, from the slot that just ran, and needs to know nothing else about it.

* :class:`IntervalTrigger`: every ``period`` seconds on a fixed grid;
* :class:`CronTrigger`: a cron expression on the wall clock of a time zone,
  correct across DST (optional extra: ``pip install 'tempsched-lab[cron]'``);
* :func:`plan_rearm`: the misfire policies (``skip``, ``run_once``,
  ``catch_up``) for any trigger;
* :func:`trigger_from`: what ``schedule(..., cron=, tz=, trigger=)`` accepts.

>>> from datetime import datetime
>>> from zoneinfo import ZoneInfo
>>> paris = ZoneInfo("Europe/Paris")
>>> nightly = trigger_from(cron="30 2 * * *", tz="Europe/Paris")
>>> saturday = datetime(2026, 3, 28, 12, 0, tzinfo=paris).timestamp()
>>> times = next_times(nightly, saturday, 3)
>>> [datetime.fromtimestamp(t, paris).strftime("%a %H:%M %Z") for t in times]
['Sun 03:00 CEST', 'Mon 02:30 CEST', 'Tue 02:30 CEST']

On the night the clocks spring forward, 02:30 does not exist and the run
happens at 03:00, when the clock jumps (as cron does).
"""

from __future__ import annotations

from datetime import tzinfo
from typing import Any

from .base import IntervalTrigger, Trigger, check_time, check_trigger, next_times
from .cron import NICKNAMES, CronTrigger
from .misfire import Rearm, plan_rearm
from .zones import local_zone, resolve_zone, zone_name

__all__ = [
    "NICKNAMES",
    "CronTrigger",
    "IntervalTrigger",
    "Rearm",
    "Trigger",
    "check_time",
    "check_trigger",
    "local_zone",
    "next_times",
    "plan_rearm",
    "resolve_zone",
    "trigger_from",
    "zone_name",
]


def trigger_from(
    *, cron: str | None = None, tz: str | tzinfo | None = None, trigger: Any = None
) -> Trigger | None:
    """The trigger a ``schedule(...)`` call asks for, or ``None`` when it asks for none.

    ``cron=`` (with an optional ``tz=``) builds a :class:`CronTrigger`; ``trigger=``
    accepts any object with ``next_after`` and ``describe``. Errors name the
    argument the caller wrote.

    >>> trigger_from(cron="@hourly", tz="UTC")
    CronTrigger('@hourly', tz='UTC')
    >>> trigger_from() is None
    True
    >>> trigger_from(cron="0 9 * * *", trigger=IntervalTrigger(60))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: cron='0 9 * * *' and trigger=IntervalTrigger(...): give one of them, not both
    """
    if cron is not None and trigger is not None:
        raise ValueError(f"cron={cron!r} and trigger={trigger!r}: give one of them, not both")
    if cron is not None:
        return CronTrigger._named(cron, tz, "cron", "tz")
    if tz is not None:
        raise ValueError(
            f"tz={tz!r} without cron=: a time zone only applies to a cron expression "
            "(a trigger object carries its own)"
        )
    if trigger is not None:
        return check_trigger(trigger)
    return None
