"""The leaves of the question's entities, as `walk` gathers and scores them: where each occurs
(mentioned, or its own entity note when that holds more than its heading), the leaves holding
two query entities related within `max_hops` co-occurrence edges (hop tightening), and each
leaf's proximity to them in the co-occurrence graph (`retrieval/signals.py`: the entity and
graph signals)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from vaultmind.retrieval.signals import CANDIDATES, OWN_NOTE_MIN_TERMS

if TYPE_CHECKING:
    from vaultmind.retrieval.entity_graph import EntityGraph
    from vaultmind.retrieval.view import MemoryView


def entity_signals(
    memory: MemoryView, entity_ids: Sequence[str], max_hops: int
) -> tuple[dict[str, frozenset[str]], set[str], dict[str, float], dict[str, list[str]]]:
    """Leaves per query entity, leaves holding related pairs, graph proximity per leaf, and the
    leaves of the query entities' own notes (entity → leaf ids)."""
    if not entity_ids:
        return {}, set(), {}, {}
    graph = memory.entity_graph()
    by_leaf = dict(graph.leaves_of(entity_ids))
    # an entity's own note is about it ("who is Dana?"), though it never mentions itself as one
    from vaultmind.entities.query import entity_query

    entries = entity_query(memory.index).registry.entries  # the entities that have a note
    notes = {entry.note_path: e for e in entity_ids if (entry := entries.get(e)) is not None}
    own: dict[str, list[str]] = {}
    for path, leaf_ids in memory.leaves.of_notes(sorted(notes)).items():
        lengths = memory.leaves.columns(leaf_ids).length
        for leaf_id, length in zip(leaf_ids, lengths.tolist(), strict=True):
            if length > OWN_NOTE_MIN_TERMS:  # a note of nothing but its heading ("# Tom Becker") says nothing
                by_leaf[leaf_id] = by_leaf.get(leaf_id, frozenset()) | {notes[path]}
                own.setdefault(notes[path], []).append(leaf_id)
    pair_leaves: set[str] = set()
    if len(entity_ids) >= 2:
        related = _related_pairs(graph, entity_ids, max_hops)
        for leaf_id, ents in by_leaf.items():
            if any(a in ents and b in ents for a, b in related):
                pair_leaves.add(leaf_id)
    proximity: dict[str, float] = {}
    neighbours = graph.near_leaves(entity_ids, CANDIDATES)
    if neighbours:
        top = float(neighbours[0][1]) or 1.0
        proximity = {leaf_id: float(w) / top for leaf_id, w in neighbours}
    return by_leaf, pair_leaves, proximity, own


def _related_pairs(graph: EntityGraph, entity_ids: Sequence[str], max_hops: int) -> list[tuple[str, str]]:
    """Pairs of query entities connected within `max_hops` co-occurrence edges."""
    ids = sorted(set(entity_ids))
    pairs: list[tuple[str, str]] = []
    for i, a in enumerate(ids):
        reach = _reachable(graph, a, max_hops)
        pairs.extend((a, b) for b in ids[i + 1 :] if b in reach)
    return pairs


def _reachable(graph: EntityGraph, start: str, hops: int) -> set[str]:
    seen = {start}
    frontier = {start}
    for _ in range(hops):
        frontier = {n for node in frontier for n in graph.neighbours(node)} - seen
        seen |= frontier
    return seen
