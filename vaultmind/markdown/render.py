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
  removes one.
- outside code (fenced blocks, backtick spans) and autolinks, three things Obsidian would read
  as markup the message never meant get one more backslash before them, however many already
  stand there (so reading removes exactly one): a `%` right after a `%` (a `%%` would open a
  comment hiding the rest of the note), a `<` that starts a tag (`<Media omitted>` is an HTML
  element to a Markdown renderer, and shows as nothing), and the `^` of a trailing `^word` (a
  block id, hidden). A backslash before punctuation is an escape in Markdown, so the note reads
  as the message was written. A message whose text got such a backslash says so on its meta
  line (`esc="1"`): only then does reading remove them, so a note written before these escapes
  (its text verbatim, "C:\\Users\\<you>" included) reads as it always did. A text that leaves a
  code block open gets a closing fence line after it (`fence="1"`, dropped when read), so the
  meta line is not shown as the code's last line. A quote in the text that a less quoted line
  follows gets an empty line after it (`quote="1"`, one removed when read: `quote_ends`), so
  the line after it does not show inside the quote. Nothing else in a message is changed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo
from typing import Any, Literal
from urllib.parse import quote

from vaultmind.errors import UsageError
from vaultmind.markdown.blocks import fence_after
from vaultmind.markdown.frontmatter import body_sha256
from vaultmind.markdown.quote_ends import end_quotes
from vaultmind.markdown.yaml_out import ESCAPES as YAML_ESCAPES
from vaultmind.markdown.yaml_out import Quoted, render_frontmatter

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
_MAX_SLUG = 40
TITLE_MAX = 200  # characters of a source note's title and subject: a mail's 60 KB subject is not a title


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
    answers: tuple[str, ...] = ()  # email: the Message-IDs it answers (In-Reply-To, then References)
    edited: str | None = None  # chat: when it was last edited (ISO 8601 UTC), as its export says (Telegram)


# --- where a message came from ---------------------------------------------------------------


def chat_ref(platform: str, conversation: str, message_id: str) -> str:
    """`chat://<platform>/<conversation>/<message id>`, each part percent-quoted: the
    `source_ref` of a chat message whose export gives no address of its own (WhatsApp, Signal,
    a generic export without one). vaultmind's own scheme, not an app's (`whatsapp://` opens
    WhatsApp, never a message): it names the app and the chat as the export names them — what a
    person searches for in the app, with the message's time and author — and the id vaultmind
    matches (`h-…` when the export has none)."""
    return "chat://" + "/".join(quote(part, safe="") for part in (platform, conversation, message_id))


def derived_ref(source_kind: str, source_id: str, message_id: str) -> str | None:
    """The `source_ref` of a message whose meta line names none, from its note's front matter
    (`kind`, `source_id` = `<platform>:<conversation>` or `email:<account>`) and its id: a chat's
    `chat_ref`; an email's (one without a Message-ID: every other has `mid:<Message-ID>`)
    `email://<account>/<id>`, the mailbox it was ingested from, and its `nomid-…` id. The index
    derives it for every such message, so notes written before it existed cite as new ones do,
    and no note is rewritten for it. None when there is no source id to derive it from."""
    platform, colon, name = source_id.partition(":")
    if not colon or not platform or not name or not message_id:
        return None
    if source_kind == "chat":
        return chat_ref(platform, name, message_id)
    if source_kind == "email":
        return f"email://{quote(name, safe='')}/{quote(message_id, safe='')}"
    return None


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


def _human_time(iso: str, zone: tzinfo = UTC) -> str:
    """A message's time as its callout title shows it: on the vault's clock (`[ingest] timezone`)."""
    if zone is not UTC:
        iso = to_utc(iso).astimezone(zone).isoformat()
    return f"{iso[:10]} {iso[11:16]}"


