"""The daemon's background upkeep (`TreeKeeper`): after every change, NER past the inline
budget and entity notes, then the source trees' seals, and a compaction of the index file
when churn has left it more than twice what it holds (checked before, between and after those
steps) — on a thread of its own, at a lower priority than the watcher and the API, stopped
before the daemon closes the index.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import duckdb

from vaultmind.errors import IndexUnavailable, SyncStopped
from vaultmind.queue.workers import WAIT_STEP_S, join_within
from vaultmind.tree.note import iso_time

if TYPE_CHECKING:
    from vaultmind.memory import Memory

log = logging.getLogger(__name__)

STOP_WARN_S = 30.0  # a stop still waiting for the upkeep after this says so (and waits on)
# the index file's waste is measured at most this often (`IdleCompaction`; ~0.1–0.4 s)
WASTE_CHECK_S = 600.0


class TreeKeeper:
    """Background upkeep after every change: NER past the inline budget and entity notes
    (`Memory.enrich`), then sealing, re-sealing and flushing source trees.

    A seal may wait minutes on Ollama, so it never runs on the watcher's thread; syncs are
    serialised by `Memory.sync_lock`, and the upkeep pauses between steps while a watcher batch
    or a request is pending (`Memory.foreground`). Flushing also happens at least every `FLUSH_EVERY_S`,
    and once the first stale summary waiting for its notes to go quiet may be sealed again.
    """

    FLUSH_EVERY_S = 3600.0

    def __init__(self, memory: Memory):
        self.memory = memory
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="vaultmind-trees", daemon=True)
        self.runs = 0
        self.last_error: str | None = None
        self._next_s = self.FLUSH_EVERY_S  # until the next pass when nothing changes
        self.compact_if_wasteful = IdleCompaction(memory)

    def start(self) -> None:
        self._thread.start()

    def poke(self) -> None:
        self._wake.set()

    def stop(self, give_up: threading.Event | None = None) -> None:
        """Ends the upkeep: its step in hand stops at once (an LLM call in flight is given up);
        returns only when no seal pass — this thread's or a flush's — uses the index any more,
        or at once when `give_up` is set (a second Ctrl-C)."""
        self._stop.set()
        self.memory.stop_background()  # the NER process too; a seal's LLM call in flight
        self._wake.set()
        while not join_within([self._thread], STOP_WARN_S, give_up):
            if give_up is not None and give_up.is_set():
                return
            log.warning("waiting for the background upkeep to end its step before closing the index")
        # a flush through the API ends its pass too (it sees the stop)
        while not self.memory.seal_lock.acquire(timeout=WAIT_STEP_S):
            if give_up is not None and give_up.is_set():
                return
        self.memory.seal_lock.release()

    def _run(self) -> None:
        from vaultmind.tree.view import maintain

        _lower_priority()
        while not self._stop.is_set():
            self._wake.wait(self._next_s)
            self._wake.clear()
            if self._stop.is_set():
                return
            errors: list[str] = []
            try:  # entities first; their failure never holds up the trees
                self.compact_if_wasteful()  # before a pass that may take hours (and between its steps: `_step`)
                self.memory.enrich(self._step, background=True)  # a long catch-up shows
            except Exception as exc:  # keep the daemon alive; the next change retries
                errors.append(f"entities: {type(exc).__name__}: {exc}")
                log.exception("entity upkeep failed")
            try:
                self.memory.yield_to_foreground()
                if self._stop.is_set():
                    return  # stopping: no graph rebuild nor tree pass on the way out
                report = maintain(self.memory, now=datetime.now(UTC), progress=self._step)
                self._next_s = self.next_pass_s(report.waiting, datetime.now(UTC))
                self.memory.prepare_reads()  # summaries sealed: their entities are in the graph
                self.memory.serving_pool.trim(idle=True)
                self.compact_if_wasteful()  # the space churn left unused given back
            except Exception as exc:  # keep the daemon alive; the next change retries
                errors.append(f"trees: {type(exc).__name__}: {exc}")
                log.exception("tree maintenance failed")
            self.last_error = "; ".join(errors) or None
            self.runs += 1

    def _step(self, phase: str, done: int, total: int) -> None:
        """A step of the pass done (a batch of the NER catch-up, a seal), shown; and the waste
        measured when due (`IdleCompaction`). Both steps call it between their commits, holding
        no lock. Were the waste measured only once a pass is done, a daemon whose first NER
        catch-up or seal pass runs for hours would never compact: a soak's index file grew
        from 26 to 54 MB in 27 minutes."""
        progress = self.memory.syncer.progress
        if progress is not None:
            progress(phase, done, total)
        self.compact_if_wasteful()

    def next_pass_s(self, waiting: list[dict[str, Any]], now: datetime) -> float:
        """Seconds until the next pass: when the first waiting stale summary may be sealed (a
        second after it), at most `FLUSH_EVERY_S`."""
        times = [iso_time(w["until"]) for w in waiting if w.get("until")]
        if not times:
            return self.FLUSH_EVERY_S
        first = min(t if t.tzinfo else t.replace(tzinfo=UTC) for t in times)
        return min(self.FLUSH_EVERY_S, max(1.0, (first - now).total_seconds() + 1.0))


class IdleCompaction:
    """Background upkeep, at the start and end of a pass and between its steps (`TreeKeeper._step`):
    compact the index (`Index.compact`) when its file is more than twice what it holds live
    (`Waste.worth_compacting`), measured at most every `WASTE_CHECK_S`, after a pause in saves
    and requests, holding syncs off while it runs."""

    def __init__(self, memory: Memory):
        self.memory = memory
        self._checked = float("-inf")  # when the waste was last measured (monotonic)

    def __call__(self) -> dict[str, Any] | None:
        """What was done, or None (not due, not worth it, stopping, or failed: tried again later)."""
        from vaultmind.index.compact import waste

        memory, index = self.memory, self.memory.index
        if index.path is None or time.monotonic() < self._checked + WASTE_CHECK_S:
            return None
        self._checked = time.monotonic()
        memory.yield_to_foreground()
        if memory.stopping.is_set():
            return None
        with memory.sync_lock, index.lock:
            try:
                found = waste(index.con, index.path)
                if not found.worth_compacting():
                    return None
                log.info("the index file is %.1f× what it holds: compacting it", found.ratio)
                return index.compact(memory.syncer.progress, memory.stopping).to_dict()
            except SyncStopped:  # the daemon is stopping: the index as it was
                return None
            except IndexUnavailable as exc:  # compacted, not opened again yet: retried by itself (`index.reopening`)
                log.warning("%s (%s)", exc, exc.hint)
                return None
            except (RuntimeError, OSError, duckdb.Error) as exc:  # the index as it was: tried again later
                log.warning("the index could not be compacted: %s", exc)
                return None


def _lower_priority() -> None:
    """Let the OS run this (background) thread after the watcher and the API when the CPU is
    short (Linux schedules threads separately; elsewhere nothing happens)."""
    if hasattr(os, "setpriority") and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
