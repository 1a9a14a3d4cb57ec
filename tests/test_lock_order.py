"""No lock is taken in opposite orders: shutdown never waits for a driving clock (issue 32).

A thread driving a virtual clock (``clock.play(rate)``, or a loop of ``advance``)
holds the clock's step lock while it calls into the scheduler, which takes the
scheduler's lock. ``shutdown()`` holds the scheduler's lock while it detaches from
the clock; if detaching took the step lock, each would wait for the other for good.
The notebook form of the same: re-running a cell that makes a *named* scheduler on
a playing clock shuts the old one down from inside the constructor.

Each scenario runs in a second interpreter, in a thread that the main thread joins
with a timeout: a deadlock fails the test with every thread's stack (faulthandler)
instead of hanging the session, and leaves no locked scheduler behind in it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: The longest the whole scenario may take before it counts as a deadlock (seconds);
#: it normally takes 8-16 s on the loaded 2-core machine.
WATCHDOG_S = 60

SCENARIO = textwrap.dedent(
    """
    import faulthandler, os, sys, threading, time, warnings
    from tempsched_lab import Scheduler, VirtualClock

    MODE, ITERATIONS, WALL_S, WATCHDOG_S = sys.argv[1], 150, 15.0, float(sys.argv[2])
    warnings.simplefilter("ignore")  # "a live scheduler named 'cell' exists": expected here
    clock = VirtualClock()
    stop = threading.Event()
    errors = []

    def drive():  # the other form: a thread that steps the clock by hand
        try:
            while not stop.is_set():
                clock.advance(0.25)
        except BaseException as exc:
            errors.append(exc)

    def cells(done):
        # a notebook cell re-run again and again while the clock plays: the same name
        # replaces (shuts down) the old scheduler; every other time the cell also
        # shuts its own down, waiting or not
        deadline = time.monotonic() + WALL_S
        for i in range(ITERATIONS):
            ran = threading.Event()
            s = Scheduler(clock, name="cell")
            s.schedule(ran.set, period=0.001)
            if not ran.wait(30):  # the driver fires it within a slice
                errors.append(f"iteration {i}: the new scheduler's task never ran")
                return
            if i % 3 == 1:
                s.shutdown(wait=False)
            elif i % 3 == 2:
                s.shutdown(wait=True)
            done.append(i)
            if time.monotonic() > deadline:
                return

    if MODE == "play":
        clock.play(1e5)
    else:
        driver = threading.Thread(target=drive, name="driver", daemon=True)
        driver.start()
    done = []
    cell = threading.Thread(target=cells, args=(done,), name="cells", daemon=True)
    cell.start()
    cell.join(WATCHDOG_S)
    if cell.is_alive():
        print(f"DEADLOCK after {len(done)} iterations; every thread's stack:", flush=True)
        faulthandler.dump_traceback(file=sys.stdout, all_threads=True)
        sys.stdout.flush()
        os._exit(3)
    stop.set()
    clock.pause()
    if clock.play_error is not None:
        errors.append(clock.play_error)
    print(f"iterations={len(done)} errors={errors!r}", flush=True)
    sys.exit(1 if errors else 0)
    """
)


@pytest.mark.parametrize("mode", ["play", "advance"])
def test_shutdown_and_named_re_creation_never_deadlock_with_a_driving_clock(mode):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCENARIO, mode, str(WATCHDOG_S)],
        capture_output=True,
        text=True,
        timeout=WATCHDOG_S + 60,  # the child's own watchdog reports first
        env=env,
        cwd=ROOT,
    )
    report = f"stdout:\n{done.stdout}\nstderr:\n{done.stderr[-4000:]}"
    assert done.returncode == 0, report
    iterations = int(done.stdout.split("iterations=")[1].split()[0])
    assert iterations >= 20, report  # the race was run many times, not once
