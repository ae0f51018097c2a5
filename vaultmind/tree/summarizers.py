"""Summarizers resolved by name from `[trees] summarizer`: `fallback` (deterministic,
extractive, no LLM), `ollama` (chat API; falls back per seal when Ollama fails, and for every
seal when it has no model to ask), `auto` (`ollama` when a model is configured and the server
answers and has it, else `fallback`). Tests and plug-ins register their own through
`register_summarizer`, the same way the built-ins are registered.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from vaultmind.errors import ConfigError
from vaultmind.tree.summarize import Summarizer

if TYPE_CHECKING:
    from vaultmind.config import Config
    from vaultmind.memory import Memory

_PROBE_TTL_S = 300.0

SummarizerFactory = Callable[["Config"], Summarizer]

_REGISTRY: dict[str, SummarizerFactory] = {}


def register_summarizer(name: str, factory: SummarizerFactory) -> None:
    _REGISTRY[name] = factory


def create_summarizer(config: Config) -> Summarizer:
    """The summarizer named by `[trees] summarizer` (default `auto`)."""
    return summarizer_factory(config)(config)


def summarizer_for(memory: Memory) -> Summarizer:
    """`create_summarizer` for a seal pass over `memory`: one that calls a model gives up the
    call in flight when the daemon stops (`Memory.stopping`), if it can."""
    summarizer = create_summarizer(memory.config)
    interrupt = getattr(summarizer, "interrupt_on", None)
    if callable(interrupt):
        interrupt(memory.stopping)
    return summarizer


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
    from vaultmind.llm.ollama_chat import LlmUnrecoverable
    from vaultmind.tree.llm import OllamaSummarizer, Unavailable

    try:
        return OllamaSummarizer.from_config(config)
    except LlmUnrecoverable as exc:  # no model set: the trees never wait for one (DESIGN §6)
        return Unavailable(exc)


def _auto(config: Config) -> Summarizer:
    from vaultmind.llm.ollama_chat import LlmUnrecoverable
    from vaultmind.tree.llm import OllamaSummarizer

    try:
        summarizer = OllamaSummarizer.from_config(config)
    except LlmUnrecoverable:  # no model configured (or no valid timeout): nothing to probe
        return _fallback(config)
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
    from vaultmind.llm.ollama_chat import has_model, pulled_models

    try:
        ok = has_model(pulled_models(host, 2.0), model)
    except Exception:  # any failure to ask means "not available": the fallback is always there
        ok = False
    with _probe_lock:
        _probes[key] = (now, ok)
    return ok
