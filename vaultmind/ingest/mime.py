"""One raw email message (RFC 5322 / MIME bytes) → the fields an email note needs.

Built on the standard library's `email` package: parsed with `policy.compat32` (as tolerant
as `policy.default` and ~10x faster on messages with thousands of parts, since headers are
decoded here by hand anyway), re-parsed with `policy.default` if that ever raises. Nothing here
trusts the message:

- headers are read raw and decoded by hand (`ingest/mailheaders.py`), the Date too
  (`ingest/maildates.py`): never an exception;
- the body is the best text: `text/plain`, else HTML converted to text (`ingest/html.py`), else
  an invitation's events (`ingest/invites.py`); a base64 part that does not decode is not read;
  parts of a `multipart/mixed` are joined in order, `multipart/alternative` picks one;
- charsets: the declared one, then UTF-8, then cp1252, then latin-1 (`mailheaders.decode_bytes`);
  a declared charset with a few bad bytes keeps its decoding with replacement characters;
- attachments are listed (name, type, size), never inlined — an inline image of an HTML body
  without a file name too, named by its Content-ID (`image001.png`) or type (`inline.png`);
  an attached `message/rfc822` is
  listed by its subject, and its text is kept apart (`forwarded`, under a "---------- Forwarded
  message ----------" header with its From, Date, Subject, To: never cut as a quote), or is
  the text when the outer message has none;
- a delivery report (a bounce) reads as its status and the returned message's headers
  (`ingest/reports.py`);
- caps: a message over `MAX_MESSAGE_BYTES` is read to the cap, a body over `MAX_TEXT_CHARS` is cut
  (and says so), MIME nesting deeper than `MAX_DEPTH` is not followed, the text of attached
  messages past `MAX_ENCLOSED` is not read (each is still listed).

`MimeError` means the message could not be read at all; everything else degrades and is
noted: in `ParsedEmail.lost` what was not read, in `ParsedEmail.problems` what was read anyway
(bytes replaced, MIME defects). The email adapter reports both (`email._read_warnings`).
"""

from __future__ import annotations

import email.utils
import mimetypes
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from email import policy
from email.message import Message
from email.parser import BytesParser

from vaultmind.ingest.base64_damage import UNDECODABLE, undecodable
from vaultmind.ingest.html import html_to_text
from vaultmind.ingest.invites import invitations_text
from vaultmind.ingest.maildates import parse_date_header, received_date
from vaultmind.ingest.mailheaders import (
    author_of,
    decode_bytes,
    decode_header,
    first_header,
    fix_raw,
    forwarded_header,
    header_ids,
    raw_headers,
    recipients,
)
from vaultmind.ingest.reports import REPORT_TYPES, report_text, returned_in_text

MAX_MESSAGE_BYTES = 32 * 1024 * 1024
MAX_TEXT_CHARS = 200_000
MAX_DEPTH = 12
MAX_ENCLOSED = 20  # attached messages whose text is read (each follows the text as a forwarded message)

CALENDAR_TYPES = frozenset({"text/calendar", "application/ics"})
_NBSP_RE = re.compile("[\u00a0\u202f]")
_FILENAME_BAD_RE = re.compile(r"[\x00-\x1f\x7f]+")
_MIME_LINE_RE = re.compile(r"^(?:--\S*|content-[\w-]+:.*|mime-version:.*)$", re.IGNORECASE)


class MimeError(Exception):
    """The bytes are not a readable email message."""


@dataclass(frozen=True, slots=True)
class Attachment:
    filename: str
    content_type: str
    size: int  # bytes (decoded)
    # an image pasted into the message: a nameless inline resource of an HTML body (named from
    # its Content-ID or type), or one of the HTML rendering of a message read in plain text.
    # Listed since it is, so a note written before does not list it
    inline: bool = False


