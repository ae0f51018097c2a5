"""A large sync (a cold reindex) keeps its memory bounded: rows are built where notes are
parsed, only about two batches are alive at a time, DuckDB's buffer pool is lowered for the
sync (and put back, also when a batch needs more), and the rows are those of parsing here."""

from __future__ import annotations

import gc
import multiprocessing
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from vaultmind import sync_load
from vaultmind.config import Config, load_config
from vaultmind.index import lexical
from vaultmind.index.connection import other_connection
from vaultmind.index.pool import SYNC_MEMORY_LIMIT, size_bytes
from vaultmind.index.resident import ChangeSet
from vaultmind.index.store import DEFERRED_CHECKPOINT, REBUILD_UNDER_WAY, Index
from vaultmind.memory import Memory
from vaultmind.model import FileStat, ParsedNote
from vaultmind.sync_load import Loader
from vaultmind.sync_note import Batch, Loaded, load_note
from vaultmind.sync_rows import RowBuffers

from .conftest import dump_index, until, write


def _notes(vault: Path, count: int) -> None:
    write(vault, "Projects/Atlas.md", "---\ntags: [project]\naliases: [Atlas]\n---\n# Atlas\n\nSee [[Budget]].\n")
    write(vault, "Budget.md", "# Budget\n\n## Q3\n\nWe spend 40k on servers. ^q3\n")
    for i in range(count):
        write(vault, f"More/n{i:02d}.md", f"# N{i}\n\nAlice met Bob about the budget, item {i}. #tag{i % 3}\n\n- a list {i}\n")


class _Probe:
    """A deriver that records, at each apply, DuckDB's memory limit and the `Loaded` objects alive."""

    name = "probe"

    def __init__(self, fail_once: bool = False):
        self.limits: list[str] = []
        self.thresholds: list[str] = []
        self.alive: list[int] = []
        self.fail_once = fail_once

    def apply(
        self,
        con: duckdb.DuckDBPyConnection,
        removed_leaf_ids: Sequence[str],
        written: Sequence[ParsedNote],
        *,
        rebuild: bool,
        changed_paths: Sequence[str] = (),
    ) -> None:
        self.limits.append(str(con.execute("SELECT current_setting('memory_limit')").fetchone()[0]))  # type: ignore[index]
        self.thresholds.append(str(con.execute("SELECT current_setting('checkpoint_threshold')").fetchone()[0]))  # type: ignore[index]
        self.alive.append(sum(1 for o in gc.get_objects() if isinstance(o, Loaded)))
        if self.fail_once:
            self.fail_once = False
            raise duckdb.OutOfMemoryException("Out of Memory Error: could not allocate block (test)")


def _same(limit: object, other: str) -> bool:
    """Equal memory limits (DuckDB shows them rounded to 0.1 MiB)."""
    return abs(size_bytes(str(limit)) - size_bytes(other)) <= 0.11 * 2**20


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _pooled(memory: Memory, batch: int) -> None:
    memory.syncer.workers = 1
    memory.syncer.pool_min_files = 1
    memory.syncer.apply_batch = batch
    memory.syncer.sync_memory_limit = SYNC_MEMORY_LIMIT  # off by default (see index/pool.py)


def _rows_in_process(config: Config, tmp_path: Path) -> dict[str, list[tuple[object, ...]]]:
    """The rows of a reindex that parses in this process: what a pooled one must equal."""
    with Memory(config, Index.open(tmp_path / "one.duckdb"), None) as one:
        one.syncer.workers = 0
        one.reindex()
        return dump_index(one)


