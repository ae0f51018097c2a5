"""walk: a yes/no question about a change ("did the budget change because of the new launch
date?") is answered by what says the change, or that there is none, of what it asks about."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.answer_type import answer_kind
from vaultmind.retrieval.change import change_subject, tells_change

from .conftest import write_chat

MARCH_12 = datetime(2024, 3, 12, 12)


def _chats(vault: Path) -> None:
    write_chat(
        vault,
        "2024-03-07",
        [
            (
                "Alice Chen",
                "For the new launch date the budget is eighteen thousand in total, as planned for the date.",
            )
        ],
    )
    write_chat(
        vault,
        "2024-03-11",
        [("Alice Chen", "For the new launch date the budget stays at eighteen thousand in total.")],
    )
    write_chat(
        vault,
        "2024-03-09",
        [
            ("Mei Chen", "Auntie Lin and Uncle Joe arrive on Friday by train."),
            ("Daniel Chen", "I booked the restaurant for nine people at seven."),
            ("Mei Chen", "Please bring the photo album from your flat."),
            ("Daniel Chen", "Nobody posts anything online until after dinner!"),
        ],
    )


def test_a_change_question_is_answered_by_what_says_the_change_or_none(vault: Path) -> None:
    _chats(vault)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk(
            "Did the budget change because of the new launch date?", limit=3, reference_time=MARCH_12
        )
        assert result["query"]["answer_kind"] == "change"
        first = result["hits"][0]
        assert "budget stays" in first["content"], [h["content"] for h in result["hits"]]
        assert first["breakdown"]["answer"]
        planned = next(h for h in result["hits"] if "as planned" in h["content"])
        assert not planned["breakdown"]["answer"], "it names the budget and the date, but no change"


def test_the_change_is_said_of_the_questions_subject() -> None:
    assert answer_kind("Did the paid ads budget change after the launch moved?") == "change"
    assert answer_kind("Has the launch date moved?") == "change"
    assert answer_kind("Did Bob send the estimate?") is None
    subject = change_subject("Did the paid ads budget change after the launch moved?")
    assert subject == frozenset({"paid", "ad", "budget"})
    assert tells_change("Paid ads start 22 April. Budget stays at €4,000.", subject)
    assert not tells_change("We moved the launch so the payments migration fits.", subject), (
        "paid is not payments"
    )
    assert not tells_change("The budget is €18,000.", subject), "no change said"


def test_the_change_verb_is_the_questions_main_verb_and_its_object_what_changes() -> None:
    assert answer_kind("Did Lucinda go to the gym after she moved to Sweden?") is None, "the gym, not the move"
    assert answer_kind("Did Melissa go up the mountain with her kids?") is None, "going somewhere changes nothing"
    assert change_subject("Has Dana increased the budget?") == frozenset({"budget"}), "the budget changes, not Dana"
    assert change_subject("Did Bob move the launch to 23 April?") == frozenset({"launch"})
    assert change_subject("Will the paid ads budget go up?") == frozenset({"paid", "ad", "budget"})
