"""The summary note (docs/vault-format.md, "Summary notes"): ids, paths, links, rendering.

Pure functions: no index, no I/O.

- tree ids: a source note's `source_id`; `notes:<top folder>` (or `notes:/` for notes at the
  vault's root) for your own notes. The folder of a tree is its slug (`tree_slug`), or the one
  its summaries are in (`folders.tree_folders`).
- summary id: `s-` + 16 hex of sha256(tree, level, child ids), so the same children always give
  the same id and the same path `summaries/<tree folder>/L<n>/<id>.md`.
- children: Obsidian wikilinks, quoted. At level 1 a child is a leaf: `[[note#^block]]` for a
  message, `[[note#Heading]]` / `[[note]]` for a section; when several sections of a note share
  an anchor, the link carries `|<title> · part <k>` (the k-th leaf with that anchor, in note
  order). Above level 1 a child is a summary: `[[summaries/<slug>/L<n>/<id>]]`. A note whose
  path or heading holds what ends a wikilink's target (`# | ^ [ ]`) is linked as Obsidian
  documents for any path, a Markdown link with the path URL-encoded:
  `[C# tips › Setup](Notes/C%23%20tips.md#Setup)`.
- title: `<source title> · <day or first day – last day> · summary L<n>` (`summary_title`), written as
  `title` and as the first of `aliases`, so Obsidian's search, link suggestions and hover show
  it instead of the id. A `title` that does not end in `· summary L<n>` is yours
  (`is_generated_title`): it is kept, and vaultmind's title stays the first alias.
- `children_sha256`: sha256 over the sorted content hashes of the children (a leaf's
  `content_hash`, a summary note's text hash: `deriver.SUMMARY_TEXT_SHA`): the deriver compares
  it with the children's current content to mark the summary stale.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import quote, unquote

from vaultmind.entities.ids import canonical_id
from vaultmind.markdown.frontmatter import body_sha256
from vaultmind.markdown.render import note_text, render_note
from vaultmind.markdown.yaml_out import Quoted
from vaultmind.model import ROOT_USER_TREE, USER_TREE_PREFIX
from vaultmind.vault.layout import NOTE_SUFFIX, SUMMARIES_DIR, ascii_letters

MAILBOX_KIND = "email"  # a mailbox's tree id: `email:<account>`, its threads' notes titled by their subjects

_SLUG_RE = re.compile(r"[^a-z0-9]+")
_OTHER_SCRIPT_RE = re.compile(r"[^\W_a-z0-9]")  # a letter or digit that is not ASCII: a slug leaves it out
_LINK_RE = re.compile(r"^\s*!?\[\[([^\[\]|#]*)(?:#([^\[\]|]*))?(?:\|([^\[\]]*))?\]\]\s*$")
_PART_RE = re.compile(r"·\s*part\s+(\d+)\s*$")
_MARKDOWN_LINK_RE = re.compile(r"^\s*\[([^\[\]]*)\]\(([^()\s]+)\)\s*$")  # `[label](Notes/C%23%20tips.md#Setup)`
_ENDS_A_TARGET = re.compile(r"[\[\]|#^]")  # a wikilink's target cannot hold these
_ENDS_AN_ANCHOR = re.compile(r"[\[\]|]")  # nor its heading (`#` nests headings, `^` opens a block id)
_MAX_SLUG = 80
_GENERATED_TITLE_RE = re.compile(r"·\s*summary L\d+\s*$")
_TITLE_SEPARATOR_RE = re.compile(r"\s*(?:[,;:|(·–—]|\s-)")  # where a title's common part may end
_REPLY_PREFIX_RE = re.compile(r"^(?:re|fwd?|aw|wg|sv|tr)$", re.IGNORECASE)  # "Re: Budget", "Re: Party"
_DATED_TITLE_RE = re.compile(r"\s+(?:·\s+)?\d{4}-\d{2}-\d{2}$")  # a day note's "#launch · 2024-03-04"


_Row = TypeVar("_Row", bound=Sequence[Any])


def original_first(rows: Iterable[_Row], path_at: int) -> list[_Row]:
    """`rows` with a note's original before its conflict copies (a sync tool's `note (1).md`):
    the shorter path first, then by path — the rule `one_copy_sql` applies in SQL. `path_at`:
    where the note path is in a row."""
    return sorted(rows, key=lambda r: (len(r[path_at]), r[path_at]))


def one_copy_sql(id_column: str, path_column: str) -> str:
    """A QUALIFY condition keeping one row per id: the original's (`original_first`)."""
    return f"row_number() OVER (PARTITION BY {id_column} ORDER BY length({path_column}), {path_column}) = 1"


