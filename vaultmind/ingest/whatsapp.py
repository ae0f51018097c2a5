"""WhatsApp text exports ("Export chat" → without media, or the `.zip` with `_chat.txt`).

Every message starts with a line `<date>, <time> - <author>: <text>` (Android) or
`[<date>, <time>] <author>: <text>` (iOS); the following lines without such a header belong to
the same message. Dates are read in every order WhatsApp writes them (`dd/mm/yy`, `mm/dd/yy`,
`yyyy/mm/dd`, with `/`, `.` or `-`, 2- or 4-digit years), times in 24 h or 12 h (`PM`, `p. m.`,
`p.m.`), with or without seconds. Day-first or month-first is decided per file: a day above 12
settles it; otherwise the order that keeps the messages chronological wins, day-first on a tie.

Lines without `author: ` after the time that read as a notice WhatsApp writes ("created group",
"You were added", "Messages and calls are end-to-end encrypted", in a few languages:
`_ANDROID_NOTICE_RE`) are system lines, and are dropped. Any other such line (a calendar line
pasted into a message, "18/03/2024, 10:00 - dentist") and the lines below it are lines of the
message above it; with no message above, they are left out, and said.
iOS writes some of them as a message of the chat itself (the group, or the contact) whose text
starts with a left-to-right mark: such a line that is a whole notice sentence ("Alice added
Bob"), or the encryption notice, is dropped too; a participant's file never is.
"<Media omitted>" / "image omitted" stay as the message's text: they record that something was
sent. An edited message's mark ("<This message was edited>", in a few languages) is cut from
its text and its id listed in `SourceBatch.edited`: the writer replaces the text before the
edit with it. Export times are local and carry no zone: they are read in `tz` (default UTC); in the
hour a clock change repeats, a time that would go back more than `REPEAT_STEP` before the
message above it is read as the hour's second pass (`common.LocalClock`; a step of a few
minutes is a message sent offline, and stays). A message has no `ref`: the export gives no
address; the index cites `chat://whatsapp/<chat>/<id>` (`render.derived_ref`).
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, tzinfo
from functools import partial
from pathlib import Path

from vaultmind.ingest.common import LocalClock, MessageIds, read_text, strip_invisible
from vaultmind.ingest.errors import IngestError, ingest_error
from vaultmind.ingest.line_dates import DateOrder, Record, date_order, fits, guessed, read_date
from vaultmind.ingest.model import OtherOrder, SourceBatch
from vaultmind.ingest.whatsapp_notices import ios_notice, is_notice
from vaultmind.ingest.whatsapp_pasted import (
    dates_read_once,
    fold_pasted,
    from_ahead,
    from_elsewhere,
    other_order,
    other_shape,
)
from vaultmind.markdown.render import Message, SourceMeta
from vaultmind.vault.encoding import decode_text
from vaultmind.zones import local_to_utc

HEADER_RE = re.compile(
    r"\[?(?P<date>\d{1,4}[./-]\d{1,2}[./-]\d{1,4}),?\s+"
    r"(?P<time>\d{1,2}[:.]\d{2}(?:[:.]\d{2})?)"
    r"(?:\s?(?P<ampm>[AaPp]\.?\s?[Mm]\.?))?"
    r"(?:\]\s?|\s[-–]\s)"
    r"(?P<rest>.*)"
)
_DATE_SPLIT_RE = re.compile(r"[./-]")
# the mark an export puts after an edited message's text, in the export's language
_EDITED_RE = re.compile(
    r"\s*<(?:This message was edited|Diese Nachricht wurde bearbeitet\.?|Se editó este mensaje\.?|"
    r"Ce message a été modifié|Questo messaggio è stato modificato|Mensagem editada|Esta mensagem foi editada|"
    r"Dit bericht is bewerkt)>\s*$",
    re.IGNORECASE,
)
# the marks vaultmind knew before: a message marked otherwise was written with its mark in its
# text, its id hashing it — its id stays so, and a note holding that text holds it
_EDITED_BEFORE_RE = re.compile(
    r"\s*<(?:This message was edited|Diese Nachricht wurde bearbeitet|Se editó este mensaje\.?|"
    r"Ce message a été modifié|Questo messaggio è stato modificato|Mensagem editada|Dit bericht is bewerkt)>\s*$",
    re.IGNORECASE,
)
_COPY_SUFFIX_RE = re.compile(r"\s*\(\d{1,2}\)$")  # not "Room (101)"
_TITLE_PREFIX_RE = re.compile(r"^whatsapp\s+chat\s*(?:with|mit|con|avec|met|com|z|с|-)?\s*", re.IGNORECASE)
_MAX_AUTHOR = 80



def parse_whatsapp(
    path: Path, *, tz: tzinfo = UTC, date_order: str | None = None, warn: Callable[[str], None] | None = None
) -> list[SourceBatch]:
    """Parse one WhatsApp export (`.txt`, or a `.zip` holding one). `date_order` ("dmy" or
    "mdy") overrides the guess; a guess that could go either way is said when an ingest writes
    the chat's messages (`SourceBatch.said_if_written`); `warn` is told of a file cut short."""
    text, name, where = _read_export(path)
    order = {"dmy": "DMY", "mdy": "MDY"}.get(date_order or "")
    batches = parse_line_chat(where, text, platform="whatsapp", name=name, tz=tz, order=order, warn=warn)
    # an earlier vaultmind named a "… (1).txt" download "Alice (1)": any such numbered chat on
    # disk is this one (`matching.as_earlier`), when "Alice" has no notes of its own
    return [replace(batch, legacy_source_id=f"whatsapp:{name} (*)", legacy_scope=f"whatsapp/{name}") for batch in batches]


