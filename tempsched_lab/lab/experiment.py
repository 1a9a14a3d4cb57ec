"""An experiment: a grid of scheduler configurations and workload parameters, repeated, seeded.

:class:`Experiment` expands the grid into runs (every combination, ``repeats``
times), gives each repeat its seed, and :meth:`Experiment.run` makes them
(serially, on a process pool or a Dask cluster: :mod:`~.backends`) into a tidy
DataFrame, one row per run: the grid's parameters, ``repeat``, ``seed``, the
measures of :data:`~tempsched_lab.lab.metrics.METRICS` and ``wall`` (seconds
the run took: building its workload, simulating, measuring).

**Seeds.** Repeat *r* draws its workload with the seed
``SeedSequence(seed, spawn_key=(r,))`` gives: independent streams for the
repeats, and the *same* workload for every scheduler configuration of a repeat
(common random numbers: designs are compared on identical requests, which
removes the workload's noise from their differences). A run is a pure function
of its parameters and seed, so:

* the same experiment gives the same rows (``wall`` aside), on any engine;
* :meth:`Experiment.log` regenerates any run's whole event log, and checks that
  it gives the row's measures again.

**Grids.** A mapping ``{key: [values]}`` is every combination of its values; a
list of mappings is the union of theirs (for parameters that apply to some
configurations only: ``[{"executor": ["inline"]}, {"executor": ["pool"],
"max_workers": [2, 4]}]``; a key a part does not set is missing in its rows).
Keys are the scheduler's (:data:`~.config.SCHEDULER_KEYS`) or the workload
function's parameters; ``fixed`` holds the ones that do not vary.

**Errors** name the parameter: an unknown key, an empty grid or value list, a
scheduler value that cannot work (checked before any run), a workload function
that raises (with the run's parameters and seed). Runs finished before an error
or an interrupt (Ctrl-C) are kept in :attr:`Experiment.results`;
``run(resume=True)`` makes only the missing ones.

>>> from tempsched_lab.lab import poisson, exponential
>>> experiment = Experiment(
...     poisson,
...     grid={"queue": ["sorteddict", "heap"], "rate": [200, 400]},
...     fixed={"horizon": 0.5, "duration": exponential(0.001)},
...     repeats=2,
...     seed=1,
... )
>>> len(experiment.runs)
8
>>> results = experiment.run(progress=None)
>>> results[["queue", "rate", "repeat", "runs"]].head(3).to_dict("list")
{'queue': ['sorteddict', 'sorteddict', 'sorteddict'], 'rate': [200, 200, 400], \
'repeat': [0, 1, 0], 'runs': [115, 105, 221]}
>>> experiment.log(0)["kind"].value_counts()["start"]
np.int64(115)
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..core.task import short_repr
from .backends import RunOutcome, RunTask, build_workload, outcomes, shown_params
from .config import RECORDS, SCHEDULER_KEYS, plain, run_config
from .metrics import METRICS
from .progress import Progress

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from .simulate import Simulation
    from .workload import Workload

__all__ = ["Experiment", "ExperimentError", "NoSuchRun", "RowMismatchError", "Run", "seed_of"]

_RESERVED = ("repeat", "seed", "run", "wall", *METRICS)
#: what defines an experiment's runs, as its manifest says (the versions aside)
_DEFINITION = ("workload", "grid", "fixed", "repeats", "seed", "count_steps")


class NoSuchRun(KeyError):
    """A run number outside the experiment's runs (names the number and the valid range)."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""


class RowMismatchError(ValueError):
    """A row (or ``Run``) given that is not this experiment's run: names what differs."""


class ExperimentError(RuntimeError):
    """A run could not be made. ``run`` says which, ``results`` holds the runs finished before.

    Attributes:
        run: the :class:`Run` that failed.
        stage: ``"workload"`` (building it raised), ``"run"`` (the simulation
            raised) or ``"engine"`` (the executor lost it: a worker died).
        results: the results frame of the runs finished so far.
        remote_traceback: the traceback text (from the worker, for remote runs).
    """

    def __init__(
        self, message: str, run: Run, stage: str, results: pd.DataFrame, remote_traceback: str
    ) -> None:
        super().__init__(message)
        self.run = run
        self.stage = stage
        self.results = results
        self.remote_traceback = remote_traceback