def tree_for_note(kind: str, path: str, source_id: str | None) -> str | None:
    """The tree a note's leaves belong to (None for notes that are never folded)."""
    if kind == "source":
        return source_id or None
    if kind == "user":
        top, sep, _ = path.partition("/")
        return USER_TREE_PREFIX + (top if sep else "/")
    return None


def tree_slug(tree: str) -> str:
    """The folder name a tree is given (`folders.tree_folders`): its id in lower case, Latin
    letters in ASCII (`ascii_letters`), every run of other characters one `-`
    (`slack:acme/general` → `slack-acme-general`, `whatsapp:Straße Crew` →
    `whatsapp-strasse-crew`); `-` and 8 hex of the id's sha256 after it when letters of another
    script were left out (`whatsapp:家族` → `whatsapp-<hex>`) or it is long."""
    if tree == ROOT_USER_TREE:
        return "notes"
    folded = ascii_letters(tree).lower()
    slug = _SLUG_RE.sub("-", folded).strip("-")
    digest = tree_digest(tree)
    if not slug:
        slug = "tree-" + hashlib.sha256(tree.encode("utf-8")).hexdigest()[:12]
    elif len(slug) > _MAX_SLUG:
        slug = slug[: _MAX_SLUG - 9].rstrip("-") + "-" + digest
    elif _OTHER_SCRIPT_RE.search(folded):
        slug = f"{slug}-{digest}"
    return slug


def tree_digest(tree: str) -> str:
    """8 hex of the sha256 of a tree id: what tells apart two trees whose slugs are one."""
    return hashlib.sha256(tree.encode("utf-8")).hexdigest()[:8]


def tree_label(tree: str, first_title: str | None, last_title: str | None = None) -> str:
    """What a tree is called for a reader: what the titles of its source notes (the first and the
    last of them in sort order) have in common, up to a separator, without a day note's date
    ("#launch · 2024-03-04" … "#launch · 2024-03-09" → "#launch"; "Ana and Ben, part 1 (2024-03-04)"
    … "Ana and Ben, part 9 (2024-05-02)" → "Ana and Ben"; "Ana and Ben" … "Ana and Ben · part 2" →
    "Ana and Ben"); a folder of your notes
    ("notes:Projects" → "Projects"); else — threads of a mailbox with nothing in common — the
    mailbox ("email:inbox" → "Mailbox inbox": the tree; its summaries are named by their threads,
    `threads_label`), or the tree id of another source."""
    if tree == ROOT_USER_TREE:
        return "Notes"
    if tree.startswith(USER_TREE_PREFIX):
        return tree[len(USER_TREE_PREFIX) :]
    first = _DATED_TITLE_RE.sub("", " ".join((first_title or "").split()))
    last = _DATED_TITLE_RE.sub("", " ".join((last_title or first_title or "").split()))
    if first == last:
        return first or _source_name(tree)
    shared = first[: next((i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), len(first))]
    longer = max(first, last, key=len)
    # one title is the other's start ("Ana and Ben", "Ana and Ben · part 2"): all of it is shared
    # when the longer one goes on with a separator
    whole = len(shared) == min(len(first), len(last)) and _TITLE_SEPARATOR_RE.match(longer, len(shared))
    cut = len(shared) if whole else max((m.start() for m in _TITLE_SEPARATOR_RE.finditer(shared)), default=0)
    common = shared[:cut].strip()
    return common if common and not _REPLY_PREFIX_RE.match(common) else _source_name(tree)


