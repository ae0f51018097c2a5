"""A text that is not English prose gets no guesses of the (English) NER model."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.entities.extract import code_ranges
from vaultmind.entities.language import english_prose
from vaultmind.entities.ner import NerEngine
from vaultmind.entities.registry import EntityNote, Registry
from vaultmind.entities.resolve import resolve_text
from vaultmind.memory import Memory

from .conftest import write

LOREM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut "
    "labore et dolore magna aliqua. Suisque Tritonidos ut enim ad minim veniam, quis nostrud "
    "exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Scribe ad "
    "dana@hall.example aut Dana Whitfield."
)
RUSSIAN = (
    "Привет! Сервер вернул письмо, потому что кодировка не поддерживается, и никто из получателей "
    "его не увидит до понедельника, если мы ничего не исправим сегодня вечером в офисе."
)
ENGLISH = (
    "Morning all! The launch plan for Tidepool is in the project note. Target is still the ninth, "
    "and Dana Whitfield thinks we can make it if the beta goes out to the testers on time."
)


@pytest.mark.parametrize(
    ("text", "english"),
    [
        (LOREM, False),
        (RUSSIAN, False),
        (ENGLISH, True),
        ("Gallia est omnis divisa in partes tres.", True),  # too short to tell
        ("Lorem ipsum dolor sit amet.", False),  # but not the typesetters' filler
        ("> - Lorem ipsum: dolor sit amet.", False),
        ("The mockup still says lorem ipsum, ask Dana.", True),
        ("Превел\n\n123", False),  # another script
        ("Привет, Dana!", False),
        ("```\n" + LOREM + "\n```\n\n" + ENGLISH, True),  # code is not prose
        ("See https://example.com/lorem/ipsum/dolor/sit/amet/consectetur/adipiscing/elit/sed/do/"
         "eiusmod/tempor/incididunt/ut/labore/et/dolore/magna. It is up.", True),
    ],
)
def test_english_prose_is_told_by_its_function_words(text: str, english: bool) -> None:
    assert english_prose(text, code_ranges(text)) is english


def _span(text: str, surface: str, label: str) -> tuple[int, int, str]:
    at = text.index(surface)
    return at, at + len(surface), label


def test_the_models_guesses_in_a_text_in_another_language_are_dropped() -> None:
    """"Lorem" and "Suisque Tritonidos" are the model's guesses on Latin: gone. The address the
    regex finds and a name an entity note teaches stay, in Latin as in English."""
    registry = Registry.build(
        [EntityNote("person:dana-whitfield", "person", "Dana Whitfield", "entities/person/dana-whitfield.md", ())]
    )
    guesses = [_span(LOREM, "Lorem", "PERSON"), _span(LOREM, "Suisque Tritonidos", "ORG")]
    found = {m.entity_id for m in resolve_text(registry, LOREM, guesses).mentions}
    assert found == {"email:dana@hall.example", "person:dana-whitfield"}
    english = resolve_text(registry, ENGLISH, [_span(ENGLISH, "Tidepool", "ORG")]).mentions
    assert {m.entity_id for m in english} == {"org:tidepool", "person:dana-whitfield"}


def test_a_paragraph_of_filler_in_english_prose_gives_no_guesses() -> None:
    """A paragraph of Latin filler under a heading of an English text ("Nulla maximus vel orci …")
    gives no guesses of the model; the English paragraphs around it keep theirs."""
    text = (
        "# Estimating equations\n\nThe equations are what Dana Whitfield taught us at the summer school, "
        "and they are used for panel data in the study.\n\n## Formulation\n"
        "Cras imperdiet enim felis, vitae placerat turpis egestas sed. Nulla maximus vel orci ullamcorper "
        "blandit.\n\n## Estimation\nWe asked Tidepool for the data.\n"
    )
    guesses = [_span(text, "Nulla", "ORG"), _span(text, "Dana Whitfield", "PERSON"), _span(text, "Tidepool", "ORG")]
    found = {m.entity_id for m in resolve_text(Registry.build([]), text, guesses).mentions}
    assert found == {"person:dana-whitfield", "org:tidepool"}
    hops = "The hops are below, as the bank sent them to us when we asked for the trace of it.\n\n" + "\n".join(
        f"{n} 11:10 AM mx{n}.example Contoso Relay (version=TLS1_2, cipher=AES) {n} sec" for n in range(1, 7)
    )
    found = {m.entity_id for m in resolve_text(Registry.build([]), hops, [_span(hops, "Contoso Relay", "ORG")]).mentions}
    assert found == {"org:contoso-relay"}, "a table of a machine's output repeats its words: no filler"


def test_a_latin_filler_note_adds_no_entities(vault: Path) -> None:
    """The real model on a vault with a page of lorem ipsum and a note in English: the English
    note's people are found, the Latin page gives nothing but its address."""
    if not NerEngine().available:
        pytest.skip(NerEngine().status()["message"])
    write(vault, "Filler.md", "# Filler\n\n" + LOREM + "\n\n" + LOREM.replace("Lorem ipsum", "Nulla quae") + "\n")
    write(vault, "Launch.md", "# Launch\n\n" + ENGLISH + "\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        by_note: dict[str, set[str]] = {}
        for path, ident in memory.index.query("SELECT note_path, entity_id FROM occurrences"):
            by_note.setdefault(str(path), set()).add(str(ident))
    assert by_note["Filler.md"] == {"email:dana@hall.example"}
    assert "person:dana-whitfield" in by_note["Launch.md"]
