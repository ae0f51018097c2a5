"""Where things live in a vault, and what kind of note a path is.

The vault contract (docs/vault-format.md):
    sources/<kind>/<scope>/…/*.md   canonical sources written by vaultmind
    summaries/<tree>/L<n>/<id>.md   sealed summary notes
    entities/<kind>/<id>.md         entity notes
    <anything else>.md              the user's own notes
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import quote

from vaultmind.model import NoteKind

SOURCES_DIR = "sources"
SUMMARIES_DIR = "summaries"
ENTITIES_DIR = "entities"
STATE_DIR = ".vaultmind"

NOTE_SUFFIX = ".md"


def note_kind(path: str) -> NoteKind:
    """The kind of a vault-relative POSIX path, decided by its top folder."""
    top = path.split("/", 1)[0]
    if top == SOURCES_DIR:
        return "source"
    if top == SUMMARIES_DIR:
        return "summary"
    if top == ENTITIES_DIR:
        return "entity"
    return "user"


def is_note(path: str) -> bool:
    return path.lower().endswith(NOTE_SUFFIX)


def obsidian_link(vault_name: str, path: str, anchor: str = "") -> str:
    """An `obsidian://open` URI for a note, with an optional "#Heading" or "^block" anchor."""
    file = path[: -len(NOTE_SUFFIX)] if path.lower().endswith(NOTE_SUFFIX) else path
    # quoted in parts (each character is quoted on its own): the vault's and the notes' names
    # repeat from hit to hit, the anchors do not
    quoted = _quoted(file)
    if anchor:
        quoted += quote(anchor if anchor.startswith("#") else "#" + anchor, safe="")
    return f"obsidian://open?vault={_quoted(vault_name)}&file={quoted}"


@lru_cache(maxsize=4096)
def _quoted(text: str) -> str:
    return quote(text, safe="")


def wikilink(path: str, anchor: str = "", alias: str = "") -> str:
    """An Obsidian wikilink to a vault path ("[[folder/note#^block|alias]]")."""
    target = path[: -len(NOTE_SUFFIX)] if path.lower().endswith(NOTE_SUFFIX) else path
    if anchor:
        target += anchor if anchor.startswith("#") else "#" + anchor
    return f"[[{target}|{alias}]]" if alias else f"[[{target}]]"