@dataclass(frozen=True, slots=True)
class ParsedEmail:
    """The fields of one message, decoded. `body` is the full text (quotes not yet cut)."""

    message_id: str | None
    in_reply_to: tuple[str, ...]
    references: tuple[str, ...]
    subject: str
    author: str  # "Name <addr>", or the address, or "" when there is no sender at all
    address: str  # the sender's address, lower-cased ("" when unknown)
    date: datetime | None  # aware, UTC
    date_source: str  # "Date", "Received" or "" (no usable date)
    body: str
    attachments: tuple[Attachment, ...] = ()
    # the time vaultmind read from the headers before it knew a Date's zone ("GMT+1", "CET": as
    # UTC; "2024-03-12 10:00:00 CET" not at all, so the newest Received), when that differs: a
    # message without a Message-ID keeps the id hashed from it
    date_read_before: datetime | None = None
    # a Date read only since, in a message without a Received header: vaultmind dated it then by
    # its envelope (an mbox From line) or its file's time, and hashed that into its id
    date_unread_before: bool = False
    html_only: bool = False
    problems: tuple[str, ...] = ()  # read anyway: bytes replaced, MIME defects
    lost: tuple[str, ...] = ()  # text not read: parts nested too deep, attached messages past the cap
    to: tuple[str, ...] = ()  # recipients as `author` is written ("Name <addr>" or the address)
    cc: tuple[str, ...] = ()
    forwarded: tuple[str, ...] = ()  # messages attached to it, each under a "Forwarded message" header
    # the message as vaultmind read it before it read delivery reports (`report_text`), skipped
    # base64 that does not decode and wrote invitations (`_Body.earlier`), when that differs: its
    # body and forwarded messages (a message without a Message-ID keeps the id hashed from that
    # body; a note written then holds that text)
    body_before: str | None = None
    forwarded_before: tuple[str, ...] = ()


# --- the body -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Body:
    texts: list[str] = field(default_factory=list)
    html_used: bool = False
    plain_used: bool = False
    attachments: list[Attachment] = field(default_factory=list)
    enclosed: list[Message] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    forwarded: list[str] = field(default_factory=list)
    # read as vaultmind did before it read delivery reports (`report_text`), skipped a base64
    # text part that does not decode (`undecodable`: its raw base64 was the text) and wrote an
    # invitation's event (`invites`): the body a note written then holds (`ParsedEmail.body_before`)
    earlier: bool = False
    reported: bool = False  # a delivery report was read
    undecodable: bool = False  # a base64 text part did not decode
    calendars: list[str] = field(default_factory=list)  # the VCALENDAR texts of its calendar parts
    invited: bool = False  # its text is its invitations' events (it had no other)
    defects: set[str] = field(default_factory=set)  # the MIME defects of every part read


def _param(part: Message, header: str, name: str) -> object:
    """A header parameter, read from the raw header (8-bit bytes decoded first, not replaced)."""
    for key, value in part.raw_items():
        if key.lower() == header:
            probe = Message()
            probe[header] = fix_raw(str(value))
            try:
                return probe.get_param(name, header=header)
            except Exception:
                return None
    return None


def _filename(part: Message) -> str | None:
    """The attachment's name: RFC 2231 parameters, RFC 2047 words and raw 8-bit all decoded."""
    raw = _param(part, "content-disposition", "filename") or _param(part, "content-type", "name")
    if isinstance(raw, tuple):  # RFC 2231: (charset, language, value)
        try:
            raw = email.utils.collapse_rfc2231_value(raw, errors="replace")
        except Exception:
            raw = str(raw[2])
    if not raw:
        return None
    name = decode_header(email.utils.unquote(str(raw)))
    name = _FILENAME_BAD_RE.sub(" ", name).replace("\\", "/").rsplit("/", 1)[-1].strip()
    return name or None


def _payload_bytes(part: Message) -> bytes:
    try:
        data = part.get_payload(decode=True)
    except Exception:
        data = None
    if isinstance(data, bytes):
        return data
    raw = part.get_payload()
    if isinstance(raw, str):
        return raw.encode("utf-8", "surrogateescape")
    return b""


def _charset(part: Message) -> str | None:
    try:
        return part.get_content_charset()
    except Exception:
        return None


def _part_text(part: Message, body: _Body) -> str:
    data, charset = _payload_bytes(part), _charset(part)
    if undecodable(part, data, charset):  # (decoding recorded the part's defects)
        body.undecodable = True
        if not body.earlier:
            body.lost.append(UNDECODABLE)
            return ""
    text, problem = decode_bytes(data, charset)
    if problem:
        body.problems.append(problem)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _enclosed_message(part: Message) -> Message | None:
    payload = part.get_payload()
    if isinstance(payload, list) and payload and isinstance(payload[0], Message):
        return payload[0]
    data = _payload_bytes(part)
    if not data.strip():
        return None
    try:
        return BytesParser(policy=policy.compat32).parsebytes(data)
    except Exception:
        return None


