"""A document note placed as an earlier vaultmind placed it — named by the slug of its title
(`note-a.md` for `Note A.md`), in the slugs of its folders (`meeting-notes/` for `Meeting
Notes/`) — takes its file's name and folders when its document is ingested again, so that the
links between documents (`[[Note A]]`, `[[Meeting Notes/Note A]]`) find it in Obsidian, which
resolves a link by file name, or by the end of its path, only.

It moves only when that is safe: the note is vaultmind's as written (not edited), where an
earlier vaultmind put it, under the name it gave it (a name or folder you gave it in Obsidian
stays), the new place is free, and no link of the vault that finds it now would lose it
(`[[note-a]]`, typed in Obsidian or written by a summary: a rename outside Obsidian breaks it;
`[[Note A]]` finds it in either folder). Otherwise it stays where it is.

A move is a write at the new place, then the old one removed (`writer`); an ingest killed in
between leaves both, which the next one finds (`half_moved`) and finishes."""

from __future__ import annotations

import re
from pathlib import Path

from vaultmind.ingest.held import Existing, carries
from vaultmind.ingest.names import slugify
from vaultmind.ingest.plan import Plan
from vaultmind.markdown.obsidian import raw_link_targets
from vaultmind.vault.encoding import decode_text
from vaultmind.vault.scan import walk_folders

_NUMBERED_RE = re.compile(r"-\d+")


def renamed_to_file_name(plan: Plan, note: Existing, earlier_folder: str, path: str) -> str | None:
    """`path`, where `note`, placed in `earlier_folder` by an earlier vaultmind, moves when that
    is safe (see the module doc); None when it stays."""
    if not _may_leave(plan, note, earlier_folder, path):
        return None
    if path in plan.claimed or path.casefold() in plan.folded or plan.existing(path) is not None:
        return None
    return path


def half_moved(plan: Plan, mine: list[Existing], earlier_folder: str, path: str) -> Existing | None:
    """The note a move killed between its two steps left behind (the note at `path` written, the
    one it leaves not yet removed): of the notes of one document (`mine`), the one that would
    move to `path` (see the module doc) while `path` holds a note of vaultmind's, as written, of
    the same id. Both as vaultmind wrote them, the move is finished by removing it; None when
    there is no such pair (a note you edited is never one)."""
    moved = next((note for note in mine if note.path == path and note.owned and carries(note)), None)
    if moved is None:
        return None
    return next(
        (
            note
            for note in mine
            if note is not moved and note.source_id == moved.source_id and _may_leave(plan, note, earlier_folder, path)
        ),
        None,
    )


def _may_leave(plan: Plan, note: Existing, earlier_folder: str, path: str) -> bool:
    """Whether `note`, placed in `earlier_folder` by an earlier vaultmind, may leave its place
    for `path`: vaultmind's as written, under the name it gave it, and no link finds it there
    only (whether `path` is free is the caller's)."""
    old_folder, _, old_name = note.path.rpartition("/")
    folder, _, name = path.rpartition("/")
    old_stem, stem = old_name[: -len(".md")], name[: -len(".md")]
    if path.casefold() == note.path.casefold() or old_folder not in (earlier_folder, folder):
        return False
    if old_stem != stem and not _slug_named(old_stem, str(note.data.get("title") or "")):
        return False
    if not (note.owned and carries(note)):
        return False
    before, after = note.path[: -len(".md")].casefold(), path[: -len(".md")].casefold()
    return not any(_finds(target, before) and not _finds(target, after) for target in linked(plan).get(old_stem.casefold(), ()))


def _finds(target: str, stem_path: str) -> bool:
    """Whether a link to `target` finds the note at `stem_path` (both case folded, without `.md`),
    as Obsidian resolves a link: by the whole path, or by its end."""
    target = target.lstrip("/")
    while target.startswith(("./", "../")):  # relative to the linking note: by its end, at the least
        target = target.split("/", 1)[1]
    return stem_path == target or stem_path.endswith("/" + target)


def _slug_named(stem: str, title: str) -> bool:
    """Whether `stem` is the name an earlier vaultmind gave a document of `title`: its slug, or
    its slug numbered (`note-a-2`) when another document had that name."""
    slug = slugify(title)
    return stem == slug or (stem.startswith(slug) and _NUMBERED_RE.fullmatch(stem[len(slug) :]) is not None)


def linked(plan: Plan) -> dict[str, set[str]]:
    """The targets of every link of every note of the vault (case folded, without `.md`), by the
    name they end with, hidden folders (`.obsidian`, `.vaultmind`, `.trash`) aside; read once
    per ingest, and only when a note may move."""
    if plan.link_targets is None:
        plan.link_targets = {}
        for folder, files in walk_folders(plan.vault):
            if any(part.startswith(".") for part in Path(folder).relative_to(plan.vault).parts):
                continue
            for name in files:
                if name.endswith(".md") and not name.startswith("."):
                    for target in _targets(Path(folder) / name):
                        plan.link_targets.setdefault(target.rsplit("/", 1)[-1], set()).add(target)
    return plan.link_targets


def _targets(path: Path) -> set[str]:
    """The targets of the links of the note at `path` (`raw_link_targets`: one in a code block
    counts too, and so keeps a note where it is), case folded, without `.md`."""
    try:
        data = path.read_bytes()
    except OSError:
        return set()
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:  # (UTF-16 re-saved, a legacy code page: `vault.encoding`)
        text = decode_text(data, fallback="cp1252").text
    out = set()
    for raw in raw_link_targets(text or ""):
        target = raw.replace("\\", "/").strip()
        if target.lower().endswith(".md"):
            target = target[: -len(".md")]
        if target:
            out.add(target.casefold())
    return out
