"""The widgets' type scale: ``"default"`` (text of 12 px and up) or ``"projector"`` (16 px and up).

One setting moves every text of a view: the HTML of the panels (a style sheet
keyed on the class ``tsl-projector`` of the view's root), the canvas of the
interactive timeline (its ``type_scale`` trait) and the matplotlib pictures
(:mod:`tempsched_lab.plots.style`, drawn a third larger so the bigger type
fits). ``Dashboard(..., scale="projector")``, ``SideBySide(..., scale=...)``,
every panel's ``scale=`` and the **projector** toggle in the page set it.

>>> check_scale("projector"), MIN_PX["projector"]
('projector', 16)
>>> check_scale("huge")
Traceback (most recent call last):
...
ValueError: scale='huge': expected one of ['default', 'projector']
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as W

from ..plots.style import PROJECTOR, SCALES, check_scale, resolve_scale

__all__ = [
    "FIELD_CLASS",
    "MIN_PX",
    "PROJECTOR",
    "PROJECTOR_CLASS",
    "SCALES",
    "TEXT_PAIRS",
    "THEME_CSS",
    "ZOOM",
    "check_scale",
    "contrast_ratio",
    "off_page",
    "on_page",
    "projector_toggle",
    "resolve_scale",
    "set_page_scale",
    "show_scale",
    "theme_colors",
    "theme_tint",
    "tinted",
    "type_css",
]

#: The smallest text of each scale, in CSS pixels (HTML, canvas and pictures alike).
MIN_PX = {"default": 12, "projector": 16}
#: How much larger pictures are drawn in each scale (their type grows by about as much).
ZOOM = {"default": 1.0, "projector": 4.0 / 3.0}
#: The class of a view's root element in projector type.
PROJECTOR_CLASS = "tsl-projector"
#: The class of a form's labelled fields: in projector type their labels share one width (in
#: ``em``: the longest, "takes (s)", fits at 16 px), so the inputs line up in columns.
FIELD_CLASS = "tsl-field"

# Inline styles in the panels' HTML set 12-14 px; in projector type every text of the view is
# 16 px (titles and headings larger), the widgets' own controls included (--jp-widgets-*).
_CSS = """<style>
.tsl-projector { --jp-widgets-font-size: 16px; --jp-ui-font-size1: 16px;
  --jp-widgets-inline-height: 34px; --jp-widgets-inline-label-width: 110px; }
.tsl-projector, .tsl-projector * { font-size: 16px !important; line-height: 1.35; }
.tsl-projector .tsl-title b { font-size: 20px !important; }
.tsl-projector h3 { font-size: 24px !important; }
.tsl-projector .widget-button, .tsl-projector .jupyter-button { height: auto; min-height: 34px; }
.tsl-projector .tsl-table td, .tsl-projector .tsl-table th { padding: 2px 8px; }
.tsl-projector .widget-label { width: auto !important; max-width: none !important; }
.tsl-projector .tsl-field { width: 15em !important; }
.tsl-projector .tsl-field .widget-label { width: 5.6em !important; min-width: 5.6em; }
</style>"""


#: The theme's colours (CSS variables ``--tsl-*``, light by default, dark where the host says so).
THEME_CSS = (Path(__file__).with_name("static") / "theme.css").read_text(encoding="utf-8")


#: Every text colour of the theme and the backgrounds it is drawn on: each pair meets 4.5:1.
TEXT_PAIRS = [
    ("--tsl-fg", "--tsl-bg"),
    ("--tsl-fg", "--tsl-panel-bg"),
    ("--tsl-muted", "--tsl-bg"),
    ("--tsl-muted", "--tsl-panel-bg"),
    ("--tsl-accent-fg", "--tsl-accent"),
    ("--tsl-head-fg", "--tsl-head-bg"),
    ("--tsl-ok", "--tsl-bg"),
    ("--tsl-late", "--tsl-bg"),
    ("--tsl-fail", "--tsl-bg"),
    ("--tsl-fail", "--tsl-panel-bg"),
]


def _hex6(color: str) -> str:
    text = color.strip().lstrip("#")
    if len(text) == 3:
        text = "".join(c * 2 for c in text)
    if not re.fullmatch(r"[0-9a-fA-F]{6}", text):
        raise ValueError(f"color={color!r}: expected #rgb or #rrggbb")
    return text


def _luminance(color: str) -> float:
    text = _hex6(color)
    channels = [int(text[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(fg: str, bg: str) -> float:
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours (1 to 21; AA text needs 4.5).

    >>> round(contrast_ratio("#000000", "#ffffff"), 1), round(contrast_ratio("#777", "#fff"), 2)
    (21.0, 4.48)
    """
    a, b = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def theme_colors(css: str | None = None) -> dict[str, dict[str, str]]:
    """The theme's variables, ``{"light": {name: colour}, "dark": {...}}``, read from ``css``
    (default :data:`THEME_CSS`): the first rule block is light, the second dark.

    >>> theme_colors()["light"]["--tsl-bg"], theme_colors()["dark"]["--tsl-bg"]
    ('#ffffff', '#1e1e1e')
    """
    text = THEME_CSS if css is None else css
    blocks = re.findall(r"\{([^}]*)\}", re.sub(r"/\*.*?\*/", "", text, flags=re.S))
    if len(blocks) < 2:
        raise ValueError("css: expected a light and a dark rule block")
    found = [dict(re.findall(r"(--tsl-[\w-]+)\s*:\s*([^;]+);", b)) for b in blocks[:2]]
    return {  # colours only (not --tsl-tint, a percentage: see :func:`theme_tint`)
        theme: {k: v.strip() for k, v in values.items() if v.strip().startswith("#")}
        for theme, values in zip(("light", "dark"), found, strict=True)
    }


