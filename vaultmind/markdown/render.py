"""Pure renderers for the notes vaultmind writes, and the codec of the source-note format.

`render_source_note` turns one chat/email conversation into the canonical Markdown of
docs/vault-format.md: same input, same bytes (LF, fixed key order, no volatile values).
`markdown.chunking.message_leaves` reads it back; the helpers for the `%% vaultmind … %%`
meta line and the text escape live here so both directions share one definition.

Escapes:
- meta attribute values are double-quoted; `\\` `"` newline, CR and tab are backslash-escaped
  (`\\\\` `\\"` `\\n` `\\r` `\\t`) and a `%` that follows a `%` is written `\\%` so a value can
  never close the `%%` comment early.
- a message text line that, once its `> ` prefix is removed, starts with optional backslashes
  and `%%` then `vaultmind` (the meta line's shape) gets one more leading backslash; the parser
  removes one. Nothing else in a message is changed.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from vaultmind.errors import UsageError
from vaultmind.markdown.frontmatter import body_sha256

SourceKind = Literal["chat", "email"]

CALLOUT_TYPES: Mapping[str, str] = {"chat": "message", "email": "email"}
"""Callout type of one message, by source note `kind`."""

META_KEYS: tuple[str, ...] = ("id", "at", "author", "ref", "subject")

_META_LIKE_RE = re.compile(r"\\*%%[ \t]*vaultmind(?![A-Za-z0-9_-])")
_ESCAPED_META_LIKE_RE = re.compile(r"\\+%%[ \t]*vaultmind(?![A-Za-z0-9_-])")
_ATTR_RE = re.compile(r'([A-Za-z_][A-Za-z0-9_-]*)="((?:[^"\\]|\\.)*)"')
_UNESCAPE_RE = re.compile(r"\\(.)")
_UNESCAPES = {"n": "\n", "r": "\r", "t": "\t"}
_BLOCK_SLUG_RE = re.compile(r"[^a-z0-9]+")
# Control characters other than tab and line breaks: nothing an editor shows, and a NUL makes
# the whole note read as a binary file (by vaultmind's own reader too). Exports do carry them
# ("\u0000" in a chat message's JSON, a legacy text file read as Windows-1252).
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_PLAIN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9 _./@+-]*[A-Za-z0-9_./@+-]|[A-Za-z_]")
_YAML_WORDS = frozenset(["yes", "no", "on", "off", "true", "false", "null", "y", "n"])
_YAML_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_MAX_SLUG = 40


@dataclass(frozen=True, slots=True)
class SourceMeta:
    """What a source note says about its conversation as a whole."""

    kind: SourceKind
    source_id: str  # "slack:acme/general", "mbox:alice/inbox" …
    scope: str  # the folder below sources/<kind>/, e.g. "slack/acme/general"
    title: str
    participants: tuple[str, ...] = ()  # empty: authors in order of first message
    subject: str | None = None  # email only; defaults to the first message's subject


@dataclass(frozen=True, slots=True)
class Message:
    """One chat or email message."""

    message_id: str
    author: str
    timestamp: datetime | str  # aware datetime or ISO 8601 string (naive means UTC)
    text: str
    source_ref: str | None = None  # "slack://…", "mid:…"
    subject: str | None = None  # email
    to: tuple[str, ...] = ()  # email: its recipients ("Name <addr>")
    cc: tuple[str, ...] = ()


# --- small codecs ---------------------------------------------------------------------------


def to_utc(timestamp: datetime | str) -> datetime:
    """An aware UTC datetime from a datetime or an ISO 8601 string (naive means UTC)."""
    if isinstance(timestamp, str):
        try:
            parsed = datetime.fromisoformat(timestamp.strip())
        except ValueError as exc:
            raise UsageError(f"timestamp {timestamp!r} is not ISO 8601") from exc
    else:
        parsed = timestamp
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def iso_utc(timestamp: datetime | str) -> str:
    """`2024-03-04T09:00:00Z` (microseconds kept when present). Naive values are taken as UTC."""
    parsed = to_utc(timestamp)
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ" if parsed.microsecond else "%Y-%m-%dT%H:%M:%SZ"
    return parsed.strftime(fmt)


def _human_time(iso: str) -> str:
    return f"{iso[:10]} {iso[11:16]}"


def escape_attr(value: str) -> str:
    out: list[str] = []
    prev = ""
    for ch in value:
        if ch == "%" and prev == "%":
            out.append("\\%")
        else:
            out.append(_YAML_ESCAPES.get(ch, ch))
        prev = ch
    return "".join(out)


def unescape_attr(value: str) -> str:
    return _UNESCAPE_RE.sub(lambda m: _UNESCAPES.get(m.group(1), m.group(1)), value)


def format_meta(attrs: Iterable[tuple[str, str]]) -> str:
    """`%% vaultmind id="…" at="…" … %%` for the given (key, value) pairs, in that order."""
    return "%% vaultmind " + " ".join(f'{k}="{escape_attr(v)}"' for k, v in attrs) + " %%"


def parse_meta(content: str) -> dict[str, str] | None:
    """The attributes of a meta line (its `> ` prefix removed), or None if it is not one."""
    text = content.rstrip(" \t")
    if not (text.startswith("%%") and text.endswith("%%") and len(text) >= 4):
        return None
    inner = text[2:-2].strip(" \t")
    if not inner.startswith("vaultmind") or inner[9:10] not in ("", " ", "\t"):
        return None
    return {key: unescape_attr(value) for key, value in _ATTR_RE.findall(inner[9:])}


def escape_text_line(line: str) -> str:
    """Protect a message text line that looks like a meta line (see module docstring)."""
    return "\\" + line if _META_LIKE_RE.match(line) else line


def unescape_text_line(line: str) -> str:
    return line[1:] if _ESCAPED_META_LIKE_RE.match(line) else line


def block_id_for(message_id: str, taken: set[str]) -> str:
    """An Obsidian block id for a message, unique within `taken` (which it is added to).

    Short ids keep a readable slug ("D1:3" -> "m-d1-3", "1709542800.000100" ->
    "m-1709542800-000100"); long, empty or clashing ones use "m-" + 12 hex of sha256.
    """
    slug = _BLOCK_SLUG_RE.sub("-", message_id.lower()).strip("-")
    candidate = f"m-{slug}"
    if not slug or len(slug) > _MAX_SLUG or candidate in taken:
        digest = hashlib.sha256(message_id.encode("utf-8")).hexdigest()
        candidate = f"m-{digest[:12]}"
        n = 2
        while candidate in taken:
            candidate = f"m-{digest[:12]}-{n}"
            n += 1
    taken.add(candidate)
    return candidate


# --- YAML front matter, by hand ---------------------------------------------------------------


class Quoted(str):
    """A string `render_frontmatter` always double-quotes (hashes, ids that look like numbers)."""

    __slots__ = ()


def yaml_scalar(value: Any) -> str:
    """A YAML scalar: plain when unambiguous, else double-quoted with escapes."""
    if isinstance(value, Quoted):
        return '"' + "".join(_yaml_char(ch) for ch in value) + '"'
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    text = str(value)
    if _PLAIN_RE.fullmatch(text) and text.lower() not in _YAML_WORDS:
        return text
    return '"' + "".join(_yaml_char(ch) for ch in text) + '"'


def _yaml_char(ch: str) -> str:
    escaped = _YAML_ESCAPES.get(ch)
    if escaped is not None:
        return escaped
    code = ord(ch)
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return f"\\x{code:02x}"
    if code in (0x2028, 0x2029, 0xFEFF) or 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):
        return f"\\u{code:04x}"
    return ch


def render_frontmatter(items: Sequence[tuple[str, Any]]) -> str:
    """`---` … `---` with the keys in the given order; values: scalars, lists of scalars,
    or mappings of scalars. Ends with a newline."""
    out = ["---"]
    for key, value in items:
        if isinstance(value, list | tuple):
            if not value:
                out.append(f"{key}: []")
            else:
                out.append(f"{key}:")
                out.extend(f"  - {yaml_scalar(item)}" for item in value)
        elif isinstance(value, Mapping):
            if not value:
                out.append(f"{key}: {{}}")
            else:
                out.append(f"{key}:")
                out.extend(f"  {yaml_scalar(k)}: {yaml_scalar(v)}" for k, v in value.items())
        else:
            out.append(f"{key}: {yaml_scalar(value)}")
    out.append("---")
    return "\n".join(out) + "\n"


def render_note(items: Sequence[tuple[str, Any]], body: str) -> str:
    """A generated note: front matter `items` + `vaultmind_body_sha256` of `body`, then body
    (without control characters other than tabs and line breaks)."""
    body = _CONTROL_RE.sub("", body)
    return render_frontmatter([*items, ("vaultmind_body_sha256", Quoted(body_sha256(body)))]) + body


# --- source notes ---------------------------------------------------------------------------


def note_text(text: str) -> str:
    """A message's text as its note keeps it: line breaks as \\n, no control characters."""
    return _CONTROL_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def _one_line(text: str) -> str:
    return " ".join(_CONTROL_RE.sub("", text).split())


