"""Workloads: the requests an experiment makes, as data, drawn by seeded pure generators.

A :class:`Workload` is a table of requests (a pandas DataFrame, one row per
request) plus the few numbers that frame it (the horizon, the clock's start, the
time zone of calendar tasks). It can be shown, saved to CSV or Parquet and read
back identically (:meth:`Workload.save`, :func:`read_workload`), built by hand,
or drawn by a generator:

=========================  ============================================================
:func:`poisson`            requests arriving at random (a Poisson process at ``rate``)
:func:`bursts`             ``size`` requests due at one instant, every ``every`` seconds
:func:`periodic_fleet`     ``tasks`` periodic tasks with periods and phase jitter
:func:`cron_fleet`         ``tasks`` calendar tasks with cron rules
:func:`mix`                several workloads as one
=========================  ============================================================

Every generator is **pure**: it draws only from ``numpy.random.default_rng(seed)``,
so the same arguments and seed give the same workload, row for row. Durations
(:mod:`~tempsched_lab.lab.distributions`) are *virtual*: a run "takes" its
duration on the virtual clock (``VirtualClock.elapse``), it does not sleep.

Columns (times are seconds since the clock's start, the toolkit's time language):

=============  ========  ===================================================================
``request``    int64     the request's number (its row)
``label``      str       what kind of request (``poisson``, ``burst``...): the runs' label
``submit``     float64   when the request is made (``schedule`` is called)
``due``        float64   the time it asks for (NaN for a cron task: its rule decides)
``period``     float64   a periodic task's period (NaN: one run)
``cron``       str       a calendar task's cron rule (missing: none)
``duration``   float64   how long each of its runs takes (virtual seconds)
``fails``      bool      its runs raise (a failure on purpose)
``cancel_at``  float64   when it is cancelled (NaN: never)
``dup_of``     Int64     a duplicate of that request (same time, action and arguments)
=============  ========  ===================================================================

Options common to the one-shot generators: ``cancels`` (the fraction of
requests cancelled at a random moment between their submission and their due
time), ``duplicates`` (the fraction repeated at once, as a client retrying: the
repeat is decided as case 5 or 7 and adds nothing), ``failures`` (the
probability that a request's runs raise).


>>> from tempsched_lab.lab import exponential
>>> w = poisson(rate=1000, horizon=0.5, seed=7, duration=exponential(0.0005))
>>> w
<Workload poisson: 508 requests over 500.00 ms (poisson 508), seed 7>
>>> w.equals(poisson(rate=1000, horizon=0.5, seed=7, duration=exponential(0.0005)))
True
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..timescale import fmt_duration
from .distributions import Distribution, as_distribution

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = [
    "COLUMNS",
    "Workload",
    "WorkloadError",
    "bursts",
    "cron_fleet",
    "mix",
    "periodic_fleet",
    "poisson",
    "read_workload",
]

#: column -> (dtype, meaning); the order of a workload frame's columns.
COLUMNS: dict[str, tuple[str, str]] = {
    "request": ("int64", "the request's number (its row)"),
    "label": ("str", "what kind of request: the runs' label in the log"),
    "submit": ("float64", "when the request is made (s since the clock's start)"),
    "due": ("float64", "the time it asks for (s; NaN for a cron task)"),
    "period": ("float64", "a periodic task's period (s; NaN: one run)"),
    "cron": ("str", "a calendar task's cron rule (missing: none)"),
    "duration": ("float64", "how long each of its runs takes (virtual s)"),
    "fails": ("bool", "its runs raise (a failure on purpose)"),
    "cancel_at": ("float64", "when it is cancelled (s; NaN: never)"),
    "dup_of": ("Int64", "the request it duplicates (missing: none)"),
}
#: the first line of a workload CSV file starts with this (then the metadata as JSON)
CSV_MAGIC = "#tempsched-lab workload "
#: key of the metadata in a workload Parquet file
PARQUET_KEY = b"tempsched_lab_workload"
_FORMAT = 1


class WorkloadError(ValueError):
    """A workload table that cannot be run (names the column, the request and the value)."""


class Workload:
    """A table of requests and the frame around it: horizon, clock start, time zone.

    Args:
        frame: one row per request, with the columns of :data:`COLUMNS`
            (``request`` may be left out: it is the row number). Checked and
            converted to the documented dtypes; a row that cannot run raises
            :class:`WorkloadError` naming the column, the request and the value.
        horizon: seconds after the start at which recurring tasks stop (one-shot
            requests due later still run: a run ends when nothing is left).
        start: the virtual clock's start (epoch seconds; it matters only for
            cron rules, which read the calendar).
        tz: the time zone of cron rules.
        name: a short name (shown in reprs and figures).
        seed: the seed it was drawn with (``None`` for a hand-made table).
        params: the generator's arguments, for the record (JSON-able values).

    >>> import pandas as pd
    >>> w = Workload(pd.DataFrame({"label": ["a", "b"], "submit": [0.0, 0.0],
    ...                            "due": [1.0, 0.5], "duration": [0.1, 0.0]}), horizon=1.0)
    >>> w.frame[["request", "label", "due", "fails"]].to_dict("list")
    {'request': [0, 1], 'label': ['a', 'b'], 'due': [1.0, 0.5], 'fails': [False, False]}
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        *,
        horizon: float,
        start: float = 0.0,
        tz: str = "UTC",
        name: str = "workload",
        seed: int | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> None:
        self.horizon = _number("horizon", horizon, minimum=0.0)
        self.start = _number("start", start)
        if not isinstance(tz, str) or not tz:
            raise TypeError(f"tz={tz!r}: expected a time zone name such as 'Europe/Paris'")
        self.tz = tz
        if not isinstance(name, str) or not name:
            raise TypeError(f"name={name!r}: expected a non-empty string")
        self.name = name
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise TypeError(f"seed={seed!r}: expected an int or None")
        self.seed = seed
        self.params: dict[str, Any] = dict(params or {})
        self.frame: pd.DataFrame = _normalized(frame)

    # -- reading -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.frame)

    def counts(self) -> dict[str, int]:
        """Requests per label (duplicates counted apart, as ``duplicates``)."""
        frame = self.frame
        dup = frame["dup_of"].notna().to_numpy()
        counts = frame.loc[~dup, "label"].value_counts(sort=False)
        out = {str(k): int(v) for k, v in counts.items()}
        if dup.any():
            out["duplicates"] = int(dup.sum())
        return out

    def equals(self, other: object) -> bool:
        """Same requests (values and dtypes) and the same horizon, start, time zone and name."""
        return (
            isinstance(other, Workload)
            and (self.horizon, self.start, self.tz, self.name, self.seed)
            == (other.horizon, other.start, other.tz, other.name, other.seed)
            and self.params == other.params
            and self.frame.equals(other.frame)
            and list(self.frame.dtypes) == list(other.frame.dtypes)
        )

    def describe(self) -> str:
        """One line: name, size, horizon and the mix of labels."""
        mix_text = ", ".join(f"{k} {v:,}" for k, v in self.counts().items()) or "empty"
        return f"{self.name}: {len(self):,} requests over {fmt_duration(self.horizon)} ({mix_text})"

    def __repr__(self) -> str:
        seed = "" if self.seed is None else f", seed {self.seed}"
        return f"<Workload {self.describe()}{seed}>"

    def _repr_html_(self) -> str:
        import html

        head = self.frame.head(10).to_html(index=False, max_cols=12)
        params = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return (
            f"<p><b>{html.escape(self.describe())}</b>"
            f"{'' if self.seed is None else f' · seed {self.seed}'}"
            f"{f'<br><small>{html.escape(params)}</small>' if params else ''}</p>{head}"
        )

    # -- files ---------------------------------------------------------------------------
    def metadata(self) -> dict[str, Any]:
        """What a file stores besides the table (JSON-able)."""
        return {
            "format": _FORMAT,
            "rows": len(self.frame),
            "horizon": self.horizon,
            "start": self.start,
            "tz": self.tz,
            "name": self.name,
            "seed": self.seed,
            "params": self.params,
        }

    def save(self, path: str | os.PathLike[str], fmt: str | None = None) -> Path:
        """Write the workload to ``path`` (``.csv``, or ``.parquet``/``.pq``); returns the path.

        The file is written whole or not at all. :func:`read_workload` gives back
        an equal workload (:meth:`equals`). A CSV file is plain CSV after its
        first line, which holds the metadata (``pandas.read_csv(path, skiprows=1)``
        reads the table).
        """
        from ..logfiles.atomic import atomic_path

        target = Path(path)
        kind = _format_of(target, fmt)
        with atomic_path(target, what="the workload") as tmp:
            if kind == "csv":
                with open(tmp, "w", encoding="utf-8", newline="") as fh:
                    fh.write(CSV_MAGIC + json.dumps(self.metadata(), sort_keys=True) + "\n")
                    self.frame.to_csv(fh, index=False, lineterminator="\n")
            else:
                import pyarrow as pa
                import pyarrow.parquet as pq

                table = pa.Table.from_pandas(self.frame, preserve_index=False)
                meta = dict(table.schema.metadata or {})
                meta[PARQUET_KEY] = json.dumps(self.metadata(), sort_keys=True).encode()
                pq.write_table(table.replace_schema_metadata(meta), tmp)
        return target


