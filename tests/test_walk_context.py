"""walk: conversation context reaches two messages from a strong match, decaying with distance;
place questions phrased "Which cities…"."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.answer_type import answer_kind
from vaultmind.retrieval.bonuses import PHRASE_WEIGHT
from vaultmind.retrieval.signals import CONTEXT_DECAY
from vaultmind.retrieval.walk import CONTEXT_SHARE

from .conftest import write_chat


def test_context_decays_with_distance_from_the_match(vault: Path) -> None:
    # Only the first message shares a word with the question; the answer comes two turns later.
    # (The match is a statement long enough to take no length or asking factor: its score is its
    # base, plus its phrase bonus, which context does not pass on.)
    write_chat(
        vault,
        "2024-06-01",
        [
            ("Bob", "Remember to book the harbour cruise for our anniversary dinner with grandma, grandpa and the kids next Saturday evening."),
            ("Alice", "Give me a second."),
            ("Alice", "Yes: the Marlin, eight o'clock, pier four."),
            ("Bob", "Perfect, thanks."),
            ("Bob", "Also the plants need water."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("harbour cruise anniversary", limit=10)
    by_text = {hit["content"]: hit for hit in result["hits"]}
    match = by_text["Remember to book the harbour cruise for our anniversary dinner with grandma, grandpa and the kids next Saturday evening."]
    next_one = by_text["Give me a second."]
    two_away = by_text["Yes: the Marlin, eight o'clock, pier four."]
    assert match["breakdown"]["phrase"] == 1.0  # "harbour cruise (for our) anniversary"
    base = match["score"] - PHRASE_WEIGHT * match["breakdown"]["phrase"]
    assert next_one["breakdown"]["context"] == pytest.approx(base, rel=0.01)
    expected = CONTEXT_DECAY * next_one["breakdown"]["context"]
    assert two_away["breakdown"]["context"] == pytest.approx(expected, rel=0.01)
    assert two_away["score"] == pytest.approx(CONTEXT_SHARE * two_away["breakdown"]["context"], rel=0.01)
    assert match["score"] > next_one["score"] > two_away["score"] > 0
    # Three messages away and more is beyond the span: not a hit at all.
    assert "Perfect, thanks." not in by_text
    assert "Also the plants need water." not in by_text
    assert [h["content"] for h in result["hits"]][:3] == [
        "Remember to book the harbour cruise for our anniversary dinner with grandma, grandpa and the kids next Saturday evening.",
        "Give me a second.",
        "Yes: the Marlin, eight o'clock, pier four.",
    ]


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Which US cities did Bob visit?", "place"),
        ("What country is the conference in?", "place"),
        ("In which town does Alice live?", "place"),
        ("What book did Alice read?", "title"),  # a named work, not a place
        ("What food did Alice cook?", None),
    ],
)
def test_place_questions_beyond_where(question: str, kind: str | None) -> None:
    assert answer_kind(question) == kind


def test_context_reaches_messages_of_a_memory_that_was_empty_when_it_loaded(vault: Path) -> None:
    # A daemon warmed on an empty vault holds no leaf in its loaded places: every message of the
    # first conversation is added after, and walk still finds the replies around a match.
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.serve()
        memory.warm()
        write_chat(
            vault,
            "2024-06-01",
            [
                ("Bob", "Did you book the harbour cruise for Saturday?"),
                ("Alice", "Yes: the Marlin, eight o'clock, pier four."),
            ],
        )
        memory.sync()
        hits = memory.walk("harbour cruise booking", limit=5)["hits"]
        reply = next(h for h in hits if "Marlin" in h["content"])
        assert reply["breakdown"]["context"] > 0, "the reply earns context from the match"


def test_walk_is_the_same_when_the_leaves_reload_between_its_lookups(vault: Path, monkeypatch) -> None:
    # The leaves context reaches are looked up after the candidates; a reload in between gives
    # new code lists, and walk then reads every column again from the new load.
    write_chat(
        vault,
        "2024-06-01",
        [
            ("Bob", "Did you book the harbour cruise for Saturday?"),
            ("Alice", "Yes: the Marlin, eight o'clock, pier four."),
            ("Bob", "Perfect, thanks."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:  # no dense: the reply is only reached
        memory.sync()
        want = memory.walk("harbour cruise booking", limit=5)
        real = memory.leaves.columns
        calls = []

        def reloaded_after_the_first(leaf_ids):
            cols = real(leaf_ids)
            calls.append(len(leaf_ids))
            if len(calls) == 1:
                return cols
            return replace(cols, note_names=list(cols.note_names), author_names=list(cols.author_names))

        monkeypatch.setattr(memory.leaves, "columns", reloaded_after_the_first)
        got = memory.walk("harbour cruise booking", limit=5)
        assert len(calls) == 3, "candidates, the leaves context reached, then all again"
        assert [h["node_id"] for h in got["hits"]] == [h["node_id"] for h in want["hits"]]
        assert any("Marlin" in h["content"] for h in got["hits"]), "the reply, reached by context"
        assert [h["breakdown"] for h in got["hits"]] == [h["breakdown"] for h in want["hits"]]
