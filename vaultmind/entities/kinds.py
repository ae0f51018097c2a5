"""One kind per name: "TestFlight" read as an organization here and as a work there is one entity,
and so is "Amber" read as a person here and as an organization there.

The model guesses a kind for every name it finds, and the same name gets different guesses in
different texts. A guess of one of `SETTLED_KINDS` that no entity note claims is *settled*:
each occurrence keeps what its leaf read (`occurrences.read_as`, e.g. `work:testflight`) and
carries the id of the kind most leaves of the vault read the name as (`entity_id`,
`org:testflight`); a tie goes to the first kind of `SETTLED_KINDS`: a person, then an
organization, a product, a work. A message's author whom no entity note claims is a reading
of a person, one per leaf, like any other: a name that writes messages of its own is mostly a
person's ("Amber" who writes to the vault), a bot's name the texts read as an organization
("GitHub") becomes one. The rule depends on the reads alone, never on the order leaves were
indexed in, so an incremental update settles to what a cold rebuild gives: when a leaf's reads
change, every name it read (before or after) is settled again over the whole vault (`settle`),
and the rows of other leaves that move are returned for the caller to move edges and entity
rows.

An entity note's kind always wins: its name resolves to its id in every text (the registry
comes before the model), and an id the registry knows is never settled. Within one text the
model's one-word guesses are first settled by the people it names in full (`resolve.py`:
"Priya" beside "Priya Natarajan"); places and events are not settled.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pyarrow as pa

from vaultmind.entities.ids import key_of, kind_of
from vaultmind.entities.registry import Registry
from vaultmind.index.arrow import execute_with, key_table

SETTLED_KINDS = ("person", "org", "product", "work")
"""Kinds of names that settle into one another, in the order that breaks a tie."""

Moved = tuple[str, str, str, str, str]
"""(leaf id, entity id before, entity id after, surface, read as) of an occurrence `settle` moved."""


def settles(registry: Registry, ident: str) -> bool:
    """Whether `ident` is a guess whose kind is settled across the vault."""
    return (
        kind_of(ident) in SETTLED_KINDS and ident not in registry.entries and ident not in registry.redirects
    )


def first_per_name(registry: Registry, mentions: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """`mentions` (id, surface) with one read per name in one text: the first."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for ident, surface in mentions:
        if settles(registry, ident):
            key = key_of(ident)
            if key in seen:
                continue
            seen.add(key)
        out.append((ident, surface))
    return tuple(out)


_ORDER = " ".join(f"WHEN '{kind}' THEN {n}" for n, kind in enumerate(SETTLED_KINDS))

_SETTLE = f"""
    WITH reads AS (
        SELECT substr(read_as, strpos(read_as, ':') + 1) AS key, split_part(read_as, ':', 1) AS kind,
               count(DISTINCT leaf_id) AS leaves
        FROM occurrences
        WHERE read_as IS NOT NULL AND substr(read_as, strpos(read_as, ':') + 1) IN (SELECT k FROM _rows)
        GROUP BY ALL),
    winner AS (
        SELECT key, arg_max(kind, (leaves, -(CASE kind {_ORDER} END))) AS kind FROM reads GROUP BY key)
    SELECT o.leaf_id, o.entity_id, w.kind || ':' || w.key, o.surface, o.read_as
    FROM occurrences o JOIN winner w ON substr(o.read_as, strpos(o.read_as, ':') + 1) = w.key
    WHERE o.read_as IS NOT NULL AND o.entity_id <> w.kind || ':' || w.key
"""


def settle(con: duckdb.DuckDBPyConnection, keys: Sequence[str] | None) -> list[Moved]:
    """Give every occurrence read as one of `keys` (every settled name when None) the id of the
    name's kind across the vault; return the rows moved."""
    if keys is None:
        keys = [str(r[0]) for r in con.execute(
            "SELECT DISTINCT substr(read_as, strpos(read_as, ':') + 1) FROM occurrences WHERE read_as IS NOT NULL"
        ).fetchall()]  # fmt: skip
    if not keys:
        return []
    found = execute_with(con, _SETTLE, rows=key_table(keys)).fetchall()
    if not found:
        return []
    moves = pa.table(
        {"leaf": [r[0] for r in found], "read": [r[4] for r in found], "after": [r[2] for r in found]}
    )
    execute_with(
        con,
        "UPDATE occurrences SET entity_id = m.after FROM _rows m "
        "WHERE occurrences.leaf_id = m.leaf AND occurrences.read_as = m.read",
        rows=moves,
    )
    return [(str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in found]
