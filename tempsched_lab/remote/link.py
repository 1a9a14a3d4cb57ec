"""The state of a mirror's link to what it mirrors: live, reconnecting, a named gap, closed.

A :class:`Link` is a frozen record; a mirror replaces it as things happen and
hands each new one to its observers (:meth:`RemoteScheduler.on_link
<tempsched_lab.remote.RemoteScheduler.on_link>`), which is what the dashboard's
banner shows. Times are the mirror's clock readings (the service's scale): the
banner says them as ``12.345 s`` like every other time.

>>> Link("live").text()
'live'
>>> Link("gap", gap=Gap(120, 180, "rows gone from memory and disk")).text()
'live, with a gap: rows 120..180 (61 rows) are missing: rows gone from memory and disk'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..time.scale import TimeScale

__all__ = ["Gap", "Link", "LinkState"]

LinkState = Literal["connecting", "live", "reconnecting", "failed", "gap", "closed"]


@dataclass(frozen=True, slots=True)
class Gap:
    """Rows ``first..last`` (inclusive) the mirror will never have, and why."""

    first: int
    last: int
    why: str
    #: an upper bound: the range holds numbers a killed process had reserved, not all used
    at_most: bool = False

    @property
    def rows(self) -> int:
        """How many rows are missing (at most, when :attr:`at_most`)."""
        return self.last - self.first + 1

    def text(self) -> str:
        """The gap in words.

        >>> Gap(5, 9, "killed", at_most=True).text()
        'rows 5..9 (at most 5 rows) are missing'
        """
        n = self.rows
        bound = "at most " if self.at_most else ""
        return (
            f"rows {self.first}..{self.last} ({bound}{n:,} row{'s' if n != 1 else ''}) are missing"
        )


@dataclass(frozen=True, slots=True)
class Link:
    """One state of a mirror's link.

    Attributes:
        state: ``"connecting"`` (not reached yet), ``"live"`` (rows arrive as they are
            recorded), ``"reconnecting"`` (the connection was lost at ``since``; the
            mirror tries again and will resume after its last row), ``"failed"`` (the
            feed sent what the mirror cannot read: a malformed event, one over the size
            or time bound, a segment of another log; ``why`` names it and which event;
            a served feed is tried again after a backoff), ``"gap"`` (live,
            but rows named in ``gap`` are missing for good), ``"closed"`` (the
            scheduler shut down, or the mirror was closed, or a replay ended).
        since: the mirror's clock reading when this state began (``None``: unknown).
        gap: the last gap met (kept in the states after it).
        why: what happened, in words (an error text, "the service shut down", ...).
        attempts: connection attempts since the link was lost.
    """

    state: LinkState
    since: float | None = None
    gap: Gap | None = None
    why: str = ""
    attempts: int = 0
    #: closed because the service restarted with a new log (``attach`` again to follow it)
    restarted: bool = False

    def text(self, scale: TimeScale | None = None) -> str:
        """The state as a sentence (times in ``scale``'s language)."""
        since = "" if self.since is None or scale is None else f" since {scale.at(self.since)}"
        if self.state == "gap" and self.gap is not None:
            why = f": {self.gap.why}" if self.gap.why else ""
            return f"live, with a gap: {self.gap.text()}{why}"
        if self.state == "reconnecting":
            tries = f" (attempt {self.attempts})" if self.attempts else ""
            why = f": {self.why}" if self.why else ""
            return f"reconnecting{since}{tries}{why}"
        if self.state == "failed":
            tries = f" (attempt {self.attempts})" if self.attempts else ""
            return f"failed{since}{tries}: {self.why}"
        if self.state == "closed":
            return f"closed{since}" + (f": {self.why}" if self.why else "")
        return self.state
