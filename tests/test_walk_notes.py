"""walk: the top hits come from the notes with the most evidence, note coverage included."""

from __future__ import annotations

from pathlib import Path

from vaultmind.config import load_config
from vaultmind.index.lexical import terms
from vaultmind.memory import Memory
from vaultmind.retrieval.walk import _note_coverage, _note_rank

from .conftest import write_chat


def _vault(vault: Path) -> None:
    write_chat(
        vault,
        "2024-05-02",
        [
            ("Bob", "The kayak trip was cancelled because of the storm."),
            ("Alice", "Then let's try the lake next weekend."),
        ],
    )
    write_chat(
        vault,
        "2024-06-10",
        [
            ("Bob", "I bought a kayak yesterday."),
            ("Alice", "Nice! Where will you paddle first?"),
            ("Bob", "Probably the fjord near my cousin's cabin."),
        ],
    )
    write_chat(vault, "2024-07-01", [("Alice", "The bakery on the corner sells great rye bread.")])


def test_note_coverage_weighs_the_question_terms_a_note_holds(vault: Path) -> None:
    _vault(vault)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        notes = {h["note_path"] for h in memory.walk("kayak bread", limit=20)["hits"]}
        coverage = _note_coverage(memory, terms("kayak fjord cabin"), notes)
        june = next(note for note in coverage if note.endswith("2024-06-10.md"))
        may = next(note for note in coverage if note.endswith("2024-05-02.md"))
        assert coverage[june] == 1.0, "every term, spread over two messages"
        assert 0.0 < coverage[may] < 0.5, "only the commonest term"
        assert not any(note.endswith("2024-07-01.md") for note in coverage)
        assert _note_coverage(memory, ["kayak"], notes) == {}, "one term: nothing beyond the lexical signal"
        assert set(_note_coverage(memory, terms("kayak fjord cabin"), {may})) == {may}, "only the notes asked about"


def test_note_rank_adds_coverage_to_the_best_leaf() -> None:
    final = {"a1": (0.9, 1.0), "a2": (0.5, 1.0), "b1": (0.85, 1.0)}
    places = {"a1": ("a.md", 0, None), "a2": ("a.md", 1, None), "b1": ("b.md", 0, None)}
    rank = _note_rank(final, places, {"b.md": 1.0})
    assert rank["a.md"] == 0.9
    assert rank["b.md"] > rank["a.md"]


def test_walk_top_hits_spread_over_notes_and_explain_coverage(vault: Path) -> None:
    _vault(vault)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        first = memory.walk("Where did Bob paddle his kayak near the cabin?", limit=5)
        again = memory.walk("Where did Bob paddle his kayak near the cabin?", limit=5)
        assert [h["message_id"] for h in first["hits"]] == [h["message_id"] for h in again["hits"]]
        notes = [h["note_path"] for h in first["hits"][:3]]
        assert len(set(notes)) == len(notes), notes
        assert first["hits"][0]["note_path"].endswith("2024-06-10.md")
        assert all("note_coverage" in h["breakdown"] for h in first["hits"])


def test_notes_with_gives_each_term_the_asked_notes_holding_it(vault: Path) -> None:
    _vault(vault)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        notes = {h["note_path"] for h in memory.walk("kayak bread", limit=20)["hits"]}
        june = next(note for note in notes if note.endswith("2024-06-10.md"))
        may = next(note for note in notes if note.endswith("2024-05-02.md"))
        bakery = next(note for note in notes if note.endswith("2024-07-01.md"))
        kayak, fjord, bread, absent = (terms(word)[0] for word in ("kayak", "fjord", "bread", "zeppelin"))
        found = memory.leaves.notes_with([kayak, fjord, bread, absent], [*notes, "nowhere.md"])
        assert found == {kayak: {june, may}, fjord: {june}, bread: {bakery}, absent: set()}
        assert memory.leaves.notes_with([kayak], [june]) == {kayak: {june}}, "only the notes asked about"
        assert memory.leaves.notes_with([kayak], ["nowhere.md"]) == {kayak: set()}


def test_best_is_heapq_nsmallest_by_score_then_id() -> None:
    import heapq
    import random

    import numpy as np

    from vaultmind.retrieval.walk import _best

    rng = random.Random(7)
    for size in (0, 1, 5, 40, 300):
        ids = [f"{rng.getrandbits(32):08x}" for _ in range(size)]
        ids = list(dict.fromkeys(ids))
        values = [rng.choice((0.0, 0.25, 0.5, rng.random())) for _ in ids]  # many ties
        scores = dict(zip(ids, values, strict=True))
        for k in (0, 1, 3, 20, 100, 400):
            want = heapq.nsmallest(k, scores, key=lambda i: (-scores[i], i))
            assert _best(ids, np.array(values, dtype=np.float64), k) == want, (size, k)


def test_sum_best_and_length_factor_keep_their_formulas() -> None:
    from vaultmind.retrieval.walk import NOTE_TOP, SHORT_EXPONENT, SHORT_TERMS, _length_factor, _sum_best

    for values in ([0.3], [0.1, 0.7], [0.1, 0.7, 0.2, 0.9], [0.5, 0.5, 0.5]):
        assert _sum_best(values) == sum(sorted(values, reverse=True)[:NOTE_TOP])
    for length in (0.0, 1.0, 2.0, 3.0, 6.0, 11.0, 12.0, 13.0, 40.0, 2.5, 12.5):
        want = (min(max(length, 1.0), SHORT_TERMS) / SHORT_TERMS) ** SHORT_EXPONENT
        assert _length_factor(length) == want, length
    assert _length_factor(None) == 1.0
