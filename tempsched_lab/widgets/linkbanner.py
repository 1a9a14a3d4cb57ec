"""The banner of a dashboard that shows a mirror: the truth about its link, at the top of the page.

A :class:`~tempsched_lab.remote.RemoteScheduler` (``attach``, ``attach_dir``) shows
what a scheduler elsewhere did, as far as its rows reached it. The banner says
how far that is: **live**, **reconnecting since** a time (the panels then show the
last moment heard, not a service that stopped), a **gap** of rows that will never
come (named: which rows, how many, why; after a service restarted on its spill root,
the rows its killed process never wrote) and **closed** (the service shut down, a
replay ended, or the service restarted with a new log). It is updated from the
mirror's feed thread at each change of the link (widgets may be written from any
thread: docs/widgets.md), so a stalled refresher never hides a lost link.

A dashboard of a local :class:`~tempsched_lab.Scheduler` has no banner.

>>> from tempsched_lab.remote import RemoteScheduler
>>> from tempsched_lab.remote.link import Gap, Link
>>> mirror = RemoteScheduler("http://127.0.0.1:8000/scheduler")
>>> banner = LinkBanner(mirror)
>>> mirror.set_link(Link("gap", since=3.0, gap=Gap(10, 19, "gone from memory and disk")))
>>> "rows 10..19 (10 rows) are missing" in banner.widget.value
True
>>> banner.close()
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import ipywidgets as W

from ..remote.link import Link
from ..remote.mirror import RemoteScheduler
from ._style import type_css

__all__ = ["LinkBanner", "link_banner", "mirror_panels"]

#: border colour and word for each state (the fill is a hint of the border over the theme)
_LOOK = {
    "connecting": ("#bbb", "connecting"),
    "live": ("#5a5", "live"),
    "reconnecting": ("#d80", "reconnecting"),
    "failed": ("#c33", "failed"),
    "gap": ("#c33", "gap"),
    "closed": ("#777", "closed"),
}


class LinkBanner:
    """One line at the top of a mirror's dashboard: its link state, in words (see module)."""

    def __init__(self, mirror: RemoteScheduler) -> None:
        self.mirror = mirror
        self.widget = W.HTML()
        self.widget.add_class("tsl-link-banner")
        self._state = ""
        self._remove = mirror.on_link(self._show)
        self._show(mirror.link)

    def html(self, link: Link) -> str:
        """The banner's HTML for ``link``."""
        border, word = _LOOK.get(link.state, _LOOK["closed"])
        scale = self.mirror.time_scale
        text = link.text(scale)
        if link.state in ("live", "connecting"):
            text = f"following {self.mirror.source}"
            if link.gap is not None:
                text += f" (earlier, {link.gap.text()}: {link.gap.why})"
        return (
            f"{type_css()}<div class='tsl-link tsl-link-{link.state}' style='padding:4px 8px;"
            # the state's colour is the border's; the fill a hint of it over the theme's panel
            f"background:color-mix(in srgb, {border} 12%, var(--tsl-panel-bg));"
            f"color:var(--tsl-fg);border-left:4px solid {border};font-size:14px'>"
            f"<b>{html.escape(word)}</b> · {html.escape(text)}</div>"
        )

    def _show(self, link: Link) -> None:
        self.widget.value = self.html(link)  # the words first: a page that sees the class has them
        if self._state:
            self.widget.remove_class(self._state)
        self._state = f"tsl-link-is-{link.state}"
        self.widget.add_class(self._state)

    def close(self) -> None:
        """Stop following the link and close the widget."""
        self._remove()
        self.widget.close()


def link_banner(scheduler: Any) -> LinkBanner | None:
    """A banner for ``scheduler`` if it is a mirror (``None`` for a local scheduler)."""
    return LinkBanner(scheduler) if isinstance(scheduler, RemoteScheduler) else None


def mirror_panels(scheduler: Any, names: Sequence[str], chosen: bool) -> list[str]:
    """The panels of a dashboard of ``scheduler``: a read-only mirror's default ones leave out
    the controls (nothing there may change the service); ``chosen`` panels are kept as asked.
    """
    if chosen or not isinstance(scheduler, RemoteScheduler) or not scheduler.read_only:
        return list(names)
    return [n for n in names if n != "controls"]
