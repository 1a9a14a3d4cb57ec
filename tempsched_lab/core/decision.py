"""The 8-case decision tree of the TemporalScheduler design, shared by every queue.

Every ``schedule`` request is classified by walking a small tree of questions
about the queue's *head* (the earliest pending time point and its tasks) and
the *time points* behind it. The answer is a :class:`Case`; the full record of
one call (case, task ID, duplicate, head before and after, whether a worker was
woken) is a :class:`Decision`.

The tree is data (:data:`TREE`): plots draw it, :attr:`Case.path` is derived
from it, and :func:`walk_tree` answers its questions one by one.
:func:`classify` is the same tree written as straight-line code for the hot
path; a test walks every path of :data:`TREE` and checks that both agree.

>>> Case.EARLIER_THAN_HEAD.short
'earlier than head'
>>> Case(5).moves_head
False
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

__all__ = [
    "TREE",
    "Case",
    "Decision",
    "Question",
    "classify",
    "request_key",
    "same_request",
    "walk_tree",
]


class Case(enum.IntEnum):
    """The eight outcomes of a ``schedule`` request, numbered as in the reference README."""

    PAST = 1
    EMPTY = 2
    EARLIER_THAN_HEAD = 3
    NEW_TIME_POINT = 4
    DUPLICATE_OF_HEAD = 5
    JOINS_HEAD = 6
    DUPLICATE_IN_QUEUE = 7
    JOINS_TIME_POINT = 8

    def __str__(self) -> str:
        return f"case {self.value} ({_SHORT[self]})"

    @property
    def short(self) -> str:
        """A few words for plot leaves and table headers."""
        return _SHORT[self]

    @property
    def explanation(self) -> str:
        """The teaching text: what the condition is and what the scheduler does."""
        return _EXPLANATION[self]

    @property
    def accepted(self) -> bool:
        """False only for case 1, the rejected request."""
        return self is not Case.PAST

    @property
    def adds_task(self) -> bool:
        """True when the request stores a new task (not rejected, not a duplicate)."""
        return self not in (Case.PAST, Case.DUPLICATE_OF_HEAD, Case.DUPLICATE_IN_QUEUE)

    @property
    def is_duplicate(self) -> bool:
        """True for cases 5 and 7: the request matched a pending task."""
        return self in (Case.DUPLICATE_OF_HEAD, Case.DUPLICATE_IN_QUEUE)

    @property
    def moves_head(self) -> bool:
        """True when the head time changes (cases 2 and 3), so a waiting worker must recompute."""
        return self in (Case.EMPTY, Case.EARLIER_THAN_HEAD)

    @property
    def wakes_worker(self) -> bool:
        """Same as :attr:`moves_head`: a waiting worker thread (if any) must recompute its wait."""
        return self.moves_head

    @property
    def path(self) -> tuple[tuple[str, bool], ...]:
        """The questions asked on the way to this case, with their answers."""
        return _PATHS[self]


_SHORT = {
    Case.PAST: "in the past",
    Case.EMPTY: "nothing scheduled",
    Case.EARLIER_THAN_HEAD: "earlier than head",
    Case.NEW_TIME_POINT: "new time point",
    Case.DUPLICATE_OF_HEAD: "duplicate of head",
    Case.JOINS_HEAD: "joins head",
    Case.DUPLICATE_IN_QUEUE: "duplicate in queue",
    Case.JOINS_TIME_POINT: "joins time point",
}

_EXPLANATION = {
    Case.PAST: (
        "The requested time is already in the past. The request is rejected with a "
        "ValueError and nothing is stored: running it now would silently change its meaning."
    ),
    Case.EMPTY: (
        "Nothing is scheduled, so the task becomes the head: the earliest time point, the "
        "one the scheduler waits for."
    ),
    Case.EARLIER_THAN_HEAD: (
        "The task is due before the current head. The old head goes back into the queue at "
        "its own time and the new task becomes the head: the scheduler was waiting for the "
        "wrong time."
    ),
    Case.NEW_TIME_POINT: (
        "The task is due after the head at a time nobody else uses yet: a new time point is "
        "inserted in sorted order. The head is unchanged, so the worker sleeps on."
    ),
    Case.DUPLICATE_OF_HEAD: (
        "An identical request (same time, action, arguments and period) is already in the "
        "head. Nothing is added and the existing task's ID is returned."
    ),
    Case.JOINS_HEAD: (
        "The task is due at exactly the head's time and is not a duplicate: it is appended "
        "to the head list and will run right after the tasks already there."
    ),
    Case.DUPLICATE_IN_QUEUE: (
        "An identical request already waits at that later time point. Nothing is added and "
        "the existing task's ID is returned."
    ),
    Case.JOINS_TIME_POINT: (
        "The time point already exists later in the queue and the task is new there: it is "
        "appended to that time point's list, keeping insertion order."
    ),
}


@dataclass(frozen=True, slots=True)
class Question:
    """One box of the drawn tree: ``yes``/``no`` lead to another question's key or a Case."""

    key: str
    text: str
    yes: str | Case
    no: str | Case


