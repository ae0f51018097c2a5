"""A whole re-derivation of the entity graph in slices, each its own committed transaction.

When what the rows are derived with changes (the extractor version, the resolution rules, the
NER model, the fuzzy threshold: `EntityDeriver.signature`), every leaf is derived again. Done
inside one transaction, the transaction's undo of every deleted and inserted row, DuckDB's
buffers and the edges' self-join of every occurrence add up: at 50k notes the daemon's start
after an upgrade passed 500 MB. Here each step commits on its own:

1. the old occurrences and edges go, and the state below is written;
2. the occurrences of a slice of `REBUILD_CHUNK` leaf ids, in id order (`derive`);
3. every name is settled to its kind across the vault (`kinds.settle`);
4. the edges of a slice of entity ids (`a`), holding about `edges.EDGE_SLICE_ROWS` occurrences;
5. the talks of a slice of `talks.TALK_SLICE_NOTES` notes, in path order (`talk`);
6. the entity rows, what the rows were derived with (`finish`), and the state goes.

This is the only whole re-derivation; its callers differ only in where a step runs (`Steps`):

- `EntityDeriver.catch_up`, before a sync's batches and before NER's steps (`backfill_ner`):
  each step commits. The state (`META_REDERIVING`) names what the re-derivation is for (the
  signature and registry digest) and how far it got, committed with each step: one stopped
  between two steps (a crash, Ctrl-C) goes on from there at the next sync or NER run. Until it
  is done, the stored signature is the old one.
- `EntityDeriver.refresh` when it must derive everything inside the transaction it is given:
  the first batch of a first index or of a rebuild (whose rows and entity rows commit together,
  and which holds only that batch's leaves: the later batches update their own), and a registry
  change that affects most leaves, made by the entity notes of the batch being written. Every
  step runs in that one transaction; a stopped sliced re-derivation's state is cleared first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from functools import partial
from typing import Any, Protocol, TypeVar

import duckdb

from vaultmind.entities.edges import edge_span, insert_edges
from vaultmind.entities.kinds import settle
from vaultmind.entities.tables import OCC_SCHEMA, get_meta, insert, set_meta
from vaultmind.entities.talks import TALK_SLICE_NOTES
from vaultmind.index.store import Index

META_REDERIVING = "entities.rederiving"  # JSON: what a sliced re-derivation is for and how far it got

READ_MEMORY_LIMIT = "64MB"  # DuckDB's pool while a committed step reads its leaves (`committed`)

Derive = Callable[[duckdb.DuckDBPyConnection, Sequence[str]], dict[str, list[Any]]]
"""The occurrence columns of leaf ids (every `leaves` row of each)."""
Talk = Callable[[duckdb.DuckDBPyConnection, Sequence[str]], None]
"""Insert the `talks` rows of note paths (`talks.insert_talks`, with the registry in force)."""
T = TypeVar("T")


class Steps(Protocol):
    """Where the steps run: each in a transaction of its own (`committed`), or all in the
    caller's (`within`)."""

    def transaction(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        """A step's writes."""
        ...

    def read(self, read: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """A step's reads (the leaves it derives), before its writes."""
        ...


def rederive(
    steps: Steps,
    key: str,
    chunk: int,
    derive: Derive,
    talk: Talk,
    finish: Callable[[duckdb.DuckDBPyConnection], None],
) -> None:
    """Re-derive every occurrence, edge and talk in steps (module docstring), for `key`; `finish`
    writes the entity rows and what they were derived with, in the last step's transaction."""
    with steps.transaction() as con:
        state = _state(con)
        if state is None or state.get("for") != key:
            con.execute("DELETE FROM occurrences")
            con.execute("DELETE FROM edges")
            con.execute("DELETE FROM talks")
            state = {"for": key, "leaf": None, "settled": False, "entity": None, "note": None}
            _save(con, state)
    while not state["settled"]:
        ids, columns = steps.read(partial(_slice, after=state["leaf"], limit=chunk, derive=derive))
        with steps.transaction() as con:
            if columns is not None:
                insert(con, "occurrences", OCC_SCHEMA, columns)
                state["leaf"] = ids[-1]
            else:  # every leaf is derived: the names settle to their kinds across the vault
                settle(con, None)
                state["settled"] = True
            _save(con, state)
    while True:
        with steps.transaction() as con:
            span = edge_span(con, state["entity"])
            if span is None:
                break
            insert_edges(con, *span)
            state["entity"] = span[1]
            _save(con, state)
    while True:
        with steps.transaction() as con:
            notes = _next_notes(con, state.get("note"), TALK_SLICE_NOTES)
            if not notes:
                break
            talk(con, notes)
            state["note"] = notes[-1]
            _save(con, state)
    with steps.transaction() as con:
        finish(con)
        clear(con)


class _Committed:
    """Each step's writes in a transaction of its own, committed, after which DuckDB's cached
    blocks are dropped (`Index.drop_cached_blocks`); its reads before, under a pool of
    `READ_MEMORY_LIMIT` (`Index.small_pool_read`; under 32 MB, beside the index nodes a daemon
    holds pinned, they ran out of memory and ran again under the full pool), the writes under the
    full one. The texts of a
    slice of leaf ids are found by a scan of the whole text column (at 50k notes ~150 MB of blocks
    per slice, whichever way they are looked up: by id, row number or id range), which nothing
    reads again: a daemon's start-up after an upgrade held ~500–530 MB through the whole
    re-derivation. The caller holds the index's lock, so no other writer comes between a step's
    reads and its writes."""

    def __init__(self, index: Index):
        self.index = index

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.index.transaction() as con:
            yield con
        self.index.drop_cached_blocks()

    def read(self, read: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        return self.index.small_pool_read(lambda: read(self.index.con), READ_MEMORY_LIMIT)  # `con` under the lock


class _Within:
    """Every step in the caller's transaction on `con`."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    def transaction(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        return nullcontext(self.con)

    def read(self, read: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        return read(self.con)


def committed(index: Index) -> Steps:
    """Steps each committed on its own (`_Committed`); the caller holds `index.lock`, and
    `derive` writes nothing (it runs no NER: its reads run under a small pool)."""
    return _Committed(index)


def within(con: duckdb.DuckDBPyConnection) -> Steps:
    """Every step in the transaction open on `con`."""
    return _Within(con)


def _slice(
    con: duckdb.DuckDBPyConnection, *, after: str | None, limit: int, derive: Derive
) -> tuple[list[str], dict[str, list[Any]] | None]:
    """The next slice's leaf ids and their occurrence columns (none: every leaf is derived)."""
    ids = _next_leaf_ids(con, after, limit)
    return ids, derive(con, ids) if ids else None


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
    where = "" if after is None else " WHERE id > ?"  # (the first `limit` rows, then their ids: a top-N
    # keeps `limit` rows where DISTINCT over every id built a hash table of the whole column)
    sql = f"SELECT DISTINCT id FROM (SELECT id FROM leaves{where} ORDER BY id LIMIT {int(limit)}) ORDER BY id"
    return [str(r[0]) for r in con.execute(sql, [] if after is None else [after]).fetchall()]


def _next_notes(con: duckdb.DuckDBPyConnection, after: str | None, limit: int) -> list[str]:
    """The next `limit` paths of notes holding messages after `after` (None: from the first), in order."""
    where = "" if after is None else " AND note_path > ?"
    sql = (
        f"SELECT DISTINCT note_path FROM leaves WHERE kind = 'message'{where} "
        f"ORDER BY note_path LIMIT {int(limit)}"
    )
    return [str(r[0]) for r in con.execute(sql, [] if after is None else [after]).fetchall()]
