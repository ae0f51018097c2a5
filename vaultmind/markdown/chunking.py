"""Leaves of a note: token-budget sections, or one leaf per chat/email message.

Sections (documents, user notes, summaries, entity notes) — `section_leaves`:
- The body is cut along its heading tree. A heading section whose whole subtree fits the budget
  is one leaf; a larger one is packed greedily from its own blocks (paragraphs, lists, tables,
  quotes, code fences, math and comment blocks, never split) and then its child sections (small
  consecutive siblings share a leaf; a too-large child is cut recursively). Text before the
  first heading, and each top-level section, always start a new leaf.
- A block larger than the budget is split: paragraphs by sentence, then line, then whitespace,
  then characters; lists, tables, quotes by line first. A code fence larger than the budget is
  split by lines, each part re-wrapped in the fence's opening and closing lines.
- Every leaf is self-describing: a leaf that does not start with its section's heading gets
  that heading line (normalised to `## Text`, cut with "…" past a quarter of the budget)
  prepended, then a blank line.
- Texts are slices of the body (plus that prefix): no non-blank text is lost.
- `heading_path` is the heading texts from the top; `anchor` is "#" + the heading as Obsidian
  links it, or "^id" when the leaf starts with a block carrying a block id, or "" before any
  heading.

Messages (chat/email source notes) — `message_leaves`: see docs/vault-format.md. The parser is
structural: a message starts only at a `> [!message]` / `> [!email]` line that follows a
non-quoted line, so a message's own text (every line of it is quoted) cannot start another one.

Ids are content-derived (docs/vault-format.md): `section_leaf_id` and `message_leaf_id`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate

import numpy as np

from vaultmind.markdown.obsidian import (
    BLANK,
    FENCE,
    BlockScan,
    Heading,
    atx_text,
    heading_anchor,
    scan_blocks,
)
from vaultmind.markdown.render import fence_after, parse_meta, unescape_text
from vaultmind.markdown.tokens import MIN_CHUNK_TOKENS, count_tokens, running_quarters, token_quarters
from vaultmind.model import Leaf

DEFAULT_CHUNK_TOKENS = 400
_MIN_LIMIT = 16  # never split into pieces smaller than this many tokens, whatever the prefix

_LEADING_BLANK_RE = re.compile(r"\A(?:[ \t]*\n)+")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+|(?<=[。！？])\s*")
_LAST_SPACE_RE = re.compile(r"\s+(?=\S*\Z)")
_STRUCT_START_RE = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)]|>|\|)")
_FENCE_LINE_RE = re.compile(r"((?: {0,3}>[ ]?)*[ \t]*)(`{3,}|~{3,})")
_MSG_START_RE = re.compile(r">[ \t]?\[!([A-Za-z]+)\][+-]?(?:[ \t]+(.*)|[ \t]*)$")
_BLOCK_LINE_RE = re.compile(r"\^([A-Za-z0-9-]+)[ \t]*$")
_ATX_LINE_RE = re.compile(r" {0,3}(#{1,6})[ \t]+(.*)$")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def section_leaf_id(note_key: str, seq: int, text: str) -> str:
    """Id of a section leaf; `note_key` is a source note's `source_id`, else the vault path."""
    return _sha(f"section\0{note_key}\0{seq}\0{text}")[:32]


def message_leaf_id(source_id: str, message_id: str, text: str) -> str:
    return _sha(f"message\0{source_id}\0{message_id}\0{text}")[:32]


# --- sections -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Node:
    heading: Heading | None
    path: tuple[str, ...]
    start: int  # first line (the heading's first line), 0-based
    content_start: int  # first line after the heading
    end: int = 0  # exclusive end of the subtree
    children: list[_Node] = field(default_factory=list)

    @property
    def own_end(self) -> int:
        return self.children[0].start if self.children else self.end


@dataclass(slots=True)
class _Block:
    start: int
    end: int  # exclusive
    fence: bool
    block_id: str | None


@dataclass(slots=True)
class _Open:
    """The chunk being filled: lines [start, end) of the body, plus an optional prefix."""

    start: int
    end: int
    prefix: str
    path: tuple[str, ...]
    anchor: str
    heading_only: bool = False  # only heading lines so far
    droppable: bool = False  # those lines are the section's own heading, repeated in full as prefix


