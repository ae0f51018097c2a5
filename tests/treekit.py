"""Small fixtures for the tree tests: chat notes with same-size messages, configs, dumps."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from vaultmind.config import Config, load_config
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.markdown.tokens import count_tokens
from vaultmind.memory import Memory
from vaultmind.tree.buffers import buffer
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.settings import TreeSettings
from vaultmind.tree.summarize import ChildText, SummaryText

from .conftest import dump_index, write

SOURCE_ID = "slack:fernhill/launch"
TREE = SOURCE_ID
SCOPE = "slack/fernhill/launch"
PEOPLE = ("Alice Chen", "Bob Stone", "Priya Raman")
TOPICS = (  # chosen so that every `text(i)` has the same token count
    "the venue deposit for the Harbor Hall",
    "the catering quote from Saffron Table",
    "the load tests on the staging cluster",
    "the press kit and our launch video clip",
    "the builder for the new landing page",
    "the paid ads that start in late April",
)
START = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)


def text(i: int) -> str:
    """A substantive message (admitted by the cheap scorer); every text has the same token count."""
    topic = TOPICS[i % len(TOPICS)]
    return (
        f"Update {i:04d}: I checked {topic} with Helen Okafor today; "
        f"the numbers hold and we decide on Friday at the Berlin office."
    )


def tokens_of(first: int, count: int) -> int:
    """Tokens of messages `first` … `first + count - 1` (sizes differ by a few tokens)."""
    return sum(count_tokens(text(i)) for i in range(first, first + count))


def tree_config(vault: Path, **extra: Any) -> Config:
    """No embeddings, no spaCy model, no LLM for admission; small trees unless told otherwise."""
    values: dict[str, Any] = {
        "admission.llm": False,
        "entities.ner_model": "off",
        "trees.l0_tokens": tokens_of(0, 3),
        "trees.fanout": 3,
        "trees.summarizer": "fallback",
    }
    values.update(extra)
    return load_config(vault, embed_provider="none", extra=values)


def chat_day(
    vault: Path, day: int, first: int, count: int, *, source_id: str = SOURCE_ID, scope: str = SCOPE
) -> str:
    """Write the chat note of day `day` (0 = 2024-03-04) with messages `first` … `first + count - 1`,
    ten minutes apart. Returns its vault path."""
    date = START + timedelta(days=day)
    messages = [
        Message(f"{day}.{i}", PEOPLE[i % len(PEOPLE)], date + timedelta(minutes=10 * (i - first)), text(i))
        for i in range(first, first + count)
    ]
    rel = f"sources/chat/{scope}/{date:%Y-%m-%d}.md"
    meta = SourceMeta("chat", source_id, scope, f"#launch · {date:%Y-%m-%d}")
    write(vault, rel, render_source_note(meta, messages))
    return rel


SUMMARIES_SQL = (
    "SELECT id, tree, level, note_path, children, leaf_ids, time_start, time_end, entities, summarizer, "
    "user_edited, stale FROM summaries ORDER BY note_path"
)


def dump_all(memory: Memory) -> dict[str, list[tuple[object, ...]]]:
    out = dump_index(memory)
    out["summaries"] = memory.index.query(SUMMARIES_SQL)
    return out


def summary_rows(memory: Memory) -> list[dict[str, Any]]:
    cols = ("id", "tree", "level", "note_path", "children", "leaf_ids", "time_start", "time_end", "entities",
            "summarizer", "user_edited", "stale")  # fmt: skip
    return [dict(zip(cols, row, strict=True)) for row in memory.index.query(SUMMARIES_SQL)]


def l0_ids(memory: Memory, tree: str = TREE) -> list[str]:
    settings = TreeSettings.from_extra(memory.config.extra)
    return [item.id for item in buffer(memory.index, settings, tree, 0)]


def tree_leaf_ids(memory: Memory, source_id: str = SOURCE_ID) -> list[str]:
    """Every leaf of a source, in buffer order."""
    return [
        row[0]
        for row in memory.index.query(
            """SELECT l.id FROM leaves l JOIN notes n ON n.path = l.note_path WHERE n.source_id = ?
               ORDER BY l.ts, l.note_path, l.seq""",
            [source_id],
        )
    ]


class SlowSummarizer:
    """The fallback summarizer, held at the door: `entered` is set when a call starts, and the
    call waits for `release` (only the first call waits)."""

    name = "slow"

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls = 0

    @property
    def identity(self) -> str:
        return "fallback"

    def summarize(self, children: Sequence[ChildText], budget_tokens: int) -> SummaryText:
        self.calls += 1
        self.entered.set()
        assert self.release.wait(30), "the test never released the summarizer"
        return FallbackSummarizer().summarize(children, budget_tokens)
