"""Email exports → one `SourceBatch` per thread (bucket "thread").

Inputs (`parse_email_paths`): `.eml` files, mbox files, Maildir folders, and folders holding
any of these (`ingest/mailboxes.py`).

Naming:

- **account** — named after the path given: a folder's name (everything found inside it —
  `.eml` files, mbox files, Maildirs, sub-folders — shares it, so Inbox and Sent make one
  account), an mbox file's stem (`Work.mbox` → `work`), a single `.eml` file's folder. A
  thread whose messages come from several given paths belongs to the account of its earliest
  message. `account=` overrides it for a whole ingest. Spelled in ASCII (`mailboxes.account_name`:
  `strauß@straße.de` → `strauss-strasse.de`); a vault whose mail of the account an earlier
  vaultmind filed as `strau-strae.de` keeps that name for it, new threads included.
- **source_id** `email:<account>`: message leaf ids depend only on the account and the message,
  so regrouping threads never changes them.
- **scope** `<account>/<subject-slug>` and **note** `<YYYY-MM-DD of the first message>-<subject-slug>`
  (`-<6 hex>` appended when two threads of one ingest would share a note).

Threads: union-find over Message-ID, In-Reply-To and References (ids of messages missing from
the export still join their replies). The thread's subject is the earliest message's, with
`Re:`/`Fwd:`/`AW:`/`SV:`… and `[list]` tags removed. A message seen twice (two exports, or a
copy in Sent and in Inbox) is kept once, by Message-ID: the copy of the mailbox whose name
sorts first, so the result does not depend on the order of the paths; two that differ (in
text or attachments) are reported. Across ingests the writer does the same: a message already
in the vault, in any mailbox's note, is known, and a reply joins the note of the thread it
answers (`SourceBatch.related`).

Messages: id = Message-ID without `<>` (or `nomid-<hash>` of its sender, date, subject and
body when it has none; the date left out when it is a file's modification time); author
`Name <addr>`; time from `Date:`, else the newest `Received:` (the mailbox's own server's),
else the mbox `From ` line / Maildir file name, else the file's modification time
(`ingest/maildates.py`: never 1970 when something knows better; each but the `Date:` said,
one warning per file); `answers` = In-Reply-To, then
References (a note records those it does not hold: a reply ingested before its parent is
found by it, and the parent joins its note); text = the new text only
(`ingest/quotes.py`) plus an `Attachments: …` line; `ref` `mid:<id>` (none without a
Message-ID: the index cites `email://<account>/<id>`, `render.derived_ref`). The quoted parent cut
from a message goes with its batch (`SourceBatch.quoted`): the writer puts it back when the
message it answers is neither in the ingest nor in the vault.

Nothing in an export stops an ingest: a message that cannot be read, or has no usable date at
all (not even its file's time), is left out and reported (`parse_email_paths_with_report`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from vaultmind.errors import IngestError
from vaultmind.ingest.common import mail_cut_short
from vaultmind.ingest.mailboxes import (
    RawMessage,
    account_name,
    box_bytes,
    discover,
    earlier_account_name,
    read_messages,
)
from vaultmind.ingest.maildates import date_warnings
from vaultmind.ingest.mime import Attachment, MimeError, ParsedEmail, parse_message
from vaultmind.ingest.model import DatedBy, DatedOtherwise, QuotedParent, SourceBatch
from vaultmind.ingest.names import ascii_slug
from vaultmind.ingest.quotes import split_quoted
from vaultmind.markdown.render import Message, SourceMeta
from vaultmind.model import Progress
from vaultmind.plural import counted

SUBJECT_SLUG_MAX = 60
NO_SUBJECT = "(no subject)"

_PREFIX_RE = re.compile(
    r"^\s*(?:re|fw|fwd|aw|wg|sv|vs|vb|antw|antwort|odp|pd|rif|r|i|tr|réf|ref|enc|res|rv|vl|"
    r"ynt|yn|atb|odg|vá|továbbítás|転送|答复|回复|回覆|转发|轉寄|ответ|отв|пересл|fwd?)"
    r"\s*(?:\[\d+\]|\(\d+\))?\s*[:：]\s*",
    re.IGNORECASE,
)
_TAG_RE = re.compile(r"^\s*\[[^\[\]]{1,40}\]\s*")


@dataclass(frozen=True, slots=True)
class _Mail:
    key: str  # message id (Message-ID, or "nomid-…")
    real_id: bool
    parsed: ParsedEmail
    author: str
    at: datetime
    account: str
    origin: str
    file: str  # the .eml, mbox or Maildir folder that holds it
    named: str  # the message in its file, as a warning names it ("message 3 <a@x>"; "" for an .eml)
    by: DatedBy  # what dated it
    at_before: datetime | None = None  # the time an earlier vaultmind gave it, when not `at` (`_time_before`)


# --- messages -------------------------------------------------------------------------------


def _accept(raw: RawMessage, warnings: list[str]) -> _Mail | DatedOtherwise | None:
    """The message of `raw`; what says it is left out for want of any date; or None (said):
    unparseable."""
    try:
        parsed = parse_message(raw.data, size=raw.size)
    except MimeError as exc:
        warnings.append(f"{raw.origin}: unparseable: {exc}")
        return None
    at, by = _dated(raw, parsed)
    named = _named(raw, parsed)
    if at is None:
        return DatedOtherwise(raw.file, named, "", "", None)
    author = parsed.author
    if not author:
        author = "unknown"
        warnings.append(f"{raw.origin}: no sender (From, Sender, Reply-To, Return-Path); author 'unknown'")
    before = _time_before(raw, parsed, at) if by == "Date" else at
    at_before = before if before != at else None
    if parsed.message_id:
        return _Mail(parsed.message_id, True, parsed, author, at, raw.account, raw.origin, raw.file, named, by, at_before)
    digest = hashlib.sha256(
        "\0".join([author, _id_time(raw, parsed, at, by), parsed.subject, _body_before(parsed)]).encode(
            "utf-8", "surrogatepass"
        )
    ).hexdigest()
    return _Mail(f"nomid-{digest[:20]}", False, parsed, author, at, raw.account, raw.origin, raw.file, named, by, at_before)


def _body_before(parsed: ParsedEmail) -> str:
    """The body an earlier vaultmind read (a delivery report's: `ParsedEmail.body_before`)."""
    return parsed.body if parsed.body_before is None else parsed.body_before


def _id_time(raw: RawMessage, parsed: ParsedEmail, at: datetime, by: DatedBy) -> str:
    """The time the id of a message without a Message-ID hashes: the one an earlier vaultmind
    read (`_time_before`), so a message it wrote keeps its id. A file's modification time is no
    part of the message: a copy of the file is the same message."""
    return "" if by == "mtime" else _time_before(raw, parsed, at).isoformat()


def _time_before(raw: RawMessage, parsed: ParsedEmail, at: datetime) -> datetime:
    """The time an earlier vaultmind gave a message dated `at` now: its Date read with a zone
    it did not know as UTC (`ParsedEmail.date_read_before`), or, a Date it could not read at
    all, what dated it then (Received header, envelope)."""
    if parsed.date_unread_before:
        then, _ = _dated(raw, replace(parsed, date=None))
        return then if then is not None else at
    return parsed.date_read_before if parsed.date_read_before is not None else at


def _dated(raw: RawMessage, parsed: ParsedEmail) -> tuple[datetime | None, DatedBy]:
    """A message's time, and what gave it (`ingest/maildates.py`): its Date header, else its
    newest Received header, else its envelope (mbox From line, Maildir file name), else its
    file's modification time; (None, "") when there is none."""
    if parsed.date is not None:
        return parsed.date, "Date" if parsed.date_source == "Date" else "Received"
    if raw.envelope is not None:
        return raw.envelope, raw.envelope_from
    saved = raw.saved()
    return (saved, "mtime") if saved is not None else (None, "")


def _named(raw: RawMessage, parsed: ParsedEmail) -> str:
    """What a warning calls a message in its file: in an mbox or Maildir, where it is and its
    Message-ID, else its subject; "" for an .eml file (the file is the message)."""
    if not raw.where:
        return ""
    if parsed.message_id:
        return f"{raw.where} <{parsed.message_id}>"
    return f"{raw.where} (subject {parsed.subject!r})" if parsed.subject else f"{raw.where} (no Message-ID, no subject)"


def normalize_subject(subject: str) -> str:
    """The thread subject: `Re:`/`Fwd:`/`AW:`/`SV:`… prefixes and leading `[list]` tags removed."""
    text = " ".join(subject.split())
    while True:
        stripped = _PREFIX_RE.sub("", text, count=1)
        untagged = _TAG_RE.sub("", stripped, count=1)
        if untagged.strip():
            stripped = untagged
        if stripped == text:
            return text
        text = stripped


def _threads(mails: Sequence[_Mail]) -> list[list[_Mail]]:
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for mail in mails:
        root = find(mail.key)
        for other in (*mail.parsed.in_reply_to, *mail.parsed.references):
            other_root = find(other)
            if other_root != root:
                parent[other_root] = root
    groups: dict[str, list[_Mail]] = {}
    for mail in mails:
        groups.setdefault(find(mail.key), []).append(mail)
    threads = [sorted(group, key=lambda m: (m.at, m.key)) for group in groups.values()]
    return sorted(threads, key=lambda t: (t[0].at, t[0].key))


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{round(n / 1024)} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def attachments_line(attachments: Sequence[Attachment]) -> str:
    """`Attachments: a.pdf (application/pdf, 12 KB), b.png (image/png, 3 KB)`, or "" for none."""
    if not attachments:
        return ""
    items = [f"{a.filename} ({a.content_type}, {_size(a.size)})" for a in attachments]
    return "Attachments: " + ", ".join(items)


def _full_text(mail: _Mail) -> str:
    """A message's text as written, with what it quotes: two copies of one message compared."""
    return _message(mail, "\n\n".join(filter(None, split_quoted(mail.parsed.body)))).text


def _with_attachments(
    mail: _Mail, text: str, attachments: Sequence[Attachment], forwarded: Sequence[str] | None = None
) -> str:
    """`text` (the new text of `mail`), then the messages it forwards as attachments (its own,
    or `forwarded`), then the line listing `attachments`."""
    forwarded = mail.parsed.forwarded if forwarded is None else forwarded
    text = "\n\n".join(part for part in (text, *forwarded) if part)
    line = attachments_line(attachments)
    return (f"{text}\n\n{line}" if text else line) if line else text


def _earlier_texts(mail: _Mail, text: str) -> tuple[str, ...]:
    """The texts a vaultmind that did not list nameless inline images, or read no delivery
    report, gave `mail` (its note holds one of them), when they differ (`SourceBatch.earlier_texts`):
    of a report, its new text as read then, alone and with what it quoted then put back below it."""
    parsed = mail.parsed
    listed = [a for a in parsed.attachments if not a.inline]
    if parsed.body_before is not None:
        own, quote = split_quoted(parsed.body_before)
        text = _with_attachments(mail, own, listed, parsed.forwarded_before)
        return (text, f"{text}\n\n{quote}") if quote else (text,)
    if any(a.inline for a in parsed.attachments):
        return (_with_attachments(mail, text, listed),)
    return ()


def _message(mail: _Mail, text: str) -> Message:
    """The message of `mail`, whose new text (`split_quoted`) is `text`: then the messages it
    forwards as attachments, then its attachments' line."""
    text = _with_attachments(mail, text, mail.parsed.attachments)
    return Message(
        message_id=mail.key,
        author=mail.author,
        timestamp=mail.at,
        text=text,
        source_ref=f"mid:{mail.key}" if mail.real_id else None,
        subject=mail.parsed.subject or None,
        to=mail.parsed.to,
        cc=mail.parsed.cc,
        answers=tuple(dict.fromkeys((*mail.parsed.in_reply_to, *mail.parsed.references))),
    )


def _batches(threads: Sequence[list[_Mail]], account: str | None, earlier_accounts: Mapping[str, str]) -> list[SourceBatch]:
    """One batch per thread, under its account (`account` when given): with the account an
    earlier vaultmind named otherwise (`earlier_accounts`, `mailboxes.earlier_account_name`) as its
    legacy id, which a vault filing the account's mail under it keeps (`matching.as_earlier`)."""
    planned: list[tuple[str, str, str, str, list[_Mail]]] = []
    taken: dict[tuple[str, str], int] = {}
    for thread in threads:
        first = thread[0]
        subject = next((normalize_subject(m.parsed.subject) for m in thread if m.parsed.subject.strip()), "")
        subject = subject or NO_SUBJECT
        box = account or first.account
        slug = ascii_slug(subject, max_len=SUBJECT_SLUG_MAX)  # `Straße` → `strasse`, as folders spell it
        name = f"{first.at.date().isoformat()}-{slug}"
        key = (box, f"{slug}/{name}")
        taken[key] = taken.get(key, 0) + 1
        if taken[key] > 1:
            name += "-" + hashlib.sha256(first.key.encode("utf-8", "surrogatepass")).hexdigest()[:6]
        planned.append((box, slug, name, subject, thread))
    out: list[SourceBatch] = []
    for box, slug, name, subject, thread in planned:
        meta = SourceMeta(
            kind="email", source_id=f"email:{box}", scope=f"{box}/{slug}", title=subject, subject=subject
        )
        before = earlier_accounts.get(box, box)
        parts = [split_quoted(mail.parsed.body) for mail in thread]
        messages = tuple(_message(mail, text) for mail, (text, _) in zip(thread, parts, strict=True))
        held = {mail.key for mail in thread}
        related = sorted({ref for mail in thread for ref in (*mail.parsed.in_reply_to, *mail.parsed.references)} - held)
        quoted = tuple(
            QuotedParent(mail.key, tuple(mail.parsed.in_reply_to) or tuple(mail.parsed.references[-1:]), quote)
            for mail, (_, quote) in zip(thread, parts, strict=True)
            if quote
        )
        earlier = tuple(
            (mail.key, text) for mail, (own, _) in zip(thread, parts, strict=True) for text in _earlier_texts(mail, own)
        )
        out.append(
            SourceBatch(
                meta=meta,
                messages=messages,
                bucket="thread",
                note_name=name,
                related=tuple(related),
                quoted=quoted,
                earlier_texts=earlier,
                earlier_times=tuple((mail.key, mail.at_before) for mail in thread if mail.at_before is not None),
                legacy_source_id=f"email:{before}" if before != box else None,
                legacy_scope=f"{before}/{slug}" if before != box else None,
            )
        )
    return out


# --- entry points ---------------------------------------------------------------------------


def parse_email_paths_with_report(
    paths: Sequence[Path], *, account: str | None = None
) -> tuple[list[SourceBatch], list[str]]:
    """Batches (one per thread, in time order) and the warnings: files and messages left out,
    messages dated otherwise than by their Date header.

    Raises `IngestError` only for a path that does not exist or is not an email file.
    """
    batches, warnings, dated = parse_email_paths_dated(paths, account=account)
    return batches, warnings + date_warnings(dated)


def parse_email_paths_dated(
    paths: Sequence[Path], *, account: str | None = None, progress: Progress | None = None, vault: Path | None = None
) -> tuple[list[SourceBatch], list[str], list[DatedOtherwise]]:
    """`parse_email_paths_with_report`, the messages without a usable Date header apart (in the
    order read; of a message read twice, the copy kept): an ingest says those it writes
    (`maildates.date_warnings`). `progress("parsing", done, total)` in bytes of the mailboxes read;
    `vault`: the vault written to, whose own notes a folder given may hold."""
    warnings: list[str] = []
    box_account = account_name(account) if account else None
    mails: dict[str, _Mail] = {}
    read: list[_Mail | DatedOtherwise] = []
    boxes = discover(paths, warnings, vault=vault)
    earlier_accounts = {box_account: earlier_account_name(account)} if box_account and account else {}
    for box in boxes:
        earlier_accounts.setdefault(box.account, box.earlier_account)
    total = sum(box_bytes(box) for box in boxes) if progress is not None else 0
    done = 0
    for box in boxes:
        for raw in read_messages(box, warnings):
            if progress is not None and total:  # (an mbox's From lines are not counted: all said at the end)
                done += raw.size or len(raw.data)
                progress("parsing", min(done, total - 1), total)
            mail = _accept(raw, warnings)
            if mail is not None:
                read.append(mail)
            if not isinstance(mail, _Mail):
                continue
            seen = mails.get(mail.key)
            if seen is None or _kept(mail, seen, raw.origin, warnings):
                mails[mail.key] = mail
    if progress is not None and total:
        progress("parsing", total, total)
    warnings += _read_warnings([mail for mail in read if isinstance(mail, _Mail)])
    dated = [
        mail if isinstance(mail, DatedOtherwise) else DatedOtherwise(mail.file, mail.named, mail.key, mail.by, mail.at)
        for mail in read
        if isinstance(mail, DatedOtherwise) or (mail.by != "Date" and mails[mail.key] is mail)
    ]
    return _batches(_threads(list(mails.values())), box_account, earlier_accounts), warnings, dated


def _read_warnings(mails: Sequence[_Mail]) -> list[str]:
    """What the messages read say of their reading: each one whose text was not all read, by
    name; those read anyway (bytes replaced in a wrong charset, MIME defects), counted, the
    first named — a mailbox of thousands may have hundreds."""
    warnings = [f"{mail.origin}: {'; '.join(mail.parsed.lost)}: part of its text is not in the note" for mail in mails if mail.parsed.lost]
    odd = [mail for mail in mails if mail.parsed.problems]
    if odd:
        first = odd[0]
        more = f" (and {counted(len(odd) - 1, 'more message')})" if len(odd) > 1 else ""
        warnings.append(f"{first.origin}: read with {'; '.join(first.parsed.problems)}{more}")
    return warnings


def _kept(mail: _Mail, seen: _Mail, origin: str, warnings: list[str]) -> bool:
    """Whether `mail` is kept rather than `seen`, a copy of it read before (a message in several
    mailboxes): the whole one when the other is it cut short (a file cut off inside it), else
    the copy read cleaner (`_damage`: a copy read with bytes replaced or MIME defects loses to
    one read without), else the copy of the first mailbox, so the result does not depend on the
    order of the paths; two that differ otherwise (one extended by a paragraph, a server's
    disclaimer: `mail_cut_short`) are reported, naming the copy kept and the one left out."""
    mine, theirs = _full_text(mail), _full_text(seen)  # attachments too
    if mail_cut_short(theirs, mine) or mail_cut_short(mine, theirs):
        return mail_cut_short(theirs, mine)  # (cut inside an attachment, the cut one may read longer: "999 B", "1 KB")
    damage, damage_seen = _damage(mail, mine), _damage(seen, theirs)
    keep = (damage, mail.account, mail.origin) < (damage_seen, seen.account, seen.origin)
    if mine != theirs:
        kept, left = (mail, seen) if keep else (seen, mail)
        why = " (read with replaced bytes or defects)" if damage != damage_seen else ""
        warnings.append(
            f"{origin}: Message-ID <{mail.key}> also read with a different text; "
            f"kept the copy in {kept.origin}, left out the one in {left.origin}{why}"
        )
    return keep


def _damage(mail: _Mail, text: str) -> tuple[int, int, int]:
    """How damaged a copy was read, the least first: its parts not read, the replacement
    characters its text holds (bytes invalid in their charset, a header's too), then what it was
    read with anyway (bytes replaced in a wrong charset; each MIME defect)."""
    problems = sum(len(problem.split(", ")) for problem in mail.parsed.problems)
    return len(mail.parsed.lost), (text + mail.author).count("\ufffd"), problems


def parse_email_paths(paths: Sequence[Path], *, account: str | None = None) -> list[SourceBatch]:
    """`parse_email_paths_with_report` without the report; raises if no message could be read."""
    batches, warnings = parse_email_paths_with_report(paths, account=account)
    if not batches:
        shown = "; ".join(warnings[:3]) + (f" (and {len(warnings) - 3} more)" if len(warnings) > 3 else "")
        raise IngestError(
            "no email message could be read from " + ", ".join(str(p) for p in paths),
            hint=shown or "the paths hold no .eml, mbox or Maildir messages",
        )
    return batches
