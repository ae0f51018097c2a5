"""`vaultmind flush` shows its progress: a first flush of a large vault seals thousands of
summaries, minutes in which it printed nothing until its report."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from vaultmind.cli import output
from vaultmind.memory import Memory
from vaultmind.tree.engine import flush
from vaultmind.tree.fallback import FallbackSummarizer

from .conftest import run_main, write
from .treekit import chat_day, tree_config

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


def test_a_flush_of_one_large_source_counts_its_seals_not_its_one_tree(vault: Path) -> None:
    """One channel's first flush seals many summaries: it showed 0/1 until it was done."""
    chat_day(vault, 0, 0, 9)  # three L1 summaries and their L2
    heard: list[tuple[str, int, int]] = []
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        report = flush(
            memory, now=datetime(2030, 1, 1, tzinfo=UTC), summarizer=FallbackSummarizer(),
            progress=lambda *args: heard.append(args),
        )  # fmt: skip
    assert len(report.sealed) == 4
    assert [done for _, done, _ in heard] == [0, 1, 2, 3, 4, 4]
    assert {total for _, _, total in heard} == {4} and {phase for phase, _, _ in heard} == {"flush"}
