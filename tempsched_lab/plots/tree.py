"""The 8-case decision tree as a flowchart, drawn from :data:`tempsched_lab.core.decision.TREE`."""

from __future__ import annotations

import functools
import math
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.patches import FancyBboxPatch, Patch
from matplotlib.patheffects import Normal, Stroke, withStroke
from matplotlib.transforms import Affine2D

from ..core.decision import TREE, Case, Decision
from ..reading.analysis import case_counts
from ._axes import FONT, axes_or_new, axes_size_pt, set_title
from ._data import as_frame
from ._legend import Section, add_legend
from .colors import NEUTRAL, case_color, case_edge, case_label, text_color_on, tint

__all__ = ["plot_decision_tree", "tree_layout"]

Node = tuple[str, Any]  # ("question", key) or ("case", Case)
# an edge's label: (start, end, "yes"/"no", on the highlighted path)
_EdgeLabel = tuple[tuple[float, float], tuple[float, float], str, bool]

_Q_WIDTH, _LEAF_WIDTH = 1.3, 0.92  # box widths, in leaf spacings
_MAX_HEIGHT = 0.72  # the tallest a box may be, in level spacings (the rest: edge and its label)
#: Room a legend of the cases takes right of the tree, in points ("7 duplicate in queue" and
#: its colour patch at the scale's small size, with the gaps): reserved when leaves show
#: numbers only, so the boxes are sized for the space the tree really gets
_LEGEND_EM = 16.0


@dataclass(frozen=True)
class _Sizes:
    """Box sizes and text wrapping for the space the tree gets (text keeps its size in points)."""

    q_height: float
    leaf_height: float
    q_widths: dict[str, float]  # each question's box, in leaf spacings: holds its longest line
    q_chars: int
    leaf_chars: int  # 0: leaves show their number only (too little room for their names)
    explain_chars: int
    count_gap: float  # room under a leaf for its count, in level spacings
    line: float  # one line of text, in level spacings
    count_words: bool  # "n = 12" under a leaf (False: too narrow, the number alone)


def _wrap(text: str, chars: int) -> list[str]:
    return textwrap.wrap(text, chars, break_long_words=False)


def leaf_text(case: Case, chars: int) -> str:
    """``"7 duplicate\nin queue"`` wrapped at ``chars``, or ``"7"`` when ``chars`` is 0."""
    return "\n".join(_wrap(f"{int(case)} {case.short}", chars)) if chars else str(int(case))


def _sizes(
    ax: Axes, fontsize: float, levels: int, leaves: int, extra_rows: float, legend_pt: float = 0.0
) -> _Sizes:
    """Wrap widths from the box widths in points, box heights from the lines they hold.

    ``legend_pt``: width a legend beside the tree will take from the Axes. Question boxes
    widen (up to ``_Q_MAX``) until their text fits inside them across and down.
    """
    width_pt, height_pt = axes_size_pt(ax)
    width_pt = max(width_pt - legend_pt, 100.0)
    unit_x = width_pt * 0.92 / (leaves - 1 + (_Q_WIDTH + _LEAF_WIDTH) / 2 + 0.2)
    unit_y = max(height_pt - 40.0, 100.0) / (levels - 1 + _MAX_HEIGHT + extra_rows)
    char = 0.64 * fontsize  # bold on the path
    line = 1.22 * fontsize

    def lines_fit(lines: int) -> bool:
        return (lines * line + 7.0) / unit_y <= _MAX_HEIGHT

    def height(lines: int) -> float:
        return min(_MAX_HEIGHT, (lines * line + 7.0) / unit_y)

    # "n = 1,234" under each leaf while it fits between two leaves, else the number alone
    count_words = unit_x > 0.64 * (fontsize + 0.5) * (len("n = 99,999") + 1)
    base = max(8, int(_Q_WIDTH * unit_x / char) - 1)
    room = _question_room()

    def widths(chars: int) -> dict[str, float]:  # each box: its widest line, bold, and a pad
        return {
            q.key: max(
                _Q_WIDTH, (max(_text_pt(t, fontsize) for t in _wrap(q.text, chars)) + 10.0) / unit_x
            )
            for q in TREE
        }

    def fits(chars: int) -> bool:
        lines = max(len(_wrap(q.text, chars)) for q in TREE)
        # a fifth of the room kept: the layout may narrow the Axes after the sizes are chosen
        return lines_fit(lines) and all(w <= 0.8 * room[k] for k, w in widths(chars).items())

    # the narrowest wrapping whose text fits its boxes across (each box may widen into the room
    # its level leaves it) and down; none: the one that overruns least (a panel too small)
    def overflow(chars: int) -> tuple[bool, float]:  # too tall first, then the widest overrun
        lines = max(len(_wrap(q.text, chars)) for q in TREE)
        return not lines_fit(lines), max(w / room[k] for k, w in widths(chars).items())

    q_chars = next((c for c in range(base, 40) if fits(c)), None)
    if q_chars is None:
        q_chars = min(range(base, 40), key=overflow)
    q_lines = max(len(_wrap(q.text, q_chars)) for q in TREE)
    leaf_chars = max(7, int(_LEAF_WIDTH * unit_x / char) - 1)
    leaf_lines = max(leaf_text(c, leaf_chars).count("\n") + 1 for c in Case)
    too_long = any(len(word) > leaf_chars for c in Case for word in c.short.split())
    if too_long or not lines_fit(leaf_lines):  # no room for names: numbers (the legend has them)
        leaf_chars, leaf_lines = 0, 1
    return _Sizes(
        q_height=height(q_lines),
        leaf_height=height(leaf_lines),
        q_widths=widths(q_chars),
        q_chars=q_chars,
        leaf_chars=leaf_chars,
        explain_chars=max(40, int(width_pt * 0.9 / char)),
        count_gap=(line + 4.0) / unit_y,
        line=line / unit_y,
        count_words=count_words,
    )