@pytest.mark.slow
def test_pooled_reindex_rows_equal_in_process_and_memory_is_bounded(vault: Path, tmp_path: Path) -> None:
    _notes(vault, 18)
    config = load_config(vault, embed_provider="none")
    expected = _rows_in_process(config, tmp_path)
    with Memory(config, Index.open(tmp_path / "pool.duckdb"), None) as pooled:
        _pooled(pooled, 4)
        probe = _Probe()
        pooled.syncer.derivers = (*pooled.syncer.derivers, probe)
        changes: list[ChangeSet] = []
        pooled.syncer.listeners.append(changes.append)
        before = str(pooled.index.scalar("SELECT current_setting('memory_limit')"))
        stats = pooled.reindex()
        assert stats.added == 20
        assert dump_index(pooled) == expected
        assert not list(tmp_path.glob("parsed-*"))  # the workers' results were read and removed
        assert dump_index(pooled) == dump_index(pooled)  # stable
        # DuckDB's buffer pool was lowered for the sync, and is back afterwards
        assert probe.limits and all(size_bytes(limit) <= size_bytes(SYNC_MEMORY_LIMIT) for limit in probe.limits)
        assert _same(pooled.index.scalar("SELECT current_setting('memory_limit')"), before)
        # at most the batch being applied and the one being loaded are alive (batches of 4)
        assert len(probe.alive) == 5 and max(probe.alive) <= 2 * 4
        # rows built by the workers carry no term counts: resident structures reload
        assert all(change.reset for change in changes)
    gc.collect()
    assert not [o for o in gc.get_objects() if isinstance(o, Loaded)]


@pytest.mark.slow
def test_a_batch_out_of_memory_under_the_lowered_limit_is_retried_with_the_old_one(
    vault: Path, tmp_path: Path
) -> None:
    _notes(vault, 6)
    config = load_config(vault, embed_provider="none")
    expected = _rows_in_process(config, tmp_path)
    with Memory(config, Index.open(tmp_path / "pool.duckdb"), None) as pooled:
        _pooled(pooled, 3)
        probe = _Probe(fail_once=True)
        pooled.syncer.derivers = (*pooled.syncer.derivers, probe)
        before = str(pooled.index.scalar("SELECT current_setting('memory_limit')"))
        stats = pooled.reindex()
        assert stats.added == 8
        assert dump_index(pooled) == expected
        # first try under the lowered limit, the retry with the old one, the next batches lowered again
        assert size_bytes(probe.limits[0]) <= size_bytes(SYNC_MEMORY_LIMIT)
        assert _same(probe.limits[1], before)
        assert probe.limits[2:] and all(size_bytes(limit) <= size_bytes(SYNC_MEMORY_LIMIT) for limit in probe.limits[2:])
        assert _same(pooled.index.scalar("SELECT current_setting('memory_limit')"), before)


@pytest.mark.slow
def test_a_pooled_sync_checkpoints_after_each_batch_and_puts_the_settings_back(vault: Path, tmp_path: Path) -> None:
    _notes(vault, 8)
    config = load_config(vault, embed_provider="none")
    path = tmp_path / "pool.duckdb"
    wal = path.with_name(path.name + ".wal")
    with Memory(config, Index.open(path), None) as pooled:
        _pooled(pooled, 3)
        pooled.syncer.sync_memory_limit = None  # as shipped

        class _Wal(_Probe):
            """Also records the WAL's size at the start of each batch."""

            sizes: list[int]

            def apply(self, con: duckdb.DuckDBPyConnection, *args: object, **kwargs: object) -> None:
                self.sizes.append(_size(wal))
                super().apply(con, *args, **kwargs)  # type: ignore[arg-type]

        probe = _Wal()
        probe.sizes = []
        pooled.syncer.derivers = (*pooled.syncer.derivers, probe)
        before = {
            name: str(pooled.index.scalar(f"SELECT current_setting('{name}')"))
            for name in ("memory_limit", "checkpoint_threshold")
        }
        assert pooled.reindex().added == 10
        # commits do not checkpoint by themselves during the sync: it checkpoints after each batch
        assert len(probe.thresholds) == 4
        assert all(_same(t, DEFERRED_CHECKPOINT) or size_bytes(t) >= 2**39 for t in probe.thresholds)
        assert probe.sizes[1:] == [0, 0, 0]  # each batch starts after the last was checkpointed
        assert _size(wal) == 0
        for name, value in before.items():
            assert _same(pooled.index.scalar(f"SELECT current_setting('{name}')"), value)
        assert not pooled.index.get_meta("suspended_indexes")


