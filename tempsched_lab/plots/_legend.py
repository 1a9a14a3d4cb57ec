"""One legend per Axes, outside the plot area, in sections: the only way plots place legends.

Two legends on one Axes can overlap each other, and a legend inside the plot
area can cover data or labels. So every plot builds *one* legend from titled
sections (``"decision case (colour)"``, ``"marks"``...), placed to the right of
the Axes, where constrained layout makes room for it. When the sections are
taller than the Axes, the legend flows into more columns instead of running
off the figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.legend import Legend
from matplotlib.lines import Line2D

from ._axes import FONT, axes_size_pt

__all__ = ["LEGEND_GID", "Section", "add_legend"]

#: gid of the legend every plot adds.
LEGEND_GID = "legend"
#: Height of one legend row, in multiples of the font size (text, spacing, marker).
_ROW_EM = 1.6
#: Points of the Axes' height lost to its title and x axis (the legend starts at its top).
_DECORATION_PT = 60.0


@dataclass
class Section:
    """A titled group of legend entries (``handles`` carry their labels)."""

    title: str
    handles: Sequence[Artist] = field(default_factory=list)


def _header(title: str) -> Line2D:
    return Line2D([], [], linestyle="none", marker="none", label=title)


def add_legend(
    ax: Axes, sections: Sequence[Section], *, fontsize: float | None = None
) -> Legend | None:
    """Add the single legend of ``ax``, right of the plot area; ``None`` if nothing to show.

    Each non-empty section starts with its title in bold (the title of a lone
    section becomes the legend's title).

    >>> from matplotlib.patches import Patch
    >>> from tempsched_lab.plots import new_figure
    >>> ax = new_figure((6, 3)).add_subplot()
    >>> legend = add_legend(ax, [Section("colour", [Patch(color="k", label="ink")])])
    >>> legend.get_title().get_text(), [t.get_text() for t in legend.get_texts()]
    ('colour', ['ink'])
    """
    if fontsize is None:
        fontsize = FONT["small"]
    filled = [s for s in sections if s.handles]
    if not filled:
        return None
    handles: list[Artist] = []
    headers: set[int] = set()
    title = None
    if len(filled) == 1:
        title = filled[0].title or None
        handles = list(filled[0].handles)
    else:
        for section in filled:
            headers.add(len(handles))
            handles.append(_header(section.title))
            handles.extend(section.handles)
    _, height_pt = axes_size_pt(ax)
    rows_fit = max(4, int((height_pt - _DECORATION_PT) / (_ROW_EM * fontsize)))
    ncols = max(1, math.ceil((len(handles) + (title is not None)) / rows_fit))
    legend = ax.legend(
        handles=handles,
        title=title,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        borderaxespad=0.0,
        fontsize=fontsize,
        title_fontsize=fontsize,
        frameon=False,
        ncols=ncols,
        alignment="left",
    )
    legend.set_gid(LEGEND_GID)
    if title is not None:
        legend.get_title().set_fontweight("bold")
    for i, text in enumerate(legend.get_texts()):
        if i in headers:
            text.set_fontweight("bold")
    return legend
