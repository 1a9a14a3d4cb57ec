"""Event-log files: atomic writes, exact round trips, cuts and damage named, spill segments."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempsched_lab import PastTimeError, Scheduler, VirtualClock, audit, replay
from tempsched_lab.log.files import (
    LogFileError,
    SegmentWriter,
    TruncatedLogError,
    UncheckedLogWarning,
    concat_frames,
    normalize_frame,
    read_log,
    write_log,
)
from tempsched_lab.log.files.csvfile import FILE_COLUMNS, MAGIC, metadata_path
from tempsched_lab.log.files.meta import build_metadata, dumps
from tempsched_lab.log.files.normalize import STORED, TEXT_COLUMNS, stored_frame
from tempsched_lab.log.files.text import escape_columns, escape_text, unescape_text
from tempsched_lab.log.files.timecols import CLOCK_TIMES, DURATIONS, WALL
from tempsched_lab.log.schema import COLUMNS

NASTY = [
    "a\rb",  # a bare carriage return (F11: unreadable before)
    "line\nbreak",
    "cr\r\nlf",
    'quote "q", comma',
    "# hash",
    "  spaces  ",
    "None",
    "NA",
    "nan",
    "",  # empty, not missing (F11: came back NaN)
    "\ud800 lone surrogate",  # (F11: UnicodeEncodeError and a partial file)
    "\\e starts like an escape",
    "\\",
    "naïve – ünïcödé ✓ 日本",
]


def noop(*args):
    return None


def fail(message):
    raise ValueError(message)


def nasty_log(labels=NASTY, start=1_700_000_000.0, error="boom \udcff"):
    """A log of every row kind, with ``labels`` as task labels and argument text."""
    clock = VirtualClock(start=start)
    s = Scheduler(clock)
    for i, label in enumerate(labels):
        s.schedule(noop, delay=1 + i % 3, args=(label,), label=label)
    s.schedule(fail, delay=1, args=(error,), label="fails")
    s.schedule(threading.Event(), delay=2)
    tid = s.schedule(noop, delay=0.5, period=0.5, label="poller")
    with pytest.raises(PastTimeError):
        s.schedule(noop, delay=-1, label="late")
    clock.advance(3)
    s.cancel(tid)
    s.cancel(999)
    s.schedule(noop, delay=5, label="dropped at shutdown")
    s.shutdown()
    return s.log.to_frame()


@pytest.fixture(scope="module")
def frame():
    return nasty_log()


def assert_same(back, frame):
    pd.testing.assert_frame_equal(back, frame, check_exact=True)
    assert back.attrs == frame.attrs


# -- exact round trips ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["log.csv", "log.parquet", "log.pq"])
def test_every_nasty_text_round_trips_exactly(tmp_path, frame, name):
    path = write_log(frame, tmp_path / name)
    back = read_log(path)
    assert_same(back, frame)
    assert set(NASTY) <= set(back["label"].dropna())
    assert back.loc[back["label"] == "", "kind"].tolist()  # empty labels stayed "" ...
    assert back["label"].isna().sum() == frame["label"].isna().sum()  # ... and missing ones NaN
    assert back.attrs["time_origin"] == 1_700_000_000.0
    assert audit(back).ok
    assert replay(back) == replay(frame)
    files = [name, f"{name}.meta.json"] if name.endswith(".csv") else [name]
    assert sorted(os.listdir(tmp_path)) == files  # no temporary file left behind


def write_format2(frame: pd.DataFrame, path: Path) -> Path:
    """A CSV log as tempsched_lab wrote it before format 3: metadata line, rows, end line."""
    data = stored_frame(frame)
    data.attrs = dict(frame.attrs)
    stored, escaped = escape_columns(data, TEXT_COLUMNS, csv=True)
    meta = build_metadata(data, escaped=escaped)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(MAGIC.decode("ascii") + dumps(meta) + "\r\n")
        stored.to_csv(fh, index=False, lineterminator="\r\n")
        fh.write(f"#end of event log: {len(frame)} rows\r\n")
    return path


def sidecar(path: Path) -> dict:
    return json.loads(metadata_path(path).read_text())


def test_csv_file_is_plain_csv_with_its_metadata_in_a_file_beside_it(tmp_path, frame):
    path = write_log(frame, tmp_path / "log.csv")
    data = path.read_bytes()
    lines = data.split(b"\r\n")
    assert lines[0].decode() == ",".join(FILE_COLUMNS) == ",".join([*STORED, "time", "wall_time"])
    assert lines[-1] == b"" and not any(line.startswith(b"#") for line in lines)
    assert b'"a\rb"' in data  # a bare \r is quoted
    data.decode("utf-8")  # valid UTF-8: the lone surrogate is escaped
    meta = sidecar(path)
    assert (meta["format"], meta["rows"], meta["bytes"]) == (3, len(frame), len(data))
    assert meta["time_origin"] == 1_700_000_000.0
    first_wall = frame["wall"].iloc[0]  # a virtual clock: wall times count from the first row
    assert meta["relative_to"] == dict.fromkeys(CLOCK_TIMES, 1_700_000_000.0) | {WALL: first_wall}
    assert lines[1].startswith(b"0,0.0,0.0,schedule,")
    assert metadata_path(path).read_text().count("\n") > 10  # indented: readable by people


def test_every_float_column_is_a_clock_time_the_wall_time_or_a_duration():
    floats = {c.name for c in COLUMNS if c.store == "float"}
    assert floats == {*CLOCK_TIMES, WALL, *DURATIONS}
    assert not {*CLOCK_TIMES, WALL} & set(DURATIONS)


def real_clock_log() -> pd.DataFrame:
    """A short real-clock log: epoch-sized times, as a user's own run writes them."""
    s = Scheduler()
    done = threading.Event()
    s.schedule(noop, delay=0.01, args=("a",), label="first")
    s.schedule(fail, delay=0.02, args=("boom",), label="fails")
    s.schedule(done, delay=0.03)
    assert done.wait(30)
    s.cancel(99)
    s.shutdown()
    return s.log.to_frame()


