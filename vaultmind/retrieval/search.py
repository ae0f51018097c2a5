"""The first read path: ranked leaves for a text query, lexical and dense fused.

Fusion is reciprocal-rank fusion (RRF), which needs no score calibration between BM25 and
cosine:

    score(leaf) = Σ_signal  w_signal / (K + rank_signal(leaf))      K = 60

with w_bm25 = 1.0 and w_dense = 1.0 over the top `CANDIDATES` of each signal. Every hit
carries its ranks and raw scores so a user can see why it ranked where it did.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vaultmind.embed.base import embed_query
from vaultmind.index.lexical import terms
from vaultmind.vault.layout import obsidian_link, wikilink

if TYPE_CHECKING:
    from vaultmind.memory import Memory

RRF_K = 60
CANDIDATES = 100
WEIGHTS = {"bm25": 1.0, "dense": 1.0}


@dataclass(slots=True)
class SearchHit:
    leaf_id: str
    note_path: str
    note_kind: str
    title: str
    anchor: str
    text: str
    score: float
    why: dict[str, Any] = field(default_factory=dict)
    author: str | None = None
    timestamp: str | None = None
    source_ref: str | None = None
    heading_path: list[str] = field(default_factory=list)
    link: str = ""
    wikilink: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "leaf_id": self.leaf_id,
            "note_path": self.note_path,
            "note_kind": self.note_kind,
            "title": self.title,
            "anchor": self.anchor,
            "link": self.link,
            "wikilink": self.wikilink,
            "text": self.text,
            "score": round(self.score, 6),
            "why": self.why,
            "author": self.author,
            "timestamp": self.timestamp,
            "source_ref": self.source_ref,
            "heading_path": self.heading_path,
        }


def search(memory: Memory, query: str, *, limit: int) -> dict[str, Any]:
    """`{hits, total, truncated}` for a free-text query; deterministic for a given index."""
    lexical = memory.leaves.search(terms(query), CANDIDATES) if query.strip() else []
    dense: list[tuple[str, float]] = []
    if memory.embedder is not None and memory.vectors is not None and query.strip():
        dense = memory.vectors.search(embed_query(memory.embedder, query), CANDIDATES)
    fused: dict[str, dict[str, Any]] = {}
    for signal, ranked in (("bm25", lexical), ("dense", dense)):
        for rank, (leaf_id, raw) in enumerate(ranked, start=1):
            entry = fused.setdefault(leaf_id, {"score": 0.0})
            entry["score"] += WEIGHTS[signal] / (RRF_K + rank)
            entry[f"{signal}_rank"] = rank
            entry[signal] = round(raw, 6)
    ordered = sorted(fused.items(), key=lambda item: (-item[1]["score"], item[0]))
    total = len(ordered)
    top = ordered[:limit]
    hits = _hydrate(memory, top)
    return {"hits": [h.to_dict() for h in hits], "total": total, "truncated": total > len(hits)}


def _hydrate(memory: Memory, ranked: list[tuple[str, dict[str, Any]]]) -> list[SearchHit]:
    """Hits from the resident leaf rows (no SQL: this runs on every keystroke-sized query)."""
    if not ranked:
        return []
    rows = memory.leaves.rows([leaf_id for leaf_id, _ in ranked])
    vault_name = memory.vault_name
    hits = []
    for leaf_id, info in ranked:
        row = rows.get(leaf_id)
        if row is None:
            continue
        why = {k: v for k, v in info.items() if k != "score"}
        why["rrf"] = round(info["score"], 6)
        hits.append(
            SearchHit(
                leaf_id=leaf_id,
                note_path=row["note_path"],
                note_kind=row["note_kind"],
                title=row["title"],
                anchor=row["anchor"],
                text=row["text"],
                score=info["score"],
                why=why,
                author=row["author"],
                timestamp=row["ts"].strftime("%Y-%m-%dT%H:%M:%SZ") if row["ts"] is not None else None,
                source_ref=row["source_ref"],
                heading_path=list(row["heading_path"] or []),
                link=obsidian_link(vault_name, row["note_path"], row["anchor"]),
                wikilink=wikilink(row["note_path"], row["anchor"]),
            )
        )
    return hits
