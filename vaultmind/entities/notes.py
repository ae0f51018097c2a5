"""Entity notes vaultmind creates: `entities/<kind>/<slug>.md` once an entity has enough evidence.

After a sync, every entity without a note whose kind is in `[entities] create_kinds` (person,
org, topic) and that is mentioned in at least `[entities] create_threshold` leaves (3; a
summary's leaves do not count, they repeat the words of the leaves below them) gets a note (a person who writes from an address counts the leaves where the model read her name as
a place or an organization too: `_MISREAD_PEOPLE`), rendered deterministically
(`markdown.render.render_note`, so it carries `vaultmind_body_sha256`):

```markdown
---
vaultmind: entity
id: "person:dana-whitfield"
kind: person
display_name: Dana Whitfield
aliases: []
emails:
  - dana@harborhall.example
handles: []
vaultmind_body_sha256: "…"
---
# Dana Whitfield
```

Rules: an existing file is never overwritten (not even one differing only in case); a name
that is ambiguous in the registry gets no note (it would only hide the ambiguity), nor does a
person known by one word only ("Dana": add it to the right note's aliases instead); and a note
vaultmind created once is never created again, so deleting an entity note you do not want
is final. The ids created are remembered in the vault, in `entities/.created` (a hidden file:
Obsidian does not show it, vaultmind does not index it, and it goes wherever the vault goes —
a clone, a sync — while `.vaultmind/` is derived state that may be deleted). A vault that has
the older `.vaultmind/entities-created.txt` has both read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vaultmind.entities.ids import normalize
from vaultmind.entities.query import stored_fuzzy_threshold
from vaultmind.entities.registry_store import load_registry, slug_of
from vaultmind.entities.settings import EntitySettings
from vaultmind.errors import RefuseToClobber
from vaultmind.markdown.render import render_note
from vaultmind.vault.atomic import write_atomic
from vaultmind.vault.layout import ENTITIES_DIR, SUMMARIES_DIR

if TYPE_CHECKING:
    from vaultmind.config import Config
    from vaultmind.index.store import Index
    from vaultmind.model import SyncStats


class WritesEntityNotes(Protocol):
    """What writing entity notes needs of an open memory (`memory.Memory` is one): the
    vault's settings, the index to plan from, and the sync that brings the new notes in."""

    config: Config
    index: Index

    def sync_paths(self, paths: list[str]) -> SyncStats: ...

CREATED_FILE = ".created"  # in entities/
LEGACY_CREATED_FILE = "entities-created.txt"  # in .vaultmind/, before


def planned_entity_notes(
    memory: WritesEntityNotes, settings: EntitySettings | None = None
) -> list[tuple[str, str, str]]:
    """(entity id, vault path, note text) of the notes `create_entity_notes` would write."""
    settings = settings or EntitySettings.from_config(memory.config)
    index = memory.index
    if not settings.create_kinds:
        return []
    threshold = settings.create_threshold
    rows = index.query(
        f"""
        WITH {_MISREAD_PEOPLE},
        candidate AS (
            SELECT id FROM entities WHERE note_path IS NULL AND mentions >= ?
              AND kind IN (SELECT unnest(?::VARCHAR[]))),
        evidence AS (
            SELECT o.entity_id AS id, count(DISTINCT o.leaf_id) AS leaves FROM occurrences o
            WHERE o.entity_id IN (SELECT id FROM candidate) AND {_NOT_A_SUMMARY} GROUP BY o.entity_id)
        SELECT id, kind, display_name, aliases, emails FROM entities
        WHERE note_path IS NULL AND kind IN (SELECT unnest(?::VARCHAR[]))
          AND (id IN (SELECT id FROM evidence WHERE leaves >= ?)
               OR id IN (SELECT id FROM misread WHERE leaves >= ?))
        ORDER BY id
        """,
        [threshold, list(settings.create_kinds), list(settings.create_kinds), threshold, threshold],
    )
    with index.lock:
        registry = load_registry(index.con, fuzzy_threshold=stored_fuzzy_threshold(index.con))
    done = _created(memory.config)
    out: list[tuple[str, str, str]] = []
    for ident, kind, display, aliases, emails in rows:
        if ident in done or ident in registry.entries or ident in registry.redirects:
            continue
        if registry.by_name(display).ambiguous:
            continue
        if kind == "person" and len(normalize(display).split(" ")) < 2:
            continue  # a first name alone ("Dana") rarely identifies one person
        path = f"{ENTITIES_DIR}/{kind}/{slug_of(ident)}.md"
        key = normalize(display)
        extra = [a for a in dict.fromkeys(aliases or []) if normalize(a) and normalize(a) != key]
        out.append((ident, path, render_entity_note(ident, kind, display, extra, list(emails or []))))
    return out


