"""A listing cut by its limit says what its total counts: walk and search rank candidates, the
other modes list every node that qualifies."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from vaultmind.cli.output import print_hits
from vaultmind.config import load_config
from vaultmind.memory import Memory

from .conftest import write_slack_day


def test_the_footer_of_a_cut_listing_says_what_its_total_counts(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_slack_day(vault, "2024-03-07", [("Alice Chen", "10:00", "Hall booked."), ("Bob Stone", "10:05", "Hall great.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        start, end = datetime(2024, 3, 7).isoformat(), datetime(2024, 3, 8).isoformat()
        window = memory.query("cover_window", {"start": start, "end": end, "limit": 1})
        print_hits(window, vault, "cover_window")
        assert f"({window['total']} nodes; showing 1 — raise --limit)" in capsys.readouterr().out
        found = memory.query("search", {"query": "hall", "limit": 1})
        print_hits(found, vault, "search")
        assert f"({found['total']} candidates; showing 1 — raise --limit)" in capsys.readouterr().out


def test_a_listing_cut_at_the_largest_limit_does_not_ask_for_a_larger_one(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--limit cannot go above the cap: a listing cut there says so instead of "raise --limit"."""
    write_slack_day(vault, "2024-03-07", [("Alice Chen", "10:00", "Hall booked."), ("Bob Stone", "10:05", "Hall great.")])
    monkeypatch.setattr("vaultmind.cli.output.MAX_LIMIT", 1)  # the cap, as a window of two leaves reaches it
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        start, end = datetime(2024, 3, 7).isoformat(), datetime(2024, 3, 8).isoformat()
        window = memory.query("cover_window", {"start": start, "end": end, "limit": 1})
        print_hits(window, vault, "cover_window")
        out = capsys.readouterr().out
        assert f"({window['total']} nodes; showing 1 — at most 1 are shown: narrow the question)" in out
        assert "raise --limit" not in out
