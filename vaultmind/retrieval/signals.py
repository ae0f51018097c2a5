"""The per-leaf signals of `walk` and their fusion into a leaf's base score: the lexical and
dense matches normalised among the candidates, the query entities and authors a leaf involves,
graph proximity, its note's match, the context a strong match lends the messages around it, the
length factor, and the leaves that keep `UNGROUNDED` of their base (the whole formula, and
where these stand in it, is docs/ranking.md):

       base    = Σ w_s · s   for s in lex, dense, entity, graph, note, note_dense, author

   lex    = BM25 / best BM25 among candidates                              ∈ [0, 1]
   dense  = (cos − floor) / (best cos − floor), floor = median cos         ∈ [0, 1]
            cos is taken with the vault's common direction (the unit mean of its leaf
            vectors) removed from the question's vector: static vectors sit at cosine ~0.77
            to their mean, so most of a raw cosine is that shared part, not the topic
            (of the question without its author names; e5-style models embed it as a query).
            When the question names someone who writes in the memory it weighs `NAMED_DENSE`
            instead: the entity and author signals then say whom it is about, and the vector
            of the rest only says the topic — its nearest message is often someone else's
            ("Thanks, I will do my research" for "what did Alice research?"), and at full
            weight it outranked the named person's own messages that hold the question's words;
            and a question of more than `DENSE_TERMS` searched terms weighs it × `DENSE_TERMS` /
            terms with the static model: its vector of many words is their blurred mean (its
            nearest message shares the drift, not the point), while each more word makes the
            lexical match more specific (a model that reads words in context, e5, keeps it)
   entity = share of the query's entities the leaf mentions, is written by, or whose entity
            note it is in ("who is Dana?": her own note, when it holds more than a heading);
            a message that names an entity it was not written by counts the name's weight in
            its conversation (`retrieval/name_weight.py`: a speaker's name in a two-person
            chat, in most of its messages, weighs little)                  ∈ [0, 1]
   graph  = strongest co-occurrence weight between an entity of the leaf and a query
            entity, normalised by the strongest such weight (0 when the leaf already has
            every query entity); of a message, times that entity's weight in its
            conversation (`name_weight`)                                   ∈ [0, 1]
   note   = how well the leaf's whole note (conversation, session, document) matches: the
            mean of its best three lexical scores, scaled so the best note is 1; a section of
            a document or note counts thrice (a document says a thing in one section, a
            conversation over several messages)
   note_dense = the same over the note's best three dense scores
   author = 1 when the leaf's author is named in the question ("what did Emil say…"), by a
            word of their name or by an alias of their entity; when the name is the subject of
            a verb of saying ("what did Alice say", "which city did John recommend", "what did
            Dana send") or follows "from" or "by" ("emails from Elena"), its weight is
            `SPEAKER_WEIGHT` instead, and
            the verb is not searched: the question asks for that person's words, and another's
            message on the topic ("Got a minute on the budget?" to Alice) is not the answer
   context: in a conversation the answer is often the message right after the one that
            matches the question, or the one after that, so a leaf near one of the
            `CONTEXT_SEEDS` strongest matches (up to `CONTEXT_SPAN` messages before or after
            it in the same note) earns that match's base score, times `CONTEXT_DECAY` for
            each message beyond the adjacent one (the best such value over the seeds); none
            for a question about nothing but its author, and none between sections of a
            document or note (the next section is about something else)
   length_factor = (min(terms, `SHORT_TERMS`) / `SHORT_TERMS`) ^ `SHORT_EXPONENT`, terms the
            leaf's count of search terms: a short message ("Bye!", "I love turtles.") matches
            a question's words as well as a long one but rarely holds what it asks; BM25's
            length normalisation favours it. Three terms: 0.81, six: 0.90, twelve and more: 1.
   Two query entities related within `max_hops` that a leaf holds together add half an
   entity weight (hop tightening). When no leaf holds a word of the question's content, the
   dense match is all that speaks for a leaf, and the best one scores in full however weak it
   is: then a leaf that involves none of the query's entities, nor names a day of a window still
   ahead, keeps `UNGROUNDED` of its base ("what is Helen Okafor responsible for?": Helen's
   mail, not the nearest vector; "what happens on the May bank holiday?": "final invoices by
   10 May"). A question about something of an entity's, the entity written in the possessive
   ("what is in Okafor's team?"), when some leaf holds a word of it and involves the entity:
   the leaves of notes that never involve it keep `UNGROUNDED` of their base (`set_apart`; "Ok
   team, Dad's 60th!" of the family's chat, where Helen never speaks nor is named, had ranked
   above "Helen Okafor from our finance team"). An entity note of nothing but its heading
   ("# Mei Chen") keeps `UNGROUNDED` of its base too (`breakdown.bare_name`): it matches a
   name's words at a short leaf's best, and says nothing.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from vaultmind.index.lexical import terms
from vaultmind.retrieval.people import name_terms, person_terms
from vaultmind.vault.layout import note_kind

if TYPE_CHECKING:
    from vaultmind.index.leaf_columns import LeafColumns
    from vaultmind.model import NoteKind
    from vaultmind.retrieval.view import MemoryView


WEIGHTS = {
    "lex": 0.55,
    "dense": 0.5,
    "entity": 0.2,
    "graph": 0.05,
    "note": 0.2,
    "note_dense": 0.1,
    "author": 0.15,
}
SIGNALS = tuple(WEIGHTS)  # lex, dense, entity, graph, note, note_dense, author
# the signals' columns in walk's arrays (`leaf_signals`)
LEX, DENSE, ENTITY, GRAPH, NOTE, NOTE_DENSE, AUTHOR = (
    SIGNALS.index(name) for name in ("lex", "dense", "entity", "graph", "note", "note_dense", "author")
)
COMMON_REMOVAL = 1.0  # share of the vault's mean direction taken out of the question's vector
CONTEXT_SPAN = 2  # messages either side of a seed that earn context
CONTEXT_DECAY = 0.4  # per message further away than the next one
NOTE_TOP = 3
CANDIDATES = 200
SHORT_TERMS = 12
SHORT_EXPONENT = 0.15
OWN_NOTE_MIN_TERMS = 4  # an entity note's leaf about its entity holds more than its name
UNGROUNDED = 0.5  # a leaf's share of its score when no leaf matches a word and it involves no query entity
NAMED_DENSE = 0.25  # the dense weight when the question names an author of the memory (module doc)
DENSE_TERMS = 4  # a question searching more terms than this weighs dense × this / its terms (module doc)


def without_common(q: npt.NDArray[np.float32], mean: npt.NDArray[np.float32] | None) -> npt.NDArray[np.float32]:
    """The question's vector with `COMMON_REMOVAL` of its component along the vault's unit mean
    direction taken out, normalised (unchanged without a mean, or when nothing would be left)."""
    if mean is None or mean.shape != q.shape:
        return q
    out = q - COMMON_REMOVAL * float(q @ mean) * mean
    norm = float(np.linalg.norm(out))
    return (out / norm).astype(np.float32) if norm > 1e-6 else q


def conversation_context(
    memory: MemoryView, ids: list[str], at: dict[str, int], base: npt.NDArray[np.float64], cols: LeafColumns, *, seeds: int
) -> tuple[dict[str, float], list[str], LeafColumns]:
    """Conversation context: the message right after (or before) a strong match often holds the
    answer, and sometimes the one after that. Only between messages (leaves with an author):
    the section after a document's strong section is about something else (the runbook's
    contacts had earned context from its timeline for "what is the deposit for Harbor Hall?").
    Per leaf within `CONTEXT_SPAN` messages of one of the `seeds` strongest leaves (of `ids`,
    `at` their places; `base` and `cols` in their order), the best of their base scores, times
    `CONTEXT_DECAY` for each message beyond the nearest; then the leaves reached that are not
    among `ids` (sorted) and their columns."""
    strongest = best_ids(ids, base, seeds)
    near = memory.leaves.neighbours_of(strongest, CONTEXT_SPAN)
    reached = sorted({o for found in near.values() for o in found} - at.keys())
    more = memory.leaves.columns(reached)
    reached_at = {leaf_id: k for k, leaf_id in enumerate(reached)}

    def seq_of(leaf_id: str) -> int | None:  # None: not a live message (a section has no context)
        k = at.get(leaf_id)
        if k is not None:
            return int(cols.seq[k]) if cols.known[k] and cols.author[k] >= 0 else None
        k = reached_at.get(leaf_id)
        return int(more.seq[k]) if k is not None and more.known[k] and more.author[k] >= 0 else None

    context: dict[str, float] = {}
    for leaf_id in strongest:
        seed = seq_of(leaf_id)
        for other in near.get(leaf_id, ()):
            place = seq_of(other)
            if seed is None or place is None:
                continue
            value = float(base[at[leaf_id]]) * CONTEXT_DECAY ** (abs(place - seed) - 1)
            if value > context.get(other, 0.0):
                context[other] = value
    return context, reached, more


def best_ids(ids: list[str], scores: npt.NDArray[np.float64], k: int) -> list[str]:
    """The `k` of `ids` with the highest `scores` (in the same order), best first, ties by id:
    what `heapq.nsmallest(k, ids, key=(-score, id))` gives, with the cut found by numpy and
    only the ids at or above it sorted."""
    if len(ids) > k > 0:
        cut = np.partition(scores, len(ids) - k)[len(ids) - k]
        picked = np.flatnonzero(scores >= cut).tolist()
        by_id = {ids[j]: float(scores[j]) for j in picked}
    else:
        by_id = {leaf_id: float(value) for leaf_id, value in zip(ids, scores.tolist(), strict=True)}
    return sorted(by_id, key=lambda i: (-by_id[i], i))[: max(k, 0)]


def length_factor(length: float | None) -> float:
    if length is None:
        return 1.0
    whole = int(length)
    if whole == length and 0 <= whole < len(_LENGTH_FACTORS):  # a term count: looked up
        return _LENGTH_FACTORS[whole]
    return _length_value(length)


def _length_value(length: float) -> float:
    return float((min(max(length, 1.0), SHORT_TERMS) / SHORT_TERMS) ** SHORT_EXPONENT)


_LENGTH_FACTORS = tuple(_length_value(float(n)) for n in range(SHORT_TERMS + 1))


def length_factors(lengths: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """`length_factor` of each length (NaN: unknown, 1)."""
    out = np.ones(len(lengths))
    short = np.flatnonzero(lengths < SHORT_TERMS)  # NaN is not: 1
    whole = lengths[short]
    counted = (whole >= 0) & (whole == np.floor(whole))
    out[short[counted]] = np.array(_LENGTH_FACTORS)[whole[counted].astype(np.int64)]
    for k in short[~counted].tolist():  # not a term count: the formula
        out[k] = length_factor(float(lengths[k]))
    return out


def leaf_signals(
    ids: list[str],
    at: dict[str, int],
    cols: LeafColumns,
    lex: dict[str, float],
    den: dict[str, float],
    qents: Sequence[tuple[str, str]],
    asked_names: Collection[str],
    entity_leaves: dict[str, frozenset[str]],
    graph_weights: dict[str, float],
    named: dict[str, str],
    weighed: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """Each candidate's signals (module doc), one row per id of `ids` (`at`: their places),
    columns in `SIGNALS` order. A message counts as involving its author (for the entity signal)
    when the question names them: by a word of their name, or by any name of the entity they
    resolve to (`named`, from `named_authors`). `weighed` (`name_weight.name_weights`), when
    given, is the weight of each leaf's occurrence of each query entity (in their order), read
    in place of `entity_leaves`: a name common in its conversation counts less."""
    out = np.zeros((len(ids), len(SIGNALS)))
    for column, values in ((LEX, lex), (DENSE, den)):  # leaves of the searches: all candidates
        out[[at[leaf_id] for leaf_id in values], column] = list(values.values())
    sections = _sections(cols)
    out[:, NOTE] = note_shares(out[:, LEX], cols.note, sections)
    out[:, NOTE_DENSE] = note_shares(out[:, DENSE], cols.note, sections)
    implied: dict[int, set[str]] = {}  # author code → the query entities the author's name spells
    surface_terms = [(e, name_terms(surface)) for e, surface in qents]
    for code in np.unique(cols.author[cols.author >= 0]).tolist():
        name = cols.author_names[code]
        words = person_terms(name) if name else frozenset()
        if words.intersection(asked_names):
            implied[code] = {e for e, st in surface_terms if st and st <= words}
        if name in named:
            implied.setdefault(code, set()).add(named[name])
    if implied:
        out[np.isin(cols.author, list(implied)), AUTHOR] = 1.0
    if qents:  # the query entities each leaf involves: mentioned in it, or spelled by its author's name
        column_of = {e: j for j, e in enumerate(dict.fromkeys(e for e, _ in qents))}
        if weighed is not None:
            held = weighed.copy()
        else:
            held = np.zeros((len(ids), len(column_of)))
            places = [(at[leaf_id], column_of[e]) for leaf_id, ents in entity_leaves.items() if leaf_id in at for e in ents]
            if places:
                held[tuple(np.array(places).T)] = 1.0
        for code, ents in implied.items():
            by_author = cols.author == code
            for e in ents:
                held[by_author, column_of[e]] = 1.0
        out[:, ENTITY] = held.sum(axis=1) / len(qents)
    if graph_weights:
        near = [(k, weight) for leaf_id, weight in graph_weights.items() if (k := at.get(leaf_id)) is not None]
        rows = np.array([k for k, _ in near], dtype=np.int64)
        weights = np.array([weight for _, weight in near])
        below = out[rows, ENTITY] < 1.0
        out[rows[below], GRAPH] = weights[below]
    return out


def ground(base: npt.NDArray[np.float64], signals: npt.NDArray[np.float64], told: npt.NDArray[np.bool_]) -> set[int]:
    """No leaf holds a word of the question's content: its dense match is all that speaks for a
    leaf, and the best of those is scaled to a full score however weak it is. Then a leaf that
    involves a query entity (mentions it, or is written by it), or that names a day of a window
    still ahead (`told`), is grounded, and one that does not keeps `UNGROUNDED` of its score:
    "what is Helen Okafor responsible for?" had ranked "Good point, adding it to the risks."
    above Helen's own mail, and "what happens on the May bank holiday?" (no leaf says "bank
    holiday") a message of the launch in April above "final invoices by 10 May"."""
    grounded = (signals[:, ENTITY] > 0) | (signals[:, AUTHOR] > 0) | told
    if not grounded.any():
        return set()
    base[~grounded] *= UNGROUNDED
    return set(np.flatnonzero(~grounded).tolist())