def _source_name(tree: str) -> str:
    """A source named by its tree id alone: a mailbox as one (`email:inbox` → "Mailbox inbox"),
    whose threads' subjects say nothing of the others; another source by its id."""
    return f"Mailbox {tree.partition(':')[2]}" if is_mailbox(tree) else tree


def is_mailbox(tree: str) -> bool:
    """Whether a tree is a mailbox's (`email:<account>`): its summaries mix threads."""
    kind, sep, name = tree.partition(":")
    return bool(sep and kind == MAILBOX_KIND and name)


def threads_label(subjects: Sequence[str]) -> str | None:
    """What a summary of a mailbox is called: the subjects of the threads its leaves are in, in
    the order they first come, two at most ("Dentist appointment"; "Dentist appointment;
    Kitchen budget"; "Dentist appointment; Kitchen budget and 3 more"); None when none has one."""
    found = list(dict.fromkeys(text for subject in subjects if (text := " ".join(subject.split()))))
    if not found:
        return None
    shown = "; ".join(found[:2])
    return shown if len(found) <= 2 else f"{shown} and {len(found) - 2} more"


def summary_title(label: str, level: int, start: datetime | None, end: datetime | None) -> str:
    """`<label> · <day> · summary L<n>`, `<label> · <first day> – <last day> · summary L<n>`, or
    without the days when the children have no time. "summary" says what it is where the title
    stands alone: Obsidian's search, a retrieval hit."""
    days = sorted({(iso_z(t) or "")[:10] for t in (start, end) if t is not None})
    parts = [_label(label) or "Summary"]
    if days:
        parts.append(" – ".join(days))
    parts.append(f"summary L{level}")
    return " · ".join(parts)


def is_generated_title(text: object) -> bool:
    """True for a title as `summary_title` writes it (any source, days or level)."""
    return isinstance(text, str) and _GENERATED_TITLE_RE.search(text) is not None


def user_title(fm: dict[str, Any]) -> str:
    """The `title` you gave a summary note ("" when it is vaultmind's or there is none)."""
    title = fm.get("title")
    return title.strip() if isinstance(title, str) and title.strip() and not is_generated_title(title) else ""


def summary_id(tree: str, level: int, children: Sequence[str]) -> str:
    """Derived from the children (`hydrate.Hydrated.keys`): the same tree, level and children
    give the same id, and so the same path. A child is named by what it is, not by its text (a
    message by its id in its source, a section by its link, a summary by its id): a summary
    sealed again after you edited a note under it keeps its name, and links to it still resolve."""
    data = "\0".join(["vaultmind-summary", tree, str(level), *children])
    return "s-" + hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]


SUMMARY_PATHS = 8
"""How many paths a summary may take: `<id>.md`, then `<id>-2.md` … while a note of yours holds
the one before (a seal goes around your note, never over it)."""


def summary_path(folder: str, level: int, sid: str, n: int = 1) -> str:
    """The `n`-th path of a summary in its tree's `folder` (`folders.tree_folders`; 1: `<id>.md`;
    n > 1: `<id>-<n>.md`)."""
    name = sid if n == 1 else f"{sid}-{n}"
    return f"{SUMMARIES_DIR}/{folder}/L{level}/{name}{NOTE_SUFFIX}"


def is_vaultminds(fm: dict[str, Any], body: str) -> bool:
    """True while a generated summary note is vaultmind's: its `vaultmind` key still says
    `summary` and its body still has the hash vaultmind recorded. Edit the body or that key and
    the note is yours: never written over nor removed."""
    recorded = fm.get("vaultmind_body_sha256")
    return fm.get("vaultmind") == "summary" and isinstance(recorded, str) and recorded == body_sha256(body)


