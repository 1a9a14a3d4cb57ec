"""A fleet: several served schedulers (or spill directories) mirrored at once, read as one log.

:class:`Fleet` makes one mirror per service (:func:`~.stream.attach` for a URL,
:func:`~.follow.attach_dir` for a directory), each with **its own** token and its own
HTTP client: a token is only ever sent to the URL it was given for, and no client
follows a redirect (httpx's default, kept), so no token reaches another host.

**One frame, ordered by (service, seq).** :meth:`Fleet.to_frame` is the rows of every
mirror with a ``service`` column, each service's rows in its own gapless ``seq`` (its
gaps named in ``attrs["gaps"]``), ordered by ``(service, seq)``: never by wall clock
alone, which a skew between hosts would reorder (Dask's task stream lost tasks to that,
dask/distributed#9282). A service's wall times are put on this machine's clock in the
``local_wall`` column, with the service's estimated offset.

**Clock offsets by the midpoint method.** For each served scheduler a thread asks
``GET /v1/moment`` every ``probe_every`` seconds: with ``sent`` and ``received`` read on
this machine's clock and ``now`` the service's clock in the answer, its offset is
``now - (sent + received) / 2``, known within ``(received - sent) / 2``
(:class:`ClockOffset`; the estimate of the probe with the shortest round trip among
the last :data:`KEEP_PROBES`, re-estimated on every probe; a restarted service, told by
its clock's new origin, is measured afresh). A service on a
:class:`~tempsched_lab.VirtualClock` has no offset to a wall clock (``None``).

>>> Fleet({"a": 1})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
TypeError: sources['a']=1: expected a URL (http://...) or a spill directory
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .follow import attach_dir
from .link import Link
from .mirror import RemoteScheduler
from .stream import CONNECT_TIMEOUT, AttachError, attach

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["KEEP_PROBES", "ClockOffset", "Fleet"]

#: Probes kept per service: the offset is that of the one with the shortest round trip.
KEEP_PROBES = 8


@dataclass(frozen=True, slots=True)
class ClockOffset:
    """A service's clock minus this machine's, estimated by the midpoint method.

    >>> ClockOffset(5.0012, 0.0004, 3).text()
    '+5.0012 s ± 0.4 ms (3 probes)'
    """

    #: the service's clock minus this machine's (s)
    offset: float
    #: half the round trip of the probe it comes from: the true offset is within this (s)
    uncertainty: float
    #: probes made so far
    probes: int

    def text(self) -> str:
        """The offset in words."""
        return (
            f"{self.offset:+.4f} s ± {self.uncertainty * 1e3:.1f} ms "
            f"({self.probes} probe{'s' if self.probes != 1 else ''})"
        )


class _Prober:
    """A thread that estimates one served scheduler's clock offset (see the module)."""

    def __init__(self, url: str, token: str | None, every: float) -> None:
        import httpx

        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        # its own client, for this URL only; redirects are never followed
        self.client = httpx.Client(headers=headers, timeout=CONNECT_TIMEOUT, follow_redirects=False)
        self.url = url.rstrip("/") + "/v1/moment"
        self.every = every
        self.kept: deque[tuple[float, float]] = deque(maxlen=KEEP_PROBES)  # (half rtt, offset)
        self.probes = 0
        #: the clock origin the kept probes were made against: another is another process
        self._origin: float | None = None
        self.virtual = False
        self.error: str | None = None
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="tempsched-fleet-probe", daemon=True)

    def probe(self) -> None:
        """One probe: ask the service's clock, note when we asked and when it answered."""
        sent = time.time()
        response = self.client.get(self.url)
        received = time.time()
        if response.status_code != 200:
            self.error = f"HTTP {response.status_code}"
            return
        data = response.json()
        origin = data["time_origin"]["origin"]
        if origin < 1e8:  # a virtual clock (its origin is no epoch time): no wall offset
            self.virtual = True
            return
        if origin != self._origin:
            # a restarted service (its clock's origin is its process's start): its clock may
            # be another host's or set anew, so the probes made of the one before are dropped
            self.kept.clear()
            self._origin = origin
        now = origin + data["now"]
        self.kept.append(((received - sent) / 2, now - (sent + received) / 2))
        self.probes += 1
        self.error = None

    @property
    def offset(self) -> ClockOffset | None:
        if not self.kept:
            return None
        half, offset = min(self.kept)
        return ClockOffset(offset, half, self.probes)

    def _run(self) -> None:
        import httpx

        while not self._stop.is_set():
            try:
                self.probe()
            except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
                self.error = type(exc).__name__  # (never the token: not in the message)
            if self.virtual:
                return
            self._stop.wait(self.every)

    def stop(self) -> None:
        self._stop.set()
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join(CONNECT_TIMEOUT + 1)
        self.client.close()


