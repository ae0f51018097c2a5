"""The `[trees]` settings, read once from `config.extra` (defaults below).

    [trees]
    l0_tokens = 3000          # a level-0 buffer seals when its leaves reach this many tokens
    fanout = 8                # a level >= 1 buffer seals when it holds this many summaries
    flush_after_hours = 24.0  # `flush` seals a level-0 buffer whose newest leaf is this old
    summarizer = "auto"       # auto | ollama | fallback (or a registered name)
    summarizer_model = ""     # Ollama chat model; empty means [ollama] chat_model
    summarizer_timeout_s = 120.0
    user_notes = true         # fold your own notes too, one tree per top folder
    reseal_quiet_minutes = 10.0  # a stale summary is sealed again once what is under it was
                                 # not written for this long (0: at once)

Why 3,000 tokens at level 0: the reference design used 50,000, which a personal chat channel
(messages of 20-50 tokens) or a folder of notes takes months to reach, so almost every summary
came from the time flush. 3,000 estimated tokens is one busy day of a channel, a long email
thread or a handful of note sections; it fits the context of a small local model together
with the prompt and the answer (the estimate over-counts real tokens about twice), and one
level-1 summary (at most 400 tokens) then compresses its input about 7x.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vaultmind.errors import ConfigError

DEFAULT_L0_TOKENS = 3000
DEFAULT_FANOUT = 8
DEFAULT_FLUSH_AFTER_HOURS = 24.0
MAX_FLUSH_AFTER_HOURS = 87_600.0  # ten years: beyond, a flush that never comes (and dates overflow)
DEFAULT_SUMMARIZER = "auto"
DEFAULT_SUMMARIZER_TIMEOUT_S = 120.0
DEFAULT_RESEAL_QUIET_MINUTES = 10.0
MAX_RESEAL_QUIET_MINUTES = 10_080.0  # a week
MAX_LEVEL = 32
"""The cascade cap: no summary above level 32 is ever written."""

_CONFIG = ".vaultmind/config.toml"


@dataclass(frozen=True, slots=True)
class TreeSettings:
    l0_tokens: int = DEFAULT_L0_TOKENS
    fanout: int = DEFAULT_FANOUT
    flush_after_hours: float = DEFAULT_FLUSH_AFTER_HOURS
    summarizer: str = DEFAULT_SUMMARIZER
    summarizer_model: str = ""
    summarizer_timeout_s: float = DEFAULT_SUMMARIZER_TIMEOUT_S
    user_notes: bool = True
    reseal_quiet_minutes: float = DEFAULT_RESEAL_QUIET_MINUTES

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> TreeSettings:
        l0 = _int(extra, "trees.l0_tokens", DEFAULT_L0_TOKENS)
        if l0 < 64:
            raise ConfigError(f"[trees] l0_tokens = {l0} is too small", path=_CONFIG, hint="use at least 64")
        fanout = _int(extra, "trees.fanout", DEFAULT_FANOUT)
        if fanout < 2:
            raise ConfigError(
                f"[trees] fanout = {fanout} must be at least 2",
                path=_CONFIG,
                hint="a fan-out of 1 would build chains of one-child summaries",
            )
        hours = config_number(extra, "trees.flush_after_hours", DEFAULT_FLUSH_AFTER_HOURS)
        if not 0 <= hours <= MAX_FLUSH_AFTER_HOURS:
            raise ConfigError(
                f"[trees] flush_after_hours = {hours} is out of range",
                path=_CONFIG,
                hint=f"use 0 to {MAX_FLUSH_AFTER_HOURS:,.0f} (ten years)",
            )
        timeout = config_number(extra, "trees.summarizer_timeout_s", DEFAULT_SUMMARIZER_TIMEOUT_S)
        if timeout <= 0:
            raise ConfigError(f"[trees] summarizer_timeout_s = {timeout} must be positive", path=_CONFIG)
        user_notes = extra.get("trees.user_notes", True)
        if not isinstance(user_notes, bool):
            raise ConfigError(f"[trees] user_notes = {user_notes!r} must be true or false", path=_CONFIG)
        quiet = config_number(
            extra,
            "trees.reseal_quiet_minutes",
            DEFAULT_RESEAL_QUIET_MINUTES,
            between=(0.0, MAX_RESEAL_QUIET_MINUTES),
        )
        return cls(
            l0_tokens=l0,
            fanout=fanout,
            flush_after_hours=hours,
            summarizer=_str(extra, "trees.summarizer", DEFAULT_SUMMARIZER),
            summarizer_model=_str(extra, "trees.summarizer_model", ""),
            summarizer_timeout_s=timeout,
            user_notes=user_notes,
            reseal_quiet_minutes=quiet,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "l0_tokens": self.l0_tokens,
            "fanout": self.fanout,
            "flush_after_hours": self.flush_after_hours,
            "summarizer": self.summarizer,
            "user_notes": self.user_notes,
            "reseal_quiet_minutes": self.reseal_quiet_minutes,
        }


def _int(extra: Mapping[str, Any], key: str, default: int) -> int:
    value = extra.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"[trees] {key.split('.', 1)[1]} = {value!r} must be an integer", path=_CONFIG)
    return value


def config_number(
    extra: Mapping[str, Any], key: str, default: float, between: tuple[float, float] | None = None
) -> float:
    """The number setting `key` ("section.name") of `extra`, `default` when unset; a ConfigError
    that names it when it is no number or outside `between` (the trees' and admission's)."""
    value = extra.get(key, default)
    valid = not isinstance(value, bool) and isinstance(value, int | float)
    if valid and between is not None:
        valid = between[0] <= float(value) <= between[1]
    if not valid:
        section, name = key.split(".", 1)
        span = f" between {between[0]:g} and {between[1]:g}" if between is not None else ""
        raise ConfigError(f"[{section}] {name} = {value!r} must be a number{span}", path=_CONFIG)
    return float(value)


def _str(extra: Mapping[str, Any], key: str, default: str) -> str:
    value = extra.get(key, default)
    if not isinstance(value, str):
        raise ConfigError(f"[trees] {key.split('.', 1)[1]} = {value!r} must be a string", path=_CONFIG)
    return value.strip()