@dataclass(frozen=True)
class Run:
    """One run of an experiment: its number, its parameters (grid keys), repeat and seed."""

    index: int
    params: dict[str, Any]
    repeat: int
    seed: int | None

    def describe(self) -> str:
        """``queue='heap', rate=1000, repeat=0, seed=123``."""
        parts = [f"{k}={_short(v)}" for k, v in self.params.items() if v is not None]
        return ", ".join([*parts, f"repeat={self.repeat}", f"seed={self.seed}"])


def _shown(value: Any) -> Any:
    """A parameter's value as JSON holds it: a distribution as its description."""
    from .distributions import Distribution

    if isinstance(value, Distribution):
        return value.describe()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def _short(value: Any) -> str:
    from .distributions import Distribution

    return value.describe() if isinstance(value, Distribution) else repr(value)


def seed_of(seed: int, repeat: int) -> int:
    """The workload seed of repeat ``repeat`` of an experiment seeded with ``seed``.

    >>> seed_of(1, 0) != seed_of(1, 1), seed_of(1, 0) == seed_of(1, 0)
    (True, True)
    """
    import numpy as np

    state = np.random.SeedSequence(seed, spawn_key=(repeat,)).generate_state(1, np.uint32)
    return int(state[0])


def _values(key: str, values: Any) -> list[Any]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        return [values]  # a single value
    out = list(values)
    if not out:
        raise ValueError(f"grid[{key!r}] is empty: give at least one value to try")
    return out


def _grid_parts(grid: Any) -> list[dict[str, list[Any]]]:
    if isinstance(grid, Mapping):
        parts = [grid]
    elif isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)):
        parts = list(grid)
        if not all(isinstance(p, Mapping) for p in parts):
            raise TypeError("grid: expected a mapping {key: [values]} or a list of them")
    else:
        raise TypeError(f"grid={grid!r}: expected a mapping {{key: [values]}} or a list of them")
    if not parts or not all(parts):
        raise ValueError(
            f"grid={grid!r} is empty: give at least one parameter and its values, e.g. "
            "grid={'queue': ['sorteddict', 'heap', 'wheel']}"
        )
    out = []
    for part in parts:
        for key in part:
            if not isinstance(key, str):
                raise TypeError(f"grid key {key!r}: expected a parameter name (a str)")
        out.append({key: _values(key, values) for key, values in part.items()})
    return out


