"""The event log's row kinds by name, for the code that reads rows (plots, widgets, sentences).

:class:`Kind` has one member per kind of :data:`tempsched_lab.log.schema.KINDS`;
a member *is* the kind's name (a ``str``), so it compares equal to the log's
``kind`` column, in pandas and numpy alike. Code that asks for the rows of a
kind names it as ``Kind.START``, never as a string literal: a misspelt member
is an error for mypy and at run time, and a kind renamed or removed in the
schema stops this module from importing, with the member named, instead of a
filter that silently matches nothing. The kinds' stored codes are the
schema's (:data:`~tempsched_lab.log.schema.KIND_CODE`); nothing here repeats them.

>>> Kind.START == "start", Kind("cancel") is Kind.CANCEL
(True, True)
>>> kind_code(Kind.SCHEDULE)
0
"""

from __future__ import annotations

import enum

from .schema import KIND_CODE, KINDS

__all__ = ["Kind", "kind_code"]


class Kind(enum.StrEnum):
    """A row kind of the event log (see ``docs/event-log.md``)."""

    SCHEDULE = "schedule"
    REJECT = "reject"
    WAKE = "wake"
    DISPATCH = "dispatch"
    START = "start"
    FINISH = "finish"
    ERROR = "error"
    EVENT_SET = "event_set"
    MISSED = "missed"
    CANCEL = "cancel"
    SHUTDOWN = "shutdown"


_UNKNOWN = [k.value for k in Kind if k.value not in KINDS]
if _UNKNOWN:  # pragma: no cover - only when the schema and this module disagree
    raise ImportError(
        f"tempsched_lab.log.kinds.Kind names row kinds {_UNKNOWN} that the schema does not have "
        f"(tempsched_lab.log.schema.KINDS = {list(KINDS)})"
    )


def kind_code(kind: str) -> int:
    """The code the log stores for row kind ``kind`` (the schema's); a clear error if unknown.

    >>> kind_code("launch")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: kind='launch': not a row kind of the event log; expected one of ['schedule', ...]
    """
    try:
        return KIND_CODE[kind]
    except (KeyError, TypeError):
        raise ValueError(
            f"kind={kind!r}: not a row kind of the event log; expected one of {list(KINDS)}"
        ) from None