@pytest.mark.parametrize("which", ["real clock", "virtual clock"])
def test_plain_pandas_reads_the_rows_and_columns_read_log_gives(tmp_path, which):
    """``pd.read_csv(path)`` alone: same rows and columns; where values differ, it is documented.

    * times (``t``, ``due``, ... and ``wall``) are seconds since the start: adding the
      origins in the metadata file (``relative_to``) gives read_log's values exactly;
    * categoricals and text read as strings, nullable integers with a missing value as
      floats, ``woke`` as objects, ``time``/``wall_time`` as ISO 8601 text.
    """
    frame = real_clock_log() if which == "real clock" else nasty_log(["x", "y z"], error="boom")
    path = write_log(frame, tmp_path / "log.csv")
    back = read_log(path)
    plain = pd.read_csv(path)
    assert list(plain.columns) == list(back.columns) and len(plain) == len(back)
    origins = sidecar(path)["relative_to"]
    if which == "real clock":
        assert set(origins) == {*CLOCK_TIMES, WALL}
        assert origins["t"] == frame.attrs["time_origin"] == origins[WALL]
        assert plain["t"].between(0, 60).all() and plain[WALL].between(0, 60).all()
    for c in COLUMNS:
        mine, theirs = back[c.name], plain[c.name]
        if c.store in ("seq", "float"):
            assert theirs.dtype == "float64" or c.store == "seq"
            restored = theirs.to_numpy(dtype="float64") + origins.get(c.name, 0.0)
            assert restored.tolist() == pytest.approx(mine.tolist(), rel=0, abs=0, nan_ok=True)
        elif c.store in ("int", "case"):
            expected = mine.astype("Float64").to_numpy(dtype="float64", na_value=float("nan"))
            assert theirs.to_numpy(dtype="float64").tolist() == pytest.approx(
                expected.tolist(), nan_ok=True
            )
        else:  # text, categoricals, booleans: equal values, missing as NaN
            expected = mine.astype(object).where(mine.notna(), None).tolist()
            got = theirs.astype(object).where(theirs.notna(), None).tolist()
            assert got == expected, c.name
    for name, source in (("time", "t"), ("wall_time", "wall")):
        pd.testing.assert_series_equal(pd.to_datetime(plain[name]), back[name], check_names=False)
        assert back[name].equals(pd.to_datetime(back[source], unit="s", utc=True))


TEXT = st.one_of(
    st.none(),
    st.text(st.characters(codec=None, exclude_categories=[]), max_size=12),
    st.sampled_from(NASTY),
)


@given(data=st.data(), fmt=st.sampled_from(["csv", "parquet"]))
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_random_text_round_trips_exactly(tmp_path, frame, data, fmt):
    raw = frame.iloc[:20].copy()
    for name in TEXT_COLUMNS:
        values = data.draw(st.lists(TEXT, min_size=len(raw), max_size=len(raw)))
        raw[name] = pd.Series(values, dtype=object)
    expected = normalize_frame(raw)
    expected.attrs = {"time_origin": data.draw(st.floats(allow_nan=False)), "note": "x\ud800"}
    back = read_log(write_log(expected, tmp_path / f"log.{fmt}", fsync=False))
    assert_same(back, expected)


INTS = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))


@given(data=st.data(), fmt=st.sampled_from(["csv", "parquet"]))
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_random_numbers_round_trip_exactly(tmp_path, frame, data, fmt):
    raw = frame.iloc[:12].copy()
    n = len(raw)
    for c in ("t", "wall", "due", "lateness", "wait", "head_before", "period"):
        raw[c] = data.draw(st.lists(st.floats(allow_subnormal=True), min_size=n, max_size=n))
    for c in ("task_id", "dup_of", "ready_size", "missed"):
        raw[c] = pd.array(data.draw(st.lists(INTS, min_size=n, max_size=n)), dtype="Int64")
    raw["woke"] = pd.array(
        data.draw(st.lists(st.one_of(st.none(), st.booleans()), min_size=n, max_size=n)),
        dtype="boolean",
    )
    raw["case"] = pd.array(
        data.draw(st.lists(st.one_of(st.none(), st.integers(1, 8)), min_size=n, max_size=n)),
        dtype="Int8",
    )
    expected = normalize_frame(raw)
    expected.attrs = dict(frame.attrs)
    back = read_log(write_log(expected, tmp_path / f"log.{fmt}", fsync=False))
    assert_same(back, expected)
    assert back["t"].map(repr).tolist() == expected["t"].map(repr).tolist()  # -0.0 stays -0.0


