"""The entity occurrences and co-occurrence edges, in memory, for the read path.

`walk` asks, per question, which leaves mention the question's entities, which entities are
their neighbours in the co-occurrence graph, and which entities the top hits mention. In SQL
each of these is a scan of `occurrences` (milliseconds each, tens under load); here they are
numpy lookups in compressed rows (entity → leaves, leaf → entities, entity → neighbours).

The snapshot belongs to one state of the index. After a committed change (`Index.generation`)
a fingerprint of the two tables (one aggregate each) tells whether they changed at all — most
commits (embeddings, queue jobs, summaries) leave them alone — and only then is it reloaded:
the tables are read under the index's lock, the graph is built outside it. A serving process
lets a question use the graph last built when only background work has committed since
(`Memory.entity_graph`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import cast

import duckdb
import numpy as np
import numpy.typing as npt

from vaultmind.index.allocator import release_freed_memory
from vaultmind.index.row_ids import RowIds, id_array, pack_ids
from vaultmind.index.store import Index

# a sum of the rows' hashes, not their xor: two rows of one pair would cancel out of a xor, and
# replacing them with two of another pair would leave it as it was
_FINGERPRINT_SQL = """
    SELECT (SELECT count(*) || ':' || coalesce(sum(hash(entity_id, leaf_id)::HUGEINT), 0) FROM occurrences),
           (SELECT count(*) || ':' || coalesce(sum(hash(a, b, weight)::HUGEINT), 0) FROM edges)
"""


@dataclass(slots=True)
class GraphRows:
    """What an `EntityGraph` is built from, as numpy arrays (read by `_tables`): per occurrence
    its entity's position in `entity_ids` and its leaf id (as `hex_bytes` when `packed`), per
    edge its two entities' positions and its weight."""

    entity_ids: list[str]
    codes: npt.NDArray[np.int32]
    leaf_ids: npt.NDArray[np.bytes_]
    packed: bool
    a: npt.NDArray[np.int32]
    b: npt.NDArray[np.int32]
    weight: npt.NDArray[np.float64]


