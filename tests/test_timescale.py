"""The one time language: seconds since the clock's origin, or wall-clock time, never raw epochs."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from tempsched_lab import RealClock, Scheduler, TimeScale, VirtualClock, set_time_style, time_style
from tempsched_lab.time.scale import _calendar_ticks, fmt_duration, time_scale_of

PARIS = ZoneInfo("Europe/Paris")


def test_elapsed_text_reads_from_the_clocks_origin():
    real = Scheduler(RealClock())
    assert real.time_scale.origin == real.clock.origin
    assert real.time_scale.text(real.clock.origin + 12.3456) == "12.346 s"
    virtual = Scheduler(VirtualClock(start=100.0))
    assert virtual.time_scale.at(102.5) == "t = 2.500 s"
    assert TimeScale(0.0).text(float("nan")) == "" and TimeScale(0.0).text(None) == ""


def test_the_global_style_switches_every_scale_that_has_none():
    scale = TimeScale(0.0)
    stamp = datetime(2026, 3, 29, 1, 59, 58, 500_000, tzinfo=timezone.utc).timestamp()
    with time_style("wall"):
        assert TimeScale(0.0, tz=timezone.utc).text(stamp) == "01:59:58.500"
    assert scale.style == "elapsed"
    set_time_style("wall")
    try:
        assert scale.style == "wall" and TimeScale(0.0, "elapsed").style == "elapsed"
    finally:
        set_time_style("elapsed")
    with pytest.raises(ValueError, match="style='local'"):
        set_time_style("local")  # type: ignore[arg-type]


def test_parse_takes_seconds_since_start_or_a_time_of_day():
    scale = TimeScale(1000.0)
    assert scale.parse("2.5") == scale.parse(" 2.5 s ") == scale.parse(2.5) == 1002.5
    assert datetime.fromtimestamp(scale.parse("09:30:00")).strftime("%H:%M") == "09:30"
    for bad in ("soon", "25:00:00", True, float("inf")):
        with pytest.raises((TypeError, ValueError), match="time="):
            scale.parse(bad)


def test_frames_carry_their_origin_and_frames_without_one_are_guessed():
    s = Scheduler(VirtualClock(start=50.0))
    s.schedule(print, at=51.0)
    frame = s.log.to_frame()
    assert frame.attrs["time_origin"] == 50.0 and time_scale_of(frame).origin == 50.0
    bare = frame.copy()
    bare.attrs = {}
    assert time_scale_of(bare).origin == 0.0  # small values: a virtual clock's own scale
    bare["t"] += 1.8e9
    assert time_scale_of(bare).origin == bare["t"].min()  # epoch-like: from the first step


def test_calendar_ticks_fall_on_local_midnights_across_a_dst_change():
    start = datetime(2026, 3, 27, tzinfo=PARIS).timestamp()  # Friday; Sunday the 29th is 23 h
    ticks = _calendar_ticks(start, start + 7 * 86400 - 3600, PARIS)
    labels = [datetime.fromtimestamp(t, PARIS).strftime("%a %H:%M") for t in ticks]
    # a week with a 23-hour Sunday: the next Friday's midnight is 7 * 86,400 - 3,600 s away
    assert labels == ["Fri 00:00", "Sat 00:00", "Sun 00:00", "Mon 00:00", "Tue 00:00",
                      "Wed 00:00", "Thu 00:00", "Fri 00:00"]  # fmt: skip
    half_days = _calendar_ticks(start, start + 3 * 86400, PARIS)
    assert [datetime.fromtimestamp(t, PARIS).hour for t in half_days][:4] == [0, 12, 0, 12]
    hours = _calendar_ticks(start, start + 6 * 3600, PARIS)
    assert all(datetime.fromtimestamp(t, PARIS).minute == 0 for t in hours)


def test_wall_style_axis_labels_are_calendar_aware():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    start = datetime(2026, 3, 23, tzinfo=PARIS).timestamp()
    scale = TimeScale(start, "wall", PARIS)
    ax = Figure().add_subplot()
    ax.set_xlim(0, 3 * 86400)
    ax.xaxis.set_major_formatter(scale.tick_formatter())
    ax.xaxis.set_major_locator(scale.tick_locator())
    ax.figure.canvas.draw()
    texts = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert texts[:3] == ["Mon 00:00", "Mon 12:00", "Tue 00:00"]


def test_durations_pick_their_unit():
    assert [fmt_duration(x) for x in (0.0, 4e-6, 0.0042, 2.5, 3725.0)] == [
        "0 s",
        "4 µs",
        "4.20 ms",
        "2.500 s",
        "1 h 2 min",
    ]
