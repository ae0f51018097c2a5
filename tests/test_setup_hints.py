"""A folder that is not a vaultmind vault yet: the command the hint gives is one `init` then
accepts — whether `status` or `init` gave it — never one that refuses and names the first."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import run_main, write


def _empty(folder: Path) -> None:
    folder.mkdir()


def _notes(folder: Path) -> None:
    write(folder, "Ideas/plan.md", "# Plan\n\nBuy a kayak.\n")


def _clone_holding_a_vault(folder: Path) -> None:
    write(folder, "README.md", "# my vault's repository\n")
    (folder / "vault" / ".obsidian").mkdir(parents=True)
    write(folder, "vault/n.md", "# n\n")


def _files_but_no_notes(folder: Path) -> None:
    write(folder, "scans/receipt.csv", "1,2\n")


@pytest.mark.parametrize(
    ("asked", "make"),
    [("status", make) for make in (_empty, _notes, _clone_holding_a_vault, _files_but_no_notes)]
    + [
        ("init", make) for make in (_notes, _clone_holding_a_vault, _files_but_no_notes)
    ],  # an empty one it takes
)
def test_the_command_a_setup_hint_gives_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], asked: str, make: Callable[[Path], None]
) -> None:
    folder = tmp_path / "folder"
    make(folder)
    code, _, err = run_main(
        capsys, *(["status", "--vault", str(folder)] if asked == "status" else ["init", str(folder)])
    )
    assert code != 0
    (hint,) = [line for line in err.splitlines() if line.startswith("vaultmind: hint: ")]
    commands = re.findall(r"`(vaultmind init [^`]+)`", hint)
    assert commands, hint
    if make is _files_but_no_notes:  # the hint's way to make this very folder a vault: Obsidian opens it
        assert "open it as a vault in Obsidian first" in hint
        (folder / ".obsidian").mkdir()
    code, _, err = run_main(capsys, *shlex.split(commands[-1])[1:])
    assert code == 0, f"{hint}\n{err}"


@pytest.mark.parametrize("init", [("init", "--existing"), ("init", "--demo"), ("init",)])
def test_a_folder_inside_a_vault_is_never_made_a_vault_and_the_hint_names_the_vault(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, init: tuple[str, ...]
) -> None:
    """`status --vault VAULT/Projects` once hinted `init --existing VAULT/Projects`, which wrote
    vaultmind's folders into the user's vault; `init` of a new folder inside a vault did too."""
    vault = tmp_path / "vault"
    code, _, err = run_main(capsys, "init", str(vault))
    assert code == 0, err
    write(vault, "Projects/Tidepool.md", "# Tidepool\n\nThe launch moved.\n")
    before = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*"))
    code, _, err = run_main(capsys, "status", "--vault", str(vault / "Projects"))
    assert code == 2
    assert f"pass `--vault {vault}`" in err and "init" not in err.split("hint:", 1)[1]
    for folder in (vault / "Projects", vault / "Projects" / "new"):
        code, _, err = run_main(capsys, *init, str(folder))
        assert code != 0
        assert f"is inside the vaultmind vault {vault}" in err and f"pass `--vault {vault}`" in err
    assert sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*")) == before  # nothing written
