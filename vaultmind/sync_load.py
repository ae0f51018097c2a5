"""Where a sync's per-file work runs: in this process, or in a pool of worker processes.

The work itself is `sync_note.load_note` (read, hash, parse, term counts, the derivers' pure
preparation): a pure function of the file's bytes, so where it runs does not change a single
row. A large sync (a first index, a big import) runs it in a pool of worker processes, one
batch ahead of the batch being applied, while the index work goes on in this process; when this
process would wait for a batch, it does the batch's tasks no worker has started (`Loader`).
Workers leave their results on disk until their batch's turn (`SPILL_PREFIX`).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import multiprocessing
import os
import pickle
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmind.sync_note import Batch, Loaded, Preparer, load_many, load_note

log = logging.getLogger(__name__)

POOL_MIN_FILES = 1000  # fewer files to read: no worker processes (starting them costs ~1 s)
TASK_FILES = 50  # files per task sent to a worker
SPILL_PREFIX = "parsed-"  # folder (in the index's folder) of the worker results waiting their turn


@dataclass(frozen=True, slots=True)
class _Task:
    number: int  # its flag in the claims array
    args: tuple[Path, list[str], int, int, list[str | None], tuple[Preparer, ...], bool, str]  # of `load_many`
    future: Future[Batch | str | None]


_CLAIMS: Any = None  # in a worker: the pool's claims array (one byte per task: taken)


def _init_worker(claims: Any) -> None:
    global _CLAIMS
    _CLAIMS = claims
    gc.freeze()  # what the worker imported, out of the collector's reach
    relax_collector(LOAD_GC_THRESHOLD)
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), name="parent-watch", daemon=True).start()


def _exit_with_parent(parent: int, every_s: float = 1.0) -> None:
    """End this worker once the process that started it is gone (killed with -9, or by the OOM
    killer): the worker holds both ends of its own task pipe, so it would wait for work forever,
    keeping its memory. A new parent (the init process, a subreaper) is how the loss shows."""
    while True:
        time.sleep(every_s)
        if os.getppid() != parent:
            os._exit(1)


# Allocations between collections of the youngest generation while notes are parsed in bulk
# (Python's default: 700). Parsing allocates millions of short-lived objects that reference
# counting frees; each collection at the default's pace rescans what survived.
LOAD_GC_THRESHOLD = 20_000


def relax_collector(threshold: int) -> tuple[int, int, int]:
    """Collect the youngest generation every `threshold` allocations at most (a bulk load's
    `LOAD_GC_THRESHOLD`, a serving process's); returns the thresholds before."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], threshold), *before[1:])
    return before


def _claim(claims: Any, number: int) -> bool:
    """Take task `number` unless this or another process took it (never run twice)."""
    with claims.get_lock():
        if claims[number]:
            return False
        claims[number] = 1
        return True


def _load_task(number: int, spill: str | None, *args: Any) -> Batch | str | None:
    """A worker's task: None when the applying process took it first. With `spill` (a folder),
    the result is written there and its file's path returned: a batch parsed ahead then waits
    on disk, not as Python objects in the applying process (25 MB off the peak of a 50k-note
    load). A result that cannot be written (a full disk) comes through the pipe instead."""
    if not _claim(_CLAIMS, number):
        return None
    batch = load_many(*args)
    if spill is None:
        return batch
    path = os.path.join(spill, f"{number}.pickle")
    try:
        with open(path, "wb") as out:
            pickle.dump(batch, out, protocol=pickle.HIGHEST_PROTOCOL)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)
        return batch
    return path


def _unspill(result: Batch | str) -> Batch:
    if isinstance(result, Batch):
        return result
    with open(result, "rb") as data:
        batch = pickle.load(data)
    os.unlink(result)
    if not isinstance(batch, Batch):
        raise TypeError(f"{result} does not hold parsed notes")
    return batch


def _spill_folder(parent: Path) -> Path | None:
    """A new folder for worker results in `parent`, after removing those a killed sync left
    (only the index's one writer makes them); None if it cannot be made (results then come
    through the pool's pipes)."""
    try:
        for stale in parent.glob(SPILL_PREFIX + "*"):
            shutil.rmtree(stale, ignore_errors=True)
        return Path(tempfile.mkdtemp(prefix=SPILL_PREFIX, dir=parent))
    except OSError as exc:
        log.warning("worker results stay in memory: %s", exc)
        return None


def default_workers() -> int:
    """Worker processes for a large sync: one per core but one (this process applies)."""
    return max(0, min(4, (os.cpu_count() or 1) - 1))


