"""Read, hash and parse the files a sync must look at: in this process, or in worker processes.

`load_note` is the whole per-file work of a sync before anything touches the index: read
(re-reading if the file changes underneath), sha256, decode, `parse_note`, and the term counts
of every leaf. It is a pure function of the file's bytes, so where it runs does not change a
single row: a large sync (a first index, a big import) runs it in a pool of worker processes,
one batch ahead of the batch being applied, while the index work goes on in this process.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from vaultmind.index.lexical import term_counts
from vaultmind.markdown.note import parse_note
from vaultmind.model import FileStat, ParsedNote, Problem
from vaultmind.vault.read import decode_note, read_note

log = logging.getLogger(__name__)

POOL_MIN_FILES = 1000  # fewer files to read: no worker processes (starting them costs ~1 s)
TASK_FILES = 50  # files per task sent to a worker


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


def load_note(vault: Path, path: str, max_bytes: int, chunk_tokens: int, indexed_sha: str | None) -> Loaded:
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
    return loaded


def _load_many(
    vault: Path, paths: Sequence[str], max_bytes: int, chunk_tokens: int, shas: Sequence[str | None]
) -> list[Loaded]:
    return [load_note(vault, p, max_bytes, chunk_tokens, s) for p, s in zip(paths, shas, strict=True)]


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
    ):
        self.vault = vault
        self.max_bytes = max_bytes
        self.chunk_tokens = chunk_tokens
        self.pool: ProcessPoolExecutor | None = None
        if workers > 0 and files >= min_files:
            try:
                self.pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
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
                yield [
                    load_note(self.vault, p, self.max_bytes, self.chunk_tokens, indexed.get(p)) for p in batch
                ]
            return
        ahead: list[list[Future[list[Loaded]]]] = []
        submitted = 0
        for number, batch in enumerate(batches):
            if self.pool is None:  # the pool broke: the rest in this process
                yield [load_note(self.vault, p, self.max_bytes, self.chunk_tokens, indexed.get(p)) for p in batch]
                continue
            while submitted < len(batches) and submitted <= number + 1:
                ahead.append(self._submit(batches[submitted], indexed))
                submitted += 1
            futures = ahead.pop(0)
            try:
                loaded = [item for future in futures for item in future.result()]
            except BrokenProcessPool as exc:  # a worker died (killed, out of memory)
                log.warning("a parsing worker died (%s); parsing the rest in this process", exc)
                self.pool.shutdown(wait=False, cancel_futures=True)
                self.pool = None
                loaded = [load_note(self.vault, p, self.max_bytes, self.chunk_tokens, indexed.get(p)) for p in batch]
            yield loaded

    def _submit(self, batch: Sequence[str], indexed: dict[str, str]) -> list[Future[list[Loaded]]]:
        assert self.pool is not None
        out = []
        for start in range(0, len(batch), TASK_FILES):
            paths = list(batch[start : start + TASK_FILES])
            shas = [indexed.get(p) for p in paths]
            out.append(self.pool.submit(_load_many, self.vault, paths, self.max_bytes, self.chunk_tokens, shas))
        return out
