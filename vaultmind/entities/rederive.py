"""A whole re-derivation of the entity graph in slices, each its own committed transaction.

When what the rows are derived with changes (the extractor version, the resolution rules, the
NER model, the fuzzy threshold: `EntityDeriver.signature`), every leaf is derived again. Done
inside one transaction, the transaction's undo of every deleted and inserted row, DuckDB's
buffers and the edges' self-join of every occurrence add up: at 50k notes the daemon's start
after an upgrade passed 500 MB. Here each step commits on its own:

1. the old occurrences and edges go, and the state below is written;
2. the occurrences of a slice of `REBUILD_CHUNK` leaf ids, in id order (`derive`);
3. every name is settled to its kind across the vault (`kinds.settle`);
4. the edges of a slice of entity ids (`a`), holding about `EDGE_SLICE_ROWS` occurrences;
5. the entity rows, what the rows were derived with (`finish`), and the state goes.

The rows are those of `EntityDeriver.rebuild_all`. The state (`META_REDERIVING`) names what the
re-derivation is for (the signature and registry digest) and how far it got, committed with each
step: a re-derivation stopped between two steps (a crash, Ctrl-C) goes on from there on the
next sync (`EntityDeriver.catch_up`), whose batches come after it. Until it is done, the stored
signature is the old one, so any other write of entity rows (a sync's apply, a step of NER
catch-up) does the whole re-derivation itself first, in its own transaction, and clears the state.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import duckdb

from vaultmind.entities.kinds import settle
from vaultmind.entities.tables import OCC_SCHEMA, get_meta, insert, set_meta
from vaultmind.index.store import Index

META_REDERIVING = "entities.rederiving"  # JSON: what a sliced re-derivation is for and how far it got
EDGE_SLICE_ROWS = 200_000  # occurrences whose edges one step computes (a hub entity's alone may pass it)

Derive = Callable[[duckdb.DuckDBPyConnection, Sequence[str]], dict[str, list[Any]]]
"""The occurrence columns of leaf ids (every `leaves` row of each)."""


def rederive(
    index: Index,
    key: str,
    chunk: int,
    derive: Derive,
    finish: Callable[[duckdb.DuckDBPyConnection], None],
) -> None:
    """Re-derive every occurrence and edge in steps (module docstring), for `key`; `finish`
    writes the entity rows and what they were derived with, in the last step's transaction."""
    with index.transaction() as con:
        state = _state(con)
        if state is None or state.get("for") != key:
            con.execute("DELETE FROM occurrences")
            con.execute("DELETE FROM edges")
            state = {"for": key, "leaf": None, "settled": False, "entity": None}
            _save(con, state)
    while not state["settled"]:
        with index.transaction() as con:
            ids = _next_leaf_ids(con, state["leaf"], chunk)
            if ids:
                insert(con, "occurrences", OCC_SCHEMA, derive(con, ids))
                state["leaf"] = ids[-1]
            else:  # every leaf is derived: the names settle to their kinds across the vault
                settle(con, None)
                state["settled"] = True
            _save(con, state)
    while True:
        with index.transaction() as con:
            span = _edge_span(con, state["entity"])
            if span is None:
                break
            _insert_edges(con, *span)
            state["entity"] = span[1]
            _save(con, state)
    with index.transaction() as con:
        finish(con)
        clear(con)


def clear(con: duckdb.DuckDBPyConnection) -> None:
    """Drop the state of a sliced re-derivation (one done, or made moot by a whole one)."""
    con.execute("DELETE FROM meta WHERE key = ?", [META_REDERIVING])


def _state(con: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
    stored = get_meta(con, META_REDERIVING)
    return None if stored is None else dict(json.loads(stored))


def _save(con: duckdb.DuckDBPyConnection, state: dict[str, Any]) -> None:
    set_meta(con, META_REDERIVING, json.dumps(state, sort_keys=True))


def _next_leaf_ids(con: duckdb.DuckDBPyConnection, after: str | None, limit: int) -> list[str]:
    """The next `limit` leaf ids after `after` (None: from the first), in order."""
    where = "" if after is None else " WHERE id > ?"
    sql = f"SELECT DISTINCT id FROM leaves{where} ORDER BY id LIMIT {int(limit)}"
    return [str(r[0]) for r in con.execute(sql, [] if after is None else [after]).fetchall()]


def _edge_span(con: duckdb.DuckDBPyConnection, after: str | None) -> tuple[str, str] | None:
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


def _insert_edges(con: duckdb.DuckDBPyConnection, first: str, last: str) -> None:
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
