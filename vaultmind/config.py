"""Configuration, read once at the entry point into a frozen object and passed down.

Precedence: explicit argument > environment (`VAULTMIND_*`) > `.vaultmind/config.toml` > default.
Every key is documented in `vault_template/.vaultmind/config.toml`.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from vaultmind.errors import ConfigError
from vaultmind.markdown.tokens import MIN_CHUNK_TOKENS
from vaultmind.vault.templates import TemplateFolder, template_folders

CONFIG_RELPATH = ".vaultmind/config.toml"
MAX_LIMIT = 500  # the most hits (or node ids) one answer of any retrieval mode holds
MIN_EMBED_CONTEXT = 2 * MIN_CHUNK_TOKENS  # the smallest `[ollama] embed_context`: room for a leaf's words

DEFAULT_IGNORE: tuple[str, ...] = (".*", "~$*")
"""Hidden files and folders, at any depth: Obsidian does not show them (.obsidian, .git,
.trash, .vaultmind, a tool's .venv …), so they are not part of the vault a person sees; and
the owner files Office and OneDrive keep beside a file that is open (`~$Plan.md`), which hold
a user name, not a note. (Sync tools' and editors' other temporary files are hidden or do not
end in `.md`: docs/vault-format.md, "Sync tools, editors and git".)"""


@dataclass(frozen=True, slots=True)
class Config:
    vault: Path
    # [vault]
    ignore: tuple[str, ...] = ()  # user globs, on top of DEFAULT_IGNORE
    max_file_bytes: int = 5 * 1024 * 1024
    include_templates: bool = False  # index the templates folders Obsidian's settings name
    # [chunking]
    chunk_tokens: int = 400
    # [embeddings]
    embed_provider: str = "static"  # static | ollama | e5 | none
    embed_model: str = ""  # provider default when empty
    embed_batch: int = 256
    # [ollama]
    ollama_host: str = "http://127.0.0.1:11434"
    ollama_timeout_s: float = 30.0
    ollama_embed_model: str = "nomic-embed-text"
    ollama_chat_model: str = "llama3.2"
    ollama_embed_context: int = 0  # tokens the embedding model reads; 0: learned from Ollama
    # [watch]
    debounce_ms: int = 150
    step_ms: int = 30
    # [server]
    host: str = "127.0.0.1"
    port: int = 0  # 0 picks a free port, published in .vaultmind/daemon.json
    # [search]
    search_limit: int = 10
    # [ingest]
    ingest_timezone: str = ""  # exports' local times (WhatsApp, Signal…); empty: UTC (notes' dates: this machine's)
    date_order: str = "dmy"  # "03/04/2024" in a note: 3 April ("dmy") or 4 March ("mdy")
    # [privacy]
    privacy_mode: str = "standard"  # standard | local_only (privacy.py)
    extra: dict[str, Any] = field(default_factory=dict)
    # Not a setting: the templates folders named by the vault's Obsidian settings, read at load.
    template_folders: tuple[TemplateFolder, ...] = ()

    @property
    def state_dir(self) -> Path:
        return self.vault / ".vaultmind"

    @property
    def index_path(self) -> Path:
        return self.state_dir / "index.duckdb"

    @property
    def left_out_templates(self) -> tuple[TemplateFolder, ...]:
        """The templates folders the index leaves out (none with `include_templates`)."""
        return () if self.include_templates else self.template_folders

    @property
    def all_ignores(self) -> tuple[str, ...]:
        return DEFAULT_IGNORE + tuple(f"{t.path}/**" for t in self.left_out_templates) + self.ignore

    def with_(self, **changes: Any) -> Config:
        return replace(self, **changes)


_SCHEMA: dict[tuple[str, str], tuple[str, type | tuple[type, ...]]] = {
    ("vault", "ignore"): ("ignore", list),
    ("vault", "max_file_mb"): ("max_file_bytes", (int, float)),
    ("vault", "include_templates"): ("include_templates", bool),
    ("chunking", "max_tokens"): ("chunk_tokens", int),
    ("embeddings", "provider"): ("embed_provider", str),
    ("embeddings", "model"): ("embed_model", str),
    ("embeddings", "batch"): ("embed_batch", int),
    ("ollama", "host"): ("ollama_host", str),
    ("ollama", "timeout_s"): ("ollama_timeout_s", (int, float)),
    ("ollama", "embed_model"): ("ollama_embed_model", str),
    ("ollama", "chat_model"): ("ollama_chat_model", str),
    ("ollama", "embed_context"): ("ollama_embed_context", int),
    ("watch", "debounce_ms"): ("debounce_ms", int),
    ("watch", "step_ms"): ("step_ms", int),
    ("server", "host"): ("host", str),
    ("server", "port"): ("port", int),
    ("search", "limit"): ("search_limit", int),
    ("ingest", "timezone"): ("ingest_timezone", str),
    ("time", "date_order"): ("date_order", str),
    ("privacy", "mode"): ("privacy_mode", str),
}

AS_WRITTEN: dict[str, str] = {attr: f"[{section}] {key}" for (section, key), (attr, _) in _SCHEMA.items()}
"""A `Config` field's setting as config.toml writes it: "search_limit" → "[search] limit"."""

FEATURE_KEYS: dict[str, tuple[str, ...]] = {
    "admission": ("owner", "keep", "drop", "llm", "reask_per_pass", "llm_keep", "priority_tags"),
    "queue": ("workers", "llm_concurrency", "lease_s", "poll_s", "reconcile_s"),
    "trees": (
        "l0_tokens", "fanout", "flush_after_hours", "summarizer", "summarizer_model",
        "summarizer_timeout_s", "user_notes", "reseal_quiet_minutes",
    ),
    "entities": ("create_threshold", "create_kinds", "ner_model", "ner_batch", "fuzzy_threshold", "ner_inline"),
}  # fmt: skip
"""Settings of feature modules, kept in `Config.extra` as "section.key" and validated by the
module that owns them (admission/decide.py, queue/workers.py, tree/settings.py,
entities/settings.py). Any other key in config.toml is an error, so a typo never goes unnoticed."""

_ENV = {
    "VAULTMIND_EMBED_PROVIDER": "embed_provider",
    "VAULTMIND_OLLAMA_HOST": "ollama_host",
}


def load_config(vault: str | Path, **overrides: Any) -> Config:
    """Read `<vault>/.vaultmind/config.toml` (optional), then environment, then overrides."""
    root = Path(vault).expanduser().resolve()
    values: dict[str, Any] = {}
    path = root / CONFIG_RELPATH
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            hint = _parse_hint(str(exc), text) if isinstance(exc, tomllib.TOMLDecodeError) else None
            raise ConfigError(f"cannot parse config: {exc}", path=path, hint=hint or "fix the TOML syntax") from exc
        values.update(_from_toml(data, path))
    for env, attr in _ENV.items():
        if os.environ.get(env):
            values[attr] = os.environ[env]
    values.update({k: v for k, v in overrides.items() if v is not None})
    config = Config(vault=root, template_folders=template_folders(root), **values)
    _validate(config, path)
    return config


_TWICE = re.compile(r"Cannot declare \((.+?),?\) twice(?: \(at line (\d+))?")
_OVERWRITE = re.compile(r"Cannot overwrite a value \(at line (\d+)")
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+(?:\s*\.\s*[A-Za-z0-9_\-]+)*)\s*=")


