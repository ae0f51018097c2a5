"""The `entities` table: one row per entity of an entity note, and per entity found in a leaf.

- an entity with a note: the note's id, kind, display name, aliases, emails, handles, path;
- an entity found only in leaves: display name = its most frequent surface form whose own id
  it is (a first name settled as someone's full name is not: "Helen" of `person:helen-okafor`),
  else its most frequent form (ties: the smallest), no aliases, emails = the addresses it wrote from (`Name <address>` authors);
- `mentions` = distinct leaves mentioning it. Found-only entities with no mention have no row.

`refresh_entities` recomputes rows from `occurrences`; `apply_entity_delta` moves them after an
incremental update without scanning the occurrences of busy entities whenever the change cannot
alter the row beyond its mention count (the usual case: an edit that mentions the same people).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb

from vaultmind.entities.extract import display_of, parse_author
from vaultmind.entities.ids import kind_of, make_id
from vaultmind.entities.registry import Registry
from vaultmind.entities.tables import ENTITY_SCHEMA, columns_for, insert
from vaultmind.index.arrow import execute_with, key_table

OccRow = tuple[str, str, str]
"""(leaf_id, entity_id, surface) of one occurrence row."""


_WIDTH_FORMS_RE = re.compile("[\uff00-\uffef]+")


def form_of(surface: str) -> str:
    """How a surface counts toward a display name: the name of `Name <address>`, no leading `#`,
    its full-width and half-width forms as their plain characters (`width_folded`)."""
    return width_folded(display_of(surface).lstrip("#") or surface)


def width_folded(text: str) -> str:
    """`text` with its full-width and half-width forms (U+FF00–U+FFEF) in their compatibility
    form (NFKC): "Ａｌｉｃｅ Ｃｈｅｎ", as an East Asian keyboard types it, is "Alice Chen", one
    form with it and shown so. Other compatibility characters stay as written ("Acme™" is not
    "AcmeTM"; its id folds them all the same)."""
    if text.isascii() or _WIDTH_FORMS_RE.search(text) is None:
        return text
    return _WIDTH_FORMS_RE.sub(lambda match: unicodedata.normalize("NFKC", match.group()), text)


def email_of(surface: str) -> str:
    if not surface.endswith(">"):
        return ""
    author = parse_author(surface)
    return author.email.lower() if author is not None else ""


def _display(ident: str, forms: Counter[str]) -> str:
    """The most frequent form that is the entity's own name ("Helen Okafor", "Auntie Lin" of
    `person:lin`), else the most frequent form ("Helen" where a message's author settled it);
    ties: the smallest."""
    kind = kind_of(ident)
    ranked = sorted(forms.items(), key=lambda item: (make_id(kind, item[0]) != ident, -item[1], item[0]))
    return ranked[0][0] if ranked else ""


def _row(
    registry: Registry, ident: str, display: str, emails: Iterable[str], mentions: int
) -> tuple[Any, ...]:
    entry = registry.entries.get(ident)
    if entry is not None:
        return (entry.id, entry.kind, entry.display_name, entry.note_path, list(entry.aliases),
                list(entry.emails), list(entry.handles), mentions)  # fmt: skip
    return (ident, kind_of(ident), display or ident, None, [], sorted(set(emails)), [], mentions)


def _insert_rows(con: duckdb.DuckDBPyConnection, rows: Sequence[tuple[Any, ...]]) -> None:
    columns = columns_for(ENTITY_SCHEMA)
    for row in sorted(rows):
        for name, value in zip(ENTITY_SCHEMA.names, row, strict=True):
            columns[name].append(value)
    insert(con, "entities", ENTITY_SCHEMA, columns)


def _scan(
    con: duckdb.DuckDBPyConnection, ids: Sequence[str] | None, *, mentions: bool
) -> tuple[dict[str, int], dict[str, Counter[str]], dict[str, set[str]]]:
    """Mention counts (when asked), surface forms and addresses of `ids` (None: all) from `occurrences`."""
    # Keys go in as an Arrow table, not a list parameter: DuckDB's client probes for pandas
    # once per list element, which made long lists cost ~0.15 ms per id.
    where = "" if ids is None else "WHERE entity_id IN (SELECT k FROM _rows)"
    table = key_table(ids or ())
    counts: dict[str, int] = {}
    if mentions:
        counts = dict(
            execute_with(
                con, f"SELECT entity_id, count(DISTINCT leaf_id) FROM occurrences {where} GROUP BY entity_id", rows=table
            ).fetchall()
        )
    surfaces = execute_with(
        con, f"SELECT entity_id, surface, count(*) FROM occurrences {where} GROUP BY entity_id, surface", rows=table
    ).fetchall()
    forms: dict[str, Counter[str]] = defaultdict(Counter)
    emails: dict[str, set[str]] = defaultdict(set)
    for ident, surface, n in surfaces:
        forms[ident][form_of(surface)] += n
        address = email_of(surface)
        if address:
            emails[ident].add(address)
    return counts, forms, emails


def _delete_entities(con: duckdb.DuckDBPyConnection, ids: Sequence[str]) -> list[tuple[Any, ...]]:
    """Delete the entity rows of `ids`; return (id, display_name, emails, mentions) of each."""
    return execute_with(
        con,
        "DELETE FROM entities WHERE id IN (SELECT k FROM _rows) RETURNING id, display_name, emails, mentions",
        rows=key_table(ids),
    ).fetchall()


def refresh_entities(con: duckdb.DuckDBPyConnection, registry: Registry, ids: Sequence[str] | None) -> None:
    """Recompute the rows of `ids` (None: every row) from the registry and `occurrences`."""
    if ids is not None and not ids:
        return
    if ids is None:
        con.execute("DELETE FROM entities")
        wanted: set[str] = set(registry.entries)
    else:
        _delete_entities(con, ids)
        wanted = {i for i in ids if i in registry.entries}
    mentions, forms, emails = _scan(con, ids, mentions=True)
    _insert_rows(
        con,
        [
            _row(registry, ident, _display(ident, forms[ident]), emails[ident], int(mentions.get(ident, 0)))
            for ident in sorted(wanted | set(mentions))
        ],
    )


@dataclass
class _Change:
    mentions: int = 0
    forms: Counter[str] = field(default_factory=Counter)
    added_emails: set[str] = field(default_factory=set)
    lost_email: bool = False
    new_forms: Counter[str] = field(default_factory=Counter)  # forms of the new rows alone


def apply_entity_delta(
    con: duckdb.DuckDBPyConnection,
    registry: Registry,
    old_rows: Sequence[OccRow],
    new_rows: Sequence[OccRow],
) -> None:
    """Move the `entities` rows after the occurrences of some leaves went from `old_rows` to
    `new_rows` (all rows of those leaf ids, before and after)."""
    old_sets: dict[str, set[str]] = defaultdict(set)
    new_sets: dict[str, set[str]] = defaultdict(set)
    changes: dict[str, _Change] = defaultdict(_Change)
    for leaf, ident, surface in old_rows:
        old_sets[leaf].add(ident)
        change = changes[ident]
        change.forms[form_of(surface)] -= 1
        if email_of(surface):
            change.lost_email = True
    for leaf, ident, surface in new_rows:
        new_sets[leaf].add(ident)
        change = changes[ident]
        form = form_of(surface)
        change.forms[form] += 1
        change.new_forms[form] += 1
        address = email_of(surface)
        if address:
            change.added_emails.add(address)
    for leaf in set(old_sets) | set(new_sets):
        before, after = old_sets.get(leaf, set()), new_sets.get(leaf, set())
        for ident in after - before:
            changes[ident].mentions += 1
        for ident in before - after:
            changes[ident].mentions -= 1
    touched = sorted(
        ident
        for ident, c in changes.items()
        if c.mentions or any(c.forms.values()) or c.added_emails or c.lost_email
    )
    if not touched:
        return
    current = {
        r[0]: (r[1], list(r[2] or []), int(r[3]))
        for r in _delete_entities(con, touched)
    }
    rows: list[tuple[Any, ...]] = []
    rescan: dict[str, int] = {}  # entity → its mention count after the change (-1: unknown)
    for ident in touched:
        c = changes[ident]
        cur = current.get(ident)
        if ident in registry.entries:
            if cur is None:
                rescan[ident] = -1
            else:
                rows.append(_row(registry, ident, "", [], cur[2] + c.mentions))
            continue
        if cur is None:  # no occurrence before: the new rows are all there is
            if c.mentions > 0:
                rows.append(_row(registry, ident, _display(ident, c.new_forms), c.added_emails, c.mentions))
            continue
        display, emails, mentions = cur
        total = mentions + c.mentions
        if total <= 0:
            continue  # no mention left: the row stays deleted
        gained = [form for form, n in c.forms.items() if n > 0]
        if c.lost_email or c.forms[display] < 0 or any(form != display for form in gained):
            rescan[ident] = total
        else:
            rows.append(_row(registry, ident, display, set(emails) | c.added_emails, total))
    if rescan:
        unknown = any(n < 0 for n in rescan.values())
        counts, forms, addresses = _scan(con, sorted(rescan), mentions=unknown)
        for ident, total in sorted(rescan.items()):
            total = total if total >= 0 else int(counts.get(ident, 0))
            if total > 0 or ident in registry.entries:
                rows.append(_row(registry, ident, _display(ident, forms[ident]), addresses[ident], total))
    _insert_rows(con, rows)
