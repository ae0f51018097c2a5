"""Retrieval metrics over ranked items with known turn and session coverage.

An item is what a retrieval mode returned at one rank (a leaf, later a summary): its text,
the turn ids whose FULL text it contains, and the sessions it covers. Per question, with the
gold turns and the sessions that hold them:

- `S@5`    1 if one of the top 5 items covers a gold session, else 0;
- `S-MRR`  1 / rank of the first item (within the top 10) covering a gold session, else 0;
- `T-R@5`  share of the gold turns contained in the top 5 items;
- `T-B1k`  walk the items in rank order adding their tokens (ceil(chars / 4)) until the next
           one would take the total over 1,000 — that item and all after it do not count —
           and take the share of gold turns contained in the items that got in.

Averages are plain means over questions; latency percentiles interpolate linearly between
the closest ranks (numpy's default).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

TOP_K = 5
MRR_DEPTH = 10
BUDGET_TOKENS = 1000
METRICS: tuple[str, ...] = ("S@5", "S-MRR", "T-R@5", "T-B1k")


@dataclass(frozen=True, slots=True)
class Item:
    """One ranked item: its text, the turns whose full text it holds, the sessions it covers."""

    text: str
    dia_ids: tuple[str, ...] = ()
    sessions: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "dia_ids": list(self.dia_ids), "sessions": list(self.sessions)}


def item_tokens(text: str) -> int:
    """The token cost of a text: ceil(characters / 4)."""
    return math.ceil(len(text) / 4)


def budget_fit(items: Sequence[Item], budget: int = BUDGET_TOKENS) -> int:
    """How many leading items fit in `budget` tokens (the first that would overflow stops it)."""
    used = 0
    for n, item in enumerate(items):
        used += item_tokens(item.text)
        if used > budget:
            return n
    return len(items)


def fills_budget(items: Sequence[Item], budget: int = BUDGET_TOKENS) -> bool:
    """True when the items hold more than `budget` tokens (so the budget walk ends inside them)."""
    return budget_fit(items, budget) < len(items)


def score_question(
    items: Sequence[Item], gold_turns: Iterable[str], gold_sessions: Iterable[int]
) -> dict[str, float]:
    """The four metrics of one question (see the module docstring)."""
    turns = set(gold_turns)
    sessions = set(gold_sessions)
    s_at_5 = float(any(sessions.intersection(item.sessions) for item in items[:TOP_K]))
    s_mrr = 0.0
    for rank, item in enumerate(items[:MRR_DEPTH], start=1):
        if sessions.intersection(item.sessions):
            s_mrr = 1.0 / rank
            break
    return {
        "S@5": s_at_5,
        "S-MRR": s_mrr,
        "T-R@5": _turn_share(items[:TOP_K], turns),
        "T-B1k": _turn_share(items[: budget_fit(items)], turns),
    }


def _turn_share(items: Sequence[Item], turns: set[str]) -> float:
    if not turns:
        return 0.0
    found = {t for item in items for t in item.dia_ids if t in turns}
    return len(found) / len(turns)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summarize(scores: Sequence[dict[str, float]], latencies_ms: Sequence[float]) -> dict[str, Any]:
    """`{n, S@5, S-MRR, T-R@5, T-B1k, latency_ms: {mean, p50, p95}}` with plain numbers."""
    n = len(scores)
    out: dict[str, Any] = {"n": n}
    for name in METRICS:
        out[name] = round(sum(s[name] for s in scores) / n, 4) if n else 0.0
    lat = list(latencies_ms)
    out["latency_ms"] = {
        "mean": round(sum(lat) / len(lat), 2) if lat else 0.0,
        "p50": round(percentile(lat, 50), 2),
        "p95": round(percentile(lat, 95), 2),
    }
    return out
