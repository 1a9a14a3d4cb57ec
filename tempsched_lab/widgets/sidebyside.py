"""Side by side: one scenario on two queue designs (or two executors), stepped together.

Each side is its own scheduler on its own :class:`~tempsched_lab.VirtualClock`,
given the same requests by the same ``scenario`` function, and shown by its own
:class:`~tempsched_lab.widgets.Dashboard`. One row of buttons drives both clocks
to the same times (**step**: to the next due time of either side; **advance**),
and the two interactive timelines share their view: zoom, pan, follow, lanes
and the selected task move together. What differs is what the designs do
differently: the pictures of the queue, a wheel's rounding of due times, a
simulated worker's queueing.

>>> from tempsched_lab.widgets import SideBySide, demo_task
>>> def lesson(s):
...     s.schedule(demo_task, at=1.0, label="a")
...     s.schedule(demo_task, at=1.034, label="b")
>>> pair = SideBySide(lesson, designs=("heap", "wheel"), autostart=False)
>>> pair.step(), pair.step()  # the wheel (10 ms ticks) fires "b" at 1.040 s, the heap at 1.034 s
(1.0, 1.034)
>>> [s.moment().pending for s in pair.schedulers]
[0, 1]
>>> pair.close()
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as W
import traitlets

from ..core.scheduler import Scheduler
from ..plots.designs import queue_designs
from ..scenarios import SimulatedWorker, run_simulation
from ..time.clock import VirtualClock
from ._base import Panel
from ._style import check_scale, off_page, on_page, projector_toggle, resolve_scale, show_scale
from .dashboard import Dashboard

__all__ = ["SideBySide"]

#: The least width of one side's column (CSS px), default type and projector type: two columns
#: fit side by side from about 880 px (default) or 1320 px (projector) of page.
_COLUMN_PX = 420
_PROJECTOR_COLUMN_PX = 640
#: Shown only when the page is too narrow for the sides to stand side by side (and why);
#: in the columns, a panel wider than its column scrolls sideways instead of being cut.
_STACK_NOTE = (
    "<style>.tsl-sbs-stacked{display:none;color:var(--tsl-late);font-size:13px}"
    "@media (max-width: 879px){.tsl-sbs-stacked{display:block}}"
    "@media (max-width: 1319px){.tsl-projector .tsl-sbs-stacked{display:block}}"
    ".tsl-side-by-side.tsl-projector .tsl-sbs-side"
    f"{{flex-basis:{_PROJECTOR_COLUMN_PX}px!important}}"
    ".tsl-sbs-side .tsl-panel{overflow-x:auto!important}</style>"
    "<div class='tsl-sbs-stacked'>This page is too narrow for two columns (at least "
    f"{_COLUMN_PX} px each, {_PROJECTOR_COLUMN_PX} px in projector type): the sides are shown "
    "one under the other. Widen the window (or zoom out) to see them side by side.</div>"
)

#: The interactive timelines' traits that move together.
LINKED = ("view", "follow", "lanes", "window", "selected")
#: The designs a lesson compares unless told otherwise (the first also stands alone).
DEFAULT_DESIGNS = ("heap", "wheel")


class SideBySide:
    """The same scenario on several queue designs or executors, in synchronized dashboards.

    Args:
        scenario: ``scenario(scheduler)`` makes the requests; called once per side.
        designs: one queue design per side, by name (the queue registry's:
            :data:`tempsched_lab.core.queues.DESIGNS`).
        executors: one executor per side (e.g. ``None`` and a
            :class:`~tempsched_lab.scenarios.SimulatedWorker`); defaults to the
            scheduler's default on every side. Sides are as many as the longer
            of ``designs`` and ``executors``.
        panels: the panels each side shows.
        titles: a heading per side (default: the design and executor).
        autostart: start the dashboards' refreshers.
        scale: (default: the session's, see ``tempsched_lab.set_scale``)
            the type scale of every side, ``"default"`` or ``"projector"``
            (text of 16 px and more); the **projector** toggle switches it.
        predict: with the **predict** toggle on (default: on with ``teaching=True``),
            **step both** first asks which side fires next (or all at once), then steps and
            says right or wrong; :attr:`predicted` keeps ``(guess, actual)`` pairs.
            :meth:`step` itself never asks.

    The sides stay side by side down to a page about 880 px wide (compact
    columns of at least 420 px; 1320 px in projector type); narrower, they
    stack, and the page says so.
    A step shows every side's new moment in one frame.
        **dashboard: more keyword arguments for each :class:`Dashboard`.
    """

    def __init__(
        self,
        scenario: Callable[[Scheduler], Any],
        *,
        designs: Sequence[str] = DEFAULT_DESIGNS,
        executors: Sequence[Any] | None = None,
        panels: Sequence[str] = ("queue", "timeline", "log"),
        titles: Sequence[str] | None = None,
        autostart: bool = True,
        scale: str | None = None,
        predict: bool | None = None,
        **dashboard: Any,
    ) -> None:
        scale = resolve_scale(scale)
        if not callable(scenario):
            raise TypeError(f"scenario={scenario!r}: expected a function of a scheduler")
        executors = list(executors) if executors is not None else []
        sides = max(len(designs), len(executors))
        if sides < 2:
            raise ValueError(
                f"designs={list(designs)!r}, executors={executors!r}: expected two sides or more"
            )
        known = queue_designs()
        unknown = [d for d in designs if d not in known]
        if unknown:
            raise ValueError(
                f"designs={list(designs)!r}: {unknown!r} not queue designs; expected some of "
                f"{list(known)}"
            )
        designs = list(designs) or [DEFAULT_DESIGNS[0]]
        self.clocks: list[VirtualClock] = []
        self.schedulers: list[Scheduler] = []
        self.workers: list[SimulatedWorker | None] = []
        self.dashboards: list[Dashboard] = []
        names = list(titles) if titles is not None else []
        for i in range(sides):
            design = designs[min(i, len(designs) - 1)]
            executor = executors[i] if i < len(executors) else None
            clock = VirtualClock()
            title = names[i] if i < len(names) else _title(design, executor)
            kwargs: dict[str, Any] = {"queue": design, "name": title}
            if executor is not None:
                kwargs["executor"] = executor
            scheduler = Scheduler(clock, **kwargs)
            scenario(scheduler)
            self.clocks.append(clock)
            self.schedulers.append(scheduler)
            self.workers.append(executor if isinstance(executor, SimulatedWorker) else None)
        for scheduler in self.schedulers:
            self.dashboards.append(
                Dashboard(
                    scheduler,
                    panels=panels,
                    title=scheduler.name,
                    autostart=autostart,
                    scale=scale,
                    **dashboard,
                )
            )
        for dash in self.dashboards:
            _timeline_first(dash)
        self._links = self._link_timelines()
        self.step_button = W.Button(description="step both", button_style="primary")
        self.step_button.add_class("tsl-sbs-step")
        self.amount = W.FloatText(value=1.0, description="by (s)", layout=W.Layout(width="160px"))
        self.advance_button = W.Button(description="advance both")
        self.advance_button.add_class("tsl-sbs-advance")
        self.status = W.HTML()
        self.status.add_class("tsl-sbs-status")
        self.step_button.on_click(lambda _b: self._step_clicked())
        #: the **predict** toggle; ``(guess, actual)`` of each prediction made
        self.predict = W.ToggleButton(
            value=bool(dashboard.get("teaching", False) if predict is None else predict),
            description="predict",
            tooltip="ask which side fires next, first",
        )
        self.predict.add_class("tsl-sbs-predict")
        self.predicted: list[tuple[str, str]] = []
        self.ask = W.HTML()
        self.choices = W.HBox(layout=W.Layout(flex_flow="row wrap"))
        self.choices.add_class("tsl-sbs-choices")
        self.verdict = W.HTML()
        self._answer: str | None = None
        self.advance_button.on_click(lambda _b: self.advance(float(self.amount.value)))
        self.projector = projector_toggle(scale, self.set_scale)
        bar = W.HBox(
            [self.step_button, self.amount, self.advance_button, self.predict, self.projector],
            layout=W.Layout(flex_flow="row wrap", align_items="center"),
        )
        columns = W.HBox(
            [d.widget for d in self.dashboards],
            layout=W.Layout(flex_flow="row wrap", align_items="flex-start"),
        )
        columns.add_class("tsl-sbs-columns")
        for dash in self.dashboards:
            dash.widget.layout.flex = f"1 1 {_COLUMN_PX}px"
            dash.widget.layout.min_width = "0"
            dash.widget.add_class("tsl-sbs-side")
            dash.projector.layout.display = "none"  # one toggle for every side, in the bar
        self._boxes = [bar, columns]
        self.note = W.HTML(_STACK_NOTE)
        self.widget = W.VBox(
            [bar, self.ask, self.choices, self.verdict, self.status, self.note, columns]
        )
        self.widget.add_class("tsl-side-by-side")
        show_scale(self.widget, scale)
        on_page(self)
        self._show_status()

    def set_scale(self, scale: str) -> None:
        """Switch every side to type scale ``scale`` (``"default"`` or ``"projector"``)."""
        scale = check_scale(scale)
        for dash in self.dashboards:
            dash.set_scale(scale)
        show_scale(self.widget, scale, self.projector)

    def _link_timelines(self) -> list[Any]:
        lives = [getattr(d.panels.get("timeline"), "live", None) for d in self.dashboards]
        lives = [live for live in lives if live is not None]
        links = []
        for other in lives[1:]:
            for name in LINKED:
                links.append(traitlets.link((lives[0], name), (other, name)))
        return links

    # -- driving both clocks -------------------------------------------------------------------
    def _run_to(self, t: float) -> None:
        """Run every clock to ``t``, then show every side's new moment in one frame.

        Once a page shows the pair (its timelines said hello), the refreshers draw
        no round of their own meanwhile; one round per side is drawn here and all
        of their writes reach the page together, so no side shows the new time
        beside the other's old one. Before (a notebook still executing under
        Voila, a headless run) the refreshers are only poked: no frame is drawn
        for a page that is not there yet.
        """
        if not self._page_shows():
            self._run_clocks(t)
            for dash in self.dashboards:
                dash.refresher.poke()
            self._show_status()
            return
        with contextlib.ExitStack() as held:
            for dash in self.dashboards:
                held.enter_context(dash.refresher.holding())
            self._run_clocks(t)
            with Panel.one_frame():
                for dash in self.dashboards:
                    if not dash.closed:
                        dash.refresher.tick(hurry=True)
                self._show_status()

    def _run_clocks(self, t: float) -> None:
        for clock, worker in zip(self.clocks, self.workers, strict=True):
            if t < clock.now():
                continue
            if worker is not None:
                run_simulation(clock, worker, until=t)
            else:
                clock.run_until(t)

    def _page_shows(self) -> bool:
        """Whether a page has loaded this pair's interactive timelines."""
        lives = [getattr(d.panels.get("timeline"), "live", None) for d in self.dashboards]
        return any(live is not None and live.hellos > 0 for live in lives)

    def step(self) -> float | None:
        """Run every side to the next due time of any side; returns that time (None: nothing)."""
        times = [c.next_time() for c in self.clocks]
        due = [t for t in times if t is not None]
        if not due:
            self._show_status()
            return None
        target = max(min(due), max(c.now() for c in self.clocks))
        self._run_to(target)
        return target

    # -- predict before reveal -----------------------------------------------------------------
    def _step_clicked(self) -> None:
        if self.predict.value and self._answer is None and self.pose() is not None:
            return  # the step waits for the prediction
        self.step()

    def pose(self) -> str | None:
        """Ask which side fires next; returns the right answer (None: nothing is due)."""
        times = [c.next_time() for c in self.clocks]
        due = [t for t in times if t is not None]
        if not due:
            return None
        names = [s.name or f"side {i + 1}" for i, s in enumerate(self.schedulers)]
        first = [n for n, t in zip(names, times, strict=True) if t == min(due)]
        self._answer = first[0] if len(first) == 1 else "all at once"
        buttons = []
        for option in [*names, "all at once"]:
            button = W.Button(description=option, layout=W.Layout(width="auto"))
            button.add_class("tsl-sbs-choice")
            button.on_click(lambda _b, o=option: self.guess(o))
            buttons.append(button)
        self.choices.children = tuple(buttons)
        self.ask.value = (
            "<div style='font-size:13px'><b>Predict:</b> which side fires next, "
            "before the others (or all at once)?</div>"
        )
        self.verdict.value = ""
        return self._answer

    def guess(self, side: str) -> float | None:
        """Answer the open question with ``side`` (a side's name or ``"all at once"``); step."""
        if self._answer is None:
            raise ValueError(f"side={side!r}: no question is open (step with predict on)")
        names = [b.description for b in self.choices.children]
        if side not in names:
            raise ValueError(f"side={side!r}: expected one of {names}")
        actual, self._answer = self._answer, None
        self.predicted.append((side, actual))
        right = sum(g == a for g, a in self.predicted)
        words = "Right!" if side == actual else f"Not quite: {actual}."
        for button in self.choices.children:
            button.close()
        self.choices.children = ()
        self.ask.value = ""
        self.verdict.value = (
            f"<div class='tsl-sbs-verdict' data-right='{int(side == actual)}' "
            f"style='font-size:13px'>{html.escape(words)} "
            f"(score: {right} of {len(self.predicted)})</div>"
        )
        return self.step()

    def advance(self, seconds: float) -> float:
        """Run every side ``seconds`` further (from the latest clock); returns the new time."""
        if not seconds >= 0:
            raise ValueError(f"seconds={seconds!r}: expected a duration >= 0")
        target = max(c.now() for c in self.clocks) + seconds
        self._run_to(target)
        return target

    def _show_status(self) -> None:
        cells = []
        for s in self.schedulers:
            moment = s.moment()
            now = html.escape(moment.time_scale.at(moment.now))
            cells.append(
                f"<b>{html.escape(s.name or '')}</b>: {now}, {moment.pending} pending, "
                f"{moment.seq} log rows"
            )
        joined = " &nbsp;|&nbsp; ".join(cells)
        Panel.put(
            self.status, value=f"<div class='tsl-sbs-text' style='font-size:13px'>{joined}</div>"
        )

    # -- display and release -------------------------------------------------------------------
    def refresh(self) -> None:
        """Refresh every side now, in this thread."""
        for dash in self.dashboards:
            dash.refresh()
        self._show_status()

    def close(self) -> None:
        """Close every dashboard and the shared controls; shut the schedulers down."""
        off_page(self)
        for link in self._links:
            link.unlink()
        self._links = []
        for dash in self.dashboards:
            dash.close()
        for scheduler in self.schedulers:
            scheduler.shutdown(wait=False)
        for widget in (
            self.step_button,
            self.amount,
            self.advance_button,
            self.status,
            self.projector,
            self.note,
        ):
            widget.close()
        for box in [*self._boxes, self.widget]:
            box.close()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def _timeline_first(dash: Dashboard) -> None:
    """Move ``dash``'s timeline right under its header, above the queue's picture.

    The timelines are what shows the designs differ: after **step both** in a
    900 px high window both must be in view, and the two columns' timelines
    start at the same height (under headers of one height) whatever the
    pictures' heights (a queue panel is 500-1,000 px tall).
    """
    timeline = dash.panels.get("timeline")
    children = list(dash.widget.children)
    if timeline is None or timeline.widget not in children:
        return
    children.remove(timeline.widget)
    first = 1 + (dash.banner is not None)  # the header row (and the link banner) stay on top
    children.insert(first, timeline.widget)
    dash.widget.children = tuple(children)


def _title(design: str, executor: Any) -> str:
    if executor is None:
        return f"{design} queue"
    kind = "simulated worker" if isinstance(executor, SimulatedWorker) else type(executor).__name__
    return f"{design} queue · {kind}"
