"""The 8-case decision tree as a flowchart, drawn from :data:`tempsched_lab.decision.TREE`."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.patches import FancyBboxPatch
from matplotlib.patheffects import Normal, Stroke, withStroke

from ..analysis import case_counts
from ..decision import TREE, Case, Decision
from ._axes import FONT, axes_or_new
from ._data import as_frame
from .colors import NEUTRAL, case_color, case_edge, text_color_on, tint

__all__ = ["plot_decision_tree", "tree_layout"]

Node = tuple[str, Any]  # ("question", key) or ("case", Case)

_Q_WIDTH, _Q_HEIGHT = 1.3, 0.52
_LEAF_WIDTH, _LEAF_HEIGHT = 0.92, 0.62


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
    fontsize: float = FONT["body"],
    explain: bool = True,
) -> Axes:
    """Draw the decision tree every ``schedule()`` request walks, cases 1-8 as leaves.

    Question boxes come from :data:`~tempsched_lab.decision.TREE`, so the
    drawing always matches the code. Edges are labelled yes/no. Given a
    :class:`~tempsched_lab.Decision` (or a :class:`~tempsched_lab.Case`, or its
    number), the path to its case is highlighted: thick edges and box outlines
    in the case's colour, and (``explain=True``) the case's explanation under
    the tree.

    Args:
        decision_or_case: the decision whose path to highlight, or ``None``.
        counts: show how often each case was decided: an event log (a frame,
            an ``EventLog`` or a ``Scheduler``; counted with
            :func:`~tempsched_lab.case_counts`), the output of ``case_counts``,
            or a mapping ``{case: count}``.
        ax: draw into this Axes; by default a new Figure is made.
        fontsize: size of the box texts (at least 8 pt, the smallest any figure writes).
        explain: write the highlighted case's explanation under the tree.

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
    if not isinstance(fontsize, (int, float)) or isinstance(fontsize, bool) or fontsize < 8:
        raise ValueError(f"fontsize={fontsize!r}: expected a size of at least 8 pt")
    case = _case_of(decision_or_case)
    count_map = _counts_of(counts)
    ax = axes_or_new(ax, (10.0, 7.2))
    positions, edges = tree_layout()
    path_nodes: set[Node] = set()
    path_edges: set[tuple[str, bool]] = set()
    if case is not None:
        path_edges = set(case.path)
        path_nodes = {("question", key) for key, _ in case.path} | {("case", case)}
    accent = case_color(case) if case is not None else NEUTRAL["line"]
    # the path is a "cased" line: the case's colour inside an ink casing, visible on white
    # even for case 7's yellow
    casing = [Stroke(linewidth=7.5, foreground=NEUTRAL["ink"]), Normal()]

    # -- edges ---------------------------------------------------------------------
    for parent, child, answer in edges:
        (x0, y0), (x1, y1) = positions[parent], positions[child]
        on_path = (parent[1], answer) in path_edges
        top = _LEAF_HEIGHT / 2 if child[0] == "case" else _Q_HEIGHT / 2
        start, end = (x0, y0 - _Q_HEIGHT / 2), (x1, y1 + top)
        arrow = ax.annotate(
            "",
            xy=end,
            xytext=start,
            arrowprops={
                "arrowstyle": "-|>",
                "color": accent if on_path else NEUTRAL["unknown"],
                "lw": 4.0 if on_path else 1.2,
                "shrinkA": 0,
                "shrinkB": 1,
                "mutation_scale": 14 if on_path else 10,
            },
            zorder=3 if on_path else 1,
            gid=f"edge:{parent[1]}:{'yes' if answer else 'no'}" + (":highlighted" * on_path),
        )
        if on_path:
            arrow.arrow_patch.set_path_effects(casing)
        mx, my = (start[0] + end[0]) / 2, (start[1] + end[1]) / 2
        ax.text(
            mx,
            my,
            "yes" if answer else "no",
            ha="center",
            va="center",
            fontsize=max(8.0, fontsize - 1.0),
            color=NEUTRAL["ink"],
            fontweight="bold" if on_path else "normal",
            zorder=4,
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"},
        )

    # -- boxes ---------------------------------------------------------------------
    questions = {q.key: q for q in TREE}
    for node, (x, y) in positions.items():
        on_path = node in path_nodes
        if node[0] == "question":
            w, h = _Q_WIDTH, _Q_HEIGHT
            face, edge, lw, text_color = "#F4F4F4", NEUTRAL["line"], 1.0, NEUTRAL["ink"]
            if on_path:
                face, edge, lw = "white", case_edge(case) if case is not None else accent, 3.0
            text = "\n".join(textwrap.wrap(questions[node[1]].text, 17))
            gid = f"question:{node[1]}"
        else:
            c: Case = node[1]
            w, h = _LEAF_WIDTH, _LEAF_HEIGHT
            color = case_color(c)
            # a leaf not on the path: pale fill, thin mid-tone edge (case 8's black included),
            # so that only the highlighted leaf has a full colour and a thick ink outline
            face, edge, lw = tint(color, 0.75), tint(color, 0.35), 1.2
            text_color = NEUTRAL["ink"]
            if on_path:
                face, edge, lw = color, NEUTRAL["ink"], 3.5
                text_color = text_color_on(color)
            text = f"{int(c)}\n" + "\n".join(textwrap.wrap(c.short, 11))
            gid = f"case:{int(c)}"
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
            n = count_map.get(int(node[1]), 0)
            ax.text(
                x,
                y - h / 2 - 0.07,
                f"n = {n:,}",
                ha="center",
                va="top",
                fontsize=fontsize + 0.5,
                fontweight="bold",
                color=NEUTRAL["ink"] if n else NEUTRAL["unknown"],
                zorder=6,
                gid=f"count:{int(node[1])}",
            )

    # -- frame, title, explanation ---------------------------------------------------
    xs = [p[0] for p in positions.values()]
    ys = [p[1] for p in positions.values()]
    bottom = min(ys) - _LEAF_HEIGHT / 2 - (0.35 if count_map is not None else 0.1)
    if case is not None and explain:
        ax.text(
            (min(xs) + max(xs)) / 2,
            bottom - 0.15,
            "\n".join(textwrap.wrap(f"Case {int(case)}, {case.short}: {case.explanation}", 110)),
            ha="center",
            va="top",
            fontsize=fontsize + 0.5,
            color=NEUTRAL["ink"],
            gid="explanation",
            bbox={
                "boxstyle": "round,pad=0.4",
                "fc": tint(accent, 0.85),
                "ec": case_edge(case),
                "lw": 1.5,
            },
        )
        bottom -= 0.85
    ax.set_xlim(min(xs) - _Q_WIDTH / 2 - 0.1, max(xs) + _LEAF_WIDTH / 2 + 0.1)
    ax.set_ylim(bottom, max(ys) + _Q_HEIGHT / 2 + 0.1)
    ax.set_axis_off()
    title = "Decision tree of schedule()"
    parts = []
    if case is not None:
        parts.append(f"case {int(case)} ({case.short}) highlighted")
    if count_map is not None:
        total = sum(count_map.values())
        parts.append(f"counts from {total:,} decision{'s' * (total != 1)}")
    if parts:
        title = "Decision tree: " + "; ".join(parts)
    ax.set_title(title, fontsize=FONT["title"])
    return ax
