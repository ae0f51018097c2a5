"""One raw email message (RFC 5322 / MIME bytes) → the fields an email note needs.

Built on the standard library's `email` package: parsed with `policy.compat32` (as tolerant
as `policy.default` and ~10x faster on messages with thousands of parts, since headers are
decoded here by hand anyway), re-parsed with `policy.default` if that ever raises. Nothing here
trusts the message:

- headers are read raw and decoded by hand: RFC 2047 encoded words, raw 8-bit bytes (UTF-8,
  else cp1252), unknown charsets → replacement characters; never an exception;
- the body is the best text: `text/plain`, else HTML converted to text (`ingest/html.py`);
  parts of a `multipart/mixed` are joined in order, `multipart/alternative` picks one;
- charsets: the declared one (a few aliases widened: gb2312 → gb18030, iso-8859-1 → cp1252…),
  then UTF-8, then cp1252, then latin-1; a declared charset with a few bad bytes keeps its
  decoding with replacement characters;
- attachments are listed (name, type, size), never inlined — an inline image of an HTML body
  without a file name too, named by its Content-ID (`image001.png`) or type (`inline.png`);
  an attached `message/rfc822` is
  listed by its subject, and its text is kept apart (`forwarded`, under a "---------- Forwarded
  message ----------" header with its From, Date, Subject, To: never cut as a quote), or is
  the text when the outer message has none;
- caps: a message over `MAX_MESSAGE_BYTES` is refused, a body over `MAX_TEXT_CHARS` is cut
  (and says so), MIME nesting deeper than `MAX_DEPTH` is not followed.

`MimeError` means the message could not be read at all; everything else degrades and is
noted in `ParsedEmail.problems`.
"""

from __future__ import annotations

import codecs
import email.header
import email.utils
import mimetypes
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email import policy
from email.message import Message
from email.parser import BytesParser, HeaderParser

from vaultmind.ingest.html import html_to_text

MAX_MESSAGE_BYTES = 32 * 1024 * 1024
MAX_TEXT_CHARS = 200_000
MAX_DEPTH = 12

_CHARSET_ALIASES = {  # widened to the superset mail clients actually mean
    **dict.fromkeys(("gb2312", "gbk", "x-gbk", "euc-cn"), "gb18030"),
    **dict.fromkeys(("ks_c_5601-1987", "ks_c_5601", "euc-kr"), "cp949"),
    **dict.fromkeys(("iso-8859-1", "iso8859-1", "latin1", "latin-1"), "cp1252"),
    **dict.fromkeys(("shift-jis", "shift_jis", "x-sjis"), "cp932"),
    "us-ascii": "ascii",
    "iso-8859-8-i": "iso-8859-8",
    "windows-874": "cp874",
    "x-mac-roman": "mac_roman",
    "unicode-1-1-utf-7": "utf-7",
    "utf8": "utf-8",
}
_NO_CHARSET = frozenset({"", "unknown-8bit", "x-unknown", "unknown", "default", "charset", "none"})
_ANGLE_ID_RE = re.compile(r"<([^<>\s]+)>")
_WS_RE = re.compile(r"\s+")
_NBSP_RE = re.compile("[\u00a0\u202f]")
_ADDRESS_RE = re.compile(r"[\w.+'-]+@[\w-]+(?:\.[\w-]+)+")
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
    problems: tuple[str, ...] = ()
    to: tuple[str, ...] = ()  # recipients as `author` is written ("Name <addr>" or the address)
    cc: tuple[str, ...] = ()
    forwarded: tuple[str, ...] = ()  # messages attached to it, each under a "Forwarded message" header
    # a delivery report (a bounce) as vaultmind read it before it read reports (`_report`), when
    # that differs: its body and forwarded messages (a message without a Message-ID keeps the id
    # hashed from that body; a note written then holds that text)
    body_before: str | None = None
    forwarded_before: tuple[str, ...] = ()


# --- bytes and headers ----------------------------------------------------------------------


