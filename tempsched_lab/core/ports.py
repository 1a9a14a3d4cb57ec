"""The scheduler's ports: what its clock, its runner and a facade talk to, apart from its users.

A :class:`~tempsched_lab.Scheduler`'s public names are what users call
(``schedule``, ``cancel``, ``status``...). Its collaborators call other things:
a clock's driver asks when the next group is due and fires it, a runner
records the start and the end of each run, the compat facade submits the
request records it built itself. Each talks to a small port object instead of
the scheduler, typed by the protocol its collaborator names:

* :class:`ClockPort` (a :class:`~tempsched_lab.time.clock.Drivable`): what a clock's
  driver calls; ``Scheduler`` hands it to ``clock.attach(port, name)``;
* :class:`RunPort` (a :class:`~tempsched_lab.core.runs.RunHost`): what the scheduler's
  :class:`~tempsched_lab.core.runs.Runner` reports each run's start and end to (a
  launcher talks only to the runner it was given);
* :class:`FacadePort` (a :class:`FacadeHost`, declared below): what the compat
  facade (``compat/``) calls to submit the request records it builds itself.

The scheduler makes its clock port and its run port itself (one of each, in
``Scheduler.__init__``); a facade makes its own: ``FacadePort(scheduler)``.

A port's members are the scheduler's own (private) bound methods, bound once
when the port is made: a collaborator's call costs what calling the scheduler
directly did (no second Python call per dispatch). Measured with
``benchmarks/instructions.py`` (n = 5,000, instructions per operation, before the
ports -> bound ports -> ports whose methods call the scheduler's): the simulation
with the log off 52,854 -> 53,095 (+0.5 %) -> 53,535 (+1.3 %); a one-shot
scheduled then fired 99,809 -> 99,872 (+0.1 %) -> 100,562 (+0.8 %); a periodic
run, log off, 47,350 -> 47,441 (+0.2 %) -> 47,863 (+1.1 %). A port is checked against
its protocol structurally: ``mypy --strict`` infers each member's type from the
bound method and checks it against the member it stands for (the block at the
end of this module, and every place a port is handed over);
``tests/test_protocols.py`` checks the members' names and parameters.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> s = Scheduler(VirtualClock())
>>> port = ClockPort(s)
>>> _ = s.schedule(print, at=2.0, args=("fired by the clock port",))
>>> port.next_fire_time()
2.0
>>> port.fire_due(2.0)
fired by the clock port
>>> "fire_due" in dir(s)  # not the user's business
False
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from .task import Origin

if TYPE_CHECKING:
    from ..time.clock import Drivable
    from .runs import RunHost
    from .scheduler import Scheduler
    from .task import Task

__all__ = ["ClockPort", "FacadeHost", "FacadePort", "RunPort"]


class ClockPort:
    """The scheduler as its clock's driver sees it: the :class:`~tempsched_lab.time.clock.Drivable`
    members (``next_fire_time``, ``fire_due``, ``fire_next``, ``periodic_runs_until``,
    ``woke``, ``driver_died``), and nothing else.

    ``Scheduler`` passes one to ``clock.attach(port, name)``; a clock (built-in or
    your own, see docs/extending.md) drives the scheduler only through it.
    """

    __slots__ = (
        "__weakref__",  # a clock may keep what it drives in a WeakKeyDictionary (AsyncioClock)
        "_scheduler",
        "driver_died",
        "fire_due",
        "fire_next",
        "next_fire_time",
        "periodic_runs_until",
        "woke",
    )

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler  # (for the repr)
        # bound once: no call more per dispatch than before the port (see the module's doc)
        self.next_fire_time = scheduler._next_fire_time
        self.fire_due = scheduler._fire_due
        self.fire_next = scheduler._fire_next
        self.periodic_runs_until = scheduler._periodic_runs_until
        self.woke = scheduler._woke
        self.driver_died = scheduler._driver_died

    def __repr__(self) -> str:
        return f"<ClockPort of {self._scheduler!r}>"


class RunPort:
    """The scheduler as its :class:`~tempsched_lab.core.runs.Runner` sees it: the
    :class:`~tempsched_lab.core.runs.RunHost` members (``run_started``, ``run_ended``, and
    the scheduler's ``token``, ``loop`` and ``clock``).

    A launcher never sees it: it calls the runner it was given (``runner.run(...)``),
    and the runner reports each run's start and end here.
    """

    __slots__ = ("_scheduler", "clock", "loop", "run_ended", "run_started", "token")

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler  # (for the repr)
        self.token = scheduler.token
        self.loop = scheduler.loop
        self.clock = scheduler.clock
        # bound once: no call more per run than before the port (see the module's doc)
        self.run_started = scheduler._run_started
        self.run_ended = scheduler._run_ended

    def __repr__(self) -> str:
        return f"<RunPort of {self._scheduler!r}>"


class FacadeHost(Protocol):
    """What a facade over the scheduler (the compat ``TemporalScheduler``) calls beyond the
    user's API: it builds its own request records, checks its own arguments, and shows
    the queue in its own shape."""

    def submit_request(
        self,
        task: Task,
        *,
        at: Any = None,
        delay: Any = None,
        origin: Origin | str = Origin.USER,
        full: bool = True,
    ) -> Any:
        """Decide on a request record built by the caller, through the scheduler's one way
        in. ``task`` carries the action and its arguments *as given* (no conversion: e.g.
        the reference API passes any iterable of arguments). ``at``/``delay`` are checked
        like ``schedule``'s. Returns the :class:`~tempsched_lab.Decision`, or only the
        task ID with ``full=False``."""
        ...

    def read_records(
        self, fn: Callable[[Iterable[tuple[float, Iterable[Task]]], Iterable[Task]], Any]
    ) -> Any:
        """Call ``fn(points, running)`` under the scheduler's lock and return what it returns:
        ``points`` the pending time points, earliest first, as ``(due, tasks)``, ``running``
        the tasks whose run is in flight. ``fn`` copies what it keeps, changes nothing, and
        returns quickly (it holds the lock)."""
        ...

    def record_rejection(
        self, action: Any, args: Any, period: Any, label: Any, origin: Origin | str,
        exc: BaseException,
    ) -> None:  # fmt: skip
        """Write the ``reject`` row of a request the facade refused before submitting it (its
        own argument checks), as ``schedule`` does for its own."""
        ...

    def check_period(self, period: Any) -> float:
        """``period`` checked as ``schedule(period=...)`` checks it (positive, finite, not
        below the queue's tick nor the resolution); raises ``ValueError`` naming it."""
        ...


class FacadePort:
    """The scheduler as a facade sees it: :class:`FacadeHost`'s members, bound once.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> from tempsched_lab.core.task import Task
    >>> port = FacadePort(Scheduler(VirtualClock()))
    >>> port.submit_request(Task(0.0, print, ("as given",), None, None), at=1.0, full=False)
    0
    >>> port.check_period(0.5)
    0.5
    """

    __slots__ = (
        "_scheduler",
        "check_period",
        "read_records",
        "record_rejection",
        "submit_request",
    )

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler  # (for the repr)
        self.submit_request = scheduler._submit_request
        self.read_records = scheduler._read_records
        self.record_rejection = scheduler._record_rejection
        self.check_period = scheduler._requests.period

    def __repr__(self) -> str:
        return f"<FacadePort of {self._scheduler!r}>"


if TYPE_CHECKING:

    def _each_port_is_what_its_collaborator_asks_for(
        scheduler: Scheduler,
    ) -> tuple[Drivable, RunHost, FacadeHost]:
        """Never called: ``mypy --strict`` checks each port against its protocol here."""
        return ClockPort(scheduler), RunPort(scheduler), FacadePort(scheduler)
