"""Row plumbing for the entity tables: Arrow schemas, bulk inserts, `meta` values."""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa

from vaultmind.index.arrow import insert_arrow

META_SIGNATURE = "entities.signature"  # extractor version, NER model, fuzzy threshold
META_REGISTRY = "entities.registry"  # JSON snapshot of the registry the rows were derived with
META_REGISTRY_DIGEST = "entities.registry_digest"
META_NER = "entities.ner_package"
META_FUZZY = "entities.fuzzy_threshold"

OCC_SCHEMA = pa.schema(
    [("entity_id", pa.string()), ("leaf_id", pa.string()), ("note_path", pa.string()),
     ("surface", pa.string()), ("ts", pa.timestamp("us")), ("read_as", pa.string())]
)  # fmt: skip
ENTITY_SCHEMA = pa.schema(
    [("id", pa.string()), ("kind", pa.string()), ("display_name", pa.string()), ("note_path", pa.string()),
     ("aliases", pa.list_(pa.string())), ("emails", pa.list_(pa.string())), ("handles", pa.list_(pa.string())),
     ("mentions", pa.int32())]
)  # fmt: skip
EDGE_SCHEMA = pa.schema([("a", pa.string()), ("b", pa.string()), ("weight", pa.int32())])


def columns_for(schema: pa.Schema) -> dict[str, list[Any]]:
    return {name: [] for name in schema.names}


def insert(
    con: duckdb.DuckDBPyConnection, table: str, schema: pa.Schema, columns: dict[str, list[Any]]
) -> None:
    """Insert column lists into `table` through one Arrow table (never `executemany`)."""
    if not columns[schema.names[0]]:
        return
    insert_arrow(con, table, pa.table({name: columns[name] for name in schema.names}, schema=schema))


def get_meta(con: duckdb.DuckDBPyConnection, key: str) -> str | None:
    row = con.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
    return None if row is None else str(row[0])


def set_meta(con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])
