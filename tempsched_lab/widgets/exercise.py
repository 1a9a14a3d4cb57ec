"""One exercise in a notebook: predict, check, then reveal what the scheduler did beside it.

:class:`ExerciseWidget` shows an exercise of :mod:`tempsched_lab.teach`: its
problem, a box for the answer (Enter checks it), **hint**, and **reveal**, which
is offered only after a first answer (predict before reveal). The reveal shows,
step by step, what happened (the log panel's sentence for each row) with the
student's answer beside it, and the picture of the run (its timeline or the
decision tree). A score counts the session: an exercise counts as right when
its first answer was. **next** poses the same kind with the next seed; the kind
and the seed can be chosen, so "exercise decision-tree, seed 12" is two clicks.

Keyboard: the answer box, **check**, **hint**, **reveal** and **next** follow in
the page's tab order; Enter in the box checks. ``scale="projector"`` (or the
page's **projector** toggle) sets every text of the widget at 16 px or more.

>>> w = ExerciseWidget("lateness", seed=2)
>>> w.submit("0, 0, 0, 0, 0").correct, w.score
(False, (0, 1))
>>> w.reveal_button.disabled
False
>>> w.close()
"""

from __future__ import annotations

import io
from typing import Any

import ipywidgets as W

from ..teach import CheckResult, Exercise, catalog, exercise
from ..teach.answers import AnswerError
from ._base import esc
from ._style import (
    MIN_PX,
    ZOOM,
    check_scale,
    off_page,
    on_page,
    projector_toggle,
    resolve_scale,
    show_scale,
    type_css,
)

__all__ = ["ExerciseWidget"]

#: Dots per inch of the reveal's picture at the default type scale.
_DPI = 80


