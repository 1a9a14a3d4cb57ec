"""How far a sweep has got: runs done, runs left, an estimate of the time to go.

In a Jupyter kernel, :class:`Progress` shows an ipywidgets bar with a line of
text beside it; elsewhere (a script, a terminal, CI) it writes plain lines to
``stderr``: one when the sweep starts, then at most one every ``every``
seconds, and one at the end. It is updated from the thread that runs the sweep
(the notebook's own), at most ~10 times a second.

The estimate is the time left at the pace of the runs finished so far in this
call (runs kept from an earlier call do not count toward the pace).

>>> import io
>>> out = io.StringIO()
>>> ticks = iter([0.0, 0.0, 2.0, 4.0, 5.0])
>>> p = Progress(4, mode="lines", stream=out, every=0.0, clock=lambda: next(ticks))
>>> p.update(1); p.update(2); p.close()
>>> print(out.getvalue(), end="")
lab: 0 of 4 runs done, 4 left
lab: 1 of 4 runs done, 3 left, about 6.000 s to go
lab: 2 of 4 runs done, 2 left, about 4.000 s to go
lab: stopped: 2 of 4 runs done (kept in experiment.results), 2 left
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO, Any

from ..time.scale import fmt_duration

__all__ = ["Progress", "in_notebook"]


def in_notebook() -> bool:
    """True inside a Jupyter kernel (where a widget can show), False in scripts and terminals."""
    ipython = sys.modules.get("IPython")
    if ipython is None or "ipykernel" not in sys.modules:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class Progress:
    """Runs done and left, and an estimate; a widget in notebooks, lines elsewhere.

    Args:
        total: runs in the sweep.
        done: runs already done when it starts (kept from an earlier call).
        mode: ``"auto"`` (a widget in a Jupyter kernel, else lines),
            ``"widget"``, ``"lines"``, or ``None`` for nothing at all.
        stream: where lines go (default ``sys.stderr``).
        every: seconds between two lines at least (the first and the last are
            always written).
        clock: a monotonic time source (injectable for tests).
    """

    #: seconds between two widget updates at least (~10 updates a second)
    WIDGET_INTERVAL = 0.1

    def __init__(
        self,
        total: int,
        *,
        done: int = 0,
        mode: str | None = "auto",
        stream: IO[str] | None = None,
        every: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if mode not in ("auto", "widget", "lines", None):
            raise ValueError(f"progress={mode!r}: expected 'auto', 'widget', 'lines' or None")
        if mode == "auto":
            mode = "widget" if in_notebook() else "lines"
        self.mode = mode
        self.total = total
        self.done = self._first = done
        self._clock = clock
        self._started = clock()
        self._stream = stream
        self._every = every
        self._last = -float("inf")
        self.widget: Any = None
        if mode == "widget":
            self._make_widget()
        self._show(force=True)

    # -- text --------------------------------------------------------------------------
    def estimate(self, now: float | None = None) -> float | None:
        """Seconds left at the pace of this call's runs so far (``None`` before the first)."""
        fresh = self.done - self._first
        if fresh <= 0:
            return None
        elapsed = (self._clock() if now is None else now) - self._started
        return elapsed / fresh * (self.total - self.done)

    def text(self, now: float | None = None) -> str:
        """``3 of 12 runs done, 9 left, about 4.500 s to go``."""
        left = self.total - self.done
        line = f"{self.done:,} of {self.total:,} runs done, {left:,} left"
        estimate = self.estimate(now)
        if estimate is not None and left:
            line += f", about {fmt_duration(estimate)} to go"
        return line

    # -- updates -------------------------------------------------------------------------
    def begin(self, total: int, *, done: int = 0) -> None:
        """A sweep of ``total`` runs starts now, ``done`` of them kept from before.

        ``Experiment.run(progress=bar)`` calls it, so a bar made (and shown) in an earlier cell
        counts from the sweep's start: under Voila a cell's outputs reach the page when the cell
        has run, so a bar shown by the sweep's own cell would come only at its end.

        >>> import io
        >>> out = io.StringIO()
        >>> bar = Progress(1, mode="lines", stream=out)
        >>> bar.begin(3)
        >>> out.getvalue().splitlines()[-1]
        'lab: 0 of 3 runs done, 3 left'
        """
        self.total = total
        self.done = self._first = done
        self._started = self._clock()
        self._last = -float("inf")
        if self.mode == "widget":
            self._bar.max = max(total, 1)
            self._bar.bar_style = ""
        self._show(force=True)

    def update(self, done: int) -> None:
        """``done`` runs are finished now."""
        self.done = done
        self._show(force=done >= self.total)

    def close(self, error: BaseException | None = None) -> None:
        """The sweep ended: finished, stopped by an error or interrupted (``error``)."""
        elapsed = self._clock() - self._started
        if self.done >= self.total and error is None:
            final = f"{self.total:,} runs done in {fmt_duration(elapsed)}"
            style = "success"
        else:
            why = "stopped" if error is None else f"stopped by {type(error).__name__}"
            final = (
                f"{why}: {self.done:,} of {self.total:,} runs done (kept in "
                f"experiment.results), {self.total - self.done:,} left"
            )
            style = "danger"
        if self.mode == "lines":
            self._write(final)
        elif self.mode == "widget":
            self._bar.value = self.done
            self._bar.bar_style = style
            self._label.value = final

    def _show(self, force: bool = False) -> None:
        now = self._clock()
        if self.mode is None:
            return
        interval = self.WIDGET_INTERVAL if self.mode == "widget" else self._every
        if not force and now - self._last < interval:
            return
        self._last = now
        if self.mode == "lines":
            self._write(self.text(now))
        else:
            self._bar.value = self.done
            self._label.value = self.text(now)

    def _write(self, line: str) -> None:
        stream = self._stream if self._stream is not None else sys.stderr
        stream.write(f"lab: {line}\n")
        stream.flush()

    def _make_widget(self) -> None:
        import ipywidgets as widgets
        from IPython.display import display

        self._bar = widgets.IntProgress(
            value=self.done,
            min=0,
            max=max(self.total, 1),
            description="runs",
            layout=widgets.Layout(width="40%"),
        )
        self._label = widgets.Label(value="")
        self.widget = widgets.HBox([self._bar, self._label])
        display(self.widget)  # type: ignore[no-untyped-call]
