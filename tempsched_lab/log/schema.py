"""The event log's schema, stated once: row kinds, columns, how each is stored and derived.

Everything else is generated from the tables here: the recorder's row layouts,
the DataFrame's dtypes (:mod:`tempsched_lab.log.frame`), the derived columns, and
the schema table in ``docs/event-log.md`` (:func:`markdown_table`; a test keeps the
page in step).

A row is stored as a tuple ``(kind code, t, wall, thread, *fields)`` where the
fields are the kind's :data:`LAYOUTS` entry; ``seq`` is the row's position.
Missing values are stored as sentinels (see :data:`STORES`) and become
``<NA>``/NaN in the frame.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "COLUMNS",
    "DERIVED",
    "FRAME_COLUMNS",
    "KINDS",
    "KIND_CODE",
    "LAYOUTS",
    "ORIGINS",
    "STORES",
    "Column",
    "Store",
    "markdown_table",
]

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

#: Who asked for a schedule decision (stored code = index; same order as ``task.Origin``).
ORIGINS: tuple[str, ...] = ("user", "periodic", "compat")


@dataclass(frozen=True, slots=True)
class Store:
    """How one kind of column is stored in rows and what it becomes in the frame."""

    name: str
    #: numpy dtype of the column while it is converted
    numpy: str
    #: the value a row stores for "missing"
    missing: object
    #: the frame's dtype
    dtype: str


STORES: dict[str, Store] = {
    s.name: s
    for s in (
        Store("seq", "int64", None, "int64"),
        Store("int", "int64", -1, "Int64"),
        Store("float", "float64", None, "float64"),
        Store("kind", "int8", None, "category"),
        Store("case", "int8", 0, "Int8"),
        Store("origin", "int8", -1, "category"),
        Store("bool", "int8", -1, "boolean"),
        Store("cat", "object", None, "category"),
        Store("text", "object", None, "string"),
    )
}


@dataclass(frozen=True, slots=True)
class Column:
    """One stored column: its name, how it is stored (a :data:`STORES` key), what it means."""

    name: str
    store: str
    meaning: str

    @property
    def dtype(self) -> str:
        """The frame's dtype for this column."""
        return STORES[self.store].dtype


COLUMNS: tuple[Column, ...] = (
    Column("seq", "seq", "row number, gapless, assigned under the scheduler's lock"),
    Column("t", "float", "scheduler clock time of the step (s)"),
    Column("wall", "float", "wall-clock time of the step, time.time() (s)"),
    Column("kind", "kind", "what happened: " + ", ".join(KINDS)),
    Column("task_id", "int", "the task concerned"),
    Column("case", "case", "decision tree case 1-8 (schedule and reject rows)"),
    Column("dup_of", "int", "for cases 5 and 7: the task the request duplicated"),
    Column("due", "float", "when the task (or this run) is due (s)"),
    Column("fire_at", "float", "when the queue will fire it: due rounded up by a wheel"),
    Column("label", "cat", "the action's qualified name or the given label"),
    Column("args", "text", "short repr of the positional arguments"),
    Column("period", "float", "period of a periodic task (s)"),
    Column("origin", "origin", "who asked: " + ", ".join(ORIGINS)),
    Column(
        "result",
        "cat",
        "outcome: cancel result, wake reason, result type of a finish, misfire policy, "
        "shutdown step",
    ),
    Column("where", "cat", "cancel: where the task was found (head, queue, running)"),
    Column("lateness", "float", "dispatch/start/event_set/missed: time since due (s)"),
    Column("queue_delay", "float", "start: time from dispatch to start (s)"),
    Column("duration", "float", "finish/error: run time (s)"),
    Column("wait", "float", "wake: the wait the worker computed before sleeping (s)"),
    Column("head_before", "float", "head time before the step"),
    Column("head_after", "float", "head time after the step"),
    Column(
        "ready_size", "int", "tasks at the head time after the step (every row that has queue_size)"
    ),
    Column("queue_size", "int", "pending tasks after the step"),
    Column("woke", "bool", "schedule: whether a waiting worker thread was notified"),
    Column("missed", "int", "missed: how many periodic runs were skipped"),
    Column("thread", "cat", "name of the thread that took the step"),
    Column("error", "text", "error: exception type and message; reject: the reason"),
    Column("detail", "text", "error: traceback text; shutdown: what was dropped"),
    Column(
        "trigger", "text", "schedule: a calendar task's trigger, described (e.g. its cron rule)"
    ),
    Column("worker", "cat", "finish/error: the cluster worker that ran the run (its address)"),
    Column(
        "worker_start",
        "float",
        "finish/error: when that run started on its worker (s, on the scheduler's clock)",
    ),
)
COLUMN_BY_NAME = {c.name: c for c in COLUMNS}