@functools.lru_cache(maxsize=512)
def _text_pt(text: str, fontsize: float) -> float:
    """The width of ``text`` in bold at ``fontsize``, in points (as Agg draws it)."""
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    renderer = RendererAgg(10, 10, 72)  # type: ignore[no-untyped-call]
    width, _, _ = renderer.get_text_width_height_descent(  # type: ignore[no-untyped-call]
        text, FontProperties(size=fontsize, weight="bold"), ismath=False
    )
    return float(width)


@functools.lru_cache(maxsize=1)
def _question_room() -> dict[str, float]:
    """The widest each question's box may be, in leaf spacings: up to its nearest neighbour
    on its level (a leaf's box or half another question's room), less a gap."""
    positions, _ = tree_layout()
    room = {}
    for (kind, key), (x, y) in positions.items():
        if kind != "question":
            continue
        limit = 4.0
        for (other_kind, _), (ox, oy) in positions.items():
            if oy != y or ox == x:
                continue
            half = _LEAF_WIDTH / 2 if other_kind == "case" else abs(ox - x) / 2
            limit = min(limit, 2 * (abs(ox - x) - half - 0.08))
        room[str(key)] = limit
    return room


def tree_layout() -> tuple[dict[Node, tuple[float, float]], list[tuple[Node, Node, bool]]]:
    """Positions of the tree's boxes and its edges, computed from ``TREE``.

    Leaves are spaced one unit apart in left-to-right order ("yes" on the
    left); a question sits above the middle of its two answers; each level is
    one unit lower than its parent. Returns ``{node: (x, y)}`` and a list of
    ``(parent, child, answer)`` edges.

    >>> positions, edges = tree_layout()
    >>> len(positions), len(edges)
    (15, 14)
    >>> positions[("case", Case.PAST)]
    (0.0, -1.0)
    """
    by_key = {q.key: q for q in TREE}
    positions: dict[Node, tuple[float, float]] = {}
    edges: list[tuple[Node, Node, bool]] = []
    next_leaf = [0]

    def place(target: str | Case, depth: int) -> tuple[Node, float]:
        if isinstance(target, Case):
            node: Node = ("case", target)
            x = float(next_leaf[0])
            next_leaf[0] += 1
        else:
            node = ("question", target)
            question = by_key[target]
            yes_node, x_yes = place(question.yes, depth + 1)
            no_node, x_no = place(question.no, depth + 1)
            edges.append((node, yes_node, True))
            edges.append((node, no_node, False))
            x = (x_yes + x_no) / 2
        positions[node] = (x, -float(depth))
        return node, x

    place(TREE[0].key, 0)
    return positions, edges


def _counts_of(counts: Any) -> dict[int, int] | None:
    if counts is None:
        return None
    if isinstance(counts, pd.DataFrame):
        if "kind" in counts.columns:  # an event log
            counts = case_counts(counts)
        if not {"case", "count"} <= set(counts.columns):
            raise ValueError("counts: expected an event log frame or case_counts() output")
        return {int(c): int(n) for c, n in zip(counts["case"], counts["count"], strict=True)}
    if isinstance(counts, Mapping):
        return {int(c): int(n) for c, n in counts.items()}
    try:
        return _counts_of(as_frame(counts))  # an EventLog or a Scheduler
    except TypeError:
        raise TypeError(
            f"counts: expected an event log (frame, EventLog, Scheduler) or a mapping, "
            f"got {type(counts).__name__}"
        ) from None


