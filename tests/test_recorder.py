"""The recorder's rows follow the schema: each row builder is written once per kind, and
this test checks it field by field against :data:`tempsched_lab.log.schema.LAYOUTS`."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempsched_lab.core.queues import make_queue
from tempsched_lab.core.recorder import Recorder
from tempsched_lab.core.task import PeriodicTask, Task
from tempsched_lab.log.eventlog import LogWriter
from tempsched_lab.log.rows import WIDTH, FlatRows
from tempsched_lab.log.schema import COMMON, KIND_CODE, KINDS, LAYOUTS


class _Rows:
    """A stand-in for the EventLog: keeps what the recorder writes."""

    def __init__(self) -> None:
        self.flat = FlatRows()
        self.writer = LogWriter()
        self.writer.kinds, self.writer.fields = self.flat.kinds, self.flat.fields
        self.writer.room = 1_000_000

    @property
    def rows(self) -> list[tuple[object, ...]]:
        flat = self.flat
        for code, values in enumerate(flat.fields):  # every row of a kind: all its fields
            assert len(values) == flat.kinds.count(code) * WIDTH[code], KINDS[code]
        return flat.tuples()

    def settle(self) -> None:
        raise AssertionError("a handful of rows never fills the writer's room")


def job(*args: object) -> None:
    return None


def _task(task_id: int, due: float, label: str) -> Task:
    task = Task(due, job, (task_id,), None, label)
    task.id = task_id
    return task


def _recorder() -> tuple[Recorder, _Rows, Task]:
    rows = _Rows()
    queue = make_queue("sorteddict")
    pending = _task(7, 50.0, "pending")
    queue.insert(pending)
    return Recorder(rows, queue), rows, pending  # type: ignore[arg-type]


def _fields(row: tuple[object, ...]) -> tuple[str, dict[str, object]]:
    kind = KINDS[row[0]]  # type: ignore[index]
    names = COMMON + LAYOUTS[kind]
    assert len(row) == 1 + len(names), (kind, row)
    return kind, dict(zip(names, row[1:], strict=True))


def _each_kind(rec: Recorder, pending: Task) -> None:
    """One call of every row builder, with values that tell the fields apart."""
    task = _task(3, 20.0, "mine")
    periodic = PeriodicTask(30.0, job, (), None, "tick", 2.5, False, "skip")
    periodic.id = 4
    rec.scheduled(10.0, task, 4, 0, 50.0, 20.0, True)
    rec.scheduled(11.0, _task(9, 50.0, "again"), 7, 1, 20.0, 20.0, False, pending)
    rec.rejected(12.0, 1, 5.0, "late", "(1,)", None, 0, "in the past")
    rec.woke(13.0, True, 0.25)
    rec.started(14.0, task, 20.0, 13.5)
    rec.finished(15.0, task, 20.0, 1.0, 42, "w1", 14.5)
    rec.failed(16.0, task, 20.0, 2.0, ValueError("boom"), "w2", 14.0)
    rec.event_set(17.0, task, 20.0)
    rec.missed(18.0, periodic, 27.5, 3, "skip")
    rec.cancelled(19.0, 3, "cancelled", "queue", task, 50.0)
    rec.dropped(21.0, task, "shutting down")
    rec.stopped(22.0, "stopped by shutdown()")


def test_every_row_builder_lays_its_row_out_as_the_schema_says():
    rec, rows, pending = _recorder()
    _each_kind(rec, pending)
    got = [_fields(row) for row in rows.rows]
    kinds = [kind for kind, _ in got]
    assert kinds == ["schedule", "schedule", "reject", "wake", "start", "finish", "error",
                     "event_set", "missed", "cancel", "shutdown", "shutdown"]  # fmt: skip
    f = [fields for _, fields in got]
    assert f[0] | {"wall": 0, "thread": 0} == {
        "t": 10.0, "wall": 0, "thread": 0, "task_id": 3, "case": 4, "dup_of": -1, "due": 20.0,
        "fire_at": 20.0, "label": "mine", "args": "(3,)", "period": None, "origin": 0,
        "head_before": 50.0, "head_after": 20.0, "ready_size": 1, "queue_size": 1,
        "woke": True, "trigger": None,
    }  # fmt: skip
    assert (f[1]["task_id"], f[1]["dup_of"], f[1]["case"], f[1]["woke"]) == (7, 7, 7, False)
    assert (f[2]["case"], f[2]["due"], f[2]["label"], f[2]["error"]) == (1, 5.0, "late",
                                                                         "in the past")  # fmt: skip
    assert (f[3]["result"], f[3]["wait"], f[3]["head_before"]) == ("notified", 0.25, 50.0)
    assert (f[4]["task_id"], f[4]["due"], f[4]["dispatched"]) == (3, 20.0, 13.5)
    assert (f[5]["duration"], f[5]["result"], f[5]["worker"], f[5]["worker_start"]) == (
        1.0, "int", "w1", 14.5)  # fmt: skip
    assert f[6]["error"] == "ValueError: boom" and "ValueError" in str(f[6]["detail"])
    assert (f[7]["task_id"], f[7]["label"]) == (3, "mine")
    assert (f[8]["task_id"], f[8]["due"], f[8]["period"], f[8]["missed"], f[8]["result"]) == (
        4, 27.5, 2.5, 3, "skip")  # fmt: skip
    assert (f[9]["result"], f[9]["where"], f[9]["head_before"], f[9]["head_after"]) == (
        "cancelled", "queue", 50.0, 50.0)  # fmt: skip
    assert (f[10]["task_id"], f[10]["result"], f[10]["detail"]) == (3, "dropped", "shutting down")
    assert f[11]["task_id"] == -1 and math.isnan(f[11]["due"])  # type: ignore[arg-type]


def test_every_kind_of_the_schema_has_a_row_builder():
    rec, rows, pending = _recorder()
    _each_kind(rec, pending)
    rec.dispatched(23.0, [])  # an empty batch writes nothing
    assert {KINDS[row[0]] for row in rows.rows} | {"dispatch"} == set(KIND_CODE)  # type: ignore[index]


@pytest.mark.parametrize("design", ["sorteddict", "heap", "wheel"])
def test_a_dispatch_row_follows_the_schema(design):
    rows = _Rows()
    queue = make_queue(design)
    for task_id, due in ((0, 1.0), (1, 1.0), (2, 3.0)):
        queue.insert(_task(task_id, due, f"t{task_id}"))
    rec = Recorder(rows, queue)  # type: ignore[arg-type]
    rec.dispatched(1.5, queue.pop_due(1.5))
    got = [_fields(row) for row in rows.rows]
    assert [kind for kind, _ in got] == ["dispatch", "dispatch"]
    for task_id, (_, fields) in enumerate(got):
        assert fields["t"] == 1.5 and fields["task_id"] == task_id and fields["due"] == 1.0
        assert fields["label"] == f"t{task_id}" and fields["queue_size"] == 1
        assert fields["head_after"] == queue.head_time()


def test_a_start_recorded_with_its_dispatch_is_the_row_started_writes():
    """A run started in the same step as its dispatch (a virtual clock's inline run) has its
    start row written by ``dispatched(..., started=task)``: field for field the row that
    ``started(now, task, task.due, now)`` writes, wall clock aside, right after the
    dispatch rows."""
    rows, alone = _Rows(), _Rows()
    for recording in (rows, alone):
        queue = make_queue("wheel")  # (a wheel's fire_at differs from due: both kept apart)
        queue.insert(_task(5, 2.25, "only"))
        rec = Recorder(recording, queue)  # type: ignore[arg-type]
        (group,) = queue.pop_due(3.0)
        (task,) = group.tasks
        if recording is rows:
            rec.dispatched(3.0, [group], task)
        else:
            rec.dispatched(3.0, [group])
            rec.started(3.0, task, task.due, 3.0)
    together, apart = ([_fields(row) for row in r.rows] for r in (rows, alone))
    assert [kind for kind, _ in together] == ["dispatch", "start"]
    for (kind_a, a), (kind_b, b) in zip(together, apart, strict=True):
        assert kind_a == kind_b and a | {"wall": 0} == b | {"wall": 0}
    assert together[1][1]["wall"] == together[0][1]["wall"]  # one reading for both rows
    assert together[1][1]["due"] == 2.25 and together[1][1]["dispatched"] == 3.0


class _Args(tuple):  # type: ignore[type-arg]
    """A tuple subclass: ``schedule`` stores it as a plain tuple (``check_args``)."""


@settings(max_examples=60, deadline=None)
@given(
    args=st.lists(st.one_of(st.integers(), st.text(max_size=5), st.none()), max_size=3),
    form=st.sampled_from(["tuple", "list", "subclass"]),
)
def test_a_schedule_row_states_the_args_as_short_repr_does(args, form):
    """The ``args`` field (``"()"`` found by identity with the empty tuple, issue 40) is
    ``short_repr`` of the arguments as the task holds them, whatever form they were given
    in: no arguments are ``"()"``, from an empty tuple, an empty list or an empty subclass."""
    from tempsched_lab import Scheduler, VirtualClock
    from tempsched_lab.core.reprs import short_repr

    given_args = {"tuple": tuple(args), "list": list(args), "subclass": _Args(args)}[form]
    s = Scheduler(VirtualClock())
    s.schedule(job, at=1.0, args=given_args)
    (row,) = [r for r in s.log.rows() if r["kind"] == "schedule"]
    text = row["args"]
    assert text == short_repr(tuple(args))
    assert (text == "()") == (not args)
