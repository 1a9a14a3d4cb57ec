"""Teaching mode: predict the case of a request, then see the scheduler decide it.

:class:`PredictPanel` shows the next ``schedule`` request *before* it is made.
The student picks the case (1-8) they expect; the request is then made on the
real scheduler, and the panel says right or wrong, walks the tree's questions
with the real answers, and gives the case's explanation. A dashboard's tree
panel highlights the real path in the same frame. A score counts the session.

Requests are crafted from the queue as it is (:func:`craft_request`): each
round picks, at random among the cases the queue makes possible, a request that
lands in that case, so every case comes up, including the duplicates (they
repeat a request this panel made earlier, since only those are known exactly).

>>> from tempsched_lab import Scheduler, VirtualClock
>>> s = Scheduler(VirtualClock())
>>> panel = PredictPanel(s, seed=0)
>>> panel.pending.intended  # an empty queue: case 1 (in the past) or case 2
2
>>> panel.guess(2).case, panel.score
(<Case.EMPTY: 2>, (1, 1))
>>> panel.close()
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from ..core.decision import TREE, Case, Decision
from ..core.scheduler import PastTimeError, SchedulerClosedError
from ..plots.colors import case_color, text_color_on
from ._base import Panel, Part, esc, stamp
from .controls import demo_task
from .panels import register_panel

if TYPE_CHECKING:
    from ..core.queues import QueueState
    from ..core.scheduler import Scheduler
    from ..time.scale import TimeScale
    from .scene import LogSource, Scene

__all__ = ["PredictPanel", "Request", "craft_request", "path_text"]

_QUESTIONS = {q.key: q.text for q in TREE}
_WORDS = ("apple", "birch", "cedar", "delta", "ember", "fjord", "grove", "heron", "iris")


@dataclass(frozen=True)
class Request:
    """A ``schedule(demo_task, at=..., args=..., label=...)`` call not made yet."""

    at: float
    args: tuple[Any, ...]
    label: str
    #: the case this request was crafted to land in (the panel does not show it)
    intended: int

    def text(self, scale: TimeScale) -> str:
        """The call in words, times in the scheduler's time language."""
        args = ", ".join(repr(a) for a in self.args)
        return f"schedule {self.label}({args}) at {scale.at(self.at)}"


def craft_request(
    state: QueueState,
    now: float,
    known: dict[int, Request],
    rng: random.Random,
    serial: int,
) -> Request:
    """A request that lands in a case chosen at random among those the queue allows.

    ``known`` maps pending task IDs to the requests that made them (only those
    can be repeated exactly: cases 5 and 7); ``serial`` makes fresh arguments.

    >>> from tempsched_lab.core.queues import QueueState
    >>> empty = QueueState(head_time=None, head=(), points=())
    >>> craft_request(empty, 0.0, {}, random.Random(0), 1).intended in (1, 2)
    True
    """
    word = _WORDS[serial % len(_WORDS)]
    fresh = (f"{word}-{serial}",)
    options: list[Request] = [Request(math.floor(now) - 1.0, fresh, word, int(Case.PAST))]
    points = list(state.points)
    if not points:
        options.append(Request(now + 1.0 + rng.randint(0, 3), fresh, word, int(Case.EMPTY)))
        return rng.choice(options)
    head_time, head_ids = points[0]
    if head_time - now > 0.2:
        at = round(now + (head_time - now) / 2, 3)
        if at > now:
            options.append(Request(at, fresh, word, int(Case.EARLIER_THAN_HEAD)))
    last = points[-1][0]
    options.append(Request(math.floor(last) + 1.0 + rng.randint(0, 2), fresh, word, 4))
    options.append(Request(head_time, fresh, word, int(Case.JOINS_HEAD)))
    head_known = [known[i] for i in head_ids if i in known]
    if head_known:
        r = rng.choice(head_known)
        options.append(Request(r.at, r.args, r.label, int(Case.DUPLICATE_OF_HEAD)))
    later = points[1:]
    if later:
        due, _ = rng.choice(later)
        options.append(Request(due, fresh, word, int(Case.JOINS_TIME_POINT)))
        later_known = [known[i] for _, ids in later for i in ids if i in known]
        if later_known:
            r = rng.choice(later_known)
            options.append(Request(r.at, r.args, r.label, int(Case.DUPLICATE_IN_QUEUE)))
    return rng.choice(options)


