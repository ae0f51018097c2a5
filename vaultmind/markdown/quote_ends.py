"""Where a quote inside a message's text ends: the empty line a source note puts after it.

A message that quotes and then answers ("> the question" then "my answer") is written in its
callout as `> > the question` then `> my answer`. Markdown reads a line after a quoted paragraph
that is less quoted as the paragraph's lazy continuation, so the answer would show inside the
quote. So a source note puts one more empty line after a line of quoted text (outside code)
whose next line that is not empty is less quoted and has text: the quote ends where it ends.
Empty lines already standing there are kept, so reading removes exactly one, and only in a
message whose meta line says `quote="1"` (a note written before this rule reads as written).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from vaultmind.markdown.blocks import fence_after

# A Markdown blockquote's markers: up to three spaces, `>`, an optional space, repeated.
_MARKS_RE = re.compile(r"(?: {0,3}> ?)*")


def _depth(line: str) -> tuple[int, bool]:
    """How many quote markers open `line`, and whether text follows them."""
    marks = _MARKS_RE.match(line)
    assert marks is not None  # (the pattern matches the empty string)
    return marks.group(0).count(">"), bool(line[marks.end() :].strip())


def _quote_ends(lines: Sequence[str]) -> Iterator[int]:
    """The index of each line of quoted text (outside code) whose next line that is not empty is
    less quoted and has text: a quote that ends there."""
    fence = ""
    for i, line in enumerate(lines):
        toggled = fence_after(line, fence)
        if toggled is not None:
            fence = toggled
            continue
        depth, text = _depth(line)
        if fence or not depth or not text:
            continue
        k = i + 1
        while k < len(lines) and lines[k] == "":
            k += 1
        if k < len(lines):
            after, after_text = _depth(lines[k])
            if after_text and after < depth:
                yield i


def end_quotes(lines: Sequence[str]) -> list[str]:
    """A message's text lines (escaped) as its callout holds them: one more empty line after
    each quote that ends before a less quoted line."""
    ends = set(_quote_ends(lines))
    out: list[str] = []
    for i, line in enumerate(lines):
        out.append(line)
        if i in ends:
            out.append("")
    return out


def join_quotes(lines: Sequence[str]) -> list[str]:
    """`end_quotes` undone: the empty line after each such quote removed."""
    ends = set(_quote_ends(lines))
    return [line for i, line in enumerate(lines) if not (i - 1 in ends and line == "")]
