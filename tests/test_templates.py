"""Obsidian's templates folders (core Templates plugin, Templater) are left out of the index by
default, `status` says so once, and `[vault] include_templates = true` takes them in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.memory import Memory

from .conftest import run_main, snapshot_files, write

TEMPLATE = "---\ntitle: {{title}}\ncreated: {{date}} {{time}}\ntags: [<% tp.file.folder() %>]\n---\n# {{title}}\n\nA quokkaplaceholder line.\n"


def _templated_vault(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    write(vault, "Journal/today.md", "# Today\n\nThe heron walked by the river.\n")
    write(vault, "Templates/Daily.md", TEMPLATE)
    write(vault, "Meta/Templater/Meeting.md", TEMPLATE.replace("quokka", "wombat"))
    write(vault, ".obsidian/templates.json", json.dumps({"folder": "Templates", "dateFormat": "YYYY-MM-DD"}))
    write(vault, ".obsidian/plugins/templater-obsidian/data.json", json.dumps({"templates_folder": "/Meta/Templater/"}))
    assert run_main(capsys, "init", "--existing", str(vault))[0] == 0


def _indexed(capsys: pytest.CaptureFixture[str], vault: Path) -> set[str]:
    """The vault's own notes in the index (vaultmind's folders and guides aside)."""
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        return {str(row[0]) for row in memory.index.query("SELECT path FROM notes WHERE kind = 'user'")}


def test_templates_folders_are_left_out_and_status_says_so_once(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    _templated_vault(capsys, vault)
    before = snapshot_files(vault)
    assert run_main(capsys, "reindex", "--vault", str(vault))[0] == 0
    assert _indexed(capsys, vault) == {"Journal/today.md"}
    code, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert code == 0 and status["notes"]["user"] == 1
    assert not [p for p in status["problems"] if "Templat" in p["path"]], "no warning per template"
    assert status["left_out"] == [
        {"path": "Templates/", "why": "the templates folder of Obsidian's Templates plugin (.obsidian/templates.json)"},
        {"path": "Meta/Templater/", "why": "the templates folder of Templater (.obsidian/plugins/templater-obsidian/data.json)"},
    ]
    code, text, _ = run_main(capsys, "status", "--vault", str(vault))
    assert text.count("left out Templates/:") == 1 and text.count("left out Meta/Templater/:") == 1, text
    assert snapshot_files(vault) == before, "the user's files are only read"


def test_include_templates_indexes_them(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    _templated_vault(capsys, vault)
    write(vault, ".vaultmind/config.toml", "[vault]\ninclude_templates = true\n")
    assert run_main(capsys, "reindex", "--vault", str(vault))[0] == 0
    assert _indexed(capsys, vault) == {"Journal/today.md", "Templates/Daily.md", "Meta/Templater/Meeting.md"}
    code, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert code == 0 and status["left_out"] == []


def test_a_templates_folder_at_the_vault_root_or_a_broken_setting_leaves_nothing_out(
    capsys: pytest.CaptureFixture[str], vault: Path
) -> None:
    write(vault, "note.md", "# Note\n\nThe heron note.\n")
    assert run_main(capsys, "init", "--existing", str(vault))[0] == 0
    write(vault, ".obsidian/templates.json", json.dumps({"folder": "/"}))
    write(vault, ".obsidian/plugins/templater-obsidian/data.json", "{not json")
    assert run_main(capsys, "reindex", "--vault", str(vault))[0] == 0
    assert _indexed(capsys, vault) == {"note.md"}
    code, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert code == 0 and status["left_out"] == []


def test_include_templates_must_be_true_or_false(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    write(vault, ".vaultmind/config.toml", '[vault]\ninclude_templates = "yes"\n')
    code, _, err = run_main(capsys, "status", "--vault", str(vault))
    assert code != 0 and "include_templates" in err and "true or false" in err, err