def _format_of(path: Path, fmt: str | None) -> str:
    if fmt is None:
        suffix = path.suffix.lower()
        fmt = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}.get(suffix)
        if fmt is None:
            raise ValueError(f"path={str(path)!r}: expected a .csv, .parquet or .pq file (or fmt=)")
    if fmt not in ("csv", "parquet"):
        raise ValueError(f"fmt={fmt!r}: expected 'csv' or 'parquet'")
    return fmt


def read_workload(path: str | os.PathLike[str], fmt: str | None = None) -> Workload:
    """Read a workload written by :meth:`Workload.save` (CSV or Parquet).

    >>> import tempfile, pathlib
    >>> w = bursts(size=3, every=0.5, horizon=1.0, seed=1)
    >>> path = w.save(pathlib.Path(tempfile.mkdtemp()) / "w.csv")
    >>> read_workload(path).equals(w)
    True
    """
    import pandas as pd

    source = Path(path)
    kind = _format_of(source, fmt)
    if kind == "csv":
        with open(source, encoding="utf-8", newline="") as fh:
            first = fh.readline()
            if not first.startswith(CSV_MAGIC):
                raise WorkloadError(
                    f"{str(source)!r}: not a workload file (its first line should start with "
                    f"{CSV_MAGIC.strip()!r})"
                )
            meta = json.loads(first[len(CSV_MAGIC) :])
            dtypes = {c: d for c, (d, _) in COLUMNS.items() if d != "float64"}
            major = int(pd.__version__.split(".")[0])
            options: dict[str, Any] = {} if major >= 3 else {"float_precision": "round_trip"}
            frame = pd.read_csv(fh, dtype=dtypes, keep_default_na=False, na_values=[""], **options)
    else:
        import pyarrow.parquet as pq

        table = pq.read_table(source)
        raw = (table.schema.metadata or {}).get(PARQUET_KEY)
        if raw is None:
            raise WorkloadError(f"{str(source)!r}: a Parquet file without workload metadata")
        meta = json.loads(raw)
        frame = table.to_pandas()
    if meta.get("format") != _FORMAT:
        raise WorkloadError(f"{str(source)!r}: workload format {meta.get('format')!r} unknown")
    if len(frame) != meta.get("rows"):
        raise WorkloadError(
            f"{str(source)!r}: {len(frame)} rows, the metadata says {meta.get('rows')} "
            "(a cut or edited file)"
        )
    return Workload(
        frame,
        horizon=meta["horizon"],
        start=meta["start"],
        tz=meta["tz"],
        name=meta["name"],
        seed=meta["seed"],
        params=meta["params"],
    )