def parse_line_chat(
    path: Path,
    text: str,
    *,
    platform: str,
    name: str,
    tz: tzinfo,
    order: DateOrder | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[SourceBatch]:
    """The shared parser of line-based exports (WhatsApp, Signal): one batch for the chat."""
    cut = _cut_header(text)
    if cut is not None:
        if warn is not None:
            warn(
                f"{path}: line {text.count(chr(10), 0, cut) + 1}: the file ends inside a message's first line "
                f"(cut short?): {text[cut:]!r} left out — ingest the whole export to read that message"
            )
        text = text[:cut]
    records = fold_pasted(fold_pasted(_records(path, text, name), other_shape), partial(other_order, order))
    if order in ("DMY", "MDY"):
        wrong = next((r for r in records if r.year_first or not fits(r, order)), None)
        if wrong is not None:
            reading = "day/month" if order == "DMY" else "month/day"
            raise ingest_error(path, f"the date does not read as {reading}", line=wrong.line)
    either_way = False  # nothing in the file tells day/month from month/day
    inferred = order is None
    if order is None:
        order, either_way = date_order(path, records)
    date_of = dates_read_once(path, order)
    records = fold_pasted(records, from_ahead(date_of), into_unknown=True)
    records = fold_pasted(records, from_elsewhere(date_of))
    records, left_out = _keep_unknown_lines(path, records)
    drafts = _drafts(records)
    messages = [m for m in _timed(path, drafts, order, tz) if m is not None]
    if not messages:
        return []
    edits = [m.message_id for d, m in zip(drafts, messages, strict=True) if d.edited]
    earlier = [(m.message_id, d.own) for d, m in zip(drafts, messages, strict=True) if d.own != m.text]
    meta = SourceMeta(kind="chat", source_id=f"{platform}:{name}", scope=f"{platform}/{name}", title=name)
    guess = guessed(path, order) if either_way else ""
    other = {"DMY": "MDY", "MDY": "DMY"}.get(order) if inferred else None
    batch = SourceBatch(
        meta=meta,
        messages=tuple(messages),
        edited=tuple(edits),
        earlier_texts=tuple(earlier),
        local_times=True,
        said_if_written=((guess,) if guess else ()) + tuple(left_out),
        other_order=None if other is None else OtherOrder(
            read=order, other=other, messages=tuple(_timed(path, drafts, other, tz, misfits=True)), guess=guess,
            settled=not either_way,
        ),
    )
    return [batch]


@dataclass(frozen=True, slots=True)
class _Draft:
    """A message of the export before its date is read: its record, text, the text its id
    hashes (`own`), and whether the export marks it edited."""

    record: Record
    text: str
    own: str
    edited: bool


def _drafts(records: list[Record]) -> list[_Draft]:
    drafts: list[_Draft] = []
    for record in records:
        if record.author is None:
            continue
        body = marked = "\n".join(record.lines).strip("\n").rstrip()
        if not body.strip():
            continue
        edited = _EDITED_RE.search(body)
        if edited is not None:  # the text as it now reads; it replaces the one before the edit
            body = body[: edited.start()].rstrip()
            if not body.strip():
                continue
        # a message holding pasted header lines is known by its own lines: the id (and, to a
        # note written before, its text) an export read without the fold gave it
        own = body if record.head is None else "\n".join(record.lines[: record.head]).strip("\n").rstrip()
        if edited is not None and record.head is None and _EDITED_BEFORE_RE.search(marked) is None:
            own = marked  # a mark vaultmind learnt since ("<… bearbeitet.>"): the id it gave it then
        drafts.append(_Draft(record, body, own, edited is not None))
    return drafts


def _timed(path: Path, drafts: list[_Draft], order: DateOrder, tz: tzinfo, *, misfits: bool = False) -> list[Message | None]:
    """The messages of `drafts`, their dates read in `order` (with `misfits`, None for a date
    that does not read so), their ids hashing author, UTC time and own text (`MessageIds`)."""
    ids = MessageIds()
    clock = LocalClock(tz)
    out: list[Message | None] = []
    for draft in drafts:
        record = draft.record
        assert record.author is not None
        try:
            local = None if misfits and not fits(record, order) else read_date(path, record, order)
        except IngestError:
            if not misfits:
                raise
            local = None
        if local is None:
            out.append(None)
            continue
        timestamp = clock.place(local, local_to_utc(local, tz))  # (the hour a clock change repeats)
        out.append(Message(message_id=ids(record.author, timestamp, draft.own), author=record.author, timestamp=timestamp, text=draft.text))
    return out


def _read_export(path: Path) -> tuple[str, str, Path]:
    """The export's text, the chat's name, and the file to name in errors: the `.txt`, or the
    zip and its chat member (`zip:member`)."""
    if path.suffix.lower() != ".zip":
        return read_text(path), chat_name(path), path
    try:
        with zipfile.ZipFile(path) as archive:
            member = chat_member(archive)
            if member is None:
                texts = sorted(n for n in archive.namelist() if n.lower().endswith(".txt"))
                raise IngestError(
                    "no WhatsApp chat in this zip (no .txt in it starts with a message line"
                    + (f": {', '.join(texts[:5])}{' …' if len(texts) > 5 else ''})" if texts else ")"),
                    path=path,
                )
            where = Path(f"{path}:{member}")
            return read_text(where, archive.read(member)), chat_name(path), where
    except (zipfile.BadZipFile, OSError) as exc:
        raise IngestError(f"cannot read the zip: {exc}", path=path) from exc


_MEMBER_HEAD = 4096


def chat_member(archive: zipfile.ZipFile) -> str | None:
    """The chat of a WhatsApp zip: of its `.txt` members (hidden ones and macOS's `__MACOSX/`
    aside), those whose first line reads as a message line, `_chat.txt` (iOS) or the one named
    "WhatsApp Chat …" (Android) first, else by name; None when none reads so. (An Android zip
    "with media" holds the files sent: a document `Agenda.txt` sorts before the chat.)"""
    texts = sorted(
        n for n in archive.namelist()
        if n.lower().endswith(".txt") and not n.startswith("__MACOSX/") and not n.rsplit("/", 1)[-1].startswith(".")
    )

    def shaped(name: str) -> bool:
        try:
            with archive.open(name) as handle:
                head = handle.read(_MEMBER_HEAD)
        except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError):
            return False
        text = decode_text(head).text or ""
        first = next((line for line in text.split("\n") if line.strip()), "")
        return HEADER_RE.match(strip_invisible(first)) is not None

    def rank(name: str) -> tuple[bool, bool, str]:
        base = name.rsplit("/", 1)[-1]
        return (base.lower() != "_chat.txt", _TITLE_PREFIX_RE.match(base) is None, name)

    return next((name for name in sorted(texts, key=rank) if shaped(name)), None)


