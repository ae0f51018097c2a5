"""A note's title names a work at most: the model's reading of an organization, or of a person
that is no full name, in the heading that is the note's title is dropped in every leaf that
repeats it, while a person's page keeps the name it is titled with; incremental as a cold
rebuild.

The model is the installed spaCy model's engine with its reading replaced by a fixed one
(`_read`), as in `test_entities_kinds.py`."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from vaultmind.config import Config
from vaultmind.entities.extract import clean_ner_span
from vaultmind.entities.ner import NerEngine, RawSpan
from vaultmind.memory import Memory

from .test_entities_kinds import Vault, fixed_reading_config

_READS = (
    ("Bits of Unsolicited Advice", "ORG"),
    ("Brown", "PERSON"),
    ("Steph Ango", "PERSON"),
)


def _read(self: NerEngine, texts: Sequence[str]) -> list[list[RawSpan]]:
    """Each name of `_READS` wherever a text writes it, with its label."""
    return [
        [(m.start(), m.end(), label) for name, label in _READS for m in re.finditer(re.escape(name), t)]
        for t in texts
    ]


@pytest.fixture
def config(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Config]:
    yield fixed_reading_config(vault, monkeypatch, _read)


def _essay(title: str) -> str:
    """A long essay under one heading: its leaves each repeat the heading, and only the first
    writes the title's words in lower case."""
    advice = "\n".join(
        f"- Advice number {n}: keep your promises, call your mother and floss every single day of the year."
        for n in range(80)
    )
    return f"# {title}\n\nHere are 68 pithy bits of unsolicited advice for you.\n\n{advice}\n"


def _ids(memory: Memory) -> dict[str, int]:
    return {str(r[0]): int(r[1]) for r in memory.index.query("SELECT id, mentions FROM entities")}


def test_a_long_notes_title_repeated_in_every_leaf_names_no_organization(config: Config) -> None:
    vault = Vault(config)
    vault.put("68 Bits of Unsolicited Advice.md", _essay("68 Bits of Unsolicited Advice"))
    vault.put("Steph Ango.md", "# Steph Ango\n\nWrote about Brown butter once.\n")
    with Memory.open(config) as memory:
        vault.synced(memory)  # the index as a cold rebuild has it
        repeated = memory.index.query(
            "SELECT count(*) FROM leaves WHERE note_path = '68 Bits of Unsolicited Advice.md' "
            "AND starts_with(text, '# 68 Bits of Unsolicited Advice')"
        )
        assert repeated[0][0] >= 2  # the heading is repeated, away from the lower-case words
        ids = _ids(memory)
        assert "org:bits-of-unsolicited-advice" not in ids
        assert ids["person:steph-ango"] == 1  # a person's page keeps its name
        assert ids["person:brown"] == 1  # in prose a reading stays the model's

        # the same words in another note's prose, not its title, stay the model's reading
        vault.put("Reading list.md", "# Reading list\n\nI finally read Bits of Unsolicited Advice.\n")
        assert "org:bits-of-unsolicited-advice" in vault.synced(memory, "bits-of-unsolicited-advice")
        # a title changed to other words: the old heading is prose's no more, incremental as cold
        vault.put("68 Bits of Unsolicited Advice.md", "# Advice\n\nBits of Unsolicited Advice, again.\n")
        assert vault.synced(memory, "bits-of-unsolicited-advice") == {"org:bits-of-unsolicited-advice": 2}


@pytest.mark.parametrize(
    ("text", "title", "hit", "label", "kept"),
    [
        # the note's title: an organization, or a person that is no full name, is dropped
        ("# 68 Bits of Unsolicited Advice\n\n- Be kind.", "68 Bits of Unsolicited Advice",
         "Bits of Unsolicited Advice", "ORG", None),
        ("# Brown butter nectarine tart\n\nMelt it.", "Brown butter nectarine tart", "Brown", "PERSON", None),
        ("# Kyoto\n\n## Trips\n\n![[Trips.base]]", "Kyoto", "Kyoto", "PERSON", None),
        ("# Genre Template\n\n![[Genre.base]]", "Genre Template", "Genre Template", "PERSON", None),
        # a person's page keeps its name; a heading that is not the note's title is the leaf's
        ("# Steph Ango\n\n## Meetings", "Steph Ango", "Steph Ango", "PERSON", "Steph Ango"),
        ("## Brown butter nectarine tart\n\nMelt it.", "Recipes", "Brown", "PERSON", "Brown"),
        ("# Brown butter nectarine tart\n\nMelt it.", "", "Brown", "PERSON", "Brown"),
        # four spaces before the marks: an indented code line, no heading (CommonMark)
        ("    # Brown butter nectarine tart\n\nMelt it.", "Brown butter nectarine tart", "Brown", "PERSON", "Brown"),
        ("   # Brown butter nectarine tart\n\nMelt it.", "Brown butter nectarine tart", "Brown", "PERSON", None),
        # a work may be a title
        ("# Golden Rule Stories\n\nKind tales.", "Golden Rule Stories", "Golden Rule Stories", "WORK_OF_ART",
         "Golden Rule Stories"),
        # the title's words in the leaf's prose are not its heading
        ("# Essay\n\nBits of Unsolicited Advice is a book.", "Bits of Unsolicited Advice",
         "Bits of Unsolicited Advice", "ORG", "Bits of Unsolicited Advice"),
    ],
)
def test_a_hit_in_the_notes_title_heading(text: str, title: str, hit: str, label: str, kept: str | None) -> None:
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), label, title)
    assert (None if span is None else span.surface) == kept
