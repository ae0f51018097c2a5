"""The tree benchmarks' chat vault: a deterministic Slack-like vault (three channels, about 40
messages a day, 12-40 words each, a few recurring people and topics), and the fallback
summarizer counting its calls. Used by `bench.trees` and `bench.tree_scale`."""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.summarize import ChildText, SummaryText

CHANNELS = ("launch", "design", "ops")
PEOPLE = ("Alice Chen", "Bob Stone", "Priya Raman", "Helen Okafor", "Marco Ruiz")
TOPICS = (
    "the venue deposit", "the catering quote", "the load test", "the press kit", "the landing page",
    "the paid ads", "the budget review", "the hiring plan", "the release notes", "the staging cluster",
)  # fmt: skip
WORDS = (
    "we", "should", "check", "before", "friday", "numbers", "look", "fine", "but", "the", "team", "needs",
    "more", "time", "for", "review", "and", "a", "second", "pass", "on", "details", "client", "asked",
    "about", "timeline", "risk", "is", "low", "if", "we", "ship", "tuesday", "otherwise", "move", "it",
)  # fmt: skip
PER_DAY = 40
START = datetime(2024, 1, 8, 9, 0, tzinfo=UTC)


class CountingSummarizer:
    """The fallback summarizer, counting calls and the time spent inside it."""

    name = "fallback"

    def __init__(self) -> None:
        self.inner = FallbackSummarizer()
        self.calls = 0
        self.seconds = 0.0

    @property
    def identity(self) -> str:
        return self.inner.identity

    def summarize(self, children: Sequence[ChildText], budget_tokens: int) -> SummaryText:
        started = time.perf_counter()
        try:
            return self.inner.summarize(children, budget_tokens)
        finally:
            self.calls += 1
            self.seconds += time.perf_counter() - started


def write_chat_vault(root: Path, messages: int, seed: int = 0) -> int:
    """A deterministic chat vault of `messages` messages; returns the number of notes."""
    rng = random.Random(seed)
    per_channel = [
        messages // len(CHANNELS) + (1 if i < messages % len(CHANNELS) else 0) for i in range(len(CHANNELS))
    ]
    notes = 0
    for channel, count in zip(CHANNELS, per_channel, strict=True):
        for day_start in range(0, count, PER_DAY):
            day = day_start // PER_DAY
            date = START + timedelta(days=day)
            batch = []
            for i in range(day_start, min(count, day_start + PER_DAY)):
                topic = rng.choice(TOPICS)
                filler = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 34)))
                person = rng.choice(PEOPLE)
                text = f"About {topic}: {filler}. {rng.choice(PEOPLE)} agreed on {topic}."
                at = date + timedelta(minutes=12 * (i - day_start))
                batch.append(Message(f"{channel}-{i}", person, at, text))
            meta = SourceMeta("chat", f"slack:bench/{channel}", f"slack/bench/{channel}", f"#{channel}")
            path = root / "sources" / "chat" / "slack" / "bench" / channel / f"{date:%Y-%m-%d}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render_source_note(meta, batch), encoding="utf-8")
            notes += 1
    return notes
