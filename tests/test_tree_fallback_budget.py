"""What the fallback's budget counts: who said it is not counted in front of what one voice said
(docs/trees.md), so one short message sealed alone is kept whole."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.markdown.tokens import count_tokens
from vaultmind.memory import Memory
from vaultmind.tree.engine import flush
from vaultmind.tree.fallback import FallbackSummarizer, extractive_summary
from vaultmind.tree.summarize import ChildText, output_budget

from .conftest import write
from .treekit import tree_config

NEWS = "Booked the Harbor Hall venue for 80 guests on Thursday 9 May, deposit 500 euros paid."


def test_one_short_message_sealed_alone_keeps_its_last_clause(vault: Path) -> None:
    """The message is the whole budget (31 tokens): with "Dana Whitfield said: " counted against
    it, ", deposit 500 euros paid" was cut from the summary, and from every level above."""
    at = datetime(2024, 4, 1, 10, 0, tzinfo=UTC)
    meta = SourceMeta("chat", "slack:solo", "slack/solo", "Solo · 2024-04-01")
    write(vault, "sources/chat/slack/solo/2024-04-01.md", render_source_note(meta, [Message("1", "Dana Whitfield", at, NEWS)]))
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        (sealed,) = flush(memory, now=at + timedelta(days=2), summarizer=FallbackSummarizer()).sealed
        body = split_frontmatter((vault / sealed["path"]).read_text(encoding="utf-8")).body.strip()
    assert body == f"Dana Whitfield said: {NEWS}"


def test_what_several_people_said_still_counts_their_names() -> None:
    """Only one voice's prefix goes uncounted: a summary of several stays within its budget."""
    children = [
        ChildText("a", NEWS, "message", "Dana Whitfield", "2024-04-01T10:00:00Z"),
        ChildText("b", "The caterer from Saffron Table confirmed the menu and the price of 40 euros a head.",
                  "message", "Priya Raman", "2024-04-01T10:05:00Z"),
    ]  # fmt: skip
    budget = output_budget(sum(c.tokens for c in children))
    text = extractive_summary(children, budget)
    assert count_tokens(text) <= budget and text.count(" said: ") == 1
    assert extractive_summary(children[:1], output_budget(children[0].tokens)) == f"Dana Whitfield said: {NEWS}"
    short = [  # both fit the budget by their words alone, but not with both names in front
        ChildText("a", "The Harbor Hall is booked for Thursday.", "message", "Dana Whitfield", "2024-04-01T10:00:00Z"),
        ChildText("b", "Saffron Table confirmed the menu today.", "message", "Priya Raman", "2024-04-01T10:05:00Z"),
    ]  # fmt: skip
    budget = output_budget(sum(c.tokens for c in short))
    assert count_tokens(extractive_summary(short, budget)) <= budget