def _attach(part: Message, ctype: str, body: _Body, name: str | None = None, *, inline: bool = False) -> None:
    if name is None:
        name = _inline_name(part, ctype) if inline else "unnamed" + (mimetypes.guess_extension(ctype, strict=False) or "")
    body.attachments.append(Attachment(name, ctype, len(_payload_bytes(part)), inline))


_CID_NAME_RE = re.compile(r"[^A-Za-z0-9._-]+")


def _inline_name(part: Message, ctype: str) -> str:
    """A name for a nameless inline resource: its Content-ID's part before `@`
    (`<image001.png@01DA…>` → `image001.png`), given the type's extension when it has none,
    else `inline` and the extension (`inline.png`)."""
    cid = decode_header(part.get("content-id")).strip().strip("<>").split("@", 1)[0]
    stem = _CID_NAME_RE.sub("-", cid).strip("-.")[:60] or "inline"
    extension = mimetypes.guess_extension(ctype, strict=False) or ""
    return stem if mimetypes.guess_type(stem, strict=False)[0] else stem + extension


def _walk(part: Message, body: _Body, depth: int) -> None:
    """Read `part` into `body`, and note its MIME defects (those its decoding found too): the
    damage of a copy counts every part's, not only the message's (`email._damage`)."""
    _walk_part(part, body, depth)
    body.defects.update(type(d).__name__ for d in part.defects)


def _walk_part(part: Message, body: _Body, depth: int) -> None:
    if depth > MAX_DEPTH:
        body.lost.append(f"MIME nesting deeper than {MAX_DEPTH} levels not followed")
        return
    ctype = part.get_content_type()
    maintype = ctype.split("/", 1)[0]
    name = _filename(part)
    if not body.earlier and ctype in REPORT_TYPES:
        text = report_text(part, ctype, decode_bytes(_payload_bytes(part), _charset(part))[0])
        if text:
            body.texts.append(text)
        body.reported = True
        return
    if maintype == "message":  # (compat32 calls an enclosed message "multipart": check first)
        if ctype in ("message/rfc822", "message/global"):
            _enclosed(part, ctype, name, body)
        # disposition-notification, external-body…: machine data, skipped
        return
    if maintype == "multipart" and not part.is_multipart():  # no boundary found: its raw text
        raw = _part_text(part, body)
        text = "\n".join(x for x in raw.split("\n") if not _MIME_LINE_RE.match(x)).strip()
        if text:
            body.texts.append(text)
            body.plain_used = True
        return
    if part.is_multipart():
        children = [c for c in part.get_payload() if isinstance(c, Message)]
        if ctype == "multipart/alternative" and len(children) > 1:
            _walk_alternative(children, body, depth)
        else:
            for child in children:
                _walk(child, body, depth + 1)
        return
    if ctype in CALENDAR_TYPES or (name or "").lower().endswith(".ics"):
        body.calendars.append(decode_bytes(_payload_bytes(part), _charset(part))[0])
    try:
        disposition = part.get_content_disposition()
    except Exception:
        disposition = None
    if disposition == "attachment" or (name and ctype not in ("text/plain", "text/html")):
        _attach(part, ctype, body, name)
        return
    if ctype == "text/html":
        text = html_to_text(_part_text(part, body))
        body.html_used = True
    elif ctype.endswith("/plain") or (maintype == "text" and not name and ctype != "text/calendar"):
        text = _part_text(part, body)
        body.plain_used = True
    else:  # images, archives…: listed, a nameless inline resource of an HTML body by its Content-ID
        _attach(part, ctype, body, name, inline=name is None and part.get("content-id") is not None)
        return
    if text.strip():
        body.texts.append(text.strip("\n"))


def _enclosed(part: Message, ctype: str, name: str | None, body: _Body) -> None:
    """An attached message: listed by its subject; kept aside in case the outer has no text."""
    enclosed = _enclosed_message(part)
    subject = decode_header(enclosed.get("subject")) if enclosed is not None else ""
    size = len(_payload_bytes(part)) if enclosed is None else _message_size(enclosed)
    label = name or (f"{subject}.eml" if subject else "message.eml")
    body.attachments.append(Attachment(label, ctype, size))
    if enclosed is not None and len(body.enclosed) < MAX_ENCLOSED:
        body.enclosed.append(enclosed)
    elif enclosed is not None:
        body.lost.append(f"more than {MAX_ENCLOSED} attached messages: the text of those after the {MAX_ENCLOSED}th is not read")


