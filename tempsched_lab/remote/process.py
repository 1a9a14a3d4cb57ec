"""The example service as a process of its own: start it, kill it, start it again on the same port.

For notebook 11 and the tests: ``python -m tempsched_lab.serve.example`` runs in a
child process (the way a real service runs beside a notebook), and
:class:`ExampleService` holds its URL and its run's spill directory.

>>> service = ExampleService.start(spill="/tmp/tsl-example-runs")  # doctest: +SKIP
>>> service.url  # doctest: +SKIP
'http://127.0.0.1:40187/scheduler'
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import weakref
from pathlib import Path

__all__ = ["ExampleService"]


def _end(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(30)


class ExampleService:
    """A running ``tempsched_lab.serve.example`` process: ``url``, ``spill``, ``port``, ``proc``."""

    def __init__(self, proc: subprocess.Popen[str], url: str, spill: Path, args: list[str]) -> None:
        self.proc = proc
        self.url = url
        self.spill = spill
        self.port = int(url.split(":")[2].split("/")[0])
        self._args = args
        # a service started from a notebook ends with its kernel, not later
        self._finalizer = weakref.finalize(self, _end, proc)

    @classmethod
    def start(
        cls,
        *,
        spill: str | os.PathLike[str],
        port: int = 0,
        token_file: str | os.PathLike[str] | None = None,
        args: tuple[str, ...] = (),
        timeout: float = 60.0,
    ) -> ExampleService:
        """Start the service (spilling each run to a new ``spill/run-NNN``) and wait for its URL.

        Raises ``RuntimeError`` (with what it wrote on stderr) if it does not say its URL
        within ``timeout`` seconds.
        """
        command = ["--port", str(port), "--spill", os.fspath(spill), *args]
        if token_file is not None:
            command += ["--token-file", os.fspath(token_file)]
        return cls._run(command, timeout)

    @classmethod
    def _run(cls, command: list[str], timeout: float) -> ExampleService:
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])  # this tree's package, also in the child
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        proc = subprocess.Popen(
            [sys.executable, "-m", "tempsched_lab.serve.example", *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        lines: queue.Queue[str] = queue.Queue()

        def read() -> None:  # a thread reads the pipe: a timed get bounds the wait
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line.strip())

        def drain() -> None:  # stderr read to the end, so the child never blocks on it
            assert proc.stderr is not None
            for _ in proc.stderr:
                pass

        threading.Thread(target=read, daemon=True).start()
        said: list[str] = []
        try:
            while len(said) < 2:
                said.append(lines.get(timeout=timeout))
        except queue.Empty:
            proc.kill()
            _, err = proc.communicate(timeout=10)
            raise RuntimeError(
                f"the example service did not start (it said {said}): {err[-2000:]}"
            ) from None
        threading.Thread(target=drain, daemon=True).start()
        spill = Path(said[1].removeprefix("spill "))
        return cls(proc, said[0], spill if spill.is_absolute() else Path.cwd() / spill, command)

    def restart(self, timeout: float = 60.0) -> ExampleService:
        """Start it again on the same port (a new run, spilling to the next ``run-NNN``)."""
        command = list(self._args)
        command[command.index("--port") + 1] = str(self.port)
        return self._run(command, timeout)

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM: its scheduler shuts down, streams get ``closed``; returns its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        """SIGKILL: the process is gone at once, nothing said to anyone (a crash)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)

    @property
    def alive(self) -> bool:
        """Whether the process runs."""
        return self.proc.poll() is None

    def __repr__(self) -> str:
        return f"<ExampleService {self.url} ({'running' if self.alive else 'ended'})>"
