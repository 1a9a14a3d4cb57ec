"""The misfire policies, written once: what a recurring task does with slots already past.

A recurring task (periodic or calendar) re-arms after each run at its next slot.
When that slot and maybe more are already in the past (an overrun, a late
wake-up, a machine asleep), ``late`` slots are late, numbered ``0 .. late - 1``
from the earliest; slot ``late`` is the first one not in the past. The policy
picks the slot to arm and says how many are missed:

* ``"skip"``: arm slot ``late`` (the first not past); all ``late`` are missed;
* ``"run_once"``: arm slot ``late - 1`` (the latest past one, run now); ``late - 1``
  are missed;
* ``"catch_up"``: arm slot ``0`` and run every late slot back to back; none missed.

Periodic tasks count their slots on their grid (:meth:`PeriodicTask.next_slot
<tempsched_lab.task.PeriodicTask.next_slot>`), calendar tasks walk their trigger
(:func:`tempsched_lab.triggers.plan_rearm`); both ask :func:`pick`.

>>> pick("skip", 3), pick("run_once", 3), pick("catch_up", 3)
((3, 3), (2, 2), (0, 0))
"""

from __future__ import annotations

import math

__all__ = ["MISFIRE_POLICIES", "first_slot_at_or_after", "pick"]

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
