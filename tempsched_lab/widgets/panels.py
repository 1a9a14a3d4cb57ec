"""The dashboard's panels by name: each registered once, and the layout built from the registry.

A panel class is registered with :func:`register_panel` (a class decorator,
next to the class), under its :attr:`Panel.name <tempsched_lab.widgets.Panel.name>`,
with its place in a dashboard: its ``order`` (top to bottom) and its ``width``
in a row of two (a panel without one spans the page). A
:class:`~tempsched_lab.widgets.Dashboard` builds the panels it is asked for from
here and lays them out with :func:`layout_rows`, so a registered panel is shown
without being added anywhere else; ``docs/widgets.md`` (*Adding a dashboard
panel*) has a worked example.

>>> [spec.name for spec in panel_specs()][:3]
['controls', 'queue', 'timeline']
>>> layout_rows(["controls", "queue", "timeline", "tree", "log", "history"])
[['controls', 'queue'], ['timeline'], ['tree', 'log'], ['history']]
>>> panel_spec("clock")
Traceback (most recent call last):
...
ValueError: panel 'clock': no panel of that name; registered: ['controls', 'queue', \
'timeline', 'predict', 'tree', 'log', 'history']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from ._base import Panel

__all__ = [
    "PANELS",
    "PanelSpec",
    "default_panels",
    "layout_rows",
    "panel_spec",
    "panel_specs",
    "register_panel",
    "unregister_panel",
]

_P = TypeVar("_P", bound="type[Panel]")


@dataclass(frozen=True)
class PanelSpec:
    """A registered panel: its class and its place in a dashboard."""

    #: the panel's name (its class's ``name``): ``panels=`` and ``dashboard.<name>`` use it
    name: str
    #: the panel's class: ``cls(scheduler, source=..., scale=..., **options)``
    cls: type[Panel]
    #: its place in the layout, top to bottom (ties: the order of registration)
    order: float
    #: CSS pixels it wants in a row of two (a third more in projector type); ``None``: it
    #: spans the page in a row of its own
    width: int | None
    #: a dashboard shows it when ``panels=`` is not given
    default: bool
    #: ``Dashboard(..., teaching=True)`` adds it
    teaching: bool


_SPECS: dict[str, PanelSpec] = {}
_PANELS: dict[str, type[Panel]] = {}
#: Panel name -> class, in layout order (read only; register with :func:`register_panel`).
PANELS: Mapping[str, type[Panel]] = MappingProxyType(_PANELS)


def register_panel(
    *, order: float, width: int | None = None, default: bool = True, teaching: bool = False
) -> Callable[[_P], _P]:
    """Register the decorated :class:`~tempsched_lab.widgets.Panel` subclass as a dashboard panel.

    Args:
        order: its place in a dashboard, top to bottom (the built-in panels use
            10, 20, ... 70: pick a number between two to put a panel between them).
        width: the CSS pixels it wants beside another panel (its picture's
            width, say); ``None``: it spans the page in a row of its own.
        default: shown by a dashboard that is not given ``panels=``.
        teaching: added by ``Dashboard(..., teaching=True)``.

    The name is the class's ``name`` attribute. Registering another class under
    a name taken (or a class that kept the base class's name) is an error
    naming it; the same class defined again (a notebook cell run twice)
    replaces its first version.
    """
    if width is not None and (isinstance(width, bool) or not isinstance(width, int) or width <= 0):
        raise ValueError(f"width={width!r}: expected CSS pixels (an int > 0) or None")

    def register(cls: _P) -> _P:
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name or name == "panel":
            raise ValueError(f"{cls.__name__}: give the panel class a name (name = '...')")
        old = _SPECS.get(name)
        if old is not None and _where(old.cls) != _where(cls):
            raise ValueError(f"panel {name!r}: registered already ({_where(old.cls)})")
        # the same class defined again (a notebook cell run twice) replaces its first version
        _SPECS.pop(name, None)
        _SPECS[name] = PanelSpec(name, cls, float(order), width, default, teaching)
        ordered = sorted(_SPECS.values(), key=lambda spec: spec.order)  # stable: ties keep order
        _SPECS.clear()
        _SPECS.update((spec.name, spec) for spec in ordered)
        _PANELS.clear()
        _PANELS.update((spec.name, spec.cls) for spec in ordered)
        return cls

    return register


def unregister_panel(name: str) -> PanelSpec:
    """Remove panel ``name`` from the registry (dashboards made later do not show it)."""
    spec = panel_spec(name)
    del _SPECS[name]
    del _PANELS[name]
    return spec


def _where(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def panel_specs() -> list[PanelSpec]:
    """Every registered panel, in layout order."""
    return list(_SPECS.values())


def panel_spec(name: str) -> PanelSpec:
    """The registered panel ``name``; a clear error naming it (and the registered ones) if none."""
    spec = _SPECS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ValueError(f"panel {name!r}: no panel of that name; registered: {list(_SPECS)}")
    return spec


def default_panels(*, teaching: bool = False) -> list[str]:
    """The panels a dashboard shows when it is not given ``panels=`` (in layout order)."""
    return [s.name for s in _SPECS.values() if s.default or (teaching and s.teaching)]


def layout_rows(names: Iterable[str]) -> list[list[str]]:
    """The dashboard's rows for the panels ``names``: in layout order, two to a row where both
    have a ``width`` and follow each other, one to a row otherwise.

    Unknown names are an error naming them (:func:`panel_spec`).
    """
    specs = sorted((panel_spec(n) for n in dict.fromkeys(names)), key=_place)
    rows: list[list[str]] = []
    for spec in specs:
        last = rows[-1] if rows else None
        if (
            last is not None
            and len(last) == 1
            and spec.width is not None
            and _SPECS[last[0]].width is not None
        ):
            last.append(spec.name)
        else:
            rows.append([spec.name])
    return rows


def _place(spec: PanelSpec) -> int:
    return list(_SPECS).index(spec.name)
