"""What a running daemon says when `.vaultmind/config.toml` changes under it: the settings as
the file writes them, and an invalid edit with the file's path once."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.config_reload import ConfigReload

from .conftest import write


def _edit(vault: Path, text: str) -> None:
    """Write the config file with a modification time the reload cannot miss."""
    path = write(vault, ".vaultmind/config.toml", text)
    stamp = path.stat().st_mtime_ns + 1_000_000_000
    os.utime(path, ns=(stamp, stamp))


def test_a_changed_setting_is_named_as_the_file_writes_it(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The notice said "changed (search_limit, extra)": a field's name, and `extra` for any of
    thirty feature settings. It names `[search] limit` and `[trees] fanout`."""
    vault = tmp_path / "v"
    _edit(vault, "[search]\nlimit = 10\n[trees]\nfanout = 8\n[queue]\nworkers = 2\n")
    reload = ConfigReload(vault)
    config = load_config(vault)
    _edit(vault, "[search]\nlimit = 3\n[trees]\nfanout = 4\n[queue]\nworkers = 2\n")
    with caplog.at_level(logging.WARNING, logger="vaultmind.config_reload"):
        assert reload.changed_rules(config) is None  # no ignore rule changed
    said = [record.getMessage() for record in caplog.records]
    assert said == [".vaultmind/config.toml changed ([search] limit, [trees] fanout): restart vaultmind for it to apply"], said


def test_an_invalid_edit_names_the_file_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    vault = tmp_path / "v"
    _edit(vault, "[search]\nlimit = 10\n")
    reload = ConfigReload(vault)
    config = load_config(vault)
    _edit(vault, "[search]\nlimit = 0\n")
    with caplog.at_level(logging.WARNING, logger="vaultmind.config_reload"):
        assert reload.changed_rules(config) is None
    said = " ".join(record.getMessage() for record in caplog.records)
    assert said.count("config.toml") == 1, said
    assert said.startswith(f"{vault.resolve() / '.vaultmind' / 'config.toml'}: [search] limit = 0 must be"), said
    assert said.endswith("; the settings in force are kept"), said
