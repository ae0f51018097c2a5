"""walk: the top hits come from the notes with the most evidence, note coverage included."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vaultmind.config import load_config
from vaultmind.index.leaf_columns import LeafColumns
from vaultmind.index.lexical import terms
from vaultmind.memory import Memory
from vaultmind.retrieval.ordering import NOTE_MATCH, SPREAD_FLOOR, note_coverage, note_evidence, note_match
from vaultmind.retrieval.signals import NOTE_TOP, note_shares

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
        coverage = note_coverage(memory, terms("kayak fjord cabin"), notes)
        june = next(note for note in coverage if note.endswith("2024-06-10.md"))
        may = next(note for note in coverage if note.endswith("2024-05-02.md"))
        assert coverage[june] == 1.0, "every term, spread over two messages"
        assert 0.0 < coverage[may] < 0.5, "only the commonest term"
        assert not any(note.endswith("2024-07-01.md") for note in coverage)
        assert note_coverage(memory, ["kayak"], notes) == {}, "one term: nothing beyond the lexical signal"
        assert set(note_coverage(memory, terms("kayak fjord cabin"), {may})) == {may}, "only the notes asked about"


def _columns(notes: list[int], names: list[str]) -> LeafColumns:
    n = len(notes)
    return LeafColumns(
        np.array([code >= 0 for code in notes]), np.array(notes, dtype=np.int32), np.zeros(n, dtype=np.int32),
        np.full(n, -1, dtype=np.int32), np.full(n, 12.0), np.full(n, np.datetime64("NaT", "us")), names, [],
    )  # fmt: skip


def test_note_rank_adds_coverage_to_the_best_leaf() -> None:
    cols = _columns([0, 0, 1, -1], ["a.md", "b.md"])  # the last leaf is not live
    scores = np.array([0.9, 0.5, 0.85, 5.0])
    rank = note_evidence(scores, cols, {"b.md": 1.0}, np.arange(4))
    assert rank["a.md"] == 0.9
    assert rank["b.md"] > rank["a.md"]
    assert set(rank) == {"a.md", "b.md"}
    assert note_evidence(scores, cols, {"b.md": 1.0}, np.array([1, 2])) == {"a.md": 0.5, "b.md": rank["b.md"]}, "only the leaves asked about"


def test_walk_top_hits_spread_over_notes_and_explain_coverage(vault: Path) -> None:
    _vault(vault)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        first = memory.walk("kayak", limit=5)
        again = memory.walk("kayak", limit=5)
        assert [h["message_id"] for h in first["hits"]] == [h["message_id"] for h in again["hits"]]
        notes = [h["note_path"] for h in first["hits"][:2]]
        assert len(set(notes)) == len(notes), "two notes of comparable evidence: one hit each first"
        assert first["hits"][0]["note_path"].endswith("2024-06-10.md")
        assert all("note_coverage" in h["breakdown"] for h in first["hits"])


def test_a_far_weaker_note_does_not_take_a_place_among_the_first_hits(vault: Path) -> None:
    _vault(vault)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("Where did Bob paddle his kayak near the cabin?", limit=5)["hits"]
    june = [h for h in hits if h["note_path"].endswith("2024-06-10.md")]
    assert hits[: len(june)] == june and len(june) == 3, [h["content"] for h in hits]
    weaker = hits[len(june)]
    assert weaker["note_path"].endswith("2024-05-02.md")
    assert weaker["breakdown"]["note_evidence"] < SPREAD_FLOOR * hits[0]["breakdown"]["note_evidence"]
    assert not any(h["breakdown"].get("behind_other_notes") for h in hits)


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

    from vaultmind.retrieval.signals import best_ids

    rng = random.Random(7)
    for size in (0, 1, 5, 40, 300):
        ids = [f"{rng.getrandbits(32):08x}" for _ in range(size)]
        ids = list(dict.fromkeys(ids))
        values = [rng.choice((0.0, 0.25, 0.5, rng.random())) for _ in ids]  # many ties
        scores = dict(zip(ids, values, strict=True))
        for k in (0, 1, 3, 20, 100, 400):
            want = heapq.nsmallest(k, scores, key=lambda i: (-scores[i], i))
            assert best_ids(ids, np.array(values, dtype=np.float64), k) == want, (size, k)


def test_note_shares_are_the_mean_of_each_notes_best_three_scaled_to_the_best_note() -> None:
    import random

    rng = random.Random(3)
    for size in (1, 5, 60):
        notes = [rng.choice((-1, 0, 1, 2, 3)) for _ in range(size)]
        values = [rng.choice((0.0, 0.5, 1.0, rng.random())) for _ in range(size)]
        per_note: dict[int, list[float]] = {}
        for note, value in zip(notes, values, strict=True):
            if note >= 0:
                per_note.setdefault(note, []).append(value)
        raw = {note: sum(sorted(vs, reverse=True)[:NOTE_TOP]) / NOTE_TOP for note, vs in per_note.items()}
        top = max(raw.values(), default=0.0)
        want = [raw[note] / top if note >= 0 and top > 0 else 0.0 for note in notes]
        got = note_shares(np.array(values), np.array(notes, dtype=np.int32))
        assert got.tolist() == want, size  # the same floats: added in the same order


def test_length_and_time_factors_keep_their_formulas() -> None:
    from datetime import datetime

    from vaultmind.retrieval.signals import SHORT_EXPONENT, SHORT_TERMS, length_factor, length_factors
    from vaultmind.retrieval.timeparse import TimeWindow
    from vaultmind.retrieval.windows import AFTER_WINDOW, OUTSIDE_WINDOW, time_factors

    lengths = [0.0, 1.0, 2.0, 3.0, 6.0, 11.0, 12.0, 13.0, 40.0, 2.5, 12.5]
    for length in lengths:
        assert length_factor(length) == (min(max(length, 1.0), SHORT_TERMS) / SHORT_TERMS) ** SHORT_EXPONENT
    assert length_factor(None) == 1.0
    assert length_factors(np.array([*lengths, np.nan])).tolist() == [*map(length_factor, lengths), 1.0]
    window = TimeWindow(datetime(2024, 5, 1), datetime(2024, 6, 1), "in May 2024")
    times = ["2024-04-30T23:59", "2024-05-01T00:00", "2024-05-31T23:59", "2024-06-01T00:00", "2024-06-03T23:59",
             "2024-06-04T00:00", "NaT"]  # fmt: skip
    stamps = np.array(times, dtype="datetime64[us]")
    got = time_factors(window, stamps, datetime(2025, 1, 1)).tolist()
    assert got == [OUTSIDE_WINDOW, 1.0, 1.0, AFTER_WINDOW, AFTER_WINDOW, OUTSIDE_WINDOW, 1.0]
    # asked on 2 June: nothing after it is "just after" (it was not written yet); no time at all
    # has no claim on a question about nothing but its window
    got = time_factors(window, stamps, datetime(2024, 6, 2), undated=OUTSIDE_WINDOW).tolist()
    assert got == [OUTSIDE_WINDOW, 1.0, 1.0, AFTER_WINDOW, OUTSIDE_WINDOW, OUTSIDE_WINDOW, OUTSIDE_WINDOW]


def _paddles(vault: Path, canoe_day: str, kayak_day: str) -> None:
    """Two chats alike but for one message: the second comes back to the kayak once more."""
    for day, last in ((canoe_day, "canoe"), (kayak_day, "kayak")):
        weekday = "Sunday" if day == canoe_day else "Monday"
        write_chat(
            vault,
            day,
            [
                ("Bob", f"We rented a kayak at the lake on {weekday}."),
                ("Alice", "How was it?"),
                ("Bob", "Great fun."),
                ("Alice", "Nice photos."),
                ("Bob", "My kayak paddle broke."),
                ("Alice", "Her kayak paddle floats."),
                ("Bob", "Good weather."),
                ("Alice", "Some rain later."),
                ("Bob", f"Our {last} paddle drifted."),
            ],
        )


def test_note_bm25_scores_each_note_as_one_document(vault: Path) -> None:
    _paddles(vault, "2024-05-02", "2024-06-10")
    write_chat(vault, "2024-07-01", [("Alice", "The bakery on the corner sells great rye bread.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        notes = sorted({h["note_path"] for h in memory.walk("kayak bread", limit=30)["hits"]})
        canoe, kayak, bakery = notes
        scores = memory.leaves.note_bm25(terms("kayak"), notes)
        assert set(scores) == {canoe, kayak}, "a note that never says it scores nothing"
        assert scores[kayak] > scores[canoe] > 0, "four kayaks against three, in notes of one length"
        assert memory.leaves.note_bm25(terms("kayak"), [canoe, "nowhere.md"]) == {canoe: scores[canoe]}, "only the notes asked about"
        both = memory.leaves.note_bm25(terms("kayak bread"), notes)
        assert both[bakery] > both[kayak], "held by one note of three, bread weighs more than the kayak of two"
        # the notes' lengths are counted again after a change: a short note that says nothing else
        write_chat(vault, "2024-08-01", [("Bob", "Kayak, kayak, kayak!")])
        memory.sync()
        short = next(h["note_path"] for h in memory.walk("kayak", limit=30)["hits"] if h["note_path"].endswith("2024-08-01.md"))
        again = memory.leaves.note_bm25(terms("kayak"), [*notes, short])
        assert again[short] > again[kayak] > again[canoe]


def test_note_match_is_scaled_to_the_best_note(vault: Path) -> None:
    _paddles(vault, "2024-05-02", "2024-06-10")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        canoe, kayak = sorted({h["note_path"] for h in memory.walk("kayak", limit=30)["hits"]})
        match = note_match(memory, terms("kayak"), {canoe, kayak})
        assert match[kayak] == 1.0 and 0 < match[canoe] < 1
        assert note_match(memory, [], {canoe, kayak}) == {}, "nothing searched: no match"


def test_note_evidence_adds_the_note_match() -> None:
    cols = _columns([0, 1], ["a.md", "b.md"])
    scores = np.array([0.9, 0.9])
    rank = note_evidence(scores, cols, {}, np.arange(2), {"a.md": 0.5, "b.md": 1.0})
    assert rank == {"a.md": 0.9 + NOTE_MATCH * 0.5, "b.md": 0.9 + NOTE_MATCH}
    assert note_evidence(scores, cols, {}, np.arange(2)) == {"a.md": 0.9, "b.md": 0.9}


def test_of_two_notes_alike_the_one_that_comes_back_to_the_question_leads(vault: Path) -> None:
    """The best messages and the top three of each note score the same: the note that says
    "kayak" a fourth time goes first, though the other is older (and so was first)."""
    _paddles(vault, "2024-05-02", "2024-06-10")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("where did they rent a kayak?", limit=4)["hits"]
    assert [h["message_id"] for h in hits[:2]] == ["2024-06-10-0", "2024-05-02-0"]
    assert hits[0]["score"] == hits[1]["score"], "the same best message in each"
    assert hits[0]["breakdown"]["note_evidence"] > hits[1]["breakdown"]["note_evidence"]
