"""`[privacy] mode`: may anything the memory holds leave this machine?

Everything vaultmind runs by default stays on the machine: the index, the static embedding
model, spaCy, the extractive summarizer, and Ollama at its default loopback address. Text leaves
only when the settings send it elsewhere: an `[ollama] host` on another machine (through the
environment's proxy, HTTP_PROXY and the like, when one is set; an Ollama on loopback and the
daemon's API are never asked through a proxy), an Ollama model
that runs in Ollama's cloud (a tag `cloud` or ending in `-cloud`: `gpt-oss:120b-cloud`,
`gemma4:cloud`), or an API bound beyond loopback (its answers travel the network).

- `standard` (the default): the settings are followed; `vaultmind doctor` says what leaves.
- `local_only`: such settings are refused when the configuration is read, naming the setting,
  so nothing a user asked to keep local is ever sent — not even by a model pulled later.
"""

from __future__ import annotations

import ipaddress
import urllib.request
from typing import Any, Protocol
from urllib.parse import urlsplit

MODES = ("standard", "local_only")


class Settings(Protocol):
    """What of a vault's settings (`config.Config`) says where text may go."""

    @property
    def embed_provider(self) -> str: ...
    @property
    def embed_model(self) -> str: ...
    @property
    def ollama_embed_model(self) -> str: ...
    @property
    def ollama_chat_model(self) -> str: ...
    @property
    def ollama_host(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def extra(self) -> dict[str, Any]: ...


def beyond_loopback(host: str) -> bool:
    """Whether the API bound to `host` can be reached from other machines (anything but
    "localhost" and loopback addresses, e.g. "0.0.0.0" or a LAN address)."""
    if host.strip().lower() in ("localhost", "localhost."):
        return False
    try:
        return not ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return True  # a host name other than localhost may resolve to anything


def ollama_hostname(host: str) -> str:
    """The machine an `[ollama] host` setting names ("http://127.0.0.1:11434", "localhost:11434")."""
    return urlsplit(_ollama_url(host)).hostname or ""


def _ollama_url(host: str) -> str:
    """An `[ollama] host` setting as a URL: "localhost:11434" is "http://localhost:11434"."""
    return host if "//" in host else f"http://{host}"


def cloud_model(name: str) -> bool:
    """Whether Ollama runs model `name` in its cloud rather than on this machine."""
    tag = name.partition(":")[2].strip().lower()
    return tag == "cloud" or tag.endswith("-cloud")


def ollama_uses(config: Settings) -> dict[str, list[str]]:
    """The Ollama models the settings use, each with what uses it (embeddings, admission's gray
    band, summaries); empty when nothing does. Read from the settings as written (their parsers,
    `admission/decide.py`'s `Policy` and `tree/settings.py`'s `TreeSettings`, check them): the
    gray band asks `[ollama] chat_model` unless `[admission] llm = false`; summaries, under the
    `auto` and `ollama` summarizers, `[trees] summarizer_model` or else that chat model."""
    uses: dict[str, list[str]] = {}
    if config.embed_provider == "ollama":
        uses.setdefault(config.embed_model or config.ollama_embed_model, []).append("embeddings")
    if config.extra.get("admission.llm", True) is not False:
        uses.setdefault(config.ollama_chat_model, []).append("admission")
    if _setting(config, "trees.summarizer") in ("", "auto", "ollama"):  # empty: the default, auto
        model = _setting(config, "trees.summarizer_model") or config.ollama_chat_model
        uses.setdefault(str(model), []).append("summaries")
    return uses


def _setting(config: Settings, key: str) -> object:
    """A `[trees]` text setting as `TreeSettings` reads it (padding stripped; empty when unset)."""
    value = config.extra.get(key, "")
    return value.strip() if isinstance(value, str) else value


def egress(config: Settings) -> list[tuple[str, str]]:
    """What in the settings sends the memory's text off this machine: (setting, why) pairs."""
    found: list[tuple[str, str]] = []
    uses = ollama_uses(config)
    host = ollama_hostname(config.ollama_host)
    if uses and beyond_loopback(host):
        through = _proxy_for(config.ollama_host)
        found.append((
            "[ollama] host",
            f"{config.ollama_host} is another machine ({', '.join(_users(uses))} send text there"
            + (f", through the proxy {through} the environment names" if through else "")
            + ")",
        ))
    for model, users in uses.items():
        if cloud_model(model):
            found.append((f"the model {model}", f"runs in Ollama's cloud ({' and '.join(users)})"))
    if beyond_loopback(config.host):
        found.append(("[server] host", f"{config.host} lets other machines ask the memory"))
    return found


def _proxy_for(host: str) -> str:
    """The proxy the environment (HTTP_PROXY, NO_PROXY, ...) sends requests to the Ollama at
    `host` (an `[ollama] host` setting) through, or ""."""
    parts = urlsplit(_ollama_url(host))
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return ""
    proxies = urllib.request.getproxies_environment()
    return str(proxies.get(parts.scheme or "http") or proxies.get("all") or "")


def _users(uses: dict[str, list[str]]) -> list[str]:
    return sorted({user for users in uses.values() for user in users})
