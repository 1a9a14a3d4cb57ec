"""The timeline's marks as a table: how each kind of event is drawn and how the legend names it.

Every layer draws its points with :meth:`Mark.draw` and the legend shows
:meth:`Mark.handle` for each mark that was drawn, so a glyph and its legend
entry can never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.lines import Line2D
from matplotlib.patheffects import withStroke

from ..colors import NEUTRAL, OUTCOME_COLORS

__all__ = ["MARKS", "Mark"]


@dataclass(frozen=True)
class Mark:
    """One kind of point on the timeline.

    Attributes:
        gid: the gid of the drawn collection (tests and tools find marks by it).
        label: the legend's text.
        marker: the matplotlib marker.
        size: the marker's area in points² (``Axes.scatter``'s ``s``).
        face: the fill (``None``: the run's colour, given per point; ``"none"``: hollow).
        edge: the outline (for line-only markers such as ``x``: the colour).
        linewidth: the outline's width.
        zorder: drawing order (bars are at 2).
        y_offset: drawn this many lane units above the lane centre.
        legend_marker: the legend's sample marker, if not ``marker``.
        legend_face: the legend's sample fill, if not ``face`` (coloured marks: grey).
    """

    gid: str
    label: str
    marker: str
    size: float
    face: str | None
    edge: str
    linewidth: float
    zorder: float
    y_offset: float = 0.0
    legend_marker: str | None = None
    legend_face: str | None = None
    effects: tuple[Any, ...] = field(default_factory=tuple)

    @property
    def coloured(self) -> bool:
        """Whether points take the run's colour (case or outcome)."""
        return self.face is None

    def draw(
        self, ax: Axes, x: np.ndarray, y: np.ndarray, colors: Any = None
    ) -> PathCollection | None:
        """Scatter the points (``colors``: one per point when the mark is :attr:`coloured`)."""
        if not len(x):
            return None
        if self.coloured:
            fill: Any = list(colors) if colors is not None else NEUTRAL["unknown"]
        else:
            fill = self.face
        line_only = self.marker in _LINE_MARKERS
        return ax.scatter(
            x,
            np.asarray(y) - self.y_offset,
            marker=self.marker,
            s=self.size,
            c=self.edge if line_only else None,
            facecolors=None if line_only else fill,
            edgecolors=None if line_only else self.edge,
            linewidths=self.linewidth,
            zorder=self.zorder,
            gid=self.gid,
            path_effects=list(self.effects) or None,
        )

    def handle(self) -> Line2D:
        """The legend's sample of this mark."""
        marker = self.legend_marker or self.marker
        return Line2D(
            [],
            [],
            linestyle="none",
            label=self.label,
            marker=marker,
            markersize=min(12.0, max(6.0, self.size**0.5 * 0.85)),
            markerfacecolor=self.legend_face or (self.face or NEUTRAL["unknown"]),
            markeredgecolor=self.edge,
            markeredgewidth=max(self.linewidth, 0.8),
            color=self.edge,
        )


#: Markers drawn as lines only: their colour is the edge.
_LINE_MARKERS = frozenset({"x", "|", "$!$", r"$\oslash$"})
_INK = NEUTRAL["ink"]
_CANCEL = OUTCOME_COLORS["cancelled"]
_DROPPED = OUTCOME_COLORS["dropped"]

# One mark per line reads as a table; the formatter would spread each over ten lines.
# fmt: off
MARKS: Mapping[str, Mark] = MappingProxyType(
    {
        mark.gid: mark
        for mark in (
            Mark("scheduled", "schedule() called", "o", 24, None, _INK, 0.6, 4),
            Mark("due", "due time", "v", 28, "white", _INK, 0.8, 4, y_offset=0.34),
            Mark(
                "starts", "run: start (tick) → finish (bar)", "|", 150, _INK, _INK, 1.6, 3,
                legend_marker="s", legend_face=NEUTRAL["unknown"],
            ),
            Mark("event_set", "Event set", "*", 150, None, _INK, 0.6, 5),
            Mark("cancels", "cancel()", "x", 70, _CANCEL, _CANCEL, 2.0, 6),
            Mark(
                "errors", "error (run failed)", "$!$", 260, _INK, _INK, 0.3, 6,
                effects=(withStroke(linewidth=3, foreground="white"),),
            ),
            Mark("drops", "dropped at shutdown", "s", 60, "none", _DROPPED, 1.8, 6),
            Mark(
                "duplicates", "duplicate request → task it matched", "D", 30, None, _INK, 0.6, 5,
                y_offset=0.36,
            ),
            Mark("rejected", "rejected request", "X", 70, None, _INK, 0.6, 5),
            Mark(
                "skipped", "slot skipped (misfire)", r"$\oslash$", 90, NEUTRAL["line"],
                NEUTRAL["line"], 0.4, 4, y_offset=0.34,
            ),
        )
    }
)
# fmt: on
