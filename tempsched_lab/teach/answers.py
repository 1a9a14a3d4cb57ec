"""Reading a student's answer and comparing it with what the scheduler did, step by step.

An exercise's answer is one or more *parts* (``"runs"``, or ``"fixed rate"`` and
``"fixed delay"``), each a list of *items* (a case number, a time, a label and a
time). :class:`Step` is one item of the right answer with the log row it comes
from; :func:`compare` finds the first step a given answer gets wrong.

A malformed answer (a number where a list was expected, text that is no case,
a nested dict, ``NaN``) raises :class:`AnswerError` with a message for the
student; :meth:`Exercise.check <tempsched_lab.teach.Exercise.check>` turns it
into a result, never an exception.

>>> parse_cases("2, 4 case 6")
[2, 4, 6]
>>> parse_times([1, "2.5"])
[1.0, 2.5]
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AnswerError",
    "CheckResult",
    "Step",
    "compare",
    "parse_cases",
    "parse_label",
    "parse_labelled_times",
    "parse_labels",
    "parse_times",
]

#: The longest answer text read (a longer one is a paste gone wrong, not an answer).
MAX_ANSWER_CHARS = 5_000
#: The most items one part of an answer may hold.
MAX_ITEMS = 200
#: Two times within this many seconds are the same answer (times are shown to the ms).
TIME_TOLERANCE = 0.0015


class AnswerError(ValueError):
    """An answer that cannot be read; the message says what was expected."""


@dataclass(frozen=True)
class Step:
    """One item of the right answer: what it is about, its value, and the log row behind it."""

    #: what the step asks, in words ("request 3: schedule birch('x') at t = 2.000 s")
    what: str
    #: the right value (a case number, a time, a label, a ``(label, time)`` pair)
    value: Any
    #: the right value in words ("case 4 (new time point)", "t = 2.400 s")
    shown: str
    #: the sentence of the log row that decides it, as the dashboard's log panel says it
    sentence: str = ""
    #: the log row's ``seq`` (``None`` when no row is behind the step)
    seq: int | None = None
    #: more words for a wrong answer at this step (e.g. the tree's first question gone wrong)
    why: Callable[[Any], str] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class CheckResult:
    """What :meth:`Exercise.check <tempsched_lab.teach.Exercise.check>` says of an answer.

    ``bool(result)`` is :attr:`correct`.

    >>> r = CheckResult(False, "Step 2 went wrong", step=1)
    >>> bool(r), r.step
    (False, 1)
    """

    correct: bool
    #: right or wrong, and for a wrong answer the first step where it went wrong, and why
    feedback: str
    #: the index (from 0) of the first wrong step over all parts; ``None`` when none is wrong
    step: int | None = None
    #: the answer could not be read at all (its :attr:`feedback` says what was expected)
    malformed: bool = False
    #: the part of the answer where the first wrong step is (``""`` for a one-part answer)
    part: str = ""

    def __bool__(self) -> bool:
        return self.correct


# -- reading -----------------------------------------------------------------------------------
_SPLIT = re.compile(r"[,;\s]+")


def _text(value: str) -> str:
    if len(value) > MAX_ANSWER_CHARS:
        raise AnswerError(f"the answer is {len(value):,} characters long; keep it short")
    return value.strip()


def _items(value: Any, what: str) -> list[Any]:
    """A list of raw items from a list/tuple, or from text split at commas and spaces."""
    if isinstance(value, str):
        text = _text(value).strip("[]() ")
        items: list[Any] = [t for t in _SPLIT.split(text) if t]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        raise AnswerError(f"expected a list of {what}, got {_kind(value)}")
    if len(items) > MAX_ITEMS:
        raise AnswerError(f"{len(items)} items: expected at most {MAX_ITEMS} {what}")
    return items


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (None)"
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return f"{type(value).__name__} {shown}"


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise AnswerError(f"{_kind(value)} is not {what}")
    try:
        number = (
            float(value.strip().removeprefix("t=").removesuffix("s"))
            if isinstance(value, str)
            else float(value)
        )
    except (ValueError, OverflowError):
        raise AnswerError(f"{_kind(value)} is not {what}") from None
    if not math.isfinite(number):
        raise AnswerError(f"{_kind(value)} is not {what}: expected a finite number")
    return number


def parse_cases(value: Any) -> list[int]:
    """Case numbers 1-8 from a list (``[2, 4]``) or text (``"2, 4"``, ``"case 2 case 4"``).

    >>> parse_cases(["3", 8])
    [3, 8]
    """
    raw = _items(value, "case numbers 1-8")
    if isinstance(value, str):
        raw = [t for t in raw if t.lower() != "case"]
    cases = []
    for item in raw:
        number = _number(item, "a case number 1-8")
        if number != int(number) or not 1 <= number <= 8:
            raise AnswerError(f"{_kind(item)} is not a case number: expected 1-8")
        cases.append(int(number))
    return cases


def parse_case(value: Any) -> list[int]:
    """One case number, as a list of one (``4``, ``"case 4"``, ``[4]``).

    >>> parse_case("case 4")
    [4]
    """
    cases = parse_cases(value if isinstance(value, (str, list, tuple)) else [value])
    if len(cases) != 1:
        raise AnswerError(f"{len(cases)} case numbers: expected one, 1-8")
    return cases


def parse_times(value: Any) -> list[float]:
    """Times in seconds from a list (``[1, 2.4]``) or text (``"1, 2.4"``).

    >>> parse_times("1 2.40")
    [1.0, 2.4]
    """
    return [_number(item, "a time in seconds") for item in _items(value, "times in seconds")]


def parse_label(value: Any) -> str:
    """One label (text), e.g. the name of a design.

    >>> parse_label(" heap ")
    'heap'
    """
    if not isinstance(value, str):
        raise AnswerError(f"expected a name (text), got {_kind(value)}")
    text = _text(value)
    if not text:
        raise AnswerError("the answer is empty: expected a name")
    return text


def parse_labels(value: Any) -> list[str]:
    """Labels from a list (``["a", "b"]``) or text (``"a, b"``).

    >>> parse_labels("a b")
    ['a', 'b']
    """
    labels = []
    for item in _items(value, "labels"):
        if not isinstance(item, str) or not item.strip():
            raise AnswerError(f"{_kind(item)} is not a label: expected text")
        labels.append(item.strip())
    return labels


def parse_labelled_times(value: Any) -> list[tuple[str, float]]:
    """``(label, time)`` pairs from ``[["a", 1], ["b", 2.5]]`` or text ``"a@1, b@2.5"``.

    >>> parse_labelled_times("a@1, b @ 2.5")
    [('a', 1.0), ('b', 2.5)]
    """
    if isinstance(value, str):
        text = re.sub(r"\s*@\s*", "@", _text(value))
        value = [t.split("@", 1) if "@" in t else t for t in _items(text, "label@time pairs")]
    pairs = []
    for item in _items(value, "(label, time) pairs"):
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise AnswerError(f"{_kind(item)} is not a (label, time) pair, like 'a@1.5'")
        label, t = item
        if not isinstance(label, str) or not label.strip():
            raise AnswerError(f"{_kind(label)} is not a label: expected text")
        pairs.append((label.strip(), _number(t, "a time in seconds")))
    return pairs


def parse_parts(value: Any, parts: Sequence[str], item: Callable[[Any], list[Any]]) -> list[Any]:
    """A two-part answer: a dict ``{part: items}`` or text ``"part: items | part: items"``.

    >>> parse_parts("rate: 1 2 | delay: 1", ["rate", "delay"], parse_times)
    [[1.0, 2.0], [1.0]]
    """
    if isinstance(value, str):
        text = _text(value)
        found: dict[str, Any] = {}
        for chunk in text.split("|"):
            name, sep, rest = chunk.partition(":")
            if not sep:
                raise AnswerError(f"{chunk.strip()!r}: expected 'part: items', parts {parts}")
            found[name.strip()] = rest
        value = found
    if not isinstance(value, Mapping):
        raise AnswerError(f"expected a dict with the parts {list(parts)}, got {_kind(value)}")
    unknown = [k for k in value if k not in parts]
    if unknown:
        raise AnswerError(f"unknown part {unknown[0]!r}: the parts are {list(parts)}")
    missing = [p for p in parts if p not in value]
    if missing:
        raise AnswerError(f"the part {missing[0]!r} is missing: the parts are {list(parts)}")
    return [item(value[p]) for p in parts]


# -- comparing ---------------------------------------------------------------------------------
def same(given: Any, right: Any) -> bool:
    """Equal, times within :data:`TIME_TOLERANCE` (pairs compared item by item).

    >>> same(("a", 1.0004), ("a", 1.0)), same(2, 3)
    (True, False)
    """
    if isinstance(right, tuple):
        return (
            isinstance(given, tuple)
            and len(given) == len(right)
            and all(same(g, r) for g, r in zip(given, right, strict=True))
        )
    if isinstance(right, float):
        return isinstance(given, (int, float)) and abs(float(given) - right) <= TIME_TOLERANCE
    return bool(given == right)


def shown(value: Any) -> str:
    """A given value in words, for 'you said ...'.

    >>> shown(("a", 1.5)), shown(2.0)
    ("'a' at t = 1.500 s", 't = 2.000 s')
    """
    if isinstance(value, tuple) and len(value) == 2:
        return f"{value[0]!r} at {shown(value[1])}"
    if isinstance(value, float):
        return f"t = {value:.3f} s"
    return repr(value)


def compare(
    given: Sequence[Sequence[Any]],
    steps: Sequence[Sequence[Step]],
    parts: Sequence[str],
    *,
    noun: str = "item",
    show: Callable[[Any], str] = shown,
) -> CheckResult:
    """Compare a parsed answer (a list per part) with the steps; the first wrong step explained."""
    index = 0
    for part, said, right in zip(parts, given, steps, strict=True):
        where = f"In {part}, " if part else ""
        for i, step in enumerate(right):
            if i >= len(said):
                return CheckResult(
                    False,
                    f"Not quite. {_first_up(where + 'the answer')} stops after {len(said)} "
                    f"{noun}(s), but more happened. {_step_text(index, step)} "
                    f"The log says: “{step.sentence}”.",
                    index,
                    part=part,
                )
            if not same(said[i], step.value):
                why = step.why(said[i]) if step.why is not None else ""
                return CheckResult(
                    False,
                    f"Not quite. The first step where it went wrong: {where.lower()}"
                    f"{_step_text(index, step)} You said {show(said[i])}; it was "
                    f"{step.shown}. " + (f"{why} " if why else "") + f"The log says: "
                    f"“{step.sentence}”.",
                    index,
                    part=part,
                )
            index += 1
        if len(said) > len(right):
            extra = show(said[len(right)])
            return CheckResult(
                False,
                f"Not quite. {_first_up(where + 'the answer')} has {len(said)} {noun}(s); only "
                f"{len(right)} happened. The first one too many is {extra}.",
                index,
                part=part,
            )
    return CheckResult(True, "Right! Every step matches what the scheduler did.")


def _first_up(text: str) -> str:
    return text[:1].upper() + text[1:]


def _step_text(index: int, step: Step) -> str:
    return f"Step {index + 1} ({step.what})."
