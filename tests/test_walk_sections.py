"""walk: sections of documents and notes of yours among short chat messages — their length
weighed against sections', a document's note score by its best section, and the headings that
say what a section is about."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vaultmind.config import load_config
from vaultmind.index.lexical import bm25, terms
from vaultmind.memory import Memory
from vaultmind.retrieval.headings import heading_shares
from vaultmind.retrieval.signals import NOTE_TOP, note_shares

from .conftest import write, write_chat

_CHAT = [
    ("Alice", "Morning all! The launch plan is in the project note. Target is still Tuesday 9 April."),
    ("Marco", "Great. Press kit draft by Friday."),
    ("Bob", "Realistically I need about 8 more working days."),
    ("Marco", "Launching without the Pro tier kills the launch story."),
    ("Alice", "OK, let's not decide in chat. We decide at Thursday's launch sync."),
    ("Bob", "Will do."),
    ("Priya", "Also: App Store review took 6 days last time. Worth planning for."),
    ("Alice", "Good point, adding it to the risks."),
]

_RUNBOOK = """# Tidepool launch runbook

Owner: Marco Ruiz. Last updated 7 March 2024, after the launch moved from 9 to 23 April. The
timeline below lists who ships what in the weeks before the launch, and the checklist what we
do on the day itself, hour by hour, from the store listing to the newsletter.

## Launch day checklist

1. 13:30 UTC: set the release to "Ready for Sale" in App Store Connect.
2. Buy a Pro subscription on a real device and check the receipt.
3. 14:00 UTC: publish the blog post and the press kit; send the newsletter.
4. Watch the error dashboard and the subscription funnel for two hours.
5. Post the launch tweet thread and reply to the first reviews.

## Rollback

If subscription purchases fail after launch, hide the paywall with the remote flag (free
features keep working) and ship a hotfix. Do not pull the app from sale.

## Contacts

- Venue: Dana Whitfield, Harbor Hall, for the evening and the catering
- Finance, invoices and the deposit: Helen Okafor
- Press and the journalists under embargo: Marco Ruiz
"""

_MEETING = """# Launch sync, 7 March 2024

Weekly sync for the Tidepool launch. Started 14:00 UTC, 45 minutes, in the small room.

## Notes

- Bob: the payments migration takes 7 to 9 working days, plus two days of load testing, and
  renewals on the old payments library stop working after 1 April, so it cannot wait.
- Priya: onboarding is 4 of 6 screens done; she wants usability tests with five sailors.
- Marco: shipping without the Pro tier weakens the story; he prefers moving the date.
- Alice: the venue deposit becomes non-refundable on 15 March, so the venue has to move this
  week. The budget stays at 18,000 euros for the quarter, ads and the evening included.

## Decisions

- Move the public launch from 9 April to Tuesday 23 April 2024.
- Code freeze and App Store submission on 16 April.
- Press embargo lifts on 23 April at 14:00 UTC.
"""


SECTION_TOKENS = 128  # a chunk budget that keeps the meeting's decisions a section of their own


def _vault(vault: Path) -> None:
    write_chat(vault, "2024-03-04", _CHAT)
    write(vault, "Runbook.md", _RUNBOOK)
    write(vault, "Meetings/2024-03-07 Launch sync.md", _MEETING)


def test_bm25_weighs_a_sections_length_against_sections_and_a_messages_against_messages(vault: Path) -> None:
    """A memory of short messages made every section of a document "long": the runbook section
    that holds the question's rarest word lost to a short message holding its commonest."""
    _vault(vault)
    with Memory.open(load_config(vault, embed_provider="none", chunk_tokens=SECTION_TOKENS)) as memory:
        memory.sync()
        qterms = terms("rollback plan")
        ranked = memory.leaves.search(qterms, 10)
        rows = memory.leaves.rows([leaf_id for leaf_id, _ in ranked])
        assert "## Rollback" in rows[ranked[0][0]]["text"], [rows[i]["text"][:40] for i, _ in ranked]
        sql = bm25(memory.index.con, qterms, limit=10)
        assert [i for i, _ in sql] == [i for i, _ in ranked], "the SQL definition ranks alike"
        assert np.allclose([s for _, s in sql], [s for _, s in ranked])


