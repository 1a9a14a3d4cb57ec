"""The refresher: one thread per dashboard that turns scheduler activity into a few widget updates.

The scheduler only records (rows in its event log). The refresher polls what
changed (each part's cheap key: the log's row count, the clock time, the
filters) at most ``max_rate`` times per second, refreshes only the parts whose
key changed and whose own interval has passed, and every ``resync_every``
seconds re-sends the full state of the output widgets. This keeps a kernel far
below the ~1000 messages/s where Jupyter's IOPub rate limit and ZMQ's
high-water mark start dropping updates for good, and heals updates lost while
a Voila page was still connecting.

The clock (``clock=``) and the rate limit are injectable, so tests can drive
:meth:`Refresher.tick` with a fake clock and count updates exactly.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any

from ._base import Panel, Part

if TYPE_CHECKING:
    from ..scheduler import Scheduler

__all__ = ["Refresher", "active_refresher"]

_NO_KEY: Any = object()
_ACTIVE: dict[int, weakref.ReferenceType[Refresher]] = {}
_ACTIVE_LOCK = threading.Lock()


def active_refresher(scheduler: Scheduler) -> Refresher | None:
    """The newest refresher created for ``scheduler`` that is not closed, if any."""
    with _ACTIVE_LOCK:
        ref = _ACTIVE.get(id(scheduler))
    refresher = ref() if ref is not None else None
    if refresher is None or refresher.scheduler is not scheduler or refresher.closed:
        return None
    return refresher


class Refresher:
    """Refresh panels from one daemon thread, coalescing changes to at most ``max_rate`` per second.

    Args:
        panels: the panels to refresh (their :meth:`~Panel.parts`).
        scheduler: the scheduler they show. Creating a refresher for a
            scheduler replaces the previous one (a re-run notebook cell):
            the old one is stopped and its ``on_replaced`` callback called.
        max_rate: at most this many refresh rounds per second.
        resync_every: re-send the full state of the output widgets this often
            (seconds; 0 or ``None``: never).
        clock: the time source for the rate limit, the parts' intervals, the
            resync period and ``stop_after`` (default ``time.monotonic``).
        stop_after: stop the thread by itself after this many seconds
            (bounds its life in servers that keep kernels running, like Voila).
        on_replaced: called (once) when a newer refresher for the same
            scheduler replaces this one.

    >>> from tempsched_lab import Scheduler, VirtualClock
    >>> from tempsched_lab.widgets import LogPanel
    >>> s = Scheduler(VirtualClock())
    >>> panel = LogPanel(s)
    >>> fake = [0.0]
    >>> r = Refresher([panel], scheduler=s, max_rate=10, clock=lambda: fake[0])
    >>> r.tick(), r.tick()  # the second is within 0.1 s of the first
    (1, 0)
    >>> _ = s.schedule(print, at=1.0)
    >>> fake[0] = 0.1
    >>> r.tick(), "schedule" in panel.table.value
    (1, True)
    >>> r.close(); panel.close()
    """

    def __init__(
        self,
        panels: Iterable[Panel],
        *,
        scheduler: Scheduler | None = None,
        max_rate: float = 10.0,
        resync_every: float | None = 3.0,
        clock: Callable[[], float] = time.monotonic,
        stop_after: float | None = None,
        on_replaced: Callable[[], Any] | None = None,
    ) -> None:
        if not max_rate > 0:
            raise ValueError(f"max_rate={max_rate!r}: expected a positive number")
        self.panels: list[Panel] = list(panels)
        self.scheduler = scheduler
        self.max_rate = float(max_rate)
        self.min_interval = 1.0 / self.max_rate
        self.resync_every = resync_every or 0.0
        self.clock = clock
        self.stop_after = stop_after
        self.on_replaced = on_replaced
        self.parts: list[Part] = [part for panel in self.panels for part in panel.parts()]
        self._keys: dict[int, Hashable] = {}
        self._last_part: dict[int, float] = {}
        self._last_tick: float | None = None
        self._last_resync: float | None = None
        self._tick_lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._urgent = False
        self.thread: threading.Thread | None = None
        self.closed = False
        #: refresh rounds that did work, parts refreshed, full resyncs, refresh errors
        self.rounds = 0
        self.updates = 0
        self.resyncs = 0
        self.errors = 0
        self.last_error: BaseException | None = None
        if scheduler is not None:
            self._claim(scheduler)

    # -- the registry: one refresher per scheduler -----------------------------------------
    def _claim(self, scheduler: Scheduler) -> None:
        with _ACTIVE_LOCK:
            ref = _ACTIVE.get(id(scheduler))
            _ACTIVE[id(scheduler)] = weakref.ref(self)
        old = ref() if ref is not None else None
        if old is not None and old is not self and old.scheduler is scheduler:
            old._replaced()

    def _replaced(self) -> None:
        callback, self.on_replaced = self.on_replaced, None
        self.close()
        if callback is not None:
            callback()

    # -- one round ---------------------------------------------------------------------------
    def tick(self, *, force: bool = False) -> int:
        """One refresh round; returns how many parts were refreshed.

        Does nothing if the previous round was less than ``1 / max_rate``
        seconds ago (unless ``force``). Otherwise refreshes each part whose key
        changed and whose interval has passed (``force``: every part), then
        re-sends the output widgets' state when ``resync_every`` has passed.
        After :meth:`poke`, the parts' own intervals are skipped once.
        """
        with self._tick_lock:
            if self.closed:
                return 0
            now = self.clock()
            if (
                not force
                and self._last_tick is not None
                and now - self._last_tick < self.min_interval
            ):
                return 0
            self._last_tick = now
            urgent, self._urgent = self._urgent, False
            done = 0
            for i, part in enumerate(self.parts):
                if self._stop.is_set() and not force:
                    break
                last = self._last_part.get(i)
                if not (force or urgent) and last is not None and now - last < part.interval:
                    continue
                try:
                    key = part.key()
                    if not force and self._keys.get(i, _NO_KEY) == key:
                        continue
                    part.refresh()
                except Exception as exc:  # keep refreshing the other parts; count it
                    self.errors += 1
                    self.last_error = exc
                    continue
                self._keys[i] = key
                self._last_part[i] = now
                done += 1
            self.updates += done
            self.rounds += bool(done)
            if self.resync_every and (
                self._last_resync is None or now - self._last_resync >= self.resync_every
            ):
                if self._last_resync is not None:
                    self.resync()
                self._last_resync = now
            return done

    def resync(self) -> int:
        """Re-send the full state of every output widget (HTML, labels, images); returns how many.

        Heals updates lost by the front end (a Voila page still connecting,
        messages dropped by a rate limit). Never applied to inputs the user
        may be editing.
        """
        sent = 0
        for panel in self.panels:
            if panel.closed:
                continue
            for widget in panel.display_widgets():
                if getattr(widget, "comm", None) is not None:
                    widget.send_state()
                    sent += 1
        self.resyncs += 1
        return sent

    def poke(self) -> None:
        """Ask for a round as soon as the rate limit allows (after a user action).

        That round also refreshes parts whose own interval has not passed yet
        (plots), so a click shows its whole effect at once. Still at most
        ``max_rate`` rounds per second.
        """
        self._urgent = True
        self._wake.set()

    # -- the thread --------------------------------------------------------------------------
    def start(self) -> Refresher:
        """Start the daemon thread (returns at once; idempotent)."""
        if self.closed:
            raise RuntimeError("this refresher is closed; create a new one")
        if self.thread is None or not self.thread.is_alive():
            self._stop.clear()
            self.thread = threading.Thread(
                target=self._run, name="tempsched-refresher", daemon=True
            )
            self.thread.start()
        return self

    @property
    def running(self) -> bool:
        """Whether the thread is alive."""
        return self.thread is not None and self.thread.is_alive()

    def _run(self) -> None:
        started = self.clock()
        while not self._stop.is_set():
            if self.stop_after is not None and self.clock() - started >= self.stop_after:
                break
            try:
                self.tick()
            except Exception as exc:  # pragma: no cover - tick already catches part errors
                self.errors += 1
                self.last_error = exc
            self._wake.wait(self.min_interval)
            self._wake.clear()

    def stop(self, timeout: float | None = 5.0) -> bool:
        """Stop the thread and wait for it (up to ``timeout``); True if it ended."""
        self._stop.set()
        self._wake.set()
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def close(self) -> None:
        """Stop the thread and leave the registry. Idempotent."""
        self.stop()
        self.closed = True
        if self.scheduler is not None:
            with _ACTIVE_LOCK:
                ref = _ACTIVE.get(id(self.scheduler))
                if ref is not None and ref() is self:
                    del _ACTIVE[id(self.scheduler)]

    def __repr__(self) -> str:
        state = "running" if self.running else ("closed" if self.closed else "stopped")
        return (
            f"<Refresher {state}: {len(self.parts)} parts, max {self.max_rate:g}/s, "
            f"{self.updates} updates, {self.resyncs} resyncs, {self.errors} errors>"
        )