def chat_name(path: Path) -> str:
    """The chat's name from the export's file name ("WhatsApp Chat with Alice.txt" → "Alice"),
    without a browser's " (1)" of a second download."""
    stem = path.stem
    if stem.lower() in ("_chat", "chat") and path.parent.name:
        stem = path.parent.name
    stem = _COPY_SUFFIX_RE.sub("", stem) or stem
    return _TITLE_PREFIX_RE.sub("", stem).strip() or stem


def _records(path: Path, text: str, name: str = "") -> list[Record]:
    """The message lines of an export; `name`: the chat's (iOS says its notices as it)."""
    records: list[Record] = []
    for number, raw in enumerate(text.split("\n"), 1):
        line = strip_invisible(raw)
        match = HEADER_RE.match(line)
        if match is None:
            if records:
                records[-1].lines.append(line)
            elif line.strip():
                raise ingest_error(path, "expected a message line starting with a date and time", line=number)
            continue
        parts_text = _DATE_SPLIT_RE.split(match.group("date"))
        time_parts = [int(p) for p in re.split(r"[:.]", match.group("time"))]
        if (len(parts_text[0]) > 2 and len(parts_text[2]) > 2) or len(parts_text[1]) > 2:
            raise ingest_error(path, f"cannot read the date {match.group('date')!r}", line=number)
        author, body = _split_author(match.group("rest"))
        notice = author is None and is_notice(body)
        if author is not None and ": \u200e" in raw and ios_notice(author, body, name):
            author, notice = None, True  # iOS: a system notice said by the group
        ampm = match.group("ampm")
        date_marks = re.sub(r"\d", "", match.group("date"))
        records.append(
            Record(
                line=number,
                parts=(int(parts_text[0]), int(parts_text[1]), int(parts_text[2])),
                year_first=len(parts_text[0]) > 2,
                hour=time_parts[0],
                minute=time_parts[1],
                second=time_parts[2] if len(time_parts) > 2 else 0,
                ampm=ampm.replace(".", "").replace(" ", "").lower() if ampm else None,
                author=author,
                lines=[body] if author is not None else [],
                raw=line,
                notice=notice,
                upper_ampm=ampm is not None and ampm.strip() in ("AM", "PM"),
                # bracketed (iOS) or not, the date's marks and year's digits, seconds, 12 h clock
                shape=(line.startswith("["), date_marks, len(parts_text[2]) if len(parts_text[0]) <= 2 else 0,
                       len(time_parts), ampm is not None),
            )
        )
    if not records:
        raise ingest_error(path, "no message lines (a date and time, then `author: text`)", line=1)
    return records


