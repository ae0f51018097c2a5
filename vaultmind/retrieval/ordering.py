"""The order of walk's final hits: each note's evidence (its best leaf's score plus its
coverage of the question's terms and its match as a whole), near-duplicates moved behind the others, and the first hits
spread over the notes with the most evidence, so one conversation cannot crowd out every other
source at the top (see docs/ranking.md for where they stand in the formula)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from vaultmind.index.lexical import terms
from vaultmind.retrieval.signals import CONTEXT_SPAN

if TYPE_CHECKING:
    from vaultmind.index.leaf_columns import LeafColumns
    from vaultmind.retrieval.view import MemoryView

DISTINCT_TOP = 5  # the first hits: the best hits of this many notes …
SPREAD_FLOOR = 0.4  # … of those with at least this share of the best note's evidence
DIVERSITY_JACCARD = 0.9  # a hit sharing this much of its terms with one kept above is a near-duplicate
NOTE_COVERAGE = 0.1  # a note's evidence: its best leaf's score + this × its coverage of the question
NOTE_MATCH = 0.03  # … + this × its BM25 as one document, scaled so the best note's is 1 (`note_match`)
Pairs = frozenset[tuple[str, str]]  # ordered pairs of search terms


def note_evidence(
    scores: npt.NDArray[np.float64],
    cols: LeafColumns,
    coverage: Mapping[str, float],
    among: npt.NDArray[np.int64],
    match: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Per note of the leaves at places `among`, the evidence that the question is about it:
    its best leaf's final score (`scores` in the order of `cols`) plus `NOTE_COVERAGE` times its
    coverage of the question's terms (`note_coverage`) plus `NOTE_MATCH` times its match as one
    document (`note_match`)."""
    match = match or {}
    return {
        name: value + NOTE_COVERAGE * coverage.get(name, 0.0) + NOTE_MATCH * match.get(name, 0.0)
        for name, value in note_best(scores, cols, among).items()
    }


def note_best(values: npt.NDArray[np.float64], cols: LeafColumns, among: npt.NDArray[np.int64]) -> dict[str, float]:
    """Per note of the leaves at places `among`, the highest of their `values` (in the order of
    `cols`): its best leaf's score, or its leaves' best time factor."""
    known = among[cols.known[among]]
    if not len(known):
        return {}
    order = known[np.argsort(cols.note[known], kind="stable")]
    notes = cols.note[order]
    starts = np.flatnonzero(np.concatenate(([True], notes[1:] != notes[:-1])))
    best = np.maximum.reduceat(values[order], starts)
    return dict(zip([cols.note_names[code] for code in notes[starts].tolist()], best.tolist(), strict=True))


def note_match(
    memory: MemoryView, query_terms: Sequence[str], among: Collection[str], joined: Mapping[str, Sequence[str]] | None = None
) -> dict[str, float]:
    """Per note of `among` (the candidates' notes), BM25 of the query's terms with the whole note
    as one document (`ResidentLeaves.note_bm25`), scaled so the best is 1. It breaks near-ties
    between notes by what the leaf scores miss: how often, and in how many of its messages, a
    conversation comes back to the question's rarer words — the note about the question says
    it more than once, where another matched one message by luck."""
    found = memory.leaves.note_bm25(query_terms, among, joined) if query_terms else {}
    top = max(found.values(), default=0.0)
    return {note: value / top for note, value in found.items()} if top > 0 else {}


def note_coverage(
    memory: MemoryView, query_terms: Sequence[str], among: Collection[str], joined: Mapping[str, Sequence[str]] | None = None
) -> dict[str, float]:
    """Per note of `among` (the candidates' notes), the idf-weighted share of the query's terms
    that occur somewhere in it: a note that holds every part of a question, spread over several
    messages, is likely the one it is about. Empty for a one-term query (it would only repeat
    the lexical signal)."""
    if len(set(query_terms)) < 2:
        return {}
    weights: dict[str, float] = {}
    for term in sorted(set(query_terms)):
        df, n = memory.leaves.document_frequency(term, joined)
        if df:
            weights[term] = math.log(1 + (n - df + 0.5) / (df + 0.5))
    total = sum(weights.values())
    if total <= 0:
        return {}
    out: dict[str, float] = {}
    for term, notes in memory.leaves.notes_with(list(weights), among, joined).items():
        for note in notes:
            out[note] = out.get(note, 0.0) + weights[term] / total
    return out


