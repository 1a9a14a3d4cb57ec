"""Fire times a recurring task missed: the misfire policies of :mod:`tempsched_lab.misfire`.

After a run whose slot was ``last_due``, the next slot is
``trigger.next_after(last_due)``. When that slot is already in the past (the run
overran, the machine slept), the policy decides, as for periodic tasks (any trigger):

* ``"skip"``: every past slot is missed; arm the first slot at or after ``now``;
* ``"run_once"``: run the latest past slot now, the earlier ones are missed;
* ``"catch_up"``: run every past slot, one after the other (nothing is missed).

>>> from tempsched_lab.triggers import IntervalTrigger
>>> every = IntervalTrigger(1.0)
>>> plan_rearm(every, last_due=1.0, now=3.5, policy="skip")
Rearm(due=4.0, late=2, missed=2, first_late=2.0)
>>> plan_rearm(every, last_due=1.0, now=3.5, policy="run_once")
Rearm(due=3.0, late=2, missed=1, first_late=2.0)
>>> plan_rearm(every, last_due=1.0, now=3.5, policy="catch_up")
Rearm(due=2.0, late=2, missed=0, first_late=2.0)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..misfire import first_slot_at_or_after, pick
from ..validation import check_misfire
from .base import IntervalTrigger, Trigger, check_time, fire_after

__all__ = ["Rearm", "plan_rearm"]


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

    A slot is late when it is strictly before ``now``; :func:`tempsched_lab.misfire.pick`
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