def _sections(cols: LeafColumns) -> npt.NDArray[np.bool_]:
    """Which leaves are sections of a document or of a note of yours: live, of no author, and
    not of an entity note."""
    return cols.known & (cols.author < 0) & ~of_kind(cols, "entity")


def of_kind(cols: LeafColumns, kind: NoteKind) -> npt.NDArray[np.bool_]:
    """Which leaves are of a note of `kind` ("entity", "user": `vault.layout.note_kind`)."""
    return cols.known & np.isin(cols.note, _kind_codes(cols, kind))


def _kind_codes(cols: LeafColumns, kind: NoteKind) -> list[int]:
    """The codes of the notes of `kind` among the live leaves' notes."""
    return [code for code in np.unique(cols.note[cols.known]).tolist() if note_kind(cols.note_names[code]) == kind]


def set_apart(base: npt.NDArray[np.float64], signals: npt.NDArray[np.float64], cols: LeafColumns) -> set[int]:
    """A question about something of an entity's ("what is in Okafor's team?"): when some leaf
    holds a word of the question and involves the entity (mentions it, or is written by it),
    the leaves of notes that never involve it — a conversation they take no part in and that
    never names them — keep `UNGROUNDED` of their base: "Ok team, Dad's 60th!", of the family's
    chat, had ranked above "Helen Okafor from our finance team"."""
    involved = (signals[:, ENTITY] > 0) | (signals[:, AUTHOR] > 0)
    if not (involved & (signals[:, LEX] > 0)).any():
        return set()
    known = cols.known[: len(base)]
    notes = cols.note[: len(base)]
    apart = known & ~np.isin(notes, np.unique(notes[involved & known]))
    base[apart] *= UNGROUNDED
    return set(np.flatnonzero(apart).tolist())


