"""When an email was sent: its `Date:` header read (`parse_date_header`: a zone's name mail
writes read as the offset it names), and, when that does not say, what dates it, and how that
is said.

The chain: the `Date:` header; else the newest `Received:` header (the mailbox's own server's,
`received_date`); else the envelope: an mbox's `From ` line, a Maildir file name's
delivery time; else the modification time of the file that holds the message (an `.eml`, the
mbox, the Maildir message file). A time before 2 January 1970 is no date (a zero timestamp: a
mailer's placeholder, an archive extracted without its times), so a message is never dated
1970 while something later in the chain knows better.

A message dated otherwise than by its `Date:` is ingested and said: one warning per file (an
`.eml`, an mbox, a Maildir folder) with how many, by what, and the first of each, naming it
(`date_warnings`). An ingest says it only of the messages it writes: those an earlier ingest
wrote were said then.
"""

from __future__ import annotations

import email.utils
import mailbox
import os
import re
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from vaultmind.ingest.mailheaders import fix_raw
from vaultmind.ingest.model import DatedOtherwise
from vaultmind.markdown.render import iso_utc

# --- the Date header -------------------------------------------------------------------------

_WS_RE = re.compile(r"\s+")
# a zone Python's date parser reads as UTC, an hour or more off: an offset after GMT or UTC
# ("GMT+1", "GMT+0100", "UTC+05:30"), or a zone's name it does not know (RFC 5322 knows only the
# North American ones); those below name one offset each, as mail writes them (BST is British
# Summer Time, not Bangladesh's)
_GMT_OFFSET_RE = re.compile(r"\b(?:GMT|UTC|UT) ?([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)
_ZONE_NAME_RE = re.compile(r" ([A-Za-z]{3,4})$")
_ZONE_OFFSETS = {
    "CET": "+0100", "MEZ": "+0100", "CEST": "+0200", "MESZ": "+0200", "EET": "+0200", "EEST": "+0300",
    "WET": "+0000", "WEST": "+0100", "BST": "+0100", "MSK": "+0300", "JST": "+0900", "KST": "+0900",
    "HKT": "+0800", "SGT": "+0800", "AEST": "+1000", "AEDT": "+1100", "NZST": "+1200", "NZDT": "+1300",
}  # fmt: skip
# IST names three zones: India's (+05:30), Irish Summer Time (+01:00) and Israel's (+02:00). The
# one read is the one that puts the Date nearest before the message's newest Received header
# (when its mailbox's server took it in); without one, India's, where most mail so dated is written
_ZONE_CHOICES = {"IST": ("+0530", "+0100", "+0200")}
# a comment after the zone, as JavaScript and some webmail write it: "GMT+0100 (CET)",
# "+0100 (Central European Standard Time)"
_ZONE_COMMENT_RE = re.compile(r" ?\([^()]*\)$")


def _with_offset(text: str, received: datetime | None = None) -> str:
    """A Date header's text with its zone written as the numeric offset it names (an IST, the
    one nearest `received`: `_ZONE_CHOICES`), its trailing comment dropped."""
    text = _ZONE_COMMENT_RE.sub("", text)
    if (found := _GMT_OFFSET_RE.search(text)) is not None:
        return f"{text[: found.start()].rstrip()} {found[1]}{int(found[2]):02d}{found[3] or '00'}"
    if (found := _ZONE_NAME_RE.search(text)) is not None and found[1].upper() in _ZONE_OFFSETS:
        return f"{text[: found.start()]} {_ZONE_OFFSETS[found[1].upper()]}"
    if (found := _ZONE_NAME_RE.search(text)) is not None and found[1].upper() in _ZONE_CHOICES:
        readings = [f"{text[: found.start()]} {offset}" for offset in _ZONE_CHOICES[found[1].upper()]]
        if received is None:
            return readings[0]
        return min(readings, key=lambda reading: _before_received(_read_date(reading), received))
    return text


_CLOCK_SKEW = timedelta(minutes=5)  # a sender's clock ahead of the server's


def _before_received(sent: datetime | None, received: datetime) -> tuple[bool, float]:
    """How well `sent` (a reading of a Date) fits a message received at `received`: one sent
    after it (beyond a clock's skew) cannot be, then the nearest."""
    if sent is None:
        return True, 0.0
    return sent > received + _CLOCK_SKEW, abs((sent - received).total_seconds())


def _read_date(text: str) -> datetime | None:
    """`text` (a date, its zone an offset or a name RFC 5322 knows) in UTC, or None."""
    parsed: datetime | None
    try:
        parsed = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        parsed = None
    if parsed is None:
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        parsed = parsed.astimezone(UTC)
    except (OverflowError, ValueError):
        return None
    return usable_date(parsed)


def parse_date_header(raw: str | None, *, zones: bool = True, received: datetime | None = None) -> datetime | None:
    """A Date header's time (`received`: the newest Received header's, which tells an IST's
    zone); `zones=False` reads a zone `_with_offset` knows as UTC, as vaultmind did before
    (`ParsedEmail.date_read_before`)."""
    if not raw:
        return None
    text = _WS_RE.sub(" ", fix_raw(raw)).strip()
    return _read_date(_with_offset(text, received) if zones else text)


_EPOCH_DAY_END = datetime(1970, 1, 2, tzinfo=UTC)


def usable_date(when: datetime) -> datetime | None:
    """`when` (aware), unless it says no date: before 2 January 1970 (a zero timestamp written
    in some zone: a mailer's, an exporter's or an archive's placeholder) or after 2100."""
    return when if when >= _EPOCH_DAY_END and when.year <= 2100 else None


def received_date(values: Sequence[str]) -> datetime | None:
    """The date of the newest hop (the first `Received:` header) that has a usable one: the one
    the receiving mail server wrote, when the message reached the mailbox (the lower ones were
    written by servers the sender chose, and can say anything)."""
    for value in values:
        if ";" in value:
            parsed = parse_date_header(value.rsplit(";", 1)[1])
            if parsed is not None:
                return parsed
    return None


# --- dated otherwise ------------------------------------------------------------------------

_BY: dict[str, str] = {  # what a warning says messages were dated by, in the chain's order
    "Received": "{their} newest Received header",
    "from-line": "the mbox's From line",
    "file-name": "{their} Maildir file name, {its} delivery time",
    "mtime": "the file's modification time, when it was saved, not sent",
}
# asctime, as mbox From lines write it; Google Takeout puts a numeric zone before the year
_FROM_LINE_DATE_RE = re.compile(
    r"([A-Z][a-z]{2} +[A-Z][a-z]{2} +\d{1,2} +\d{1,2}:\d{2}:\d{2})(?: +([+-]\d{4}))? +(\d{4})\b"
)
_MAILDIR_TIME_RE = re.compile(r"^(\d{9,11})\.")


def from_line_date(line: bytes) -> datetime | None:
    """The time of an mbox `From ` line (`From a@b Sat Jun 30 06:06:01 2012`, or with a zone
    before the year, `… 06:06:01 +0200 2012`), or None."""
    match = _FROM_LINE_DATE_RE.search(line.decode("latin-1"))
    if match is None:
        return None
    stamp, zone, year = match.groups()
    try:
        when = datetime.strptime(f"{' '.join(stamp.split())} {year} {zone or '+0000'}", "%a %b %d %H:%M:%S %Y %z")
    except ValueError:
        return None
    return usable_date(when.astimezone(UTC))


def maildir_name_time(key: str) -> datetime | None:
    """The delivery time a Maildir file name starts with (`1710147600.M1P2.host:2,S`), or None
    (a name some other tool gave it)."""
    match = _MAILDIR_TIME_RE.match(key)
    return epoch_time(int(match.group(1))) if match else None


def maildir_file_time(folder: mailbox.Maildir, key: str) -> Callable[[], datetime | None]:
    """The modification time of a Maildir message's file (its delivery, when its name does not
    say it), read only when asked (`MaildirMessage.get_date`)."""

    def saved() -> datetime | None:
        try:
            return epoch_time(folder.get_message(key).get_date())
        except (OSError, KeyError, mailbox.Error):
            return None

    return saved


def file_time(path: Path | str) -> datetime | None:
    """The modification time of the file at `path`, or None (unreadable, or no time: the epoch)."""
    try:
        return epoch_time(os.stat(path).st_mtime)
    except OSError:
        return None


def epoch_time(seconds: float) -> datetime | None:
    """`seconds` since the epoch, to the second, or None (no usable date: `usable_date`)."""
    try:
        return usable_date(datetime.fromtimestamp(int(seconds), UTC))
    except (OverflowError, ValueError, OSError):
        return None


def date_warnings(dated: Sequence[DatedOtherwise], written: Collection[str] | None = None) -> list[str]:
    """One warning per file of `dated` (in their order): how many of its messages had no
    usable Date header, how many were dated by what (with the first, and the date used), and
    how many were left out. `written`: the ids an ingest wrote; the others are not said again
    (None: all are said). Messages left out are always said."""
    by_file: dict[str, list[DatedOtherwise]] = {}
    for item in dated:
        if item.at is None or written is None or item.message_id in written:
            by_file.setdefault(item.file, []).append(item)
    return [_warning(file, items) for file, items in by_file.items()]


def _warning(file: str, items: Sequence[DatedOtherwise]) -> str:
    """`old.mbox: 2 messages without a usable Date header — dated 1 by their newest Received
    header (message 2 <b@x>: 2012-06-29T23:00:00Z), 1 by the mbox's From line (message 1 <a@x>:
    2012-06-30T06:06:01Z)`; the first of each, and "…" when there are more. One way for all of
    them is said without a count: `new.eml: 1 message without a usable Date header — dated by
    the file's modification time …` (it had said "dated 1 by")."""
    parts = []
    for by, said in _BY.items():
        mine = [item for item in items if item.by == by]
        if mine:
            their, its = ("their", "its") if len(mine) > 1 else ("its", "the")
            count = "" if len(mine) == len(items) else f"{len(mine)} "
            parts.append(f"{count}by {said.format(their=their, its=its)} ({_example(mine)})")
    dated = f"dated {', '.join(parts)}" if parts else ""
    lost = [item for item in items if item.at is None]
    if lost:
        dated += f"{'; ' if dated else ''}{len(lost)} left out ({_example(lost)}): no Received header, envelope or file time either"
    it = "it" if len(items) == 1 else "them"
    if lost:
        dated += f"; give {it} a Date: header to ingest {it}"
    elif any(item.by == "mtime" for item in items):
        dated += f"; give {it} a Date: header to date {it} otherwise"
    return f"{file}: {len(items)} message{'s' if len(items) > 1 else ''} without a usable Date header — {dated}"


def _example(items: Sequence[DatedOtherwise]) -> str:
    first = items[0]
    said = ": ".join(filter(None, (first.named, iso_utc(first.at) if first.at is not None else "")))
    return said + (", …" if len(items) > 1 else "")
