"""The lab's process pool seen from a script: Ctrl-C stops it at once, and a script without
a main guard gets one clear error instead of workers that run the script again.

Each test runs a real script in a second Python process (the pool's workers are its
children, started by the fork server), waits for what it asserts with bounded loops, and
checks what a user would see: the script's output, how soon it ends, and which of its
workers are left.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

psutil = pytest.importorskip("psutil")

ROOT = Path(__file__).resolve().parents[1]


def environment() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), path) if p)}


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


SLOW_SWEEP = """
import os, pathlib, sys, time
from tempsched_lab.lab import Experiment, poisson

MARKS = pathlib.Path(sys.argv[1])

def slow(rate, horizon, *, seed):
    (MARKS / f"started-{{rate}}").write_text(str(os.getpid()))
    time.sleep(120)  # a run far longer than the test waits
    return poisson(rate, horizon, seed=seed)

if __name__ == "__main__":
    experiment = Experiment(slow, grid={{"rate": [10, 20, 30, 40, 50]}}, fixed={{"horizon": 0.1}})
    try:
        experiment.run(workers=2, progress=None)
    except KeyboardInterrupt as stop:
        print("interrupted, kept", len(stop.results), flush=True)
        raise SystemExit(7)
"""


def wait_for(predicate, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds} s for {what}")
        time.sleep(0.05)  # polling a file system state, bounded by the deadline


def test_ctrl_c_during_a_pool_sweep_starts_nothing_more_and_leaves_no_worker(tmp_path):
    """Issue 32, finding 6: SIGINT to the main process (as Jupyter's interrupt sends it).
    Before: the runs queued in the pool's call queue still started, and the script ended
    when the workers had computed them."""
    script = tmp_path / "sweep.py"
    script.write_text(textwrap.dedent(SLOW_SWEEP.format()))
    marks = tmp_path / "marks"
    marks.mkdir()
    out_path, err_path = tmp_path / "out.txt", tmp_path / "err.txt"
    with open(out_path, "w") as out, open(err_path, "w") as err:  # no pipe a worker could hold
        process = subprocess.Popen(
            [sys.executable, str(script), str(marks)],
            env=environment(),
            stdout=out,
            stderr=err,
            start_new_session=True,  # its own group: everything it started can be ended below
        )
    pids: list[int] = []
    try:
        wait_for(lambda: len(list(marks.iterdir())) >= 2, 90, "two runs to start")
        started = sorted(p.name for p in marks.iterdir())
        pids = [int(p.read_text()) for p in marks.iterdir()]
        process.send_signal(signal.SIGINT)  # to the main process only, as Jupyter does
        interrupted = time.monotonic()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            raise AssertionError("the script still ran 30 s after Ctrl-C") from None
        took = time.monotonic() - interrupted
        stderr = err_path.read_text()
        assert process.returncode == 7, stderr
        assert "interrupted, kept 0" in out_path.read_text()
        assert took < 10, f"the script took {took:.1f} s to end after Ctrl-C"
        assert sorted(p.name for p in marks.iterdir()) == started  # nothing started after it
        wait_for(lambda: not any(alive(pid) for pid in pids), 5, "the workers to be gone")
        assert "leaked semaphore" not in stderr and "Traceback" not in stderr
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the script's group: its fork server too
        process.wait()
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


UNGUARDED = """
from tempsched_lab.lab import Experiment, poisson

experiment = Experiment(poisson, grid={"rate": [100, 200, 300]}, fixed={"horizon": 0.1})
results = experiment.run(workers=2, progress=None)
print("rows", len(results))
"""


def run_script(path: Path, seconds: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(path)],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=seconds,
    )


def test_a_script_without_a_main_guard_gets_one_clear_error_and_leaks_nothing(tmp_path):
    """Issue 34, item 5. Before: two bootstrapping tracebacks from the workers, a
    BrokenProcessPool and "10 leaked semaphore objects" at exit."""
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED)
    done = run_script(script)
    assert done.returncode == 1
    err = done.stderr
    assert err.count("Traceback") == 1, err
    assert "UnguardedMainError: run(workers=2) was called from the top level of the script" in err
    assert f"{script} (line 5)" in err and 'if __name__ == "__main__":' in err
    assert "leaked semaphore" not in err and "BrokenProcessPool" not in err
    assert "bootstrapping" not in err and "rows" not in done.stdout


def test_the_guarded_script_of_the_docs_runs_on_the_pool(tmp_path):
    page = (ROOT / "docs" / "lab.md").read_text()
    section = page.split("### From a script", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert 'if __name__ == "__main__":' in code and "run(workers=2)" in code
    script = tmp_path / "guarded.py"
    script.write_text(code)
    done = run_script(script)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "lateness_p99" in lines[0] and [line.split()[:2] for line in lines[-3:]] == [
        ["0", "100"],
        ["1", "200"],
        ["2", "300"],
    ]
    assert "Traceback" not in done.stderr and "leaked semaphore" not in done.stderr