class _Chunker:
    def __init__(self, body: str, scan: BlockScan, budget: int) -> None:
        self.body = body
        self.scan = scan
        self.budget = budget
        self.prefix_cap = budget // 4  # a repeated heading prefix never takes more
        self.lines = scan.lines
        self.offsets = list(accumulate(map((1).__add__, map(len, self.lines)), initial=0))
        self._quarters: list[int] | None = None  # token quarters of lines [0, i), for each i
        self.out: list[tuple[str, tuple[str, ...], str]] = []
        self.anchors = heading_anchors(scan.headings)

    # spans

    def tokens(self, start: int, end: int) -> int:
        """Conservative tokens of lines [start, end) (counts their newlines too): exactly
        `count_tokens` of that span of the body."""
        if self._quarters is None:
            running = running_quarters(self.body)
            ends = np.minimum(np.array(self.offsets, dtype=np.int64), len(self.body))  # the last line may lack its newline
            self._quarters = running[ends].tolist()
        return (self._quarters[end] - self._quarters[start] + 3) // 4

    def text(self, start: int, end: int) -> str:
        raw = self.body[self.offsets[start] : max(self.offsets[start], self.offsets[end] - 1)]
        return _LEADING_BLANK_RE.sub("", raw.rstrip())

    def anchor(self, node: _Node) -> str:
        return self.anchors.get(node.heading.line, "") if node.heading is not None else ""

    def emit(self, text: str, path: tuple[str, ...], anchor: str) -> None:
        if text.strip():
            self.out.append((text, path, anchor))

    def flush(self, cur: _Open | None) -> None:
        if cur is not None:
            self.emit(cur.prefix + self.text(cur.start, cur.end), cur.path, cur.anchor)

    def prefix_for(self, heading: Heading) -> str:
        """The heading line repeated on top of continuation chunks, within `prefix_cap`."""
        line = _heading_line(heading)
        if _tok(line + "\n\n") > self.prefix_cap:
            stop = _hard_split(line, 0, len(line), max(self.prefix_cap - 2, 1), snap=True)[0][1]
            line = line[:stop].rstrip() + "…"
        return line + "\n\n"

    # structure

    def tree(self) -> _Node:
        root = _Node(None, (), 0, 0)
        stack = [root]
        for h in self.scan.headings:
            start = h.line - 1
            while len(stack) > 1 and stack[-1].heading is not None and stack[-1].heading.level >= h.level:
                stack.pop().end = start
            node = _Node(h, (*stack[-1].path, h.text), start, h.end_line)
            stack[-1].children.append(node)
            stack.append(node)
        for node in stack:
            node.end = len(self.lines)
        return root

    def blocks(self, start: int, end: int) -> list[_Block]:
        kinds = self.scan.kinds
        fences = self.scan.fences
        ids = self.scan.block_ids
        out: list[_Block] = []
        i = start
        while i < end:
            if kinds[i] == BLANK:
                i += 1
                continue
            if kinds[i] == FENCE and i in fences:
                stop = min(fences[i], end - 1) + 1
                out.append(_Block(i, stop, True, None))
                i = stop
                continue
            first = i
            i += 1
            while i < end and kinds[i] != BLANK and i not in fences:
                i += 1
            block_id = ids.get(i - 1)
            if (
                out
                and i - first == 1
                and block_id is not None
                and self.lines[first].strip() == "^" + block_id
            ):
                out[-1].end = i  # an own-line ^id belongs to the block above it
                out[-1].block_id = block_id
                continue
            out.append(_Block(first, i, False, block_id))
        return out

    # packing

    def run(self) -> list[tuple[str, tuple[str, ...], str]]:
        root = self.tree()
        self.flush(self.pack_blocks(self.blocks(0, root.own_end), None, "", (), ""))
        for child in root.children:
            self.node(child, None)
        return self.out

    def node(self, node: _Node, carry: int | None) -> None:
        """Chunk one heading section; `carry` is where a parent's bare heading started."""
        assert node.heading is not None
        start = node.start if carry is None else carry
        anchor = self.anchor(node)
        if self.tokens(start, node.end) <= self.budget:
            self.emit(self.text(start, node.end), node.path, anchor)
            return
        prefix = self.prefix_for(node.heading)
        head: _Open | None = None
        if self.tokens(start, node.content_start) > self.budget:
            # A giant heading (typically a long paragraph underlined by `---`): split it as text.
            heading_lines = _Block(start, node.content_start, False, None)
            for text in self.split_block(heading_lines, self.budget):
                self.emit(text, node.path, anchor)
        else:
            # The first chunk starts with the heading as written, so it needs no prefix.
            # It may be dropped for the prefix only when the prefix repeats it in full.
            droppable = carry is None and prefix == _heading_line(node.heading) + "\n\n"
            head = _Open(
                start, node.content_start, "", node.path, anchor, heading_only=True, droppable=droppable
            )
        cur = self.pack_blocks(self.blocks(node.content_start, node.own_end), head, prefix, node.path, anchor)
        for child in node.children:
            if self.tokens(child.start, child.end) <= self.budget:
                if cur is not None and self.tokens(cur.start, child.end) + _tok(cur.prefix) <= self.budget:
                    cur.end = child.end
                    cur.heading_only = False
                    continue
                self.flush(cur)
                cur = _Open(child.start, child.end, "", child.path, self.anchor(child))
                continue
            child_carry: int | None = None
            if cur is not None and cur.heading_only:
                child_carry = cur.start  # a bare heading rides along with the child's first chunk
            else:
                self.flush(cur)
            cur = None
            self.node(child, child_carry)
        self.flush(cur)

    def pack_blocks(
        self, blocks: Sequence[_Block], cur: _Open | None, prefix: str, path: tuple[str, ...], anchor: str
    ) -> _Open | None:
        """Pack `blocks` after `cur`; returns the still-open chunk."""
        prefix_tokens = _tok(prefix)
        for block in blocks:
            first_prefix = prefix
            if cur is not None:
                if self.tokens(cur.start, block.end) + _tok(cur.prefix) <= self.budget:
                    cur.end = block.end
                    cur.heading_only = False
                    continue
                if not cur.heading_only:
                    self.flush(cur)
                elif not cur.droppable:
                    # carried parent heading(s) + own heading: they prefix the next chunk instead,
                    # or, when that would take too much of the budget, are a leaf of their own
                    carried = self.text(cur.start, cur.end) + "\n\n"
                    if _tok(carried) <= self.prefix_cap:
                        first_prefix = carried
                    else:
                        self.flush(cur)
                # else: the bare own heading is dropped; the chunks below carry it as prefix
                cur = None
            size = self.tokens(block.start, block.end)
            block_anchor = "^" + block.block_id if block.block_id else anchor
            first_tokens = _tok(first_prefix)
            if size + first_tokens <= self.budget:
                cur = _Open(block.start, block.end, first_prefix, path, block_anchor)
                continue
            limit = max(self.budget - max(prefix_tokens, first_tokens), _MIN_LIMIT)
            for i, text in enumerate(self.split_block(block, limit)):
                self.emit(
                    (first_prefix if i == 0 else prefix) + text, path, block_anchor if i == 0 else anchor
                )
        return cur

    # oversized blocks

    def split_block(self, block: _Block, limit: int) -> list[str]:
        start = self.offsets[block.start]
        end = self.offsets[block.end] - 1
        if block.fence:
            return self.split_fence(block, limit)
        first = self.lines[block.start]
        levels = (
            ("line", "sentence", "space", "char")
            if _STRUCT_START_RE.match(first)
            else ("sentence", "line", "space", "char")
        )
        pieces = _split_span(self.body, start, end, limit, levels)
        return _pack_spans(self.body, pieces, limit)

    def split_fence(self, block: _Block, limit: int) -> list[str]:
        opener = self.lines[block.start]
        m = _FENCE_LINE_RE.match(opener)
        last = block.end - 1
        closed = False
        if m is not None and last > block.start:
            lm = _FENCE_LINE_RE.match(self.lines[last])
            closed = (
                lm is not None
                and lm.group(2)[0] == m.group(2)[0]
                and not self.lines[last][lm.end() :].strip()
            )
        closer = (m.group(1) + m.group(2)) if m is not None else "```"
        inner_end = last if closed else block.end
        if inner_end <= block.start + 1:
            return _pack_spans(
                self.body,
                _split_span(
                    self.body, self.offsets[block.start], self.offsets[block.end] - 1, limit, ("char",)
                ),
                limit,
            )
        inner_limit = max(limit - _tok(opener + "\n") - _tok("\n" + closer), _MIN_LIMIT)
        start = self.offsets[block.start + 1]
        end = self.offsets[inner_end] - 1
        parts = _pack_spans(
            self.body,
            _split_span(self.body, start, end, inner_limit, ("line", "char")),
            inner_limit,
            strip=False,
        )
        real_closer = self.lines[last] if closed else ""
        out = []
        for i, part in enumerate(parts):
            tail = real_closer if i == len(parts) - 1 else closer
            out.append(f"{opener}\n{part}\n{tail}" if tail else f"{opener}\n{part}")
        return out