def test_an_evicting_checkpoint_writes_the_wal_and_leaves_a_small_pool(tmp_path: Path) -> None:
    path = tmp_path / "index.duckdb"
    wal = path.with_name(path.name + ".wal")
    with Index.open(path) as index:
        with index.lock:
            index.con.execute("SET checkpoint_threshold = '1GB'")
            index.con.execute("CREATE TABLE t AS SELECT 'key-' || i AS k FROM range(600000) r(i)")
            index.con.execute("CREATE INDEX t_k ON t (k)")  # in memory until a checkpoint
        limit = str(index.scalar("SELECT current_setting('memory_limit')"))
        pool = int(index.scalar("SELECT sum(memory_usage_bytes) FROM duckdb_memory()"))
        assert _size(wal) > 0 and pool > 16 * 2**20
        index.checkpoint(evict=True)
        assert _size(wal) == 0  # written into the file
        assert int(index.scalar("SELECT sum(memory_usage_bytes) FROM duckdb_memory()")) <= 16 * 2**20
        assert _same(index.scalar("SELECT current_setting('memory_limit')"), limit)
        assert index.scalar("SELECT count(*) FROM t WHERE k = 'key-123'") == 1


def test_an_out_of_memory_without_a_lowered_limit_is_raised(vault: Path, tmp_path: Path) -> None:
    _notes(vault, 2)
    config = load_config(vault, embed_provider="none")
    with Memory(config, Index.open(tmp_path / "one.duckdb"), None) as one:
        one.syncer.workers = 0
        one.syncer.derivers = (*one.syncer.derivers, _Probe(fail_once=True))
        with pytest.raises(duckdb.OutOfMemoryException):
            one.reindex()


@pytest.mark.slow
def test_workers_build_the_rows_of_the_notes_they_parse(vault: Path, tmp_path: Path) -> None:
    """…and leave them in files of the index's folder until their batch's turn (a folder a
    killed sync left there is removed)."""
    _notes(vault, 5)
    write(vault, "binary.md", "\x00\x01 not text")
    paths = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    config = load_config(vault, embed_provider="none")
    stale = tmp_path / "parsed-killed"
    stale.mkdir()
    (stale / "3.pickle").write_bytes(b"left by a killed sync")
    with Loader(
        vault, config.max_file_bytes, config.chunk_tokens, workers=1, files=len(paths), min_files=1, spill_in=tmp_path
    ) as loader:
        assert loader.pool is not None and loader.spill is not None and loader.spill.parent == tmp_path
        assert not stale.exists()
        batches = list(loader.batches([paths[:4], paths[4:]], {}))
    assert not list(tmp_path.glob("parsed-*"))
    assert [b.__class__ for b in batches] == [Batch, Batch]
    loaded = [item for batch in batches for item in batch.loaded]
    assert [item.path for item in loaded] == paths
    parsed = [item for item in loaded if item.written is not None]
    assert len(parsed) == len(paths) - 1 and all(item.in_rows and not item.counts for item in parsed)
    assert all(item.note is None for item in loaded)  # their rows came, not their parsed notes
    # a result crosses as (class, fields): unpickling calls the constructor
    assert all(item.__reduce__()[0] is Loaded and item.stat.__reduce__()[0] is FileStat for item in parsed)
    # the same rows as building them here, from notes loaded here
    here = RowBuffers()
    for path in paths:
        item = load_note(vault, path, config.max_file_bytes, config.chunk_tokens, None)
        if item.note is not None:
            assert item.stat is not None and item.sha is not None
            here.add_note(item.note, item.stat, item.sha, item.counts, item.frontmatter_json)
    expected = here.tables()

    def unnumbered(table: pa.Table) -> list[dict[str, object]]:  # note numbers are per set of rows
        return table.drop_columns(["note_no"]).to_pylist() if "note_no" in table.column_names else table.to_pylist()

    for table, data in expected.items():
        parts = [chunk[table] for batch in batches for chunk in batch.rows if table in chunk]
        got = [row for part in parts for row in unnumbered(part)]
        assert got == unnumbered(data), table
    for chunk in (chunk for batch in batches for chunk in batch.rows):
        assert chunk["notes"].column("note_no").to_pylist() == list(range(chunk["notes"].num_rows))
        assert set(chunk["postings"].column("note_no").to_pylist()) <= set(range(chunk["notes"].num_rows))


