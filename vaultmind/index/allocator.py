"""Handing freed memory back to the OS.

Three allocators hold memory a process has freed: Arrow's pool, the C heap (glibc keeps freed
pages; DuckDB's own `new`/`malloc` allocations live there too), and the jemalloc that DuckDB
bundles for its buffers and intermediates. By default jemalloc returns a freed page after a
decay of one second, which in a whole-vault load is longer than the burst that freed it: at
50k notes a batch peaked with 405 MB resident in DuckDB's jemalloc for 238 MB allocated.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)

_DECAYS = ("dirty_decay_ms", "muzzy_decay_ms")

Mallctl = Callable[..., int]


def release_freed_memory(*, heap: bool = True) -> None:
    """Hand freed memory back to the OS: what Arrow's allocator keeps for reuse (a batch's
    tables: ~100 MB at 2,000 notes), and with `heap` the C heap's free pages (glibc only; a walk
    of the heap, up to ~20 ms over 350 MB of fragments). Loading leaves many freed temporaries
    of a few MB, which both keep by default: about 100 MB at 86k leaves; at 50k notes, after
    the vectors' load and clustering, 38 MB in Arrow's pool and 39 MB on the heap. DuckDB 1.5.5
    does not trim the C heap itself."""
    import pyarrow as pa  # here: the command line imports this module before anything heavy

    pa.default_memory_pool().release_unused()
    if heap and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).malloc_trim(0)


HEAP_ARENAS = 2  # glibc's default is 8 per core


@functools.cache
def limit_heap_arenas(arenas: int = HEAP_ARENAS) -> bool:
    """Let the C heap use at most `arenas` arenas from now on (glibc only; True when set).

    glibc gives threads arenas of their own as they contend, and each keeps the memory freed
    in it. The daemon answers every request on a new thread beside its watcher, upkeep and
    queue threads: at 50k notes, two minutes of questions during the NER catch-up left 150 MB
    more resident than with two arenas (809 against 656 MB), for the same latency. Call it
    before threads start (`vaultmind`'s command line does, first thing); an environment's
    `MALLOC_ARENA_MAX` is left alone."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        return bool(ctypes.CDLL(None).mallopt(_M_ARENA_MAX, arenas))
    except (OSError, AttributeError):  # not glibc
        return False


_M_ARENA_MAX = -8  # mallopt's parameter number in glibc's malloc.h


@functools.cache
def _duckdb_mallctl() -> Mallctl | None:
    """`mallctl` of the jemalloc inside DuckDB's library (exported with a `duckdb_je_` prefix by
    the Linux builds), or None where DuckDB uses the system allocator."""
    try:
        library = ctypes.CDLL(importlib.import_module("_duckdb").__file__)
        mallctl = library.duckdb_je_mallctl
    except (ImportError, OSError, AttributeError, TypeError):
        return None
    mallctl.restype = ctypes.c_int
    found: Mallctl = mallctl
    return found


def _read(mallctl: Mallctl, name: str, value: ctypes.c_ssize_t | ctypes.c_size_t | ctypes.c_uint) -> bool:
    size = ctypes.c_size_t(ctypes.sizeof(value))
    return mallctl(name.encode(), ctypes.byref(value), ctypes.byref(size), None, ctypes.c_size_t(0)) == 0


def _write(mallctl: Mallctl, name: str, value: ctypes.c_ssize_t) -> bool:
    return mallctl(name.encode(), None, None, ctypes.byref(value), ctypes.c_size_t(ctypes.sizeof(value))) == 0


def decay_settings() -> dict[str, int] | None:
    """DuckDB's jemalloc decay settings for new arenas (for tests and diagnostics)."""
    mallctl = _duckdb_mallctl()
    if mallctl is None:
        return None
    out: dict[str, int] = {}
    for decay in _DECAYS:
        value = ctypes.c_ssize_t()
        if _read(mallctl, f"arenas.{decay}", value):
            out[decay] = value.value
    return out


def _set_decays(mallctl: Mallctl, values: dict[str, int]) -> None:
    count = ctypes.c_uint()
    arenas = count.value if _read(mallctl, "arenas.narenas", count) else 0
    for decay, ms in values.items():
        _write(mallctl, f"arenas.{decay}", ctypes.c_ssize_t(ms))  # arenas created from now on
        for i in range(arenas):  # and those that exist (one not initialised yet refuses: fine)
            _write(mallctl, f"arena.{i}.{decay}", ctypes.c_ssize_t(ms))


class _Purging:
    """How many `prompt_purge` blocks are open (in any thread), and the decays they replaced."""

    lock = threading.Lock()
    depth = 0
    before: dict[str, int] | None = None


@contextmanager
def prompt_purge() -> Iterator[None]:
    """DuckDB's jemalloc returns freed pages at once for a while (decay 0), then as before —
    once the last of overlapping blocks (two loads in two threads) ends.

    For a whole-vault load: at 50k notes it lowered the peak RSS by about 50 MB for the same
    CPU time. Outside Linux builds of DuckDB (no bundled jemalloc) it does nothing."""
    mallctl = _duckdb_mallctl()
    if mallctl is None:
        yield
        return
    with _Purging.lock:
        if _Purging.depth == 0:
            _Purging.before = decay_settings()
            if _Purging.before:
                _set_decays(mallctl, {decay: 0 for decay in _Purging.before})
        _Purging.depth += 1
    try:
        yield
    finally:
        with _Purging.lock:
            _Purging.depth -= 1
            if _Purging.depth == 0 and _Purging.before:
                _set_decays(mallctl, _Purging.before)


def duckdb_allocator_bytes() -> dict[str, int] | None:
    """What DuckDB's jemalloc has allocated and holds resident, in bytes (None without it)."""
    mallctl = _duckdb_mallctl()
    if mallctl is None:
        return None
    epoch = ctypes.c_uint64(1)  # jemalloc's statistics are refreshed when the epoch is written
    mallctl(b"epoch", None, None, ctypes.byref(epoch), ctypes.c_size_t(ctypes.sizeof(epoch)))
    out: dict[str, int] = {}
    for stat in ("allocated", "resident"):
        value = ctypes.c_size_t()
        if _read(mallctl, f"stats.{stat}", value):
            out[stat] = value.value
    return out
