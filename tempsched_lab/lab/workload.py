"""A workload: the requests an experiment makes, as a table, and its files.

A :class:`Workload` is a table of requests (a pandas DataFrame, one row per
request) plus the few numbers that frame it (the horizon, the clock's start, the
time zone of calendar tasks). It can be shown, saved to CSV or Parquet and read
back identically (:meth:`Workload.save`, :func:`read_workload`), built by hand
(checked row by row), or drawn by a generator of :mod:`~tempsched_lab.lab.workloads`.

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

>>> import pandas as pd
>>> w = Workload(pd.DataFrame({"label": ["a"], "submit": [0.0], "due": [1.0],
...                            "duration": [0.5]}), horizon=1.0, name="one")
>>> w
<Workload one: 1 requests over 1.000 s (a 1)>
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.validation import MAX_HORIZON
from ..time.scale import fmt_duration

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COLUMNS", "Workload", "WorkloadError", "read_workload"]

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
#: the first line of a workload CSV file of the first layout (then its metadata as JSON)
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
        self.horizon = _number("horizon", horizon, minimum=0.0, maximum=MAX_HORIZON)
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
        self.frame: pd.DataFrame = _normalized(frame, tz)

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

        from .tables import with_units

        head = with_units(self.frame.head(10)).to_html(index=False, max_cols=12)
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
        an equal workload (:meth:`equals`). A CSV file is plain CSV (a plain
        ``pandas.read_csv(path)`` reads the table); its metadata (horizon, start,
        seed, the generator's arguments) is written beside it, as the event log's
        is: ``w.csv`` -> ``w.csv.meta.json``. Keep the two files together.
        """
        from ..log.files.atomic import atomic_path
        from ..log.files.csvfile import metadata_path

        target = Path(path)
        kind = _format_of(target, fmt)
        meta_text = json.dumps(self.metadata(), sort_keys=True, indent=1) + "\n"
        with atomic_path(target, what="the workload") as tmp:
            if kind == "csv":
                with open(tmp, "w", encoding="utf-8", newline="") as fh:
                    self.frame.to_csv(fh, index=False, lineterminator="\n")
            else:
                import pyarrow as pa
                import pyarrow.parquet as pq

                table = pa.Table.from_pandas(self.frame, preserve_index=False)
                meta = dict(table.schema.metadata or {})
                meta[PARQUET_KEY] = meta_text.encode()
                pq.write_table(table.replace_schema_metadata(meta), tmp)
        if kind == "csv":
            with atomic_path(metadata_path(target), what="the workload's metadata") as tmp:
                tmp.write_text(meta_text, encoding="utf-8")
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
    """Read a workload written by :meth:`Workload.save` (CSV or Parquet), checked as it is read.

    A file that cannot be a workload, edited by hand or damaged, raises
    :class:`WorkloadError` naming the file and what is wrong: the request (its
    row), the column and the value of a bad cell (a word where a number goes,
    a time that is negative, NaN or over :data:`~tempsched_lab.core.validation.MAX_HORIZON`,
    a cron rule that does not parse), or the metadata entry.

    >>> import tempfile, pathlib
    >>> from tempsched_lab.lab import bursts
    >>> w = bursts(size=3, every=0.5, horizon=1.0, seed=1)
    >>> path = w.save(pathlib.Path(tempfile.mkdtemp()) / "w.csv")
    >>> read_workload(path).equals(w)
    True
    """

    source = Path(path)
    kind = _format_of(source, fmt)
    where = meta_where = repr(str(source))
    if kind == "csv":
        meta, frame = _read_csv(source)
        meta_where = _meta_where(source, meta)
    else:
        meta, frame = _read_parquet(source)
    if meta.get("format") != _FORMAT:
        raise WorkloadError(f"{meta_where}: workload format {meta.get('format')!r} unknown")
    if len(frame) != meta.get("rows"):
        raise WorkloadError(
            f"{where}: {len(frame)} rows, the metadata says {meta.get('rows')} "
            "(a cut or edited file)"
        )
    missing = [k for k in ("horizon", "start", "tz", "name", "seed", "params") if k not in meta]
    if missing:
        raise WorkloadError(f"{meta_where}: the metadata has no {missing[0]!r}")
    try:
        return Workload(
            frame,
            horizon=meta["horizon"],
            start=meta["start"],
            tz=meta["tz"],
            name=meta["name"],
            seed=meta["seed"],
            params=meta["params"],
        )
    except WorkloadError as exc:  # a cell of the table, or a cron rule in the file's zone
        raise WorkloadError(f"{where}: {exc}") from None
    except (TypeError, ValueError) as exc:  # a value of the metadata
        raise WorkloadError(f"{meta_where}: the metadata's {exc}") from None


