"""The 8-case decision tree: each case by hand, and random sequences against a model."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tempsched_lab import TREE, Case, PastTimeError, Scheduler, VirtualClock, replay


def job(*args, **kwargs):
    return None


def other(*args, **kwargs):
    return None


@pytest.fixture
def vs():
    clock = VirtualClock()
    return clock, Scheduler(clock)


def test_each_case_by_hand(vs):
    _, s = vs
    assert s.schedule_decision(job, at=5).case is Case.EMPTY  # id 0
    assert s.schedule_decision(job, at=3).case is Case.EARLIER_THAN_HEAD  # id 1
    assert s.schedule_decision(job, at=7).case is Case.NEW_TIME_POINT  # id 2
    d5 = s.schedule_decision(job, at=3)
    assert (d5.case, d5.task_id, d5.duplicate_of) == (Case.DUPLICATE_OF_HEAD, 1, 1)
    assert s.schedule_decision(other, at=3).case is Case.JOINS_HEAD  # id 3 (no burned ID)
    d7 = s.schedule_decision(job, at=7)
    assert (d7.case, d7.task_id) == (Case.DUPLICATE_IN_QUEUE, 2)
    d8 = s.schedule_decision(job, at=7, args=(1,))
    assert (d8.case, d8.task_id) == (Case.JOINS_TIME_POINT, 4)
    with pytest.raises(PastTimeError) as info:
        s.schedule(job, delay=-1)
    assert info.value.decision.case is Case.PAST
    assert info.value.decision.task_id is None
    frame = s.log.to_frame()
    assert frame["case"].dropna().astype(int).tolist() == [2, 3, 4, 5, 6, 7, 8, 1]
    assert frame["kind"].astype(str).tolist()[-1] == "reject"


def test_cases_carry_teaching_text_and_paths():
    for case in Case:
        assert len(case.explanation) > 60
        assert case.short
        keys = [key for key, _ in case.path]
        assert keys[0] == "past"
    assert Case.EARLIER_THAN_HEAD.path == (("past", False), ("empty", False), ("earlier", True))
    leaves = {t for q in TREE for t in (q.yes, q.no) if isinstance(t, Case)}
    assert leaves == set(Case)


def test_period_is_part_of_the_duplicate_key(vs):
    _, s = vs
    a = s.schedule(job, at=2)
    d = s.schedule_decision(job, at=2, period=1)
    assert d.task_id != a
    assert d.case is Case.JOINS_HEAD


def test_raising_comparisons_count_as_not_equal(vs):
    _, s = vs
    arr = np.arange(3)
    a = s.schedule(job, at=1, args=(arr,))
    b = s.schedule(job, at=1, args=(np.arange(3),))  # == is ambiguous: not a duplicate
    c = s.schedule(job, at=1, args=(arr,))  # the same object: identity makes it a duplicate
    assert (a, c) == (0, 0) and b == 1

    class Boom:
        def __eq__(self, other):
            raise RuntimeError("no comparing")

        __hash__ = None

    d = s.schedule(job, at=1, args=(Boom(),))
    e = s.schedule(job, at=1, args=(Boom(),))
    assert d != e


def test_many_tasks_at_one_time_use_the_hash_index(vs):
    _, s = vs
    ids = [s.schedule(job, at=1, args=(i,)) for i in range(200)]
    assert ids == list(range(200))
    assert [s.schedule(job, at=1, args=(i,)) for i in range(200)] == ids
    s.cancel(5)
    assert s.schedule(job, at=1, args=(5,)) == 200  # cancelled: no longer a duplicate
    assert s.schedule(job, at=1, args=(6,)) == 6


def test_resolution_lets_relative_requests_meet():
    clock = VirtualClock(start=0.03)
    s = Scheduler(clock, resolution=0.5)
    a = s.schedule(job, delay=0.2)
    clock.advance(0.1)
    b = s.schedule(job, delay=0.2)  # both round up to 0.5
    assert a == b
    assert s.status(a).next_due == 0.5


# -- random sequences against an independent model ----------------------------------------

TIMES = st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.0])
ACTIONS = st.sampled_from(["job", "other"])
ARGS = st.sampled_from([(), (1,), (2,)])


class DecisionModel(RuleBasedStateMachine):
    """A list of (due, id, key) is the model; the scheduler must decide like it."""

    def __init__(self):
        super().__init__()
        self.fired: list[int] = []
        self.expected_fired: list[int] = []

    @initialize(design=st.sampled_from(["sorteddict", "heap", "wheel"]))
    def setup(self, design):
        self.clock = VirtualClock()
        opts = {"tick": 0.25, "slots": 8} if design == "wheel" else {}
        self.s = Scheduler(self.clock, queue=design, queue_options=opts)
        self.pending: list[tuple[float, int, tuple]] = []  # (due, id, key) in insertion order
        self.next_id = 0
        self.known: list[int] = []
        self.actions = {"job": self._make("job"), "other": self._make("other")}

    def _make(self, name):
        def act(*args):
            self.fired.append(args[-1])

        act.__qualname__ = name
        return act

    def model_case(self, due, key):
        now = self.clock.now()
        if due < now:
            return Case.PAST, None
        if not self.pending:
            return Case.EMPTY, None
        head = min(d for d, _, _ in self.pending)
        at_due = [(i, k) for d, i, k in self.pending if d == due]
        dup = next((i for i, k in at_due if k == key), None)
        if due < head:
            return Case.EARLIER_THAN_HEAD, None
        if due == head:
            return (Case.DUPLICATE_OF_HEAD, dup) if dup is not None else (Case.JOINS_HEAD, None)
        if not at_due:
            return Case.NEW_TIME_POINT, None
        return (Case.DUPLICATE_IN_QUEUE, dup) if dup is not None else (Case.JOINS_TIME_POINT, None)

    @rule(offset=TIMES, action=ACTIONS, args=ARGS, relative=st.booleans())
    def schedule(self, offset, action, args, relative):
        now = self.clock.now()
        due = now + offset if relative else offset
        call_args = (*args, "tag")
        key = (action, call_args)
        expected, dup = self.model_case(due, key)
        # the task appends its own ID, which we only know after the decision: use a tag
        if expected is Case.PAST:
            with pytest.raises(PastTimeError):
                self.s.schedule(self.actions[action], at=due, args=call_args)
            return
        d = self.s.schedule_decision(self.actions[action], at=due, args=call_args)
        assert d.case is expected, (d, expected)
        if dup is not None:
            assert d.task_id == dup == d.duplicate_of
        else:
            assert d.task_id == self.next_id
            self.next_id += 1
            self.pending.append((due, d.task_id, key))
            self.known.append(d.task_id)

    @precondition(lambda self: self.known)
    @rule(data=st.data())
    def cancel(self, data):
        tid = data.draw(st.sampled_from(self.known))
        was_pending = any(i == tid for _, i, _ in self.pending)
        result = self.s.cancel(tid)
        assert (result.value == "cancelled") == was_pending
        self.pending = [p for p in self.pending if p[1] != tid]

    @rule(dt=st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.5]))
    def advance(self, dt):
        target = self.clock.now() + dt
        wheel = self.s.queue.design == "wheel"
        fire = self.s.queue.fire_time if wheel else (lambda t: t)
        due_now = sorted(
            (p for p in self.pending if fire(p[0]) <= target), key=lambda p: (p[0], p[1])
        )
        before = len(self.s.log)
        self.clock.run_until(target)
        self.pending = [p for p in self.pending if fire(p[0]) > target]
        frame = self.s.log.to_frame().iloc[before:]
        started = frame.loc[frame["kind"] == "start", "task_id"].astype(int).tolist()
        assert started == [p[1] for p in due_now]

    @rule()
    def step(self):
        """One step of the clock: the earliest group fires (for the wheel: its whole tick)."""
        fire = self.s.queue.fire_time
        if not self.pending:
            assert self.clock.step() is None
            return
        first = min(fire(p[0]) for p in self.pending)
        due_now = sorted(
            (p for p in self.pending if fire(p[0]) <= first), key=lambda p: (p[0], p[1])
        )
        before = len(self.s.log)
        assert self.clock.step() == first
        self.pending = [p for p in self.pending if fire(p[0]) > first]
        frame = self.s.log.to_frame().iloc[before:]
        started = frame.loc[frame["kind"] == "start", "task_id"].astype(int).tolist()
        assert started == [p[1] for p in due_now]

    @invariant()
    def replay_equals_the_live_queue(self):
        """The log is complete: replaying it (on the default design) gives the live state."""
        if not hasattr(self, "s"):
            return
        assert replay(self.s.log.to_frame()) == self.s.queue.state()

    @invariant()
    def queue_consistent(self):
        if not hasattr(self, "s"):
            return
        self.s.queue.check_invariants()
        assert len(self.s.queue) == len(self.pending)
        head = min((d for d, _, _ in self.pending), default=None)
        assert self.s.queue.head_time() == head


TestDecisionModel = pytest.mark.slow(DecisionModel.TestCase)
TestDecisionModel.settings = settings(
    max_examples=60, stateful_step_count=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip


def test_virtual_clock_runs_are_deterministic():
    def scenario():
        clock = VirtualClock()
        s = Scheduler(clock)
        order: list[str] = []
        s.schedule(order.append, at=1, args=("a",))
        s.schedule(order.append, at=0.5, args=("b",), period=0.75)
        ev = threading.Event()
        s.schedule(ev, at=1.25)
        s.schedule(order.append, at=1, args=("c",))
        clock.run_until(4)
        frame = s.log.to_frame()
        return order, frame.drop(columns=["wall", "wall_time", "thread"])

    o1, f1 = scenario()
    o2, f2 = scenario()
    assert o1 == o2 == ["b", "a", "c", "b", "b", "b", "b"]  # b: 0.5, 1.25, 2, 2.75, 3.5
    assert f1.equals(f2)


# -- the tree as data and the tree as code agree on every path ------------------------------


@given(
    points=st.dictionaries(
        st.sampled_from([1.0, 2.0, 3.0, 4.0]),
        st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True),
        max_size=4,
    ),
    due=st.sampled_from([0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 4.0, 5.0]),
    name=st.sampled_from(["a", "b", "c", "d"]),
    design=st.sampled_from(["sorteddict", "heap", "wheel"]),
)
@settings(max_examples=300, deadline=None)
def test_walking_the_tree_data_gives_the_same_case_as_classify(points, due, name, design):
    from tempsched_lab.core.decision import walk_tree
    from tempsched_lab.core.queues import make_queue
    from tempsched_lab.core.task import make_task

    now = 0.75
    queue = make_queue(design, **({"tick": 0.5, "slots": 4} if design == "wheel" else {}))
    actions = {key: _named(key) for key in "abcd"}
    for i, (t, names) in enumerate(sorted(points.items())):
        for j, key in enumerate(names):
            queue.insert(make_task(10 * i + j, t, actions[key]))
    head = queue.head_time()
    at_due = points.get(due, [])
    answers = {
        "past": due < now,
        "empty": head is None,
        "earlier": head is not None and due < head,
        "at_head": due == head,
        "dup_head": name in at_due,
        "in_queue": bool(at_due),
        "dup_queue": name in at_due,
    }
    by_data, path = walk_tree(answers.__getitem__)
    by_code, dup = queue.classify(due, now, actions[name], (), None, None)
    assert by_data is by_code
    assert path == by_code.path
    assert (dup is not None) == by_code.is_duplicate


def test_every_case_has_one_path_through_the_tree():
    leaves = [target for q in TREE for target in (q.yes, q.no) if isinstance(target, Case)]
    assert sorted(leaves) == list(Case)
    for case in Case:
        assert case.path[0][0] == TREE[0].key


def _named(key):
    def action():
        return key

    action.__qualname__ = key
    return action
