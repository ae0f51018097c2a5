"""Full-width Latin (what an East Asian keyboard types by default) and other compatibility
forms are searched as their plain letters, in the question and in the notes alike; an index
from before reads them anew once."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.entities.catalog import form_of
from vaultmind.index.lexical import term_counts, terms
from vaultmind.memory import Memory

from .conftest import write, write_chat
from .test_sync import _indexed_before


def test_full_width_and_ligatures_have_the_plain_words_terms() -> None:
    assert terms("ｂｕｄｇｅｔ ﬁle") == terms("budget file")
    assert term_counts("Ｔｈｅ ｂｕｄｇｅｔ") == term_counts("The budget")


def test_a_question_in_full_width_finds_the_note_and_its_entity(vault: Path) -> None:
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    write(vault, "notes/venue.md", "# Venue\n\nThe deposit for [[Harbor Hall]] is due; the budget holds.\n")
    entity = 'vaultmind: entity\nid: "org:harbor-hall"\nkind: org\ndisplay_name: Harbor Hall'
    write(vault, "entities/org/harbor-hall.md", f"---\n{entity}\n---\n# Harbor Hall\n\nEvent venue on the quay.\n")
    write(vault, "notes/other.md", "# Other\n\nA note about the projector.\n")
    write(vault, "notes/wide.md", "# Wide\n\nＴｈｅ ｆｌｏｒｉｓｔ ｑｕｏｔｅ arrived.\n")  # typed in full width
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = memory.query("search", {"query": "ｂｕｄｇｅｔ"})
        assert [h["note_path"] for h in found["hits"]][:1] == ["notes/venue.md"]
        walked = memory.query("walk", {"query": "Ｈａｒｂｏｒ Ｈａｌｌ deposit"})
        assert [e["id"] for e in walked["query"]["entities"]] == ["org:harbor-hall"]
        assert walked["hits"][0]["note_path"] == "notes/venue.md"
        names = memory.query("search_entities", {"query": "ｈａｒｂｏｒ ｈａｌｌ"})["hits"]
        assert names and names[0]["display_name"] == "Harbor Hall"
        assert memory.query("search", {"query": "florist quote"})["hits"][0]["note_path"] == "notes/wide.md"


def test_an_index_holding_full_width_words_is_rebuilt_once(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Migration 0038: postings written before hold the full-width word as its own term."""
    write(vault, "notes/wide.md", "# Wide\n\nＴｈｅ ｆｌｏｒｉｓｔ ｑｕｏｔｅ arrived.\n")
    old = "UPDATE postings SET term = 'ｆｌｏｒｉｓｔ' WHERE term = 'florist'"
    config = _indexed_before(vault, monkeypatch, "0038", then=[old])
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        assert [h["note_path"] for h in memory.search("florist", limit=3)["hits"]] == ["notes/wide.md"]


def test_an_ascii_index_is_not_rebuilt(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(vault, "notes/plain.md", "# Plain\n\nA note about the projector.\n")
    with Memory.open(_indexed_before(vault, monkeypatch, "0038")) as memory:
        assert memory.index.get_meta("needs_rebuild") is None


def test_a_name_typed_in_full_width_is_the_ascii_name(vault: Path) -> None:
    """A person written in full width in some messages and in ASCII in others is one entity,
    shown in plain letters though the full-width spelling is the more frequent, and a name
    search in ASCII finds it."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    wide = "Ａｌｉｃｅ Ｃｈｅｎ"
    write_chat(vault, "2026-03-02", [(wide, "The kiln is booked."), ("Bob Stone", "Great.")])
    write_chat(vault, "2026-03-03", [(wide, "Clay arrives Friday."), ("Bob Stone", "Fine.")])
    write_chat(vault, "2026-03-04", [("Alice Chen", "Glaze day."), ("Bob Stone", "Noted.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = memory.query("search_entities", {"query": "Alice"})["hits"]
        assert [(h["node_id"], h["display_name"], h["mentions"]) for h in found] == [
            ("person:alice-chen", "Alice Chen", 3)
        ]


def test_a_name_search_in_ascii_finds_an_entity_only_written_in_full_width(vault: Path) -> None:
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    write_chat(vault, "2026-03-02", [("Ａｌｉｃｅ Ｃｈｅｎ", "The kiln is booked."), ("Bob Stone", "Great.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        for query in ("Alice", "alice chen", "Ａｌｉｃｅ"):
            found = memory.query("search_entities", {"query": query})["hits"]
            assert [(h["node_id"], h["display_name"]) for h in found] == [("person:alice-chen", "Alice Chen")], query


def test_an_index_showing_a_full_width_entity_name_is_rebuilt_once(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Migration 0039: an entity row written before shows the full-width form."""
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    write_chat(vault, "2026-03-02", [("Alice Chen", "The kiln is booked."), ("Bob Stone", "Great.")])
    old = "UPDATE entities SET display_name = 'Ａｌｉｃｅ Ｃｈｅｎ' WHERE id = 'person:alice-chen'"
    config = _indexed_before(vault, monkeypatch, "0039", then=[old])
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        rows = memory.index.query("SELECT display_name FROM entities WHERE id = 'person:alice-chen'")
        assert rows == [("Alice Chen",)]


def test_an_index_of_plain_and_accented_entity_names_is_not_rebuilt(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    write_chat(vault, "2026-03-02", [("Zoë Müller", "The kiln is booked."), ("Alice Chen", "Great.")])
    with Memory.open(_indexed_before(vault, monkeypatch, "0039")) as memory:
        assert memory.index.get_meta("needs_rebuild") is None


def test_only_width_forms_are_folded_in_a_display_name() -> None:
    assert form_of("Ａｌｉｃｅ Ｃｈｅｎ") == "Alice Chen" and form_of("ｶﾌｪ Ｍｏｏｎ") == "カフェ Moon"
    assert form_of("Acme™") == "Acme™" and form_of("Zoë ﬁnch") == "Zoë ﬁnch"
