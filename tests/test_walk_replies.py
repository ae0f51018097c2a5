"""walk: the reply to a message that asks the question itself ("how many are coming?")."""

from __future__ import annotations

from pathlib import Path

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.replies import asks_the_question

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
                                     ("John", "By the way, what book are you reading?"),
                                     ("Tim", "A fantasy novel called \"The Name of the Wind\". Really good!"),
                                     ("John", "I've been reading an inspiring book about dreams.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("How many are coming?", limit=3)["hits"]
        assert hits[0]["content"].startswith("Nine of us"), [h["content"][:30] for h in hits]
        assert hits[0]["breakdown"]["replies_to"] is not None
        books = memory.walk("What books has John read?", limit=5)["hits"]
        assert all(h["breakdown"]["replies_to"] is None for h in books if h["author"] == "Tim")
