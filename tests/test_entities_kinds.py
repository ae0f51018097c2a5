"""A name the model reads as an organization here and as a work there is one entity, of the
kind most leaves read it as, and the incremental index settles it as a cold rebuild does.

The model is the installed spaCy model's engine with its reading replaced by a fixed one:
"TestFlight" is an organization in a text that says "company", a work elsewhere."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from vaultmind.config import Config, load_config
from vaultmind.entities.backfill import complete_ner, entity_deriver
from vaultmind.entities.ner import NerEngine, RawSpan
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory

from .conftest import write
from .test_entities_graph import cold_rebuild, dump_entities

ORG = "TestFlight shipped a build for #launch.\n"
WORK = "We read the TestFlight beta notes for #launch.\n"


def _read(self: NerEngine, texts: Sequence[str]) -> list[list[RawSpan]]:
    """ "TestFlight" is a work where "beta" follows it, an organization elsewhere."""
    return [
        [(m.start(), m.end(), "WORK_OF_ART" if t[m.end() :].startswith(" beta") else "ORG")
         for m in re.finditer("TestFlight", t)]
        for t in texts
    ]  # fmt: skip


def fixed_reading_config(vault: Path, monkeypatch: pytest.MonkeyPatch, read: Callable[..., list[list[RawSpan]]]) -> Config:
    """The vault's settings, its NER engine's reading replaced by `read` (skipped without a model)."""
    monkeypatch.setattr(NerEngine, "analyze", read)
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        deriver = entity_deriver(memory)
        if deriver is None or not deriver.ner.available:
            pytest.skip("no NER model installed")
    return config


@pytest.fixture
def config(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Config]:
    yield fixed_reading_config(vault, monkeypatch, _read)


class Vault:
    def __init__(self, config: Config):
        self.config = config
        self.tick = 1_700_000_000_000_000_000

    def put(self, rel: str, text: str) -> None:
        path = write(self.config.vault, rel, text)
        self.tick += 1_000_000_000
        os.utime(path, ns=(self.tick, self.tick))

    def synced(self, memory: Memory, key: str = "testflight") -> dict[str, int]:
        """The kinds of "TestFlight" (or the name of `key`) in `entities` with their mentions,
        after a sync; checks the index against a cold rebuild."""
        memory.sync()
        complete_ner(memory)
        assert dump_entities(memory) == cold_rebuild(self.config)
        rows = memory.index.query("SELECT id, mentions FROM entities WHERE id LIKE ?", [f"%:{key}"])
        return {str(r[0]): int(r[1]) for r in rows}


def test_a_name_read_as_two_kinds_is_one_entity_of_the_majority_kind(config: Config) -> None:
    """Most leaves decide the kind, a tie goes to the organization; a leaf added or removed
    that changes the majority moves every occurrence, as a cold rebuild has it."""
    vault = Vault(config)
    vault.put("a.md", ORG)
    vault.put("b.md", WORK)
    vault.put("c.md", WORK)
    with Memory.open(config) as memory:
        assert vault.synced(memory) == {"work:testflight": 3}
        assert memory.index.query("SELECT a, b, weight FROM edges") == [
            ("topic:launch", "work:testflight", 3)
        ]
        vault.put("d.md", ORG)
        assert vault.synced(memory) == {"org:testflight": 4}  # two against two
        vault.put("e.md", WORK)
        assert vault.synced(memory) == {"work:testflight": 5}
        (config.vault / "e.md").unlink()
        assert vault.synced(memory) == {"org:testflight": 4}
        vault.put("b.md", "Nothing about it here.\n")
        assert vault.synced(memory) == {"org:testflight": 3}
        assert memory.index.query("SELECT a, b, weight FROM edges") == [("org:testflight", "topic:launch", 3)]


def test_one_text_reading_a_name_twice_counts_its_first_reading(config: Config) -> None:
    vault = Vault(config)
    vault.put("a.md", "The TestFlight beta came before TestFlight shipped.\n")
    vault.put("b.md", ORG)
    with Memory.open(config) as memory:
        assert vault.synced(memory) == {"org:testflight": 2}  # a tie: one work, one organization
        occurrences = memory.index.query(
            "SELECT note_path, surface, read_as FROM occurrences WHERE read_as IS NOT NULL ORDER BY ALL"
        )
        assert occurrences == [
            ("a.md", "TestFlight", "work:testflight"),
            ("b.md", "TestFlight", "org:testflight"),
        ]


def test_an_entity_notes_kind_wins_over_the_majority(config: Config) -> None:
    vault = Vault(config)
    vault.put("a.md", ORG)
    vault.put("b.md", ORG)
    vault.put("c.md", WORK)
    with Memory.open(config) as memory:
        assert vault.synced(memory) == {"org:testflight": 3}
        vault.put("entities/product/testflight.md", '---\nvaultmind: entity\nid: "product:testflight"\n'
                  "display_name: TestFlight\n---\n# TestFlight\n")  # fmt: skip
        assert vault.synced(memory) == {"product:testflight": 3}


def _person_or_org(self: NerEngine, texts: Sequence[str]) -> list[list[RawSpan]]:
    """ "Amber" is an organization where "sent" follows it, a person elsewhere."""
    return [
        [(m.start(), m.end(), "ORG" if t[m.end() :].startswith(" sent") else "PERSON")
         for m in re.finditer("Amber", t)]
        for t in texts
    ]  # fmt: skip


def test_a_name_read_as_a_person_and_an_organization_is_one_entity(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person and an organization settle as the organization, product and work kinds do:
    the kind most leaves read, a tie to the person; a message's author counts as a reading of
    a person. Incremental as a cold rebuild."""
    monkeypatch.setattr(NerEngine, "analyze", _person_or_org)
    vault = Vault(config)
    vault.put("a.md", "Amber phoned about the roof.\n")
    vault.put("b.md", "Amber sent the invoice.\n")
    with Memory.open(config) as memory:
        assert vault.synced(memory, "amber") == {"person:amber": 2}  # one against one
        vault.put("c.md", "Amber sent a second quote.\n")
        assert vault.synced(memory, "amber") == {"org:amber": 3}
        vault.put("chat.md", render_source_note(
            SourceMeta("chat", "generic:roof", "roof", "roof"),
            [Message("m1", "Amber", "2024-03-01T09:00:00Z", "Hi, the roof is done."),
             Message("m2", "Amber", "2024-03-01T10:00:00Z", "Invoice follows.")],
        ))  # fmt: skip
        assert vault.synced(memory, "amber") == {"person:amber": 4}  # the author: two leaves of hers
        (config.vault / "chat.md").unlink()
        assert vault.synced(memory, "amber") == {"org:amber": 3}
