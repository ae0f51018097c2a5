"""What a section of a document or of a note of yours is about, by its headings.

A long document is cut into sections, and a section seldom repeats what its headings say: the
runbook's "Rollback" section says "hide the paywall … ship a hotfix", the meeting note's
"Decisions" section never names the launch sync its note's title names. A question that names
them ("what is the rollback plan?", "what did we decide at the launch sync?") asks for that
section, not for a chat message that happens to share a word of it. Messages have no headings:
a conversation's title ("#launch · 2024-03-04") names where it was said, not what a message
says; nor have entity notes here, which the entity signals speak for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from vaultmind.index.lexical import terms
from vaultmind.markdown.blocks import atx_heading, fence_after
from vaultmind.retrieval.timeparse import MONTHS, WEEKDAYS

_SECTION_NOTES = frozenset(("user", "source"))  # notes of yours and documents (their leaves have no author)
# words of a heading that date it rather than say what it is about ("Launch sync, 7 March 2024")
_DATING = frozenset(terms(" ".join([*MONTHS, *WEEKDAYS])))


def headings(row: Mapping[str, Any]) -> tuple[str, ...]:
    """A section's headings: its note's title, its heading path and the headings inside its
    text; none for a message (a leaf with an author) or an entity note's leaf."""
    if row.get("author") or row.get("note_kind") not in _SECTION_NOTES:
        return ()
    return (row.get("title") or "", *(row.get("heading_path") or ()), *_inner_headings(row.get("text") or ""))


def _inner_headings(text: str) -> list[str]:
    """The headings of a section's text, outside code blocks (a "# comment" there is none)."""
    found: list[str] = []
    if "#" not in text:
        return found
    fence = ""
    for line in text.split("\n"):
        toggled = fence_after(line, fence)
        if toggled is not None:
            fence = toggled
        elif not fence and (atx := atx_heading(line)) is not None and atx[1]:
            found.append(atx[1])  # (a section cut with the ones after it: "## Rollback")
    return found


@lru_cache(maxsize=8192)
def heading_topic(heading: str) -> frozenset[str]:
    """The terms a heading says its section is about: its own, without numbers and the names
    of months and days that date it."""
    return frozenset(t for t in terms(heading) if not t.isdigit() and t not in _DATING)


def heading_shares(
    query_terms: Sequence[str], rows: Mapping[str, Mapping[str, Any]], weight: Callable[[str], float]
) -> dict[str, float]:
    """Per leaf of `rows` with a heading the question names — every term of the heading's
    topic is one of the question's ("Rollback" in "what is the rollback plan?", "Launch sync,
    7 March 2024" in "what did we decide at the launch sync?"; not "Tidepool launch" in "what
    is the budget for the launch?", which names another thing) — the share of the question
    those headings hold, each term counted by `weight` (its idf: "rollback" says more than
    "plan"), when it outweighs the share of the question's terms the leaf holds nowhere: a
    generic heading ("Plan", "Budget", "Notes") named beside what the section never mentions
    ("what is my plan for Saturday?" of the Porto trip's "Plan") is a word shared, not the
    section asked for; "Rollback" outweighs the "plan" its section never says, and then counts
    in full (less, and the chat's "Worth planning for." had ranked above the section)."""
    asked = frozenset(query_terms)
    total = sum(map(weight, asked))
    if total <= 0:
        return {}
    out: dict[str, float] = {}
    for leaf_id, row in rows.items():
        named = {t for heading in headings(row) if (topic := heading_topic(heading)) and topic <= asked for t in topic}
        if named:
            missing = asked - named - frozenset(terms(row.get("text") or ""))
            held = sum(map(weight, named))
            if held > sum(map(weight, missing)):
                out[leaf_id] = held / total
    return out
