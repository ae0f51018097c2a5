"""The diff and apply steps of a sync (`Syncer`'s lower half): the files a scan observed diffed
against what the index holds, then applied in batches — one transaction each (`sync_write`),
then the vectors the batch's new leaves lack (`sync_embed`) — and the resident structures told
of each batch's change (`listeners`).

The first batches are small and each next one twice the last, up to `APPLY_BATCH`; a
whole-vault load of at least `BULK_FILES` files is one transaction with the lookup indexes
suspended; a batch that runs out of DuckDB's lowered memory limit is retried with the full one.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from functools import partial
from typing import Literal

import duckdb
import numpy as np
import numpy.typing as npt

from vaultmind.config import Config
from vaultmind.embed.base import Embedder
from vaultmind.errors import EmbedError, SyncStopped
from vaultmind.index.allocator import release_freed_memory
from vaultmind.index.lowered_limit import LoweredLimit
from vaultmind.index.resident import ChangeSet
from vaultmind.index.store import Index
from vaultmind.model import FileStat, Problem, Progress, SyncStats
from vaultmind.sync_derive import CatchingUp, Deriver, Preparing
from vaultmind.sync_diff import IndexedState, diff_loaded, moved_from, paths_to_retry, unchanged
from vaultmind.sync_embed import (
    DimensionChanged,
    adopt_former_ids,
    drop_other_widths,
    drop_other_windows,
    embed_missing,
)
from vaultmind.sync_load import POOL_MIN_FILES, Loader, default_workers
from vaultmind.sync_note import Preparer
from vaultmind.sync_write import BatchPlan, BatchRows, LoadLeafIds, clear_for_rebuild, write_batch
from vaultmind.vault.scan import IgnoreRules, ScanResult

log = logging.getLogger(__name__)

APPLY_BATCH = 600  # files per apply (the batch parsed ahead waits on disk; see docs/benchmarks-history.md)
# A whole-vault load of at least this many files (a first index, a rebuild) is one transaction
# (`Index.bulk`), with the lookup indexes of the bulk tables suspended (`Index.suspend_indexes`)
# and built once at its end.
BULK_FILES = 2000
# A sync of at least this many changed files (not a load: a daemon catching up on many edits)
# writes its vectors after its rows, as a load does, with no checkpoint until the last
# (`Applier._vector_pass`): committed batch by batch and checkpointed after each, they left the
# table's part-filled row group for a checkpoint's vacuum to rewrite in memory.
VECTORS_AFTER_FILES = 1000
FIRST_APPLY_BATCH = 50  # files in the first batch, doubling up to `APPLY_BATCH`: progress from the start
OOM_RETRIES = 2  # batches of a sync retried with DuckDB's full memory limit before the rest keeps it


class Applier:
    """Diffs what a sync observed against one index and applies it in batches (`Syncer` adds
    what it observes: the whole vault, or the paths given)."""

    def __init__(
        self,
        config: Config,
        index: Index,
        embedder: Embedder | None,
        progress: Progress | None = None,
        derivers: Sequence[Deriver] = (),
    ):
        self.config = config
        self.rules = IgnoreRules(config.all_ignores)  # the config's, compiled: what a sync observes
        self.derivers = tuple(derivers)
        self.listeners: list[Callable[[ChangeSet], None]] = []  # resident caches follow deltas
        self.index = index
        self.embedder = embedder
        self.progress = progress
        self._sha: dict[str, str] = {}
        self.embed_error: str | None = None  # why the last embedding pass failed, if it did
        self.apply_batch = APPLY_BATCH
        self.workers = default_workers()  # parsing processes for large syncs (0: none)
        self.pool_min_files = POOL_MIN_FILES  # files to read from which the workers are used
        self.bulk_files = BULK_FILES  # files of a first index / rebuild from which indexes are suspended
        # DuckDB's memory limit during a large sync: None keeps the index's (see SYNC_MEMORY_LIMIT)
        self.sync_memory_limit: str | None = None
        self._memory = LoweredLimit(index)
        self._out_of_memory = 0  # batches of the current sync retried with DuckDB's full limit
        self.vectors_after_files = VECTORS_AFTER_FILES
        self._vectors_after = False  # the current sync writes its vectors after its rows
        # the vectors left to `_embed_backlog`: by a whole-vault load ("load", embedded in one
        # transaction) or a large sync ("sync", committed batch by batch); None: none left
        self._vectors_deferred: Literal["load", "sync"] | None = None
        self._embed_failed = False  # the embedder failed in the current sync: not asked again in it
        self._adopted = 0  # vectors of the model's former ids taken at this sync's start, for `_embed_backlog`
        # set while serving (`Memory.serve`): a batch's cached blocks are dropped before its
        # commit and again after (`_shed`)
        self.lean = False
        self._parse_retried = False  # a whole-vault sync parsed the notes of `parse_error` again
        # the serving daemon's stop (`Daemon.run`): once set, a sync leaves off after the batch in
        # hand (`SyncStopped`); what it committed stays, the next sync applies the rest
        self.stopping: threading.Event | None = None
        self.in_batches = False  # a sync applies its batches (it stops at their boundaries)

    def _deferred(self, exc: EmbedError) -> None:
        """The embedder failed: said once, and not asked again in this sync (its later batches
        and its backlog wait for the next one: each try would wait for the same failure)."""
        self.embed_error = str(exc)
        self._embed_failed = True
        log.warning("embeddings deferred: %s", exc)

    def _settle_stored_vectors(self) -> None:
        """Before a whole-vault sync embeds anything (or a large batch of paths, its vector
        pass): take the vectors stored under the model's former ids as its own
        (`adopt_former_ids`), then drop those of the long texts the model now reads in other
        windows (`drop_other_windows`, which keeps the window). First, not with the backlog
        after the batches: a first index (no window kept) had the long texts its batches had
        just embedded in these very windows dropped and embedded again; and after the
        adoption, whose vectors of before windows are checked too. An embedder that cannot say
        its window (Ollama down) is not asked again in this sync (`_deferred`)."""
        if self.embedder is None:
            return
        self._adopted = adopt_former_ids(self.index, self.embedder)
        try:
            if rewindowed := drop_other_windows(self.index, self.embedder):
                log.info("%d vector(s) of long texts dropped: %s reads them in other windows now", rewindowed, self.embedder.model_id)
        except EmbedError as exc:
            self._deferred(exc)

    def _embed_backlog(self, stats: SyncStats) -> None:
        """A whole-vault sync also embeds leaves an apply left without a vector (a failed
        provider, a model switched or answering another dimension, a text whose windows
        changed); a watcher batch, only after a failure (`_embed_saved`)."""
        adopted, self._adopted = self._adopted, 0
        if self.embedder is None or self._embed_failed:  # it failed this sync's saves: said once
            self._vectors_deferred = None
            self._tell_backfilled(adopted)
            return
        deferred, self._vectors_deferred = self._vectors_deferred, None
        try:
            if (old := drop_other_widths(self.index, self.embedder.model_id, self.embedder.dim)) is not None:
                log.warning("%s", DimensionChanged(self.embedder.model_id, old, self.embedder.dim))
            with self._vector_pass(deferred):
                backlog = self._embed_missing(fill_groups=deferred is not None)
            self.embed_error = None
        except EmbedError as exc:
            self._deferred(exc)
            self._tell_backfilled(adopted)
            return
        stats.embedded += backlog
        self._tell_backfilled(backlog + adopted)

    def _tell_backfilled(self, vectors: int) -> None:
        """Tell the listeners that `vectors` vectors of older leaves are now stored, if any
        (the resident vectors read them)."""
        if vectors:
            change = ChangeSet(backfilled=True)
            for listener in self.listeners:
                listener(change)

    def _vector_pass(self, deferred: Literal["load", "sync"] | None) -> AbstractContextManager[None]:
        """How the vectors a sync left for the end are written: after a load in one transaction
        (`Index.bulk`); after a large sync in commits of a batch each, checkpointed once, at the
        end, so that the rows moved ahead of them and the new ones are written together into
        full row groups (`sync_embed.embed_missing`'s `fill_groups`)."""
        if deferred == "load":
            return self.index.bulk()
        if deferred == "sync":
            return self._checkpointed_at_end()
        return nullcontext()

    @contextmanager
    def _checkpointed_at_end(self) -> Iterator[None]:
        with self.index.deferred_checkpoints():
            yield
        self.index.checkpoint(evict=True)

    # -- diff ------------------------------------------------------------------------------

    def _diff_apply(
        self,
        observed: dict[str, FileStat | None],
        known: dict[str, IndexedState],
        stats: SyncStats,
        *,
        rebuild: bool,
        scan: ScanResult | None,
        folders: dict[str, list[Problem]] | None = None,
    ) -> None:
        """Diff, then apply in batches of `APPLY_BATCH` files (the first ones smaller: `_batch_bounds`), so memory stays bounded on a
        vault of any size (one transaction per batch; a crash leaves a consistent index that
        the next sync completes). `folders`: scan problems by path that replace the ones held
        for those paths (`sync_scan.folder_problems`)."""
        if not rebuild:  # (a rebuild derives everything in its batches)
            for deriver in self.derivers:
                if isinstance(deriver, CatchingUp):
                    deriver.catch_up(self.index)
        first = BatchPlan()
        for path, found in (folders or {}).items():
            first.clear_problems.add(path)
            if found:
                first.problems.setdefault(path, []).extend(found)
        to_read: list[str] = []
        # a note the parser could not take is parsed again by the first whole-vault sync of a
        # process (the one after an upgrade), not at every sync
        retry = paths_to_retry(self.index, parse_errors=scan is not None and not self._parse_retried)
        self._parse_retried = self._parse_retried or scan is not None
        for path, st in observed.items():
            old = known.get(path)
            if st is None:
                if old is not None:
                    first.remove.add(path)
                first.clear_problems.add(path)
            elif unchanged(old, st, retry=retry, max_file_bytes=self.config.max_file_bytes):
                stats.unchanged += 1
            else:
                to_read.append(path)
        # Entity notes first: the alias registry they define is then in place for every leaf.
        to_read.sort(key=lambda p: (not p.startswith("entities/"), p))
        total = len(to_read)
        self._vectors_after = total >= self.vectors_after_files
        gone_hashes = Counter(known[p].sha256 for p in first.remove)
        # Each batch in path order: the rows the workers build for it come in the order of its
        # tasks, which is then the order `_apply` writes them in.
        batches = [sorted(to_read[i:j]) for i, j in _batch_bounds(total, self.apply_batch)] or [[]]
        removals = [set[str]() for _ in batches] if rebuild else _removals_by_batch(first.remove, batches, known)
        indexed = {path: known[path].sha256 for path in to_read if path in known}
        config = self.config
        with Loader(
            config.vault,
            config.max_file_bytes,
            config.chunk_tokens,
            workers=self.workers,
            files=total,
            min_files=self.pool_min_files,
            preparers=self._preparers,
            spill_in=None if self.index.path is None else self.index.path.parent,
            zone=config.ingest_timezone,
        ) as loader:
            self._out_of_memory = 0
            if loader.pool is not None and self.sync_memory_limit is not None:
                self._memory.lower(self.sync_memory_limit)
            # a whole-vault load into an empty index, or a rebuild (not a big batch of new files)
            bulk = (rebuild or (scan is not None and not known)) and total >= self.bulk_files
            if bulk:
                if rebuild:
                    self.index.empty_derived(partial(clear_for_rebuild, kept=sorted(known)))
                self.index.suspend_indexes()
            try:
                plans = [first]  # handed over: no reference kept here once applied
                del first
                with self._pooled(loader), self.index.bulk(self._memory.restore) if bulk else nullcontext():
                    self.in_batches = True
                    self._batches(
                        loader, batches, indexed, plans, removals, known, stats, gone_hashes, total,
                        rebuild=rebuild, scan=scan,
                    )
            finally:
                self.in_batches = False
                self._memory.restore()
                if bulk:
                    self.index.resume_indexes()
        stats.deleted = max(0, stats.deleted - stats.renamed)

    def _batches(
        self,
        loader: Loader,
        batches: Sequence[Sequence[str]],
        indexed: dict[str, str],
        plans: list[BatchPlan],
        removals: list[set[str]],
        known: dict[str, IndexedState],
        stats: SyncStats,
        gone_hashes: Counter[str],
        total: int,
        *,
        rebuild: bool,
        scan: ScanResult | None,
    ) -> None:
        done = 0
        fresh = LoadLeafIds(known) if rebuild else None
        if self.progress and total:
            self.progress("read", 0, total)  # the run starts now (the first report comes a batch later)
        for number, loaded in enumerate(loader.batches(batches, indexed)):
            plan = plans.pop() if number == 0 else BatchPlan()  # the first batch also removes what went away
            plan.remove |= removals[number]  # … but the places notes moved from (`_removals_by_batch`)
            removals[number] = set()
            for item in loaded.loaded:
                diff_loaded(item, known.get(item.path), plan, stats, gone_hashes, self._sha)
            plan.rows = loaded.rows
            done += len(loaded.loaded)
            if self.progress and total:
                self.progress("read", done, total)
            self._apply(
                plan, stats, rebuild=rebuild and number == 0, fresh=fresh, scan=scan if number == 0 else None
            )
            del loaded, plan  # not held while the next batch is loaded: memory stays at ~2 batches
            if loader.pool is not None:  # the batch into the file, its blocks not kept cached
                self.index.checkpoint(evict=True)
            release_freed_memory(heap=False)  # Arrow's pool; the heap is trimmed with the blocks
            if done < total and self.stopping is not None and self.stopping.is_set():
                raise SyncStopped(
                    f"the daemon stopped before the sync ended: {done:,} of {total:,} changed files "
                    "applied, the rest is applied at its next start"
                )

    @contextmanager
    def _pooled(self, loader: Loader) -> Iterator[None]:
        """How the index works while worker processes parse a large sync: DuckDB on one thread
        (the workers use the other cores), and one checkpoint per batch, after it, rather than
        inside the commits that pass DuckDB's WAL threshold."""
        if loader.pool is None:
            yield
            return
        with self.index.threads(1), self.index.deferred_checkpoints():
            yield

    def _preparers(self) -> tuple[Preparer, ...]:
        with self.index.lock:
            return tuple(d.preparer(self.index.con) for d in self.derivers if isinstance(d, Preparing))

    # -- apply -----------------------------------------------------------------------------

    def _apply(
        self,
        plan: BatchPlan,
        stats: SyncStats,
        *,
        rebuild: bool,
        fresh: LoadLeafIds | None = None,
        scan: ScanResult | None,
    ) -> None:
        """Apply one batch. `rebuild` empties the derived tables first; `fresh` (a batch of a
        rebuild, with the leaf ids the rebuild wrote before it) says no row of the batch's
        paths can exist yet, so nothing is deleted."""
        stats.deleted += len(plan.remove - set(plan.write))
        rows = BatchRows()
        for chunk in plan.rows:
            rows.add_chunk(chunk)
        for path in sorted(plan.write):
            item = plan.write[path]
            assert item.written is not None and item.stat is not None
            sha = self._sha.pop(path)
            if not item.in_rows:
                assert item.note is not None
                rows.add_note(item.note, item.stat, sha, item.counts, item.frontmatter_json)
        stats.leaves_written += rows.leaf_rows

        def write(con: duckdb.DuckDBPyConnection) -> list[str]:
            tokens = self.config.chunk_tokens
            return write_batch(
                self.index, con, plan, rows, self.derivers, chunk_tokens=tokens, rebuild=rebuild, fresh=fresh, scan=scan
            )

        try:
            with self.index.transaction() as con:
                removed_ids = write(con)
                self._shed()
        except duckdb.OutOfMemoryException as exc:
            original = self._memory.original
            if self.index.in_bulk or not self._memory.restore():  # a bulk load's transaction is aborted
                raise
            self._out_of_memory += 1
            log.warning("a batch ran out of DuckDB memory under the sync's limit (%s); retrying it with %s", exc, original)
            with self.index.transaction() as con:  # the batch was rolled back: once more, with room
                removed_ids = write(con)
            if self._out_of_memory < OOM_RETRIES and self.sync_memory_limit is not None:
                self._memory.lower(self.sync_memory_limit)  # the next batches as before
        self._shed()
        stats.leaves_deleted += len(removed_ids)
        embedded: dict[str, npt.NDArray[np.float32]] = {}  # the vectors this batch embeds, for the resident ones
        backfilled = 0  # vectors embedded for leaves older than this batch
        if self.embedder is not None and (self.index.in_bulk or self._vectors_after):
            # a whole-vault load, or a large sync, writes the vectors after its rows, in a pass
            # of their own (`_embed_backlog`): their row groups then never fill beside the
            # other tables', nor stay part-filled at each batch's checkpoint
            self._vectors_deferred = "load" if self.index.in_bulk else "sync"
        elif self.embedder is not None and not self._embed_failed:
            try:
                # After a failure (Ollama down) every leaf still without a vector is retried.
                # Otherwise only new texts: a leaf id derives from its text, so a leaf deleted
                # and written again unchanged had its vector already (or is in the backlog of
                # the next whole-vault sync, like any leaf left without one).
                backfilled = self._embed_saved(rows.leaf_texts(besides=removed_ids), embedded, stats)
                self.embed_error = None
            except EmbedError as exc:
                # Lexical rows are committed; dense vectors wait for the next sync.
                self._deferred(exc)
        # Rows built by the workers come without their term counts: resident structures reload.
        reset = rebuild or bool(rows.chunks)
        change = ChangeSet(removed=removed_ids, added=[] if reset else rows.deltas(), reset=reset, vectors=embedded)
        change.backfilled = backfilled > 0
        for listener in self.listeners:
            listener(change)

    def _shed(self) -> None:
        """While serving, around a batch's commit: drop the blocks its statements read, then
        those the commit read back (the rows appended since the last checkpoint, which `trim`
        had moved out), so that neither adds to the other, nor to what embedding it and the
        resident structures' updates read next. At 50k notes a save's statements read ~45 MB
        of blocks, its commit ~22 MB and the steps after it ~20 MB; each drop takes 20–30 ms."""
        if self.lean and not self.index.in_bulk:
            self.index.drop_cached_blocks()

    def _embed_saved(self, texts: dict[str, str], into: dict[str, npt.NDArray[np.float32]], stats: SyncStats) -> int:
        """Embed a batch's new texts, then, after a failure or a change of the model's dimension,
        every leaf still without a vector (older leaves the resident vectors lack: how many)."""
        try:
            stats.embedded += self._embed_missing(texts, into=into)
            backlog = bool(self.embed_error)
        except DimensionChanged as exc:
            log.warning("%s", exc)
            into.clear()
            backlog = True
        if not backlog:
            return 0
        done = self._embed_missing()
        stats.embedded += done
        return done

    def _embed_missing(
        self,
        only: dict[str, str] | None = None,
        *,
        into: dict[str, npt.NDArray[np.float32]] | None = None,
        fill_groups: bool = False,
    ) -> int:
        """`sync_embed.embed_missing` with this sync's embedder (there is one) and progress."""
        assert self.embedder is not None
        return embed_missing(
            self.index, self.embedder, self.config.embed_batch, self.progress, only,
            into=into, fill_groups=fill_groups,
        )  # fmt: skip


def _removals_by_batch(
    gone: set[str], batches: Sequence[Sequence[str]], known: dict[str, IndexedState]
) -> list[set[str]]:
    """The vanished paths each batch removes beside its writes: a path a note most likely moved
    from (`sync_diff.moved_from`), with the batch that writes the note where it went — in the
    one transaction, so that a renamed folder's notes are never missing (all removed by the
    first batch, their new paths written 50, 100, 200 … per later commit) nor there twice.
    What is left in `gone` (a note deleted) the first batch removes. Taken out of `gone`."""
    removals = [set[str]() for _ in batches]
    if len(batches) < 2 or not gone:
        return removals
    where = {path: number for number, batch in enumerate(batches) for path in batch if path not in known}
    for new, old in moved_from(gone, where).items():
        if where[new]:
            removals[where[new]].add(old)
            gone.discard(old)
    return removals


def _batch_bounds(total: int, size: int) -> list[tuple[int, int]]:
    """(start, end) of each batch of `total` files: the first of `FIRST_APPLY_BATCH`, each next
    one twice the last, up to `size` — a reindex's progress shows its first count in a second
    or two, not once a whole batch of `size` (11 s at 3,000 notes under load) was applied."""
    size = max(1, size)  # a batch of no files would never end
    bounds, start, step = [], 0, min(size, FIRST_APPLY_BATCH)
    while start < total:
        bounds.append((start, min(total, start + step)))
        start, step = start + step, min(size, step * 2)
    return bounds
