"""attach_dir and the mirror: a spill directory followed or replayed, gaps named, partial files
never read, and a mirror whose every moment holds the queue exactly as after its rows."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempsched_lab import Scheduler, VirtualClock, replay
from tempsched_lab.log.files import LogFileError, SegmentWriter
from tempsched_lab.remote import RemoteScheduler, attach_dir
from tempsched_lab.remote.mirror import ReadOnlyMirrorError


def _until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Wait for ``condition`` (bounded in time and in count of looks)."""
    deadline = time.monotonic() + seconds
    for _ in range(100_000):
        if condition():
            return
        if time.monotonic() > deadline:
            break
        time.sleep(0.01)
    raise AssertionError(f"not true within {seconds} s: {condition}")


def _log(n: int = 30) -> pd.DataFrame:
    """A log with schedules, dispatches, starts, finishes, a cancel: ``n`` tasks' worth."""
    s = Scheduler(VirtualClock())
    ids = [
        s.schedule(int if i % 3 else (lambda: None), at=1.0 + i / 2, label=f"job{i}")
        for i in range(n)
    ]
    s.cancel(ids[-1])
    s.schedule(lambda: None, at=2.0, period=1.5, label="tick")
    s.clock.advance(n / 4)
    frame = s.log.to_frame()
    s.shutdown()
    return frame


def _write(
    directory: Path, frame: pd.DataFrame, cuts: list[int], *, close: bool = True
) -> SegmentWriter:
    writer = SegmentWriter(directory, frame.attrs.get("time_origin", 0.0))
    bounds = [0, *cuts, len(frame)]
    for a, b in itertools.pairwise(bounds):
        writer.write(frame.iloc[a:b])
    if close:
        writer.close(recorded=len(frame))
    return writer


def test_a_replayed_directory_equals_the_log_frame_for_frame(tmp_path: Path) -> None:
    frame = _log()
    _write(tmp_path / "spill", frame, [7, 20, 21])
    mirror = attach_dir(tmp_path / "spill", follow=False)
    assert mirror.link.state == "closed" and mirror.gaps == []
    pd.testing.assert_frame_equal(mirror.log.to_frame(), frame)
    assert mirror.moment().queue.state == replay(frame)


def test_a_followed_directory_reads_each_new_segment_and_ends_when_closed(tmp_path: Path) -> None:
    frame = _log()
    writer = _write(tmp_path / "spill", frame.iloc[:10], [], close=False)
    mirror = attach_dir(tmp_path / "spill", follow=True, poll=0.02)
    assert mirror.applied == 10 and mirror.link.state == "live"
    writer.write(frame.iloc[10:25])
    _until(lambda: mirror.applied == 25)
    writer.write(frame.iloc[25:])
    writer.close(recorded=len(frame))
    _until(lambda: mirror.link.state == "closed")
    pd.testing.assert_frame_equal(mirror.log.to_frame(), frame)
    assert mirror.gaps == []


