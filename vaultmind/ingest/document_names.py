"""A document note named as an earlier vaultmind named it, by the slug of its title (`note-a.md`
for `Note A.md`), takes its file's name when its document is ingested again, so that the links
between documents (`[[Note A]]`) find it in Obsidian, which resolves them by file name only.

It is renamed only when that is safe: the note is vaultmind's as written (not edited), in its
scope's folder under the name vaultmind gave it (a name you gave it in Obsidian stays), the new
name is free, and no note of the vault links to the old name (`[[note-a]]`, typed in Obsidian or
written by a summary: a rename outside Obsidian would break it). Otherwise it keeps its name."""

from __future__ import annotations

import re
from pathlib import Path

from vaultmind.ingest.held import Existing, carries
from vaultmind.ingest.names import slugify
from vaultmind.ingest.plan import Plan
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.markdown.obsidian import parse_obsidian
from vaultmind.vault.encoding import decode_text
from vaultmind.vault.scan import walk_folders

_NUMBERED_RE = re.compile(r"-\d+")


def renamed_to_file_name(plan: Plan, note: Existing, folder: str, stem: str) -> str | None:
    """The path `note` moves to, `<folder>/<stem>.md`, when it carries the name an earlier
    vaultmind gave it and can be renamed safely (see the module doc); else None."""
    path = f"{folder}/{stem}.md"
    old_folder, _, old_name = note.path.rpartition("/")
    old_stem = old_name[: -len(".md")]
    if old_folder != folder or old_stem == stem or path.casefold() == note.path.casefold():
        return None
    if not (note.owned and carries(note)) or not _slug_named(old_stem, str(note.data.get("title") or "")):
        return None
    if path in plan.claimed or path.casefold() in plan.folded or plan.existing(path) is not None:
        return None
    if old_stem.casefold() in linked_names(plan):
        return None
    return path


def _slug_named(stem: str, title: str) -> bool:
    """Whether `stem` is the name an earlier vaultmind gave a document of `title`: its slug, or
    its slug numbered (`note-a-2`) when another document had that name."""
    slug = slugify(title)
    return stem == slug or (stem.startswith(slug) and _NUMBERED_RE.fullmatch(stem[len(slug) :]) is not None)


def linked_names(plan: Plan) -> frozenset[str]:
    """The names (the last part of the path, without `.md`, case folded) every link of every
    note of the vault targets, hidden folders (`.obsidian`, `.vaultmind`, `.trash`) aside; read
    once per ingest, and only when a note may be renamed."""
    if plan.link_names is None:
        names: set[str] = set()
        for folder, files in walk_folders(plan.vault):
            if any(part.startswith(".") for part in Path(folder).relative_to(plan.vault).parts):
                continue
            for name in files:
                if name.endswith(".md") and not name.startswith("."):
                    names.update(_targets(Path(folder) / name))
        plan.link_names = frozenset(names)
    return plan.link_names


def _targets(path: Path) -> set[str]:
    try:
        text = decode_text(path.read_bytes(), fallback="cp1252").text
    except OSError:
        return set()
    if not text or ("[[" not in text and "](" not in text):
        return set()
    fm = split_frontmatter(text)
    out = set()
    for link in parse_obsidian(fm.body, fm.data).links:
        name = link.target.replace("\\", "/").rsplit("/", 1)[-1]
        if name.lower().endswith(".md"):
            name = name[: -len(".md")]
        if name:
            out.add(name.casefold())
    return out
