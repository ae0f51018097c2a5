"""The index schema as named, append-only migrations.

Each migration is one file in `index/migrations/`, named `NNNN_name.sql`, applied once in name
order and recorded in the `migrations` table. Never edit or reorder a shipped migration:
append a new file (an index that applied a migration never reads it again, so an edit reaches
only the indexes created after it). `tests/test_migrations.py` holds each shipped migration's
name and sha256: a new migration appends its line there, and an edit of a shipped one fails
that test. An index whose recorded migrations are not a prefix of this list (written by
another version) is rebuilt from the vault, never patched by hand.

A migration's statements end at a `;` and lose their `--` and `/* */` comments, both read as SQL
reads them: a `;` or `--` inside a quoted string (`'a; b'`, `'<!--'`) is the string's.

A line `-- derived: t1, t2` in a migration marks tables that hold rows derived from the vault:
`reindex` empties them before rebuilding (until a later migration drops them). Other tables
(caches such as `embeddings`) survive. Applying a migration to an existing index marks it for a
rebuild of its derived rows, unless the migration says `-- rebuild: no`. Such a migration either
changes no derived row (it drops an index or a table nothing reads, or adds an empty table), or
decides the rebuild itself: it inserts `needs_rebuild` into `meta` when the index holds rows
the change concerns (a leaf whose text has `$$`, an email note …), `WHERE NOT EXISTS` one
already, so an index without such rows keeps them all (a conditional rebuild, as 0021 does).

`SCHEMA_VERSION` is the version of this scheme (named migrations recorded in `migrations`),
stored in a new index's `meta` (`schema_version`) and reported by `status` as the index holds it.

Hot tables carry no PRIMARY KEY/UNIQUE constraints: DuckDB checks them eagerly, which breaks
delete-then-reinsert of the same key inside one transaction. Uniqueness is kept by sync.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

SCHEMA_VERSION = 1

_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
_DERIVED = re.compile(r"^--\s*derived:\s*(.+)$", re.MULTILINE)
_DROPPED = re.compile(r"^DROP TABLE (?:IF EXISTS )?(\w+)", re.MULTILINE | re.IGNORECASE)
_NO_REBUILD = re.compile(r"^--\s*rebuild:\s*no\s*$", re.MULTILINE)


@cache
def migrations() -> tuple[tuple[str, str], ...]:
    """(name, sql) of every shipped migration, in order."""
    folder = resources.files("vaultmind.index") / "migrations"
    files = sorted(f.name for f in folder.iterdir() if _NAME.match(f.name))
    return tuple((name[: -len(".sql")], (folder / name).read_text(encoding="utf-8")) for name in files)


@cache
def derived_tables() -> tuple[str, ...]:
    """Tables whose rows `reindex` rebuilds from the vault (declared by `-- derived:` lines)."""
    tables: list[str] = []
    for _, sql in migrations():
        for match in _DERIVED.finditer(sql):
            tables.extend(t.strip() for t in match.group(1).split(",") if t.strip())
        dropped = set(_DROPPED.findall(sql))
        tables = [t for t in tables if t not in dropped]
    return tuple(tables)


def rebuilds(sql: str) -> bool:
    """Whether applying this migration to an existing index calls for a rebuild of its derived
    rows (every migration does, but one marked `-- rebuild: no`)."""
    return _NO_REBUILD.search(sql) is None
