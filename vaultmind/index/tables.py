"""Which tables and columns an open index has: the read paths ask before they read a table an
index may lack (an in-memory index a test builds with some tables, a view of another index),
and the tree reads columns a later migration added. The schema is fixed once an index is open
(migrations run at open), so the answers are cached per index."""

from __future__ import annotations

import threading
import weakref

from vaultmind.index.store import Index

_columns_cache: weakref.WeakKeyDictionary[Index, dict[str, frozenset[str]]] = weakref.WeakKeyDictionary()
_columns_lock = threading.Lock()


def has_table(index: Index, name: str) -> bool:
    """Whether the index has a table (or view) `name`."""
    return name in index.tables


def has_columns(index: Index, table: str, columns: tuple[str, ...]) -> bool:
    """Whether `table` exists and has every one of `columns`."""
    found = _columns_of(index, table)
    return bool(found) and all(c in found for c in columns)


def _columns_of(index: Index, table: str) -> frozenset[str]:
    """Columns of `table` (empty when it does not exist)."""
    with _columns_lock:
        cached = _columns_cache.get(index, {}).get(table)
    if cached is not None:
        return cached
    found = frozenset(
        row[0]
        for row in index.query("SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table])
    )
    with _columns_lock:
        _columns_cache.setdefault(index, {})[table] = found
    return found
