"""Entities a user would recognise: real notes through the real NER model, in a temp vault.

Skipped when the spaCy model is not installed (the rules tested here act on its guesses).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.entities import capitals, graph, registry
from vaultmind.entities.ner import NerEngine
from vaultmind.entities.notes import create_entity_notes
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory

from .conftest import write

BUDGET = """# Budget 2024

## Q2 launch

Total €18,000, approved by Helen Okafor on 11 March.

| Line | Amount | Note |
| --- | ---: | --- |
| Infrastructure | €2,100 | load test €1,200 |
| Press kit and launch video | €1,600 | |
| Contingency | €800 | only with Helen's OK |

## Tools and subscriptions

| Tool | Per month |
| --- | ---: |
| Newsletter | €19 |
"""

RUNBOOK = """# Tidepool launch runbook

Owner: Marco Ruiz. Last updated 7 March 2024.

| Date | What | Owner |
| --- | --- | --- |
| 2 April | TestFlight beta to 40 testers | Bob Stone |
| 9 April | Launch evening | Dana |

## Contacts

- Finance (invoices, deposit): Helen Okafor, helen@fernhill.example
"""

HELEN = "Helen Okafor <helen@fernhill.example>"
ALICE = "Alice Chen <alice@fernhill.example>"


def _email(name: str, messages: list[tuple[str, str]]) -> str:
    meta = SourceMeta("email", f"mbox:fernhill/{name}", f"fernhill/{name}", name)
    return render_source_note(
        meta,
        [Message(f"m{i}", a, f"2024-03-0{i + 1}T09:00:00Z", t, subject=name) for i, (a, t) in enumerate(messages)],
    )


@pytest.fixture
def mem(vault: Path) -> Iterator[Memory]:
    if not NerEngine().available:
        pytest.skip(NerEngine().status()["message"])
    write(vault, "Budget 2024.md", BUDGET)
    write(vault, "Runbook.md", RUNBOOK)
    write(vault, "sources/email/hall.md", _email("hall", [
        ("Dana Whitfield <dana@hall.example>", "Hi Alice,\n\nThe Loft is held for you.\nHire fee: €4,200 including AV and bar staff.\n\nBest,\nDana"),
        (ALICE, "Please book the 23rd. Helen Okafor from our finance team will pay the deposit today."),
    ]))  # fmt: skip
    write(vault, "sources/email/budget.md", _email("budget", [
        (ALICE, "Hi Helen,\n\nThe Q2 launch budget is attached."),
        (HELEN, "Approved.\n\nHelen"),
    ]))  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        yield memory


def _ids(mem: Memory) -> set[str]:
    return {str(r[0]) for r in mem.index.query("SELECT id FROM entities")}


def test_a_word_capitalised_by_its_place_is_no_entity(mem: Memory) -> None:
    """Headings, table cells and labels capitalise ordinary words: the model's "Tools",
    "Line", "Infrastructure", "Owner" and the "Hire" of "Hire fee:" are no entities, while the
    people named in the same places stay."""
    ids = _ids(mem)
    for junk in ("person:tools", "person:line", "org:infrastructure", "org:press", "org:newsletter",
                 "org:owner", "org:date", "person:hire"):  # fmt: skip
        assert junk not in ids
    assert {"person:marco-ruiz", "person:bob-stone", "person:dana"} <= ids


def test_a_person_the_model_reads_as_a_place_gets_one_entity(vault: Path, mem: Memory) -> None:
    """Helen Okafor writes from her address, and the model reads her name as a place in three
    notes: counted together, her entity note is written, and then her name, her first name
    and her address all resolve to her."""
    before = {"place:helen-okafor", "person:helen", "email:helen@fernhill.example"}
    assert before <= _ids(mem)  # the model's readings, before her note exists
    assert "entities/person/helen-okafor.md" in create_entity_notes(mem).paths
    ids = _ids(mem)
    assert not before & ids
    leaves = mem.index.query(
        "SELECT DISTINCT note_path FROM occurrences WHERE entity_id = 'person:helen-okafor' ORDER BY 1"
    )
    assert [r[0] for r in leaves] == [
        "Budget 2024.md", "Runbook.md", "sources/email/budget.md", "sources/email/hall.md"
    ]  # fmt: skip


def test_an_index_derived_with_older_rules_is_derived_again(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """New resolution rules (`registry.RULES`) re-derive every leaf on the next sync, though no
    note changed: the junk the older rules found leaves the index (a new registry digest alone
    re-derived only the leaves whose names had changed, here none)."""
    if not NerEngine().available:
        pytest.skip(NerEngine().status()["message"])
    write(vault, "Budget 2024.md", BUDGET)
    write(vault, "entities/person/bob-stone.md", "---\nid: person:bob-stone\ndisplay_name: Bob Stone\n---\n# Bob Stone\n")
    monkeypatch.setattr(registry, "RULES", registry.RULES - 1)
    monkeypatch.setattr(graph, "RULES", registry.RULES, raising=False)
    monkeypatch.setattr(capitals, "_weak_guess", lambda *args: False)  # the rules before
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        assert "org:infrastructure" in _ids(memory)
    monkeypatch.undo()
    with Memory.open(config) as memory:
        memory.sync()
        assert "org:infrastructure" not in _ids(memory)


def test_a_name_the_same_text_gives_a_person_in_full_is_that_person(vault: Path) -> None:
    """Within one text, the model's "Priya" beside "Priya Natarajan" (read as an organization)
    is Priya Natarajan, and "Helen Okafor" read as a place in a message Helen Okafor wrote is
    her — no entity note needed."""
    if not NerEngine().available:
        pytest.skip(NerEngine().status()["message"])
    write(vault, "Venue.md", "Hi Marco, I talked to Priya Natarajan yesterday. Priya says the venue is fine.\n")
    write(vault, "sources/email/deposit.md", _email("deposit", [
        (HELEN, "Approved. Helen Okafor from finance will pay the deposit today."),
    ]))  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        ids = _ids(memory)
    assert {"person:priya-natarajan", "person:helen-okafor"} <= ids
    assert not {"org:priya", "place:helen-okafor"} & ids


FAMILY = """# Family