def _case_of(decision_or_case: Any) -> Case | None:
    if decision_or_case is None:
        return None
    if isinstance(decision_or_case, Decision):
        return decision_or_case.case
    try:
        return Case(int(decision_or_case))
    except (TypeError, ValueError):
        raise ValueError(
            f"decision_or_case={decision_or_case!r}: expected a Decision, a Case or 1-8"
        ) from None


def plot_decision_tree(
    decision_or_case: Decision | Case | int | None = None,
    *,
    counts: Any = None,
    ax: Axes | None = None,
    fontsize: float | None = None,
    explain: bool = True,
) -> Axes:
    """Draw the decision tree every ``schedule()`` request walks, cases 1-8 as leaves.

    Question boxes come from :data:`~tempsched_lab.core.decision.TREE`, so the
    drawing always matches the code. Edges are labelled yes/no. Given a
    :class:`~tempsched_lab.Decision` (or a :class:`~tempsched_lab.Case`, or its
    number), the path to its case is highlighted: thick edges and box outlines
    in the case's colour, and (``explain=True``) the explanation under
    the tree.

    Args:
        decision_or_case: the decision whose path to highlight, or ``None``.
        counts: show how often each case was decided: an event log (a frame,
            an ``EventLog`` or a ``Scheduler``; counted with
            :func:`~tempsched_lab.case_counts`), the output of ``case_counts``,
            or a mapping ``{case: count}``.
        ax: draw into this Axes; by default a new Figure is made.
        fontsize: size of the box texts in points (default: the type scale's body
            size, see :mod:`tempsched_lab.plots.style`); a size under the scale's
            smallest (``FONT["small"]``: 12 px by default, 16 px in projector type)
            is raised to it, so the tree stays readable wherever it is drawn.
        explain: write the explanation under the tree: a Decision's own (what
            happened this time), else the case's teaching text.

    Returns:
        The Axes drawn into.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> s = Scheduler(VirtualClock())
    >>> _ = s.schedule(print, at=2)
    >>> decision = s.schedule_decision(print, at=1)
    >>> ax = plot_decision_tree(decision, counts=s.log.to_frame())
    >>> ax.get_title()
    'Decision tree: case 3 (earlier than head) highlighted; counts from 2 decisions'
    """
    fontsize = _font_size(fontsize)
    case = _case_of(decision_or_case)
    count_map = _counts_of(counts)
    ax = axes_or_new(ax, (10.0, 7.6))
    positions, edges = tree_layout()
    size, fontsize = _fit(ax, fontsize, positions, explained=case is not None and explain)
    path = _Path.of(case)
    labels = _draw_edges(ax, edges, positions, size, path, fontsize)
    _draw_nodes(ax, positions, size, path, fontsize, count_map)
    bottom = _bottom(positions, size, count_map)
    if case is not None and explain:
        bottom = _draw_explanation(
            ax, decision_or_case, case, positions, size, path, fontsize, bottom
        )
    _frame(ax, positions, size, bottom)
    _title(ax, case, count_map, size)
    _label_edges(ax, labels, fontsize, positions, size)
    return ax


def _font_size(fontsize: float | None) -> float:
    """The box texts' size: the type scale's body size by default, never under its floor."""
    if fontsize is None:
        fontsize = FONT["body"]
    if not isinstance(fontsize, (int, float)) or isinstance(fontsize, bool) or fontsize <= 0:
        raise ValueError(f"fontsize={fontsize!r}: expected a size in points")
    return max(float(fontsize), FONT["small"])


def _fit(
    ax: Axes, fontsize: float, positions: dict[Node, tuple[float, float]], *, explained: bool
) -> tuple[_Sizes, float]:
    """Box sizes and wrapping for ``ax``; the floor size when only it lets leaves keep names.

    When the leaves show numbers only, a legend of the cases takes room beside the tree:
    the sizes are made again for the width that is left.
    """
    levels = 1 - int(min(y for _, y in positions.values()))
    leaves = sum(1 for kind, _ in positions if kind == "case")
    extra = 0.35 + (1.0 if explained else 0.0)
    size = _sizes(ax, fontsize, levels, leaves, extra)
    floor = FONT["small"]
    if not size.leaf_chars and fontsize > floor:  # names fit at the floor? better than numbers
        smaller = _sizes(ax, floor, levels, leaves, extra)
        if smaller.leaf_chars:
            return smaller, floor
    if not size.leaf_chars:
        size = _sizes(ax, fontsize, levels, leaves, extra, legend_pt=_LEGEND_EM * floor)
    return size, fontsize


