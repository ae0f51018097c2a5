"""walk: "what did Priya say after the launch was moved?" reads "after <event>" as a time: the
event is found by asking when it happened, and the speaker's words after it rank first."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.after_event import after_event

from .conftest import write_chat

MARCH_12 = datetime(2024, 3, 12, 12)


def _chats(vault: Path) -> None:
    write_chat(
        vault,
        "2024-03-04",
        [
            ("Bob Stone", "The payments migration is bigger than we thought."),
            ("Priya Raman", "Then I would move the launch rather than cut the onboarding."),
        ],
    )
    write_chat(
        vault,
        "2024-03-07",
        [
            ("Alice Chen", "Decision: the launch was moved to Tuesday 23 April."),
            ("Priya Raman", "That gives me time to run usability tests with five sailors from the club."),
        ],
    )
    write_chat(vault, "2024-03-09", [("Marco Ruiz", "The press kit is ready for the journalists.")])


def test_what_a_speaker_said_after_an_event_is_what_follows_the_event(vault: Path) -> None:
    _chats(vault)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk(
            "What did Priya say after the launch was moved?", limit=3, reference_time=MARCH_12
        )
        window = result["query"]["time_window"]
        assert window["start"] == "2024-03-07T10:00:00Z", "from the message that tells the event"
        assert window["text"] == "after the launch was moved"
        first = result["hits"][0]
        assert first["author"] == "Priya Raman" and first["content"].startswith("That gives me time"), result[
            "hits"
        ]
        assert first["breakdown"]["inside"]
        earlier = next(h for h in result["hits"] if h["content"].startswith("Then I would move"))
        assert earlier["breakdown"]["time_factor"] < 1.0, "her words before the event are outside its window"

        felt = memory.walk("How did Priya feel after the launch was moved?", limit=3, reference_time=MARCH_12)
        assert felt["query"]["time_window"] is None, "no one's words asked for: the event is what it is about"


def test_the_event_is_the_closing_after_clause() -> None:
    assert after_event("What did Priya say after the launch was moved?") == "the launch was moved"
    assert (
        after_event("What did Bob say after Marco's message about the Pro tier?!")
        == "Marco's message about the Pro tier"
    )
    assert after_event("What did Bob say about the launch?") is None


def test_an_after_clause_not_right_after_the_verb_of_saying_opens_no_window(vault: Path) -> None:
    write_chat(
        vault,
        "2024-03-04",
        [
            ("Priya Raman", "After graduation I will travel to Peru for a month, then look for a job."),
            ("Bob Stone", "Sounds great. I will be at the office all week."),
        ],
    )
    write_chat(
        vault,
        "2024-03-08",
        [
            ("Bob Stone", "When is graduation? Graduation is on Friday, the graduation hall is booked."),
            ("Priya Raman", "I will bring the cake to the office on Monday."),
            ("Priya Raman", "The usability tests went well, five sailors came."),
            ("Priya Raman", "I will send the notes to Alice tonight."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("What did Priya say she would do after graduation?", limit=3, reference_time=MARCH_12)
        assert result["query"]["time_window"] is None, "she said it whenever: the event is what she spoke of"
        assert result["hits"][0]["content"].startswith("After graduation I will travel"), [
            h["content"] for h in result["hits"]
        ]


def test_a_pronoun_or_a_fixed_phrase_after_the_verb_is_no_event() -> None:
    assert after_event("What did Priya say she would do after graduation?") is None
    assert after_event("What did Bob say after that?") is None
    assert after_event("What did Bob say after all?") is None
    assert after_event("What did Alice write after it happened?") is None
    assert after_event("What did Alice write after the demo?") == "the demo"
