"""Typing in a note that is already summarized: the summary waits for the edits to settle, then
is sealed again under the same name."""

from __future__ import annotations

import os
import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from vaultmind.cli.tree import print_report
from vaultmind.errors import ConfigError
from vaultmind.memory import Memory
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.note import iso_z
from vaultmind.tree.settings import TreeSettings
from vaultmind.tree.view import maintain, tree_view
from vaultmind.upkeep import TreeKeeper

from .conftest import write
from .treekit import tree_config

FALLBACK = FallbackSummarizer()
PARA = (
    "Alice Chen and Bob Stone reviewed the Harbor Hall contract, the 18,000 euro catering quote "
    "and the April video plan with Helen Okafor in Berlin."
)


def _projects(vault: Path) -> None:
    """Six notes of yours under `Projects/`, last written five days ago."""
    days_ago = time.time() - 5 * 86400
    for i in range(6):
        path = write(
            vault,
            f"Projects/Note {i}.md",
            f"# Note {i}\n\n## Plan\n\n{PARA} Item {i}.\n\n## Risks\n\n{PARA} Risk {i}.\n",
        )
        os.utime(path, (days_ago, days_ago))


def _summaries(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in (vault / "summaries").rglob("s-*.md")}


def test_saves_while_typing_leave_the_summary_stale_until_quiet_then_it_is_resealed_in_place(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _projects(vault)
    with Memory.open(tree_config(vault, **{"trees.l0_tokens": 300})) as memory:
        memory.sync()
        assert len(maintain(memory, now=datetime.now(UTC), summarizer=FALLBACK).sealed) == 2
        before = _summaries(vault)
        note = vault / "Projects/Note 0.md"
        for k in (7, 8, 9):  # three saves while fixing one number (the leaves keep their size)
            note.write_text(
                note.read_text(encoding="utf-8").replace(f"Item {k - 1 if k > 7 else 0}.", f"Item {k}.", 1),
                encoding="utf-8",
            )
            memory.sync()
            report = maintain(memory, now=datetime.now(UTC), summarizer=FALLBACK)
            assert report.sealed == report.unsealed == [] and _summaries(vault) == before
            (waiting,) = [w for w in report.waiting if w["level"] == 1]
        print_report(report.to_dict())
        assert (
            f"… L1 {waiting['path']}: stale, waits for the edits below it to settle"
            in capsys.readouterr().out
        )
        (stale,) = tree_view(memory, "notes:Projects")["stale"]
        assert (
            stale["path"] == waiting["path"] and "waits for the edits below it to settle" in stale["action"]
        )
        assert stale["waiting_until"] == waiting["until"]

        quiet = datetime.now(UTC) + timedelta(minutes=11)  # ten quiet minutes later
        report = maintain(memory, now=quiet, summarizer=FALLBACK)
        assert [u["path"] for u in report.unsealed] == [s["path"] for s in report.sealed] == [waiting["path"]]
        after = _summaries(vault)
        assert after.keys() == before.keys(), "sealed again under the same name"
        assert after[waiting["path"]] != before[waiting["path"]], "over the new text (its children_sha256)"
        assert not maintain(memory, now=quiet, summarizer=FALLBACK).waiting


def test_flush_all_reseals_a_waiting_summary_at_once_and_zero_minutes_never_waits(vault: Path) -> None:
    _projects(vault)
    for extra, flush_all in (({}, True), ({"trees.reseal_quiet_minutes": 0}, False)):
        with Memory.open(tree_config(vault, **{"trees.l0_tokens": 300, **extra})) as memory:
            memory.sync()
            maintain(memory, now=datetime.now(UTC), summarizer=FALLBACK)
            note = vault / "Projects/Note 1.md"
            note.write_text(
                note.read_text(encoding="utf-8") + f"\nOne more line {flush_all}.\n", encoding="utf-8"
            )
            memory.sync()
            report = maintain(memory, now=datetime.now(UTC), flush_all=flush_all, summarizer=FALLBACK)
            assert report.unsealed and report.sealed and not report.waiting


def _edited(vault: Path, memory: Memory, written: datetime, item: int) -> None:
    """Note 0's item number set to `item`, its modification time to `written` (a clock of
    another device)."""
    note = vault / "Projects/Note 0.md"
    note.write_text(re.sub(r"Item \d+\.", f"Item {item}.", note.read_text(encoding="utf-8"), count=1), encoding="utf-8")
    os.utime(note, (written.timestamp(), written.timestamp()))
    memory.sync()


def test_a_note_written_in_the_future_is_waited_on_at_most_a_quiet_period_beyond_now(vault: Path) -> None:
    """A modification time ahead of this clock: a device a few minutes ahead is waited for (to
    its time plus the quiet period); a time further ahead (a clock days off, a sync tool's
    bogus date) says nothing of typing now, and left the summary stale until that date."""
    _projects(vault)
    with Memory.open(tree_config(vault, **{"trees.l0_tokens": 300})) as memory:
        memory.sync()
        now = datetime.now(UTC).replace(microsecond=0)  # a file time holds it exactly
        maintain(memory, now=now, summarizer=FALLBACK)
        _edited(vault, memory, now + timedelta(minutes=4), 7)
        (waiting,) = maintain(memory, now=now, summarizer=FALLBACK).waiting
        assert waiting["until"] == iso_z(now + timedelta(minutes=14))
        _edited(vault, memory, now + timedelta(days=400), 8)
        report = maintain(memory, now=now, summarizer=FALLBACK)
        assert not report.waiting and [u["path"] for u in report.unsealed] == [waiting["path"]]


def test_the_daemon_comes_back_when_the_first_waiting_summary_may_be_sealed(vault: Path) -> None:
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    with Memory.open(tree_config(vault)) as memory:
        keeper = TreeKeeper(memory)
        assert keeper.next_pass_s([], now) == TreeKeeper.FLUSH_EVERY_S
        waiting = [{"until": "2026-01-01T12:07:00Z"}, {"until": "2026-01-01T12:03:00Z"}]
        assert keeper.next_pass_s(waiting, now) == 181.0
        assert keeper.next_pass_s([{"until": "2026-01-01T11:00:00Z"}], now) == 1.0


def test_the_quiet_minutes_are_checked() -> None:
    assert TreeSettings.from_extra({}).reseal_quiet_minutes == 10.0
    for wrong in (-1, "10", 1e9):
        with pytest.raises(ConfigError, match="reseal_quiet_minutes"):
            TreeSettings.from_extra({"trees.reseal_quiet_minutes": wrong})
