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
    pair_leaves = related_pair_leaves(graph, by_leaf, entity_ids, max_hops)
    proximity: dict[str, float] = {}
    neighbours = graph.near_leaves(entity_ids, CANDIDATES)
    if neighbours:
        top = float(neighbours[0][1]) or 1.0
        proximity = {leaf_id: float(w) / top for leaf_id, w in neighbours}
    return by_leaf, pair_leaves, proximity, own


def related_pair_leaves(
    graph: EntityGraph, by_leaf: dict[str, frozenset[str]], entity_ids: Sequence[str], max_hops: int
) -> set[str]:
    """The leaves holding two query entities connected within `max_hops` co-occurrence edges.
    Per leaf only the pairs among its own query entities (a handful) are tried, not every
    related pair of the question: a question naming a hundred entities stays fast."""
    if len(set(entity_ids)) < 2:
        return set()
    partners: dict[str, set[str]] = {}
    for a, b in _related_pairs(graph, entity_ids, max_hops):
        partners.setdefault(a, set()).add(b)
        partners.setdefault(b, set()).add(a)
    return {leaf_id for leaf_id, ents in by_leaf.items() if _holds_pair(ents, partners)}


def _holds_pair(ents: frozenset[str], partners: dict[str, set[str]]) -> bool:
    """Whether the leaf's query entities include two related ones."""
    return len(ents) >= 2 and any(not partners.get(e, set()).isdisjoint(ents) for e in ents)


def _related_pairs(graph: EntityGraph, entity_ids: Sequence[str], max_hops: int) -> list[tuple[str, str]]:
    """Pairs of query entities connected within `max_hops` co-occurrence edges."""
    ids = sorted(set(entity_ids))
    pairs: list[tuple[str, str]] = []
    near: dict[str, set[str]] = {}  # each entity's neighbours, looked up once for all the starts
    for i, a in enumerate(ids):
        reach = _reachable(graph, a, max_hops, near)
        pairs.extend((a, b) for b in ids[i + 1 :] if b in reach)
    return pairs


def _reachable(graph: EntityGraph, start: str, hops: int, near: dict[str, set[str]]) -> set[str]:
    seen = {start}
    frontier = {start}
    for _ in range(hops):
        step: set[str] = set()
        for node in frontier:
            if node not in near:
                near[node] = set(graph.neighbours(node))
            step |= near[node]
        frontier = step - seen
        seen |= frontier
    return seen
