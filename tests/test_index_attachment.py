"""The index file is attached once per process and let go when no connection to it is left
(`connection.open_index`): as a file opened by `duckdb.connect` was, a connection dropped
without being closed lets it go too, and a file reached by another path to it is the same
attachment. On real DuckDB files; "let go" checked by a plain open of the file, which DuckDB
refuses while the file is attached in this process."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import duckdb
import pytest

from vaultmind.config import load_config
from vaultmind.errors import IndexBusy, VaultmindError
from vaultmind.index.connection import close_index, open_index
from vaultmind.index.store import Index
from vaultmind.memory import Memory


def _let_go(path: Path) -> list[str]:
    """The tables of the file at `path`, read by a plain open: fails while it is attached here."""
    con = duckdb.connect(str(path))
    try:
        return [name for (name,) in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
    finally:
        con.close()


def test_a_connection_dropped_without_closing_lets_the_file_go(tmp_path: Path) -> None:
    """A connection an error path drops (a constructor raising after the open) is let go by the
    garbage collector, as a dropped `duckdb.connect` connection was: kept attached, the file's
    lock would stay held by a long-lived process (the MCP server) and every other waits."""
    path = tmp_path / "index.duckdb"
    con = open_index(path)
    con.execute("CREATE TABLE kept (a INTEGER)")
    del con
    gc.collect()
    assert _let_go(path) == ["kept"]


def test_a_dropped_connection_leaves_the_others_to_the_file_open(tmp_path: Path) -> None:
    path = tmp_path / "index.duckdb"
    first, second = open_index(path), open_index(path)
    first.execute("CREATE TABLE kept (a INTEGER)")
    del first
    gc.collect()
    try:
        assert second.execute("SELECT count(*) FROM kept").fetchone() == (0,)
        with pytest.raises(duckdb.Error):
            _let_go(path)  # still attached: `second` is open
    finally:
        close_index(second)
    assert _let_go(path) == ["kept"]


def test_a_failed_open_of_the_memory_lets_the_index_go(tmp_path: Path) -> None:
    """`Memory.open` opens the index and then the rest (the embedder); when the rest fails, the
    index is closed at once, not left to a later collection."""
    (tmp_path / "vault").mkdir()
    config = load_config(tmp_path / "vault", embed_provider="no-such-provider")
    with pytest.raises(VaultmindError):
        Memory.open(config)
    assert "migrations" in _let_go(config.index_path)


def test_the_file_reached_through_a_linked_folder_is_the_same_attachment(tmp_path: Path) -> None:
    """DuckDB knows a file attached under one path when another path leads to it, and refuses
    it ("Unique file handle conflict"), an error the opening would take for a broken file and
    move the index aside for. The second open shares the first's attachment instead."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    first = Index.open(tmp_path / "real" / "index.duckdb")
    try:
        with first.transaction() as con:
            con.execute("CREATE TABLE kept (a INTEGER)")
            con.execute("INSERT INTO kept VALUES (1)")
        second = Index.open(tmp_path / "link" / "index.duckdb")
        try:
            assert second.quarantined is None
            assert second.scalar("SELECT count(*) FROM kept") == 1
        finally:
            second.close()
    finally:
        first.close()
    assert not (tmp_path / "real" / "quarantine").exists()


def test_threads_opening_closing_and_dropping_connections_leave_the_file_let_go(tmp_path: Path) -> None:
    """The daemon opens and closes the index from several threads: no open meets a file half
    let go (a detached database, a "Unique file handle conflict"), and the last one closed or
    dropped lets the file go."""
    path = tmp_path / "index.duckdb"
    close_index(open_index(path))
    errors: list[BaseException] = []

    def churn(n: int) -> None:
        try:
            for i in range(30):
                con = open_index(path)
                assert con.execute("SELECT current_database()").fetchone() == ("vaultmind",)
                if (i + n) % 3:
                    close_index(con)
                else:
                    del con  # dropped: the collector lets it go
                    gc.collect()
        except BaseException as exc:  # (reported by the test)
            errors.append(exc)

    threads = [threading.Thread(target=churn, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    gc.collect()
    assert errors == []
    assert _let_go(path) == []


def test_a_file_attached_in_this_process_by_another_connection_is_busy_and_never_moved_aside(tmp_path: Path) -> None:
    """A plain `duckdb.connect` of the index in this process (a script or a plugin reading it)
    makes DuckDB refuse the index's own attachment ("Unique file handle conflict"): the file is
    sound, so the open says the index is busy, and the file stays where it is, whole, not
    quarantined and rebuilt."""
    path = tmp_path / "index.duckdb"
    first = Index.open(path)
    with first.transaction() as con:
        con.execute("CREATE TABLE kept (a INTEGER)")
        con.execute("INSERT INTO kept VALUES (1)")
    first.close()
    plain = duckdb.connect(str(path))
    try:
        with pytest.raises(IndexBusy, match="already open in this process"):
            Index.open(path)
    finally:
        plain.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.duckdb"]  # no quarantine folder
    again = Index.open(path)
    try:
        assert again.quarantined is None
        assert again.scalar("SELECT count(*) FROM kept") == 1
    finally:
        again.close()
