"""Summarizers: the budget, the extractive fallback, Ollama through the real client against a
fake server (answers, invented names, garbage, timeouts, absence), the registry."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.ollama_server import FakeOllama, RecordedRequest, free_port
from vaultmind.config import load_config
from vaultmind.errors import ConfigError
from vaultmind.llm.ollama_chat import LlmError, OllamaChat
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.markdown.tokens import count_tokens
from vaultmind.memory import Memory
from vaultmind.tree import summarizers
from vaultmind.tree.engine import seal_ready
from vaultmind.tree.fallback import FallbackSummarizer, extractive_summary
from vaultmind.tree.llm import OllamaSummarizer
from vaultmind.tree.names import unknown_names
from vaultmind.tree.summarize import ChildText, SummaryText, output_budget
from vaultmind.tree.summarizers import create_summarizer, register_summarizer
from vaultmind.tree.view import maintain

from .treekit import chat_day, summary_rows, tree_config

CHILDREN = [
    ChildText("a", "Has anyone looked at the Q3 budget for the Tidepool launch?", "message", "Alice Chen", "2024-03-04T09:00:00Z"),
    ChildText("b", "Yes. The Q3 budget is 18,000 euros and Helen Okafor approved it on Monday.", "message",
              "Bob Stone <bob@example.com>", "2024-03-04T09:05:00Z"),
    ChildText("c", "ok thanks", "message", "Alice Chen", "2024-03-04T09:06:00Z"),
    ChildText("d", "The Tidepool launch moves to 23 April because the venue at Harbor Hall is booked. "
              "The Q3 budget does not change.", "message", "Priya Raman", "2024-03-05T10:00:00Z"),
]  # fmt: skip
GOOD = "Alice Chen asked about the Q3 budget; Bob Stone said Helen Okafor approved 18,000 euros."
INVENTED = "Dana Whitfield approved the Q3 budget for the Tidepool launch."
PROMPT_HASH = re.compile(r"^ollama:llama3\.2@[0-9a-f]{12}$")


def _chat(fake: FakeOllama, timeout_s: float = 5.0) -> OllamaSummarizer:
    return OllamaSummarizer(OllamaChat("llama3.2", host=fake.host, timeout_s=timeout_s))


def test_the_output_budget_scales_with_the_input_and_never_exceeds_it() -> None:
    assert [output_budget(n) for n in (0, 10, 39, 100, 1000, 5000)] == [0, 10, 39, 40, 300, 400]


def test_the_fallback_writes_attributed_prose_within_budget() -> None:
    chatter = [
        ChildText(
            "c",
            "My cat knocked a plant off the window sill this morning, what a mess.",
            "message",
            "Priya Raman",
        ),
        ChildText(
            "d",
            "Weather in Lisbon was sunny and warm all weekend for the family trip.",
            "message",
            "Priya Raman",
        ),
    ]
    children = [CHILDREN[0], CHILDREN[1].__class__("b", "Yes, the Q3 budget for the Tidepool launch is 18,000 euros.",
                "message", "Bob Stone <bob@example.com>", "2024-03-04T09:05:00Z"), CHILDREN[2], *chatter]  # fmt: skip
    text = extractive_summary(children, 60)
    assert text == extractive_summary(children, 60)  # deterministic
    assert text == (
        "Alice Chen asked: Has anyone looked at the Q3 budget for the Tidepool launch? "
        "Bob Stone replied: Yes, the Q3 budget for the Tidepool launch is 18,000 euros."
    )  # the question and its answer; neither the chit-chat nor the cat
    across_days = extractive_summary(CHILDREN, sum(c.tokens for c in CHILDREN))
    assert across_days.startswith("2024-03-04: ") and "\n\n2024-03-05: Priya Raman said: " in across_days
    assert count_tokens(across_days) <= sum(c.tokens for c in CHILDREN) and "ok thanks" not in across_days


def test_the_fallback_picks_salient_sentences_not_a_concatenation() -> None:
    filler = [
        ChildText(f"f{i}", f"Lunch was fine today, {n}.", "message", "Bob Stone")
        for i, n in enumerate(("one", "two", "three", "four", "five", "six"))
    ]
    topic = [
        ChildText(
            f"t{i}",
            f"The Harbor Hall venue deposit for the Tidepool launch is due on {d}.",
            "message",
            "Alice Chen",
        )
        for i, d in enumerate(("Friday", "Monday", "Tuesday"))
    ]
    children = [*filler[:3], *topic, *filler[3:]]
    budget = 28  # room for a sentence or two of the 120 tokens
    text = FallbackSummarizer().summarize(children, budget).text
    assert "Harbor Hall venue deposit" in text and "Lunch" not in text
    assert count_tokens(text) <= budget < sum(c.tokens for c in children)


def test_the_fallback_never_says_the_same_sentence_twice() -> None:
    said = "Harbor Hall is booked for 80 guests on Friday."
    children = [
        ChildText("a", said, "message", "Bob Stone", "2024-03-04T10:00:00Z"),
        ChildText("b", "Extra words number 412 about the plan.", "message", "Bob Stone", "2024-03-04T10:01:00Z"),
        ChildText("c", "harbor hall is  booked for 80 guests on Friday", "message", "Bob Stone", "2024-03-04T10:02:00Z"),
        ChildText("d", said, "message", "Alice Chen", "2024-03-04T10:03:00Z"),
    ]
    text = extractive_summary(children, sum(c.tokens for c in children))
    assert text.lower().count("harbor hall is booked") == 1


def test_the_fallback_picks_the_same_sentences_whatever_the_hash_seed() -> None:
    """Sentences of equal worth are told apart by their place, never by the order a set of
    terms happens to iterate in (which each Python process seeds anew): the summary note, and
    the ids of its chunks, are the same on every run."""
    script = (
        "from vaultmind.tree.fallback import FallbackSummarizer\n"
        "from vaultmind.tree.summarize import ChildText\n"
        "children = [ChildText(f'c{i}', f'{who} reports progress on the lighthouse restoration, step {i}.', "
        "'message', who) for i, who in enumerate(['Alice Chen', 'Bob Stone'] * 6)]\n"
        "print(FallbackSummarizer().summarize(children[:2], 24).text)\n"
        "print(FallbackSummarizer().summarize(children, 60).text)\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in range(8)
    }  # fmt: skip
    assert len(outputs) == 1, outputs
    assert "step 0" in next(iter(outputs)), "of equal sentences, the first"


def test_the_fallback_handles_sections_summaries_and_tiny_inputs() -> None:
    section = ChildText("s", "## Plan\n\n- Book the venue at Harbor Hall.\n- Send the press kit.\n\n```\ncode\n```\n",
                        "section", None, None, "Tidepool › Plan")  # fmt: skip
    text = extractive_summary([section], 40)
    assert text.startswith("Tidepool › Plan: Book the venue at Harbor Hall.") and "code" not in text
    tiny = ChildText("t", "Deposit paid", "message", "Alice Chen")
    small = extractive_summary([tiny], output_budget(tiny.tokens))
    assert small == "Alice Chen said: Deposit paid"  # its text never longer than the child; who said it on top
    assert extractive_summary([ChildText("e", "", "message", "Bob")], 40) == ""
    summaries = [ChildText("x", "Alice booked Harbor Hall. The deposit is paid.", "summary"),
                 ChildText("y", "Bob sent the press kit to Helen Okafor.", "summary")]  # fmt: skip
    assert "Harbor Hall" in extractive_summary(summaries, 40)


def test_unknown_names_finds_invented_people_only() -> None:
    assert unknown_names(INVENTED, CHILDREN) == ["Dana Whitfield"]
    assert unknown_names(GOOD, CHILDREN) == []
    assert (
        unknown_names("Revenue grew. On Monday the Tidepool budget was approved by Helen Okafor.", CHILDREN)
        == []
    )
    assert unknown_names("Costs rose. Then Marcus Lee left.", CHILDREN) == ["Marcus Lee"]


def test_a_possessive_is_its_names_and_a_lone_opener_that_acts_is_someone() -> None:
    """DESIGN: a summary introduces no entity its children do not mention."""
    assert unknown_names("Bob Stone paid Alice Chen's deposit for the Harbor Hall's venue.", CHILDREN) == []
    assert unknown_names("Marcus will call Harbor Hall tomorrow. Helen Okafor said yes.", CHILDREN) == ["Marcus"]
    assert unknown_names("Marcus said the Q3 budget holds.", CHILDREN) == ["Marcus"]
    assert unknown_names("Revenue grew. Costs rose. Later Bob Stone left.", CHILDREN) == []
    assert unknown_names("Priya will move the Tidepool launch.", CHILDREN) == []  # her first name is known


def test_ollama_summarizes_through_the_chat_api() -> None:
    with FakeOllama(responder=lambda r: GOOD) as fake:
        with _chat(fake) as summarizer:
            result = summarizer.summarize(CHILDREN, 60)
        assert result == SummaryText(GOOD, result.summarizer, llm_calls=1)
        assert PROMPT_HASH.match(result.summarizer)
        (request,) = fake.requests_to("/api/chat")
        body = request.body
        assert body["stream"] is False and body["options"]["temperature"] == 0
        assert body["options"]["num_predict"] >= 60 and body["options"]["num_ctx"] >= 2048
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        assert "at most 37 words" in system and "Never add a name" in system  # 60 tokens at 1.6 a word
        assert "[2] Bob Stone <bob@example.com> · 2024-03-04 09:05" in user


def test_an_invented_person_is_retried_once_then_the_fallback_is_used() -> None:
    with FakeOllama(responder=lambda r: INVENTED) as fake:
        with _chat(fake) as summarizer:
            result = summarizer.summarize(CHILDREN, 60)
        assert result.summarizer == "fallback" and result.llm_calls == 2
        assert result.note is not None and "Dana Whitfield" in result.note
        retry = fake.requests_to("/api/chat")[1].body["messages"]
        assert retry[2] == {"role": "assistant", "content": INVENTED}
        assert "Dana Whitfield" in retry[3]["content"] and "Alice Chen" in retry[3]["content"]
        assert unknown_names(result.text, CHILDREN) == []


def test_a_retry_that_complies_is_kept() -> None:
    answers = iter([INVENTED, GOOD])
    with FakeOllama(responder=lambda r: next(answers)) as fake:
        with _chat(fake) as summarizer:
            result = summarizer.summarize(CHILDREN, 60)
        assert result.text == GOOD and result.llm_calls == 2 and PROMPT_HASH.match(result.summarizer)


def _long(request: RecordedRequest) -> str:
    return " ".join(f"Alice Chen checked the Q3 budget line {i} twice." for i in range(40))


def test_an_answer_over_budget_is_cut_at_a_sentence_end() -> None:
    with FakeOllama(responder=_long) as fake:
        with _chat(fake) as summarizer:
            result = summarizer.summarize(CHILDREN, 60)
        assert PROMPT_HASH.match(result.summarizer) and result.text.endswith(".")
        assert 0 < count_tokens(result.text) <= 60


@pytest.mark.parametrize("failure", ["garbage", "500", "disconnect"])
def test_garbage_or_errors_give_the_fallback(failure: str) -> None:
    with FakeOllama(failure=failure) as fake:
        with _chat(fake) as summarizer:
            result = summarizer.summarize(CHILDREN, 60)
        assert result.summarizer == "fallback" and result.text == extractive_summary(CHILDREN, 60)


def test_prose_is_required() -> None:
    for answer in ('{"summary": "x"}', "I cannot help with that request, sorry.", "  "):
        with FakeOllama(responder=lambda r, a=answer: a) as fake, _chat(fake) as summarizer:
            assert summarizer.summarize(CHILDREN, 60).summarizer == "fallback"


def test_a_slow_or_absent_ollama_gives_the_fallback() -> None:
    with FakeOllama(failure="hang") as fake:
        with _chat(fake, timeout_s=0.3) as summarizer:
            result = summarizer.summarize(CHILDREN, 60)
        assert (
            result.summarizer == "fallback"
            and result.llm_calls == 1
            and "did not answer" in (result.note or "")
        )
    with OllamaSummarizer(
        OllamaChat("llama3.2", host=f"http://127.0.0.1:{free_port()}", timeout_s=2)
    ) as absent:
        result = absent.summarize(CHILDREN, 60)
    assert result.summarizer == "fallback" and "cannot connect" in (result.note or "")


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The summarizers a test registers are gone after it: the registry is the process's."""
    monkeypatch.setattr(summarizers, "_REGISTRY", dict(summarizers._REGISTRY))


