"""walk: a message about another occasion than the question's (another ordinal, an intention
for a question of when something was done), and a title answer that is no person's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.index.lexical import terms
from vaultmind.memory import Memory
from vaultmind.retrieval.answer_type import names_title
from vaultmind.retrieval.occasion import asks_of_intent, names_other_ordinal, only_intends, ordinals

from .conftest import write_chat


def test_another_ordinal_is_another_occasion_only_before_the_words_the_questions_goes_with() -> None:
    asked = ordinals("When did Emil win his fourth table tennis tournament?")
    assert asked == {"fourth": frozenset(terms("table tennis tournament"))}
    assert names_other_ordinal("I won my first table tennis tournament last week!", asked)
    assert not names_other_ordinal("I won my fourth table tennis tournament on Friday!", asked)
    # "for the first time" names no other tournament; nor does a text naming the question's own
    assert not names_other_ordinal("I played a table tennis tournament for the first time.", asked)
    assert not names_other_ordinal("My first tournament was easy, the fourth table tennis tournament hard.", asked)
    assert not ordinals("When did Emil win a tournament?")


def test_the_cached_ordinals_cannot_be_changed_by_a_caller() -> None:
    """`ordinals` is cached: what it gives is read-only, so no caller changes another's."""
    found = ordinals("I won my first table tennis tournament")
    with pytest.raises(TypeError):
        found["fourth"] = frozenset()  # type: ignore[index]
    with pytest.raises(TypeError):
        ordinals("no ordinal here")["first"] = frozenset()  # type: ignore[index]
    assert set(ordinals("I won my first table tennis tournament")) == {"first"}


def test_a_message_only_intending_the_event_is_told_from_one_that_did_it() -> None:
    camping = frozenset(terms("go camping"))
    assert only_intends("We're thinking about going camping this summer.", camping)
    assert only_intends("Great news! We're going to go camping next month.", camping)
    assert not only_intends("We went camping last weekend. Next time we take the big tent.", camping)
    assert not only_intends("We went camping last weekend.", camping)
    assert not only_intends("I'm thinking about the kids.", camping)  # none of the question's words
    assert asks_of_intent("When did Jolene plan on going to Emil's?")
    assert not asks_of_intent("When did Melissa go camping?")


def test_a_bare_next_or_going_to_is_no_intention() -> None:
    """"next" and "going to" of place or of a past account say nothing meant: an intention is
    a construction ("going to go", "next week") in a sentence that tells nothing done."""
    camping = frozenset(terms("When did Melissa go camping?"))
    assert not only_intends("We went camping next to the lake.", camping)
    assert not only_intends("We went camping last weekend, next time we bring a tent.", camping)
    assert not only_intends("We drove for hours, going to the lake to camp.", camping)
    assert only_intends("We might go camping next weekend.", camping)
    assert only_intends("I'm planning to go camping with the kids.", camping)


def test_a_title_answer_is_no_name_of_the_memorys_people() -> None:
    people = frozenset({"lucinda", "melissa"})
    assert not names_title("Thanks, Melissa! I love that song, it is on every morning.", people)
    assert not names_title("We met up last week, on Friday. Great times.", people)
    assert names_title("I love Brave by Sara Bareilles.", people)
    assert names_title('Thanks, Melissa! I keep playing "Brave".', people)


def test_walk_puts_the_question_s_own_ordinal_before_another(vault: Path) -> None:
    """"When did Emil win his fourth table tennis tournament?": his message about his first holds
    more of the question's words, but names another tournament; it keeps `OTHER_OCCASION` of
    its score and the one about the fourth comes first."""
    write_chat(vault, "2024-01-10", [("Emil", "I won my first table tennis tournament last week, what a day!"),
                                     ("Jolene", "Congrats, that is huge!")])  # fmt: skip
    write_chat(vault, "2024-07-12", [("Emil", "Big news: I won my fourth tournament on Friday, the whole club clapped for me."),
                                     ("Jolene", "Amazing, well done!")])  # fmt: skip
    write_chat(vault, "2024-08-01", [("Emil", "The tennis club puts a new table in the hall."),
                                     ("Jolene", "Nice, I like that hall.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("When did Emil win his fourth table tennis tournament?", limit=3)["hits"]
        assert "my fourth tournament" in hits[0]["content"], [h["content"][:30] for h in hits]
        first = next(h for h in hits if "my first" in h["content"])
        assert first["breakdown"]["other_occasion"] and not hits[0]["breakdown"]["other_occasion"]


def test_walk_answers_when_it_was_done_with_the_message_that_did_it(vault: Path) -> None:
    """"When did Melissa go camping?": "We're thinking about going camping" only says what she
    means to do; the message telling of the trip comes first. "When did Melissa plan to go
    camping?" asks about the plan, which keeps its score."""
    write_chat(vault, "2023-05-20", [("Melissa", "We're thinking about going camping up north soon!"),
                                     ("Lucinda", "That sounds lovely.")])  # fmt: skip
    write_chat(vault, "2023-06-27", [("Melissa", "Last weekend the whole family went camping in the forest by the lake, hiked every day and the kids loved the campfire."),
                                     ("Lucinda", "What a trip!")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("When did Melissa go camping?", limit=2)["hits"]
        assert "went camping" in hits[0]["content"], [h["content"][:30] for h in hits]
        assert hits[1]["breakdown"]["other_occasion"]
        hits = memory.walk("When did Melissa plan to go camping?", limit=2)["hits"]
        assert not any(h["breakdown"]["other_occasion"] for h in hits)


def test_walk_takes_a_title_for_the_answer_not_the_name_of_whom_a_message_thanks(vault: Path) -> None:
    """"Which song does Lucinda love?": "Thanks, Melissa! I love that song" names no song,
    only the person it thanks; "I love Brave by Sara Bareilles, the song…" does, and comes
    first."""
    write_chat(vault, "2023-07-01", [("Lucinda", "Thanks, Melissa! I love that song too."),
                                     ("Melissa", "It is a classic.")])  # fmt: skip
    write_chat(vault, "2023-08-01", [("Lucinda", "I love Brave by Sara Bareilles, the song gives me courage every single morning."),
                                     ("Melissa", "Such a good pick.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("Which song does Lucinda love?", limit=2)["hits"]
        assert "Sara Bareilles" in hits[0]["content"], [h["content"][:30] for h in hits]
        assert hits[0]["breakdown"]["answer"] and not hits[1]["breakdown"]["answer"]