#: The fields each kind stores, after the common (kind code, t, wall, thread). ``dispatched``
#: is not a column: ``queue_delay`` is derived from it (see :data:`DERIVED`).
LAYOUTS: dict[str, tuple[str, ...]] = {
    "schedule": ("task_id", "case", "dup_of", "due", "fire_at", "label", "args", "period",
                 "origin", "head_before", "head_after", "ready_size", "queue_size", "woke",
                 "trigger"),
    "reject": ("case", "due", "label", "args", "period", "origin", "head_before",
               "ready_size", "queue_size", "error"),
    "wake": ("result", "wait", "head_before", "ready_size", "queue_size"),
    "dispatch": ("task_id", "due", "fire_at", "label", "head_after", "ready_size",
                 "queue_size"),
    "start": ("task_id", "due", "label", "dispatched"),
    "finish": ("task_id", "due", "label", "duration", "result", "worker", "worker_start"),
    "error": ("task_id", "due", "label", "duration", "error", "detail", "worker",
              "worker_start"),
    "event_set": ("task_id", "due", "label"),
    "missed": ("task_id", "due", "label", "period", "missed", "result"),
    "cancel": ("task_id", "result", "where", "due", "label", "head_before", "head_after",
               "ready_size", "queue_size"),
    "shutdown": ("task_id", "result", "due", "label", "ready_size", "queue_size", "detail"),
}  # fmt: skip
#: Common fields before each layout.
COMMON: tuple[str, ...] = ("t", "wall", "thread")


@dataclass(frozen=True, slots=True)
class Derived:
    """A column computed from stored ones for some kinds: ``target = expression``."""

    target: str
    kinds: tuple[str, ...]
    #: ``("diff", a, b)``: a - b; ``("copy", a)``: a; ``("const", value)``
    rule: tuple[object, ...]
    meaning: str


DERIVED: tuple[Derived, ...] = (
    Derived("lateness", ("dispatch", "start", "event_set", "missed"), ("diff", "t", "due"),
            "how late the step was (t - due)"),
    Derived("queue_delay", ("start",), ("diff", "t", "dispatched"),
            "dispatch -> start (t - the dispatch time the start row stores)"),
    Derived("head_after", ("reject", "wake"), ("copy", "head_before"),
            "the head does not move on these steps"),
    Derived("result", ("reject",), ("const", "rejected"), "a rejection's outcome"),
    Derived("result", ("error",), ("const", "error"), "a failed run's outcome"),
    Derived("origin", ("missed",), ("const", ORIGINS.index("periodic")),
            "missed runs belong to periodic re-arms"),
)  # fmt: skip

#: Columns the frame adds after the stored ones: (name, dtype, meaning).
FRAME_EXTRA: tuple[tuple[str, str, str], ...] = (
    ("time", "datetime64[ns, UTC]", "t as a UTC datetime"),
    ("wall_time", "datetime64[ns, UTC]", "wall as a UTC datetime"),
)

FRAME_COLUMNS: tuple[str, ...] = tuple(c.name for c in COLUMNS) + tuple(
    name for name, _, _ in FRAME_EXTRA
)


def markdown_table() -> str:
    """The schema as a Markdown table (``docs/event-log.md`` holds a copy; a test compares).

    >>> print(markdown_table().splitlines()[3])
    | `t` | float64 | scheduler clock time of the step (s) |
    """
    lines = ["| column | dtype | meaning |", "| --- | --- | --- |"]
    lines += [f"| `{c.name}` | {c.dtype} | {c.meaning} |" for c in COLUMNS]
    lines += [f"| `{name}` | {dtype} | {meaning} |" for name, dtype, meaning in FRAME_EXTRA]
    return "\n".join(lines)
