"""The message that introduces a question's word to its conversation (`retrieval/introduces.py`):
news is told the first time a chat speaks of a thing, and later messages take it as known."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vaultmind.config import load_config
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory
from vaultmind.retrieval.introduces import INTRODUCES

from .conftest import write, write_chat

MEL, LUCI = "Melissa Ortiz", "Lucinda Lind"
SMALL = ("the weather is lovely", "the train was late", "I read a good book", "the garden looks green", "work was busy", "the cat slept")
TOLD = "We adopted a puppy today, his name is Rex and he is tiny!"


def _chat_walk(vault: Path, *questions: str) -> list[list[dict[str, Any]]]:
    """A week of small talk between Lucinda and Melissa; on the second day Melissa tells of the
    puppy they adopted, on the fifth and sixth she speaks of it as known, in fewer words."""
    for day in range(1, 8):
        messages = []
        for i, said in enumerate(SMALL[:3]):
            messages += [(LUCI, f"Today {said}."), (MEL, f"Here {SMALL[(i + day) % len(SMALL)]} too.")]
        if day == 2:
            messages += [(MEL, TOLD), (LUCI, "Congrats, what a sweet name!")]
        if day == 5:
            messages += [(MEL, "Rex the puppy chewed my shoes again."), (LUCI, "Ha, classic.")]
        if day == 6:
            messages += [(MEL, "Walking the puppy every morning now."), (LUCI, "Nice!")]
        write_chat(vault, f"2024-05-0{day}", messages)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        return [memory.walk(question)["hits"] for question in questions]


def test_the_message_that_tells_the_news_leads_the_later_mentions(vault: Path) -> None:
    """"Which puppy did Melissa get?": the later messages hold "puppy" in fewer words (a higher
    BM25), but the day she told of it, the first to say "puppy" in the chat, leads."""
    (hits,) = _chat_walk(vault, "Which puppy did Melissa get?")
    assert hits[0]["content"] == TOLD, [(h["content"], h["score"]) for h in hits[:3]]
    assert hits[0]["breakdown"]["introduces"] == INTRODUCES, hits[0]["breakdown"]
    later = [h for h in hits if "puppy" in h["content"] and h["content"] != TOLD]
    assert later and all(h["breakdown"]["introduces"] == 0 for h in later), [(h["content"], h["breakdown"]["introduces"]) for h in later]
    assert max(h["breakdown"]["lex"] for h in later) > hits[0]["breakdown"]["lex"], "the later mentions match better by their words alone"


def test_a_word_said_once_introduces_nothing_and_last_asks_for_the_latest(vault: Path) -> None:
    """A word the chat says only once is first by default ("shoes", "chewed"): no share of it;
    "Rex", said twice, is introduced by the day Melissa told of him. "When did Melissa last
    walk the puppy?" asks for the latest mention: no message is raised as the first."""
    chewed, last = _chat_walk(vault, "Which shoes did Rex chew?", "When did Melissa last walk the puppy?")
    shoes = next(h for h in chewed if "shoes" in h["content"])
    told = next(h for h in chewed if h["content"] == TOLD)
    assert shoes["breakdown"]["introduces"] == 0, shoes["breakdown"]
    assert 0 < told["breakdown"]["introduces"] < INTRODUCES, told["breakdown"]  # "rex" alone of the question's words
    assert last and all(h["breakdown"]["introduces"] == 0 for h in last), [(h["content"], h["breakdown"]["introduces"]) for h in last]


def test_of_an_email_thread_the_email_that_tells_it_alone(vault: Path) -> None:
    """An email thread is one note: the email that first says "kayak" introduces it, not the
    later replies of the same note that take the kayak as known."""
    meta = SourceMeta(kind="email", source_id="mbox:inbox", scope="mail/inbox", title="Weekend")
    told = "We bought a kayak yesterday, a red one from the shop by the lake!"
    texts = ("Greetings, how was your week?", told, "Nice. Is the kayak heavy?", "The kayak is light, we carry it alone.")
    mails = [Message(f"<m{i}@x>", (LUCI, MEL)[i % 2], f"2024-05-0{i + 1}T12:00:00Z", text, subject="Weekend") for i, text in enumerate(texts)]
    write(vault, "sources/email/inbox/weekend/2024-05-01-weekend.md", render_source_note(meta, mails))
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("When did Melissa buy the kayak?")["hits"]
    raised = {h["content"]: h["breakdown"]["introduces"] for h in hits if "kayak" in h["content"]}
    assert raised[told] > 0 and all(raised[text] == 0 for text in texts[2:]), raised


def test_two_notes_first_at_the_same_moment_both_introduce_whatever_the_sync_order(vault: Path) -> None:
    """Two notes of one chat whose messages share their time and place (a day exported in two
    parts) both say "puppy" first: both introduce it, as they did before either was edited —
    not the one the index happened to hold first."""
    meta = SourceMeta(kind="chat", source_id="chat:two", scope="chat/two", title="chat 2024-05-02")
    adopted, neighbours = "We adopted a puppy today, his name is Rex!", "The neighbours got a puppy as well, a tiny one."

    def part(name: str, text: str) -> None:
        write(vault, f"sources/chat/two/{name}.md", render_source_note(meta, [Message(f"{name}-0", MEL, "2024-05-02T10:00:00Z", text)]))

    write_chat(vault, "2024-05-06", [(LUCI, "Walking the puppy every morning now."), (MEL, "Nice!")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.serve()
        raised = []
        for name, text in (("2024-05-02 b", neighbours), ("2024-05-02 a", adopted), ("2024-05-02 b", neighbours + " So cute.")):
            part(name, text)
            memory.sync()
            hits = memory.walk("Which puppy did Melissa get?")["hits"]
            raised.append(sorted((h["content"][:20], h["breakdown"]["introduces"]) for h in hits if h["content"].startswith(("We adopted", "The neighbours"))))
    assert [len(told) for told in raised] == [1, 2, 2] and all(share > 0 for told in raised for _, share in told), raised
    assert raised[1] == raised[2] and raised[1][0][1] == raised[1][1][1], raised
