"""The section chunker: a note body cut along its heading tree into token-budget chunks, each
with its heading path and anchor (the rules are in `markdown.chunking`'s docstring)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate

import numpy as np
import numpy.typing as npt

from vaultmind.markdown.anchors import heading_anchors
from vaultmind.markdown.blocks import BLANK, FENCE, BlockScan, Heading
from vaultmind.markdown.spans import hard_split, pack_spans, split_span, trimmed_span
from vaultmind.markdown.tokens import count_tokens, opening_discount, running_quarters, token_quarters

_MIN_LIMIT = 16  # never split into pieces smaller than this many tokens, whatever the prefix
_LINE_BREAKS = "\n\r\x0b\x0c"  # a character of the token estimate's class of line breaks


_STRUCT_START_RE = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)]|>|\|)")


_FENCE_LINE_RE = re.compile(r"((?: {0,3}>[ ]?)*[ \t]*)(`{3,}|~{3,})")


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


class SectionChunker:
    def __init__(self, body: str, scan: BlockScan, budget: int) -> None:
        self.body = body
        self.scan = scan
        self.budget = budget
        self.prefix_cap = budget // 4  # a repeated heading prefix never takes more
        self.lines = scan.lines
        self.offsets = list(accumulate(map((1).__add__, map(len, self.lines)), initial=0))
        self._running: npt.NDArray[np.int64] | None = None  # `running_quarters(body)`
        self._quarters: list[int] = []  # token quarters of lines [0, i), for each i
        self._openings: dict[int, int] = {}  # what line i's first character weighs more opening a span
        self.out: list[tuple[str, tuple[str, ...], str, int]] = []  # (text, path, anchor, tokens)
        self.anchors = heading_anchors(scan.headings)

    # spans

    def running(self) -> npt.NDArray[np.int64]:
        """`running_quarters` of the body, computed once."""
        if self._running is None:
            self._running = running_quarters(self.body)
            ends = np.minimum(np.array(self.offsets, dtype=np.int64), len(self.body))  # the last line may lack its newline
            self._quarters = self._running[ends].tolist()
        return self._running

    def tokens(self, start: int, end: int) -> int:
        """Conservative tokens of lines [start, end) (counts their newlines too): exactly
        `count_tokens` of that span of the body."""
        if end <= start:
            return 0
        running = self.running()
        opening = self._openings.get(start)
        if opening is None:
            opening = self._openings[start] = opening_discount(self.body, self.offsets[start], running)
        return (self._quarters[end] - self._quarters[start] + opening + 3) // 4

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The offsets in the body of the text of lines [start, end): without its trailing
        whitespace and leading blank lines."""
        return trimmed_span(self.body, self.offsets[start], max(self.offsets[start], self.offsets[end] - 1))

    def text(self, start: int, end: int) -> str:
        first, stop = self.span(start, end)
        return self.body[first:stop]

    def span_tokens(self, prefix: str, start: int, end: int) -> int:
        """`count_tokens(prefix + body[start:end])`, from the running count: the span weighs as
        inside the body but for its opening, alone (no prefix) or after the prefix's last line
        break (when a line break comes before it in the body too)."""
        running = self.running()
        quarters = int(running[end] - running[start])
        if not prefix:
            quarters += opening_discount(self.body, start, running, end)
        elif prefix[-1] in _LINE_BREAKS and start > 0 and self.body[start - 1] in _LINE_BREAKS:
            quarters += _quarters(prefix)
        else:
            return count_tokens(prefix + self.body[start:end])
        return (quarters + 3) // 4
    def anchor(self, node: _Node) -> str:
        return self.anchors.get(node.heading.line, "") if node.heading is not None else ""

    def emit(self, text: str, path: tuple[str, ...], anchor: str, tokens: int | None = None) -> None:
        """Add a chunk; `tokens` is its `count_tokens` when known."""
        if text.strip():
            self.out.append((text, path, anchor, count_tokens(text) if tokens is None else tokens))

    def emit_span(self, prefix: str, start: int, end: int, path: tuple[str, ...], anchor: str) -> None:
        """Add the chunk of `prefix` and the body's text from offset `start` to `end`."""
        self.emit(prefix + self.body[start:end], path, anchor, self.span_tokens(prefix, start, end))

    def flush(self, cur: _Open | None) -> None:
        if cur is not None:
            self.emit_span(cur.prefix, *self.span(cur.start, cur.end), cur.path, cur.anchor)

    def prefix_for(self, heading: Heading) -> str:
        """The heading line repeated on top of continuation chunks, within `prefix_cap`."""
        line = _heading_line(heading)
        if _tok(line + "\n\n") > self.prefix_cap:
            stop = hard_split(line, 0, len(line), max(self.prefix_cap - 2, 1), snap=True)[0][1]
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

    def run(self) -> list[tuple[str, tuple[str, ...], str, int]]:
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
            self.emit_span("", *self.span(start, node.end), node.path, anchor)
            return
        prefix = self.prefix_for(node.heading)
        head: _Open | None = None
        if self.tokens(start, node.content_start) > self.budget:
            # A giant heading (typically a long paragraph underlined by `---`): split it as text.
            heading_lines = _Block(start, node.content_start, False, None)
            for first, stop in self.split_block(heading_lines, self.budget):
                self.emit_span("", first, stop, node.path, anchor)
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
            if block.fence:
                for i, text in enumerate(self.split_fence(block, limit)):
                    self.emit((first_prefix if i == 0 else prefix) + text, path, block_anchor if i == 0 else anchor)
                continue
            for i, (first, stop) in enumerate(self.split_block(block, limit)):
                self.emit_span(first_prefix if i == 0 else prefix, first, stop, path, block_anchor if i == 0 else anchor)
        return cur

    # oversized blocks

    def split_block(self, block: _Block, limit: int) -> list[tuple[int, int]]:
        """The offsets in the body of the parts of a block that is not a code fence."""
        start = self.offsets[block.start]
        end = self.offsets[block.end] - 1
        first = self.lines[block.start]
        levels = (
            ("line", "sentence", "space", "char")
            if _STRUCT_START_RE.match(first)
            else ("sentence", "line", "space", "char")
        )
        pieces = split_span(self.body, start, end, limit, levels)
        return pack_spans(self.body, pieces, limit)

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
            pieces = split_span(self.body, self.offsets[block.start], self.offsets[block.end] - 1, limit, ("char",))
            return [self.body[first:stop] for first, stop in pack_spans(self.body, pieces, limit)]
        inner_limit = max(limit - _tok(opener + "\n") - _tok("\n" + closer), _MIN_LIMIT)
        start = self.offsets[block.start + 1]
        end = self.offsets[inner_end] - 1
        parts = pack_spans(
            self.body,
            split_span(self.body, start, end, inner_limit, ("line", "char")),
            inner_limit,
            strip=False,
        )
        real_closer = self.lines[last] if closed else ""
        out = []
        for i, (first, stop) in enumerate(parts):
            part = self.body[first:stop]
            tail = real_closer if i == len(parts) - 1 else closer
            out.append(f"{opener}\n{part}\n{tail}" if tail else f"{opener}\n{part}")
        return out


@lru_cache(maxsize=1024)
def _quarters(text: str) -> int:
    """`token_quarters` of a heading prefix or a fence line: a note's few prefixes are counted
    once for each block they are weighed against, so they are remembered (by text)."""
    return token_quarters(text)


def _tok(text: str) -> int:
    """`count_tokens` of a heading prefix or a fence line (remembered)."""
    return (_quarters(text) + 3) // 4


def _heading_line(heading: Heading) -> str:
    return "#" * heading.level + " " + heading.text
