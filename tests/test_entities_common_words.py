"""Words of speech and a conversation's common words that the NER model takes for names
(`entities/common_words.py`): real chat notes through the real NER model, in a temp vault.

Skipped when the spaCy model is not installed (the rules tested here act on its guesses).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vaultmind.config import load_config
from vaultmind.entities import extract, graph
from vaultmind.entities.ner import NerEngine
from vaultmind.memory import Memory

from .conftest import write, write_chat

# In each, the model reads a word of speech or a common word as a name ("Wanna" and "Nah" a
# person, "Dance" an organization), and the conversation writes "dance" in lower case.
STUDIO = [
    ("Arne", "Wanna see my moves next Friday? Can't wait!"),
    ("Wilma", "Nah, not yet."),
    ("Arne", "Dance is how I unwind too."),
    ("Wilma", "Wanna grab lunch tomorrow?"),
    ("Arne", "Dance is the best therapy there is."),
    ("Wilma", "I went to a dance class with the kids."),
    ("Arne", "Dance is how I met half my friends."),
    ("Wilma", "Wanna see my moves? I practise every day."),
]
# Max and Paris open sentences, and are written inside one too; the note writes "max" in lower
# case as well ("to the max"): they stay names. "Glad Max …" is Max.
FRIENDS = [
    ("Arne", "Max was truly awesome. Paris was lovely too."),
    ("Wilma", "We took Max to the park, then flew to Paris."),
    ("Arne", "I pushed the old car to the max."),
    ("Wilma", "Glad Max is making you so happy."),
]
SPEAKERS = {"person:arne", "person:wilma"}


@pytest.fixture(autouse=True)
def _needs_ner() -> None:
    if not NerEngine().available:
        pytest.skip(NerEngine().status()["message"])


def _entities(memory: Memory) -> set[str]:
    return {str(r[0]) for r in memory.index.query("SELECT DISTINCT entity_id FROM occurrences")}


def _vault(vault: Path) -> None:
    write_chat(vault, "2024-03-04", STUDIO)
    write_chat(vault, "2024-03-05", FRIENDS)


def test_words_of_speech_and_a_conversations_common_words_are_no_entities_nor_entity_notes(vault: Path) -> None:
    """"Wanna", "Nah" and "Dance" (in a conversation that writes "dance") are no entities, and
    "Dance", read as an organization in three messages, gets no entity note; Max and Paris,
    which open sentences but are written inside one too, stay names, and "Glad Max" is Max."""
    _vault(vault)
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        assert _entities(memory) == SPEAKERS | {"person:max", "place:paris"}
        max_leaves = memory.index.query("SELECT count(*) FROM occurrences WHERE entity_id = 'person:max'")
        assert max_leaves == [(3,)]
        written = memory.enrich()
    assert written["entity_notes"] == []
    assert not (vault / "entities" / "org" / "dance.md").exists()


def test_a_new_extractor_version_rederives_an_existing_index(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An index derived by the extractor before these rules (version 15: the words of speech and
    the note's words not used) holds "Wanna", "Nah" and "Dance"; the next sync with this version
    re-derives every leaf from the NER cache, and the graph is then what a cold rebuild gives."""
    _vault(vault)
    config = load_config(vault, embed_provider="none")
    with monkeypatch.context() as patch:
        patch.setattr(graph, "EXTRACTOR_VERSION", "15")
        patch.setattr(extract, "spoken", lambda word: False, raising=False)
        patch.setattr(extract, "after_spoken_lead", lambda text, start, end: start, raising=False)
        patch.setattr(graph, "note_words", lambda con, paths: {}, raising=False)
        with Memory.open(config) as memory:
            memory.sync()
            assert {"person:wanna", "person:nah", "org:dance", "person:glad-max"} <= _entities(memory)
    with Memory.open(config) as memory:
        memory.sync()
        assert _entities(memory) == SPEAKERS | {"person:max", "place:paris"}
        graph_rows = memory.index.query("SELECT entity_id, leaf_id, surface FROM occurrences ORDER BY ALL")
        entity_rows = memory.index.query("SELECT id, kind, mentions FROM entities ORDER BY ALL")
        edge_rows = memory.index.query("SELECT a, b, weight FROM edges ORDER BY ALL")
    with Memory.open(config) as memory:
        memory.reindex()
        assert memory.index.query("SELECT entity_id, leaf_id, surface FROM occurrences ORDER BY ALL") == graph_rows
        assert memory.index.query("SELECT id, kind, mentions FROM entities ORDER BY ALL") == entity_rows
        assert memory.index.query("SELECT a, b, weight FROM edges ORDER BY ALL") == edge_rows


def test_a_step_of_ner_s_catch_up_reads_its_notes_words_under_a_small_pool(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A step of NER's catch-up tells a common word from a name by its note's texts. No index
    holds the leaves' paths, so reading them inside the step's transaction met much of the text
    column and kept it in DuckDB's pool: at 50k notes +135 MB for 40 notes, a daemon's spikes
    of +75 MB through its catch-up. They are read before the step, under the small pool of its
    other reads (`Index.small_pool_read`, the real one, wrapped to record what it reads); the
    common words are no entities all the same."""
    from functools import partial

    from vaultmind.entities.backfill import backfill_ner, entity_deriver, ner_pending
    from vaultmind.index.store import Index

    write(vault, ".vaultmind/config.toml", "[entities]\nner_inline = 0\n")  # NER left to the catch-up
    _vault(vault)
    read: list[str] = []
    real = Index.small_pool_read

    def recorded(index: Index, what: Any, limit: str) -> Any:
        read.append(what.func.__name__ if isinstance(what, partial) else getattr(what, "__name__", "?"))
        return real(index, what, limit)

    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        deriver = entity_deriver(memory)
        assert deriver is not None and ner_pending(memory.index, deriver) > 0
        monkeypatch.setattr(Index, "small_pool_read", recorded)
        backfill_ner(memory.index, deriver)
        assert ner_pending(memory.index, deriver) == 0
        assert _entities(memory) == SPEAKERS | {"person:max", "place:paris"}
    assert "note_words" in read, read
