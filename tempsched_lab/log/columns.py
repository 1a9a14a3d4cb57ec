"""A sealed chunk of log rows stored column by column, in plain Python: no numpy, no pandas.

The log's compactor thread turns each full chunk of rows (its flat lists,
:mod:`~tempsched_lab.log.rows`) into a :class:`Compact`: per row kind, one column per
field of the kind's layout (:data:`~tempsched_lab.log.schema.LAYOUTS`, the common fields
included), each in the smallest plain form that gives the values back:

* a value every row of the kind shares (a one-shot task's ``period``, ``None``; the
  thread's name; a label used by every row): that value once (:class:`Same`);
* numbers: an ``array('d')`` (``None`` stored as NaN) or ``array('q')``/``array('b')``,
  8 or 1 bytes a row, as :data:`~tempsched_lab.log.schema.STORES` says;
* texts (``args``, ``error``, ...): one string joined, and where each ends
  (:class:`Texts`): a row's ``"(41,)"`` costs its 5 characters and a 4-byte end instead
  of a 54-byte string object and its 8-byte pointer;
* anything else (a category's strings, an odd value): a list.

A schedule row of 19 fields then takes about 82 bytes (about 150 in its open chunk's
flat lists, plus the objects only it holds; see docs/benchmarks.md, issue 35). Nothing
here imports numpy or pandas: a script that never asks for a frame never loads them
(they are ~25 MB resident, and their import, ~0.5 s of CPU, fell on the compactor thread
while the scheduler ran). Numpy comes in when a frame is asked for
(:mod:`tempsched_lab.log.frame`).

>>> c = Compact([(0, 1.0, 2.0, "main", 7, 2, -1, 5.0, 5.0, "job", "(1,)", None, 0,
...               None, 5.0, 1, 1, True, None)], first_seq=10)
>>> c.n, c.rows()[0][:5], c.rows()[0][10]
(1, (0, 1.0, 2.0, 'main', 7), '(1,)')
"""

from __future__ import annotations

import contextlib
import math
import struct
from array import array
from collections.abc import Sequence
from itertools import accumulate, compress, repeat
from struct import pack, unpack, unpack_from
from typing import Any, Union

from .rows import FlatRows
from .schema import COLUMNS, COMMON, KINDS, LAYOUTS, STORES, Store

__all__ = ["Compact", "Same", "Texts", "float_or_nan", "plain", "stored_in_range"]

Row = tuple[Any, ...]