def _codec(charset: str | None) -> str | None:
    name = (charset or "").strip().strip("\"'").lower()
    if name in _NO_CHARSET:
        return None
    name = _CHARSET_ALIASES.get(name, name)
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _mostly_utf8(data: bytes) -> str | None:
    """UTF-8 with a few bad bytes (replaced), or None when it does not look like UTF-8 at all."""
    lossy = data.decode("utf-8", errors="replace")
    bad = lossy.count("\ufffd")
    good = sum(1 for ch in lossy if ord(ch) > 127) - bad
    return lossy if good >= 2 * bad else None


def decode_bytes(data: bytes, charset: str | None = None) -> tuple[str, str | None]:
    """`(text, problem)`: bytes decoded by the declared charset, else UTF-8 → cp1252 → latin-1."""
    declared = _codec(charset)
    problem = None
    if charset and declared is None and charset.strip().strip("\"'").lower() not in _NO_CHARSET:
        problem = f"unknown charset {charset!r}"
    if declared:
        try:
            return data.decode(declared), None
        except UnicodeDecodeError:
            lossy = data.decode(declared, errors="replace")
            if declared != "ascii" and lossy.count("\ufffd") * 200 <= max(len(lossy), 1):
                return lossy, f"invalid {charset} bytes replaced"
            problem = f"text is not valid {charset}"
        except LookupError:  # a codec that fails at decode time (rare)
            problem = f"unknown charset {charset!r}"
    try:
        return data.decode("utf-8"), problem
    except UnicodeDecodeError:
        lossy_utf8 = _mostly_utf8(data)
        if lossy_utf8 is not None:
            return lossy_utf8, problem or "invalid UTF-8 bytes replaced"
    try:
        return data.decode("cp1252"), problem
    except UnicodeDecodeError:
        return data.decode("latin-1"), problem


def _fix_raw(value: str) -> str:
    """A header value parsed from bytes keeps 8-bit bytes as surrogates: decode them properly."""
    if not any("\udc80" <= ch <= "\udcff" for ch in value):
        return value
    return decode_bytes(value.encode("utf-8", "surrogateescape"))[0]


def decode_header(raw: object) -> str:
    """A header value as one line of text: RFC 2047 decoded, unfolded, whitespace collapsed."""
    if raw is None:
        return ""
    text = _fix_raw(str(raw))
    try:
        parts = email.header.decode_header(text)
    except Exception:  # a malformed encoded word: keep the raw text
        return _WS_RE.sub(" ", text).strip()
    out: list[str] = []
    for value, charset in parts:
        if isinstance(value, str):
            out.append(value)
        elif charset is None:
            out.append(value.decode("raw-unicode-escape", errors="replace"))
        else:
            out.append(decode_bytes(value, charset)[0])
    return _WS_RE.sub(" ", "".join(out)).strip()


def _raw_headers(msg: Message) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = {}
    for name, value in msg.raw_items():
        headers.setdefault(name.lower(), []).append(str(value))
    return headers


def _first(headers: dict[str, list[str]], name: str) -> str | None:
    values = headers.get(name)
    return values[0] if values else None


def _ids(raw: str | None) -> tuple[str, ...]:
    if not raw:
        return ()
    text = _fix_raw(raw)
    found = _ANGLE_ID_RE.findall(text)
    if not found:
        found = [tok.strip("<>,;") for tok in text.split() if "@" in tok]
    out: list[str] = []
    for item in found:
        if item and item not in out:
            out.append(item)
    return tuple(out)


def _author(raw: str | None) -> tuple[str, str]:
    """`(author, address)` of a From-like header."""
    if not raw:
        return "", ""
    text = _fix_raw(raw)
    for name, addr in _addresses(text):
        if "@" not in addr:
            continue
        name = _unquoted(decode_header(name))
        addr = addr.strip()
        if name and name.lower() != addr.lower():
            return f"{name} <{addr}>", addr.lower()
        return addr, addr.lower()
    decoded = decode_header(text)
    match = _ADDRESS_RE.search(decoded)
    return decoded, (match.group(0).lower() if match else "")


