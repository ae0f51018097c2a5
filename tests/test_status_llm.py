"""`status` when LLM work cannot run: Ollama unreachable. Summaries waiting for it make the
queue "degraded" — with the host and what to do — for as long as the work waits, not only
during the first deferral's backoff; gray admission leaves never wait (the rules decide them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import free_port
from vaultmind.cli.output import print_status
from vaultmind.memory import Memory
from vaultmind.queue.store import NewJob, claim, enqueue, fail, now_ms

from .test_queue import gray_vault, llm_config


@pytest.mark.parametrize("after_backoff", [False, True])
def test_unreachable_ollama_is_degraded_with_host_and_remedy(
    vault: Path, capsys: pytest.CaptureFixture[str], after_backoff: bool
) -> None:
    """Read during the deferral's backoff or after it (the job due again, held back by the
    daemon's closed gate): the same "degraded" and the same notice either way."""
    gray_vault(vault)
    host = f"http://127.0.0.1:{free_port()}"
    with Memory.open(llm_config(vault, host)) as memory:
        memory.sync()
        with memory.index.transaction() as con:  # a summary's LLM job, which found no Ollama
            enqueue(con, [NewJob("tree_summary", "s1", {"key": "s1"})], now=now_ms())
        job = claim(memory.index, now=now_ms(), kinds=["tree_summary"])
        assert job is not None
        fail(memory.index, job, "llm_unreachable", "cannot connect to Ollama", now=now_ms() - (3_600_000 if after_backoff else 0))
        status = memory.status()
        queue = status["queue"]
        assert queue["health"] == "degraded"
        assert "llm_unreachable" in [c["failure_class"] for c in queue["causes"]]
        notice = queue["notice"]
        assert f"Ollama at {host} is not reachable" in notice
        assert "`ollama serve`" in notice and "vaultmind doctor" in notice and 'summarizer = "fallback"' in notice
        print_status(status)
        out = capsys.readouterr().out
        assert "health degraded" in out and f"Ollama at {host} is not reachable" in out
