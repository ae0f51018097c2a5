"""The postings' load streams them under a small pool (`POSTINGS_POOL`) and, should that run
out of memory, loads them again under the pool as it is. DuckDB's error arrives as itself when
the query starts, but as an Arrow `OSError` carrying its text once the stream has begun."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

import vaultmind
from vaultmind.index.pool import out_of_memory

_ASK_AFTER_SYNC = """
import sys
from pathlib import Path
import vaultmind.index.leaf_postings as leaf_postings
from vaultmind.config import load_config
from vaultmind.memory import Memory
vault, pool = Path(sys.argv[1]), sys.argv[2]
leaf_postings.POSTINGS_POOL = None if pool == "none" else pool
for i in range(400):
    (vault / f"n{i}.md").write_text(f"# Note {i}\\n\\n" + " ".join(f"word{i % 37}x{j} term{j % 91}" for j in range(300)) + "\\n")
with Memory.open(load_config(vault, embed_provider="none")) as memory:
    memory.sync()
    memory.index.checkpoint()
    for snapshot in vault.glob(".vaultmind/resident-*"):
        snapshot.unlink()
    print(" ".join(hit["node_id"] for hit in memory.walk("word3x5 term7")["hits"]))
"""


def _ask_after_sync(vault: Path, pool: str) -> list[str]:
    """A question asked by the process that just indexed the vault (as `vaultmind query` does
    after finishing a rebuild), its postings loaded from the index under `pool`, not from a
    snapshot; in a process of its own, as the command runs."""
    vault.mkdir(parents=True)
    root = Path(vaultmind.__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", _ASK_AFTER_SYNC, str(vault), pool], cwd=root, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(root)}, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


@pytest.mark.slow
def test_a_question_is_answered_when_the_postings_run_out_of_memory_in_mid_stream(tmp_path: Path) -> None:
    """After a daemon was killed during a reindex, the next `vaultmind query` finished the
    rebuild and then failed with "Out of Memory Error: failed to pin block" while streaming the
    postings under their small pool: the load's retry under the full pool waited for DuckDB's
    own error, and a stream already begun raises Arrow's `OSError` instead. A 7 MB pool runs
    out in mid-stream here; the answer is the full pool's."""
    expected = _ask_after_sync(tmp_path / "full" / "vault", "none")
    assert expected
    assert _ask_after_sync(tmp_path / "small" / "vault", "7MB") == expected


def test_out_of_memory_knows_duckdbs_error_as_an_arrow_stream_raises_it() -> None:
    """A statement's error after its first batch comes through the Arrow reader as `OSError`
    with DuckDB's text ("Out of Memory Error: …"), not as `duckdb.OutOfMemoryException`."""
    con = duckdb.connect()
    reader = con.execute(
        "SELECT CASE WHEN i > 500000 THEN error('x') ELSE i END FROM range(1000000) r(i)"
    ).to_arrow_reader(8192)
    with pytest.raises(OSError) as raised:
        for _batch in reader:
            pass
    assert not out_of_memory(raised.value)  # another error stays another error
    assert out_of_memory(OSError("Out of Memory Error: failed to pin block of size 256.0 KiB (6.5 MiB/6.6 MiB used)"))
    assert not out_of_memory(OSError("No space left on device"))
