"""Scan → diff → apply: the only bridge from the vault to the index.

Cold reindex, watcher batches and single writes all call `Syncer.sync_all` or
`Syncer.sync_paths`, which share the diff and apply steps. Invariant (tested): the index after
any sequence of watcher events equals a cold rebuild of the final vault.

- scan: stat files (no reads); folders that cannot be listed are *unobservable* and their
  notes are kept, never taken for deleted.
- diff: same (size, mtime, ctime) → unchanged, unless the file is over the size cap (which may
  have been lowered: it is read, and reported); otherwise read and hash: same hash → touched
  (stat updated only); a vanished path whose hash reappears elsewhere → renamed.
- apply: one transaction deletes the rows of changed/gone paths and inserts the new rows;
  then leaves without an embedding for the current model are embedded (cached by content
  hash + model id, so a rename or reindex never re-embeds).
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from vaultmind.config import Config
from vaultmind.embed.base import Embedder
from vaultmind.errors import EmbedError
from vaultmind.index.allocator import release_freed_memory
from vaultmind.index.arrow import execute_with, insert_arrow, key_table
from vaultmind.index.resident import ChangeSet, LeafDelta
from vaultmind.index.store import Index, LoweredLimit
from vaultmind.index.vector_codec import as_stored, stored_vectors
from vaultmind.model import FileStat, ParsedNote, Problem, SyncStats, WrittenNote
from vaultmind.sync_load import POOL_MIN_FILES, Loader, default_workers
from vaultmind.sync_note import Loaded, Preparer
from vaultmind.sync_rows import ROW_SCHEMAS, RowBuffers, row_table
from vaultmind.vault.layout import is_note
from vaultmind.vault.scan import IgnoreRules, ScanResult, scan_vault, stat_one

log = logging.getLogger(__name__)

APPLY_BATCH = 600  # files per apply (the batch parsed ahead waits on disk; see docs/benchmarks.md)
# A whole-vault load of at least this many files (a first index, a rebuild) is one transaction
# (`Index.bulk`), with the lookup indexes of the bulk tables suspended (`Index.suspend_indexes`)
# and built once at its end.
BULK_FILES = 2000
EMBED_FETCH_ROWS = 8_192  # leaf rows whose missing vectors are read, embedded and written at a time
OOM_RETRIES = 2  # batches of a sync retried with DuckDB's full memory limit before the rest keeps it
TermCounts = tuple[tuple[Counter[str], int], ...]  # per leaf of a note: term counts, number of terms

Progress = Callable[[str, int, int], None]
"""progress(phase, done, total): called during long work; phases "read", "embed"."""


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
    the `leaves` rows (id, note_path, content_hash, author, ts) of every note that holds a
    leaf of `written`: the sync knew them without a query (`LoadLeafIds`)."""

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


# Problems a whole-vault scan finds (not a file's read): each such scan reports them afresh
SCAN_PROBLEMS = ("unreadable_folder", "symlink_loop", "broken_symlink", "bad_name")
RETRIED = ("unreadable", "changed_while_reading")  # a failed read, tried again at every sync


@dataclass(frozen=True, slots=True)
class IndexedState:
    path: str
    size: int
    mtime_ns: int
    sha256: str
    ctime_ns: int | None = None  # None: indexed before vaultmind kept it
    ino: int | None = None  # likewise


@dataclass(slots=True)
class _Plan:
    write: dict[str, Loaded] = field(default_factory=dict)  # read and parsed: stat, note, counts set
    remove: set[str] = field(default_factory=set)  # paths whose rows go (gone, or no longer indexable)
    touch: dict[str, FileStat] = field(default_factory=dict)
    problems: dict[str, list[Problem]] = field(default_factory=dict)  # path → its current problems
    clear_problems: set[str] = field(default_factory=set)  # paths whose old problems no longer hold
    # paths whose read failed (their rows kept) or read as indexed: only a failed read's problem
    # (`RETRIED`) is replaced, the others (front matter…) are of the bytes indexed and hold
    read_only: set[str] = field(default_factory=set)
    rows: list[dict[str, pa.Table]] = field(default_factory=list)  # Arrow rows of the `in_rows` notes of `write`


