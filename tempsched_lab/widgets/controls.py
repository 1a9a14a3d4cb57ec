"""The controls: drive a virtual clock, schedule a demo task, cancel by ID; decisions in words."""

from __future__ import annotations

import ast
import io
import math
import tokenize
import weakref
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from ..core.decision import Case, Decision
from ..core.scheduler import PastTimeError, SchedulerClosedError
from ..core.task import CancelResult
from ..time.clock import VirtualClock
from ..time.scale import TimeScale
from ._base import Panel, Part, esc, fmt_countdown, stamp
from ._style import FIELD_CLASS
from .panels import register_panel

if TYPE_CHECKING:
    from ..core.scheduler import Scheduler
    from .scene import LogSource, Scene

__all__ = [
    "MAX_ARGS_CHARS",
    "MAX_ARGS_DEPTH",
    "ControlsPanel",
    "cancel_text",
    "decision_text",
    "demo_task",
    "parse_args",
    "virtual_work",
]


_TEXT = "style='line-height:1.4'"


def demo_task(*args: Any) -> str:
    """The action of tasks scheduled from the controls: returns its arguments as text.

    >>> demo_task(1, "a")
    "(1, 'a')"
    """
    return repr(args)


_WORK: weakref.WeakKeyDictionary[VirtualClock, dict[float, Callable[..., str]]] = (
    weakref.WeakKeyDictionary()
)


def virtual_work(clock: VirtualClock, seconds: float) -> Callable[..., str]:
    """A demo action whose runs take ``seconds`` of ``clock``'s virtual time.

    The same clock and duration give the same action, so repeating a request
    from the form is still a duplicate (cases 5 and 7).

    >>> clock = VirtualClock()
    >>> work = virtual_work(clock, 0.5)
    >>> work("a"), clock.now(), work is virtual_work(clock, 0.5)
    ("('a',)", 0.5, True)
    """
    known = _WORK.setdefault(clock, {})
    work = known.get(float(seconds))
    if work is None:

        def work(*args: Any) -> str:
            clock.elapse(seconds)
            return demo_task(*args)

        work.__qualname__ = f"demo_task_{seconds:g}s"
        known[float(seconds)] = work
    return work


#: The longest text the args box takes (a literal longer than this is a mistake, not a lesson).
MAX_ARGS_CHARS = 1000
#: The deepest nesting of brackets and signs (``[[1]]``, ``--1``) the args box takes.
MAX_ARGS_DEPTH = 20


def parse_args(text: str) -> tuple[Any, ...]:
    """Positional arguments typed in the form: Python literals separated by commas.

    Text that is not a literal is taken as one string argument. Text longer
    than :data:`MAX_ARGS_CHARS` or nested deeper than :data:`MAX_ARGS_DEPTH`
    (brackets, or signs such as ``---1``) raises ``ValueError`` naming the
    argument: it is measured by a flat scan of the tokens before anything
    recursive parses it, so no input can exhaust the stack or the memory.

    >>> parse_args(""), parse_args("1, 'a'"), parse_args("hello"), parse_args("{[1]}")
    ((), (1, 'a'), ('hello',), ('{[1]}',))
    >>> parse_args("-" * 5000 + "1")
    Traceback (most recent call last):
    ...
    ValueError: args: 5001 characters; at most 1000
    """
    if not isinstance(text, str):
        raise TypeError(f"args={text!r}: expected text")
    text = text.strip()
    if not text:
        return ()
    if len(text) > MAX_ARGS_CHARS:
        raise ValueError(f"args: {len(text)} characters; at most {MAX_ARGS_CHARS}")
    depth = _nesting(text)
    if depth > MAX_ARGS_DEPTH:
        raise ValueError(f"args: nested {depth} deep (brackets or signs); at most {MAX_ARGS_DEPTH}")
    try:
        value = ast.literal_eval(f"({text},)")
    except (ValueError, SyntaxError, TypeError):  # TypeError: a set of lists, {{}}
        return (text,)
    return tuple(value)