def diversify(
    memory: MemoryView,
    scored: list[tuple[str, float, dict[str, Any]]],
    limit: int,
    places: dict[str, tuple[str, int, str | None]],
    note_rank: dict[str, float],
    known: dict[str, dict[str, Any]],
    voiced: Mapping[str, bool],
    timely: Mapping[str, float] | None = None,
) -> list[tuple[str, float, dict[str, Any]]]:
    """Keep the order, but move near-duplicates of earlier hits behind the others. `known`:
    leaf rows already read, and it gains those read here; `voiced`: the named speaker's
    messages, each with whether it may take its note's place, and `timely`, per note, its
    leaves' best time factor (`spread_notes`)."""
    window = scored[: max(limit * 3, 30)]
    if not window:
        return []
    known.update(memory.leaves.rows([leaf_id for leaf_id, _, _ in window if leaf_id not in known]))
    rows = {leaf_id: known[leaf_id] for leaf_id, _, _ in window if leaf_id in known}
    info = {leaf_id: (row["content_hash"], leaf_terms(row["content_hash"], row["text"] or "")[0]) for leaf_id, row in rows.items()}
    kept: list[tuple[str, float, dict[str, Any]]] = []
    dupes: list[tuple[str, float, dict[str, Any]]] = []
    seen_hashes: set[str] = set()
    seen_terms: dict[int, list[frozenset[str]]] = {}  # the kept hits' term sets, by size
    for item in window:
        content_hash, term_set = info.get(item[0], ("", frozenset()))
        if content_hash in seen_hashes or near_duplicate(term_set, seen_terms):
            item[2]["near_duplicate"] = True
            dupes.append(item)
        else:
            kept.append(item)
            seen_hashes.add(content_hash)
            seen_terms.setdefault(len(term_set), []).append(term_set)
    ordered = spread_notes(kept, places, note_rank, voiced, timely) + dupes + scored[len(window) :]
    return ordered[:limit]


def spread_notes(
    ranked: list[tuple[str, float, dict[str, Any]]],
    places: dict[str, tuple[str, int, str | None]],
    note_rank: dict[str, float],
    voiced: Mapping[str, bool] | None = None,
    timely: Mapping[str, float] | None = None,
) -> list[tuple[str, float, dict[str, Any]]]:
    """The first `DISTINCT_TOP` hits are the best hits of the `DISTINCT_TOP` notes with the most
    evidence (`note_rank`; a note's best hit without it) of those with at least `SPREAD_FLOOR` of
    the best note's, so one conversation cannot crowd out every other source at the top; the
    rest keep their order. Of those first hits, what a note's evidence adds to its hit's score
    counts times its leaves' best time factor (`timely`): a note outside the question's window
    holds its words but not its time, and keeps its place among them, never ahead of a hit
    inside the window that scores higher. A hit that scores above one of those it now follows says so in its
    breakdown (`behind_other_notes`)."""
    firsts: dict[str, int] = {}  # note → position of its best hit
    for position, item in enumerate(ranked):
        firsts.setdefault(places.get(item[0], ("",))[0], position)
    voiced = voiced or {}
    for position, item in enumerate(ranked):  # a note speaks for the named speaker by their own words
        note = places.get(item[0], ("",))[0]
        if voiced.get(item[0]) and ranked[firsts[note]][0] not in voiced:
            firsts[note] = position
    evidence = {note: note_rank.get(note, ranked[position][1]) for note, position in firsts.items()}
    notes = sorted(firsts, key=lambda n: (-evidence[n], firsts[n]))
    floor = SPREAD_FLOOR * evidence[notes[0]] if notes else 0.0
    chosen = [firsts[note] for note in notes[:DISTINCT_TOP] if evidence[note] >= floor]
    if timely:
        def timed(position: int) -> float:
            note, score = places.get(ranked[position][0], ("",))[0], ranked[position][1]
            return score + timely.get(note, 1.0) * (evidence[note] - score)

        chosen.sort(key=timed, reverse=True)
    picked = set(chosen)
    lowest = min((ranked[p][1] for p in chosen), default=0.0)
    rest = [item for p, item in enumerate(ranked) if p not in picked]
    for item in rest:
        if item[1] > lowest:
            item[2]["behind_other_notes"] = True
    return [ranked[p] for p in chosen] + rest


