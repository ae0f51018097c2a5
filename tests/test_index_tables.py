"""One answer to "has the index this table (these columns)?" — `index.tables`, used by the read
paths and the summary trees alike (each had its own copy)."""

from __future__ import annotations

from vaultmind.index import tables
from vaultmind.index.store import Index
from vaultmind.retrieval import hits
from vaultmind.tree import buffers


def test_tables_and_columns_of_a_real_index() -> None:
    index = Index.open(None)
    try:
        assert tables.has_table(index, "leaves") and tables.has_table(index, "entities")
        assert not tables.has_table(index, "no_such_table")
        assert tables.has_columns(index, "entities", ("id", "display_name", "note_path"))
        assert not tables.has_columns(index, "entities", ("id", "no_such_column"))
        assert not tables.has_columns(index, "no_such_table", ())
    finally:
        index.close()


def test_the_read_paths_and_the_trees_ask_the_same_function() -> None:
    assert buffers.has_table is tables.has_table and hits.has_table is tables.has_table