class Experiment:
    """A grid of runs: workload parameters x scheduler configurations x repeats.

    Args:
        workload: a function building a :class:`~.workload.Workload` from
            parameters and ``seed=`` (:func:`~.workloads.poisson`, yours), or a
            ``Workload`` (the same requests for every run; then ``repeats`` must
            be 1, since the runs are deterministic).
        grid: ``{key: [values]}``, or a list of such mappings (see the module's
            docstring); keys are scheduler parameters (``queue``, ``executor``,
            ``max_workers``, ``misfire``, ``resolution``) or the workload
            function's.
        fixed: parameters that do not vary (same keys as the grid).
        repeats: runs of each combination, each with its own workload seed.
        seed: the experiment's seed (an int >= 0).
        count_steps: count the queue's steps in every run (``queue_steps``;
            about 3-4 times slower, see :mod:`~.steps`).
        keep_samples: keep each run's lateness values (thinned to at most
            10,001 order statistics) for :func:`~.figures.plot_lateness_ecdf`.
        record: ``"full"`` (default) records each run's whole event log and
            computes the measures from it; ``"metrics"`` keeps only the
            measures, as running totals (:class:`~tempsched_lab.core.recorder.MetricsRecorder`:
            the same values, no rows built). :meth:`log` regenerates any run's
            full log either way.
        name: a name for reprs and figures (default: the workload's).
    """

    def __init__(
        self,
        workload: Callable[..., Workload] | Workload,
        grid: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        fixed: Mapping[str, Any] | None = None,
        repeats: int = 1,
        seed: int = 0,
        count_steps: bool = False,
        keep_samples: bool = True,
        name: str | None = None,
        record: str = "full",
    ) -> None:
        from .workload import Workload

        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise ValueError(f"repeats={repeats!r}: expected a positive int")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed={seed!r}: expected an int >= 0")
        self.workload = workload
        self.fixed: dict[str, Any] = dict(fixed or {})
        self.repeats = repeats
        self.seed = seed
        self.count_steps = bool(count_steps)
        self.keep_samples = bool(keep_samples)
        if record not in RECORDS:
            raise ValueError(f"record={record!r}: expected one of {list(RECORDS)}")
        self.record = record
        if isinstance(workload, Workload):
            accepted: set[str] | None = set()
            self.name = name or workload.name
            if repeats != 1:
                raise ValueError(
                    f"repeats={repeats}: a fixed Workload gives the same run every time (a run "
                    "is deterministic); pass a workload function to draw one per repeat"
                )
        elif callable(workload):
            accepted = _accepted(workload)
            self.name = name or str(getattr(workload, "__name__", "workload"))
        else:
            raise TypeError(f"workload={workload!r}: expected a Workload or a function making one")
        parts = _grid_parts(grid)
        self.grid = parts
        self.keys: list[str] = list(dict.fromkeys(k for part in parts for k in part))
        for key in [*self.keys, *self.fixed]:
            _check_key(key, accepted, self.name)
        both = sorted(set(self.keys) & set(self.fixed))
        if both:
            raise ValueError(f"{both}: given in both grid and fixed; keep each key in one")
        self.runs: list[Run] = self._expand()
        self._rows: dict[int, dict[str, Any]] = {}
        self._samples: dict[int, tuple[np.ndarray, int]] = {}

    # -- the runs ---------------------------------------------------------------------------
    def _expand(self) -> list[Run]:
        from .workload import Workload

        fixed_workload = isinstance(self.workload, Workload)
        seeds = (
            [self.workload.seed]  # type: ignore[union-attr]
            if fixed_workload
            else [seed_of(self.seed, r) for r in range(self.repeats)]
        )
        runs: list[Run] = []
        checked: set[tuple[Any, ...]] = set()
        for part in self.grid:
            keys = list(part)
            for combo in itertools.product(*(part[k] for k in keys)):
                params = {k: None for k in self.keys}
                params.update(zip(keys, combo, strict=True))
                config = {**self.fixed, **params}
                signature = tuple(repr(config.get(k)) for k in SCHEDULER_KEYS)
                if signature not in checked:  # a bad value fails before any run, naming it
                    run_config(config)
                    checked.add(signature)
                for repeat, seed in enumerate(seeds):
                    runs.append(Run(len(runs), params, repeat, seed))
        return runs

    def _task(self, run: Run) -> RunTask:
        params = {**{k: v for k, v in run.params.items() if v is not None}, **self.fixed}
        config = {k: v for k, v in params.items() if k in SCHEDULER_KEYS}
        if self.record != "full":
            config["record"] = self.record
        workload_params = {k: v for k, v in params.items() if k not in SCHEDULER_KEYS}
        return RunTask(
            run.index,
            self.workload,
            workload_params,
            config,
            run.seed if run.seed is not None else 0,
            self.count_steps,
            self.keep_samples,
            shown_params(run.params),
        )

    def run_of(self, run: int | Run | pd.Series) -> Run:
        """The :class:`Run` given by its number, itself, or a row of :attr:`results`.

        A row or a ``Run`` must be this experiment's: a row whose parameters,
        repeat or seed differ from its run's (a row of another experiment, an
        edited row), or that has columns this experiment's results do not, is
        refused with :class:`RowMismatchError` naming what differs. A number
        outside the runs is a :class:`NoSuchRun` naming the valid range.
        """
        if isinstance(run, Run):
            chosen = self._numbered(run.index, f"Run {run.index}")
            differ = self._differences(
                {**shown_params(run.params), "repeat": run.repeat, "seed": run.seed}, chosen
            )
            if differ:
                raise RowMismatchError(self._mismatch(f"Run {run.index}", chosen, differ))
            return chosen
        if _is_row(run):
            row: pd.Series = run  # type: ignore[assignment]
            chosen = self._numbered(row.name, f"the row named {short_repr(row.name)}")
            self._check_row(row, chosen)
            return chosen
        return self._numbered(run, f"run={short_repr(run)}")

    def _numbered(self, index: Any, what: str) -> Run:
        """The run of number ``index`` (``what`` names it in the error)."""
        number = plain(index)
        valid = f"this experiment has runs 0..{len(self.runs) - 1}"
        if isinstance(number, bool) or not isinstance(number, int):
            raise NoSuchRun(f"{what}: expected a run number ({valid}), a Run or a row of results")
        if not 0 <= number < len(self.runs):
            raise NoSuchRun(f"run {number}: no such run; {valid} ({len(self.runs)} runs)")
        return self.runs[number]

    def _differences(self, given: Mapping[str, Any], run: Run) -> list[str]:
        """What ``given`` (a row's identity columns) says unlike ``run``: ``"seed 5 (run: 6)"``."""
        expected = {**shown_params(run.params), "repeat": run.repeat, "seed": run.seed}
        return [
            f"{key} {_show(value)} (run {run.index}: {_show(expected[key])})"
            for key, value in given.items()
            if key in expected and not _same(value, expected[key])
        ]

    def _mismatch(self, what: str, run: Run, differ: list[str]) -> str:
        return (
            f"{what} is not run {run.index} of this experiment ({self.name}): "
            + "; ".join(differ)
            + ". A row of another experiment, or an edited row: pass a row of this "
            "experiment's results, or its run number"
        )

    def _check_row(self, row: pd.Series, run: Run) -> None:
        """Refuse a results row that is not ``run``'s (see :meth:`run_of`)."""
        what = f"the row named {run.index}"
        foreign = [c for c in row.index if c not in self.columns]
        if foreign:
            raise RowMismatchError(
                f"{what} has column(s) {foreign} that this experiment's results do not have "
                f"(theirs: {self.columns}): a row of another experiment"
            )
        differ = self._differences(
            {k: row[k] for k in (*self.keys, "repeat", "seed") if k in row.index}, run
        )
        manifest = row.attrs.get("manifest") if isinstance(row.attrs, dict) else None
        if isinstance(manifest, str):
            try:
                theirs = json.loads(manifest)
            except ValueError:
                theirs = None
            if isinstance(theirs, dict):
                ours = self.manifest()
                differ += [
                    f"{key} {short_repr(theirs.get(key))} (this experiment: "
                    f"{short_repr(ours[key])})"
                    for key in _DEFINITION
                    if theirs.get(key) != ours[key]
                ]
        if differ:
            raise RowMismatchError(self._mismatch(what, run, differ))

    # -- making them ------------------------------------------------------------------------
    def run(
        self,
        executor: Any = None,
        *,
        workers: int | None = None,
        progress: str | Progress | None = "auto",
        resume: bool = False,
    ) -> pd.DataFrame:
        """Make every run; returns :attr:`results` (one row per run, in run order).

        Args:
            executor: ``None`` (this process, or a process pool with ``workers``),
                any ``concurrent.futures.Executor``, or a Dask ``distributed.Client``.
            workers: make a process pool of this size for the call.
            progress: ``"auto"`` (a bar in notebooks, lines elsewhere),
                ``"widget"``, ``"lines"``, ``None``, or a :class:`Progress` made
                beforehand (shown in an earlier cell: a page served by Voila then shows
                the bar while the sweep runs).
            resume: keep the runs already in :attr:`results` and make only the
                others (after an error or an interrupt).

        Raises:
            ExperimentError: a run failed; the runs finished before it are in
                :attr:`results` and in the error's ``results``.
        """
        if not resume:
            self._rows.clear()
            self._samples.clear()
        todo = [run for run in self.runs if run.index not in self._rows]
        if isinstance(progress, Progress):
            bar = progress
            bar.begin(len(self.runs), done=len(self._rows))
        else:
            bar = Progress(len(self.runs), done=len(self._rows), mode=progress)
        error: BaseException | None = None
        try:
            # closed on the way out, so a pool is stopped when a run fails or Ctrl-C comes,
            # not whenever the generator happens to be collected
            with contextlib.closing(
                outcomes((self._task(run) for run in todo), executor, workers)
            ) as arriving:
                for outcome in arriving:
                    self._keep(outcome)
                    bar.update(len(self._rows))
        except BaseException as exc:
            error = exc
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                exc.results = self.results  # type: ignore[union-attr]
            raise
        finally:
            bar.close(error)
        return self.results

    def _keep(self, outcome: RunOutcome) -> None:
        run = self.runs[outcome.index]
        if not outcome.ok:
            raise self._error(run, outcome) from outcome.exception
        assert outcome.metrics is not None
        self._rows[run.index] = {
            **shown_params(run.params),
            "repeat": run.repeat,
            "seed": run.seed,
            **outcome.metrics,
            "wall": outcome.wall,
        }
        if outcome.samples is not None:
            self._samples[run.index] = (outcome.samples, outcome.sample_size)

    def _error(self, run: Run, outcome: RunOutcome) -> ExperimentError:
        where = f"run {run.index} of {len(self.runs)} ({run.describe()})"
        if outcome.stage == "workload":
            task = self._task(run)
            args = ", ".join(f"{k}={_short(v)}" for k, v in task.workload_params.items())
            what = f"the workload {self.name}({args}, seed={run.seed}) raised {outcome.error}"
        elif outcome.stage == "engine":
            what = f"the executor lost it: {outcome.error}"
        else:
            what = f"the simulation raised {outcome.error}"
        kept = len(self._rows)
        message = (
            f"{where}: {what}; the {kept} run(s) finished before are kept in "
            "experiment.results (run(resume=True) makes only the missing ones)"
        )
        return ExperimentError(
            message, run, outcome.stage or "run", self.results, outcome.error_traceback or ""
        )

    # -- results ----------------------------------------------------------------------------
    @property
    def columns(self) -> list[str]:
        """The results frame's columns: grid keys, repeat, seed, measures, wall."""
        return [*self.keys, "repeat", "seed", *METRICS, "wall"]

    @property
    def results(self) -> pd.DataFrame:
        """One row per finished run, indexed by run number (``run``), in run order."""
        import pandas as pd

        indices = sorted(self._rows)
        frame = pd.DataFrame(
            [self._rows[i] for i in indices],
            index=pd.Index(indices, name="run", dtype="int64"),
            columns=self.columns,
        )
        frame["queue_steps"] = frame["queue_steps"].astype("Int64")
        for column in (
            "repeat",
            "runs",
            "failed",
            "cancelled",
            "misfires",
            "max_queue_depth",
            "events",
            *(f"case_{c}" for c in range(1, 9)),
        ):
            frame[column] = frame[column].astype("int64")
        frame["seed"] = frame["seed"].astype("Int64")
        frame.attrs["experiment"] = self.name
        frame.attrs["keys"] = list(self.keys)
        frame.attrs["manifest"] = json.dumps(self.manifest(), sort_keys=True, default=str)
        return frame

    def lateness_sample(self, run: int | Run | pd.Series) -> tuple[np.ndarray, int]:
        """A finished run's lateness values (sorted, at most 10,001 order statistics) and
        how many runs they stand for."""
        index = self.run_of(run).index
        if index not in self._samples:
            raise KeyError(f"run {index}: no lateness sample (not run yet, or keep_samples=False)")
        return self._samples[index]

    # -- one run again ----------------------------------------------------------------------
    def workload_of(self, run: int | Run | pd.Series) -> Workload:
        """The workload a run played (built again from its parameters and seed)."""
        return build_workload(self._task(self.run_of(run)))  # type: ignore[no-any-return]

    def rerun(self, run: int | Run | pd.Series, *, check: bool = True) -> Simulation:
        """Make a run again, here, and return it whole (scheduler, log, measures).

        With ``check``, the run must give its row's measures again (``wall``
        aside, ``queue_steps`` when counted), else ``RuntimeError`` naming
        each measure that differs: the measures of the row passed in (a row of
        :attr:`results`), or of the run's row in :attr:`results` (a run number
        or a :class:`Run`; none to compare with before it ran). A row that is
        not this run's (parameters, repeat, seed) is refused before playing
        (:meth:`run_of`), with or without ``check``.
        """
        from .simulate import simulate

        chosen = self.run_of(run)
        task = self._task(chosen)
        sim = simulate(
            build_workload(task),
            replace(run_config(task.config_params), record="full"),
            count_steps=self.count_steps,
            extra={**task.shown, "seed": task.seed},
        )
        given = _is_row(run)
        row: Mapping[str, Any] | None = (
            run if given else self._rows.get(chosen.index)  # type: ignore[assignment]
        )
        if check and row is not None:
            again = sim.metrics()
            differ = [k for k in METRICS if k in row and not _same(row[k], again[k])]
            if differ:
                said = "the row given says" if given else "the results say"
                raise RuntimeError(
                    f"run {chosen.index} ({chosen.describe()}) did not reproduce: "
                    + ", ".join(f"{k} {_show(row[k])} then {_show(again[k])}" for k in differ)
                    + f" ({said} the first, the run gives the second: "
                    + (
                        "an edited row, a row of an experiment with other fixed parameters, "
                        "or a run that is not a pure function of its seed)"
                        if given
                        else "the run is not a pure function of its seed)"
                    )
                )
        return sim

    def log(self, run: int | Run | pd.Series, *, check: bool = True) -> pd.DataFrame:
        """A run's whole event log, regenerated from its parameters and seed (see :meth:`rerun`).

        ``run`` is a run number, a :class:`Run` or a row of :attr:`results`; a
        row of another experiment or an edited row is refused (:meth:`run_of`),
        and with ``check`` the log must give the row's measures again.

        The frame's ``attrs["lab_run"]`` records the run (parameters and seed).
        """
        return self.rerun(run, check=check).frame

    def manifest(self) -> dict[str, Any]:
        """What a paper's appendix needs to make the sweep again: the grid, fixed parameters,
        repeats, seed, and the versions it ran with (JSON-able; also in the results'
        ``attrs["manifest"]``).

        >>> from tempsched_lab.lab import bursts
        >>> e = Experiment(bursts, grid={"size": [2, 4]}, fixed={"every": 1.0, "horizon": 1.0})
        >>> e.manifest()["grid"], e.manifest()["workload"]
        ([{'size': [2, 4]}], 'tempsched_lab.lab.workloads.bursts')
        """
        import platform

        import numpy as np
        import pandas as pd

        from .._version import __version__
        from .workload import Workload

        workload = self.workload
        source = (
            workload.describe()
            if isinstance(workload, Workload)
            else f"{getattr(workload, '__module__', '?')}.{getattr(workload, '__qualname__', '?')}"
        )
        return {
            "name": self.name,
            "workload": source,
            "grid": [
                {k: [_shown(v) for v in values] for k, values in part.items()} for part in self.grid
            ],
            "fixed": {k: _shown(v) for k, v in self.fixed.items()},
            "repeats": self.repeats,
            "seed": self.seed,
            "seeds": "numpy.random.SeedSequence(seed, spawn_key=(repeat,))",
            "count_steps": self.count_steps,
            "record": self.record,
            "runs": len(self.runs),
            "versions": {
                "tempsched_lab": __version__,
                "python": platform.python_version(),
                "numpy": np.__version__,
                "pandas": pd.__version__,
            },
        }

    def __len__(self) -> int:
        return len(self.runs)

    def __repr__(self) -> str:
        sizes = " x ".join(
            f"{k} ({len({repr(r.params[k]) for r in self.runs if r.params[k] is not None})})"
            for k in self.keys
        )
        return (
            f"<Experiment {self.name}: {sizes}, {self.repeats} repeat(s) = {len(self.runs)} runs; "
            f"{len(self._rows)} done>"
        )