def escape_attr(value: str) -> str:
    out: list[str] = []
    prev = ""
    for ch in value:
        if ch == "%" and prev == "%":
            out.append("\\%")
        else:
            out.append(YAML_ESCAPES.get(ch, ch))
        prev = ch
    return "".join(out)


def unescape_attr(value: str) -> str:
    if "\\" not in value:  # most values: nothing escaped
        return value
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


def escape_text(text: str) -> list[str]:
    """A message's text as the lines its callout holds, escaped (see module docstring)."""
    return [_meta_line_escape(line) for line in _map_prose(note_text(text).split("\n"), _escape_prose)]


def unescape_text(lines: Sequence[str], *, markup: bool = True) -> str:
    """The message text of a callout's lines, its `> ` prefixes removed: `escape_text` undone.
    `markup`: the markup escapes too (a message whose meta line says `esc="1"`); without it,
    only the meta line's own escape (a note written before the markup escapes)."""
    plain = [line[1:] if _ESCAPED_META_LIKE_RE.match(line) else line for line in lines]
    return "\n".join(_map_prose(plain, _unescape_prose) if markup else plain)


def escape_markup(text: str) -> str:
    """Text vaultmind writes as a note's prose (a summary's body, a plain-text document), with
    the markup escapes of message text (see module docstring: `%%`, `$$`, `<tag`, a trailing
    `^id`): it reads in Obsidian as it was written. `unescape_markup` undoes it."""
    return "\n".join(_map_prose(note_text(text).split("\n"), _escape_prose))


def unescape_markup(text: str) -> str:
    """`escape_markup` undone: what Obsidian shows of those escapes (a backslash before one of
    the escaped marks is a Markdown escape)."""
    return "\n".join(_map_prose(text.split("\n"), _unescape_prose))


def unescape_shown(text: str) -> str:
    """What Obsidian's reading view shows of prose vaultmind wrote escaped: `escape_markup`
    undone, and the backslash `no_tag` puts before a name's `#` ("Dana Whitfield \\#ops said: …"
    reads "Dana Whitfield #ops said: …"). A note vaultmind wrote so (a summary, a document, an
    entity note) is read, searched and quoted through it, as a source note's message is read
    without its escapes: a query for "#ops" or "50%%" finds it as it shows."""
    return "\n".join(_map_prose(text.split("\n"), lambda prose: _TAG_ESCAPED_RE.sub("", _unescape_prose(prose))))


def no_tag(name: str) -> str:
    """A shown name whose `#` opens no tag ("Dana Whitfield #ops" tags no note with `ops`);
    `unescape_shown` reads it back."""
    return _TAG_OPEN_RE.sub(r"\\#", name)


def _meta_line_escape(line: str) -> str:
    return "\\" + line if _META_LIKE_RE.match(line) else line


# Markup a message's text must not turn into: each as (the mark, what must come before it).
# Escaping puts one more backslash before the mark; unescaping takes one away.
_PROSE_MARKS = (
    (r"%", r"(?<=%)"),  # a comment opens at "%%"
    (r"\$", r"(?<=\$)"),  # a math block opens at "$$"
    (r"<(?=[A-Za-z/!?])", r""),  # an HTML tag, comment or declaration
    (r"\^(?=[A-Za-z0-9-]+[ \t]*$)", r"(?:(?<=[ \t])|^)"),  # a block id ends its line
)
_ESCAPE_RES = tuple(re.compile(before + r"(\\*)" + mark) for mark, before in _PROSE_MARKS)
_UNESCAPE_RES = tuple(re.compile(before + r"\\(\\*)" + mark) for mark, before in _PROSE_MARKS)
# Spans left as they are: backtick code spans and autolinks (a backslash is literal in both).
_VERBATIM_RE = re.compile(
    r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)|<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>|<[^\s<>@]+@[^\s<>@]+>"
)


def _escape_prose(prose: str) -> str:
    for pattern in _ESCAPE_RES:
        prose = pattern.sub(lambda m: "\\" + m.group(0), prose)
    return prose


