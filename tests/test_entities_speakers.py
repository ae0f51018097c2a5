"""The people of a conversation as its speakers call each other: real chat notes through the
real NER model, in a temp vault.

Skipped when the spaCy model is not installed (the rules tested here act on its guesses).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.entities.ner import NerEngine
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory

from .conftest import write


@pytest.fixture(autouse=True)
def _needs_ner() -> None:
    if not NerEngine().available:
        pytest.skip(NerEngine().status()["message"])


def _chat(name: str, messages: list[tuple[str, str]]) -> str:
    meta = SourceMeta("chat", f"whatsapp:{name}", name, name)
    return render_source_note(
        meta,
        [Message(f"m{i}", a, f"2024-03-0{i + 1}T09:00:00Z", t) for i, (a, t) in enumerate(messages)],
    )


def _people(memory: Memory, note: str) -> set[str]:
    rows = memory.index.query("SELECT entity_id FROM occurrences WHERE note_path = ?", [note])
    return {str(r[0]) for r in rows}


def test_a_short_form_of_a_speakers_name_is_that_speaker(vault: Path) -> None:
    """"Mel" and "Luci", said in a conversation of Lucinda and Melissa, are the two of them;
    in a conversation without a Melissa, "Mel" stays someone of her own; and "Jo", which
    shortens both John and Jolene, is neither of them. A cold rebuild finds the same."""
    write(vault, "sources/chat/art.md", _chat("art", [
        ("Lucinda", "Hey Mel! So glad you called! How have you been?"),
        ("Melissa", "Thanks, Luci! The painting is for my sister."),
    ]))  # fmt: skip
    write(vault, "sources/chat/other.md", _chat("other", [
        ("Bob Stone", "Hey Mel! So glad you called! How have you been?"),
        ("Alice Chen", "Fine, thanks."),
    ]))  # fmt: skip
    write(vault, "sources/chat/both.md", _chat("both", [
        ("John", "Jo, you won't believe it, I painted the shed blue"),
        ("Jolene", "Wow, that sounds fun."),
    ]))  # fmt: skip
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        art = _people(memory, "sources/chat/art.md")
        assert art == {"person:lucinda", "person:melissa"}
        assert "person:mel" in _people(memory, "sources/chat/other.md")
        assert "person:jo" in _people(memory, "sources/chat/both.md")
        after = sorted(memory.index.query("SELECT entity_id, leaf_id, surface FROM occurrences"))
    with Memory.open(config) as memory:
        memory.reindex()
        assert sorted(memory.index.query("SELECT entity_id, leaf_id, surface FROM occurrences")) == after


def test_a_speaker_joining_later_settles_her_short_form_in_older_messages(vault: Path) -> None:
    """"Mel" in an older message becomes Melissa once Melissa writes in the conversation, as a
    cold rebuild of the final note reads it."""
    first = [("Lucinda", "Hey Mel! So glad you called! How have you been?"), ("Bob Stone", "Fine, thanks.")]
    write(vault, "sources/chat/art.md", _chat("art", first))
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        assert "person:mel" in _people(memory, "sources/chat/art.md")
        write(vault, "sources/chat/art.md", _chat("art", [*first, ("Melissa", "I'm swamped with the kids.")]))
        memory.sync()
        people = _people(memory, "sources/chat/art.md")
        assert "person:melissa" in people and "person:mel" not in people
        after = sorted(memory.index.query("SELECT entity_id, leaf_id, surface FROM occurrences"))
    with Memory.open(config) as memory:
        memory.reindex()
        assert sorted(memory.index.query("SELECT entity_id, leaf_id, surface FROM occurrences")) == after


def test_a_greeting_before_a_speakers_name_a_cheer_and_a_gladness_are_no_entities(vault: Path) -> None:
    """"Congrats Jolene!" and "Yep Emil, …" call the two speakers, "Woohoo" cheers and "Glad
    you …" is glad: no person "Congrats Jolene" or "Glad", no organization "Woohoo". In a text that is no conversation of
    theirs a word of speech before a name is left out of it all the same ("Yep Ben": Ben)."""
    write(vault, "sources/chat/move.md", _chat("move", [
        ("Emil", "Congrats Jolene! That's huge."),
        ("Jolene", "Woohoo, thanks Emil! The cake turned out great."),
        ("Jolene", "Woohoo! We finally got the keys to the flat."),
        ("Jolene", "Yep Emil, the hike was long."),
        ("Emil", "That's so touching! Glad you have that support."),
    ]))  # fmt: skip
    write(vault, "sources/chat/other.md", _chat("other", [
        ("Bob Stone", "Yep Ben, the hike was long."),
        ("Alice Chen", "Fine, thanks."),
    ]))  # fmt: skip
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        assert _people(memory, "sources/chat/move.md") == {"person:jolene", "person:emil"}
        assert "person:ben" in _people(memory, "sources/chat/other.md")


def test_a_speaker_spoken_of_by_first_name_is_that_speaker_where_the_model_tags_nothing(vault: Path) -> None:
    """A chat day of Maya Patel, Luca Romano and Sean O'Brien: each first name the others speak
    of ("Luca's place", "Sean is coming", "to Sean", "Maya already booked") is that speaker, model
    or not; a name that calls the reader ("Thanks Luca", "Hey Maya,") is left to the model; and a
    first name two speakers share stays unresolved. A cold rebuild finds the same."""
    maya, luca, sean = "Maya Patel", "Luca Romano", "Sean O'Brien"
    write(vault, "sources/chat/crew.md", _chat("crew", [
        (maya, "Are we still on for Saturday at Luca's place?"),
        (luca, "Yes! Bring snacks. Sean is coming too."),
        (maya, "Happy birthday to Sean btw!!"),
        (luca, "I think Maya already booked a taxi."),
        (sean, "Thanks Luca. Hey Maya, got the photos?"),
    ]))  # fmt: skip
    write(vault, "sources/chat/jos.md", _chat("jos", [
        ("Jo Black", "I think Jo already booked a taxi."),
        ("Jo White", "Good."),
    ]))  # fmt: skip
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        rows = memory.index.query(
            "SELECT l.text, list(o.entity_id) FROM leaves l JOIN occurrences o ON o.leaf_id = l.id GROUP BY l.text"
        )
        named = {text.strip(): set(ids) for text, ids in rows}
        assert "person:luca-romano" in named["Are we still on for Saturday at Luca's place?"]
        assert "person:sean-o-brien" in named["Yes! Bring snacks. Sean is coming too."]
        assert "person:sean-o-brien" in named["Happy birthday to Sean btw!!"]
        assert "person:maya-patel" in named["I think Maya already booked a taxi."]
        assert "person:jo-white" not in named["I think Jo already booked a taxi."]
        after = sorted(memory.index.query("SELECT entity_id, leaf_id, surface FROM occurrences"))
    with Memory.open(config) as memory:
        memory.reindex()
        assert sorted(memory.index.query("SELECT entity_id, leaf_id, surface FROM occurrences")) == after
