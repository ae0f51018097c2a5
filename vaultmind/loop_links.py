"""Symlinks in a watched vault that lead to a folder holding the vault (`uplink -> ..`) or to one
inside it (`Archive -> notes`): the scan does not follow them, but the watcher does, and the system
then reports the vault's own files through them. The daemon reads such events back to the path the
file has in the vault, and starts watching over when such a link is removed."""

from __future__ import annotations

import os
from pathlib import Path


class LoopLinks:
    """The loop links met in the watcher's events of one vault."""

    def __init__(self, vault: Path) -> None:
        self._root = str(vault)
        self._root_real = os.path.realpath(vault)
        self._links: set[str] = set()

    def in_vault(self, path: str) -> str | None:
        """An event's path, undone of a loop link in it (`uplink/<vault>/note.md` for `note.md`,
        `Archive/plan.md` for `notes/plan.md`): the path the file has in the vault, or None when
        it has none."""
        root = self._root
        rel = os.path.relpath(path, root)
        if rel.startswith(".."):
            return path
        parts = rel.split(os.sep)
        for i in range(1, len(parts) + 1):
            prefix = os.path.join(root, *parts[:i])
            if not os.path.islink(prefix):
                continue
            target = os.path.realpath(prefix)
            holding = self._root_real == target or self._root_real.startswith(target.rstrip(os.sep) + os.sep)
            inside = target.startswith(self._root_real.rstrip(os.sep) + os.sep) and os.path.isdir(target)
            if holding or inside:
                self._links.add(prefix)
                if i == len(parts):
                    return path  # the link itself
                real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
                there = os.path.relpath(real, self._root_real)
                return None if there.startswith("..") else os.path.join(root, there)
            break  # a link to a folder elsewhere: its files are there, under this path
        return path

    def removed(self) -> bool:
        """Whether a loop link was removed since last asked: the watcher shared its watch of
        that folder with it and hears nothing since (not even the removal: looked for at every
        step), so watching must start over."""
        gone = {path for path in self._links if not os.path.lexists(path)}
        self._links -= gone
        return bool(gone)
