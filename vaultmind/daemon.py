"""The daemon: one process that owns the index, watches the vault and answers clients.

DuckDB allows one read-write process per index file, so while the daemon runs it is the only
writer; `vaultmind query`, `status` and `reindex` find it through `.vaultmind/daemon.json` and
go through its loopback API instead of opening the file.

Watching: watchfiles (Rust notify) with a short debounce; each batch of changes becomes one
`sync_paths` call. Once the watcher is live, a full reconcile (`sync_all`) runs, so edits made
while no daemon was running — or during start-up — are picked up; it repeats every
`RECONCILE_S` seconds to catch events a platform watcher may drop.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

from vaultmind.client import daemon_file
from vaultmind.config import Config
from vaultmind.errors import SyncStopped, VaultError, VaultmindError, storage_error
from vaultmind.http_api import ApiServer
from vaultmind.http_routes import OnBatch
from vaultmind.index.allocator import limit_heap_arenas
from vaultmind.index.store import BACKLOG_LEFT
from vaultmind.loop_links import LoopLinks
from vaultmind.memory import Memory
from vaultmind.model import SyncStats
from vaultmind.queue.workers import WorkerPool
from vaultmind.starting import StartRecord
from vaultmind.upkeep import TreeKeeper
from vaultmind.vault.scan import folder_id
from vaultmind.watch_slices import BULK_SLICE, Planned, add_planned, paths_of, plan_paths, take

log = logging.getLogger(__name__)

RECONCILE_S = 600.0
WATCH_TIMEOUT_MS = 250  # the watcher yields this often when nothing changes (a bulk's next slice)
RETRY_FIRST_S = 1.0  # a failed reconcile is tried again after 1 s, then 2, 4 … up to a minute
RETRY_MAX_S = 60.0


def _reason(exc: BaseException) -> str:
    storage = storage_error(exc)
    if storage is not None:
        return storage.what
    if not _unexpected(exc):
        return str(exc) or type(exc).__name__
    return (
        f"an internal error ({type(exc).__name__}: {exc}); if vaultmind was upgraded while this daemon "
        "runs, restart it, else please report it"
    )


EXPECTED = (VaultmindError, duckdb.Error, OSError)
"""What a sync may meet (a full disk, a file gone mid-read, a locked index). Anything else is a
fault of vaultmind's — or a vaultmind upgraded under a running daemon, whose parse workers then
start with the new code: the daemon survives either, says so in `status`, and retries with
backing off, as for a full disk; the log keeps the traceback."""


def _unexpected(exc: BaseException) -> bool:
    """A failure that is no storage's nor vaultmind's own (a bug, an upgrade under the daemon):
    logged with its traceback."""
    return not isinstance(exc, EXPECTED)


_RESTART_HINT = "if the vault was moved, start the daemon again where it is now (`vaultmind serve --vault PATH`): its index moved with it"


class _QuietInterrupt(logging.Filter):
    """Drops watchfiles' warning that it caught a KeyboardInterrupt: a Ctrl-C while the
    daemon starts lands in the watcher's wait, and the daemon stops on it (its stop event);
    a warning from another library's logger then reads as a fault."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("KeyboardInterrupt caught")


WATCHFILES_LOG = logging.getLogger("watchfiles.main")


