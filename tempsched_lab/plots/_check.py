"""Readability checks of a rendered figure: overlapping text, tiny text, raw epoch numbers,
text under an arrow's line, text leaving its box.

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

import itertools
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
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch
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
    "texts_on_lines",
    "texts_outside",
    "texts_outside_boxes",
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


def _patches(fig: Figure, kind: type[Patch]) -> list[Patch]:
    """The visible patches of ``kind`` the figure's axes draw (annotation arrows included)."""
    found: list[Patch] = []
    for ax in fig.axes:
        for artist in [*ax.patches, *ax.texts]:
            patch = getattr(artist, "arrow_patch", None) if isinstance(artist, Text) else artist
            if isinstance(patch, kind) and patch.get_visible():
                found.append(patch)
    return found


def texts_on_lines(fig: Figure, texts: list[DrawnText]) -> list[tuple[DrawnText, str]]:
    """Texts that an arrow's line (its drawn width included) runs through: ``(text, arrow gid)``.

    Call after :func:`drawn_texts` (the figure is drawn). Each arrow's path is sampled every
    pixel in display space; a text is hit when a sample, widened by half the line (and the
    casing of a highlighted path), falls inside its box by more than a pixel.
    """
    hits: list[tuple[DrawnText, str]] = []
    for arrow in _patches(fig, FancyArrowPatch):
        # the arrow as drawn, in display pixels (its line, then its head), as polylines
        paths, _ = arrow._get_path_in_displaycoord()  # type: ignore[attr-defined]
        lines = [line for p in paths for line in p.to_polygons(closed_only=False)]
        effects = [
            float(getattr(e, "_gc", {}).get("linewidth", 0)) for e in arrow.get_path_effects()
        ]
        half = max([arrow.get_linewidth(), *effects]) * fig.dpi / 72.0 / 2
        samples = []
        for verts in lines:
            for a, b in itertools.pairwise(verts):
                n = max(2, int(np.hypot(*(b - a))) + 1)
                samples.append(a + np.linspace(0.0, 1.0, n)[:, None] * (b - a))
        if not samples:
            continue
        points = np.concatenate(samples)
        clip = arrow.get_clip_box() if arrow.get_clip_on() else None
        if clip is not None:  # what the clip box hides is not drawn
            points = points[
                (points[:, 0] >= clip.x0)
                & (points[:, 0] <= clip.x1)
                & (points[:, 1] >= clip.y0)
                & (points[:, 1] <= clip.y1)
            ]
        for text in texts:
            box = text.bbox
            inside = (
                (points[:, 0] > box.x0 - half + _TOLERANCE_PX)
                & (points[:, 0] < box.x1 + half - _TOLERANCE_PX)
                & (points[:, 1] > box.y0 - half + _TOLERANCE_PX)
                & (points[:, 1] < box.y1 + half - _TOLERANCE_PX)
            )
            if inside.any():
                hits.append((text, str(arrow.get_gid() or "an arrow")))
    return hits


def texts_outside_boxes(fig: Figure, texts: list[DrawnText]) -> list[tuple[DrawnText, str]]:
    """Texts centred in a rounded box (a flowchart's) that reach past its edges, and texts
    outside a box that the box, drawn above them, partly hides.

    Call after :func:`drawn_texts`. Returns ``(text, box gid)`` pairs.
    """
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    out: list[tuple[DrawnText, str]] = []
    for patch in _patches(fig, FancyBboxPatch):
        box = patch.get_window_extent(renderer)
        for text in texts:
            t = text.bbox
            cx, cy = (t.x0 + t.x1) / 2, (t.y0 + t.y1) / 2
            if not (box.x0 < cx < box.x1 and box.y0 < cy < box.y1):
                # a text outside the box that the box, drawn over it, hides in part
                over = patch.get_zorder() > text.artist.get_zorder()
                wide = min(t.x1, box.x1) - max(t.x0, box.x0)
                tall = min(t.y1, box.y1) - max(t.y0, box.y0)
                if over and wide > _TOLERANCE_PX and tall > _TOLERANCE_PX:
                    out.append((text, str(patch.get_gid() or "a box")))
                continue
            slack = _TOLERANCE_PX
            if (
                t.x0 < box.x0 - slack
                or t.x1 > box.x1 + slack
                or t.y0 < box.y0 - slack
                or t.y1 > box.y1 + slack
            ):
                out.append((text, str(patch.get_gid() or "a box")))
    return out


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
    problems += [f"a line runs through {t!r} ({gid})" for t, gid in texts_on_lines(fig, texts)]
    problems += [f"{t!r} crosses the box {gid}" for t, gid in texts_outside_boxes(fig, texts)]
    return problems
