"""`parse_note`: one Markdown file's text → `ParsedNote`. Pure: no I/O, same input, same output."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from datetime import date, datetime, time, tzinfo
from functools import partial
from typing import Any

from vaultmind.markdown.blocks import scan_blocks
from vaultmind.markdown.chunking import DEFAULT_CHUNK_TOKENS, message_leaves, section_leaves
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.markdown.obsidian import parse_obsidian
from vaultmind.markdown.render import (
    CALLOUT_TYPES,
    derived_ref,
    title_reader,
    unescape_markup,
    unescape_shown,
)
from vaultmind.model import ParsedNote
from vaultmind.vault.layout import note_kind
from vaultmind.zones import local_to_utc, note_zone


def parse_note(path: str, text: str, *, chunk_tokens: int = DEFAULT_CHUNK_TOKENS, zone: str = "") -> ParsedNote:
    """Parse a note at vault-relative POSIX `path` (see docs/vault-format.md). `zone`: the
    vault's `[ingest] timezone`, which a note's local `date:` is read in ("": this machine's).

    - kind: by top folder (`vault.layout.note_kind`);
    - title: front matter `title`, else the first H1, else the file name without `.md`;
    - aliases: front matter `aliases` / `alias` (a string split on commas: `alias_items`);
    - leaves: none for a `vaultmind: readme` note (the folder READMEs, the welcome note: notes
      about vaultmind, not memory; links and tags still count); one per message for source
      notes with `kind: chat` / `kind: email` (a message whose meta line names no `ref` cites
      the one `render.derived_ref` gives), token-budget sections otherwise (`source_id` is
      the id key of a source note, else the path; a source note's front matter `source_ref` is
      copied to its section leaves, and its `time_end` — else `time_start` — is their time; a
      note of yours takes its date as their time: `user_note_time`).
      A note of yours with an empty body and properties has one leaf of its title and its
      front matter's values (`properties_text`), which cites the note itself.
    """
    fm = split_frontmatter(text)
    data = fm.data
    body = fm.body
    kind = note_kind(path)
    scan = scan_blocks(body)
    syntax = parse_obsidian(body, data, scan)

    source_id = _str(data.get("source_id")) if kind == "source" else None
    key = leaf_key(path, kind, data)
    source_kind = _str(data.get("kind"))
    shown = shown_reader(kind, data)
    if _str(data.get("vaultmind")) == "readme":
        leaves = []  # about vaultmind, not part of the memory: it never answers a question
    elif kind == "source" and source_kind in CALLOUT_TYPES:
        leaves = message_leaves(
            body,
            source_id=key,
            callout_types=(CALLOUT_TYPES[source_kind],),
            ref_for=partial(derived_ref, source_kind, source_id or ""),
        )
    else:
        source_ref = _str(data.get("source_ref")) if kind == "source" else ""
        when = (_str(data.get("time_end")) or _str(data.get("time_start"))) if kind == "source" else ""
        if kind == "user":
            when = user_note_time(path, data, note_zone(zone)) or ""
        leaves = section_leaves(
            body,
            note_key=key,
            budget=chunk_tokens,
            scan=scan,
            source_ref=source_ref or None,
            timestamp=when or None,
            read_as_shown=shown,
            read_opening=opening_reader(kind, data),
        )

    title = _str(data.get("title"))
    if not title:
        title = next((h.text for h in syntax.headings if h.level == 1 and h.text), "")
        if shown is not None:  # an entity note's heading "# Dana Whitfield \#ops": the name as it shows
            title = shown(title)
    if not title:
        title = _stem(path)
    if not leaves and kind == "user" and _str(data.get("vaultmind")) != "readme":
        # a note that is all properties (a book, a person, a row of a base): findable by them
        properties = properties_text(title, data)
        if "\n" in properties:  # (an empty note without properties stays without a leaf)
            leaves = section_leaves(properties, note_key=path, budget=chunk_tokens, timestamp=user_note_time(path, data, note_zone(zone)))

    return ParsedNote(
        path=path,
        kind=kind,
        title=title,
        frontmatter=data,
        frontmatter_error=fm.error,
        body=body,
        links=syntax.links,
        tags=syntax.tags,
        leaves=tuple(leaves),
        aliases=aliases_of(data),
    )


def shown_reader(kind: str, data: Mapping[str, Any]) -> Callable[[str], str] | None:
    """How a note vaultmind wrote escaped is read, as Obsidian shows it (its leaves); None for
    any other note, read as written.

    - a summary and an entity note: without the escapes of `render.escape_markup` and the `\\#`
      of `render.no_tag`, which vaultmind put before a name's `#` (`render.unescape_shown`);
    - a document vaultmind wrote (`vaultmind: source`): without those of `render.escape_markup`
      alone (a `.txt` or `.html` file's text is escaped so; a `.md` file's backslashes are
      Markdown's, which read the same); its title heading is read by `opening_reader`.
      Any other `\\#` in a document is its author's (vaultmind writes one only in that heading):
      it is read as its file has it, and a summary of it keeps it, so that it tags no summary."""
    if _str(data.get("vaultmind")) in ("summary", "entity"):
        return unescape_shown
    if _generated_document(kind, data):
        return unescape_markup
    return None


def opening_reader(kind: str, data: Mapping[str, Any]) -> Callable[[str], str] | None:
    """How the opening of a document vaultmind wrote reads besides (`shown_reader`): its title
    heading as it shows ("# \\#ops notes" is "# #ops notes", `render.title_reader`); None for
    any other note, or a title whose heading escapes nothing."""
    return title_reader(_str(data.get("title"))) if _generated_document(kind, data) else None


def _generated_document(kind: str, data: Mapping[str, Any]) -> bool:
    """A document's note vaultmind wrote: never a note of yours that names itself a document."""
    return kind == "source" and _str(data.get("vaultmind")) == "source" and _str(data.get("kind")) == "document"


def leaf_key(path: str, kind: str, data: Mapping[str, Any]) -> str:
    """The key of a note's leaf ids: a source note's `source_id`, else its path. Every leaf id
    is a hash of it, so only notes of one key can hold the same leaf (a copied source note)."""
    return (_str(data.get("source_id")) if kind == "source" else "") or path


# a full date in a file name ("2024-03-07 Thursday", "20240307"), not inside a longer number
_NAME_DATE = re.compile(r"(?<!\d)(\d{4})(-?)(\d{2})\2(\d{2})(?!\d)")
DATE_PROPERTIES = ("date", "created")  # as Obsidian's Properties and daily-note templates write them


def user_note_time(path: str, data: Mapping[str, Any], zone: tzinfo | None = None) -> str | None:
    """The time of a note of yours (ISO 8601 UTC), so a time window finds a daily note: its
    front matter `date`, else `created` (a date or a datetime; an offset is honoured, a
    datetime without one is a clock time in `zone`, the vault's: `zones.note_zone`), else the
    one date its file name holds (`2024-03-07.md`, `2024-03-07 Thursday.md`, `20240307.md`; a
    name with two different dates has none). A value that is no date is passed over. A date
    alone is noon of that day in `zone`: inside that calendar day wherever a question's window
    is read in that zone, whatever its offset (Auckland's +13 too). None for a note without a
    date."""
    for key in DATE_PROPERTIES:
        when = _as_time(_str(data.get(key)), zone)
        if when is not None:
            return when
    stem = _stem(path)
    found = {(m.group(1), m.group(3), m.group(4)) for m in _NAME_DATE.finditer(stem)}
    if len(found) != 1:
        return None
    year, month, day = found.pop()
    return _as_time(f"{year}-{month}-{day}", zone)


def _as_time(value: str, zone: tzinfo | None) -> str | None:
    """An ISO date or datetime as `YYYY-MM-DDTHH:MM:SSZ` (a date alone at noon; one without an
    offset read in `zone`, None: this machine's); None if it is neither."""
    if not value:
        return None
    try:
        if len(value) == 10:
            when = datetime.combine(date.fromisoformat(value), time(12))
        else:
            when = datetime.fromisoformat(value)
        when = local_to_utc(when, zone).replace(tzinfo=None)
    except (ValueError, OverflowError, OSError):  # (OSError: a year this machine's clock cannot place)
        return None
    return when.isoformat(timespec="seconds") + "Z"


MAX_PROPERTY_CHARS = 300  # a longer value (a pasted text) is left out of a properties leaf


def properties_text(title: str, data: Mapping[str, Any]) -> str:
    """The title, then its `property_lines` (but `title`'s): a properties leaf's text."""
    return "\n".join([title, *property_lines(data)])


def property_lines(data: Mapping[str, Any], leave_out: Collection[str] = ("title",)) -> list[str]:
    """One `key: value` line per front matter property (but those of `leave_out`) whose value
    is a scalar or a list of scalars (joined by ", "; a value over `MAX_PROPERTY_CHARS` is left
    out), in the front matter's order."""
    lines = []
    for key, value in data.items():
        if key in leave_out:
            continue
        items = value if isinstance(value, list) else [value]
        text = ", ".join(part for part in map(_str, items) if part)
        if text and len(text) <= MAX_PROPERTY_CHARS:
            lines.append(f"{key}: {text}")
    return lines


def aliases_of(data: Mapping[str, Any]) -> tuple[str, ...]:
    """Front matter `aliases` / `alias` (`alias_items`): stripped, unique, in order."""
    out: dict[str, None] = {}
    for item in alias_items(data):
        alias = _str(item)
        if alias:
            out.setdefault(alias, None)
    return tuple(out)


def alias_items(data: Mapping[str, Any]) -> list[Any]:
    """The items of front matter `aliases` and `alias`, unread: a list's items; a string split on
    commas (`aliases: Nana, Aninha` is two aliases, as Obsidian's older string form and `tags:`
    are read), so a nickname typed that way matches; a suffix after a comma stays with the name
    before it (`aliases: Acme, Inc.` is one alias, not "Acme" and an "Inc." naming every
    company). Every reader of aliases goes through here."""
    items: list[Any] = []
    for key in ("aliases", "alias"):
        value = data.get(key)
        if isinstance(value, list):
            items.extend(value)
        elif isinstance(value, str):
            items.extend(_comma_split(value))
        else:
            items.append(value)
    return items


_NAME_SUFFIXES = frozenset("jr sr ii iii phd esq inc llc ltd gmbh corp plc".split())
"""What follows a name after a comma and is part of it ("Stone, Jr.", "Acme, Inc."), never an
alias alone (not "AB" or "MD", which may be one's initials)."""


def _comma_split(text: str) -> list[str]:
    """`text`'s pieces between commas, a piece that is a `_NAME_SUFFIXES` joined to the one before."""
    pieces: list[str] = []
    for piece in text.split(","):
        if pieces and piece.strip().rstrip(".").lower() in _NAME_SUFFIXES:
            pieces[-1] += "," + piece
        else:
            pieces.append(piece)
    return pieces


def _str(value: Any) -> str:
    """A front matter scalar as a stripped string ("" for None, lists and mappings)."""
    if value is None or isinstance(value, list | dict):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name
