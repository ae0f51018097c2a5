"""The vault's settings as a long-running process takes them up while it runs: the ignore rules
(`[vault] ignore`, `include_templates`, and the templates folders from Obsidian's settings) when
the config file or those settings change. The other settings apply at the next start: the log
says which changed."""

from __future__ import annotations

import logging
from dataclasses import fields
from pathlib import Path
from typing import Any

from vaultmind.config import AS_WRITTEN, CONFIG_RELPATH, Config, load_config
from vaultmind.errors import ConfigError
from vaultmind.vault.templates import settings_stamp

log = logging.getLogger(__name__)

RULES = ("ignore", "include_templates", "template_folders")  # what a daemon takes up while it runs


class ConfigReload:
    """The vault's settings files as this process last read them."""

    def __init__(self, vault: Path):
        self.vault = vault
        self._stamp = self._settings_stamp()
        self._file_config = _file_config(vault)

    def changed_rules(self, config: Config) -> dict[str, Any] | None:
        """The settings of `RULES` as the files give them now, when either file changed since
        it was read and the ignore rules they make differ from `config`'s (None otherwise). A
        config that no longer parses keeps the rules in force, with a warning."""
        stamp = self._settings_stamp()
        if stamp == self._stamp:
            return None
        self._stamp = stamp
        try:
            fresh = load_config(self.vault)
        except (ConfigError, OSError) as exc:
            said = str(exc) if isinstance(exc, ConfigError) and exc.path else f"{CONFIG_RELPATH}: {exc}"  # the path once
            log.warning("%s; the settings in force are kept", said)
            return None
        before, self._file_config = self._file_config, fresh
        changed = changed_settings(before, fresh) if before is not None else []
        if changed:
            log.warning("%s changed (%s): restart vaultmind for it to apply", CONFIG_RELPATH, ", ".join(changed))
        if fresh.all_ignores == config.all_ignores:
            return None
        log.info(
            "[vault] ignore is now %s, the templates folders left out %s; the next full pass applies it",
            list(fresh.ignore),
            [t.path for t in fresh.left_out_templates],
        )
        return {name: getattr(fresh, name) for name in RULES}

    def _settings_stamp(self) -> tuple[int | None, ...]:
        """The config file's and Obsidian's template settings' modification times."""
        try:
            config = (self.vault / CONFIG_RELPATH).stat().st_mtime_ns
        except OSError:
            config = None
        return (config, *settings_stamp(self.vault))


def changed_settings(before: Config, after: Config) -> list[str]:
    """The settings that differ, other than `RULES`, named as config.toml writes them
    ("[search] limit", "[trees] fanout"), not by the fields that hold them."""
    changed = [
        AS_WRITTEN.get(f.name, f.name) for f in fields(Config)
        if f.name not in (*RULES, "extra") and getattr(after, f.name) != getattr(before, f.name)
    ]  # fmt: skip
    for key in sorted(before.extra.keys() | after.extra.keys()):  # the feature settings, "trees.fanout"
        if before.extra.get(key) != after.extra.get(key):
            section, _, name = key.partition(".")
            changed.append(f"[{section}] {name}")
    return changed


def _file_config(vault: Path) -> Config | None:
    """The settings of the vault's config file alone (None when it cannot be read)."""
    try:
        return load_config(vault)
    except (ConfigError, OSError):
        return None