@pytest.mark.usefixtures("registry")
def test_the_registry_resolves_names(tmp_path: Path) -> None:
    def config(**extra: Any) -> Any:
        return load_config(tmp_path, embed_provider="none", ollama_host=extra.pop("host", None), extra=extra)

    assert isinstance(create_summarizer(config(**{"trees.summarizer": "fallback"})), FallbackSummarizer)
    assert isinstance(create_summarizer(config(**{"trees.summarizer": "ollama"})), OllamaSummarizer)
    absent = f"http://127.0.0.1:{free_port()}"
    assert isinstance(create_summarizer(config(host=absent)), FallbackSummarizer)  # auto, nothing answers
    with FakeOllama() as fake:
        assert isinstance(create_summarizer(config(host=fake.host)), OllamaSummarizer)  # auto, model present
    with FakeOllama(chat_models=("mistral",)) as fake:
        assert isinstance(create_summarizer(config(host=fake.host)), FallbackSummarizer)  # model not pulled
    register_summarizer("test-fixed", lambda c: FallbackSummarizer())
    assert isinstance(create_summarizer(config(**{"trees.summarizer": "test-fixed"})), FallbackSummarizer)
    with pytest.raises(ConfigError, match="unknown summarizer"):
        create_summarizer(config(**{"trees.summarizer": "gpt-9"}))


