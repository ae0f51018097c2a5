"""The vaults inside a folder given (or worked in) for a vault: found on an error's path, so a
folder that cannot be looked into is passed over rather than failing the command."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vaultmind.cli.main import main
from vaultmind.vault.inner_vaults import vaults_inside


def test_a_folder_that_cannot_be_looked_into_is_passed_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`vaultmind status` run in a folder holding one the user may not enter (another user's,
    a disk's `lost+found`) failed with a PermissionError from the look for vaults inside it,
    instead of saying the folder is no vault and naming the vault beside it. (The tests run as
    root, which enters any folder: the refusal a user meets is made by `os.stat` here.)"""
    parent = tmp_path / "parent"
    assert main(["init", "--demo", str(parent / "work")]) == 0
    locked = parent / "locked"
    locked.mkdir()
    stat = os.stat

    def refused(path: os.PathLike[str] | str | int, *args: object, **kwargs: object) -> os.stat_result:
        if isinstance(path, (str, os.PathLike)) and str(path).startswith(f"{locked}{os.sep}"):
            raise PermissionError(13, "Permission denied", str(path))
        return stat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", refused)
    assert vaults_inside(parent) == [parent / "work"]
    monkeypatch.delenv("VAULTMIND_VAULT", raising=False)
    monkeypatch.chdir(parent)
    capsys.readouterr()
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert "is not in a vaultmind vault" in err and f"`vaultmind status --vault {parent / 'work'}`" in err, err


def test_files_beside_the_folders_are_no_vaults_and_a_symlink_loop_ends(tmp_path: Path) -> None:
    """Two levels and no deeper, files passed over, a link back to the folder looked at no
    further than the two levels (a home folder's links can loop)."""
    (tmp_path / "a" / "deep" / "deeper" / ".obsidian").mkdir(parents=True)
    (tmp_path / "a" / "v" / ".vaultmind").mkdir(parents=True)
    (tmp_path / "a" / "note.md").write_text("# note\n")
    (tmp_path / "a" / "loop").symlink_to(tmp_path)
    (tmp_path / "b" / ".obsidian").mkdir(parents=True)
    assert vaults_inside(tmp_path) == [tmp_path / "b", tmp_path / "a" / "v"]
