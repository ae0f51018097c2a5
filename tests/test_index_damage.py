"""An index file damaged past what its open reads (cut short, a garbled block) is moved aside
and rebuilt from the vault, as one that cannot be opened is; a write that fails or a lock held
elsewhere leaves the file where it is (real DuckDB files, real damage, real limits)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

import vaultmind
from tests.conftest import READY_S, end_process, run_main, running_daemon, until, write
from tests.damagekit import cut_after_metadata, garble_blocks_of
from vaultmind.config import load_config
from vaultmind.errors import IndexCorrupt
from vaultmind.index.damage import HEADER_BYTES, damaged
from vaultmind.index.store import Index
from vaultmind.memory import Memory

REPO = Path(vaultmind.__file__).resolve().parents[1]
NOTES = 40


def _indexed_vault(vault: Path) -> Path:
    """A vault of `NOTES` notes, indexed (twice, as a user's index has been rewritten); the
    index file's path."""
    for i in range(NOTES):
        write(vault, f"n{i}.md", f"# Note {i}\n\nword{i} shared text about Ada Lovelace and item {i}.\n" * 4)
    config = load_config(vault, embed_provider="none")
    for _ in range(2):
        with Memory.open(config) as memory:
            memory.reindex()
    return config.index_path


def test_an_index_cut_short_is_moved_aside_when_opened_and_rebuilt(vault: Path) -> None:
    path = _indexed_vault(vault)
    length = cut_after_metadata(path)
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        assert memory.index.quarantined is not None and "cut short" in memory.index.quarantined
        memory.sync()
        status = memory.status()
        assert status["index"]["health"] == "rebuilt"
        assert status["notes"]["total"] == NOTES
        assert memory.search("word7")["hits"][0]["note_path"] == "n7.md"
    assert (path.parent / "quarantine" / "index-1.duckdb").stat().st_size == length  # kept as it was


def test_a_sound_index_is_not_taken_for_one_cut_short(vault: Path) -> None:
    path = _indexed_vault(vault)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        assert memory.index.quarantined is None
    assert not (path.parent / "quarantine").exists()


def test_a_sound_index_duckdb_shrank_is_not_taken_for_one_cut_short(tmp_path: Path) -> None:
    """DuckDB cuts free blocks off the end of its file, yet its header still counts them
    (`total_blocks`): a sound index whose rows were many and then few (a large import deleted,
    a rebuild) can be shorter than that count, and must open as it is, vectors and all."""
    path = tmp_path / ".vaultmind" / "index.duckdb"
    with Index.open(path) as index, index.transaction() as con:
        index.set_meta(con, "probe", "kept")
    shorter = 0
    for step in ["CREATE TABLE bulky AS SELECT range AS i, repeat('y', 200) AS s FROM range(300000)",
                 "DELETE FROM bulky WHERE i % 2 = 0", "DROP TABLE bulky"] * 2:  # fmt: skip
        with Index.open(path) as index:
            assert index.quarantined is None and index.get_meta("probe") == "kept", step
            with index.transaction() as con:
                con.execute(step)
        con = duckdb.connect(str(path))
        block_size, total = con.execute("SELECT block_size, total_blocks FROM pragma_database_size()").fetchone()  # type: ignore[misc]
        con.close()
        shorter += path.stat().st_size < HEADER_BYTES + block_size * total
    assert shorter, "the case met: a file shorter than the blocks its header counts"
    with Index.open(path) as index:
        assert index.quarantined is None and index.get_meta("probe") == "kept"
    assert not (path.parent / "quarantine").exists()


def test_a_damaged_block_a_command_meets_moves_the_file_aside_once(
    cli_vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command that meets the damage says so in a line (no traceback) and where the file
    went; the next one runs on a fresh index, rebuilt from the vault, and status reports it once."""
    path = _indexed_vault(cli_vault)
    run_main(capsys, "sync", "--vault", str(cli_vault))  # the entity note the reindex wrote, indexed too
    _, status, _ = run_main(capsys, "status", "--vault", str(cli_vault), "--json")
    indexed = status["notes"]["total"]
    garble_blocks_of(path, "notes")

    code, _, err = run_main(capsys, "sync", "--vault", str(cli_vault))
    assert code == 1
    assert "the index file was damaged" in err and "Corrupt database file" in err
    assert "run the same command again" in err and "Traceback" not in err
    assert (path.parent / "quarantine" / "index-1.duckdb").exists()

    code, out, _ = run_main(capsys, "sync", "--vault", str(cli_vault))
    assert code == 0, out
    code, status, _ = run_main(capsys, "status", "--vault", str(cli_vault), "--json")
    assert status["index"]["health"] == "rebuilt" and "index file was damaged" in status["index"]["notice"]
    assert status["notes"]["total"] == indexed
    code, status, _ = run_main(capsys, "status", "--vault", str(cli_vault), "--json")
    assert status["index"]["health"] == "ok", "reported once"
    assert sorted(p.name for p in (path.parent / "quarantine").glob("*.duckdb")) == ["index-1.duckdb"]


@pytest.mark.slow
def test_a_daemon_on_a_damaged_file_moves_it_aside_and_serves_a_rebuilt_index(vault: Path) -> None:
    path = _indexed_vault(vault)
    garble_blocks_of(path, "notes")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    with running_daemon(config) as (memory, _):
        until(lambda: memory.index.scalar("SELECT count(*) FROM notes") == NOTES, READY_S)
        assert memory.search("word7")["hits"][0]["note_path"] == "n7.md"
        assert memory.index.replaced == 1, "moved aside once, not at every retry"
        assert (path.parent / "quarantine" / "index-1.duckdb").exists()


def test_nested_guards_move_a_damaged_file_aside_once(vault: Path) -> None:
    path = _indexed_vault(vault)
    garble_blocks_of(path, "leaves")
    with Index.open(path) as index:
        with pytest.raises(IndexCorrupt), index.replaced_when_broken(), index.transaction() as con:
            con.execute("SELECT sum(length(text)) FROM leaves").fetchall()
        assert index.replaced == 1
        assert index.scalar("SELECT count(*) FROM leaves") == 0  # the fresh index answers
    assert sorted(p.name for p in (path.parent / "quarantine").glob("*.duckdb")) == ["index-1.duckdb"]


# Fills the index past a file size limit (a full disk's write error, as DuckDB meets it), then
# prints whether that error counted as damage and whether the file was moved.
WRITE_PAST_LIMIT = """
import os, resource, signal, sys
from pathlib import Path
from vaultmind.index.store import Index, damaged

path = Path(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (path.stat().st_size + 300_000, resource.RLIM_INFINITY))
index = Index.open(path)
try:
    with index.transaction() as con:
        con.execute("CREATE TABLE big AS SELECT i, repeat('x', 200) || i AS t FROM range(400000) r(i)")
    index.checkpoint()
    print("no error")
except Exception as exc:
    print("error:", str(exc).splitlines()[0])
    print("damaged:", damaged(exc, path))
print("replaced:", index.replaced)
"""


def test_a_write_that_fails_leaves_the_index_where_it_is(tmp_path: Path) -> None:
    path = tmp_path / ".vaultmind" / "index.duckdb"
    Index.open(path).close()
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(WRITE_PAST_LIMIT), str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert "error: IO Error: Could not write file" in done.stdout, done.stdout + done.stderr
    assert "damaged: False" in done.stdout and "replaced: 0" in done.stdout
    assert path.exists() and not (path.parent / "quarantine").exists()


def test_a_lock_held_by_another_process_is_not_damage(tmp_path: Path) -> None:
    path = tmp_path / ".vaultmind" / "index.duckdb"
    Index.open(path).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, time; c = duckdb.connect({str(path)!r}); print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(duckdb.IOException) as raised:
            duckdb.connect(str(path))
        assert "lock" in str(raised.value) and not damaged(raised.value, path)
    finally:
        end_process(holder)
    assert path.exists() and not (path.parent / "quarantine").exists()


def test_a_short_read_of_another_file_is_not_damage_to_the_index(tmp_path: Path) -> None:
    path = tmp_path / ".vaultmind" / "index.duckdb"
    other = duckdb.IOException(
        f'IO Error: Could not read enough bytes from file "{path.parent / "spill.tmp"}"'
    )
    ours = duckdb.IOException(
        f'IO Error: Could not read enough bytes from file "{path}": attempted to read 262144'
    )
    wal = duckdb.IOException(
        f'IO Error: Could not read enough bytes from file "{path}.wal": attempted to read 8'
    )
    assert not damaged(other, path) and damaged(ours, path) and not damaged(wal, path)


@pytest.mark.parametrize("text", ["Corrupt database file", "database has been invalidated"])
def test_an_error_quoting_a_users_text_is_not_damage(tmp_path: Path, text: str) -> None:
    """DuckDB quotes values in its errors ("Could not convert string '…'"): a note's or a
    question's text that reads like damage must not move a sound index aside (its vectors and
    the rows of every note would be lost to a rebuild)."""
    path = tmp_path / ".vaultmind" / "index.duckdb"
    with Index.open(path) as index:
        with index.transaction() as con:
            index.set_meta(con, "probe", "kept")
        with pytest.raises(duckdb.ConversionException):
            index.query("SELECT CAST(? AS INTEGER)", [f"{text}: a note's words"])
        assert index.replaced == 0 and index.get_meta("probe") == "kept"
    assert not (path.parent / "quarantine").exists()