def _nesting(text: str) -> int:
    """How deep ``text`` nests: open brackets plus a run of unary signs, found in one flat pass.

    >>> _nesting("1, [2, (3,)]"), _nesting("---1"), _nesting("1 - 2")
    (2, 3, 0)
    """
    deepest = depth = signs = 0
    previous = ""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return 0  # not Python tokens: taken as one string, nothing parses it
    for token in tokens:
        if token.type != tokenize.OP:
            if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER):
                signs = 0
                previous = token.string
            continue
        if token.string in "([{":
            depth += 1
            signs = 0
        elif token.string in ")]}":
            depth = max(0, depth - 1)
            signs = 0
        elif token.string in ("-", "+", "~") and (
            previous in ("", ",", ":", "(", "[", "{") or previous in ("-", "+", "~")
        ):
            signs += 1  # a unary sign: each one is one more level for the parser
        else:
            signs = 0
        previous = token.string
        deepest = max(deepest, depth + signs)
    return deepest


def decision_text(
    decision: Decision, now: float | None = None, scale: TimeScale | None = None
) -> str:
    """A schedule decision in words: what the scheduler did and why (the case's teaching text).

    Times are written in ``scale``'s language (default: seconds since 0).

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> print(decision_text(s.schedule_decision(print, at=1.0)))  # doctest: +ELLIPSIS
    <div class='tsl-decision-text' ...><b>Case 2, nothing scheduled:</b> task #0 is queued, due t = 1.000 s...
    """  # noqa: E501
    scale = scale if scale is not None else TimeScale(0.0)
    case = decision.case
    if case is Case.PAST:
        what = "the request is rejected"
    elif decision.duplicate_of is not None:
        what = f"nothing is added; the existing task #{decision.duplicate_of} is returned"
    else:
        what = f"task #{decision.task_id} is queued"
        if not math.isnan(decision.due):
            what += f", due {scale.at(decision.due)}"
            if now is not None:
                what += f" ({fmt_countdown(decision.due, now)})"
    head = (
        f"head before {scale.text(decision.head_before) or 'none'}, "
        f"after {scale.text(decision.head_after) or 'none'}"
    )
    woke = "; the worker was woken" if decision.woke_worker else ""
    return (
        f"<div class='tsl-decision-text' {_TEXT}><b>Case {int(case)}, {esc(case.short)}:</b> "
        f"{esc(what)}.<br>{esc(case.explanation)}<br>"
        f"<span style='color:var(--tsl-muted)'>{esc(head)}{woke}</span></div>"
    )


_CANCEL_WORDS = {
    CancelResult.CANCELLED: "was pending: it is removed from the queue and will not run.",
    CancelResult.RUNNING: (
        "is running right now: that run finishes, but a periodic task will not run again."
    ),
    CancelResult.ALREADY_DONE: "already ran, failed or was cancelled: nothing to do.",
    CancelResult.NOT_FOUND: "was never issued by this scheduler.",
}


def cancel_text(task_id: int, result: CancelResult) -> str:
    """What a cancel did, in words.

    >>> cancel_text(3, CancelResult.NOT_FOUND)
    "<div class='tsl-cancel-text' style='line-height:1.4'><b>cancel #3: not_found</b> — task #3 was never issued by this scheduler.</div>"
    """  # noqa: E501
    return (
        f"<div class='tsl-cancel-text' {_TEXT}><b>cancel #{task_id}: {result.value}</b> — "
        f"task #{task_id} {esc(_CANCEL_WORDS[result])}</div>"
    )


def _error_text(title: str, exc: BaseException) -> str:
    return (
        "<div class='tsl-error-text' style='color:var(--tsl-fail);line-height:1.4'>"
        f"<b>{esc(title)}:</b> "
        f"{esc(type(exc).__name__)}: {esc(exc)}</div>"
    )


def _after(seq: int) -> str:
    """An invisible marker: the rows of the action just taken all have ``seq`` below this."""
    return f"<span class='tsl-after' data-seq='{seq}' hidden></span>"


def parse_delay(text: str) -> float:
    """Seconds typed in the form (``"2"``, ``"2.5 s"``).

    >>> parse_delay(" 2.5 s")
    2.5
    """
    cleaned = text.strip().removesuffix("s").strip()
    try:
        return float(cleaned)
    except ValueError:
        raise ValueError(f"delay={text!r}: expected a number of seconds, e.g. 2.5") from None


