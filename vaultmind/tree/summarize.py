"""The `Summarizer` protocol, its registry, and the output budget every summarizer obeys.

A summarizer folds the children of a new summary (leaves at level 1, summaries above) into
prose. Its output budget scales with its input: about 30 % of the children's tokens, at least
40 and at most 400, and never more than the children themselves — a summary is never longer
than what it summarizes (the reference design's fixed 5,000-token budget let a small model
expand 600 tokens into 1,600 and invent people).

Summarizers are resolved by name from `[trees] summarizer`: `fallback` (deterministic,
extractive, no LLM), `ollama` (chat API; falls back per seal when Ollama fails), `auto`
(`ollama` when the server answers and has the model, else `fallback`). Tests and plug-ins
register their own through `register_summarizer`, the same way the built-ins are registered.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from vaultmind.errors import ConfigError
from vaultmind.markdown.tokens import count_tokens

if TYPE_CHECKING:
    from vaultmind.config import Config

OUTPUT_SHARE = 0.30
MIN_OUTPUT_TOKENS = 40
MAX_OUTPUT_TOKENS = 400
FALLBACK_IDENTITY = "fallback"
_PROBE_TTL_S = 300.0


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


def input_tokens(children: Sequence[ChildText]) -> int:
    return sum(child.tokens for child in children)


def output_budget(tokens_in: int) -> int:
    """Tokens a summary of `tokens_in` tokens of children may use (never more than the input)."""
    wanted = max(MIN_OUTPUT_TOKENS, min(MAX_OUTPUT_TOKENS, math.ceil(OUTPUT_SHARE * tokens_in)))
    return max(0, min(tokens_in, wanted))


def close_summarizer(summarizer: object) -> None:
    """Release what a summarizer holds (an HTTP client), if it holds anything."""
    close = getattr(summarizer, "close", None)
    if callable(close):
        close()


# -- registry ---------------------------------------------------------------------------------

SummarizerFactory = Callable[["Config"], Summarizer]

_REGISTRY: dict[str, SummarizerFactory] = {}


def register_summarizer(name: str, factory: SummarizerFactory) -> None:
    _REGISTRY[name] = factory


def create_summarizer(config: Config) -> Summarizer:
    """The summarizer named by `[trees] summarizer` (default `auto`)."""
    return summarizer_factory(config)(config)


def summarizer_factory(config: Config) -> SummarizerFactory:
    """The factory of the summarizer `[trees] summarizer` names; a ConfigError naming the
    known ones for any other name (nothing is built: the command line checks it early)."""
    from vaultmind.tree.settings import TreeSettings

    _register_builtins()
    name = TreeSettings.from_extra(config.extra).summarizer or "auto"
    factory = _REGISTRY.get(name)
    if factory is None:
        known = ", ".join(sorted(_REGISTRY))
        raise ConfigError(
            f"unknown summarizer {name!r}",
            path=".vaultmind/config.toml",
            hint=f"set [trees] summarizer to one of: {known}",
        )
    return factory


def _fallback(config: Config) -> Summarizer:
    from vaultmind.tree.fallback import FallbackSummarizer

    return FallbackSummarizer()


def _ollama(config: Config) -> Summarizer:
    from vaultmind.tree.llm import OllamaSummarizer

    return OllamaSummarizer.from_config(config)


def _auto(config: Config) -> Summarizer:
    from vaultmind.tree.llm import OllamaSummarizer

    summarizer = OllamaSummarizer.from_config(config)
    if _probe(summarizer.host, summarizer.model):
        return summarizer
    return _fallback(config)


def _register_builtins() -> None:
    _REGISTRY.setdefault("fallback", _fallback)
    _REGISTRY.setdefault("ollama", _ollama)
    _REGISTRY.setdefault("auto", _auto)


_probes: dict[tuple[str, str], tuple[float, bool]] = {}
_probe_lock = threading.Lock()


def _probe(host: str, model: str) -> bool:
    """True when an Ollama server answers at `host` and has `model` (cached for 5 minutes)."""
    key = (host, model)
    now = time.monotonic()
    with _probe_lock:
        cached = _probes.get(key)
        if cached is not None and now - cached[0] < _PROBE_TTL_S:
            return cached[1]
    ok = False
    try:
        import ollama

        client = ollama.Client(host=host, timeout=2.0)
        try:
            wanted = model if ":" in model else f"{model}:latest"
            names = {str(getattr(m, "model", "") or "") for m in client.list().models}
            ok = wanted in names or model in names
        finally:
            client.close()  # type: ignore[no-untyped-call]
    except Exception:  # any failure to ask means "not available": the fallback is always there
        ok = False
    with _probe_lock:
        _probes[key] = (now, ok)
    return ok
