"""The times of your dated notes when the zone their local dates are read in changes
(`zones.note_zone`: `[ingest] timezone`, else this machine's zone, which changes with a laptop
that travels). A note's time is a function of its path and front matter alone
(`markdown.note.user_note_time`), both stored in its `notes` row, so its leaves' times (and
their entity occurrences') are set again in place, with no file read: re-reading 7,000 dated
notes of a 10,000-note vault took two minutes, paid by the first question asked without a
daemon. An index from before the zone was kept read them as UTC, with front matter an older
version may have stored otherwise: its dated notes are read again, once."""

from __future__ import annotations

import json
from datetime import datetime, tzinfo

import pyarrow as pa

from vaultmind.index.store import Index
from vaultmind.markdown.note import user_note_time
from vaultmind.zones import note_zone, zone_key

NOTE_ZONE = "note_zone"  # meta: the zone the index read notes' local dates in (`zones.zone_key`)

_DATED_NOTES = (
    "SELECT path, frontmatter FROM notes WHERE kind = 'user' "
    "AND path IN (SELECT note_path FROM leaves WHERE ts IS NOT NULL) ORDER BY path"
)


def retime_dated_notes(index: Index, zone_name: str) -> bool:
    """Bring the dated notes of yours to the zone `zone_name` names (`[ingest] timezone`; ""
    this machine's) when the index read them in another: each one's leaves and occurrences
    take its time there, or, when it cannot be told from its row (an index from before the
    zone was kept), its hash is forgotten so this sync reads it again. In one transaction
    with the zone kept, so a crash leaves the old zone and its times, or the new ones. Whether
    leaves' times were set in place (resident copies of them must then be loaded again)."""
    key = zone_key(zone_name)
    was = index.get_meta(NOTE_ZONE)
    if was == key:
        return False
    zone = note_zone(zone_name)
    retimed: dict[str, datetime] = {}
    unread: list[str] = []
    for path, frontmatter in index.query(_DATED_NOTES):
        when = None if was is None else _time_of(path, frontmatter, zone)
        if when is None:
            unread.append(path)
        else:
            retimed[path] = when
    with index.transaction() as con:
        if retimed:
            table = pa.table({"path": list(retimed), "ts": pa.array(list(retimed.values()), pa.timestamp("us"))})
            con.register("retimed_notes", table)
            try:
                con.execute("UPDATE leaves SET ts = r.ts FROM retimed_notes r WHERE leaves.note_path = r.path")
                con.execute("UPDATE occurrences SET ts = r.ts FROM retimed_notes r WHERE occurrences.note_path = r.path")
            finally:
                con.unregister("retimed_notes")
        if unread:
            con.execute("UPDATE notes SET sha256 = '', ino = NULL WHERE path IN (SELECT unnest(?::VARCHAR[]))", [unread])
        index.set_meta(con, NOTE_ZONE, key)
    return bool(retimed)


def _time_of(path: str, frontmatter: str | None, zone: tzinfo | None) -> datetime | None:
    """The note's time (naive UTC, as `leaves.ts` holds it) from its path and stored front
    matter, as a parse in `zone` gives it; None when it cannot be told."""
    try:
        data = json.loads(frontmatter or "{}")
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    when = user_note_time(path, data, zone)
    return None if when is None else datetime.fromisoformat(when.removesuffix("Z"))
