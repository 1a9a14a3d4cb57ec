"""One live service per spill root (issue 41, findings 2 and 10, and a refused start).

A :class:`~tempsched_lab.log.files.Lineage` root is held by the process whose log spills to
its newest run: a second one (another process, or another scheduler of this one) is
refused, naming the holder, instead of taking the live run for a killed one and numbering
rows with the same ``seq``. A restart after the holder ended (shut down or killed) starts
after every number the holder handed out. A child of ``os.fork()`` neither keeps the root
nor hangs on the parent's spill.
"""

from __future__ import annotations

import itertools
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from test_fork import fork_and_wait

from tempsched_lab import EventLog, VirtualClock
from tempsched_lab.log.files import Lineage
from tempsched_lab.log.files.rootlock import HOLDER, SpillRootBusyError
from tempsched_lab.log.files.spill import SegmentWriter
from tempsched_lab.log.schema import KIND_CODE
from tempsched_lab.restarts import continuing_scheduler

CHILD_TIMEOUT = 30.0


def _noop() -> None:
    return None


def test_a_second_scheduler_on_a_live_root_is_refused_naming_the_holder(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    first = continuing_scheduler(root, VirtualClock())
    first.schedule(_noop, delay=1.0)
    with pytest.raises(SpillRootBusyError) as refused:
        continuing_scheduler(root, VirtualClock())
    text = str(refused.value)
    assert f"process {os.getpid()}" in text and str(root) in text and "spill.lock" in text
    assert [run.number for run in Lineage.open(root).runs] == [1]  # nothing was created
    first.shutdown()  # its log's life ends: the root is free
    assert not (root / HOLDER).exists()
    second = continuing_scheduler(root, VirtualClock())
    assert second.log.first_seq == first.log.next_seq  # right after, no number twice
    second.shutdown()


def test_a_bad_option_leaves_no_run_directory_and_frees_the_root(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    with pytest.raises(TypeError, match="max_log_row"):
        continuing_scheduler(root, VirtualClock(), max_log_row=10)  # a misspelt name
    with pytest.raises(ValueError, match=r"max_(log_)?rows=-1"):
        continuing_scheduler(root, VirtualClock(), max_log_rows=-1)  # a value refused
    with pytest.raises(ValueError, match="executor"):
        continuing_scheduler(root, VirtualClock(), executor="nonsense")  # refused later on
    assert not root.exists()  # nothing was created, not even the root (issue 41)
    s = continuing_scheduler(root, VirtualClock())  # the root was let go each time
    assert s.log.spill_directory == str(root / "run-001")
    s.shutdown()


# -- two real processes on one root ------------------------------------------------------

_SERVICE = textwrap.dedent(
    """
    import sys
    from tempsched_lab import RealClock
    from tempsched_lab.log.files.rootlock import SpillRootBusyError
    from tempsched_lab.restarts import continuing_scheduler

    print("ready", flush=True)
    sys.stdin.readline()  # both processes start their schedulers at once
    try:
        s = continuing_scheduler(sys.argv[1], RealClock())
    except SpillRootBusyError as exc:
        print("refused", exc, flush=True)
        sys.exit(3)
    for i in range(int(sys.argv[2])):
        s.schedule(print, delay=3600 + i)
    assert s.log.flush()  # on disk; more rows in memory only: a kill loses them
    for i in range(50):
        s.schedule(print, delay=7200 + i)
    print("held", s.log.first_seq, s.log.next_seq, flush=True)  # numbers handed out
    if sys.stdin.readline().strip() == "stop":
        s.shutdown()
        print("stopped", flush=True)
    """
)


def _start(root: Path, rows: int) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVICE, str(root), str(rows)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert _line(process) == "ready"
    return process


def _line(process: subprocess.Popen[str]) -> str:
    """The process's next stdout line, waiting at most CHILD_TIMEOUT seconds for it."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], CHILD_TIMEOUT)
    if not ready:
        process.kill()
        pytest.fail(f"no line from the process in {CHILD_TIMEOUT:.0f} s")
    return process.stdout.readline().strip()


@pytest.mark.slow
def test_two_processes_started_on_one_root_one_is_always_refused_and_no_seq_is_used_twice(
    tmp_path: Path,
) -> None:
    root = tmp_path / "runs"
    handed_out: list[tuple[int, int]] = []
    for attempt in range(8):
        pair = [_start(root, 200 + 37 * attempt), _start(root, 100)]
        for process in pair:  # (a line each: both wait at the same point)
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        answers = [_line(process) for process in pair]
        refused = [i for i, answer in enumerate(answers) if answer.startswith("refused")]
        assert len(refused) == 1, answers
        loser, winner = pair[refused[0]], pair[1 - refused[0]]
        assert loser.wait(CHILD_TIMEOUT) == 3
        assert f"process {winner.pid} on host" in answers[refused[0]]  # the holder, named
        kind, first, stop = answers[1 - refused[0]].split()
        assert kind == "held"
        handed_out.append((int(first), int(stop)))
        if attempt % 2:  # a clean stop, or a SIGKILL: the next start must respect both
            assert winner.stdin is not None
            winner.stdin.write("stop\n")
            winner.stdin.flush()
            assert _line(winner) == "stopped"
            assert winner.wait(CHILD_TIMEOUT) == 0
        else:
            winner.send_signal(signal.SIGKILL)
            winner.wait(CHILD_TIMEOUT)
        for process in pair:
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
    ranges = sorted(handed_out)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(ranges)), ranges
    assert len(Lineage.open(root).runs) == 8  # one run per winner, none for a refused one


# -- fork ---------------------------------------------------------------------------------


def _row(i: int) -> tuple[Any, ...]:
    """A ``shutdown`` row (task_id, result, due, label, ready_size, queue_size, detail)."""
    return (KIND_CODE["shutdown"], float(i), time.time(), "t", -1, "x", 0.0, None, 0, 0, "d")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork()")
def test_flush_in_a_child_forked_while_the_logs_thread_writes_a_segment_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writing, go = threading.Event(), threading.Event()
    real_write = SegmentWriter.write

    def slow_write(self: SegmentWriter, chunk: Any) -> Any:
        writing.set()
        go.wait(CHILD_TIMEOUT)  # the parent forks while this write holds the spill's lock
        return real_write(self, chunk)

    monkeypatch.setattr(SegmentWriter, "write", slow_write)
    log = EventLog(spill=tmp_path / "spill", spill_rows=2, spill_backlog=2)
    try:
        for i in range(3):  # a chunk sealed (its write now under way), a row in the tail
            log.append(_row(i))
        assert writing.wait(CHILD_TIMEOUT)

        def child() -> dict[str, Any]:
            return {"flushed": log.flush(timeout=2)}

        # it returned (not a hang), saying not every row is on disk: the parent writes them
        assert fork_and_wait(child) == {"flushed": False}
    finally:
        go.set()
    assert log.flush(timeout=CHILD_TIMEOUT)
    assert log.close_spill()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork()")
def test_a_forked_child_does_not_keep_the_spill_root(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    first = continuing_scheduler(root, VirtualClock())
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # a child that lives on, as a worker process does, until told
        os.close(write_end)
        select.select([read_end], [], [], CHILD_TIMEOUT)
        os._exit(0)
    os.close(read_end)
    try:
        first.shutdown()  # the parent's log ends while the child still lives
        second = continuing_scheduler(root, VirtualClock())  # not refused: nobody holds it
        assert second.log.first_seq == first.log.next_seq
        second.shutdown()
    finally:
        os.close(write_end)
        os.waitpid(pid, 0)