def _unquoted(name: str) -> str:
    """A display name without the quotes around it (`'Alice Chen'`), its own kept: `Doe, John
    "JD"` keeps the quote that closes "JD"."""
    name = name.strip()
    while len(name) > 1 and name[0] == name[-1] and name[0] in "\"'":
        name = name[1:-1].strip()
    return name


def _addresses(text: str) -> list[tuple[str, str]]:
    """(name, address) of each address of a header, with a name written surname first without
    quotes kept whole: `Chen, Alice <alice@example.com>` is one address of "Chen, Alice", where
    the standard parser sees "Chen" alone and then "Alice <alice@example.com>"."""
    try:
        pairs = email.utils.getaddresses([_WS_RE.sub(" ", text)])
    except Exception:
        return []
    out: list[tuple[str, str]] = []
    before = ""  # words with no address of their own: the start of the next name
    for name, addr in pairs:
        if "@" not in addr:
            piece = (name or addr).strip()
            before = f"{before}, {piece}" if before and piece else before or piece
            continue
        if before and name.strip():
            name = f"{before}, {name.strip()}"
        before = ""
        out.append((name, addr))
    return out


MAX_RECIPIENTS = 50  # of one header kept (a mailing to hundreds is a list, not a conversation)


def _recipients(headers: dict[str, list[str]], name: str) -> tuple[str, ...]:
    """The addresses of every `name` header (To, Cc), each once, as `_author` writes them."""
    out: list[str] = []
    for raw in headers.get(name, []):
        for person, addr in _addresses(_fix_raw(raw)):
            if "@" not in addr:
                continue
            person = _unquoted(decode_header(person))
            written = f"{person} <{addr.strip()}>" if person and person.lower() != addr.lower() else addr.strip()
            if written not in out:
                out.append(written)
    return tuple(out[:MAX_RECIPIENTS])


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


def _parse_date(raw: str | None, *, zones: bool = True, received: datetime | None = None) -> datetime | None:
    """A Date header's time (`received`: the newest Received header's, which tells an IST's
    zone); `zones=False` reads a zone `_with_offset` knows as UTC, as vaultmind did before
    (`ParsedEmail.date_read_before`)."""
    if not raw:
        return None
    text = _WS_RE.sub(" ", _fix_raw(raw)).strip()
    return _read_date(_with_offset(text, received) if zones else text)


_EPOCH_DAY_END = datetime(1970, 1, 2, tzinfo=UTC)


def usable_date(when: datetime) -> datetime | None:
    """`when` (aware), unless it says no date: before 2 January 1970 (a zero timestamp written
    in some zone: a mailer's, an exporter's or an archive's placeholder) or after 2100."""
    return when if when >= _EPOCH_DAY_END and when.year <= 2100 else None


def _received_date(values: Sequence[str]) -> datetime | None:
    """The date of the newest hop (the first `Received:` header) that has a usable one: the one
    the receiving mail server wrote, when the message reached the mailbox (the lower ones were
    written by servers the sender chose, and can say anything)."""
    for value in values:
        if ";" in value:
            parsed = _parse_date(value.rsplit(";", 1)[1])
            if parsed is not None:
                return parsed
    return None


# --- the body -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Body:
    texts: list[str] = field(default_factory=list)
    html_used: bool = False
    plain_used: bool = False
    attachments: list[Attachment] = field(default_factory=list)
    enclosed: list[Message] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    forwarded: list[str] = field(default_factory=list)
    reports: bool = True  # read delivery reports (`_report`); False: as vaultmind did before
    reported: bool = False  # a delivery report was read


def _param(part: Message, header: str, name: str) -> object:
    """A header parameter, read from the raw header (8-bit bytes decoded first, not replaced)."""
    for key, value in part.raw_items():
        if key.lower() == header:
            probe = Message()
            probe[header] = _fix_raw(str(value))
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
    text, problem = decode_bytes(_payload_bytes(part), _charset(part))
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
    if depth > MAX_DEPTH:
        body.problems.append(f"MIME nesting deeper than {MAX_DEPTH} levels not followed")
        return
    ctype = part.get_content_type()
    maintype = ctype.split("/", 1)[0]
    name = _filename(part)
    if body.reports and ctype in REPORT_TYPES:
        text = _report(part, ctype)
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


