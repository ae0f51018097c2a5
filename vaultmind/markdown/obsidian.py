"""Obsidian syntax: links, embeds, tags, block ids, headings and callouts of a note body.

This is a line scanner, not a full CommonMark parser: markdown-it-py measured 2.4–4 ms for a
dense 3 KB note (~2 ms even with inline parsing disabled), too slow for a cold index of
>= 500 notes/s; this scanner extracts everything from the same note in ~0.4 ms. It tracks what
matters for Obsidian syntax — fenced and indented code, `%% comments %%` (also spanning lines),
`<!-- html comments -->`, `$$ math $$` blocks, inline code and inline math, blockquotes and list
context — so that nothing inside code, comments or math is counted. The test-suite cross-checks
headings and code detection against markdown-it.

Conventions (see docs/vault-format.md):
- `Link.line` is 1-based in the body; links found in front matter values have line 0.
- `[[Note#A#B]]` keeps the last heading ("B"), as Obsidian resolves it.
- Tags are returned without "#", lower-cased, nested kept ("a/b"), in first-seen order,
  front matter tags first. A tag needs at least one letter or "_" (`#123`, `#2024-03` are not tags).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import Any
from urllib.parse import unquote

from vaultmind.model import Link

# Line kinds of `BlockScan.kinds`.
TEXT = 0  # ordinary markdown (paragraph, list, quote, table, html …)
BLANK = 1
FENCE = 2  # a fence delimiter or a line inside a fenced code block
ICODE = 3  # an indented code block line
MATH = 4  # a line of a `$$` math block
COMMENT = 5  # a line entirely inside a `%%` or `<!-- -->` comment
HEADING = 6  # an ATX heading, or the text line(s) of a setext heading
SETEXT = 7  # the `===` / `---` underline of a setext heading

MASK = "\x00"  # what masked (code, comment, math) inline spans are replaced with

_FENCE_OPEN_RE = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)$")
_QUOTE_RE = re.compile(r"(?: {0,3}>[ ]?)+")
_ATX_RE = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*)|[ \t]*)$")
_SETEXT_RE = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_HR_RE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_LIST_RE = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_INLINE_SPECIAL_RE = re.compile(r"[\\`%<$]")
_BACKTICKS_RE = re.compile(r"`+")
_INLINE_MATH_RE = re.compile(r"\$(?![\s$])(?:\\.|[^$\\])*?(?<![\s\\])\$(?!\d)")
_WIKILINK_RE = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_MDLINK_RE = re.compile(
    r"\[((?:\\.|[^\[\]\\\n])*)\]\([ \t]*(<[^<>\n]*>|[^\s()<>]+)(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'))?[ \t]*\)"
)
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_TAG_RE = re.compile(r"#(?<!\S#)([\w/-]+)")
_TAG_OK_RE = re.compile(r"[^\W\d]")
_TAG_FULL_RE = re.compile(r"[\w/-]+")
_BLOCK_ID_RE = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)$")
_CALLOUT_RE = re.compile(r"\[!([^\]\s]+)\]([+-]?)(?:[ \t]+(.*)|[ \t]*)$")
_ANCHOR_DROP_RE = re.compile(r"[\[\]]")
_ANCHOR_SPACE_RE = re.compile(r"[#|^:%\\]")


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: str
    line: int  # 1-based first line in the body
    end_line: int  # 1-based last line (differs from `line` for setext headings)


@dataclass(frozen=True, slots=True)
class Callout:
    type: str  # lower-cased: "note", "message", "email" …
    title: str
    fold: str  # "", "+" or "-"
    line: int  # 1-based
    depth: int  # blockquote nesting level (1 for a top-level callout)


@dataclass(frozen=True, slots=True)
class Syntax:
    links: tuple[Link, ...]
    tags: tuple[str, ...]
    block_ids: tuple[str, ...]
    headings: tuple[Heading, ...]
    callouts: tuple[Callout, ...]


@dataclass(frozen=True, slots=True)
class BlockScan:
    """The block structure of a body, line by line (shared by syntax extraction and chunking).

    `lines` is `body.split("\\n")`; `kinds[i]` is one of the kinds above; `masked[i]` is the line
    with inline code/comments/math replaced by MASK ("" for non-text lines); `block_ids` maps a
    0-based line index to the block id at its end; `fences` maps a fence's opening line index to
    its closing line index (the last line of the body when unclosed).
    """

    lines: list[str]
    kinds: list[int]
    masked: list[str]
    headings: tuple[Heading, ...]
    callouts: tuple[Callout, ...]
    block_ids: dict[int, str]
    fences: dict[int, int]
    depths: list[int]


def heading_anchor(text: str) -> str:
    """A heading's text as it appears in an Obsidian link: `[[Note#<anchor>]]`.

    Obsidian drops `[` `]` and turns `# | ^ : % \\` into spaces when linking a heading.
    """
    return " ".join(_ANCHOR_SPACE_RE.sub(" ", _ANCHOR_DROP_RE.sub("", text)).split())


def _strip_quotes(line: str) -> tuple[str, int]:
    if ">" not in line[:8]:
        return line, 0
    m = _QUOTE_RE.match(line)
    if m is None:
        return line, 0
    prefix = m.group()
    return line[m.end() :], prefix.count(">")


def _mask_inline(line: str, state: int) -> tuple[str, int]:
    """Mask inline code, `%%`/`<!-- -->` comments and inline math. `state`: 0, 1 = in %%, 2 = in <!--."""
    out: list[str] = []
    pos = 0
    if state:
        closer = "%%" if state == 1 else "-->"
        j = line.find(closer)
        if j < 0:
            return "", state
        pos = j + len(closer)
        out.append(MASK)
        state = 0
    i = pos
    runs: dict[int, list[int]] | None = None  # backtick run starts by width
    while True:
        m = _INLINE_SPECIAL_RE.search(line, i)
        if m is None:
            break
        start = m.start()
        c = line[start]
        if c == "\\":
            i = start + 2
        elif c == "`":
            run_end = start + 1
            while run_end < len(line) and line[run_end] == "`":
                run_end += 1
            if runs is None:
                runs = {}
                for run in _BACKTICKS_RE.finditer(line):
                    runs.setdefault(run.end() - run.start(), []).append(run.start())
            width = run_end - start
            starts = runs.get(width, [])
            k = bisect_right(starts, start)
            while k < len(starts) and line[starts[k] - 1] == "`":
                k += 1  # not a maximal run (only after an escaped backtick)
            if k >= len(starts):
                i = run_end
                continue
            out.append(line[pos:start])
            out.append(MASK)
            pos = i = starts[k] + width
        elif c == "%" or c == "<":
            opener, closer = ("%%", "%%") if c == "%" else ("<!--", "-->")
            if not line.startswith(opener, start):
                i = start + 1
                continue
            out.append(line[pos:start])
            out.append(MASK)
            j = line.find(closer, start + len(opener))
            if j < 0:
                return "".join(out), 1 if c == "%" else 2
            pos = i = j + len(closer)
        elif line.startswith("$$", start):
            j = line.find("$$", start + 2)
            if j < 0:
                i = start + 2
                continue
            out.append(line[pos:start])
            out.append(MASK)
            pos = i = j + 2
        else:  # "$": inline math with pandoc's rules (no "$5 and $6" false positives)
            mm = _INLINE_MATH_RE.match(line, start)
            if mm is None:
                i = start + 1
                continue
            out.append(line[pos:start])
            out.append(MASK)
            pos = i = mm.end()
    if not out:
        return line, 0
    out.append(line[pos:])
    return "".join(out), 0


def _quoted(line: str) -> tuple[str, int]:
    """`line` without its blockquote markers, and their count (cheap for unquoted lines)."""
    c0 = line[:1]
    if c0 == ">" or (c0 == " " and ">" in line[:4]):
        return _strip_quotes(line)
    return line, 0


def scan_blocks(body: str) -> BlockScan:
    """Classify every line of `body` (see `BlockScan`)."""
    lines = body.split("\n")
    count = len(lines)
    kinds = [TEXT] * count
    masked = [""] * count
    depths = [0] * count
    headings: list[Heading] = []
    callouts: list[Callout] = []
    block_ids: dict[int, str] = {}
    fences: dict[int, int] = {}

    comment = 0  # inline state carried across lines: 1 = in %%, 2 = in <!--
    fence_char = ""
    fence_marker = ""
    fence_start = -1
    fence_depth = 0
    in_math = False
    in_icode = False
    in_list = False
    prev_blank = True
    prev_depth = 0
    para_start = -1

    for i, line in enumerate(lines):
        if fence_char:
            content, depth = _quoted(line)
            if depth >= fence_depth:
                kinds[i] = FENCE
                depths[i] = prev_depth = depth
                close = content.strip(" \t")
                if close.startswith(fence_marker) and not close.strip(fence_char):
                    fences[fence_start] = i
                    fence_char = ""
                continue
            fences[fence_start] = i - 1
            fence_char = ""
        if comment:
            closer = "%%" if comment == 1 else "-->"
            j = line.find(closer)
            if j < 0:
                kinds[i] = COMMENT
                continue
            if not line[j + len(closer) :].strip():
                kinds[i] = COMMENT
                comment = 0
                continue
        if in_math:
            kinds[i] = MATH
            if "$$" in line:
                in_math = False
            continue
        if not line or line.isspace():
            kinds[i] = BLANK
            prev_blank = True
            prev_depth = 0
            para_start = -1
            continue
        content, depth = _quoted(line)
        depths[i] = depth
        outer_depth = prev_depth
        prev_depth = depth
        if content[:1] in (" ", "\t"):
            stripped = content.lstrip(" \t")
            ws = content[: len(content) - len(stripped)]
            indent = ws.count(" ") + 4 * ws.count("\t")
        else:
            stripped = content
            indent = 0
        first = stripped[:1]
        if in_icode:
            if indent >= 4 and depth == 0:
                kinds[i] = ICODE
                prev_blank = False
                continue
            in_icode = False
        if not comment:
            if first == "`" or first == "~":
                fm = _FENCE_OPEN_RE.match(content)
                if fm is not None and not (first == "`" and "`" in fm.group(2)):
                    kinds[i] = FENCE
                    fence_char = first
                    fence_marker = fm.group(1)
                    fence_start = i
                    fence_depth = depth
                    fences[i] = count - 1
                    para_start = -1
                    prev_blank = False
                    if indent == 0 and depth == 0:
                        in_list = False
                    continue
            elif first == "$" and stripped.startswith("$$") and "$$" not in stripped[2:]:
                kinds[i] = MATH
                in_math = True
                para_start = -1
                prev_blank = False
                continue
            if depth == 0 and indent >= 4 and not in_list and para_start < 0:
                kinds[i] = ICODE
                in_icode = True
                prev_blank = False
                continue
            if depth > outer_depth and first == "[" and stripped.startswith("[!"):
                cm = _CALLOUT_RE.match(stripped)
                if cm is not None:
                    title = (cm.group(3) or "").strip()
                    callouts.append(Callout(cm.group(1).lower(), title, cm.group(2), i + 1, depth))
        # An ordinary line: mask inline spans, then look at its block role.
        if comment or "`" in line or "$" in line or "%" in line or "<!--" in line:
            text, comment = _mask_inline(line, comment)
        else:
            text = line
        masked[i] = text
        if depth == 0:
            if para_start >= 0 and (first == "=" or first == "-") and indent < 4:
                sm = _SETEXT_RE.match(content)
                if sm is not None:
                    kinds[i] = SETEXT
                    for k in range(para_start, i):
                        kinds[k] = HEADING
                    parts = [lines[k].strip() for k in range(para_start, i)]
                    level = 1 if first == "=" else 2
                    headings.append(Heading(level, " ".join(parts), para_start + 1, i + 1))
                    para_start = -1
                    prev_blank = False
                    continue
            if (first == "-" or first == "*" or first == "_") and indent < 4 and _HR_RE.match(content):
                para_start = -1  # a thematic break
                if indent == 0:
                    in_list = False
                prev_blank = False
                continue
            is_item = (first in ("-", "*", "+") or first.isdigit()) and _LIST_RE.match(content) is not None
            if is_item:
                in_list = True
                para_start = -1
            elif indent == 0 and prev_blank:
                in_list = False
            if first == "#" and indent < 4 and (not in_list or indent == 0):
                am = _ATX_RE.match(content)
                if am is not None:
                    kinds[i] = HEADING
                    headings.append(Heading(len(am.group(1)), atx_text(am.group(2) or ""), i + 1, i + 1))
                    para_start = -1
                    in_list = False
                    prev_blank = False
                    continue
            if not is_item and not in_list and para_start < 0 and indent < 4:
                para_start = i
        else:
            para_start = -1
        if "^" in text:
            bm = _BLOCK_ID_RE.search(text.rstrip())
            if bm is not None:
                block_ids[i] = bm.group(1)
        prev_blank = False

    return BlockScan(lines, kinds, masked, tuple(headings), tuple(callouts), block_ids, fences, depths)


def atx_text(rest: str) -> str:
    """The text of an ATX heading from what follows its `#` marks (closing `#`s removed)."""
    text = rest.strip(" \t")
    bare = text.rstrip("#")
    if bare != text and (not bare or bare[-1] in " \t"):
        text = bare.rstrip(" \t")
    return text


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
    found: list[tuple[int, Link]] = []
    if "[[" in text:
        starts = _line_starts(scan.masked)
        for m in _WIKILINK_RE.finditer(text):
            at = m.start()
            embed = at > 0 and text[at - 1] == "!"
            link = parse_wikilink(m.group(1), embed=embed, line=bisect_right(starts, at))
            if link is not None:
                found.append((at, link))
        text = _WIKILINK_RE.sub(_same_length_mask, text)
    if "](" in text:
        starts = starts or _line_starts(scan.masked)
        for m in _MDLINK_RE.finditer(text):
            at = m.start()
            embed = at > 0 and text[at - 1] == "!"
            link = _markdown_link(m.group(2), embed=embed, line=bisect_right(starts, at))
            if link is not None:
                found.append((at, link))
        text = _MDLINK_RE.sub(_same_length_mask, text)
    found.sort(key=lambda item: item[0])
    links.extend(link for _, link in found)
    if "#" in text:
        for tm in _TAG_RE.finditer(text):
            found_tag = _valid_tag(tm.group(1))
            if found_tag:
                tags.setdefault(found_tag, None)

    block_ids = dict.fromkeys(scan.block_ids.values())
    return Syntax(tuple(links), tuple(tags), tuple(block_ids), scan.headings, scan.callouts)


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
    """Wikilinks written in front matter string values (Obsidian shows them as links); line 0."""
    out: list[Link] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            if "[[" in value:
                for m in _WIKILINK_RE.finditer(value):
                    embed = m.start() > 0 and value[m.start() - 1] == "!"
                    link = parse_wikilink(m.group(1), embed=embed, line=0)
                    if link is not None:
                        out.append(link)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    walk(dict(data))
    return out
