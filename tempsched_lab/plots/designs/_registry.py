"""Each queue design's picture, registered once and found by the design's name everywhere.

A picture is a function ``draw(snapshot, *, ax=None, time_scale=None,
highlight=None, title=None, **options) -> Axes`` decorated with
:func:`design_picture`, which records where the widgets show it (its size in a
dashboard's half column, whether a panel shows it unasked). The design names
are the queue registry's (:data:`tempsched_lab.core.queues.DESIGNS`): a picture for
a design that is not a queue design is refused. :func:`plot_queue
<tempsched_lab.plots.plot_queue>`, the queue and history panels and the figure
catalog all find pictures here, so a new design's picture is one decorated
function in its own module.

>>> picture_of("heap").draw.__name__, picture_of("heap").in_panels
('plot_heap', True)
>>> sorted(PICTURES) == sorted(queue_designs())
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeVar

from matplotlib.axes import Axes

__all__ = ["PICTURES", "DesignPicture", "design_picture", "picture_of", "queue_designs"]

Draw = Callable[..., Axes]
_D = TypeVar("_D", bound=Draw)


@dataclass(frozen=True)
class DesignPicture:
    """How one queue design is drawn, and how the widgets show the picture."""

    #: the design's name in :data:`tempsched_lab.core.queues.DESIGNS`
    design: str
    #: its name in words (figure names, headings): ``"sorted dict"``
    title: str
    #: ``draw(snapshot, *, ax=None, time_scale=None, highlight=None, title=None, ...)``
    draw: Draw
    #: the figure's size in inches (shown at 100 dpi) in a dashboard's half column
    size: tuple[float, float]
    #: the queue and history panels show it unless told otherwise (``picture=None``)
    in_panels: bool
    #: ``draw`` takes ``now=`` (the clock's time: where a wheel's hand points)
    takes_now: bool = False
    #: drawn for designs without a picture of their own (from their time points)
    fallback: bool = False


_PICTURES: dict[str, DesignPicture] = {}
#: Design name -> its picture (read only; register with :func:`design_picture`).
PICTURES: Mapping[str, DesignPicture] = MappingProxyType(_PICTURES)


def queue_designs() -> tuple[str, ...]:
    """The queue designs' names, from the queue registry
    (:data:`tempsched_lab.core.queues.DESIGNS`).

    >>> "wheel" in queue_designs()
    True
    """
    from ...core.queues import DESIGNS

    return tuple(DESIGNS)


def design_picture(
    design: str,
    *,
    title: str,
    size: tuple[float, float],
    in_panels: bool,
    takes_now: bool = False,
    fallback: bool = False,
) -> Callable[[_D], _D]:
    """Register the decorated function as the picture of queue design ``design``.

    Refuses a design the queue registry does not know, a design registered
    twice, and a second fallback.
    """
    designs = queue_designs()
    if design not in designs:
        raise ValueError(
            f"design={design!r}: not a queue design (tempsched_lab.core.queues.DESIGNS has "
            f"{list(designs)})"
        )
    if design in _PICTURES:
        raise ValueError(f"design={design!r}: a picture is registered already")
    if fallback and any(p.fallback for p in _PICTURES.values()):
        raise ValueError(f"design={design!r}: another picture is the fallback already")

    def register(draw: _D) -> _D:
        shape = (float(size[0]), float(size[1]))
        _PICTURES[design] = DesignPicture(
            design, title, draw, shape, in_panels, takes_now, fallback
        )
        return draw

    return register


def picture_of(design: str) -> DesignPicture:
    """The picture of ``design``; a design without one gets the fallback (its time points).

    >>> picture_of("sorteddict").title
    'sorted dict'
    """
    picture = _PICTURES.get(design)
    if picture is not None:
        return picture
    for candidate in _PICTURES.values():
        if candidate.fallback:
            return candidate
    raise LookupError(f"design={design!r}: no picture is registered and none is the fallback")
