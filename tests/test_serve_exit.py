"""A script that serves a spilled log and ends without ``close()`` while readers catch up
exits with status 0, promptly (issue 41, finding 6: it aborted, status 134, or never
exited: the feed's daemon threads were inside pyarrow at interpreter finalization).

Each run is a real second process: it serves a log whose rows are mostly on disk,
starts readers that catch up from the first row (streams and Arrow ranges), waits
until they are reading, and ends.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("pyarrow")
pytest.importorskip("httpx")

pytestmark = pytest.mark.slow

RUNS = 5
#: seconds from the script's last line to the process's end
EXIT_BOUND_S = 10.0
SCRIPT = """
import sys, tempfile, threading, time
import httpx
from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.serve import serve

def job():
    return None

spill = tempfile.mkdtemp()
s = Scheduler(VirtualClock(start=0.0), log_spill=spill, max_log_rows=2_000)
s.schedule_many([(job, 1.0 + i * 1e-3, ()) for i in range(100_000)])
s.clock.run_until_idle()
server = serve(s, poll=0.01)  # never closed: the script just ends
reading = threading.Barrier(7)

def stream():
    with httpx.Client(timeout=30) as client:
        with client.stream("GET", server.url + "/v1/rows?after=-1") as answer:
            for i, _ in enumerate(answer.iter_bytes()):
                if i == 0:
                    reading.wait()

def ranges():
    with httpx.Client(timeout=30) as client:
        with client.stream("GET", server.url + "/v1/log?start=0&stop=200000") as answer:
            for i, _ in enumerate(answer.iter_bytes()):
                if i == 0:
                    reading.wait()

for target in [stream] * 4 + [ranges] * 2:
    threading.Thread(target=target, daemon=True).start()
reading.wait(30)
print("reading", time.time(), flush=True)
"""


@pytest.mark.timeout(RUNS * 150)
def test_a_script_that_ends_without_close_while_readers_catch_up_exits_0() -> None:
    statuses = []
    for _ in range(RUNS):
        run = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            capture_output=True,
            text=True,
            timeout=EXIT_BOUND_S + 120,  # the script's own work (100,000 rows) comes first
        )
        ended = time.time()
        assert "reading" in run.stdout, run.stderr[-2_000:]
        exit_s = ended - float(run.stdout.split()[1])
        statuses.append((run.returncode, round(exit_s, 1)))
        assert run.returncode == 0, (statuses, run.stderr[-2_000:])
        assert exit_s < EXIT_BOUND_S, statuses
    print("exit statuses and seconds from the last line to the end:", statuses)
