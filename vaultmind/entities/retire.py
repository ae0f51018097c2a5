"""Entity notes vaultmind wrote for a name it no longer reads, taken back out of the vault.

Before a to-do's verb was left out of a name (`common_words.after_leading_verb`), "Tell Luca to
pack light" and "Ping Sarah about the invoice" were people, and three such lines wrote
`entities/person/tell-luca.md`. Such a note, once in the vault, would keep the name alive: its
display name is a name of the registry, found in every text before the model's guess. So a person's
note whose display name opens with such a verb is deleted when it is still exactly as vaultmind wrote
it — byte for byte what `render_entity_note` renders from its own front matter, an id in
`entities/.created` (so it is never written again) — and the texts that named it are read again
without it. A note you edited in any way (an alias, a line of your own, another display name),
moved or made a link is yours and stays; an organization's name may open with such a word
("Contact Energy") and its note stays too.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from vaultmind.entities.common_words import after_leading_verb
from vaultmind.entities.ids import kind_of
from vaultmind.entities.registry_store import entity_note_path, render_entity_note

if TYPE_CHECKING:
    from vaultmind.index.store import Index


def misnamed(display: str) -> bool:
    """Whether a display name opens with a to-do's verb before a name ("Tell Luca")."""
    return after_leading_verb(display, 0, len(display)) != 0


def retire_misnamed_notes(vault: Path, index: Index, created: set[str]) -> list[str]:
    """Delete the person notes vaultmind created (`created`: their ids) whose display name is
    `misnamed` and that are still as it wrote them; their vault paths (to be synced). Only a
    person's: an organization's name may open with such a word ("Contact Energy", "Ring Central")."""
    gone: list[str] = []
    for path, ident, display, emails in _candidates(index):
        if ident not in created or kind_of(ident) != "person" or not misnamed(display) or path != entity_note_path(ident):
            continue
        target = vault / path
        try:
            if target.is_symlink() or target.read_bytes() != _as_written(ident, display, emails):
                continue
            target.unlink()
        except (OSError, UnicodeError):
            continue  # gone or unreadable: looked at again at the next sync
        gone.append(path)
    return gone


def _candidates(index: Index) -> list[tuple[str, str, str, list[str]]]:
    """(path, id, display name, e-mails) of the entity notes marked as vaultmind's."""
    rows = index.query(
        """SELECT path, json_extract_string(frontmatter, '$.id'),
                  json_extract_string(frontmatter, '$.display_name'),
                  coalesce(json_extract_string(frontmatter, '$.emails[*]'), [])
           FROM notes
           WHERE kind = 'entity' AND json_extract_string(frontmatter, '$.vaultmind') = 'entity'
           ORDER BY path"""
    )
    return [(path, ident, display, list(emails)) for path, ident, display, emails in rows if ident and display]


def _as_written(ident: str, display: str, emails: list[str]) -> bytes:
    return render_entity_note(ident, kind_of(ident), display, emails).encode("utf-8")