@given(text=st.text(st.characters(codec=None, exclude_categories=[])), empty=st.booleans())
def test_escape_is_exact_and_leaves_plain_text_alone(text, empty):
    stored = escape_text(text, empty=empty)
    assert unescape_text(stored) == text
    stored.encode("utf-8")  # always storable
    plain = text and not text.startswith("\\")
    if plain and not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        assert stored == text


def test_an_empty_log_round_trips(tmp_path):
    frame = Scheduler(VirtualClock(start=5.0)).log.to_frame()
    for name in ("log.csv", "log.parquet"):
        assert_same(read_log(write_log(frame, tmp_path / name)), frame)


# -- atomic writes ----------------------------------------------------------------------


def test_a_failed_write_leaves_no_partial_file_and_keeps_the_old_one(tmp_path, frame, monkeypatch):
    path = write_log(frame.iloc[:5], tmp_path / "log.csv")
    before, meta_before = path.read_bytes(), metadata_path(path).read_bytes()
    from tempsched_lab.log.files import csvfile

    def fail_after_the_rows(frame, **kwargs):
        (written,) = tmp_path.glob(".log.csv.*.tmp")  # the rows, under a temporary name
        assert written.stat().st_size > 1000
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(csvfile, "build_metadata", fail_after_the_rows)
    with pytest.raises(OSError, match=r"cannot write the event log '.*log\.csv': No space left"):
        write_log(frame, path)
    assert path.read_bytes() == before and metadata_path(path).read_bytes() == meta_before
    assert sorted(os.listdir(tmp_path)) == ["log.csv", "log.csv.meta.json"]


@pytest.mark.parametrize("name", ["log.csv", "log.parquet"])
def test_a_full_disk_leaves_no_file_and_names_the_path(tmp_path, frame, name):
    """A real write failure: the process may not write files larger than 4 kB (EFBIG)."""
    code = f"""
import resource, signal, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_logfiles import nasty_log
from tempsched_lab.log.files import write_log
frame = nasty_log()
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    write_log(frame, {str(tmp_path / name)!r})
except OSError as exc:
    print(type(exc).__name__, exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert re.search(rf"cannot write the event log '.*{name}': .*File too large", out.stdout), out
    assert os.listdir(tmp_path) == []


def test_a_missing_directory_is_named(tmp_path, frame):
    with pytest.raises(FileNotFoundError, match=r"cannot write the event log '.*nowhere/log\.csv'"):
        write_log(frame, tmp_path / "nowhere" / "log.csv")


def test_a_frame_no_log_can_hold_is_refused_before_any_file_is_touched(tmp_path, frame):
    bad = frame.astype({"kind": object})
    bad.loc[3, "kind"] = "bogus"
    with pytest.raises(LogFileError, match=r"frame: column 'kind', row 3 \(seq 3\): 'bogus'"):
        write_log(bad, tmp_path / "log.csv")
    with pytest.raises(LogFileError, match=r"columns \['due'\] are missing"):
        write_log(frame.drop(columns="due"), tmp_path / "log.csv")
    assert os.listdir(tmp_path) == []


def test_format_comes_from_fmt_or_the_suffix(tmp_path, frame):
    with pytest.raises(ValueError, match=r"path='.*log\.txt': cannot tell the format"):
        write_log(frame, tmp_path / "log.txt")
    with pytest.raises(ValueError, match=r"fmt='xlsx': expected 'csv' or 'parquet'"):
        write_log(frame, tmp_path / "log.csv", fmt="xlsx")
    with pytest.raises(TypeError, match="path=3"):
        write_log(frame, 3)
    for fmt in ("csv", "parquet"):  # any name, told by content on reading
        assert_same(read_log(write_log(frame, tmp_path / f"{fmt}.log", fmt=fmt)), frame)


def test_parquet_without_pyarrow_says_how_to_install_it(tmp_path, frame, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match=r"pip install 'tempsched-lab\[parquet\]'"):
        write_log(frame, tmp_path / "log.parquet")
    with pytest.raises(ImportError, match="need pyarrow"):
        SegmentWriter(tmp_path / "spill")
    assert os.listdir(tmp_path) == []


# -- truncation ---------------------------------------------------------------------------


def row_ends(data: bytes, rows: int, end_line: bool) -> list[int]:
    """Offset just past each row's line end, found from each next row's ``\\r\\n<seq>,``."""
    starts = [data.index(f"\r\n{seq},".encode()) + 2 for seq in range(rows)]
    last = data.rindex(b"\r\n#end of event log") + 2 if end_line else len(data)
    return [*starts[1:], last]


def cut_copy(path: Path, data: bytes, name: str = "cut.csv") -> Path:
    """``data`` as ``name`` beside ``path``, with a copy of ``path``'s metadata file if any."""
    cut_path = path.with_name(name)
    cut_path.write_bytes(data)
    if metadata_path(path).exists():
        metadata_path(cut_path).write_bytes(metadata_path(path).read_bytes())
    return cut_path