def test_a_seal_with_ollama_records_the_model_and_prompt_hash(vault: Path) -> None:
    chat_day(vault, 0, 0, 3)

    def responder(request: RecordedRequest) -> str:
        if "Your summary was not usable" in str(request.body):
            return "Dana Whitfield signed it off."  # still invented: the seal falls back
        return GOOD if "Update 0000" in str(request.body) else INVENTED

    with FakeOllama(responder=responder) as fake:
        config = tree_config(vault, **{"trees.summarizer": "ollama"}).with_(ollama_host=fake.host)
        with Memory.open(config) as memory:
            memory.sync()
            report = seal_ready(memory)
            (sealed,) = report.sealed
            assert PROMPT_HASH.match(sealed["summarizer"]) and report.llm_calls == 1
            (row,) = summary_rows(memory)
            text = (vault / row["note_path"]).read_text(encoding="utf-8")
            assert split_frontmatter(text).body == GOOD + "\n"
            assert f'summarizer: "{sealed["summarizer"]}"' in text
            chat_day(vault, 1, 3, 3)
            memory.sync()
            report = seal_ready(memory)  # this time the model invents a person, twice
            (sealed,) = report.sealed
            assert sealed["summarizer"] == "fallback" and report.llm_calls == 2 and report.fallbacks == 1
            assert "Dana Whitfield" not in (vault / sealed["path"]).read_text(encoding="utf-8")


