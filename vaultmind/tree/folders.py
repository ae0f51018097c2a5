"""The folder of a tree's summary notes: `summaries/<folder>/L<n>/`.

A tree keeps the folder its summaries are in (an earlier version may have named it otherwise:
they never move). A tree with none yet gets its slug (`note.tree_slug`), unless summaries of
another tree are there — two ids whose slugs are one (`whatsapp:Team A` and `whatsapp:team-a`,
two mailboxes whose names fold alike) —: then its slug, `-` and 8 hex of its id's sha256
(`note.tree_digest`). A seal writes its note and indexes it before the next, so of two such
trees the one that seals first keeps the plain slug, whatever the order of later passes."""

from __future__ import annotations

from collections.abc import Sequence

from vaultmind.index.store import Index
from vaultmind.tree.note import tree_digest, tree_slug
from vaultmind.vault.layout import SUMMARIES_DIR


def tree_folders(index: Index, trees: Sequence[str]) -> dict[str, str]:
    """Tree id → the name of its folder under `summaries/`, for each of `trees`."""
    slugs = {tree: tree_slug(tree) for tree in trees}
    rows = index.query(
        """SELECT DISTINCT tree, split_part(note_path, '/', 2) AS folder FROM summaries
           WHERE starts_with(note_path, ?)
             AND (tree IN (SELECT unnest(?::VARCHAR[])) OR folder IN (SELECT unnest(?::VARCHAR[])))
           ORDER BY 1, 2""",
        [SUMMARIES_DIR + "/", sorted(slugs), sorted(set(slugs.values()))],
    )
    own: dict[str, str] = {}
    held_by: dict[str, set[str]] = {}
    for tree, folder in rows:
        own.setdefault(tree, folder)
        held_by.setdefault(folder, set()).add(tree)
    out: dict[str, str] = {}
    for tree, slug in slugs.items():
        if tree in own:
            out[tree] = own[tree]
        elif held_by.get(slug, set()) - {tree}:
            out[tree] = f"{slug}-{tree_digest(tree)}"
        else:
            out[tree] = slug
    return out
