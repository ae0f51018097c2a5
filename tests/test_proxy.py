"""A proxy in the environment (HTTP_PROXY, as set for a browser) never sees what stays on this
machine: the daemon's API (its bearer token, the questions) and an Ollama on loopback are asked
directly; only an Ollama on another machine goes through it, and `doctor` says so."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import ollama
import pytest

from tests.fakes.ollama_server import FakeOllama
from vaultmind.client import find_daemon
from vaultmind.config import load_config
from vaultmind.embed.ollama import OllamaEmbedder
from vaultmind.llm.ollama_chat import OllamaChat, pulled_models

from .conftest import run_main, running_daemon, write


@contextmanager
def _proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """A "proxy" the environment names: it records each request's first line and answers 502."""
    seen: list[bytes] = []
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                seen.append(conn.recv(65536).split(b"\r\n")[0])
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, url)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    try:
        yield seen
    finally:
        stop.set()
        thread.join(2)
        server.close()


def test_ollama_on_loopback_is_asked_directly_and_a_remote_one_through_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama(embed_models={"nomic-embed-text": 8}) as fake, _proxy(monkeypatch) as seen:
        assert "llama3.2:latest" in pulled_models(fake.host, 5.0)
        embedder = OllamaEmbedder("nomic-embed-text", host=fake.host, timeout_s=5.0)
        chat = OllamaChat("llama3.2", host=fake.host, timeout_s=5.0)
        try:
            assert embedder.embed(["the atlas launch"]).shape == (1, 8)
            assert chat.chat([{"role": "user", "content": "hi"}])
        finally:
            embedder.close()
            chat.close()
        assert seen == []  # the proxy saw nothing of it
        assert {r.path for r in fake.requests} >= {"/api/tags", "/api/embed", "/api/chat"}
        with pytest.raises(ollama.ResponseError):  # the proxy's 502
            pulled_models("http://ollama-box.invalid:11434", 5.0)
        assert seen == [b"GET http://ollama-box.invalid:11434/api/tags HTTP/1.1"]  # another machine: the proxy


def test_the_daemon_is_asked_directly_whatever_proxy_the_environment_names(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, "a.md", "# A\n\nThe atlas launch moved to March.\n")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    with running_daemon(config), _proxy(monkeypatch) as seen:
        client = find_daemon(config)
        assert client is not None  # its health check was not sent to the proxy
        answer = client.call("POST", "/v1/query", {"mode": "search", "args": {"query": "atlas launch"}})
        assert "atlas" in str(answer)
        code, _, err = run_main(capsys, "status", "--vault", str(vault), "--json")
        assert code == 0, err
        assert seen == []  # neither the token nor the question went to the proxy


def test_doctor_names_the_proxy_a_remote_ollama_is_reached_through(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n[embeddings]\nprovider = "none"\n[ollama]\nhost = "http://ollama-box.invalid:1"\n')
    with _proxy(monkeypatch):
        _, data, _ = run_main(capsys, "doctor", "--vault", str(vault), "--json")
        proxy = os.environ["HTTP_PROXY"]
    check = next(c for c in data["checks"] if c["name"] == "privacy")
    assert f"http://ollama-box.invalid:1 is another machine (admission, summaries send text there, through the proxy {proxy} the environment names)" in check["detail"]
