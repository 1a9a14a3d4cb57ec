"""A dashboard of a served scheduler that follows the service across its restarts.

A :class:`~tempsched_lab.remote.RemoteScheduler` mirrors one log. A service that
spills to a :class:`~tempsched_lab.log.files.Lineage` (the example service does)
continues the same log when it is killed and started again: the same mirror resumes,
and its dashboard's banner names the rows lost with the killed process (a gap), so
the watch keeps its dashboard. A service without one comes back with a **new** log
(its rows start over at ``seq`` 0), and the mirror's link closes saying so (and which
rows of the old log it holds): :class:`ServiceWatch` then attaches again, as soon as
the service answers, and shows a new :class:`~tempsched_lab.widgets.Dashboard` in
the same place of the page, with a line that says what happened; the previous
mirrors stay in :attr:`ServiceWatch.previous` (their rows, to compare or save).
While the service is down, the dashboard's banner says ``reconnecting since ...``.

>>> watch = ServiceWatch("http://127.0.0.1:8000/scheduler")  # doctest: +SKIP
>>> watch  # the dashboard, then a new one after each restart   # doctest: +SKIP
"""

from __future__ import annotations

import html
import threading
from typing import TYPE_CHECKING, Any, cast

import ipywidgets as W

from ..remote import RemoteScheduler, attach
from ..remote.link import Link
from .dashboard import Dashboard
from .lastframe import ShownOutputs, static_html

if TYPE_CHECKING:
    from ..core.scheduler import Scheduler

__all__ = ["ServiceWatch"]


class ServiceWatch:
    """Shows the dashboard of the scheduler served at ``url``, attaching again after a restart.

    Args:
        url, token, control_token: as for :func:`~tempsched_lab.attach`.
        retry: seconds between two attempts to reach a restarted service.
        dashboard: keyword arguments of each :class:`Dashboard`.

    Raises :class:`~tempsched_lab.remote.stream.AttachError` at once if the service
    cannot be reached now.
    """

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        control_token: str | None = None,
        retry: float = 0.5,
        **dashboard: Any,
    ) -> None:
        self.url = url
        self._token = token
        self._control_token = control_token
        self.retry = float(retry)
        self._options = dashboard
        self.note = W.HTML("")
        self.note.add_class("tsl-watch-note")
        self.widget = W.VBox([self.note])
        self.widget.add_class("tsl-service-watch")
        self.mirror: RemoteScheduler | None = None
        self.dashboard: Dashboard | None = None
        #: the mirrors of the service's earlier logs, oldest first
        self.previous: list[RemoteScheduler] = []
        self.restarts = 0
        self.closed = False
        self.outputs = ShownOutputs()  # where it was shown: they become its last frame on close
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._show(self._attach())

    def _attach(self) -> RemoteScheduler:
        return attach(self.url, token=self._token, control_token=self._control_token)

    def _show(self, mirror: RemoteScheduler) -> None:
        with self._lock:
            if self.closed:
                mirror.close()
                return
            old, self.mirror = self.dashboard, mirror
            # a mirror offers the read surface the panels use (tests/test_remote_dashboard.py)
            self.dashboard = Dashboard(cast("Scheduler", mirror), **self._options)
            self.widget.children = (self.note, self.dashboard.widget)
        if old is not None:
            old.close()
        mirror.on_link(self._on_link)

    def _on_link(self, link: Link) -> None:
        """From the feed's thread: a restart starts the thread that attaches again."""
        if link.state == "closed" and link.restarted and not self.closed:
            threading.Thread(target=self._follow, name="tempsched-watch", daemon=True).start()

    def _follow(self) -> None:
        old = self.mirror
        while not self._stop.is_set():
            try:
                mirror = self._attach()
            except (OSError, ValueError):
                self._stop.wait(self.retry)
                continue
            if old is not None:
                self.previous.append(old)
                held = f"rows 0..{old.applied - 1}" if old.applied else "no row"
                self.note.value = (
                    "<div style='color:var(--tsl-muted);font-size:14px'>The service restarted "
                    "with a new log: this dashboard follows it; the previous log "
                    f"({html.escape(held)} "
                    f"held here) is <code>watch.previous[{len(self.previous) - 1}]</code>.</div>"
                )
            self.restarts += 1
            self._show(mirror)
            return

    def close(self) -> None:
        """Close the dashboard and the mirror (the service goes on)."""
        self._stop.set()
        with self._lock:
            self.closed = True
            dash, mirror = self.dashboard, self.mirror
        if dash is not None:
            dash.close()  # its box in the watch's now shows its last frame
        if mirror is not None:
            mirror.close()
        self.outputs.freeze(static_html(self.widget), f"<closed: the watch of {self.url}>")

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def _ipython_display_(self) -> None:
        # shown under a display id: on close() the output becomes the last frame's HTML
        self.outputs.show(self.widget)

    def __repr__(self) -> str:
        return f"<ServiceWatch {self.url}: {self.restarts} restarts>"
