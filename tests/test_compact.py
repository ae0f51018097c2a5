"""Compaction of the index file (`index/compact.py`): a churned index copied into a new file of
about a fresh build's size, every table's rows kept, crash-safe at every step, queries
answered after; through the command line and the daemon's idle upkeep."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import vaultmind.index.compact as compact_module
from tests.conftest import run_main
from vaultmind.bench.synth import generate_vault
from vaultmind.config import Config, load_config
from vaultmind.index.compact import COPY_SUFFIX, waste
from vaultmind.index.connection import CARRIED_SETTINGS
from vaultmind.index.pool import size_bytes
from vaultmind.index.store import Index
from vaultmind.memory import Memory
from vaultmind.upkeep import IdleCompaction

ROOT = Path(__file__).resolve().parents[1]
WORDS = "river stone garden market winter budget meeting plan draft review harbour lantern".split()


def churned_vault(root: Path, notes: int = 120, rounds: int = 12, seed: int = 52) -> Config:
    """A synthetic vault indexed, then edited, renamed, deleted and added to round after round
    through the sync path a daemon uses; the index closed."""
    vault = root / "vault"
    generate_vault(vault, notes, seed=seed)
    (vault / ".vaultmind").mkdir(exist_ok=True)
    config = load_config(vault, embed_provider="static")
    rng = random.Random(seed)
    with Memory.open(config) as memory:
        memory.reindex()
        for n in range(rounds):
            files = sorted(p for p in vault.rglob("*.md") if ".vaultmind" not in p.parts)
            changed, gone = [], []
            for path in rng.sample(files, 8):
                words = " ".join(rng.choice(WORDS) for _ in range(12))
                path.write_text(path.read_text(encoding="utf-8") + f"\n\n{words.capitalize()}.\n", encoding="utf-8")
                changed.append(path.relative_to(vault).as_posix())
            moved = rng.choice([p for p in files if p.relative_to(vault).as_posix() not in changed])
            moved.rename(moved.with_name(f"renamed-{n}.md"))
            gone.append(moved.relative_to(vault).as_posix())
            changed.append(moved.with_name(f"renamed-{n}.md").relative_to(vault).as_posix())
            added = vault / "added" / f"note-{n}.md"
            added.parent.mkdir(exist_ok=True)
            added.write_text(f"# Added {n}\n\nThe {rng.choice(WORDS)} and the {rng.choice(WORDS)}.\n", encoding="utf-8")
            changed.append(added.relative_to(vault).as_posix())
            memory.sync_paths(changed, gone=gone)
        with memory.index.lock:  # the ner and LLM caches hold rows too, which a compaction keeps
            memory.index.con.execute(
                "INSERT INTO ner_cache VALUES (?, 'm', '[]')", ["a" * 64]
            )
            memory.index.con.execute(
                "INSERT INTO llm_cache VALUES ('admit', ?, 'm', 'abcdefabcdef', 'yes', 1)", ["b" * 64]
            )
    return config


def every_row(path: Path) -> dict[str, Any]:
    """Every table's rows (sorted), the sequences' values and the indexes, of the file at `path`."""
    import duckdb

    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
        found: dict[str, Any] = {t: con.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall() for t in tables}
        found["(sequences)"] = con.execute("SELECT sequence_name, last_value FROM duckdb_sequences() ORDER BY 1").fetchall()
        found["(indexes)"] = con.execute("SELECT index_name, sql FROM duckdb_indexes() ORDER BY 1").fetchall()
        return found
    finally:
        con.close()


@pytest.fixture(scope="module")
def churned(tmp_path_factory: pytest.TempPathFactory) -> Config:
    return churned_vault(tmp_path_factory.mktemp("churned"))


def copy_of(config: Config, tmp_path: Path) -> Config:
    """The churned vault copied (its index too), for a test to change."""
    import shutil

    target = tmp_path / "vault"
    shutil.copytree(config.vault, target)
    return load_config(target, embed_provider="static")


@pytest.mark.slow
def test_a_churned_index_compacts_to_about_a_fresh_builds_size_keeping_every_row(churned: Config, tmp_path: Path) -> None:
    config = copy_of(churned, tmp_path)
    before_rows = every_row(config.index_path)
    before = config.index_path.stat().st_size
    with Memory.open(config) as memory:
        asked = memory.search("budget meeting plan", limit=10)["hits"]
        done = memory.compact()
        assert memory.search("budget meeting plan", limit=10)["hits"] == asked  # queries work after, alike
    after = config.index_path.stat().st_size
    assert every_row(config.index_path) == before_rows
    with Memory.open(config) as memory:  # and writes do
        (config.vault / "added" / "after.md").write_text("# After\n\nThe zephyrquartz by the harbour.\n", encoding="utf-8")
        memory.sync_paths(["added/after.md"])
        assert memory.search("zephyrquartz", limit=3)["hits"][0]["content"].startswith("# After")
    assert done["before_bytes"] == before and done["after_bytes"] == after
    assert done["rows"]["embeddings"] > 0 and done["rows"]["ner_cache"] >= 1 and done["rows"]["llm_cache"] >= 1
    fresh_path = tmp_path / "fresh.duckdb"
    with Memory(config, Index.open(fresh_path), memory_embedder(config)) as fresh:
        fresh.reindex()
    fresh_size = fresh_path.stat().st_size
    assert before > 1.2 * fresh_size  # the churn left the file larger than a fresh build
    assert after <= 1.1 * fresh_size, (before, after, fresh_size)
    assert not Path(f"{config.index_path}{COPY_SUFFIX}").exists()


def memory_embedder(config: Config) -> Any:
    from vaultmind.embed.providers import create_embedder

    return create_embedder(config)


# where the child process ends itself, as a crash would, by the step it reached
CRASH = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from vaultmind.index.connection import connect
    from vaultmind.index.compact import compact

    path, at = Path(sys.argv[1]), int(sys.argv[2])

    def step(phase, done, total):
        if done == (at if at >= 0 else total + 1 + at):
            os._exit(3)

    compact(connect(path), path, lambda settings: None, step)
    os._exit(0)
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("at", [0, 1, -3, -2, -1])
def test_a_crash_at_any_step_of_a_compaction_loses_nothing(churned: Config, tmp_path: Path, at: int) -> None:
    """Where the child ends itself: before the first table's rows are copied (0), before the
    second's (1), once the copy is checked and flushed (-3), once the old file is closed, before
    the rename (-2), after the rename (-1, the last step)."""
    config = copy_of(churned, tmp_path)
    before_rows = every_row(config.index_path)
    run = subprocess.run([sys.executable, "-c", CRASH, str(config.index_path), str(at)], cwd=ROOT, timeout=300)
    assert run.returncode == 3
    with Memory.open(config) as memory:  # opens whichever file is complete; a stale copy is removed
        assert memory.search("budget", limit=3)["hits"]
    assert not Path(f"{config.index_path}{COPY_SUFFIX}").exists()
    assert every_row(config.index_path) == before_rows


def test_a_copy_left_by_a_crash_is_removed_by_the_next_compaction(tmp_path: Path, config: Config) -> None:
    stale = Path(f"{config.index_path}{COPY_SUFFIX}")
    with Memory.open(config) as memory:
        stale.write_bytes(b"not a database")
        Path(f"{stale}.wal").write_bytes(b"nor a log")
        memory.compact()
        assert not stale.exists() and not Path(f"{stale}.wal").exists()


def test_a_copy_that_differs_from_the_index_is_given_up_and_the_index_kept(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    (config.vault / "a.md").write_text("# A\n\nSome text about the harbour.\n", encoding="utf-8")
    with Memory.open(config) as memory:
        memory.sync()
        real = compact_module._write_copy

        def short(con: Any, copy: Path, tables: list[str], done: Any) -> None:
            real(con, copy, [t for t in tables if t != "leaves"], done)  # a copy that lacks a table's rows

        monkeypatch.setattr(compact_module, "_write_copy", short)
        with pytest.raises(RuntimeError, match="leaves"):
            memory.compact()
        assert memory.search("harbour", limit=3)["hits"]  # the index as it was, its connection open
        assert not Path(f"{config.index_path}{COPY_SUFFIX}").exists()


@pytest.mark.slow
def test_the_command_compacts_and_says_what_it_gave_back(
    churned: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = copy_of(churned, tmp_path)
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "static")
    code, out, _ = run_main(capsys, "compact", "--vault", str(config.vault), "--json")
    assert code == 0
    assert out["after_bytes"] < out["before_bytes"]
    assert out["rows"]["notes"] > 0


@pytest.mark.slow
def test_the_waste_measured_is_the_churn_and_a_fresh_copy_has_none(churned: Config, tmp_path: Path) -> None:
    """DuckDB keeps the deleted rows of a table with an index for good: the measure counts
    them out of what the file holds live, which comes out about a fresh copy's size."""
    config = copy_of(churned, tmp_path)
    with Memory.open(config) as memory:
        churn = waste(memory.index.con, config.index_path)
        memory.compact()
        fresh = waste(memory.index.con, config.index_path)
    assert churn.dead_bytes > 0 and fresh.dead_bytes == 0
    assert 0.8 < churn.live_bytes / fresh.live_bytes < 1.2, (churn, fresh)
    assert churn.ratio > 1.5 * fresh.ratio and fresh.ratio < 1.5, (churn, fresh)


