"""DuckDB's settings a read lowers for a while (`Index.small_pool_read`, `Index.memory_limit`,
`Index.threads`) are put back even when the read fails inside a transaction: DuckDB refuses
every statement of an aborted transaction, a `SET` too."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from vaultmind.config import load_config
from vaultmind.memory import Memory

from .conftest import pool_settings, write


def test_a_read_out_of_memory_inside_a_transaction_leaves_the_pool_and_threads_as_they_were(vault: Path) -> None:
    """A save looks up which of its texts have a vector under a 16 MB pool, inside its
    transaction (`sync_embed.stored_hashes`). A read that ran out of memory there aborted the
    transaction, and putting the pool back failed with it: the daemon's pool stayed at 16 MB,
    and every later save, reconcile and seal failed "out of memory" until it was restarted."""
    write(vault, "n.md", "# Note\n\nThe kayak trip was cancelled because of the storm.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        index = memory.index

        before = pool_settings(index)

        def runs_out() -> object:  # a list no pool of a few MB holds: DuckDB runs out of memory
            return index.scalar("SELECT length(list(i)) FROM range(20000000) r(i)")

        with pytest.raises(duckdb.OutOfMemoryException), index.transaction() as con:
            con.execute("INSERT INTO meta VALUES ('soak', 'x')")
            index.small_pool_read(runs_out, "4MB")
        assert pool_settings(index) == before
        assert index.scalar("SELECT count(*) FROM meta WHERE key = 'soak'") == 0, "the write rolled back"
        write(vault, "m.md", "# Other\n\nA second note about the harbor.\n")
        assert memory.sync_paths(["m.md"]).added == 1  # and the next save works under the full pool


def test_a_read_out_of_memory_inside_a_transaction_raises_that_error_not_an_aborted_transaction(vault: Path) -> None:
    """`small_pool_read` retries a read that ran out of memory under a larger pool; inside a
    save's transaction the error aborted it, so the retry failed with DuckDB's "Current
    transaction is aborted" (no cause chained), and the save's own retry on running out of
    memory (`Applier._apply`, which catches `OutOfMemoryException`) never ran. The read runs
    once; the out-of-memory error is what the caller gets."""
    write(vault, "n.md", "# Note\n\nThe kayak trip was cancelled because of the storm.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        index = memory.index
        runs = 0

        def runs_out() -> object:  # a list of 24 MB: more than a 4 MB pool, well within the full one
            nonlocal runs
            runs += 1
            return index.scalar("SELECT length(list(i)) FROM range(3000000) r(i)")

        with pytest.raises(duckdb.OutOfMemoryException), index.transaction():
            index.small_pool_read(runs_out, "4MB")
        assert runs == 1
        runs = 0
        assert index.small_pool_read(runs_out, "4MB") == 3000000  # outside one: retried under a larger pool
        assert runs > 1
