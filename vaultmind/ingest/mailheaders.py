"""An email's headers and charsets, decoded by hand, never trusted: RFC 2047 encoded words, raw
8-bit bytes (UTF-8, else cp1252), unknown charsets → replacement characters; never an
exception. Text is decoded by its declared charset (a few aliases widened: gb2312 → gb18030,
iso-8859-1 → cp1252…), then UTF-8, then cp1252, then latin-1. Addresses are read as mail
programs write them, a name written surname first without quotes kept whole."""

from __future__ import annotations

import codecs
import email.header
import email.utils
import re
from email.message import Message

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
_ADDRESS_RE = re.compile(r"[\w.+'-]+@[\w-]+(?:\.[\w-]+)+")


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


NOT_VALID = "text is not valid"  # (a problem `decode_bytes` says: the declared charset does not read the bytes)


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
            problem = f"{NOT_VALID} {charset}"
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


def fix_raw(value: str) -> str:
    """A header value parsed from bytes keeps 8-bit bytes as surrogates: decode them properly."""
    if not any("\udc80" <= ch <= "\udcff" for ch in value):
        return value
    return decode_bytes(value.encode("utf-8", "surrogateescape"))[0]


def decode_header(raw: object) -> str:
    """A header value as one line of text: RFC 2047 decoded, unfolded, whitespace collapsed."""
    if raw is None:
        return ""
    text = fix_raw(str(raw))
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


def raw_headers(msg: Message) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = {}
    for name, value in msg.raw_items():
        headers.setdefault(name.lower(), []).append(str(value))
    return headers


def first_header(headers: dict[str, list[str]], name: str) -> str | None:
    values = headers.get(name)
    return values[0] if values else None


def header_ids(raw: str | None) -> tuple[str, ...]:
    if not raw:
        return ()
    text = fix_raw(raw)
    found = _ANGLE_ID_RE.findall(text)
    if not found:
        found = [tok.strip("<>,;") for tok in text.split() if "@" in tok]
    out: list[str] = []
    for item in found:
        if item and item not in out:
            out.append(item)
    return tuple(out)


def author_of(raw: str | None) -> tuple[str, str]:
    """`(author, address)` of a From-like header."""
    if not raw:
        return "", ""
    text = fix_raw(raw)
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


def recipients(headers: dict[str, list[str]], name: str) -> tuple[str, ...]:
    """The addresses of every `name` header (To, Cc), each once, as `author_of` writes them."""
    out: list[str] = []
    for raw in headers.get(name, []):
        for person, addr in _addresses(fix_raw(raw)):
            if "@" not in addr:
                continue
            person = _unquoted(decode_header(person))
            written = f"{person} <{addr.strip()}>" if person and person.lower() != addr.lower() else addr.strip()
            if written not in out:
                out.append(written)
    return tuple(out[:MAX_RECIPIENTS])


FORWARDED = "Forwarded message"  # the title of the header above a message forwarded inline


def forwarded_header(msg: Message, title: str = FORWARDED) -> str:
    """The lines a mail program puts above a message it forwards inline."""
    lines = [f"---------- {title} ----------"]
    for key in ("From", "Date", "Subject", "To"):
        value = decode_header(msg.get(key.lower()))
        if value:
            lines.append(f"{key}: {value}")
    return "\n".join(lines) + "\n\n"