@pytest.mark.slow
def test_the_idle_upkeep_compacts_a_wasteful_index_and_leaves_a_sound_one(
    churned: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vaultmind.upkeep as upkeep_module

    config = copy_of(churned, tmp_path)
    monkeypatch.setattr(upkeep_module, "WASTE_CHECK_S", 0.0)
    with Memory.open(config) as memory:
        compact_if_wasteful = IdleCompaction(memory)
        assert waste(memory.index.con, config.index_path).ratio > 1.5
        assert compact_if_wasteful() is None  # a small file: not worth it (`WORTH_MIN_BYTES`)
        monkeypatch.setattr(compact_module, "WORTH_MIN_BYTES", 0)
        monkeypatch.setattr(compact_module, "WORTH_RATIO", 1.5)
        done = compact_if_wasteful()
        assert done is not None and done["after_bytes"] < done["before_bytes"]
        assert compact_if_wasteful() is None  # compacted: nothing more to give back
        assert memory.search("budget", limit=3)["hits"]
    assert os.path.getsize(config.index_path) == done["after_bytes"]


def test_the_idle_upkeep_measures_the_waste_at_most_every_so_often(config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compact_module, "WORTH_MIN_BYTES", 0)
    monkeypatch.setattr(compact_module, "WORTH_RATIO", 0.0)  # every file worth compacting
    with Memory.open(config) as memory:
        compact_if_wasteful = IdleCompaction(memory)
        assert compact_if_wasteful() is not None
        assert compact_if_wasteful() is None  # measured a moment ago: not again before `WASTE_CHECK_S`


def test_a_rename_that_fails_leaves_the_index_in_place_and_open(config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    (config.vault / "a.md").write_text("# A\n\nSome text about the harbour.\n", encoding="utf-8")
    with Memory.open(config) as memory:
        memory.sync()

        def refused(src: object, dst: object) -> None:
            raise PermissionError(13, "Permission denied", str(dst))

        monkeypatch.setattr(compact_module.os, "replace", refused)
        with pytest.raises(PermissionError):
            memory.compact()
        monkeypatch.undo()
        assert memory.search("harbour", limit=3)["hits"]  # its connection open again, on the old file
        assert not Path(f"{config.index_path}{COPY_SUFFIX}").exists()
        (config.vault / "b.md").write_text("# B\n\nThe zephyrquartz.\n", encoding="utf-8")
        memory.sync_paths(["b.md"])
        assert memory.search("zephyrquartz", limit=3)["hits"]


@pytest.mark.slow
def test_the_command_goes_through_the_running_daemon_which_answers_after(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import running_daemon, until

    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    (vault / ".vaultmind").mkdir()
    (vault / "a.md").write_text("# A\n\nThe zephyrquartz by the harbour.\n", encoding="utf-8")
    with running_daemon(load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)) as (memory, _):
        code, out, _ = run_main(capsys, "compact", "--vault", str(vault), "--json")
        assert code == 0 and out["rows"]["notes"] == 1
        assert memory.search("zephyrquartz", limit=3)["hits"]
        (vault / "b.md").write_text("# B\n\nThe lanternfish.\n", encoding="utf-8")  # the watcher's save, on the new file
        assert until(lambda: memory.search("lanternfish", limit=3)["hits"])


def test_ids_a_sequence_gave_before_the_compaction_are_not_given_again(config: Config) -> None:
    """The work queue's job ids come from a sequence, used in this session before the
    compaction (a copied sequence shows one more as its last value than the index's)."""
    from vaultmind.queue.store import NewJob, enqueue, now_ms

    def queued(memory: Memory, key: str) -> None:
        with memory.index.transaction() as con:
            enqueue(con, [NewJob("admission", key, {"leaf": key})], now=now_ms())

    with Memory.open(config) as memory:
        queued(memory, "a")
        queued(memory, "b")
        before = memory.index.query("SELECT id FROM jobs")
        memory.compact()
        queued(memory, "c")
        after = memory.index.query("SELECT id FROM jobs")
    new = {r[0] for r in after} - {r[0] for r in before}
    assert len(before) == 2 and len(new) == 1 and min(new) > max(r[0] for r in before)


SHOWN = "SELECT " + ", ".join(f"current_setting('{name}')" for name in CARRIED_SETTINGS)


def test_a_serving_connections_settings_are_those_of_the_connection_to_the_compacted_file(config: Config) -> None:
    """A daemon's connection gives freed memory back to the system (`ServingPool.serve`); the
    connection to the compacted file, a new database, must too, and keep its pool and threads."""
    (config.vault / "a.md").write_text("# A\n\nSome text about the harbour.\n", encoding="utf-8")
    with Memory.open(config) as memory:
        memory.sync()
        memory.serving_pool.serve()
        memory.index.con.execute("SET memory_limit = '300MB'")
        memory.index.con.execute("SET threads = 1")
        before = memory.index.query(SHOWN)
        memory.compact()
        assert memory.index.query(SHOWN) == before
        assert memory.search("harbour", limit=3)["hits"]


def test_the_copy_is_written_under_a_small_pool_and_one_thread(config: Config) -> None:
    """Under the index's usual pool (512 MB) the copy of a 50k-note index took the process
    from 98 to 666 MB resident: a daemon would pass its 500 MB. The pool and threads are the
    connection's own again after, and after a copy given up."""
    (config.vault / "a.md").write_text("# A\n\nSome text about the harbour.\n", encoding="utf-8")
    seen: list[tuple[Any, ...]] = []
    with Memory.open(config) as memory:
        memory.sync()
        before = memory.index.query(SHOWN)

        def heard(phase: str, done: int, total: int) -> None:
            if done == 1:  # the first table copied, the second's rows next
                seen.extend(memory.index.con.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchall())

        memory.compact(heard)
        assert memory.index.query(SHOWN) == before
        [(limit, threads)] = seen
        assert size_bytes(limit) <= 64 * 10**6 and threads == 1, seen

        def fails(phase: str, done: int, total: int) -> None:
            if done == 1:
                raise RuntimeError("stopped")

        with pytest.raises(RuntimeError, match="stopped"):
            memory.compact(fails)
        assert memory.index.query(SHOWN) == before  # given up: the connection as it was
        assert memory.search("harbour", limit=3)["hits"]


# another process that holds the index file for a while (a command run without the daemon)
HOLD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from vaultmind.index.connection import connect

    con = connect(Path(sys.argv[1]))
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
    con.close()
    """
)


@pytest.mark.slow
def test_a_process_that_takes_the_file_before_it_is_opened_again_is_waited_for(config: Config) -> None:
    """Between the rename and the new connection another process can take the file: the
    index must get its connection back once it is let go, not be left with a closed one
    after a command's usual wait (`BUSY_WAIT_S`)."""
    from vaultmind.index.connection import BUSY_WAIT_S

    (config.vault / "a.md").write_text("# A\n\nSome text about the harbour.\n", encoding="utf-8")
    holders: list[subprocess.Popen[str]] = []
    with Memory.open(config) as memory:
        memory.sync()

        def take_the_file(phase: str, done: int, total: int) -> None:
            if done == total:  # renamed, not opened again yet
                hold = [sys.executable, "-c", HOLD, str(config.index_path), str(BUSY_WAIT_S + 2)]
                holders.append(subprocess.Popen(hold, cwd=ROOT, stdout=subprocess.PIPE, text=True))
                assert holders[0].stdout is not None and holders[0].stdout.readline().strip() == "held"

        memory.compact(take_the_file)
        holders[0].communicate(timeout=60)  # let go, its pipe closed
        assert holders[0].returncode == 0
        assert memory.search("harbour", limit=3)["hits"]
        (config.vault / "b.md").write_text("# B\n\nThe zephyrquartz.\n", encoding="utf-8")
        memory.sync_paths(["b.md"])
        assert memory.search("zephyrquartz", limit=3)["hits"]


def test_a_stopping_daemon_compacts_nothing_and_gives_up_a_compaction_under_way(config: Config) -> None:
    """A compaction requested while a sync runs waits for it; Ctrl-C ends the sync, and the
    compaction (up to a minute at 50k notes) would then hold the daemon's exit."""
    from vaultmind.errors import SyncStopped

    (config.vault / "a.md").write_text("# A\n\nSome text about the harbour.\n", encoding="utf-8")
    with Memory.open(config) as memory:
        memory.sync()
        memory.index.checkpoint()
        before = config.index_path.read_bytes()

        def stop_midway(phase: str, done: int, total: int) -> None:
            if done == 1:
                memory.stopping.set()

        with pytest.raises(SyncStopped):
            memory.compact(stop_midway)  # given up before the second table's rows
        with pytest.raises(SyncStopped):
            memory.compact()  # stopping: not begun
        assert IdleCompaction(memory)() is None
        assert not Path(f"{config.index_path}{COPY_SUFFIX}").exists()
        assert memory.search("harbour", limit=3)["hits"]
        assert config.index_path.read_bytes() == before  # the same file, untouched