class Fleet:
    """Mirrors of several schedulers, read as one; see the module docstring.

    Args:
        sources: service name -> the URL it is served at (``http://host:port/scheduler``)
            or its spill directory.
        tokens: service name -> its read token (only sent to that service's URL).
        probe_every: seconds between clock probes of each served scheduler.

    A service that cannot be reached at the start is not fatal: its link is ``closed``
    with the reason (:attr:`links`), and the others are followed.

    >>> fleet = Fleet(  # doctest: +SKIP
    ...     {"api": "http://127.0.0.1:8001/scheduler", "batch": "runs/run-003"},
    ...     tokens={"api": open("token.txt").read().strip()},
    ... )
    >>> fleet.to_frame().groupby("service", observed=True).size()  # doctest: +SKIP
    """

    def __init__(
        self,
        sources: Mapping[str, str | os.PathLike[str]],
        *,
        tokens: Mapping[str, str] | None = None,
        probe_every: float = 2.0,
    ) -> None:
        if not isinstance(sources, Mapping) or not sources:
            raise TypeError(f"sources={sources!r}: expected a mapping of names to URLs or dirs")
        tokens = dict(tokens or {})
        for name, source in sources.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"sources: name {name!r}: expected a non-empty str")
            if not isinstance(source, (str, os.PathLike)):
                raise TypeError(
                    f"sources[{name!r}]={source!r}: "
                    "expected a URL (http://...) or a spill directory"
                )
        unknown = sorted(set(tokens) - set(sources))
        if unknown:
            raise ValueError(f"tokens: {unknown} name no service of sources {sorted(sources)}")
        if isinstance(probe_every, bool) or not isinstance(probe_every, (int, float)):
            raise TypeError(f"probe_every={probe_every!r}: expected seconds")
        if not 0.05 <= probe_every <= 3600:
            raise ValueError(f"probe_every={probe_every!r}: expected 0.05 to 3600 seconds")
        self.sources = {name: os.fspath(source) for name, source in sources.items()}
        #: name -> mirror (services that could not be reached are not here: see links)
        self.mirrors: dict[str, RemoteScheduler] = {}
        #: name -> why it could not be followed
        self.errors: dict[str, str] = {}
        self._probers: dict[str, _Prober] = {}
        for name, source in self.sources.items():
            token = tokens.get(name)
            try:
                if source.startswith(("http://", "https://")):
                    self.mirrors[name] = attach(source, token=token)
                    prober = _Prober(source, token, float(probe_every))
                    self._probers[name] = prober
                    prober.thread.start()
                else:
                    if token is not None:
                        raise ValueError(f"tokens[{name!r}]: a spill directory takes no token")
                    self.mirrors[name] = attach_dir(Path(source))
            except (AttachError, OSError) as exc:
                self.errors[name] = str(exc)

    # -- what the views read --------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        """The services' names, in the order given."""
        return list(self.sources)

    @property
    def links(self) -> dict[str, Link]:
        """Each service's link state (``closed`` with the reason if it was never reached)."""
        out: dict[str, Link] = {}
        for name in self.sources:
            mirror = self.mirrors.get(name)
            out[name] = mirror.link if mirror is not None else Link("closed", why=self.errors[name])
        return out

    @property
    def offsets(self) -> dict[str, ClockOffset | None]:
        """Each service's clock offset to this machine's (``None``: a spill directory, a
        virtual clock, or no probe answered yet)."""
        out: dict[str, ClockOffset | None] = {}
        for name in self.sources:
            prober = self._probers.get(name)
            out[name] = None if prober is None else prober.offset
        return out

    def probe(self) -> None:
        """Probe every served scheduler's clock now (in this thread)."""
        for prober in self._probers.values():
            prober.probe()

    def to_frame(self) -> pd.DataFrame:
        """Every service's rows in one frame, with ``service`` and ``local_wall`` columns,
        ordered by ``(service, seq)``; ``attrs["gaps"]``: ``(service, first, last, why)``.

        ``local_wall`` is the row's ``wall`` minus its service's clock offset (the wall
        time on this machine's clock; ``wall`` itself when no offset is known).
        """
        import numpy as np
        import pandas as pd

        from ..log.files.normalize import concat_frames

        frames, gaps, names, shifts = [], [], [], []
        offsets = self.offsets
        for name in self.sources:
            mirror = self.mirrors.get(name)
            if mirror is None:
                continue
            frame = mirror.history()
            gaps += [(name, first, last, why) for first, last, why in frame.attrs["gaps"]]
            offset = offsets[name]
            frames.append(frame.reset_index(drop=True))
            names += [name] * len(frame)
            shifts += [0.0 if offset is None else offset.offset] * len(frame)
        if not frames:
            return pd.DataFrame(columns=["service", "seq"])
        out = concat_frames(frames)  # categoricals united (pd.concat would make objects)
        out.insert(0, "service", pd.Series(pd.Categorical(names, categories=list(self.sources))))
        out["local_wall"] = out["wall"].to_numpy() - np.asarray(shifts, dtype=float)
        out = out.sort_values(["service", "seq"], kind="stable").reset_index(drop=True)
        out.attrs = {"gaps": gaps}
        return out

    def close(self) -> None:
        """Stop every mirror and probe (bounded)."""
        for prober in self._probers.values():
            prober.stop()
        for mirror in self.mirrors.values():
            mirror.close()

    def __enter__(self) -> Fleet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        states = ", ".join(f"{name}: {link.state}" for name, link in self.links.items())
        return f"<Fleet {len(self.sources)} services ({states})>"