def test_a_pooled_load_runs_the_collector_less_often(vault: Path) -> None:
    """While notes are parsed in a pool, the youngest generation is collected every
    `LOAD_GC_THRESHOLD` allocations, in the workers (which also freeze what they imported)
    and in this process; this process's pace is restored after."""
    _notes(vault, 3)
    config = load_config(vault, embed_provider="none")
    kept = gc.get_threshold()  # a serving memory opened by another test may have raised it
    gc.set_threshold(700, 10, 10)  # Python's default
    try:
        with Loader(vault, config.max_file_bytes, config.chunk_tokens, workers=1, files=3, min_files=1) as loader:
            assert loader.pool is not None
            assert gc.get_threshold() == (sync_load.LOAD_GC_THRESHOLD, 10, 10)
            assert loader.pool.submit(gc.get_threshold).result()[0] == sync_load.LOAD_GC_THRESHOLD
            assert loader.pool.submit(gc.get_freeze_count).result() > 0
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*kept)


def test_term_counts_are_those_of_terms_when_the_word_cache_overflows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lexical._TERMS_OF, "limit", 8)
    lexical._TERMS_OF.clear()
    texts = [
        "The painters painted paintings of the harbours; the harbour's boats",
        "東京の天気 and Alice's cats, cats and more cats",
        " ".join(f"word{i} thing{i % 5}" for i in range(40)),
        "",
    ]
    for text in texts * 2:
        counts, total = lexical.term_counts(text)
        assert counts == Counter(lexical.terms(text))
        assert total == len(lexical.terms(text))
        assert len(lexical._TERMS_OF) <= 8 + 80  # cleared when full: the words of one text at most past it
    lexical._TERMS_OF.clear()


@pytest.mark.parametrize(
    ("text", "expected"),
    [("128MB", 128e6), ("488.2 MiB", 488.2 * 2**20), ("1.5 GiB", 1.5 * 2**30), ("0 bytes", 0.0), ("lots", float("inf"))],
)
def test_size_bytes(text: str, expected: float) -> None:
    assert size_bytes(text) == pytest.approx(expected)


def test_tree_measure_counts_the_child_processes(tmp_path: Path) -> None:
    """The bench's peak RSS of a reindex covers its worker processes: summed over the tree, and
    the largest single process."""
    from vaultmind.bench.processes import run_tree_measured

    child = "import time; x = bytearray(60_000_000); x[::4096] = b'1' * len(x[::4096]); time.sleep(0.6)"
    parent = (
        "import subprocess, sys, time; "
        f"p = subprocess.Popen([sys.executable, '-c', {child!r}]); "
        "y = bytearray(30_000_000); y[::4096] = b'1' * len(y[::4096]); p.wait(); print('ok')"
    )
    run = run_tree_measured([sys.executable, "-c", parent], {}, None)
    assert run.code == 0 and run.stdout.strip() == b"ok"
    assert run.peak_max >= 60_000_000
    assert run.peak_sum >= 85_000_000  # both processes at once
    assert run.cpu_s >= 0 and run.seconds > 0.5


def test_a_sync_keeps_the_index_memory_limit_by_default(vault: Path) -> None:
    # Lowering it for writes is off: DuckDB 1.5 can fail to roll back a write that ran out of memory.
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        assert memory.syncer.sync_memory_limit is None


def _bulk(memory: Memory) -> None:
    memory.syncer.workers = 0
    memory.syncer.apply_batch = 3
    memory.syncer.bulk_files = 1  # a whole-vault load of any size is a bulk load