def test_a_model_answer_with_crlf_line_breaks_is_written_lf_only_and_stays_vaultminds(vault: Path) -> None:
    chat_day(vault, 0, 0, 3)
    answer = GOOD.replace("; ", ".\r\n") + "\r\n\r\nNo change.\r"
    with FakeOllama(responder=lambda r: answer) as fake:
        config = tree_config(vault, **{"trees.summarizer": "ollama"}).with_(ollama_host=fake.host)
        with Memory.open(config) as memory:
            memory.sync()
            (sealed,) = seal_ready(memory).sealed
            assert PROMPT_HASH.match(sealed["summarizer"])
            data = (vault / sealed["path"]).read_bytes()
            assert b"\r" not in data
            body = split_frontmatter(data.decode("utf-8")).body
            assert body == answer.replace("\r\n", "\n").replace("\r", "").strip() + "\n"
            (row,) = summary_rows(memory)
            assert not row["user_edited"] and not row["stale"]


def test_a_fallback_summary_deleted_once_ollama_is_back_is_sealed_again_by_the_model(vault: Path) -> None:
    """docs/trees.md: nothing re-summarizes a fallback summary by itself; deleting it does."""
    chat_day(vault, 0, 0, 9)  # three L1 summaries and an L2
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        sealed = seal_ready(memory, summarizer=FallbackSummarizer()).sealed
        assert [s["summarizer"] for s in sealed] == ["fallback"] * 4
    l1 = sealed[0]
    with FakeOllama(responder=lambda r: GOOD) as fake:
        config = tree_config(vault, **{"trees.summarizer": "ollama"}).with_(ollama_host=fake.host)
        with Memory.open(config) as memory:
            memory.sync()
            again = maintain(memory, now=datetime(2030, 1, 1, tzinfo=UTC))
            assert again.sealed == [] and not fake.requests_to("/api/chat")  # still the fallback's
            (vault / l1["path"]).unlink()
            memory.sync()
            report = maintain(memory, now=datetime(2030, 1, 1, tzinfo=UTC))
            by_level = {s["level"]: s for s in report.sealed}
            assert by_level[1]["path"] == l1["path"] and PROMPT_HASH.match(by_level[1]["summarizer"])
            assert [u["level"] for u in report.unsealed] == [2] and 2 in by_level  # the parent folds it again
            assert split_frontmatter((vault / l1["path"]).read_text(encoding="utf-8")).body == GOOD + "\n"


