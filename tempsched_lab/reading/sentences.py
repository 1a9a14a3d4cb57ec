"""What each event-log row says, as one plain sentence: the words of the log panel, the timeline's
hover and the command line's narration, written once.

``describe_row(row)`` takes a row of an event-log frame (a pandas Series, a
namedtuple-like object with the frame's columns, or a dict from
:meth:`EventLog.rows <tempsched_lab.EventLog.rows>`) and says what happened in
the scheduler's time language. Each row kind has its own sentence, registered
once in :data:`SENTENCES` (``@sentence(Kind.X)``); a kind without one says its
name. The module imports nothing heavy (no pandas, matplotlib or ipywidgets),
so the command line can print sentences without loading the widgets.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> s = Scheduler(VirtualClock())
>>> _ = s.schedule(print, at=1.0, label="hello")
>>> describe_row(s.log.rows()[0])
'case 2 (nothing scheduled): task #0 queued, due t = 1.000 s'
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

from ..core.decision import Case
from ..log.kinds import Kind
from ..time.scale import TimeScale, fmt_duration

__all__ = ["SENTENCES", "describe_row", "row_float", "row_int", "row_text", "sentence"]

#: A row kind's sentence: ``(row, scale) -> str``.
Sentence = Callable[[Any, TimeScale], str]
#: The sentence of each row kind (registered with :func:`sentence`).
SENTENCES: dict[str, Sentence] = {}


def sentence(kind: Kind) -> Callable[[Sentence], Sentence]:
    """Register the decorated function as the sentence of rows of ``kind``."""
    kind = Kind(kind)

    def register(say: Sentence) -> Sentence:
        if kind in SENTENCES:
            raise ValueError(f"kind={kind.value!r}: a sentence is registered already")
        SENTENCES[kind.value] = say
        return say

    return register


def _missing(value: Any) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    pandas = sys.modules.get("pandas")  # a frame's missing value (pd.NA) exists only with pandas
    return pandas is not None and value is pandas.NA


def row_float(value: Any) -> float:
    """A row's value as a float (NaN when missing or not a number).

    >>> row_float("2.5"), math.isnan(row_float(None))
    (2.5, True)
    """
    if _missing(value):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def row_int(value: Any) -> int | None:
    """A row's value as an int (``None`` when missing).

    >>> row_int(3.0), row_int(float("nan"))
    (3, None)
    """
    f = row_float(value)
    return None if math.isnan(f) else int(f)


def row_text(value: Any) -> str:
    """A row's value as text (``""`` when missing).

    >>> row_text("x"), row_text(None), row_text(float("nan"))
    ('x', '', '')
    """
    return "" if _missing(value) else str(value)


def describe_row(row: Any, scale: TimeScale | None = None) -> str:
    """One log row in a few plain words (the log table, the history, the hover, the narration).

    ``row`` is a row of an event-log frame (a Series, a dict of
    :meth:`EventLog.rows <tempsched_lab.EventLog.rows>` or a namedtuple-like
    object with the frame's columns); times are written in ``scale``'s
    language (default: seconds since 0).

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> _ = s.schedule(print, at=1.0, label="hello")
    >>> describe_row(s.log.to_frame().iloc[0])
    'case 2 (nothing scheduled): task #0 queued, due t = 1.000 s'
    """
    scale = scale if scale is not None else TimeScale(0.0)
    kind = row_text(row["kind"])
    say = SENTENCES.get(kind)
    return kind if say is None else say(row, scale)


def _task(row: Any) -> int | None:
    return row_int(row["task_id"])


@sentence(Kind.SCHEDULE)
def _schedule(row: Any, scale: TimeScale) -> str:
    case = row_int(row["case"])
    dup = row_int(row["dup_of"])
    text = f"case {case} ({Case(case).short}): " if case else ""
    if dup is not None:
        return text + f"duplicate of task #{dup}, nothing added"
    again = " re-armed" if row_text(row["origin"]) == "periodic" else " queued"
    return text + f"task #{_task(row)}{again}, due {scale.at(row_float(row['due']))}"


@sentence(Kind.REJECT)
def _reject(row: Any, scale: TimeScale) -> str:
    case = row_int(row["case"])
    if case == int(Case.PAST):  # in our words: the log's error text holds raw clock values
        due, now = row_float(row["due"]), row_float(row["t"])
        return (
            f"case 1 ({Case.PAST.short}): rejected, due {scale.at(due)} is "
            f"{fmt_duration(now - due)} before now ({scale.at(now)})"
        )
    if case:
        return f"case {case} ({Case(case).short}): rejected, {row_text(row['error'])}"
    return f"invalid request: {row_text(row['error'])}"


@sentence(Kind.DISPATCH)
def _dispatch(row: Any, scale: TimeScale) -> str:
    late = fmt_duration(row_float(row["lateness"])) or "?"
    return f"task #{_task(row)} handed to its executor, late {late}"


@sentence(Kind.START)
def _start(row: Any, scale: TimeScale) -> str:
    thread = row_text(row["thread"]) if "thread" in row else ""
    return f"task #{_task(row)} started" + (f" on thread {thread}" if thread else "")


@sentence(Kind.FINISH)
def _finish(row: Any, scale: TimeScale) -> str:
    took = fmt_duration(row_float(row["duration"])) or "?"
    return f"task #{_task(row)} finished in {took}, returned {row_text(row['result'])}"


@sentence(Kind.ERROR)
def _error(row: Any, scale: TimeScale) -> str:
    return f"task #{_task(row)} raised {row_text(row['error'])}"


@sentence(Kind.EVENT_SET)
def _event_set(row: Any, scale: TimeScale) -> str:
    return f"task #{_task(row)}: Event set"


@sentence(Kind.MISSED)
def _missed(row: Any, scale: TimeScale) -> str:
    policy = row_text(row["result"])
    return f"task #{_task(row)} missed {row_int(row['missed'])} run(s) (policy {policy})"


@sentence(Kind.CANCEL)
def _cancel(row: Any, scale: TimeScale) -> str:
    where = row_text(row["where"])
    return f"cancel task #{_task(row)}: {row_text(row['result'])}" + (
        f" (was in {where})" if where else ""
    )


@sentence(Kind.WAKE)
def _wake(row: Any, scale: TimeScale) -> str:
    wait = row_float(row["wait"])
    waited = "" if math.isnan(wait) else f" after waiting up to {fmt_duration(wait)}"
    return f"worker woke up: {row_text(row['result'])}{waited}"


@sentence(Kind.SHUTDOWN)
def _shutdown(row: Any, scale: TimeScale) -> str:
    result = row_text(row["result"])
    if result == "dropped":
        return f"shutdown: task #{_task(row)} dropped"
    if result == "restarted":
        return f"restarted: {row_text(row['detail'])}"
    return f"shutdown: {result} ({row_text(row['detail'])})"
