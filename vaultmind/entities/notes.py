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
person known by one word only ("Dana", "Dr. Dana": the words of the id count, not of the name as
written; add it to the right note's aliases instead) — a name of three characters or more written
without spaces, as Chinese, Japanese and Korean full names are ("王小明", "田中太郎"), is a full name; and a note
vaultmind created once is never created again, so deleting an entity note you do not want
is final. A note it wrote for a name it no longer reads ("Tell Luca", before a to-do's verb
was left out of names), still byte for byte as written, is deleted (`retire.py`). The ids
created are remembered in the vault, in `entities/.created` (a hidden file:
Obsidian does not show it, vaultmind does not index it, and it goes wherever the vault goes —
a clone, a sync — while `.vaultmind/` is derived state that may be deleted). A vault that has
the older `.vaultmind/entities-created.txt` has both read.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vaultmind.entities.headings import escape_old_headings
from vaultmind.entities.ids import key_of, unspaced_full_name
from vaultmind.entities.query import stored_fuzzy_threshold
from vaultmind.entities.registry_store import entity_note_path, load_registry, render_entity_note
from vaultmind.entities.retire import retire_misnamed_notes
from vaultmind.entities.settings import EntitySettings
from vaultmind.errors import RefuseToClobber, VaultError
from vaultmind.model import Problem
from vaultmind.vault.atomic import write_atomic
from vaultmind.vault.layout import ENTITIES_DIR, SUMMARIES_DIR

__all__ = ["create_entity_notes", "planned_entity_notes", "render_entity_note"]

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
CREATED_PATH = f"{ENTITIES_DIR}/{CREATED_FILE}"
LEGACY_CREATED_FILE = "entities-created.txt"  # in .vaultmind/, before


def planned_entity_notes(
    memory: WritesEntityNotes, settings: EntitySettings | None = None, *, done: set[str] | None = None
) -> list[tuple[str, str, str]]:
    """(entity id, vault path, note text) of the notes `create_entity_notes` would write;
    `done`: the ids of the notes created before, when the caller has read them."""
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
        SELECT id, kind, display_name, emails FROM entities
        WHERE note_path IS NULL AND kind IN (SELECT unnest(?::VARCHAR[]))
          AND (id IN (SELECT id FROM evidence WHERE leaves >= ?)
               OR id IN (SELECT id FROM misread WHERE leaves >= ?))
        ORDER BY id
        """,
        [threshold, list(settings.create_kinds), list(settings.create_kinds), threshold, threshold],
    )
    with index.lock:
        registry = load_registry(index.con, fuzzy_threshold=stored_fuzzy_threshold(index.con))
    done = _created(memory.config) if done is None else done
    out: list[tuple[str, str, str]] = []
    for ident, kind, display, emails in rows:
        if ident in done or ident in registry.entries or ident in registry.redirects:
            continue
        if registry.by_name(display).ambiguous:
            continue
        if kind == "person" and len(key_of(ident).split("-")) < 2 and not unspaced_full_name(key_of(ident)):
            continue  # a first name alone ("Dana", "Dr. Dana", "Auntie Lin") rarely identifies one person
        out.append((ident, entity_note_path(ident), render_entity_note(ident, kind, display, list(emails or []))))
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


UNWRITTEN = "entity_note_unwritten"
"""The problem kind of an entity note vaultmind could not write (said by `status`, tried again
at every sync)."""


def create_entity_notes(memory: WritesEntityNotes) -> EntityNotesWritten:
    """Write the planned entity notes, sync them into the index, and return their paths.

    A note that cannot be written (its folder is a file or read-only, the disk is full) is a
    problem `status` shows, naming the path: the other notes are still written, and the note is
    tried again at the next sync. Each id is remembered (`entities/.created`) before its note is
    written (and forgotten again when the note could not be): a note is never on disk without
    its record, so a deleted note stays deleted; when that record cannot be read or written, no
    note is. When the id cannot be forgotten either (the disk filled up meanwhile), the index
    keeps it (`WITHHELD`), `status` says so, and the next sync takes it out of the record and
    writes the note: it is not taken for a note the person deleted. A note vaultmind wrote
    before headings were escaped, still as it wrote it, gets the escaped heading (`headings`)."""
    vault = memory.config.vault
    written = EntityNotesWritten()
    try:
        done = _created(memory.config)
    except (OSError, UnicodeError) as exc:  # which notes were deleted is not known
        written.problems.append(_unwritten(vault, CREATED_PATH, exc, "read"))
        _say(memory.index, written.problems)
        return written
    before = _withheld(memory.index)
    withheld = {ident for ident in before if ident in done and not _exists_any_case(vault / entity_note_path(ident))}
    if withheld:
        try:
            _remember(memory.config, done - withheld)
        except (OSError, VaultError) as exc:
            written.problems.extend(_unforgotten(ident, exc) for ident in sorted(withheld))
        else:
            done -= withheld
            withheld = set()
    written.removed = retire_misnamed_notes(vault, memory.index, done)  # "Tell Luca", written before
    for ident, rel, text in planned_entity_notes(memory, done=done):
        target = vault / rel
        if _exists_any_case(target):
            continue
        try:
            _remember(memory.config, done | {ident})
        except (OSError, VaultError) as exc:
            written.problems.append(_unwritten(vault, CREATED_PATH, exc))
            break
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, text.encode("utf-8"), overwrite=False)
        except (OSError, VaultError) as exc:
            try:
                _remember(memory.config, done)  # tried again at the next sync
            except (OSError, VaultError) as undo:  # the record says written: the index says not
                written.problems.append(_unforgotten(ident, undo, exc))
                withheld.add(ident)
                break
            if not isinstance(exc, RefuseToClobber):  # (a file of the person's came first)
                written.problems.append(_unwritten(vault, rel, exc))
            continue
        written.paths.append(rel)
        done.add(ident)
    _say(memory.index, written.problems, withheld if withheld != before else None)
    escaped = escape_old_headings(vault, memory.index)  # notes written before headings were escaped
    if written.paths or escaped or written.removed:
        memory.sync_paths(written.paths + escaped + written.removed)
    return written


@dataclass(slots=True)
class EntityNotesWritten:
    """What `create_entity_notes` did: the notes written (vault paths), those it could not, and
    those of its own it removed."""

    paths: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # vaultmind's own notes of a name it no longer reads (`retire`)

    def to_dict(self) -> dict[str, Any]:
        return {
            "entity_notes": list(self.paths),
            "entity_notes_removed": list(self.removed),
            "problems": [{"path": p.path, "kind": p.kind, "message": p.message} for p in self.problems],
        }


def _unwritten(vault: Path, rel: str, exc: Exception, what: str = "write") -> Problem:
    reason = _reason(exc)
    where = str(getattr(exc, "filename", None) or getattr(exc, "path", None) or rel)
    with contextlib.suppress(ValueError):  # the vault's own path, as every problem names it
        where = Path(where).relative_to(vault).as_posix()
    mend = (
        "make that folder writable or move aside the file in its way"
        if what == "write"
        else "make it a readable UTF-8 file (the ids of the entity notes vaultmind wrote, one a line;"
        " without it, entity notes you deleted come back)"
    )
    return Problem(
        rel, UNWRITTEN, f"vaultmind could not {what} it ({reason}: {where}); {mend} — it is tried again at the next sync"
    )


def _unforgotten(ident: str, undo: Exception, write: Exception | None = None) -> Problem:
    """The problem of a note not written (`write`: why) whose id stays in the record, which
    says it was (`undo`: why)."""
    first = f"vaultmind could not write it ({_reason(write)}), nor" if write is not None else "vaultmind could not"
    return Problem(
        entity_note_path(ident),
        UNWRITTEN,
        f"{first} take `{ident}` back out of {CREATED_PATH} ({_reason(undo)}); make room or make that folder"
        f" writable — the next sync takes it out and writes the note (with the index rebuilt meanwhile,"
        f" remove that line yourself, or the note is taken for one you deleted)",
    )


def _reason(exc: Exception) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


WITHHELD = "entity_notes_withheld"
"""The index's meta key holding the ids (a JSON list) that are in `entities/.created` though
their note was never written: the next sync takes them out of it."""


def _withheld(index: Index) -> set[str]:
    value = index.get_meta(WITHHELD)
    return set(json.loads(value)) if value else set()


def _say(index: Index, problems: list[Problem], withheld: set[str] | None = None) -> None:
    """The entity notes that could not be written, as the problems `status` shows (the last
    attempt's only), and the ids `withheld` when they changed. Nothing to say and nothing said
    before: no commit (every commit makes a serving process's views of the index stale)."""
    said = index.scalar("SELECT count(*) FROM problems WHERE kind = ?", [UNWRITTEN])
    if not problems and not said and withheld is None:
        return
    with index.transaction() as con:
        if withheld is not None:
            index.set_meta(con, WITHHELD, json.dumps(sorted(withheld)))
        con.execute("DELETE FROM problems WHERE kind = ?", [UNWRITTEN])
        for problem in problems:
            con.execute(
                "INSERT INTO problems (path, kind, message) VALUES (?, ?, ?)",
                [problem.path, problem.kind, problem.message],
            )


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
        except (FileNotFoundError, NotADirectoryError):  # none yet (another error: not known)
            continue
        done.update(line.strip() for line in text.splitlines() if line.strip())
    return done


def _remember(config: Config, done: set[str]) -> None:
    folder = config.vault / ENTITIES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / CREATED_FILE, ("\n".join(sorted(done)) + "\n").encode("utf-8"), overwrite=True)
