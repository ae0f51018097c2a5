"""Which zone a local time (one written without an offset) is read in, and its UTC time.

One reading for every local time the vault holds: a chat export's (`ingest`) and a note's
`date:` (`markdown.note.user_note_time`) are both read by `local_to_utc` in the zone `zone`
names. A note of yours takes the vault's zone, `[ingest] timezone`, else this machine's (the
clock Obsidian wrote it by): `note_zone`. An export without one named is read as UTC, as
its ingest report says (a chat read in one zone refuses an export read in another).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from vaultmind.errors import UsageError


def zone(name: str | None) -> tzinfo:
    """The zone local export times are in: an IANA name (`Europe/Berlin`), or UTC when None."""
    if not name:
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise UsageError(f"unknown time zone {name!r}", hint="use an IANA name such as Europe/Berlin") from exc


def note_zone(name: str) -> tzinfo | None:
    """The zone a note's local `date:` is read in: the vault's `[ingest] timezone` (`name`),
    else None, this machine's clock (with its summer time, as `local_to_utc` reads it)."""
    return zone(name) if name else None


def local_to_utc(value: datetime, tz: tzinfo | None) -> datetime:
    """A naive local time in `tz` (None: this machine's clock, summer time included) → aware
    UTC; aware values are converted. A clock time that occurs twice is its first; one that a
    change of offset skipped (02:30 when clocks go from 2 to 3) takes the offset before it, on
    this machine's clock as in a named zone (`datetime.fold` = 0)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=tz) if tz is not None else _on_this_machines_clock(value)
    return value.astimezone(UTC)


def _on_this_machines_clock(value: datetime) -> datetime:
    """Naive `value` as a time on this machine's clock. Python reads a skipped clock time with
    the offset after the change, a named zone with the one before: at a change at midnight
    (Santiago, 8 September 2024) the first put 00:30 on the day before."""
    aware = value.astimezone()
    if aware.replace(tzinfo=None) == value:
        return aware
    before = (value - timedelta(days=1)).astimezone().utcoffset() or timedelta(0)
    return (value - before).replace(tzinfo=UTC)


def zone_key(name: str) -> str:
    """What names the zone `note_zone(name)` reads in, for an index to tell when it changed
    (its dated notes then take their times in the new one: `sync_zone`): the name, or this
    machine's zone by its names and offsets, not by how it was named (`TZ=Europe/London` and a
    London machine's own setting read alike)."""
    if name:
        return name
    return f"machine:{'/'.join(time.tzname)}:{time.timezone}:{time.altzone}"
