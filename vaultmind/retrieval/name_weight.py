"""A name's weight by how common it is in its conversation: the inverse document frequency of a
query entity within the conversation a message belongs to (`ResidentLeaves.conversations`: the
folder of its note — a chat's days, an email thread's notes; where a folder holds a note per
conversation, ChatGPT's or an agent's sessions, all of them together).

In a two-person chat each speaker's name is in most messages: written by them, or calling them
("Thanks, Mel!", which NER reads as a mention of Melissa). A mention of such a name says little
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
    return 1.0 if share <= FULL_SHARE else min(1.0, math.log(share) / math.log(FULL_SHARE))


def _distinctiveness(held: npt.NDArray[np.int64], messages: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """`distinctiveness` of each pair of `held` and `messages`."""
    share = held / (messages + SHARE_PRIOR)
    common = share > FULL_SHARE
    out = np.ones(len(share))
    out[common] = np.minimum(1.0, np.log(share[common]) / math.log(FULL_SHARE))
    return out


@dataclass(frozen=True, slots=True)
class NameWeights:
    """What `name_weights` found: per candidate and query entity (in `entity_ids` order), the
    weight of its occurrence (`held`: 0 none, 1 in full, less for a name common in a message's
    conversation); per candidate, the strongest (`naming`) and the weakest of those it holds
    (`weakest`, 1 for none); and the graph proximity reweighed."""

    held: npt.NDArray[np.float64]
    naming: npt.NDArray[np.float64]
    weakest: npt.NDArray[np.float64]
    graph: dict[str, float]


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
    column_of = {e: j for j, e in enumerate(dict.fromkeys(entity_ids))}
    held = np.zeros((len(ids), len(column_of)))
    places = [(k, column_of[e]) for leaf_id, ents in entity_leaves.items() if (k := at.get(leaf_id)) is not None for e in ents if e in column_of]
    if not places and not graph_weights:
        return NameWeights(held, held.max(axis=1, initial=0.0), np.ones(len(ids)), graph_weights)
    conversation, sizes = memory.leaves.conversations(ids)
    if places:
        rows, columns = (np.array(c, dtype=np.int64) for c in zip(*places, strict=True))
        held[rows, columns] = 1.0
        message = conversation[rows] >= 0
        rows, columns = rows[message], columns[message]
        conv = conversation[rows].astype(np.int64)
        # per (entity, conversation) the messages that hold it, and its weight there
        key = columns * len(sizes) + conv
        counts = np.bincount(key, minlength=len(column_of) * len(sizes))
        weight = _distinctiveness(counts[key], sizes[conv])
        # a message its entity wrote holds it in full
        authors = np.unique(cols.author[rows]).tolist()
        entity_of = np.full(max(authors, default=0) + 1, -1, dtype=np.int64)
        for code in authors:
            entity_of[code] = column_of.get(named.get(cols.author_names[code], ""), -1)
        weight[entity_of[cols.author[rows]] == columns] = 1.0
        held[rows, columns] = weight
    graph = _graph_weights(memory, graph_weights, list(column_of), at, conversation, sizes) if graph_weights else graph_weights
    weakest = np.where(held > 0, held, 1.0).min(axis=1, initial=1.0)
    return NameWeights(held, held.max(axis=1, initial=0.0), weakest, graph)


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
    found: dict[tuple[str, int], float] = {}  # (neighbour, conversation) → its weighed edge

    def weighed(other: str, c: int) -> float:
        if (other, c) not in found:
            if other not in counts:
                places, _ = memory.leaves.conversations(sorted(graph.leaves_of([other])))
                counts[other] = np.bincount(places[places >= 0], minlength=len(sizes))
            held = int(counts[other][c]) if c < len(counts[other]) else 0
            found[(other, c)] = edge[other] / top * distinctiveness(held, int(sizes[c]))
        return found[(other, c)]

    out = dict(graph_weights)
    for leaf_id, ents in graph.entities_of(messages).items():
        c = int(conversation[at[leaf_id]])
        near = [weighed(other, c) for other in ents if other in edge]
        if near:
            out[leaf_id] = max(near)
    return out
