"""What derives more rows from the leaves a sync writes, inside its transaction (`Deriver`),
and the derivers whose per-note work runs where the note is parsed (`Preparing`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import duckdb
import pyarrow as pa

from vaultmind.index.store import Index
from vaultmind.model import WrittenNote
from vaultmind.sync_note import Preparer


class Deriver(Protocol):
    """Derives more rows from leaves inside the sync transaction (entities, admission, …).

    `apply` runs in the same transaction as the leaf rows: `removed_leaf_ids` are the leaves
    that just went away (their rows are already deleted), `written` the notes whose rows were
    just inserted, `changed_paths` the notes whose rows were deleted first (removed or written
    again: every removed leaf belonged to one of them, so a caller that removes leaves names
    their notes). On a rebuild, every table the deriver declares `-- derived:` in its
    migration is already empty and `removed_leaf_ids` is empty. A deriver must keep its rows
    equal to what a cold rebuild of the final vault would give.
    """

    name: str

    def apply(
        self,
        con: duckdb.DuckDBPyConnection,
        removed_leaf_ids: Sequence[str],
        written: Sequence[WrittenNote],
        *,
        rebuild: bool,
        changed_paths: Sequence[str] = (),
    ) -> None: ...


@runtime_checkable
class Preparing(Protocol):
    """A `Deriver` whose per-note work is a pure function of the parsed note (and of what is
    committed: the entity registry): `preparer(con)` returns it (picklable), the sync runs it
    where the note is parsed (in a worker process for a large sync, up to a batch ahead), and
    `apply` receives the results of the written notes by path as `prepared`. A result may be
    stale (the batch before changed what it depends on): `apply` must then redo that work, so
    its rows are always those it would give without `prepared`. `leaves`, when given, holds
    every `leaves` row (with its text) of the ids of `written` and `removed_leaf_ids`: the sync
    knew them without a query (`LoadLeafIds`; or no other note holds one, `held_elsewhere`)."""

    name: str

    def preparer(self, con: duckdb.DuckDBPyConnection) -> Preparer:
        """The per-note work for notes applied after the rows now committed in `con`."""
        ...

    def apply(
        self,
        con: duckdb.DuckDBPyConnection,
        removed_leaf_ids: Sequence[str],
        written: Sequence[WrittenNote],
        *,
        rebuild: bool,
        changed_paths: Sequence[str] = (),
        prepared: Mapping[str, Any] | None = None,
        leaves: pa.Table | None = None,
    ) -> None: ...


@runtime_checkable
class CatchingUp(Protocol):
    """A `Deriver` with work of its own to finish before a sync's batches (not a rebuild's):
    `catch_up` commits it in as many transactions as it needs (the entity graph's re-derivation
    after an upgrade, `rederive.py`), so that no batch's transaction holds it."""

    name: str

    def catch_up(self, index: Index) -> None: ...