def theme_tint(css: str | None = None) -> dict[str, float]:
    """How much of a pale fill each theme mixes into its background (``--tsl-tint``, 0 to 1).

    >>> theme_tint()
    {'light': 0.6, 'dark': 0.25}
    """
    text = re.sub(r"/\*.*?\*/", "", THEME_CSS if css is None else css, flags=re.S)
    blocks = re.findall(r"\{([^}]*)\}", text)[:2]
    found = [re.search(r"--tsl-tint\s*:\s*([\d.]+)%", b) for b in blocks]
    if len(found) < 2 or not all(found):
        raise ValueError("css: expected --tsl-tint in the light and the dark rule block")
    pairs = zip(("light", "dark"), found, strict=True)
    return {theme: float(m.group(1)) / 100 for theme, m in pairs if m}


def tinted(fill: str, background: str, amount: float) -> str:
    """``color-mix(in srgb, fill amount, background)`` as ``#rrggbb`` (what the page paints).

    >>> tinted("#ffffff", "#000000", 0.25)
    '#404040'
    """
    a, b = _hex6(fill), _hex6(background)
    return "#" + "".join(
        f"{round(int(a[i : i + 2], 16) * amount + int(b[i : i + 2], 16) * (1 - amount)):02x}"
        for i in (0, 2, 4)
    )


def type_css() -> str:
    """The style sheet every view carries (in its first HTML): what ``tsl-projector`` changes,
    and the theme's colours (``static/theme.css``)."""
    return _CSS.replace("<style>", "<style>\n" + THEME_CSS, 1)


def show_scale(box: W.Widget, scale: str, toggle: W.ToggleButton | None = None) -> None:
    """Give ``box`` the class of ``scale`` (``tsl-projector`` or none); set ``toggle`` to match."""
    if scale == PROJECTOR:
        box.add_class(PROJECTOR_CLASS)
    else:
        box.remove_class(PROJECTOR_CLASS)
    if toggle is not None and toggle.value != (scale == PROJECTOR):
        toggle.value = scale == PROJECTOR


#: Every view of this kernel's page that a projector toggle switches: ``{view: switch}``, where
#: ``switch(view, scale)`` sets it (weak: a view no longer referenced drops out by itself).
_PAGE: weakref.WeakKeyDictionary[Any, Callable[[Any, str], Any]] = weakref.WeakKeyDictionary()
_SWITCHING: list[bool] = [False]


def on_page(view: Any, switch: Callable[[Any, str], Any] | None = None) -> None:
    """Let the page's projector toggles switch ``view`` too (by ``switch(view, scale)``;
    default: ``view.set_scale(scale)``). Dashboards, side-by-side pairs, panels shown alone
    and interactive timelines call it when made, so one toggle sizes the whole page."""
    _PAGE[view] = switch if switch is not None else (lambda v, scale: v.set_scale(scale))


def off_page(view: Any) -> None:
    """Forget ``view`` (closed): the toggles no longer switch it."""
    _PAGE.pop(view, None)


def set_page_scale(scale: str) -> None:
    """Switch every view of the page to ``scale``: what a **projector** toggle does.

    A view that fails to switch is left as it is; the others still switch.

    >>> set_page_scale("projector"); set_page_scale("default")
    """
    scale = check_scale(scale)
    if _SWITCHING[0]:  # a toggle set to match by this switch calls back: already under way
        return
    _SWITCHING[0] = True
    try:
        for view, switch in list(_PAGE.items()):
            if getattr(view, "closed", False):
                continue
            try:
                switch(view, scale)
            except Exception:  # one broken view must not keep the rest of the page unswitched
                continue
    finally:
        _SWITCHING[0] = False


def projector_toggle(scale: str, switch: Callable[[str], Any]) -> W.ToggleButton:
    """The **projector** toggle: on calls ``switch("projector")``, off ``switch("default")``,
    then switches every other view of the page the same way (:func:`set_page_scale`)."""
    toggle = W.ToggleButton(
        value=scale == PROJECTOR,
        description="projector",
        tooltip="text of 16 px and more everywhere (for a class); off: 12 px and more",
        layout=W.Layout(width="auto", flex="0 0 auto"),
    )
    toggle.add_class("tsl-projector-toggle")

    def toggled(change: dict[str, Any]) -> None:
        scale = PROJECTOR if change["new"] else "default"
        switch(scale)
        set_page_scale(scale)

    toggle.observe(toggled, names="value")
    return toggle
