"""Counting a queue design's steps: Python lines run inside the queue's own code.

A clock measures the machine; big-O talks about steps. Notebook 04 counts, with
``sys.settrace``, the lines executed in the ``tempsched_lab.core.queues`` modules and
in ``sortedcontainers`` (which the sorted dict design is built on): the same
count on every run and every machine, and a line that runs C code (a ``bisect``,
a list insert shifting a million entries) counts as one step. The lab counts the
same way, for a whole run, when an experiment asks for it (``count_steps=True``).

Tracing slows the traced thread down about 3 to 4 times (measured in
``benchmarks/bench_lab.py``), which is why it is off by default, and why the
wall time of a run that counts steps is not comparable with one that does not.
While counting, a tracer already installed in this thread (a debugger,
coverage) is suspended and put back afterwards.

>>> from tempsched_lab import Scheduler, VirtualClock
>>> clock = VirtualClock()
>>> s = Scheduler(clock, queue="heap", log=False)
>>> with StepCounter() as steps:
...     for t in (3.0, 1.0, 2.0):
...         _ = s.schedule(print, at=t)
>>> steps.count > 0
True
"""

from __future__ import annotations

import os
import sys
from types import FrameType, TracebackType
from typing import Any

__all__ = ["StepCounter", "queue_code_paths"]


def queue_code_paths() -> tuple[str, ...]:
    """Directories whose code is the queue's: ``tempsched_lab/queues`` and sortedcontainers."""
    from ..core import queues

    paths = [os.path.dirname(os.path.abspath(queues.__file__)) + os.sep]
    try:
        import sortedcontainers
    except ImportError:  # pragma: no cover - a core dependency
        pass
    else:
        paths.append(os.path.dirname(os.path.abspath(sortedcontainers.__file__)) + os.sep)
    return tuple(paths)


class StepCounter:
    """A context manager: ``count`` = lines run in the queue's code in this thread meanwhile."""

    def __init__(self) -> None:
        self.count = 0
        self._paths = queue_code_paths()
        self._inside: dict[Any, bool] = {}  # code object -> is it the queue's?
        self._previous: Any = None

    def _on_call(self, frame: FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        inside = self._inside.get(code)
        if inside is None:
            inside = self._inside[code] = os.path.abspath(code.co_filename).startswith(self._paths)
        return self._on_line if inside else None

    def _on_line(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            self.count += 1
        return self._on_line

    def __enter__(self) -> StepCounter:
        self._previous = sys.gettrace()
        sys.settrace(self._on_call)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        sys.settrace(self._previous)
