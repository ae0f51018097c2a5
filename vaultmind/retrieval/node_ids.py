"""Node ids as a person types them: the full id, or a unique prefix of at least `MIN_PREFIX`
characters (a leaf's, a summary's `s-…` or an entity's `kind:key`).

One resolver for every command that takes a node id (`explain`, `query drill`,
`query leaves`): an ambiguous prefix and a prefix nothing starts with are errors that say so.
"""

from __future__ import annotations

from collections.abc import Sequence

from vaultmind.errors import NotFound, UsageError
from vaultmind.index.store import Index
from vaultmind.index.tables import has_table

MIN_PREFIX = 6
NODE_TABLES = ("leaves", "summaries", "entities")
SHOWN = 3  # ids an ambiguous prefix's error names


def resolve_node_id(
    index: Index,
    ref: str,
    *,
    tables: Sequence[str] = NODE_TABLES,
    noun: str = "node",
    hint: str = "a node's id is the `id …` of a hit of `vaultmind query walk`",
) -> str:
    """The full id of the node `ref` names in `tables`: `ref` itself (or lower-cased: ids are
    lower-case) when it is one, else the one id it is a prefix of. NotFound when none starts
    with it (or it is shorter than `MIN_PREFIX`), UsageError naming them when several do."""
    ref = ref.strip().lstrip("^")
    if not ref:
        raise UsageError(f"give a {noun} id", hint=hint)
    present = [t for t in tables if has_table(index, t)]
    for candidate in dict.fromkeys((ref, ref.lower())):
        if any(index.scalar(f"SELECT 1 FROM {t} WHERE id = ? LIMIT 1", [candidate]) for t in present):
            return candidate
    if len(ref) < MIN_PREFIX:
        raise NotFound(f"no {noun} with id {ref}", hint=f"give the full id or at least {MIN_PREFIX} characters of it")
    union = " UNION ".join(f"SELECT id FROM {t} WHERE starts_with(id, ?) OR starts_with(id, ?)" for t in present)
    sql = f"SELECT DISTINCT id FROM ({union}) ORDER BY id LIMIT {SHOWN + 1}"
    ids = [str(r[0]) for r in index.query(sql, [ref, ref.lower()] * len(present))]
    if not ids:
        raise NotFound(f"no {noun} with id {ref}, nor one whose id starts with it", hint=hint)
    if len(ids) > 1:
        named = ", ".join(ids[:SHOWN]) + (", …" if len(ids) > SHOWN else "")
        raise UsageError(f"{ref!r} is the start of several {noun} ids ({named})", hint="give more characters")
    return ids[0]
