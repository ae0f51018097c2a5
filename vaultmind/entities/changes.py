"""Which leaves an edit of the entity notes can affect, so only those are re-derived.

A leaf resolves differently after a registry change only if

- it mentions an entity whose note changed, appeared, went away, or was merged (its
  occurrences say so), or it is (part of) an entity note whose path ↔ id mapping changed;
- it names a person, organization or place in a conversation one of whose authors resolves
  differently (a conversation's authors settle the model's guesses in its messages); or
- its text or author contains a name, address, handle or link target whose claims changed:
  an exact match needs all words of the name, and a fuzzy match needs at least one shared
  content word (`registry.content_words`), so a leaf containing none of the changed names'
  content words cannot match them.

Texts are searched in SQL on `strip_accents(lower(…))`; texts with characters where that
folding may differ from `ids.fold` (ß, ligatures, anything beyond Latin-1 and typographic
punctuation) are checked in Python with `ids.fold` instead. The result is a superset: a
candidate leaf that turns out unchanged costs only its re-derivation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

import duckdb

from vaultmind.entities.ids import fold, words
from vaultmind.entities.registry import EntityNote, Registry, content_words
from vaultmind.entities.resolve import resolve_author
from vaultmind.index.arrow import execute_with, key_table

_SAFE = "[\x00-\x7f\u00c0-\u00de\u00e0-\u00ff\u2013\u2014\u2018-\u201f\u2026]*"


def registry_snapshot(registry: Registry) -> str:
    return json.dumps([e.to_json() for e in registry.entries.values()], sort_keys=True, ensure_ascii=False)


def registry_from_snapshot(data: str | None, *, fuzzy_threshold: float) -> Registry | None:
    if not data:
        return None
    try:
        items = json.loads(data)
        notes = [
            EntityNote(
                id=str(i["id"]),
                kind=str(i["kind"]),
                display_name=str(i["display_name"]),
                note_path=str(i["note_path"]),
                aliases=tuple(i["aliases"]),
                emails=tuple(i["emails"]),
                handles=tuple(i["handles"]),
                paths=tuple(i["paths"]),
            )
            for i in items
        ]
    except (ValueError, KeyError, TypeError):
        return None
    return Registry.build(notes, fuzzy_threshold=fuzzy_threshold)


def _diff_keys(old: dict[str, object], new: dict[str, object]) -> set[str]:
    return {k for k in set(old) | set(new) if old.get(k) != new.get(k)}


def changed_ids(old: Registry, new: Registry) -> set[str]:
    """Entities whose note changed, appeared or went away, and both ends of changed merges."""
    ids = {i for i in set(old.entries) | set(new.entries) if old.entries.get(i) != new.entries.get(i)}
    for source in _diff_keys(dict(old.redirects), dict(new.redirects)):
        ids.add(source)
        for reg in (old, new):
            if source in reg.redirects:
                ids.add(reg.final(source))
    return ids


def _claims(reg: Registry) -> dict[str, object]:
    """The claims on each name, in no order (a name's claims are one per entity)."""
    return {k: frozenset(v) for k, v in reg.names.items()}


def needles(old: Registry, new: Registry) -> set[str]:
    """Lower-case strings one of which any affected leaf's text or author must contain."""
    out: set[str] = set()
    names = _diff_keys(_claims(old), _claims(new))
    for key in names:
        found = content_words(key)
        out.update(found or [max(key.split(" "), key=len)])
    for table_old, table_new in ((old.emails, new.emails), (old.handles, new.handles)):
        for key in _diff_keys(dict(table_old), dict(table_new)):
            out.add(key.split(":", 1)[-1].lstrip("@") or key)
    for stem in _diff_keys(dict(old.by_stem), dict(new.by_stem)):
        found = content_words(" ".join(words(stem.rsplit("/", 1)[-1])))
        out.update(found or words(stem)[-1:])
    return {n for n in out if n}


def changed_paths(old: Registry, new: Registry) -> set[str]:
    return _diff_keys(dict(old.by_path), dict(new.by_path))


def affected_leaves(con: duckdb.DuckDBPyConnection, old: Registry, new: Registry) -> list[str]:
    """Ids of the leaves a change from `old` to `new` may resolve differently."""
    found: set[str] = set()
    ids = sorted(changed_ids(old, new))
    if ids:
        found.update(r[0] for r in execute_with(
            con, "SELECT DISTINCT leaf_id FROM occurrences WHERE entity_id IN (SELECT k FROM _rows)", rows=key_table(ids)
        ).fetchall())  # fmt: skip
    paths = sorted(changed_paths(old, new))
    if paths:
        found.update(r[0] for r in execute_with(
            con, "SELECT DISTINCT id FROM leaves WHERE note_path IN (SELECT k FROM _rows)", rows=key_table(paths)
        ).fetchall())  # fmt: skip
    found.update(_containing(con, sorted(needles(old, new))))
    return sorted(found | _conversations_of(con, old, new, found))


def _conversations_of(con: duckdb.DuckDBPyConnection, old: Registry, new: Registry, leaf_ids: set[str]) -> set[str]:
    """The leaves naming a person, organization or place in the notes where an author of a leaf
    of `leaf_ids` resolves differently: a conversation's authors settle the model's guesses in
    all its messages ("Dana", "Helen" read as an organization, "Helen Okafor" as a place:
    `resolve_text`'s `companions`)."""
    if not leaf_ids:
        return set()
    authors = execute_with(
        con,
        "SELECT DISTINCT note_path, author FROM leaves WHERE id IN (SELECT k FROM _rows) AND author IS NOT NULL",
        rows=key_table(sorted(leaf_ids)),
    ).fetchall()
    notes = sorted({path for path, author in authors if _settled_as(old, author) != _settled_as(new, author)})
    if not notes:
        return set()
    return {r[0] for r in execute_with(
        con,
        "SELECT DISTINCT leaf_id FROM occurrences WHERE note_path IN (SELECT k FROM _rows) "
        "AND regexp_matches(entity_id, '^(person|org|place):')",
        rows=key_table(notes),
    ).fetchall()}  # fmt: skip


def _settled_as(registry: Registry, author: str) -> str | None:
    ident = resolve_author(registry, author, [])
    return None if ident is None else registry.final(ident)


def _containing(con: duckdb.DuckDBPyConnection, wanted: Iterable[str]) -> set[str]:
    keys = sorted({fold(w) for w in wanted if w})
    found: set[str] = set()
    if not keys:
        return found
    text = "text || chr(10) || coalesce(author, '')"
    for start in range(0, len(keys), 64):
        pattern = "|".join(re.escape(k) for k in keys[start : start + 64])
        # ASCII rows: lower(); Latin-1-ish rows: strip_accents(lower()); the rest: ids.fold in Python
        for sql, params in (
            (
                f"SELECT id FROM leaves WHERE strlen({text}) = length({text}) AND regexp_matches(lower({text}), ?)",
                [pattern],
            ),
            (
                f"SELECT id FROM leaves WHERE strlen({text}) <> length({text}) AND regexp_full_match({text}, ?) "
                f"AND regexp_matches(strip_accents(lower({text})), ?)",
                [_SAFE, pattern],
            ),
        ):
            found.update(r[0] for r in con.execute(sql, params).fetchall())
    for leaf_id, raw in con.execute(
        f"SELECT id, {text} FROM leaves WHERE strlen({text}) <> length({text}) AND NOT regexp_full_match({text}, ?)",
        [_SAFE],
    ).fetchall():
        folded = fold(raw)
        if any(k in folded for k in keys):
            found.add(leaf_id)
    return found