_DIGITS_RE = re.compile(r"\d+")
_DATE_BEGUN_RE = re.compile(r"\[?(\d+)[./-](\d+)[./-](\d+)")  # a date's three parts, the last one begun


def _cut_header(text: str) -> int | None:
    """Where the file's last line starts, when the file ends inside a message's first line (a
    copy or download cut off in its date or time, `04/03/2024, 09:3`): no line break at the
    end, and that line is the start of the date and time the line above it that starts a
    message writes (digits aside), its year begun (`_year_begun`). Read, it was a line of the
    message above, which then had another id than in the whole export. A last line such as
    "24/7", "12.50" or "24.12." is no cut date: it stays the message's line."""
    if text.endswith("\n") or "\n" not in text:
        return None
    start = text.rfind("\n") + 1
    last = strip_invisible(text[start:])
    if HEADER_RE.match(last) or not re.match(r"\[?\d+[./-]\d", last):  # (a date begun, at least)
        return None
    for line in reversed(text[:start].split("\n")):
        header = HEADER_RE.match(strip_invisible(line))
        if header is not None:
            stamp = _DIGITS_RE.sub("0", header.string[: header.start("rest")])
            return start if stamp.startswith(_DIGITS_RE.sub("0", last)) and _year_begun(last, header) else None
    return None


