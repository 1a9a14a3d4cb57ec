"""Small helpers shared by the plots: figures that display themselves, notes, messages, sizes."""

from __future__ import annotations

import io
import textwrap

from matplotlib.axes import Axes
from matplotlib.figure import Figure, SubFigure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.text import Text

from ..time.scale import TimeScale
from .colors import NEUTRAL
from .style import FONT

__all__ = [
    "FONT",
    "LabFigure",
    "add_note",
    "axes_or_new",
    "axes_size_pt",
    "count_of",
    "new_figure",
    "root_figure",
    "set_title",
    "short_duration",
    "show_message",
    "time_axis",
]

# Font sizes in points come from the type scale (plots.style): FONT answers for the scale in
# force, so every figure here follows ``type_scale("projector")`` without knowing about it.

#: gid of the text that says a plot aggregated or thinned what it shows.
NOTE_GID = "note"
#: gid of the text shown instead of a plot when there is nothing to draw.
MESSAGE_GID = "message"


class LabFigure(Figure):
    """A matplotlib Figure that shows itself as a PNG when a notebook cell ends with it.

    The plots never use ``pyplot``, so IPython's inline backend may never have
    registered a display for figures; ``_repr_png_`` makes one unnecessary,
    without touching IPython at import time.
    """

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        # no bbox_inches="tight": constrained layout already fits the figure, and a tight
        # box costs a second full draw (a summary page: 3.8 s -> 2.4 s, median of 3, busy VM)
        self.savefig(buffer, format="png")
        return buffer.getvalue()


def new_figure(figsize: tuple[float, float] = (9.0, 5.0), **kwargs: object) -> LabFigure:
    """A Figure with constrained layout, no pyplot, that displays itself in Jupyter.

    Compose several plots on one page with it (``ax=fig.add_subplot(...)``)
    and end the cell with ``fig``.

    >>> fig = new_figure((4, 3))
    >>> fig._repr_png_()[:4]
    b'\\x89PNG'
    """
    kwargs.setdefault("layout", "constrained")
    return LabFigure(figsize=figsize, **kwargs)  # type: ignore[arg-type]


def axes_or_new(ax: Axes | None, figsize: tuple[float, float]) -> Axes:
    """``ax`` itself, or the single Axes of a new :class:`LabFigure`."""
    if ax is None:
        ax = new_figure(figsize).add_subplot()
    # tick labels are made when the figure is drawn, maybe later: give them the scale's size now
    ax.tick_params(labelsize=FONT["small"])
    return ax


def root_figure(ax: Axes) -> Figure:
    """The top Figure of ``ax`` (through any SubFigures)."""
    fig = ax.figure
    while isinstance(fig, SubFigure):
        fig = fig.figure
    return fig


#: A figure attribute a page sets while its layout has run once, so that :func:`axes_size_pt`
#: reads an Axes' real place (see :func:`~tempsched_lab.plots.plot_summary`).
LAID_OUT = "_tsl_laid_out"


def axes_size_pt(ax: Axes) -> tuple[float, float]:
    """Width and height in points of the space ``ax`` will get, estimated before layout.

    Plots use it to decide how much to write (lanes that fit, legend columns,
    note wrapping) before anything is drawn. Under constrained layout the Axes
    gets its whole grid cell (the subplot margins are ignored), less the room
    its own title, labels and legend take, which each caller allows for.
    """
    fig = root_figure(ax)
    box = ax.get_position(original=True)  # not shrunk to an equal aspect yet
    width, height = box.width, box.height
    laid_out = getattr(fig, LAID_OUT, False)  # the layout ran: the position is the real one
    if isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine) and not laid_out:
        pars = fig.subplotpars
        width /= max(pars.right - pars.left, 0.1)
        height /= max(pars.top - pars.bottom, 0.1)
    return width * fig.get_figwidth() * 72.0, height * fig.get_figheight() * 72.0


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
        fontsize=FONT["title"],
        color=NEUTRAL["line"],
        gid=MESSAGE_GID,
    )


def add_note(ax: Axes, text: str) -> Text:
    """A short italic note just above the plot area, under the title.

    Plots use it to say what they aggregated or left out, so that a reader
    never mistakes a summary for the whole data. Long notes are wrapped to
    the width of the Axes.
    """
    width_pt, _ = axes_size_pt(ax)
    # the layout later gives part of the width to labels and legends: wrap at 3/4 of it
    chars = max(40, int(0.75 * width_pt / (0.55 * FONT["small"])))
    wrapped = "\n".join(textwrap.fill(part, chars) for part in text.split("\n"))
    return ax.annotate(
        wrapped,
        xy=(0.0, 1.0),
        xycoords="axes fraction",
        xytext=(0, 4),
        textcoords="offset points",
        ha="left",
        va="bottom",
        fontsize=FONT["small"],
        style="italic",
        color=NEUTRAL["ink"],
        gid=NOTE_GID,
        annotation_clip=False,
    )


def set_title(
    ax: Axes, title: str, note: str | None = None, *, share: float = 0.95, **kwargs: object
) -> Text | None:
    """Set the title and, when given, a note between the title and the plot (see :func:`add_note`).

    A title longer than ``share`` of the Axes' width is wrapped (pass less when
    a legend beside the Axes takes part of the width). Returns the note's
    Text, or ``None``.
    """
    kwargs.setdefault("fontsize", FONT["title"])
    width_pt, _ = axes_size_pt(ax)
    chars = max(30, int(share * width_pt / (0.6 * float(kwargs["fontsize"]))))  # type: ignore[arg-type]
    title = "\n".join(textwrap.wrap(title, chars, break_long_words=False)) or title
    if not note:
        ax.set_title(title, **kwargs)  # type: ignore[arg-type]
        return None
    text = add_note(ax, note)
    lines = text.get_text().count("\n") + 1
    ax.set_title(title, pad=8 + FONT["small"] * 1.3 * lines, **kwargs)  # type: ignore[arg-type]
    return text


def time_axis(ax: Axes, scale: TimeScale) -> None:
    """Label and format the x axis of values drawn as ``scale.rel(t)``: the one time language."""
    ax.xaxis.set_major_formatter(scale.tick_formatter())
    locator = scale.tick_locator()
    if locator is not None:  # wall style: ticks on round wall-clock times (days, hours...)
        ax.xaxis.set_major_locator(locator)
    ax.set_xlabel(scale.axis_label(), fontsize=FONT["label"])


def short_duration(seconds: float) -> str:
    """A round duration as people write it: ``0.5 s``, ``20 ms``, ``250 µs``, ``2 min``.

    >>> short_duration(0.5), short_duration(0.02), short_duration(0.00025), short_duration(120)
    ('0.5 s', '20 ms', '250 µs', '2 min')
    """
    size = abs(seconds)
    if size >= 120 and seconds % 60 == 0:
        return f"{seconds / 60:g} min"
    if size >= 0.1 or size == 0:
        return f"{seconds:.4g} s"
    if size >= 1e-3:
        return f"{seconds * 1e3:.4g} ms"
    return f"{seconds * 1e6:.4g} µs"


def count_of(n: int, noun: str, plural: str | None = None) -> str:
    """``1 decision``, ``2 decisions``, ``1,000 entries`` (``plural`` when not noun + "s").

    >>> count_of(1, "decision"), count_of(2, "decision"), count_of(1000, "entry", "entries")
    ('1 decision', '2 decisions', '1,000 entries')
    """
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"