@dataclass(frozen=True)
class _Path:
    """The highlighted path: its case, its boxes and edges, its colour."""

    case: Case | None
    nodes: frozenset[Node]
    edges: frozenset[tuple[str, bool]]
    accent: str

    @classmethod
    def of(cls, case: Case | None) -> _Path:
        if case is None:
            return cls(None, frozenset(), frozenset(), NEUTRAL["line"])
        nodes = {("question", key) for key, _ in case.path} | {("case", case)}
        return cls(case, frozenset(nodes), frozenset(case.path), case_color(case))


def _draw_edges(
    ax: Axes,
    edges: list[tuple[Node, Node, bool]],
    positions: dict[Node, tuple[float, float]],
    size: _Sizes,
    path: _Path,
    fontsize: float,
) -> list[_EdgeLabel]:
    """An arrow from each question to its answers (the path's "cased"); their yes/no labels."""
    labels: list[_EdgeLabel] = []
    # the path is a "cased" line: the case's colour inside an ink casing, visible on white
    # even for case 7's yellow
    casing = [Stroke(linewidth=7.5, foreground=NEUTRAL["ink"]), Normal()]
    for parent, child, answer in edges:
        (x0, y0), (x1, y1) = positions[parent], positions[child]
        on_path = (parent[1], answer) in path.edges
        top = size.leaf_height / 2 if child[0] == "case" else size.q_height / 2
        start, end = (x0, y0 - size.q_height / 2), (x1, y1 + top)
        arrow = ax.annotate(
            "",
            xy=end,
            xytext=start,
            arrowprops={
                "arrowstyle": "-|>",
                "color": path.accent if on_path else NEUTRAL["unknown"],
                "lw": 4.0 if on_path else 1.2,
                "shrinkA": 0,
                "shrinkB": 1,
                "mutation_scale": 14 if on_path else 10,
            },
            zorder=3 if on_path else 1,
            gid=f"edge:{parent[1]}:{'yes' if answer else 'no'}" + (":highlighted" * on_path),
        )
        if arrow.arrow_patch is not None:
            arrow.arrow_patch.set_gid(arrow.get_gid())
            if on_path:
                arrow.arrow_patch.set_path_effects(casing)
        labels.append((start, end, "yes" if answer else "no", on_path))
    return labels


#: Half the widest line an edge draws (the path's casing), in points.
_CASING_HALF = 7.5 / 2


