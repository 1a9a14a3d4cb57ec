"""The history scrubber: a slider over ``seq`` that replays the queue at any row of the log."""

from __future__ import annotations

import inspect
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from ..core.decision import Case
from ..core.queues import QueueState, TimerQueue, make_queue
from ..log.kinds import Kind
from ..reading.replay import Replayer
from ..reading.sentences import describe_row, row_float, row_int, row_text
from ..time.scale import TimeScale
from ._base import Panel, Part, esc, image_widget, scroller, stamp
from .changes import QueueChange, queue_change, queue_strip_html
from .panels import register_panel
from .queue import picture_size, queue_picture, queue_table_html, shows_picture

if TYPE_CHECKING:
    import pandas as pd

    from ..core.scheduler import Scheduler
    from .scene import LogSource, Scene

__all__ = ["HistoryPanel"]


def _empty_like(queue: TimerQueue) -> TimerQueue:
    """An empty queue of ``queue``'s design with the same options (a wheel's slots and tick).

    The options are the design's constructor parameters, read back from the
    attributes of the same names; a design that cannot be rebuilt so is
    replayed on the default design (the same decisions, another picture).
    """
    design = type(queue)
    try:
        names = [
            p.name
            for p in inspect.signature(design).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and hasattr(queue, p.name)
        ]
        return design(**{name: getattr(queue, name) for name in names})
    except Exception:
        return make_queue()


