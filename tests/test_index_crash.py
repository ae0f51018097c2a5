"""A process killed at a chosen moment leaves an index the next open takes up as it was
committed: nothing quarantined, nothing rebuilt (real DuckDB files, a real SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

import vaultmind
from tests.conftest import READY_S, running_daemon, until, write
from vaultmind.config import load_config
from vaultmind.index.quarantine import take_quarantine_notice
from vaultmind.index.store import Index

REPO = Path(vaultmind.__file__).resolve().parents[1]

# A large commit (more rows than DuckDB's row group, as an entity rebuild or a large batch of
# notes appends), then the small commits the NER catch-up makes to the same table; then the
# process waits to be killed.
LARGE_THEN_SMALL = """
import sys, time
from pathlib import Path
from vaultmind.index.store import Index

index = Index.open(Path(sys.argv[1]))
with index.transaction() as con:
    con.execute(
        "INSERT INTO occurrences SELECT 'person:p' || (i % 5000), 'leaf' || i, 'n.md', 'P', NULL, NULL "
        "FROM range(130000) r(i)"
    )
for step in range(3):
    with index.transaction() as con:
        con.execute("DELETE FROM occurrences WHERE leaf_id = ?", ["leaf%d" % step])
        con.execute("INSERT INTO occurrences VALUES ('org:o', ?, 'n.md', 'O', NULL, NULL)", ["leaf%d" % step])
print("committed", flush=True)
time.sleep(120)
"""


def _run_until_killed(script: str, *args: str) -> None:
    """Run `script` in a child process, SIGKILL it once it prints that it committed."""
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.strip() == "committed", line
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        if child.stdout is not None:
            child.stdout.close()


@pytest.mark.slow
def test_a_kill_after_a_large_commit_and_small_ones_leaves_an_index_that_opens(tmp_path: Path) -> None:
    path = tmp_path / ".vaultmind" / "index.duckdb"
    _run_until_killed(LARGE_THEN_SMALL, str(path))

    with Index.open(path) as index:
        assert index.quarantined is None
        assert not (path.parent / "quarantine").exists()
        assert index.scalar("SELECT count(*) FROM occurrences") == 130_000
        assert index.scalar("SELECT count(*) FROM occurrences WHERE entity_id = 'org:o'") == 3
        with index.transaction() as con:  # the rows and their lookup index agree
            con.execute("DELETE FROM occurrences WHERE entity_id = 'person:p7'")
        assert index.scalar("SELECT count(*) FROM occurrences WHERE entity_id = 'person:p7'") == 0


# A primary key's lookup index that lacks rows the table holds, as DuckDB 1.5 leaves it when it
# replays a WAL holding the delete and the new rows, written to the file as whole row groups, of
# the same keys: the next delete that meets those rows raises a FatalException ("Failed to
# delete all rows from index"), which invalidates the database.
KEYS_LOST_BY_REPLAY = """
import sys, time
import duckdb
from vaultmind.index.store import Index

Index.open(__import__("pathlib").Path(sys.argv[1])).close()
con = duckdb.connect(sys.argv[1])
con.execute("SET enable_progress_bar = false")
con.execute("CREATE TABLE crash_keys (k VARCHAR PRIMARY KEY, v INTEGER)")
con.execute("INSERT INTO crash_keys SELECT 'k' || i, i FROM range(130000) r(i)")
con.execute("CHECKPOINT")
con.execute("SET checkpoint_threshold = '1TB'")
con.execute("BEGIN")
con.execute("DELETE FROM crash_keys")
con.execute("INSERT INTO crash_keys SELECT 'k' || i, i FROM range(130000) r(i)")
con.execute("COMMIT")
print("committed", flush=True)
time.sleep(120)
"""


@pytest.mark.slow
def test_an_invalidated_database_is_moved_aside_and_the_index_goes_on_fresh(tmp_path: Path) -> None:
    path = tmp_path / ".vaultmind" / "index.duckdb"
    _run_until_killed(KEYS_LOST_BY_REPLAY, str(path))

    with Index.open(path) as index:
        assert index.quarantined is None  # the WAL replays; its lookup index is what is wrong
        with pytest.raises(duckdb.FatalException), index.transaction() as con:
            con.execute("DELETE FROM crash_keys WHERE v % 7 = 0")

        # the next statements run on a fresh index (the next sync fills it from the vault)
        assert index.scalar("SELECT count(*) FROM notes") == 0
        assert "crash_keys" not in index.tables
        assert index.replaced == 1
        assert index.quarantined is not None and index.quarantined.startswith("index was invalidated")
        assert (path.parent / "quarantine" / "index-1.duckdb").exists()
        with index.transaction() as con:
            index.set_meta(con, "probe", "1")
        assert index.get_meta("probe") == "1"
    assert take_quarantine_notice(path) == index.quarantined  # a later status reports it, once
    assert take_quarantine_notice(path) is None


@pytest.mark.slow
def test_a_daemon_whose_database_is_invalidated_rebuilds_and_serves_on(vault: Path) -> None:
    write(vault, "a.md", "# A\n\nAda Lovelace wrote to Initech.\n")
    write(vault, "b.md", "# B\n\nGrace Hopper met [[a]].\n")
    path = vault / ".vaultmind" / "index.duckdb"
    _run_until_killed(KEYS_LOST_BY_REPLAY, str(path))
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    with running_daemon(config) as (memory, _):
        assert memory.index.scalar("SELECT count(*) FROM notes") == 2
        with pytest.raises(duckdb.FatalException):  # a write meets the lookup index the replay broke
            memory.index.query("DELETE FROM crash_keys WHERE v % 7 = 0")

        until(lambda: memory.index.scalar("SELECT count(*) FROM notes") == 2, READY_S)
        assert memory.index.scalar("SELECT count(*) FROM notes") == 2  # the fresh index, filled again
        assert memory.search("Lovelace")["hits"][0]["note_path"] == "a.md"
        assert (vault / ".vaultmind" / "quarantine" / "index-1.duckdb").exists()
