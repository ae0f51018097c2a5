"""The first read path: ranked leaves for a text query, lexical and dense fused.

Fusion is reciprocal-rank fusion (RRF), which needs no score calibration between BM25 and
cosine:

    score(leaf) = Σ_signal  w_signal / (K + rank_signal(leaf))      K = 60

with w_bm25 = 1.0 and w_dense = 1.0 over the top `CANDIDATES` of each signal. Every hit
carries its ranks and raw scores so a user can see why it ranked where it did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vaultmind.index.lexical import terms
from vaultmind.retrieval.dense import noticed, question_vector
from vaultmind.retrieval.hits import cite_blocks, envelope, fold_chunks, leaf_hits

if TYPE_CHECKING:
    from vaultmind.retrieval.view import MemoryView

RRF_K = 60
CANDIDATES = 100
WEIGHTS = {"bm25": 1.0, "dense": 1.0}


def search(memory: MemoryView, query: str, *, limit: int) -> dict[str, Any]:
    """`{hits, total, truncated}` for a free-text query, in the hit shape of every mode (each
    hit's `breakdown`: its rank and raw score per signal, and `rrf`); deterministic for a given
    index. Without the question's vector (the embedder failing) it ranks by the words alone,
    and its `notice` says so."""
    lexical = memory.leaves.search(terms(query), CANDIDATES) if query.strip() else []
    dense: list[tuple[str, float]] = []
    vector, notice = question_vector(memory, query) if query.strip() else (None, None)
    if vector is not None and memory.vectors is not None:
        dense = memory.vectors.search(vector, CANDIDATES)
    ordered = fold_chunks(memory, fuse(lexical, dense))  # a summary's chunks after its best: not cut to `limit`, nor counted
    hits = leaf_hits(memory, ordered[:limit])
    cite_blocks(memory, hits, terms(query))
    return envelope(hits, len(ordered), **noticed(notice))


def fuse(lexical: Sequence[tuple[str, float]], dense: Sequence[tuple[str, float]]) -> list[tuple[str, float, dict[str, Any]]]:
    """[(leaf_id, rrf, breakdown)] best first (ties by id): the two rankings fused by RRF, each
    leaf's breakdown holding its rank and raw score per signal."""
    fused: dict[str, dict[str, Any]] = {}
    for signal, ranked in (("bm25", lexical), ("dense", dense)):
        for rank, (leaf_id, raw) in enumerate(ranked, start=1):
            entry = fused.setdefault(leaf_id, {"rrf": 0.0})
            entry["rrf"] += WEIGHTS[signal] / (RRF_K + rank)
            entry[f"{signal}_rank"] = rank
            entry[signal] = round(raw, 6)
    ordered = sorted(fused.items(), key=lambda item: (-item[1]["rrf"], item[0]))
    return [(leaf_id, info["rrf"], {**info, "rrf": round(info["rrf"], 6)}) for leaf_id, info in ordered]