def check_csv_cuts(tmp_path, every_byte: bool, old: bool = False) -> int:
    """Cut a CSV log at many offsets; each cut must say exactly how many whole rows it holds.

    ``old``: a file of format 2 (metadata line, rows, end line), else of format 3.
    """
    frame = nasty_log(labels=["a\rb", 'multi\nline "quoted"\r\nlabel', "", "plain"])
    path = tmp_path / "log.csv"
    data = (write_format2(frame, path) if old else write_log(frame, path, fsync=False)).read_bytes()
    n = len(frame)
    columns_start = data.index(b"\r\n") + 2 if old else 0  # after format 2's metadata line
    columns_end = data.index(b"\r\n", columns_start) + 2
    ends = row_ends(data, n, end_line=old)
    if every_byte:
        cuts = range(len(data))
    else:  # around every line end, all through the quoted multi-line label, and a stride
        quoted = data.index(b'"multi')
        cuts = sorted(
            {c + d for c in [columns_start, columns_end, *ends] for d in (-2, -1, 0, 1)}
            | set(range(quoted, quoted + 40))
            | set(range(0, len(data), 41))
        )
    for cut in cuts:
        if not 0 <= cut < len(data):
            continue
        with pytest.raises(TruncatedLogError) as info:
            read_log(cut_copy(path, data[:cut]))
        message = str(info.value)
        if cut < columns_start:
            assert re.search("cut short (inside its first|at its start)", message), (cut, message)
            continue
        if old and cut == columns_start:
            assert "cut short inside its column names" in message, (cut, message)
            continue
        if cut == 0:
            assert "the file is empty (its metadata file says it holds" in message, message
            continue
        if cut < columns_end:
            assert "cut short inside its column names" in message, (cut, message)
            continue
        whole = sum(end <= cut for end in ends)
        if whole == n:
            assert f"holds all {n} rows but its end line is missing" in message, (cut, message)
        else:
            assert f"holds {whole} of {n} rows: the file was cut short" in message, (cut, message)
    return len(cuts)


@pytest.mark.parametrize("old", [False, True], ids=["format 3", "format 2"])
def test_a_csv_cut_at_line_ends_and_inside_quotes_says_how_many_rows_it_holds(tmp_path, old):
    assert check_csv_cuts(tmp_path, every_byte=False, old=old) > 300


@pytest.mark.slow
@pytest.mark.parametrize("old", [False, True], ids=["format 3", "format 2"])
def test_a_csv_cut_at_every_byte_says_how_many_rows_it_holds(tmp_path, old):
    assert check_csv_cuts(tmp_path, every_byte=True, old=old) > 5000


def test_the_f12_case_a_csv_cut_at_60_percent(tmp_path):
    frame = nasty_log(labels=["x"] * 4)
    path = write_log(frame, tmp_path / "log.csv")
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * 0.6)])
    with pytest.raises(
        TruncatedLogError, match=rf"holds \d+ of {len(frame)} rows: the file was cut"
    ):
        read_log(path)


def test_a_parquet_cut_anywhere_is_refused(tmp_path, frame):
    data = write_log(frame, tmp_path / "log.parquet").read_bytes()
    cut_path = tmp_path / "cut.parquet"
    for cut in range(0, len(data), max(1, len(data) // 400)):
        cut_path.write_bytes(data[:cut])
        with pytest.raises(TruncatedLogError, match="cut short"):
            read_log(cut_path)


# -- damage -------------------------------------------------------------------------------


def edited(path: Path, old: bytes, new: bytes) -> Path:
    data = path.read_bytes()
    assert data.count(old) >= 1, old
    path.write_bytes(data.replace(old, new, 1))
    return path


@pytest.fixture
def small_csv(tmp_path):
    return write_log(nasty_log(labels=["x", "y"]), tmp_path / "log.csv")


def test_an_edited_cell_is_caught_by_its_column_checksum(small_csv):
    edited(small_csv, b",1.0,", b",1.5,")  # a due time, in seconds since the start
    with pytest.raises(LogFileError, match=r"column '\w+' does not match its checksum"):
        read_log(small_csv)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (b"\r\n3,", b"\r\nthree,", r"column 'seq', row 3: 'three' is not an integer"),
        (b",schedule,", b",bogus,", r"column 'kind', row 0 \(seq 0\): 'bogus' is not one of sch"),
        (b",user,", b",robot,", r"column 'origin', row 0 \(seq 0\): 'robot' is not one of user"),
        (b",False,", b",maybe,", r"column 'woke', row 0 \(seq 0\): 'maybe' is not True or False"),
        (b",1.0,", b",soon,", r"column 'due', row 0 \(seq 0\): 'soon' is not a number"),
        (b"\r\n0,0.0,", b"\r\n0,1e999x,", r"column 't', row 0 \(seq 0\): '1e999x'"),
        (b"schedule,0,2,", b"schedule,0.5,2,", r"column 'task_id', row 0 \(seq 0\): '0.5' is not"),
        (
            b"schedule,0,2,",
            b"schedule,0,9,",
            r"column 'case', row 0 \(seq 0\): 9 is not a decision",
        ),
        (b"Z\r\n1,", b"X\r\n1,", r"column 'wall_time', row 0 \(seq 0\): '.*X' is not the"),
    ],
)
def test_an_impossible_value_names_the_column_row_and_value(small_csv, old, new, message):
    edited(small_csv, old, new)
    with pytest.raises(LogFileError, match=message):
        read_log(small_csv)