def test_a_section_whose_heading_the_question_names_comes_first(vault: Path) -> None:
    _vault(vault)
    with Memory.open(load_config(vault, embed_provider="static", chunk_tokens=SECTION_TOKENS)) as memory:
        memory.sync()
        hits = memory.walk("What is the rollback plan?", limit=5)["hits"]
        assert "## Rollback" in hits[0]["content"], [h["content"][:40] for h in hits]
        assert hits[0]["breakdown"]["heading"] > 0
        assert all(h["breakdown"]["heading"] == 0 for h in hits if h.get("author")), "messages have no headings"


def test_a_section_is_found_by_its_notes_title(vault: Path) -> None:
    """The Decisions section never says "launch sync": its note's title does."""
    _vault(vault)
    with Memory.open(load_config(vault, embed_provider="static", chunk_tokens=SECTION_TOKENS)) as memory:
        memory.sync()
        hits = memory.walk("What did we decide at the launch sync?", limit=5)["hits"]
        assert hits[0]["note_path"] == "Meetings/2024-03-07 Launch sync.md", [h["content"][:40] for h in hits]
        decisions = next(h for h in hits if h["content"].startswith("## Decisions"))
        chat = next(h for h in hits if h.get("author") == "Alice" and "launch sync" in h["content"])
        assert decisions["score"] > chat["score"], "the decisions, not the message that says they are to come"
        assert decisions["breakdown"]["heading"] == 1.0, "decide, launch and sync: its headings hold them all"
        # a title that names something else as well does not count ("Tidepool launch runbook")
        other = memory.walk("When is the launch?", limit=10)["hits"]
        assert all(h["breakdown"]["heading"] == 0 for h in other if h["note_path"] == "Runbook.md")


def test_a_documents_note_score_is_its_best_section() -> None:
    values = np.array([0.9, 0.6, 0.3, 0.5, 0.0])
    notes = np.array([0, 0, 0, 1, 1], dtype=np.int32)
    plain = note_shares(values, notes)
    assert np.isclose(plain[3], (0.5 / NOTE_TOP) / (1.8 / NOTE_TOP)), "a note of messages: the mean of its best three"
    sections = np.array([False, False, False, True, True])
    shares = note_shares(values, notes, sections)
    assert np.isclose(shares[0], 1.8 / 1.8) and np.isclose(shares[3], 0.5 * NOTE_TOP / 1.8), "a document: its best section, thrice"


def test_a_section_earns_no_context_from_the_section_beside_it(vault: Path) -> None:
    """The message after a strong match often answers it; the section after a strong section is
    about something else (the runbook's contacts had risen with its checklist)."""
    _vault(vault)
    with Memory.open(load_config(vault, embed_provider="static", chunk_tokens=SECTION_TOKENS)) as memory:
        memory.sync()
        hits = memory.walk("What is on the launch day checklist?", limit=20)["hits"]
        sections = [h for h in hits if h["note_path"] == "Runbook.md"]
        assert sections and sections[0]["content"].startswith("## Launch day checklist")
        assert all(h["breakdown"]["context"] == 0 for h in sections), [(h["content"][:20], h["breakdown"]["context"]) for h in sections]
        chat = memory.walk("Who said App Store review took 6 days?", limit=20)["hits"]
        assert any(h["breakdown"]["context"] > 0 for h in chat if h.get("author")), "messages still earn it"


def test_a_sections_headings_are_its_titles_and_heading_lines_not_a_code_comment() -> None:
    from vaultmind.retrieval.headings import heading_topic, headings

    text = "## Risks\n\n- review takes 6 days\n\n## Release\n\n```sh\n# cut the release build\n./release.sh\n```\n"
    row = {"author": None, "note_kind": "user", "title": "Tidepool launch", "heading_path": ["Tidepool launch", "Risks"], "text": text}
    assert headings(row) == ("Tidepool launch", "Tidepool launch", "Risks", "Risks", "Release")
    assert headings({**row, "author": "Bob Stone"}) == (), "a message has none"
    assert headings({**row, "note_kind": "entity"}) == (), "nor an entity note"
    assert heading_topic("Launch sync, 7 March 2024") == frozenset(terms("launch sync"))


_TRIP = """# Trip to Porto

## Plan
Fly from Manchester on 18 July, back on 24 July. Stay at the Casa do Rio apartment.

## Packing
Sunscreen, the grey linen shirt, adapter plug, the camera.

## Budget
Flights 280 pounds, apartment 640 pounds, spending money 400.
"""