def _tok(text: str) -> int:
    return count_tokens(text)


def _heading_line(heading: Heading) -> str:
    return "#" * heading.level + " " + heading.text


def heading_anchors(headings: Sequence[Heading]) -> dict[int, str]:
    """Each heading's anchor, by its first line: "#" + its text as Obsidian links it, or, when an
    earlier heading has the same text, the shortest chain of its section's headings that Obsidian
    resolves to it ("#Day 2#Notes": the first "Notes" after "Day 2"). Obsidian reads a chain one
    heading after another, in note order; a heading no chain reaches keeps its own text (the
    first of that name)."""
    names = [heading_anchor(h.text) for h in headings]
    folded = [name.casefold() for name in names]
    out: dict[int, str] = {}
    stack: list[int] = []  # the open sections' headings, by index
    seen: set[str] = set()
    for i, heading in enumerate(headings):
        while stack and headings[stack[-1]].level >= heading.level:
            stack.pop()
        if names[i]:
            chain = [i]
            if folded[i] in seen:
                for ancestor in reversed(stack):
                    if names[ancestor]:
                        chain.insert(0, ancestor)
                        if _resolves(folded, [folded[k] for k in chain]) == i:
                            break
                else:
                    chain = [i]
            out[heading.line] = "".join("#" + names[k] for k in chain)
            seen.add(folded[i])
        stack.append(i)
    return out


