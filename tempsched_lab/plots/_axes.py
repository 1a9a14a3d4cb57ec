"""Small helpers shared by the plots: creating a figure without pyplot, notes, messages."""

from __future__ import annotations

import textwrap

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text

from .colors import NEUTRAL

__all__ = ["add_note", "axes_or_new", "set_title", "show_message"]

#: gid of the text that says a plot aggregated or thinned what it shows.
NOTE_GID = "note"
#: gid of the text shown instead of a plot when there is nothing to draw.
MESSAGE_GID = "message"


def axes_or_new(ax: Axes | None, figsize: tuple[float, float]) -> Axes:
    """``ax`` itself, or the single Axes of a new Figure (constrained layout, no pyplot)."""
    if ax is not None:
        return ax
    fig = Figure(figsize=figsize, layout="constrained")
    return fig.add_subplot()


def show_message(ax: Axes, text: str) -> Text:
    """Write ``text`` in the middle of an otherwise empty ``ax`` (no ticks, no frame)."""
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)
    return ax.text(
        0.5,
        0.5,
        text,
        transform=ax.transAxes,
        ha="center",
        va="center",
        fontsize=12,
        color=NEUTRAL["line"],
        gid=MESSAGE_GID,
    )


def add_note(ax: Axes, text: str) -> Text:
    """A short italic note just above the plot area, under the title.

    Plots use it to say what they aggregated or left out, so that a reader
    never mistakes a summary for the whole data. Long notes are wrapped to
    the width of the Axes.
    """
    fig = ax.figure
    while getattr(fig, "figure", fig) is not fig:  # a SubFigure: find the root Figure
        fig = fig.figure
    width_in = ax.get_position().width * fig.get_figwidth()
    chars = max(40, int(width_in * 13))
    wrapped = "\n".join(textwrap.fill(part, chars) for part in text.split("\n"))
    return ax.annotate(
        wrapped,
        xy=(0.0, 1.0),
        xycoords="axes fraction",
        xytext=(0, 4),
        textcoords="offset points",
        ha="left",
        va="bottom",
        fontsize=8,
        style="italic",
        color=NEUTRAL["ink"],
        gid=NOTE_GID,
        annotation_clip=False,
    )


def set_title(ax: Axes, title: str, note: str | None = None, **kwargs: object) -> Text | None:
    """Set the title and, when given, a note between the title and the plot (see :func:`add_note`).

    Returns the note's Text, or ``None``.
    """
    if not note:
        ax.set_title(title, **kwargs)  # type: ignore[arg-type]
        return None
    text = add_note(ax, note)
    lines = text.get_text().count("\n") + 1
    ax.set_title(title, pad=8 + 10.5 * lines, **kwargs)  # type: ignore[arg-type]
    return text
