"""DuckDB's buffer pool: the limits the index runs under, sizes as DuckDB writes them, and
telling an error of running out of it."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext

import duckdb

from vaultmind.errors import chain

MEMORY_LIMIT = "512MB"  # DuckDB's buffer pool (it spills past this); its default is 80 % of RAM
# DuckDB's buffer pool during a large sync (a first index, a big import): it otherwise keeps every
# block the sync writes cached, up to `MEMORY_LIMIT` (~450 MB at 50k notes); evicted blocks are
# read back from the index file when needed. A batch that needs more is retried with the limit
# the index had (`Applier._apply`); at 50k notes, one batch needed more than 128 MB.
# Off by default (`Syncer.sync_memory_limit` is None): DuckDB 1.5 can fail to roll back a write
# transaction that ran out of memory, leaving the database invalidated or an ART index wrong,
# so a write must not be the thing that runs out. Measured at 50k notes with it on: peak 896 MiB.
SYNC_MEMORY_LIMIT = "256MB"


def out_of_memory(exc: BaseException | None) -> bool:
    """Whether `exc` is, or was raised from, DuckDB running out of memory: as DuckDB raises it,
    or as an Arrow stream of a query's rows does once it has begun (an `OSError` with DuckDB's
    text: "Out of Memory Error: failed to pin block …")."""
    return exc is not None and any(
        isinstance(e, duckdb.OutOfMemoryException) or (isinstance(e, OSError) and str(e).startswith(_OUT_OF_MEMORY))
        for e in chain(exc)
    )


_OUT_OF_MEMORY = "Out of Memory Error"  # how DuckDB's message of the error starts


_UNITS = {"": 1, "b": 1, "byte": 1, "bytes": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
_UNITS.update({"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40})


def limit_setting(shown: str) -> str:
    """A memory limit as `current_setting` shows it, as a value to set it back to: DuckDB shows
    limits cut to 0.1 MiB, so a little above (no drift when set and read back repeatedly)."""
    exact = size_bytes(shown)
    return shown if exact == float("inf") else f"{math.ceil(exact / 1024) + 1}KiB"


def size_bytes(text: str) -> float:
    """'128MB', '488.2 MiB', … in bytes (unreadable: infinite, so nothing is taken as larger)."""
    value = text.strip().lower()
    number = value.rstrip("abcdefghijklmnopqrstuvwxyz ")
    try:
        return float(number) * _UNITS[value[len(number) :].strip()]
    except (KeyError, ValueError):
        return float("inf")


def beyond_cache(held: dict[str, int]) -> int:
    """Bytes DuckDB holds (`Index.duckdb_memory`) beyond its cache of stored blocks
    (`BASE_TABLE`): rows written but not committed or checkpointed, indexes, strings — which a
    smaller pool can set out only by spilling them to temporary files."""
    return sum(used for tag, used in held.items() if tag != "BASE_TABLE")


@contextmanager
def setting_while(
    con: duckdb.DuckDBPyConnection, name: str, value: str, *, as_set: Callable[[str], str] = str,
    lock: threading.RLock | None = None,
) -> Iterator[None]:
    """DuckDB's setting `name` (one of the whole database's) is `value` for a while, then what
    it was (`as_set` turns the value `current_setting` shows into one to set back); `lock`, when
    given, held while it is set and while it is put back. Set and put back through a connection
    of its own: DuckDB refuses every statement of a transaction a failed statement aborted, a
    `SET` too, and a read that ran out of memory inside a save's transaction left the daemon's
    pool at the save's 16 MB for good."""
    with lock or nullcontext(), con.cursor() as own:
        before = as_set(str(own.execute(f"SELECT current_setting('{name}')").fetchone()[0]))  # type: ignore[index]
        try:
            own.execute(f"SET {name} = '{value}'")
        except duckdb.Error:  # a memory limit below what is pinned fails, yet stays set
            own.execute(f"SET {name} = '{before}'")
            raise
    try:
        yield
    finally:
        with lock or nullcontext(), con.cursor() as own:
            own.execute(f"SET {name} = '{before}'")

