"""The log's compacted chunks (issue 35): plain columns, no numpy, and memory per pending task.

A full chunk of row tuples is stored per kind and field (:mod:`tempsched_lab.log.columns`):
its rows must come back as they were written, without numpy or pandas imported, and a
scheduler with the log on must hold 100,000 pending tasks in less memory than the reference
package (temporal-scheduler: 624 B per task measured the same way, docs/benchmarks.md).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempsched_lab.log.columns import Compact
from tempsched_lab.log.schema import COLUMNS, COMMON, KINDS, LAYOUTS, STORES

_STORE = {c.name: c.store for c in COLUMNS} | {"dispatched": "float"}
_INT64 = 2**63


def _value(store: str) -> st.SearchStrategy[Any]:
    """What a recorder may put in a field of this store (odd values included)."""
    if store == "float":
        return st.one_of(st.none(), st.floats(allow_nan=True), st.integers(-5, 5))
    if store == "int":
        return st.one_of(st.integers(-1, 10**6), st.sampled_from([_INT64, -_INT64 - 1]))
    if store == "case":
        return st.integers(0, 8)
    if store == "origin":
        return st.integers(-1, 2)
    if store == "bool":
        return st.sampled_from([True, False, -1])
    if store == "text":
        return st.one_of(st.none(), st.text(max_size=12))
    return st.one_of(st.none(), st.sampled_from(["MainThread", "job", "head", "é"]))


def _row(code: int) -> st.SearchStrategy[tuple[Any, ...]]:
    names = COMMON + LAYOUTS[KINDS[code]]
    return st.tuples(st.just(code), *(_value(_STORE[name]) for name in names))


def _expected(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """The row as a compacted chunk gives it back: floats None when missing or NaN, an
    integer too large for int64 missing (-1), a flag as an int."""
    out: list[Any] = [row[0]]
    for name, value in zip(COMMON + LAYOUTS[KINDS[row[0]]], row[1:], strict=True):
        store = _STORE[name]
        if store == "float":
            value = None if value is None or value != value else float(value)
        elif store == "int":
            value = value if -_INT64 <= value < _INT64 else STORES["int"].missing
        elif store in ("case", "origin", "bool"):
            value = int(value)
        out.append(value)
    return tuple(out)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, len(KINDS) - 1).flatmap(_row), min_size=1, max_size=40))
def test_a_compacted_chunk_gives_its_rows_back(rows):
    compact = Compact(rows, first_seq=7)
    back = compact.rows()
    assert len(back) == compact.n == len(rows)
    for got, row in zip(back, rows, strict=True):
        want = _expected(row)
        assert got == want or all(
            (a is None and b is None) or a == b or (a != a and b != b)
            for a, b in zip(got, want, strict=True)
        ), (got, want)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, len(KINDS) - 1).flatmap(_row), min_size=1, max_size=40))
def test_a_compacted_chunk_frames_as_its_tuples_do(rows):
    pytest.importorskip("pandas")
    from tempsched_lab.log.frame import compact_columns

    cols = compact_columns(Compact(rows, first_seq=3))
    assert cols["seq"].tolist() == list(range(3, 3 + len(rows)))
    assert cols["kind"].tolist() == [row[0] for row in rows]
    for i, row in enumerate(rows):
        for name, _value in zip(COMMON + LAYOUTS[KINDS[row[0]]], row[1:], strict=True):
            if name == "dispatched":
                continue
            got = cols[name][i]
            want = _expected(row)[(COMMON + LAYOUTS[KINDS[row[0]]]).index(name) + 1]
            if _STORE[name] == "float":
                assert (want is None and math.isnan(got)) or got == want, (name, got, want)
            else:
                assert got == want, (name, got, want)


def test_rows_of_one_kind_sharing_a_value_store_it_once():
    rows = [(0, float(i), 1e9 + i, "MainThread", i, 2, -1, 5.0 + i, 5.0 + i, "job", f"({i},)",
             None, 0, None, 5.0, 1, i + 1, True, None) for i in range(1000)]  # fmt: skip
    part = Compact(rows, 0).parts[0]
    same = {name for name, field in part.items() if type(field).__name__ == "Same"}
    assert same == {"thread", "case", "dup_of", "label", "period", "origin", "head_before",
                    "ready_size", "woke", "trigger"}  # fmt: skip
    assert type(part["args"]).__name__ == "Texts"
    assert Compact(rows, 0).rows() == [(*r[:17], 1, *r[18:]) for r in rows]


def _run(code: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_a_chunk_of_several_kinds_stores_each_kinds_shared_integers_once():
    # The shortcut for a shared integer (found by count, packed once) and the positions of
    # a kind's rows (from a shared tuple of ints): a guard for the row-cost work of issue 35,
    # which passes before and after it (the same columns, the same rows back).
    start = [(4, float(i), 1e9, "MainThread", 2**63, 5.0, "job", 4.0) for i in range(0, 9, 3)]
    dispatch = [(3, float(i), 1e9, "MainThread", 7, 5.0, 5.0, "job", None, 1, 9)
                for i in range(1, 9, 3)]  # fmt: skip
    rows: list[tuple[Any, ...]] = [r for trio in zip(start, dispatch, strict=True) for r in trio]
    compact = Compact(rows, 0)
    assert list(compact.positions(4)) == [0, 2, 4] and list(compact.positions(3)) == [1, 3, 5]
    started, dispatched = compact.parts[4], compact.parts[3]
    assert type(started["task_id"]).__name__ == "Same"  # every one 2**63: missing, stored once
    assert started["task_id"].value == STORES["int"].missing
    shared = ("task_id", "ready_size", "queue_size")
    assert all(type(dispatched[name]).__name__ == "Same" for name in shared)
    assert compact.rows() == [_expected(row) for row in rows]


def test_compacting_imports_neither_numpy_nor_pandas():
    # A long log compacts its full chunks on a background thread; importing numpy and
    # pandas there cost a running program ~25 MB and ~0.5 s of CPU it never asked for.
    found = _run(
        "import json, sys\n"
        "from tempsched_lab import Scheduler, VirtualClock\n"
        "from tempsched_lab.log.compactor import wait_compacted\n"
        "s = Scheduler(VirtualClock(), executor='inline')\n"
        "s.schedule_many([dict(action=print, at=1.0 + i, args=(i,)) for i in range(20_000)])\n"
        "assert wait_compacted(60)\n"
        "chunks = s.log._chunks\n"
        "out = dict(compacted=sum(c.compact is not None for c in chunks), chunks=len(chunks),\n"
        "           numpy='numpy' in sys.modules, pandas='pandas' in sys.modules)\n"
        "out['rows'] = len(s.log.rows(0, 20_000))\n"
        "out['still_no_numpy'] = 'numpy' not in sys.modules\n"
        "out['frame'] = len(s.log.to_frame())\n"
        "out['now'] = 'pandas' in sys.modules\n"
        "print(json.dumps(out))\n"
    )
    assert found["chunks"] >= 4 and found["compacted"] == found["chunks"], found
    assert not found["numpy"] and not found["pandas"], found
    assert found["rows"] == 20_000 and found["still_no_numpy"]
    assert found["frame"] == 20_000 and found["now"]


#: RSS per pending task, log on, measured as benchmarks/bench_memory.py does: 478-489 B
#: (3 fresh processes, Python 3.11, Linux x86-64); the reference package 624 B the same way.
#: The margin covers a compactor thread starved of the GIL: at most 4 chunks wait for it
#: (log.COMPACT_BACKLOG) before the recording thread compacts them, ~55 B a task more.
RSS_BOUND = 600


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_memory_per_pending_task_with_the_log_on_stays_below_the_reference():
    found = _run(
        "import gc, json, os\n"
        "from tempsched_lab import Scheduler\n"
        "page = os.sysconf('SC_PAGE_SIZE')\n"
        "def rss():\n"
        "    with open('/proc/self/statm') as f:\n"
        "        return int(f.read().split()[1]) * page\n"
        "def noop(*args):\n"
        "    return None\n"
        "s = Scheduler()\n"
        "now = s.clock.now() + 1e6\n"
        "gc.collect()\n"
        "before = rss()\n"
        "for i in range(100_000):\n"
        "    s.schedule(noop, at=now + i, args=(i,))\n"
        "gc.collect()\n"
        "per = (rss() - before) / 100_000\n"
        "s.shutdown(wait=False)\n"
        "print(json.dumps({'per_task': per, 'rows': s.log.next_seq}))\n"
    )
    assert found["rows"] >= 100_000
    assert found["per_task"] < RSS_BOUND, found


def test_flat_rows_give_back_the_rows_in_log_order_and_refuse_malformed_ones():
    from tempsched_lab.log.rows import FlatRows

    start = (4, 1.0, 2.0, "main", 7, 1.0, "job", 0.5)
    wake = (2, 3.0, 4.0, "main", "timeout", 0.5, None, 0, 3)
    rows = [start, wake, (4, 5.0, 6.0, "w", 8, 2.0, "job", 4.5), wake]
    flat = FlatRows.of(rows)
    assert len(flat) == 4 and flat.tuples() == rows and flat.last() == wake
    assert flat.tuples(1, 3) == rows[1:3] and flat.slice(1, 3).tuples() == rows[1:3]
    assert Compact(flat, 0).rows() == Compact(rows, 0).rows() == rows
    for bad in ((4, 1.0), (99, 1.0), (-1, *start[1:]), ("4", *start[1:])):
        with pytest.raises(ValueError, match="row="):
            flat.add(bad)
    assert flat.tuples() == rows  # nothing half-stored