def test_a_bulk_load_commits_its_rows_into_the_file_not_the_wal(tmp_path: Path) -> None:
    """The bulk commit checkpoints, even while commits leave checkpoints to the sync: the rows
    go straight into the file. `before_commit` runs before anything is visible to others."""
    index = Index.open(tmp_path / "index.duckdb")
    index.checkpoint()
    wal = tmp_path / "index.duckdb.wal"
    seen: list[int] = []

    def before_commit() -> None:
        with other_connection(index.con) as other:
            seen.append(int(other.execute("SELECT count(*) FROM tags").fetchone()[0]))  # type: ignore[index]

    with index.deferred_checkpoints():
        with index.bulk(before_commit):
            # fewer rows than a row group: until now they went into the WAL at the commit
            index.con.execute("INSERT INTO tags SELECT 'note-' || i || '.md', 'tag-' || (i % 97) FROM range(100000) r(i)")
            assert not wal.exists() or wal.stat().st_size == 0  # nothing committed yet
        assert not wal.exists() or wal.stat().st_size == 0
        assert size_bytes(index.scalar("SELECT current_setting('checkpoint_threshold')")) >= size_bytes(DEFERRED_CHECKPOINT) * 0.9
        index.con.execute("INSERT INTO tags VALUES ('one.md', 'one')")  # a small commit: into the WAL, as before
        assert wal.stat().st_size > 0
    assert seen == [0] and index.scalar("SELECT count(*) FROM tags") == 100_001
    index.close()


class _Fails(_Probe):
    """A deriver that raises at its `at`-th apply."""

    def __init__(self, at: int):
        super().__init__()
        self.at = at

    def apply(self, con: duckdb.DuckDBPyConnection, *args: object, **kwargs: object) -> None:
        super().apply(con, *args, **kwargs)  # type: ignore[arg-type]
        if len(self.alive) == self.at:
            raise RuntimeError("disk full (test)")


def test_a_bulk_load_is_one_transaction_seen_by_others_only_once_committed(vault: Path, tmp_path: Path) -> None:
    _notes(vault, 7)
    config = load_config(vault, embed_provider="none")
    with Memory(config, Index.open(tmp_path / "index.duckdb"), None) as memory:
        _bulk(memory)
        seen: list[tuple[int, int]] = []

        def outside() -> int:  # what another connection to the same database sees
            with other_connection(memory.index.con) as other:
                return int(other.execute("SELECT count(*) FROM notes").fetchone()[0])  # type: ignore[index]

        def count(_change: ChangeSet) -> None:
            seen.append((int(memory.index.scalar("SELECT count(*) FROM notes")), outside()))

        memory.syncer.listeners.append(count)
        assert memory.reindex().added == 9
        assert seen == [(3, 0), (6, 0), (9, 0)]  # the load's own batches, none of them visible outside
        assert outside() == 9
        assert memory.index.get_meta("suspended_indexes") is None


def test_a_load_that_fails_midway_commits_nothing_and_the_next_sync_completes_it(vault: Path, tmp_path: Path) -> None:
    _notes(vault, 7)
    config = load_config(vault, embed_provider="none")
    with Memory(config, Index.open(tmp_path / "index.duckdb"), None) as memory:
        _bulk(memory)
        indexes = memory.index.query("SELECT index_name FROM duckdb_indexes() ORDER BY 1")
        derivers = memory.syncer.derivers
        memory.syncer.derivers = (*derivers, _Fails(at=2))
        with pytest.raises(RuntimeError, match="disk full"):
            memory.sync()
        assert memory.index.scalar("SELECT count(*) FROM notes") == 0  # the first batch was never committed
        assert memory.index.query("SELECT index_name FROM duckdb_indexes() ORDER BY 1") == indexes
        assert memory.index.get_meta("suspended_indexes") is None
        memory.syncer.derivers = derivers
        assert memory.sync().added == 9


