"""A model's guess that is a word of speech or a common word of its note (`common_words.py`), read
by the real cleaning of NER hits (`extract.clean_ner_span`) on texts written for these cases."""

from __future__ import annotations

import pytest

from vaultmind.entities.common_words import NoteWords
from vaultmind.entities.extract import clean_ner_span

CONVERSATION = [
    "Nature's amazing, here's a sketch I made.",
    "I love spending time in nature. We flew to Italy, I will go back: the weather was perfect.",
    "Italy's amazing too. Will is coming with us.",
    "Thanks, Will! I loved \"Perfect\" by Ed Sheeran.",
]


@pytest.mark.parametrize(
    ("text", "hit", "label", "kept"),
    [
        ("Nah, I haven't.", "Nah", "PERSON", None),
        ("Wanna see my moves?", "Wanna", "PERSON", None),
        ("Congrats on the promotion!", "Congrats", "ORG", None),
        ("Awww! How old are they now?", "Awww", "PERSON", None),
        ("Startin' a shop is hard work.", "Startin", "ORG", None),
        ("Glad Max is bringing you joy.", "Glad Max", "PERSON", "Max"),
        ("Thanks, Emil, that was kind.", "Thanks, Emil", "PERSON", "Emil"),
        ("Adele sang Hello last night.", "Hello", "WORK_OF_ART", "Hello"),  # a title may be a word of speech
        ("Berlin's lovely in May.", "Berlin", "GPE", "Berlin"),
        ("Nathan said hi.", "Nathan", "PERSON", "Nathan"),
    ],
)
def test_a_word_of_speech_is_no_name(text: str, hit: str, label: str, kept: str | None) -> None:
    start = text.index(hit)
    span = clean_ner_span(text, start, start + len(hit), label)
    assert (span.surface if span is not None else None) == kept


@pytest.mark.parametrize(
    ("text", "hit", "label", "kept"),
    [
        (CONVERSATION[0], "Nature", "PERSON", False),  # "nature" in lower case, never inside a sentence
        (CONVERSATION[2], "Italy", "GPE", True),  # capitalised inside a sentence: "flew to Italy"
        (CONVERSATION[2], "Will", "PERSON", True),  # "I will", but "Thanks, Will!" too
        (CONVERSATION[3], "Perfect", "WORK_OF_ART", True),  # a quoted title
    ],
)
def test_a_common_word_of_the_note_is_no_name(text: str, hit: str, label: str, kept: bool) -> None:
    """A one-word guess its note writes in lower case and never capitalises inside a sentence is
    dropped; without the note's words the same hit stays."""
    note = NoteWords.of(CONVERSATION)
    start = text.index(hit)
    assert (clean_ner_span(text, start, start + len(hit), label, note=note) is not None) == kept
    assert clean_ner_span(text, start, start + len(hit), label) is not None


@pytest.mark.parametrize(
    ("text", "hit", "label", "kept"),
    [
        ("Later Jean-Luc Picard called about the contract.", "Later Jean-Luc Picard", "ORG", ("Jean-Luc Picard", "person")),
        ("Tonight Root Shaw cooks.", "Tonight Root Shaw", "ORG", ("Root Shaw", "person")),
        ("Yesterday, Dana Whitfield called.", "Yesterday, Dana Whitfield", "PERSON", ("Dana Whitfield", "person")),
        ("Then Acme Corp sent the invoice.", "Then Acme Corp", "ORG", ("Acme Corp", "org")),
        ("Later Paris was lovely.", "Later Paris", "GPE", ("Paris", "place")),
        ("We read Later Tales at night.", "Later Tales", "WORK_OF_ART", ("Later Tales", "work")),
        # inside a sentence the word is the name's own
        ("We listened to Today FM all morning.", "Today FM", "ORG", ("Today FM", "org")),
        ("I signed up for Now TV again.", "Now TV", "ORG", ("Now TV", "org")),
        ("We met Soon Yi Previn there.", "Soon Yi Previn", "PERSON", ("Soon Yi Previn", "person")),
        ("Fine. Later Jean-Luc Picard called.", "Later Jean-Luc Picard", "ORG", ("Jean-Luc Picard", "person")),
        ("- Tonight Root Shaw cooks.", "Tonight Root Shaw", "ORG", ("Root Shaw", "person")),
    ],
)
def test_an_adverb_opening_a_sentence_is_no_part_of_the_name_after_it(
    text: str, hit: str, label: str, kept: tuple[str, str]
) -> None:
    """"Later Jean-Luc Picard called": the model reads the adverb as the name's first word, and
    the whole as an organization; the name is the person's after it (a work's title keeps it)."""
    start = text.index(hit)
    span = clean_ner_span(text, start, start + len(hit), label)
    assert span is not None and (span.surface, span.kind) == kept