# A summary repeats its leaves' words: its mentions are the same evidence counted again (the
# "Pro" of "the Pro tier" read in two leaves and in the two summaries over them is no entity
# mentioned four times), so only the leaves of other notes count towards a note.
_NOT_A_SUMMARY = f"NOT starts_with(o.note_path, '{SUMMARIES_DIR}/')"

# The leaves of a person who wrote from an address (a `Name <address>` author: surely a person)
# and of the place or organization of the same name, as each leaf read it (`read_as`: before its
# kind is settled across the vault) — the model reads "approved by Helen Okafor" as a place now
# and then. Counted together, her note is written, and once it is,
# every "Helen Okafor" resolves to her, "Helen" and her address too.
_MISREAD_PEOPLE = f"""
    wrote AS (
        SELECT id, substr(id, length('person:') + 1) AS key FROM entities
        WHERE note_path IS NULL AND kind = 'person' AND len(emails) > 0),
    named AS (
        SELECT id, id AS other FROM wrote
        UNION ALL SELECT id, 'place:' || key FROM wrote
        UNION ALL SELECT id, 'org:' || key FROM wrote),
    misread AS (
        SELECT n.id, count(DISTINCT o.leaf_id) AS leaves
        FROM named n JOIN occurrences o ON coalesce(o.read_as, o.entity_id) = n.other
        WHERE {_NOT_A_SUMMARY} GROUP BY n.id)
"""


def render_entity_note(ident: str, kind: str, display: str, aliases: list[str], emails: list[str]) -> str:
    items: list[tuple[str, Any]] = [
        ("vaultmind", "entity"),
        ("id", ident),
        ("kind", kind),
        ("display_name", display),
        ("aliases", aliases),
        ("emails", emails),
        ("handles", []),
    ]
    return render_note(items, f"# {display}\n")


def create_entity_notes(memory: WritesEntityNotes) -> list[str]:
    """Write the planned entity notes, sync them into the index, and return their paths."""
    vault = memory.config.vault
    created: list[str] = []
    ids: list[str] = []
    for ident, rel, text in planned_entity_notes(memory):
        target = vault / rel
        if _exists_any_case(target):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            write_atomic(target, text.encode("utf-8"), overwrite=False)
        except RefuseToClobber:
            continue
        created.append(rel)
        ids.append(ident)
    if created:
        _remember(memory.config, ids)
        memory.sync_paths(created)
    return created


def _exists_any_case(path: Path) -> bool:
    if os.path.lexists(path):
        return True
    folder = path.parent
    if not folder.is_dir():
        return False
    wanted = path.name.casefold()
    try:
        return any(name.casefold() == wanted for name in os.listdir(folder))
    except OSError:
        return True


def _created(config: Config) -> set[str]:
    """The ids of the entity notes vaultmind has created in this vault, ever."""
    done: set[str] = set()
    for path in (config.vault / ENTITIES_DIR / CREATED_FILE, config.state_dir / LEGACY_CREATED_FILE):
        try:
            text = path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):
            continue
        done.update(line.strip() for line in text.splitlines() if line.strip())
    return done


def _remember(config: Config, ids: list[str]) -> None:
    folder = config.vault / ENTITIES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    done = sorted(_created(config) | set(ids))
    write_atomic(folder / CREATED_FILE, ("\n".join(done) + "\n").encode("utf-8"), overwrite=True)