def render_message(message: Message, kind: SourceKind, block_id: str) -> str:
    """One message callout + its block id line, ending with a newline (no blank line after)."""
    at = iso_utc(message.timestamp)
    author = _one_line(message.author) or "unknown"
    lines = [f"> [!{CALLOUT_TYPES[kind]}] {author} · {_human_time(at)}"]
    for line in note_text(message.text).split("\n"):
        line = escape_text_line(line)
        lines.append(f"> {line}" if line else ">")
    attrs = [("id", message.message_id), ("at", at), ("author", message.author)]
    if message.source_ref is not None:
        attrs.append(("ref", message.source_ref))
    if kind == "email" and message.subject is not None:
        attrs.append(("subject", message.subject))
    if kind == "email":
        attrs.extend((key, "; ".join(people)) for key, people in (("to", message.to), ("cc", message.cc)) if people)
    lines.append("> " + format_meta(attrs))
    lines.append("")
    lines.append(f"^{block_id}")
    return "\n".join(lines) + "\n"


def render_source_note(meta: SourceMeta, messages: Sequence[Message]) -> str:
    """The canonical Markdown of a chat or email source note (docs/vault-format.md)."""
    if meta.kind not in CALLOUT_TYPES:
        raise UsageError(f"render_source_note renders chat and email notes, not {meta.kind!r}")
    title = _one_line(meta.title) or meta.source_id
    taken: set[str] = set()
    parts = [f"# {title}\n"]
    times: list[datetime] = []
    for message in messages:
        times.append(to_utc(message.timestamp))
        parts.append("\n" + render_message(message, meta.kind, block_id_for(message.message_id, taken)))
    body = "".join(parts)

    participants = list(meta.participants)
    if not participants:
        for message in messages:
            author = _one_line(message.author)
            if author and author not in participants:
                participants.append(author)
    items: list[tuple[str, Any]] = [
        ("vaultmind", "source"),
        ("kind", meta.kind),
        ("source_id", meta.source_id),
        ("scope", meta.scope),
        ("title", title),
    ]
    if meta.kind == "email":
        subject = meta.subject
        if subject is None:
            subject = next((m.subject for m in messages if m.subject is not None), "")
        items.append(("subject", subject))
    items.append(("participants", participants))
    if times:
        items.append(("time_start", iso_utc(min(times))))
        items.append(("time_end", iso_utc(max(times))))
    items.append(("messages", len(messages)))
    return render_note(items, body)
