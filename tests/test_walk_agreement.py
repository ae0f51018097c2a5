"""`walk` reading agreements and confirmations: "what did we agree…?" asks for an agreement
said ("Deal: …"), raised above the talk that led to it; "what did Dana confirm…?" asks for
Dana's words, as "say" does."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.answer_type import answer_kind, holds_answer

from .conftest import write, write_chat

AT = datetime(2024, 3, 12, 12)

TALK = [
    ("Bob Stone", "Got a minute on the budget? The migration estimate is done: 7 to 9 working days, plus load testing."),
    ("Bob Stone", "€1,200 for a load-testing run on staging.\nAnd I'd like to keep the second staging cluster through April."),
    ("Alice Chen", "So the load test is fine. The second staging cluster is another €900 a month, though."),
    ("Bob Stone", "We could drop it right after launch week."),
    ("Alice Chen", "Deal: €1,200 for load testing approved, second cluster until 30 April, then it goes."),
]


def test_an_agreement_question_asks_for_an_agreement_said() -> None:
    """A question of an agreement, wherever its word stands, asks for one; a text says one by
    "Deal: …", "agreed", "sounds good" — not by "a big deal" or "I disagree"."""
    assert answer_kind("What did we agree with Bob about the staging cluster?") == "agreement"
    assert answer_kind("Do Bob and Alice agree on the budget?") == "agreement"
    assert answer_kind("When did we agree on the date?") == "time"
    assert holds_answer("agreement", "Deal: €1,200 for load testing approved.")
    assert holds_answer("agreement", "Agreed with Bob: the cluster goes on 30 April.")
    assert not holds_answer("agreement", "It's no big deal, I disagree with the plan.")


def test_the_agreement_closing_a_talk_is_raised_above_it(vault: Path) -> None:
    """"What did we agree with Bob about the staging cluster?": Bob's message holds the
    question's words, Alice's "Deal: …" that closes the talk holds few of them; it ranks above
    his, even when a note records the agreement in the question's words ("Agreed with Bob")."""
    write_chat(vault, "2024-03-05", TALK)
    write(
        vault,
        "Budget 2024.md",
        "# Budget 2024\n\n## Q2 launch\n\nThe second staging cluster is switched off on 30 April. Agreed with Bob about the staging cluster.\n",
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What did we agree with Bob about the staging cluster?", limit=5, reference_time=AT)
        assert result["query"]["answer_kind"] == "agreement"
        chat = [hit for hit in result["hits"] if hit["note_path"].startswith("sources/chat/")]
        assert chat[0]["content"].startswith("Deal:"), [hit["content"][:30] for hit in result["hits"]]
        assert chat[0]["breakdown"]["topic_answer"] is True


def test_what_someone_confirmed_is_their_words(vault: Path) -> None:
    """"What did Dana confirm on 8 March?": Dana's "Confirmed: …" of that day comes first, not
    the daily note of the day before that says she would confirm."""
    write(vault, "Daily/2024-03-07.md", "# Thursday, 7 March 2024\n\n- Dana should confirm the Loft by tomorrow; then confirm the caterer.\n")
    write_chat(
        vault,
        "2024-03-08",
        [
            ("Alice Chen", "Hi Dana, please book the 23rd. Helen will pay the deposit today."),
            ("Dana Whitfield", "Confirmed: the Loft is yours on Tuesday 23 April, 18:00 to 23:00, for up to 120 guests."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What did Dana confirm on 8 March?", limit=3, reference_time=AT)
        first = result["hits"][0]
        assert first["content"].startswith("Confirmed:"), [hit["content"][:30] for hit in result["hits"]]
        assert first["breakdown"]["speaker"] is True
