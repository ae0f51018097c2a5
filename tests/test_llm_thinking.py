"""A reasoning model's thinking never becomes a summary nor the judge's answer."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.ollama_server import FakeOllama
from vaultmind.admission.importance import ask
from vaultmind.llm.ollama_chat import OllamaChat, strip_thinking
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.memory import Memory
from vaultmind.queue.kinds import JobContext
from vaultmind.tree.engine import seal_ready

from .treekit import chat_day, tree_config

ANSWER = "Alice Chen checked the venue deposit with Helen Okafor."
THINKING = "<think>\nThe notes say Alice Chen checked the venue deposit. Keep it short.\n</think>\n\n"


def test_thinking_is_stripped_however_the_model_leaves_it() -> None:
    assert strip_thinking(THINKING + ANSWER) == ANSWER
    assert strip_thinking("<think>a</think><Thinking>b</Thinking>\n" + ANSWER) == ANSWER
    assert strip_thinking("<think>\nThe notes say Alice Chen checked the") == ""  # cut off while thinking
    assert strip_thinking("its template opened the block.\n</think>\n" + ANSWER) == ANSWER
    assert strip_thinking(ANSWER) == ANSWER
    assert strip_thinking("We said <think> twice.") == "We said <think> twice."
    assert strip_thinking("Reasoning the template opened.</think>\n\n" + ANSWER) == ANSWER


def test_an_answer_that_mentions_a_closing_tag_in_its_text_is_kept_whole() -> None:
    """Only a closing tag that ends its line ends a block the template opened: one named in a
    sentence, or in a string of the judge's JSON, is text (the answer was cut to what followed)."""
    told = "Bob said the closing tag </think> ends a reasoning block in the model's output."
    assert strip_thinking(told) == told
    judged = '{"importance": 0.8, "reason": "a fix for the </think> tag in the parser"}'
    assert strip_thinking(judged) == judged
    assert strip_thinking(THINKING + told) == told


def _seal_with(vault: Path, fake: FakeOllama) -> tuple[str, str]:
    """(the summarizer, the body) of the one summary sealed over a day of three messages."""
    chat_day(vault, 0, 0, 3)
    config = tree_config(vault, **{"trees.summarizer": "ollama"}).with_(ollama_host=fake.host)
    with Memory.open(config) as memory:
        memory.sync()
        (sealed,) = seal_ready(memory).sealed
        body = split_frontmatter((vault / sealed["path"]).read_text(encoding="utf-8")).body
        return str(sealed["summarizer"]), body


def test_a_reasoning_models_summary_holds_its_answer_not_its_thinking(vault: Path) -> None:
    with FakeOllama(responder=lambda r: THINKING + ANSWER) as fake:
        summarizer, body = _seal_with(vault, fake)
        assert body == ANSWER + "\n" and summarizer.startswith("ollama:")
        assert all(r.body["think"] is False for r in fake.requests_to("/api/chat"))


def test_an_answer_cut_off_while_thinking_is_refused_never_written(vault: Path) -> None:
    with FakeOllama(responder=lambda r: "<think>\nThe notes say Alice Chen checked the") as fake:
        summarizer, body = _seal_with(vault, fake)
        assert summarizer == "fallback" and "<think>" not in body and "The notes say" not in body
        assert len(fake.requests_to("/api/chat")) == 2  # refused as empty, retried once


def test_a_server_that_refuses_think_is_asked_again_without_it_then_never_with_it() -> None:
    with FakeOllama(responder=lambda r: ANSWER, refuse_think=True) as fake:
        chat = OllamaChat("llama3.2", host=fake.host, timeout_s=5)
        try:
            assert chat.chat([{"role": "user", "content": "a"}]) == ANSWER
            assert chat.chat([{"role": "user", "content": "b"}]) == ANSWER
        finally:
            chat.close()
        sent = [("think" in r.body) for r in fake.requests_to("/api/chat")]
        assert sent == [True, False, False]


def test_the_judges_json_is_read_after_its_thinking_not_from_inside_it(vault: Path) -> None:
    answer = '<think>Output like {"importance": 0.1, "reason": "x"}; this one matters</think>{"importance": 0.9, "reason": "a decision"}'
    with FakeOllama(responder=lambda r: answer) as fake:
        config = tree_config(vault).with_(ollama_host=fake.host)
        with Memory.open(config) as memory:
            ctx = JobContext(memory.index, config, lambda: 0)
            try:
                assert ask(ctx, "We cancel the Harbor Hall contract.") == {
                    "importance": 0.9,
                    "reason": "a decision",
                }
            finally:
                ctx.close()