def _label_edges(
    ax: Axes,
    labels: list[_EdgeLabel],
    fontsize: float,
    positions: dict[Node, tuple[float, float]],
    size: _Sizes,
) -> None:
    """Each edge's yes/no beside its line (never on it), clear of every box.

    The label sits on the normal that points up (up-left for "yes", up-right for "no": away
    from the other answer), half its box across that normal plus half the widest line plus a
    gap from the line, so a thick highlighted arrow never runs under it; along the edge, at
    the first of a few places where it clears every box and every line (then beside the line
    at the same height, where a short edge leaves no room across it; then the other side).
    The place is found when the figure is drawn, in display space, so a layout that resizes
    the Axes afterwards (a legend, a page) moves it along.
    """
    text_size = max(FONT["small"], fontsize - 1.0)
    corners = []
    for node, (x, y) in positions.items():
        w, h = (
            (size.q_widths[node[1]], size.q_height)
            if node[0] == "question"
            else (_LEAF_WIDTH, size.leaf_height)
        )
        corners.append(((x - w / 2, y - h / 2), (x + w / 2, y + h / 2)))
    # the label's box in points: bold glyphs ~0.6 of the size wide, its line, 0.15 of padding
    label_h = 1.0 * text_size + 0.3 * text_size
    edges = [(start, end) for start, end, _, _ in labels]
    for start, end, text, on_path in labels:
        label_w = 0.6 * text_size * len(text) + 0.3 * text_size

        def place(
            _renderer: Any,
            start: tuple[float, float] = start,
            end: tuple[float, float] = end,
            label_w: float = label_w,
        ) -> Affine2D:
            px = ax.figure.dpi / 72.0
            boxes = [ax.transData.transform([lo, hi]).ravel() for lo, hi in corners]
            lines = [ax.transData.transform([a, b]) for a, b in edges]
            (x0, y0), (x1, y1) = ax.transData.transform(start), ax.transData.transform(end)
            dx, dy = x1 - x0, y1 - y0
            length = max(math.hypot(dx, dy), 1e-9)
            nx, ny = -dy / length, dx / length
            if ny < 0:
                nx, ny = -nx, -ny
            hw, hh = label_w * px / 2, label_h * px / 2
            margin = (_CASING_HALF + 1.5) * px  # the widest line's half and a gap
            samples = np.concatenate(
                [p + np.linspace(0.0, 1.0, 64)[:, None] * (q - p) for p, q in lines]
            )

            def clear(cx: float, cy: float) -> bool:
                on_box = any(
                    cx - hw < b[2] + 2
                    and cx + hw > b[0] - 2
                    and cy - hh < b[3] + 2
                    and cy + hh > b[1] - 2
                    for b in boxes
                )
                near = (np.abs(samples[:, 0] - cx) < hw + margin) & (
                    np.abs(samples[:, 1] - cy) < hh + margin
                )
                return not on_box and not near.any()

            gap = abs(nx) * hw + abs(ny) * hh + margin
            places = []
            for side in (1.0, -1.0):  # the outer side first (away from the sibling), then inner
                for f in _ALONG:  # across the line, then sideways at the same height
                    for far in (1.0, 1.5):
                        places.append(
                            (
                                x0 + f * dx + side * nx * gap * far,
                                y0 + f * dy + side * ny * gap * far,
                            )
                        )
                for f in _ALONG:
                    for shift in (1.0, 1.5, 2.0, 3.0, 4.0):
                        across = side * math.copysign(1.0, nx) * shift * (hw + margin)
                        places.append((x0 + f * dx + across, y0 + f * dy))
            best = next((c for c in places if clear(*c)), places[0])
            return Affine2D().translate(*best)

        ax.annotate(
            text,
            xy=start,
            xytext=(0.0, 0.0),
            textcoords=place,
            ha="center",
            va="center",
            fontsize=text_size,
            color=NEUTRAL["ink"],
            fontweight="bold" if on_path else "normal",
            zorder=4,
            gid=f"answer:{text}",
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"},
        )


#: Where along its edge a label may sit (shares of the way from the question), in order.
_ALONG = (0.5, 0.6, 0.4, 0.7, 0.3, 0.8, 0.2, 0.9)


def _box_style(node: Node, size: _Sizes, path: _Path) -> tuple[float, float, str, str, float, str]:
    """``(width, height, face, edge, line width, text colour)`` of a box, on the path or not."""
    on_path = node in path.nodes
    if node[0] == "question":
        if on_path:
            edge = case_edge(path.case) if path.case is not None else path.accent
            return size.q_widths[node[1]], size.q_height, "white", edge, 3.0, NEUTRAL["ink"]
        return (
            size.q_widths[node[1]],
            size.q_height,
            "#F4F4F4",
            NEUTRAL["line"],
            1.0,
            NEUTRAL["ink"],
        )
    color = case_color(node[1])
    if on_path:
        return _LEAF_WIDTH, size.leaf_height, color, NEUTRAL["ink"], 3.5, text_color_on(color)
    # a leaf not on the path: pale fill, thin mid-tone edge (case 8's black included), so
    # that only the highlighted leaf has a full colour and a thick ink outline
    return _LEAF_WIDTH, size.leaf_height, tint(color, 0.75), tint(color, 0.35), 1.2, NEUTRAL["ink"]


def _draw_nodes(
    ax: Axes,
    positions: dict[Node, tuple[float, float]],
    size: _Sizes,
    path: _Path,
    fontsize: float,
    count_map: dict[int, int] | None,
) -> None:
    """Every box with its text: the questions, the leaves (cases), and each leaf's count."""
    questions = {q.key: q for q in TREE}
    for node, (x, y) in positions.items():
        on_path = node in path.nodes
        w, h, face, edge, lw, text_color = _box_style(node, size, path)
        if node[0] == "question":
            text = "\n".join(_wrap(questions[node[1]].text, size.q_chars))
            gid = f"question:{node[1]}"
        else:
            text = leaf_text(node[1], size.leaf_chars)
            gid = f"case:{int(node[1])}"
        patch = FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle="round,pad=0.02,rounding_size=0.08",
            facecolor=face,
            edgecolor=edge,
            linewidth=lw,
            zorder=5,
            gid=gid + (":highlighted" * on_path),
        )
        ax.add_patch(patch)
        if on_path and node[0] == "question":
            patch.set_path_effects([withStroke(linewidth=5.0, foreground=NEUTRAL["ink"])])
        ax.text(
            x,
            y,
            text,
            ha="center",
            va="center",
            fontsize=fontsize,
            color=text_color,
            fontweight="bold" if on_path else "normal",
            zorder=6,
            linespacing=1.1,
        )
        if node[0] == "case" and count_map is not None:
            _draw_count(
                ax, x, y - h / 2, count_map.get(int(node[1]), 0), int(node[1]), size, fontsize
            )