def _walk_alternative(children: list[Message], body: _Body, depth: int) -> None:
    """Pick one rendering: a `text/plain` one with text, else the first with any text; a
    rendering in base64 that does not decode has none (the HTML one is read instead, and that
    is said). The images and files of the others (an HTML rendering's pasted images, which the
    plain one cannot show) are listed with the chosen one's attachments; their text parts (the
    `text/calendar` rendering of an invitation) are renderings, not files, and are not."""
    chosen: tuple[Message, _Body] | None = None
    fallback: tuple[Message, _Body] | None = None
    skipped = False  # a rendering skipped as base64 that does not decode
    for child in sorted(children, key=lambda c: c.get_content_type() != "text/plain"):
        trial = _Body(earlier=body.earlier)
        _walk(child, trial, depth + 1)
        body.defects |= trial.defects
        body.undecodable |= trial.undecodable
        body.calendars.extend(trial.calendars)
        if trial.undecodable and not trial.texts:
            skipped = True
            continue
        if trial.texts and trial.plain_used and not trial.html_used:
            chosen = (child, trial)
            break
        if fallback is None and trial.texts:
            fallback = (child, trial)
    read, chosen_body = chosen or fallback or (child, trial)
    if skipped and chosen_body.texts:
        body.problems.append(f"{UNDECODABLE}, read from another rendering")
    elif skipped:
        body.lost.append(UNDECODABLE)
    body.texts.extend(chosen_body.texts)
    body.html_used |= chosen_body.html_used
    body.plain_used |= chosen_body.plain_used
    body.reported |= chosen_body.reported
    body.attachments.extend(chosen_body.attachments)
    listed = {(a.filename, a.content_type, a.size) for a in chosen_body.attachments}
    for other in children:
        if other is not read:
            body.attachments.extend(
                a for a in _resources(other, depth + 1) if (a.filename, a.content_type, a.size) not in listed
            )
    body.enclosed.extend(chosen_body.enclosed)
    body.problems.extend(chosen_body.problems)
    body.lost.extend(chosen_body.lost)


def _resources(part: Message, depth: int) -> list[Attachment]:
    """The images and files of a rendering not read (`_walk_alternative`), as its walk lists
    them, without converting its text."""
    if depth > MAX_DEPTH:
        return []
    if part.is_multipart():
        return [a for child in part.get_payload() if isinstance(child, Message) for a in _resources(child, depth + 1)]
    ctype = part.get_content_type()
    if ctype.split("/", 1)[0] in ("text", "message", "multipart"):
        return []
    name = _filename(part)
    return [Attachment(name or _inline_name(part, ctype), ctype, len(_payload_bytes(part)), True)]


def _listed_once(attachments: Sequence[Attachment]) -> tuple[Attachment, ...]:
    """`attachments` without the inline images that are attached too (the same name, type and
    size): an HTML rendering shows the file the message also attaches, one file, listed once."""
    attached = {(a.filename, a.content_type, a.size) for a in attachments if not a.inline}
    return tuple(a for a in attachments if not a.inline or (a.filename, a.content_type, a.size) not in attached)


def _message_size(msg: Message) -> int:
    try:
        return len(msg.as_bytes(policy=policy.compat32))
    except Exception:
        return 0


def _body_of(msg: Message, depth: int = 0, *, earlier: bool = False) -> _Body:
    body = _Body(earlier=earlier)
    _walk(msg, body, depth)
    # an empty wrapper around an enclosed message (a forward as attachment): its text is the
    # message's; every other enclosed message follows the text as a forwarded message
    if body.enclosed and depth < MAX_DEPTH:
        for enclosed in body.enclosed:
            inner = _body_of(enclosed, depth + 1, earlier=earlier)
            text = "\n\n".join(t for t in inner.texts if t.strip())
            if text and body.texts:
                body.forwarded.append(forwarded_header(enclosed) + text)
            elif text:
                body.texts.append(text)
            body.html_used |= inner.html_used
            body.reported |= inner.reported
            body.undecodable |= inner.undecodable
            body.defects |= inner.defects
            body.problems.extend(inner.problems)
            body.lost.extend(inner.lost)
    if not body.texts and body.calendars and not earlier:  # an invitation with no other text
        text = invitations_text(body.calendars)
        body.texts += [text] if text else []
        body.invited = bool(text)
    return body