def test_a_link_inside_its_own_note_keeps_its_text_not_the_link() -> None:
    """`[[#Decisions]]` in a note's text would point at the summary, which has no such heading."""
    child = ChildText(
        "c1",
        "See [[#Decisions]] below and the key line [[#^k1]]. The [[#Plan#Next|next step]] is the heron option; "
        "the [[Vendors#Harbor Hall]] note has the venue.",
        kind="section",
        title="Plan",
    )
    text = extractive_summary([child], 200)
    assert "[[#" not in text and "Decisions" in text and "next step" in text and "key line." in text
    assert "[[Vendors#Harbor Hall]]" in text, "a link to another note stays"


def test_the_fallback_keeps_the_decision_and_the_date_of_a_short_chat(vault: Path) -> None:
    """A 4-message chat gets a budget of about 40 tokens: the summary had been one line of the
    most repeated words ("Jo Park said: Great, I'll book the hut then."), without the news."""
    from datetime import UTC, datetime, timedelta

    from vaultmind.markdown.render import Message, SourceMeta, render_source_note
    from vaultmind.tree.engine import flush

    from .conftest import write

    said = [
        ("Sam Lee", "Hi all! Heads up: the climbing trip is moved to Saturday 20 April, the forecast for the 13th is bad."),
        ("Jo Park", "Great, I'll book the hut then. I can drive, three seats free in the car."),
        ("Ana Ruiz", "Works for me, see you all there."),
        ("Jo Park", "Great, I'll book the hut for Saturday night and tell the warden we are six."),
    ]  # fmt: skip
    at = datetime(2024, 4, 2, 18, 0, tzinfo=UTC)
    messages = [Message(f"w{i}", who, at + timedelta(minutes=i), text) for i, (who, text) in enumerate(said)]
    meta = SourceMeta("chat", "whatsapp:climbing", "whatsapp/climbing", "Climbing · 2024-04-02")
    write(vault, "sources/chat/whatsapp/climbing/2024-04-02.md", render_source_note(meta, messages))
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        (sealed,) = flush(memory, now=at + timedelta(days=2), summarizer=FallbackSummarizer()).sealed
        body = split_frontmatter((vault / sealed["path"]).read_text(encoding="utf-8")).body.strip()
    budget = output_budget(sum(count_tokens(text) for _, text in said))
    assert "Sam Lee said: " in body and "the climbing trip is moved to Saturday 20 April" in body
    assert count_tokens(body) <= budget


def test_auto_without_a_chat_model_seals_with_the_fallback(vault: Path) -> None:
    """`[ollama] chat_model = ""` with the default `auto`: nothing to ask, so the seals use the
    fallback instead of failing the whole upkeep pass."""
    chat_day(vault, 0, 0, 3)
    config = tree_config(vault, **{"trees.summarizer": "auto"}).with_(ollama_chat_model="")
    assert isinstance(create_summarizer(config), FallbackSummarizer)
    with Memory.open(config) as memory:
        memory.sync()
        report = maintain(memory, now=datetime.now(UTC), flush_all=True)
        assert [s["summarizer"] for s in report.sealed] == ["fallback"]
        assert [row["summarizer"] for row in summary_rows(memory)] == ["fallback"]