def test_a_half_written_temporary_segment_is_never_read(tmp_path: Path) -> None:
    frame = _log()
    directory = tmp_path / "spill"
    writer = _write(directory, frame.iloc[:10], [], close=False)
    # what a writer killed in the middle of segment 2 leaves: a hidden temporary, cut short
    whole = tmp_path / "whole"
    _write(whole, frame, [10], close=False)
    data = (whole / "segment-000002.parquet").read_bytes()
    (directory / ".segment-000002.parquet.0badc0de.tmp").write_bytes(data[: len(data) // 2])
    seen: list[str] = []
    mirror = attach_dir(directory, follow=True, poll=0.02)
    mirror.on_link(lambda link: seen.append(link.state))
    writer.write(frame.iloc[10:12])  # the next write goes on as segment 2
    _until(lambda: mirror.applied == 12)
    assert mirror.link.state == "live" and mirror.gaps == [] and "closed" not in seen
    mirror.close()
    assert mirror.link.state == "closed"


def test_a_deleted_middle_segment_is_a_named_gap(tmp_path: Path) -> None:
    frame = _log()
    directory = tmp_path / "spill"
    _write(directory, frame, [10, 20])
    (directory / "segment-000002.parquet").unlink()
    mirror = attach_dir(directory, follow=False)
    assert [(g.first, g.last) for g in mirror.gaps] == [(10, 19)]
    assert "segment 2 (segment-000002.parquet) is missing" in mirror.gaps[0].why
    assert mirror.link.gap == mirror.gaps[0] and mirror.link.state == "closed"
    history = mirror.history()
    assert history["seq"].tolist() == [*range(10), *range(20, len(frame))]
    stored = [c for c in frame.columns if c not in ("time", "wall_time")]
    pd.testing.assert_frame_equal(
        mirror.earlier[0].to_frame()[stored], frame.iloc[:10][stored], check_categorical=False
    )


def test_a_deleted_last_segment_of_a_closed_log_is_a_named_gap(tmp_path: Path) -> None:
    frame = _log()
    directory = tmp_path / "spill"
    _write(directory, frame, [10])
    (directory / "segment-000002.parquet").unlink()
    mirror = attach_dir(directory, follow=True, poll=0.02)
    _until(lambda: mirror.link.state == "closed")
    assert [(g.first, g.last) for g in mirror.gaps] == [(10, len(frame) - 1)]


def test_bad_directories_are_named_at_the_call(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such directory"):
        attach_dir(tmp_path / "nowhere")
    with pytest.raises(LogFileError, match="not a spill directory"):
        attach_dir(tmp_path)
    with pytest.raises(ValueError, match="poll=0"):
        attach_dir(tmp_path, poll=0)


def test_a_mirror_is_read_only(tmp_path: Path) -> None:
    _write(tmp_path / "spill", _log(3), [])
    mirror = attach_dir(tmp_path / "spill", follow=False)
    assert mirror.read_only
    with pytest.raises(ReadOnlyMirrorError, match=r"read-only mirror of .*control_token"):
        mirror.schedule(print, delay=1)
    with pytest.raises(ReadOnlyMirrorError, match="read-only"):
        mirror.cancel(0)
    with pytest.raises(TypeError, match="task_id='0'"):
        mirror.cancel("0")  # type: ignore[arg-type]


@settings(max_examples=25, deadline=None)
@given(
    ops=st.lists(
        st.tuples(st.sampled_from(["schedule", "cancel", "advance"]), st.integers(0, 40)),
        min_size=1,
        max_size=40,
    ),
    design=st.sampled_from(["sorteddict", "heap", "wheel"]),
    batch=st.integers(1, 7),
)
def test_every_moment_of_a_mirror_holds_the_queue_as_after_its_rows(
    ops: list[tuple[str, int]], design: str, batch: int
) -> None:
    """Fed in batches of any size, the mirror's moment after each batch has the queue state
    the log's replay has at that row, and the mirror ends equal to the log, frame for frame."""
    s = Scheduler(VirtualClock(), queue=design)
    ids: list[int] = []
    for op, n in ops:
        if op == "schedule":
            ids.append(
                s.schedule(
                    lambda: None, at=s.clock.now() + n / 4, period=1.0 if n % 5 == 0 else None
                )
            )
        elif op == "cancel" and ids:
            s.cancel(ids[n % len(ids)])
        else:
            s.clock.advance(n / 8)
    frame = s.log.to_frame()
    s.shutdown()
    mirror = RemoteScheduler("test", design=design)
    for start in range(0, len(frame), batch):
        mirror.apply(frame.iloc[start : start + batch])
        m = mirror.moment()
        assert m.seq == min(start + batch, len(frame))
        assert m.queue.state == replay(frame, upto=m.seq - 1)
    pd.testing.assert_frame_equal(mirror.log.to_frame(), frame)


def test_rows_applied_twice_are_skipped_and_missing_ones_named() -> None:
    frame = _log(10)
    assert len(frame) > 14
    mirror = RemoteScheduler("test")
    assert mirror.apply(frame.iloc[:6]) == 6
    assert mirror.apply(frame.iloc[3:9]) == 3  # a resumed stream that repeats rows
    assert mirror.apply(frame.iloc[12:]) == len(frame) - 12
    assert [(g.first, g.last, g.why) for g in mirror.gaps] == [(9, 11, "rows never received")]
    assert mirror.history()["seq"].tolist() == [*range(9), *range(12, len(frame))]


def test_an_extended_replay_goes_on_and_cannot_rewind() -> None:
    from tempsched_lab import Replayer

    frame = _log(10)
    replayer = Replayer(frame.iloc[:0])
    replayer.extend(frame.iloc[:7])
    replayer.extend(frame.iloc[7:])
    assert replayer.state() == replay(frame) and replayer.seq == len(frame) - 1
    with pytest.raises(ValueError, match="expected rows after seq"):
        replayer.extend(frame.iloc[3:5])
    with pytest.raises(ValueError, match="cannot rewind a replay that was extended"):
        replayer.advance_to(2)


def test_a_mirror_begun_later_holds_no_row_before() -> None:
    frame = _log(10)
    mirror = RemoteScheduler("test")
    mirror.begin_at(8)
    mirror.apply(frame.iloc[8:])
    assert mirror.log.to_frame()["seq"].tolist() == list(range(8, len(frame)))
    assert mirror.gaps == [] and mirror.moment().seq == len(frame)
    with pytest.raises(ValueError, match="holds rows already"):
        mirror.begin_at(3)