def _resolves(folded: Sequence[str], chain: Sequence[str]) -> int | None:
    """The heading (index) Obsidian opens for a chain of heading names: each matched in turn,
    in note order."""
    at = 0
    for i, name in enumerate(folded):
        if name == chain[at]:
            at += 1
            if at == len(chain):
                return i
    return None


def _split_span(text: str, start: int, end: int, limit: int, levels: Sequence[str]) -> list[tuple[int, int]]:
    """Cut text[start:end] into spans each within `limit` tokens, trying `levels` in order."""
    if count_tokens(text[start:end]) <= limit or not levels:
        return [(start, end)] if text[start:end].strip() else []
    level = levels[0]
    if level == "char":
        return _hard_split(text, start, end, limit)
    if level == "line":
        cuts = [m.start() for m in re.finditer("\n", text[start:end])]
        pieces = _cut(start, end, [(c, c + 1) for c in cuts])
    elif level == "sentence":
        pieces = _cut(start, end, [(m.start(), m.end()) for m in _SENTENCE_END_RE.finditer(text[start:end])])
    else:  # space: fill up to the limit, then cut at the last whitespace
        return [(s, e) for s, e in _hard_split(text, start, end, limit, snap=True) if text[s:e].strip()]
    if len(pieces) <= 1:
        return _split_span(text, start, end, limit, levels[1:])
    out: list[tuple[int, int]] = []
    for s, e in pieces:
        out.extend(
            _split_span(text, s, e, limit, levels[1:]) if count_tokens(text[s:e]) > limit else [(s, e)]
        )
    return [(s, e) for s, e in out if text[s:e].strip()]


