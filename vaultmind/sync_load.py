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

import contextlib
import gc
import hashlib
import json
import logging
import multiprocessing
import os
import pickle
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from vaultmind.entities.extract import parse_author
from vaultmind.index.lexical import term_counts
from vaultmind.markdown.note import parse_note
from vaultmind.model import FileStat, ParsedNote, Pickled, Problem, WrittenNote
from vaultmind.vault.read import decode_note, read_note

log = logging.getLogger(__name__)

POOL_MIN_FILES = 1000  # fewer files to read: no worker processes (starting them costs ~1 s)
TASK_FILES = 50  # files per task sent to a worker
SPILL_PREFIX = "parsed-"  # folder (in the index's folder) of the worker results waiting their turn

Preparer = Callable[[ParsedNote, str], Any]
"""A deriver's pure per-note work (`sync.Preparing`): (parsed note, its front matter as
stored) → what the deriver's `apply` takes for the note. Must pickle (it runs in workers)."""


@dataclass(slots=True)
class Loaded(Pickled):
    """What a sync needs to know about one file it read."""

    path: str
    stat: FileStat | None  # None: the file is gone
    problem: Problem | None = None  # from reading (too large, unreadable, …)
    keep_rows: bool = False  # the file could not be observed: keep what the index has
    sha: str | None = None  # None: not read
    same: bool = False  # the bytes hash to the indexed sha256: nothing else was done
    decode_problem: Problem | None = None
    note: ParsedNote | None = None  # None: not text (binary), not parsed, or its rows built (`in_rows`)
    written: WrittenNote | None = None  # of `note`, what the derivers read; None: not parsed
    counts: tuple[tuple[Counter[str], int], ...] = ()  # per leaf: term counts, number of terms
    frontmatter_json: str = "{}"  # the `notes.frontmatter` value
    prepared: tuple[Any, ...] = ()  # per preparer: its result for the note
    in_rows: bool = False  # its rows are in the `Batch.rows` built where it was parsed (no `note`, `counts`)


@dataclass(slots=True)
class Batch:
    """The loaded files of one batch, in order, and the index rows of the parsed ones (`in_rows`)
    as Arrow tables, in the same order: built in the workers, they cross processes as a few
    buffers instead of millions of Python objects (the term counts of every leaf)."""

    loaded: list[Loaded] = field(default_factory=list)
    rows: list[dict[str, pa.Table]] = field(default_factory=list)


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
    try:
        note = parse_note(path, text, chunk_tokens=chunk_tokens)
        loaded.counts = note_term_counts(note)
        loaded.frontmatter_json = frontmatter_json(note)
        loaded.prepared = tuple(prepare(note, loaded.frontmatter_json) for prepare in preparers)
    except Exception as exc:  # one note the parser cannot take must not stop a sync or the watcher
        log.warning("could not parse %s", path, exc_info=True)
        loaded.counts, loaded.prepared = (), ()
        loaded.problem = Problem(
            path,
            "parse_error",
            f"vaultmind could not parse this note ({type(exc).__name__}: {exc}); what the index held "
            "for it is kept — please report this note's shape",
        )
        loaded.keep_rows = True
        return loaded
    loaded.note, loaded.written = note, WrittenNote.of(note)
    return loaded


def _recipient_name(recipient: str) -> str:
    person = parse_author(recipient)
    if person is None:
        return recipient
    return person.name or person.email.split("@", 1)[0] or recipient


def note_term_counts(note: ParsedNote) -> tuple[tuple[Counter[str], int], ...]:
    """Each leaf's search terms and their number: its text's, and for the first leaf also the
    words a note is named by outside its text — an email thread's subject (kept in the front
    matter, not in any message), the title of a note of yours whose first leaf does not open
    with it (as its heading, or as a properties leaf's first line) — so they find it. An email's
    leaf also has its recipients' names (of an address alone, the part before the "@")."""
    counts = [term_counts(leaf.text) for leaf in note.leaves]
    for k, leaf in enumerate(note.leaves):
        if leaf.to or leaf.cc:
            found, total = counts[k]
            extra, more = term_counts(" ".join(map(_recipient_name, (*leaf.to, *leaf.cc))))
            counts[k] = (found + extra, total + more)
    fm = note.frontmatter
    named = fm.get("subject") if note.kind == "source" and fm.get("kind") == "email" else None
    if note.kind == "user" and note.leaves:
        # not when the leaf opens with it: as its heading, or as a properties leaf's first line
        lead = note.leaves[0]
        opens = lead.heading_path[:1] == (note.title,) or lead.text.split("\n", 1)[0] == note.title
        named = None if opens else note.title
    if counts and isinstance(named, str) and named.strip():
        found, total = counts[0]
        extra, more = term_counts(named)
        counts[0] = (found + extra, total + more)
    return tuple(counts)