@register_panel(order=70)
class HistoryPanel(Panel):
    """Scrub through the log: the queue state replayed at the chosen row, the row explained.

    The slider runs over ``seq`` (the row numbers still kept by the log). With
    **follow newest** on, it moves to the newest row whenever a refresher
    refreshes the panel; moving the slider by hand turns following off. The
    queue at the chosen row is rebuilt with :class:`~tempsched_lab.Replayer`
    (the same design as the scheduler's queue) and shown as a table and, with
    the design's picture (by default where the picture's registration says so:
    the heap and the wheel, as in :class:`~tempsched_lab.widgets.QueuePanel`).

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> a = s.schedule(print, at=2.0, label="first")
    >>> b = s.schedule(print, at=1.0, label="second")
    >>> panel = HistoryPanel(s, picture=False)
    >>> panel.refresh()
    >>> panel.slider.value, "case 3" in panel.info.value
    (1, True)
    >>> panel.slider.value = 0
    >>> "second" in panel.queue.value, panel.follow.value
    (False, False)
    >>> panel.close()

    With ``predict=True`` (teaching), **▶** asks before it shows the next row when that row is a
    request (which case?) or a run (which task?); the answer reveals the row, right or wrong,
    and :attr:`predicted` keeps ``(guess, actual)`` pairs. Moving the slider by hand never asks,
    and neither does **▶** onto a row already on screen while stepping (left or reached with
    **◀**, or answered): stepping back to look again is not a new question.

    >>> s = Scheduler(VirtualClock())
    >>> _ = s.schedule(print, at=2.0, label="first")
    >>> _ = s.schedule(print, at=1.0, label="second")
    >>> panel = HistoryPanel(s, picture=False, predict=True)
    >>> panel.refresh(); panel.slider.value = 0
    >>> panel.next_button.click()  # row 1 is a request: asked, not shown yet
    >>> panel.slider.value, sorted(panel.options)[:2]
    (0, [1, 2])
    >>> panel.guess(3); panel.slider.value, panel.predicted
    (1, [(3, 3)])
    >>> panel.close()
    """

    name = "history"

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        source: LogSource | None = None,
        scale: str | None = None,
        picture: bool | None = None,
        max_points: int = 8,
        figsize: tuple[float, float] | None = None,
        predict: bool = False,
    ) -> None:
        super().__init__(scheduler, source=source, scale=scale)
        #: ask for the next row's case (a request) or task (a run) before **▶** shows it
        self.predict = predict
        #: ``(guess, actual)`` of each prediction; the options of the open question
        self.predicted: list[tuple[int, int]] = []
        self.options: dict[int, str] = {}
        self._asked: tuple[int, int] | None = None  # (seq, actual) of the open question
        self._stepped: set[int] = set()  # rows seen while stepping: ▶ does not ask them again
        self.ask: W.HTML = self._own(W.HTML(), "tsl-history-ask")
        self.choices: W.HBox = self._own(
            W.HBox(layout=W.Layout(flex_flow="row wrap")), "tsl-history-choices"
        )
        self.verdict: W.HTML = self._own(W.HTML(), "tsl-history-verdict")
        self.max_points = max_points
        self.slider: W.IntSlider = self._own(
            W.IntSlider(
                value=0,
                min=0,
                max=0,
                description="row (seq)",
                continuous_update=False,
                layout=W.Layout(width="520px"),
            ),
            "tsl-history-slider",
        )
        self.slider.style.description_width = "70px"
        self.prev_button: W.Button = self._own(
            W.Button(description="◀", tooltip="previous row", layout=W.Layout(width="40px")),
            "tsl-history-prev",
        )
        self.next_button: W.Button = self._own(
            W.Button(description="▶", tooltip="next row", layout=W.Layout(width="40px")),
            "tsl-history-next",
        )
        self.follow: W.Checkbox = self._own(
            W.Checkbox(value=True, description="follow newest", indent=False), "tsl-follow"
        )
        self.info: W.HTML = self._own(W.HTML("<i>no rows yet</i>"), "tsl-history-row")
        self.strip: W.HTML = self._own(W.HTML(), "tsl-history-strip")
        self.queue: W.HTML = self._own(W.HTML(), "tsl-history-queue")
        #: what the row shown changed in the queue
        self.change: QueueChange | None = None
        self.image: W.Image | None = None
        children: list[W.Widget] = [
            self._own(W.HBox([self.prev_button, self.slider, self.next_button, self.follow])),
            self.ask,
            self.choices,
            self.verdict,
            self.info,
            self.strip,
            self.queue,
        ]
        if shows_picture(scheduler.queue.design, picture):
            self._fig = self._renderer(figsize or picture_size(scheduler.queue.design))
            self.image = self._own(image_widget(), "tsl-history-picture")
            children.append(self._own(scroller(self.image)))
        self._replayer: Replayer | None = None
        self._replayer_version = -2
        self._frame: pd.DataFrame | None = None
        self._args: dict[int, str] = {}
        self._moving = False  # True while the panel itself moves the slider
        self.shown_row: int | None = None  # the seq currently displayed
        self._scene: Scene | None = None  # the moment the slider's range comes from
        self._drawn_style: str | None = None
        self._drawn_scale: str | None = None
        self.slider.observe(self._on_slider, names="value")
        self.follow.observe(self._on_follow, names="value")
        self.prev_button.on_click(lambda _b: self._nudge(-1))
        self.next_button.on_click(lambda _b: self._nudge(+1))
        self.widget = self._box(children, "History (replay the log)")

    # -- user actions ------------------------------------------------------------------------
    def _on_slider(self, change: Any) -> None:
        with self._lock:
            if self._moving:
                return  # refresh() shows the row once the slider's message is sent
            self.follow.value = False
            self.show(int(change["new"]))

    def _on_follow(self, change: Any) -> None:
        if change["new"] and not self._moving:
            self._changed()  # jump to the newest row at once

    def _nudge(self, step: int) -> None:
        slider = self.slider
        target = min(max(slider.value + step, slider.min), slider.max)
        if step < 0:
            self._stepped.update((slider.value, target))
        elif (
            self.predict
            and target != slider.value
            and target not in self._stepped
            and self._pose(target)
        ):
            return  # shown once the prediction is made
        self._stepped.add(target)
        self.slider.value = target

    # -- predict before reveal -----------------------------------------------------------------
    def _pose(self, seq: int) -> bool:
        """Ask for row ``seq``'s case (a request) or task (a run); False when it is neither."""
        with self._lock:
            scene = self._scene
            if scene is None or self.closed:
                return False
            frame = self._replay_to(scene, seq - 1)
            if frame is None or self._replayer is None:
                return False
            pending = self._replayer.snapshot().tasks
            rows = frame[frame["seq"] == seq]
            if not len(rows):
                return False
            row = rows.iloc[0]
            kind, case = row_text(row["kind"]), row_int(row["case"])
            label = row_text(row["label"])
            due = scene.scale.at(row_float(row["due"]))
            if kind in (Kind.SCHEDULE.value, Kind.REJECT.value) and case:
                question = f"Row {seq} is a request: {label or 'a task'} due {due}. Which case?"
                options = {int(c): f"{int(c)} {c.short}" for c in Case}
                actual = case
            elif kind == Kind.DISPATCH.value and row_int(row["task_id"]) is not None:
                options = {i: f"#{i} {v.label}" for i, v in sorted(pending.items())[:12]}
                actual = row_int(row["task_id"]) or 0
                if len(options) < 2 or actual not in options:
                    return False  # nothing to choose from
                question = f"Row {seq} is a run. Which task runs next?"
            else:
                return False
            self._asked, self.options = (seq, actual), options
            buttons = []
            for key, text in options.items():
                button = W.Button(description=text, layout=W.Layout(width="auto"))
                button.add_class("tsl-history-choice")
                button.on_click(lambda _b, k=key: self.guess(k))
                buttons.append(button)
            old = self.choices.children
            self.choices.children = tuple(buttons)
            for button in old:
                button.close()
            self.ask.value = f"<div style='font-size:13px'><b>Predict:</b> {esc(question)}</div>"
            self.verdict.value = ""
            return True

    def guess(self, key: int) -> None:
        """Answer the open question with ``key`` (a case, or a task ID); then show the row."""
        if self._asked is None:
            raise ValueError(f"key={key!r}: no question is open (press ▶ with predict on)")
        if key not in self.options:
            raise ValueError(f"key={key!r}: expected one of {sorted(self.options)}")
        seq, actual = self._asked
        self._stepped.add(seq)
        self.predicted.append((key, actual))
        right = sum(g == a for g, a in self.predicted)
        words = "Right!" if key == actual else f"Not quite: it was {self.options[actual]}."
        self.verdict.value = (
            f"<div class='tsl-history-verdict-text' data-right='{int(key == actual)}' "
            f"style='font-size:13px'>{esc(words)} (score: {right} of {len(self.predicted)})</div>"
        )
        self._asked, self.options = None, {}
        for button in self.choices.children:
            button.close()
        self.choices.children = ()
        self.ask.value = ""
        self.follow.value = False
        self.slider.value = seq

    # -- display -----------------------------------------------------------------------------
    def render(self, scene: Scene) -> None:
        """Set the slider's range to the rows before ``scene``; following: show the newest row."""
        self._scene = scene
        version = scene.seq if scene.logging else -1
        if version <= 0:
            self.slider.disabled = True
            text = "<i>logging is off</i>" if version < 0 else "<i>no rows yet</i>"
            self.put(self.info, value=stamp(scene, self.name) + text)
            return
        first, last = min(self.source.first_seq, version - 1), version - 1
        self.slider.disabled = False
        self._moving = True
        try:
            with self.slider.hold_sync():
                if first > self.slider.max:
                    self.slider.max = last
                    self.slider.min = first
                else:
                    self.slider.min = first
                    self.slider.max = last
                target = last if self.follow.value else self.slider.value
                self.slider.value = target
        finally:
            self._moving = False
        self.show(self.slider.value)

    def show(self, seq: int) -> None:
        """Show the queue replayed right after row ``seq`` and explain that row.

        The row's texts, its strip and the queue's picture reach the page
        together (one staged frame): the picture first, so a page never shows
        the new row's words beside the old row's picture.
        """
        with self._lock, self.one_frame():
            if self.closed or self._scene is None:
                return
            scene = self._scene
            first = self._first_row(scene)
            before = None
            # the queue just before the row, to compare
            earlier = first is not None and seq > first and self._replay_to(scene, seq - 1)
            if earlier is not None and earlier is not False and self._replayer is not None:
                before = self._replayer.snapshot()
            frame = self._replay_to(scene, seq)
            if frame is None:
                return
            replayer = self._replayer
            assert replayer is not None
            snapshot = replayer.snapshot()
            index = seq - int(frame["seq"].iloc[0])
            row = frame.iloc[index]
            empty = QueueState(head_time=None, head=(), points=())
            self.change = queue_change(before.state if before else empty, snapshot.state, row)
            style = scene.scale.style
            drawn = (self.shown_row, self._drawn_style, self._drawn_scale)
            if self.image is not None and drawn != (seq, style, self.type_scale):
                png = self._fig.render(lambda ax: queue_picture(snapshot, ax, scene.scale))
                self.show_png(self.image, png)
                self.mark_row(self.image, seq)
                self._drawn_style, self._drawn_scale = style, self.type_scale
            self.put(
                self.strip,
                value=queue_strip_html(snapshot, before, self.change, scene.scale),
            )
            self.put(
                self.info,
                value=stamp(scene, self.name)
                + _row_html(row, scene.scale, bounded=self.source.first_seq > 0),
            )
            self.put(
                self.queue,
                value=queue_table_html(
                    snapshot,
                    row_float(row["t"]),
                    scale=scene.scale,
                    max_points=self.max_points,
                    caption=f"after row {seq}",
                    args=self._args,
                ),
            )
            self.shown_row = seq

    def _replay_to(self, scene: Scene, seq: int) -> pd.DataFrame | None:
        if scene.seq <= 0:
            return None
        if (
            self._replayer is None
            or self._frame is None
            or scene.seq != self._replayer_version
            or (self._replayer.seq is not None and seq < self._replayer.seq)
        ):
            self._frame = frame = scene.frame()
            if not len(frame):
                return None
            self._replayer = Replayer(frame, queue=_empty_like(self.scheduler.queue))
            self._replayer_version = scene.seq
            self._args = _args_by_task(frame)
        frame = self._frame
        first, last = int(frame["seq"].iloc[0]), int(frame["seq"].iloc[-1])
        seq = min(max(seq, first), last)
        self._replayer.advance_to(seq)
        return frame

    def _first_row(self, scene: Scene) -> int | None:
        frame = self._frame if self._replayer_version == scene.seq else None
        if frame is None:
            return None if scene.seq <= 0 else self.source.first_seq
        return int(frame["seq"].iloc[0]) if len(frame) else None

    def _key(self, scene: Scene) -> Hashable:
        # the row shown is part of the key: ticking "follow newest" after a move by hand
        # must jump to the newest row even when no new row came since
        return (scene.seq, self.follow.value, scene.scale.style, self.shown_row)

    def _make_parts(self) -> list[Part]:
        return [Part("history", self.render, self._key)]


