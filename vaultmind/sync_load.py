"""Read, hash and parse the files a sync must look at: in this process, or in worker processes.

`load_note` is the whole per-file work of a sync before anything touches the index: read
(re-reading if the file changes underneath), sha256, decode, `parse_note`, the term counts
of every leaf, the stored front matter, and what the derivers can do from the parsed note alone
(`sync.Preparing`: admission decisions, entity mentions). It is a pure function of the file's
bytes (and of the registry the entity work was handed), so where it runs does not change a
single row: a large sync (a first index, a big import) runs it in a pool of worker processes,
one batch ahead of the batch being applied, while the index work goes on in this process;
when this process would wait for a batch, it does the batch's tasks no worker has started.
"""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing
import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmind.index.lexical import term_counts
from vaultmind.markdown.note import parse_note
from vaultmind.model import FileStat, ParsedNote, Problem
from vaultmind.vault.read import decode_note, read_note

log = logging.getLogger(__name__)

POOL_MIN_FILES = 1000  # fewer files to read: no worker processes (starting them costs ~1 s)
TASK_FILES = 50  # files per task sent to a worker

Preparer = Callable[[ParsedNote, str], Any]
"""A deriver's pure per-note work (`sync.Preparing`): (parsed note, its front matter as
stored) → what the deriver's `apply` takes for the note. Must pickle (it runs in workers)."""


@dataclass(slots=True)
class Loaded:
    """What a sync needs to know about one file it read."""

    path: str
    stat: FileStat | None  # None: the file is gone
    problem: Problem | None = None  # from reading (too large, unreadable, …)
    keep_rows: bool = False  # the file could not be observed: keep what the index has
    sha: str | None = None  # None: not read
    same: bool = False  # the bytes hash to the indexed sha256: nothing else was done
    decode_problem: Problem | None = None
    note: ParsedNote | None = None  # None: not text (binary), or not parsed
    counts: tuple[tuple[Counter[str], int], ...] = ()  # per leaf: term counts, number of terms
    frontmatter_json: str = "{}"  # the `notes.frontmatter` value
    prepared: tuple[Any, ...] = ()  # per preparer: its result for the note


def frontmatter_json(note: ParsedNote) -> str:
    """The front matter as the `notes` row stores it."""
    return json.dumps(note.frontmatter, sort_keys=True, ensure_ascii=False, default=str)


def load_note(
    vault: Path,
    path: str,
    max_bytes: int,
    chunk_tokens: int,
    indexed_sha: str | None,
    preparers: Sequence[Preparer] = (),
) -> Loaded:
    result = read_note(vault, path, max_bytes)
    loaded = Loaded(path, result.stat, result.problem, result.keep_rows)
    if result.data is None or result.stat is None or (result.problem is not None and result.keep_rows):
        return loaded
    loaded.sha = hashlib.sha256(result.data).hexdigest()
    if loaded.sha == indexed_sha:
        loaded.same = True
        return loaded
    text, loaded.decode_problem = decode_note(path, result.data)
    if text is None:
        return loaded
    loaded.note = parse_note(path, text, chunk_tokens=chunk_tokens)
    loaded.counts = tuple(term_counts(leaf.text) for leaf in loaded.note.leaves)
    loaded.frontmatter_json = frontmatter_json(loaded.note)
    loaded.prepared = tuple(prepare(loaded.note, loaded.frontmatter_json) for prepare in preparers)
    return loaded


def _load_many(
    vault: Path,
    paths: Sequence[str],
    max_bytes: int,
    chunk_tokens: int,
    shas: Sequence[str | None],
    preparers: Sequence[Preparer],
) -> list[Loaded]:
    return [load_note(vault, p, max_bytes, chunk_tokens, s, preparers) for p, s in zip(paths, shas, strict=True)]


@dataclass(frozen=True, slots=True)
class _Task:
    number: int  # its flag in the claims array
    args: tuple[Path, list[str], int, int, list[str | None], tuple[Preparer, ...]]  # of `_load_many`
    future: Future[list[Loaded] | None]


