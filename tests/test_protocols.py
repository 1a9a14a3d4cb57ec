"""Every collaborator of the scheduler conforms to the protocol it belongs to (issue 35, item 1).

A clock, a driver, a launcher, a launcher factory, a clock's target (``Drivable``), a
runner's host (``RunHost``) and a facade's host (``FacadeHost``) each have a declared
protocol; the core asks nothing else of them (no ``getattr``/``hasattr``/signature probe:
checked below on the core's source). Each built-in collaborator, and each example of
docs/extending.md, names its protocol as a base (so mypy checks its signatures); the
scheduler's ports (``tempsched_lab/core/ports.py``, item 2) are checked structurally, by mypy in
that module and here on a port made for a scheduler. For every member: present, and a
method's parameters named as the protocol names them.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path
from typing import Any

import pytest
from test_extending import _blocks

from tempsched_lab import Scheduler
from tempsched_lab.aio import LoopExecutor, LoopLauncher
from tempsched_lab.core.dask import DaskExecutor, DaskLauncher
from tempsched_lab.core.executors import (
    ExecutorLauncher,
    InlineLauncher,
    Launcher,
    LauncherFactory,
    PoolLauncher,
    ThreadPerRun,
    ThreadPerRunLauncher,
)
from tempsched_lab.core.ports import ClockPort, FacadeHost, FacadePort, RunPort
from tempsched_lab.core.runs import RunHost
from tempsched_lab.lab.pool import Calendar, VirtualPool
from tempsched_lab.lab.pool import PoolLauncher as LabPoolLauncher
from tempsched_lab.scenarios import SimulatedWorker
from tempsched_lab.scenarios import _SimulatedLauncher as SimulatedLauncher
from tempsched_lab.time.clock import Clock, Drivable, Driver, RealClock, ThreadDriver, VirtualClock
from tempsched_lab.time.clock import _VirtualDriver as VirtualDriver
from tempsched_lab.time.loop import AsyncioClock, LoopDriver

ROOT = Path(__file__).resolve().parents[1]


def _examples() -> dict[str, Any]:
    """The classes docs/extending.md defines (its blocks run in one namespace)."""
    namespace: dict[str, Any] = {"__name__": "extending_md"}
    for number, code in enumerate(_blocks(), 1):
        exec(compile(code, f"docs/extending.md block {number}", "exec"), namespace)
        for value in list(namespace.values()):
            if isinstance(value, Scheduler):
                value.shutdown()
    return namespace


DOCS = _examples()

#: protocol -> (the built-in collaborators and the docs' examples, named as a base or not)
IMPLEMENTERS: dict[type, list[type]] = {
    Clock: [RealClock, VirtualClock, AsyncioClock, DOCS["JumpClock"]],
    Driver: [ThreadDriver, VirtualDriver, LoopDriver, DOCS["_NoThread"]],
    Launcher: [
        InlineLauncher,
        ThreadPerRunLauncher,
        PoolLauncher,
        ExecutorLauncher,
        LoopLauncher,
        DaskLauncher,
        SimulatedLauncher,
        LabPoolLauncher,
        DOCS["_NewestFirstLauncher"],
    ],
    Drivable: [ClockPort, Calendar],
    LauncherFactory: [
        ThreadPerRun,
        LoopExecutor,
        DaskExecutor,
        VirtualPool,
        SimulatedWorker,
        DOCS["NewestFirst"],
    ],
    RunHost: [RunPort],
    FacadeHost: [FacadePort],
}
#: structural only (by design): the ports hold the scheduler's bound methods (checked on an
#: instance); factories are user objects of any kind (``executor=`` dispatches on them)
STRUCTURAL = {Drivable: {ClockPort}, RunHost: {RunPort}, FacadeHost: {FacadePort}}
STRUCTURAL[LauncherFactory] = {"*"}
PORTS = {ClockPort, RunPort, FacadePort}


def _members(protocol: type) -> dict[str, Any]:
    """The protocol's declared members (its own and its protocol bases'): name -> value."""
    out: dict[str, Any] = {}
    for base in reversed(protocol.__mro__):
        if (
            base is object
            or not getattr(base, "_is_protocol", False)
            or base.__module__ == "typing"
        ):
            continue
        for name in inspect.get_annotations(base):
            out[name] = base.__dict__.get(name, inspect.Parameter.empty)
        for name, value in base.__dict__.items():
            if callable(value) and not name.startswith("_"):
                out[name] = value
    return out


def _has_default(function: Any) -> bool:
    """A protocol method with a body of its own (not only a docstring and ``...``)."""
    body = ast.parse(inspect.cleandoc("\n" + inspect.getsource(function))).body[0].body
    body = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return bool(body)


def _optional(protocol: type) -> list[str]:
    """The members a collaborator gets by naming ``protocol`` as a base."""
    empty = inspect.Parameter.empty
    members = _members(protocol).items()
    return [n for n, v in members if v is not empty and (not callable(v) or _has_default(v))]


CASES = [(p, c) for p, classes in IMPLEMENTERS.items() for c in classes]


@pytest.mark.parametrize(("protocol", "cls"), CASES, ids=lambda x: x.__name__)
def test_each_collaborator_conforms_to_its_protocol(protocol: type, cls: type) -> None:
    structural = STRUCTURAL.get(protocol, set())
    if cls not in structural and "*" not in structural:
        assert protocol in cls.__mro__, f"{cls.__name__} should name {protocol.__name__} as a base"
    if cls in PORTS:  # its members are set on the instance: check one, made for a scheduler
        _check_port(protocol, cls(Scheduler(VirtualClock())))
        return
    for name, declared in _members(protocol).items():
        if declared is inspect.Parameter.empty:  # a data member without a default
            assert hasattr(cls, name) or re.search(rf"self\.{name}\b.*=", inspect.getsource(cls)), (
                f"{cls.__name__} lacks {protocol.__name__}.{name}"
            )
            continue
        assert hasattr(cls, name), f"{cls.__name__} lacks {protocol.__name__}.{name}"
        if callable(declared) and inspect.isfunction(declared):
            mine = getattr(cls, name)
            if mine is declared:
                assert _has_default(declared), f"{cls.__name__} must define {name}"
                continue
            want = list(inspect.signature(declared).parameters)
            got = list(inspect.signature(mine).parameters)
            assert got[: len(want)] == want, (cls.__name__, name, got, want)


def _check_port(protocol: type, port: Any) -> None:
    """Every member of ``protocol`` on ``port``, nothing public beyond them, each method a
    bound method of the scheduler taking the protocol's parameters, named alike."""
    members = _members(protocol)
    public = {n for n in dir(port) if not n.startswith("_")}
    assert public == set(members), (type(port).__name__, public ^ set(members))
    for name, declared in members.items():
        mine = getattr(port, name)
        if not inspect.isfunction(declared):  # a data member (``token``, ``clock``...)
            continue
        assert inspect.ismethod(mine), (name, mine)  # a bound method of the core, no wrapper
        want = list(inspect.signature(declared).parameters)[1:]  # (``self`` aside)
        got = list(inspect.signature(mine).parameters)
        assert got[: len(want)] == want, (type(port).__name__, name, got, want)