def test_a_missing_column_or_bad_bytes_are_named(small_csv, tmp_path):
    data = small_csv.read_bytes()
    edited(small_csv, b",due,", b",due_at,")
    with pytest.raises(LogFileError, match=r"missing \['due'\], unexpected \['due_at'\]"):
        read_log(small_csv)
    small_csv.write_bytes(data.replace(b"MainThread", b"Main\xffThread", 1))
    with pytest.raises(LogFileError, match=r"log\.csv: not UTF-8 text"):
        read_log(small_csv)
    small_csv.write_bytes(data + b"9999,junk\r\n")
    with pytest.raises(LogFileError, match=r"log\.csv: "):
        read_log(small_csv)
    small_csv.write_bytes(data)
    edited(metadata_path(small_csv), b'"format": 3,', b'"format": 7,')
    with pytest.raises(LogFileError, match=r"format 7; this version .* reads formats up to 3"):
        read_log(small_csv)
    not_a_log = tmp_path / "notes.csv"
    not_a_log.write_text("a,b\n1,2\n")
    with pytest.raises(LogFileError, match="not an event-log file"):
        read_log(not_a_log)


def refused_flips(
    tmp_path, frame, data: bytes, offsets, suffix: str, *, meta=None, damaged=None, csv=None
) -> int:
    """Flip each byte at ``offsets`` in turn: a read refuses the file or gives ``frame`` intact.

    Returns how many were refused (never a silently different frame). ``meta``: a CSV
    log whose metadata file goes beside the damaged copy; ``damaged`` and ``csv``: flip
    the metadata file ``damaged`` beside an intact copy of the CSV bytes ``csv``.
    """
    damaged = damaged or tmp_path / f"damaged{suffix}"
    target = damaged
    if meta is not None and metadata_path(meta).exists():
        metadata_path(damaged).write_bytes(metadata_path(meta).read_bytes())
    if csv is not None:
        target = damaged.with_name(damaged.name.removesuffix(".meta.json"))
        target.write_bytes(csv)
    refused = 0
    for at in offsets:
        flipped = bytearray(data)
        flipped[at] ^= 0x5A
        damaged.write_bytes(bytes(flipped))
        try:
            back = read_log(target)
        except LogFileError:
            refused += 1
        else:
            assert_same(back, frame)
    return refused


