"""walk: "what happened on 7 March?" puts the record of that day, which names it ("# Thursday,
7 March 2024"), before what was merely written that day."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from vaultmind.config import load_config
from vaultmind.memory import Memory

from .conftest import write, write_chat

AT = datetime(2024, 3, 12, 12)


def test_a_question_about_a_day_puts_the_notes_naming_it_first(vault: Path) -> None:
    write(
        vault,
        "Daily/2024-03-07.md",
        "---\ndate: 2024-03-07\n---\n# Thursday, 7 March 2024\n\n- Launch sync: we moved the launch.\n",
    )
    write_chat(
        vault,
        "2024-03-07",
        [
            (
                "Marco Ruiz",
                "Updated the timeline, the checklist, the contacts and the rollback section of the runbook, with the new"
                " embargo time, the press kit links, the guest list for the evening event at the hall by the quays, the"
                " caterer's menu, the photographer's schedule and the journalists' contacts.",
            ),
            ("Priya Raman", "7 sailors signed up for the usability tests; March is busy."),
        ],
    )
    write_chat(vault, "2024-03-09", [("Mei Chen", "Auntie Lin and Uncle Joe arrive on Friday by train.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What happened on 7 March?", limit=3, reference_time=AT)
        hits = result["hits"]
        assert hits[0]["note_path"] == "Daily/2024-03-07.md", [h["content"][:40] for h in hits]
        assert hits[0]["breakdown"]["names_window_day"] and hits[0]["breakdown"]["inside"]
        runbook = next(h for h in hits if h["author"] == "Marco Ruiz")
        assert runbook["breakdown"]["inside"] and not runbook["breakdown"]["names_window_day"]
        assert runbook["breakdown"]["informative"] > hits[0]["breakdown"]["informative"], (
            "it says more, of no day"
        )



def test_a_day_record_of_next_to_nothing_does_not_pass_what_tells_that_day(vault: Path) -> None:
    write(vault, "Daily/2024-03-07.md", "---\ndate: 2024-03-07\n---\n# Thursday, 7 March 2024\n\n- Gym.\n")
    write_chat(
        vault,
        "2024-03-07",
        [
            (
                "Alice Chen",
                "We signed the contract with Acme: two years of support for the booking app, the payments"
                " service and the reporting dashboards, starting in April, with a review of the terms after six months.",
            ),
            ("Priya Raman", "7 sailors signed up for the usability tests; March is busy."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("What happened on 7 March?", limit=3, reference_time=AT)["hits"]
        assert hits[0]["content"].startswith("We signed the contract"), [(h["content"][:30], h["score"]) for h in hits]
        daily = next(h for h in hits if h["note_path"] == "Daily/2024-03-07.md")
        assert daily["breakdown"]["names_window_day"], "it names the day, but tells next to nothing of it"


def test_a_short_date_is_no_word_of_what_the_day_record_tells(vault: Path) -> None:
    """"# Thu, 7th Mar 2024 / - Gym." tells a quarter beyond its date, as the long form does:
    the weekday's and month's abbreviations and the ordinal day name a time. The breakdown
    carries what the score added (`WINDOW_PRESENCE` × names_window_day × telling)."""
    write(vault, "Daily/2024-03-07.md", "---\ndate: 2024-03-07\n---\n# Thu, 7th Mar 2024\n\n- Gym.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("What happened on 7 March?", limit=5, reference_time=AT)["hits"]
        daily = next(h for h in hits if h["note_path"] == "Daily/2024-03-07.md")
        assert daily["breakdown"]["names_window_day"] and daily["breakdown"]["telling"] == 0.25, daily["breakdown"]
