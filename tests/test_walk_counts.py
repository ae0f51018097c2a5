"""walk: questions that ask how many people, how long or how much ("table for 9", "7 to 9
working days", "She charges £15 an hour")."""

from __future__ import annotations

from pathlib import Path

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.answer_type import answer_test
from vaultmind.retrieval.counts import counted_thing, counts

from .conftest import write, write_chat

DINNER = [("Daniel Chen", "Ok team, Dad's 60th! He thinks we're just having lunch at home on the 23rd."),
          ("Mei Chen", "He must not find out!! I told him Saturday is for the garden."),
          ("Daniel Chen", "I booked Golden Lantern, 19:00, table for 9. Private room upstairs."),
          ("Mei Chen", "Good. Auntie Lin and Uncle Joe are coming from Leeds, they arrive Friday."),
          ("Alice Chen", "I'll get the cake. They need 5 days' notice, so I'll order on Monday."),
          ("Daniel Chen", "Cost split: dinner is about £540 (£60 a head). I'll pay and we settle after."),
          ("Daniel Chen", "Remember: nobody posts anything on Facebook until after dinner!")]  # fmt: skip


def test_how_many_people_finds_the_count_said_in_the_conversation_that_matches(vault: Path) -> None:
    """"How many people are coming to the dinner?": the messages that say "dinner" or "coming"
    count nobody ("£60 a head" is a price, "5 days' notice" no people); the booking said in the
    same conversation does ("table for 9"), in none of the question's words, and is the first
    hit, above the best match that holds no answer."""
    counts = answer_test("How many people are coming to the dinner?", "quantity", ["come", "dinner", "peopl"])
    assert counts("I booked Golden Lantern, 19:00, table for 9.") and counts("Nine of us, with Auntie Lin.")
    assert counts("The Loft holds up to 120 guests.")
    assert not counts("Cost split: dinner is about £540 (£60 a head).") and not counts("They need 5 days' notice.")
    write_chat(vault, "2024-03-09", DINNER)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("How many people are coming to the dinner?", limit=3)["hits"]
        assert hits[0]["content"].startswith("I booked Golden Lantern"), [h["content"][:40] for h in hits]
        assert hits[0]["breakdown"]["topic_answer"]


def test_how_long_asks_for_a_length_of_time(vault: Path) -> None:
    """"How long does the migration take?" asks for a length of time ("7 to 9 working days"),
    not any number: a message that says "migration" beside a version ("the migration blocks
    release 1.1") holds no answer to it, and the estimate comes first."""
    lasting = answer_test("How long does the migration take?", "quantity", ["how", "long", "migrat", "take"])
    assert lasting("Estimate is done: 7 to 9 working days.") and lasting("It took about an hour.")
    assert lasting("Two weeks, maybe three.") and not lasting("The migration blocks release 1.1.")
    assert answer_test("How long ago did we meet?", "time", ["meet"])("We met in 2019.")  # a time, not a length
    write_chat(vault, "2024-03-05", [("Alice Chen", "Where are we with the payments migration?"),
                                     ("Bob Stone", "The migration blocks release 1.1, it takes priority."),
                                     ("Bob Stone", "Estimate is done: 7 to 9 working days, plus load testing."),
                                     ("Alice Chen", "Thanks, I'll tell Marco.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("How long does the migration take?", limit=3)["hits"]
        assert hits[0]["content"].startswith("Estimate is done"), [h["content"][:40] for h in hits]
        assert hits[0]["breakdown"]["answer"] and not any(h["breakdown"]["answer"] for h in hits if "1.1" in h["content"])


def test_how_much_finds_the_sum_said_of_whom_it_asks_about(vault: Path) -> None:
    """"How much is the cleaner?": the messages that say "cleaner" name no sum; "She charges
    £15 an hour", right after "Found a new cleaner", says it of her and is the first hit, not
    "Parking is £4 a day", a sum of something else."""
    money = answer_test("How much is the cleaner?", "quantity", ["cleaner"])
    assert money("She charges £15 an hour and comes on Thursdays.") and not money("Parking is £4 a day near the flat.")
    write_chat(vault, "2024-03-02", [("Alice Chen", "Found a new cleaner for the flat through the agency, Rosa."),
                                     ("Alice Chen", "She charges £15 an hour and comes on Thursdays."),
                                     ("Bob Stone", "Great, the old cleaner never did the windows."),
                                     ("Alice Chen", "The window cleaner is a separate company anyway."),
                                     ("Bob Stone", "Parking is £4 a day near the flat, by the way.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("How much is the cleaner?", limit=3)["hits"]
        assert hits[0]["content"].startswith("She charges £15"), [h["content"][:40] for h in hits]
        assert hits[0]["breakdown"]["topic_answer"]


def test_how_many_things_asks_for_a_count_of_them(vault: Path) -> None:
    """"How many sailors are in the usability tests?": the message that counts sailors ("5
    sailors") answers it; a number of something else ("1.1", "16 April") does not, though it
    stands beside the question's words; "how many times…?" counts occasions, told one by one,
    and keeps any number as its answer."""
    assert counted_thing("How many working days does the migration take?") == "day"
    assert counted_thing("How many times has John hurt his ankle?") is None
    assert counts("7 to 9 working days, plus load testing", "day") and counts("about 8 more working days", "day")
    assert not counts("how we scope 1.1 for sailors", "sailor"), "a number of something else"
    write(
        vault,
        "Reading list.md",
        "# Reading list\n\n- [ ] The Mom Test, before the usability tests\n- [x] Shape Up: how we scope 1.1 after launch\n"
        "- [ ] Tide tables for dinghy sailors and sailing\n",
    )
    write_chat(
        vault,
        "2024-03-07",
        [
            ("Priya Raman", "That gives me time to finish onboarding and run usability tests with 5 sailors from the club."),
            ("Bob Stone", "Then code freeze is Tuesday 16 April."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("How many sailors are in the usability tests?", limit=3)["hits"]
        assert "5 sailors" in hits[0]["content"] and hits[0]["breakdown"]["answer"]
        assert [h["breakdown"]["answer"] for h in hits[1:]] == [False, False], "the reading list's 1.1, the code freeze's 16 April"