class Syncer:
    """Keeps one index in step with one vault."""

    def __init__(
        self,
        config: Config,
        index: Index,
        embedder: Embedder | None,
        progress: Progress | None = None,
        derivers: Sequence[Deriver] = (),
    ):
        self.config = config
        self.derivers = tuple(derivers)
        self.listeners: list[Callable[[ChangeSet], None]] = []  # resident caches follow deltas
        self.index = index
        self.embedder = embedder
        self.progress = progress
        self.rules = IgnoreRules(config.all_ignores)
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
        self._vectors_deferred = False  # a whole-vault load left its vectors to `_embed_backlog`
        # set while serving (`Memory.serve`): a batch's cached blocks are dropped before its
        # commit and again after (`_shed`)
        self.lean = False

    # -- entry points ----------------------------------------------------------------------

    def sync_all(self, *, rebuild: bool = False) -> SyncStats:
        """Bring the whole index in step with the vault. `rebuild` drops derived rows first."""
        started = time.perf_counter()
        if self.index.get_meta("needs_rebuild"):
            rebuild = True  # the index was upgraded: derive the new tables for every note
        cut_at = self.index.get_meta("chunk_tokens")
        if cut_at is not None and cut_at != str(self.config.chunk_tokens):
            log.warning("chunk size changed (%s → %s tokens): every note is cut again", cut_at, self.config.chunk_tokens)
            rebuild = True
        scan = scan_vault(self.config.vault, self.rules)
        known = {} if rebuild else self._indexed_states(None)
        stats = SyncStats(scanned=len(scan.files))
        observed: dict[str, FileStat | None] = dict(scan.files)
        for path in known:
            if path not in observed:
                if scan.is_observed(path):
                    observed[path] = None
                else:
                    stats.kept_unreadable += 1
        if not rebuild:  # files reported but never indexed (binary, too large) that are gone or now ignored
            for (path,) in self.index.query(
                "SELECT DISTINCT path FROM problems WHERE kind NOT IN (SELECT unnest(?::VARCHAR[]))", [list(SCAN_PROBLEMS)]
            ):
                if path not in observed and scan.is_observed(path):
                    observed[path] = None  # its problems are cleared
        self._diff_apply(observed, known, stats, rebuild=rebuild, scan=scan)
        if cut_at is None and not rebuild:  # an index from before the size was kept: cut at this one
            with self.index.transaction() as con:
                self.index.set_meta(con, "chunk_tokens", str(self.config.chunk_tokens))
        self._embed_backlog(stats)
        stats.problems = self.problems()
        stats.seconds = time.perf_counter() - started
        return stats

    def _embed_backlog(self, stats: SyncStats) -> None:
        """A whole-vault sync also embeds leaves an apply left without a vector (a failed
        provider, a model switched in the config); watcher batches only embed their own."""
        if self.embedder is None:
            return
        deferred, self._vectors_deferred = self._vectors_deferred, False
        try:
            with self.index.bulk() if deferred else nullcontext():  # one transaction after a load
                backlog = self.embed_missing()
            self.embed_error = None
        except EmbedError as exc:
            self.embed_error = str(exc)
            log.warning("embeddings deferred: %s", exc)
            return
        if backlog:
            stats.embedded += backlog
            change = ChangeSet(backfilled=True)
            for listener in self.listeners:
                listener(change)

    def sync_paths(self, paths: Iterable[str]) -> SyncStats:
        """Bring the given vault-relative paths (files or folders) in step, e.g. after watcher events."""
        started = time.perf_counter()
        observed: dict[str, FileStat | None] = {}
        scan = ScanResult()
        prefixes: list[str] = []
        for rel in sorted(set(paths)):
            rel = rel.strip("/")
            if not rel or self.is_ignored(rel):
                continue
            abs_path = self.config.vault / rel
            if abs_path.is_dir() and abs_path.is_symlink():
                # A folder reached through a symlink: whether it loops back or leads to a folder
                # the vault already holds is for the whole vault's scan to say, as in `sync_all`.
                return self.sync_all()
            if abs_path.is_dir():
                sub = scan_vault_subtree(self.config.vault, rel, self.rules)
                observed.update(sub.files)
                scan.unobservable.extend(sub.unobservable)
                scan.problems.extend(sub.problems)
                prefixes.append(rel + "/")
            elif is_note(rel):
                observed[rel] = stat_one(self.config.vault, rel)
                prefixes.append(rel + "/")  # it may have been a folder before
            else:
                prefixes.append(rel + "/")
        known = self._indexed_states(sorted(observed), prefixes)
        for path in known:
            if path not in observed and scan.is_observed(path):
                observed[path] = None
        stats = SyncStats(scanned=len(observed))
        folders = self._folder_problems(prefixes, scan)
        self._diff_apply(observed, known, stats, rebuild=False, scan=None, folders=folders)
        stats.seconds = time.perf_counter() - started
        return stats

    def _folder_problems(self, prefixes: Sequence[str], scan: ScanResult) -> dict[str, list[Problem]]:
        """The scan problems (unreadable folders, loops, bad names) that the paths a watcher
        reported now decide, by path: those the subtrees scanned here found, and none for an
        older one inside them, or for an unreadable folder above them that can be listed again
        (a save inside it shows it can). The others wait for the next full pass."""
        out: dict[str, list[Problem]] = {}
        held = self.index.query(
            "SELECT DISTINCT path, kind FROM problems WHERE kind IN (SELECT unnest(?::VARCHAR[]))", [list(SCAN_PROBLEMS)]
        )
        for path, kind in held:
            inside = any((path + "/").startswith(prefix) for prefix in prefixes)
            folder = path.rstrip("/") + "/"
            above = kind == "unreadable_folder" and any(prefix.startswith(folder) for prefix in prefixes)
            if inside or (above and _listable(self.config.vault / path)):
                out.setdefault(path, [])
        for problem in scan.problems:
            kind = "unreadable_folder" if problem.kind == "unreadable" else problem.kind
            out.setdefault(problem.path, []).append(Problem(problem.path, kind, problem.message))
        return out

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
        """Diff, then apply in batches of `APPLY_BATCH` files, so memory stays bounded on a
        vault of any size (one transaction per batch; a crash leaves a consistent index that
        the next sync completes). `folders`: scan problems by path that replace the ones held
        for those paths (`_folder_problems`)."""
        first = _Plan()
        for path, found in (folders or {}).items():
            first.clear_problems.add(path)
            if found:
                first.problems.setdefault(path, []).extend(found)
        to_read: list[str] = []
        retry = self._paths_to_retry()
        for path, st in observed.items():
            old = known.get(path)
            if st is None:
                if old is not None:
                    first.remove.add(path)
                first.clear_problems.add(path)
            elif (
                old is not None
                and (old.size, old.mtime_ns, old.ctime_ns) == (st.size, st.mtime_ns, st.ctime_ns)
                # the inode: none kept yet (indexed before 0026) reads the note once; 0 is not
                # known (Windows' scandir gives none), and is not compared
                and old.ino is not None
                and (old.ino == st.ino or not old.ino or not st.ino)
                and path not in retry
                and st.size <= self.config.max_file_bytes  # over a lowered cap: read, and reported
            ):
                stats.unchanged += 1
            else:
                to_read.append(path)
        # Entity notes first: the alias registry they define is then in place for every leaf.
        to_read.sort(key=lambda p: (not p.startswith("entities/"), p))
        total = len(to_read)
        gone_hashes = {known[p].sha256: p for p in sorted(first.remove, reverse=True)}
        size = self.apply_batch
        # Each batch in path order: the rows the workers build for it come in the order of its
        # tasks, which is then the order `_apply` writes them in.
        batches = [sorted(to_read[i : i + size]) for i in range(0, total, size)] or [[]]
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
        ) as loader:
            self._out_of_memory = 0
            if loader.pool is not None and self.sync_memory_limit is not None:
                self._memory.lower(self.sync_memory_limit)
            # a whole-vault load into an empty index, or a rebuild (not a big batch of new files)
            bulk = (rebuild or (scan is not None and not known)) and total >= self.bulk_files
            if bulk:
                if rebuild:
                    self.index.empty_derived()
                self.index.suspend_indexes()
            try:
                plans = [first]  # handed over: no reference kept here once applied
                del first
                with self._pooled(loader), self.index.bulk(self._memory.restore) if bulk else nullcontext():
                    self._batches(
                        loader, batches, indexed, plans, known, stats, gone_hashes, total, rebuild=rebuild, scan=scan
                    )
            finally:
                self._memory.restore()
                if bulk:
                    self.index.resume_indexes()
        stats.deleted = max(0, stats.deleted - stats.renamed)

    def _batches(
        self,
        loader: Loader,
        batches: Sequence[Sequence[str]],
        indexed: dict[str, str],
        plans: list[_Plan],
        known: dict[str, IndexedState],
        stats: SyncStats,
        gone_hashes: dict[str, str],
        total: int,
        *,
        rebuild: bool,
        scan: ScanResult | None,
    ) -> None:
        done = 0
        fresh = LoadLeafIds() if rebuild else None
        if self.progress and total:
            self.progress("read", 0, total)  # the run starts now (the first report comes a batch later)
        for number, loaded in enumerate(loader.batches(batches, indexed)):
            plan = plans.pop() if number == 0 else _Plan()  # the first batch also removes what went away
            for item in loaded.loaded:
                self._diff_one(item, known.get(item.path), plan, stats, gone_hashes)
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

    def _diff_one(
        self, loaded: Loaded, old: IndexedState | None, plan: _Plan, stats: SyncStats, gone_hashes: dict[str, str]
    ) -> None:
        path = loaded.path
        if loaded.problem is not None and loaded.keep_rows:
            plan.problems[path] = [loaded.problem]
            plan.read_only.add(path)
            if old is not None:
                stats.kept_unreadable += 1
            return
        if loaded.stat is None:  # vanished between scan and read
            if old is not None:
                plan.remove.add(path)
            plan.clear_problems.add(path)
            return
        if loaded.sha is None:  # too large
            assert loaded.problem is not None
            plan.problems[path] = [loaded.problem]
            if old is not None:
                plan.remove.add(path)
            return
        sha = loaded.sha
        if old is not None and loaded.same:
            plan.touch[path] = loaded.stat
            plan.read_only.add(path)  # readable again, if it was not
            stats.touched += 1
            return
        problems = [loaded.decode_problem] if loaded.decode_problem else []
        note = loaded.written
        if note is None:
            plan.problems[path] = problems
            if old is not None:
                plan.remove.add(path)
            return
        if note.frontmatter_error:
            problems.append(Problem(path, "frontmatter", f"{note.frontmatter_error}; the body is indexed"))
        plan.problems[path] = problems
        plan.write[path] = loaded
        plan.clear_problems.add(path)
        if old is not None:
            stats.modified += 1
        elif sha in gone_hashes:
            stats.renamed += 1
            gone_hashes.pop(sha)
        else:
            stats.added += 1
        self._sha[path] = sha

    # -- apply -----------------------------------------------------------------------------

    def _apply(
        self,
        plan: _Plan,
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
        rows = _Rows()
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
        try:
            with self.index.transaction() as con:
                removed_ids = self._write(con, plan, rows, rebuild=rebuild, fresh=fresh, scan=scan)
                self._shed()
        except duckdb.OutOfMemoryException as exc:
            original = self._memory.original
            if self.index.in_bulk or not self._memory.restore():  # a bulk load's transaction is aborted
                raise
            self._out_of_memory += 1
            log.warning("a batch ran out of DuckDB memory under the sync's limit (%s); retrying it with %s", exc, original)
            with self.index.transaction() as con:  # the batch was rolled back: once more, with room
                removed_ids = self._write(con, plan, rows, rebuild=rebuild, fresh=fresh, scan=scan)
            if self._out_of_memory < OOM_RETRIES and self.sync_memory_limit is not None:
                self._memory.lower(self.sync_memory_limit)  # the next batches as before
        self._shed()
        stats.leaves_deleted += len(removed_ids)
        embedded: dict[str, npt.NDArray[np.float32]] = {}  # the vectors this batch embeds, for the resident ones
        if self.embedder is not None and self.index.in_bulk:
            # a whole-vault load writes the vectors after its rows, in a pass of their own
            # (`_embed_backlog`): their row groups then never fill beside the other tables'
            self._vectors_deferred = True
        elif self.embedder is not None:
            try:
                # After a failure (Ollama down) every leaf still without a vector is retried.
                # Otherwise only new texts: a leaf id derives from its text, so a leaf deleted
                # and written again unchanged had its vector already (or is in the backlog of
                # the next whole-vault sync, like any leaf left without one).
                only = None if self.embed_error else rows.leaf_texts(besides=removed_ids)
                stats.embedded += self.embed_missing(only, into=embedded)
                self.embed_error = None
            except EmbedError as exc:
                # Lexical rows are committed; dense vectors wait for the next sync.
                self.embed_error = str(exc)
                log.warning("embeddings deferred: %s", exc)
        # Rows built by the workers come without their term counts: resident structures reload.
        change = ChangeSet(removed=removed_ids, added=rows.deltas, reset=rebuild or bool(rows.chunks), vectors=embedded)
        change.backfilled = stats.embedded > len({d.content_hash for d in rows.deltas})
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

    def _drop_written_blocks(self) -> None:
        """Within a batch of a whole-vault load, between its steps (the rows, each deriver, the
        vectors): the blocks of the row groups DuckDB wrote as they filled, and those a step
        read, stay cached until the pool is full, under the next step's own memory (119 MB at
        the peak of a batch at 50k notes)."""
        if self.index.in_bulk:
            self.index.drop_cached_blocks()

    def _write(
        self,
        con: duckdb.DuckDBPyConnection,
        plan: _Plan,
        rows: _Rows,
        *,
        rebuild: bool,
        fresh: LoadLeafIds | None,
        scan: ScanResult | None,
    ) -> list[str]:
        """The statements of one batch's transaction (run again if it rolls back: nothing
        outside the index is changed). Returns the ids of the leaves that went away."""
        if rebuild:
            self.index.clear_derived(con)
            con.execute("DELETE FROM meta WHERE key = 'needs_rebuild'")
            self.index.set_meta(con, "chunk_tokens", str(self.config.chunk_tokens))  # the size leaves are cut at
        changed = [] if fresh is not None else sorted(plan.remove | set(plan.write))
        removed_ids = _delete_paths(con, changed) if changed else []
        if plan.touch:
            _touch(con, plan.touch)
        inserted = rows.insert(con)
        # a rebuild's batch whose leaf ids no earlier batch wrote: its rows are every row of its leaves
        leaves = inserted if fresh is not None and fresh.add_new(inserted.column("id").to_pylist()) else None
        self._drop_written_blocks()
        written = [note for path in sorted(plan.write) if (note := plan.write[path].written) is not None]
        number = 0
        for deriver in self.derivers:
            if isinstance(deriver, Preparing):
                prepared = {path: item.prepared[number] for path, item in plan.write.items()}
                number += 1
                deriver.apply(
                    con, removed_ids, written, rebuild=rebuild, changed_paths=changed, prepared=prepared, leaves=leaves
                )
            else:
                deriver.apply(con, removed_ids, written, rebuild=rebuild, changed_paths=changed)
            self._drop_written_blocks()
        problem_paths = sorted((plan.clear_problems | set(plan.problems)) - plan.read_only)
        problems = {path: list(found) for path, found in plan.problems.items()}
        if scan is not None:
            con.execute(f"DELETE FROM problems WHERE kind IN ({', '.join(repr(k) for k in SCAN_PROBLEMS)})")
            for problem in scan.problems:
                kind = "unreadable_folder" if problem.kind == "unreadable" else problem.kind
                problems.setdefault(problem.path, []).append(Problem(problem.path, kind, problem.message))
        if problem_paths and not rebuild:
            _with_paths(con, problem_paths, "DELETE FROM problems WHERE path IN (SELECT path FROM _rows)")
        if plan.read_only and not rebuild:
            _with_paths(
                con,
                sorted(plan.read_only),
                f"DELETE FROM problems WHERE path IN (SELECT path FROM _rows) AND kind IN ({', '.join(map(repr, RETRIED))})",
            )
        _insert_problems(con, problems)
        return removed_ids

    def embed_missing(
        self, only: dict[str, str] | None = None, *, into: dict[str, npt.NDArray[np.float32]] | None = None
    ) -> int:
        """Embed every leaf whose (content hash, model) has no vector yet. Returns how many.

        `only` (texts by content hash: the leaves an apply just wrote) limits the work to
        them — one lookup of their hashes instead of a scan of every leaf, which at 400k
        leaves took over a second per save. `into` receives the vectors embedded for them,
        by content hash, as stored (the resident vectors then need not read them back)."""
        embedder = self.embedder
        if embedder is None:
            return 0
        model = embedder.model_id
        if only is not None:
            if not only:
                return 0
            have = {
                row[0]
                for row in self.index.query(
                    """SELECT content_hash FROM embeddings
                       WHERE model = ? AND content_hash IN (SELECT unnest(string_split(?, chr(31))))""",
                    [model, "\x1f".join(sorted(only))],
                )
            }
            todo = sorted((h, text) for h, text in only.items() if h not in have)
        else:
            # how many first (hashes only: selecting the texts too read the whole text column
            # of `leaves`, though almost always nothing is missing), then the texts in ranges
            # of rows, each embedded and written before the next is read. An anti join, not a
            # correlated NOT EXISTS: DuckDB answers that by holding the hash of every leaf
            # (at 50k notes +180 MB and 0.28 s on every reconcile of the daemon; this +80 MB, 0.15 s)
            total = int(
                self.index.scalar(
                    """SELECT count(DISTINCT l.content_hash) FROM leaves l
                       ANTI JOIN (SELECT content_hash FROM embeddings WHERE model = ?) e
                            ON e.content_hash = l.content_hash""",
                    [model],
                )
            )
            if not total:
                return 0
            if self.progress:
                self.progress("embed", 0, total)
            done = 0
            end = int(self.index.scalar("SELECT coalesce(max(rowid) + 1, 0) FROM leaves"))
            for start in range(0, end, EMBED_FETCH_ROWS):
                todo = self.index.query(
                    """SELECT l.content_hash, any_value(l.text) FROM leaves l
                       WHERE l.rowid >= ? AND l.rowid < ? AND NOT EXISTS (
                           SELECT 1 FROM embeddings e WHERE e.content_hash = l.content_hash AND e.model = ?)
                       GROUP BY l.content_hash ORDER BY l.content_hash""",
                    [start, start + EMBED_FETCH_ROWS, model],
                )
                done = self._embed_rows(embedder, todo, done, total)
                self._drop_written_blocks()
            return done
        if self.progress and todo:
            self.progress("embed", 0, len(todo))
        return self._embed_rows(embedder, todo, 0, len(todo), into)

    def _embed_rows(
        self,
        embedder: Embedder,
        todo: Sequence[tuple[str, str]],
        done: int,
        total: int,
        into: dict[str, npt.NDArray[np.float32]] | None = None,
    ) -> int:
        """Embed and store (content hash, text) rows in batches; returns `done` plus their count."""
        batch = max(1, self.config.embed_batch)
        model = embedder.model_id
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            vectors = embedder.embed([text for _, text in chunk])
            with self.index.transaction() as con:
                insert_rows(
                    con,
                    "embeddings",
                    {
                        "content_hash": [h for h, _ in chunk],
                        "model": [model] * len(chunk),
                        "dim": [int(vectors.shape[1])] * len(chunk),
                        "vec": stored_vectors(vectors),
                    },
                )
            if into is not None:
                into.update(zip((h for h, _ in chunk), as_stored(vectors), strict=True))
            done += len(chunk)
            if self.progress:
                self.progress("embed", done, total)
        return done

    # -- reads -----------------------------------------------------------------------------

    def _indexed_states(self, paths: Sequence[str] | None, prefixes: Sequence[str] = ()) -> dict[str, IndexedState]:
        if paths is None:
            rows = self.index.query("SELECT path, size, mtime_ns, sha256, ctime_ns, ino FROM notes")
        else:
            if not paths and not prefixes:
                return {}
            rows = self.index.query(
                """
                SELECT path, size, mtime_ns, sha256, ctime_ns, ino FROM notes
                WHERE path IN (SELECT unnest(?::VARCHAR[]))
                   OR list_any_value(list_filter(?::VARCHAR[], p -> starts_with(path, p))) IS NOT NULL
                """,
                [list(paths), list(prefixes)],
            )
        return {r[0]: IndexedState(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows}

    def _paths_to_retry(self) -> set[str]:
        """Paths whose last read failed for a reason a stat cannot see change (permissions)."""
        rows = self.index.query(
            f"SELECT DISTINCT path FROM problems WHERE kind IN ({', '.join(map(repr, RETRIED))})"
        )
        return {row[0] for row in rows}

    def problems(self) -> list[Problem]:
        rows = self.index.query("SELECT path, kind, message FROM problems ORDER BY path, kind, message")
        return [Problem(*row) for row in rows]

    def is_ignored(self, rel: str) -> bool:
        """True when a vault-relative path is excluded by the ignore rules."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            if self.rules.ignores_dir("/".join(parts[:i])):
                return True
        return self.rules.ignores_file(rel) if is_note(rel) else self.rules.ignores_dir(rel)


def scan_vault_subtree(root: Path, rel_dir: str, rules: IgnoreRules) -> ScanResult:
    """Scan one folder of the vault, returning vault-relative paths."""
    sub = scan_vault(root / rel_dir, rules_for_subtree(rules, rel_dir), vault=root)
    result = ScanResult()
    prefix = rel_dir.rstrip("/") + "/"
    result.files = {prefix + p: FileStat(prefix + p, s.size, s.mtime_ns, s.ctime_ns, s.ino) for p, s in sub.files.items()}
    result.unobservable = [prefix + p for p in sub.unobservable]
    result.problems = [Problem(prefix + p.path if p.path not in ("", ".") else rel_dir, p.kind, p.message) for p in sub.problems]
    return result


class _SubtreeRules(IgnoreRules):
    def __init__(self, base: IgnoreRules, prefix: str):
        self._base = base
        self._prefix = prefix.rstrip("/") + "/"

    def ignores_file(self, path: str) -> bool:
        return self._base.ignores_file(self._prefix + path)

    def ignores_dir(self, path: str) -> bool:
        return self._base.ignores_dir(self._prefix + path)


def rules_for_subtree(rules: IgnoreRules, rel_dir: str) -> IgnoreRules:
    return _SubtreeRules(rules, rel_dir)


# -- row building -------------------------------------------------------------------------


class _Rows(RowBuffers):
    """Column buffers for one apply, and the Arrow rows built where notes were parsed, inserted
    with one statement per table."""

    def __init__(self) -> None:
        super().__init__()
        self.leaf_id: list[str] = []
        self.deltas: list[LeafDelta] = []
        self.chunks: list[dict[str, pa.Table]] = []  # rows built by the loader, in path order
        self.leaf_rows = 0

    def add_note(
        self, note: ParsedNote, st: FileStat, sha: str, leaf_counts: TermCounts, frontmatter: str | None = None
    ) -> None:
        super().add_note(note, st, sha, leaf_counts, frontmatter)
        for leaf, (counts, total) in zip(note.leaves, leaf_counts, strict=True):
            self.leaf_id.append(leaf.id)
            self.deltas.append(LeafDelta(leaf.id, leaf.content_hash, counts, total))
        self.leaf_rows += len(note.leaves)

    def add_chunk(self, tables: dict[str, pa.Table]) -> None:
        self.chunks.append(tables)
        leaves = tables.get("leaves")
        self.leaf_rows += 0 if leaves is None else leaves.num_rows

    def leaf_texts(self, besides: Collection[str] = ()) -> dict[str, str]:
        """The written leaves' texts by content hash (for embedding), but for the texts of the
        leaves whose ids are in `besides`."""
        out = dict(zip(self.leaf["content_hash"], self.leaf["text"], strict=True))
        for chunk in self.chunks:
            if (table := chunk.get("leaves")) is not None:
                out.update(zip(table.column("content_hash").to_pylist(), table.column("text").to_pylist(), strict=True))
        if besides:
            known = set(besides)
            for leaf_id, content_hash in zip(self.leaf["id"], self.leaf["content_hash"], strict=True):
                if leaf_id in known:
                    out.pop(content_hash, None)
        return out

    def insert(self, con: duckdb.DuckDBPyConnection) -> pa.Table:
        """Insert the rows, numbering the notes from the index's next note number on: each set
        of rows (a worker's, then this one's) numbers its notes from 0 (`RowBuffers`). Returns
        the `leaves` rows inserted."""
        sets = [*self.chunks, self.tables()]
        first = con.execute("SELECT coalesce(max(note_no) + 1, 0) FROM notes").fetchone()
        base = int(first[0]) if first else 0
        parts: dict[str, list[pa.Table]] = {name: [] for name in ("notes", "leaves", "postings", "links", "tags")}
        for rows in sets:
            for name, table in rows.items():
                if name in ("notes", "postings"):
                    table = _shift_note_numbers(table, base)
                parts[name].append(table)
            base += rows["notes"].num_rows if "notes" in rows else 0
        inserted = {
            name: tables[0] if len(tables) == 1 else pa.concat_tables(tables) for name, tables in parts.items() if tables
        }
        for name, table in inserted.items():
            insert_arrow(con, name, table)
        return inserted.get("leaves", ROW_SCHEMAS["leaves"].empty_table())


class LoadLeafIds:
    """The leaf ids a rebuild has written so far, as the sorted hashes of the ids (8 bytes
    each, ~3.4 MB at 50k notes). A batch whose ids none of them matches holds every row of
    its leaves, so the entity deriver need not read them back: with the lookup indexes
    suspended that read scans the `leaves` rows the load wrote so far, on every batch. Two ids
    sharing a hash only cost that read (`add_new` says False)."""

    def __init__(self) -> None:
        self.hashes: npt.NDArray[np.int64] = np.empty(0, np.int64)

    def add_new(self, ids: Sequence[str]) -> bool:
        """Add `ids`; True when none of them (by its hash) was added before."""
        new = np.unique(np.fromiter(map(hash, ids), np.int64, len(ids)))
        seen = self.hashes
        place = np.searchsorted(seen, new)
        fresh = not np.any(seen[np.minimum(place, len(seen) - 1)] == new) if len(seen) else True
        self.hashes = np.insert(seen, place, new)
        return fresh


def _shift_note_numbers(table: pa.Table, by: int) -> pa.Table:
    if not by:
        return table
    column = table.schema.get_field_index("note_no")
    return table.set_column(column, "note_no", pc.add(table.column(column), pa.scalar(by, pa.int64())))


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, columns: dict[str, list[Any]]) -> pa.Table | None:
    """Insert column lists into `table` through one Arrow table (fast, typed, NULL-safe);
    returns that table (None: no rows)."""
    if not columns[ROW_SCHEMAS[table].names[0]]:
        return None
    data = row_table(table, columns)
    insert_arrow(con, table, data)
    return data


def _with_paths(con: duckdb.DuckDBPyConnection, paths: Sequence[str], sql: str) -> None:
    """Run `sql`, in which `_rows(path)` are `paths`."""
    execute_with(con, sql, rows=key_table(paths, "path"))


def _delete_paths(con: duckdb.DuckDBPyConnection, paths: Sequence[str]) -> list[str]:
    """Delete every row derived from `paths`; return the ids of the leaves that went away."""
    table = key_table(paths, "path")

    def run(sql: str, params: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        return execute_with(con, sql, params, rows=table).fetchall()

    removed = [row[0] for row in run("SELECT id FROM leaves WHERE note_path IN (SELECT path FROM _rows) ORDER BY id")]
    found = [row[0] for row in run("SELECT note_no FROM notes WHERE path IN (SELECT path FROM _rows)")]
    numbers = sorted(n for n in found if n is not None)
    if len(numbers) < len(found):  # rows written before notes were numbered: by leaf id
        run(
            "DELETE FROM postings WHERE leaf_id IN (SELECT id FROM leaves WHERE note_path IN "
            "(SELECT path FROM _rows WHERE path IN (SELECT path FROM notes WHERE note_no IS NULL)))"
        )
    if numbers:
        # By note number, within their range: DuckDB skips the row groups outside it (by
        # leaf id, a hash, it read the whole table). Each note deletes its own rows only: a
        # leaf also held by a note that stays (a copied source note) keeps that note's.
        con.execute(
            "DELETE FROM postings WHERE note_no BETWEEN ? AND ? AND note_no IN (SELECT unnest(?::BIGINT[]))",
            [numbers[0], numbers[-1], numbers],
        )
    run("DELETE FROM leaves WHERE note_path IN (SELECT path FROM _rows)")
    run("DELETE FROM links WHERE src_path IN (SELECT path FROM _rows)")
    run("DELETE FROM tags WHERE path IN (SELECT path FROM _rows)")
    run("DELETE FROM notes WHERE path IN (SELECT path FROM _rows)")
    return removed


def _touch(con: duckdb.DuckDBPyConnection, touch: dict[str, FileStat]) -> None:
    paths = sorted(touch)
    frame = pa.table(
        {
            "path": pa.array(paths, pa.string()),
            "size": pa.array([touch[p].size for p in paths], pa.int64()),
            "mtime_ns": pa.array([touch[p].mtime_ns for p in paths], pa.int64()),
            "ctime_ns": pa.array([touch[p].ctime_ns for p in paths], pa.int64()),
            "ino": pa.array([touch[p].ino for p in paths], pa.int64()),
        }
    )
    execute_with(
        con,
        "UPDATE notes SET size = t.size, mtime_ns = t.mtime_ns, ctime_ns = t.ctime_ns, ino = t.ino "
        "FROM _rows t WHERE notes.path = t.path",
        rows=frame,
    )


def _insert_problems(con: duckdb.DuckDBPyConnection, problems: dict[str, list[Problem]]) -> None:
    cols: dict[str, list[Any]] = {"path": [], "kind": [], "message": []}
    for path in sorted(problems):
        for problem in problems[path]:
            cols["path"].append(problem.path)
            cols["kind"].append(problem.kind)
            cols["message"].append(problem.message)
    insert_rows(con, "problems", cols)


def _listable(folder: Path) -> bool:
    try:
        with os.scandir(folder):
            return True
    except OSError:
        return False
