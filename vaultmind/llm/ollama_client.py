"""The one way vaultmind opens an `ollama.Client`: a proxy in the environment is never used for
an Ollama on this machine.

`ollama.Client` (httpx) follows `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` by default, also for
`127.0.0.1`: with a proxy set for the browser, every embedding and every prompt would travel
through it (and fail when the proxy cannot reach this machine's loopback). An Ollama on
loopback is asked directly; one on another machine keeps the environment's proxy (`NO_PROXY`
excludes hosts as usual), which is how such a network is usually reached.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vaultmind.privacy import beyond_loopback, ollama_hostname

if TYPE_CHECKING:
    import ollama


def open_client(host: str, timeout_s: float) -> ollama.Client:
    """A client for the Ollama at `host`; the environment's proxy is used only for another machine."""
    import ollama  # imported on first use: it costs ~0.2 s, and most runs never call Ollama

    return ollama.Client(host=host, timeout=timeout_s, trust_env=beyond_loopback(ollama_hostname(host)))