def check_csv_flips(tmp_path, frame, stride: int, old: bool = False) -> tuple[int, int]:
    """Flip bytes of a CSV log (and of its metadata, line or file): (refused, flipped)."""
    path = tmp_path / "log.csv"
    data = (write_format2(frame, path) if old else write_log(frame, path, fsync=False)).read_bytes()
    offsets = range(0, len(data), stride)
    refused = refused_flips(tmp_path, frame, data, offsets, ".csv", meta=path)
    if not old:  # the metadata file, beside an intact CSV
        meta = metadata_path(path).read_bytes()
        meta_offsets = range(0, len(meta), max(1, stride // 4))
        damaged = metadata_path(path).with_name("damaged.csv.meta.json")
        refused += refused_flips(tmp_path, frame, meta, meta_offsets, "", damaged=damaged, csv=data)
        offsets = range(len(offsets) + len(meta_offsets))
    return refused, len(offsets)


@pytest.mark.parametrize("old", [False, True], ids=["format 3", "format 2"])
def test_a_damaged_csv_file_is_refused(tmp_path, old):
    frame = nasty_log(labels=["a\rb", "", "x"])
    refused, flipped = check_csv_flips(tmp_path, frame, stride=61, old=old)
    assert refused == flipped > 70


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_csv_file_damaged_at_every_other_byte_is_refused(tmp_path, frame):
    refused, flipped = check_csv_flips(tmp_path, frame, stride=2)
    assert refused == flipped > 5000


def check_parquet_flips(tmp_path, frame, stride: int | None) -> int:
    """Flip bytes of a Parquet log; padding and statistics the reader skips may change nothing."""
    data = write_log(frame, tmp_path / "log.parquet", fsync=False).read_bytes()
    footer = len(data) - int.from_bytes(data[-8:-4], "little") - 8  # metadata, schema, key-values
    if stride:
        offsets = range(4, len(data) - 4, stride)
    else:  # strides through the pages and the footer (18 ms a read: ~170 reads)
        offsets = sorted(set(range(4, footer, 211)) | set(range(footer, len(data) - 4, 53)))
    return refused_flips(tmp_path, frame, data, offsets, ".parquet")


def test_a_damaged_parquet_file_is_refused_or_read_intact(tmp_path, frame):
    assert check_parquet_flips(tmp_path, frame, stride=None) > 60


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_parquet_file_damaged_at_every_third_byte_is_refused_or_read_intact(tmp_path, frame):
    assert check_parquet_flips(tmp_path, frame, stride=3) > 2500


def test_a_parquet_log_whose_metadata_key_was_damaged_is_not_taken_for_format_1(tmp_path, frame):
    import pyarrow.parquet as pq

    path = write_log(frame, tmp_path / "log.parquet")
    table = pq.read_table(path)
    meta = table.schema.metadata
    pq.write_table(table.replace_schema_metadata({b"tempsched_lax": meta[b"tempsched_lab"]}), path)
    with pytest.raises(LogFileError, match="its tempsched-lab metadata is missing or damaged"):
        read_log(path)


# -- files of format 1 (before metadata) -------------------------------------------------------


def test_csv_files_of_format_2_still_read_and_are_checked(tmp_path, frame):
    """What users saved before format 3 (metadata line, rows, end line) reads back the same."""
    path = write_format2(frame, tmp_path / "saved.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(read_log(path), frame)
    data = path.read_bytes()
    edited(path, b",1700000001.0,", b",1700000001.5,")
    with pytest.raises(LogFileError, match=r"column '\w+' does not match its checksum"):
        read_log(path)
    path.write_bytes(data + b"junk")
    with pytest.raises(LogFileError, match="4 unexpected bytes after its end line"):
        read_log(path)
    path.write_bytes(data.replace(b'{"format":2,', b'{"format":7,', 1))
    with pytest.raises(LogFileError, match=r"format 7; this version .* reads formats up to 3"):
        read_log(path)
    metadata_path(path).write_text("{}")  # a stray metadata file: the file's own line decides
    path.write_bytes(data)
    assert_same(read_log(path), frame)


def test_a_csv_without_its_metadata_file_reads_with_a_warning_naming_it(tmp_path, frame):
    path = write_log(frame, tmp_path / "log.csv")
    metadata_path(path).unlink()
    with pytest.warns(UncheckedLogWarning, match=r"log\.csv\.meta\.json is missing.*cannot be"):
        back = read_log(path)
    origin = frame.attrs["time_origin"]
    assert back["t"].tolist() == (frame["t"] - origin).tolist()  # seconds since the start
    assert back.attrs["time_origin"] == 0.0
    times = ["time", "wall_time", *CLOCK_TIMES, WALL]
    pd.testing.assert_frame_equal(back.drop(columns=times), frame.drop(columns=times))


def test_a_csv_whose_line_ends_were_changed_still_reads(tmp_path):
    """``\\r\\n`` to ``\\n`` (a tool's conversion): shorter than written, every value the same."""
    frame = nasty_log(labels=["x", 'quote "q", comma'], error="boom")
    path = write_log(frame, tmp_path / "log.csv")
    path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n"))
    assert path.stat().st_size < json.loads(metadata_path(path).read_text())["bytes"]
    assert_same(read_log(path), frame)


def test_a_metadata_file_of_another_log_is_refused(tmp_path):
    small = write_log(nasty_log(labels=["x"]), tmp_path / "small.csv")
    big = write_log(nasty_log(labels=["x", "y", "z", "w"]), tmp_path / "big.csv")
    small_meta, big_meta = metadata_path(small).read_bytes(), metadata_path(big).read_bytes()
    metadata_path(small).write_bytes(big_meta)  # a shorter file: whole rows, fewer of them
    with pytest.raises(TruncatedLogError, match=r"holds \d+ of \d+ rows: .* is another log's"):
        read_log(small)
    metadata_path(big).write_bytes(small_meta)  # a longer file
    with pytest.raises(LogFileError, match=r"big\.csv: holds \d+ rows but its metadata says"):
        read_log(big)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda b: b.replace(b'"rows": ', b'"rows": 1', 1), "its metadata is damaged"),
        (lambda b: b[: len(b) // 2], "its metadata is not valid JSON"),
        (lambda b: b"\xff\xfe" + b, "its metadata is not valid JSON"),
        (lambda b: b"", "its metadata is not valid JSON"),
        (lambda b: b.replace(b'"bytes": ', b'"bytes": -', 1), "its metadata is damaged"),
    ],
)
def test_a_damaged_metadata_file_is_named(small_csv, damage, message):
    sidecar_path = metadata_path(small_csv)
    sidecar_path.write_bytes(damage(sidecar_path.read_bytes()))
    with pytest.raises(LogFileError, match=rf"log\.csv\.meta\.json: {message}"):
        read_log(small_csv)


# -- R8: bad bytes never escape as a bare UnicodeDecodeError ---------------------------------


def long_log(rows: int = 4000) -> pd.DataFrame:
    """A log longer than pandas' first parsing chunk, so a late bad byte is read late."""
    clock = VirtualClock(start=1_700_000_000.0)
    s = Scheduler(clock)
    for i in range(rows // 2):
        s.schedule(noop, delay=1 + i, args=(i,), label=f"task {i}")
    return s.log.to_frame()


@pytest.mark.parametrize("layout", ["format 3", "format 2", "format 1"])
def test_a_bad_number_and_a_late_non_utf8_byte_name_the_file(tmp_path, layout):
    """R8: the bad number sent the reader to a second, untyped pass that hit the bad byte."""
    frame = long_log()
    path = tmp_path / "log.csv"
    if layout == "format 3":
        write_log(frame, path)
    elif layout == "format 2":
        write_format2(frame, path)
    else:
        frame[list(STORED)].to_csv(path, index=False)
    data = path.read_bytes()
    first_row = data.index(b"\n0,") + 3
    data = data[:first_row] + b"x" + data[first_row:]  # row 0's t is no number
    data = data[:-300] + b"\xff" + data[-299:]  # and a byte near the end is not UTF-8
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UncheckedLogWarning)
        with pytest.raises(LogFileError, match=r"log\.csv: not UTF-8 text"):
            read_log(path)


@pytest.mark.parametrize("with_metadata", [True, False], ids=["metadata file", "none"])
def test_invalid_empty_or_cut_files_name_the_file(small_csv, with_metadata):
    data = small_csv.read_bytes()
    if not with_metadata:
        metadata_path(small_csv).unlink()
    small_csv.write_bytes(b"\xff\xfe\x80" * (len(data) // 3) + b"\xff" * (len(data) % 3))
    with pytest.raises(LogFileError, match=r"log\.csv: (not UTF-8 text|not an event-log file)"):
        read_log(small_csv)
    small_csv.write_bytes(b"")
    with pytest.raises(TruncatedLogError, match=r"log\.csv: the file is empty"):
        read_log(small_csv)
    small_csv.write_bytes(data[: len(data) // 2] + b"\xff")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UncheckedLogWarning)
        with pytest.raises(LogFileError, match=r"log\.csv: "):
            read_log(small_csv)


@pytest.mark.parametrize("name", ["old.csv", "old.parquet"])
def test_files_without_metadata_still_read_with_a_warning(tmp_path, name):
    frame = nasty_log(labels=["x", "None", 'q "1", 2'], error="boom")
    path = tmp_path / name
    stored = frame[list(STORED)]  # what write_frame of the previous version wrote
    stored.to_csv(path, index=False) if name.endswith(".csv") else stored.to_parquet(path)
    with pytest.warns(UncheckedLogWarning, match="cannot be checked"):
        back = read_log(path)
    pd.testing.assert_frame_equal(back, frame, check_exact=True)
    assert back.attrs["time_origin"] == 1_700_000_000.0  # guessed: the first (epoch-like) time


def test_normalize_frame_is_idempotent_on_to_frame_output(frame):
    pd.testing.assert_frame_equal(normalize_frame(frame), frame, check_exact=True)


# -- spill segments -----------------------------------------------------------------------


def chunks_of(frame, size):
    return [frame.iloc[i : i + size] for i in range(0, len(frame), size)]


@pytest.fixture
def big_frame():
    clock = VirtualClock(start=1000.0)
    s = Scheduler(clock)
    for i in range(120):
        s.schedule(noop, at=1000.5 + i % 17, args=(i,), label=f"job {i % 5}" if i % 9 else "")
    clock.run_until(1100.0)
    s.shutdown()
    return s.log.to_frame()


def head(frame, rows):
    """The first ``rows`` rows as a log of their own would give them (categories, attrs)."""
    out = normalize_frame(frame.iloc[:rows])
    out.attrs = dict(frame.attrs)
    return out


def spill(directory, frame, size=97, close=True):
    writer = SegmentWriter(directory, time_origin=frame.attrs["time_origin"], fsync=False)
    paths = [writer.write(chunk) for chunk in chunks_of(frame, size)]
    if close:
        writer.close()
    return writer, paths


def test_spilled_segments_read_back_as_the_whole_log(tmp_path, big_frame):
    writer, paths = spill(tmp_path / "spill", big_frame)
    assert [p.name for p in paths[:2]] == ["segment-000001.parquet", "segment-000002.parquet"]
    assert writer.rows == len(big_frame) and writer.next_seq == len(big_frame)
    back = read_log(tmp_path / "spill")
    assert_same(back, big_frame)
    assert audit(back).ok
    assert replay(back, upto=300) == replay(big_frame, upto=300)
    one = read_log(paths[1])  # each segment is a log file of its own
    assert one["seq"].iloc[0] == 97 and len(one) == 97


def test_an_open_spill_reads_what_was_written_so_far(tmp_path, big_frame):
    writer, _ = spill(tmp_path / "spill", big_frame.iloc[:300], close=False)
    assert_same(read_log(tmp_path / "spill"), head(big_frame, 300))
    assert not writer.closed


def test_a_missing_or_damaged_segment_is_named(tmp_path, big_frame):
    _, paths = spill(tmp_path / "spill", big_frame)
    paths[2].unlink()
    with pytest.raises(
        LogFileError,
        match=r"segment 3 \(segment-000003\.parquet\) is missing: "
        r"rows seq 194\.\.290 are lost",
    ):
        read_log(tmp_path / "spill")
    _, paths = spill(tmp_path / "spill2", big_frame)
    paths[-1].unlink()
    with pytest.raises(LogFileError, match=rf"segment {len(paths)} .* is missing"):
        read_log(tmp_path / "spill2")
    _, paths = spill(tmp_path / "spill3", big_frame)
    data = bytearray(paths[1].read_bytes())
    paths[1].write_bytes(bytes(data[: len(data) // 2]))
    with pytest.raises(
        TruncatedLogError, match=r"segment 2 \(segment-000002\.parquet\).*cut short"
    ):
        read_log(tmp_path / "spill3")


def test_segments_swapped_or_out_of_step_are_refused(tmp_path, big_frame):
    _, paths = spill(tmp_path / "spill", big_frame)
    tmp = paths[0].with_name("x")
    paths[0].rename(tmp)
    paths[1].rename(paths[0])
    tmp.rename(paths[1])
    with pytest.raises(LogFileError, match=r"segment 1 .* not segment 1 of this log"):
        read_log(tmp_path / "spill")


def test_the_writer_refuses_gaps_repeats_and_reuse(tmp_path, big_frame):
    writer = SegmentWriter(tmp_path / "spill", time_origin=1000.0, fsync=False)
    writer.write(big_frame.iloc[:10])
    with pytest.raises(ValueError, match="chunk starts at seq 11; the log continues at seq 10"):
        writer.write(big_frame.iloc[11:20])
    with pytest.raises(ValueError, match="seq jumps from 21 to 23 at row 2"):
        writer.write(big_frame.iloc[[20, 21, 23]])
    other_clock = big_frame.iloc[10:20].copy()
    other_clock.attrs = {"time_origin": 5.0}
    with pytest.raises(ValueError, match=r"time_origin'\]=5.0: this writer's log has time_or"):
        writer.write(other_clock)
    assert writer.write(big_frame.iloc[10:20]).name == "segment-000002.parquet"
    assert writer.write(big_frame.iloc[:0]) is None
    writer.close()
    with pytest.raises(ValueError, match="closed"):
        writer.write(big_frame.iloc[20:30])
    with pytest.raises(FileExistsError, match="is not empty"):
        SegmentWriter(tmp_path / "spill")


def test_a_failed_segment_write_leaves_nothing_and_can_be_retried(tmp_path, big_frame, monkeypatch):
    writer = SegmentWriter(tmp_path / "spill", time_origin=1000.0, fsync=False)
    writer.write(big_frame.iloc[:50])
    from tempsched_lab.log.files import spill as spill_module

    real = spill_module.write_parquet_log

    def fail(frame, tmp, **extra):
        real(frame, tmp, **extra)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spill_module, "write_parquet_log", fail)
    with pytest.raises(OSError, match=r"cannot write the log segment .*segment-000002\.parquet"):
        writer.write(big_frame.iloc[50:100])
    assert sorted(os.listdir(tmp_path / "spill")) == ["log.json", "segment-000001.parquet"]
    monkeypatch.setattr(spill_module, "write_parquet_log", real)
    writer.write(big_frame.iloc[50:100])  # the same chunk again
    writer.close()
    assert_same(read_log(tmp_path / "spill"), head(big_frame, 100))


def test_a_crash_mid_segment_loses_only_that_chunk(tmp_path, big_frame):
    spill(tmp_path / "spill", big_frame.iloc[:200], size=100, close=False)
    (tmp_path / "spill" / ".segment-000003.parquet.0badc0de.tmp").write_bytes(b"PAR1 half")
    back = read_log(tmp_path / "spill")  # the writer never closed: a crash
    assert back["seq"].tolist() == list(range(200))


def test_writes_from_a_background_thread_while_reading(tmp_path, big_frame):
    writer = SegmentWriter(tmp_path / "spill", time_origin=1000.0, fsync=False)
    chunks = chunks_of(big_frame, 25)
    done = threading.Event()

    def spill_all():
        for chunk in chunks:
            writer.write(chunk)
        writer.close()
        done.set()

    thread = threading.Thread(target=spill_all)
    thread.start()
    seen = []
    while not done.is_set():
        part = read_log(tmp_path / "spill")
        assert part["seq"].tolist() == list(range(len(part)))  # always a whole prefix
        seen.append(len(part))
    thread.join()
    assert_same(read_log(tmp_path / "spill"), big_frame)
    assert seen == sorted(seen)


def test_a_spill_of_a_bounded_log_starts_where_the_log_does(tmp_path):
    clock = VirtualClock()
    s = Scheduler(clock, max_log_rows=40)
    for i in range(100):
        s.schedule(noop, delay=1 + i)
    frame = s.log.to_frame()
    assert frame["seq"].iloc[0] == 60
    spill(tmp_path / "spill", frame, size=15)
    assert_same(read_log(tmp_path / "spill"), frame)


def test_a_directory_that_is_not_a_spill_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(LogFileError, match="not a spill directory"):
        read_log(tmp_path / "empty")
    writer = SegmentWriter(tmp_path / "fresh", time_origin=3.0)
    back = read_log(tmp_path / "fresh")
    assert len(back) == 0 and back.attrs["time_origin"] == 3.0
    writer.close()
    (tmp_path / "fresh" / "log.json").unlink()
    with pytest.raises(LogFileError, match="not a spill directory"):
        read_log(tmp_path / "fresh")


def test_no_warning_for_a_checked_file(tmp_path, frame):
    path = write_log(frame, tmp_path / "log.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_log(path)


def test_spilled_history_and_an_in_memory_tail_join_into_the_whole_log(tmp_path, big_frame):
    spill(tmp_path / "spill", big_frame.iloc[:250], close=False)
    tail = big_frame.iloc[250:].reset_index(drop=True)  # rows still in memory
    whole = concat_frames([read_log(tmp_path / "spill"), tail])
    whole.attrs = dict(big_frame.attrs)
    assert_same(whole, big_frame)


def test_attrs_a_file_cannot_hold_are_named_and_the_rest_kept(tmp_path, frame):
    data = frame.copy()
    data.attrs = {**frame.attrs, "note": "kept", "dropped": 3, "scale": object()}
    with pytest.warns(UserWarning, match=r"frame.attrs\['scale'\] is not saved .* of type object"):
        back = read_log(write_log(data, tmp_path / "log.parquet"))
    assert back.attrs == {**frame.attrs, "note": "kept", "dropped": 3}
