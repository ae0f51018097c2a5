"""The reconcile pass's one DuckDB thread is given back as it was, even when another scope of
one thread (a pooled sync's) ends while the pass runs."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import duckdb

from vaultmind.config import Config, load_config
from vaultmind.index.store import Index
from vaultmind.queue.kinds import JobKind
from vaultmind.queue.reconcile import reconcile

T0 = 1_700_000_000_000


def _pass_while_a_sync_ends(index: Index, config: Config) -> None:
    """A sync on one DuckDB thread that starts before a reconcile pass and ends during it."""
    in_sync, in_pass = threading.Event(), threading.Event()

    def sync() -> None:
        with index.threads(1):
            in_sync.set()
            in_pass.wait(5)

    def repair(con: duckdb.DuckDBPyConnection, config: Config) -> int:
        in_pass.set()
        time.sleep(0.02)  # the sync's end waits for the index meanwhile
        return 0

    syncing = threading.Thread(target=sync)
    syncing.start()
    in_sync.wait(5)
    reconcile(index, config, [JobKind("test", run=lambda job, ctx: None, repair=repair)], now=T0)
    syncing.join(5)


def test_a_reconcile_during_a_one_thread_sync_leaves_the_threads_as_they_were(tmp_path: Path) -> None:
    """Afterwards DuckDB has its threads again, not the one the pass found when it started (the
    two scopes did not nest: the pass set back the sync's one thread after the sync gave back two)."""
    config = load_config(tmp_path, embed_provider="none")
    index = Index.open(None)
    try:
        index.con.execute("SET threads = 2")
        for _ in range(20):
            _pass_while_a_sync_ends(index, config)
            assert int(index.scalar("SELECT current_setting('threads')")) == 2
    finally:
        index.close()