def test_a_generic_heading_beside_what_its_section_never_says_is_no_heading_named(vault: Path) -> None:
    """"What is my plan for Saturday?" names the trip note's "Plan", but the note never says
    Saturday: the heading was a word shared, and it took the first place from the message."""
    write_chat(vault, "2024-05-02", [("Priya", "Are we still on for Saturday?"), ("Sam", "Yes! 7pm at the Italian place")])
    write(vault, "Trip to Porto.md", _TRIP)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("What is my plan for Saturday?", limit=5)["hits"]
        assert hits[0].get("author") == "Priya", [h["content"][:40] for h in hits]
        trip = next(h for h in hits if h["note_path"] == "Trip to Porto.md")
        assert trip["breakdown"].get("heading", 0) == 0
        # the heading the question names, all the rest of it said in the section: still named
        budget = memory.walk("What is the budget for the flights?", limit=5)["hits"][0]
        assert budget["note_path"] == "Trip to Porto.md" and budget["breakdown"]["heading"] > 0


_EMAIL = """---
vaultmind: source
kind: email
source_id: "email:mail"
scope: mail/pycon-prague-cost
title: PyCon Prague cost
subject: PyCon Prague cost
participants:
  - "Lena Fischer <lena@work.example>"
time_start: "2024-05-13T10:00:00Z"
time_end: "2024-05-13T10:00:00Z"
messages: 1
---
# PyCon Prague cost

> [!email] Lena Fischer <lena@work.example> · 2024-05-13 10:00
> Hi Sam,
>
> The PyCon ticket is 350 euros, the hotel 3 nights 420 euros, and the flight 160 euros. Total 930 euros.
> Can you approve it by Friday?
>
> Lena
> %% vaultmind id="pycon1@work.example" at="2024-05-13T10:00:00Z" author="Lena Fischer <lena@work.example>" ref="mid:pycon1@work.example" subject="PyCon Prague cost" to="Sam Carter <sam@example.com>" %%

^m-pycon1-work-example
"""

_ONE_TO_ONE = """# One-to-one with Lena, 9 May 2024

Me: How is the migration going?
Lena: Slow. The billing service still calls the old API.
Me: What do you need from me?
Lena: Two more days and someone from the data team to review the schema.
Lena: Also, I want to go to the PyCon conference in Prague in June.
Me: Fine, send me the cost.
"""


def test_an_emails_length_is_weighed_against_emails_not_chat_lines(vault: Path) -> None:
    """Among short chat lines an email read as a long message: the note that only names PyCon
    outranked the email that says what its hotel costs."""
    write_chat(vault, "2024-05-02", [(who, text) for who, text in _CHAT])
    write(vault, "sources/email/mail/pycon/2024-05-13-pycon-prague-cost.md", _EMAIL)
    write(vault, "Meetings/2024-05-09 One-to-one with Lena.md", _ONE_TO_ONE)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        qterms = terms("pycon hotel")
        ranked = memory.leaves.search(qterms, 10)
        sql = bm25(memory.index.con, qterms, limit=10)
        assert [i for i, _ in sql] == [i for i, _ in ranked], "the SQL definition ranks alike"
        assert np.allclose([s for _, s in sql], [s for _, s in ranked])
        hits = memory.walk("How much is the PyCon hotel?", limit=5)["hits"]
        assert "hotel 3 nights" in hits[0]["content"], [h["content"][:40] for h in hits]


def test_a_heading_that_outweighs_what_its_section_never_says_counts_in_full() -> None:
    """"What is the rollback plan?": the runbook's "Rollback" never says "plan". Taking the
    missing word's share off the heading's had left the section a third of its bonus, and the
    chat's "Worth planning for." ranked above it on the demo memory. A heading that outweighs
    the missing words counts in full; one that does not ("Plan" beside a missing "Saturday")
    counts nothing."""
    idf = {"rollback": 3.0, "plan": 1.0, "saturday": 3.0}.__getitem__
    runbook = {"note_kind": "source", "title": "Launch runbook", "heading_path": ["Rollback"], "text": "Hide the paywall and ship a hotfix."}
    trip = {"note_kind": "user", "title": "Trip to Porto", "heading_path": ["Plan"], "text": "Fly to Porto, walk the river."}
    assert heading_shares(terms("rollback plan"), {"runbook": runbook}, idf) == {"runbook": 0.75}
    assert heading_shares(terms("plan saturday"), {"trip": trip}, idf) == {}