def _meta_where(source: Path, meta: dict[str, Any]) -> str:
    """Where a CSV workload's metadata came from: the file beside it, or its first line."""
    from ..log.files.csvfile import metadata_path

    if meta.get(_FIRST_LINE):
        return f"{str(source)!r} (its first line)"
    return repr(str(metadata_path(source)))


def _read_parquet(source: Path) -> tuple[dict[str, Any], pd.DataFrame]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(source)
    except OSError:
        raise
    except Exception as exc:  # pyarrow's own errors (ArrowInvalid...): not a Parquet file
        raise WorkloadError(f"{str(source)!r}: not a workload Parquet file: {exc}") from None
    raw = (table.schema.metadata or {}).get(PARQUET_KEY)
    if raw is None:
        raise WorkloadError(f"{str(source)!r}: a Parquet file without workload metadata")
    try:
        meta = json.loads(raw)
    except ValueError as exc:
        raise WorkloadError(f"{str(source)!r}: unreadable workload metadata: {exc}") from None
    if not isinstance(meta, dict):
        raise WorkloadError(f"{str(source)!r}: not workload metadata")
    try:
        frame = table.to_pandas()
    except Exception as exc:  # a column pandas cannot hold
        raise WorkloadError(f"{str(source)!r}: not a workload table: {exc}") from None
    return meta, frame


#: a key marking metadata read from a CSV file's first line (the older layout)
_FIRST_LINE = "_first_line"


