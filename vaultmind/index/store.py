"""Open, migrate and guard the DuckDB index file.

The index is a cache of the vault. A file that cannot be opened (corrupt, a WAL that cannot
be replayed, written by an incompatible version) is moved to `.vaultmind/quarantine/` and a
fresh one is created; the next sync rebuilds it from the vault. Locking: DuckDB allows one
read-write process per file; a second process gets `IndexBusy` (the CLI then talks to the
daemon instead, see `client.py`).

The index's parts, one concept each: `connection` (connecting, waiting while the file is
busy), `opening` (the file opened, or moved aside when it cannot be), `migrate` (the schema
brought up to date on open), `quarantine` (a broken file moved aside), `pool` (DuckDB's buffer
pool: limits and sizes) and `meta` (its one-value-a-key table). This module holds the open
index: its transactions, bulk loads, checkpoints, the pool it runs under, and its `meta`.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any, TypeVar, cast

import duckdb

from vaultmind.errors import IndexCorrupt, chain
from vaultmind.index.allocator import prompt_purge, release_freed_memory
from vaultmind.index.compact import Compacted, compact
from vaultmind.index.connection import ROW_GROUP_ROWS, close_index
from vaultmind.index.damage import damaged, invalidated
from vaultmind.index.meta import put_meta
from vaultmind.index.migrate import create_suspended_indexes, roll_back, suspend_indexes
from vaultmind.index.opening import first_line, open_file, open_in_memory
from vaultmind.index.pool import beyond_cache, limit_setting, out_of_memory, setting_while, size_bytes
from vaultmind.index.quarantine import fresh_index
from vaultmind.index.reopening import Reconnecting
from vaultmind.index.schema import derived_tables
from vaultmind.model import Progress

log = logging.getLogger(__name__)

T = TypeVar("T")

EVICT_LIMIT = "16MB"  # set for a moment to make DuckDB drop the blocks it cached
EVICT_MARGIN = 2**20  # inside a bulk load: above what is held beyond the cache (`Index._evict_limit`)
# `small_pool_read`: above what DuckDB holds, when the pool asked for cannot be set
SMALL_POOL_HEADROOM = 8 * 2**20
DEFERRED_CHECKPOINT = "1TB"  # WAL size that makes a commit checkpoint, while a sync checkpoints itself
# Rows appended to one table by one transaction from which DuckDB may have written a row group
# to the file before the commit (a row group's `ROW_GROUP_ROWS`; kept below that, as the sizes
# compared are estimates). See `Index.transaction`.
ROW_GROUP_WRITE_ROWS = ROW_GROUP_ROWS * 13 // 16

# Tables a whole-vault load fills with rows per note and per leaf. Their lookup indexes are
# dropped for such a load and created again after it (`Index.suspend_indexes`): keeping an ART
# index up to date on every insert cost ~15 % of a cold index's CPU; building it once over the
# loaded rows costs a fraction of that.
BULK_TABLES = ("notes", "leaves", "occurrences", "admission")
# `needs_rebuild` of an index whose rows a rebuild removed before loading them again (a
# migration's is "1"): while it stays, the index holds fewer notes than the vault, or none.
REBUILD_UNDER_WAY = "under way"
# `meta` key kept while a daemon has paths of a large change still to apply (its backlog): a
# daemon that ends before it applied them (a crash, a kill) leaves an index that lags the vault
# until a whole-vault sync, which takes the key out (`status` says so meanwhile).
BACKLOG_LEFT = "backlog_left"


class Index(Reconnecting):
    """One open connection to `.vaultmind/index.duckdb`, serialised by a lock.

    DuckDB work is synchronous; async adapters call into it from a worker thread.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path | None, quarantined: str | None):
        self._hold(con)
        self.path = path
        self.quarantined = quarantined  # message, when this open moved a broken file aside
        self.lock = threading.RLock()
        self.generation = 0  # bumped on every committed change; readers cache by it
        # bumped with it by every commit but an NER step's (`transaction(ner_step=True)`), which
        # only adds what NER derives from texts already indexed (its cache, entity rows): the
        # state of the notes' own rows (notes, leaves, vectors, links, tags, problems …)
        self.notes_generation = 0
        self._tables: frozenset[str] | None = None
        self._views: dict[str, tuple[int, Any]] = {}  # `cached`: name → (generation, value)
        self._bulk = False  # inside `bulk`: every transaction is part of its one
        self._writing = False  # inside `transaction`'s own one: a failed statement aborts it
        self.replaced = 0  # files moved aside since the open, invalidated or damaged (`_replace`)
        self._handled: list[BaseException] = []  # the errors that made `_replace` run, for nested guards
        self._sizes: dict[str, int] | None = None  # tables' rows after the last commit (`_table_sizes`)
        self.vector_widths: dict[str, int] = {}  # model id → the one dimension of its stored vectors, once checked
        # while `compact` copies the file (the lock held throughout): its steps done and in all
        self.compacting: dict[str, int] | None = None

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | None, progress: Progress | None = None) -> Index:
        """Open (creating if needed) the index at `path`; None opens an in-memory index.
        `progress` hears an upgrade's migrations (`migrate`). A file that cannot be opened is
        moved aside and a fresh one opened (`opening.open_file`)."""
        if path is None:
            return cls(open_in_memory(), None, None)
        con, notice = open_file(path, progress)
        return cls(con, path, notice)

    @property
    def tables(self) -> frozenset[str]:
        """Names of the index's tables (fixed by the migrations once opened)."""
        if self._tables is None:
            rows = self.query("SELECT table_name FROM information_schema.tables")
            self._tables = frozenset(row[0] for row in rows)
        return self._tables

    def close(self) -> None:
        with self.lock:
            if self._give_up_reopening():  # no connection to close: the file was left whole
                return
            try:
                if self.path is not None:
                    self.con.execute("CHECKPOINT")
            finally:
                close_index(self.con)

    def compact(self, progress: Progress | None = None, stopping: threading.Event | None = None) -> Compacted:
        """The file copied into a new one put in its place (`compact`): the space churn left
        unused given back, every row kept. Views stay: their rows are the same. Its steps are
        in `compacting` meanwhile, which a status reads without waiting for the lock."""
        if self.path is None:
            return Compacted(0, 0, {})
        with self.lock:
            self._sizes = None  # counted again from the compacted file

            def step(phase: str, done: int, total: int) -> None:
                self.compacting = {"done": done, "total": total}
                if progress is not None:
                    progress(phase, done, total)

            self.compacting = {"done": 0, "total": 0}
            try:
                return compact(self.con, self.path, self._reopen, step, stopping)
            finally:
                self.compacting = None

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- access ----------------------------------------------------------------------------

    @contextmanager
    def transaction(self, *, ner_step: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """One committed change. `ner_step`: it writes only NER's results for texts already
        indexed and what is derived from them (`backfill.backfill_ner`): `notes_generation` stays."""
        with self.lock, self.replaced_when_broken():
            if self._bulk:  # part of the bulk load's one transaction, which commits or rolls back
                yield self.con
                self._changed()  # views this thread builds meanwhile see the change
                return
            sizes = self._sizes if self._sizes is not None else self._table_sizes()
            self.con.execute("BEGIN TRANSACTION")
            self._writing = True
            try:
                yield self.con
            except BaseException as exc:
                self._writing = False
                if not invalidated(exc):  # an invalidated database rolls back nothing more
                    roll_back(self.con)
                raise
            else:
                self._writing = False
                self.con.execute("COMMIT")
                self._changed(ner_step=ner_step)
                self._checkpoint_row_groups(sizes)

    def _table_sizes(self) -> dict[str, int] | None:
        """Rows of each table (DuckDB's estimate, with the deleted rows not yet checkpointed
        away), to tell what a transaction appended; None for an in-memory index. Measured after
        each commit and kept (`_sizes`) as the next transaction's start, until a checkpoint
        drops deleted rows (a write elsewhere meanwhile only adds rows: at worst a checkpoint
        more)."""
        if self.path is None:
            return None
        rows = self.con.execute(
            "SELECT table_name, estimated_size FROM duckdb_tables() WHERE database_name = current_database()"
        ).fetchall()
        return {str(name): int(size) for name, size in rows}

    def _checkpoint_row_groups(self, before: dict[str, int] | None) -> None:
        """Checkpoint at once after a commit that appended whole row groups to a table.

        DuckDB writes such row groups to the file during the transaction and logs only their
        place in the WAL. DuckDB 1.5 cannot replay a WAL in which a later insert into the same
        table follows such an entry ("Failure while replaying WAL file: Attempted to access
        index 2 within vector of size 2"): a process killed after a large commit (an entity
        rebuild, a large batch of notes) and a few small ones (the NER catch-up's steps) left
        an index that had to be quarantined and rebuilt. Once checkpointed, the rows are in the
        file and the WAL starts empty."""
        after = self._table_sizes()
        if before is None or after is None:
            return
        if any(size - before.get(name, 0) >= ROW_GROUP_WRITE_ROWS for name, size in after.items()):
            self.con.execute("CHECKPOINT")
            after = None  # a checkpoint drops deleted rows: measured again by the next transaction
        self._sizes = after

    @contextmanager
    def replaced_when_broken(self) -> Iterator[None]:
        """Let the error of a statement through; when it says the index cannot be used, the
        file is first moved to `.vaultmind/quarantine/` and a fresh index opened in its place,
        so the next statement runs on it and the next sync rebuilds it from the vault (`replaced`
        counts these; a daemon reconciles at once). A serving process never goes on with a
        connection that can only fail. Two kinds: DuckDB refuses every statement after a
        `FatalException` (it invalidates the whole database: "Failed to delete all rows from
        index" when a lookup index lacks rows the table holds), and the file is damaged past
        what its open read (`damaged`): DuckDB reads blocks when a statement needs them, so a
        cut or garbled file opens, then fails every command that reads the bad block — a full
        reindex too. A damaged file's error becomes `IndexCorrupt`, saying where the file went.

        Only those errors: a full disk, a lock held elsewhere or a file this user may not write
        leave the file where it is (their errors say so in other words). The statements of a
        command that use `con` directly are covered by one guard around the whole command (the
        CLI's, the daemon's reconcile); nested guards replace the file once."""
        try:
            yield
        except BaseException as exc:
            if self.path is None or any(link in self._handled for link in chain(exc)):
                raise
            if damaged(exc, self.path):
                moved, kept = self._replace(exc, "index file was damaged")
                raise IndexCorrupt(
                    f"the index file was damaged ({first_line(exc)}); it was moved to {moved} and an empty one "
                    "put in its place, which the next sync fills from the vault" + (f" ({kept})" if kept else ""),
                    path=self.path,
                    hint="run the same command again (the vault is the record: nothing in it is lost)",
                ) from exc
            if invalidated(exc):
                self._replace(exc, "index was invalidated")
            raise

    def _replace(self, exc: BaseException, why: str) -> tuple[Path, str | None]:
        """Move the file aside for `exc` and open a fresh one; where the file went, and what
        was kept of it (`Fresh.kept`)."""
        assert self.path is not None
        with self.lock:
            self._handled.append(exc)
            del self._handled[:-4]  # a few: only the error being raised through nested guards matters
            with suppress(duckdb.Error):
                close_index(self._con)
            log.error("the %s (%s): %s; moving it aside", why, self.path, first_line(exc))
            self.con, self.quarantined, moved, kept = fresh_index(self.path, f"{why} ({first_line(exc)})")
            self._bulk = False
            self.replaced += 1
            self._read_again()
            return moved, kept

    def _read_again(self) -> None:
        """Forget what was read from the file: another one now (`_replace`), or opened again
        after a failed reopen, when it may hold what another process wrote (`Reconnecting`)."""
        self._tables = None
        self._views.clear()
        self._sizes = None
        self._changed()

    def _changed(self, *, ner_step: bool = False) -> None:
        self.generation += 1
        if not ner_step:
            self.notes_generation += 1

    def cached(self, name: str, build: Callable[[Any], T]) -> T:
        """A view derived from the index (`build(previous value or None)`), built once per
        committed state: readers keep their in-memory views here, rebuilt only after a change."""
        with self.lock, self.replaced_when_broken():
            hit = self._views.get(name)
            if hit is not None and hit[0] == self.generation:
                return cast(T, hit[1])
            value = build(hit[1] if hit is not None else None)
            self._views[name] = (self.generation, value)
            return value

    def view(self, name: str) -> tuple[int, Any] | None:
        """A view kept by `cached` or `keep_view`, with the generation it was built for (None:
        none yet). Read without the lock: a reader may take the view of the state before a
        commit that is finishing, as if it had asked a moment earlier."""
        return self._views.get(name)

    def keep_view(self, name: str, generation: int, value: Any) -> None:
        """Keep `value` as the view `name` of state `generation` (built outside the lock), unless
        a view of a later state is kept already."""
        with self.lock:
            kept = self._views.get(name)
            if kept is None or kept[0] <= generation:
                self._views[name] = (generation, value)

    def query(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        with self.lock, self.replaced_when_broken():
            return self.con.execute(sql, params).fetchall()

    def scalar(self, sql: str, params: Any = None) -> Any:
        with self.lock, self.replaced_when_broken():
            row = self.con.execute(sql, params).fetchone()
            return None if row is None else row[0]

    def clear_derived(self, con: duckdb.DuckDBPyConnection) -> None:
        for table in derived_tables():
            con.execute(f"DELETE FROM {table}")

    def empty_derived(self, clear: Callable[[duckdb.DuckDBPyConnection], object] | None = None) -> None:
        """Delete every derived row before a rebuild's bulk load, in a transaction of its own and
        checkpointed: inside the load's transaction the deletes would stay pinned in memory until
        its commit (+90 MB at 10k notes). The index is marked for a rebuild under way
        (`REBUILD_UNDER_WAY`) until the load's first batch commits (with it), so a load that fails
        or is interrupted leaves the next sync to rebuild, and `status` says so meanwhile.
        `clear`: what deletes them (`clear_derived` when None)."""
        with self.transaction() as con:
            (clear or self.clear_derived)(con)
            self.set_meta(con, "needs_rebuild", REBUILD_UNDER_WAY)
        self.checkpoint(evict=True)

    @property
    def in_bulk(self) -> bool:
        return self._bulk

    @contextmanager
    def bulk(self, before_commit: Callable[[], object] | None = None) -> Iterator[None]:
        """One transaction for a whole-vault load: every `transaction` inside it is part of it,
        and nothing is visible to other connections until it commits (a crash or a failure
        leaves the index as it was before the load: empty, or emptied by a rebuild). DuckDB writes the
        row groups of a large transaction to the file as they fill, so the pool can drop them
        after each batch (`checkpoint(evict=True)` does only that meanwhile), and the commit
        writes each table once rather than merging a small row group per batch at every
        checkpoint, which was the peak of a load committed batch by batch (see
        docs/benchmarks-history.md). The lock is held throughout: other threads wait for the commit.
        Meanwhile DuckDB's allocator returns freed memory at once (`prompt_purge`), and writes
        each row group as it fills instead of gathering five (`write_buffer_row_group_count`).

        The commit checkpoints: DuckDB then writes the rows straight into the file instead of
        first into the WAL (at 10k notes ~106 MB of WAL, written and read again by the next
        checkpoint). `before_commit` runs first (it puts back a lowered memory limit: a
        checkpoint always runs under the full pool, see `checkpoint`)."""
        with self.lock, prompt_purge(), self._setting("write_buffer_row_group_count", "1"):
            self.con.execute("BEGIN TRANSACTION")
            self._bulk = True
            try:
                yield
                self.drop_cached_blocks()  # still in the load: its uncommitted rows stay in memory
            except BaseException:
                self._bulk = False
                self.con.execute("ROLLBACK")
                raise
            self._bulk = False
            if before_commit is not None:
                before_commit()
            with self._setting("checkpoint_threshold", "0b", as_set=limit_setting):
                self.con.execute("COMMIT")
            self._sizes = None
            self._changed()
            self.drop_cached_blocks()

    def checkpoint(self, *, evict: bool = False) -> None:
        """Write the WAL into the index file. With `evict`, DuckDB's cached blocks are dropped
        before and after, so a large sync's pool holds what the checkpoint needs, not every
        block written and read since the last one. The checkpoint itself always runs under the
        full pool: in DuckDB 1.5 a checkpoint that runs out of memory invalidates the database
        (seen at 50k notes when it ran under a 64 MB pool beside an embeddings index)."""
        with self.lock:
            if self.path is None:
                return
            if evict:
                self.drop_cached_blocks()
            if self._bulk:  # nothing to write before the commit: only the cached blocks go
                return
            self._sizes = None
            self.con.execute("CHECKPOINT")
            if evict:
                self.drop_cached_blocks()

    def deferred_checkpoints(self) -> AbstractContextManager[None]:
        """Commits do not checkpoint by themselves for a while: a large sync checkpoints after
        each batch itself (`checkpoint(evict=True)`), outside the batch's transaction."""
        return self._setting("checkpoint_threshold", DEFERRED_CHECKPOINT, as_set=limit_setting)

    def memory_limit(self, limit: str) -> AbstractContextManager[None]:
        """DuckDB's buffer pool is `limit` for a while (a streamed scan that should not fill the
        pool with blocks nothing reads again), then what it was."""
        return self._setting("memory_limit", limit, as_set=limit_setting)

    def duckdb_memory(self) -> dict[str, int]:
        """Bytes DuckDB holds now, by what it holds them for (`duckdb_memory()`'s tags:
        BASE_TABLE for cached table blocks, ART_INDEX, IN_MEMORY_TABLE for appended rows …)."""
        with self.lock:
            return {str(tag): int(used) for tag, used in self.query("SELECT tag, memory_usage_bytes FROM duckdb_memory()")}

    def small_pool_read(self, read: Callable[[], T], limit: str) -> T:
        """`read()` (SELECTs only) on one DuckDB thread under a buffer pool of `limit`, so that
        the blocks a scan meets, which nothing reads again, do not stay in the pool: a serving
        process's loads, its `status` and NER's scans of every leaf. A pool below what DuckDB
        holds pinned cannot be set (a daemon's indexes held ~41 MB at times): then
        `SMALL_POOL_HEADROOM` above what it holds; and should that not do either (the read ran
        out of memory), again under the pool as it was. Nor is a pool tried below the rows,
        indexes and strings DuckDB holds beyond its cache of stored blocks (`BASE_TABLE`): rows
        written but not yet checkpointed (a reindex held ~40–50 MiB of them) can be set out of
        the pool only by spilling them to disk, leaving the read no room; the read ran out of
        memory, and then so did putting the limit back — every later statement, the closing
        checkpoint included, failed under the small pool. Holds the lock throughout: no write
        runs under a small pool. Inside a transaction (a save's, a bulk load's) the error is
        raised as it is, not retried: it aborted the transaction, and every retry would fail
        with DuckDB's "Current transaction is aborted" instead, which the save's own retry on
        running out of memory (`Applier._apply`) does not know."""
        with self.lock, self.replaced_when_broken():
            held = self.duckdb_memory()
            above = sum(held.values()) + SMALL_POOL_HEADROOM
            uncached = beyond_cache(held)
            pools: list[str | None] = [limit] if uncached < size_bytes(limit) else []
            if above > size_bytes(limit):
                pools.append(f"{math.ceil(above / 1024)}KiB")
            for pool in (*pools, None):  # None: the pool as it is
                try:
                    with self.threads(1), self.memory_limit(pool) if pool else nullcontext():
                        return read()
                except (duckdb.Error, OSError) as exc:  # (a read streaming its rows: OSError, `out_of_memory`)
                    if pool is None or not out_of_memory(exc) or self._writing or self._bulk:
                        raise  # (in a transaction the error aborted it: the caller's to retry, as `Applier._apply`)
                    log.info("a read ran out of memory under a pool of %s (%s); trying a larger one", pool, exc)
            raise AssertionError("unreachable: the last pool returns or raises")

    def threads(self, count: int) -> AbstractContextManager[None]:
        """DuckDB runs with `count` threads for a while (a sync whose parse workers already use
        the other cores: at 2 cores, one DuckDB thread wrote a batch with ~35 % less CPU and
        no more wall time than two)."""
        return self._setting("threads", str(int(count)))

    def _setting(self, name: str, value: str, as_set: Callable[[str], str] = str) -> AbstractContextManager[None]:
        """DuckDB's setting `name` is `value` for a while, then what it was (`pool.setting_while`,
        under the index's lock)."""
        return setting_while(self.con, name, value, as_set=as_set, lock=self.lock)

    def suspend_indexes(self) -> None:
        """Drop the lookup indexes of `BULK_TABLES` for a large load. Their SQL is kept in
        `meta`, so `resume_indexes` — or the next `Index.open`, after a crash — creates them
        again. Queries stay correct meanwhile (an index only speeds a lookup up)."""
        with self.transaction() as con:
            suspend_indexes(con, BULK_TABLES)

    def resume_indexes(self) -> None:
        """Create the indexes `suspend_indexes` dropped (nothing when none are), each in its
        own transaction, checkpointed and its blocks dropped from the pool before the next."""
        with self.lock:
            if create_suspended_indexes(self.con, after_each=lambda: self.checkpoint(evict=True)):
                self._changed()

    def drop_cached_blocks(self) -> None:
        """Make DuckDB drop the blocks it keeps cached, by lowering its pool for a moment (never
        during a write: the lock is held). A large sync does this after each batch, so the pool
        holds what one batch needs, not every block the sync wrote.

        The limit is set through a connection of its own: when pinned memory does not fit under
        it (a rebuild's deletes pin theirs until the commit) the SET fails, having dropped what
        it could, and a failed statement would abort a transaction open on `con` — a bulk
        load's (`bulk`). The C heap's and Arrow's free pages go back to the OS as well."""
        with self.lock, self.con.cursor() as other:
            current = limit_setting(str(self.scalar("SELECT current_setting('memory_limit')")))
            limit = self._evict_limit()
            try:
                other.execute(f"SET memory_limit = '{limit}'")
            except duckdb.Error as exc:  # blocks still pinned: the limit stays as it is
                log.debug("could not lower DuckDB's memory limit to %s: %s", limit, first_line(exc))
            other.execute(f"SET memory_limit = '{current}'")
        release_freed_memory()

    def _evict_limit(self) -> str:
        """The pool `drop_cached_blocks` sets for a moment: `EVICT_LIMIT`, but inside a bulk
        load not below what DuckDB holds beyond its cache of stored blocks (`EVICT_MARGIN`
        above it). Below that DuckDB writes the load's rows not yet committed (its partly
        filled row groups) out to temporary files and reads them back for the next batch:
        after each step of each batch, only to read them again. A 50k-note rebuild so spilled
        failed at times near its end with DuckDB's "Invalid unicode (byte sequence mismatch)
        detected in segment statistics update", on the same notes that loaded another time."""
        if not self._bulk:
            return EVICT_LIMIT
        floor = beyond_cache(self.duckdb_memory()) + EVICT_MARGIN
        return f"{math.ceil(max(size_bytes(EVICT_LIMIT), floor) / 1024)}KiB"

    def get_meta(self, key: str) -> str | None:
        value = self.scalar("SELECT value FROM meta WHERE key = ?", [key])
        return None if value is None else str(value)

    def set_meta(self, con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
        put_meta(con, key, value)
