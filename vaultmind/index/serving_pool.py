"""DuckDB's buffer pool in a serving process (the daemon): the resident structures' loads (reads
only) run under a small pool, the blocks they and whole-vault syncs cached are dropped after,
and `trim` keeps the pool small between tasks, with a checkpoint for what no pool size lets go.
Outside a serving process (`serve` not called) each of them does nothing but the load."""

from __future__ import annotations

import logging
from collections.abc import Callable

import duckdb

from vaultmind.index.allocator import release_freed_memory
from vaultmind.index.store import Index

log = logging.getLogger(__name__)

# DuckDB's buffer pool while a serving process loads the leaves: their scan only streams, and
# a larger pool keeps its blocks (at 50k notes, 128 MB: the load's peak ~100 MB higher)
LOAD_MEMORY_LIMIT = "24MB"
# ... and while it loads the vectors: one scan, whose blocks DuckDB would otherwise keep up to the
# pool's size (at 50k notes: the peak while loading them 652 -> 582 MB, in the same time; with
# 24 MB rather than 48, in process after the leaves, 431–443 -> 416–423 MB, in the same 3 s)
VECTORS_LOAD_LIMIT = "24MB"
# while serving: DuckDB's cached blocks past this are dropped after a task (128 MB until the
# NER catch-up's indexes took less: at 50k notes its daemon 558 -> 491 MB, as many texts; 64 MB
# until its scans ran under a small pool: the catch-up's steady ~485 -> ~455 MB, ~7 % fewer texts)
POOL_KEEP_BYTES = 32 * 2**20
# while serving: what DuckDB holds until a checkpoint (index nodes a write walked through, rows
# appended since the last one) past which `trim` checkpoints: when the upkeep is done, and past
# the higher bound after any task (see `trim`)
PINNED_TAGS = ("ART_INDEX", "IN_MEMORY_TABLE")
PINNED_IDLE_BYTES = 64 * 2**20
PINNED_MAX_BYTES = 128 * 2**20


class ServingPool:
    """The buffer pool of one open index, kept small once `serve` was called."""

    def __init__(self, index: Index):
        self.index = index
        self.serving = False

    def serve(self) -> None:
        """Freed memory goes back to the OS after each task instead of staying with DuckDB's
        allocator for reuse; the loads, evictions and trims below take effect."""
        with self.index.lock:
            self.index.con.execute("SET allocator_flush_threshold = '8MB'")
            self.index.con.execute("SET allocator_background_threads = true")
        self.serving = True

    def load_light(self, load: Callable[[], None], limit: str = LOAD_MEMORY_LIMIT) -> None:
        """Run a resident structure's load (SELECTs only) under a small pool while serving
        (`Index.small_pool_read`: one DuckDB thread, whose scan's buffers cost as much again and
        bring no speed, this process being busy converting what the scan gives), then evict."""
        if not self.serving:
            load()
            return
        with self.index.lock:
            self.index.small_pool_read(load, limit)
            self.evict()
        release_freed_memory()

    def evict(self) -> None:
        """While serving, drop DuckDB's cached blocks (lower the pool for a moment)."""
        if self.serving:
            self.index.drop_cached_blocks()

    def trim(self, *, idle: bool = False) -> None:
        """While serving, after a save or a step of background work: drop DuckDB's cached
        blocks once they pass `POOL_KEEP_BYTES`. Left alone they stay until the pool is full
        (512 MB): background steps read blocks nothing reads again soon, and a save reads most
        of what it needs again anyway (a save drops its own around its commit, `Applier._shed`).

        What no pool size lets go — the index nodes each write walks through and the rows
        appended since the last checkpoint — goes with a checkpoint: past `PINNED_MAX_BYTES`
        after a task, past `PINNED_IDLE_BYTES` when the upkeep is done (`idle`). At 50k notes,
        before migrations 0016 and 0017 dropped five lookup indexes, twenty saves left 127 MB of
        index nodes (since, 29 MB after ten saves and 38 MB after forty); a checkpoint takes
        about a second, which a save or the NER catch-up's next step would wait for."""
        if not self.serving:
            return
        try:
            with self.index.lock:
                held = self.index.duckdb_memory()
                pinned = sum(held.get(tag, 0) for tag in PINNED_TAGS)
                if pinned > (PINNED_IDLE_BYTES if idle else PINNED_MAX_BYTES):
                    log.debug("trim: checkpoint (%.0f MB held until one)", pinned / 2**20)
                    self.index.checkpoint()
                    held = self.index.duckdb_memory()
                if sum(held.values()) > POOL_KEEP_BYTES:
                    self.evict()
        except duckdb.Error as exc:  # only memory is at stake: never fail the caller for it
            log.debug("could not trim DuckDB's pool: %s", exc)
