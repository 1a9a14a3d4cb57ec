"""attach_dir checks that segments continue each other as read_log does: a directory whose
segments come from two logs (a foreign segment, a rotated directory) is refused or its link
says so, never mirrored silently (issue 41, finding 11)."""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from remotekit import until

from tempsched_lab import Scheduler, VirtualClock, read_log
from tempsched_lab.log.files import LogFileError, SegmentWriter
from tempsched_lab.log.files.spill import segment_name
from tempsched_lab.remote import attach_dir


def _log(n: int, every: float = 0.5) -> pd.DataFrame:
    s = Scheduler(VirtualClock())
    for i in range(n):
        s.schedule(int, at=1.0 + i * every, label=f"job{i}")
    s.clock.advance(n * every + 1)
    frame = s.log.to_frame()
    s.shutdown()
    return frame


def _spill(directory: Path, frame: pd.DataFrame, cuts: list[int], *, close: bool) -> None:
    writer = SegmentWriter(directory, time_origin=0.0)
    for a, b in itertools.pairwise([0, *cuts, len(frame)]):
        writer.write(frame.iloc[a:b])
    if close:
        writer.close(recorded=len(frame))


def _two_logs(tmp_path: Path, *, close: bool) -> tuple[Path, Path]:
    """Two logs of one origin, three segments each, with different seq ranges per segment."""
    a, b = tmp_path / "a", tmp_path / "b"
    _spill(a, _log(20), [20, 40], close=close)
    _spill(b, _log(30), [30, 60], close=close)
    return a, b


def test_a_foreign_segment_in_place_of_one_is_refused_as_read_log_refuses(
    tmp_path: Path,
) -> None:
    a, b = _two_logs(tmp_path, close=True)
    shutil.copy(b / segment_name(2), a / segment_name(2))  # a rotated or mixed directory
    with pytest.raises(LogFileError, match="rows are missing or repeated"):
        read_log(a)
    with pytest.raises(LogFileError, match=r"segment 2 .*starts at seq 30.* ends at seq 19"):
        attach_dir(a, follow=False)


def test_a_foreign_segment_that_appears_while_followed_fails_the_link_naming_it(
    tmp_path: Path,
) -> None:
    a, b = _two_logs(tmp_path, close=False)
    (a / segment_name(3)).unlink()
    mirror = attach_dir(a, follow=True, poll=0.02)
    assert mirror.applied == 40 and mirror.link.state == "live"
    # another log's next segment, arriving the way segments do (written aside, then renamed
    # in): a plain copy is seen half-written by the 20 ms poll, and fails as "not a Parquet file"
    incoming = a / f".{segment_name(3)}.incoming"
    shutil.copy(b / segment_name(3), incoming)
    os.replace(incoming, a / segment_name(3))
    until(lambda: mirror.closed)
    link = mirror.link
    assert link.state == "failed", link
    assert segment_name(3) in link.why and "starts at seq 60" in link.why
    assert mirror.applied == 40  # nothing of the foreign segment was applied
    assert link.text().startswith("failed")


def test_a_closed_log_holding_a_segment_past_its_last_is_refused(tmp_path: Path) -> None:
    frame = _log(40)
    a, c = tmp_path / "a", tmp_path / "c"
    _spill(a, frame.iloc[:60], [20, 40], close=True)
    _spill(c, frame, [20, 40, 60], close=True)
    shutil.copy(c / segment_name(4), a / segment_name(4))  # it even continues the seq
    with pytest.raises(LogFileError, match="closed after 3 segments"):
        read_log(a)
    with pytest.raises(LogFileError, match="closed after 3 segments"):
        attach_dir(a, follow=False)


def test_a_missing_segment_is_still_a_named_gap_not_a_refusal(tmp_path: Path) -> None:
    a, _ = _two_logs(tmp_path, close=True)
    (a / segment_name(2)).unlink()
    mirror = attach_dir(a, follow=False)
    assert [(g.first, g.last) for g in mirror.gaps] == [(20, 39)]
    assert mirror.link.state == "closed"


def test_a_directory_without_manifest_takes_the_first_segments_origin(tmp_path: Path) -> None:
    frame = _log(10)
    frame.attrs["time_origin"] = 12.5
    writer = SegmentWriter(tmp_path / "d", time_origin=12.5)
    writer.write(frame.iloc[:10])
    writer.write(frame.iloc[10:])
    (tmp_path / "d" / "log.json").unlink()
    mirror = attach_dir(tmp_path / "d", follow=False)
    assert mirror.time_origin == 12.5 and mirror.applied == len(frame)
