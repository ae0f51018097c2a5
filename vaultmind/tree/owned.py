"""Whether a summary note is still vaultmind's, and how it is written over or replaced
without losing what you gave it.

A summary note is vaultmind's while its `vaultmind` key says `summary` and its body has the
hash vaultmind recorded (`note.is_vaultminds`); edit either and it is yours, never written over
nor removed. A note is read again right before a write or a delete (`changed_since`): an edit
saved meanwhile wins. The keys, aliases and title you added to a summary of vaultmind's stay
when it is rewritten or sealed again at its path (`keeping_yours`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from vaultmind.markdown.frontmatter import split_frontmatter, with_user_keys
from vaultmind.tree.note import SUMMARY_KEYS, SummaryNote, is_generated_title, is_vaultminds, user_title
from vaultmind.vault.atomic import write_atomic


def write_owned(path: Path, note: SummaryNote) -> str | None:
    """Write `note` over the summary note at `path` if vaultmind still owns it: "written",
    "same" (these bytes are there already), or None (you edited it, or it cannot be read).
    The keys and aliases you added stay."""
    try:
        existing = path.read_bytes()
    except OSError:
        return None
    if not is_owned(existing):
        return None
    data = keeping_yours(note, existing)
    if existing == data:
        return "same"
    if changed_since(path, existing):
        return None  # you saved it while it was rendered: yours
    write_atomic(path, data, overwrite=True)
    return "written"


def keeping_yours(note: SummaryNote, old: bytes) -> bytes:
    """`note` rendered with the keys, aliases and title you gave `old`, the note it replaces."""
    return with_user_keys(with_aliases(note, old).render().encode("utf-8"), old, SUMMARY_KEYS)


def changed_since(path: Path, held: bytes) -> bool:
    """Read again right before a write or a delete: the note is no longer the bytes its
    ownership was judged on (an edit saved meanwhile), or it is gone."""
    try:
        return path.read_bytes() != held
    except OSError:
        return True


def with_aliases(note: SummaryNote, old: bytes) -> SummaryNote:
    """`note` keeping the aliases you added to the note it replaces (all but vaultmind's
    titles) and the title you gave it (`note.user_title`)."""
    fm = split_frontmatter(old.decode("utf-8", errors="replace")).data
    if not note.title:
        return note
    aliases = fm.get("aliases")
    old_title = fm.get("title")
    yours = tuple(
        a
        for a in (aliases if isinstance(aliases, list) else ())
        if isinstance(a, str) and a.strip() and a not in (old_title, note.title) and not is_generated_title(a)
    )
    return replace(note, aliases=yours, user_title=user_title(fm))


def is_owned(data: bytes) -> bool:
    """True while the summary note `data` is vaultmind's (`note.is_vaultminds`)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    fm = split_frontmatter(text)
    return is_vaultminds(fm.data, fm.body)