#: The tree, root first. Plots draw it; :data:`Case.path` is derived from it.
TREE: tuple[Question, ...] = (
    Question("past", "Is the time in the past?", Case.PAST, "empty"),
    Question("empty", "Is the queue empty?", Case.EMPTY, "earlier"),
    Question("earlier", "Earlier than the head?", Case.EARLIER_THAN_HEAD, "at_head"),
    Question("at_head", "Same time as the head?", "dup_head", "in_queue"),
    Question("dup_head", "Duplicate of a head task?", Case.DUPLICATE_OF_HEAD, Case.JOINS_HEAD),
    Question("in_queue", "Time point already queued?", "dup_queue", Case.NEW_TIME_POINT),
    Question(
        "dup_queue", "Duplicate at that time?", Case.DUPLICATE_IN_QUEUE, Case.JOINS_TIME_POINT
    ),
)


def _derive_paths() -> dict[Case, tuple[tuple[str, bool], ...]]:
    by_key = {q.key: q for q in TREE}
    paths: dict[Case, tuple[tuple[str, bool], ...]] = {}

    def walk(key: str, trail: tuple[tuple[str, bool], ...]) -> None:
        q = by_key[key]
        for answer, target in ((True, q.yes), (False, q.no)):
            step = (*trail, (key, answer))
            if isinstance(target, Case):
                paths[target] = step
            else:
                walk(target, step)

    walk(TREE[0].key, ())
    return paths


_PATHS = _derive_paths()


def walk_tree(answer: Callable[[str], bool]) -> tuple[Case, tuple[tuple[str, bool], ...]]:
    """Walk :data:`TREE` from the root, asking ``answer(question_key)`` at each box.

    Returns the case reached and the path taken. This is the tree as data
    deciding; :func:`classify` is the same tree as code.

    >>> walk_tree(lambda key: key == "in_queue")[0]
    <Case.JOINS_TIME_POINT: 8>
    """
    by_key = {q.key: q for q in TREE}
    question = TREE[0]
    trail: list[tuple[str, bool]] = []
    while True:
        yes = bool(answer(question.key))
        trail.append((question.key, yes))
        target = question.yes if yes else question.no
        if isinstance(target, Case):
            return target, tuple(trail)
        question = by_key[target]


class Decision(NamedTuple):
    """What one ``schedule`` request decided.

    ``task_id`` is the new task's ID, the existing one for a duplicate (cases 5
    and 7, also in ``duplicate_of``), or ``None`` for a rejection.
    ``woke_worker`` says whether a waiting worker thread was notified;
    ``has_worker`` whether the scheduler has one at all (a virtual clock has
    none: it fires due groups when it is stepped).

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> d = s.schedule_decision(print, delay=1)
    >>> d.case, d.woke_worker, d.has_worker
    (<Case.EMPTY: 2>, False, False)
    >>> print(d.explanation.split(". ")[-1])  # doctest: +NORMALIZE_WHITESPACE
    This scheduler has no worker thread (a virtual clock fires due groups when it is
    stepped), so nothing was woken.
    """

    case: Case
    task_id: int | None
    due: float
    head_before: float | None
    head_after: float | None
    duplicate_of: int | None = None
    woke_worker: bool = False
    origin: str = "user"
    has_worker: bool = True

    @property
    def explanation(self) -> str:
        """The case's teaching text, followed by what actually happened this time."""
        text = self.case.explanation
        if self.case.is_duplicate:
            return f"{text} (It matched task {self.duplicate_of}.)"
        if not self.case.moves_head:
            return text
        if not self.has_worker:
            happened = (
                "This scheduler has no worker thread (a virtual clock fires due groups when "
                "it is stepped), so nothing was woken."
            )
        elif self.woke_worker:
            happened = "The waiting worker thread was woken to compute its new wait."
        else:
            happened = (
                "The worker thread was busy (not waiting), so it was not woken: it reads the "
                "new head before its next wait."
            )
        return f"{text} {happened}"


