"""The files of a folder given to ingest, each read once.

Every adapter that takes a folder (chat, email, document) walks it alike: entries in name order,
depth first, hidden ones (`.git`, `.DS_Store`) skipped. A symlinked folder is followed (a link
to your Dropbox export is the export), but each real folder and file is read once: a symlink
loop (a link to a folder that holds it), or a second way to a folder or file already read, is
skipped with a warning naming both paths. Otherwise a loop wrote every document again at each
turn, forty levels deep, and a link beside its target wrote its documents twice.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path


def walk_files(root: Path, warnings: list[str], *, whole: Callable[[Path], bool] | None = None) -> Iterator[Path]:
    """The files below `root`, and the folders `whole` takes as one (a Maildir), in name order;
    see the module doc."""
    seen: dict[str, Path] = {}
    if _first_visit(root, seen, warnings):
        yield from _walk(root, seen, warnings, whole)


def _walk(folder: Path, seen: dict[str, Path], warnings: list[str], whole: Callable[[Path], bool] | None) -> Iterator[Path]:
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        warnings.append(f"{folder}: cannot list the folder ({exc.strerror or exc}); skipped")
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        kind = _kind(entry, warnings)
        if kind == "folder":
            if not _first_visit(entry, seen, warnings):
                continue
            if whole is not None and whole(entry):
                yield entry
            else:
                yield from _walk(entry, seen, warnings, whole)
        elif kind == "file" and _first_visit(entry, seen, warnings):
            yield entry


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


def _first_visit(path: Path, seen: dict[str, Path], warnings: list[str]) -> bool:
    """Whether `path` leads to a folder or file not read yet (said when it does not)."""
    real = os.path.realpath(path)
    first = seen.setdefault(real, path)
    if first is path:
        return True
    what = "folder" if path.is_dir() else "file"
    if path.is_dir() and path.is_symlink() and real in {os.path.realpath(parent) for parent in path.parents}:
        warnings.append(f"{path}: a symlink to a folder that holds it (a loop); skipped")
    else:
        warnings.append(f"{path}: the same {what} as {first} (a symlink); read once, there")
    return False