class Loader:
    """Loads batches of paths in order; with `workers` > 0 and enough files, in a process pool
    that works one batch ahead. Use as a context manager (the pool is shut down on exit)."""

    def __init__(
        self,
        vault: Path,
        max_bytes: int,
        chunk_tokens: int,
        *,
        workers: int,
        files: int,
        min_files: int = POOL_MIN_FILES,
        preparers: Callable[[], tuple[Preparer, ...]] = tuple,
        spill_in: Path | None = None,
        zone: str = "",
    ):
        """`preparers()` is called for each batch, when its work is handed out (before the
        batch ahead of it is applied, when it is loaded in a worker). `spill_in` (a folder:
        the index's) is where the workers leave their results until their batch's turn."""
        self.vault = vault
        self.spill: Path | None = None
        self.preparers = preparers
        self.max_bytes = max_bytes
        self.chunk_tokens = chunk_tokens
        self.zone = zone  # the vault's `[ingest] timezone`, which notes' local dates are read in
        self.pool: ProcessPoolExecutor | None = None
        self.claims: Any = None
        self.tasks = 0  # tasks handed out so far
        if workers > 0 and files >= min_files:
            try:
                context = multiprocessing.get_context("spawn")
                # at most files / TASK_FILES + one per batch tasks: files + 1 flags is plenty
                self.claims = context.Array("b", files + 1)
                self.pool = ProcessPoolExecutor(
                    workers, mp_context=context, initializer=_init_worker, initargs=(self.claims,)
                )
            except (OSError, ValueError) as exc:  # no processes here: load in this process
                log.warning("parsing in one process: %s", exc)
        if self.pool is not None and spill_in is not None:
            self.spill = _spill_folder(spill_in)
        self._collector = relax_collector(LOAD_GC_THRESHOLD) if self.pool is not None else None

    def __enter__(self) -> Loader:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        if self._collector is not None:
            gc.set_threshold(*self._collector)
        if self.spill is not None:
            shutil.rmtree(self.spill, ignore_errors=True)

    def batches(
        self, batches: Sequence[Sequence[str]], indexed: dict[str, str]
    ) -> Iterator[Batch]:
        """The loaded files of each batch, in order; `indexed` maps paths to their indexed sha256.
        In the pool, the rows of the parsed notes are built by the workers (`Batch.rows`)."""
        if self.pool is None:
            for batch in batches:
                preparers = self.preparers() if batch else ()  # (nothing to parse: a sync of an unchanged vault)
                yield Batch([self._load(p, indexed, preparers) for p in batch])
            return
        ahead: list[list[_Task]] = []
        submitted = 0
        for number, batch in enumerate(batches):
            if self.pool is None:  # the pool broke: the rest in this process
                preparers = self.preparers()
                yield Batch([self._load(p, indexed, preparers) for p in batch])
                continue
            while submitted < len(batches) and submitted <= number + 1:
                ahead.append(self._submit(batches[submitted], indexed))
                submitted += 1
            tasks = ahead.pop(0)
            try:
                loaded = Batch()
                for chunk in self._results(tasks):
                    loaded.loaded.extend(chunk.loaded)
                    loaded.rows.extend(chunk.rows)
                del tasks  # their futures hold the results: not kept past this batch
            except BrokenProcessPool as exc:  # a worker died (killed, out of memory)
                log.warning("a parsing worker died (%s); parsing the rest in this process", exc)
                self.pool.shutdown(wait=False, cancel_futures=True)
                self.pool = None
                preparers = self.preparers()
                loaded = Batch([self._load(p, indexed, preparers) for p in batch])
            yield loaded
            del loaded  # the caller's only, until the next batch is loaded

    def _submit(self, batch: Sequence[str], indexed: dict[str, str]) -> list[_Task]:
        assert self.pool is not None
        preparers = self.preparers()
        out = []
        for start in range(0, len(batch), TASK_FILES):
            paths = list(batch[start : start + TASK_FILES])
            shas = [indexed.get(p) for p in paths]
            args = (self.vault, paths, self.max_bytes, self.chunk_tokens, shas, preparers, True, self.zone)
            spill = None if self.spill is None else str(self.spill)
            out.append(_Task(self.tasks, args, self.pool.submit(_load_task, self.tasks, spill, *args)))
            self.tasks += 1
        return out

    def _results(self, tasks: Sequence[_Task]) -> list[Batch]:
        """The results of a batch's tasks. Rather than wait, this process does the tasks no
        worker has started yet, from the last one back (the workers go from the first): the
        load is shared when applying is faster than parsing. (Tasks are claimed through a
        shared array, not cancelled: a cancelled future breaks the pool's error handling.)"""
        done: dict[int, Batch] = {}
        for index in range(len(tasks) - 1, -1, -1):
            task = tasks[index]
            if not _claim(self.claims, task.number):
                break
            done[index] = load_many(*task.args)
        out: list[Batch] = []
        for index, task in enumerate(tasks):
            if index in done:
                out.append(done[index])
                continue
            result = task.future.result()
            assert result is not None  # claimed by a worker, so done by it
            out.append(_unspill(result))
        return out

    def _load(self, path: str, indexed: dict[str, str], preparers: Sequence[Preparer]) -> Loaded:
        return load_note(self.vault, path, self.max_bytes, self.chunk_tokens, indexed.get(path), preparers, self.zone)
