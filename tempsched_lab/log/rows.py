"""The rows of a log's open chunk, stored flat: one list of fields per row kind.

The recorder writes a row as two appends, with the scheduler's lock held::

    rows.fields[code] += (t, ...)   # its fields, after the earlier rows of its kind
    rows.kinds.append(code)         # the row's kind, in log order (one byte)

so the open chunk holds no object per row: a row is its fields, each an atom (a number,
a string, ``None``) that the garbage collector never tracks. A row kept as a tuple was
one more allocation, and one more object that every collection of the young generation
walked field by field until it untracked it; the compactor then had to take the tuples
apart again (``reduce(iadd, ...)``) and free them. Callgrind, the virtual-time
simulation of ``benchmarks/instructions.py`` (n = 5,000, 4 rows a task): see
``docs/benchmarks.md`` ("The open chunk's format", issue 35) for the figures.

A row's ``k``-th field of kind ``code`` is at ``fields[code][i * width + k]``, ``i``
being how many rows of that kind came before it (``kinds.count(code, 0, seq)``, a
C-level count) and ``width`` its kind's number of fields (:data:`WIDTH`). The lists
only grow until the chunk is sealed, then never change: a reader that saw ``n`` rows
under the lock may read them later without it.

>>> rows = FlatRows.of([(4, 1.0, 2.0, "main", 7, 1.0, "job", 0.5)])  # a start row
>>> len(rows), rows.fields[4][:4], rows.tuples() == [(4, 1.0, 2.0, "main", 7, 1.0, "job", 0.5)]
(1, [1.0, 2.0, 'main', 7], True)
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat
from typing import Any

from .schema import COMMON, KINDS, LAYOUTS

__all__ = ["WIDTH", "FlatRows"]

Row = tuple[Any, ...]

#: Fields of a row of each kind, its code not counted (the common fields included).
WIDTH: tuple[int, ...] = tuple(len(COMMON + LAYOUTS[kind]) for kind in KINDS)


class FlatRows:
    """Rows in log order, each kind's fields in one flat list (see the module's docstring)."""

    __slots__ = ("fields", "kinds")

    def __init__(self) -> None:
        #: each row's kind code, in log order
        self.kinds = bytearray()
        #: per kind code, the fields of its rows one after another (the code left out)
        self.fields: list[list[Any]] = [[] for _ in KINDS]

    @classmethod
    def of(cls, rows: Iterable[Row]) -> FlatRows:
        """Rows given as tuples ``(code, *fields)``, stored flat."""
        out = cls()
        for row in rows:
            out.add(row)
        return out

    def __len__(self) -> int:
        return len(self.kinds)

    def add(self, row: Row) -> None:
        """Store one row given as a tuple ``(code, *fields)``."""
        code = row[0]
        if type(code) is not int or not 0 <= code < len(WIDTH):
            raise ValueError(f"row={row!r}: its first field is not a row kind's code")
        if len(row) != 1 + WIDTH[code]:
            raise ValueError(
                f"row={row!r}: a {KINDS[code]} row has {1 + WIDTH[code]} fields, not {len(row)}"
            )
        self.fields[code] += row[1:]
        self.kinds.append(code)

    def last(self) -> Row:
        """The newest row as a tuple."""
        code = self.kinds[-1]
        return (code, *self.fields[code][-WIDTH[code] :])

    def slice(self, lo: int, hi: int) -> FlatRows:
        """A copy of rows ``lo:hi`` (positions in this chunk)."""
        hi = max(lo, min(hi, len(self.kinds)))
        out = FlatRows()
        kinds = self.kinds
        out.kinds = kinds[lo:hi]
        for code, values in enumerate(self.fields):
            if values:
                width = WIDTH[code]
                start = kinds.count(code, 0, lo) * width
                out.fields[code] = values[start : start + out.kinds.count(code) * width]
        return out

    def tuples(self, lo: int = 0, hi: int | None = None) -> list[Row]:
        """Rows ``lo:hi`` as tuples ``(code, *fields)`` (for readers: a C-level pass per
        kind, then one step a row to put them in log order)."""
        part = self.slice(lo, len(self.kinds) if hi is None else hi)
        nexts: list[Any] = [None] * len(KINDS)
        for code, values in enumerate(part.fields):
            if values:
                width = WIDTH[code]
                columns = [values[j::width] for j in range(width)]
                nexts[code] = zip(repeat(code), *columns, strict=False).__next__
        return [nexts[code]() for code in part.kinds]
