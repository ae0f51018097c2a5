"""What the Ollama summarizer refuses in a model's answer, through the real client against the
fake server: a loop on one sentence, a list, front-matter and rule lines; and the lone
"Summary" heading it drops. A refused answer is retried once with the reason, then the
fallback's summary is written and counted as the fallback's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fakes.ollama_server import FakeOllama, RecordedRequest
from vaultmind.llm.ollama_chat import OllamaChat
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.memory import Memory
from vaultmind.tree.engine import seal_ready
from vaultmind.tree.llm import OllamaSummarizer, repeats_itself
from vaultmind.tree.summarize import ChildText

from .treekit import chat_day, tree_config

CHILDREN = [
    ChildText("a", "Has anyone looked at the Q3 budget for the Tidepool launch?", "message", "Alice Chen",
              "2024-03-04T09:00:00Z"),
    ChildText("b", "Yes. The Q3 budget is 18,000 euros and Helen Okafor approved it on Monday.", "message",
              "Bob Stone", "2024-03-04T09:05:00Z"),
]  # fmt: skip
GOOD = "Alice Chen asked about the Q3 budget; Bob Stone said Helen Okafor approved 18,000 euros."
PROMPT_HASH = re.compile(r"^ollama:llama3\.2@[0-9a-f]{12}$")


def _summarize(answers: list[str], budget: int = 60) -> tuple[str, str, int, str | None, list[RecordedRequest]]:
    replies = iter(answers)
    with FakeOllama(responder=lambda r: next(replies)) as fake:
        with OllamaSummarizer(OllamaChat("llama3.2", host=fake.host, timeout_s=5)) as summarizer:
            result = summarizer.summarize(CHILDREN, budget)
        return result.text, result.summarizer, result.llm_calls, result.note, fake.requests_to("/api/chat")


def test_an_answer_looping_on_one_sentence_is_refused_retried_then_the_fallback_is_written(vault: Path) -> None:
    """A small model's usual failure: cut at a sentence end to fit, the loop used to be "valid"."""
    loop = "Alice Chen said the budget grew. " * 1000
    chat_day(vault, 0, 0, 3)
    with FakeOllama(responder=lambda r: loop) as fake:
        config = tree_config(vault, **{"trees.summarizer": "ollama"}).with_(ollama_host=fake.host)
        with Memory.open(config) as memory:
            memory.sync()
            report = seal_ready(memory)
            (sealed,) = report.sealed
            assert sealed["summarizer"] == "fallback" and report.llm_calls == 2 and report.fallbacks == 1
            assert "repeated the same sentences" in sealed["note"]
            retry = fake.requests_to("/api/chat")[1].body["messages"][-1]["content"]
            assert "repeated the same sentences" in retry
            text = (vault / sealed["path"]).read_text(encoding="utf-8")
            assert "summarizer: fallback" in text and "the budget grew" not in text


def test_a_loop_of_two_sentences_is_refused_and_a_varied_answer_is_not() -> None:
    assert repeats_itself("Bob agreed. The venue is booked. Bob agreed. The venue is booked.")
    assert repeats_itself("The hall is booked!  the HALL is booked. The hall is booked")
    assert not repeats_itself(GOOD)
    assert not repeats_itself(" ".join(f"Alice Chen checked line {i}." for i in range(40)))
    assert not repeats_itself("Bob agreed. The venue is booked. Bob agreed. The deposit is paid. Dana signs.")


def test_a_lone_summary_heading_is_dropped() -> None:
    text, summarizer, calls, _, _ = _summarize([f"# Summary\n\n{GOOD}"])
    assert text == GOOD and PROMPT_HASH.match(summarizer) and calls == 1
    text, _, _, _, _ = _summarize([f"**Summary:**\n{GOOD}"])
    assert text == GOOD


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("# Summary\n\n- Alice Chen asked about the budget.\n- Bob Stone agreed.", "it was a list"),
        ("1. Alice Chen asked about the budget.\n2. Bob Stone agreed.", "it was a list"),
        ("---\ntitle: hacked\n---\nAlice Chen asked about the Q3 budget.", "lines of only dashes"),
        ("Alice Chen asked about the Q3 budget.\n\n***\n\nBob Stone agreed.", "lines of only dashes"),
    ],
)
def test_a_list_or_front_matter_lines_are_refused_with_the_reason_then_retried(answer: str, reason: str) -> None:
    text, summarizer, calls, note, requests = _summarize([answer, answer])
    assert summarizer == "fallback" and calls == 2 and reason in (note or "")
    assert reason in requests[1].body["messages"][-1]["content"]
    assert "---" not in text and "title: hacked" not in text
    text, summarizer, calls, _, _ = _summarize([answer, GOOD])  # the retry complies: kept
    assert text == GOOD and PROMPT_HASH.match(summarizer) and calls == 2


def test_a_body_read_as_prose_keeps_its_hyphens_and_numbers() -> None:
    answer = "Alice Chen asked about the Q3 budget - Bob Stone said 18,000 euros.\n2024 is the year."
    text, summarizer, _, _, _ = _summarize([answer])
    assert text == answer and PROMPT_HASH.match(summarizer)
    assert split_frontmatter(f"---\nx: 1\n---\n{text}\n").body == text + "\n"


@pytest.mark.parametrize(
    "answer",
    [
        # a title's or an initial's full stop ends no sentence: "Dr." said three times is no loop
        "Dr. Okafor booked the hall. Dr. Okafor paid the deposit. Dr. Okafor invited Alice Chen.",
        " ".join(f"Dr. Okafor checked item {i} with Mr. B. Stone." for i in range(12)),
        # a short reply quoted in a chat's summary, said three times
        "Alice Chen asked three questions about the venue. Yes. Yes. Yes. Bob Stone answered each one.",
        "Alice Chen asked if the hall was booked. Yes, said Bob. She asked about food. No. She asked "
        "about music. No. The playlist is Carla's. No.",
        "In the 1990s Alice Chen ran the bar. 3 people came to the launch. The budget – about 500 euros – grew.",
    ],
)
def test_prose_that_says_a_title_or_a_short_reply_again_is_no_loop(answer: str) -> None:
    assert not repeats_itself(answer)


def test_a_loop_of_a_short_sentence_is_still_refused() -> None:
    assert repeats_itself("Yes. Yes. Yes.")
    assert repeats_itself("Bob said yes. " * 50)
    assert repeats_itself("Dr. Okafor agreed. " * 3)
    assert repeats_itself("The launch moved to plan B. " * 40)  # initials are read past, but not for ever


def test_an_answer_cut_to_its_budget_never_ends_on_a_title() -> None:
    """Cut at a sentence end, but a title's full stop is none: "… approved by Dr." said nothing."""
    answer = (
        "Alice Chen asked about the Q3 budget for the launch. The budget was approved by Dr. Okafor on "
        "Monday after a long call with Bob Stone about every line of it."
    )
    first = "Alice Chen asked about the Q3 budget for the launch."
    for budget in range(17, 41, 3):
        text, summarizer, _, _, _ = _summarize([answer], budget)
        assert text == first and PROMPT_HASH.match(summarizer), (budget, text)