# -- checking a table ---------------------------------------------------------------------


def _number(
    name: str, value: Any, *, minimum: float | None = None, positive: bool = False
) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name}={value!r}: expected a number")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{name}={value!r}: expected a finite number")
    if positive and not result > 0:
        raise ValueError(f"{name}={value!r}: expected a number > 0")
    if minimum is not None and result < minimum:
        raise ValueError(f"{name}={value!r}: expected a number >= {minimum:g}")
    return result


def _fraction(name: str, value: Any) -> float:
    result = _number(name, value)
    if not 0.0 <= result <= 1.0:
        raise ValueError(f"{name}={value!r}: expected a fraction between 0 and 1")
    return result


def _count(name: str, value: Any, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        import numpy as np

        if not isinstance(value, np.integer):
            raise TypeError(f"{name}={value!r}: expected an int")
    if int(value) < minimum:
        raise ValueError(f"{name}={value!r}: expected an int >= {minimum}")
    return int(value)


def _bad(column: str, frame: pd.DataFrame, mask: Any, expected: str) -> WorkloadError:
    import numpy as np

    row = int(np.flatnonzero(np.asarray(mask))[0])
    value = frame[column].iloc[row]
    if hasattr(value, "item"):  # a numpy scalar, shown as the number it holds
        value = value.item()
    return WorkloadError(f"request {row}: {column}={value!r}: {expected}")


def _normalized(frame: Any) -> pd.DataFrame:
    """The table with the documented columns and dtypes, checked row by row."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame={type(frame).__name__}: expected a pandas DataFrame")
    unknown = [c for c in frame.columns if c not in COLUMNS]
    if unknown:
        raise WorkloadError(f"columns {unknown}: unknown; a workload has {list(COLUMNS)}")
    for needed in ("label", "submit", "duration"):
        if needed not in frame.columns:
            raise WorkloadError(f"column {needed!r} is missing; a workload has {list(COLUMNS)}")
    n = len(frame)
    data: dict[str, Any] = {}
    for column, (dtype, _) in COLUMNS.items():
        if column not in frame.columns:
            data[column] = _default(column, dtype, n)
            continue
        values = frame[column].to_numpy()
        try:
            if dtype == "bool":
                if values.dtype != bool:
                    if pd.isna(values).any():
                        raise ValueError("missing values")
                    values = values.astype(bool)
                data[column] = values
            elif dtype in ("float64", "int64"):
                data[column] = values.astype(dtype, copy=False)
            else:
                data[column] = pd.array(values, dtype=dtype)  # type: ignore[call-overload]
        except (TypeError, ValueError) as exc:
            raise WorkloadError(f"column {column!r}: cannot be read as {dtype} ({exc})") from None
    out = pd.DataFrame(data, index=pd.RangeIndex(n))
    _check(out)
    return out


def _default(column: str, dtype: str, n: int) -> Any:
    """A column left out of a hand-made table: numbered requests, NaN, False or missing."""
    import numpy as np
    import pandas as pd

    if column == "request":
        return np.arange(n, dtype="int64")
    if dtype == "float64":
        return np.full(n, np.nan)
    if dtype == "bool":
        return np.zeros(n, dtype=bool)
    return pd.array([None] * n, dtype=dtype)  # type: ignore[call-overload]


def _check(frame: pd.DataFrame) -> None:
    import numpy as np

    n = len(frame)
    if not np.array_equal(frame["request"].to_numpy(), np.arange(n)):
        raise _bad(
            "request",
            frame,
            frame["request"].to_numpy() != np.arange(n),
            "requests are numbered 0, 1, 2, ... in row order",
        )
    label = frame["label"]
    if label.isna().any() or (label == "").any():
        raise _bad("label", frame, label.isna() | (label == ""), "expected a non-empty label")
    submit, due = frame["submit"].to_numpy(), frame["due"].to_numpy()
    period, duration = frame["period"].to_numpy(), frame["duration"].to_numpy()
    cancel = frame["cancel_at"].to_numpy()
    cron = frame["cron"].notna().to_numpy()
    if not np.isfinite(submit).all() or (submit < 0).any():
        raise _bad(
            "submit", frame, ~(np.isfinite(submit) & (submit >= 0)), "expected a finite time >= 0"
        )
    if not (np.isfinite(duration) & (duration >= 0)).all():
        raise _bad(
            "duration",
            frame,
            ~(np.isfinite(duration) & (duration >= 0)),
            "expected a finite duration >= 0",
        )
    bad_due = ~cron & ~(np.isfinite(due) & (due >= submit))
    if bad_due.any():
        raise _bad("due", frame, bad_due, "expected a finite time no earlier than submit")
    if (cron & ~np.isnan(due)).any():
        raise _bad("due", frame, cron & ~np.isnan(due), "a cron task's rule decides: leave it NaN")
    bad_period = ~np.isnan(period) & ~(np.isfinite(period) & (period > 0))
    if bad_period.any() or (cron & ~np.isnan(period)).any():
        raise _bad(
            "period",
            frame,
            bad_period | (cron & ~np.isnan(period)),
            "expected a finite period > 0 (NaN for one run; none with a cron rule)",
        )
    recurring = cron | ~np.isnan(period)
    bad_cancel = ~np.isnan(cancel) & (recurring | ~(cancel >= submit) | ~np.isfinite(cancel))
    if bad_cancel.any():
        raise _bad(
            "cancel_at",
            frame,
            bad_cancel,
            "expected NaN or a finite time >= submit, for a one-shot request",
        )
    dup = frame["dup_of"]
    has_dup = dup.notna().to_numpy()
    if has_dup.any():
        target = dup.fillna(-1).to_numpy(dtype="int64")
        rows = np.arange(n)
        bad = has_dup & ((target < 0) | (target >= rows))
        if bad.any():
            raise _bad("dup_of", frame, bad, "expected an earlier request's number")
        safe = np.where(has_dup, target, rows)
        same = np.ones(n, dtype=bool)
        for column in ("due", "period", "duration"):
            values = frame[column].to_numpy()
            same &= (values == values[safe]) | (np.isnan(values) & np.isnan(values[safe]))
        same &= frame["label"].to_numpy() == frame["label"].to_numpy()[safe]
        same &= frame["fails"].to_numpy() == frame["fails"].to_numpy()[safe]
        same &= ~recurring & ~recurring[safe] & np.isnan(cancel)
        same &= ~has_dup[safe]  # a duplicate of a duplicate: point at the original
        if (has_dup & ~same).any():
            raise _bad(
                "dup_of",
                frame,
                has_dup & ~same,
                "a duplicate repeats a one-shot original (same label, due, duration, "
                "fails) and is not cancelled itself",
            )


# -- generators -------------------------------------------------------------------------


def _rng(seed: Any) -> np.random.Generator:
    import numpy as np

    if seed is None or isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed={seed!r}: expected an int (a workload is drawn from its seed)")
    if int(seed) < 0:
        raise ValueError(f"seed={seed!r}: expected an int >= 0")
    return np.random.default_rng(int(seed))


class _OneShots:
    """The options every one-shot generator takes, checked, and the columns they make."""

    def __init__(
        self, duration: Any, lead: Any, cancels: Any, duplicates: Any, failures: Any
    ) -> None:
        self.duration = as_distribution(duration)
        self.lead = as_distribution(lead, "lead")
        self.cancels = _fraction("cancels", cancels)
        self.duplicates = _fraction("duplicates", duplicates)
        self.failures = _fraction("failures", failures)

    def record(self) -> dict[str, Any]:
        """The options for a workload's ``params`` (JSON-able)."""
        return {
            "duration": self.duration.describe(),
            "lead": self.lead.describe(),
            "cancels": self.cancels,
            "duplicates": self.duplicates,
            "failures": self.failures,
        }

    def columns(
        self, rng: np.random.Generator, label: str, submit: np.ndarray, due: np.ndarray
    ) -> dict[str, Any]:
        """Durations, failures, cancels, then duplicates inserted after their originals."""
        import numpy as np

        n = len(submit)
        durations = self.duration.sample(rng, n)
        fails = rng.random(n) < self.failures
        cancelled = rng.random(n) < self.cancels
        cancel_at = np.where(cancelled, submit + rng.random(n) * (due - submit), np.nan)
        repeated = (rng.random(n) < self.duplicates) & ~cancelled
        # each repeated request is followed at once by its duplicate (a client retrying)
        order = np.repeat(np.arange(n), np.where(repeated, 2, 1))
        is_dup = np.zeros(len(order), dtype=bool)
        is_dup[1:] = order[1:] == order[:-1]
        position = np.flatnonzero(~is_dup)  # where each original lands
        dup_of = np.where(is_dup, position[order], -1)
        return {
            "label": np.full(len(order), _label(label), dtype=object),
            "submit": submit[order],
            "due": due[order],
            "period": np.full(len(order), np.nan),
            "duration": durations[order],
            "fails": fails[order],
            "cancel_at": np.where(is_dup, np.nan, cancel_at[order]),
            "dup_of": dup_of,
        }


def _frame(columns: dict[str, Any]) -> pd.DataFrame:
    import pandas as pd

    dup = columns.pop("dup_of", None)
    frame = pd.DataFrame(columns)
    if dup is not None:
        frame["dup_of"] = pd.array([None if d < 0 else int(d) for d in dup], dtype="Int64")
    return frame


def poisson(
    rate: float,
    horizon: float,
    *,
    seed: int,
    duration: Distribution | float = 0.0,
    lead: Distribution | float = 0.0,
    cancels: float = 0.0,
    duplicates: float = 0.0,
    failures: float = 0.0,
    label: str = "poisson",
) -> Workload:
    """Requests arriving at random, ``rate`` per second on average, over ``[0, horizon)``.

    The arrivals are a Poisson process: their number is Poisson(``rate x
    horizon``) and, given it, their times are independent and uniform. Each
    request is made when it arrives and asks to run ``lead`` later (0: as soon as
    possible; a distribution: timers set ahead, which makes the decision tree
    insert earlier than the head, case 3, or at new time points, case 4).

    Args:
        rate: arrivals per second (> 0).
        horizon: seconds of arrivals.
        seed: the seed of the draw (an int >= 0).
        duration: how long each run takes (seconds or a distribution).
        lead: how far ahead of its due time a request is made.
        cancels, duplicates, failures: fractions (see the module's docstring).
        label: the runs' label.

    >>> from tempsched_lab.lab import exponential
    >>> w = poisson(rate=200, horizon=1.0, seed=3, lead=exponential(0.05), cancels=0.1)
    >>> len(w), int(w.frame["cancel_at"].notna().sum())
    (176, 23)
    """
    import numpy as np

    rate = _number("rate", rate, positive=True)
    horizon = _number("horizon", horizon, positive=True)
    options = _OneShots(duration, lead, cancels, duplicates, failures)
    rng = _rng(seed)
    n = int(rng.poisson(rate * horizon))
    arrivals = np.sort(rng.uniform(0.0, horizon, n))
    due = arrivals + options.lead.sample(rng, n)
    frame = _frame(options.columns(rng, label, arrivals, due))
    params = {"rate": rate, "horizon": horizon, **options.record()}
    return Workload(frame, horizon=horizon, name=label, seed=int(seed), params={"poisson": params})


def bursts(
    size: int,
    every: float,
    horizon: float,
    *,
    seed: int,
    first: float = 0.0,
    duration: Distribution | float = 0.0,
    lead: Distribution | float = 0.0,
    cancels: float = 0.0,
    duplicates: float = 0.0,
    failures: float = 0.0,
    label: str = "burst",
) -> Workload:
    """``size`` requests due at one instant, at ``first``, ``first + every``... before ``horizon``.

    Each request is made ``lead`` before its instant (never before 0): with the
    default 0, a whole burst arrives at once (one ``schedule_many``: the first
    request opens the time point, the others join it, cases 6 or 8).

    >>> w = bursts(size=4, every=0.25, horizon=1.0, seed=0)
    >>> sorted(w.frame["due"].unique().tolist()), len(w)
    ([0.0, 0.25, 0.5, 0.75], 16)
    """
    import numpy as np

    size = _count("size", size, minimum=1)
    every = _number("every", every, positive=True)
    horizon = _number("horizon", horizon, positive=True)
    first = _number("first", first, minimum=0.0)
    options = _OneShots(duration, lead, cancels, duplicates, failures)
    rng = _rng(seed)
    instants = first + every * np.arange(max(0, math.ceil((horizon - first) / every)))
    instants = instants[instants < horizon]
    due = np.repeat(instants, size)
    submit = np.maximum(0.0, due - options.lead.sample(rng, len(due)))
    order = np.argsort(submit, kind="stable")
    frame = _frame(options.columns(rng, label, submit[order], due[order]))
    params = {"size": size, "every": every, "horizon": horizon, "first": first, **options.record()}
    return Workload(frame, horizon=horizon, name=label, seed=int(seed), params={"bursts": params})


def _choices(
    rng: np.random.Generator, name: str, value: Any, n: int, *, positive: bool = True
) -> np.ndarray:
    """``n`` values: a number repeated, drawn from a distribution, or picked from a list."""
    import numpy as np

    if isinstance(value, Distribution):
        values = value.sample(rng, n)
        if positive and (values <= 0).any():
            raise ValueError(f"{name}={value!r}: drew a value <= 0; use a distribution above 0")
        return values
    if isinstance(value, Sequence) and not isinstance(value, str):
        options = [_number(name, v, positive=positive) for v in value]
        if not options:
            raise ValueError(f"{name}=[]: expected at least one value")
        return np.asarray(options)[rng.integers(0, len(options), n)]
    return np.full(n, _number(name, value, positive=positive))


def periodic_fleet(
    tasks: int,
    period: Any,
    horizon: float,
    *,
    seed: int,
    jitter: float = 1.0,
    duration: Distribution | float = 0.0,
    failures: float = 0.0,
    label: str = "periodic",
) -> Workload:
    """``tasks`` periodic tasks made at time 0, each running every ``period`` until ``horizon``.

    ``period``: seconds, a list to pick from (each task draws one), or a
    distribution. Phase jitter: each task's first run is at a random offset in
    ``[0, jitter x period)`` (0: every task starts at 0, in step, the
    thundering herd). A task whose ``duration`` exceeds its period overruns:
    the misfire policy decides what happens to the runs it misses. Each
    task's runs all take its drawn duration; a failing task fails every run and
    keeps its schedule.

    >>> w = periodic_fleet(tasks=3, period=[0.1, 0.2], horizon=1.0, seed=2, jitter=0.0)
    >>> w.frame[["submit", "due", "period"]].to_dict("list")
    {'submit': [0.0, 0.0, 0.0], 'due': [0.0, 0.0, 0.0], 'period': [0.2, 0.1, 0.1]}
    """
    import numpy as np

    tasks = _count("tasks", tasks, minimum=1)
    horizon = _number("horizon", horizon, positive=True)
    jitter = _fraction("jitter", jitter)
    dist = as_distribution(duration)
    failures = _fraction("failures", failures)
    rng = _rng(seed)
    periods = _choices(rng, "period", period, tasks)
    phase = periods * jitter * rng.random(tasks)
    columns = {
        "label": np.full(tasks, _label(label), dtype=object),
        "submit": np.zeros(tasks),
        "due": phase,
        "period": periods,
        "duration": dist.sample(rng, tasks),
        "fails": rng.random(tasks) < failures,
    }
    desc = period.describe() if isinstance(period, Distribution) else period
    params = {
        "tasks": tasks,
        "period": desc,
        "horizon": horizon,
        "jitter": jitter,
        "duration": dist.describe(),
        "failures": failures,
    }
    return Workload(
        _frame(columns),
        horizon=horizon,
        name=label,
        seed=int(seed),
        params={"periodic_fleet": params},
    )


def cron_fleet(
    tasks: int,
    horizon: float,
    *,
    seed: int,
    rules: Sequence[str] = ("* * * * *",),
    tz: str = "UTC",
    start: float = 0.0,
    duration: Distribution | float = 0.0,
    failures: float = 0.0,
    label: str = "cron",
) -> Workload:
    """``tasks`` calendar tasks, made at time 0, each with a cron rule picked from ``rules``.

    Cron rules read the calendar: ``start`` (epoch seconds) places the virtual
    clock's 0 on a date, ``tz`` is the rules' time zone (see
    :mod:`tempsched_lab.triggers`; needs ``pip install 'tempsched-lab[cron]'``).
    The rules are checked here, so a bad one fails before any run.

    >>> w = cron_fleet(tasks=2, horizon=3600.0, seed=0, rules=["*/5 * * * *"])
    >>> w.frame[["cron", "due"]].to_dict("list")
    {'cron': ['*/5 * * * *', '*/5 * * * *'], 'due': [nan, nan]}
    """
    import numpy as np

    from ..triggers import CronTrigger

    tasks = _count("tasks", tasks, minimum=1)
    horizon = _number("horizon", horizon, positive=True)
    if isinstance(rules, str) or not isinstance(rules, Sequence) or not rules:
        raise TypeError(f"rules={rules!r}: expected a non-empty list of cron rules")
    for rule in rules:
        CronTrigger(rule, tz=tz)  # a bad rule or zone raises here, naming it
    dist = as_distribution(duration)
    failures = _fraction("failures", failures)
    rng = _rng(seed)
    picked = np.asarray(list(rules), dtype=object)[rng.integers(0, len(rules), tasks)]
    columns = {
        "label": np.full(tasks, _label(label), dtype=object),
        "submit": np.zeros(tasks),
        "cron": picked,
        "duration": dist.sample(rng, tasks),
        "fails": rng.random(tasks) < failures,
    }
    params = {
        "tasks": tasks,
        "horizon": horizon,
        "rules": list(rules),
        "tz": tz,
        "duration": dist.describe(),
        "failures": failures,
    }
    return Workload(
        _frame(columns),
        horizon=horizon,
        start=start,
        tz=tz,
        name=label,
        seed=int(seed),
        params={"cron_fleet": params},
    )


def mix(*workloads: Workload, name: str | None = None) -> Workload:
    """Several workloads as one: their requests merged in submission order, renumbered.

    The horizon is the longest; start and time zone must agree. The seed is
    kept when all parts share one.

    >>> w = mix(poisson(100, 1.0, seed=1), bursts(10, 0.5, 1.0, seed=1))
    >>> w.counts(), w.horizon
    ({'burst': 20, 'poisson': 100}, 1.0)
    """
    import numpy as np
    import pandas as pd

    if not workloads or not all(isinstance(w, Workload) for w in workloads):
        raise TypeError("mix(): expected one or more Workload objects")
    starts = {w.start for w in workloads}
    zones = {w.tz for w in workloads}
    if len(starts) > 1 or len(zones) > 1:
        raise ValueError(
            f"mix(): the parts disagree on start {sorted(starts)} or tz {sorted(zones)}"
        )
    frames: list[pd.DataFrame] = []
    offset = 0
    for w in workloads:
        part = w.frame.copy()
        part["dup_of"] = part["dup_of"] + offset
        part["part"] = len(frames)
        frames.append(part)
        offset += len(part)
    both = pd.concat(frames, ignore_index=True)
    order = np.lexsort(
        (both["request"].to_numpy(), both["part"].to_numpy(), both["submit"].to_numpy())
    )
    new_number = np.empty(len(order), dtype="int64")
    new_number[order] = np.arange(len(order))
    merged = both.iloc[order].reset_index(drop=True)
    old = merged["dup_of"]
    merged["dup_of"] = pd.array(
        [None if pd.isna(d) else int(new_number[int(d)]) for d in old], dtype="Int64"
    )
    merged = merged.drop(columns=["part", "request"])
    seeds = {w.seed for w in workloads}
    return Workload(
        merged,
        horizon=max(w.horizon for w in workloads),
        start=workloads[0].start,
        tz=workloads[0].tz,
        name=name or "+".join(w.name for w in workloads),
        seed=seeds.pop() if len(seeds) == 1 else None,
        params={"mix": [w.params for w in workloads]},
    )


def _label(label: Any) -> str:
    if not isinstance(label, str) or not label:
        raise TypeError(f"label={label!r}: expected a non-empty string")
    return label
