"""What one log row changed in the queue, and a picture of the queue with the change marked.

Stepping through history one row at a time teaches best when the change is
pointed at: the new task, the pending task a duplicate matched, the old head
moving back behind an earlier task, the due group leaving for its executor.
:func:`queue_change` compares the replayed queue before and after a row;
:func:`queue_strip_html` draws the queue after it as a row of time points
(the head first) with those tasks and points marked, in the plots' colours.

>>> from tempsched_lab import Scheduler, VirtualClock, replay
>>> s = Scheduler(VirtualClock())
>>> _ = s.schedule(print, at=2.0)
>>> _ = s.schedule(print, at=1.0)           # earlier than the head: case 3
>>> frame = s.log.to_frame()
>>> change = queue_change(replay(frame, 0), replay(frame, 1), frame.iloc[1])
>>> change.added, change.old_head, change.summary()
((1,), (0,), 'task #1 is new and becomes the head; the old head (#0) moves back')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..log.kinds import Kind
from ..plots.colors import ENTRY_FILL, HEAD_EDGE, HEAD_FILL, NEUTRAL, case_edge
from ._base import esc

if TYPE_CHECKING:
    from ..core.queues import QueueSnapshot, QueueState
    from ..time.scale import TimeScale

__all__ = ["QueueChange", "queue_change", "queue_strip_html"]


def _ids(state: QueueState) -> list[int]:
    return [i for _, ids in state.points for i in ids]


#: How a task leaves the queue, by the row kind that takes it out.
_LEAVING: dict[str, str] = {
    Kind.DISPATCH: "is handed to its executor",
    Kind.CANCEL: "is cancelled",
    Kind.SHUTDOWN: "is dropped",
}


@dataclass(frozen=True)
class QueueChange:
    """The difference one row made to the queue."""

    #: tasks that entered the queue (a new task, a periodic re-arm)
    added: tuple[int, ...]
    #: tasks that left it (the due group handed to its executor, a cancel, a drop)
    leaving: tuple[int, ...]
    #: the pending task a duplicate request matched (nothing was added)
    matched: int | None
    #: the previous head's tasks, still queued but no longer the head
    old_head: tuple[int, ...]
    #: the head's time changed
    head_moved: bool
    #: the head's tasks after the row, when the head moved
    new_head: tuple[int, ...]
    #: the row's kind and case (for the words)
    kind: str
    case: int | None

    def summary(self) -> str:
        """The change in words."""
        parts = []
        if self.matched is not None:
            parts.append(f"duplicate: the request matched task #{self.matched}, nothing was added")
        for task in self.added:
            becomes = " and becomes the head" if task in self.new_head else ""
            parts.append(f"task #{task} is new{becomes}")
        if self.old_head:
            parts.append(
                "the old head (" + ", ".join(f"#{i}" for i in self.old_head) + ") moves back"
            )
        if self.leaving:
            why = _LEAVING.get(self.kind, "leaves the queue")
            group = ", ".join(f"#{i}" for i in self.leaving)
            what = "the due group" if len(self.leaving) > 1 else "task"
            if len(self.leaving) > 1:
                why = why.replace("is ", "are ", 1)
            parts.append(f"{what} {group} {why}")
        if not parts:
            return "the queue did not change"
        return "; ".join(parts)


def queue_change(before: QueueState, after: QueueState, row: Any) -> QueueChange:
    """What row ``row`` (of an event-log frame) changed, from the queue ``before`` to ``after``."""
    was, now = _ids(before), set(_ids(after))
    known = set(was)
    added = tuple(i for i in _ids(after) if i not in known)
    leaving = tuple(i for i in was if i not in now)
    dup = row["dup_of"]
    matched = None if dup is None or _missing(dup) else int(dup)
    head_moved = before.head_time != after.head_time
    old_head: tuple[int, ...] = ()
    if head_moved and before.head and added:  # a new earlier task pushed the head back
        old_head = tuple(i for i in before.head if i in now)
    case = row["case"]
    return QueueChange(
        added=added,
        leaving=leaving,
        matched=matched,
        old_head=old_head,
        head_moved=head_moved,
        new_head=tuple(after.head) if head_moved else (),
        kind=str(row["kind"]),
        case=None if case is None or _missing(case) else int(case),
    )


def _missing(value: Any) -> bool:
    try:
        return bool(value != value) or str(value) == "<NA>"
    except (TypeError, ValueError):
        return True


def _chip(task: int, label: str, style: str, cls: str, tag: str = "") -> str:
    extra = f" <i style='font-size:12px'>{esc(tag)}</i>" if tag else ""
    return (
        f"<span class='tsl-chip {cls}' data-task='{task}' style='display:inline-block;"
        f"margin:2px;padding:1px 5px;border-radius:3px;background:var(--tsl-bg);"
        f"color:var(--tsl-fg);font-size:12px;{style}'>"
        f"#{task} {esc(label)}{extra}</span>"
    )


def queue_strip_html(
    after: QueueSnapshot,
    before: QueueSnapshot | None,
    change: QueueChange | None,
    scale: TimeScale,
    *,
    max_points: int = 8,
) -> str:
    """The queue after a row as time points in a row (head first), the row's change marked.

    New tasks have a thick outline in their case's colour; the task a
    duplicate matched a dashed one; the old head's time point a dashed
    border and "was head"; tasks that left are shown struck through, first.
    """
    change = change or QueueChange((), (), None, (), False, (), "", None)
    color = case_edge(change.case) if change.case else HEAD_EDGE
    labels = {i: (v.label or "") for i, v in after.tasks.items()}
    if before is not None:
        for i, v in before.tasks.items():
            labels.setdefault(i, v.label or "")
    boxes = []
    if change.leaving:
        chips = "".join(
            _chip(i, labels.get(i, ""), f"text-decoration:line-through;color:var(--tsl-muted);"
                  f"border:1px solid {NEUTRAL['unknown']}", "tsl-chg-leaving")
            for i in change.leaving
        )  # fmt: skip
        boxes.append(
            _box("leaving", chips, f"border:1px dashed {NEUTRAL['unknown']}", "tsl-leaving")
        )
    points = after.state.points
    for n, (due, ids) in enumerate(points[:max_points]):
        chips = ""
        for i in ids:
            if i in change.added:
                chips += _chip(
                    i, labels.get(i, ""), f"border:3px solid {color}", "tsl-chg-new", "new"
                )
            elif i == change.matched:
                chips += _chip(i, labels.get(i, ""), f"border:3px dashed {color}", "tsl-chg-dup",
                               "matched")  # fmt: skip
            else:
                chips += _chip(i, labels.get(i, ""), f"border:1px solid {NEUTRAL['line']}", "")
        old = bool(change.old_head) and any(i in change.old_head for i in ids)
        head = n == 0
        fill = HEAD_FILL if head else ENTRY_FILL
        border = f"2px dashed {HEAD_EDGE}" if old else f"{2 if head else 1}px solid {HEAD_EDGE}"
        title = ("HEAD · " if head else "") + scale.text(due)
        if old:
            title += " · was head"
        cls = "tsl-point-head" if head else "tsl-point"
        if old:
            cls += " tsl-chg-oldhead"
        # the plots' fill tinted over the theme's background: the theme's text reads on it
        tint = f"background:color-mix(in srgb, {fill} var(--tsl-tint), var(--tsl-bg))"
        boxes.append(_box(title, chips, f"{tint};color:var(--tsl-fg);border:{border}", cls))
    if len(points) > max_points:
        rest = sum(len(ids) for _, ids in points[max_points:])
        boxes.append(f"<div style='align-self:center;font-size:12px'>… {rest} more</div>")
    if not points and not change.leaving:
        boxes.append("<div style='font-size:12px'><i>the queue is empty</i></div>")
    words = esc(change.summary()) if change.kind else ""
    return (
        "<div class='tsl-strip' style='display:flex;flex-wrap:wrap;gap:6px;align-items:flex-start'>"
        + "".join(boxes)
        + f"</div><div class='tsl-change' style='font-size:12px;margin-top:3px'>{words}</div>"
    )


def _box(title: str, chips: str, style: str, cls: str) -> str:
    return (
        f"<div class='{cls}' style='padding:3px 5px;border-radius:4px;min-width:90px;{style}'>"
        f"<div style='font-size:12px;font-weight:600'>{esc(title)}</div>{chips}</div>"
    )
