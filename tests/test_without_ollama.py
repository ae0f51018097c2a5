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


def test_the_first_gray_leaf_decided_by_rules_cancels_the_other_gray_leaves_jobs(vault: Path) -> None:
    """With no Ollama, the first gray leaf's job decides every gray leaf by the rules; each
    other gray content's job was then still claimed, run and settled for nothing, one
    transaction after another (after an upgrade at 50k notes, 46,670 of them, three workers
    beside the daemon's saves for the ten minutes until a reconcile cancelled them). Now the
    first job cancels them in its own transaction."""
    from tests.fakes import free_port
    from vaultmind.memory import Memory
    from vaultmind.queue.workers import WorkerPool

    from .test_admission import CHAT, MESSAGES, chat_note
    from .test_queue import llm_config

    chat_note(vault, CHAT, MESSAGES)
    chat_note(vault, CHAT.replace("2024-03-04", "2024-03-05"), [(who, text.replace("deer", "geese"), "") for who, text, _ in MESSAGES])
    with Memory.open(llm_config(vault, f"http://127.0.0.1:{free_port()}")) as memory:
        memory.sync()
        assert memory.index.query("SELECT status, count(*) FROM jobs GROUP BY ALL") == [("ready", 2)]
        with WorkerPool(memory.config, memory) as pool:
            assert pool.drain(timeout_s=20) == 1
        jobs = memory.index.query("SELECT status, last_error FROM jobs ORDER BY status")
        assert [status for status, _ in jobs] == ["cancelled", "done"], jobs
        assert jobs[1][1].endswith("2 gray leaves decided by rules, 1 other job with them"), jobs
        assert memory.status()["admission"]["gray"] == 0