def _parse_hint(message: str, text: str) -> str | None:
    """What to do about a config that does not parse, when it is a thing written twice."""
    return _declared_before(message, text) or _set_twice(message, text)


def _set_twice(message: str, text: str) -> str | None:
    """Of a key set twice in one section (tomllib says only "Cannot overwrite a value (at line
    3, …)"): the key, its section and both lines."""
    found = _OVERWRITE.search(message)
    lines = text.splitlines()
    second = int(found.group(1)) if found else 0
    key = _key_at(lines, second)
    if key is None:
        return None
    top = next((n for n in range(second - 1, 0, -1) if _HEADER.match(lines[n - 1])), 0)  # the section's header
    first = next((n for n in range(top + 1, second) if _key_at(lines, n) == key), None)
    if first is None:
        return None
    header = _HEADER.match(lines[top - 1]) if top else None
    where = f" in [{header.group(1)}]" if header else ""
    return f"`{key}` is set twice{where} (lines {first} and {second}): keep one"


def _key_at(lines: list[str], number: int) -> str | None:
    """The key line `number` (from 1) sets, dots without spaces ("a.b"); None for any other line."""
    if not 0 < number <= len(lines):
        return None
    key = _KEY.match(lines[number - 1])
    return re.sub(r"\s*\.\s*", ".", key.group(1)) if key else None


