"""A to-do's verb opening a sentence is no part of the name after it ("Tell Luca to pack light"),
and an entity note vaultmind wrote for such a name before is taken back out of the vault while
it is still as vaultmind wrote it (`common_words.after_leading_verb`, `entities/retire.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.entities.extract import clean_ner_span
from vaultmind.entities.ner import NerEngine
from vaultmind.entities.notes import render_entity_note
from vaultmind.memory import Memory

from .conftest import write


@pytest.mark.parametrize(
    ("text", "hit", "label", "kept"),
    [
        ("Tell Luca to pack light.", "Tell Luca", "PERSON", ("Luca", "person")),
        ("Rain all day. Remind Maya about the tickets.", "Remind Maya", "GPE", ("Maya", "person")),
        ("Ping Sarah about the invoice.", "Ping Sarah", "PERSON", ("Sarah", "person")),
        ("Email Jonathan the slides.", "Email Jonathan", "PERSON", ("Jonathan", "person")),
        ("- Call Dana Whitfield about the hall.", "Call Dana Whitfield", "PERSON", ("Dana Whitfield", "person")),
        ("Merry Christmas to Aunt Rosa.", "Merry", "PERSON", None),
        # inside a sentence, or a title: the word is the name's own
        ("I used the Ask Jeeves site.", "Ask Jeeves", "ORG", ("Ask Jeeves", "org")),
        ("Meet Joe Black is on tonight.", "Meet Joe Black", "WORK_OF_ART", ("Meet Joe Black", "work")),
        # an organization's name may open with such a word: never trimmed from an organization
        ("Contact Energy raised our power bill again.", "Contact Energy", "ORG", ("Contact Energy", "org")),
        ("Ring Central sent the invoice.", "Ring Central", "ORG", ("Ring Central", "org")),
    ],
)
def test_a_todo_verb_opening_a_sentence_is_no_part_of_the_name(
    text: str, hit: str, label: str, kept: tuple[str, str] | None
) -> None:
    start = text.index(hit)
    span = clean_ner_span(text, start, start + len(hit), label)
    assert ((span.surface, span.kind) if span is not None else None) == kept


DIARY = [
    "Lunch was fine. Ask Priya about the flat keys.\nPriya Shah moved in last week.",
    "Busy day at work. Ask Priya whether the landlord called.",
    "Gym in the morning. Ask Priya if she wants the old sofa.",
    "Rain all day. Tell Luca to pack light. Remind Maya about the tickets.",
    "Shopping list done. Tell Luca the train leaves at six. Remind Maya to bring the charger.",
    "Quiet evening. Tell Luca thanks for dinner. Remind Maya about Sunday.",
]


def _diary(vault: Path) -> None:
    for day, text in enumerate(DIARY, start=2):
        write(vault, f"Journal/2026-11-0{day}.md", f"---\ndate: 2026-11-0{day}\n---\n{text}\n")


def test_todo_lines_name_the_person_and_write_no_note_of_the_verb(vault: Path) -> None:
    """Six diary notes of to-do lines, through the real model: "Tell Luca" is Luca, "Remind
    Maya" (read as a place) is Maya, and no entity note is written for "Tell Luca"."""
    if not NerEngine().available:
        pytest.skip(NerEngine().status()["message"])
    _diary(vault)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert memory.enrich()["entity_notes"] == []
        ids = {str(r[0]) for r in memory.index.query("SELECT DISTINCT entity_id FROM occurrences")}
    assert {"person:luca", "person:maya"} <= ids
    assert not any(i.startswith(("person:tell", "place:remind", "person:remind")) for i in ids)
    assert not (vault / "entities").exists()


def test_a_note_written_for_a_todo_verb_before_is_removed_unless_edited(vault: Path) -> None:
    """Notes vaultmind wrote for "Tell Luca" and "Ping Sarah" before: the one still as written goes
    (and is not written again), the one given an alias is the user's and stays, and so does a note
    of the same text vaultmind never wrote."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    _diary(vault)
    tell = write(vault, "entities/person/tell-luca.md", render_entity_note("person:tell-luca", "person", "Tell Luca", []))
    edited = render_entity_note("person:ping-sarah", "person", "Ping Sarah", []).replace("aliases: []", "aliases: [Sarah]")
    ping = write(vault, "entities/person/ping-sarah.md", edited)
    mine = write(vault, "entities/person/ask-priya.md", render_entity_note("person:ask-priya", "person", "Ask Priya", []))
    write(vault, "entities/.created", "person:ping-sarah\nperson:tell-luca\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert memory.enrich()["entity_notes_removed"] == ["entities/person/tell-luca.md"]
        assert memory.enrich()["entity_notes"] == []
        ids = {str(r[0]) for r in memory.index.query("SELECT id FROM entities")}
        paths = {str(r[0]) for r in memory.index.query("SELECT path FROM notes")}
    assert not tell.exists() and "entities/person/tell-luca.md" not in paths
    assert "person:tell-luca" not in ids
    assert ping.read_text(encoding="utf-8") == edited and "person:ping-sarah" in ids
    assert mine.exists() and "person:ask-priya" in ids
    assert (vault / "entities" / ".created").read_text(encoding="utf-8") == "person:ping-sarah\nperson:tell-luca\n"


def test_an_organizations_note_whose_name_opens_with_such_a_verb_stays(vault: Path) -> None:
    """A note vaultmind wrote for the organization "Contact Energy", still as written, is no
    to-do's name read wrongly: it stays (only a person's note named so is taken back)."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    write(vault, "Journal/a.md", "---\ndate: 2026-11-02\n---\nThe bill from Contact Energy came.\n")
    note = write(vault, "entities/org/contact-energy.md", render_entity_note("org:contact-energy", "org", "Contact Energy", []))
    write(vault, "entities/.created", "org:contact-energy\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert memory.enrich()["entity_notes_removed"] == []
        ids = {str(r[0]) for r in memory.index.query("SELECT entity_id FROM occurrences")}
    assert note.exists() and ids == {"org:contact-energy"}