def _missing(value: Any) -> bool:
    """None, NaN or ``pd.NA`` (a key a grid part does not set, a measure not counted)."""
    return value is None or (isinstance(value, float) and math.isnan(value)) or _is_na(value)


def _is_na(value: Any) -> bool:
    return type(value).__name__ == "NAType"


def _same(a: Any, b: Any) -> bool:
    """Equal values, a row's ``200.0`` and a run's ``200`` included; missing equals missing."""
    if _missing(a) or _missing(b):
        return _missing(a) and _missing(b)
    return bool(a == b)


def _show(value: Any) -> str:
    """A value of a row for a message: ``28`` for a row's ``np.float64(28.0)``."""
    value = plain(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)
    return short_repr(value)


def _is_row(value: Any) -> bool:
    """Whether ``value`` is a pandas Series (a results row), without importing pandas."""
    return type(value).__name__ == "Series" and hasattr(value, "attrs")


def _accepted(function: Callable[..., Any]) -> set[str] | None:
    """The keyword parameters ``function`` takes besides ``seed`` (``None``: any, ``**kwargs``)."""
    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    if "seed" not in params:
        raise TypeError(
            f"workload={getattr(function, '__name__', function)!r}: the workload function must "
            "take seed= (a run's workload is drawn from its seed)"
        )
    return {
        name
        for name, p in params.items()
        if name != "seed" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def _check_key(key: str, accepted: set[str] | None, name: str) -> None:
    if key in _RESERVED:
        raise ValueError(
            f"grid key {key!r}: reserved (the experiment sets seed and repeat, and "
            "measures the rest); use seed= and repeats="
        )
    if key in SCHEDULER_KEYS or accepted is None or key in accepted:
        return
    workload = (
        f"a parameter of {name}() ({', '.join(sorted(accepted))})"
        if accepted
        else "no workload parameter (the workload is fixed data)"
    )
    raise ValueError(
        f"grid key {key!r}: unknown; expected a scheduler parameter ({', '.join(SCHEDULER_KEYS)}) "
        f"or {workload}"
    )