class ExerciseWidget:
    """Predict, check, reveal: one exercise at a time, with a score for the session.

    Args:
        name: the kind of exercise (see :func:`tempsched_lab.teach.catalog`), or an
            :class:`~tempsched_lab.teach.Exercise` already posed.
        seed: the exercise's seed.
        scale: ``"default"`` (text of 12 px and up) or ``"projector"`` (16 px and up);
            default: the session's (``tempsched_lab.set_scale``).
        picture: draw the run's picture in the reveal.

    :meth:`submit` checks an answer as the box does; :attr:`score` is
    ``(right, asked)``; :attr:`results` the results of this exercise's answers.
    """

    def __init__(
        self,
        name: str | Exercise = "decision-tree",
        seed: int = 0,
        *,
        scale: str | None = None,
        picture: bool = True,
    ) -> None:
        self.scale = resolve_scale(scale)
        self.picture = picture
        self.closed = False
        self.right = 0
        self.asked = 0
        #: the results of the current exercise's answers, in order
        self.results: list[CheckResult] = []
        self._answers: list[str] = []
        self._counted = False
        first = name if isinstance(name, Exercise) else exercise(name, seed=seed)
        self.exercise: Exercise = first
        self.kind = W.Dropdown(
            options=list(catalog()),
            value=first.name,
            description="exercise",
            layout=W.Layout(width="auto"),
        )
        self.seed = W.BoundedIntText(
            value=first.seed, min=0, max=10**9, description="seed", layout=W.Layout(width="170px")
        )
        self.pose_button = W.Button(description="pose", tooltip="pose this exercise and seed")
        self.head = W.HTML()
        self.problem = W.HTML()
        self.answer = W.Text(
            value="",
            continuous_update=False,  # the value arrives on Enter (or on leaving the box)
            layout=W.Layout(width="100%", max_width="760px"),
        )
        self.answer.add_class("tsl-exercise-answer")
        self.check_button = W.Button(description="check", button_style="primary")
        self.hint_button = W.Button(description="hint")
        self.reveal_button = W.Button(
            description="reveal", disabled=True, tooltip="answer first: predict, then reveal"
        )
        self.next_button = W.Button(description="next", tooltip="the same kind, the next seed")
        self.result = W.HTML()
        self.hints = W.HTML()
        self.revealed = W.HTML()
        self.image = W.Image(format="png", layout=W.Layout(display="none", max_width="none"))
        self.score_text = W.HTML()
        self.projector = projector_toggle(self.scale, self.set_scale)
        for widget, cls in (
            (self.check_button, "tsl-exercise-check"),
            (self.hint_button, "tsl-exercise-hint"),
            (self.reveal_button, "tsl-exercise-reveal"),
            (self.next_button, "tsl-exercise-next"),
            (self.pose_button, "tsl-exercise-pose"),
            (self.result, "tsl-exercise-result"),
            (self.revealed, "tsl-exercise-revealed"),
            (self.score_text, "tsl-exercise-score"),
            (self.problem, "tsl-exercise-problem"),
        ):
            widget.add_class(cls)
        self.answer.observe(self._entered, names="value")
        self.check_button.on_click(lambda _b: self.submit(self.answer.value))
        self.hint_button.on_click(lambda _b: self.show_hint())
        self.reveal_button.on_click(lambda _b: self.reveal())
        self.next_button.on_click(lambda _b: self.pose(self.exercise.name, self.exercise.seed + 1))
        self.pose_button.on_click(lambda _b: self.pose(str(self.kind.value), int(self.seed.value)))
        self.widget = W.VBox(
            [
                W.HTML(type_css()),
                self.head,
                W.HBox(
                    [self.kind, self.seed, self.pose_button, self.projector],
                    layout=W.Layout(flex_flow="row wrap"),
                ),
                self.problem,
                self.answer,
                W.HBox(
                    [
                        self.check_button,
                        self.hint_button,
                        self.reveal_button,
                        self.next_button,
                        self.score_text,
                    ],
                    layout=W.Layout(flex_flow="row wrap", align_items="center"),
                ),
                self.result,
                self.hints,
                self.revealed,
                W.Box([self.image], layout=W.Layout(overflow="auto hidden", max_width="100%")),
            ],
            layout=W.Layout(padding="4px 8px", max_width="980px"),
        )
        self.widget.add_class("tsl-exercise")
        show_scale(self.widget, self.scale, self.projector)
        on_page(self)
        self._show(first)

    # -- the round ---------------------------------------------------------------------------
    @property
    def score(self) -> tuple[int, int]:
        """``(right, asked)``: exercises whose first answer was right, of those answered."""
        return self.right, self.asked

    def pose(self, name: str, seed: int) -> Exercise:
        """Pose exercise ``name`` with ``seed`` (its problem shown, nothing revealed)."""
        ex = exercise(name, seed=seed)
        self._show(ex)
        return ex

    def submit(self, answer: Any) -> CheckResult:
        """Check ``answer`` (text as typed, or a value); say right or the first wrong step."""
        result = self.exercise.check(answer)
        self.results.append(result)
        self._answers.append(answer if isinstance(answer, str) else repr(answer))
        if not result.malformed and not self._counted:
            self._counted = True
            self.asked += 1
            self.right += int(result.correct)
        if not result.malformed:
            self.reveal_button.disabled = False
            self.reveal_button.tooltip = "what the scheduler did, beside your answer"
        color = "var(--tsl-ok)" if result.correct else "var(--tsl-fail)"
        self.result.value = (
            f"<div role='status' aria-live='polite' data-correct='{int(result.correct)}' "
            f"data-malformed='{int(result.malformed)}' "
            f"style='font-size:14px;line-height:1.45;max-width:760px;color:{color}'>"
            f"{esc(result.feedback)}</div>"
        )
        self._show_score()
        return result

    def show_hint(self) -> str:
        """Show the next hint."""
        text = self.exercise.hint()
        self.hints.value = (
            f"<div class='tsl-exercise-hinted' style='font-size:14px;color:var(--tsl-muted)'>"
            f"Hint: {esc(text)}</div>"
        )
        return text

    def reveal(self) -> None:
        """Show what happened, step by step, beside the last answer (only after an answer)."""
        if not self.results or self.reveal_button.disabled:
            return
        ex = self.exercise
        given = self._given_items()
        rows = []
        for p, (part, steps) in enumerate(zip(ex.parts, ex.steps, strict=True)):
            mine = given[p] if given is not None and p < len(given) else []
            for i, step in enumerate(steps):
                said = ex.say(mine[i]) if i < len(mine) else "—"
                ok = i < len(mine) and _same(mine[i], step.value)
                mark = "✓" if ok else "✗"
                where = f"{part}: " if part else ""
                rows.append(
                    f"<tr data-ok='{int(ok)}'><td>{esc(where + step.what)}</td>"
                    f"<td>{esc(step.shown)}</td><td>{mark} {esc(said)}</td>"
                    f"<td>{esc(step.sentence)}</td></tr>"
                )
        self.revealed.value = (
            "<table class='tsl-table tsl-exercise-steps' style='font-size:13px;"
            "border-collapse:collapse'><thead><tr><th align='left'>step</th>"
            "<th align='left'>what happened</th><th align='left'>your answer</th>"
            "<th align='left'>the log says</th></tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table>"
        )
        if self.picture:
            self._draw()

    # -- display -----------------------------------------------------------------------------
    def _entered(self, change: dict[str, Any]) -> None:
        text = str(change["new"])
        if text.strip() and (not self._answers or self._answers[-1] != text):
            self.submit(text)

    def _given_items(self) -> list[list[Any]] | None:
        try:
            answer = self._answers[-1]
            return self.exercise.parse(answer)
        except (AnswerError, IndexError, TypeError, ValueError):
            return None

    def _show(self, ex: Exercise) -> None:
        self.exercise = ex
        self.results, self._answers, self._counted = [], [], False
        self.kind.value, self.seed.value = ex.name, ex.seed
        self.head.value = (
            f"<div class='tsl-title'><b style='font-size:16px'>{esc(ex.title)}</b> "
            f"<span class='tsl-exercise-share' style='font-size:13px;color:var(--tsl-muted)'>"
            f"({esc(ex.share)})</span></div>"
        )
        self.problem.value = (
            f"<pre style='font-size:13px;white-space:pre-wrap;margin:4px 0'>{esc(ex.problem)}</pre>"
        )
        self.answer.placeholder = f"your answer: {ex.answer_form}"
        self.answer.description = ""
        self.answer.value = ""
        self.result.value = ""
        self.hints.value = ""
        self.revealed.value = ""
        self.image.layout.display = "none"
        self.reveal_button.disabled = True
        self._show_score()

    def _show_score(self) -> None:
        self.score_text.value = (
            f"<span class='tsl-score' data-right='{self.right}' data-asked='{self.asked}' "
            f"style='margin-left:8px;font-size:13px'>score: <b>{self.right}</b> right of "
            f"{self.asked}</span>"
        )

    def _draw(self) -> None:
        figure = self.exercise.picture()
        if figure is None:
            self.image.layout.display = "none"
            return
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=_DPI * ZOOM[self.scale])
        self.image.value = buffer.getvalue()
        self.image.layout.display = ""

    def set_scale(self, scale: str) -> None:
        """Switch to type scale ``scale`` (``"default"``: 12 px and up; ``"projector"``:
        :data:`~tempsched_lab.widgets._style.MIN_PX` 16 px and up)."""
        self.scale = check_scale(scale)
        show_scale(self.widget, self.scale, self.projector)
        if self.image.layout.display != "none":
            self._draw()

    @property
    def min_px(self) -> int:
        """The smallest text of the current type scale, in CSS pixels."""
        return MIN_PX[self.scale]

    def close(self) -> None:
        """Close every widget of the view."""
        self.closed = True
        off_page(self)
        for child in _walk(self.widget):
            child.close()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def _same(given: Any, right: Any) -> bool:
    from ..teach.answers import same

    return same(given, right)


def _walk(widget: W.Widget) -> list[W.Widget]:
    out = [widget]
    for child in getattr(widget, "children", ()):
        out += _walk(child)
    return out