def bare_names(cols: LeafColumns) -> npt.NDArray[np.bool_]:
    """Which leaves are an entity note's heading alone ("# Mei Chen": no more terms than the
    name its file is named for): they say nothing of whom they name, but match the name's words
    as a whole, a short leaf's BM25 at its best, and "who is Mei?" had shown "# Mei Chen" first.
    "# May Chen / My aunt, a nurse." says something, however short."""
    named = np.full(len(cols.note_names) + 1, -1.0)  # per note code, its name's terms (-1: no entity note; last: no note)
    for code in _kind_codes(cols, "entity"):
        name = cols.note_names[code].rsplit("/", 1)[-1].removesuffix(".md").replace("-", " ")
        named[code] = min(len(terms(name)), OWN_NOTE_MIN_TERMS)
    return cols.known & (np.nan_to_num(cols.length, nan=np.inf) <= named[cols.note])


def signal_weights(named: Mapping[str, str], searched: int, averaged: bool) -> dict[str, float]:
    """The signals' weights for a question: `WEIGHTS`, with the dense one `NAMED_DENSE` when
    it names an author of the memory (`named`): their own words are the evidence, the entity
    and author signals find them, and the nearest vectors of the rest of the question only
    say the topic, often in someone else's words. Of a question searching more than
    `DENSE_TERMS` terms, when the model's vector is the mean of its words' (`averaged`, the
    static model), the dense weight is scaled by `DENSE_TERMS` / `searched`: its vector is the
    blurred mean of many words, its words together a specific lexical match. A model that
    reads the words in their context (e5) keeps its weight: scaled, its LoCoMo figures fell."""
    dense = NAMED_DENSE if named else WEIGHTS["dense"]
    if averaged and searched > DENSE_TERMS:
        dense *= DENSE_TERMS / searched
    return {**WEIGHTS, "dense": dense} if dense != WEIGHTS["dense"] else WEIGHTS