def _load_many(
    vault: Path,
    paths: Sequence[str],
    max_bytes: int,
    chunk_tokens: int,
    shas: Sequence[str | None],
    preparers: Sequence[Preparer],
    rows: bool = False,
) -> Batch:
    """`load_note` of each path; with `rows`, the rows of the parsed notes are built here too
    (`Batch.rows`), and their parsed notes and term counts dropped (`Loaded.written` stays)."""
    out = Batch([load_note(vault, p, max_bytes, chunk_tokens, s, preparers) for p, s in zip(paths, shas, strict=True)])
    if rows:
        buffers = RowBuffers()
        for item in out.loaded:
            if item.note is not None and item.stat is not None and item.sha is not None:
                buffers.add_note(item.note, item.stat, item.sha, item.counts, item.frontmatter_json)
                item.note, item.counts = None, ()
                item.in_rows = True
        out.rows.append(buffers.tables())
    return out


@dataclass(frozen=True, slots=True)
class _Task:
    number: int  # its flag in the claims array
    args: tuple[Path, list[str], int, int, list[str | None], tuple[Preparer, ...], bool]  # of `_load_many`
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
    batch = _load_many(*args)
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
    ):
        """`preparers()` is called for each batch, when its work is handed out (before the
        batch ahead of it is applied, when it is loaded in a worker). `spill_in` (a folder:
        the index's) is where the workers leave their results until their batch's turn."""
        self.vault = vault
        self.spill: Path | None = None
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
                preparers = self.preparers()
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
            args = (self.vault, paths, self.max_bytes, self.chunk_tokens, shas, preparers, True)
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
            done[index] = _load_many(*task.args)
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
        return load_note(self.vault, path, self.max_bytes, self.chunk_tokens, indexed.get(path), preparers)


# -- rows ---------------------------------------------------------------------------------

ROW_SCHEMAS: dict[str, pa.Schema] = {
    "notes": pa.schema(
        [
            ("path", pa.string()), ("kind", pa.string()), ("title", pa.string()), ("size", pa.int64()),
            ("mtime_ns", pa.int64()), ("sha256", pa.string()), ("source_id", pa.string()),
            ("source_kind", pa.string()), ("frontmatter", pa.string()), ("frontmatter_error", pa.string()),
            ("aliases", pa.list_(pa.string())), ("leaf_count", pa.int32()), ("note_no", pa.int64()),
            ("ctime_ns", pa.int64()), ("ino", pa.int64()),
        ]
    ),
    "leaves": pa.schema(
        [
            ("id", pa.string()), ("note_path", pa.string()), ("seq", pa.int32()), ("kind", pa.string()),
            ("text", pa.string()), ("content_hash", pa.string()), ("token_count", pa.int32()),
            ("term_count", pa.int32()), ("anchor", pa.string()), ("heading_path", pa.list_(pa.string())),
            ("message_id", pa.string()), ("author", pa.string()), ("ts", pa.timestamp("us")),
            ("source_ref", pa.string()), ("mail_to", pa.list_(pa.string())), ("mail_cc", pa.list_(pa.string())),
        ]
    ),
    # dictionary-encoded: a batch's ~500k postings repeat their terms and leaf ids (a worker's
    # result is a quarter the size in memory and through the pipe; DuckDB reads them as text)
    "postings": pa.schema(
        [("term", pa.dictionary(pa.int32(), pa.string())), ("leaf_id", pa.dictionary(pa.int32(), pa.string())),
         ("tf", pa.int32()), ("note_no", pa.int64())]
    ),
    "links": pa.schema(
        [
            ("src_path", pa.string()), ("target", pa.string()), ("kind", pa.string()), ("heading", pa.string()),
            ("block", pa.string()), ("alias", pa.string()), ("line", pa.int32()),
        ]
    ),
    "tags": pa.schema([("path", pa.string()), ("tag", pa.string())]),
    "problems": pa.schema([("path", pa.string()), ("kind", pa.string()), ("message", pa.string())]),
    "embeddings": pa.schema(
        [("content_hash", pa.string()), ("model", pa.string()), ("dim", pa.int32()), ("vec", pa.binary())]
    ),
}  # fmt: skip


def row_table(table: str, columns: dict[str, list[Any]]) -> pa.Table:
    """Column lists (`RowBuffers`) as an Arrow table of `ROW_SCHEMAS[table]`."""
    schema = ROW_SCHEMAS[table]
    return pa.table({name: columns[name] for name in schema.names}, schema=schema)


def _columns(table: str) -> dict[str, list[Any]]:
    return {name: [] for name in ROW_SCHEMAS[table].names}