class EntityGraph:
    """Occurrences as two compressed-row maps plus the weighted co-occurrence edges."""

    def __init__(self, rows: GraphRows):
        self.entity_ids = rows.entity_ids
        self._entity_code = {e: i for i, e in enumerate(self.entity_ids)}
        # Leaf ids (hundreds of thousands) as one sorted bytes array, a leaf's code its position:
        # code order is id order, and no Python string or dict entry per leaf. Coded by sorting
        # (Arrow's dictionary encoding of them held ~40 MB of hash table at 50k notes).
        keys, codes = np.unique(rows.leaf_ids, return_inverse=True)
        self._leaf_keys = RowIds()
        self._leaf_keys.reset(keys, packed=rows.packed)
        e = rows.codes
        lf = codes.astype(np.int32)
        del codes
        # Distinct (entity, leaf) pairs sorted by entity, then leaf: as one int64 key each (a
        # row-wise `np.unique(axis=0)` sorted them as raw bytes, ten times slower).
        key = np.sort((e.astype(np.int64) << 32) | lf.astype(np.int64))
        key = key[np.concatenate(([True], key[1:] != key[:-1]))] if len(key) else key
        e, lf = (key >> 32).astype(np.int32), (key & 0xFFFFFFFF).astype(np.int32)
        self._e_start = np.searchsorted(e, np.arange(len(self.entity_ids) + 1)).astype(np.int64)
        self._e_leaves = lf.copy()
        order = np.lexsort((e, lf))
        self._l_start = np.searchsorted(lf[order], np.arange(len(self._leaf_keys) + 1)).astype(np.int64)
        self._l_entities = e[order].copy()
        # Edges both ways as compressed rows (entity → neighbours, their strongest weight), not a
        # dict of dicts: at 50k notes 137k edges held 26 MB of Python objects, their build +36 MB.
        a, b, w = rows.a.astype(np.int64), rows.b.astype(np.int64), rows.weight
        src, dst, w = np.concatenate((a, b)), np.concatenate((b, a)), np.concatenate((w, w))
        order = np.lexsort((-w, dst, src))  # per (entity, neighbour): the strongest weight first
        src, dst, w = src[order], dst[order], w[order]
        first = np.ones(len(src), dtype=bool)
        first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
        self._n_start = np.searchsorted(src[first], np.arange(len(self.entity_ids) + 1)).astype(np.int64)
        self._n_to = dst[first].astype(np.int32)
        self._n_weight = w[first]

    # -- lookups -----------------------------------------------------------------------------

    def leaves_of(self, entity_ids: Iterable[str]) -> dict[str, frozenset[str]]:
        """Leaf id → the given entities it mentions (leaves that mention the same ones share one
        set: the leaves of a question's entities are many, its entities few)."""
        wanted = list(dict.fromkeys(entity_ids))
        parts = [self._leaf_codes(entity_id) for entity_id in wanted]
        if len(wanted) == 1:
            return dict.fromkeys(self._leaf_keys.ids_of(parts[0]), frozenset(wanted))
        codes = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
        leaves, inverse = np.unique(codes, return_inverse=True)
        held = np.zeros((len(leaves), len(wanted)), dtype=bool)
        held[inverse, np.repeat(np.arange(len(wanted)), [len(p) for p in parts])] = True
        kinds, kind_of = np.unique(held, axis=0, return_inverse=True)
        sets = [frozenset(e for e, h in zip(wanted, row, strict=True) if h) for row in kinds.tolist()]
        return dict(zip(self._leaf_keys.ids_of(leaves), [sets[k] for k in kind_of.ravel().tolist()], strict=True))

    def entities_of(self, leaf_ids: Sequence[str]) -> dict[str, list[str]]:
        """Leaf id → the entities it mentions, sorted (leaves without any are absent)."""
        out: dict[str, list[str]] = {}
        for leaf_id, code in zip(leaf_ids, self._leaf_keys.find(leaf_ids).tolist(), strict=True):
            if code < 0:
                continue
            codes = self._l_entities[self._l_start[code] : self._l_start[code + 1]]
            out[leaf_id] = sorted(self.entity_ids[c] for c in codes.tolist())
        return out

    def neighbours(self, entity_id: str) -> dict[str, float]:
        """Entities co-occurring with `entity_id` and the edge weight (by entity id)."""
        code = self._entity_code.get(entity_id)
        if code is None:
            return {}
        lo, hi = int(self._n_start[code]), int(self._n_start[code + 1])
        ids = self.entity_ids
        return {ids[c]: w for c, w in zip(self._n_to[lo:hi].tolist(), self._n_weight[lo:hi].tolist(), strict=True)}

    def near_leaves(self, entity_ids: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """Leaves mentioning a graph neighbour of the given entities, with the strongest edge
        weight that brings them in; best first, ties by leaf id, at most `limit`."""
        weight: dict[str, float] = {}
        for entity_id in entity_ids:
            for other, w in self.neighbours(entity_id).items():
                if w > weight.get(other, float("-inf")):
                    weight[other] = w
        if not weight:
            return []
        parts = [(self._leaf_codes(other), w) for other, w in weight.items()]
        codes = np.concatenate([c for c, _ in parts])
        if len(codes) == 0:
            return []
        weights = np.concatenate([np.full(len(c), w, dtype=np.float64) for c, w in parts])
        order = np.lexsort((-weights, codes))  # per leaf, its strongest weight first
        codes, weights = codes[order], weights[order]
        first = np.ones(len(codes), dtype=bool)
        first[1:] = codes[1:] != codes[:-1]
        codes, weights = codes[first], weights[first]
        top = np.lexsort((codes, -weights))[:limit]  # ties: by leaf id (codes are in id order)
        ids = self._leaf_keys.ids_of(codes[top])
        return list(zip(ids, weights[top].tolist(), strict=True))

    def _leaf_codes(self, entity_id: str) -> npt.NDArray[np.int32]:
        code = self._entity_code.get(entity_id)
        if code is None:
            return np.zeros(0, dtype=np.int32)
        return self._e_leaves[self._e_start[code] : self._e_start[code + 1]]


# Every entity of either table and its position in id order (the same under one lock).
_CODES = (
    "WITH codes AS (SELECT entity_id, (row_number() OVER (ORDER BY entity_id) - 1)::INTEGER AS code "
    "FROM (SELECT entity_id FROM occurrences UNION SELECT a FROM edges UNION SELECT b FROM edges))"
)


def _tables(index: Index) -> GraphRows:
    """The entity ids of `occurrences` and `edges` (sorted), and the rows of both tables with
    each entity as its position in that list (DuckDB codes them: Arrow's dictionary encoding
    held ~20 MB of hash table at 50k notes). Occurrences are read a batch at a time into arrays
    sized from a count, their leaf ids packed as they come (the whole table as Arrow, then its
    ids as bytes, had been ~22 MB more while the graph was built). The caller holds the
    index's lock."""
    con = index.con
    entity_ids = [str(row[0]) for row in con.execute(f"{_CODES} SELECT entity_id FROM codes ORDER BY code").fetchall()]
    codes, leaf_ids, packed = _occurrences(con)
    edges = con.execute(
        f"{_CODES} SELECT ca.code AS a, cb.code AS b, e.weight FROM edges e "
        "JOIN codes ca ON ca.entity_id = e.a JOIN codes cb ON cb.entity_id = e.b"
    ).to_arrow_table()
    return GraphRows(
        entity_ids, codes, leaf_ids, packed,
        edges.column("a").to_numpy().astype(np.int32), edges.column("b").to_numpy().astype(np.int32),
        edges.column("weight").to_numpy().astype(np.float64),
    )  # fmt: skip


def _occurrences(
    con: duckdb.DuckDBPyConnection, *, packed: bool = True
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.bytes_], bool]:
    """Every occurrence's entity code and leaf id, the ids as `hex_bytes` (`packed`) while every
    one is a leaf id; at the first that is not, they are all read again as they are."""
    row = con.execute("SELECT count(*) FROM occurrences").fetchone()
    codes = np.empty(int(row[0]) if row else 0, dtype=np.int32)
    ids: list[npt.NDArray[np.bytes_]] = []
    at = 0
    reader = con.execute(f"{_CODES} SELECT c.code, o.leaf_id FROM occurrences o JOIN codes c USING (entity_id)")
    for batch in reader.to_arrow_reader(_BATCH):
        if not batch.num_rows:
            continue
        part = id_array(batch.column(1))
        if packed:
            part, hexadecimal = pack_ids(part)
            if not hexadecimal:
                return _occurrences(con, packed=False)
        n = len(part)
        codes[at : at + n] = batch.column(0).to_numpy()
        ids.append(part)
        at += n
    return codes[:at], np.concatenate(ids) if ids else np.zeros(0, dtype="S1"), packed and bool(ids)


