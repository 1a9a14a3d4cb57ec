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

import html
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as W
import traitlets

from ..clock import VirtualClock
from ..scenarios import SimulatedWorker, run_simulation
from ..scheduler import Scheduler
from .dashboard import Dashboard

__all__ = ["SideBySide"]

#: The interactive timelines' traits that move together.
LINKED = ("view", "follow", "lanes", "window", "selected")


class SideBySide:
    """The same scenario on several queue designs or executors, in synchronized dashboards.

    Args:
        scenario: ``scenario(scheduler)`` makes the requests; called once per side.
        designs: one queue design per side (``"sorteddict"``, ``"heap"``, ``"wheel"``).
        executors: one executor per side (e.g. ``None`` and a
            :class:`~tempsched_lab.scenarios.SimulatedWorker`); defaults to the
            scheduler's default on every side. Sides are as many as the longer
            of ``designs`` and ``executors``.
        panels: the panels each side shows.
        titles: a heading per side (default: the design and executor).
        autostart: start the dashboards' refreshers.
        **dashboard: more keyword arguments for each :class:`Dashboard`.
    """

    def __init__(
        self,
        scenario: Callable[[Scheduler], Any],
        *,
        designs: Sequence[str] = ("heap", "wheel"),
        executors: Sequence[Any] | None = None,
        panels: Sequence[str] = ("queue", "timeline", "log"),
        titles: Sequence[str] | None = None,
        autostart: bool = True,
        **dashboard: Any,
    ) -> None:
        if not callable(scenario):
            raise TypeError(f"scenario={scenario!r}: expected a function of a scheduler")
        executors = list(executors) if executors is not None else []
        sides = max(len(designs), len(executors))
        if sides < 2:
            raise ValueError(
                f"designs={list(designs)!r}, executors={executors!r}: expected two sides or more"
            )
        designs = list(designs) or ["heap"]
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
                    **dashboard,
                )
            )
        self._links = self._link_timelines()
        self.step_button = W.Button(description="step both", button_style="primary")
        self.step_button.add_class("tsl-sbs-step")
        self.amount = W.FloatText(value=1.0, description="by (s)", layout=W.Layout(width="160px"))
        self.advance_button = W.Button(description="advance both")
        self.advance_button.add_class("tsl-sbs-advance")
        self.status = W.HTML()
        self.status.add_class("tsl-sbs-status")
        self.step_button.on_click(lambda _b: self.step())
        self.advance_button.on_click(lambda _b: self.advance(float(self.amount.value)))
        bar = W.HBox(
            [self.step_button, self.amount, self.advance_button],
            layout=W.Layout(flex_flow="row wrap", align_items="center"),
        )
        columns = W.HBox(
            [d.widget for d in self.dashboards],
            layout=W.Layout(flex_flow="row wrap", align_items="flex-start"),
        )
        for dash in self.dashboards:
            dash.widget.layout.flex = "1 1 560px"
            dash.widget.layout.min_width = "0"
        self._boxes = [bar, columns]
        self.widget = W.VBox([bar, self.status, columns])
        self.widget.add_class("tsl-side-by-side")
        self._show_status()

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
        for clock, worker in zip(self.clocks, self.workers, strict=True):
            if t < clock.now():
                continue
            if worker is not None:
                run_simulation(clock, worker, until=t)
            else:
                clock.run_until(t)
        for dash in self.dashboards:
            dash.refresher.poke()
        self._show_status()

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
        self.status.value = f"<div class='tsl-sbs-text' style='font-size:13px'>{joined}</div>"

    # -- display and release -------------------------------------------------------------------
    def refresh(self) -> None:
        """Refresh every side now, in this thread."""
        for dash in self.dashboards:
            dash.refresh()
        self._show_status()

    def close(self) -> None:
        """Close every dashboard and the shared controls; shut the schedulers down."""
        for link in self._links:
            link.unlink()
        self._links = []
        for dash in self.dashboards:
            dash.close()
        for scheduler in self.schedulers:
            scheduler.shutdown(wait=False)
        for widget in (self.step_button, self.amount, self.advance_button, self.status):
            widget.close()
        for box in [*self._boxes, self.widget]:
            box.close()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def _title(design: str, executor: Any) -> str:
    if executor is None:
        return f"{design} queue"
    kind = "simulated worker" if isinstance(executor, SimulatedWorker) else type(executor).__name__
    return f"{design} queue · {kind}"