class RowBuffers:
    """Column lists of the `notes`, `leaves`, `postings`, `links` and `tags` rows of notes.

    `note_no` (of notes and their postings) holds each note's place among the notes added here
    (0, 1, …); the applying process adds the index's next note number (`sync._Rows.insert`)."""

    def __init__(self) -> None:
        self.note = _columns("notes")
        self.leaf = _columns("leaves")
        # a posting's term and tf; its leaf id and note number are spread from `post_leaves`
        # (leaf id, note number, postings) when the table is built, not held per posting
        self.post: dict[str, list[Any]] = {"term": [], "tf": []}
        self.post_leaves: list[tuple[str, int, int]] = []
        self.link = _columns("links")
        self.tag = _columns("tags")

    def add_note(
        self,
        note: ParsedNote,
        st: FileStat,
        sha: str,
        leaf_counts: tuple[tuple[Counter[str], int], ...],
        frontmatter: str | None = None,
    ) -> None:
        fm = note.frontmatter
        source_id = fm.get("source_id") if note.kind == "source" else None
        source_kind = fm.get("kind") if note.kind == "source" else None
        values = {
            "path": note.path,
            "kind": note.kind,
            "title": note.title,
            "size": st.size,
            "mtime_ns": st.mtime_ns,
            "ctime_ns": st.ctime_ns,
            "ino": st.ino,
            "sha256": sha,
            "source_id": str(source_id) if source_id is not None else None,
            "source_kind": str(source_kind) if source_kind is not None else None,
            "frontmatter": frontmatter_json(note) if frontmatter is None else frontmatter,
            "frontmatter_error": note.frontmatter_error,
            "aliases": list(note.aliases),
            "leaf_count": len(note.leaves),
            "note_no": (note_no := len(self.note["path"])),
        }
        for key, value in values.items():
            self.note[key].append(value)
        leaves = note.leaves
        columns = self.leaf  # column by column: a note's leaves are many, their fields few
        columns["id"].extend([leaf.id for leaf in leaves])
        columns["note_path"].extend([note.path] * len(leaves))
        columns["seq"].extend([leaf.seq for leaf in leaves])
        columns["kind"].extend([leaf.kind for leaf in leaves])
        columns["text"].extend([leaf.text for leaf in leaves])
        columns["content_hash"].extend([leaf.content_hash for leaf in leaves])
        columns["token_count"].extend([leaf.token_count for leaf in leaves])
        columns["term_count"].extend([total for _, total in leaf_counts])
        columns["anchor"].extend([leaf.anchor for leaf in leaves])
        columns["heading_path"].extend([list(leaf.heading_path) for leaf in leaves])
        columns["message_id"].extend([leaf.message_id for leaf in leaves])
        columns["author"].extend([leaf.author for leaf in leaves])
        columns["ts"].extend([parse_ts(leaf.timestamp) for leaf in leaves])
        columns["source_ref"].extend([leaf.source_ref for leaf in leaves])
        columns["mail_to"].extend([list(leaf.to) or None for leaf in leaves])
        columns["mail_cc"].extend([list(leaf.cc) or None for leaf in leaves])
        for leaf, (counts, _) in zip(leaves, leaf_counts, strict=True):
            self.add_postings(leaf.id, counts, note_no)
        for link in note.links:
            for key, value in (
                ("src_path", note.path),
                ("target", link.target),
                ("kind", link.kind),
                ("heading", link.heading),
                ("block", link.block),
                ("alias", link.alias),
                ("line", link.line),
            ):
                self.link[key].append(value)
        for tag in note.tags:
            self.tag["path"].append(note.path)
            self.tag["tag"].append(tag)

    def add_postings(self, leaf_id: str, counts: Counter[str], note_no: int) -> None:
        leaf_terms = sorted(counts)
        self.post["term"].extend(leaf_terms)
        self.post["tf"].extend(map(counts.__getitem__, leaf_terms))
        self.post_leaves.append((leaf_id, note_no, len(leaf_terms)))

    def postings_table(self) -> pa.Table:
        """The `postings` rows: each leaf's id and note number repeated over its postings by
        numpy, its id dictionary-encoded by the leaf's place (no Python object per posting)."""
        leaf_ids, note_numbers, sizes = zip(*self.post_leaves, strict=True) if self.post_leaves else ((), (), ())
        repeats = np.array(sizes, np.int64)
        schema = ROW_SCHEMAS["postings"]
        return pa.table(
            {
                "term": pa.array(self.post["term"], schema.field("term").type),
                "leaf_id": pa.DictionaryArray.from_arrays(
                    np.repeat(np.arange(len(leaf_ids), dtype=np.int32), repeats), pa.array(leaf_ids, pa.string())
                ),
                "tf": pa.array(self.post["tf"], pa.int32()),
                "note_no": np.repeat(np.array(note_numbers, np.int64), repeats),
            },
            schema=schema,
        )

    def tables(self) -> dict[str, pa.Table]:
        """The rows as Arrow tables (tables without rows left out)."""
        out: dict[str, pa.Table] = {}
        for table, columns in (("notes", self.note), ("leaves", self.leaf), ("links", self.link), ("tags", self.tag)):
            if columns[ROW_SCHEMAS[table].names[0]]:
                out[table] = row_table(table, columns)
        if self.post["term"]:
            out["postings"] = self.postings_table()
        return {name: out[name] for name in ("notes", "leaves", "postings", "links", "tags") if name in out}


def parse_ts(value: str | None) -> datetime | None:
    """A leaf timestamp as naive UTC for a TIMESTAMP column (None if unparseable)."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed
