"""Time zones for calendar triggers: IANA names through :mod:`zoneinfo`, or this machine's zone.

>>> zone_name(resolve_zone("Europe/Paris"))
'Europe/Paris'
>>> resolve_zone("Mars/Olympus_Mons")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: tz='Mars/Olympus_Mons': unknown time zone; expected an IANA name such as ...
"""

from __future__ import annotations

import os
import time
from datetime import timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

__all__ = ["Zone", "local_zone", "resolve_zone", "zone_name"]

#: What a trigger evaluates its wall times in: an IANA zone or a fixed offset.
Zone = ZoneInfo | timezone

_LOCALTIME = "/etc/localtime"


def resolve_zone(tz: str | tzinfo | None, arg: str = "tz") -> Zone:
    """The zone named by ``tz``: an IANA name, a ``ZoneInfo``, a ``datetime.timezone``.

    ``None`` means this machine's own zone (see :func:`local_zone`). Errors name
    ``arg`` and the value.
    """
    if tz is None:
        return local_zone(arg)
    if isinstance(tz, str):
        try:
            return ZoneInfo(tz.strip())
        except (ZoneInfoNotFoundError, ValueError):
            hint = (
                ""
                if _has_zone_database()
                else " (this machine has no zone database: pip install tzdata)"
            )
            raise ValueError(
                f"{arg}={tz!r}: unknown time zone; expected an IANA name such as "
                f"'Europe/Paris' or 'UTC'{hint}"
            ) from None
    if isinstance(tz, (ZoneInfo, timezone)):
        return tz
    raise TypeError(
        f"{arg}={tz!r}: expected an IANA zone name (str), a zoneinfo.ZoneInfo or a "
        "datetime.timezone (pytz and dateutil zones are not supported: their offsets "
        "are wrong when attached with datetime.replace)"
    )


def zone_name(zone: Zone) -> str:
    """A short name for a zone: its IANA key, ``'localtime'``, or ``'UTC+02:00'``.

    >>> zone_name(timezone.utc)
    'UTC'
    """
    if isinstance(zone, ZoneInfo):
        return zone.key or "localtime"
    return zone.tzname(None) or str(zone)


def local_zone(arg: str = "tz") -> Zone:
    """This machine's time zone with its DST rules (not just today's offset).

    Looked up in this order: the ``TZ`` environment variable when it names an IANA
    zone, the zone ``/etc/localtime`` links to, the ``/etc/localtime`` file itself,
    UTC when the C library reports UTC without DST. Raises ``ValueError`` (naming
    ``arg``) where none of these tells the zone, e.g. on Windows without ``TZ``.
    """
    name = os.environ.get("TZ", "").lstrip(":").strip()
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass  # a POSIX rule string such as "CET-1CEST": fall through to the system zone
    if os.path.islink(_LOCALTIME):
        target = os.path.realpath(_LOCALTIME)
        marker = "zoneinfo" + os.sep
        if marker in target:
            try:
                return ZoneInfo(target.split(marker, 1)[1])
            except (ZoneInfoNotFoundError, ValueError):
                pass
    if os.path.isfile(_LOCALTIME):
        try:
            with open(_LOCALTIME, "rb") as data:
                return ZoneInfo.from_file(data, key="localtime")
        except (OSError, ValueError):
            pass
    if time.timezone == 0 and not time.daylight:
        return timezone.utc
    raise ValueError(
        f"{arg}=None: cannot tell this machine's time zone; pass an IANA name such as "
        f"{arg}='Europe/Paris' or {arg}='UTC'"
    )


def _has_zone_database() -> bool:
    try:
        return bool(available_timezones())
    except Exception:  # an unreadable TZPATH entry: report "no database"
        return False
