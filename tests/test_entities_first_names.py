"""A conversation's speakers found by their first name in its messages, as the sentence speaks
of them (`speakers.first_name_spans`): no model involved."""

from __future__ import annotations

import pytest

from vaultmind.entities.speakers import first_name_spans

FIRSTS = {"Luca": "person:luca-romano", "Maya": "person:maya-patel", "Will": "person:will-hart"}


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Are we still on for Saturday at Luca's place?", ["Luca"]),
        ("Yes! Bring snacks. Maya is coming too.", ["Maya"]),
        ("Dinner with Luca and Maya tonight.", ["Luca", "Maya"]),
        # the reader called: a greeting before, a comma, "!" or a pronoun after
        ("Thanks Luca. Should I bring the speaker?", []),
        ("Hey Maya, did you get the photos?", []),
        ("Wow, Luca, that's great.", []),
        ("That is really great Maya!", []),
        ("Got it Luca, see you soon.", []),
        # no name of a speaker
        ("Will you come tonight?", []),
        ("We met Luca Bianchi there.", []),
        ("Lucas is coming.", []),
        ("luca is coming.", []),
        ("Write to luca@example.com about it.", []),
    ],
)
def test_a_speakers_first_name_spoken_of(text: str, found: list[str]) -> None:
    spans = first_name_spans(text, FIRSTS, [])
    assert [s.surface for s in spans] == found
    assert all(s.value == FIRSTS[s.surface] and s.source == "speaker" for s in spans)


def test_a_first_name_in_code_is_not_found() -> None:
    text = "Ask `Luca is root` about it."
    assert first_name_spans(text, FIRSTS, [(4, 17)]) == []