def base_scores(signals: npt.NDArray[np.float64], weights: Mapping[str, float]) -> npt.NDArray[np.float64]:
    """Σ w_s · s per row, added in `SIGNALS` order."""
    base = weights[SIGNALS[0]] * signals[:, 0]
    for column, name in enumerate(SIGNALS[1:], start=1):
        base = base + weights[name] * signals[:, column]
    return base


def note_shares(
    values: npt.NDArray[np.float64], notes: npt.NDArray[np.int32], sections: npt.NDArray[np.bool_] | None = None
) -> npt.NDArray[np.float64]:
    """Per leaf, its note's score: the mean of the note's best `NOTE_TOP` values (added best
    first), scaled so the best note is 1 (0 for a leaf of no known note). A leaf that is a
    section (`sections`: of a document or a note of yours) counts as `NOTE_TOP` of its value:
    a conversation says a thing over several short messages, and several that match say it is
    about the question; a document says it in one long section, and its other sections are
    about other things (the runbook's "Rollback" had counted a third of a chat's three messages
    that say "plan")."""
    out = np.zeros(len(values))
    known = np.flatnonzero(notes >= 0)
    if not len(known):
        return out
    order = known[np.lexsort((-values[known], notes[known]))]  # by note, best value first
    grouped = notes[order]
    starts = np.flatnonzero(np.concatenate(([True], grouped[1:] != grouped[:-1])))
    rank = np.arange(len(order)) - np.repeat(starts, np.diff(np.append(starts, len(order))))
    raw = np.zeros(int(grouped.max()) + 1)
    for place in range(NOTE_TOP):  # the best of each note, then the second, …: as a sum of the sorted values
        pick = order[rank == place]
        raw[notes[pick]] += values[pick]
    if sections is not None and sections.any():
        best = np.zeros_like(raw)
        np.maximum.at(best, notes[known[sections[known]]], values[known[sections[known]]] * NOTE_TOP)
        raw = np.maximum(raw, best)
    raw /= NOTE_TOP
    top = float(raw.max())
    if top <= 0:
        return out
    out[known] = raw[notes[known]] / top
    return out


def normalise_max(scores: dict[str, float]) -> dict[str, float]:
    top = max(scores.values(), default=0.0)
    return {k: v / top for k, v in scores.items()} if top > 0 else {}


def normalise_dense(scores: dict[str, float]) -> dict[str, float]:
    if not scores:
        return {}
    floor = statistics.median(scores.values())
    top = max(scores.values())
    span = top - floor
    if span <= 0:
        return {k: 1.0 for k in scores}
    return {k: max(0.0, (v - floor) / span) for k, v in scores.items()}
