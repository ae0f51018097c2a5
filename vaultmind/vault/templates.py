"""Obsidian's templates folders: notes with placeholders (`{{title}}`, Templater's `<% … %>`)
that become notes only when a person inserts them, so the index leaves them out by default.

Obsidian records the folder of its core Templates plugin in `.obsidian/templates.json`
(`"folder"`), Templater in `.obsidian/plugins/templater-obsidian/data.json`
(`"templates_folder"`). They are only read, never written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

TEMPLATE_SETTINGS: tuple[tuple[str, str, str], ...] = (
    (".obsidian/templates.json", "folder", "Obsidian's Templates plugin"),
    (".obsidian/plugins/templater-obsidian/data.json", "templates_folder", "Templater"),
)
"""(settings file, key, plugin) of each plugin that names a templates folder."""


@dataclass(frozen=True, slots=True)
class TemplateFolder:
    path: str  # vault-relative, without slashes at either end
    settings: str  # the file that names it
    plugin: str


def template_folders(vault: Path) -> tuple[TemplateFolder, ...]:
    """The templates folders the vault's Obsidian settings name (each once, in the order of
    `TEMPLATE_SETTINGS`). A missing or unreadable settings file names none; so does the vault's
    root ("/" or ""), which would leave out every note."""
    found: dict[str, TemplateFolder] = {}
    for settings, key, plugin in TEMPLATE_SETTINGS:
        try:
            data = json.loads((vault / settings).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        value = data.get(key) if isinstance(data, dict) else None
        path = value.strip().strip("/") if isinstance(value, str) else ""
        if path and path not in found:
            found[path] = TemplateFolder(path, settings, plugin)
    return tuple(found.values())


def settings_stamp(vault: Path) -> tuple[int | None, ...]:
    """The modification times of the template settings files (None: absent), to notice a change."""
    stamps: list[int | None] = []
    for settings, _, _ in TEMPLATE_SETTINGS:
        try:
            stamps.append((vault / settings).stat().st_mtime_ns)
        except OSError:
            stamps.append(None)
    return tuple(stamps)