def children_digest(content_hashes: Sequence[str]) -> str:
    """`children_sha256`: sha256 of the children's content hashes, sorted, one per line."""
    return hashlib.sha256("\n".join(sorted(content_hashes)).encode("utf-8")).hexdigest()


UNLINKABLE_PATH = r"[\x00-\x1f]|^\s"
"""A note path no link carries back exactly (a control character, a leading space): such a note
never feeds a tree (it stays indexed and searchable). An RE2 pattern, as DuckDB's
`regexp_matches` reads it. (`[ ] | # ^` are carried by a Markdown link: `leaf_link`.)"""


def _target(path: str) -> str:
    """A note's path as a link target: without `.md` when `parse_link` adds back the same path
    (`Caps/Upper.MD`, `Trail .md` or `x.md.md` keep their whole name: a link reads back the note
    it was made from)."""
    if not path.endswith(NOTE_SUFFIX):
        return path
    stem = path[: -len(NOTE_SUFFIX)]
    return stem if stem and stem == stem.strip() and not stem.lower().endswith(NOTE_SUFFIX) else path


def _label(text: str) -> str:
    return text.replace("[", "").replace("]", "").replace("|", " ").strip()


def leaf_link(note_path: str, anchor: str, part: int | None = None, label: str = "") -> str:
    """`[[note#^block]]`, `[[note#Heading]]`, `[[note]]`; with `|label · part k` when the anchor
    is shared by several leaves of the note. A Markdown link (`_markdown_link`) when the path or
    the heading holds what ends a wikilink's target."""
    if _ENDS_A_TARGET.search(note_path) or _ENDS_AN_ANCHOR.search(anchor):
        return _markdown_link(note_path, anchor, part, label)
    target = _target(note_path)
    if anchor:
        target += anchor if anchor.startswith("#") else "#" + anchor
    if part is not None:
        return f"[[{target}|{_label(label)} · part {part}]]"
    return f"[[{target}]]"


def _markdown_link(note_path: str, anchor: str, part: int | None, label: str) -> str:
    """A leaf link no wikilink can carry, as a Markdown link Obsidian follows: the path and the
    anchor URL-encoded (`#` between nested headings and `^` of a block id kept), the text the
    note's name and the anchor (`C# tips › Setup`), or `label · part k`."""
    fragment = anchor.removeprefix("#")
    destination = quote(note_path, safe="/") + (f"#{quote(fragment, safe='#^')}" if fragment else "")
    if part is not None:
        text = f"{_label(label)} · part {part}"
    else:
        name = note_path.rsplit("/", 1)[-1].removesuffix(NOTE_SUFFIX)
        shown = fragment.lstrip("^").replace("#", " › ") if fragment else ""
        text = _label(f"{name} › {shown}" if shown else name)
    return f"[{text}]({destination})"


def summary_link(note_path: str) -> str:
    return f"[[{_target(note_path)}]]"


def entity_link(note_path: str, display: str) -> str:
    display = _label(display)
    target = _target(note_path)
    return f"[[{target}|{display}]]" if display else f"[[{target}]]"


@dataclass(frozen=True, slots=True)
class ParsedLink:
    """One child link: the note it points at (with `.md`), the leaf anchor, the part number."""

    note_path: str
    anchor: str  # "^block", "#Heading" or ""
    part: int | None


def parse_link(text: str) -> ParsedLink | None:
    """A child link as written in front matter; None when it is neither a wikilink nor a
    Markdown link."""
    match = _LINK_RE.match(text)
    if match is None:
        return _parse_markdown_link(text)
    target = match.group(1).strip()
    if not target:
        return None
    fragment = (match.group(2) or "").strip()
    anchor = ""
    if fragment.startswith("^"):
        anchor = fragment
    elif fragment:
        anchor = "#" + fragment
    part = None
    alias = match.group(3)
    if alias:
        found = _PART_RE.search(alias)
        if found:
            part = int(found.group(1))
    path = target if target.lower().endswith(NOTE_SUFFIX) else target + NOTE_SUFFIX
    return ParsedLink(path, anchor, part)


