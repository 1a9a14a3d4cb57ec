"""Exercises that check: a seeded problem, the answer the scheduler gives, and feedback.

:func:`exercise` poses one exercise of a kind named in :func:`catalog`. The
problem is drawn from ``random.Random(f"{name}:{seed}")`` and played on a
:class:`~tempsched_lab.VirtualClock`, so the same name and seed give the same
problem, answer and feedback on any machine ("exercise decision-tree, seed 12").
The answer is never stored by hand: it is read from the rows of the log of the
run. :meth:`Exercise.check` compares a student's answer with those rows, step
by step; a wrong answer is told the first step where it went wrong, in the
sentences the dashboard's log panel uses (:func:`~tempsched_lab.reading.sentences.describe_row`).

>>> ex = exercise("decision-tree", seed=12)
>>> ex.share
'exercise decision-tree, seed 12'
>>> ex.check(ex.answer).correct
True
>>> ex.check("banana").malformed
True
"""

from __future__ import annotations

import contextlib
import math
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.decision import TREE, Case
from ..core.scheduler import PastTimeError, Scheduler
from ..log.kinds import Kind
from ..reading.sentences import describe_row, row_float, row_int, row_text
from ..time.clock import VirtualClock
from ..time.scale import TimeScale, fmt_duration, time_scale_of
from .answers import (
    AnswerError,
    CheckResult,
    Step,
    compare,
    parse_case,
    parse_cases,
    parse_label,
    parse_labelled_times,
    parse_labels,
    parse_parts,
    parse_times,
    shown,
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["Exercise", "catalog", "exercise", "night_exercise", "teach_task"]

_QUESTIONS = {q.key: q.text for q in TREE}
_WORDS = ("apple", "birch", "cedar", "delta", "ember", "fjord", "grove", "heron", "iris", "juniper")


def teach_task(*args: Any) -> str:
    """The action of the exercises' tasks: returns its arguments as text (nothing else).

    >>> teach_task("x")
    "('x',)"
    """
    return repr(args)


@dataclass(frozen=True, eq=False)
class Exercise:
    """One posed exercise: its problem, its right answer and how to check another.

    Made by :func:`exercise` (or :func:`night_exercise`); see the module docstring.

    >>> ex = exercise("lateness", seed=1)
    >>> ex.check([0] * 50).correct
    False
    """

    #: the kind's name in :func:`catalog`
    name: str
    seed: int
    #: a title of a few words
    title: str
    #: the problem, in plain text (several lines)
    problem: str
    #: the right answer, in the form a student gives it
    answer: Any
    #: what the answer looks like ("a list of case numbers, e.g. [2, 4, 6]")
    answer_form: str
    #: the right answer step by step, per part
    steps: tuple[tuple[Step, ...], ...]
    #: the names of the parts of the answer (``("",)`` for an answer of one part)
    parts: tuple[str, ...]
    #: the hints, from gentle to nearly the answer
    hints: tuple[str, ...]
    #: the log of the run the answer comes from (a pandas frame)
    frame: pd.DataFrame = field(repr=False)
    #: the student's answer parsed into one list per part (raises AnswerError)
    _parse: Callable[[Any], list[list[Any]]] = field(repr=False)
    _picture: Callable[[Exercise], Any] | None = field(default=None, repr=False)
    #: what the wrong value's words are (case numbers read "case 4 (new time point)")
    _show: Callable[[Any], str] = field(default=shown, repr=False)
    #: the word for one item of the answer ("case", "run", "position")
    noun: str = "item"
    _hinted: list[int] = field(default_factory=lambda: [0], repr=False)

    @property
    def share(self) -> str:
        """How to hand this exercise out: ``"exercise decision-tree, seed 12"``."""
        return f"exercise {self.name}, seed {self.seed}"

    def check(self, answer: Any) -> CheckResult:
        """Compare ``answer`` with what the scheduler did; never raises.

        A wrong answer's :attr:`~CheckResult.feedback` names the first step where it
        went wrong, with the log row's sentence; a malformed one says what was
        expected (:attr:`~CheckResult.malformed`).
        """
        try:
            given = self._parse(answer)
        except AnswerError as exc:
            return CheckResult(
                False,
                f"That answer cannot be read: {exc}. Expected {self.answer_form}.",
                malformed=True,
            )
        except (TypeError, ValueError, AttributeError, OverflowError, RecursionError) as exc:
            return CheckResult(
                False,
                f"That answer cannot be read ({type(exc).__name__}). Expected {self.answer_form}.",
                malformed=True,
            )
        return compare(given, self.steps, self.parts, noun=self.noun, show=self._show)

    def parse(self, answer: Any) -> list[list[Any]]:
        """``answer`` read into one list of items per part; raises :class:`AnswerError`.

        >>> exercise("decision-tree", seed=0).parse("2, 6")
        [[2, 6]]
        """
        return self._parse(answer)

    def say(self, item: Any) -> str:
        """One item of an answer in words (``case 4 (new time point)``, ``t = 1.500 s``)."""
        return self._show(item)

    def hint(self) -> str:
        """The next hint (the last one again once all were given).

        >>> ex = exercise("periodic", seed=0)
        >>> ex.hint() != ex.hint()
        True
        """
        i = min(self._hinted[0], len(self.hints) - 1)
        self._hinted[0] += 1
        return self.hints[i]

    def solution(self) -> str:
        """The worked solution: each step with the log row's sentence behind it."""
        lines = [f"Answer: {self.answer!r}"]
        for part, steps in zip(self.parts, self.steps, strict=True):
            if part:
                lines.append(f"{part}:")
            lines += [f"  {s.what}: {s.shown}. The log: “{s.sentence}”" for s in steps]
        return "\n".join(lines)

    def picture(self) -> Figure | None:
        """A figure of what happened (a timeline or the tree); ``None`` when the kind has none."""
        if self._picture is None:
            return None
        figure: Figure = self._picture(self)
        return figure

    def __repr__(self) -> str:
        return f"<Exercise {self.name}, seed {self.seed}: {self.title}>"

    def _repr_markdown_(self) -> str:
        return f"**{self.title}** ({self.share})\n\n```text\n{self.problem}\n```\n"


# -- the catalog -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Kind:
    summary: str
    pose: Callable[[random.Random, int], Exercise]


_KINDS: dict[str, _Kind] = {}


def _kind(name: str, summary: str) -> Callable[[Callable[..., Exercise]], Callable[..., Exercise]]:
    def register(pose: Callable[..., Exercise]) -> Callable[..., Exercise]:
        _KINDS[name] = _Kind(summary, pose)
        return pose

    return register


def catalog() -> dict[str, str]:
    """The exercises by name, each with a one-line summary.

    >>> "decision-tree" in catalog() and len(catalog()) >= 8
    True
    """
    return {name: kind.summary for name, kind in _KINDS.items()}


def exercise(name: str, seed: int = 0) -> Exercise:
    """Pose the exercise ``name`` (see :func:`catalog`): the same problem for the same ``seed``.

    >>> exercise("firing-order", seed=3).share
    'exercise firing-order, seed 3'
    """
    if not isinstance(name, str) or name not in _KINDS:
        raise ValueError(f"name={name!r}: expected one of {', '.join(_KINDS)}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ValueError(f"seed={seed!r}: expected a whole number, 0 or more")
    return _KINDS[name].pose(random.Random(f"{name}:{seed}"), seed)


# -- helpers -----------------------------------------------------------------------------------
def _one(parse: Callable[[Any], list[Any]]) -> Callable[[Any], list[list[Any]]]:
    return lambda value: [parse(value)]


def _case_words(case: Any) -> str:
    return (
        f"case {case} ({Case(case).short})"
        if isinstance(case, int) and 1 <= case <= 8
        else repr(case)
    )


def _tree_why(actual: int, row: dict[str, Any], scale: TimeScale) -> Callable[[Any], str]:
    """Why a guessed case is wrong: the first question of the tree its path answers otherwise."""

    def why(guess: Any) -> str:
        if not isinstance(guess, int) or not 1 <= guess <= 8:
            return ""
        mine, real = Case(guess).path, Case(actual).path
        for (key, said), (real_key, was) in zip(mine, real, strict=False):
            if key == real_key and said != was:
                facts = _facts(row, scale)
                return (
                    f"The tree goes wrong at «{_QUESTIONS[key]}»: case {guess} needs "
                    f"{'yes' if said else 'no'}, but the answer was {'yes' if was else 'no'}"
                    f"{facts}."
                )
        return ""

    return why


def _facts(row: dict[str, Any], scale: TimeScale) -> str:
    due, now, head = row_float(row["due"]), row_float(row["t"]), row_float(row["head_before"])
    words = [f"now {scale.at(now)}", f"due {scale.at(due)}"]
    words.append("nothing pending" if math.isnan(head) else f"the head at {scale.at(head)}")
    return " (" + ", ".join(words) + ")"


def _requests_of(frame: pd.DataFrame) -> list[dict[str, Any]]:
    rows = frame[frame["kind"].isin([Kind.SCHEDULE.value, Kind.REJECT.value])]
    records: list[dict[str, Any]] = rows.to_dict("records")  # type: ignore[assignment]
    return [r for r in records if row_text(r["origin"]) != "periodic"]


def _done(s: Scheduler) -> pd.DataFrame:
    frame = s.log.to_frame()
    s.shutdown(wait=False)
    return frame


def _timeline(ex: Exercise) -> Any:
    from ..plots import plot_timeline

    return plot_timeline(ex.frame).figure


def _timelines(ex: Exercise) -> Any:
    """One timeline per part (the frame's ``design`` column names the part)."""
    from ..plots import new_figure, plot_timeline

    figure = new_figure((9.0, 2.6 * len(ex.parts)))
    for i, part in enumerate(ex.parts):
        ax = figure.add_subplot(len(ex.parts), 1, i + 1)
        plot_timeline(ex.frame[ex.frame["design"] == part].drop(columns="design"), ax=ax)
        ax.set_title(part)
    return figure


def _tree(ex: Exercise) -> Any:
    from collections import Counter

    from ..plots import plot_decision_tree

    cases = [step.value for step in ex.steps[0]]
    highlight = cases[0] if len(cases) == 1 else None
    return plot_decision_tree(highlight, counts=dict(Counter(cases))).figure


# -- 1. the decision tree ----------------------------------------------------------------------
@_kind("decision-tree", "the case (1-8) of each request of a sequence, as the tree decides it")
def _decision_tree(rng: random.Random, seed: int) -> Exercise:
    clock = VirtualClock()
    s = Scheduler(clock, executor="inline")
    scale = s.time_scale
    lines: list[str] = []
    made: list[tuple[float, tuple[str, ...], str]] = []
    advance_at = rng.randint(3, 4)
    for i in range(6):
        if i == advance_at:
            to = clock.now() + rng.choice((1.5, 2.0, 2.5))
            clock.run_until(to)
            lines.append(f"  the clock runs to {scale.at(to)} (what is due by then runs)")
        now = clock.now()
        pick = rng.random()
        if made and pick < 0.3:
            at, args, label = rng.choice(made)  # the same call again
        elif i > 0 and pick < 0.4:
            at, args, label = math.floor(now) - 0.5, (f"{_WORDS[i]}-{i}",), _WORDS[i]
        else:
            at = math.floor(now) + rng.choice((1.0, 2.0, 3.0, 4.0, 1.5))
            word = _WORDS[i]
            if made and pick < 0.55:
                at = rng.choice(made)[0]  # an existing time point
                at = at if at > now else now + 1.0
            at, args, label = at, (f"{word}-{i}",), word
        made.append((at, args, label))
        call = f"{label}({', '.join(repr(a) for a in args)})"
        lines.append(f"  {i + 1}. at {scale.at(now)}: schedule {call} at {scale.at(at)}")
        with contextlib.suppress(PastTimeError):
            s.schedule(teach_task, at=at, args=args, label=label)
    frame = _done(s)
    requests = _requests_of(frame)
    steps = tuple(
        Step(
            f"request {i + 1}",
            row_int(r["case"]),
            _case_words(row_int(r["case"])),
            describe_row(r, scale),
            row_int(r["seq"]),
            _tree_why(row_int(r["case"]) or 0, r, scale),
        )
        for i, r in enumerate(requests)
    )
    return Exercise(
        "decision-tree",
        seed,
        "The case of each request",
        "A scheduler on a virtual clock starts empty. These calls are made, in order\n"
        "(each task returns at once; a call repeating an earlier one exactly is the same\n"
        "request again):\n" + "\n".join(lines) + "\n"
        "Which case of the 8-case decision tree is each request?",
        [s.value for s in steps],
        "a list of case numbers 1-8, one per request, e.g. [2, 4, 6] or '2, 4, 6'",
        (steps,),
        ("",),
        (
            "Walk the tree for each request: past? empty? earlier than the head? same time "
            "as the head? then duplicate?",
            "Keep a list of the pending time points as you go; a task that ran is no longer "
            "pending.",
            f"The first request is case {steps[0].value}." if steps else "",
        ),
        frame,
        _one(parse_cases),
        _tree,
        _case_words,
        "case",
    )


# -- 2. the firing order of a mixed queue --------------------------------------------------------
@_kind("firing-order", "the order and times in which a small mixed queue fires")
def _firing_order(rng: random.Random, seed: int) -> Exercise:
    clock = VirtualClock()
    s = Scheduler(clock, executor="inline")
    scale = s.time_scale
    end = 4.0
    lines = []
    ids = {}
    times = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
    for label in ("a", "b", "c", "d"):
        at = rng.choice(times)
        ids[label] = s.schedule(teach_task, at=at, args=(label,), label=label)
        lines.append(f"  schedule {label} at {scale.at(at)}")
    period = rng.choice((0.75, 1.0, 1.25))
    s.schedule(teach_task, period=period, args=("tick",), label="tick")
    lines.append(f"  schedule tick every {fmt_duration(period)} (first run one period from now)")
    gone = rng.choice(("a", "b", "c", "d"))
    s.cancel(ids[gone])
    lines.append(f"  cancel {gone}")
    clock.run_until(end)
    frame = _done(s)
    runs = frame[(frame["kind"] == Kind.DISPATCH.value) & (frame["t"] <= end)]
    steps = tuple(
        Step(
            f"run {i + 1}",
            (row_text(r["label"]), round(row_float(r["t"]), 6)),
            f"{row_text(r['label'])!r} at {scale.at(r['t'])}",
            describe_row(r, scale),
            row_int(r["seq"]),
        )
        for i, r in enumerate(runs.to_dict("records"))
    )
    return Exercise(
        "firing-order",
        seed,
        "The firing order of a mixed queue",
        "A scheduler on a virtual clock, at t = 0.000 s (runs take no time):\n"
        + "\n".join(lines)
        + f"\nThe clock runs to {scale.at(end)}. Which runs happen, in which order, and when?",
        [list(s.value) for s in steps],
        "a list of (label, time) pairs in firing order, e.g. [['a', 0.5], ['tick', 1.0]] "
        "or 'a@0.5, tick@1'",
        (steps,),
        ("",),
        (
            "Tasks due at the same time fire in the order they were scheduled.",
            "A cancelled task never fires; a periodic task fires again one period after each "
            "due time.",
            f"There are {len(steps)} runs up to {scale.at(end)}.",
        ),
        frame,
        _one(parse_labelled_times),
        _timeline,
        noun="run",
    )


# -- 3. a misfire policy after a pause ---------------------------------------------------------
@_kind("misfire", "which runs of a periodic task happen after a long run blocks it (a policy)")
def _misfire(rng: random.Random, seed: int) -> Exercise:
    policy = rng.choice(("skip", "run_once", "catch_up"))
    clock = VirtualClock()
    s = Scheduler(clock, executor="inline", misfire=policy)
    scale = s.time_scale
    end = 7.0
    hog_at = rng.choice((1.5, 2.5))
    takes = rng.choice((2.2, 2.6, 3.4, 3.8))
    s.schedule(teach_task, period=1.0, args=("tick",), label="tick")
    s.schedule(lambda: clock.elapse(takes), at=hog_at, label="hog")
    clock.run_until(end)
    frame = _done(s)
    runs = frame[
        (frame["kind"] == Kind.DISPATCH.value) & (frame["label"] == "tick") & (frame["t"] <= end)
    ]
    missed = frame[frame["kind"] == Kind.MISSED.value].to_dict("records")
    missed_words = " ".join(describe_row(r, scale) + "." for r in missed)

    def why(_given: Any) -> str:
        return f"Runs missed while hog ran: {missed_words}" if missed_words else ""

    steps = tuple(
        Step(
            f"run {i + 1} of tick",
            round(row_float(r["t"]), 6),
            f"{scale.at(r['t'])} (the run due {scale.at(r['due'])})",
            describe_row(r, scale),
            row_int(r["seq"]),
            why,
        )
        for i, r in enumerate(runs.to_dict("records"))
    )
    return Exercise(
        "misfire",
        seed,
        f"Misfire policy {policy!r} after a pause",
        f"A scheduler on a virtual clock, one worker (inline), misfire policy {policy!r}:\n"
        f"  schedule tick every 1.000 s (first run at t = 1.000 s; it takes no time)\n"
        f"  schedule hog at {scale.at(hog_at)}; hog takes {fmt_duration(takes)} and blocks "
        f"the worker\nThe clock runs to {scale.at(end)}. Which runs of tick happen? "
        "Give the time each run starts.",
        [s.value for s in steps],
        "a list of start times in seconds, one per run of tick, e.g. [1, 4.5, 5]",
        (steps,),
        ("",),
        (
            "While hog runs, nothing else can: every tick due then is late.",
            {
                "skip": "'skip' runs the late run once and drops the runs missed meanwhile.",
                "run_once": "'run_once' runs once for all the missed runs, then goes on.",
                "catch_up": "'catch_up' runs every missed run, one after another, at once.",
            }[policy],
            f"tick runs {len(steps)} times up to {scale.at(end)}.",
        ),
        frame,
        _one(parse_times),
        _timeline,
        noun="run",
    )


# -- 4. fixed rate and fixed delay -------------------------------------------------------------
@_kind("periodic", "a periodic task's runs over a window: fixed rate against fixed delay")
def _periodic(rng: random.Random, seed: int) -> Exercise:
    period = rng.choice((1.0, 1.5, 2.0))
    takes = round(period * rng.choice((0.2, 0.3, 0.4, 0.5)), 3)
    end = rng.choice((5.0, 6.0, 7.0))
    parts = ("fixed rate", "fixed delay")
    all_steps, frames = [], []
    for fixed_delay in (False, True):
        clock = VirtualClock()
        s = Scheduler(clock, executor="inline")
        scale = s.time_scale

        def work(clock: VirtualClock = clock) -> None:
            clock.elapse(takes)

        s.schedule(work, period=period, fixed_delay=fixed_delay, label="job")
        clock.run_until(end)
        frame = _done(s)
        frames.append(frame)
        runs = frame[(frame["kind"] == Kind.DISPATCH.value) & (frame["t"] <= end)]
        all_steps.append(
            tuple(
                Step(
                    f"run {i + 1}",
                    round(row_float(r["t"]), 6),
                    scale.at(r["t"]),
                    describe_row(r, scale),
                    row_int(r["seq"]),
                )
                for i, r in enumerate(runs.to_dict("records"))
            )
        )
    scale = TimeScale(0.0)
    answer = {p: [s.value for s in steps] for p, steps in zip(parts, all_steps, strict=True)}
    import pandas as pd

    return Exercise(
        "periodic",
        seed,
        "Fixed rate or fixed delay",
        f"A task runs every {fmt_duration(period)}; each run takes {fmt_duration(takes)}.\n"
        f"  fixed rate:  schedule(job, period={period:g})\n"
        f"  fixed delay: schedule(job, period={period:g}, fixed_delay=True)\n"
        f"Each on its own scheduler (virtual clock, from {scale.at(0.0)} to {scale.at(end)}).\n"
        "When does each run start?",
        answer,
        "a dict of start times per part, e.g. {'fixed rate': [1, 2], 'fixed delay': [1, 2.3]} "
        "or 'fixed rate: 1 2 | fixed delay: 1 2.3'",
        tuple(all_steps),
        parts,
        (
            "The first run is one period from the start in both.",
            "Fixed rate: the next due time is the previous due time plus the period. Fixed "
            "delay: the end of the run plus the period.",
            f"Fixed delay drifts by {fmt_duration(takes)} a run.",
        ),
        pd.concat(frames, keys=parts, names=["design"]).reset_index(level=0),
        lambda value: parse_parts(value, parts, parse_times),
        _timelines,
        noun="run",
    )


# -- 5. a queue design on insert and cancel ----------------------------------------------------
@_kind("queue-design", "where a heap or a timing wheel keeps tasks after inserts and a cancel")
def _queue_design(rng: random.Random, seed: int) -> Exercise:
    design = rng.choice(("heap", "wheel"))
    options = {"slots": 8, "tick": 0.5} if design == "wheel" else None
    clock = VirtualClock()
    s = Scheduler(clock, queue=design, queue_options=options)
    scale = s.time_scale
    labels = ["a", "b", "c", "d", "e", "f"]
    times = rng.sample([0.5, 1.0, 1.25, 2.0, 2.5, 3.0, 3.75, 4.5, 5.0, 6.5, 7.0], k=6)
    ids: dict[int, str] = {}
    lines = []
    for label, at in zip(labels, times, strict=True):
        ids[s.schedule(teach_task, at=at, args=(label,), label=label)] = label
        lines.append(f"  insert {label} due {scale.at(at)}")
    gone = rng.choice(labels[:3])
    s.cancel(next(i for i, v in ids.items() if v == gone))
    lines.append(f"  cancel {gone}")
    picture = s.snapshot().picture
    frame = _done(s)
    rows = {
        row_int(r["task_id"]): r for r in frame.to_dict("records") if r["kind"] == Kind.SCHEDULE
    }
    if design == "heap":
        steps = tuple(
            Step(
                f"heap position {i}",
                ids[task_id],
                repr(ids[task_id]),
                describe_row(rows[task_id], scale),
                row_int(rows[task_id]["seq"]),
            )
            for i, (task_id, _due) in enumerate(picture["heap"])
        )
        question = (
            "The queue is a binary heap (an array; a parent is due no later than its "
            "children; a cancel moves the last entry into the hole and sifts it).\n"
            "After these operations, which task is at each position of the array, from 0?"
        )
        form = "a list of labels in array order, e.g. ['b', 'a', 'c'] or 'b a c'"
        hints = (
            "Insert: append at the end, then swap with the parent while it is due earlier.",
            "Parent of position i is (i - 1) // 2.",
            f"Position 0 holds {steps[0].value!r}, the earliest task.",
        )
        parse: Callable[[Any], list[list[Any]]] = _one(parse_labels)
        answer: Any = [st.value for st in steps]
    else:
        where = {
            task_id: slot
            for slot, bucket in enumerate(picture["buckets"])
            for task_id, _rounds in bucket
        }
        kept = [i for i in ids if i in where]
        steps = tuple(
            Step(
                f"task {ids[i]!r}",
                where[i],
                f"slot {where[i]}",
                describe_row(rows[i], scale),
                row_int(rows[i]["seq"]),
            )
            for i in kept
        )
        question = (
            "The queue is a timing wheel of 8 slots, each 0.5 s wide (a due time goes to its "
            "tick's slot, modulo 8; a task more than a turn away waits its rounds there).\n"
            "After these operations, in which slot (0-7) is each task still pending, in the "
            "order a, b, c, ... (leave out the cancelled one)?"
        )
        form = "a list of slot numbers, one per pending task in label order, e.g. [2, 4, 0]"
        hints = (
            "A task's tick is its due time divided by the tick width (0.5 s), rounded up.",
            "The slot is the tick modulo the number of slots (8).",
            f"Task {ids[kept[0]]!r} is in slot {steps[0].value}.",
        )
        parse = _one(lambda v: [int(c) for c in parse_times(v)] if _whole(v) else _no_slots(v))
        answer = [st.value for st in steps]
    return Exercise(
        "queue-design",
        seed,
        f"A {design} on insert and cancel",
        question + "\n" + "\n".join(lines),
        answer,
        form,
        (steps,),
        ("",),
        hints,
        frame,
        parse,
        None,
        noun="position" if design == "heap" else "slot",
    )


def _whole(value: Any) -> bool:
    return all(float(t) == int(t) for t in parse_times(value))


def _no_slots(value: Any) -> list[int]:
    raise AnswerError(f"{shown(value)} holds a number that is no slot: expected whole numbers")


# -- 6. lateness from a run --------------------------------------------------------------------
@_kind("lateness", "how late each run starts when runs take time on one worker")
def _lateness(rng: random.Random, seed: int) -> Exercise:
    clock = VirtualClock()
    s = Scheduler(clock, executor="inline")
    scale = s.time_scale
    lines = []
    at = 1.0
    for label in ("a", "b", "c", "d", "e"):
        takes = rng.choice((0.2, 0.5, 0.8, 1.2))

        def work(takes: float = takes) -> None:
            clock.elapse(takes)

        s.schedule(work, at=at, label=label)
        lines.append(f"  {label}: due {scale.at(at)}, takes {fmt_duration(takes)}")
        at = round(at + rng.choice((0.25, 0.5, 1.0)), 3)
    clock.run_until_idle()
    frame = _done(s)
    runs = frame[frame["kind"] == Kind.DISPATCH.value]
    steps = tuple(
        Step(
            f"run of {row_text(r['label'])}",
            round(row_float(r["lateness"]), 6),
            fmt_duration(row_float(r["lateness"])) or "0 s",
            describe_row(r, scale),
            row_int(r["seq"]),
        )
        for r in runs.to_dict("records")
    )
    return Exercise(
        "lateness",
        seed,
        "Reading lateness from a run",
        "One worker (inline executor): a run blocks the next. Five tasks:\n"
        + "\n".join(lines)
        + "\nHow late does each run start (start minus due), in seconds, in order a to e?",
        [s.value for s in steps],
        "a list of lateness in seconds, one per run, e.g. [0, 0.3, 0.1]",
        (steps,),
        ("",),
        (
            "A run starts at its due time or when the run before it ends, whichever is later.",
            "Lateness is start minus due; a run never starts early.",
            f"The first run is {steps[0].shown} late." if steps else "",
        ),
        frame,
        _one(parse_times),
        _timeline,
        _seconds,
        noun="run",
    )


def _seconds(value: Any) -> str:
    return f"{value:g} s" if isinstance(value, (int, float)) else shown(value)


# -- 7. a lab question, answered by running it ---------------------------------------------------
_LAB_PAIRS = (
    ({"executor": "inline"}, {"executor": "pool", "max_workers": 2}, "inline", "pool of 2"),
    ({"queue": "heap"}, {"queue": "wheel(tick=0.05)"}, "heap", "wheel (50 ms ticks)"),
)


@_kind("lab-question", "which of two set-ups has the smaller mean lateness, answered by running it")
def _lab_question(rng: random.Random, seed: int) -> Exercise:
    from ..lab import exponential, poisson, simulate

    first, second, a, b = rng.choice(_LAB_PAIRS)
    rate = rng.choice((60, 90, 120))
    mean = rng.choice((0.004, 0.008, 0.012))
    work_seed = rng.randint(0, 10_000)
    load = poisson(rate=rate, horizon=0.5, seed=work_seed, duration=exponential(mean))
    results = {}
    frames = []
    for name, params in ((a, first), (b, second)):
        sim = simulate(load, **params)
        results[name] = float(sim.metrics()["lateness_mean"])
        frames.append(sim.frame)
    best = min(results, key=lambda n: (results[n], n))
    words = ", ".join(f"{n}: mean lateness {fmt_duration(v) or '0 s'}" for n, v in results.items())
    step = Step(
        "the faster set-up",
        best,
        repr(best),
        f"running both gave {words}",
        None,
    )
    import pandas as pd

    return Exercise(
        "lab-question",
        seed,
        "A lab question",
        f"A Poisson load of {rate} requests a second for 0.5 s (workload seed {work_seed}); "
        f"runs take {fmt_duration(mean)} on average (exponential).\n"
        f"Set-up A: {a}. Set-up B: {b}.\n"
        f"Which set-up gives the smaller mean lateness? Answer {a!r} or {b!r}.",
        best,
        f"the name of one set-up: {a!r} or {b!r}",
        ((step,),),
        ("",),
        (
            "Lateness grows when runs wait for a busy worker, or for a coarse tick.",
            f"Load: {rate} × {fmt_duration(mean)} = {rate * mean:.2f} s of work a second.",
            "Run it: tempsched_lab.lab.simulate(workload, **set_up).metrics()['lateness_mean'].",
        ),
        pd.concat(frames, keys=[a, b], names=["design"]).reset_index(level=0),
        _one(lambda v: [_choice(v, (a, b))]),
        noun="answer",
    )


def _choice(value: Any, names: Sequence[str]) -> str:
    text = parse_label(value)
    low = {n.lower(): n for n in names}
    letters = {"a": names[0], "b": names[1]}
    key = text.lower()
    found = low.get(key) or letters.get(key) or next((n for n in names if key in n.lower()), None)
    if found is None:
        raise AnswerError(f"{text!r} is none of the set-ups")
    return found


# -- 8. a real night ---------------------------------------------------------------------------
@_kind("real-night", "which case was one request of a recorded night (a window of its log)")
def _real_night(rng: random.Random, seed: int) -> Exercise:
    return _night(_simulated_night(), rng, seed, None, None)


def _simulated_night() -> pd.DataFrame:
    """A quiet service's night on a virtual clock: requests and periodic jobs for 300 s."""
    night = random.Random("real-night:the night")
    clock = VirtualClock()
    s = Scheduler(clock, executor="inline")
    s.schedule(teach_task, period=60.0, args=("backup",), label="backup")
    s.schedule(teach_task, period=45.0, args=("sync",), label="sync")
    t = 0.0
    made: list[tuple[float, tuple[str, ...], str]] = []
    while t < 300.0:
        t += night.choice((3.0, 7.0, 11.0, 17.0))
        clock.run_until(t)
        pick = night.random()
        if made and pick < 0.2:
            at, args, label = night.choice(made)
        else:
            label = night.choice(("email", "report", "cleanup", "ping"))
            at = t + night.choice((5.0, 10.0, 30.0, 60.0, 90.0)) if pick > 0.3 else t - 1.0
            if night.random() < 0.25 and made:
                at = max(made[-1][0], t + 1.0)
            args = (f"{label}-{len(made)}",)
        made.append((at, args, label))
        with contextlib.suppress(PastTimeError):
            s.schedule(teach_task, at=at, args=args, label=label)
    return _done(s)


def night_exercise(
    source: str | os.PathLike[str] | pd.DataFrame,
    *,
    seed: int = 0,
    start: float | None = None,
    end: float | None = None,
) -> Exercise:
    """An exercise made from a recorded log: "here is a window of it; which case was this request?"

    ``source`` is a spill directory of a served scheduler (or any log file
    :func:`~tempsched_lab.read_log` reads, or a log frame); ``start`` and ``end``
    (seconds since the log's start) bound where the request is picked; ``seed``
    picks it. The answer is the case of the request's row.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> _ = [s.schedule(print, at=t) for t in (3.0, 1.0, 3.0, 2.0)]
    >>> ex = night_exercise(s.log.to_frame(), seed=1)
    >>> ex.check(ex.answer).correct
    True
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed={seed!r}: expected a whole number, 0 or more")
    if isinstance(source, (str, os.PathLike)):
        from ..log.eventlog import read_log

        frame = read_log(source)
    else:
        frame = source
    return _night(frame, random.Random(f"real-night:{seed}"), seed, start, end)


def _night(
    frame: pd.DataFrame, rng: random.Random, seed: int, start: float | None, end: float | None
) -> Exercise:
    scale = time_scale_of(frame)
    origin = scale.origin
    requests = [r for r in _requests_of(frame) if row_int(r["case"])]
    if start is not None:
        requests = [r for r in requests if row_float(r["t"]) - origin >= start]
    if end is not None:
        requests = [r for r in requests if row_float(r["t"]) - origin <= end]
    if not requests:
        raise ValueError(
            f"start={start!r}, end={end!r}: the log has no request with a case in that window"
        )
    # the middle of the night is more interesting than its first request
    chosen = rng.choice(requests[1:] if len(requests) > 1 else requests)
    seq = row_int(chosen["seq"]) or 0
    rows: list[dict[str, Any]] = frame[  # type: ignore[assignment]
        (frame["seq"] < seq) & (frame["seq"] >= seq - 12)
    ].to_dict("records")
    shown_rows = [f"  {scale.text(r['t']):>10}  {_without_case(r, scale)}" for r in rows]
    from ..reading.replay import replay

    before = replay(frame, seq - 1) if seq > int(frame["seq"].min()) else None
    points = [] if before is None else [scale.at(t) for t, _ in before.points]
    pending = (
        "nothing" if not points else ", ".join(points[:8]) + (" ..." if len(points) > 8 else "")
    )
    case = row_int(chosen["case"]) or 0
    label = row_text(chosen["label"])
    when, last = scale.text(rows[0]["t"] if rows else chosen["t"]), scale.text(chosen["t"])
    step = Step(
        f"the request at {scale.at(chosen['t'])} (row {seq})",
        case,
        _case_words(case),
        describe_row(chosen, scale),
        seq,
        _tree_why(case, chosen, scale),
    )
    return Exercise(
        "real-night",
        seed,
        "A real night: which case was it?",
        f"Here is what the service did between {when} and {last} (its last rows before the "
        "request, cases hidden):\n"
        + "\n".join(shown_rows)
        + f"\nThe time points pending just before: {pending}.\n"
        f"Then, at {scale.at(chosen['t'])}, a request: schedule {label or 'a task'} due "
        f"{scale.at(chosen['due'])}. Which case was it?",
        case,
        "one case number 1-8, e.g. 4",
        ((step,),),
        ("",),
        (
            "Compare the request's due time with the head (the earliest pending time point).",
            "A repeat of a pending request, same time, action and arguments, is a duplicate.",
            f"The head just before was {points[0] if points else 'nothing (empty)'}.",
        ),
        frame,
        _one(parse_case),
        _tree,
        _case_words,
        "case",
    )


def _without_case(row: dict[str, Any], scale: TimeScale) -> str:
    label = row_text(row["label"])
    if row_text(row["kind"]) in (Kind.SCHEDULE.value, Kind.REJECT.value):
        return f"{label}: a request, due {scale.at(row['due'])}"
    return f"{label}: {describe_row(row, scale)}"
