"""The `[entities]` settings, read once from `Config.extra` and validated.

| key | default | meaning |
|---|---|---|
| `create_threshold` | 3 | an entity note is created once an entity is mentioned in this many leaves |
| `create_kinds` | person, org, topic | kinds that get entity notes automatically |
| `ner_model` | `auto` | spaCy model package, `auto` or `off` |
| `ner_batch` | 16 | texts per `nlp.pipe` batch (`NER_BATCH`) |
| `ner_inline` | 64 | a sync runs NER itself when it brings at most this many new texts; a larger one leaves them all to `backfill_ner` (outside the sync); a daemon leaves every text to it (`EntityDeriver.serve`) |
| `fuzzy_threshold` | 90 | rapidfuzz `token_sort_ratio` (0–100) for matching names to entity notes; 101 turns fuzzy matching off |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vaultmind.config import CONFIG_RELPATH, Config
from vaultmind.entities.ids import canonical_kind
from vaultmind.entities.ner import NER_BATCH
from vaultmind.errors import ConfigError

DEFAULT_CREATE_KINDS = ("person", "org", "topic")


@dataclass(frozen=True, slots=True)
class EntitySettings:
    create_threshold: int = 3
    create_kinds: tuple[str, ...] = DEFAULT_CREATE_KINDS
    ner_model: str = "auto"
    ner_batch: int = NER_BATCH
    fuzzy_threshold: float = 90.0
    ner_inline: int = 64
    config_file: str = ""  # the file these were read from, named when `ner_model` cannot be found

    @classmethod
    def from_config(cls, config: Config) -> EntitySettings:
        extra = config.extra
        path = config.vault / CONFIG_RELPATH

        def get(key: str, kind: type | tuple[type, ...], default: Any) -> Any:
            value = extra.get(f"entities.{key}", default)
            if isinstance(value, bool) or not isinstance(value, kind):
                raise ConfigError(f"[entities] {key} = {value!r} has the wrong type", path=path)
            return value

        threshold = get("create_threshold", int, 3)
        if threshold < 1:
            raise ConfigError("[entities] create_threshold must be at least 1", path=path)
        raw_kinds = get("create_kinds", list, list(DEFAULT_CREATE_KINDS))
        kinds: list[str] = []
        for item in raw_kinds:
            kind = canonical_kind(str(item))
            if kind is None:
                raise ConfigError(f"[entities] create_kinds: unknown kind {item!r}", path=path)
            kinds.append(kind)
        fuzzy = float(get("fuzzy_threshold", (int, float), 90))
        if not 0 <= fuzzy <= 101:
            raise ConfigError("[entities] fuzzy_threshold must be between 0 and 101", path=path)
        batch = get("ner_batch", int, NER_BATCH)
        if batch < 1:
            raise ConfigError("[entities] ner_batch must be at least 1", path=path)
        inline = get("ner_inline", int, 64)
        if inline < 0:
            raise ConfigError("[entities] ner_inline must be 0 or more", path=path)
        model = str(get("ner_model", str, "auto")).strip() or "auto"
        return cls(threshold, tuple(dict.fromkeys(kinds)), model, batch, fuzzy, inline, str(path))
