"""What a run's scheduler is: queue design, executor, pool size, misfire policy, resolution.

These are the scheduler's parameters an experiment can sweep (the keys of
:data:`SCHEDULER_KEYS`); every other grid key is a workload parameter.

* ``queue``: a design by name (``"sorteddict"``, ``"heap"``, ``"wheel"``), with
  options in brackets when the design takes some: ``"wheel(tick=0.001)"``,
  ``"wheel(tick=0.005, slots=64)"``. The text is kept as given in the results.
* ``executor``: where runs happen, *in virtual time*:

  - ``"inline"`` (the virtual clock's default): each run takes its duration on
    the clock (``VirtualClock.elapse``) in the thread that fires the groups, so
    nothing else is dispatched meanwhile: one server, whose backlog shows as
    *scheduling* lateness (due -> dispatch);
  - ``"pool"``: a pool of ``max_workers`` threads (default 4), simulated: a
    dispatched run starts when one of them is free, the dispatcher never waits;
    the backlog shows as *queueing* delay (dispatch -> start);
  - ``"thread"``: a thread per run (no bound): every run starts at its dispatch.

  Real threads would make a virtual-clock run depend on the operating system's
  timing; the simulated pool keeps every run a pure function of its seed.
* ``max_workers``: the ``"pool"`` executor's size (only with ``"pool"``).
* ``misfire``: the periodic tasks' misfire policy (``"skip"``, ``"run_once"``,
  ``"catch_up"``).
* ``resolution``: round due times up to this grid (seconds; ``None``: exact).

And how the run is recorded (not a grid key: an experiment's choice,
``Experiment(record=...)``): ``record="full"`` (the event log, every row) or
``"metrics"`` (a :class:`~tempsched_lab.core.recorder.MetricsRecorder`: the same
measures as running totals, no rows; the run has no log frame, which
``Experiment.log`` regenerates).

>>> config = run_config({"queue": "wheel(tick=0.005)", "executor": "pool", "max_workers": 2})
>>> config.design, config.queue_options, config.workers
('wheel', {'tick': 0.005}, 2)
>>> run_config({"executor": "inline", "max_workers": 2})
Traceback (most recent call last):
...
ValueError: max_workers=2: applies to executor='pool' only (this run has executor='inline')
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.queues import DESIGNS, make_queue
from ..core.triggers.misfire import MISFIRE_POLICIES

__all__ = [
    "DEFAULT_POOL",
    "EXECUTORS",
    "RECORDS",
    "SCHEDULER_KEYS",
    "RunConfig",
    "parse_queue",
    "plain",
    "run_config",
]

#: Grid keys that configure the scheduler (the rest configure the workload).
SCHEDULER_KEYS: tuple[str, ...] = ("queue", "executor", "max_workers", "misfire", "resolution")
#: The executors a lab run simulates.
EXECUTORS: tuple[str, ...] = ("inline", "pool", "thread")
#: The simulated pool's size when ``max_workers`` is not given (a real pool's default
#: depends on the machine's cores; a lab run must not).
DEFAULT_POOL = 4
#: How a run can be recorded: its whole event log, or only its measures.
RECORDS: tuple[str, ...] = ("full", "metrics")

_SPEC = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*$", re.DOTALL)


def parse_queue(spec: Any) -> tuple[str, dict[str, Any]]:
    """``"wheel(tick=0.001)"`` -> ``("wheel", {"tick": 0.001})``; checked against the design.

    >>> parse_queue("heap")
    ('heap', {})
    >>> parse_queue("wheel(ticks=1)")
    Traceback (most recent call last):
    ...
    ValueError: queue='wheel(ticks=1)': TimingWheelQueue.__init__() got an unexpected keyword \
argument 'ticks'
    """
    if not isinstance(spec, str):
        raise TypeError(
            f"queue={spec!r}: expected a design name such as 'heap' or 'wheel(tick=0.001)'"
        )
    match = _SPEC.match(spec)
    if match is None or match.group(1) not in DESIGNS:
        raise ValueError(
            f"queue={spec!r}: expected one of {sorted(DESIGNS)}, with options in brackets "
            "such as 'wheel(tick=0.001)'"
        )
    name, inside = match.group(1), match.group(2)
    options: dict[str, Any] = {}
    if inside is not None and inside.strip():
        try:
            call = ast.parse(f"f({inside})", mode="eval").body
            if not isinstance(call, ast.Call) or call.args:
                raise ValueError("positional option")
            for keyword in call.keywords:
                if keyword.arg is None:
                    raise ValueError("** option")
                options[keyword.arg] = ast.literal_eval(keyword.value)
        except (SyntaxError, ValueError, TypeError) as exc:  # TypeError: tick={{}}
            raise ValueError(
                f"queue={spec!r}: options are written name=number, e.g. 'wheel(tick=0.001)' ({exc})"
            ) from None
    try:
        make_queue(name, **options)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"queue={spec!r}: {exc}") from None
    return name, options


@dataclass(frozen=True)
class RunConfig:
    """A run's scheduler parameters, checked (see the module's docstring)."""

    queue: str = "sorteddict"
    executor: str = "inline"
    max_workers: int | None = None
    misfire: str = "skip"
    resolution: float | None = None
    record: str = "full"
    design: str = field(init=False)
    queue_options: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        design, options = parse_queue(self.queue)
        object.__setattr__(self, "design", design)
        object.__setattr__(self, "queue_options", options)
        if self.executor not in EXECUTORS:
            raise ValueError(f"executor={self.executor!r}: expected one of {list(EXECUTORS)}")
        workers = self.max_workers
        if workers is not None:
            if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
                raise ValueError(f"max_workers={workers!r}: expected a positive int")
            if self.executor != "pool":
                raise ValueError(
                    f"max_workers={workers!r}: applies to executor='pool' only (this run has "
                    f"executor={self.executor!r})"
                )
        if self.misfire not in MISFIRE_POLICIES:
            raise ValueError(f"misfire={self.misfire!r}: expected one of {list(MISFIRE_POLICIES)}")
        res = self.resolution
        if res is not None and (
            isinstance(res, bool)
            or not isinstance(res, (int, float))
            or not math.isfinite(res)
            or res < 1e-6
        ):
            raise ValueError(f"resolution={res!r}: expected None or seconds >= 1e-06")
        if self.record not in RECORDS:
            raise ValueError(f"record={self.record!r}: expected one of {list(RECORDS)}")

    @property
    def workers(self) -> int | None:
        """Threads of the simulated executor: 1 inline, ``None`` for a thread per run."""
        if self.executor == "inline":
            return 1
        if self.executor == "thread":
            return None
        return DEFAULT_POOL if self.max_workers is None else self.max_workers


def plain(value: Any) -> Any:
    """A numpy scalar as the Python number it holds (values read back from a results frame).

    >>> import numpy as np
    >>> type(plain(np.int64(3))), plain("heap")
    (<class 'int'>, 'heap')
    """
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        return value.item()
    return value


def run_config(params: Mapping[str, Any]) -> RunConfig:
    """The :class:`RunConfig` of a run's parameters (other keys are ignored; NaN = not given).

    A value of ``None`` or NaN (a key another part of a grid sets) means the default.
    """
    kwargs: dict[str, Any] = {}
    for key in (*SCHEDULER_KEYS, "record"):
        value = plain(params.get(key))
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        if key == "max_workers" and isinstance(value, float) and value.is_integer():
            value = int(value)  # a column holding NaN elsewhere reads back as float
        kwargs[key] = value
    return RunConfig(**kwargs)
