"""Log files users are handed: bad bytes are named errors, and pyarrow is a safe one (R7, R17)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.log.files import LogFileError, read_log, write_log
from tempsched_lab.log.files import parquetfile as parquet_module
from tempsched_lab.log.files.normalize import STORED

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]


def noop(*args):
    return None


@pytest.fixture
def parquet_log(tmp_path):
    clock = VirtualClock()
    s = Scheduler(clock)
    for i in range(5):
        s.schedule(noop, delay=1 + i, args=(i,), label=f"job {i}")
    clock.run_until_idle()
    frame = s.log.to_frame()
    return frame, write_log(frame, tmp_path / "log.parquet")


def test_r7_a_column_name_that_is_not_utf8_is_a_named_error(parquet_log, tmp_path):
    """Every place a column's name is spelled in the file, made invalid UTF-8 in turn."""
    frame, path = parquet_log
    raw = path.read_bytes()
    tried = 0
    for name in STORED:
        for match in re.finditer(re.escape(name.encode()), raw):
            damaged = bytearray(raw)
            damaged[match.start()] = 0xFF
            target = tmp_path / f"bad-{name}-{match.start()}.parquet"
            target.write_bytes(bytes(damaged))
            tried += 1
            try:
                back = read_log(target)
            except LogFileError as exc:
                assert str(target) in str(exc)
            else:  # a spelling the reader does not use (pyarrow keeps its own copy)
                assert back.drop(columns=["wall_time"]).equals(frame.drop(columns=["wall_time"]))
    assert tried >= 2 * len(STORED)


def test_r7_the_column_name_pyarrow_decodes_gives_a_log_file_error_not_unicode(parquet_log):
    _, path = parquet_log
    raw = bytearray(path.read_bytes())
    raw[raw.index(b"label")] = 0xFF  # the first spelling: the footer's column path
    path.write_bytes(bytes(raw))
    with pytest.raises(LogFileError, match=re.escape(str(path))) as caught:
        read_log(path)
    assert not isinstance(caught.value, UnicodeDecodeError)


def test_r7_metadata_that_is_not_utf8_is_a_named_error(parquet_log, tmp_path):
    _, path = parquet_log
    table = pq.read_table(path)
    meta = table.schema.metadata[b"tempsched_lab"]
    broken = meta.replace(b'"format"', b'"f\xffrmat"')
    target = tmp_path / "bad-meta.parquet"
    pq.write_table(table.replace_schema_metadata({b"tempsched_lab": broken}), target)
    with pytest.raises(LogFileError, match=re.escape(str(target))):
        read_log(target)
    other = tmp_path / "bad-key.parquet"
    keys = {b"tempsched_lab": meta, b"\xff\xfe": b"\xff"}
    pq.write_table(table.replace_schema_metadata(keys), other)
    assert len(read_log(other)) == len(table)  # a foreign key is not ours to read


def test_r7_any_decoding_error_below_read_log_names_the_file(parquet_log, monkeypatch):
    _, path = parquet_log

    def undecodable(*args, **kwargs):
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    monkeypatch.setattr("tempsched_lab.log.files.read_parquet_log", undecodable)
    with pytest.raises(LogFileError, match=re.escape(str(path)) + ".*not valid UTF-8"):
        read_log(path)


def test_r17_every_pyarrow_requirement_is_above_cve_2023_47248():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = [
        spec
        for group in [project["dependencies"], *project["optional-dependencies"].values()]
        for spec in group
        if spec.lower().startswith("pyarrow")
    ]
    assert specs, "no pyarrow requirement found"
    for spec in specs:
        floor = re.fullmatch(r"pyarrow>=(\d+)(?:\.(\d+))?(?:\.(\d+))?", spec.replace(" ", ""))
        assert floor, f"{spec!r}: expected a pyarrow>=X floor"
        version = tuple(int(part or 0) for part in floor.groups())
        assert version >= (15, 0, 0), f"{spec!r} admits pyarrow 14.0.0 (CVE-2023-47248)"


@pytest.mark.parametrize("version", ["14.0.0", "13.0.0", "0.17.1", "14.0.0.dev123"])
def test_r17_a_vulnerable_pyarrow_is_refused_before_reading(parquet_log, monkeypatch, version):
    _, path = parquet_log
    monkeypatch.setattr(pa, "__version__", version)
    with pytest.raises(ImportError, match=r"CVE-2023-47248.*pyarrow>=15"):
        read_log(path)


@pytest.mark.parametrize("version", ["14.0.1", "15.0.0", "26.0.1", "16.0.0.dev7"])
def test_r17_a_patched_pyarrow_reads(parquet_log, monkeypatch, version):
    frame, path = parquet_log
    monkeypatch.setattr(pa, "__version__", version)
    assert len(read_log(path)) == len(frame)
    assert parquet_module.pyarrow_parquet() is pq