def _declared_before(message: str, text: str) -> str | None:
    """Of a section declared twice (a snippet appended under a header the file already has,
    commented keys and all): where it already is, and what to do."""
    twice = _TWICE.search(message)
    if twice is None:
        return None
    names = [name.strip().strip("'\"") for name in twice.group(1).split(",") if name.strip()]
    header = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(map(re.escape, names)) + r"\s*\]")
    second = int(twice.group(2)) if twice.group(2) else None  # the line declaring it again
    line = next((n for n, row in enumerate(text.splitlines(), start=1) if header.match(row)), None)
    if line is None or line == second:  # declared first by dotted keys (`embeddings.batch = 3`)
        return None
    section = ".".join(names)
    return f"[{section}] is already in this file at line {line}: put the setting there (uncomment it if it is shown commented) and remove the second [{section}]"


def _from_toml(data: dict[str, Any], path: Path) -> dict[str, Any]:
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for section, table in data.items():
        if not isinstance(table, dict):
            raise ConfigError(f"top-level key {section!r} must be a [section]", path=path)
        sections = sorted({s for s, _ in _SCHEMA} | set(FEATURE_KEYS))
        if section not in sections:  # an empty one too: its settings may sit under the right name later
            raise ConfigError(
                f"unknown section [{section}]",
                path=path,
                hint=f"remove it or check the spelling (sections: {', '.join(sections)})",
            )
        for key, value in table.items():
            spec = _SCHEMA.get((section, key))
            if spec is None:
                if key not in FEATURE_KEYS.get(section, ()):
                    known = [k for s, k in _SCHEMA if s == section] + list(FEATURE_KEYS.get(section, ()))
                    raise ConfigError(
                        f"unknown setting [{section}] {key}",
                        path=path,
                        hint=f"check the spelling; known in [{section}]: {', '.join(known)}",
                    )
                extra[f"{section}.{key}"] = value
                continue
            attr, kind = spec
            if isinstance(value, bool) != (kind is bool) or not isinstance(value, kind):
                raise ConfigError(
                    f"[{section}] {key} = {value!r} has the wrong type",
                    path=path,
                    hint=f"expected {_type_name(kind)}",
                )
            if isinstance(value, list) and not all(isinstance(item, str) for item in value):  # (a 1 was taken for the glob "1")
                raise ConfigError(
                    f"[{section}] {key} = {value!r} must be a list of strings", path=path, hint=f'such as {key} = ["Archive/**"]'
                )
            values[attr] = _coerce(attr, value)
    if extra:
        values["extra"] = extra
    return values


def _coerce(attr: str, value: Any) -> Any:
    if attr == "ignore":
        return tuple(str(v) for v in value)
    if attr == "max_file_bytes":
        return int(float(value) * 1024 * 1024)
    if attr == "ollama_timeout_s":
        return float(value)
    return value


def _type_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join({"list": "a list of strings", "bool": "true or false", "int": "an integer", "float": "a number", "str": "a string"}[k.__name__] for k in kinds)