class Daemon:
    def __init__(self, config: Config, memory: Memory, on_batch: OnBatch | None = None, start: StartRecord | None = None):
        """`start`: the record that says what the daemon does until its address is published
        (it ends then; what it says after, until ready, the health answer says)."""
        self.config = config
        self.start = start
        self.memory = memory
        self.on_batch = on_batch
        self.stop_event = threading.Event()
        self.ready = threading.Event()  # set once the watcher is live and the first reconcile is done
        self.api: ApiServer | None = None
        self.workers: WorkerPool | None = None
        self.batches = 0
        self.failed_batches = 0
        self.last_batch_error: str | None = None  # the last batch (or reconcile) that failed, and why
        self.trees = TreeKeeper(memory)
        self.force_reconcile = False
        self._last_reconcile = 0.0  # monotonic time of the last reconcile (0: none yet)
        self._retry_at = 0.0  # after a failed reconcile, no other before this monotonic time
        self._retry_s = RETRY_FIRST_S
        self._warmed = False  # what questions read is loaded (after the first reconcile that passed)
        # Paths of a large batch not applied yet: a slice per step, after the step's own changes,
        # so a save made while thousands of files arrive waits for one slice, not for them all.
        self._backlog: Planned = {}  # (`watch_slices`: each with the path a note moved from)
        self._backlog_kept = False  # whether the index holds `BACKLOG_LEFT` (`_backlog_changed`)
        self._loops = LoopLinks(config.vault)  # links to a folder holding the vault or inside it
        self._replaced = memory.index.replaced  # index files moved aside (invalidated) seen so far
        # The vault folder's (device, inode): a vault moved, deleted or replaced while the daemon
        # runs is no longer the one it watches (watchfiles reports the moved folder's changes
        # under the old path, where a note then reads as deleted).
        self._vault_id = folder_id(config.vault)
        self.vault_lost: str | None = None  # why the daemon stopped watching its vault folder
        self.hurry = threading.Event()  # a second signal: the stop's waits give up
        self._closing = False  # the stop has begun: a signal no longer interrupts it

    def run(self) -> None:
        """Serve until `stop()` (or Ctrl-C). Blocks. Raises `VaultError` when the vault folder
        was moved, deleted or replaced while it served (after stopping as for `stop()`)."""
        token = secrets.token_urlsafe(32)
        # Bound first: a port in use fails the start (naming `[server] port`) before anything changed.
        self.api = ApiServer(
            self.memory,
            token,
            self.config.host,
            self.config.port,
            ready=self.ready.is_set,
            on_batch=self._api_batch,
            doing=lambda: self.start.doing if self.start is not None else None,
        )
        restore_signals = self._stop_on_signals()
        quiet = _QuietInterrupt()
        WATCHFILES_LOG.addFilter(quiet)
        info_path = daemon_file(self.config)
        try:  # a failure from here on (a full disk as the queue starts) undoes the start as a stop does
            limit_heap_arenas()  # the command line has already; a daemon run from a library too
            self.memory.serve()  # a small DuckDB buffer pool: the resident structures answer queries
            self.memory.serving_report = self.report
            self.memory.syncer.stopping = self.stop_event  # a whole-vault sync leaves off at a batch's end
            self.memory.loading = True  # until ready: a status leaves out what would run beside the loads
            self.api.start()
            self.workers = WorkerPool(self.config, self.memory)
            self.workers.start()
            self.trees.start()
            _publish(info_path, {"pid": os.getpid(), "host": self.config.host, "port": self.api.port, "token": token})
            if self.start is not None:
                self.start.end()  # the address is out: clients ask the daemon from now on
            self._last_reconcile = 0.0
            self._watch()
        finally:
            self._shut_down(info_path, restore_signals, quiet)
        if self.vault_lost is not None:
            raise VaultError(f"{self.vault_lost}; the daemon stopped", hint=_RESTART_HINT)

    def _watch(self) -> None:
        """The watcher's loop, until the stop event."""
        import watchfiles

        while not self.stop_event.is_set():
            try:
                for raw in watchfiles.watch(
                    self.config.vault,
                    # Filtered here, not by watchfiles: it swallows a batch that filters to
                    # nothing and waits on, so constant writes to .vaultmind/ (the index's own
                    # WAL) would keep this loop from ever reaching the reconcile.
                    watch_filter=None,
                    debounce=self.config.debounce_ms,
                    step=self.config.step_ms,
                    stop_event=self.stop_event,
                    yield_on_timeout=True,
                    rust_timeout=WATCH_TIMEOUT_MS,
                    raise_interrupt=False,
                    ignore_permission_denied=True,
                ):
                    if self._step(raw):  # a folder reached through a symlink appeared:
                        self.force_reconcile = True  # watched from now on too (a full pass covers
                        break  # what changed while watching started over)
            except RuntimeError as exc:  # watchfiles' own: a file name that is not UTF-8
                if type(exc).__name__ != "WatchfilesRustInternalError":
                    raise
                # The batch it held is lost: watching starts over, and its first step (once
                # the new watcher is live) looks at every file again and reports the name.
                log.warning("the watcher stopped on %s; watching again, with a full pass", exc)
                self.force_reconcile = True

    def _shut_down(self, info_path: Path, restore_signals: Callable[[], None], quiet: logging.Filter) -> None:
        """Undo the start, whatever of it was done. The API answers while the background work
        stops (it may finish a summary first); daemon.json goes last, so a command meanwhile
        asks the API rather than waiting for an index it finds held with no address to ask.
        Each part runs though the one before failed; a second signal makes the waits give up
        (`hurry`), never what follows them."""
        self._closing = True
        self.memory.loading = False
        self.memory.serving_report = None
        self.memory.syncer.stopping = None
        try:
            try:
                self.trees.stop(give_up=self.hurry)
            finally:
                if self.workers is not None:
                    self.workers.stop(give_up=self.hurry)
        finally:
            try:
                if self.api is not None:
                    self.api.stop(give_up=self.hurry)  # the requests being answered first
                with contextlib.suppress(FileNotFoundError):
                    info_path.unlink()
            finally:
                restore_signals()
                WATCHFILES_LOG.removeFilter(quiet)

    def _step(self, raw: set[tuple[Any, str]]) -> bool:
        """One batch of the watcher's changes, then the reconcile when one is due. True when a
        symlink to a folder appeared: the watcher follows only the links it found at its start."""
        if self._vault_moved():
            return False
        if self.memory.reload_ignores():  # `[vault] ignore` edited: a full pass applies it
            self.force_reconcile = True
        if self.memory.index.replaced != self._replaced:  # DuckDB invalidated the index, which was
            self._replaced = self.memory.index.replaced  # moved aside: the fresh one is filled now
            self.force_reconcile = True
            self._retry_at = 0.0
        raw = {(change, real) for change, path in raw if (real := self._loops.in_vault(path)) is not None}
        restart = self._loops.removed()
        if restart:
            self.force_reconcile = True
        changes = {(change, path) for change, path in raw if self._wanted(change, path)}
        if changes:
            self._apply(changes)
        if self._backlog:
            batch = take(self._backlog, BULK_SLICE)
            self._backlog_changed()
            self._apply_paths(*paths_of(batch))
        now = time.monotonic()
        due = now - self._last_reconcile >= RECONCILE_S or not self.ready.is_set() or self.force_reconcile
        if due and now >= self._retry_at:
            try:
                with self.memory.index.replaced_when_broken():  # a damaged file: moved aside, filled at once
                    self._say("looking for what changed in the vault")
                    stats = self.memory.sync()
                    if not self._warmed:  # also after a start whose first reconcile failed
                        if stats.rebuilt:  # what DuckDB kept after the load, let go of
                            self.memory.reopen_index()
                        self._say("loading what questions read")
                        self.memory.warm()  # the first search must not pay for loading
                        self._warmed = True
                self.force_reconcile = False
                self.memory.behind = None
                self._backlog.clear()  # the whole vault is in step: nothing of a bulk is left
                self._backlog_changed()
                self._retry_at, self._retry_s = 0.0, RETRY_FIRST_S
                if self.workers is not None:
                    self.workers.notify()
                self.trees.poke()
                self._report("reconcile", stats)
            except SyncStopped as exc:  # the daemon stops: what was committed stays, the next start does the rest
                log.info("reconcile: %s", exc)
            except Exception as exc:  # EXPECTED, or a fault: the watcher and the API keep running
                # A full disk fails every pass alike: the retries back off, and status says why
                # the index lags the vault meanwhile.
                log.error(
                    "reconcile failed: %s; will retry in %.0f s", _reason(exc), self._retry_s, exc_info=_unexpected(exc)
                )
                self.last_batch_error = f"reconcile: {_reason(exc)}"
                self.memory.behind = (
                    f"the index is behind the vault: {_reason(exc)}; trying again in {self._retry_s:.0f} s"
                )
                self._retry_at = now + self._retry_s
                self._retry_s = min(self._retry_s * 2, RETRY_MAX_S)
                self.force_reconcile = True  # at `_retry_at`, not at the next periodic reconcile
            self._last_reconcile = now
            self.ready.set()
            self.memory.loading = False
        return restart or any(os.path.islink(path) and os.path.isdir(path) for _, path in changes)

    def _say(self, doing: str) -> None:
        """What the starting daemon does now, as its health answer says it until it is ready."""
        if self.start is not None and not self.ready.is_set():
            self.start.doing = doing

    def _vault_moved(self) -> bool:
        """Whether the vault folder is gone, or another folder now has its path: the daemon
        then stops (nothing of it is applied: the old path would read as an empty vault, or as
        another one) and says so in `status` meanwhile and as `run`'s error."""
        now = folder_id(self.config.vault)
        if now == self._vault_id:
            return False
        what = "was moved or deleted" if now is None else "was replaced by another folder"
        self.vault_lost = f"the vault folder {self.config.vault} {what} while the daemon watched it"
        self.memory.behind = f"{self.vault_lost}; the daemon is stopping: {_RESTART_HINT}"
        self.stop_event.set()
        return True

    def _stop_on_signals(self) -> Callable[[], None]:
        """Ctrl-C (SIGINT) and SIGTERM stop the daemon cleanly, whatever the process inherited:
        a parent that ignores or blocks SIGINT passes that on to its children, and such a
        daemon could only be killed (its `daemon.json` left behind). Returns what undoes it.
        Only the main thread can install handlers; elsewhere `stop()` is the way out."""
        import signal

        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        wanted = [signal.SIGINT, signal.SIGTERM]
        previous = {sig: signal.getsignal(sig) for sig in wanted}

        def stop(_signo: int, _frame: object) -> None:
            again = self.stop_event.is_set()
            # set before raising too: watchfiles takes a KeyboardInterrupt inside its wait for the
            # end of that watch, and the loop must not start another (it hung a Ctrl-C at start-up)
            self.stop_event.set()  # the watch loop ends within a second; the threads stop after
            if again:
                self.hurry.set()  # the stop's waits give up
            if self._closing:  # never raised into the stop: its API stop and daemon.json removal must run
                return
            if again or (not self.ready.is_set() and not self.memory.syncer.in_batches):
                # a second signal, or start-up (loading what queries read): at once; a whole-vault
                # sync (a first index) leaves off at its batch's end, its batches committed
                raise KeyboardInterrupt

        for sig in wanted:
            signal.signal(sig, stop)
        blocked = signal.pthread_sigmask(signal.SIG_UNBLOCK, wanted) if hasattr(signal, "pthread_sigmask") else set()

        def restore() -> None:
            for sig, handler in previous.items():
                signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
            if blocked and hasattr(signal, "pthread_sigmask"):
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

        return restore

    def stop(self) -> None:
        self.stop_event.set()

    def report(self) -> dict[str, Any]:
        """What `/v1/status` says of the daemon's own work: batches applied and failed, the
        background upkeep's passes and its last failure, the worker pool's state (`workers`:
        paused on a corrupt index, the LLM gate; `status.with_daemon` makes a pause the queue's
        health)."""
        return {
            "batches": self.batches,
            "failed_batches": self.failed_batches,
            "last_batch_error": self.last_batch_error,
            "upkeep_runs": self.trees.runs,
            "upkeep_error": self.trees.last_error,
            "workers": self.workers.status() if self.workers is not None else None,
        }

    def _apply(self, changes: set[tuple[Any, str]]) -> None:
        """A batch of the watcher's changes: at once, or its first `BULK_SLICE` paths at once and
        the rest to the backlog (`_step` applies a slice of it per step; `watch_slices`)."""
        root = str(self.config.vault)
        rels = sorted({os.path.relpath(path, root).replace(os.sep, "/") for _, path in changes})
        planned = plan_paths(self.config.vault, rels, self.memory.syncer.rules, self.memory.index, bulk=BULK_SLICE)
        first = take(planned, BULK_SLICE)
        if planned:
            add_planned(self._backlog, planned)
            self._backlog_changed()
        self._apply_paths(*paths_of(first))

    def _backlog_changed(self) -> None:
        """Say what is left of a large change: to this daemon's `status` (`catching_up`), and,
        kept in the index while any is left (`BACKLOG_LEFT`), to the status of any process
        after this daemon ended before applying it (a crash, a kill): the index lags the vault
        then, until a whole-vault sync. Written only when it turns from none left to some, or
        back."""
        self.memory.catching_up = len(self._backlog)
        left = bool(self._backlog)
        if left == self._backlog_kept:
            return
        index = self.memory.index
        try:
            with index.transaction() as con:
                if left:
                    index.set_meta(con, BACKLOG_LEFT, str(len(self._backlog)))
                else:
                    con.execute("DELETE FROM meta WHERE key = ?", [BACKLOG_LEFT])
        except Exception as exc:  # EXPECTED (a full disk…): only a hint is missing; the batches say what failed
            log.warning("could not note the backlog in the index: %s", _reason(exc))
            return
        self._backlog_kept = left

    def _apply_paths(self, rels: list[str], gone: list[str] | None = None) -> None:
        """Sync `rels`, and `gone`: the paths notes among them moved from (`watch_slices`)."""
        try:
            stats = self.memory.sync_paths(rels, gone=gone or ())
        except SyncStopped as exc:  # the daemon stops: the next start's reconcile does the rest
            log.info("watch: %s", exc)
            return
        except Exception as exc:  # EXPECTED, or a fault: never let one bad batch stop the watcher
            # the next reconcile repairs the index
            shown = ", ".join(rels[:5]) + (f" and {len(rels) - 5} more" if len(rels) > 5 else "")
            log.error(
                "could not apply %d change(s) (%s): %s; will reconcile",
                len(rels), shown, _reason(exc), exc_info=_unexpected(exc),
            )  # fmt: skip
            self.memory.behind = f"the index is behind the vault: {len(rels)} change(s) not applied: {_reason(exc)}"
            self.last_batch_error = f"{shown}: {_reason(exc)}"
            self.failed_batches += 1
            self.force_reconcile = True
            return
        self.batches += 1
        if self.workers is not None:
            self.workers.notify()
        self.trees.poke()
        self._report("watch", stats)
        self.memory.serving_pool.trim()  # after the save is searchable: DuckDB's pool back to a small size

    def _api_batch(self, what: str, stats: SyncStats) -> None:
        """A sync or reindex a request applied: the upkeep and the queue hear of it as of a
        watcher's batch (its texts wait for NER, its sources for their seals)."""
        if self.workers is not None:
            self.workers.notify()
        self.trees.poke()
        self._report(what, stats)

    def _report(self, what: str, stats: SyncStats) -> None:
        log.info(
            "%s: +%d ~%d -%d renamed %d (%.0f ms)",
            what,
            stats.added,
            stats.modified,
            stats.deleted,
            stats.renamed,
            stats.seconds * 1000,
        )
        if self.on_batch:
            self.on_batch(what, stats)

    def _wanted(self, change: object, path: str) -> bool:
        rel = os.path.relpath(path, str(self.config.vault)).replace(os.sep, "/")
        if rel.startswith(".."):
            return False
        return not self.memory.syncer.is_ignored(rel)


def _publish(path: Path, info: dict[str, object]) -> None:
    """Write daemon.json readable by the owner only (it holds the bearer token)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(info, fh, sort_keys=True)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
