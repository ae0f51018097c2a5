"""The daemon's background upkeep (seals, NER catch-up) against the real watcher, API and the
real `ollama` client on a fake loopback Ollama: bounded LLM calls, one seal pass at a time, a
stop that never waits out a seal."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import WAIT_S, running_daemon, until, write
from tests.fakes import FakeOllama, RecordedRequest
from vaultmind.client import find_daemon
from vaultmind.config import load_config
from vaultmind.daemon import Daemon
from vaultmind.memory import Memory

ANSWER = "Alice planned the atlas launch with the team. The budget was agreed in full."


def _notes(vault: Path, folders: str) -> None:
    for folder in folders:
        write(
            vault,
            f"{folder}/n.md",
            f"# {folder} note\n\nAlice planned the atlas launch with the team in {folder}. "
            "The budget was agreed in full after a long talk.\n",
        )


@contextmanager
def _serving(vault: Path, host: str, extra: str = "") -> Iterator[tuple[Memory, Daemon]]:
    """The vault's daemon in a thread, sealing every source with the Ollama at `host`."""
    config_text = f'[ollama]\nhost = "{host}"\n[trees]\nsummarizer = "ollama"\nflush_after_hours = 0.0\n{extra}'
    with _daemon(vault, config_text) as running:
        yield running


@contextmanager
def _daemon(vault: Path, config_text: str) -> Iterator[tuple[Memory, Daemon]]:
    """The vault's daemon, with `config_text` as its config.toml, in a thread."""
    write(vault, ".vaultmind/config.toml", config_text)
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    with running_daemon(config) as running:
        yield running


def _wait_for(what: str, check: Callable[[], object], timeout: float = WAIT_S) -> None:
    assert until(check, timeout), f"timed out waiting for {what}"


def test_seals_count_against_llm_concurrency_and_a_flush_waits_for_the_running_pass(vault: Path) -> None:
    """`[queue] llm_concurrency = 1` bounds the seals' calls too; a flush asked for while the
    background upkeep seals waits for that pass instead of racing it for the same buffers."""
    _notes(vault, "ABCD")
    in_flight = [0]
    peak = [0]
    lock = threading.Lock()

    def slow(request: RecordedRequest) -> str:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.6)
        with lock:
            in_flight[0] -= 1
        return ANSWER

    with FakeOllama(responder=slow) as fake, _serving(vault, fake.host, "[queue]\nllm_concurrency = 1\n") as (memory, _):
        _wait_for("the upkeep's first seal", lambda: fake.requests_to("/api/chat"))
        client = find_daemon(memory.config)
        assert client is not None
        report = client.call("POST", "/v1/flush", {}, timeout=300)
        assert report["aborted"] == []  # no pass lost a race to another
        sealed = sorted(p.relative_to(vault).as_posix() for p in (vault / "summaries").rglob("*.md"))
        assert len(sealed) == 4  # every source sealed once, by one pass or the other
        assert peak[0] == 1


def test_a_stop_during_a_seal_gives_up_its_llm_call_and_closes_nothing_in_use(vault: Path) -> None:
    """An Ollama seal may take minutes: a stop ends the call in flight, the upkeep thread ends
    before `run()` returns (the index is closed after it), and no summary is written."""
    _notes(vault, "A")
    with FakeOllama(failure="hang", failure_paths=("/api/chat",)) as fake:
        with _serving(vault, fake.host) as (_memory, daemon):
            _wait_for("the seal's call", lambda: fake.requests_to("/api/chat"))
            started = time.monotonic()
            daemon.stop()
            daemon.trees._thread.join(WAIT_S)
            assert not daemon.trees._thread.is_alive()
            assert time.monotonic() - started < 10
        assert not (vault / "summaries").exists() or not list((vault / "summaries").rglob("*.md"))


def _settled(daemon: Daemon) -> int:
    """The upkeep's pass count once no pass has run for 2 s."""
    last = -1
    while daemon.trees.runs != last:
        last = daemon.trees.runs
        time.sleep(2.0)
    return last


def test_a_reindex_or_sync_through_the_api_wakes_the_upkeep(vault: Path) -> None:
    """A request's batch is a batch like a watcher's: the upkeep (NER catch-up, seals) runs
    after it, not only after the next save or within the hour."""
    _notes(vault, "AB")
    with _daemon(vault, '[trees]\nsummarizer = "fallback"\n') as (memory, daemon):
        client = find_daemon(memory.config)
        assert client is not None
        for route, body in (("/v1/reindex", {}), ("/v1/sync", {"paths": ["A/n.md"]})):
            runs = _settled(daemon)
            client.call("POST", route, body, timeout=120)
            _wait_for(f"a pass after {route}", lambda runs=runs: daemon.trees.runs > runs)


def test_a_batch_that_fails_with_any_error_is_counted_and_the_watcher_goes_on(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only vaultmind's, DuckDB's or the system's errors: a bug met in one batch is logged
    with the batch's paths and counted (in `/v1/status`), and the next save is applied."""
    _notes(vault, "A")
    (vault / "B").mkdir()  # there before the daemon: the save's batch is the note alone, not its new folder first
    with _daemon(vault, '[trees]\nsummarizer = "fallback"\n') as (memory, daemon):
        real = memory.syncer.sync_paths
        broken = {"left": 1}

        def once_broken(paths: list[str], **kw: Any) -> Any:
            if broken["left"]:
                broken["left"] -= 1
                raise RuntimeError("a bug in one batch")
            return real(paths, **kw)

        monkeypatch.setattr(memory.syncer, "sync_paths", once_broken)
        write(vault, "B/bad.md", "# Bad\n\nThe first save meets the bug.\n")
        _wait_for("the failed batch", lambda: daemon.failed_batches == 1)
        error = daemon.last_batch_error or ""  # as logged: the batch's paths, then why
        assert "B/bad.md" in error and "(RuntimeError: a bug in one batch)" in error, error
        write(vault, "C/good.md", "# Good\n\nThe lighthouse keeper logs a saffron sunrise.\n")
        _wait_for("the next save", lambda: memory.search("lighthouse saffron")["hits"])
        client = find_daemon(memory.config)
        assert client is not None
        status = client.call("GET", "/v1/status")
        assert status["daemon"]["failed_batches"] == 1
        assert "a bug in one batch" in status["daemon"]["last_batch_error"]
