"""Gray-band messages (their importance not yet decided) and the summary trees.

Before, with no Ollama and no daemon, `flush` sealed every tree past its gray messages, which
nothing on the command line ever decided: they were never summarized, `tree` counted none of
them as waiting, and a daemon run later folded them into a summary out of time order."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

import pytest

from vaultmind.admission.importance import UNREACHABLE, decide_by_rules, policy_of
from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.tree.engine import flush
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.view import tree_view

from .conftest import run_main, write
from .fakes.ollama_server import FakeOllama

NO_OLLAMA = (  # nothing listens on port 9
    '[embeddings]\nprovider = "none"\n\n[entities]\nner_model = "off"\n\n'
    '[ollama]\nhost = "http://127.0.0.1:9"\ntimeout_s = 2.0\n'
)
LAUNCH = "slack:fernhill/launch"
FAR = datetime(2100, 1, 1, tzinfo=UTC)


def _demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    vault = tmp_path / "demo"
    run_main(capsys, "init", "--demo", str(vault))
    write(vault, ".vaultmind/config.toml", NO_OLLAMA)
    return vault


def _unsummarized_admitted(memory: Memory) -> list[str]:
    """Admitted leaves of the source trees that no level-1 summary holds."""
    rows = memory.index.query(
        """SELECT DISTINCT a.leaf_id FROM admission a JOIN notes n ON n.path = a.note_path
           WHERE a.decision = 'admitted' AND n.kind = 'source'
             AND a.leaf_id NOT IN (SELECT unnest(children) FROM summaries WHERE level = 1)
           ORDER BY 1"""
    )
    return [str(r[0]) for r in rows]


def test_flush_without_ollama_decides_the_gray_messages_by_rules_and_summarizes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = _demo(tmp_path, capsys)
    code, report, err = run_main(capsys, "flush", "--vault", str(vault), "--json")
    assert code == 0, err
    assert report["gray_decided_by_rules"] > 0, report
    _, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert status["admission"]["gray"] == 0 and status["admission"]["by_rules"] > 0, status["admission"]
    with Memory.open(load_config(vault)) as memory:
        assert _unsummarized_admitted(memory) == [], "every source message kept is in a summary"
        reasons = memory.index.query("SELECT DISTINCT reason FROM admission WHERE stage = 'fallback'")
    assert reasons and all(str(r[0]).startswith(f"{UNREACHABLE} at http://127.0.0.1:9") for r in reasons)
    code, out, _ = run_main(capsys, "flush", "--vault", str(vault))
    assert "decided by rules" not in out, "nothing is left to decide"


def test_sync_without_ollama_decides_the_gray_messages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = _demo(tmp_path, capsys)
    code, stats, err = run_main(capsys, "sync", "--vault", str(vault), "--json")
    assert code == 0, err
    assert stats["gray_decided_by_rules"] > 0
    _, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert status["admission"]["gray"] == 0


def test_a_flush_seals_no_leaf_after_a_gray_one_and_tree_counts_them_waiting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The daemon's case (or an Ollama slow to answer): a flush while messages are gray."""
    vault = _demo(tmp_path, capsys)
    with Memory.open(load_config(vault)) as memory:
        memory.sync()  # gray rows stay: nothing here decides them
        gray = memory.index.query(
            """SELECT l.ts FROM admission a JOIN leaves l ON l.id = a.leaf_id AND l.note_path = a.note_path
               JOIN notes n ON n.path = l.note_path WHERE a.decision = 'gray' AND n.source_id = ?""",
            [LAUNCH],
        )
        assert gray, "the demo's #launch has gray messages"
        first_gray = min(r[0] for r in gray)
        listed = {t["tree"]: t for t in tree_view(memory)["trees"]}
        assert listed[LAUNCH]["gray_leaves"] == len(gray)
        assert tree_view(memory, LAUNCH)["buffers"][0]["gray"] == len(gray)

        flush(memory, now=FAR, older_than_hours=0, summarizer=FallbackSummarizer())
        sealed = memory.index.query(
            "SELECT time_end FROM summaries WHERE tree = ? AND level = 1", [LAUNCH]
        )
        assert all(end < first_gray for (end,) in sealed), "no summary reaches past a gray message"

        with memory.index.transaction() as con:  # the rules decide them, as the daemon's workers do
            decide_by_rules(con, policy_of(memory.config), f"{UNREACHABLE}: admission by rules")
        flush(memory, now=FAR, older_than_hours=0, summarizer=FallbackSummarizer())
        spans = memory.index.query(
            "SELECT time_start, time_end FROM summaries WHERE tree = ? AND level = 1 ORDER BY time_start", [LAUNCH]
        )
        assert all(a[1] <= b[0] for a, b in pairwise(spans)), (
            f"the summaries of #launch follow one another in time: {spans}"
        )
        assert _unsummarized_admitted(memory) == []


def test_with_an_ollama_that_has_the_model_flush_leaves_gray_messages_to_it_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its answer is the better decision: the command line does not take the rules' instead,
    and says why a tree stops short of its last messages."""
    vault = _demo(tmp_path, capsys)
    with FakeOllama(chat_models=("llama3.2",)) as fake:
        write(vault, ".vaultmind/config.toml", NO_OLLAMA.replace("http://127.0.0.1:9", fake.host))
        code, report, err = run_main(capsys, "flush", "--vault", str(vault), "--json")
        assert code == 0, err
        assert "gray_decided_by_rules" not in report and report["gray_waiting"]["leaves"] > 0, report
        assert "queue --run" in report["gray_waiting"]["hint"]
        code, out, _ = run_main(capsys, "flush", "--vault", str(vault))
    assert "wait for the LLM's importance decision" in out


def test_ctrl_c_while_ollama_is_asked_stops_the_sync_and_decides_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C that a library takes for an error of its own while Ollama is asked for its models
    (seen: pydantic building the client's models on `import ollama` raised it as an ordinary
    error): the sync stops, exit 130, and no gray message is decided "LLM not reachable" for a
    keypress. The command went on, decided them by the rules and said it was done (exit 0)."""
    import signal
    from contextlib import suppress

    import vaultmind.llm.ollama_chat as ollama_chat
    from vaultmind.cli.gray import llm_answers

    vault = _demo(tmp_path, capsys)

    def ctrl_c_taken_by_a_library(host: str, timeout: float) -> list[str]:
        with suppress(KeyboardInterrupt):  # taken by the library…
            signal.raise_signal(signal.SIGINT)  # Ctrl-C, as the terminal sends it
        raise RuntimeError("the client's models could not be built")  # …which then fails

    monkeypatch.setattr(ollama_chat, "pulled_models", ctrl_c_taken_by_a_library)
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (not a background job)
    try:
        code, _, err = run_main(capsys, "sync", "--vault", str(vault))
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert code == 130 and "vaultmind: interrupted" in err, err
    monkeypatch.undo()
    _, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert status["admission"]["gray"] > 0 and status["admission"]["by_rules"] == 0, status["admission"]

    def failing_from_ctrl_c(host: str, timeout: float) -> list[str]:  # no handler of ours saw it
        raise RuntimeError("the client's models could not be built") from KeyboardInterrupt()

    monkeypatch.setattr(ollama_chat, "pulled_models", failing_from_ctrl_c)
    with pytest.raises(RuntimeError):
        llm_answers("http://127.0.0.1:9", "llama3.2")