class Same:
    """One value that every row of a kind holds in a field."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class Texts:
    """Strings stored as one joined string and where each ends."""

    __slots__ = ("ends", "joined")

    def __init__(self, joined: str, ends: array[int]) -> None:
        self.joined = joined
        self.ends = ends

    def values(self) -> list[str]:
        """The strings back, in order."""
        joined, ends = self.joined, self.ends
        return [joined[a:b] for a, b in zip((0, *ends), ends, strict=False)]


#: One stored field of one kind: numbers in an array, one shared value, texts, or a list.
Field = Union["array[Any]", Same, Texts, list[Any]]

_TYPECODE = {"float64": "d", "int64": "q", "int8": "b"}
#: each field's store (``dispatched``, stored for ``queue_delay`` but no column: a float)
_STORE_OF = {c.name: STORES[c.store] for c in COLUMNS} | {"dispatched": STORES["float"]}
#: ``bytes.translate`` tables: row kind codes -> 1 where the code is this kind's, else 0
#: (a C-level pass over a chunk's codes, then ``compress`` picks that kind's rows)
_MASKS = [bytes(int(i == code) for i in range(256)) for code in range(len(KINDS))]
_TEXT_SPAN = 2**32  # joined texts up to this many characters end in array('I') (4 B a row)


class Compact:
    """A chunk of rows stored per kind and field (see the module's docstring).

    ``kinds`` holds each row's kind code (one byte a row); ``parts[code]`` holds the rows
    of that kind (``"idx"``: their positions, an ``array('i')``, absent when every row is
    of this kind) and one :data:`Field` per field of the kind's layout.
    """

    __slots__ = ("first_seq", "kinds", "n", "parts")

    def __init__(self, rows: FlatRows | Sequence[Row], first_seq: int) -> None:
        # C-level passes only: the open chunk already holds each kind's fields in one flat
        # list (:mod:`~tempsched_lab.log.rows`), whose step slices are its columns; in a
        # chunk of several kinds, each kind's positions are picked with ``compress`` from
        # one shared tuple of ints (none made per chunk); numbers are packed with
        # ``struct`` (array's own item setter parses each item: ~150 instructions per
        # value, struct ~25). No object per row is made or freed.
        if not isinstance(rows, FlatRows):
            rows = FlatRows.of(rows)
        n = len(rows)
        self.first_seq = first_seq
        self.n = n
        kinds = bytes(rows.kinds)
        self.kinds = kinds
        self.parts: dict[int, dict[str, Any]] = {}
        present = [code for code, values in enumerate(rows.fields) if values]
        for code in present:
            fields: dict[str, Any] = {}
            if len(present) > 1:
                mask = kinds.translate(_MASKS[code])
                picked = tuple(compress(_positions(n), mask))
                fields["idx"] = array("i", pack(f"{len(picked)}i", *picked))
            names = COMMON + LAYOUTS[KINDS[code]]
            width = len(names)
            flat = rows.fields[code]
            for j, name in enumerate(names):
                fields[name] = _store(flat[j::width], _STORE_OF[name])
            self.parts[code] = fields

    def positions(self, code: int) -> range | array[int]:
        """The positions (0-based, in the chunk) of the rows of kind ``code``."""
        idx = self.parts[code].get("idx")
        return range(self.n) if idx is None else idx

    def values(self, code: int, name: str) -> list[Any]:
        """Field ``name`` of the rows of kind ``code``, as the Python values rows hold."""
        return plain(self.parts[code][name], len(self.positions(code)))

    def rows(self) -> list[Row]:
        """The stored tuples back (for ``row_dict`` readers of old rows); a float that
        was missing (``None``) or NaN comes back as ``None``."""
        out: list[Row | None] = [None] * self.n
        for code in self.parts:
            names = COMMON + LAYOUTS[KINDS[code]]
            lists = [self.values(code, name) for name in names]
            for j, i in enumerate(self.positions(code)):
                out[i] = (code, *(values[j] for values in lists))
        return out  # type: ignore[return-value]


def _store(values: list[Any], spec: Store) -> Field:
    """``values`` (one field of one kind's rows) in the smallest form that gives them back."""
    n = len(values)
    first = values[0]
    code = _TYPECODE.get(spec.numpy)
    if code is not None:
        # One integer shared by every row (a schedule row's case, dup_of, origin, ready_size,
        # woke: 5 of its 19 fields) is found by ``count`` (a pointer comparison each) and
        # packed once, not n times (~450 instructions a schedule row). Integer fields hold
        # the scheduler's own ints and bools, so ``==`` here is the packed bytes' equality.
        if code != "d" and values[-1] == first and values.count(first) == n:
            with contextlib.suppress(struct.error):  # (out of range: the general way below)
                return Same(unpack(code, pack(code, first))[0])
        try:
            data = pack(f"{n}{code}", *values)  # the common case: every value fits
        except struct.error:
            led = None
            if first is None and code == "d" and values[-1] is not None:
                led = _led_by_nones(values)
            if led is not None:
                data = led
            elif first is None and values.count(None) == n:  # (a one-shot task's period)
                return Same(None)
            else:
                slow = _packed_slowly(values, spec, code)
                if slow is None:
                    return values  # not numbers: numpy reads them when a frame is made
                data = slow
        size = len(data) // n  # one value: stored once (the first and last compared first,
        # which spares building n copies of a distinct column's first value to compare)
        if code != "d" and data[-size:] == data[:size] and data == data[:size] * n:
            return Same(unpack_from(code, data)[0])
        return array(code, data)
    if values.count(first) == n:  # (identical objects: a pointer comparison each)
        return Same(first)
    if spec.name == "text":
        try:
            joined = "".join(values)
        except TypeError:  # some are not strings (None: a row without the text)
            return values
        ends = tuple(accumulate(map(len, values)))
        wide = "I" if len(joined) < _TEXT_SPAN else "q"
        return Texts(joined, array(wide, pack(f"{n}{wide}", *ends)))
    return values


_INDEXES: tuple[int, ...] = ()


def _positions(n: int) -> tuple[int, ...]:
    """At least ``0, 1, ..., n - 1`` as one shared tuple (its ints made once, not per chunk)."""
    global _INDEXES
    if len(_INDEXES) < n:
        _INDEXES = tuple(range(max(n, 2 * len(_INDEXES))))
    return _INDEXES


def _led_by_nones(values: list[Any]) -> bytes | None:
    """A float column whose missing values (``None``) all come first, packed with the Nones
    as NaN; ``None`` if it is not one (its first value must be ``None``, its last not).

    The common case of a missing float: a log's first rows have no ``head_before`` (the
    queue was empty). The general way (``values.count(None)``, then a comprehension over
    every value) costs ~330 instructions a row, which the first chunk of every log paid:
    ``schedule()`` with the log on, n = 5,000, 29,148 -> 28,887 instructions a call
    (callgrind, ``benchmarks/instructions.py``; see docs/benchmarks.md, issue 40).
    """
    n = len(values)
    i = 1
    while values[i] is None:  # (the last value is not None: the loop ends there at most)
        i += 1
    try:
        return pack(f"{i}d", *repeat(math.nan, i)) + pack(f"{n - i}d", *values[i:])
    except struct.error:  # a None (or no number) further on
        return None


def _packed_slowly(values: list[Any], spec: Store, code: str) -> bytes | None:
    """Numbers that ``struct`` refused, packed as the frame will read them (``None`` if they
    are not numbers): a missing float (``None``) or one too large is NaN; an integer too
    large for its column (``cancel(2**63)`` records the ID asked for) is missing."""
    try:
        if code == "d":
            with contextlib.suppress(struct.error):  # missing floats (``None``) as NaN
                return pack(f"{len(values)}d", *[math.nan if v is None else v for v in values])
            return pack(f"{len(values)}d", *map(float_or_nan, values))
        return pack(f"{len(values)}{code}", *stored_in_range(values, spec))
    except (TypeError, ValueError, struct.error):
        return None


def plain(field: Field, n: int) -> list[Any]:
    """A stored field's values as the Python objects rows hold (NaN floats back to ``None``)."""
    if isinstance(field, Same):
        return [field.value] * n
    if isinstance(field, Texts):
        return field.values()
    if isinstance(field, array):
        items: list[Any] = field.tolist()
        if field.typecode == "d":
            return [None if v != v else v for v in items]
        return items
    return field


def stored_in_range(values: Sequence[Any], spec: Store) -> list[Any]:
    """An integer field whose values do not all fit its store: those that do not are missing.

    A row stores whatever integer it was given (``cancel()`` records the ID asked for, and
    any int is a valid question: its answer is "not found"); the frame's integer columns are
    int64. Before this, one such row made every ``to_frame()`` raise ``OverflowError``.

    >>> stored_in_range([3, 2**63, -2**63 - 1, -5], STORES["int"])
    [3, -1, -1, -5]
    """
    bits = 8 * {"int64": 8, "int8": 1}[spec.numpy]
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    missing = spec.missing if isinstance(spec.missing, int) else 0
    return [v if low <= v <= high else missing for v in values]


def float_or_nan(value: Any) -> float:
    """``value`` as a float, or NaN if it is missing or too large for one.

    >>> float_or_nan(None), float_or_nan(10**400), float_or_nan(2)
    (nan, nan, 2.0)
    """
    try:
        return float(value) if value is not None else math.nan
    except OverflowError:
        return math.nan