def _validate(config: Config, path: Path) -> None:
    if config.chunk_tokens < MIN_CHUNK_TOKENS:  # (the chunker used to raise a smaller one silently)
        raise ConfigError(f"[chunking] max_tokens must be at least {MIN_CHUNK_TOKENS}", path=path)
    if config.max_file_bytes <= 0:
        raise ConfigError("[vault] max_file_mb must be positive", path=path)
    if not 0 < config.search_limit <= MAX_LIMIT:  # (0 used to give the default, and above the cap the cap, silently)
        raise ConfigError(
            f"[search] limit = {config.search_limit} must be a positive integer of at most {MAX_LIMIT}", path=path, hint="such as 10"
        )
    if config.debounce_ms < 0:
        raise ConfigError(f"[watch] debounce_ms = {config.debounce_ms} must be 0 or more milliseconds", path=path, hint="such as 150")
    if config.step_ms <= 0:
        raise ConfigError(f"[watch] step_ms = {config.step_ms} must be a positive number of milliseconds", path=path, hint="such as 30")
    if config.embed_batch <= 0:  # (0 and below were taken as 1, silently)
        raise ConfigError(f"[embeddings] batch = {config.embed_batch} must be a positive integer", path=path, hint="such as 256")
    if config.ollama_timeout_s <= 0:  # (refused only once Ollama was asked, without the file)
        raise ConfigError(
            f"[ollama] timeout_s = {config.ollama_timeout_s:g} must be a positive number of seconds", path=path, hint="such as 30"
        )
    if config.ollama_embed_context and config.ollama_embed_context < MIN_EMBED_CONTEXT:
        raise ConfigError(
            f"[ollama] embed_context = {config.ollama_embed_context} must be 0 (learned from Ollama) or at least {MIN_EMBED_CONTEXT} tokens",
            path=path,
            hint="such as 512, or leave it out",
        )
    if not 0 <= config.port <= 65535:
        raise ConfigError(f"[server] port = {config.port} is no port", path=path, hint="use 0 (any free port) to 65535")
    if config.ingest_timezone and not _known_zone(config.ingest_timezone):
        raise ConfigError(
            f"[ingest] timezone = {config.ingest_timezone!r} is no time zone", path=path, hint='an IANA name such as "Europe/Berlin"'
        )
    if config.date_order not in ("dmy", "mdy"):
        raise ConfigError(
            f"[time] date_order = {config.date_order!r} is no date order", path=path, hint='"dmy" (3/4 is 3 April) or "mdy" (4 March)'
        )
    if not config.host.strip() or any(c.isspace() for c in config.host):
        raise ConfigError(
            f"[server] host = {config.host!r} is no host name or address", path=path, hint='such as "127.0.0.1"'
        )
    _validate_ollama_host(config, path)
    _validate_privacy(config, path)


def _validate_ollama_host(config: Config, path: Path) -> None:
    """`[ollama] host` (or $VAULTMIND_OLLAMA_HOST) is an http or https URL with a host, or the
    bare "host:port" Ollama's client takes: a typo ("http//127.0.0.1:11434") was taken for
    another machine, and `doctor` said to start an Ollama that was running."""
    if ollama_address(config.ollama_host):
        return
    from_env = os.environ.get("VAULTMIND_OLLAMA_HOST") == config.ollama_host
    setting = "$VAULTMIND_OLLAMA_HOST" if from_env else "[ollama] host"
    raise ConfigError(
        f"{setting} = {config.ollama_host!r} is no Ollama address",
        path=None if from_env else path,
        hint='a URL with http or https and a host, such as "http://127.0.0.1:11434" (the port: 11434 if left out)',
    )


def ollama_address(host: str) -> bool:
    """Whether `host` reads as where an Ollama runs: "http(s)://HOST[:PORT][/path]", or
    "HOST[:PORT]" without a scheme (as Ollama's client reads it: http)."""
    if not host or any(c.isspace() for c in host) or ("//" in host and "://" not in host):
        return False
    parts = urlsplit(host if "://" in host else f"http://{host}")
    try:
        parts.port  # noqa: B018 (a port that is no number, or out of range, raises)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _validate_privacy(config: Config, path: Path) -> None:
    """`[privacy] mode = "local_only"` refuses every setting that sends text off this machine."""
    from vaultmind.privacy import MODES, egress

    if config.privacy_mode not in MODES:
        raise ConfigError(
            f"[privacy] mode = {config.privacy_mode!r} is no privacy mode", path=path, hint=" or ".join(f'"{m}"' for m in MODES)
        )
    if config.privacy_mode == "local_only" and (found := egress(config)):
        setting, why = found[0]
        raise ConfigError(
            f'[privacy] mode = "local_only" keeps the memory on this machine, but {setting}: {why}',
            path=path,
            hint=f'change {setting} to something on this machine, or set [privacy] mode = "standard" to allow it',
        )


def _known_zone(name: str) -> bool:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True
