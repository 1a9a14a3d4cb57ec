"""A mirror's memory bounded by ``max_rows`` (older rows dropped and named), and one event's
size bounded (issue 41: "a mirror keeps every row with no way to bound it")."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tempsched_lab import Scheduler, VirtualClock, replay
from tempsched_lab.log.files import SegmentWriter
from tempsched_lab.remote import RemoteScheduler, attach, attach_dir


def _log(n: int) -> pd.DataFrame:
    """A busy log: ``n`` one-shot tasks and a periodic one, all run."""
    s = Scheduler(VirtualClock())
    for i in range(n):
        s.schedule(int, at=1.0 + i / 10, label=f"job{i}")
    s.schedule(int, at=0.5, period=0.7, label="tick")
    s.clock.advance(n / 10 + 1)
    frame = s.log.to_frame()
    s.shutdown()
    return frame


def test_a_bounded_mirror_holds_the_newest_rows_and_names_the_dropped_ones() -> None:
    frame = _log(600)
    total = len(frame)
    assert total > 2_000
    mirror = RemoteScheduler("example", max_rows=1_000)
    for start in range(0, total, 700):  # batches larger than half the bound
        mirror.apply(frame.iloc[start : start + 700])
    assert mirror.applied == total
    held = mirror.log.to_frame()
    assert len(held) == 1_000
    assert held["seq"].tolist() == list(range(total - 1_000, total))
    dropped = mirror.dropped_rows
    assert dropped is not None
    assert (dropped.first, dropped.last) == (0, total - 1_001)
    assert "max_rows" in dropped.why and "1,000" in dropped.why
    assert mirror.history().attrs["gaps"][0] == (0, total - 1_001, dropped.why)
    # the queue is replayed from every row, those dropped included: as the service's
    assert mirror.moment().queue.state == replay(frame)


def test_an_unbounded_mirror_drops_nothing() -> None:
    frame = _log(50)
    mirror = RemoteScheduler("example")
    mirror.apply(frame)
    assert mirror.dropped_rows is None and len(mirror.log) == len(frame)


def test_a_bounded_mirror_keeps_the_bound_across_gaps() -> None:
    frame = _log(300)
    mirror = RemoteScheduler("example", max_rows=500)
    mirror.apply(frame.iloc[:400])
    mirror.apply(frame.iloc[450:900])  # rows 400..449 never came: a gap
    mirror.apply(frame.iloc[1000:1400])
    assert [(g.first, g.last) for g in mirror.gaps] == [(400, 449), (900, 999)]
    held = sum(len(log) for log in [*mirror.earlier, mirror.log])
    assert held <= 500 + 400  # the current log's bound, and at most one log before it
    dropped = mirror.dropped_rows
    assert dropped is not None and dropped.first == 0 and dropped.last >= 399


def test_attach_dir_takes_the_bound(tmp_path: Path) -> None:
    frame = _log(150)
    with SegmentWriter(tmp_path / "spill", time_origin=0.0) as writer:
        for start in range(0, len(frame), 400):
            writer.write(frame.iloc[start : start + 400])
    mirror = attach_dir(tmp_path / "spill", follow=False, max_rows=200)
    assert len(mirror.log) == 200 and mirror.applied == len(frame)
    assert mirror.dropped_rows is not None


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "10"])
def test_a_bad_bound_is_refused_naming_it(bad: object) -> None:
    with pytest.raises(ValueError, match="max_rows="):
        RemoteScheduler("example", max_rows=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [0, 1023, True, 2.0**20])
def test_a_bad_event_bound_is_refused_naming_it(bad: object) -> None:
    with pytest.raises(ValueError, match="max_event_bytes="):
        attach("http://127.0.0.1:1/", max_event_bytes=bad)  # type: ignore[arg-type]