def _parse_markdown_link(text: str) -> ParsedLink | None:
    """A child link written as a Markdown link (`_markdown_link`); None when it is none."""
    match = _MARKDOWN_LINK_RE.match(text)
    if match is None:
        return None
    path, _, fragment = match.group(2).partition("#")
    path, fragment = unquote(path), unquote(fragment)
    if not path:
        return None
    anchor = fragment if fragment.startswith("^") else f"#{fragment}" if fragment else ""
    found = _PART_RE.search(match.group(1))
    return ParsedLink(path, anchor, int(found.group(1)) if found else None)


def entity_id_of_link(text: str) -> str | None:
    """`[[entities/person/alice-chen|Alice Chen]]` → `person:alice-chen`."""
    link = parse_link(text)
    if link is None:
        return None
    parts = _target(link.note_path).split("/")
    if len(parts) < 3 or parts[0] != "entities":
        return None
    kind, key = parts[1], parts[-1]
    return canonical_id(f"{kind}:{key}") or f"{kind}:{key}"


def naive_utc(value: datetime) -> datetime:
    """An aware datetime as naive UTC (the index's times); a naive one as it is."""
    return value if value.tzinfo is None else value.astimezone(UTC).replace(tzinfo=None)


def iso_z(value: datetime | None) -> str | None:
    """A naive-UTC or aware datetime as `2024-03-04T09:00:00Z` (microseconds only when present)."""
    if value is None:
        return None
    value = naive_utc(value)
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ" if value.microsecond else "%Y-%m-%dT%H:%M:%SZ"
    return value.strftime(fmt)


def iso_time(value: str) -> datetime:
    """An ISO 8601 time as written (a trailing `Z` is UTC); ValueError when it is none."""
    return datetime.fromisoformat(value.strip().replace("Z", "+00:00"))


def parse_time(value: Any) -> datetime | None:
    """A front matter time as naive UTC (None when missing or unreadable)."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return naive_utc(iso_time(value))
    except ValueError:
        return None


SUMMARY_KEYS = frozenset(
    """vaultmind title aliases id tree level children children_sha256 time_start time_end entities summarizer
    vaultmind_body_sha256""".split()
)
"""The front matter keys vaultmind writes in a summary note; any other is yours, and kept."""


@dataclass(frozen=True, slots=True)
class SummaryNote:
    """Everything a summary note says, before it is rendered."""

    id: str
    tree: str
    level: int
    children: tuple[str, ...]  # links
    children_sha256: str
    time_start: datetime | None
    time_end: datetime | None
    entities: tuple[str, ...]  # links
    summarizer: str
    body: str
    title: str = ""
    aliases: tuple[str, ...] = ()  # besides the title: the ones you added
    user_title: str = ""  # the title you gave it: written as `title`, `title` stays the first alias

    def render(self) -> str:
        items: list[tuple[str, Any]] = [("vaultmind", "summary")]
        if self.title:
            items.append(("title", Quoted(self.user_title or self.title)))
            items.append(("aliases", [Quoted(a) for a in dict.fromkeys((self.title, *self.aliases))]))
        items += [
            ("id", Quoted(self.id)),
            ("tree", Quoted(self.tree)),
            ("level", self.level),
            ("children", list(self.children)),
            ("children_sha256", Quoted(self.children_sha256)),
        ]
        start, end = iso_z(self.time_start), iso_z(self.time_end)
        if start is not None and end is not None:
            items.append(("time_start", Quoted(start)))
            items.append(("time_end", Quoted(end)))
        items.append(("entities", list(self.entities)))
        items.append(("summarizer", self.summarizer))
        body = note_text(self.body).strip()  # LF only, whatever the summarizer's line breaks
        return render_note(items, body + "\n" if body else "")
