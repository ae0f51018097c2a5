"""A process killed at a chosen moment leaves an index the next open takes up as it was
committed: nothing quarantined, nothing rebuilt (real DuckDB files, a real SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import vaultmind
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
    """Run `script` in a child process, SIGKILL it once it prints its first line."""
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
