"""The steps of the NER catch-up take the entity registry as committed, kept until a commit may
change the notes (`registry_store.committed_registry`): the registry's fingerprint, a scan of
every note's front matter, is not read again at each step (at 50k notes 0.2–0.7 s and ~12 MiB
a step), and a save between steps that changes the registry is seen by the next step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import vaultmind.entities.registry_store as registry_store
from vaultmind.config import load_config
from vaultmind.entities.backfill import backfill_ner, entity_deriver, ner_pending
from vaultmind.memory import Memory

from .conftest import write
from .test_entities_graph import cold_rebuild, dump_entities

TEXTS = [
    "Dana Whitfield met Marco Ruiz at Google in Paris.",
    "Marco Ruiz phoned Dana Whitfield about the launch.",
    "Priya Raman wrote to Alice Chen from Fernhill Labs.",
    "Bob Stone and Alice Chen signed with Harbor Hall in Dublin.",
    "Alice Chen asked Priya Raman about Google again.",
]


def test_the_steps_of_ner_read_the_registrys_fingerprint_once_until_a_save_changes_the_notes(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(vault, ".vaultmind/config.toml", "[entities]\nner_inline = 0\n")
    for i, text in enumerate(TEXTS):
        write(vault, f"notes/n{i}.md", text + "\n")
    config = load_config(vault, embed_provider="none")
    fingerprints: list[str] = []
    real = registry_store.registry_fingerprint

    def recorded(con: Any) -> str:  # the real query, only counted
        fingerprints.append(found := real(con))
        return found

    with Memory.open(config) as memory:
        deriver = entity_deriver(memory)
        assert deriver is not None
        if not deriver.ner.available:
            pytest.skip(deriver.ner.status()["message"])
        memory.sync()
        assert ner_pending(memory.index, deriver) == len(TEXTS)
        monkeypatch.setattr(registry_store, "registry_fingerprint", recorded)
        assert backfill_ner(memory.index, deriver, batch=1) == len(TEXTS)  # one step a text
        assert len(fingerprints) == 1, fingerprints  # main's code: once a step (5)
        monkeypatch.undo()
        assert dump_entities(memory) == cold_rebuild(config)

        # a save that changes the registry (a note of yours typed as a person, named in a
        # text NER has not seen yet): the next step takes the new registry
        write(vault, "people/Quinn Abara.md", "---\ncategories: [\"[[People]]\"]\n---\nA friend.\n")
        write(vault, "notes/later.md", "Lunch with Quinn Abara and Dana Whitfield.\n")
        threshold = deriver.settings.fuzzy_threshold
        before = registry_store.committed_registry(memory.index, fuzzy_threshold=threshold)
        memory.sync()
        after = registry_store.committed_registry(memory.index, fuzzy_threshold=threshold)
        assert after.digest != before.digest
        assert after.digest == registry_store.load_registry(memory.index.con, fuzzy_threshold=threshold).digest
        assert backfill_ner(memory.index, deriver, batch=1) >= 1
        found = {r[0] for r in memory.index.query("SELECT entity_id FROM occurrences")}
        assert "person:quinn-abara" in found
        assert dump_entities(memory) == cold_rebuild(config)
