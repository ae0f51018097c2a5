"""After Ollama did not answer: status counts the summaries the fallback wrote and says how to
have the model write them; a server that broke off its answer is not blamed on the host setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.ollama_server import FakeOllama, free_port
from vaultmind.llm.ollama_chat import LlmTransient, OllamaChat

from .conftest import run_main, write
from .treekit import chat_day, tokens_of


def _config(summarizer: str, host: str) -> str:
    return (
        f'[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n[admission]\nllm = false\n'
        f'[ollama]\nhost = "{host}"\n[trees]\nl0_tokens = {tokens_of(0, 3)}\nfanout = 3\n'
        f'summarizer = "{summarizer}"\nsummarizer_timeout_s = 2\n'
    )


def test_status_counts_the_summaries_the_fallback_wrote_while_ollama_did_not_answer(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, ".vaultmind/config.toml", _config("ollama", f"http://127.0.0.1:{free_port()}"))
    chat_day(vault, 0, 0, 6)
    _, report, _ = run_main(capsys, "flush", "--vault", str(vault), "--all", "--json")
    assert [s["summarizer"] for s in report["sealed"]] == ["fallback", "fallback"]
    _, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert status["trees"]["extractive"] == 2
    assert sum(v for k, v in status["notes"].items() if k != "total") == status["notes"]["total"], (
        "notes by kind add up to the total: the extractive summaries are counted once, under trees"
    )
    notice = status["trees"]["notice"]
    assert notice.startswith("2 summaries written by the extractive fallback") and "delete them" in notice
    _, shown, _ = run_main(capsys, "status", "--vault", str(vault))
    assert notice in " ".join(shown.split())
    write(vault, ".vaultmind/config.toml", _config("fallback", f"http://127.0.0.1:{free_port()}"))
    _, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert status["trees"] == {"summarizer": "fallback", "extractive": 2, "notice": None}, (
        "chosen: nothing to say"
    )


def test_an_answer_broken_off_points_at_the_servers_log_not_the_host_setting() -> None:
    with FakeOllama(failure="disconnect") as fake:
        chat = OllamaChat("llama3.2", host=fake.host, timeout_s=5)
        try:
            with pytest.raises(LlmTransient) as caught:
                chat.chat([{"role": "user", "content": "hello"}])
        finally:
            chat.close()
    assert "broke off its answer" in (caught.value.hint or "") and "its log" in (caught.value.hint or "")
