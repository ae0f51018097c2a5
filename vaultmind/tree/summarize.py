"""The `Summarizer` protocol, what it is given and gives back, and the output budget every
summarizer obeys.

A summarizer folds the children of a new summary (leaves at level 1, summaries above) into
prose. Its output budget scales with its input: about 30 % of the children's tokens, at least
40 and at most 400, and never more than the children themselves — a summary is never longer
than what it summarizes (the reference design's fixed 5,000-token budget let a small model
expand 600 tokens into 1,600 and invent people).

Summarizers are resolved by name from `[trees] summarizer` in `tree/summarizers.py`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from vaultmind.markdown.tokens import count_tokens

OUTPUT_SHARE = 0.30
MIN_OUTPUT_TOKENS = 40
MAX_OUTPUT_TOKENS = 400
FALLBACK_IDENTITY = "fallback"


@dataclass(frozen=True, slots=True)
class ChildText:
    """One child of a summary being sealed, as the summarizer sees it."""

    id: str
    text: str
    kind: str = "message"  # message (chat) | email | section | summary
    author: str | None = None
    time: str | None = None  # ISO 8601 UTC
    title: str | None = None  # note title (and heading) of a section; None for messages
    entities: tuple[str, ...] = ()  # display names of the entities the child mentions

    @property
    def tokens(self) -> int:
        return count_tokens(self.text)


@dataclass(frozen=True, slots=True)
class SummaryText:
    """A summarizer's answer: the prose and who really wrote it."""

    text: str
    summarizer: str  # identity written to the note: "fallback" or "ollama:<model>@<prompt hash>"
    llm_calls: int = 0
    note: str | None = None  # why the LLM's answer was not used, when it was not


class Summarizer(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def identity(self) -> str:
        """What summary notes record in `summarizer` when this summarizer wrote them."""
        ...

    def summarize(self, children: Sequence[ChildText], budget_tokens: int) -> SummaryText: ...


def output_budget(tokens_in: int) -> int:
    """Tokens a summary of `tokens_in` tokens of children may use (never more than the input)."""
    wanted = max(MIN_OUTPUT_TOKENS, min(MAX_OUTPUT_TOKENS, math.ceil(OUTPUT_SHARE * tokens_in)))
    return max(0, min(tokens_in, wanted))


def close_summarizer(summarizer: object) -> None:
    """Release what a summarizer holds (an HTTP client), if it holds anything."""
    close = getattr(summarizer, "close", None)
    if callable(close):
        close()
