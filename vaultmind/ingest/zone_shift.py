"""An export read in another time zone than when it was first ingested: its messages, whose ids
hash their local time, would all come again some hours apart. Such an ingest is refused before
anything is written."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from vaultmind.ingest.errors import IngestError
from vaultmind.ingest.plan import Plan
from vaultmind.markdown.render import Message, note_text, to_utc

SHIFT_SHARE = 0.8  # of the messages a zone mix-up could repeat, the share repeated at one offset
SHIFT_MIN = 3  # and at least this many different texts


def shifted(held: Sequence[Message], new: Sequence[Message]) -> tuple[timedelta, int] | None:
    """The offset and the number of messages repeated, when the same export read in another time
    zone repeats the messages the vault holds: of the messages whose ids hash their time (`h-…`,
    no platform id: a local time read in another zone gives another UTC time, so another id),
    most of those `held` that the export no longer holds under their ids (a mix-up moves every
    one), or of the new ones when fewer, come again (same author, same text) one whole number
    of quarter hours apart, with one offset for all and at least `SHIFT_MIN` different texts. A
    bot that posts the same texts every hour (its earlier posts still in the export), or a
    platform's own ids, are never taken for a mix-up."""
    held = [m for m in held if m.message_id.startswith("h-")]
    new = [m for m in new if m.message_id.startswith("h-")]
    if min(len(held), len(new)) < SHIFT_MIN:
        return None
    times: dict[tuple[str, str], list[datetime]] = {}
    for message in held:
        times.setdefault((message.author, note_text(message.text)), []).append(to_utc(message.timestamp))
    offsets: dict[timedelta, list[tuple[str, str]]] = {}
    for message in new:
        key = (message.author, note_text(message.text))
        at = to_utc(message.timestamp)
        for shift in {at - then for then in times.get(key, ())}:
            if shift and abs(shift) <= timedelta(hours=14) and not shift % timedelta(minutes=15):
                offsets.setdefault(shift, []).append(key)
    if not offsets:
        return None
    shift, keys = max(offsets.items(), key=lambda item: (len(item[1]), -abs(item[0])))
    repeated = len(keys) >= SHIFT_SHARE * min(len(held), len(new)) and len(set(keys)) >= SHIFT_MIN
    return (shift, len(keys)) if repeated else None


def refuse_shifted(plan: Plan) -> None:
    """Raise `IngestError` when a conversation of `plan` would write again, at one offset, the
    messages its notes hold (`shifted`)."""
    for source_id, (held, new) in sorted(plan.timed.items()):
        if (found := shifted(held, new)) is not None:
            shift, repeated = found
            hours = shift.total_seconds() / 3600
            raise IngestError(
                f"{source_id}: {repeated} messages would be written again, {abs(hours):g} h "
                f"{'later' if hours > 0 else 'earlier'} than the same messages already in the vault: "
                "the export was read in another time zone than when it was first ingested. Nothing was written",
                hint="ingest it with the --tz it was first ingested with (or [ingest] timezone); to move "
                "its messages to another zone, delete its notes first",
            )
