"""The example service as a real second process, for client tests (tests/test_remote_*.py)."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class Service:
    """``python -m tempsched_lab.serve.example`` started on 127.0.0.1: its URL and spill dir.

    ``port=0`` picks a free port; a restart passes the old one, so a client's URL stays.
    """

    def __init__(self, spill: Path, *, port: int = 0, args: tuple[str, ...] = ()) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tempsched_lab.serve.example",
                "--port",
                str(port),
                "--spill",
                str(spill),
                *args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        lines = self._lines(2, timeout=60.0)
        self.url = lines[0]
        self.spill = Path(lines[1].removeprefix("spill "))
        if not self.spill.is_absolute():
            self.spill = Path.cwd() / self.spill
        self.port = int(self.url.split(":")[2].split("/")[0])

    def _lines(self, n: int, timeout: float) -> list[str]:
        out: list[str] = []
        lines: queue.Queue[str] = queue.Queue()

        def read() -> None:  # the pipe is read by a thread: a timed get bounds the wait
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                lines.put(line)

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + timeout
        while len(out) < n:
            try:
                out.append(lines.get(timeout=max(deadline - time.monotonic(), 0.001)).strip())
            except queue.Empty:
                self.kill()
                raise AssertionError(f"the example service said {out} within {timeout} s") from None
        return out

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM: the scheduler shuts down, streams get ``closed``; returns the exit status."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        """SIGKILL: the process is gone at once, nothing said to anyone."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)
