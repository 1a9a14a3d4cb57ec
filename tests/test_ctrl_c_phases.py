"""Ctrl-C at each phase of a pool sweep ends the script and every worker (issue 41, finding 15).

The suite's Ctrl-C test once saw a script run on 30 s after Ctrl-C. The window: a process
pool starts its workers inside ``submit()``, through the fork server; a ``KeyboardInterrupt``
raised there (after the fork server forked the worker, before the pool registered it) left
a worker that no stop reached, computing the run after the script (2 of 2 tries before the
fix). The script here pauses inside the pool's launch of each worker and prints
``forked PID``; the test sends SIGINT exactly then, so every phase is hit each time.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from test_lab_processes import alive, environment, wait_for

pytestmark = pytest.mark.slow

PHASED_SWEEP = """
import os, pathlib, sys, time
from multiprocessing import popen_forkserver
from tempsched_lab.lab import Experiment, poisson

MARKS = pathlib.Path(sys.argv[1])

def slow(rate, horizon, *, seed):
    (MARKS / f"started-{rate}").write_text(str(os.getpid()))
    time.sleep(120)  # a run far longer than the test waits
    return poisson(rate, horizon, seed=seed)

if __name__ == "__main__":
    launch = popen_forkserver.Popen._launch
    def paused(self, process_obj):
        launch(self, process_obj)  # the fork server forked the worker: the pool has no pid yet
        print("forked", self.pid, flush=True)
        sys.stdin.readline()  # the test sends SIGINT now, then this line
    popen_forkserver.Popen._launch = paused
    experiment = Experiment(slow, grid={"rate": [10, 20, 30, 40, 50]}, fixed={"horizon": 0.1})
    try:
        experiment.run(workers=2, progress=None)
    except KeyboardInterrupt as stop:
        print("interrupted, kept", len(stop.results), flush=True)
        raise SystemExit(7)
"""

pytest.importorskip("psutil")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT and the fork server are POSIX")
@pytest.mark.parametrize("phase", [1, 2])
def test_ctrl_c_while_the_pool_starts_a_worker_leaves_no_worker(tmp_path, phase):
    script = tmp_path / "sweep.py"
    script.write_text(textwrap.dedent(PHASED_SWEEP))
    for attempt in range(3):  # bounded: each attempt hits the same window
        marks = tmp_path / f"marks-{attempt}"
        marks.mkdir()
        err_path = tmp_path / f"err-{attempt}.txt"
        with open(err_path, "w") as err:
            process = subprocess.Popen(
                [sys.executable, str(script), str(marks)],
                env=environment(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                start_new_session=True,
            )
        forked: list[int] = []
        lines: list[str] = []
        try:
            assert process.stdin is not None and process.stdout is not None
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:  # every line ends in one of the two below
                line = process.stdout.readline()
                lines.append(line)
                if not line or line.startswith("interrupted"):
                    break
                if line.startswith("forked"):
                    forked.append(int(line.split()[1]))
                    if len(forked) == phase:
                        process.send_signal(signal.SIGINT)  # inside the pool's submit()
                    with contextlib.suppress(BrokenPipeError):
                        process.stdin.write("\n")
                        process.stdin.flush()
            assert lines[-1].startswith("interrupted, kept 0"), (lines, err_path.read_text())
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                raise AssertionError("the script still ran 30 s after Ctrl-C") from None
            assert process.returncode == 7, err_path.read_text()
            assert len(forked) == phase  # no worker started after Ctrl-C
            pids = tuple(forked)
            wait_for(lambda p=pids: not any(alive(pid) for pid in p), 10, "the workers to end")
            stderr = err_path.read_text()
            assert "leaked semaphore" not in stderr and "Traceback" not in stderr, stderr
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            for pid in forked:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)
