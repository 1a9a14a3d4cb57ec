"""The narrator: each new log row as the log panel's sentence, throttled by the rows' times."""

from __future__ import annotations

import threading

import pytest

from tempsched_lab import PastTimeError, Scheduler, VirtualClock
from tempsched_lab.reading.narration import Narrator
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


# -- the sentences, outside the widgets -----------------------------------------------------------


def test_every_row_kind_of_the_schema_has_its_sentence():
    from tempsched_lab.log.kinds import Kind
    from tempsched_lab.log.schema import KINDS
    from tempsched_lab.reading import sentences

    assert set(sentences.SENTENCES) == set(KINDS)
    assert {k.value for k in Kind} == set(KINDS)  # every kind has a name the code can hold
    # the widgets' describe_row is the same function (re-exported where it was)
    assert describe_row is sentences.describe_row


def test_a_kind_registered_twice_or_unknown_is_refused():
    from tempsched_lab.log.kinds import Kind, kind_code
    from tempsched_lab.reading.sentences import sentence

    with pytest.raises(ValueError, match="kind='start': a sentence is registered already"):
        sentence(Kind.START)(lambda row, scale: "again")
    with pytest.raises(ValueError, match="kind='launch': not a row kind"):
        kind_code("launch")


def test_the_narration_imports_no_widgets_pandas_or_matplotlib():
    """``tempsched-lab demo`` prints its lines without loading the widgets (about 1.3 s)."""
    import subprocess
    import sys

    code = (
        "import sys, tempsched_lab.reading.narration, tempsched_lab.reading.sentences\n"
        "heavy = ('ipywidgets', 'anywidget', 'pandas', 'matplotlib', 'tempsched_lab.widgets')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"


def test_sentences_of_a_frame_row_and_of_a_stored_row_agree():
    """The narrator says rows of ``log.rows()`` (dicts), the panels frame rows: same words."""
    clock = VirtualClock()
    s = Scheduler(clock)
    first = s.schedule(noop, at=1.0, label="a")
    s.schedule(noop, at=1.0, label="a")  # a duplicate
    with pytest.raises(PastTimeError):
        s.schedule(noop, at=-1.0)  # in the past: a reject row
    s.cancel(first)
    s.schedule(noop, at=2.0, period=0.5, label="p")
    clock.run_until(3.0)
    s.shutdown()
    frame = s.log.to_frame()
    stored = s.log.rows()
    assert len(stored) == len(frame) > 10
    for (_, row), as_dict in zip(frame.iterrows(), stored, strict=True):
        assert describe_row(row) == describe_row(as_dict)
