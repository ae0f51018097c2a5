"""The files of a folder given to ingest, each read once.

Every adapter that takes a folder (chat, email, document) walks it alike: entries in name order,
depth first, hidden ones (`.git`, `.DS_Store`) skipped. A symlinked folder is followed (a link
to your Dropbox export is the export), but each real folder and file is read once: a symlink
loop (a link to a folder that holds it), or a second way to a folder or file already read, is
skipped with a warning naming both paths. Otherwise a loop wrote every document again at each
turn, forty levels deep, and a link beside its target wrote its documents twice.

The vault's own folders are walked otherwise, by `vault.scan.walk_folders` (the notes a kind's
folder holds, `held.notes_below`; vaultmind's notes moved anywhere, `moved`): no symlinked
folder is followed there (a link in the vault is no other copy of the notes vaultmind wrote)
and nothing is said of what is passed over (an ingest's warnings speak of what it was given).
A folder given that holds the vault written to (`ingest email ~/Downloads` with the vault in
it) has the vault's own notes left out, said in one line (`vault_note`, `vault_notes_skipped`),
not one warning per note.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from vaultmind.plural import counted


def walk_files(root: Path, warnings: list[str], *, whole: Callable[[Path], bool] | None = None) -> Iterator[Path]:
    """The files below `root`, and the folders `whole` takes as one (a Maildir), in name order;
    see the module doc. Iterative (a stack of folder listings, each with its folder's real
    path), so a tree of any depth is walked: a recursive walk hit Python's recursion limit
    below about 990 levels, and resolving each entry's path anew took time in the square of
    its depth."""
    seen: dict[str, Path] = {}
    real_root = os.path.realpath(root)
    if not _first_visit(root, real_root, seen, warnings):
        return
    listings = [(_entries(root, warnings), real_root)]
    while listings:
        entries, real_folder = listings[-1]
        entry = next(entries, None)
        if entry is None:
            listings.pop()
            continue
        kind = _kind(entry, warnings)
        if kind is None:
            continue
        real = os.path.realpath(entry) if entry.is_symlink() else os.path.join(real_folder, entry.name)
        if not _first_visit(entry, real, seen, warnings):
            continue
        if kind == "file" or (whole is not None and whole(entry)):
            yield entry
        else:
            listings.append((_entries(entry, warnings), real))


def _entries(folder: Path, warnings: list[str]) -> Iterator[Path]:
    """The entries of `folder` but hidden ones, in name order (none, said, when it cannot be listed)."""
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        warnings.append(f"{folder}: cannot list the folder ({exc.strerror or exc}); skipped")
        return iter(())
    return iter([entry for entry in entries if not entry.name.startswith(".")])


def _kind(entry: Path, warnings: list[str]) -> str | None:
    """"folder", "file", or None for what is skipped (said when it is worth saying): a symlink
    to nothing, or an entry of a folder that can be listed but not entered (its mode `r--`),
    whose entries cannot be looked at — the rest of the ingest goes on."""
    try:
        if entry.is_dir():
            return "folder"
        if entry.is_file():
            return "file"
        if entry.is_symlink():
            warnings.append(f"{entry}: a symlink to nothing (its target is gone); skipped")
    except OSError as exc:
        warnings.append(f"{entry}: cannot be looked at ({exc.strerror or exc}); skipped")
    return None


def _first_visit(path: Path, real: str, seen: dict[str, Path], warnings: list[str]) -> bool:
    """Whether `path` (whose real path is `real`) leads to a folder or file not read yet (said
    when it does not)."""
    first = seen.setdefault(real, path)
    if first is path:
        return True
    what = "folder" if path.is_dir() else "file"
    if path.is_dir() and path.is_symlink() and real in {os.path.realpath(parent) for parent in path.parents}:
        warnings.append(f"{path}: a symlink to a folder that holds it (a loop); skipped")
    else:
        warnings.append(f"{path}: the same {what} as {first} (a symlink); read once, there")
    return False


def vault_note(file: Path, vault: Path | None) -> bool:
    """Whether `file` is a Markdown note inside `vault` (through a link too): the vault's own
    notes, which vaultmind indexes as they are, are nothing to ingest."""
    return vault is not None and file.suffix.lower() == ".md" and file.resolve().is_relative_to(vault.resolve())


def vault_notes_skipped(notes: Sequence[Path], what: str) -> str:
    """The one line that says the vault's own notes `notes` (not empty) were left out of an
    ingest of `what` ("documents", "emails")."""
    return (
        f"{counted(len(notes), 'note')} of the vault itself skipped ({notes[0]}"
        f"{' …' if len(notes) > 1 else ''}): vaultmind indexes them as they are; ingest {what} from outside the vault"
    )