def _args_by_task(frame: pd.DataFrame) -> dict[int, str]:
    """The arguments text of each task, from its schedule rows (replayed tasks have none)."""
    rows = frame.loc[(frame["kind"] == Kind.SCHEDULE).to_numpy(), ["task_id", "args"]].dropna()
    return dict(zip(rows["task_id"].astype(int), rows["args"].astype(str), strict=True))


def _row_html(row: Any, scale: TimeScale, *, bounded: bool) -> str:
    kind = row_text(row["kind"])
    seq = int(row["seq"])
    label = row_text(row["label"])
    sentence = describe_row(row, scale)
    if sentence.startswith(f"{kind}: "):  # "shutdown: shutdown: stopped": the kind once
        sentence = sentence[len(kind) + 2 :]
    lines = [
        f"<b>Row {seq}</b> ({esc(scale.at(row_float(row['t'])))}): <b>{esc(kind)}</b>"
        + (f" — {esc(label)}" if label else "")
        + f": {esc(sentence)}."
    ]
    case = row_int(row["case"])
    if case:
        c = Case(case)
        lines.append(f"<b>Case {case}, {esc(c.short)}</b>: {esc(c.explanation)}")
    if bounded:
        lines.append(
            "<i>The log is bounded and dropped its oldest rows: the replay starts at the first "
            "kept row, so tasks queued before it are missing.</i>"
        )
    return (
        "<div class='tsl-history-text' style='max-width:640px;line-height:1.4'>"
        + "<br>".join(lines)
        + "</div>"
    )