## Noah swimming lessons

Tuesdays at five, the pool on Elm Street.

## Visits

Auntie Lin is coming on Sunday with Uncle Bob.

| Service | Vendor | Per month |
| --- | --- | --- |
| Hosting | Hetzner | €40 |
| Design | Figma | €45 |
"""


def test_family_notes_name_their_people_and_vendors_once(vault: Path) -> None:
    """A first name leading a heading is a person, a kinship title is part of no id ("Auntie
    Lin" in one note and "Lin" in another are one person), and a vendor in a table's value
    column is an organization, while nothing is read across the cells."""
    if not NerEngine().available:
        pytest.skip(NerEngine().status()["message"])
    write(vault, "Family.md", FAMILY)
    write(vault, "Cake.md", "Lin will bring the cake, she said.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        ids = _ids(memory)
        lin = memory.index.query("SELECT note_path FROM occurrences WHERE entity_id = 'person:lin' ORDER BY 1")
    assert {"person:noah", "person:lin", "person:bob", "org:figma"} <= ids
    assert [r[0] for r in lin] == ["Cake.md", "Family.md"]
    assert not {i for i in ids if "auntie" in i or "|" in i or "hosting" in i}


def _chat(name: str, messages: list[tuple[str, str]]) -> str:
    meta = SourceMeta("chat", f"slack:team/{name}", f"team/{name}", name)
    return render_source_note(
        meta,
        [Message(f"m{i}", a, f"2024-03-0{i + 1}T09:00:00Z", t) for i, (a, t) in enumerate(messages)],
    )


def test_a_first_name_in_a_conversation_is_the_author_of_that_name(vault: Path) -> None:
    """"Dana" and "Marco" in one message are Dana Whitfield and Marco Ruiz, who wrote other
    messages of the conversation ("Helen" even read as an organization); in another
    conversation without them, "Dana" stays a first name. A message added later by its
    author settles the name in the older messages too, as a cold rebuild would."""
    if not NerEngine().available:
        pytest.skip(NerEngine().status()["message"])
    write(vault, "sources/chat/venue.md", _chat("venue", [
        ("Dana Whitfield", "The Loft is held for the 23rd."),
        ("Alice Chen", "I talked to Dana yesterday about the deposit. Marco said the venue is fine."),
        ("Bob Stone", "I talked to Dana yesterday about the deposit."),
        ("Marco Ruiz", "Confirmed."),
    ]))  # fmt: skip
    write(vault, "sources/chat/other.md", _chat("other", [
        ("Alice Chen", "I talked to Dana yesterday about the deposit."),
        ("Bob Stone", "Helen will pay the deposit on Monday."),
    ]))  # fmt: skip
    config = load_config(vault, embed_provider="none")

    def people(memory: Memory, note: str) -> set[str]:
        rows = memory.index.query("SELECT entity_id FROM occurrences WHERE note_path = ?", [note])
        return {str(r[0]) for r in rows}

    with Memory.open(config) as memory:
        memory.sync()
        venue, other = people(memory, "sources/chat/venue.md"), people(memory, "sources/chat/other.md")
        assert {"person:dana-whitfield", "person:marco-ruiz"} <= venue
        assert not {"person:dana", "person:marco"} & venue
        assert "person:dana" in other and "org:helen" in other
        shown = memory.index.query("SELECT display_name FROM entities WHERE id = 'person:dana-whitfield'")
        assert shown == [("Dana Whitfield",)], "shown by her own name, though her first name is more frequent"
        write(vault, "sources/chat/other.md", _chat("other", [
            ("Alice Chen", "I talked to Dana yesterday about the deposit."),
            ("Bob Stone", "Helen will pay the deposit on Monday."),
            ("Helen Okafor", "Paid."),
        ]))  # fmt: skip
        memory.sync()
        assert {"person:helen-okafor"} <= people(memory, "sources/chat/other.md")
        assert "org:helen" not in people(memory, "sources/chat/other.md")
        after = sorted(memory.index.query("SELECT entity_id, leaf_id, surface FROM occurrences"))
    with Memory.open(config) as memory:
        memory.reindex()
        assert sorted(memory.index.query("SELECT entity_id, leaf_id, surface FROM occurrences")) == after


def test_an_entity_note_for_a_conversations_author_moves_her_first_name_too(vault: Path) -> None:
    """A new entity note claiming an author's address (under another id and name) re-derives
    the messages where the model's "Dana" was settled by that author, not only hers: the
    index stays what a cold rebuild gives."""
    if not NerEngine().available:
        pytest.skip(NerEngine().status()["message"])
    write(vault, "sources/email/loft.md", _email("loft", [
        ("Dana Whitfield <dana@hall.example>", "The Loft is held for the 23rd."),
        (ALICE, "I talked to Dana yesterday about the deposit."),
    ]))  # fmt: skip
    for i in range(6):  # a vault where the change is a few leaves: re-derived one by one
        write(vault, f"Day {i}.md", f"Walked {i} km.\n")
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        assert "person:dana-whitfield" in _ids(memory) and "person:dana" not in _ids(memory)
        write(vault, "entities/person/dw.md", "---\nid: person:dw\ndisplay_name: DW\nemails: [dana@hall.example]\n---\n# DW\n")
        memory.sync()
        after = sorted(memory.index.query("SELECT entity_id, leaf_id, surface FROM occurrences"))
        assert "person:dana-whitfield" not in {r[0] for r in after}
    with Memory.open(config) as memory:
        memory.reindex()
        assert sorted(memory.index.query("SELECT entity_id, leaf_id, surface FROM occurrences")) == after


def test_a_mail_systems_bounce_is_written_by_its_address_not_a_person(vault: Path) -> None:
    """Bounces from "Mail Delivery Subsystem <MAILER-DAEMON@…>" and a postmaster are a mail
    server's: their authors are the addresses, no person gets a note for the robot's name,
    and Dana, who writes from her own address in the same thread, stays a person."""
    robot = "Mail Delivery Subsystem <MAILER-DAEMON@mail.example>"
    for i in range(3):
        write(vault, f"sources/email/bounce{i}.md", _email(f"bounce{i}", [
            ("Dana Whitfield <dana@hall.example>", "The Loft is held for the 23rd."),
            (robot, "Delivery to the following recipient failed permanently: ops@hall.example"),
            ("Postmaster <postmaster@hall.example>", "Your message could not be delivered."),
        ]))  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        ids = _ids(memory)
        assert {"email:mailer-daemon@mail.example", "email:postmaster@hall.example"} <= ids
        assert not {"person:mail-delivery-subsystem", "person:postmaster"} & ids
        assert create_entity_notes(memory).paths == ["entities/person/dana-whitfield.md"]
