"""Obsidian syntax: links, embeds, tags and headings of a note body.

Read from the line scan of `markdown.blocks` (its masked lines: nothing inside code, comments
or math is counted) plus the front matter's `tags` and wikilinks in its values.

Conventions (see docs/vault-format.md):
- `Link.line` is 1-based in the body; links found in front matter values have line 0.
- A Markdown link's target is its path decoded (`Notes/C%23%20tips.md` → `Notes/C# tips.md`).
- `[[Note#A#B]]` keeps the last heading ("B"), as Obsidian resolves it.
- Tags are returned without "#", lower-cased, nested kept ("a/b"), in first-seen order,
  front matter tags first. A tag needs at least one letter or "_" (`#123`, `#2024-03` are not tags).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import Any
from urllib.parse import unquote

from vaultmind.markdown.blocks import MASK, BlockScan, Heading, scan_blocks
from vaultmind.model import Link

_WIKILINK_RE = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_MDLINK_RE = re.compile(
    r"\[((?:\\.|[^\[\]\\\n])*)\]\([ \t]*(<(?:\\.|[^<>\\\n])*>|"
    r"(?:\\.|[^\s()<>\\]|\((?:\\.|[^\s()<>\\])*\))+)"  # balanced parentheses, as CommonMark
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\)"
)
_ESCAPED_RE = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash escape of ASCII punctuation
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_TAG_RE = re.compile(r"#(?<!\S#)([\w/-]+)")
_TAG_OK_RE = re.compile(r"[^\W\d]")
_TAG_FULL_RE = re.compile(r"[\w/-]+")


@dataclass(frozen=True, slots=True)
class Syntax:
    links: tuple[Link, ...]
    tags: tuple[str, ...]
    headings: tuple[Heading, ...]


def parse_obsidian(
    body: str, frontmatter: Mapping[str, Any] | None = None, scan: BlockScan | None = None
) -> Syntax:
    """Extract Obsidian syntax from a note body (and tags/links of its front matter)."""
    if scan is None:
        scan = scan_blocks(body)
    links: list[Link] = []
    tags: dict[str, None] = {}
    if frontmatter:
        for tag in frontmatter_tags(frontmatter):
            tags.setdefault(tag, None)
        links.extend(frontmatter_links(frontmatter))

    # One pass per regex over the masked text (code, comments and math already masked out,
    # non-text lines empty); masks keep lengths so offsets map back to lines.
    text = "\n".join(scan.masked)
    starts: list[int] = []

    def line_of(at: int) -> int:
        if not starts:
            starts.extend(_line_starts(scan.masked))
        return bisect_right(starts, at)

    found, text = _text_links(text, line_of)
    found.sort(key=lambda item: item[0])
    links.extend(link for _, link in found)
    if "#" in text:
        for tm in _TAG_RE.finditer(text):
            found_tag = _valid_tag(tm.group(1))
            if found_tag:
                tags.setdefault(found_tag, None)

    return Syntax(tuple(links), tuple(tags), scan.headings)


def raw_link_targets(text: str) -> Iterator[str]:
    """The targets of the wikilinks and Markdown links of `text` (front matter, code and comments
    included: no block scan), for a quick read that may count a link too many, never one too few."""
    if "[[" in text:
        for m in _WIKILINK_RE.finditer(text):
            if (link := parse_wikilink(m.group(1))) is not None and link.target:
                yield link.target
    if "](" in text:
        for m in _MDLINK_RE.finditer(text):
            if (link := _markdown_link(m.group(2), embed=False, line=0)) is not None and link.target:
                yield link.target


def _text_links(text: str, line_of: Callable[[int], int]) -> tuple[list[tuple[int, Link]], str]:
    """(offset, link) of the wikilinks of `text`, then of its Markdown links outside them (each
    on the line `line_of` its offset gives), and `text` with both masked out (lengths kept)."""
    found: list[tuple[int, Link]] = []
    for marker, pattern, parse in _LINK_KINDS:
        if marker not in text:
            continue
        for m in pattern.finditer(text):
            at = m.start()
            link = parse(m, at > 0 and text[at - 1] == "!", line_of(at))
            if link is not None:
                found.append((at, link))
        text = pattern.sub(_same_length_mask, text)
    return found, text


# each kind of link: what a text holding one holds, its pattern, and its link (from the match,
# whether "!" embeds it, its line); wikilinks first, so that Markdown links are read outside them
_LINK_KINDS: tuple[tuple[str, re.Pattern[str], Callable[[re.Match[str], bool, int], Link | None]], ...] = (
    ("[[", _WIKILINK_RE, lambda m, embed, line: parse_wikilink(m.group(1), embed=embed, line=line)),
    ("](", _MDLINK_RE, lambda m, embed, line: _markdown_link(m.group(2), embed=embed, line=line)),
)


def _line_starts(lines: list[str]) -> list[int]:
    return list(accumulate(map((1).__add__, map(len, lines[:-1])), initial=0))


def _same_length_mask(match: re.Match[str]) -> str:
    return MASK * (match.end() - match.start())


def parse_wikilink(inner: str, *, embed: bool = False, line: int = 0) -> Link | None:
    """The Link for the inside of `[[…]]` (`Note#Heading|alias`, `Note#^block`, `#Heading`)."""
    inner = inner.replace("\\|", "|")  # escaped pipes inside tables
    target, sep, alias = inner.partition("|")
    note, hsep, sub = target.partition("#")
    heading: str | None = None
    block: str | None = None
    if hsep:
        sub = sub.strip()
        if sub.startswith("^"):
            block = sub[1:].strip() or None
        else:
            parts = [p.strip() for p in sub.split("#") if p.strip()]
            heading = parts[-1] if parts else None
    note = note.strip()
    if not note and heading is None and block is None:
        return None
    return Link(
        target=note,
        kind="embed" if embed else "wikilink",
        heading=heading,
        block=block,
        alias=alias.strip() if sep else None,
        line=line,
    )


def _markdown_link(dest: str, *, embed: bool, line: int) -> Link | None:
    if dest.startswith("<"):
        dest = dest[1:-1].strip()
    dest = _ESCAPED_RE.sub(r"\1", dest)
    if not dest or _SCHEME_RE.match(dest) or dest.startswith("//"):
        return None  # http(s), mailto, obsidian, file … and protocol-relative URLs
    path, hsep, sub = dest.partition("#")
    path = unquote(path)
    heading: str | None = None
    block: str | None = None
    if hsep:
        sub = unquote(sub).strip()
        if sub.startswith("^"):
            block = sub[1:] or None
        elif sub:
            heading = [p for p in sub.split("#") if p][-1] if sub.strip("#") else None
    if not path and heading is None and block is None:
        return None
    return Link(target=path, kind="embed" if embed else "markdown", heading=heading, block=block, line=line)


def _valid_tag(raw: str) -> str | None:
    tag = raw.strip("/")
    if not tag or _TAG_OK_RE.search(tag) is None:
        return None
    return tag.lower()


def frontmatter_tags(data: Mapping[str, Any]) -> list[str]:
    """Tags from front matter `tags:` / `tag:` (a list, or a string split on commas/spaces)."""
    out: list[str] = []
    for key in ("tags", "tag"):
        value = data.get(key)
        if value is None:
            continue
        # A string may hold several tags ("a, b c"); each list item is one tag.
        words: list[str] = []
        if isinstance(value, str):
            words = re.split(r"[,\s]+", value)
        elif isinstance(value, list):
            words = [
                str(item).strip()
                for item in value
                if isinstance(item, str | int | float) and not isinstance(item, bool)
            ]
        for word in words:
            word = word.lstrip("#")
            if word and _TAG_FULL_RE.fullmatch(word):
                tag = _valid_tag(word)
                if tag and tag not in out:
                    out.append(tag)
    return out


def frontmatter_links(data: Mapping[str, Any]) -> list[Link]:
    """Links written in front matter string values, line 0: wikilinks (Obsidian shows them as
    links), then Markdown links to vault files (`[C# tips](Notes/C%23%20tips.md)`, their path
    decoded: what a summary's `children` hold for a note no wikilink can name; Obsidian shows
    them as text)."""
    out: list[Link] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            out.extend(link for _, link in _text_links(value, lambda _at: 0)[0])
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    walk(dict(data))
    return out
