"""The narrator: each new log row as the log panel's sentence, throttled by the rows' times."""

from __future__ import annotations

import threading

import pytest

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.narration import Narrator
from tempsched_lab.widgets.logview import describe_row


def noop(*args):
    return None


def test_each_row_once_in_order_with_its_time_label_and_sentence():
    clock = VirtualClock()
    s = Scheduler(clock)
    lines: list[str] = []
    narrator = Narrator(s.log, lines.append)
    s.schedule(noop, at=1.0, label="first")
    assert narrator.poll() == 1 and narrator.poll() == 0  # nothing new: nothing said
    s.schedule(noop, at=2.0, label="a label longer than the column")
    clock.run_until(1.5)
    narrator.finish()
    frame = s.log.to_frame()
    assert len(lines) == len(frame) == narrator.said
    for line, (_, row) in zip(lines, frame.iterrows(), strict=True):
        assert line.endswith(describe_row(row, narrator.scale))
    assert lines[1].startswith("   0.000 s  a label longer… case 4 (new time point)")
    assert lines[-1].startswith("   1.000 s  first ")


def test_a_burst_is_cut_to_the_burst_size_and_the_rest_is_counted():
    clock = VirtualClock()
    s = Scheduler(clock)
    lines: list[str] = []
    narrator = Narrator(s.log, lines.append, rate=2.0, burst=5)
    for i in range(30):  # 30 rows at one moment
        s.schedule(noop, at=10.0 + i, label=f"task {i}")
    narrator.poll()
    assert len(lines) == 5  # the rest is held until a line can be said
    clock.run_until(10.0)  # 10 s later: the bucket is full again
    narrator.finish()
    assert lines[5] == "            ... 25 rows not shown (schedule 25): the log has them"
    assert "task #0 handed to its executor" in lines[6]
    assert narrator.said + narrator.left_out == len(s.log.to_frame())


def test_the_rate_holds_over_time_and_virtual_runs_say_what_real_ones_would():
    """At 4 lines a second, a 1 kHz periodic task's 10 s say about 40 lines plus the burst."""
    clock = VirtualClock()
    s = Scheduler(clock)
    lines: list[str] = []
    narrator = Narrator(s.log, lines.append, rate=4.0, burst=3)
    s.schedule(noop, at=0.001, period=0.001, label="fast")
    clock.run_until(10.0)
    narrator.finish()
    said = [line for line in lines if "not shown" not in line]
    assert 3 + 40 - 1 <= len(said) <= 3 + 40 + 1
    assert narrator.said + narrator.left_out == len(s.log)


def test_only_the_polling_thread_says_anything():
    s = Scheduler()
    threads: set[str] = set()
    narrator = Narrator(s.log, lambda line: threads.add(threading.current_thread().name))
    done = threading.Event()
    s.schedule(noop, delay=0.01)
    s.schedule(done, delay=0.02)
    assert done.wait(30)
    s.shutdown()
    narrator.finish()
    assert threads == {threading.current_thread().name}
    assert narrator.said == len(s.log)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"rate": 0}, "rate=0: expected a positive"), ({"burst": 0}, "burst=0: expected a whole")],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Narrator(Scheduler(VirtualClock()).log, print, **kwargs)
