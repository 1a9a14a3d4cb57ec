"""The figures' type scale, in one place: every plot reads its font sizes from here.

Two scales: ``"default"`` (no text under 12 px at 100 dpi, the dpi the
dashboard shows pictures at) and ``"projector"`` (no text under 16 px: read
from the back of a classroom). :data:`FONT` is a mapping of role to size in
points that always answers for the scale in force, so a plot that writes
``fontsize=FONT["small"]`` follows the scale without knowing about it.

Choose the scale for a block of drawing with :func:`type_scale` (a context
manager, per thread and per asyncio task), or for the whole session with
:func:`set_type_scale`:

>>> FONT["small"], min_px()
(9.0, 12.5)
>>> with type_scale("projector"):
...     FONT["small"], min_px()
(12.0, 16.666666666666668)
>>> FONT["title"]
12.0
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

__all__ = [
    "FONT",
    "PROJECTOR",
    "SCALES",
    "TYPE_SCALES",
    "current_scale",
    "min_px",
    "rc_params",
    "set_type_scale",
    "type_scale",
]

#: Font sizes in points per scale and role. At 100 dpi a point is 100/72 px: 9 pt is 12.5 px,
#: 12 pt is 16.7 px. ``small`` is the smallest text any figure writes (tick labels, legends,
#: notes, tree edge labels), ``body`` the tree's boxes, ``label`` axis labels, ``title`` titles.
TYPE_SCALES: dict[str, dict[str, float]] = {
    "default": {"small": 9.0, "body": 9.0, "label": 10.0, "title": 12.0},
    "projector": {"small": 12.0, "body": 12.0, "label": 13.0, "title": 15.0},
}
#: The names of the scales.
SCALES = tuple(TYPE_SCALES)
#: The projector scale's name.
PROJECTOR = "projector"
#: The dpi the sizes are meant for (the dashboard's pictures; ``savefig(dpi=100)``).
DPI = 100.0

_DEFAULT = ["default"]  # the session's scale (set_type_scale)
_SCALE: contextvars.ContextVar[str | None] = contextvars.ContextVar("tsl_type_scale", default=None)


def check_scale(name: Any) -> str:
    """``name`` if it is a type scale's name, else a ``ValueError`` naming it.

    >>> check_scale("projector")
    'projector'
    """
    if not isinstance(name, str) or name not in TYPE_SCALES:
        raise ValueError(f"scale={name!r}: expected one of {list(TYPE_SCALES)}")
    return name


def current_scale() -> str:
    """The type scale in force here: the innermost :func:`type_scale`, else the session's."""
    return _SCALE.get() or _DEFAULT[0]


def resolve_scale(name: str | None) -> str:
    """``name`` checked, or the scale in force when ``None`` (what a widget made now uses).

    >>> with type_scale("projector"):
    ...     resolve_scale(None), resolve_scale("default")
    ('projector', 'default')
    """
    return current_scale() if name is None else check_scale(name)


def set_type_scale(name: str) -> None:
    """Use scale ``name`` for every figure drawn from now on (outside a :func:`type_scale`)."""
    _DEFAULT[0] = check_scale(name)


@contextmanager
def type_scale(name: str) -> Iterator[str]:
    """Within the block, figures drawn in this thread (or task) use the scale ``name``."""
    token = _SCALE.set(check_scale(name))
    try:
        yield name
    finally:
        _SCALE.reset(token)


def min_px(scale: str | None = None) -> float:
    """The smallest text of ``scale`` (default: the one in force), in pixels at 100 dpi."""
    sizes = TYPE_SCALES[check_scale(scale) if scale is not None else current_scale()]
    return sizes["small"] * DPI / 72.0


def rc_params(scale: str | None = None) -> dict[str, float]:
    """matplotlib rcParams that put matplotlib's own texts (ticks, legends) on the scale."""
    sizes = TYPE_SCALES[check_scale(scale) if scale is not None else current_scale()]
    return {
        "font.size": sizes["body"],
        "xtick.labelsize": sizes["small"],
        "ytick.labelsize": sizes["small"],
        "legend.fontsize": sizes["small"],
        "axes.labelsize": sizes["label"],
        "axes.titlesize": sizes["title"],
        "figure.titlesize": sizes["title"],
    }


class _Font(Mapping[str, float]):
    """``FONT[role]``: the size in points of ``role`` in the scale in force when it is read."""

    def __getitem__(self, role: str) -> float:
        return TYPE_SCALES[current_scale()][role]

    def __iter__(self) -> Iterator[str]:
        return iter(TYPE_SCALES["default"])

    def __len__(self) -> int:
        return len(TYPE_SCALES["default"])

    def __repr__(self) -> str:
        return f"FONT({current_scale()}: {dict(self)})"


#: Font sizes in points by role (``small``, ``body``, ``label``, ``title``), in the scale in force.
FONT: Mapping[str, float] = _Font()
