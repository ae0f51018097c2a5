"""A new user without Ollama: the gray-band messages are decided by rules, nothing waits, and
status says so as information — the vault is healthy from the first run."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import run_main, write

NO_OLLAMA = '[embeddings]\nprovider = "none"\n\n[ollama]\nhost = "http://127.0.0.1:9"\ntimeout_s = 2.0\n'


def test_gray_messages_are_decided_by_rules_without_ollama_and_the_queue_is_healthy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, the demo's gray messages waited for an LLM that was never there: the queue said
    "degraded" and told the user to switch `[admission] llm` off by hand."""
    vault = tmp_path / "demo"
    run_main(capsys, "init", "--demo", str(vault))
    write(vault, ".vaultmind/config.toml", NO_OLLAMA)  # nothing listens on port 9
    run_main(capsys, "reindex", "--vault", str(vault))
    code, _, err = run_main(capsys, "queue", "--run", "--timeout", "20", "--vault", str(vault))
    assert code == 0, err
    code, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    admission = status["admission"]
    assert admission["gray"] == 0 and admission["by_rules"] > 0, admission
    assert status["queue"]["health"] == "ok" and status["queue"]["deferred"] == 0, status["queue"]
    code, out, _ = run_main(capsys, "status", "--vault", str(vault))
    assert "health ok" in out and f"{admission['by_rules']} of them decided by rules while the LLM was not reachable" in out
