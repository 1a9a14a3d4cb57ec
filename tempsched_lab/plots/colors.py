"""The one colour mapping every plot uses: per decision case, per outcome, per measure.

The eight case colours are the Okabe-Ito palette (Okabe & Ito 2008), chosen to
stay distinguishable for the common forms of colour blindness. Outcomes and
lateness measures reuse the same eight colours with a fixed meaning each, so a
colour never means two things inside one figure.

>>> case_color(3)
'#56B4E9'
>>> outcome_color("failed")
'#D55E00'
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..decision import Case

__all__ = [
    "CASE_COLORS",
    "MEASURE_COLORS",
    "NEUTRAL",
    "OKABE_ITO",
    "OUTCOMES",
    "OUTCOME_COLORS",
    "case_color",
    "case_label",
    "outcome_color",
    "text_color_on",
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

#: Lateness measure -> colour (see :func:`tempsched_lab.lateness_summary`).
MEASURE_COLORS: Mapping[str, str] = MappingProxyType(
    {
        "total": OKABE_ITO["blue"],
        "scheduling": OKABE_ITO["orange"],
        "queueing": OKABE_ITO["sky blue"],
        "queue size": OKABE_ITO["blue"],
        "head size": OKABE_ITO["orange"],
    }
)

#: Greys for structure: lines, waiting, text, unknown values.
NEUTRAL: Mapping[str, str] = MappingProxyType(
    {
        "ink": "#222222",
        "line": "#555555",
        "wait": "#BBBBBB",
        "faint": "#E6E6E6",
        "unknown": "#999999",
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


def text_color_on(color: str) -> str:
    """Black or white, whichever reads better on a ``#RRGGBB`` background.

    >>> text_color_on("#000000"), text_color_on("#F0E442")
    ('white', 'black')
    """
    r, g, b = (int(color[i : i + 2], 16) / 255 for i in (1, 3, 5))
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "black" if luminance > 0.4 else "white"
