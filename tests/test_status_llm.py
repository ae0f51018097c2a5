"""`status` when the LLM work cannot run: Ollama unreachable, gray leaves waiting for their
admission decision. The queue says "degraded" — with the host, the leaves waiting and what to
do — for as long as the work waits, not only during the first deferral's backoff."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.fakes import free_port
from vaultmind.cli.output import print_status
from vaultmind.memory import Memory
from vaultmind.queue.failures import BACKOFF, Backoff
from vaultmind.queue.workers import WorkerPool

from .test_queue import gray_vault, llm_config

BACKOFF_S = 0.5  # the deferral's backoff, short enough to outlive in a test


@pytest.mark.parametrize("after_backoff", [False, True])
def test_unreachable_ollama_is_degraded_with_host_waiting_leaves_and_remedy(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, after_backoff: bool
) -> None:
    """Read during the deferral's backoff or after it (the job due again, held back by the
    daemon's closed gate): the same "degraded" and the same notice either way."""
    monkeypatch.setitem(BACKOFF, "llm_unreachable", Backoff(BACKOFF_S, BACKOFF_S, counts_attempt=False))
    gray_vault(vault)
    host = f"http://127.0.0.1:{free_port()}"
    with Memory.open(llm_config(vault, host)) as memory:
        memory.sync()
        pool = WorkerPool(memory.config, memory)
        assert pool.drain(timeout_s=20) == 1  # one job probes Ollama, is deferred; the gate closes
        pool.close()
        if after_backoff:
            time.sleep(BACKOFF_S * 2)
        status = memory.status()
        queue = status["queue"]
        gray = status["admission"]["gray"]
        assert gray >= 1 and queue["depth"] == gray
        assert queue["health"] == "degraded"
        assert [c["failure_class"] for c in queue["causes"]] == ["llm_unreachable"]
        notice = queue["notice"]
        assert f"Ollama at {host} is not reachable" in notice
        assert f"{gray} lea" in notice and "`ollama serve`" in notice and "vaultmind doctor" in notice
        assert "[admission] llm = false" in notice and 'summarizer = "fallback"' in notice
        print_status(status)
        out = capsys.readouterr().out
        assert "health degraded" in out and f"Ollama at {host} is not reachable" in out

