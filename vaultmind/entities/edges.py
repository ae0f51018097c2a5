"""The co-occurrence edges: unordered pairs `a < b` of entity ids with `weight` = the number of
distinct leaves mentioning both.

Two ways to write them, each the only one of its kind:

- all of them, from the `occurrences` table, a slice of entity ids (`a`) at a time
  (`edge_span`, `insert_edges`): a whole re-derivation (`rederive.py`);
- moved by the difference of the entity sets of the leaves derived again (`move_edges`): a
  sync's update of some leaves (`EntityDeriver.update_leaves`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations

import duckdb
import pyarrow as pa

from vaultmind.entities.catalog import OccRow
from vaultmind.entities.tables import EDGE_SCHEMA, insert
from vaultmind.index.arrow import execute_with

EDGE_SLICE_ROWS = 200_000  # occurrences whose edges one step computes (a hub entity's alone may pass it)


def edge_span(con: duckdb.DuckDBPyConnection, after: str | None) -> tuple[str, str] | None:
    """The first and last entity id of the next slice: the ids after `after`, in order, while
    their occurrences stay within `EDGE_SLICE_ROWS` (at least one id)."""
    where = "" if after is None else "WHERE entity_id > ?"
    rows = con.execute(
        f"""
        SELECT entity_id FROM (
            SELECT entity_id, sum(count(*)) OVER (ORDER BY entity_id) AS upto
            FROM occurrences {where} GROUP BY entity_id
        ) WHERE upto <= ? OR entity_id = (SELECT min(entity_id) FROM occurrences {where})
        ORDER BY entity_id
        """,
        ([after, EDGE_SLICE_ROWS, after] if after is not None else [EDGE_SLICE_ROWS]),
    ).fetchall()
    return None if not rows else (str(rows[0][0]), str(rows[-1][0]))


def insert_edges(con: duckdb.DuckDBPyConnection, first: str, last: str) -> None:
    """The edges `a`–`b` of every `a` from `first` to `last`: the number of distinct leaves
    mentioning both (the self-join reads only the leaves mentioning one of those `a`)."""
    con.execute(
        """
        INSERT INTO edges
        WITH o1 AS (SELECT leaf_id, entity_id FROM occurrences WHERE entity_id BETWEEN $first AND $last),
        o2 AS (SELECT leaf_id, entity_id FROM occurrences WHERE leaf_id IN (SELECT leaf_id FROM o1))
        SELECT o1.entity_id, o2.entity_id, count(DISTINCT o1.leaf_id)::INTEGER
        FROM o1 JOIN o2 ON o1.leaf_id = o2.leaf_id AND o1.entity_id < o2.entity_id
        GROUP BY o1.entity_id, o2.entity_id
        """,
        {"first": first, "last": last},
    )


def move_edges(con: duckdb.DuckDBPyConnection, old_rows: Sequence[OccRow], new_rows: Sequence[OccRow]) -> None:
    """Move the edge weights by the difference between the entity sets of each leaf before
    (`old_rows`) and after (`new_rows`)."""
    old: dict[str, set[str]] = defaultdict(set)
    new: dict[str, set[str]] = defaultdict(set)
    for leaf, ident, _ in old_rows:
        old[leaf].add(ident)
    for leaf, ident, _ in new_rows:
        new[leaf].add(ident)
    delta: Counter[tuple[str, str]] = Counter()
    for leaf in set(old) | set(new):  # (a leaf of one entity or none has no pair: most of a first index's)
        if len(now := new.get(leaf, ())) > 1:
            delta.update(combinations(sorted(now), 2))
        if len(was := old.get(leaf, ())) > 1:
            delta.subtract(combinations(sorted(was), 2))
    _apply_edge_delta(con, {pair: d for pair, d in delta.items() if d})


def _apply_edge_delta(con: duckdb.DuckDBPyConnection, delta: dict[tuple[str, str], int]) -> None:
    """Move edge weights by `delta`: the rows of those pairs are taken out and put back changed."""
    if not delta:
        return
    pairs = sorted(delta)
    old = {
        (a, b): int(w)
        for a, b, w in execute_with(
            con,
            "DELETE FROM edges USING _rows d WHERE edges.a = d.a AND edges.b = d.b RETURNING edges.a, edges.b, edges.weight",
            rows=pa.table({"a": [p[0] for p in pairs], "b": [p[1] for p in pairs]}),
        ).fetchall()
    }
    kept = [(pair, old.get(pair, 0) + delta[pair]) for pair in pairs]
    kept = [(pair, weight) for pair, weight in kept if weight > 0]
    insert(
        con,
        "edges",
        EDGE_SCHEMA,
        {"a": [p[0] for p, _ in kept], "b": [p[1] for p, _ in kept], "weight": [w for _, w in kept]},
    )
