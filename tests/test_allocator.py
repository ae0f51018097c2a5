"""DuckDB's allocator hands freed memory back at once during a whole-vault load."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vaultmind.index.allocator import decay_settings, duckdb_allocator_bytes, prompt_purge
from vaultmind.index.store import Index

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="DuckDB bundles jemalloc in its Linux builds only"
)

# a query whose hash table takes a few tens of MB and is freed when it ends
BURST = "SELECT count(*) FROM (SELECT i % 400000 AS k, list(i) FROM range(2000000) t(i) GROUP BY k)"


def test_a_bulk_load_sets_decay_to_zero_and_restores_it(tmp_path: Path) -> None:
    """The decay, and DuckDB's row groups buffered before a write (one, not five), for the
    load only."""
    index = Index.open(tmp_path / "index.duckdb")
    before = decay_settings()
    assert before is not None and before["dirty_decay_ms"] > 0, "DuckDB's jemalloc was not found"

    def buffered() -> int:
        return int(index.scalar("SELECT current_setting('write_buffer_row_group_count')"))

    buffered_before = buffered()
    assert buffered_before > 1
    with index.bulk():
        assert decay_settings() == {"dirty_decay_ms": 0, "muzzy_decay_ms": 0}
        assert buffered() == 1
    assert decay_settings() == before and buffered() == buffered_before
    with pytest.raises(RuntimeError), index.bulk():
        raise RuntimeError("the load failed")
    assert decay_settings() == before and buffered() == buffered_before
    index.close()


def test_freed_memory_leaves_at_once_under_prompt_purge(tmp_path: Path) -> None:
    index = Index.open(tmp_path / "index.duckdb")
    index.con.execute("SET threads = 1")

    def resident_after_burst() -> int:
        index.query(BURST)
        held = duckdb_allocator_bytes()
        assert held is not None
        return held["resident"]

    plain = resident_after_burst()
    with prompt_purge():
        purged = resident_after_burst()
    again = resident_after_burst()
    assert purged < plain / 2 and purged < again / 2, (plain, purged, again)
    index.close()


def test_overlapping_loads_restore_the_decay_when_the_last_ends() -> None:
    """Two loads in two threads need not end in the order they began."""
    before = decay_settings()
    first, second = prompt_purge(), prompt_purge()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert decay_settings() == {"dirty_decay_ms": 0, "muzzy_decay_ms": 0}
    second.__exit__(None, None, None)
    assert decay_settings() == before


_ARENAS_SCRIPT = """
import ctypes, sys, threading
from vaultmind.index.allocator import limit_heap_arenas
if sys.argv[1] == "limit":
    assert limit_heap_arenas()
start = threading.Barrier(6)
def work():
    start.wait()
    for _ in range(2000):
        bytearray(8192)  # beyond Python's small-object allocator: glibc's malloc
threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads: t.start()
for t in threads: t.join()
libc = ctypes.CDLL(None)
libc.open_memstream.restype = ctypes.c_void_p
buf, size = ctypes.c_char_p(), ctypes.c_size_t()
stream = libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
libc.malloc_info(0, ctypes.c_void_p(stream))
libc.fclose(ctypes.c_void_p(stream))
print(buf.value.decode().count("<heap nr="))
"""


def _heap_arenas(mode: str) -> int:
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    out = subprocess.run([sys.executable, "-c", _ARENAS_SCRIPT, mode], env=env, capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def test_the_c_heap_keeps_to_two_arenas_however_many_threads_allocate() -> None:
    assert _heap_arenas("default") > 2  # glibc: an arena per new thread, up to 8 per core
    assert _heap_arenas("limit") <= 2