def same_request(a: Any, b: Any) -> bool:
    """``a == b`` as a plain bool; a comparison that raises or is ambiguous is "not equal".

    >>> same_request((1, 2), (1, 2)), same_request([1], (1,))
    (True, False)
    """
    if a is b:
        return True
    try:
        result = a == b
        if result is True or result is False:
            return result
        return bool(result)
    except Exception:
        return False


def request_key(action: Any, args: Any, kwargs: Mapping[str, Any] | None, period: Any) -> Any:
    """The hashable duplicate key of a request, or ``None`` when any part is unhashable.

    Two requests at one time are duplicates when their keys are equal (and,
    for unhashable ones, when :func:`same_request` says each part is equal).
    Never raises: unhashable or raising arguments give ``None`` (the caller
    falls back to a scan).

    >>> request_key(print, (1,), {"a": 2}, None) == request_key(print, (1,), {"a": 2}, None)
    True
    >>> request_key(print, ([1],), None, None) is None
    True
    """
    try:
        key = (action, args, frozenset(kwargs.items()) if kwargs else None, period)
        hash(key)
    except Exception:
        return None
    return key


class _Point(Protocol):
    def find_duplicate(self, action: Any, args: Any, kwargs: Any, repeat: Any) -> Any: ...


class _Request(Protocol):
    action: Any
    args: Any
    kwargs: Any

    @property
    def repeat(self) -> Any: ...


def classify(
    due: float,
    now: float,
    head_time: float | None,
    point: _Point | None,
    request: _Request | None,
    *,
    reject_past: bool = True,
) -> tuple[Case, Any]:
    """The tree as straight-line code: the case for a request due at ``due``, and any duplicate.

    ``point`` is what is pending at exactly ``due`` (a time point, a lone task, or
    ``None``); ``request`` has the request's ``action``, ``args``, ``kwargs`` and
    ``repeat``, or is ``None`` to never report a duplicate (periodic re-arms).
    :func:`walk_tree` is the reference.
    """
    if reject_past and due < now:
        return _PAST, None
    if head_time is None:
        return _EMPTY, None
    if due < head_time:
        return _EARLIER, None
    if point is not None and request is not None:
        dup = point.find_duplicate(request.action, request.args, request.kwargs, request.repeat)
    else:
        dup = None
    if due == head_time:
        return (_DUP_HEAD, dup) if dup is not None else (_JOINS_HEAD, None)
    if not point:
        return _NEW_POINT, None
    return (_DUP_QUEUE, dup) if dup is not None else (_JOINS_POINT, None)


# Module-level aliases: Python 3.11 reads an enum class attribute through a Python-level hook,
# a global is one lookup; classify() reads one to four per call. With them, schedule() with the
# log off costs 20,810 instructions instead of 21,532 (-3.4 %; callgrind, 5,000 calls): kept, as
# it holds schedule within 5 % of its cost before the single way in (issue 26).
_PAST, _EMPTY, _EARLIER, _NEW_POINT = (
    Case.PAST,
    Case.EMPTY,
    Case.EARLIER_THAN_HEAD,
    Case.NEW_TIME_POINT,
)
_DUP_HEAD, _JOINS_HEAD, _DUP_QUEUE, _JOINS_POINT = (
    Case.DUPLICATE_OF_HEAD,
    Case.JOINS_HEAD,
    Case.DUPLICATE_IN_QUEUE,
    Case.JOINS_TIME_POINT,
)
