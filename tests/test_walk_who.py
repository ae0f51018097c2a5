"""walk: who-questions answered by a name of a person, or by the author who takes it on."""

from __future__ import annotations

from pathlib import Path

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.answer_type import answer_test

from .conftest import write_chat


def test_who_is_answered_by_the_author_who_takes_it_on(vault: Path) -> None:
    """"Who is bringing the cake?": Alice's "I'll get the cake" answers it (its author is the
    answer), not Mei's "please bring the photo album … from Taiwan", which shares the question's
    verb but names only a place; "from Dana" still names a person the memory knows."""
    who = answer_test("Who is bringing the cake?", "person", ["bring", "cake"], frozenset({"dana", "alice", "mei"}))
    assert who("I'll get the cake from Bakery Rosa.") and who("And LeBron is the man.") and who("A card from Dana came.")
    assert not who("And please bring the photo album, the one from Taiwan 1989.")
    write_chat(vault, "2024-03-09", [("Daniel Chen", "Ok team, Dad's 60th! He thinks we're just having lunch at home on the 23rd."),
                                     ("Daniel Chen", "I booked Golden Lantern, 19:00, table for 9. Private room upstairs."),
                                     ("Mei Chen", "Good. Auntie Lin and Uncle Joe are coming from Leeds, they arrive Friday."),
                                     ("Alice Chen", "I'll get the cake from Bakery Rosa. Black sesame, his favourite."),
                                     ("Mei Chen", "And please bring the photo album from your flat, the one from Taiwan 1989."),
                                     ("Alice Chen", "Will do."),
                                     ("Daniel Chen", "Cost split: dinner is about £540 (£60 a head). Cake is extra."),
                                     ("Mei Chen", "Candles for the cake are in the drawer.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("Who is bringing the cake?", limit=3)["hits"]
        assert hits[0]["content"].startswith("I'll get the cake"), [h["content"][:40] for h in hits]
        assert hits[0]["author"] == "Alice Chen" and hits[0]["breakdown"]["answer"]