# a delivery report's parts (RFC 3464, RFC 6533): its status, the headers of the message returned
REPORT_TYPES = frozenset(
    {"message/delivery-status", "message/global-delivery-status", "text/rfc822-headers", "message/global-headers"}
)


def _report(part: Message, ctype: str) -> str:
    """A delivery report's part as text: its status, one line per recipient (`_status`), or the
    headers of the message returned (From, Date, Subject, To)."""
    text = decode_bytes(_payload_bytes(part), _charset(part))[0].replace("\r\n", "\n")
    if not ctype.endswith("-status"):
        returned = HeaderParser(policy=policy.compat32).parsestr(text.lstrip("\n"), headersonly=True)
        return _forwarded_header(returned, "The message returned (its headers)").strip() if returned.keys() else ""
    payload = part.get_payload()
    if isinstance(payload, list):  # (the parser reads each block of fields as a message)
        text = "\n\n".join(str(block.as_string()) for block in payload if isinstance(block, Message))
    blocks = [
        [(key.lower(), decode_header(value)) for key, value in HeaderParser(policy=policy.compat32).parsestr(block).items()]
        for block in re.split(r"\n[ \t]*\n", text.strip("\n"))
    ]
    return _status(blocks)


def _status(blocks: list[list[tuple[str, str]]]) -> str:
    """`Delivery status (reported by <server>):` and a line per recipient: its address (the one
    the message was sent to, when another), action, status code, the server's diagnostic, and
    until when a delayed message is retried."""
    fields = [field for block in blocks for field in block]
    reporter = next((_typed(value) for key, value in fields if key == "reporting-mta"), "")
    lines = [f"Delivery status{f' (reported by {reporter})' if reporter else ''}:"]
    for block in blocks:
        found = dict(reversed(block))  # (a field named twice: its first value)
        final = _typed(found.get("final-recipient", ""))
        if not final and "action" not in found:
            continue
        original = _typed(found.get("original-recipient", ""))
        who = final or original or "a recipient"
        if original and final and original.lower() != final.lower():
            who += f" (sent to {original})"
        what = ", ".join(x for x in (found.get("action", ""), found.get("status", "")) if x)
        details = [found.get("diagnostic-code", "")]
        if found.get("will-retry-until"):
            details.append(f"will retry until {found['will-retry-until']}")
        lines.append(" — ".join([f"- {who}: {what or 'no action given'}", *(x for x in details if x)]))
    if len(lines) == 1:  # no recipient named: the fields as they are
        lines += [f"{key.title()}: {value}" for key, value in fields if key != "reporting-mta"]
    return "\n".join(lines) if len(lines) > 1 or reporter else ""


def _typed(value: str) -> str:
    """A report field's value without its type (`rfc822; <bob@example.com>` → the address)."""
    return value.split(";", 1)[-1].strip().strip("<>").strip()


def _enclosed(part: Message, ctype: str, name: str | None, body: _Body) -> None:
    """An attached message: listed by its subject; kept aside in case the outer has no text."""
    enclosed = _enclosed_message(part)
    subject = decode_header(enclosed.get("subject")) if enclosed is not None else ""
    size = len(_payload_bytes(part)) if enclosed is None else _message_size(enclosed)
    label = name or (f"{subject}.eml" if subject else "message.eml")
    body.attachments.append(Attachment(label, ctype, size))
    if enclosed is not None and len(body.enclosed) < 3:
        body.enclosed.append(enclosed)


