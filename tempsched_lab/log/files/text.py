r"""A reversible escape for text cells, so that every Python string survives a file.

Two things cannot be stored as they are:

* an **empty string in CSV**: CSV has one way to write "nothing", and a missing
  value needs it;
* a **lone surrogate** (``"\ud800"``, e.g. a label built from an undecodable
  file name): UTF-8, and so CSV text and Parquet strings, cannot hold it.

Such a value is stored as ``\e`` followed by its ``unicode_escape`` spelling
(pure ASCII); a value that really starts with a backslash gets one more in front.
Every other value is stored untouched, so a file stays readable by any CSV or
Parquet tool. Decoding is exact: ``unescape_text(escape_text(v)) == v`` for any ``v``.

>>> print(escape_text(""), escape_text("\ud800x"), escape_text("\\d"), escape_text("plain"))
\e \e\ud800x \\d plain
>>> unescape_text(escape_text("\ud800x")) == "\ud800x"
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "escape_columns",
    "escape_text",
    "escape_values",
    "has_surrogates",
    "unescape_columns",
    "unescape_text",
    "unescape_values",
]

_MARK = "\\e"
# What ``str.encode("unicode_escape")`` can produce: printable ASCII but the backslash,
# and the escapes it writes. A stored ``\e`` value must be exactly that.
_ESCAPED = re.compile(
    r"(?:[\x20-\x5b\x5d-\x7e]|\\(?:[\\tnr]|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}))*"
)


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def escape_text(value: str, *, empty: bool = True) -> str:
    """The stored form of ``value`` (``empty=False``: an empty string may stay empty)."""
    if (empty and value == "") or not _encodable(value):
        return _MARK + value.encode("unicode_escape").decode("ascii")
    if value.startswith("\\"):
        return "\\" + value
    return value


def unescape_text(stored: str) -> str:
    """The value ``stored`` stands for; ``ValueError`` for a form no writer produces."""
    if not stored.startswith("\\"):
        return stored
    if stored.startswith("\\\\"):
        return stored[1:]
    body = stored[len(_MARK) :]
    if stored.startswith(_MARK) and _ESCAPED.fullmatch(body):
        return body.encode("ascii").decode("unicode_escape")
    raise ValueError(f"{stored!r} is not a valid escaped text value")


def has_surrogates(values: list[str]) -> bool:
    """Whether any of ``values`` holds a lone surrogate (one ``encode`` call when none does)."""
    return not _encodable("".join(values))


def _may_start_with_backslash(nonempty: list[str]) -> bool:
    return any(v[0] == "\\" for v in nonempty)


def escape_values(values: list[Any], *, empty: bool) -> list[Any] | None:
    """``values`` (strings and missing ``None``) in stored form; ``None`` when none changes.

    ``empty=True`` (CSV) escapes empty strings too.
    """
    nonempty = list(filter(None, values))  # drops None and ""
    has_empty = len(nonempty) + values.count(None) < len(values)
    surrogates = has_surrogates(nonempty)
    if not (surrogates or (empty and has_empty) or _may_start_with_backslash(nonempty)):
        return None
    first = ("", "\\") if empty else ("\\",)
    if surrogates:
        return [v if v is None else escape_text(v, empty=empty) for v in values]
    stored = [v if v is None or v[:1] not in first else escape_text(v, empty=empty) for v in values]
    return None if stored == values else stored


def unescape_values(values: list[Any]) -> tuple[list[Any], int | None]:
    """``values`` decoded (``values`` itself when none changes), and the first invalid position."""
    if not _may_start_with_backslash(list(filter(None, values))):
        return values, None
    out = list(values)
    for i, v in enumerate(out):
        if v is not None and v.startswith("\\"):
            try:
                out[i] = unescape_text(v)
            except (ValueError, UnicodeError):
                return values, i
    return out, None


def _cells(col: pd.Series) -> tuple[bool, list[Any]]:
    """Whether ``col`` is categorical, and the strings to escape: its categories, or its values."""
    import pandas as pd

    if isinstance(col.dtype, pd.CategoricalDtype):
        return True, list(col.cat.categories)
    values = col.to_numpy(dtype=object, na_value=None)  # type: ignore[call-overload]  # pandas-stubs lacks na_value=None
    return False, values.tolist()


def escape_columns(
    frame: pd.DataFrame, names: Sequence[str], *, csv: bool
) -> tuple[pd.DataFrame, list[str]]:
    """``frame`` with the text columns ``names`` in stored form, and the names escaped.

    CSV (``csv=True``) escapes every text column (empty strings need it);
    Parquet only the columns holding a lone surrogate, so its files stay plain.
    """
    import pandas as pd

    out = frame.copy(deep=False)
    escaped: list[str] = []
    for name in names:
        col = frame[name]
        categorical, values = _cells(col)
        if not csv and not has_surrogates(list(filter(None, values))):
            continue
        escaped.append(name)
        stored = escape_values(values, empty=csv)
        if stored is None:
            continue
        if categorical:
            out[name] = col.cat.rename_categories(pd.Index(stored, dtype=object))
        else:
            out[name] = pd.Series(stored, index=col.index, dtype=object)
    return out, escaped


def unescape_columns(frame: pd.DataFrame, names: Sequence[str], source: str) -> pd.DataFrame:
    """Decode the stored forms in columns ``names`` in place; errors name the column and row."""
    import numpy as np
    import pandas as pd

    from .errors import LogFileError

    for name in names:
        col = frame[name]
        categorical, values = _cells(col)
        decoded, bad = unescape_values(values)
        if bad is not None:
            row = bad
            if categorical:
                row = int(np.flatnonzero(np.asarray(col.cat.codes) == bad)[0])
            raise LogFileError(
                f"{source}: column {name!r}, row {row}: {values[bad]!r} is not a valid "
                "escaped text value (a backslash starts \\\\ or \\e)"
            )
        if decoded is values:
            continue
        if categorical and len(set(decoded)) < len(decoded):
            raise LogFileError(f"{source}: column {name!r} holds two spellings of one value")
        if categorical:
            frame[name] = col.cat.rename_categories(pd.Index(decoded, dtype=object))
        else:
            frame[name] = pd.Series(decoded, index=col.index, dtype=object)
    return frame