_BATCH = 65_536  # occurrences read at a time


_VIEW = "entity_graph"
_BUILD = threading.Lock()  # one build at a time: a second caller waits and finds it done


def entity_graph(index: Index, *, evict: bool = False) -> EntityGraph:
    """The `EntityGraph` of `index` as committed now (reloaded only when its tables changed).
    A reload reads the tables under the index's lock and builds the graph outside it (0.3 s at
    50k notes): other readers and writers wait only for the reads. `evict` (a serving process):
    the tables are read with one DuckDB thread, and DuckDB's cached blocks and freed pages go
    back before the build, not after (at 50k notes the build's peak 38 MB lower)."""
    kept = index.view(_VIEW)
    if kept is not None and kept[0] == index.generation:
        return cast(EntityGraph, kept[1][1])
    with _BUILD:
        with index.lock:
            generation = index.generation
            kept = index.view(_VIEW)
            if kept is not None and kept[0] == generation:
                return cast(EntityGraph, kept[1][1])
            row = index.con.execute(_FINGERPRINT_SQL).fetchone()
            fingerprint = tuple(row) if row is not None else ()
            if kept is not None and kept[1][0] == fingerprint:  # a commit that left both tables alone
                index.keep_view(_VIEW, generation, kept[1])
                return cast(EntityGraph, kept[1][1])
            with index.threads(1) if evict else nullcontext():  # a second thread's buffers: +15 MB at 50k notes
                tables = _tables(index)
            if evict:
                index.drop_cached_blocks()
        graph = EntityGraph(tables)
        del tables
        index.keep_view(_VIEW, generation, (fingerprint, graph))
        release_freed_memory()  # the build's temporaries
        return graph


def kept_entity_graph(index: Index, since: int) -> tuple[EntityGraph, bool] | None:
    """The graph last built, if it was built for state `since` or a later one, and whether
    commits have followed it (it may be stale); None otherwise."""
    kept = index.view(_VIEW)
    if kept is None or kept[0] < since:
        return None
    return cast(EntityGraph, kept[1][1]), kept[0] != index.generation