def _unescape_prose(prose: str) -> str:
    for pattern in reversed(_UNESCAPE_RES):
        prose = pattern.sub(lambda m: m.group(0)[1:], prose)
    return prose


def _map_prose(lines: Sequence[str], change: Callable[[str], str]) -> list[str]:
    """`lines` with `change` applied to their prose: not in fenced code, code spans or autolinks."""
    out: list[str] = []
    fence = ""
    for line in lines:
        toggled = fence_after(line, fence)
        if toggled is not None:
            fence = toggled
            out.append(line)
            continue
        if fence:
            out.append(line)
            continue
        parts: list[str] = []
        at = 0
        for m in _VERBATIM_RE.finditer(line):
            parts.append(change(line[at : m.start()]))
            parts.append(m.group(0))
            at = m.end()
        parts.append(change(line[at:]))
        out.append("".join(parts))
    return out


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


def render_note(items: Sequence[tuple[str, Any]], body: str) -> str:
    """A generated note: front matter `items` + `vaultmind_body_sha256` of `body`, then body
    (line breaks as \\n, without control characters other than tabs: the body a reader splits
    off, whose hash is then the one recorded — a \\r in it had made the note read as edited)."""
    body = note_text(body)
    return render_frontmatter([*items, ("vaultmind_body_sha256", Quoted(body_sha256(body)))]) + body


# --- source notes ---------------------------------------------------------------------------


def note_text(text: str) -> str:
    """A message's text as its note keeps it: line breaks as \\n, no control characters."""
    return _CONTROL_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def _one_line(text: str) -> str:
    return " ".join(_CONTROL_RE.sub("", text).split())


