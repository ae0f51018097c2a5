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

Here: what a sync observes (the whole vault, or the paths given). The steps' parts: `sync_scan`
(a folder's subtree), `sync_apply` (the diff and the batches applied: `Applier`, which `Syncer`
extends), `sync_diff` (what the index holds, and what each file read means), `sync_load` /
`sync_note` / `sync_rows` (the reads and their rows), `sync_write` (an apply's transaction),
`sync_embed` (the missing vectors), `sync_derive` (the derivers run inside each transaction).
"""

from __future__ import annotations

import errno
import logging
import os
import stat as stat_mod
import time
from collections.abc import Iterable, Mapping

from vaultmind.index.resident import ChangeSet
from vaultmind.index.store import BACKLOG_LEFT
from vaultmind.model import FileStat, Problem, SyncStats
from vaultmind.sync_apply import Applier
from vaultmind.sync_diff import IndexedState, indexed_states, paths_to_retry, unchanged
from vaultmind.sync_scan import SCAN_PROBLEMS, as_scan_problem, folder_problems, scan_vault_subtree
from vaultmind.sync_zone import retime_dated_notes
from vaultmind.vault.atomic import remove_stale_temps
from vaultmind.vault.layout import is_note
from vaultmind.vault.read import KEPT
from vaultmind.vault.scan import ScanResult, bad_name, folder_id, is_utf8, linked_note, scan_vault, stat_one

log = logging.getLogger(__name__)

# what a stat of a path given to `sync_paths` may fail with when there is nothing there to keep
# (gone, a file on its way, a symlink that loops: as `Path.is_dir` reads them)
_NOT_THERE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EBADF})


class Syncer(Applier):
    """Keeps one index in step with one vault."""

    # -- entry points ----------------------------------------------------------------------

    def sync_all(self, *, rebuild: bool = False, changes_only: bool = False) -> SyncStats:
        """Bring the whole index in step with the vault. `rebuild` drops derived rows first.
        `changes_only`: a question's sync (one answered without a daemon, `cli/query.py`),
        which must see every note changed and nothing more: when the scan finds the index in
        step (`_in_step`) it ends there — no transaction, no vectors' backlog (left to
        `vaultmind sync` and the daemon: a question must not wait for it), no problems read.
        (At 10k notes that pass cost a question ~0.3 s more than the scan.)"""
        started = time.perf_counter()
        self._embed_failed = False
        if self.index.get_meta("needs_rebuild"):
            rebuild = True  # the index was upgraded: derive the new tables for every note
        cut_at = self.index.get_meta("chunk_tokens")
        if cut_at is not None and cut_at != str(self.config.chunk_tokens):
            log.warning("chunk size changed (%s → %s tokens): every note is cut again", cut_at, self.config.chunk_tokens)
            rebuild = True
        self._retime_for_zone()
        scan = scan_vault(self.config.vault, self.rules)
        for rel in remove_stale_temps(self.config.vault, scan.temps):
            log.info("removed %s, a temporary file left by an interrupted write", rel)
        known = indexed_states(self.index, None)
        if rebuild:  # every row goes, but those of the notes this sync cannot observe or read
            known = {path: known[path] for path in self._kept_on_rebuild(scan, known)}
        stats = SyncStats(scanned=len(scan.files), rebuilt=rebuild)
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
        if changes_only and not rebuild and cut_at is not None and self._in_step(observed, known, scan):
            stats.unchanged = len(observed)
            stats.seconds = time.perf_counter() - started
            return stats
        self._settle_stored_vectors()
        self._diff_apply(observed, known, stats, rebuild=rebuild, scan=scan)
        if self.index.get_meta(BACKLOG_LEFT) is not None:  # what a daemon left of a large change is applied
            with self.index.transaction() as con:
                con.execute("DELETE FROM meta WHERE key = ?", [BACKLOG_LEFT])
        if cut_at is None and not rebuild:  # an index from before the size was kept: cut at this one
            with self.index.transaction() as con:
                self.index.set_meta(con, "chunk_tokens", str(self.config.chunk_tokens))
        self._embed_backlog(stats)
        stats.problems = self.problems()
        stats.seconds = time.perf_counter() - started
        return stats

    def _retime_for_zone(self) -> None:
        """Your dated notes' times in the zone their local dates are read in now, when it
        changed (`sync_zone.retime_dated_notes`); the resident leaves then load again."""
        if retime_dated_notes(self.index, self.config.ingest_timezone):
            self.reload_residents()

    def reload_residents(self) -> None:
        """The resident leaves and vectors load again from the index when next used."""
        change = ChangeSet(reset=True)
        for listener in self.listeners:
            listener(change)

    def _in_step(self, observed: Mapping[str, FileStat | None], known: Mapping[str, IndexedState], scan: ScanResult) -> bool:
        """Whether the index holds every observed note as it is (the diff of `_diff_apply`
        would read nothing and remove nothing), the scan's problems as they are, and no
        daemon's backlog: then a sync has nothing to write."""
        retry = paths_to_retry(self.index)
        max_bytes = self.config.max_file_bytes
        for path, st in observed.items():
            if st is None or not unchanged(known.get(path), st, retry=retry, max_file_bytes=max_bytes):
                return False
        if self.index.get_meta(BACKLOG_LEFT) is not None:
            return False
        held = self.index.query(f"SELECT path, kind, message FROM problems WHERE kind IN ({', '.join(map(repr, SCAN_PROBLEMS))})")
        return set(held) == {(p.path, p.kind, p.message) for p in map(as_scan_problem, scan.problems)}

    def _kept_on_rebuild(self, scan: ScanResult, indexed: Mapping[str, IndexedState]) -> list[str]:
        """The indexed notes whose rows a rebuild keeps: those in folders it cannot list, and
        those it cannot read (a path that cannot be observed is not taken for deleted)."""
        vault = self.config.vault
        return sorted(
            path
            for path in indexed
            if (path not in scan.files and not scan.is_observed(path))
            or (path in scan.files and not os.access(vault / path, os.R_OK))
        )

    def sync_paths(self, paths: Iterable[str], *, gone: Iterable[str] = ()) -> SyncStats:
        """Bring the given vault-relative paths (files or folders) in step, e.g. after watcher
        events. The stats name the paths given that synced nothing: `ignored` (the ignore rules
        leave them out) and `missing` (neither in the vault nor in the index: a typo; a note
        deleted since it was indexed is counted in `deleted` instead). `gone`: paths removed on
        purpose (the places renamed notes left), synced alike, never missing, whoever synced them first."""
        started = time.perf_counter()
        self._embed_failed = False
        scan = ScanResult()
        expected = {rel.strip("/") for rel in gone}
        given = sorted(({rel.strip("/") for rel in paths} | expected) - {""})
        for rel in given:  # no index, link or JSON holds it: said, as the vault's scan says it (of a note or a folder)
            if not is_utf8(rel) and not self.is_ignored(rel) and (is_note(rel) or os.path.isdir(self.config.vault / rel)):
                scan.problems.append(bad_name(rel))
        given = [rel for rel in given if is_utf8(rel)]
        ignored = [rel for rel in given if self.is_ignored(rel)]
        asked = [rel for rel in given if rel not in expected and rel not in ignored]  # may be missing
        observed: dict[str, FileStat | None] = {}
        prefixes: list[str] = []
        for rel in given:
            if rel in ignored:
                continue
            abs_path = self.config.vault / rel
            try:
                folder = stat_mod.S_ISDIR(os.stat(abs_path).st_mode)
            except OSError as exc:
                folder = False
                if exc.errno not in _NOT_THERE:  # under a folder it cannot enter: kept, as a scan keeps it
                    scan.unobservable.append(rel)
                    scan.problems.append(Problem(rel, "unreadable", f"cannot stat ({exc.strerror}); {KEPT}"))
                    prefixes.append(rel + "/")
                    continue
            if folder and abs_path.is_symlink():
                # A folder reached through a symlink: whether it loops back or leads to a folder
                # the vault already holds is for the whole vault's scan to say, as in `sync_all`.
                stats = self.sync_all()
                stats.ignored, stats.missing = ignored, self._missing(asked)
                return stats
            if folder:
                sub = scan_vault_subtree(self.config.vault, rel, self.rules)
                observed.update(sub.files)
                scan.unobservable.extend(sub.unobservable)
                scan.problems.extend(sub.problems)
            elif is_note(rel):
                twin = linked_note(str(abs_path), rel, folder_id(self.config.vault))
                if twin is not None:  # a symlink to a note of the vault: indexed there, said here
                    scan.problems.append(twin)
                else:
                    observed[rel] = stat_one(self.config.vault, rel)
            prefixes.append(rel + "/")  # a folder now, or it may have been one before
        # each path given as well, which may have been a note before (now a folder)
        known = indexed_states(self.index, sorted(set(observed) | (set(given) - set(ignored))), prefixes)
        missing = self._missing(asked, known)  # (`known` holds every path asked and its folder)
        for path in known:
            if path not in observed and scan.is_observed(path):
                observed[path] = None
        stats = SyncStats(scanned=len(observed), ignored=ignored, missing=missing)
        folders = folder_problems(self.index, self.config.vault, prefixes, scan)
        self._diff_apply(observed, known, stats, rebuild=False, scan=None, folders=folders)
        if self._vectors_deferred:  # a large batch of paths left its vectors to a pass of their own
            self._settle_stored_vectors()
            self._embed_backlog(stats)
        stats.seconds = time.perf_counter() - started
        return stats

    def _missing(self, given: list[str], indexed: Mapping[str, IndexedState] | None = None) -> list[str]:
        """The paths of `given` that are neither in the vault nor in the index (as a note, or a
        folder holding notes); `indexed`: the index's states of them and of their folders' notes,
        when the caller has read them already."""
        absent = [rel for rel in given if not os.path.lexists(self.config.vault / rel)]
        if not absent:
            return []
        if indexed is None:
            indexed = indexed_states(self.index, absent, [rel + "/" for rel in absent])
        return [rel for rel in absent if rel not in indexed and not any(p.startswith(rel + "/") for p in indexed)]

    # -- reads -----------------------------------------------------------------------------

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

