"""A new user without Ollama: the gray-band messages wait for it, and `vaultmind queue` says
how to decide them without it — advice that works when followed."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from .conftest import run_main, write

NO_OLLAMA = '[embeddings]\nprovider = "none"\n\n[ollama]\nhost = "http://127.0.0.1:9"\ntimeout_s = 2.0\n'


def test_queue_says_how_to_decide_gray_messages_without_ollama_and_that_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "demo"
    run_main(capsys, "init", "--demo", str(vault))
    write(vault, ".vaultmind/config.toml", NO_OLLAMA)  # nothing listens on port 9
    run_main(capsys, "reindex", "--vault", str(vault))
    code, _, err = run_main(capsys, "queue", "--run", "--timeout", "20", "--vault", str(vault))
    assert code == 0, err
    code, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    gray = status["admission"]["gray"]
    assert gray > 0 and status["queue"]["deferred"] > 0, status["queue"]
    code, out, _ = run_main(capsys, "queue", "--vault", str(vault))
    said = "Ollama is not reachable; the work waits (start `ollama serve`; without it, set [admission] llm = false and run `"
    assert said in out
    named = shlex.split(out.split(said, 1)[1].split("`", 1)[0])  # the command, for this vault
    assert named == ["vaultmind", "sync", "--vault", str(vault)]
    write(vault, ".vaultmind/config.toml", NO_OLLAMA + "\n[admission]\nllm = false\n")
    assert run_main(capsys, *named[1:])[0] == 0
    code, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    admission = status["admission"]
    assert admission["gray"] == 0 and admission["by_stage"].get("fallback", 0) >= gray, admission