def _title(text: str) -> str:
    """`text` on one line, cut at a word to `TITLE_MAX` characters with "…" (the whole of it
    stays where it was said: a message's own subject line)."""
    line = _one_line(text)
    if len(line) <= TITLE_MAX:
        return line
    cut = line[: TITLE_MAX - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > TITLE_MAX // 2 else cut).rstrip() + "…"


# A "#" that would open a tag (at the start or after a space, before a tag's characters):
# Obsidian would show it as a tag and list the note under it
_TAG_OPEN_RE = re.compile(r"(?<!\S)#(?=[\w/-])")
# The backslash `no_tag` put before such a "#" (taken away when read: `unescape_shown`)
_TAG_ESCAPED_RE = re.compile(r"(?<!\S)\\(?=#[\w/-])")


def shown_line(line: str) -> str:
    """A line only shown, never read back (a heading, a callout's title), escaped as message text
    is: "Kickoff %% notes" opens no comment; and "#launch · 2024-03-07", a Slack channel's day,
    tags no note with its channel name (the message text a user wrote keeps its tags)."""
    return _map_prose([line], lambda prose: no_tag(_escape_prose(prose)))[0]


def title_heading(title: str) -> str:
    """The `# ` heading vaultmind writes over a note it names after something a user or an export
    chose (a chat's name, an email's subject, a document's title, an entity's name), escaped as a
    shown line (`shown_line`): a document ingested from "#ops notes.txt" is headed
    "# \\#ops notes", which tags no note with `ops` (`title_reader` reads it back)."""
    return f"# {shown_line(title)}"


def title_reader(title: str) -> Callable[[str], str] | None:
    """How the opening line of a document's note reads when it is the title heading vaultmind
    wrote over it: "# \\#ops notes", written over the document "#ops notes", reads
    "# #ops notes", as a name's `\\#` in an entity note does (`unescape_shown`); None when the
    heading escapes nothing (most titles). The text it is given is read already
    (`unescape_markup`); only its first line is the heading's place: a line further down that
    is the same as the escaped heading is its author's, read as written."""
    heading = title_heading(title)
    if heading == f"# {title}":
        return None
    written, shown = unescape_markup(heading), f"# {title}"

    def read(text: str) -> str:
        first, end, rest = text.partition("\n")
        return f"{shown}{end}{rest}" if first == written else text

    return read


def _fence_left_open(lines: Sequence[str]) -> str:
    """The marker of the code fence `lines` open and never close ("" when none is left open)."""
    fence = ""
    for line in lines:
        toggled = fence_after(line, fence)
        if toggled is not None:
            fence = toggled
    return fence


def render_message(message: Message, kind: SourceKind, block_id: str, zone: tzinfo = UTC) -> str:
    """One message callout + its block id line, ending with a newline (no blank line after). Its
    title shows the time in `zone`; its meta line keeps it in UTC."""
    at = iso_utc(message.timestamp)
    author = shown_line(_one_line(message.author) or "unknown")
    lines = [f"> [!{CALLOUT_TYPES[kind]}] {author} · {_human_time(at, zone)}"]
    escaped = escape_text(message.text)
    ended = end_quotes(escaped)
    for line in ended:
        lines.append(f"> {line}" if line else ">")
    unclosed = _fence_left_open(escaped)
    if unclosed:
        lines.append(f"> {unclosed}")  # else the meta line would show as the code block's last line
    attrs = [("id", message.message_id), ("at", at), ("author", message.author)]
    if message.source_ref is not None:
        attrs.append(("ref", message.source_ref))
    if kind == "chat" and message.edited is not None:
        attrs.append(("edited", message.edited))
    if kind == "email" and message.subject is not None:
        attrs.append(("subject", message.subject))
    if kind == "email":
        attrs.extend((key, "; ".join(people)) for key, people in (("to", message.to), ("cc", message.cc)) if people)
        if message.answers:
            attrs.append(("answers", " ".join(message.answers)))
    if escaped != [_meta_line_escape(line) for line in note_text(message.text).split("\n")]:
        attrs.append(("esc", "1"))  # its text has markup escapes: read back with `unescape_text`
    if ended != escaped:
        attrs.append(("quote", "1"))  # an empty line ends each quote in its text: read back with `join_quotes`
    if unclosed:
        attrs.append(("fence", "1"))  # the callout's last text line closes the text's code block: no text
    lines.append("> " + format_meta(attrs))
    lines.append("")
    lines.append(f"^{block_id}")
    return "\n".join(lines) + "\n"


def _unheld_answers(messages: Sequence[Message]) -> list[Message]:
    """The messages with only the answered Message-IDs a thread's note records: those it does
    not hold, each on the first message that answers it (a thread held whole records none; a
    reply ingested before its parent records the parent, whose note it then joins)."""
    held = {message.message_id for message in messages}
    said: set[str] = set()
    out: list[Message] = []
    for message in messages:
        answers = tuple(dict.fromkeys(a for a in message.answers if a not in held and a not in said and " " not in a))
        said.update(answers)
        out.append(message if answers == message.answers else replace(message, answers=answers))
    return out


def render_source_note(meta: SourceMeta, messages: Sequence[Message], zone: tzinfo = UTC) -> str:
    """The canonical Markdown of a chat or email source note (docs/vault-format.md); callout
    titles show times in `zone`."""
    if meta.kind not in CALLOUT_TYPES:
        raise UsageError(f"render_source_note renders chat and email notes, not {meta.kind!r}")
    title = _title(meta.title) or meta.source_id
    taken: set[str] = set()
    parts = [f"{title_heading(title)}\n"]
    times: list[datetime] = []
    if meta.kind == "email":
        messages = _unheld_answers(messages)
    for message in messages:
        times.append(to_utc(message.timestamp))
        parts.append("\n" + render_message(message, meta.kind, block_id_for(message.message_id, taken), zone))
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
        items.append(("subject", subject if len(subject) <= TITLE_MAX else _title(subject)))
    items.append(("participants", participants))
    if times:
        items.append(("time_start", iso_utc(min(times))))
        items.append(("time_end", iso_utc(max(times))))
    items.append(("messages", len(messages)))
    return render_note(items, body)