def _cut(start: int, end: int, seps: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans between separators (relative offsets) of the absolute span [start, end)."""
    out = []
    pos = start
    for s, e in seps:
        out.append((pos, start + s))
        pos = start + e
    out.append((pos, end))
    return [(s, e) for s, e in out if e > s]


def _hard_split(text: str, start: int, end: int, limit: int, *, snap: bool = False) -> list[tuple[int, int]]:
    """Cut text[start:end] into the longest spans within `limit` tokens; with `snap`, end
    each span at its last whitespace when it has one (whitespace between spans is dropped)."""
    out = []
    pos = start
    while pos < end:
        # the largest stop with count_tokens(text[pos:stop]) <= limit; a char weighs >= 1/4 token
        lo, hi = pos + 1, min(end, pos + 4 * limit)
        if count_tokens(text[pos:hi]) <= limit:
            lo = hi
        else:
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if count_tokens(text[pos:mid]) <= limit:
                    lo = mid
                else:
                    hi = mid - 1
        stop = nxt = lo
        if snap and stop < end and not text[stop].isspace():
            m = _LAST_SPACE_RE.search(text, pos, stop)
            if m is not None and m.start() > pos:
                stop, nxt = m.start(), m.end()
        out.append((pos, stop))
        pos = nxt
        while snap and pos < end and text[pos].isspace():
            pos += 1
    return out


def _pack_spans(text: str, spans: Sequence[tuple[int, int]], limit: int, *, strip: bool = True) -> list[str]:
    """Greedily join consecutive spans (with the text between them) within `limit` tokens."""
    out: list[str] = []
    cur_start = cur_end = -1
    cur_q = 0
    for s, e in spans:
        if cur_start >= 0:
            q = cur_q + token_quarters(text[cur_end:e])
            if (q + 3) // 4 <= limit:
                cur_end, cur_q = e, q
                continue
            out.append(text[cur_start:cur_end])
        cur_start, cur_end, cur_q = s, e, token_quarters(text[s:e])
    if cur_start >= 0:
        out.append(text[cur_start:cur_end])
    if strip:
        return [_LEADING_BLANK_RE.sub("", t.rstrip()) for t in out if t.strip()]
    return [t for t in out if t.strip()]


def section_leaves(
    body: str,
    *,
    note_key: str,
    budget: int = DEFAULT_CHUNK_TOKENS,
    scan: BlockScan | None = None,
    source_ref: str | None = None,
    timestamp: str | None = None,
) -> list[Leaf]:
    """Token-budget section leaves of a body (see the module docstring).

    `budget` is raised to MIN_CHUNK_TOKENS when smaller. `source_ref` (a document source
    note's front matter `source_ref`) and `timestamp` (its `time_end`: the document as of its
    last change) are set on every leaf.
    """
    if not body.strip():
        return []
    if scan is None:
        scan = scan_blocks(body)
    chunks = _Chunker(body, scan, max(budget, MIN_CHUNK_TOKENS)).run()
    leaves = []
    for seq, (text, path, anchor) in enumerate(chunks):
        leaves.append(
            Leaf(
                id=section_leaf_id(note_key, seq, text),
                seq=seq,
                kind="section",
                text=text,
                content_hash=_sha(text),
                token_count=count_tokens(text),
                anchor=anchor,
                heading_path=path,
                source_ref=source_ref,
                timestamp=timestamp,
            )
        )
    return leaves


# --- messages -------------------------------------------------------------------------------


def message_leaves(
    body: str,
    *,
    source_id: str,
    callout_types: Sequence[str] = ("message", "email"),
    ref_for: Callable[[str], str | None] | None = None,
) -> list[Leaf]:
    """One leaf per `> [!message]` / `> [!email]` callout of a chat/email source note.
    `ref_for(message id)` gives the `source_ref` of a message whose meta line has an id and no
    `ref` (the index's `render.derived_ref`); without it such a leaf has none, as the note says
    (the writer reads messages back so, and writes no `ref` the export did not give)."""
    lines = body.split("\n")
    n = len(lines)
    wanted = {t.lower() for t in callout_types}
    leaves: list[Leaf] = []
    path: tuple[str, ...] = ()
    in_fence = ""
    i = 0
    while i < n:
        line = lines[i]
        if not line.startswith(">"):
            toggled = fence_after(line, in_fence)
            if toggled is not None:
                in_fence = toggled
            elif not in_fence and line.startswith("#"):
                hm = _ATX_LINE_RE.match(line)
                if hm is not None:
                    path = (*path[: len(hm.group(1)) - 1], atx_text(hm.group(2)))
            i += 1
            continue
        start = _MSG_START_RE.match(line) if not in_fence else None
        j = i + 1
        while j < n and lines[j].startswith(">"):
            j += 1
        if start is None or start.group(1).lower() not in wanted:
            i = j
            continue
        content = [_unquote(q) for q in lines[i + 1 : j]]
        meta: dict[str, str] = {}
        for k in range(len(content) - 1, -1, -1):
            parsed = parse_meta(content[k])
            if parsed is not None:
                meta = parsed
                del content[k]
                break
        text = unescape_text(content, markup=meta.get("esc") == "1")
        k = j
        while k < n and not lines[k].strip():
            k += 1
        block_id = None
        if k < n:
            bm = _BLOCK_LINE_RE.match(lines[k])
            if bm is not None:
                block_id = bm.group(1)
                j = k + 1
        title = (start.group(2) or "").strip()
        seq = len(leaves)
        message_id = meta.get("id") or block_id or str(seq)
        author = meta.get("author") or (title.split(" · ", 1)[0].strip() if title else None) or None
        leaves.append(
            Leaf(
                id=message_leaf_id(source_id, message_id, text),
                seq=seq,
                kind="message",
                text=text,
                content_hash=_sha(text),
                token_count=count_tokens(text),
                anchor="^" + block_id if block_id else "",
                heading_path=path,
                message_id=message_id,
                author=author,
                timestamp=meta.get("at") or None,
                source_ref=meta.get("ref") or (ref_for(meta["id"]) if ref_for and meta.get("id") else None),
                to=_people(meta.get("to")),
                cc=_people(meta.get("cc")),
            )
        )
        i = j
    return leaves


def _people(listed: str | None) -> tuple[str, ...]:
    """The recipients of a meta line's `to` or `cc` ("; "-separated)."""
    return tuple(person for person in (listed or "").split("; ") if person.strip())


def _unquote(line: str) -> str:
    if line.startswith("> "):
        return line[2:]
    return line[1:]