def test_the_scheduler_talks_to_its_collaborators_through_its_ports():
    """A clock drives the scheduler's clock port, the runner reports to its run port; the
    scheduler itself is never handed to a collaborator (its public names are its users')."""
    clock = VirtualClock()
    s = Scheduler(clock)
    (driver,) = clock._drivers
    assert type(driver.target) is ClockPort and driver.target.fire_due.__self__ is s
    assert type(s._runner._host) is RunPort and s._runner._host.run_ended.__self__ is s
    with Scheduler() as real:
        assert type(real._driver._target) is ClockPort


def test_the_optional_members_have_defaults_and_the_required_do_not():
    """What a new collaborator must write, and what it gets by naming its protocol."""
    protocols = (Clock, Driver, Launcher, Drivable, RunHost, FacadeHost)
    optional = {p.__name__: sorted(_optional(p)) for p in protocols}
    assert optional == {
        "Clock": ["inherited_by_fork", "monotonic_based", "origin"],
        "Driver": ["can_be_lost", "lost", "thread"],
        "Launcher": ["abandon_if_closed", "runs_in_caller"],
        "Drivable": ["fire_next", "periodic_runs_until"],
        "RunHost": [],
        "FacadeHost": [],
    }


CORE_MODULES = (
    "core/scheduler.py",
    "time/clock.py",
    "core/runs.py",
    "core/ports.py",
    "time/wall.py",
    "time/loop.py",
    "aio.py",
)
COLLABORATOR_USERS = ("core/executors.py", "compat/facade.py", "compat/timer.py")


@pytest.mark.parametrize("module", CORE_MODULES + COLLABORATOR_USERS)
def test_the_core_probes_no_collaborator(module: str) -> None:
    """No getattr/hasattr/signature probe on a clock, driver, launcher, target or host is
    left in the core (issue 35 counted 8 + 3 + 1). What remains reads a thread-local
    (``in_task``), a user's task or callable, or a coroutine's result: not collaborators."""
    source = (ROOT / "tempsched_lab" / module).read_text()
    probes = re.findall(r"(?:getattr|hasattr)\(([^,]+),", source) + re.findall(
        r"\binspect\.signature\(([^)]+)\)", source
    )
    # a thread-local, a user's task or callable, a coroutine's result, an object's own
    # half-built state in __init__, and a private function of the threading module
    allowed = {"in_task", "task.action", "task", "pending", "result", "kind", "self", "threading"}
    assert [p for p in probes if p.strip() not in allowed] == []
