"""The one palette of every figure and widget: cases, outcomes, structure, measures.

Rules, so that a colour never means two things on one screen:

* the eight **case colours** (the Okabe-Ito palette, Okabe & Ito 2008, chosen to
  stay distinguishable for the common forms of colour blindness) are reserved
  for decision cases 1-8;
* **outcome colours** reuse them with a fixed meaning each; a picture is coloured
  by case *or* by outcome, never both;
* everything else (lateness measures, queue depth, the queue designs' head and
  entries, the timing wheel's turns, log-table rows) uses **greys and pale
  tints that are not case colours**, told apart by lightness, line style or
  position, and named in a legend or a label.

Widgets import their colours from here (``from tempsched_lab.plots.colors
import ...``), so a panel and a figure side by side agree.

>>> case_color(3)
'#56B4E9'
>>> outcome_color("failed")
'#D55E00'
>>> set(MEASURE_COLORS.values()) & set(CASE_COLORS.values())
set()
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..core.decision import Case
from ..log.kinds import Kind

__all__ = [
    "CASE_COLORS",
    "ENTRY_FILL",
    "HEAD_EDGE",
    "HEAD_FILL",
    "KIND_FILL",
    "MEASURE_COLORS",
    "MEASURE_STYLES",
    "NEUTRAL",
    "OKABE_ITO",
    "OUTCOMES",
    "OUTCOME_COLORS",
    "TURN_COLORS",
    "case_color",
    "case_edge",
    "case_label",
    "outcome_color",
    "text_color_on",
    "tint",
]

#: The Okabe-Ito palette, by name.
OKABE_ITO: Mapping[str, str] = MappingProxyType(
    {
        "vermillion": "#D55E00",
        "blue": "#0072B2",
        "sky blue": "#56B4E9",
        "bluish green": "#009E73",
        "reddish purple": "#CC79A7",
        "orange": "#E69F00",
        "yellow": "#F0E442",
        "black": "#000000",
    }
)

#: Decision case 1-8 -> colour. Case 1 (rejected) gets the warning colour.
CASE_COLORS: Mapping[int, str] = MappingProxyType(
    {
        int(Case.PAST): OKABE_ITO["vermillion"],
        int(Case.EMPTY): OKABE_ITO["blue"],
        int(Case.EARLIER_THAN_HEAD): OKABE_ITO["sky blue"],
        int(Case.NEW_TIME_POINT): OKABE_ITO["bluish green"],
        int(Case.DUPLICATE_OF_HEAD): OKABE_ITO["reddish purple"],
        int(Case.JOINS_HEAD): OKABE_ITO["orange"],
        int(Case.DUPLICATE_IN_QUEUE): OKABE_ITO["yellow"],
        int(Case.JOINS_TIME_POINT): OKABE_ITO["black"],
    }
)

#: The outcomes of a run, in legend order.
OUTCOMES: tuple[str, ...] = (
    "finished",
    "failed",
    "cancelled",
    "dropped",
    "event set",
    "running",
    "pending",
)

#: Outcome of a run -> colour.
OUTCOME_COLORS: Mapping[str, str] = MappingProxyType(
    {
        "finished": OKABE_ITO["bluish green"],
        "failed": OKABE_ITO["vermillion"],
        "cancelled": OKABE_ITO["black"],
        "dropped": OKABE_ITO["reddish purple"],
        "event set": OKABE_ITO["blue"],
        "running": OKABE_ITO["sky blue"],
        "pending": OKABE_ITO["orange"],
    }
)

#: Greys for structure: text, lines, waiting, faint grids, unknown values.
NEUTRAL: Mapping[str, str] = MappingProxyType(
    {
        "ink": "#222222",
        "line": "#555555",
        "wait": "#BBBBBB",
        "faint": "#E6E6E6",
        "unknown": "#999999",
    }
)

#: Lateness measures and queue-depth lines: greys of distinct lightness, never a case colour.
#: (The rows and lines are also labelled, so colour is only a second cue.)
MEASURE_COLORS: Mapping[str, str] = MappingProxyType(
    {
        "total": "#3B3B3B",
        "scheduling": "#7A7A7A",
        "queueing": "#B0B0B0",
        "queue size": "#3B3B3B",
        "head size": "#7A7A7A",
    }
)

#: Line style per measure line (queue depth): the second cue besides lightness.
MEASURE_STYLES: Mapping[str, str] = MappingProxyType(
    {"queue size": "solid", "head size": (0, (4, 2))}  # type: ignore[dict-item]
)

#: The queue designs' head (the time point the worker waits for): a pale amber fill, dark edge.
HEAD_FILL = "#F7DDA6"
#: The head's outline (ink: a strong edge, not a case colour).
HEAD_EDGE = NEUTRAL["ink"]
#: A pending entry that is not at the head.
ENTRY_FILL = "#DCEBF7"

#: Timing wheel: how many turns of the hand before a job fires (0, 1, 2 or more); darker = sooner.
TURN_COLORS: tuple[str, str, str] = ("#222222", "#8C8C8C", "#FFFFFF")

#: Log-table row backgrounds by row kind (widgets' log panel).
KIND_FILL: Mapping[str, str] = MappingProxyType(
    {
        Kind.ERROR: "#F9D5D3",
        Kind.REJECT: "#FCE4C8",
        Kind.CANCEL: "#E8E8E8",
        Kind.SHUTDOWN: "#E8E8E8",
    }
)


def case_color(case: int | Case | None) -> str:
    """The colour of decision case 1-8 (grey for ``None``: input rejected before the tree)."""
    if case is None:
        return NEUTRAL["unknown"]
    return CASE_COLORS[int(case)]


def case_label(case: int | Case) -> str:
    """``"3 earlier than head"``: number and short name, as legends show a case."""
    c = Case(int(case))
    return f"{int(c)} {c.short}"


def outcome_color(outcome: str) -> str:
    """The colour of a run outcome (one of :data:`OUTCOMES`)."""
    try:
        return OUTCOME_COLORS[outcome]
    except KeyError:
        raise ValueError(f"outcome={outcome!r}: expected one of {list(OUTCOMES)}") from None


def _rgb(color: str) -> tuple[float, float, float]:
    if not (isinstance(color, str) and len(color) == 7 and color.startswith("#")):
        raise ValueError(f"color={color!r}: expected '#RRGGBB'")
    r, g, b = (int(color[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return r, g, b


def text_color_on(color: str) -> str:
    """Black or white, whichever reads better on a ``#RRGGBB`` background.

    >>> text_color_on("#000000"), text_color_on("#F0E442")
    ('white', 'black')
    """
    r, g, b = _rgb(color)
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "black" if luminance > 0.4 else "white"


def tint(color: str, amount: float) -> str:
    """``color`` mixed with white (``amount`` 0 = itself, 1 = white), as ``#RRGGBB``.

    >>> tint("#000000", 0.5)
    '#808080'
    """
    if not 0.0 <= amount <= 1.0:
        raise ValueError(f"amount={amount!r}: expected a number in [0, 1]")
    mixed = (c + (1.0 - c) * amount for c in _rgb(color))
    return "#" + "".join(f"{round(c * 255):02X}" for c in mixed)


def case_edge(case: int | Case) -> str:
    """A case's colour as a line *on white*: light colours (case 7's yellow) darkened to read.

    Paths and outlines drawn in a case colour use this; fills use :func:`case_color`.

    >>> case_edge(7), case_edge(2) == case_color(2)
    ('#9C942B', True)
    """
    color = case_color(case)
    r, g, b = _rgb(color)
    if 0.2126 * r + 0.7152 * g + 0.0722 * b <= 0.7:  # only yellow (case 7) is that light
        return color
    return "#" + "".join(f"{round(c * 0.65 * 255):02X}" for c in (r, g, b))