def near_duplicate(term_set: frozenset[str], kept: dict[int, list[frozenset[str]]]) -> bool:
    """Whether `term_set` has a Jaccard similarity of at least `DIVERSITY_JACCARD` with one of
    the `kept` sets (by size). Sets too different in size cannot reach it (the similarity is at
    most the smaller size over the larger), so only the kept sets of nearly the same size are
    compared: a walk asked for 50 hits compared each of its 150 first with every earlier one."""
    n = len(term_set)
    if not n:
        return False
    for size in range(int(n * DIVERSITY_JACCARD), int(n / DIVERSITY_JACCARD) + 2):
        others = kept.get(size)
        # the smaller size over the larger reaches the threshold (an empty set never does)
        if not others or not (size >= DIVERSITY_JACCARD * n if size <= n else n >= DIVERSITY_JACCARD * size):
            continue
        for other in others:
            shared = len(term_set & other)
            if shared / (n + size - shared) >= DIVERSITY_JACCARD:  # the union's size, without the union
                return True
    return False


@lru_cache(maxsize=8192)
def leaf_terms(content_hash: str, text: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """A leaf's search terms, as a set and in order, kept by content: the strongest leaves of
    one question are often among those of the next."""
    seq = tuple(terms(text))
    return frozenset(seq), seq


@lru_cache(maxsize=8192)
def term_pairs(content_hash: str, text: str) -> tuple[Pairs, Pairs]:
    """A leaf's pairs of adjacent terms and its pairs one term apart, kept by content like its
    terms. (a, a) pairs are kept: they match no query pair."""
    seq = leaf_terms(content_hash, text)[1]
    return frozenset(itertools.pairwise(seq)), frozenset(zip(seq, seq[2:], strict=False))


def adjacent_pairs(seq: Sequence[str]) -> Pairs:
    """The ordered pairs of neighbouring terms (a term next to itself is no pair)."""
    return frozenset((a, b) for a, b in itertools.pairwise(seq) if a != b)


def on_topic(speaking: npt.NDArray[np.bool_], lex: npt.NDArray[np.float64], cols: LeafColumns) -> npt.NDArray[np.bool_]:
    """Of the named speaker's messages (`speaking`, in the order of `lex` and `cols`), those that
    may take their note's place from another's better match (`spread_notes`): when some leaf
    holds the question's words, one that holds one too, or that comes up to `CONTEXT_SPAN`
    messages after one that does (Helen's reply to the mail on the budget; Sam's "I'll write it
    this week" after Ines's "Who has the text for the allergen page?" and Marta's "Not me");
    not her unrelated message ("what did Mei say about Facebook?": not "I will pay for Auntie's
    train.", four messages after Daniel's on Facebook, which tells more)."""
    worded = lex > 0
    if not worded.any():
        return speaking
    n = len(lex)
    note, seq = cols.note[:n].astype(np.int64), cols.seq[:n].astype(np.int64)
    matched = (note[worded] << 32) | seq[worded]
    replying = np.zeros(n, dtype=np.bool_)
    for back in range(1, CONTEXT_SPAN + 1):  # a message soon after one that holds them
        replying |= np.isin((note << 32) | (seq - back), matched)
    return speaking & cols.known[:n] & (worded | replying)
