"""Heading anchors as Obsidian resolves them: "#" + a heading's text, or the shortest chain of
its section's headings that reaches it when an earlier heading has the same text."""

from __future__ import annotations

import re
from collections.abc import Sequence

from vaultmind.markdown.blocks import Heading

_ANCHOR_DROP_RE = re.compile(r"[\[\]]")
_ANCHOR_SPACE_RE = re.compile(r"[#|^:%\\]")


def heading_anchor(text: str) -> str:
    """A heading's text as it appears in an Obsidian link: `[[Note#<anchor>]]`.

    Obsidian drops `[` `]` and turns `# | ^ : % \\` into spaces when linking a heading.
    """
    return " ".join(_ANCHOR_SPACE_RE.sub(" ", _ANCHOR_DROP_RE.sub("", text)).split())


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
