"""Entity notes vaultmind wrote before their heading was escaped, written once with it.

Before, the heading of an entity note was its display name as it is: `# Dana Whitfield #ops`
lists the note under the tag #ops in Obsidian (and the index gave it that tag), a `%%` in a
name hides the rest of the heading, a `<tag>` shows as nothing. Such a note still vaultmind's
as it wrote it — its body exactly that heading, with the hash recorded in its
`vaultmind_body_sha256` — gets the escaped heading (`registry_store.entity_note_body`) and
that body's hash, nothing else: the keys and aliases you added to its front matter stay as they
are, byte for byte, and so do its line endings (LF, or CR LF throughout in a vault checked out
on Windows). A note whose body you edited, or whose display name you changed, is yours and never
written, nor is a note that is a link you made; the front matter on disk is checked again, as
it may have changed since the sync. The write replaces the note only while it holds the bytes
read (`expect`): an edit saved meanwhile wins, and the note is looked at again at the next sync.

Only a note whose display name holds what the heading escapes is looked at (a prefilter in the
index, `_MARKUP`); once written, its hash is the escaped body's and it is passed over.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from vaultmind.entities.registry_store import entity_note_body, unescaped_entity_note_body
from vaultmind.errors import VaultError
from vaultmind.markdown.frontmatter import body_sha256, split_frontmatter
from vaultmind.vault.atomic import write_atomic

if TYPE_CHECKING:
    from vaultmind.index.store import Index

# A display name `shown_line` may escape: a "#" that opens a tag, "%%", "$$", a "<" that opens a
# tag, a trailing "^id" (wider than what it escapes: the hashes decide)
_MARKUP = r"(^|\s)#[^\s#]|%%|\$\$|<[A-Za-z/!?]|\^[A-Za-z0-9-]+\s*$"


def escape_old_headings(vault: Path, index: Index) -> list[str]:
    """Write the escaped heading into each entity note vaultmind wrote with the old one and that
    is still as it wrote it; the vault paths of the notes written (to be synced)."""
    written = []
    for path, display, recorded in _candidates(index):
        target = vault / path
        if target.is_symlink():
            continue  # a link you made (to a note kept elsewhere): writing would put a file in its place
        try:
            held = target.read_bytes()
            data = _with_escaped_heading(held, display, recorded)
            if data is not None:
                write_atomic(target, data, overwrite=True, expect=held)
                written.append(path)
        except (OSError, UnicodeDecodeError, VaultError):
            continue  # gone, unreadable, or edited meanwhile: looked at again at the next sync
    return written


def _candidates(index: Index) -> list[tuple[str, str, str]]:
    """(path, display name, recorded body hash) of the entity notes whose recorded hash is that
    of the old heading, which the escaped one is not."""
    rows = index.query(
        """SELECT path, trim(json_extract_string(frontmatter, '$.display_name')),
                  json_extract_string(frontmatter, '$.vaultmind_body_sha256')
           FROM notes
           WHERE kind = 'entity' AND json_extract_string(frontmatter, '$.vaultmind') = 'entity'
             AND regexp_matches(json_extract_string(frontmatter, '$.display_name'), ?)
           ORDER BY path""",
        [_MARKUP],
    )
    return [
        (path, display, recorded)
        for path, display, recorded in rows
        if display
        and recorded == body_sha256(unescaped_entity_note_body(display))
        and recorded != body_sha256(entity_note_body(display))
    ]


def _with_escaped_heading(held: bytes, display: str, recorded: str) -> bytes | None:
    """The note `held` with the escaped heading and its hash, its line endings kept (LF, or CR LF
    throughout: a vault checked out on Windows); None unless it is on disk what the index says
    (`_still_vaultminds`), its body is exactly the old heading and its front matter names
    `recorded` once."""
    text = held.decode("utf-8")
    crlf = text.count("\r\n") == text.count("\n") > 0  # not mixed: written back as it was
    if crlf:
        text = text.replace("\r\n", "\n")
    old = unescaped_entity_note_body(display)
    if "\r" in text or not text.endswith("\n---\n" + old) or not _still_vaultminds(text, display, recorded):
        return None
    head = text[: -len(old)]
    if head.count(recorded) != 1:
        return None
    new = entity_note_body(display)
    written = head.replace(recorded, body_sha256(new)) + new
    return (written.replace("\n", "\r\n") if crlf else written).encode("utf-8")


def _still_vaultminds(text: str, display: str, recorded: str) -> bool:
    """Whether the note's front matter on disk is still what `_candidates` read in the index: the
    note may have changed since the sync (its entities are looked for in between, which can take
    long), and a note whose display name you changed, or that you took over, is yours."""
    data = split_frontmatter(text).data
    return (
        str(data.get("vaultmind")) == "entity"
        and str(data.get("display_name", "")).strip() == display
        and data.get("vaultmind_body_sha256") == recorded
    )
