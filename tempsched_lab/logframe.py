"""Stored log rows -> numpy columns -> a typed pandas DataFrame (imported only when needed).

Everything here follows the tables of :mod:`tempsched_lab.schema`: the stores
give each column's numpy dtype, missing value and frame dtype; the derived rules
give the computed columns. ``import tempsched_lab`` does not load this module
(nor numpy and pandas) until a log's first chunk is compacted or a frame is asked
for, and compaction needs numpy only: pandas (0.44 s of CPU to import on the
project's machine, on the compactor thread while the scheduler runs) waits for
the first frame.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from .schema import COLUMNS, COMMON, DERIVED, KINDS, LAYOUTS, ORIGINS, STORES, Store

__all__ = ["Columns", "Compact", "columns_of", "concat_columns", "frame_of", "typed_frame"]

#: One numpy array per stored column (plus ``dispatched``, kept for ``queue_delay``).
Columns = dict[str, np.ndarray]
Row = tuple[Any, ...]

if TYPE_CHECKING:
    import pandas as pd


@cache
def _dtypes() -> tuple[pd.CategoricalDtype, pd.CategoricalDtype]:
    """The ``kind`` and ``origin`` categorical dtypes (pandas imported on first use)."""
    import pandas as pd

    return pd.CategoricalDtype(list(KINDS)), pd.CategoricalDtype(list(ORIGINS))


def _blank(store: str, n: int) -> np.ndarray:
    spec = STORES[store]
    if spec.numpy == "float64":
        return np.full(n, np.nan)
    if spec.numpy == "object":
        return np.full(n, None, dtype=object)
    fill = 0 if spec.missing is None else spec.missing
    return np.full(n, fill, dtype=spec.numpy)


class Compact:
    """Rows stored per kind as numpy arrays: about half the memory of the row tuples.

    ``kinds[i]`` is row ``i``'s kind code; ``parts[code]`` holds ``idx`` (the rows of
    that kind) and one array per field of the kind's layout (common fields included).
    """

    __slots__ = ("first_seq", "kinds", "n", "parts")

    def __init__(self, rows: Sequence[Row], first_seq: int) -> None:
        # Each field is read with a C-level ``map(itemgetter(j), rows)`` into one list:
        # no per-row object that the cyclic GC tracks is made, so the collector stays on
        # (turning it off here, as before, turned it off for the whole process while the
        # compactor thread worked) and costs nothing measurable. Transposing with
        # ``zip(*rows)`` made one tracked iterator per row: ~90 collections per
        # 65,536-row chunk, 17 ms of its ~60 ms with the collector on.
        n = len(rows)
        self.first_seq = first_seq
        self.n = n
        self.kinds = np.fromiter(map(_FIRST, rows), dtype=np.int8, count=n)
        self.parts: dict[int, dict[str, np.ndarray]] = {}
        for code in np.unique(self.kinds).tolist():
            kind = KINDS[code]
            idx = np.flatnonzero(self.kinds == code)
            part = list(map(rows.__getitem__, idx.tolist())) if len(idx) < n else rows
            arrays: dict[str, np.ndarray] = {"idx": idx.astype(np.int32)}
            for j, name in enumerate(COMMON + LAYOUTS[kind], 1):
                spec = STORES[_STORE_OF.get(name, "float")]
                values = list(map(itemgetter(j), part))
                try:
                    arrays[name] = np.asarray(values, dtype=spec.numpy)
                except OverflowError:  # an ID no task can have (cancel(2**63)): missing, and
                    arrays[name] = _in_range(values, spec)  # every other row kept as it is
            self.parts[code] = arrays

    def rows(self) -> list[Row]:
        """The stored tuples back (for ``row_dict`` readers of old rows)."""
        out: list[Row | None] = [None] * self.n
        for code, arrays in self.parts.items():
            names = COMMON + LAYOUTS[KINDS[code]]
            lists = [_plain(arrays[name]) for name in names]
            for j, i in enumerate(arrays["idx"].tolist()):
                out[i] = (code, *(values[j] for values in lists))
        return out  # type: ignore[return-value]

    def columns(self) -> Columns:
        """Every column of the frame for these rows, derived columns included."""
        n = self.n
        cols = {c.name: _blank(c.store, n) for c in COLUMNS}
        cols["seq"] = np.arange(self.first_seq, self.first_seq + n, dtype=np.int64)
        cols["kind"] = self.kinds
        cols["dispatched"] = np.full(n, np.nan)
        for code, arrays in self.parts.items():
            kind = KINDS[code]
            idx = arrays["idx"]
            for name in COMMON + LAYOUTS[kind]:
                cols[name][idx] = arrays[name]
            for rule in DERIVED:
                if kind in rule.kinds:
                    _derive(cols, idx, rule.target, rule.rule)
        del cols["dispatched"]
        return cols


_STORE_OF = {c.name: c.store for c in COLUMNS}
_FIRST = itemgetter(0)


def _in_range(values: Sequence[Any], spec: Store) -> np.ndarray:
    """An integer column whose values do not all fit its dtype: those that do not are missing.

    A row stores whatever integer it was given (``cancel()`` records the ID asked for, and
    any int is a valid question: its answer is "not found"); the frame's integer columns are
    int64. Before this, one such row made every ``to_frame()`` raise ``OverflowError``.

    >>> _in_range([3, 2**63, -2**63 - 1, -5], STORES["int"]).tolist()
    [3, -1, -1, -5]
    >>> _in_range([1.5, 10**400, None], STORES["float"]).tolist()
    [1.5, nan, nan]
    """
    if spec.numpy == "float64":
        return np.asarray([_float_or_nan(v) for v in values], dtype=np.float64)
    info = np.iinfo(spec.numpy)
    missing = spec.missing if isinstance(spec.missing, int) else 0
    kept = [v if info.min <= v <= info.max else missing for v in values]
    return np.asarray(kept, dtype=spec.numpy)


def _float_or_nan(value: Any) -> float:
    try:
        return float(value) if value is not None else math.nan
    except OverflowError:
        return math.nan


def _plain(values: np.ndarray) -> list[Any]:
    """Array values as the Python objects rows hold (NaN floats back to ``None``)."""
    items: list[Any] = values.tolist()
    if values.dtype.kind == "f":
        return [None if v != v else v for v in items]
    return items


def columns_of(rows: Sequence[Row], first_seq: int) -> Columns:
    """Every frame column for stored rows (derived columns included)."""
    return Compact(rows, first_seq).columns()


def _derive(cols: Columns, idx: np.ndarray, target: str, rule: tuple[object, ...]) -> None:
    op = rule[0]
    if op == "diff":
        cols[target][idx] = cols[str(rule[1])][idx] - cols[str(rule[2])][idx]
    elif op == "copy":
        cols[target][idx] = cols[str(rule[1])][idx]
    elif op == "const":
        cols[target][idx] = rule[1]
    else:  # pragma: no cover - the schema's table is fixed
        raise ValueError(f"unknown derivation {rule!r}")


def concat_columns(parts: Sequence[Columns]) -> Columns:
    """Join converted chunks end to end."""
    if len(parts) == 1:
        return parts[0]
    return {c.name: np.concatenate([p[c.name] for p in parts]) for c in COLUMNS}


def slice_columns(cols: Columns, start: int, stop: int) -> Columns:
    """Rows ``start:stop`` of converted columns (views, no copy)."""
    return {name: values[start:stop] for name, values in cols.items()}


def frame_of(cols: Columns, time_origin: float) -> pd.DataFrame:
    """The typed DataFrame of converted columns (stored columns, then ``time``, ``wall_time``)."""
    import pandas as pd

    data = {c.name: _typed(c.store, cols[c.name]) for c in COLUMNS}
    frame = pd.DataFrame(data)
    return _finish(frame, time_origin)


def _typed(store: str, values: np.ndarray) -> Any:
    import pandas as pd

    if store in ("seq", "float"):
        return values
    if store == "int":
        return pd.arrays.IntegerArray(values.astype(np.int64), values == -1)
    if store == "kind":
        return pd.Categorical.from_codes(values, dtype=_dtypes()[0])
    if store == "origin":
        return pd.Categorical.from_codes(values, dtype=_dtypes()[1])
    if store == "case":
        return pd.arrays.IntegerArray(values, values == 0)
    if store == "bool":
        return pd.arrays.BooleanArray(values == 1, values == -1)
    if store == "cat":
        return categorical(values)
    return strings(values)


def categorical(values: Any) -> pd.Categorical:
    """Categories in order of first appearance, so a round trip gives an equal dtype."""
    import pandas as pd

    codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
    return pd.Categorical.from_codes(codes, categories=pd.Index(uniques, dtype=object))


def strings(values: Any) -> Any:
    """A nullable ``string`` array (missing = ``<NA>``), built without a per-item check."""
    import pandas as pd

    obj = np.asarray(values, dtype=object)
    out = obj.copy()
    out[pd.isna(obj)] = pd.NA
    return pd.arrays.StringArray(out)


def _finish(frame: pd.DataFrame, time_origin: float) -> pd.DataFrame:
    import pandas as pd

    frame["time"] = pd.to_datetime(frame["t"], unit="s", utc=True, errors="coerce")
    frame["wall_time"] = pd.to_datetime(frame["wall"], unit="s", utc=True, errors="coerce")
    frame.attrs["time_origin"] = float(time_origin)
    return frame


def typed_frame(frame: pd.DataFrame, time_origin: float | None = None) -> pd.DataFrame:
    """Give a frame read some other way exactly the dtypes :meth:`EventLog.to_frame` produces."""
    import pandas as pd

    missing = [c.name for c in COLUMNS if c.name not in frame.columns]
    if missing:
        raise ValueError(f"not an event log: columns {missing} are missing")
    data: dict[str, Any] = {}
    for c in COLUMNS:
        col = frame[c.name]
        if c.store == "seq":
            data[c.name] = pd.to_numeric(col).astype("int64").to_numpy()
        elif c.store == "int":
            data[c.name] = pd.to_numeric(col).astype("Int64").array
        elif c.store == "float":
            data[c.name] = pd.to_numeric(col).to_numpy("float64", na_value=np.nan)
        elif c.store == "kind":
            data[c.name] = pd.Categorical(col.astype(object), dtype=_dtypes()[0])
        elif c.store == "origin":
            data[c.name] = pd.Categorical(col.astype(object), dtype=_dtypes()[1])
        elif c.store == "case":
            data[c.name] = pd.to_numeric(col).astype("Int8").array
        elif c.store == "bool":
            data[c.name] = col.astype("boolean").array
        elif c.store == "cat":
            data[c.name] = categorical(col.astype(object).where(col.notna(), None))
        else:
            data[c.name] = strings(col.astype(object).to_numpy())
    origin = frame.attrs.get("time_origin") if time_origin is None else time_origin
    if origin is None:
        from .timescale import time_scale_of

        origin = time_scale_of(frame).origin
    return _finish(pd.DataFrame(data), float(origin))
