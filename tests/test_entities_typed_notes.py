"""A note of yours that says in its front matter what it is about (`categories: [[People]]`,
`type: person`, a `Movies` category) is the entity its title names, of that kind: the language
model's other reading of the name gives way, the note's title is not cut into fragments, and
the entity points at the note; incremental as a cold rebuild.

The model is the installed spaCy model's engine with its reading replaced by a fixed one
(`_read`), as in `test_entities_kinds.py`."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from vaultmind.config import Config
from vaultmind.entities.ner import NerEngine, RawSpan
from vaultmind.entities.registry_store import typed_note_from
from vaultmind.memory import Memory

from .test_entities_kinds import Vault, fixed_reading_config

_READS = (
    ("Paul Chambers", "ORG"),
    ("Bass", "PERSON"),
    ("Blade Runner", "PERSON"),
    ("Ridley Scott", "PERSON"),
    ("Obsidian", "GPE"),
)


def _read(self: NerEngine, texts: Sequence[str]) -> list[list[RawSpan]]:
    """Each name of `_READS` wherever a text writes it as a word, with its label."""
    return [
        [(m.start(), m.end(), label) for name, label in _READS for m in re.finditer(rf"\b{re.escape(name)}\b", t)]
        for t in texts
    ]


@pytest.fixture
def config(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Config]:
    yield fixed_reading_config(vault, monkeypatch, _read)


def _entities(memory: Memory) -> dict[str, str | None]:
    return {str(r[0]): r[1] for r in memory.index.query("SELECT id, note_path FROM entities")}


def test_a_notes_category_types_the_entity_its_title_names(config: Config) -> None:
    vault = Vault(config)
    vault.put("References/Paul Chambers.md", '---\ncategories:\n  - "[[People]]"\n---\nJazz bassist.\n')
    vault.put(
        "References/Bass on Top.md",
        '---\ncategories:\n  - "[[Albums]]"\nartist: "[[Paul Chambers]]"\n---\nBass on Top, by Paul Chambers.\n',
    )
    vault.put(
        "References/Blade Runner.md",
        '---\ncategories:\n  - "[[Movies]]"\ndirector: "[[Ridley Scott]]"\n---\nBlade Runner, a film by Ridley Scott.\n',
    )
    vault.put("References/Obsidian.md", "---\ntype: company\ntags: [tools]\n---\nObsidian makes a note-taking app.\n")
    vault.put("Journal.md", "# Journal\n\nListened to Paul Chambers, then watched Blade Runner.\n")
    with Memory.open(config) as memory:
        vault.synced(memory)  # the index as a cold rebuild has it
        ids = _entities(memory)
        assert ids["person:paul-chambers"] == "References/Paul Chambers.md"
        assert ids["work:blade-runner"] == "References/Blade Runner.md"
        assert ids["work:bass-on-top"] == "References/Bass on Top.md"
        assert ids["org:obsidian"] == "References/Obsidian.md"
        assert ids["person:ridley-scott"] is None  # no note of its own: the model's reading
        for wrong in ("org:paul-chambers", "person:bass", "person:blade-runner", "place:obsidian"):
            assert wrong not in ids, wrong
        mentions = memory.index.query(
            "SELECT DISTINCT note_path FROM occurrences WHERE entity_id = 'person:paul-chambers' ORDER BY 1"
        )
        assert [r[0] for r in mentions] == ["Journal.md", "References/Bass on Top.md"]
        # the category taken away: the model's reading again, incremental as cold
        vault.put("References/Paul Chambers.md", "---\ntags: [jazz]\n---\nJazz bassist.\n")
        assert vault.synced(memory, "paul-chambers") == {"org:paul-chambers": 2}


@pytest.mark.parametrize(
    ("frontmatter", "kind"),
    [
        ({"categories": ["[[People]]"]}, "person"),
        ({"categories": "[[Board games]]"}, "work"),
        ({"type": "Person"}, "person"),
        ({"tags": ["places"]}, "place"),
        ({"tags": ["#type/person"]}, "person"),
        ({"categories": ["[[Clippings]]"]}, None),
        ({"tags": ["work"]}, None),  # the notes of one's job: about no creative work
        ({"type": "work", "tags": ["people"]}, "person"),
        ({"categories": ["[[People]]", "[[Companies]]"]}, None),  # two kinds: none
        ({}, None),
    ],
)
def test_what_a_category_type_or_tag_says(frontmatter: dict[str, object], kind: str | None) -> None:
    note = typed_note_from("References/Kyoto Trip.md", "Kyoto Trip", frontmatter)
    assert (note.id if note else None) == (f"{kind}:kyoto-trip" if kind else None)
