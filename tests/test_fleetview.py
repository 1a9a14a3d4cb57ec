"""``Dashboard(fleet)``: banner lines per service, lanes grouped by service (busy first),
aggregation past the lanes, pan and zoom (fast: spill directories, no network)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tempsched_lab import Fleet, Scheduler, VirtualClock
from tempsched_lab.widgets import Dashboard
from tempsched_lab.widgets.fleetview import FleetLanes, FleetView, banner_lines


def _job(i: int) -> int:
    return i


def finished(n: int, start: float, spill: Path) -> Scheduler:
    s = Scheduler(VirtualClock(start=start), log_spill=spill)
    s.schedule_many([(_job, start + 1 + i % 13, (i,)) for i in range(n)])
    s.clock.run_until_idle()
    s.shutdown()
    return s


def synthetic(counts: dict[str, list[int]]) -> pd.DataFrame:
    """A fleet frame: for each service, task i has counts[service][i] rows (start/finish)."""
    rows: list[dict[str, Any]] = []
    for service, per_task in counts.items():
        for task, many in enumerate(per_task):
            for k in range(many):
                kind = "start" if k % 2 == 0 else "finish"
                rows.append(
                    {
                        "service": service,
                        "task_id": task,
                        "kind": kind,
                        "label": f"t{task}",
                        "local_wall": 1000.0 + task + k * 0.01,
                    }
                )
    frame = pd.DataFrame(rows)
    frame["service"] = pd.Categorical(frame["service"], categories=list(counts))
    return frame


def test_lanes_are_grouped_by_service_busiest_first_and_the_rest_aggregated() -> None:
    frame = synthetic({"b": [2, 9, 4], "a": [1, 1, 6, 3, 5, 2, 2]})
    lanes = FleetLanes(frame, lanes=4)
    assert lanes.services == ["b", "a"]  # the fleet's order, not alphabetical
    titles = [(lane.service, lane.title) for lane in lanes.lanes]
    assert titles == [
        ("b", "t1 #1"),
        ("b", "t2 #2"),
        ("b", "t0 #0"),
        ("a", "t2 #2"),
        ("a", "t4 #4"),
        ("a", "t3 #3"),
        ("a", "+ 4 other tasks"),
    ]
    # nothing dropped: every row is in some lane
    assert sum(lane.rows for lane in lanes.lanes) == len(frame)
    assert lanes.lanes[-1].tasks == 4 and lanes.lanes[-1].rows == 1 + 1 + 2 + 2
    assert lanes.groups == {"b": (0, 3), "a": (3, 4)}


def test_a_window_counts_each_lanes_rows_in_its_columns() -> None:
    frame = synthetic({"a": [10]})
    lanes = FleetLanes(frame, lanes=2)
    whole = lanes.counts(*lanes.span, columns=10)
    assert whole.sum() == 10  # the last row (at the span's end) falls in the last column
    half = lanes.counts(-0.001, 0.045, columns=5)
    assert half.sum() == 5 and half[0, 1].tolist() == [1, 1, 1, 1, 1]
    with pytest.raises(ValueError, match=r"stop=0\.0: expected more than start=1\.0"):
        lanes.counts(1.0, 0.0)
    picture = lanes.picture(0.0, 0.1, columns=20)
    assert picture.shape == (4 * 2, 20, 3)
    assert (picture[5] != 255).any() and (picture[4] == 255).all()  # drawn rows, blank rows


def test_dashboard_of_a_fleet_is_a_fleet_view_with_a_banner_line_per_service(
    tmp_path: Path,
) -> None:
    a = finished(40, 0.0, tmp_path / "a")
    b = finished(25, 50.0, tmp_path / "b")
    with Fleet({"a": tmp_path / "a", "b": tmp_path / "b"}) as fleet:
        view = Dashboard(fleet, lanes=3, autostart=False)
        try:
            assert isinstance(view, FleetView)
            lines = banner_lines(fleet)
            assert lines["a"].startswith("a: ") and f"{a.log.next_seq:,} rows" in lines["a"]
            assert f"{b.log.next_seq:,} rows" in lines["b"] and "no gaps" in lines["b"]
            assert "spill directory" in lines["a"]
            assert view.banner.value.count("tsl-fleet-line") == 2
            assert [lane.service for lane in view.data.lanes] == ["a"] * 3 + ["b"] * 3
            assert view.data.lanes[2].title == "+ 38 other tasks"
            assert view.timeline.value.count("tsl-fleet-lane") == 6
            whole = view.window
            view.zoom(4.0)
            assert view.window[1] - view.window[0] == pytest.approx((whole[1] - whole[0]) / 4)
            before = view.window
            view.pan(0.5)
            assert view.window[0] == pytest.approx(before[0] + (before[1] - before[0]) / 2)
            view.reset()
            assert view.window == whole
            with pytest.raises(ValueError, match="expected finite start < stop"):
                view.show(3.0, 3.0)
        finally:
            view.close()
    assert not any(w.comm for w in view.buttons.values())


def test_gaps_are_said_in_the_banner(tmp_path: Path) -> None:
    finished(10, 0.0, tmp_path / "a")
    with Fleet({"a": tmp_path / "a"}) as fleet:
        frame = fleet.to_frame()
        frame.attrs["gaps"] = [("a", 3, 5, "killed"), ("a", 8, 8, "")]
        assert "2 gaps (rows 3..5, 8..8: at most 4 rows missing)" in banner_lines(fleet, frame)["a"]


def test_skew_moves_a_service_by_its_offset() -> None:
    frame = synthetic({"a": [2], "b": [2]})
    frame.loc[frame["service"] == "b", "local_wall"] += 5.0
    lanes = FleetLanes(frame)
    assert np.allclose(lanes.lanes[1].x["runs"] - lanes.lanes[0].x["runs"], 5.0)