def _draw_count(
    ax: Axes, x: float, y: float, n: int, case: int, size: _Sizes, fontsize: float
) -> None:
    """``n = 12`` under a leaf whose bottom edge is at ``y`` (grey when none)."""
    ax.text(
        x,
        y - 0.07,
        f"n = {n:,}" if size.count_words else f"{n:,}",
        ha="center",
        va="top",
        fontsize=fontsize + 0.5,
        fontweight="bold",
        color=NEUTRAL["ink"] if n else NEUTRAL["unknown"],
        zorder=6,
        gid=f"count:{case}",
    )


def _bottom(
    positions: dict[Node, tuple[float, float]], size: _Sizes, count_map: dict[int, int] | None
) -> float:
    """The lowest point the leaves (and their counts) reach."""
    ys = [p[1] for p in positions.values()]
    return min(ys) - size.leaf_height / 2 - (size.count_gap + 0.05 if count_map else 0.1)


def _draw_explanation(
    ax: Axes,
    decision_or_case: Any,
    case: Case,
    positions: dict[Node, tuple[float, float]],
    size: _Sizes,
    path: _Path,
    fontsize: float,
    bottom: float,
) -> float:
    """The decision explained in words under the tree; returns the new bottom."""
    xs = [p[0] for p in positions.values()]
    # a Decision tells what happened this time (the task it matched, whether a worker woke)
    told = getattr(decision_or_case, "explanation", None)
    text = told if isinstance(told, str) else case.explanation
    words = f"Case {int(case)}, {case.short}: {text}"
    lines = _wrap(words, size.explain_chars)
    ax.text(
        (min(xs) + max(xs)) / 2,
        bottom - 0.15,
        "\n".join(lines),
        ha="center",
        va="top",
        fontsize=fontsize + 0.5,
        color=NEUTRAL["ink"],
        gid="explanation",
        bbox={
            "boxstyle": "round,pad=0.4",
            "fc": tint(path.accent, 0.85),
            "ec": case_edge(case),
            "lw": 1.5,
        },
    )
    return bottom - 0.3 - (len(lines) + 1.2) * size.line * (fontsize + 0.5) / fontsize


def _frame(
    ax: Axes, positions: dict[Node, tuple[float, float]], size: _Sizes, bottom: float
) -> None:
    """The limits that hold every box (and the explanation), no axes drawn."""
    ys = [p[1] for p in positions.values()]
    half = {n: (size.q_widths[n[1]] if n[0] == "question" else _LEAF_WIDTH) / 2 for n in positions}
    ax.set_xlim(
        min(x - half[n] for n, (x, _) in positions.items()) - 0.1,
        max(x + half[n] for n, (x, _) in positions.items()) + 0.1,
    )
    ax.set_ylim(bottom, max(ys) + size.q_height / 2 + 0.1)
    ax.set_axis_off()


def _title(ax: Axes, case: Case | None, count_map: dict[int, int] | None, size: _Sizes) -> None:
    """The title says what is highlighted and counted; leaves with numbers only get a legend."""
    title = "Decision tree of schedule()"
    parts = []
    if case is not None:
        parts.append(f"case {int(case)} ({case.short}) highlighted")
    if count_map is not None:
        total = sum(count_map.values())
        parts.append(f"counts from {total:,} decision{'s' * (total != 1)}")
    if parts:
        title = "Decision tree: " + "; ".join(parts)
    set_title(ax, title, share=0.95 if size.leaf_chars else 0.7)  # a legend takes the rest
    if not size.leaf_chars:  # leaves show numbers only: name the cases beside the tree
        patches = [Patch(color=case_color(c), label=case_label(c)) for c in Case]
        add_legend(ax, [Section("cases", patches)])