def _walk_alternative(children: list[Message], body: _Body, depth: int) -> None:
    """Pick one rendering: a `text/plain` one with text, else the first with any text. The
    images and files of the others (an HTML rendering's pasted images, which the plain one
    cannot show) are listed with the chosen one's attachments; their text parts (the
    `text/calendar` rendering of an invitation) are renderings, not files, and are not."""
    chosen: tuple[Message, _Body] | None = None
    fallback: tuple[Message, _Body] | None = None
    for child in sorted(children, key=lambda c: c.get_content_type() != "text/plain"):
        trial = _Body(reports=body.reports)
        _walk(child, trial, depth + 1)
        if trial.texts and trial.plain_used and not trial.html_used:
            chosen = (child, trial)
            break
        if fallback is None and trial.texts:
            fallback = (child, trial)
    read, chosen_body = chosen or fallback or (child, trial)
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


def _body_of(msg: Message, depth: int = 0, *, reports: bool = True) -> _Body:
    body = _Body(reports=reports)
    _walk(msg, body, depth)
    # an empty wrapper around an enclosed message (a forward as attachment): use its text;
    # beside a text of its own, each enclosed message follows it as a forwarded message
    if body.enclosed and depth < MAX_DEPTH:
        alone = not body.texts
        for enclosed in body.enclosed[:1] if alone else body.enclosed:
            inner = _body_of(enclosed, depth + 1, reports=reports)
            text = "\n\n".join(t for t in inner.texts if t.strip())
            if text and not alone:
                body.forwarded.append(_forwarded_header(enclosed) + text)
            elif text:
                body.texts.append(text)
            body.html_used |= inner.html_used
            body.reported |= inner.reported
            body.problems.extend(inner.problems)
    return body


def _forwarded_header(msg: Message, title: str = "Forwarded message") -> str:
    """The lines a mail program puts above a message it forwards inline."""
    lines = [f"---------- {title} ----------"]
    for key in ("From", "Date", "Subject", "To"):
        value = decode_header(msg.get(key.lower()))
        if value:
            lines.append(f"{key}: {value}")
    return "\n".join(lines) + "\n\n"


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


def parse_message(data: bytes) -> ParsedEmail:
    """Decode one message. Raises `MimeError` only when the bytes are not a message at all."""
    if len(data) > MAX_MESSAGE_BYTES:
        raise MimeError(f"message of {len(data)} bytes is over the {MAX_MESSAGE_BYTES}-byte cap")
    if not data.strip():
        raise MimeError("empty message")
    msg, body = _parse(data)
    before = _body_of(msg, reports=False) if body.reported else None
    headers = _raw_headers(msg)
    if not headers:
        raise MimeError("no headers (not an email message)")
    author, address = "", ""
    for name in ("from", "sender", "reply-to", "return-path"):
        author, address = _author(_first(headers, name))
        if author:
            break
    received = _received_date(headers.get("received", []))
    date = _parse_date(_first(headers, "date"), received=received)
    date_source = "Date" if date is not None else ""
    if date is None:
        date = received
        date_source = "Received" if date is not None else ""
    # (as an earlier vaultmind read it: a Date whose zone it did not know, else the Received)
    read_before = _parse_date(_first(headers, "date"), zones=False) or received
    ids = _ids(_first(headers, "message-id"))
    text = _NBSP_RE.sub(" ", "\n\n".join(body.texts))
    problems = list(dict.fromkeys(body.problems))
    defects = {type(d).__name__ for d in getattr(msg, "defects", [])}
    if defects:
        problems.append("MIME defects: " + ", ".join(sorted(defects)))
    return ParsedEmail(
        message_id=ids[0] if ids else None,
        in_reply_to=_ids(_first(headers, "in-reply-to")),
        references=_ids(" ".join(headers.get("references", []))),
        subject=decode_header(_first(headers, "subject")),
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
        to=_recipients(headers, "to"),
        cc=_recipients(headers, "cc"),
        forwarded=_forwarded(body),
        body_before=None if before is None else _cap(_NBSP_RE.sub(" ", "\n\n".join(before.texts))),
        forwarded_before=() if before is None else _forwarded(before),
    )


def _forwarded(body: _Body) -> tuple[str, ...]:
    return tuple(_cap(_NBSP_RE.sub(" ", text)) for text in body.forwarded)
