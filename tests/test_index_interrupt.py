"""Ctrl-C while the index is created or upgraded stops the command and leaves the index where it
is: it is not taken for a broken file and moved aside (the command then went on and said it was
done, with no index left), and the next open finishes the upgrade."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

import vaultmind.index.migrate as migrate
import vaultmind.index.opening as opening
from tests.conftest import migrations_through, run_main, write
from vaultmind.index.quarantine import QUARANTINE_DIR
from vaultmind.index.schema import migrations
from vaultmind.index.store import Index
from vaultmind.model import Progress

SHIPPED = migrations()
# the last migration that rebuilds every index (the later ones do not, or only one holding rows
# they concern), the one before it, and one after it
UPGRADE_REBUILDS = "0014_irregular_verbs"
BEFORE_UPGRADE = "0013_float16_vectors"
STOPPED_IN = "0016_drop_admission_occurrence_leaf_indexes"
VAULT_INDEXED_THROUGH = "0033_conservative_token_counts"  # an older version's index holding notes


@pytest.fixture
def vault(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A vault indexed by the version whose last migration was `VAULT_INDEXED_THROUGH`."""
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    vault = tmp_path / "vault"
    write(vault, "kayak.md", "# Kayak\n\nThe kayak trip is on Saturday.\n")
    assert run_main(capsys, "init", "--existing", str(vault))[0] == 0
    with monkeypatch.context() as older:
        migrations_through(older, VAULT_INDEXED_THROUGH)
        assert run_main(capsys, "reindex", "--vault", str(vault), "--json")[0] == 0
    yield vault


def index_path(vault: Path) -> Path:
    return vault / ".vaultmind" / "index.duckdb"


def ctrl_c_in(migration: str, at_statement: int = 0) -> Progress:
    """A progress that Ctrl-C interrupts as migration `migration` reaches `at_statement`: Python
    raises KeyboardInterrupt there, inside the migration's transaction."""

    def progress(phase: str, done: int, total: int) -> None:
        if f"(migration {migration})" in phase and done == at_statement:
            raise KeyboardInterrupt

    return progress


def read(path: Path, sql: str) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(path))
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def applied(path: Path) -> list[str]:
    return [str(row[0]) for row in read(path, "SELECT name FROM migrations ORDER BY seq")]


def notes(path: Path) -> int:
    return int(str(read(path, "SELECT count(*) FROM notes")[0][0]))


def test_ctrl_c_during_an_upgrade_leaves_the_index_and_the_next_open_finishes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped in a migration after one that asks for a rebuild committed: the index stays, at
    the migrations committed before, and asks for the rebuild; the next open applies the rest.
    (The rebuild was asked for only at the end of a whole upgrade: the migrations left, none of
    which rebuilds, never asked, and the notes were never derived anew.)"""
    path = tmp_path / ".vaultmind" / "index.duckdb"
    with monkeypatch.context() as older:
        migrations_through(older, BEFORE_UPGRADE)
        Index.open(path).close()
    with pytest.raises(KeyboardInterrupt):
        Index.open(path, ctrl_c_in(STOPPED_IN))
    assert not (path.parent / QUARANTINE_DIR).exists()
    assert applied(path)[-1] < STOPPED_IN and UPGRADE_REBUILDS in applied(path)
    assert read(path, "SELECT value FROM meta WHERE key = 'needs_rebuild'") == [("1",)], UPGRADE_REBUILDS
    with Index.open(path) as index:
        assert index.quarantined is None and index.get_meta("needs_rebuild") == "1"
    assert applied(path) == [name for name, _ in SHIPPED]


def test_ctrl_c_after_duckdb_ended_the_transaction_is_not_taken_for_a_broken_index(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A statement Ctrl-C stops can leave DuckDB with no transaction (it rolled it back itself;
    measured: most interrupted CREATE statements do), so the migration's ROLLBACK fails with
    "no transaction is active". That error took the KeyboardInterrupt's place, and the index was
    moved aside as one that could not be opened. A COMMIT as the migration's first statement
    stands for DuckDB ending the transaction; the Ctrl-C comes at the next one."""
    monkeypatch.setattr(migrate, "migrations", lambda: (*SHIPPED, ("9999_ended", "-- rebuild: no\nCOMMIT;\nSELECT 1;")))
    path = index_path(vault)
    held = notes(path)
    with pytest.raises(KeyboardInterrupt):
        Index.open(path, ctrl_c_in("9999_ended", at_statement=1))
    assert path.exists() and not (path.parent / QUARANTINE_DIR).exists()
    monkeypatch.setattr(migrate, "migrations", lambda: SHIPPED)
    with Index.open(path) as index:
        assert index.quarantined is None
        assert index.scalar("SELECT count(*) FROM notes") == held


def test_ctrl_c_of_a_command_upgrading_the_index_exits_130_and_keeps_the_index(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C, as the terminal sends it, during an upgrade's statement after DuckDB ended the
    migration's transaction (the COMMIT stands for that, as above): the command says it was
    interrupted, exit 130, and the index stays where it is. It was moved aside (and `ingest`
    then went on and said it was done, with no index left)."""
    opened = opening.connect

    def connect(path: Path) -> duckdb.DuckDBPyConnection:
        con = opened(path)
        con.create_function("ctrl_c", lambda: signal.raise_signal(signal.SIGINT) or 0, [], "INTEGER", side_effects=True)
        return con

    monkeypatch.setattr(opening, "connect", connect)
    monkeypatch.setattr(migrate, "migrations", lambda: (*SHIPPED, ("9999_stopped", "-- rebuild: no\nCOMMIT;\nSELECT ctrl_c();")))
    held = notes(index_path(vault))
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (not a background job)
    try:
        code, _, err = run_main(capsys, "status", "--vault", str(vault))
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert code == 130, err
    assert "vaultmind: interrupted" in err and "moving it aside" not in err, err
    path = index_path(vault)
    assert path.exists() and not (path.parent / QUARANTINE_DIR).exists()
    monkeypatch.setattr(migrate, "migrations", lambda: SHIPPED)
    code, data, err = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert code == 0 and data["notes"]["total"] == held and data["index"]["health"] != "quarantined", err


def test_an_index_that_fails_its_upgrade_is_moved_aside_whole_and_a_new_one_takes_its_place(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A migration that fails on the old file (no Ctrl-C): the file is moved aside and a fresh
    index is made at its path, the connection to the old one closed first (a connect to the
    path reused it: the new index's rows went into the moved file, and none was at the path)."""
    fails_on_rows = "-- rebuild: no\nSELECT CAST(path || 'x' AS INTEGER) FROM notes;"  # an empty index passes
    monkeypatch.setattr(migrate, "migrations", lambda: (*SHIPPED, ("9999_fails", fails_on_rows)))
    path = index_path(vault)
    with Index.open(path) as index:
        assert index.quarantined is not None and "could not be opened" in index.quarantined
        assert index.scalar("SELECT count(*) FROM notes") == 0
    moved = sorted((path.parent / QUARANTINE_DIR).glob("index-*.duckdb"))
    assert len(moved) == 1 and path.exists()
    assert applied(path)[-1] == "9999_fails", "the new index is the file at the path"
    assert applied(moved[0])[-1] != "9999_fails", "the moved file is the old index, as it was"