@register_panel(order=10, width=440)
class ControlsPanel(Panel):
    """Buttons and a form to drive the scheduler, with each decision explained in words.

    * Under a :class:`~tempsched_lab.VirtualClock`: **step** (fire the next due
      group), **advance** by a chosen amount, **play** at a chosen rate and **pause**.
    * Under any clock: schedule a demo task (after a delay, or at a time written
      in the dashboard's time language: ``12.5`` seconds since start, or
      ``HH:MM:SS`` in wall style), with a label, arguments and an optional
      period, and cancel a task by ID.

    Choosing *at time* pre-fills the box ``at_lead`` seconds ahead, rounded up
    to a whole second, and scheduling leaves it as it is: clicking **schedule**
    twice asks for the very same time, so the second request is a duplicate
    (case 5 or 7) even on a real clock.

    The outcome of the last action is in :attr:`result` (HTML) and, for a
    schedule, in :attr:`last_decision`. Callbacks only call the scheduler and
    write this panel's result, then notify :meth:`on_change` listeners (a
    dashboard pokes its refresher, whose next round shows the effect in every
    panel from one moment).

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> clock = VirtualClock()
    >>> s = Scheduler(clock)
    >>> panel = ControlsPanel(s)
    >>> panel.label.value = "hello"
    >>> panel.schedule_button.click()
    >>> panel.last_decision.case.short
    'nothing scheduled'
    >>> panel.step_button.click()
    >>> clock.now()
    1.0
    >>> panel.close()
    """

    name = "controls"

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        source: LogSource | None = None,
        scale: str | None = None,
        at_lead: float | None = None,
        clock_every: float = 0.25,
    ) -> None:
        super().__init__(scheduler, source=source, scale=scale)
        self.clock = scheduler.clock
        self.virtual = isinstance(self.clock, VirtualClock)
        self.at_lead = float(at_lead if at_lead is not None else (1.0 if self.virtual else 10.0))
        self.clock_every = clock_every
        self.last_decision: Decision | None = None
        self.last_cancel: CancelResult | None = None
        narrow = W.Layout(width="190px")
        button = W.Layout(width="auto")
        self.status: W.HTML = self._own(W.HTML("<i>(not refreshed yet)</i>"), "tsl-controls-status")
        rows: list[W.Widget] = [self.status]
        self.step_button: W.Button | None = None
        self.advance_button: W.Button | None = None
        self.play_button: W.Button | None = None
        self.pause_button: W.Button | None = None
        if self.virtual:
            self.step_button = self._own(
                W.Button(description="step", tooltip="fire the next due group", layout=button),
                "tsl-step",
            )
            self.amount: W.FloatText = self._own(
                W.FloatText(value=1.0, description="by (s)", layout=narrow), "tsl-amount"
            )
            self.advance_button = self._own(
                W.Button(description="advance", layout=button), "tsl-advance"
            )
            self.rate: W.FloatText = self._own(
                W.FloatText(value=1.0, description="rate (×)", layout=narrow), "tsl-rate"
            )
            self.play_button = self._own(W.Button(description="play", layout=button), "tsl-play")
            self.pause_button = self._own(W.Button(description="pause", layout=button), "tsl-pause")
            self.step_button.on_click(self._on_step)
            self.advance_button.on_click(self._on_advance)
            self.play_button.on_click(self._on_play)
            self.pause_button.on_click(self._on_pause)
            self.rate.observe(self._on_rate, names="value")
            rows += [
                self._own(W.HBox([self.step_button, self.amount, self.advance_button])),
                self._own(W.HBox([self.rate, self.play_button, self.pause_button])),
            ]
        # -- the schedule form (any clock) --------------------------------------------------
        self.mode: W.ToggleButtons = self._own(
            W.ToggleButtons(
                options=[("delay", "delay"), ("at time", "at")],
                value="delay",
                style={"button_width": "80px"},
            ),
            "tsl-mode",
        )
        self.when: W.Text = self._own(
            W.Text(value="1", description="seconds", layout=narrow), "tsl-when"
        )
        self.label: W.Text = self._own(
            W.Text(value="demo", description="label", layout=narrow), "tsl-label"
        )
        self.args: W.Text = self._own(
            W.Text(value="", placeholder="e.g. 1, 'a'", description="args", layout=narrow),
            "tsl-args",
        )
        self.period: W.FloatText = self._own(
            W.FloatText(value=0.0, description="period", layout=narrow), "tsl-period"
        )
        #: virtual seconds each run of a task scheduled from the form takes (virtual clocks)
        self.takes: W.BoundedFloatText = self._own(
            W.BoundedFloatText(
                value=0.0,
                min=0.0,
                max=3600.0,
                step=0.1,
                description="takes (s)",
                tooltip="virtual seconds each run takes (runs overlap, overrun, run late)",
                layout=narrow,
            ),
            "tsl-takes",
        )
        self.schedule_button: W.Button = self._own(
            W.Button(description="schedule", button_style="primary", layout=button),
            "tsl-schedule",
        )
        self.cancel_id: W.IntText = self._own(
            W.IntText(value=0, description="task ID", layout=narrow), "tsl-cancel-id"
        )
        self.cancel_button: W.Button = self._own(
            W.Button(description="cancel", button_style="warning", layout=button), "tsl-cancel"
        )
        self.result: W.HTML = self._own(
            W.HTML("<i>no action yet</i>", layout=W.Layout(max_width="460px")), "tsl-decision"
        )
        fields = [self.when, self.label, self.args, self.period, self.cancel_id, self.takes]
        for control in fields + ([self.amount, self.rate] if self.virtual else []):
            control.style.description_width = "64px"
            control.add_class(FIELD_CLASS)  # projector type: wider labels, still in columns
        self.schedule_button.on_click(self._on_schedule)
        self.cancel_button.on_click(self._on_cancel)
        self.mode.observe(self._on_mode, names="value")
        rows += [
            self.mode,
            self._own(W.HBox([self.when, self.label], layout=W.Layout(flex_flow="row wrap"))),
            self._own(W.HBox([self.args, self.period], layout=W.Layout(flex_flow="row wrap"))),
            self._own(W.HBox([self.takes, self.schedule_button])),
            self._own(W.HBox([self.cancel_id, self.cancel_button])),
            self.result,
        ]
        self.widget = self._box(rows, "Controls")

    @property
    def scale(self) -> TimeScale:
        """The time language of the form and the texts."""
        return self.scheduler.time_scale

    # -- callbacks (short: one scheduler call, then this panel's result) ----------------------
    def _on_step(self, _button: Any = None) -> None:
        self._clock_action(lambda: self.clock.step(), "step")  # type: ignore[attr-defined]

    def _on_advance(self, _button: Any = None) -> None:
        amount = float(self.amount.value)
        self._clock_action(lambda: self.clock.advance(amount), f"advance by {amount:g} s")  # type: ignore[attr-defined]

    def _on_play(self, _button: Any = None) -> None:
        rate = float(self.rate.value)
        self._clock_action(lambda: self.clock.play(rate), f"play at {rate:g}×")  # type: ignore[attr-defined]

    def _on_pause(self, _button: Any = None) -> None:
        self._clock_action(lambda: self.clock.pause(), "pause")  # type: ignore[attr-defined]

    def _on_rate(self, change: Any) -> None:
        clock: VirtualClock = self.clock  # type: ignore[assignment]
        if clock.rate > 0 and change["new"] > 0:
            self._clock_action(lambda: setattr(clock, "rate", float(change["new"])), "rate")

    def _on_mode(self, change: Any) -> None:
        if change["new"] == "at":
            self.when.description = "time"
            self.prefill_at()
        else:
            self.when.description = "seconds"
            self.when.value = "1"

    def prefill_at(self) -> str:
        """Put ``at_lead`` seconds from now, rounded up to a whole second, in the time box."""
        scale = self.scale
        target = self.clock.now() + self.at_lead
        if scale.style == "wall":
            target = math.ceil(target)
        else:
            target = scale.abs(math.ceil(scale.rel(target) - 1e-9))
        self.when.value = scale.number(target)
        return str(self.when.value)

    def _clock_action(self, action: Any, what: str) -> None:
        scale = self.scale
        try:
            value = action()
        except Exception as exc:
            self.result.value = _error_text(what, exc)
        else:
            extra = ""
            if what == "step":
                extra = " (nothing pending)" if value is None else f" to {scale.text(value)}"
            self.result.value = (
                f"<div class='tsl-clock-text'><b>{esc(what)}</b>{esc(extra)}: "
                f"now {esc(scale.at(self.clock.now()))}</div>" + _after(self.source.version)
            )
        self._changed()

    def _request(self) -> dict[str, Any]:
        period = float(self.period.value) or None
        request: dict[str, Any] = {
            "label": self.label.value.strip() or None,
            "args": parse_args(self.args.value),
            "period": period,
        }
        if self.mode.value == "delay":
            request["delay"] = parse_delay(self.when.value)
        else:
            request["at"] = self.scale.parse(self.when.value)
        return request

    def _on_schedule(self, _button: Any = None) -> None:
        seconds = float(self.takes.value or 0.0) if self.virtual else 0.0
        action = virtual_work(self.clock, seconds) if seconds > 0 else demo_task  # type: ignore[arg-type]
        try:
            decision = self.scheduler.schedule_decision(action, **self._request())
        except PastTimeError as exc:
            decision = exc.decision
        except (ValueError, TypeError, SchedulerClosedError) as exc:
            self.result.value = _error_text("schedule rejected", exc)
            self._changed()
            return
        self.last_decision = decision
        self.result.value = decision_text(decision, self.clock.now(), self.scale) + _after(
            self.source.version
        )
        if decision.task_id is not None:
            self.cancel_id.value = decision.task_id
        self._changed()

    def _on_cancel(self, _button: Any = None) -> None:
        task_id = int(self.cancel_id.value)
        try:
            result = self.scheduler.cancel(task_id)
        except (TypeError, SchedulerClosedError) as exc:
            self.result.value = _error_text("cancel", exc)
        else:
            self.last_cancel = result
            self.result.value = cancel_text(task_id, result) + _after(self.source.version)
        self._changed()

    # -- display -----------------------------------------------------------------------
    def render(self, scene: Scene) -> None:
        """Recompute the status line (clock, rate, pending tasks, log rows) from ``scene``."""
        self.put(self.status, value=stamp(scene, self.name) + self._status_html(scene))

    def _status_html(self, scene: Scene) -> str:
        clock = self.clock
        scale = scene.scale
        if self.virtual:
            rate = clock.rate  # type: ignore[attr-defined]
            mode = f"playing at {rate:g}×" if rate > 0 else "paused (step it)"
            error = getattr(clock, "play_error", None)
            if error is not None:
                mode += f" — stopped by {type(error).__name__}: {esc(error)}"
            kind = "virtual clock"
        else:
            mode, kind = "running", "real clock"
        if scene.closed:  # one state: a clock that drives nothing any more is not "running"
            mode = "stopped"
            state = "<b class='tsl-shut'>scheduler shut down</b>"
        else:
            state = f"{scene.moment.pending} pending, {len(scene.moment.running)} running"
        rows = scene.seq if scene.logging else 0
        return (
            f"<div class='tsl-status'>{kind}, {mode} · now "
            f"<b class='tsl-now'>{esc(scale.text(scene.now))}</b> · {state} · "
            f"<span class='tsl-rows'>{rows} log rows</span> · next {self._next_text(scene)}</div>"
        )

    def _next_text(self, scene: Scene) -> str:
        head = scene.queue.head_time
        if head is None:
            return "—"
        return f"{esc(scene.scale.text(head))} ({fmt_countdown(head, scene.now)})"

    def _key(self, scene: Scene) -> Hashable:
        return (scene.seq, scene.closed, getattr(self.clock, "rate", None), scene.scale.style)

    def _now_key(self, scene: Scene) -> Hashable:
        return scene.now

    def _make_parts(self) -> list[Part]:
        return [
            Part(
                "controls",
                self.render,
                self._key,
                drift=self._now_key,
                interval=self.clock_every,
            )
        ]
