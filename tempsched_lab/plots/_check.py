"""Readability checks of a rendered figure: overlapping text, tiny text, raw epoch numbers.

The figure is drawn once with an Agg canvas while every :class:`~matplotlib.text.Text`
that actually reaches the renderer is recorded with its bounding box; tick
labels outside the view, empty strings and invisible texts are never drawn and
so never checked. The tests run these checks on every public plot over small,
big, empty and real-clock logs; ``docs/gallery.py`` runs them on every image.

>>> from tempsched_lab.plots import example_frame, plot_timeline
>>> figure_problems(plot_timeline(example_frame()).figure)
[]
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.image import imsave
from matplotlib.text import Text
from matplotlib.transforms import Bbox

__all__ = [
    "MIN_TEXT_PX",
    "DrawnText",
    "drawn_texts",
    "figure_problems",
    "raw_epoch_texts",
    "small_texts",
    "text_overlaps",
    "texts_outside",
]

#: The smallest text height (font size in pixels) a figure may use at its own dpi: the
#: default type scale's floor (plots.style: 9 pt, 12.5 px at 100 dpi), rounded down.
MIN_TEXT_PX = 12.0
#: Pixels two boxes may share before they count as overlapping (anti-aliased edges).
_TOLERANCE_PX = 1.0
#: What a raw clock value (epoch seconds, a wheel's absolute round or tick) reads like: 7 or
#: more digits before the point, a big exponent, or a grouped number of 10 or more digits.
_RAW_NUMBER = re.compile(
    r"(?<![\w.,])[-+]?\d{7,}(?:\.\d*)?(?![\w,])"  # 1796073853.24
    r"|\de\+?0*(?:[6-9]|\d\d)\b"  # 1.796e+09
    r"|r\d{5,}"  # r449018630
    r"|\d{1,3}(?:,\d{3}){3,}"  # 179,607,990,548 (a tick count since 1970)
)


@dataclass(frozen=True)
class DrawnText:
    """A text as drawn: its string, its box in display pixels, its size in pixels."""

    artist: Text
    text: str
    bbox: Bbox
    size_px: float

    def __repr__(self) -> str:
        box = self.bbox
        return f"{self.text!r} at ({box.x0:.0f}, {box.y0:.0f})-({box.x1:.0f}, {box.y1:.0f}) px"


@contextmanager
def _recording() -> Iterator[list[Text]]:
    drawn: list[Text] = []
    original = Text.draw

    def draw(self: Text, renderer: Any) -> None:
        if self.get_visible() and self.get_text().strip():
            drawn.append(self)
        original(self, renderer)

    Text.draw = draw  # type: ignore[method-assign,assignment]
    try:
        yield drawn
    finally:
        Text.draw = original  # type: ignore[method-assign]


def drawn_texts(fig: Figure, save_to: str | Path | None = None) -> list[DrawnText]:
    """Every non-empty text the figure draws, with its box (draws the figure once).

    ``save_to``: also write that drawing as a PNG (no second draw).
    """
    canvas = FigureCanvasAgg(fig)
    with _recording() as drawn:
        canvas.draw()  # type: ignore[no-untyped-call]
    if save_to is not None:
        # the pixels just drawn, written as they are: one draw for the check and the file
        pixels = np.asarray(canvas.buffer_rgba())  # type: ignore[no-untyped-call]
        imsave(save_to, pixels, format="png", dpi=fig.dpi)
    renderer = canvas.get_renderer()  # type: ignore[no-untyped-call]
    out = []
    seen: set[int] = set()
    for artist in drawn:
        if id(artist) in seen:
            continue
        seen.add(id(artist))
        box: Bbox | None = artist.get_window_extent(renderer)
        clip = artist.get_clip_box() if artist.get_clip_on() else None
        if clip is not None and box is not None:
            box = Bbox.intersection(box, clip)
        if box is None:
            continue
        size_px = float(artist.get_fontsize()) * fig.dpi / 72.0
        out.append(DrawnText(artist, artist.get_text(), box, size_px))
    return out


def text_overlaps(texts: list[DrawnText]) -> list[tuple[DrawnText, DrawnText]]:
    """Pairs of drawn texts whose boxes overlap (by more than a pixel each way)."""
    if len(texts) < 2:
        return []
    boxes = np.array([[t.bbox.x0, t.bbox.y0, t.bbox.x1, t.bbox.y1] for t in texts])
    x0, y0, x1, y1 = (boxes[:, i] for i in range(4))
    wide = np.minimum(x1[:, None], x1[None, :]) - np.maximum(x0[:, None], x0[None, :])
    tall = np.minimum(y1[:, None], y1[None, :]) - np.maximum(y0[:, None], y0[None, :])
    hit = (wide > _TOLERANCE_PX) & (tall > _TOLERANCE_PX)
    i, j = np.nonzero(np.triu(hit, k=1))
    return [(texts[a], texts[b]) for a, b in zip(i, j, strict=True)]


def small_texts(texts: list[DrawnText], min_px: float = MIN_TEXT_PX) -> list[DrawnText]:
    """Texts whose font is smaller than ``min_px`` pixels at the figure's dpi."""
    return [t for t in texts if t.size_px < min_px - 1e-6]


def raw_epoch_texts(texts: list[DrawnText]) -> list[DrawnText]:
    """Texts that print a raw clock value (``1796073853.24``, ``1.796e+09``, ``r449018630``)."""
    return [t for t in texts if _RAW_NUMBER.search(t.text)]


def texts_outside(fig: Figure, texts: list[DrawnText]) -> list[DrawnText]:
    """Texts that run off the figure's edges (cut off in the saved image)."""
    width, height = fig.bbox.width, fig.bbox.height
    slack = _TOLERANCE_PX
    return [
        t
        for t in texts
        if t.bbox.x0 < -slack
        or t.bbox.y0 < -slack
        or t.bbox.x1 > width + slack
        or t.bbox.y1 > height + slack
    ]


def figure_problems(
    fig: Figure, min_px: float = MIN_TEXT_PX, save_to: str | Path | None = None
) -> list[str]:
    """Everything these checks find wrong with ``fig``, one sentence each (``[]``: readable).

    ``save_to``: write the checked drawing there as a PNG as well.
    """
    texts = drawn_texts(fig, save_to)
    problems = [f"texts overlap: {a!r} and {b!r}" for a, b in text_overlaps(texts)]
    problems += [f"text under {min_px:g} px: {t!r}" for t in small_texts(texts, min_px)]
    problems += [f"raw clock value: {t!r}" for t in raw_epoch_texts(texts)]
    problems += [f"text cut off at the figure's edge: {t!r}" for t in texts_outside(fig, texts)]
    return problems