_CLAIMS: Any = None  # in a worker: the pool's claims array (one byte per task: taken)


def _init_worker(claims: Any) -> None:
    global _CLAIMS
    _CLAIMS = claims


def _claim(claims: Any, number: int) -> bool:
    """Take task `number` unless this or another process took it (never run twice)."""
    with claims.get_lock():
        if claims[number]:
            return False
        claims[number] = 1
        return True


def _load_task(number: int, *args: Any) -> list[Loaded] | None:
    """A worker's task: None when the applying process took it first."""
    return _load_many(*args) if _claim(_CLAIMS, number) else None


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
    ):
        """`preparers()` is called for each batch, when its work is handed out (before the
        batch ahead of it is applied, when it is loaded in a worker)."""
        self.vault = vault
        self.preparers = preparers
        self.max_bytes = max_bytes
        self.chunk_tokens = chunk_tokens
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

    def __enter__(self) -> Loader:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def batches(
        self, batches: Sequence[Sequence[str]], indexed: dict[str, str]
    ) -> Iterator[list[Loaded]]:
        """The loaded files of each batch, in order; `indexed` maps paths to their indexed sha256."""
        if self.pool is None:
            for batch in batches:
                preparers = self.preparers()
                yield [self._load(p, indexed, preparers) for p in batch]
            return
        ahead: list[list[_Task]] = []
        submitted = 0
        for number, batch in enumerate(batches):
            if self.pool is None:  # the pool broke: the rest in this process
                preparers = self.preparers()
                yield [self._load(p, indexed, preparers) for p in batch]
                continue
            while submitted < len(batches) and submitted <= number + 1:
                ahead.append(self._submit(batches[submitted], indexed))
                submitted += 1
            tasks = ahead.pop(0)
            try:
                loaded = [item for chunk in self._results(tasks) for item in chunk]
            except BrokenProcessPool as exc:  # a worker died (killed, out of memory)
                log.warning("a parsing worker died (%s); parsing the rest in this process", exc)
                self.pool.shutdown(wait=False, cancel_futures=True)
                self.pool = None
                preparers = self.preparers()
                loaded = [self._load(p, indexed, preparers) for p in batch]
            yield loaded
            del loaded  # the caller's only, until the next batch is loaded

    def _submit(self, batch: Sequence[str], indexed: dict[str, str]) -> list[_Task]:
        assert self.pool is not None
        preparers = self.preparers()
        out = []
        for start in range(0, len(batch), TASK_FILES):
            paths = list(batch[start : start + TASK_FILES])
            args = (self.vault, paths, self.max_bytes, self.chunk_tokens, [indexed.get(p) for p in paths], preparers)
            out.append(_Task(self.tasks, args, self.pool.submit(_load_task, self.tasks, *args)))
            self.tasks += 1
        return out

    def _results(self, tasks: Sequence[_Task]) -> list[list[Loaded]]:
        """The results of a batch's tasks. Rather than wait, this process does the tasks no
        worker has started yet, from the last one back (the workers go from the first): the
        load is shared when applying is faster than parsing. (Tasks are claimed through a
        shared array, not cancelled: a cancelled future breaks the pool's error handling.)"""
        done: dict[int, list[Loaded]] = {}
        for index in range(len(tasks) - 1, -1, -1):
            task = tasks[index]
            if not _claim(self.claims, task.number):
                break
            done[index] = _load_many(*task.args)
        out: list[list[Loaded]] = []
        for index, task in enumerate(tasks):
            if index in done:
                out.append(done[index])
                continue
            result = task.future.result()
            assert result is not None  # claimed by a worker, so done by it
            out.append(result)
        return out

    def _load(self, path: str, indexed: dict[str, str], preparers: Sequence[Preparer]) -> Loaded:
        return load_note(self.vault, path, self.max_bytes, self.chunk_tokens, indexed.get(path), preparers)
