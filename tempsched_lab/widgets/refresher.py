"""The refresher: one thread per dashboard that turns scheduler activity into consistent frames.

Each round takes **one** moment of the scheduler (a
:class:`~tempsched_lab.widgets.scene.Scene`), renders every part whose content
changed from that same scene, and applies all the widget writes together at
the end: a screen never mixes two moments. Rounds happen at most ``max_rate``
times per second, and rendering is paced to use at most ``cpu_budget`` of one
core on average (pictures are the costly part); a user action *pokes* the
refresher for a round at once. Every ``resync_every`` seconds the output
widgets' full state is re-sent. This keeps a kernel far below the ~1000
messages/s where Jupyter's IOPub rate limit and ZMQ's high-water mark start
dropping updates for good, and heals updates lost while a Voila page was still
connecting.

With a :class:`~tempsched_lab.widgets.pagewatch.PageWatch`, the refresher also
pings the page every second and, when no page answers any more, either pauses
(it renders nothing until a page answers again) or calls ``on_page_gone`` and
ends (a dashboard shuts its scheduler down; see ``Dashboard(on_page_close=...)``).

Where the cells run in an event loop (ipykernel, marimo), the refresher hands
each round to that loop (a :class:`~tempsched_lab.widgets.loopdriver.LoopDriver`)
and keeps its thread for the pacing: hosts that drop messages sent from a
background thread (Colab) still update; while a cell blocks the loop (Run All),
rounds are drawn in the thread, so views keep filling.

The clock (``clock=``) and the rate limit are injectable, so tests can drive
:meth:`Refresher.tick` with a fake clock and count updates exactly.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ._base import Panel, Part, Stage
from .loopdriver import LoopDriver, kernel_loop
from .pagewatch import PageWatch
from .scene import LogSource, Scene

if TYPE_CHECKING:
    from ..core.scheduler import Scheduler

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


class _Slot:
    """What the refresher remembers about one part: its last keys, render time and cost."""

    __slots__ = ("cost", "drift", "key", "last", "panel", "part")

    def __init__(self, panel: Panel, part: Part) -> None:
        self.panel = panel
        self.part = part
        self.key: Hashable = _NO_KEY
        self.drift: Hashable = _NO_KEY
        self.last: float | None = None
        self.cost = 0.0


class Refresher:
    """Render panels from one daemon thread: one scene per round, at most ``max_rate`` rounds/s.

    Args:
        panels: the panels to refresh (their :meth:`~Panel.parts`).
        scheduler: the scheduler they show. Creating a refresher for a
            scheduler replaces the previous one (a re-run notebook cell):
            the old one is stopped and its ``on_replaced`` callback called.
        source: where scenes come from (default: the first panel's source).
        max_rate: at most this many refresh rounds per second.
        cpu_budget: after a round that took ``c`` seconds of this thread's CPU,
            wait at least ``c * (1 - cpu_budget) / cpu_budget`` before the next
            one (unless poked). 1 disables the pacing.
        resync_every: re-send the full state of the output widgets this often
            (seconds; 0 or ``None``: never).
        clock: the time source for the rate limit, the parts' intervals, the
            resync period and ``stop_after`` (default ``time.monotonic``).
        stop_after: stop the thread by itself after this many seconds.
        watch: a :class:`PageWatch` to ping every round.
        on_page_gone: with a ``watch``: ``None`` pauses rendering while no page
            answers; a callable is called once (in the refresher's thread) and
            the thread ends.
        on_replaced: called (once) when a newer refresher for the same
            scheduler replaces this one.
        loop: the event loop rounds are drawn on (``"auto"``: the loop
            running in the creating thread, a notebook cell's, if any;
            ``None``: the refresher's own thread draws every round).
        patience: seconds a round waits for a busy loop before the thread draws it.

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
    >>> r.tick(), "schedule" in panel.table.value, panel.shown is r.scene
    (1, True, True)
    >>> r.close(); panel.close()
    """

    def __init__(
        self,
        panels: Iterable[Panel],
        *,
        scheduler: Scheduler | None = None,
        source: LogSource | None = None,
        max_rate: float = 10.0,
        cpu_budget: float = 0.35,
        resync_every: float | None = 3.0,
        clock: Callable[[], float] = time.monotonic,
        stop_after: float | None = None,
        watch: PageWatch | None = None,
        on_page_gone: Callable[[], Any] | None = None,
        on_replaced: Callable[[], Any] | None = None,
        loop: asyncio.AbstractEventLoop | str | None = "auto",
        patience: float = 0.2,
    ) -> None:
        if not max_rate > 0:
            raise ValueError(f"max_rate={max_rate!r}: expected a positive number")
        if not 0 < cpu_budget <= 1:
            raise ValueError(f"cpu_budget={cpu_budget!r}: expected a share of one core in (0, 1]")
        self.panels: list[Panel] = list(panels)
        if source is None:
            if self.panels:
                source = self.panels[0].source
            elif scheduler is not None:
                source = LogSource(scheduler)
            else:
                raise ValueError("Refresher: give panels, a scheduler or a source")
        self.source = source
        self.scheduler = scheduler if scheduler is not None else source.scheduler
        self.max_rate = float(max_rate)
        self.min_interval = 1.0 / self.max_rate
        self.cpu_budget = float(cpu_budget)
        self.resync_every = resync_every or 0.0
        self.clock = clock
        self.stop_after = stop_after
        self.watch = watch
        self.on_page_gone = on_page_gone
        self.on_replaced = on_replaced
        if isinstance(loop, str):
            if loop != "auto":
                raise ValueError(f"loop={loop!r}: expected 'auto', an event loop or None")
            loop = kernel_loop()
        #: hands rounds to the kernel's event loop (see :mod:`.loopdriver`)
        self.driver = LoopDriver(loop, patience=patience)
        self._slots = [_Slot(panel, part) for panel in self.panels for part in panel.parts()]
        #: panels added with ``own=True`` (closed with the refresher)
        self._owned: list[Panel] = []
        self._last_tick: float | None = None
        self._last_early: float | None = None
        self._last_resync: float | None = None
        self._tick_lock = threading.RLock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._urgent = False
        self.thread: threading.Thread | None = None
        self.closed = False
        #: the scene of the last round that rendered something
        self.scene: Scene | None = None
        #: rendering is paused because no page answers the watch
        self.paused = False
        #: rounds that did work, parts rendered, full resyncs, refresh errors
        self.rounds = 0
        self.updates = 0
        self.resyncs = 0
        #: rounds dropped half-drawn because a click asked for a newer moment
        self.dropped = 0
        self.errors = 0
        self.last_error: BaseException | None = None
        #: CPU seconds of the last round that did work, and of the last idle part drawn
        self.last_cost = 0.0
        self.idle_cost = 0.0
        #: why the thread ended: "closed", "stop_after", "page gone" (None while running)
        self.ended: str | None = None
        if self.scheduler is not None:
            self._claim(self.scheduler)

    @property
    def parts(self) -> list[Part]:
        """Every panel's parts, in refresh order."""
        return [slot.part for slot in self._slots]

    def add(self, panel: Panel, *, own: bool = False) -> None:
        """Refresh ``panel`` too, from the next round on (``own``: close it with the refresher).

        >>> from tempsched_lab import Scheduler, VirtualClock
        >>> from tempsched_lab.widgets import LogPanel
        >>> s = Scheduler(VirtualClock())
        >>> r = Refresher([], scheduler=s, loop=None)
        >>> r.add(LogPanel(s), own=True)
        >>> r.tick(), len(r.parts) > 0
        (1, True)
        >>> r.close(); r.panels[0].closed
        True
        """
        with self._tick_lock:
            self.panels.append(panel)
            self._slots.extend(_Slot(panel, part) for part in panel.parts())
            if own:
                self._owned.append(panel)

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
    def tick(self, *, force: bool = False, hurry: bool = False) -> int:
        """One refresh round from one new scene; returns how many parts were rendered.

        Does nothing if the previous round was less than ``1 / max_rate``
        seconds ago (unless ``force``). Otherwise takes one moment of the
        scheduler and renders each part whose key changed, or whose drift
        key changed and whose interval passed (``force``: every part), applies
        every write at once, then re-sends the output widgets' state when
        ``resync_every`` has passed. After :meth:`poke`, drift intervals are
        skipped once, so a click shows its whole effect at once. ``hurry``: a
        round now whatever the rate limit, drawing only what changed (a caller
        that shows several views in one frame, :class:`SideBySide`).
        """
        with self._tick_lock:
            if self.closed:
                return 0
            now = self.clock()
            if not (force or hurry) and self._too_soon(now):
                # A click's round starts at once, not after the rest of 1 / max_rate (up to
                # 100 ms of the ~150 ms a click may take to reach every panel). One early
                # round per 1 / max_rate: a stream of pokes still makes at most 2 x max_rate.
                early = self._last_early
                if not self._urgent or (early is not None and now - early < self.min_interval):
                    return 0
                self._last_early = now
            self._last_tick = now
            urgent, self._urgent = self._urgent or hurry, False
            scene = self.source.scene()
            outer = Stage.current()  # a caller that publishes several views as one frame
            stage = Stage()
            rendered: list[tuple[_Slot, Hashable, Hashable]] = []
            with stage.collect():
                for panel in self.panels:
                    if self._urgent and not (force or urgent):
                        # a click came in while drawing: drop this frame (the screen keeps the
                        # last whole one) and draw the click's moment next, at once
                        self.dropped += 1
                        return 0
                    self._render_panel(panel, scene, now, force or urgent, force, rendered)
                if not rendered and not (force or urgent or self._urgent):
                    self._render_idle(scene)
            if outer is not None:
                outer.absorb(stage)
            else:
                stage.apply()
            for slot, key, drift in rendered:
                slot.key, slot.drift, slot.last = key, drift, now
            for panel in self.panels:
                panel.shown = scene
            done = len(rendered)
            self.updates += done
            if done:
                self.rounds += 1
            self.scene = scene
            if self.resync_every and (
                self._last_resync is None or now - self._last_resync >= self.resync_every
            ):
                if self._last_resync is not None:
                    self.resync()
                self._last_resync = now
            return done

    @contextmanager
    def holding(self) -> Iterator[None]:
        """No round of this refresher's own starts within the block (its caller draws one)."""
        with self._tick_lock:
            yield

    def _too_soon(self, now: float) -> bool:
        # 1 ns of slack: ten steps of 0.1 s must make ten rounds despite float rounding
        return self._last_tick is not None and now - self._last_tick < self.min_interval - 1e-9

    def _render_panel(
        self,
        panel: Panel,
        scene: Scene,
        now: float,
        hurry: bool,
        force: bool,
        rendered: list[tuple[_Slot, Hashable, Hashable]],
    ) -> None:
        with panel._lock:
            if panel.closed:
                return
            for slot in self._slots:
                if slot.panel is not panel or slot.part.idle:
                    continue
                part = slot.part
                cpu = time.thread_time()
                try:
                    key = (part.key(scene), panel.type_scale)  # a new type scale redraws it all
                    drift = part.drift(scene) if part.drift is not None else None
                    if not force and key == slot.key:
                        if drift == slot.drift:
                            continue
                        if not hurry and slot.last is not None and now - slot.last < part.interval:
                            continue
                    part.render(scene)
                except Exception as exc:  # keep refreshing the other parts; count it
                    self.errors += 1
                    self.last_error = exc
                    continue
                slot.cost = time.thread_time() - cpu
                rendered.append((slot, key, drift))

    def _render_idle(self, scene: Scene) -> None:
        """A quiet round: do one part's work ahead of time (not counted as an update).

        With a page watch, only once a page has answered: while a page is still
        loading, work ahead of time would only compete with its first paint.
        """
        if self.watch is not None and self.watch.pongs == 0:
            return
        for slot in self._slots:
            part = slot.part
            if not part.idle:
                continue
            with slot.panel._lock:
                if slot.panel.closed:
                    continue
                cpu = time.thread_time()
                key: Hashable = None
                try:
                    key = (part.key(scene), slot.panel.type_scale)
                    if key == slot.key:
                        continue
                    part.render(scene)
                except Exception as exc:  # ahead-of-time work must never stop the refresher
                    self.errors += 1
                    self.last_error = exc
                    slot.key = key  # not retried until its key changes
                    continue
                slot.key, slot.cost = key, time.thread_time() - cpu
                self.idle_cost = slot.cost
                return

    def costs(self) -> dict[str, float]:
        """CPU seconds each part took the last time it was drawn (where the time goes)."""
        return {slot.part.name: slot.cost for slot in self._slots}

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
                    # a widget may name the few traits worth re-sending (the timeline: its
                    # moment, not its 30 kB module source and palette)
                    widget.send_state(key=getattr(widget, "resync_keys", None))
                    sent += 1
        self.resyncs += 1
        return sent

    def poke(self) -> None:
        """Ask for a round at once (after a user action).

        That round also renders parts whose drift interval has not passed yet
        (plots), so a click shows its whole effect at once. It may come sooner
        than ``1 / max_rate`` after the previous round, once per ``1 / max_rate``:
        a stream of pokes makes at most ``2 * max_rate`` rounds per second.
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
            self.ended = None
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
                self.ended = "stop_after"
                return
            if self.watch is not None and not self._watch_page():
                return
            pause = self.min_interval
            if not self.paused:
                try:
                    done, cost = self.driver.run(self._timed_tick)
                except Exception as exc:  # pragma: no cover - tick already catches part errors
                    self.errors += 1
                    self.last_error = exc
                    done, cost = 0, 0.0
                if done:
                    self.last_cost = cost
                    pause = self.rest_after(cost)
                elif cost > 0.01:  # idle work ahead of time keeps to the CPU budget too
                    pause = self.rest_after(cost)
                elif self._last_tick is not None:  # too soon: wait only for the rest
                    left = self.min_interval - (self.clock() - self._last_tick)
                    pause = min(pause, max(left, 0.005)) if self._urgent else pause
            if self.watch is not None:
                pause = min(pause, self.watch.every)
            self._wake.wait(pause)
            self._wake.clear()
        self.ended = self.ended or "closed"

    def _timed_tick(self) -> tuple[int, float]:
        """One round (:meth:`tick`) and the CPU seconds it took in the thread that drew it."""
        cpu = time.thread_time()
        done = self.tick()
        return done, time.thread_time() - cpu

    def rest_after(self, cost: float) -> float:
        """Seconds to wait after a round that took ``cost`` CPU seconds (unless poked).

        ``cost * (1 - cpu_budget) / cpu_budget``, and at least ``1 / max_rate``:
        drawing then takes at most ``cpu_budget`` of one core on average.
        """
        if self.cpu_budget >= 1:
            return self.min_interval
        return max(self.min_interval, cost * (1.0 - self.cpu_budget) / self.cpu_budget)

    def _watch_page(self) -> bool:
        """Ping the page; pause, resume or end on its answers. False: end the thread."""
        watch = self.watch
        assert watch is not None
        self.driver.run(watch.ping_if_due)  # from the loop too: a host may drop thread sends
        state = watch.state()
        if state == "gone":
            if self.on_page_gone is not None:
                self.ended = "page gone"
                callback, self.on_page_gone = self.on_page_gone, None
                try:
                    callback()
                except Exception as exc:  # the thread ends anyway
                    self.errors += 1
                    self.last_error = exc
                return False
            self.paused = True
        elif self.paused:  # a page answers again: show it the present at once
            self.paused = False
            self.driver.run(lambda: (self.tick(force=True), self.resync()))
        return True

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
        owned, self._owned = self._owned, []
        for panel in owned:
            panel.close()
        if self.scheduler is not None:
            with _ACTIVE_LOCK:
                ref = _ACTIVE.get(id(self.scheduler))
                if ref is not None and ref() is self:
                    del _ACTIVE[id(self.scheduler)]

    def __repr__(self) -> str:
        state = "running" if self.running else ("closed" if self.closed else "stopped")
        if self.paused:
            state += ", paused (no page answers)"
        return (
            f"<Refresher {state}: {len(self._slots)} parts, max {self.max_rate:g}/s, "
            f"{self.updates} updates, {self.resyncs} resyncs, {self.errors} errors>"
        )