def _read_csv(source: Path) -> tuple[dict[str, Any], pd.DataFrame]:
    """The metadata and the table of a workload CSV file.

    The metadata is in the file beside it (``w.csv.meta.json``); files written
    before that layout hold it in their first line, and still read. A cell the
    table cannot hold is refused naming the file, the request, the column and
    the value (:func:`_locate_bad_cell`).
    """
    import io
    import warnings

    import pandas as pd

    from ..log.files.csvfile import metadata_path

    dtypes = {c: d for c, (d, _) in COLUMNS.items() if d != "float64"}
    major = int(pd.__version__.split(".")[0])
    options: dict[str, Any] = {} if major >= 3 else {"float_precision": "round_trip"}
    text = _text_of(source)
    first, _, rest = text.partition("\n")
    if first.startswith(CSV_MAGIC):  # the older layout: the metadata as the first line
        try:
            meta = json.loads(first[len(CSV_MAGIC) :])
        except ValueError as exc:
            raise WorkloadError(f"{str(source)!r}: unreadable workload metadata: {exc}") from None
        if not isinstance(meta, dict):
            raise WorkloadError(f"{str(source)!r}: not workload metadata")
        meta[_FIRST_LINE] = True
        table, lines_before = rest, 1
    else:
        sidecar = metadata_path(source)
        if not sidecar.exists():
            raise WorkloadError(
                f"{str(source)!r}: its metadata file {str(sidecar)!r} is missing (a "
                "workload saved as CSV keeps its horizon, start and seed there); for a "
                "table made by hand, build Workload(pandas.read_csv(path), horizon=...)"
            )
        try:
            meta = json.loads(sidecar.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise WorkloadError(f"{str(sidecar)!r}: unreadable workload metadata: {exc}") from exc
        if not isinstance(meta, dict):
            raise WorkloadError(f"{str(sidecar)!r}: not workload metadata")
        table, lines_before = text, 0
    try:
        with warnings.catch_warnings():  # pandas casting 'inf' to an int column only warns
            warnings.simplefilter("error", RuntimeWarning)
            frame = pd.read_csv(
                io.StringIO(table), dtype=dtypes, keep_default_na=False, na_values=[""], **options
            )
    except (ValueError, TypeError, OverflowError, RuntimeWarning) as exc:  # a cell it cannot hold
        _locate_bad_cell(table, source, lines_before)
        raise WorkloadError(f"{str(source)!r}: not a workload table: {exc}") from None
    if "submit" not in frame.columns:
        raise WorkloadError(f"{str(source)!r}: not a workload table (no column 'submit')")
    floats = [c for c, (d, _) in COLUMNS.items() if d == "float64" and c in frame.columns]
    if any(frame[c].dtype != "float64" for c in floats):  # a word where a number goes
        _locate_bad_cell(table, source, lines_before)
    return meta, frame


def _text_of(source: Path) -> str:
    """The file's text (UTF-8, a byte-order mark allowed); a byte that is not is refused."""
    data = source.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise WorkloadError(
            f"{str(source)!r}: line {line}: byte {data[exc.start : exc.start + 1]!r} is not "
            "UTF-8 text (save the file as UTF-8)"
        ) from None


def _locate_bad_cell(table: str, source: Path, lines_before: int) -> None:
    """Raise a :class:`WorkloadError` naming the first cell the table cannot hold, if any.

    The slow path of reading: run only when the fast reader failed, it reads the
    rows with the ``csv`` module and tries each cell as its column's dtype.
    """
    import csv
    import io

    reader = csv.reader(io.StringIO(table, newline=""))
    header = next(reader, None)
    if not header:
        raise WorkloadError(f"{str(source)!r}: an empty table (no header line)")
    request = 0
    for fields in reader:
        if not fields:
            continue  # a blank line, skipped as pandas skips it
        line = reader.line_num + lines_before
        where = f"{str(source)!r}: request {request} (line {line})"
        if len(fields) != len(header):
            raise WorkloadError(
                f"{where}: {len(fields)} fields, the header names {len(header)} columns"
            )
        for column, value in zip(header, fields, strict=True):
            problem = _cell_problem(column, value)
            if problem is not None:
                raise WorkloadError(f"{where}: {column}={value!r}: {problem}")
        request += 1


def _cell_problem(column: str, value: str) -> str | None:
    """What is wrong with the text of one cell of ``column``, or ``None``."""
    dtype = COLUMNS.get(column, ("", ""))[0]
    if dtype == "float64":
        if value == "":
            return None  # NaN
        try:
            float(value)
        except ValueError:
            return "expected a number (or nothing for NaN)"
    elif dtype in ("int64", "Int64"):
        if value == "" and dtype == "Int64":
            return None
        try:
            number = int(value)
        except ValueError:
            number = None
        if number is None or not -(2**63) <= number < 2**63:
            return "expected a whole number" + (" (or nothing)" if dtype == "Int64" else "")
    elif dtype == "bool" and value not in ("True", "False", "true", "false", "TRUE", "FALSE"):
        return "expected True or False"
    return None


# -- checking a table ---------------------------------------------------------------------


def _number(
    name: str,
    value: Any,
    *,
    minimum: float | None = None,
    positive: bool = False,
    maximum: float | None = None,
) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name}={value!r}: expected a number")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{name}={value!r}: expected a finite number")
    if maximum is not None and result > maximum:
        raise ValueError(f"{name}={value!r}: expected at most {maximum:g}")
    if positive and not result > 0:
        raise ValueError(f"{name}={value!r}: expected a number > 0")
    if minimum is not None and result < minimum:
        raise ValueError(f"{name}={value!r}: expected a number >= {minimum:g}")
    return result


