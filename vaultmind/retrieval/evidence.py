"""Evidence for agents: the top hits as one compact, cited block within a token budget.

Each item carries its citation — the vault link and the original `source_ref` — so an agent
can quote it and a person can follow it. A question with no grounding in the memory (no
known entity, no salient term) gets an explicit "no grounding" answer instead of arbitrary
top-k text. Items are taken in rank order while they fit the budget; one that does not is
left out, and a smaller one after it may still come in.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from vaultmind.markdown.tokens import approx_tokens

if TYPE_CHECKING:
    from vaultmind.index.resident import ResidentLeaves

SALIENT_MAX_DF = 0.25  # a term in more than a quarter of all leaves grounds nothing


def is_grounded(query_info: dict[str, Any], salient_terms: list[str]) -> bool:
    """A known entity, a salient term or a time window ("what did we do yesterday?") grounds a
    question."""
    return bool(query_info.get("entities")) or bool(salient_terms) or bool(query_info.get("time_window"))


def salient_terms(leaves: ResidentLeaves, terms: list[str]) -> list[str]:
    """Query terms that exist in the index and are not near-ubiquitous (from the resident
    postings: no SQL)."""
    out = set()
    for term in set(terms):
        df, total = leaves.document_frequency(term)
        if df and df / total <= SALIENT_MAX_DF:
            out.add(term)
    return sorted(out)


def format_evidence(result: dict[str, Any], *, budget_tokens: int = 1000, grounded: bool = True) -> str:
    """A Markdown block of cited hits whose total size stays within `budget_tokens` (≈ chars/4)."""
    query = result.get("query") or {}
    if not grounded:
        terms = ", ".join(query.get("terms") or []) or "none"
        return (
            "No grounding: the question names no known entity and no term that is specific in this "
            f"memory (terms: {terms}). Ask with a name, a place, a project or a distinctive word."
        )
    hits = result.get("hits", [])
    if not hits:
        return "No evidence found in the memory for this question."
    lines = []
    window = query.get("time_window")
    if window:
        lines.append(f"Time window: {window['start']} – {window['end']} (from “{window['text']}”)")
        if not any(_in_window(hit, window) for hit in hits):
            lines.append("Nothing in the memory falls inside this window; the items below are from outside it.")
    used = sum(approx_tokens(line) + 1 for line in lines)
    count = 0
    smallest = None
    for rank, hit in enumerate(hits, start=1):
        block = _item(rank, hit)
        cost = approx_tokens(block) + 1
        if used + cost > budget_tokens:  # left out; a smaller item after it may still fit
            smallest = cost if smallest is None else min(smallest, cost)
            continue
        lines.append(block)
        used += cost
        count += 1
    if count == 0:
        return (
            f"The token budget ({budget_tokens}) is too small for any of the {len(hits)} items found "
            f"(the smallest takes {smallest} with its citation): ask with a larger budget."
        )
    return "\n".join(lines)


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


def _item(rank: int, hit: dict[str, Any]) -> str:
    who = hit.get("author") or hit.get("title") or ""
    when = (hit.get("time_range") or {}).get("start") or ""
    head = " · ".join(x for x in (who, when) if x)
    cites = [hit.get("wikilink") or hit.get("note_path", "")]
    cites.extend(hit.get("source_refs") or [])
    text = " ".join(str(hit.get("content", "")).split())
    return f"[{rank}] {head}\n{text}\n   ↳ " + " · ".join(c for c in cites if c)


def tokens_of(text: str) -> int:
    return math.ceil(len(text) / 4)