def test_ollama_with_no_model_set_seals_with_the_fallback_and_says_why(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`[trees] summarizer = "ollama"` and no model anywhere: the trees do not wait for one
    (DESIGN: the LLM never blocks), and every seal's report names the setting to fill in."""
    chat_day(vault, 0, 0, 3)
    config = tree_config(vault, **{"trees.summarizer": "ollama"}).with_(ollama_chat_model="")
    with Memory.open(config) as memory:
        memory.sync()
        report = maintain(memory, now=datetime.now(UTC), flush_all=True)
        (sealed,) = report.sealed
        assert sealed["summarizer"] == "fallback" and report.fallbacks == 1
        assert "no Ollama chat model configured" in sealed["note"] and "[trees] summarizer_model" in sealed["note"]
        assert [row["summarizer"] for row in summary_rows(memory)] == ["fallback"]


def _hung_pass(vault: Path, fake: FakeOllama, **extra: Any) -> Any:
    """Four seals (three L1 and their L2) in one pass against `fake`."""
    chat_day(vault, 0, 0, 9)
    config = tree_config(vault, **{"trees.summarizer": "ollama", **extra}).with_(ollama_host=fake.host)
    with Memory.open(config) as memory:
        memory.sync()
        return maintain(memory, now=datetime.now(UTC))


def test_a_hung_ollama_costs_one_timeout_per_pass_not_one_per_seal(vault: Path) -> None:
    with FakeOllama(failure="hang") as fake:
        report = _hung_pass(vault, fake, **{"trees.summarizer_timeout_s": 0.5})
        assert len(fake.requests_to("/api/chat")) == 1 and report.llm_calls == 1
    assert [s["summarizer"] for s in report.sealed] == ["fallback"] * 4
    first, *rest = (s["note"] for s in report.sealed)
    assert "did not answer within 0.5 s" in first
    assert all(note.startswith("ollama failed earlier in this pass: ") for note in rest)


def test_a_model_ollama_lacks_is_asked_for_once_per_pass_and_the_hint_names_the_trees_settings(vault: Path) -> None:
    with FakeOllama(chat_models=("mistral",)) as fake:
        report = _hung_pass(vault, fake, **{"trees.summarizer_model": "nosuch"})
        assert len(fake.requests_to("/api/chat")) == 1
    assert [s["summarizer"] for s in report.sealed] == ["fallback"] * 4


def test_the_summarizers_errors_name_its_own_settings(vault: Path) -> None:
    """Not the judge's `[ollama]` ones, nor `vaultmind retry` (which re-runs queue jobs only)."""
    config = tree_config(vault, **{"trees.summarizer": "ollama", "trees.summarizer_model": "nosuch"})
    with (
        FakeOllama(chat_models=("mistral",)) as fake,
        OllamaSummarizer.from_config(config.with_(ollama_host=fake.host)) as summarizer,
        pytest.raises(LlmError) as missing,
    ):
        summarizer._chat.chat([{"role": "user", "content": "hi"}])
    assert "[trees] summarizer_model" in str(missing.value.hint) and "vaultmind flush" in str(missing.value.hint)
    assert "retry" not in str(missing.value.hint)
    with FakeOllama(failure="hang") as fake:
        config = config.with_(ollama_host=fake.host, extra={**config.extra, "trees.summarizer_timeout_s": 0.3})
        with OllamaSummarizer.from_config(config) as summarizer, pytest.raises(LlmError) as slow:
            summarizer._chat.chat([{"role": "user", "content": "hi"}])
    assert "raise [trees] summarizer_timeout_s" in str(slow.value.hint)


def test_a_summary_of_notes_holding_only_embeds_is_not_empty() -> None:
    """Daily notes whose text is only a heading over an embedded view (`## Notes` over
    `![[Daily.base]]`) hold no sentence: their summary says so and names them, never an empty
    note in the vault."""
    children = [
        ChildText(f"l{day}", "## Notes\n\n![[Daily.base]]", kind="section", title=f"2023-09-{day} › Notes")
        for day in (12, 30)
    ]
    text = extractive_summary(children, 200)
    assert text == "Only embeds or headings, no text: 2023-09-12, 2023-09-30."


def test_a_summary_naming_notes_that_hold_only_embeds_keeps_to_its_budget() -> None:
    """The notes named by such a summary may have long titles: it is cut to the budget, as
    every summary is."""
    title = "Weekly planning for the renovation of the community garden and the new greenhouse"
    children = [
        ChildText(f"l{n}", "## Notes\n\n![[Daily.base]]", kind="section", title=f"{title} {n} › Notes") for n in range(5)
    ]
    text = extractive_summary(children, 40)
    assert text.startswith("Only embeds or headings, no text: Weekly planning")
    assert count_tokens(text) <= 40
