"""The facade every adapter (CLI, daemon, HTTP API, MCP) calls.

`Memory` owns one open index, the embedder and the syncer for one vault. It is synchronous;
async adapters run it in a worker thread.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from vaultmind.config import MAX_LIMIT, Config
from vaultmind.config_reload import ConfigReload
from vaultmind.derivers import build_derivers
from vaultmind.embed.base import Embedder
from vaultmind.embed.providers import create_embedder
from vaultmind.errors import IndexUnavailable, NotFound
from vaultmind.index.resident import ResidentLeaves
from vaultmind.index.resident_vectors import ResidentVectors
from vaultmind.index.serving_pool import VECTORS_LOAD_LIMIT, ServingPool
from vaultmind.index.store import Index
from vaultmind.index.tables import has_table
from vaultmind.model import Progress, SyncStats
from vaultmind.retrieval.search import search
from vaultmind.shared_answer import SharedAnswers
from vaultmind.sync import Syncer
from vaultmind.sync_load import relax_collector
from vaultmind.vault.scan import IgnoreRules

if TYPE_CHECKING:
    from vaultmind.retrieval.entity_graph import EntityGraph

log = logging.getLogger(__name__)

QUIET_S = 2.0  # background upkeep waits for this long a pause in saves and requests
BACKGROUND_NER_BATCH = 32  # texts per step of background NER (it pauses for saves between steps)
YIELD_TIMEOUT_S = 60.0  # the longest background upkeep waits for a pause before its next step
# the NER catch-up's model process (~120 MiB) is stopped once a wait for a pause has lasted this
# long through a burst of saves (`yield_to_foreground`'s `release`); the wait then goes on until
# saves and requests have paused for `RESUME_QUIET_S`, at most `RESUME_TIMEOUT_S` from its start
RELEASE_AFTER_S = 5.0
RESUME_QUIET_S = 10.0
RESUME_TIMEOUT_S = 300.0
# while serving: allocations between collections of the youngest generation (Python's default:
# 700). A walk allocates tens of thousands of short-lived objects; at 100k leaves the collector
# took 1.0–1.7 ms of each, 0.2–0.5 ms with this and `_freeze_loaded`.
SERVING_GC_THRESHOLD = 20_000


class Memory:
    def __init__(self, config: Config, index: Index, embedder: Embedder | None, progress: Progress | None = None):
        self.config = config
        self._settings_files = ConfigReload(config.vault)  # as this process last read them
        self.index = index
        self.embedder = embedder
        self.syncer = Syncer(config, index, embedder, progress, build_derivers(config))
        self.serving_pool = ServingPool(index)  # DuckDB's buffer pool, kept small while serving (`serve`)
        self.leaves = ResidentLeaves(index)
        self.vectors = ResidentVectors(index, embedder.model_id) if embedder is not None else None
        if self.vectors is not None:
            self.vectors.shared_ids = self.leaves.shared_ids  # both hold every leaf's id, in id order
        self.leaves.progress = progress  # a first question loads them: a long wait, shown
        for deriver in self.syncer.derivers:  # the entity model's load takes seconds: shown
            if (ner := getattr(deriver, "ner", None)) is not None:
                ner.progress = progress
        if self.vectors is not None:
            self.vectors.progress = progress
        self.syncer.listeners.append(self.leaves.apply)
        if self.vectors is not None:
            self.syncer.listeners.append(self.vectors.apply)
        index.reopened.append(self.syncer.reload_residents)  # another process may have written it meanwhile
        self.leaves.room = self.serving_pool.load_light
        if self.vectors is not None:
            self.vectors.room = lambda load: self.serving_pool.load_light(load, VECTORS_LOAD_LIMIT)
        self.vault_name = config.vault.name
        self.sync_lock = threading.RLock()  # one sync at a time (watcher, seals, API)
        self._ingest_lock = threading.Lock()  # one `ingest_document` writing at a time
        self.seal_lock = threading.Lock()  # one seal pass (`tree.view.maintain`) at a time
        self._foreground = 0  # syncs asked for by a person or the watcher, waiting or running
        self._foreground_begun = 0  # how many such have begun so far (a burst: `yield_to_foreground`)
        self._foreground_lock = threading.Lock()
        self._status_answers: SharedAnswers[dict[str, Any]] = SharedAnswers()  # one `status` at a time, shared
        self._last_status: dict[str, Any] | None = None  # what a status says during a compaction (`while_compacting`)
        self._idle = threading.Event()
        self._idle.set()
        self._last_foreground = float("-inf")
        self.stopping = threading.Event()  # set when the daemon stops: background work ends
        self._synced = 0  # the index's generation after the last sync of vault files
        self._graph_wanted = False  # a question took an entity graph older than the index
        self.behind: str | None = None  # why the daemon could not apply the vault's changes, until it can
        self.catching_up = 0  # changed paths of a large batch the daemon has still to apply
        self.loading = False  # the daemon is starting: its first reconcile and warm-up still run
        self.serving_report: Callable[[], dict[str, Any]] | None = None  # the daemon's, in `status`

    @classmethod
    def open(cls, config: Config, *, progress: Progress | None = None, upgrade: Progress | None = None) -> Memory:
        """The vault's memory, its index opened. `progress` hears a sync's long work, `upgrade`
        (else `progress`) an upgrade of the index written by an older version (its migrations)."""
        if not config.vault.is_dir():
            from vaultmind.errors import VaultError

            raise VaultError("vault folder does not exist", path=config.vault, hint="create it with `vaultmind init`")
        index = Index.open(config.index_path, upgrade if upgrade is not None else progress)
        try:
            return cls(config, index, create_embedder(config), progress)
        except BaseException:  # (an unknown embeddings provider): the file let go now, not at a collection
            index.close()
            raise

    def close(self) -> None:
        from vaultmind.entities.backfill import entity_deriver

        deriver = entity_deriver(self)
        if deriver is not None:
            deriver.close()
        self.leaves.close()
        if self.vectors is not None:
            self.vectors.close()
        close = getattr(self.embedder, "close", None)  # an Ollama client's connections
        if callable(close):
            close()
        self.index.close()

    def stop_background(self) -> None:
        """The daemon is stopping: background work ends at its next step, and the NER model's
        process is stopped at once — a step waiting on it (the model still loading spaCy, 20 s
        on a busy host) would otherwise hold the daemon's exit as long. Each step commits whole
        or not at all, so the texts it had in hand are simply still pending at the next start."""
        from vaultmind.entities.backfill import entity_deriver

        self.stopping.set()
        deriver = entity_deriver(self)
        if deriver is not None:
            deriver.interrupt()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- write side ------------------------------------------------------------------------

    def reindex(self, *, reopen: bool = False) -> SyncStats:
        """Full rebuild of the derived rows from the vault (embeddings cache kept), with the
        ignore rules in force now and background upkeep paused, as `sync`. `reopen`: a serving
        process's (the API's reindex), which lets go of what DuckDB kept after the load as the
        daemon's start-up rebuild does (`reopen_index`), before any sync takes the index again."""
        self.reload_ignores()
        with self.foreground(), self.sync_lock:
            stats = self.syncer.sync_all(rebuild=True)
            self.index.checkpoint()
            if reopen:
                try:
                    self.reopen_index()
                except IndexUnavailable as exc:  # rebuilt all the same; opened again in the background (`index.reopening`)
                    log.warning("%s (%s)", exc, exc.hint)
            self._synced = self.index.generation
            return stats

    def compact(self, progress: Progress | None = None) -> dict[str, Any]:
        """The index file copied into a new one put in its place (`index.compact`), with syncs
        and background upkeep held off; its size before and after and the rows copied. Not
        once the daemon is stopping (`SyncStopped`): a compaction waiting for a sync to end
        would otherwise start when Ctrl-C ends that sync, and hold the exit."""
        with self.foreground(), self.sync_lock:
            return self.index.compact(progress or self.syncer.progress, self.stopping).to_dict()

    def reopen_index(self) -> None:
        """After a whole-vault rebuild, before the warm-up: the index's connection opened again
        (`Index.reopen`: what DuckDB kept after the load), its settings — a serving process's
        allocator among them — carried to the new one (`connection.settings_of`)."""
        self.index.reopen()

    def reload_ignores(self) -> bool:
        """Take up `[vault] ignore` and `include_templates` from the config file, and the
        templates folders from Obsidian's settings, when either changed since they were read (a
        serving process reads its config once): True when the rules changed, so the next full
        pass drops the notes they now exclude and adds those they let in. A config that no
        longer parses keeps the rules in force, with a warning. The other settings apply at
        the next start (the log says which changed)."""
        rules = self._settings_files.changed_rules(self.config)
        if rules is None:
            return False
        with self.sync_lock:  # never mid-sync (the watcher's, a request's): one pass, one set of rules
            self.config = self.config.with_(**rules)
            self.syncer.config = self.syncer.config.with_(**rules)
            self.syncer.rules = IgnoreRules(self.config.all_ignores)
        return True

    def sync(self, *, changes_only: bool = False) -> SyncStats:
        """Bring the index in step with the whole vault (`changes_only`: a question's sync,
        `Syncer.sync_all`)."""
        self.reload_ignores()
        with self.foreground(), self.sync_lock:
            stats = self.syncer.sync_all(changes_only=changes_only)
            self.serving_pool.evict()  # a whole-vault pass read blocks the next saves do not need
            self._synced = self.index.generation
            return stats

    def sync_paths(self, paths: list[str], *, gone: Sequence[str] = ()) -> SyncStats:
        with self.foreground(), self.sync_lock:
            stats = self.syncer.sync_paths(paths, gone=gone)
            self._synced = self.index.generation
            return stats

    # -- memory of a serving process -------------------------------------------------------

    def serve(self) -> None:
        """DuckDB settings for a long-running process (the daemon): freed memory goes back to
        the OS after each task instead of staying with DuckDB's allocator for reuse. Queries are
        answered by the resident structures, so loading them (reads only) runs under a smaller
        buffer pool, and the blocks loading and whole-vault syncs cached are dropped after
        (`ServingPool`). Writes keep the full pool (`pool.MEMORY_LIMIT`): DuckDB 1.5 can fail to roll
        back a write transaction that ran out of memory, leaving the database unusable and an
        ART index wrong (seen at 50k notes; a 192 MB pool once made a whole-vault reconcile fail).
        The NER model runs in a child process that leaves when idle (`EntityDeriver.serve`)."""
        from vaultmind.entities.backfill import entity_deriver

        self.serving_pool.serve()
        deriver = entity_deriver(self)
        if deriver is not None:
            deriver.serve()  # NER in a child process, after saves rather than inside them
        relax_collector(SERVING_GC_THRESHOLD)
        self.syncer.lean = True

    def counts(self) -> dict[str, int]:
        """Notes and leaves in the index (`chunks` is `leaves`, as `reindex --json` first named them)."""
        leaves = int(self.index.scalar("SELECT count(*) FROM leaves"))
        return {"notes": int(self.index.scalar("SELECT count(*) FROM notes")), "chunks": leaves, "leaves": leaves}

    @property
    def load_seconds(self) -> float:
        """Time spent loading the resident structures (a first question's wait, mostly)."""
        return self.leaves.load_seconds + (self.vectors.load_seconds if self.vectors is not None else 0.0)

    @contextmanager
    def foreground(self) -> Iterator[None]:
        """Mark work someone waits for (a watcher batch, a request): background upkeep pauses
        at its next step until it is done (`yield_to_foreground`)."""
        with self._foreground_lock:
            self._foreground += 1
            self._foreground_begun += 1
            self._idle.clear()
        try:
            yield
        finally:
            with self._foreground_lock:
                self._foreground -= 1
                self._last_foreground = time.monotonic()
                if self._foreground == 0:
                    self._idle.set()

    def yield_to_foreground(
        self, quiet_s: float | None = None, timeout: float | None = None, release: Callable[[], None] | None = None
    ) -> None:
        """Called by background work between steps: wait while foreground work is pending,
        and until none has happened for `quiet_s` (someone typing in Obsidian saves every
        second or two: enrichment waits for a pause; default `QUIET_S`). Gives up waiting after
        `timeout` (default `YIELD_TIMEOUT_S`).

        `release` (the NER catch-up's: stop the model's process) is called once the wait has
        lasted `RELEASE_AFTER_S` through a burst of saves or requests (another one began since
        the wait did): what background work holds is not kept beside a burst of saves (at 50k
        notes the model's ~120 MiB came on top of a save's peak). One long save alone releases
        nothing (at 50k notes on a busy host a save takes 3–8 s: the process would be stopped
        during each such save and loaded again after it). Released, the wait goes on until
        `RESUME_QUIET_S` without saves or requests (up to `RESUME_TIMEOUT_S` from its start),
        so that the process is started again once after the burst rather than for a batch
        between two of its saves."""
        quiet_s = QUIET_S if quiet_s is None else quiet_s
        start = time.monotonic()
        deadline = start + (YIELD_TIMEOUT_S if timeout is None else timeout)
        begun = self._foreground_begun  # one more since: a burst
        while not self.stopping.is_set():
            if release is not None and time.monotonic() - start >= RELEASE_AFTER_S and self._foreground_begun > begun:
                release()
                release = None
                quiet_s = max(quiet_s, RESUME_QUIET_S)
                deadline = max(deadline, start + RESUME_TIMEOUT_S)
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if release is not None:  # (woken in time to release)
                left = min(left, max(0.05, start + RELEASE_AFTER_S - time.monotonic()))
            if not self._idle.wait(min(left, 0.25)):  # (in steps: a stop is seen while a request runs)
                continue
            quiet_for = time.monotonic() - self._last_foreground
            if quiet_for >= quiet_s:
                return
            self.stopping.wait(min(quiet_s - quiet_for, max(0.0, left)))

    def warm(self) -> None:
        """Load what queries and saves need now rather than on the first query or save
        (`warm_up.warm`)."""
        from vaultmind.warm_up import warm

        warm(self)

    def entity_graph(self) -> EntityGraph:
        """The entity graph a question uses: as committed now; but while serving, the one
        last built when only background work (NER, queue jobs) has committed since the last sync
        of vault files. Background NER commits about once a second during a catch-up, and a
        reload takes 0.3 s at 50k notes: the question does not wait for it, the upkeep rebuilds
        the graph after its next step (`_graph_wanted`). A save is always in the graph the next
        question uses."""
        from vaultmind.retrieval.entity_graph import entity_graph, kept_entity_graph

        if self.serving_pool.serving:
            kept = kept_entity_graph(self.index, since=self._synced)
            if kept is not None:
                graph, stale = kept
                if stale:
                    self._graph_wanted = True
                return graph
        return entity_graph(self.index, evict=self.serving_pool.serving)

    def prepare_reads(self) -> None:
        """Bring the read path's views that follow the index by reloading (the entity graph) up
        to date with what was committed, so the next question does not pay for it (0.3 s at 50k
        notes). The daemon's upkeep calls it after a save and at the end of a pass, and after a
        step of background NER only when a question took the graph as it was before (steps
        come every second or so, and a reload each time would slow the catch-up by a third)."""
        from vaultmind.retrieval.entity_graph import entity_graph

        if has_table(self.index, "occurrences"):
            entity_graph(self.index, evict=self.serving_pool.serving)

    def enrich(self, progress: Progress | None = None, *, background: bool = False) -> dict[str, Any]:
        """Work a sync leaves for later: NER on leaves past the inline budget, then entity notes
        for entities with enough evidence (written to the vault and synced).

        NER commits batch by batch without holding the sync lock, so saves are applied
        meanwhile; in the `background` (the daemon) it also pauses while one is pending."""
        from vaultmind.entities.backfill import complete_ner, entity_deriver
        from vaultmind.entities.notes import create_entity_notes
        from vaultmind.entities.resolve import forget_names

        recognised = 0

        def step(phase: str, done: int, total: int) -> None:
            nonlocal recognised
            recognised = done
            if background:
                self.serving_pool.trim()  # the step's reads and writes: not needed by the next save
                # a long burst of saves: the model's process not kept beside it
                self.yield_to_foreground(release=deriver.close if deriver is not None else None)
            if progress is not None:  # after the pause for saves, before a stop ends the pass: its last step is said
                progress(phase, done, total)
            if background:
                if self.stopping.is_set():
                    raise _Stopping
                if self._graph_wanted:  # a question took the graph as it was before this step
                    self._graph_wanted = False
                    self.prepare_reads()

        deriver = entity_deriver(self)
        try:
            if background:
                step("ner", 0, 0)
                self.prepare_reads()  # what the save that woke the upkeep changed
            # the model's process stays through the pauses for saves between steps (a long one stops it)
            with deriver.ner.kept() if deriver is not None else contextlib.nullcontext():
                recognised = complete_ner(self, progress=step, batch=BACKGROUND_NER_BATCH if background else 256)
            if background:
                forget_names()  # the catch-up's memos: a serving daemon keeps no bulk pass's
                step("ner", recognised, recognised)
        except _Stopping:  # every finished step is committed; the next start goes on
            return {"ner_texts": recognised, "entity_notes": [], "problems": []}
        with self.sync_lock:
            written = create_entity_notes(self)  # a note it cannot write is a problem, not a failure
        if background:
            self.prepare_reads()  # what NER and new entity notes changed
        return {"ner_texts": recognised, **written.to_dict()}

    # -- read side -------------------------------------------------------------------------

    def search(self, query: str, *, limit: int | None = None) -> dict[str, Any]:
        self.index.try_reopening()  # each read: the file as it is now, once it can be opened again
        return search(self, query, limit=limit or self.config.search_limit)

    def walk(self, question: str, *, limit: int | None = None, reference_time: datetime | None = None) -> dict[str, Any]:
        from vaultmind.retrieval.walk import walk

        self.index.try_reopening()
        return walk(self, question, limit=limit or self.config.search_limit, reference_time=reference_time)

    def query(self, mode: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run one `memory_tree` mode with JSON-style arguments (the API, MCP and CLI entry).
        `walk` and `search` without a `limit` return the vault's `[search] limit` of hits."""
        from vaultmind.retrieval.dispatch import run_mode

        self.index.try_reopening()
        return run_mode(self, mode, args)

    def ingest_document(self, title: str, body: str, source_id: str, *, source_ref: str | None = None) -> dict[str, Any]:
        """`ingest_document`, the one write of the modes: a document an agent gives as text (a
        page it read, notes it took) written as a document source note under
        `sources/document/agent/` and indexed at once, its leaves answered as hits. The same
        `source_id` again with another title, text or `source_ref` is its next version (the note
        replaced as a whole, `version` + 1); with the same ones, nothing changes. A note the
        user edited is never replaced: the next version goes to a sibling note, the answer's
        warnings say so (`kept_edits_warnings`, as long as that note is there), and its hits are
        the leaves of the note written (`written_version`); the edited note stays among the
        source's leaves."""
        from vaultmind.ingest.agent_document import (
            AGENT_SCOPE,
            kept_edits_warnings,
            not_indexed,
            refuse_oversized,
            refuse_taken_id,
        )
        from vaultmind.ingest.model import DocumentInput
        from vaultmind.ingest.writer import write_documents
        from vaultmind.markdown.render import iso_utc
        from vaultmind.retrieval.hits import written_version

        now = iso_utc(datetime.now(UTC).replace(microsecond=0))
        doc = DocumentInput(source_id, AGENT_SCOPE, title.strip(), body, modified=now, source_ref=source_ref, id_given=True)
        refuse_oversized(doc, self.config.max_file_bytes)
        refuse_taken_id(self.index, source_id)
        with self._ingest_lock:  # (two agents at once: one folder's plan at a time)
            report = write_documents(self.config.vault, [doc])
            written, gone = report.to_sync()
            stats = self.sync_paths(written, gone=gone)
        note = written[0] if written else ""
        try:
            found = written_version(self, note, limit=MAX_LIMIT)
        except NotFound:
            raise not_indexed(note, stats, report.warnings) from None
        found["ingested"] = {
            "source_id": source_id,
            "note": note,
            "changed": bool(report.written),
            "leaves": found["total"],
            "warnings": [*kept_edits_warnings(self.index, source_id, note), *report.warnings],
        }
        return found

    def status(self, *, take_notice: bool = True) -> dict[str, Any]:
        """Counts, index health, problems, entities, admission and queue, as `vaultmind status`.
        `take_notice`: the user's status, which says a quarantine's notice once (a poll leaves it:
        `status.status_report`).

        Its counts hash every leaf (which have no vector, which no NER yet): they run on one
        DuckDB thread under a small pool (`status.STATUS_MEMORY_LIMIT`, `Index.small_pool_read`), and
        while serving the blocks they read are dropped after. At 50k notes a status on one
        thread lifted a daemon's memory by 50–63 MB for a moment and kept 0–16 MB of it, against
        50–71 and 42–67 MB on two, and +34–35 MB under the small pool (a daemon's start-up
        answers status every second to `bench`, while it loads). Under 16 MB instead of 32, and
        with the texts waiting for NER counted in parts of the hash space (`count_in_slices`),
        the two counts took +15–18 and +5–7 MB for a moment instead of +30 and +21 (in process).
        Requests that come meanwhile wait for it rather than run beside it (a client that gave
        up waiting while a load held the index had left several running at once), and share the
        next answer; one whose client has left by then is not worked out (`SharedAnswers`).

        While the daemon starts (`loading`: its first reconcile and the warm-up's loads) the
        answer says so (`loading`, health `loading`) and leaves out the two counts that hash
        every leaf — texts without a vector, texts waiting for NER (null) — which would run
        beside the loads: at 50k notes a whole status held +100 MB for a moment (its two
        anti joins +24–31 and +28 MB), one while loading a few MB.

        A status asked again before the index changed answers from the counts of the last
        (`status.read_counts`: kept per index generation), without reading the index again.
        While a compaction holds the index, one answers at once from the last status's counts,
        saying so (`status.while_compacting`).
        """
        from vaultmind.status import (
            compaction_holding,
            read_counts,
            status_report,
            while_compacting,
            with_daemon,
        )

        def work_out() -> dict[str, Any]:
            compacting = compaction_holding(self.index)
            if compacting is not None:
                return while_compacting(self.config, self._last_status, compacting)
            loading = self.loading
            counts, read = read_counts(self, loading=loading)
            if read:
                self.serving_pool.evict()
            self._last_status = status_report(self, counts, loading=loading, take_notice=take_notice)
            return self._last_status

        compacting = self.index.compacting  # (a status already waiting for its turn must not hold this one)
        if compacting is not None:
            report = while_compacting(self.config, self._last_status, compacting)
        else:
            report = self._status_answers.ask(take_notice, work_out)
        if self.serving_report is not None:
            report = with_daemon(report, self.serving_report())
        return report


class _Stopping(Exception):
    """Raised inside background work when the daemon stops."""

