"""When an email was sent, when its `Date:` header does not say, and how that is said.

The chain: the `Date:` header; else the newest `Received:` header (the mailbox's own server's,
`mime.parse_message`); else the envelope: an mbox's `From ` line, a Maildir file name's
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

import mailbox
import os
import re
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from pathlib import Path

from vaultmind.ingest.mime import usable_date
from vaultmind.ingest.model import DatedOtherwise
from vaultmind.markdown.render import iso_utc

_BY: dict[str, str] = {  # what a warning says messages were dated by, in the chain's order
    "Received": "their newest Received header",
    "from-line": "the mbox's From line",
    "file-name": "their Maildir file name, its delivery time",
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
    """`seconds` since the epoch, to the second, or None (no usable date: `mime.usable_date`)."""
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
    2012-06-30T06:06:01Z)`; the first of each, and "…" when there are more."""
    parts = []
    for by, said in _BY.items():
        mine = [item for item in items if item.by == by]
        if mine:
            parts.append(f"{len(mine)} by {said} ({_example(mine)})")
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
