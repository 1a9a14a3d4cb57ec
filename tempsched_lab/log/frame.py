"""Stored log rows -> numpy columns -> a typed pandas DataFrame (imported only when needed).

Everything here follows the tables of :mod:`tempsched_lab.log.schema`: the stores
give each column's numpy dtype, missing value and frame dtype; the derived rules
give the computed columns. ``import tempsched_lab`` does not load this module
(nor numpy and pandas) until a frame is asked for or a spilled segment is
written: a log's chunks are compacted without them
(:mod:`tempsched_lab.log.columns`), so a script that never asks for a frame never
pays their import (~25 MB resident, ~0.5 s of CPU, on the compactor thread while
the scheduler ran).
"""

from __future__ import annotations

from array import array
from collections.abc import Collection, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from .columns import Compact, Same, Texts, float_or_nan, stored_in_range
from .schema import COLUMNS, COMMON, DERIVED, KINDS, LAYOUTS, ORIGINS, STORES, Store

__all__ = [
    "Columns",
    "Compact",
    "columns_of",
    "compact_columns",
    "concat_columns",
    "frame_of",
    "typed_frame",
]

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


def compact_columns(compact: Compact, names: Collection[str] | None = None) -> Columns:
    """Every frame column of a compacted chunk (derived columns included), as numpy arrays;
    or only ``names`` (with ``seq`` and ``kind``, and the columns they are derived from).

    A reader that counts (``GET /v1/metrics``) asks for a few columns: 0.14 -> ~0.03 us
    a row, most of a chunk's columns being object arrays filled item by item.
    """
    n = compact.n
    wanted = _wanted(names)
    cols = {c.name: _blank(c.store, n) for c in COLUMNS if wanted is None or c.name in wanted}
    cols["seq"] = np.arange(compact.first_seq, compact.first_seq + n, dtype=np.int64)
    cols["kind"] = np.frombuffer(compact.kinds, dtype=np.int8).copy()
    cols["dispatched"] = np.full(n, np.nan)
    for code, fields in compact.parts.items():
        kind = KINDS[code]
        found = fields.get("idx")
        idx: Any = slice(None) if found is None else np.frombuffer(found, dtype=np.int32)
        count = n if found is None else len(found)
        for name in COMMON + LAYOUTS[kind]:
            if name in cols:
                cols[name][idx] = _array(fields[name], _STORE_OF[name], count)
        for rule in DERIVED:
            if kind in rule.kinds and rule.target in cols:
                _derive(cols, idx, rule.target, rule.rule)
    del cols["dispatched"]
    return cols


def _wanted(names: Collection[str] | None) -> set[str] | None:
    """``names`` with ``seq``, ``kind`` and the sources of the derived ones among them."""
    if names is None:
        return None
    unknown = set(names) - {c.name for c in COLUMNS}
    if unknown:
        raise ValueError(f"names={sorted(unknown)}: not columns of the log")
    wanted = {"seq", "kind", *names}
    for rule in DERIVED:
        if rule.target in wanted and rule.rule[0] in ("diff", "copy"):
            wanted.update(str(part) for part in rule.rule[1:] if isinstance(part, str))
    return wanted


#: each field's store (``dispatched``, stored for ``queue_delay`` but no column: a float)
_STORE_OF = {c.name: STORES[c.store] for c in COLUMNS} | {"dispatched": STORES["float"]}


def _array(field: Any, spec: Store, n: int) -> np.ndarray:
    """One stored field (see :mod:`tempsched_lab.log.columns`) as a numpy array of its store."""
    if isinstance(field, Same):
        value = field.value
        if spec.numpy == "float64":
            return np.full(n, float_or_nan(value))
        if spec.numpy != "object":
            value = spec.missing if value is None else stored_in_range([value], spec)[0]
            return np.full(n, value, dtype=spec.numpy)
        out = np.empty(n, dtype=object)
        out[:] = [value] * n
        return out
    if isinstance(field, array):
        return np.frombuffer(field, dtype=field.typecode)
    values = field.values() if isinstance(field, Texts) else field
    if spec.numpy == "object":
        out = np.empty(n, dtype=object)
        out[:] = values
        return out
    try:
        return np.asarray(values, dtype=spec.numpy)
    except OverflowError:  # (kept as a list: not ints) an ID no task can have: missing
        return np.asarray(stored_in_range(values, spec), dtype=spec.numpy)


def columns_of(rows: Sequence[Row], first_seq: int) -> Columns:
    """Every frame column for stored rows (derived columns included)."""
    return compact_columns(Compact(rows, first_seq))


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
    """Join converted chunks end to end (the columns of the first part)."""
    if len(parts) == 1:
        return parts[0]
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


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
        from ..time.scale import time_scale_of

        origin = time_scale_of(frame).origin
    return _finish(pd.DataFrame(data), float(origin))
