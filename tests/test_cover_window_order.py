"""`cover_window` (`vaultmind query window`) reads as a timeline: its summaries and the leaves
no summary covers in time order, and a limit keeps the window's start, not the summaries whose
ids sort first."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from vaultmind.memory import Memory
from vaultmind.tree.engine import seal_ready

from .treekit import chat_day, tree_config

OTHER = "slack:fernhill/random"


def test_a_window_lists_summaries_and_loose_leaves_in_time_order_and_limits_after_sorting(vault: Path) -> None:
    chat_day(vault, 0, 0, 2, source_id=OTHER, scope="slack/fernhill/random")  # two loose messages, the first day
    for day in range(1, 6):
        chat_day(vault, day, 3 * day, 3)  # each day one L1 summary of its own
    with Memory.open(tree_config(vault, **{"trees.fanout": 10})) as memory:
        memory.sync()
        assert len(seal_ready(memory).sealed) == 5
        window = memory.query("cover_window", {"start": "2024-03-04", "end": "2024-03-10"})
        hits = window["hits"]
        assert [(h["node_kind"], h["time_range"]["start"][:10]) for h in hits] == [
            ("leaf", "2024-03-04"), ("leaf", "2024-03-04"),
            *[("summary", f"2024-03-{day:02d}") for day in range(5, 10)],
        ]  # fmt: skip
        assert window["total"] == 7 and window["uncovered_leaves"] == 2
        assert all(h["breakdown"]["depth"] == "child" and h["level"] == 1 for h in hits if h["node_kind"] == "summary")
        assert all(h["breakdown"] == {"cover": "leaf"} for h in hits if h["node_kind"] == "leaf")
        limited = memory.query("cover_window", {"start": "2024-03-04", "end": "2024-03-10", "limit": 4})
        assert [h["node_id"] for h in limited["hits"]] == [h["node_id"] for h in hits[:4]] and limited["truncated"]
        times = [datetime.fromisoformat(h["time_range"]["start"]) for h in hits]
        assert times == sorted(times)