def path_text(case: Case) -> str:
    """The tree's questions on the way to ``case``, with the answers.

    >>> path_text(Case.JOINS_HEAD)
    'Is the time in the past? no → Is the queue empty? no → Earlier than the head? no → Same time as the head? yes → Duplicate of a head task? no → case 6'
    """  # noqa: E501
    steps = [f"{_QUESTIONS[key]} {'yes' if answer else 'no'}" for key, answer in case.path]
    return " → ".join([*steps, f"case {int(case)}"])


@register_panel(order=40, width=480, default=False, teaching=True)
class PredictPanel(Panel):
    """Predict-then-reveal: pick the case of the next request, then see it decided.

    Args:
        scheduler: the scheduler the requests are made on.
        source: a shared :class:`~tempsched_lab.widgets.scene.LogSource`.
        scale: (default: the session's, see ``tempsched_lab.set_scale``)
            the type scale, ``"default"`` (text of 12 px and up) or ``"projector"``
            (16 px and up); :meth:`set_scale` switches it.
        seed: seed of the random choice of cases (the same lesson twice).

    After :meth:`guess` (a click on a case button), :attr:`last` holds the
    real decision and :attr:`score` is ``(right, asked)``. **next request**
    crafts the next one from the queue as it is then.
    """

    name = "predict"

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        source: LogSource | None = None,
        scale: str | None = None,
        seed: int | None = 0,
    ) -> None:
        super().__init__(scheduler, source=source, scale=scale)
        self.rng = random.Random(seed)
        self.known: dict[int, Request] = {}
        self.serial = 0
        self.right = 0
        self.asked = 0
        self.pending: Request | None = None
        self.last: Decision | None = None
        self.last_guess: int | None = None
        self.history: list[tuple[int, int]] = []
        self._body = ""
        #: the verdict of the last guess, and the log row count it needs: it is published in
        #: the frame that shows the decision's rows (with the tree), never before
        self._verdict = _PICK
        self._reveal_at = 0
        self.request: W.HTML = self._own(W.HTML(), "tsl-predict-request")
        self.buttons: dict[int, W.Button] = {}
        for case in Case:
            color = case_color(case)
            button = W.Button(
                description=f"{int(case)} {case.short}",
                tooltip=case.explanation,
                layout=W.Layout(width="auto"),
                style={"button_color": color, "text_color": text_color_on(color)},
            )
            button.on_click(lambda _b, c=int(case): self.guess(c))
            self.buttons[int(case)] = self._own(button, f"tsl-guess-{int(case)}", "tsl-guess")
        self.next_button: W.Button = self._own(
            W.Button(description="next request", button_style="primary"), "tsl-predict-next"
        )
        self.next_button.on_click(lambda _b: self.new_request())
        self.result: W.HTML = self._own(
            W.HTML(_PICK, layout=W.Layout(max_width="720px")), "tsl-predict-result"
        )
        self.score_text: W.HTML = self._own(W.HTML(), "tsl-predict-score")
        grid = self._own(W.HBox(list(self.buttons.values()), layout=W.Layout(flex_flow="row wrap")))
        self.widget = self._box(
            [
                self.request,
                grid,
                self._own(W.HBox([self.next_button, self.score_text])),
                self.result,
            ],
            "Predict the case",
        )
        self.new_request()

    @property
    def score(self) -> tuple[int, int]:
        """``(right, asked)`` over this session."""
        return self.right, self.asked

    # -- the round ---------------------------------------------------------------------------
    def new_request(self) -> Request:
        """Craft the next request from the queue as it is now, and show it (not made yet)."""
        with self._lock:
            state = self.scheduler.snapshot().state
            self.known = {i: r for i, r in self.known.items() if i in _pending(state)}
            self.serial += 1
            now = self.scheduler.clock.now()
            self.pending = craft_request(state, now, self.known, self.rng, self.serial)
            self._show_request()
            self._verdict = self.result.value = _PICK
            for button in self.buttons.values():
                button.disabled = False
        return self.pending

    def guess(self, case: int) -> Decision:
        """Predict ``case`` for the pending request, make the request, reveal the decision."""
        if isinstance(case, bool) or not isinstance(case, int) or not 1 <= case <= 8:
            raise ValueError(f"case={case!r}: expected a decision case 1-8")
        with self._lock:
            request = self.pending
            if request is None:
                request = self.new_request()
            try:
                decision = self.scheduler.schedule_decision(
                    demo_task, at=request.at, args=request.args, label=request.label
                )
            except PastTimeError as exc:
                decision = exc.decision
            except SchedulerClosedError as exc:
                self.result.value = f"<b>the scheduler is shut down</b>: {esc(exc)}"
                raise
            actual = int(decision.case)
            if decision.task_id is not None and decision.duplicate_of is None:
                self.known[decision.task_id] = request
            self.asked += 1
            self.right += int(actual == case)
            self.history.append((case, actual))
            self.last, self.last_guess, self.pending = decision, case, None
            # the verdict, the score and the request line wait for the frame that shows the
            # decision (a dashboard's next round draws the tree and the history with them)
            self._reveal_at = self.scheduler.log.next_seq
            self._verdict = self._reveal(case, decision, self._reveal_at)
            self._body = self._request_html(request, made=True)
            for button in self.buttons.values():
                button.disabled = True
        self._changed()
        return decision

    # -- display -----------------------------------------------------------------------------
    def _show_request(self) -> None:
        if self.pending is not None:
            self._body = self._request_html(self.pending, made=False)
            self.request.value = self._body
        self.score_text.value = self._score_html()

    def _request_html(self, request: Request, *, made: bool) -> str:
        scale = self.scheduler.time_scale
        now = scale.at(self.scheduler.clock.now())
        state = "made" if made else "about to be made"
        return (
            "<div class='tsl-predict-call' style='font-size:13px;line-height:1.5'>"
            f"Now {esc(now)}. The next request, {state}:<br><code style='font-size:13px'>"
            f"{esc(request.text(scale))}</code> (a new task unless it repeats one exactly)."
            "</div>"
        )

    def _score_html(self) -> str:
        return (
            f"<span class='tsl-score' data-right='{self.right}' data-asked='{self.asked}' "
            f"style='margin-left:8px;font-size:13px'>score: <b>{self.right}</b> right of "
            f"{self.asked}</span>"
        )

    def _reveal(self, guess: int, decision: Decision, after: int) -> str:
        case = decision.case
        ok = guess == int(case)
        verdict = (
            "<b style='color:var(--tsl-ok)'>Right!</b>"
            if ok
            else f"<b style='color:var(--tsl-fail)'>Not quite</b>: you said case {guess} "
            f"({esc(Case(guess).short)})."
        )
        what = decision_words(decision)
        return (
            f"<div class='tsl-predict-verdict' data-right='{int(ok)}' data-case='{int(case)}' "
            f"data-after='{after}' "
            "style='line-height:1.45'>"
            f"{verdict} It was <b>case {int(case)}, {esc(case.short)}</b>: {esc(what)}<br>"
            f"<span style='color:var(--tsl-muted)'>{esc(path_text(case))}</span><br>"
            f"{esc(case.explanation)}"
            "</div>"
        )

    def _revealed(self, scene: Scene) -> bool:
        return scene.seq >= self._reveal_at or not scene.logging

    def render(self, scene: Scene) -> None:
        """The request line with the moment's stamp; the verdict once ``scene`` shows its rows."""
        if not self._revealed(scene):
            return  # the guess's rows are not in this moment yet: show nothing of it
        self.put(self.request, value=stamp(scene, self.name) + self._body)
        self.put(self.score_text, value=self._score_html())
        self.put(self.result, value=self._verdict)  # last: the verdict comes with all the rest

    def _key(self, scene: Scene) -> Hashable:
        revealed = self._revealed(scene)
        return (scene.seq, scene.scale.style, self._body if revealed else None, revealed)

    def _make_parts(self) -> list[Part]:
        return [Part("predict", self.render, self._key)]


_PICK = "<i>pick the case you expect</i>"


def decision_words(decision: Decision) -> str:
    """What the scheduler did with a request, in a few words."""
    if decision.case is Case.PAST:
        return "the request was rejected, nothing stored."
    if decision.duplicate_of is not None:
        return f"nothing added; the existing task #{decision.duplicate_of} was returned."
    return f"task #{decision.task_id} was queued."


def _pending(state: QueueState) -> set[int]:
    return {i for _, ids in state.points for i in ids}
