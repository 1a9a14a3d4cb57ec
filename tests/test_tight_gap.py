"""A restart after a SIGKILL names a gap no wider than the rows lost, plus less than STEP
(issue 42, item 4: "a few lost rows are not announced as 16,382").

A spilled log stores how far it numbered its rows in ``numbered.bin`` every
:data:`~tempsched_lab.log.files.numbered.STEP` rows (64), before it numbers them. A real
process records rows on a lineage's root, says how many, and is killed with ``SIGKILL``;
the restart's gap (the numbers from the disk's end to the next run's first ``seq``) must
hold every number the process gave a row (no ``seq`` used twice) and at most ``STEP``
numbers more. Before ``numbered.bin`` the gap ran to the reservation: up to a whole chunk
of 16,384 numbers.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tempsched_lab.log.files import Lineage
from tempsched_lab.log.files.numbered import STEP

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")

#: seconds a child may take to start and record its rows
WAIT = 60.0

_QUIET = textwrap.dedent(
    """
    import sys
    from tempsched_lab import VirtualClock
    from tempsched_lab.restarts import continuing_scheduler

    root, rows, flush_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    s = continuing_scheduler(root, VirtualClock())
    for i in range(rows):  # a schedule() is one row
        s.schedule(print, delay=1.0 + i)
        if i == flush_at:
            assert s.log.flush()
    print(s.log.first_seq, s.log.next_seq, flush=True)
    sys.stdin.read()  # until killed
    """
)

_BUSY = textwrap.dedent(
    """
    import os, sys
    from tempsched_lab import VirtualClock
    from tempsched_lab.restarts import continuing_scheduler

    s = continuing_scheduler(sys.argv[1], VirtualClock())
    # every row handed out (to the pipe) under the lock, before the next one is numbered
    s.log.tap(lambda row: os.write(1, b"%d\\n" % row["seq"]))
    i = 0
    while True:
        s.schedule(print, delay=1.0 + i)
        i += 1
        if i % 5000 == 0:
            s.log.flush()
    """
)


def _run(code: str, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _kill(child: subprocess.Popen[bytes]) -> bytes:
    """SIGKILL ``child``; the rest of its output."""
    child.send_signal(signal.SIGKILL)
    out, _ = child.communicate(timeout=WAIT)
    assert child.returncode == -signal.SIGKILL
    return out


@pytest.mark.parametrize(
    ("rows", "flush_at"),
    [
        pytest.param(7, -1, id="few"),
        pytest.param(1_000, 300, id="after-a-flush", marks=pytest.mark.slow),
        pytest.param(20_000, 16_500, id="past-a-chunk", marks=pytest.mark.slow),
        pytest.param(40_000, 39_990, id="just-after-a-flush", marks=pytest.mark.slow),
    ],
)
def test_a_killed_process_gap_is_at_most_step_numbers_wider_than_its_lost_rows(
    tmp_path: Path, rows: int, flush_at: int
) -> None:
    root = tmp_path / "runs"
    for round_ in range(2):  # the second is a restart of a killed run, killed in its turn
        child = _run(_QUIET, str(root), str(rows), str(flush_at))
        assert child.stdout is not None
        line = child.stdout.readline()  # it has recorded its rows (or failed: no line)
        if not line:
            _, err = child.communicate(timeout=WAIT)
            pytest.fail(f"the child failed: {err.decode()[-2000:]}")
        first, numbered = map(int, line.split())
        _kill(child)
        lineage = Lineage.open(root)
        killed = lineage.runs[-1]
        assert killed.first_seq == first and not killed.closed
        lost = numbered - killed.on_disk  # rows the child numbered that never reached its disk
        announced = killed.end - killed.on_disk
        assert lost >= 0
        # every number it gave a row is in the gap (none used again), and at most STEP more
        # (the bound is stored before rows are numbered: STEP more once the last row took
        # the last number of the previous bound)
        assert numbered <= killed.end <= numbered + STEP, (round_, first, numbered, killed)
        assert lost <= announced <= lost + STEP
        if announced:
            (gap,) = [g for g in lineage.gaps if g.first == killed.on_disk]
            assert gap.last == killed.end - 1
            assert f"up to {killed.end - 1} at most were given to rows" in gap.why
        assert lineage.next_seq == killed.end  # where the next run starts


@pytest.mark.slow
def test_a_process_killed_while_it_hands_rows_out_is_restarted_after_all_of_them(
    tmp_path: Path,
) -> None:
    """Killed at a random moment while each row goes to a reader (a tap writing to a pipe) as
    it is numbered: the restart starts after the last row handed out, within STEP + 1."""
    root = tmp_path / "runs"
    for round_ in range(4):
        child = _run(_BUSY, str(root))
        assert child.stdout is not None
        seen = b""
        deadline = time.monotonic() + WAIT
        want = 2_000 + 3_000 * round_  # (somewhere in a chunk, flushed every 5,000 rows)
        while seen.count(b"\n") < want and time.monotonic() < deadline:
            data = os.read(child.stdout.fileno(), 65536)
            if not data:
                break
            seen += data
        seen += _kill(child)
        handed = [int(line) for line in seen.split(b"\n")[:-1]]  # (a cut last line dropped)
        assert len(handed) >= want, child.stderr.read().decode()[-2000:] if child.stderr else ""
        killed = Lineage.open(root).runs[-1]
        last = handed[-1]
        # no number handed out is used again; the row after it may have been numbered, no more
        # than STEP numbers past that are announced
        assert last < killed.end <= last + 1 + STEP, (round_, last, killed)
        assert killed.on_disk <= last + 1


def test_a_store_cut_short_leaves_the_other_slot_whole(tmp_path: Path) -> None:
    """A kill in the middle of a store damages one slot at most: the reader takes the other
    (the previous bound still bounds every row); a file with no whole slot says nothing."""
    from tempsched_lab.log.files.numbered import NUMBERED, open_numbered, read_numbered

    path = tmp_path / NUMBERED
    mark = open_numbered(str(path), 128)
    assert mark is not None
    mark[0:16] = (192).to_bytes(8, "little") + b"\xff" * 8  # slot A cut short: a torn store
    mark.flush()
    assert read_numbered(path) == 128  # slot B, the previous bound
    mark[16:32] = b"\x00" * 16  # both damaged (zeros are no slot: the check is ~bound)
    mark.flush()
    assert read_numbered(path) is None
    mark.close()
    path.write_bytes(b"\x01" * 5)
    assert read_numbered(path) is None  # short
