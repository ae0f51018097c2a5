"""WhatsApp (and Signal) header lines that start no message: lines of another chat, or of a
schedule, pasted into a message, told apart by shape, date order and date (`other_shape`,
`other_order`, `from_ahead`, `from_elsewhere`), and made lines of the message above
(`fold_pasted`). See docs/ingest.md, WhatsApp."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from vaultmind.ingest.line_dates import DateOrder, Record, fits, read_date

PASTED_BACK = timedelta(hours=1)  # a header line further back than this, by a stranger, was pasted
OFFLINE_RUN = 20  # messages sent offline and delivered together are a few, not a chat's days


def fold_pasted(
    records: list[Record], pasted: Callable[[list[Record]], set[int]], *, into_unknown: bool = False
) -> list[Record]:
    """`records` with those `pasted` names (by index) made lines of the message above them: a
    message line copied from another chat into a message ("12/03/2024, 10:15 - Bob: hi" quoted
    from elsewhere) starts no message of this chat. Never into a system line, which is dropped
    with its lines: the line stays a message, as it was before. `into_unknown`: into a line
    without an author that is no notice either (a pasted "04/03/2024, 09:30 - registration
    opens", which `_keep_unknown_lines` makes a line of the message above, with its lines)."""
    found = pasted(records)
    out: list[Record] = []
    for index, record in enumerate(records):
        if index not in found or not out or (out[-1].author is None and (not into_unknown or out[-1].notice)):
            out.append(record)
            continue
        above = out[-1]
        if above.head is None:
            above.head = len(above.lines)
        above.lines.extend([record.raw, *record.lines[1:]] if record.author is not None else [record.raw, *record.lines])
    return out


def other_shape(records: list[Record]) -> set[int]:
    """The header lines not written as the export writes its dates and times (another layout,
    date marks, year, seconds or clock than most of its lines), by authors who write no line
    written so: an export writes every line alike, so such a line was pasted into the message
    above it. (A participant's stays a message: two exports joined into one file, or a phone
    whose clock went from 24 h to 12 h, write the chat's own lines two ways.)"""
    shapes = Counter(record.shape for record in records)
    usual = max(shapes, key=lambda shape: shapes[shape])
    participants = {record.author for record in records if record.shape == usual and record.author is not None}
    return {index for index, record in enumerate(records) if record.shape != usual and index and record.author not in participants}


def other_order(order: DateOrder | None, records: list[Record]) -> set[int]:
    """The header lines whose date does not read in the order (`order`, else the one more of
    the export's dates read in; none when one order reads them all, or each as many) — "12/31/2023" in an export
    that writes "31/12/2023" — by authors who write nothing else in the chat: pasted from
    another chat into the message above. (A participant's stays, and is an error, as before.)"""
    if records[0].year_first:
        return set()
    if order is None:
        fitting = {candidate: [fits(r, candidate) for r in records] for candidate in ("DMY", "MDY")}
        day_first, month_first = sum(fitting["DMY"]), sum(fitting["MDY"])
        if len(records) in (day_first, month_first) or day_first == month_first:
            return set()  # (one order reads them all; or nothing tells which is the export's)
        order = "DMY" if day_first > month_first else "MDY"
    misfits = {index for index, record in enumerate(records) if not fits(record, order)}
    participants = {record.author for index, record in enumerate(records) if index not in misfits}
    return {index for index in misfits if index and records[index].author not in participants | {None}}


def dates_read_once(path: Path, order: DateOrder) -> Callable[[Record], datetime]:
    """`read_date` of a record in `order`, each record's read once: `from_ahead` and
    `from_elsewhere` both date every message line (a 100,000-line export read its dates twice)."""
    read: dict[int, datetime] = {}  # (by the record's identity: records live as long as the parse)

    def date_of(record: Record) -> datetime:
        key = id(record)
        if key not in read:
            read[key] = read_date(path, record, order)
        return read[key]

    return date_of


def from_ahead(date_of: Callable[[Record], datetime]) -> Callable[[list[Record]], set[int]]:
    """The header lines dated more than `PASTED_BACK` after both the chat's line above them and
    its next line (neither such a line itself), by authors who write nothing else in the chat:
    an export is in time order, so a line that jumps days ahead, the chat then going on where
    it was, was pasted into the message above ("14/03/2024, 17:00 - submissions close: upload
    the PDF", a schedule). Left a message, its "author" was a made-up person, and, dated after
    the chat's next messages, it made them look pasted (`from_elsewhere`): they became its
    lines. (Both sides: lines above a message sent offline, dated back, are not ahead of the
    chat.) A participant's line stays a message; so do the file's first and last, and
    a line the chat reaches again right after one author's lines dated before it (`sent_offline`)."""

    def pasted(records: list[Record]) -> set[int]:
        dated = {index: date_of(r) for index, r in enumerate(records) if r.author is not None}
        ahead_of_next: set[int] = set()
        following: datetime | None = None
        for index in sorted(dated, reverse=True):
            if following is not None and dated[index] > following + PASTED_BACK:
                ahead_of_next.add(index)
            else:
                following = dated[index]
        ahead: set[int] = set()
        previous: datetime | None = None
        for index in sorted(dated):
            if index in ahead_of_next and previous is not None and dated[index] > previous + PASTED_BACK:
                ahead.add(index)
            else:
                previous = dated[index]
        participants = {r.author for index, r in enumerate(records) if index not in ahead}
        strangers = {index for index in ahead if records[index].author not in participants}
        return {index for index in strangers if not sent_offline(records, dated, index, ahead)}

    return pasted


def sent_offline(records: list[Record], dated: dict[int, datetime], index: int, ahead: set[int]) -> bool:
    """Whether the lines that make `index` look ahead of the chat are one author's messages
    delivered late, dated back (sent offline): the chat reaches `index`'s time again right
    after them, so `index` was the chat's own message (a group member who writes once,
    followed by a message sent offline hours before). A pasted schedule's line is ahead of
    the chat going on where it was, in lines of its members (or of one, in a chat with
    yourself: more than `OFFLINE_RUN` lines)."""
    authors: set[str | None] = set()
    run = 0
    for later in range(index + 1, len(records)):
        if later not in dated or later in ahead:
            continue
        if dated[later] >= dated[index] - PASTED_BACK:
            return len(authors) == 1
        authors.add(records[later].author)
        run += 1
        if len(authors) > 1 or run > OFFLINE_RUN:
            return False
    return False


def from_elsewhere(date_of: Callable[[Record], datetime]) -> Callable[[list[Record]], set[int]]:
    """The header lines of authors who write nothing else in the chat, each more than
    `PASTED_BACK` before the latest message above it: a message quoted from another chat,
    pasted into the message above it. (A participant's message quoted so, or one dated after
    the message it was pasted into, cannot be told from a message, and stays one.) A system
    line sets no latest time: a line of a message that reads as one ("18/03/2024, 10:00 -
    dentist", a pasted calendar) is dated anywhere, and the messages below it are no less the chat's."""

    def pasted(records: list[Record]) -> set[int]:
        back: set[int] = set()
        latest: datetime | None = None
        for index, record in enumerate(records):
            if record.author is None:
                continue
            at = date_of(record)
            if latest is not None and at < latest - PASTED_BACK:
                back.add(index)
            else:
                latest = at if latest is None else max(latest, at)
        participants = {r.author for index, r in enumerate(records) if index not in back}
        return {index for index in back if records[index].author not in participants}

    return pasted