def test_a_rebuild_that_fails_midway_is_completed_by_the_next_sync(vault: Path, tmp_path: Path) -> None:
    _notes(vault, 7)
    config = load_config(vault, embed_provider="none")
    with Memory(config, Index.open(tmp_path / "index.duckdb"), None) as memory:
        _bulk(memory)
        memory.reindex()
        write(vault, "More/late.md", "# Late\n\nA note written after the first index.\n")
        derivers = memory.syncer.derivers
        memory.syncer.derivers = (*derivers, _Fails(at=2))
        with pytest.raises(RuntimeError, match="disk full"):
            memory.reindex()
        assert memory.index.get_meta("needs_rebuild") == REBUILD_UNDER_WAY  # status says it was cut short
        assert memory.index.get_meta("suspended_indexes") is None
        memory.syncer.derivers = derivers
        assert memory.sync().added == 10  # a rebuild, since the index is marked for one
        assert memory.index.get_meta("needs_rebuild") is None
        synced = dump_index(memory)
        memory.reindex()
        assert dump_index(memory) == synced


def test_a_rebuild_whose_pool_cannot_be_emptied_still_completes(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Emptying DuckDB's pool after each batch lowers its limit for a moment; when pinned memory
    does not fit (a rebuild's deletes pin theirs until the commit), that SET fails. It must not
    fail the load's one transaction with it."""
    from vaultmind.index import store

    _notes(vault, 7)
    config = load_config(vault, embed_provider="none")
    with Memory(config, Index.open(tmp_path / "index.duckdb"), None) as memory:
        _bulk(memory)
        memory.reindex()
        expected = dump_index(memory)
        limit = str(memory.index.scalar("SELECT current_setting('memory_limit')"))
        monkeypatch.setattr(store, "EVICT_LIMIT", "1KB")  # below anything pinned
        assert memory.reindex().added == 9
        assert dump_index(memory) == expected
        assert _same(memory.index.scalar("SELECT current_setting('memory_limit')"), limit)


def test_a_worker_result_goes_to_disk_or_else_through_the_pipe(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker writes its result to the spill folder and hands over the file's path, which
    reads back as the same notes (and is then removed); one that cannot write it (its folder
    gone, a full disk) hands over the result itself."""
    _notes(vault, 3)
    paths = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    config = load_config(vault, embed_provider="none")
    monkeypatch.setattr(sync_load, "_CLAIMS", multiprocessing.get_context("spawn").Array("b", 4))
    args = (vault, paths, config.max_file_bytes, config.chunk_tokens, [None] * len(paths), (), True)
    spilled = sync_load._load_task(0, str(tmp_path), *args)
    assert isinstance(spilled, str) and Path(spilled).parent == tmp_path
    batch = sync_load._unspill(spilled)
    assert [item.path for item in batch.loaded] == paths and not Path(spilled).exists()
    direct = sync_load._load_task(1, str(tmp_path / "gone"), *args)
    assert isinstance(direct, Batch) and [item.path for item in direct.loaded] == paths
    assert sync_load._load_task(1, str(tmp_path), *args) is None  # taken already: never run twice


@pytest.mark.slow
def test_the_parse_workers_end_when_their_process_is_killed(tmp_path: Path) -> None:
    """A sync killed with -9 (or by the OOM killer) mid-load must not leave its parse workers
    waiting for work forever, each holding its memory: they notice they lost their parent."""
    vault = tmp_path / "vault"
    _notes(vault, 3)
    script = (
        "import os, sys, time\n"
        "from pathlib import Path\n"
        "from vaultmind.sync_load import Loader\n"
        f"loader = Loader(Path({str(vault)!r}), 1 << 20, 400, workers=2, files=3, min_files=1)\n"
        "assert loader.pool is not None\n"
        "pids = sorted({loader.pool.submit(os.getpid).result() for _ in range(8)})\n"
        "print(' '.join(map(str, pids)), flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    workers = [int(pid) for pid in parent.stdout.readline().split()]
    assert workers and all(_alive(pid) for pid in workers)
    parent.kill()
    parent.wait(10)
    parent.stdout.close()
    until(lambda: not any(_alive(pid) for pid in workers))
    assert not any(_alive(pid) for pid in workers), "a worker outlived its killed parent"


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie, ended but not yet reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status