def _year_begun(last: str, header: re.Match[str]) -> bool:
    """Whether `last` (a line shaped as the start of `header`'s date) holds the date's three
    parts, and its year — first or last, as `header` writes it — is the year of `header` or the
    next (a later message's), as far as `last` goes: a line of text that happens to read as a
    date's start ("24/7", "1.2.3") does not."""
    begun = _DATE_BEGUN_RE.match(last)
    if begun is None:
        return False
    parts = _DATE_SPLIT_RE.split(header.group("date"))
    index = 0 if len(parts[0]) == 4 else 2  # (year first: 2024-03-04, Signal; else day or month first)
    year, said = parts[index], begun.group(index + 1)
    years = (year, str(int(year) + 1).zfill(len(year)))
    whole = index == 0 or begun.end() < len(last)  # (a part followed by more of the line is complete)
    return any(y == said if whole else y.startswith(said) for y in years)


def _keep_unknown_lines(path: Path, records: list[Record]) -> tuple[list[Record], list[str]]:
    """`records` with each line that has no author and is no notice WhatsApp writes (nor one
    with lines of its own below it: a notice is one line) made a line of the message above it,
    with the lines below it: a line pasted into the message ("18/03/2024, 10:00 - dentist", a
    calendar). Before, it was taken for a system line and dropped with its lines. The message
    keeps the id its own lines give it (`Record.head`), as an earlier vaultmind gave it. Such
    lines with no message above them (the file's first), and a participant's message line
    written without the space after the colon ("Alice:."), are left out, and said."""
    out: list[Record] = []
    left_out: list[str] = []
    participants = {record.author for record in records if record.author is not None}
    for record in records:
        if record.author is not None or (record.notice and not any(line.strip() for line in record.lines)):
            out.append(record)
            continue
        unspaced = None if record.lines else _unspaced_author(record, participants)
        if unspaced is not None:
            left_out.append(
                f"{path}: line {record.line}: {record.raw!r} reads as a message by {unspaced} without the "
                "space an export writes after the name's colon; left out"
            )
            out.append(record)  # (dropped, as a system line: no line of the message above)
            continue
        above = out[-1] if out and out[-1].author is not None else None
        if above is None:
            if not record.notice:
                more = sum(1 for line in record.lines if line.strip())
                left_out.append(
                    f"{path}: line {record.line}: {record.raw!r}{f' and the {more} line(s) below it' if more else ''} "
                    "has no author, is no notice WhatsApp writes, and follows no message; left out"
                )
            out.append(record)  # (dropped, as a system line)
            continue
        if above.head is None:
            above.head = len(above.lines)
        above.lines.extend([record.raw, *record.lines])
    return out, left_out


def _unspaced_author(record: Record, participants: set[str]) -> str | None:
    """The participant a one-line system line names before a colon with no space after it
    ("John Doe:."): a message line written wrong, not a line pasted into the message above."""
    match = HEADER_RE.match(record.raw)
    rest = match.group("rest") if match is not None else ""
    return next((name for name in sorted(participants) if rest.startswith(f"{name}:")), None)


def _split_author(rest: str) -> tuple[str | None, str]:
    author, sep, body = rest.partition(": ")
    author = author.strip()
    if not sep or not author or len(author) > _MAX_AUTHOR or '"' in author:
        return None, rest
    return author, body


