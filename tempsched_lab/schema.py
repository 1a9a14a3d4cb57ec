"""The event log's schema: row kinds, columns, their dtypes and meanings.

Rows are stored as plain tuples in :data:`COLUMNS` order (cheap to append);
:func:`tempsched_lab.log.EventLog.to_frame` turns them into a typed DataFrame.
Missing values are stored as sentinels (``-1`` for integers and codes, NaN
for floats, ``None`` for text) and become ``<NA>``/NaN in the frame.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["COLUMNS", "FRAME_COLUMNS", "KINDS", "ORIGINS", "Column"]

#: Row kinds, in code order (the stored code is the index).
KINDS: tuple[str, ...] = (
    "schedule",
    "reject",
    "wake",
    "dispatch",
    "start",
    "finish",
    "error",
    "event_set",
    "missed",
    "cancel",
    "shutdown",
)
KIND_CODE = {k: i for i, k in enumerate(KINDS)}

#: Who asked for a schedule decision (stored code = index).
ORIGINS: tuple[str, ...] = ("user", "periodic", "compat")
ORIGIN_CODE = {k: i for i, k in enumerate(ORIGINS)}


@dataclass(frozen=True, slots=True)
class Column:
    """One column: stored ``store`` kind, frame ``dtype`` and what it means."""

    name: str
    store: str  # int | float | code | text | cat | bool | case
    dtype: str
    meaning: str


COLUMNS: tuple[Column, ...] = (
    Column("seq", "int", "int64", "row number, gapless, assigned under the scheduler's lock"),
    Column("t", "float", "float64", "scheduler clock time of the step (s)"),
    Column("wall", "float", "float64", "wall-clock time of the step, time.time() (s)"),
    Column("kind", "code", "category", "what happened: " + ", ".join(KINDS)),
    Column("task_id", "int", "Int64", "the task concerned"),
    Column("case", "case", "Int8", "decision tree case 1-8 (schedule and reject rows)"),
    Column("dup_of", "int", "Int64", "for cases 5 and 7: the task the request duplicated"),
    Column("due", "float", "float64", "when the task (or this run) is due (s)"),
    Column("fire_at", "float", "float64", "when the queue will fire it: due rounded up by a wheel"),
    Column("label", "cat", "category", "the action's qualified name or the given label"),
    Column("args", "text", "string", "short repr of the positional arguments"),
    Column("period", "float", "float64", "period of a periodic task (s)"),
    Column("origin", "origin", "category", "who asked: " + ", ".join(ORIGINS)),
    Column(
        "result",
        "cat",
        "category",
        "outcome: cancel result, wake reason, result type of a finish, misfire policy, "
        "shutdown step",
    ),
    Column("where", "cat", "category", "cancel: where the task was found (head, queue, running)"),
    Column("lateness", "float", "float64", "dispatch/start/event_set: time since due (s)"),
    Column("queue_delay", "float", "float64", "start: time from dispatch to start (s)"),
    Column("duration", "float", "float64", "finish/error: run time (s)"),
    Column("wait", "float", "float64", "wake: the wait the worker computed before sleeping (s)"),
    Column("head_before", "float", "float64", "head time before the step"),
    Column("head_after", "float", "float64", "head time after the step"),
    Column(
        "ready_size",
        "int",
        "Int64",
        "tasks at the head time after the step (every row that has queue_size)",
    ),
    Column("queue_size", "int", "Int64", "pending tasks after the step"),
    Column("woke", "bool", "boolean", "schedule: whether the worker was notified"),
    Column("missed", "int", "Int64", "missed: how many periodic runs were skipped"),
    Column("thread", "cat", "category", "name of the thread that took the step"),
    Column("error", "text", "string", "error: exception type and message; reject: the reason"),
    Column("detail", "text", "string", "error: traceback text; shutdown: what was dropped"),
)

#: The fields each kind stores, after the common (kind code, t, wall, thread).
#: Columns a kind does not store are missing (or derived: ``lateness`` = t - due
#: for dispatch/start/event_set/missed, ``queue_delay`` = t - dispatched for start).
LAYOUTS: dict[str, tuple[str, ...]] = {
    "schedule": ("task_id", "case", "dup_of", "due", "fire_at", "label", "args", "period",
                 "origin", "head_before", "head_after", "ready_size", "queue_size", "woke"),
    "reject": ("case", "due", "label", "args", "period", "origin", "head_before",
               "ready_size", "queue_size", "error"),
    "wake": ("result", "wait", "head_before", "ready_size", "queue_size"),
    "dispatch": ("task_id", "due", "fire_at", "label", "head_after", "ready_size",
                 "queue_size"),
    "start": ("task_id", "due", "label", "dispatched"),
    "finish": ("task_id", "due", "label", "duration", "result"),
    "error": ("task_id", "due", "label", "duration", "error", "detail"),
    "event_set": ("task_id", "due", "label"),
    "missed": ("task_id", "due", "label", "period", "missed", "result"),
    "cancel": ("task_id", "result", "where", "due", "label", "head_before", "head_after",
               "ready_size", "queue_size"),
    "shutdown": ("task_id", "result", "due", "label", "ready_size", "queue_size", "detail"),
}  # fmt: skip

#: Columns the frame adds, derived from stored ones.
DERIVED: tuple[Column, ...] = (
    Column("time", "derived", "datetime64[ns, UTC]", "t as a UTC datetime"),
    Column("wall_time", "derived", "datetime64[ns, UTC]", "wall as a UTC datetime"),
)

FRAME_COLUMNS: tuple[str, ...] = tuple(c.name for c in COLUMNS + DERIVED)
INDEX = {c.name: i for i, c in enumerate(COLUMNS)}


def markdown_table() -> str:
    """The schema as a Markdown table (used to generate the docs)."""
    lines = ["| column | dtype | meaning |", "| --- | --- | --- |"]
    lines += [f"| `{c.name}` | {c.dtype} | {c.meaning} |" for c in COLUMNS + DERIVED]
    return "\n".join(lines)
