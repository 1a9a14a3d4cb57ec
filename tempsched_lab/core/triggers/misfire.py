"""The misfire policies, written once: what a recurring task does with slots already past.

A recurring task (periodic or calendar) re-arms after each run at its next slot.
When that slot and maybe more are already in the past (an overrun, a late
wake-up, a machine asleep), ``late`` slots are late, numbered ``0 .. late - 1``
from the earliest; slot ``late`` is the first one not in the past. The policy
picks the slot to arm and says how many are missed (:func:`pick`):

* ``"skip"``: arm slot ``late`` (the first not past); all ``late`` are missed;
* ``"run_once"``: arm slot ``late - 1`` (the latest past one, run now); ``late - 1``
  are missed;
* ``"catch_up"``: arm slot ``0`` and run every late slot back to back; none missed.

Periodic tasks count their slots on their grid (:meth:`PeriodicTask.next_slot
<tempsched_lab.core.task.PeriodicTask.next_slot>`, with :func:`first_slot_at_or_after`),
calendar tasks walk their trigger (:func:`plan_rearm`); both ask :func:`pick`.

>>> pick("skip", 3), pick("run_once", 3), pick("catch_up", 3)
((3, 3), (2, 2), (0, 0))
>>> from tempsched_lab.core.triggers import IntervalTrigger
>>> every = IntervalTrigger(1.0)
>>> plan_rearm(every, last_due=1.0, now=3.5, policy="skip")
Rearm(due=4.0, late=2, missed=2, first_late=2.0)
>>> plan_rearm(every, last_due=1.0, now=3.5, policy="run_once")
Rearm(due=3.0, late=2, missed=1, first_late=2.0)
>>> plan_rearm(every, last_due=1.0, now=3.5, policy="catch_up")
Rearm(due=2.0, late=2, missed=0, first_late=2.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..reprs import short_repr
from .base import IntervalTrigger, Trigger, check_time, fire_after

__all__ = [
    "MISFIRE_POLICIES",
    "Rearm",
    "check_misfire",
    "first_slot_at_or_after",
    "pick",
    "plan_rearm",
]

#: What a recurring task does with runs it missed (overrun or late wake-up).
MISFIRE_POLICIES = ("skip", "run_once", "catch_up")


def pick(policy: str, late: int) -> tuple[int, int]:
    """``(slot to arm, slots missed)`` when ``late`` (>= 1) slots are already past."""
    if policy == "skip":
        return late, late
    if policy == "run_once":
        return late - 1, late - 1
    return 0, 0  # catch_up


def first_slot_at_or_after(origin: float, period: float, t: float) -> int:
    """The smallest ``k`` whose slot ``origin + k * period`` of a fixed grid is at or after ``t``.

    The late-slot count of a fixed grid, written once: a periodic task's
    (:meth:`PeriodicTask.next_slot <tempsched_lab.task.PeriodicTask.next_slot>`) and an
    interval trigger's (:func:`tempsched_lab.triggers.plan_rearm`) are this less the
    first slot due. Each slot is one multiplication, as the tasks compute it, so the
    answer agrees with the due times they arm (float rounding can leave the estimate one off).

    >>> first_slot_at_or_after(0.0, 1.0, 3.5), first_slot_at_or_after(0.0, 1.0, 3.0)
    (4, 3)
    """
    k = math.ceil((t - origin) / period)
    while origin + k * period < t:
        k += 1
    while origin + (k - 1) * period >= t:
        k -= 1
    return k


def check_misfire(value: Any) -> str:
    """One of :data:`MISFIRE_POLICIES`."""
    if value not in MISFIRE_POLICIES:
        raise ValueError(f"misfire={short_repr(value)}: expected one of {MISFIRE_POLICIES}")
    return value  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Rearm:
    """The next due time of a recurring task and what it cost (see :func:`plan_rearm`)."""

    #: When to arm the next run (may be in the past: it then runs at once); ``None`` when
    #: the trigger has no fire time left and the task is finished.
    due: float | None
    #: Fire times after ``last_due`` that were already before ``now``.
    late: int
    #: How many of those will never run (what the log's ``missed`` row counts).
    missed: int
    #: The earliest late fire time (the ``due`` of the log's ``missed`` row), or ``None``.
    first_late: float | None


def plan_rearm(trigger: Trigger, last_due: float, now: float, policy: str = "skip") -> Rearm:
    """The next due time after the slot ``last_due`` ran, at time ``now``, under ``policy``.

    A slot is late when it is strictly before ``now``; :func:`pick`
    (the policy, shared with periodic tasks) chooses among them. Interval triggers are
    counted arithmetically; other triggers walk their late fire times (one ``next_after``
    each, about 10 µs for a cron trigger), so a minutely cron job that slept a week
    costs ~0.1 s once. Each answer of the trigger is checked (:func:`fire_after`): one
    that cannot be a due time (NaN, an infinity, a non-number, a time not after the
    last, a raise) is a ``ValueError`` or ``TypeError`` naming the trigger.
    """
    last_due = check_time(last_due, "last_due")
    now = check_time(now, "now")
    policy = check_misfire(policy)
    if isinstance(trigger, IntervalTrigger):
        return _plan_interval(trigger, last_due, now, policy)
    due = fire_after(trigger, last_due)
    if due is None or due >= now:
        return Rearm(due, 0, 0, None)
    late, last_late = 0, due
    nxt: float | None = due
    while nxt is not None and nxt < now:
        late += 1
        last_late = nxt
        nxt = fire_after(trigger, nxt)
    slot, missed = pick(policy, late)
    chosen = due if slot == 0 else (last_late if slot == late - 1 else nxt)
    return Rearm(chosen, late, missed, due)


def _plan_interval(trigger: IntervalTrigger, last_due: float, now: float, policy: str) -> Rearm:
    k = trigger.index_after(last_due)
    due = trigger.time_of(k)
    if due >= now:
        return Rearm(due, 0, 0, None)
    late = first_slot_at_or_after(trigger.anchor, trigger.period, now) - k
    slot, missed = pick(policy, late)
    return Rearm(trigger.time_of(k + slot), late, missed, due)
