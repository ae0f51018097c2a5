"""walk: the reply to a message that asks the question itself ("how many are coming?")."""

from __future__ import annotations

from pathlib import Path

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.replies import asks_the_question, no_answer

from .conftest import write_chat


def test_a_question_asked_in_the_chat_is_answered_by_the_reply(vault: Path) -> None:
    """"How many are coming?" matches Mei's "Party planning: how many are coming?" best, which
    only asks; Daniel's reply "Nine of us, …" is the answer and ranks first, above a message
    that says "coming" without a number. Of a question that names an author ("what books has
    John read?"), another's reply to John's question is no answer of John's."""
    assert asks_the_question("Party planning: how many are coming?", "quantity", ["come"])
    assert not asks_the_question("Great. Who is coming from Leeds?", "quantity", ["come"])  # another kind
    assert not asks_the_question("How many are coming?", "quantity", ["come", "cake"])  # not all its words
    write_chat(vault, "2024-03-09", [("Mei Chen", "Party planning: how many are coming?"),
                                     ("Daniel Chen", "Nine of us, with Auntie Lin and Uncle Joe."),
                                     ("Mei Chen", "Great. Who is coming from Leeds, and when do they arrive?"),
                                     ("Daniel Chen", "Auntie Lin and Uncle Joe are coming on Friday."),
                                     ("John", "Oh, and which book are you on at the moment?"),
                                     ("Tim", "A thick fantasy novel about a young mage. Loving it!"),
                                     ("John", "I've been reading an inspiring book about dreams.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("How many are coming?", limit=3)["hits"]
        assert hits[0]["content"].startswith("Nine of us"), [h["content"][:30] for h in hits]
        assert hits[0]["breakdown"]["replies_to"] is not None
        books = memory.walk("What books has John read?", limit=5)["hits"]
        assert all(h["breakdown"]["replies_to"] is None for h in books if h["author"] == "Tim")


def test_a_reply_that_jokes_or_declines_is_passed_over_for_the_answer(vault: Path) -> None:
    """"Where are we meeting for brunch?" is answered by Nell's "The Breakfast Club on Hoxton
    Square", not by Olly's "somewhere in London lol" before it, which names a place too; "who is
    bringing the speaker?" is not answered by "Not me, mine is broken since May"."""
    assert no_answer("somewhere in London lol") and no_answer("Not me, mine is broken since May")
    assert not no_answer("The Breakfast Club on Hoxton Square")
    write_chat(vault, "2024-03-10", [("Priti Shah", "Where are we meeting for brunch?"),
                                     ("Olly Grant", "somewhere in London lol"),
                                     ("Nell Byrne", "The Breakfast Club on Hoxton Square"),
                                     ("Olly Grant", "Who is bringing the speaker for Sunday?"),
                                     ("Nell Byrne", "Not me, mine is broken since May"),
                                     ("Priti Shah", "Tom Baker has one, I will ask him")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        for question, lifted, passed in (("Where are we meeting for brunch?", "The Breakfast Club", "somewhere"),
                                         ("Who is bringing the speaker?", "Tom Baker", "Not me")):  # fmt: skip
            hits = memory.walk(question, limit=5)["hits"]
            replies = [h["content"] for h in hits if h["breakdown"]["replies_to"] is not None]
            assert replies and replies[0].startswith(lifted), [h["content"][:30] for h in hits]
            assert not any(h["content"].startswith(passed) and h["breakdown"]["replies_to"] for h in hits)


def test_an_unanswered_question_lifts_no_later_message(vault: Path) -> None:
    """Mei's "how many are coming?" is followed by Daniel's "Still waiting to hear from Auntie
    Lin", which gives no number: the question went unanswered, and Daniel's next message, about
    a train at 9, is no reply to it, though it holds a number."""
    write_chat(vault, "2024-03-09", [("Mei Chen", "Party planning: how many are coming?"),
                                     ("Daniel Chen", "Still waiting to hear from Auntie Lin."),
                                     ("Daniel Chen", "The train to Leeds leaves at 9 on Friday.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("How many are coming?", limit=3)["hits"]
        assert all(h["breakdown"]["replies_to"] is None for h in hits), [h["content"][:30] for h in hits]
        assert not hits[0]["content"].startswith("The train"), [h["content"][:30] for h in hits]


def test_a_reply_laughed_at_is_a_joke(vault: Path) -> None:
    """Olly's "At Buckingham Palace, obviously" names a place, with no laugh of its own; Nell's
    "haha very funny" after it says it was a joke: the reply to "where are we meeting for
    brunch?" is Priti's "The Breakfast Club on Hoxton Square"."""
    write_chat(vault, "2024-03-10", [("Nell Byrne", "Where are we meeting for brunch?"),
                                     ("Olly Grant", "At Buckingham Palace, obviously."),
                                     ("Nell Byrne", "haha very funny"),
                                     ("Priti Shah", "The Breakfast Club on Hoxton Square")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("Where are we meeting for brunch?", limit=5)["hits"]
        replies = [h["content"] for h in hits if h["breakdown"]["replies_to"] is not None]
        assert replies == ["The Breakfast Club on Hoxton Square"], [h["content"][:30] for h in hits]
        assert not hits[0]["content"].startswith("At Buckingham"), [h["content"][:30] for h in hits]


def test_a_reply_the_asker_asks_again_after_is_no_answer(vault: Path) -> None:
    """Olly's "At Buckingham Palace, obviously" names a place, with no laugh of its own and
    nobody laughing; Nell asks again ("Seriously, where?"): she did not take it for the answer.
    The reply to "where are we meeting for brunch?" is Priti's, after it. An asker who goes on
    to another kind of question ("Great, and what time?") took the reply for the answer."""
    write_chat(vault, "2024-03-10", [("Nell Byrne", "Where are we meeting for brunch?"),
                                     ("Olly Grant", "At Buckingham Palace, obviously."),
                                     ("Nell Byrne", "Seriously, where?"),
                                     ("Priti Shah", "The Breakfast Club on Hoxton Square")])  # fmt: skip
    write_chat(vault, "2024-03-11", [("Nell Byrne", "Where is the picnic on Sunday?"),
                                     ("Olly Grant", "By the pond in Victoria Park."),
                                     ("Nell Byrne", "Great, and what time?"),
                                     ("Priti Shah", "Noon at the Hackney gate")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("Where are we meeting for brunch?", limit=5)["hits"]
        replies = [h["content"] for h in hits if h["breakdown"]["replies_to"] is not None]
        assert replies == ["The Breakfast Club on Hoxton Square"], [h["content"][:30] for h in hits]
        assert hits[0]["content"] == "The Breakfast Club on Hoxton Square", [h["content"][:30] for h in hits]
        hits = memory.walk("Where is the picnic on Sunday?", limit=5)["hits"]
        replies = [h["content"] for h in hits if h["breakdown"]["replies_to"] is not None]
        assert replies == ["By the pond in Victoria Park."], [h["content"][:30] for h in hits]
