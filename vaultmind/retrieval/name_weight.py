"""A name's weight by how common it is in its conversation: the inverse document frequency of a
query entity within the conversation a message belongs to (`ResidentLeaves.conversations`: the
folder of its note, a chat's days or a mailbox).

In a two-person chat each speaker's name is in most messages: written by them, or calling them
("Thanks, Mel!", which NER reads as a mention of Melanie). A mention of such a name says little
about what a message is about, while a third person named twice says much. So a query entity
occurring in a message it did not write counts `distinctiveness` of its share of the
conversation's messages — in the entity signal, hop tightening (the pair bonus) and the
other-author scaling — and a leaf brought in by a graph neighbour counts the neighbour's edge
times the neighbour's own distinctiveness there. A message's own author, and any leaf that is no
message (a document's section, an entity note), count in full.

   share = leaves of the conversation's messages holding the entity (written by it or naming it)
           / (the conversation's messages + `SHARE_PRIOR`)
   weight = 1 when share <= `FULL_SHARE`, else log(share) / log(`FULL_SHARE`)

`SHARE_PRIOR` keeps a short thread from reading its names as common: "Helen, here is the
budget…" and Helen's answer make a share of 2 / 12, not 2 / 2, and the message naming her keeps
its full weight. A name in three quarters of a long chat's messages weighs 0.18, in half 0.43.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from vaultmind.index.leaf_columns import LeafColumns
    from vaultmind.retrieval.view import MemoryView

SHARE_PRIOR = 10  # messages of no mention added to a conversation's count (module doc)
FULL_SHARE = 0.2  # a name in at most this share of its conversation's messages weighs 1


def distinctiveness(held: int, messages: int) -> float:
    """The weight of a name held by `held` of a conversation's `messages` (module doc)."""
    share = held / (messages + SHARE_PRIOR)
    if share <= FULL_SHARE:
        return 1.0
    return min(1.0, math.log(share) / math.log(FULL_SHARE))


@dataclass(frozen=True, slots=True)
class NameWeights:
    """What `name_weights` found: (row, entity) → the weight of a query entity's occurrence
    in a message it did not write, when below 1; per row, the strongest weight of a query entity
    it names (`naming`: 1 for a full one, 0 for none); and the graph proximity reweighed."""

    mention: dict[tuple[int, str], float]
    naming: npt.NDArray[np.float64]
    graph: dict[str, float]

    def of_leaf(self, k: int, entities: frozenset[str]) -> float:
        """The weakest weight among `entities` of the leaf at row `k` (1: none weighed)."""
        return min((self.mention.get((k, e), 1.0) for e in entities), default=1.0)


def name_weights(
    memory: MemoryView,
    ids: Sequence[str],
    at: Mapping[str, int],
    cols: LeafColumns,
    entity_leaves: Mapping[str, frozenset[str]],
    graph_weights: dict[str, float],
    entity_ids: Sequence[str],
    named: Mapping[str, str],
) -> NameWeights:
    """The weights of the occurrences of the query entities (`entity_ids`; `entity_leaves`,
    their leaves) among the candidates `ids` (`at` their places, `cols` their columns; `named`:
    author → the query entity they are), and of the graph proximity `graph_weights` (module doc)."""
    naming = np.zeros(len(ids))
    naming[[at[leaf_id] for leaf_id in entity_leaves if leaf_id in at]] = 1.0
    if not entity_leaves and not graph_weights:
        return NameWeights({}, naming, graph_weights)
    conversation, sizes = memory.leaves.conversations(ids)
    mention: dict[tuple[int, str], float] = {}
    held: dict[str, npt.NDArray[np.int64]] = {}  # entity → its messages per conversation
    for e in sorted({e for ents in entity_leaves.values() for e in ents}):
        rows = np.array([at[leaf_id] for leaf_id, ents in entity_leaves.items() if e in ents and leaf_id in at], dtype=np.int64)
        places = conversation[rows] if len(rows) else np.zeros(0, dtype=np.int32)
        held[e] = np.bincount(places[places >= 0], minlength=len(sizes))
    found: dict[tuple[str, int], float] = {}  # (entity, conversation) → its weight there

    def weight(e: str, c: int) -> float:
        if (e, c) not in found:
            found[(e, c)] = distinctiveness(int(held[e][c]), int(sizes[c]))
        return found[(e, c)]

    for leaf_id, ents in entity_leaves.items():
        k = at.get(leaf_id)
        if k is None or conversation[k] < 0:
            continue
        c = int(conversation[k])
        author = cols.author_names[int(cols.author[k])]
        weights = [1.0 if named.get(author) == e else weight(e, c) for e in ents]
        for e, w in zip(ents, weights, strict=True):
            if w < 1.0:
                mention[(k, e)] = w
        naming[k] = max(weights)
    graph = _graph_weights(memory, graph_weights, entity_ids, at, conversation, sizes) if graph_weights else graph_weights
    return NameWeights(mention, naming, graph)


def _graph_weights(
    memory: MemoryView,
    graph_weights: dict[str, float],
    entity_ids: Sequence[str],
    at: Mapping[str, int],
    conversation: npt.NDArray[np.int32],
    sizes: npt.NDArray[np.int64],
) -> dict[str, float]:
    """Each candidate message's graph proximity: of the neighbours of the query entities it
    holds, the strongest edge (scaled to the strongest of all, as `near_leaves` gives it) times
    that neighbour's distinctiveness in the message's conversation. In a two-person chat the
    speakers' edge is the strongest, and every message of either had earned it."""
    graph = memory.entity_graph()
    edge: dict[str, float] = {}
    for e in entity_ids:
        for other, w in graph.neighbours(e).items():
            edge[other] = max(edge.get(other, 0.0), w)
    top = max(edge.values(), default=0.0)
    messages = [leaf_id for leaf_id in graph_weights if (k := at.get(leaf_id)) is not None and conversation[k] >= 0]
    if top <= 0 or not messages:
        return graph_weights
    counts: dict[str, npt.NDArray[np.int64]] = {}  # neighbour → its messages per conversation

    def held(other: str) -> npt.NDArray[np.int64]:
        if other not in counts:
            places, _ = memory.leaves.conversations(sorted(graph.leaves_of([other])))
            counts[other] = np.bincount(places[places >= 0], minlength=len(sizes))
        return counts[other]

    out = dict(graph_weights)
    for leaf_id, ents in graph.entities_of(messages).items():
        c = int(conversation[at[leaf_id]])
        near = [edge[other] / top * distinctiveness(int(held(other)[c]), int(sizes[c])) for other in ents if other in edge]
        if near:
            out[leaf_id] = max(near)
    return out
