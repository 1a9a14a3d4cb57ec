"""The lab: experiments comparing queue designs, executors and policies under generated workloads.

One call runs a grid of scheduler configurations against seeded workloads on
virtual clocks, serially, on a process pool or on a Dask cluster, and returns a
tidy pandas DataFrame with one row per run::

    from tempsched_lab.lab import Experiment, poisson, exponential

    experiment = Experiment(
        poisson,
        grid={"queue": ["sorteddict", "heap", "wheel"], "rate": [100, 1_000, 5_000]},
        fixed={"horizon": 1.0, "duration": exponential(0.0001)},
        repeats=3,
        seed=1,
    )
    results = experiment.run(workers=2)        # a process pool; or executor=dask_client
    experiment.log(results.index[0])           # any run's full event log, regenerated

=================================  ==========================================================
:mod:`~.workload`                  a workload as data: :class:`Workload` (a table of
                                   requests), :func:`read_workload`
:mod:`~.workloads`                 seeded generators: :func:`poisson`, :func:`bursts`,
                                   :func:`periodic_fleet`, :func:`cron_fleet`, :func:`mix`
:mod:`~.distributions`             durations: :func:`fixed`, :func:`exponential`,
                                   :func:`uniform`, :func:`lognormal`, :func:`pareto`
:mod:`~.config`                    a run's scheduler: design, executor, pool size, policy
:mod:`~.simulate`                  one run: :func:`simulate` (a pure function of its inputs)
:mod:`~.metrics`                   a run's measures, from its own event log
:mod:`~.experiment`                :class:`Experiment`: the grid, repeats, seeds, results
:mod:`~.backends`                  where runs go: serially, any ``concurrent.futures``
                                   executor, a Dask ``distributed.Client``
:mod:`~.progress`                  :class:`Progress`: a bar (ipywidgets) or plain lines
:mod:`~.figures`                   figures that compare: lateness ECDFs, a measure against
                                   a parameter, the case mix
:mod:`~.stats`                     tables: :func:`summarize` (bootstrap intervals),
                                   :func:`compare` (paired differences against a baseline)
:mod:`~.tables`                    :func:`with_units`: a table shown with time units
=================================  ==========================================================

See ``docs/lab.md``.
"""

from __future__ import annotations

from .config import RunConfig, run_config
from .distributions import Distribution, exponential, fixed, lognormal, pareto, uniform
from .experiment import Experiment, ExperimentError, NoSuchRun, RowMismatchError, Run
from .mainguard import UnguardedMainError
from .metrics import METRICS, run_metrics
from .progress import Progress
from .simulate import Simulation, WorkloadFailure, simulate
from .stats import compare, summarize
from .tables import with_units
from .workload import Workload, WorkloadError, read_workload
from .workloads import bursts, cron_fleet, mix, periodic_fleet, poisson

__all__ = [
    "METRICS",
    "Distribution",
    "Experiment",
    "ExperimentError",
    "NoSuchRun",
    "Progress",
    "RowMismatchError",
    "Run",
    "RunConfig",
    "Simulation",
    "UnguardedMainError",
    "Workload",
    "WorkloadError",
    "WorkloadFailure",
    "bursts",
    "compare",
    "cron_fleet",
    "exponential",
    "fixed",
    "lognormal",
    "mix",
    "pareto",
    "periodic_fleet",
    "plot_case_mix",
    "plot_lateness_ecdf",
    "plot_metric",
    "poisson",
    "read_workload",
    "run_config",
    "run_metrics",
    "simulate",
    "summarize",
    "uniform",
    "with_units",
]


def __getattr__(name: str) -> object:
    # The figures load matplotlib (~0.4 s): a worker process that only makes runs does not pay.
    if name in ("plot_case_mix", "plot_lateness_ecdf", "plot_metric"):
        from . import figures

        return getattr(figures, name)
    raise AttributeError(f"module 'tempsched_lab.lab' has no attribute {name!r}")
