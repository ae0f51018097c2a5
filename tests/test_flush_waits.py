"""A flush asked for while the daemon's background pass seals says what that pass sealed."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from vaultmind.cli.tree import print_report
from vaultmind.memory import Memory
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.report import SealReport
from vaultmind.tree.summarize import ChildText, SummaryText
from vaultmind.tree.view import maintain

from .treekit import chat_day, tree_config

LATER = datetime(2030, 1, 1, tzinfo=UTC)


class _Slow(FallbackSummarizer):
    """A summarizer that holds its first seal until `release` (a slow model)."""

    def __init__(self) -> None:
        self.started, self.release = threading.Event(), threading.Event()

    def summarize(self, children: Sequence[ChildText], budget_tokens: int) -> SummaryText:
        self.started.set()
        assert self.release.wait(30)
        return super().summarize(children, budget_tokens)


def test_a_flush_that_waited_for_the_background_pass_reports_what_it_sealed(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chat_day(vault, 0, 0, 3)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        slow = _Slow()
        background: list[SealReport] = []
        upkeep = threading.Thread(
            target=lambda: background.append(maintain(memory, now=LATER, summarizer=slow))
        )
        upkeep.start()
        assert slow.started.wait(30)
        threading.Timer(0.5, slow.release.set).start()  # the model answers while the flush waits
        report = maintain(memory, now=LATER, summarizer=FallbackSummarizer())
        upkeep.join(30)
        (sealed,) = background[0].sealed
        assert report.sealed == [] and report.waited_for is not None
        assert report.waited_for["sealed"] == [sealed]
        print_report(report.to_dict())
        out = capsys.readouterr().out
        assert out.startswith("vaultmind: waited for the daemon's background pass, which sealed 1 summary")
        assert f"+ L1 {sealed['path']}" in out and "then 0 summaries sealed" in out
        assert maintain(memory, now=LATER, summarizer=FallbackSummarizer()).waited_for is None
