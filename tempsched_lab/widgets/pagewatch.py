"""Notice, from the kernel, that no browser page shows a dashboard any more.

Voila keeps a closed page's kernel alive (its unload request to shut the
kernel down is refused: ``'_xsrf' argument missing from POST`` with voila
0.5.13), and with it every thread the notebook started: a live scheduler and a
refresher kept a core 40-50 % busy per closed page. So the kernel must notice
by itself.

:class:`PageWatch` plays ping-pong with the page through a hidden
``ipywidgets.Play``: the kernel *pings* by switching ``playing`` off and on;
the Play model in the browser answers each switch-on by stepping ``value`` once
and sending it back (the *pong*). The browser does this from the message
handler, not from a timer, so background tabs (whose timers browsers throttle
to once a minute) still answer. No pong for ``timeout`` seconds after at least
one pong means no page shows the widget any more.

A kernel hears a pong only between cells: while a cell runs (Run All's later
cells, a long computation) the page's answers wait in the kernel's queue. So
the silence is counted only while the kernel is idle: a cell that runs is not
a gone page, and after it the page has ``timeout`` seconds again (the
IPython events ``pre_run_cell`` and ``post_run_cell``). Before this, two 3 s
cells after a dashboard in Voila, whose dashboards shut down with their page,
stopped the scheduler of a page that was still open.

>>> watch = PageWatch(timeout=5.0, clock=lambda: 0.0)
>>> watch.state()
'waiting'
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

import ipywidgets as W

__all__ = ["PageWatch", "in_voila"]

PageState = Literal["waiting", "alive", "gone"]

#: Environment variables Voila sets in the kernels it starts.
_VOILA_ENV = ("VOILA_KERNEL_ID", "VOILA_SERVER_URL", "VOILA_BASE_URL", "VOILA_REQUEST_URL")
#: Longest timer interval a browser accepts (2**31 - 1 ms); a longer one fires at once.
_NEVER_MS = 2_000_000_000


def in_voila() -> bool:
    """Whether this kernel was started by Voila (Voila sets ``VOILA_*`` variables in it).

    >>> import os
    >>> in_voila() == any(name in os.environ for name in _VOILA_ENV)
    True
    """
    return any(name in os.environ for name in _VOILA_ENV)


class PageWatch:
    """Ping-pong with the browser through a hidden ``Play`` widget; tells when the page is gone.

    Args:
        every: seconds between two pings (:meth:`ping_if_due`).
        timeout: the page is *gone* when no pong came for this long, after a first one.
        clock: time source (injectable for tests).

    States: ``"waiting"`` until the first pong (a page still loading, or no
    browser at all: a headless run), ``"alive"``, then ``"gone"`` when the
    pongs stop; ``"alive"`` again if they come back (a laptop woke up).

    >>> fake = [0.0]
    >>> watch = PageWatch(every=1.0, timeout=5.0, clock=lambda: fake[0])
    >>> watch.pong()          # what the browser's answer triggers
    >>> fake[0] = 4.0
    >>> watch.state()
    'alive'
    >>> fake[0] = 6.0
    >>> watch.state(), watch.pongs
    ('gone', 1)
    """

    def __init__(
        self,
        *,
        every: float = 1.0,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        events: Any = "auto",
    ) -> None:
        if not every > 0:
            raise ValueError(f"every={every!r}: expected a positive number of seconds")
        if not timeout > every:
            raise ValueError(f"timeout={timeout!r}: expected more than every={every!r} seconds")
        self.every = float(every)
        self.timeout = float(timeout)
        self.clock = clock
        self.widget = W.Play(
            value=0,
            min=0,
            max=2**31 - 2,
            interval=_NEVER_MS,
            show_repeat=False,
            layout=W.Layout(display="none"),
        )
        self.widget.add_class("tsl-pagewatch")
        self.widget.observe(self._on_value, names="value")
        self._lock = threading.Lock()
        self.pings = 0
        self.pongs = 0
        self.last_pong: float | None = None
        self._last_ping: float | None = None
        # the kernel's cells: silence while one runs says nothing about the page
        self.cell_running = False
        self._idle_since: float | None = None  # when the last cell ended
        self._events = _ipython_events() if events == "auto" else events
        if self._events is not None:
            self._events.register("pre_run_cell", self._cell_started)
            self._events.register("post_run_cell", self._cell_ended)

    def _cell_started(self, *_info: Any) -> None:
        with self._lock:
            self.cell_running = True

    def _cell_ended(self, *_result: Any) -> None:
        with self._lock:
            self.cell_running = False
            self._idle_since = self.clock()

    def _on_value(self, _change: Any) -> None:
        self.pong()

    def pong(self) -> None:
        """Record an answer from a page (called when the browser steps the Play)."""
        with self._lock:
            self.pongs += 1
            self.last_pong = self.clock()

    def ping(self) -> None:
        """Ask every page showing the widget to answer (switch ``playing`` off, then on)."""
        self.pings += 1
        self._last_ping = self.clock()
        if getattr(self.widget, "comm", None) is None:
            return
        self.widget.playing = False
        self.widget.playing = True

    def ping_if_due(self) -> bool:
        """:meth:`ping` if ``every`` seconds passed since the last ping; True if it pinged."""
        now = self.clock()
        if self._last_ping is not None and now - self._last_ping < self.every:
            return False
        self.ping()
        return True

    def state(self) -> PageState:
        """``"waiting"`` (no pong yet), ``"alive"``, or ``"gone"`` (no pong for ``timeout``
        while the kernel could hear one: not while a cell runs, nor ``timeout`` after it).

        >>> fake = [0.0]
        >>> watch = PageWatch(every=1.0, timeout=5.0, clock=lambda: fake[0], events=None)
        >>> watch.pong(); watch._cell_started()
        >>> fake[0] = 60.0          # a cell ran a minute: the pongs wait in the kernel's queue
        >>> watch.state()
        'alive'
        >>> watch._cell_ended(); fake[0] = 64.0
        >>> watch.state()           # 4 s after the cell: the page's answers can come now
        'alive'
        >>> fake[0] = 66.0
        >>> watch.state()
        'gone'
        """
        with self._lock:
            last, running, idle = self.last_pong, self.cell_running, self._idle_since
        if last is None:
            return "waiting"
        if running:
            return "alive"
        heard_from = last if idle is None else max(last, idle)
        return "gone" if self.clock() - heard_from > self.timeout else "alive"

    def close(self) -> None:
        """Close the widget (no more pings reach a page) and stop following the cells."""
        if self._events is not None:
            for name, callback in (
                ("pre_run_cell", self._cell_started),
                ("post_run_cell", self._cell_ended),
            ):
                with contextlib.suppress(ValueError):  # not registered any more
                    self._events.unregister(name, callback)
            self._events = None
        self.widget.close()

    def __repr__(self) -> str:
        return f"<PageWatch {self.state()}: {self.pings} pings, {self.pongs} pongs>"


def _ipython_events() -> Any:
    """The running IPython's event manager (a kernel's), or ``None`` outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipywidgets depends on IPython
        return None
    shell = get_ipython()
    return None if shell is None else shell.events