def _cap(text: str) -> str:
    if len(text) <= MAX_TEXT_CHARS:
        return text
    cut = text.rfind("\n", 0, MAX_TEXT_CHARS)
    cut = cut if cut > MAX_TEXT_CHARS // 2 else MAX_TEXT_CHARS
    return text[:cut].rstrip() + f"\n\n[… {len(text) - cut} more characters not ingested]"


# --- the message ----------------------------------------------------------------------------


def _parse(data: bytes) -> tuple[Message, _Body]:
    errors: list[str] = []
    for pol in (policy.compat32, policy.default):
        try:
            msg = BytesParser(policy=pol).parsebytes(data)
            return msg, _body_of(msg)
        except Exception as exc:  # the email package can raise almost anything on garbage
            errors.append(f"{type(exc).__name__}: {exc}")
    raise MimeError("cannot parse the MIME structure (" + "; ".join(errors) + ")")


def parse_message(data: bytes, *, size: int | None = None) -> ParsedEmail:
    """Decode one message. Raises `MimeError` only when the bytes are not a message at all.
    A message over `MAX_MESSAGE_BYTES` (`size`: its whole size, when `data` is its start) is read
    up to the cap: its headers and the text before it (a mail's text comes before its
    attachments), what follows not read (said in `lost`)."""
    whole = max(len(data), size or 0)
    over = whole > MAX_MESSAGE_BYTES
    data = data[:MAX_MESSAGE_BYTES]
    if not data.strip():
        raise MimeError("empty message")
    msg, body = _parse(data)
    before = _body_of(msg, earlier=True) if body.reported or body.undecodable or body.invited else None
    headers = raw_headers(msg)
    if not headers:
        raise MimeError("no headers (not an email message)")
    author, address = "", ""
    for name in ("from", "sender", "reply-to", "return-path"):
        author, address = author_of(first_header(headers, name))
        if author:
            break
    received = received_date(headers.get("received", []))
    date = parse_date_header(first_header(headers, "date"), received=received)
    date_source = "Date" if date is not None else ""
    if date is None:
        date = received
        date_source = "Received" if date is not None else ""
    # (as an earlier vaultmind read it: a Date whose zone it did not know, else the Received)
    read_before = parse_date_header(first_header(headers, "date"), zones=False) or received
    ids = header_ids(first_header(headers, "message-id"))
    text = _NBSP_RE.sub(" ", "\n\n".join(body.texts))
    raw_text, text = text, returned_in_text(text, address, first_header(headers, "return-path") or "")
    problems = list(dict.fromkeys(body.problems))
    defects = body.defects
    if defects and not over:  # (a message cut at the cap has unclosed parts: the cut is said)
        problems.append("MIME defects: " + ", ".join(sorted(defects)))
    return ParsedEmail(
        message_id=ids[0] if ids else None,
        in_reply_to=header_ids(first_header(headers, "in-reply-to")),
        references=header_ids(" ".join(headers.get("references", []))),
        subject=decode_header(first_header(headers, "subject")),
        author=author,
        address=address,
        date=date,
        date_source=date_source,
        date_read_before=read_before if date_source == "Date" and read_before != date else None,
        date_unread_before=date_source == "Date" and read_before is None,
        body=_cap(text),
        attachments=_listed_once(body.attachments),
        html_only=body.html_used and not body.plain_used,
        problems=tuple(problems),
        lost=tuple(dict.fromkeys(body.lost))
        + ((f"{whole / 2**20:.1f} MB, over the {MAX_MESSAGE_BYTES // 2**20} MB cap: what follows its first "
            f"{MAX_MESSAGE_BYTES // 2**20} MB (attachments, mostly) is not read",) if over else ()),
        to=recipients(headers, "to"),
        cc=recipients(headers, "cc"),
        forwarded=_forwarded(body),
        body_before=(  # (a plain-text bounce's returned headers were its text as they were)
            _cap(_NBSP_RE.sub(" ", "\n\n".join(before.texts))) if before is not None else _cap(raw_text) if raw_text != text else None
        ),
        forwarded_before=() if before is None else _forwarded(before),
    )


def _forwarded(body: _Body) -> tuple[str, ...]:
    return tuple(_cap(_NBSP_RE.sub(" ", text)) for text in body.forwarded)
