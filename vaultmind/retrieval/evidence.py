"""Evidence for agents: the top hits as one compact, cited block within a token budget.

Each item carries its citation — the vault link and the original `source_ref` — so an agent
can quote it and a person can follow it. A question with no grounding in the memory (no
known entity, no salient term) gets an explicit "no grounding" answer instead of arbitrary
top-k text; a grounded question's words that the memory never mentions are named. Items are
taken in rank order while they fit the budget; one that does not is left out, and a smaller
one after it may still come in; the block ends by naming what it left out. The first item
never gives way to weaker ones: when it does not fit whole, its text is cut to fit (marked
"shortened", ending in "…"), as long as `MIN_SHORTENED_CHARS` of it fit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from vaultmind.index.lexical import terms
from vaultmind.markdown.tokens import approx_tokens
from vaultmind.retrieval.answer_type import ASKING_WORDS

if TYPE_CHECKING:
    from vaultmind.index.resident import ResidentLeaves

SALIENT_MAX_DF = 0.25  # a term in more than a quarter of all leaves grounds nothing
MIN_SHORTENED_CHARS = 80  # of the first item's text, or it is left out rather than cut
_WORD = re.compile(r"\w+")


def is_grounded(query_info: dict[str, Any], salient_terms: list[str]) -> bool:
    """A known entity, a salient term or a time window ("what did we do yesterday?") grounds a
    question."""
    return bool(query_info.get("entities")) or bool(salient_terms) or bool(query_info.get("time_window"))


def salient_terms(leaves: ResidentLeaves, terms: list[str]) -> list[str]:
    """Query terms that exist in the index and are not near-ubiquitous (from the resident
    postings: no SQL)."""
    out = set()
    for term in set(terms) - ASKING_WORDS:
        df, total = leaves.document_frequency(term)
        if df and df / total <= SALIENT_MAX_DF:
            out.add(term)
    return sorted(out)


def unknown_words(leaves: ResidentLeaves, question: str, searched: Collection[str]) -> list[str]:
    """The question's words none of whose search terms occurs anywhere in the memory
    ("kubernetes" in a memory that never mentions it), in the question's order, each once —
    among the words walk searched (`searched`: its content terms; not a time window's words,
    an author's name or the verb asking for their words)."""
    out: list[str] = []
    for word in dict.fromkeys(_WORD.findall(question)):
        word_terms = set(terms(word))
        if not word_terms or not word_terms <= set(searched) or word_terms <= ASKING_WORDS:
            continue
        if all(leaves.document_frequency(t)[0] == 0 for t in word_terms):
            out.append(word)
    return out


def format_evidence(
    result: dict[str, Any], *, budget_tokens: int = 1000, grounded: bool = True, unknown: Sequence[str] = ()
) -> str:
    """A Markdown block of cited hits whose total size stays within `budget_tokens` (≈ chars/4).
    `unknown`: the question's words the memory never mentions, named first so an agent does not
    take the items for an answer about them. Items left out for the budget are named last."""
    query = result.get("query") or {}
    if not grounded:
        terms_text = ", ".join(query.get("terms") or []) or "none"
        missing = f"Not in the memory: {', '.join(unknown)}.\n" if unknown else ""
        return missing + (
            "No grounding: the question names no known entity and no term that is specific in this "
            f"memory (terms: {terms_text}). Ask with a name, a place, a project or a distinctive word."
        )
    hits = result.get("hits", [])
    if not hits:
        return "No evidence found in the memory for this question."
    lines = []
    if unknown:
        lines.append(f"Not in the memory: {', '.join(unknown)}.")
    window = query.get("time_window")
    if window:
        lines.append(f"Time window: {window['start']} – {window['end']} (from “{window['text']}”)")
        if not any(_in_window(hit, window) for hit in hits):
            lines.append("Nothing in the memory falls inside this window; the items below are from outside it.")
    used = sum(approx_tokens(line) + 1 for line in lines)
    items: list[tuple[int, str, int]] = []  # (rank, block, cost) of the items taken
    left: dict[int, int] = {}  # rank → cost of the items left out
    for rank, hit in enumerate(hits, start=1):
        block = _item(rank, hit)
        cost = approx_tokens(block) + 1
        if used + cost > budget_tokens and rank == 1:  # cut to fit, room kept to name the others
            reserve = approx_tokens(_left_out(dict.fromkeys(range(2, len(hits) + 1), 0), sizes=False)) + 1
            shortened = _item(rank, hit, room=budget_tokens - used - reserve - 1) if len(hits) > 1 else ""
            shortened = shortened or _item(rank, hit, room=budget_tokens - used - 1)
            if shortened:
                block, cost = shortened, approx_tokens(shortened) + 1
        if used + cost > budget_tokens:  # left out; a smaller item after it may still fit
            left[rank] = cost
            continue
        items.append((rank, block, cost))
        used += cost
    header = used

    def left_note() -> str | None:  # what was left out, with sizes, or only their numbers
        for note in (_left_out(left), _left_out(left, sizes=False)):
            if used + approx_tokens(note) + 1 <= budget_tokens:
                return note
        return None

    while left and len(items) > 1 and left_note() is None:
        rank, _, cost = items.pop()  # room for saying what was left out (never the last item)
        left[rank] = cost
        used -= cost
    if not items:
        beside = f", beside {header} for the lines above it" if header else ""
        return (
            f"The token budget ({budget_tokens}) is too small for any of the {len(hits)} items found "
            f"(the smallest takes {min(left.values())} with its citation{beside}): ask with a larger budget."
        )
    lines.extend(block for _, block, _ in items)
    if left and (note := left_note()) is not None:
        lines.append(note)
    return "\n".join(lines)


def _left_out(left: dict[int, int], *, sizes: bool = True) -> str:
    listed = ", ".join(f"[{rank}] ({cost} tokens)" if sizes else f"[{rank}]" for rank, cost in sorted(left.items()))
    return f"Left out for the budget: {listed}."


def _in_window(hit: dict[str, Any], window: dict[str, str]) -> bool:
    """Whether the hit's time range overlaps the window (a hit without a time does not)."""
    span = hit.get("time_range") or {}
    start, end = span.get("start"), span.get("end") or span.get("start")
    if not start or not end:
        return False
    try:
        first, last = _utc(start), _utc(end)
        return first < _utc(window["end"]) and last >= _utc(window["start"])
    except ValueError:
        return False


def _utc(text: str) -> datetime:
    when = datetime.fromisoformat(text)
    return when.astimezone(UTC).replace(tzinfo=None) if when.tzinfo else when


def _item(rank: int, hit: dict[str, Any], *, room: int | None = None) -> str:
    """An item's block; with `room` (tokens), its text cut at a word to fit in it, or "" when
    less than `MIN_SHORTENED_CHARS` of the text would."""
    who = hit.get("author") or hit.get("title") or ""
    span = hit.get("time_range") or {}
    when = " – ".join(dict.fromkeys(t for t in (span.get("start"), span.get("end")) if t))  # a summary's range
    head = " · ".join(x for x in (who, when, "shortened" if room is not None else "") if x)
    cites = [hit.get("wikilink") or hit.get("note_path", "")]
    cites.extend(hit.get("source_refs") or [])
    text = " ".join(str(hit.get("content", "")).split())
    cite = " · ".join(c for c in cites if c)
    if room is not None:
        fits = room * 4 - len(f"[{rank}] {head}\n…\n   ↳ {cite}")  # characters of text (a token: four)
        if fits < MIN_SHORTENED_CHARS:
            return ""
        cut = text[: fits + 1]
        text = (cut[: cut.rfind(" ")] if " " in cut else cut[:fits]).rstrip() + "…"
    return f"[{rank}] {head}\n{text}\n   ↳ {cite}"


def tokens_of(text: str) -> int:
    return math.ceil(len(text) / 4)