def _bad(column: str, frame: pd.DataFrame, mask: Any, expected: str) -> WorkloadError:
    import numpy as np

    row = int(np.flatnonzero(np.asarray(mask))[0])
    value = frame[column].iloc[row]
    if hasattr(value, "item"):  # a numpy scalar, shown as the number it holds
        value = value.item()
    return WorkloadError(f"request {row}: {column}={value!r}: {expected}")


def _normalized(frame: Any, tz: str = "UTC") -> pd.DataFrame:
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
                    if not all(_is_flag(v) for v in values):  # "no" would be True to numpy
                        raise ValueError("expected True or False")
                    values = values.astype(bool)
                data[column] = values
            elif dtype in ("float64", "int64"):
                data[column] = values.astype(dtype, copy=False)
            else:
                data[column] = pd.array(values, dtype=dtype)  # type: ignore[call-overload]
        except (TypeError, ValueError, OverflowError) as exc:
            raise _unconvertible(column, dtype, values, exc) from None
    out = pd.DataFrame(data, index=pd.RangeIndex(n))
    _check(out, tz)
    return out


def _is_flag(value: Any) -> bool:
    """A value a ``fails`` cell may hold: a bool (numpy's too), or the integer 0 or 1."""
    import numpy as np

    if isinstance(value, (bool, np.bool_)):
        return True
    return isinstance(value, (int, np.integer)) and value in (0, 1)


def _unconvertible(column: str, dtype: str, values: Any, exc: BaseException) -> WorkloadError:
    """The error naming the first value of ``column`` that ``dtype`` cannot hold."""
    import numpy as np
    import pandas as pd

    for row, value in enumerate(values):
        try:
            if dtype == "bool":
                if not _is_flag(value):
                    raise ValueError(value)
            elif dtype in ("float64", "int64"):
                np.array([value], dtype=object).astype(dtype)
            else:
                pd.array([value], dtype=dtype)  # type: ignore[call-overload]
        except (TypeError, ValueError, OverflowError):
            shown = value.item() if hasattr(value, "item") else value
            expected = {
                "bool": "expected True or False",
                "float64": "expected a number",
                "int64": "expected a whole number",
                "Int64": "expected a whole number or nothing",
            }.get(dtype, f"expected a value of type {dtype}")
            return WorkloadError(f"request {row}: {column}={shown!r}: {expected}")
    return WorkloadError(f"column {column!r}: cannot be read as {dtype} ({exc})")


def _check_rules(frame: pd.DataFrame, cron: Any, tz: str) -> None:
    """Parse each cron rule once, in the workload's zone: a bad one names its first request."""
    import numpy as np

    from ..core.triggers.cron import CronTrigger

    CronTrigger._named("* * * * *", tz, "cron", "tz")  # a bad zone: ValueError naming tz=
    rules = frame["cron"]
    checked: set[str] = set()
    for row in np.flatnonzero(cron).tolist():
        rule = rules.iloc[row]
        if rule in checked:
            continue
        try:
            CronTrigger._named(rule, tz, "cron", "tz")
        except (TypeError, ValueError) as exc:
            raise WorkloadError(f"request {row}: {exc}") from None
        checked.add(rule)


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


def _check(frame: pd.DataFrame, tz: str = "UTC") -> None:
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
    for column, values in (
        ("submit", submit),
        ("due", due),
        ("period", period),
        ("duration", duration),
        ("cancel_at", cancel),
    ):
        over = values > MAX_HORIZON  # NaN compares False
        if over.any():
            raise _bad(
                column,
                frame,
                over,
                f"expected at most {MAX_HORIZON:g} s (~31 years: the scheduler refuses a time "
                "further away)",
            )
    if cron.any():
        _check_rules(frame, cron, tz)
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
