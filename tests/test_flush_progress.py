"""`vaultmind flush` shows its progress: a first flush of a large vault seals thousands of
summaries, minutes in which it printed nothing until its report."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.cli import output

from .conftest import run_main, write

FOLDERS = ("Projects", "Meetings", "Trips")


def test_flush_shows_the_trees_it_flushed_of_those_due(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for folder in FOLDERS:
        write(vault, f"{folder}/one.md", f"# {folder}\n\nAlice wrote about the {folder.lower()} on Monday.\n")
    assert run_main(capsys, "init", "--existing", str(vault))[0] == 0
    assert run_main(capsys, "reindex", "--vault", str(vault))[0] == 0
    monkeypatch.setattr(output, "PROGRESS_AFTER_S", 0.0)  # this small flush is quick: shown at once
    code, data, err = run_main(capsys, "flush", "--all", "--vault", str(vault), "--json")
    assert code == 0 and sorted(data["flushed"]) == sorted(f"notes:{f}" for f in FOLDERS), data
    assert f"vaultmind: flush {len(FOLDERS)}/{len(FOLDERS)} (100%)" in err, err
