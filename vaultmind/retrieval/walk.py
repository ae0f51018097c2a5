"""`walk`: deterministic, LLM-free retrieval fusing lexical, dense, entity, graph and time signals.

1. Read the question (`reading`): its search terms (author names, asking verbs and the window's
   relative words left out; misspellings read as the words and names the memory holds), its time
   window (`asked_window`), its entities and the authors it names (`people`, `wording`,
   `spelling`), and what it asks for beyond its words (a window alone, its author, open tasks).
2. Gather candidates: BM25 and dense top-N, the query entities' leaves (`entity_leaves`), the
   window's leaves, for a question about nothing but its author, that author's latest, and for
   one that asks for nothing but open tasks, the vault's open tasks in their order (`tasks`).
3. Score each: the signals fused into a base (`signals`; a name weighed by how common it is in
   its conversation, `name_weight`), the length factor, the context a
   strong match lends its neighbours, the time factor and the window's presence (`windows`),
   "who is…?" (`identity`), the message introducing a question's word to its conversation
   (`introduces`); then the passes over the strongest leaves (`bonuses`,
   `revisions`).
4. Order: each note's evidence, near-duplicates behind, the first hits spread over notes
   (`ordering`); each hit's `breakdown` explains its score.

The whole formula, its weights and every breakdown key: docs/ranking.md.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from vaultmind.embed.base import averages_words
from vaultmind.entities.ids import words
from vaultmind.retrieval.after_event import EVENT_HITS
from vaultmind.retrieval.answer_type import asks_narrowly, plain_answer
from vaultmind.retrieval.bonuses import (
    answer_bonus,
    answer_holds,
    heading_bonus,
    idf_of,
    other_authors,
    phrase_bonus,
    raise_full_date,
    raise_replies,
    raise_topic_answer,
    scale_asking,
    scale_negated,
    scale_of_self,
    scale_other_occasion,
    scale_to_listener,
)
from vaultmind.retrieval.day_mentions import day_mentions
from vaultmind.retrieval.dense import noticed, question_vector
from vaultmind.retrieval.entity_leaves import entity_signals
from vaultmind.retrieval.hits import cite_blocks, envelope, later_chunks, leaf_hits, summary_notes
from vaultmind.retrieval.identity import identity_bonus, introducing
from vaultmind.retrieval.introduces import asks_of_news, introduces
from vaultmind.retrieval.name_weight import name_weights
from vaultmind.retrieval.ordering import (
    diversify,
    note_best,
    note_coverage,
    note_evidence,
    note_match,
    on_topic,
)
from vaultmind.retrieval.people import (
    people_words,
    person_terms,
    possessed,
    possessor_terms,
    speaker_codes,
    speaker_names,
    spoken_of,
    to_each_other,
)
from vaultmind.retrieval.reading import read_question
from vaultmind.retrieval.retold import retold_leaves
from vaultmind.retrieval.revisions import revised_notes, revisions
from vaultmind.retrieval.set_aside import SET_ASIDE
from vaultmind.retrieval.signals import (
    AUTHOR,
    CANDIDATES,
    ENTITY,
    LEX,
    SIGNALS,
    UNGROUNDED,
    WEIGHTS,
    bare_names,
    base_scores,
    best_ids,
    conversation_context,
    ground,
    leaf_signals,
    length_factors,
    normalise_dense,
    normalise_max,
    of_kind,
    set_apart,
    signal_weights,
    without_common,
)
from vaultmind.retrieval.tasks import TASK_CANDIDATES, of_window, task_scores
from vaultmind.retrieval.windows import (
    OUTSIDE_WINDOW,
    after_end,
    in_time_asked,
    lateness,
    lead_up,
    naive_utc,
    nearness,
    recency,
    said_in,
    summary_time_factors,
    telling,
    time_factors,
    told_of,
    told_plans,
    window_times,
    within,
    yours_within,
)

if TYPE_CHECKING:
    from vaultmind.retrieval.view import MemoryView


CONTEXT_SHARE = 0.3
CONTEXT_SEEDS = 20
SPEAKER_WEIGHT = 0.5
TO_EACH_OTHER = 0.1  # of several speakers named, a message by one next to another's (`people.to_each_other`)
WINDOW_PRESENCE = 0.15
ANSWER_TOP = 100
# `raise_topic_answer`, and for "what time…?", "how many people…?", "how long…?", "how much is…?" (`asks_narrowly`;
# any time or number: too many messages name one, LoCoMo's S-MRR fell); an agreement ("Deal: …")
# closes the talk that matched "what did we agree…?" best, in words it seldom shares
TOPIC_ANSWER_KINDS = ("place", "agreement")
ASKING_TOP = 40
INFORMATIVE = 0.1  # a window-only question: + this × min(1, terms / `INFORMATIVE_TERMS`) inside the window
INFORMATIVE_TERMS = 24
LATEST_SAID = 0.03  # a window still ahead: + this × how late in the days before it a leaf was written
# (and a question about nothing but its author: × how late among the author's messages)


def walk(
    memory: MemoryView,
    question: str,
    *,
    limit: int = 10,
    reference_time: datetime | None = None,
    max_hops: int = 2,
) -> dict[str, Any]:
    """Ranked hits for a question: `{hits, total, truncated, query}` (docs/ranking.md)."""
    now = naive_utc(reference_time) if reference_time else datetime.now(UTC).replace(tzinfo=None)
    # the question as read: its terms, window, entities, authors, what it asks for (`reading`)
    asked = read_question(
        memory, question, reference_time, now, lambda event_question: walk(memory, event_question, limit=EVENT_HITS, reference_time=reference_time)["hits"]
    )
    # "what is due this week?": the tasks due inside the window, or written in it (`tasks.of_window`)
    timely = {task.id for task in of_window(asked.tasks, asked.window)[:TASK_CANDIDATES]} if asked.tasks and asked.window is not None else set()
    lexical = memory.leaves.search(asked.searched, CANDIDATES, asked.joined) if asked.searched else []
    if lexical and asked.window is not None and asked.only_window:  # … for the plans that name one of its days
        lexical = told_plans(memory, lexical, asked.window)
    dense: list[tuple[str, float]] = []
    notice: str | None = None  # why dense search is left out: the embedder failed
    if (
        memory.vectors is not None
        and asked.content_text.strip()
        and (asked.content_terms or asked.qents)  # "what was it?": only asking words, whose nearest vectors are noise
        and not asked.only_names
        and not asked.only_window
        and not asked.only_entity
        and not asked.only_tasks
    ):
        query_vector, notice = question_vector(memory, asked.content_text)
        if query_vector is not None:
            dense = memory.vectors.search(without_common(query_vector, memory.vectors.mean_direction()), CANDIDATES)

    entity_leaves, pair_leaves, graph_weights, own_notes = entity_signals(memory, [e for e, _ in asked.qents], max_hops)
    candidates: set[str] = {i for i, _ in lexical} | {i for i, _ in dense} | set(entity_leaves)
    if asked.only_tasks:
        candidates |= {task.id for task in asked.tasks[:TASK_CANDIDATES]}
    candidates |= timely
    if asked.only_names:  # "what did Whitfield say?": their messages, which seldom hold their own name
        written_by = sorted(name for name in memory.leaves.authors() if person_terms(name) & asked.authors)
        candidates |= set(memory.leaves.by_authors(written_by, CANDIDATES))
    timed = asked.window  # the window that ranks: none when the memory holds nothing then ("due by 10 May")
    leading = asked.window is not None and asked.ahead and asked.only_window  # "what are we doing next week?": what was said lately
    if asked.window is not None and leading:
        timed = lead_up(asked.window, now)
    if timed is not None:  # its leaves, found even sharing no word (of the days before a window ahead, the latest)
        held = set(memory.leaves.in_window(timed.start, timed.end, CANDIDATES, latest=leading))
        candidates |= held
        if not said_in(memory, timed.start, after_end(timed, now), now):
            timed = None
    # "what did Bob say yesterday?" when he wrote nothing then: his words nearest the window, not
    # the others' inside it — the window ranks nothing, and `query.window_none_by` names him
    silent: list[str] = []
    if asked.speakers and asked.window is not None and not asked.ahead:
        spoken = speaker_names(sorted(memory.leaves.authors()), asked.speakers, asked.named, asked.qents)
        near = memory.leaves.by_authors(spoken, CANDIDATES, near=(asked.window.start, asked.window.end))
        if near and not within(asked.window, memory.leaves.columns(near[:1]).ts).any():
            silent, timed = spoken, None
            candidates |= set(near)
    # "what happened on 23 April?": also the leaves that name that day, written whenever (`day_mentions`)
    named_day = set(day_mentions(memory, asked.window, now)) if asked.window is not None and not (asked.ahead or silent) else set()
    candidates |= named_day

    ids = sorted(candidates)
    at = {leaf_id: k for k, leaf_id in enumerate(ids)}  # a leaf's place in walk's arrays
    cols = memory.leaves.columns(ids)
    pair_bonus = WEIGHTS["entity"] * 0.5  # hop tightening: related query entities together
    lex, den = normalise_max(dict(lexical)), normalise_dense(dict(dense))
    # a name in most of its conversation's messages (a two-person chat's speakers) weighs little
    names = name_weights(memory, ids, at, cols, entity_leaves, graph_weights, [e for e, _ in asked.qents], asked.named)
    signals = leaf_signals(ids, at, cols, lex, den, asked.qents, asked.authors, entity_leaves, names.graph, asked.named, names.held)
    if asked.own:  # "what did I write on Thursday?": the asker is the author of their own notes
        signals[of_kind(cols, "user"), AUTHOR] = 1.0
    weights = signal_weights(asked.named, len(set(asked.searched)), averages_words(memory.embedder))
    base = base_scores(signals, weights)
    # of a window still ahead, or a past day asked alone ("what happened on 7 March?"), the leaves naming one of its days
    names_day = asked.window is not None and (asked.ahead or (asked.only_window and not asked.evented and asked.window.end - asked.window.start <= timedelta(days=1)))
    told = told_of(memory, ids, cols, asked.window) if asked.window is not None and names_day else np.zeros(len(ids), dtype=bool)
    ungrounded = ground(base, signals, told) if asked.content_terms and not lexical and dense and (asked.qents or told.any()) else set()
    if not ungrounded and lexical and possessed(asked.question, asked.qents):  # "Okafor's team": not "Ok team, Dad's 60th!"
        ungrounded = set_apart(base, signals, cols)
    bare = bare_names(cols)  # "# Mei Chen", an entity note of nothing but its heading
    base[bare] *= UNGROUNDED
    speaking = np.zeros(len(ids), dtype=bool)
    if asked.speakers:  # the speaker's own messages, not those of a listener the question also names
        speaking = np.isin(cols.author, speaker_codes(cols, asked.speakers, asked.named, asked.qents)) & (signals[:, AUTHOR] > 0)
        base[speaking] += SPEAKER_WEIGHT - WEIGHTS["author"]
        base[to_each_other(memory, ids, cols, speaking)] += TO_EACH_OTHER
    for leaf_id in pair_leaves:  # entity leaves: all among the candidates; × the weaker name's weight
        base[at[leaf_id]] += pair_bonus * names.weakest[at[leaf_id]]
    # "what did Dana say?" matches nothing whose next message answers it: no context, her messages by when
    context_of, reached, more = conversation_context(memory, ids, at, base, cols, seeds=0 if asked.only_names else CONTEXT_SEEDS)
    if reached:  # leaves only context brings: no signal of their own
        at.update((leaf_id, k) for k, leaf_id in enumerate(reached, start=len(ids)))
        ids = ids + reached
        if more.note_names is cols.note_names and more.author_names is cols.author_names:
            cols = cols.extended(more)
        else:  # the leaves were reloaded meanwhile: all the columns from the new load
            cols = memory.leaves.columns(ids)
        signals = np.vstack((signals, np.zeros((len(reached), len(SIGNALS)))))
        base = np.concatenate((base, np.zeros(len(reached))))
        more_told = told_of(memory, reached, more, asked.window) if asked.window is not None and names_day else np.zeros(len(reached), dtype=bool)
        told = np.concatenate((told, more_told))
    mentioned = np.fromiter((leaf_id in named_day for leaf_id in ids), dtype=bool, count=len(ids))
    told |= mentioned
    context = np.zeros(len(ids))
    for leaf_id, value in context_of.items():  # candidates, or leaves context reached
        context[at[leaf_id]] = value
    lengths = length_factors(cols.length)
    factors = np.ones(len(ids))
    retold = np.zeros(0, dtype=np.int64)
    if timed is not None:
        # a question about nothing but its window ("what happened yesterday?"): a leaf without
        # a time has no claim on it
        factors = time_factors(timed, window_times(timed, cols), now, undated=OUTSIDE_WINDOW if asked.only_window else 1.0)
        summary_time_factors(memory.index, timed, cols, factors)
        if not asked.only_window:  # "we went to a convention last month", written in April, tells of March
            retold = retold_leaves(memory, ids, cols, base * lengths + CONTEXT_SHARE * context, factors, timed)
            factors[retold] = 1.0
        factors[mentioned] = 1.0  # a leaf that names the day tells of it, whenever written
    scores = (base * lengths + CONTEXT_SHARE * context) * factors
    identity = identity_bonus(memory, asked.asked_who, entity_leaves, own_notes, at, cols)
    if asked.asked_who is not None and not own_notes.get(asked.asked_who):  # "who is Helen?" of no note of hers
        identity = np.maximum(identity, introducing(memory, asked.asked_who, asked.qents, entity_leaves, at, cols))
    scores += identity
    # "open tasks for the launch": the words filter them; a window adds its own
    tasked = task_scores(asked.tasks, at, len(ids), None if asked.only_tasks else {i for i, _ in lexical} | timely)
    scores += tasked
    inside = (within(timed, cols.ts) if timed is not None else np.zeros(len(ids), dtype=bool)) | mentioned
    scores += WINDOW_PRESENCE * inside
    counted, tells = told & (asked.ahead or inside), told.astype(float)  # the leaves naming one of its days the score raises, by how much
    if names_day and not asked.ahead:  # "what happened on 7 March?": "# Thursday, 7 March 2024" over a runbook edited that day,
        tells = telling(memory, ids, counted)  # by what it tells beyond the date
        scores += WINDOW_PRESENCE * counted * tells
    latest = np.zeros(len(ids))
    if asked.window is not None and asked.ahead:  # of what was said of a window still to come, the latest (plans change),
        latest = LATEST_SAID * lateness(lead_up(asked.window, now), cols.ts)
        scores += latest + WINDOW_PRESENCE * counted * tells  # and what names one of its days
    elif silent and asked.window is not None:  # the window ranks the speaker's messages by how near it they are
        latest = WINDOW_PRESENCE * nearness(asked.window, cols.ts, np.isin(cols.author, speaker_codes(cols, asked.speakers, asked.named, asked.qents)))
        scores += latest
    elif asked.latest or asked.earliest:  # "when did I last (first) email Dana?": of the messages that say it, the latest (earliest) first
        latest = in_time_asked(memory, ids, cols, scores, asked.content_terms, signals[:, LEX] > 0, now, earliest=asked.earliest)
        scores += latest
    elif asked.only_names:  # "what did Dana say?": of her messages, the latest first (ties, near-ties)
        latest = LATEST_SAID * recency(cols.ts, signals[:, AUTHOR] > 0)
        scores += latest
    informative = np.zeros(len(ids))
    about = inside if (timed is not None or mentioned.any()) and asked.only_window else None  # of the window's messages, those that say the most
    if asked.only_entity:  # of the leaves about whom it names, those that say the most
        about = (signals[:, ENTITY] > 0) | (signals[:, AUTHOR] > 0)
    if about is not None:
        informative = INFORMATIVE * np.minimum(1.0, np.nan_to_num(cols.length) / INFORMATIVE_TERMS) * about
        scores += informative
    # "when did Nate get his turtles?": the day he told of them, not the later days that take them as known
    introduced = introduces(memory, asked.content_terms, ids, signals[:, LEX] > 0) if asks_of_news(asked) else np.zeros(len(ids))
    scores += introduced * factors
    set_behind = np.zeros(len(ids), dtype=bool)
    if asked.aside:  # "what did Mei say apart from the garden?": her words, not of the garden
        set_behind[[at[leaf_id] for leaf_id, _ in memory.leaves.search(sorted(asked.aside), CANDIDATES) if leaf_id in at]] = True
        scores[set_behind] *= SET_ASIDE
    final: dict[str, tuple[float, float]] = dict(zip(ids, zip(scores.tolist(), factors.tolist(), strict=True), strict=True))
    top = best_ids(ids, scores, ANSWER_TOP if asked.kind else ASKING_TOP)
    rows = memory.leaves.rows(top)  # also the rows `diversify` reads
    texts = {leaf_id: row["text"] or "" for leaf_id, row in rows.items()}
    strongest = [leaf_id for leaf_id in top[:ASKING_TOP] if leaf_id in rows]
    asks = scale_asking(final, {leaf_id: texts[leaf_id] for leaf_id in strongest}, frozenset(asked.content_terms))
    negated = scale_negated(final, {leaf_id: texts[leaf_id] for leaf_id in strongest}, asked.question, frozenset(asked.content_terms))
    # "when did Emil win his fourth tournament?": not "I won my first tournament", nor "thinking of going" for "when did she go?"
    elsewhen = scale_other_occasion(final, {leaf_id: texts[leaf_id] for leaf_id in strongest}, asked.question, frozenset(asked.content_terms), past_event=asked.kind == "time" and asked.tense == "past")
    # "when did John run a 5K?": not Maria's "I ran a 5K charity run"
    others = other_authors(final, at, signals, base * lengths, cols, {leaf_id: texts[leaf_id] for leaf_id in strongest}, names.naming) if asked.named and not asked.speakers else set()
    for leaf_id in others:  # another's news, of their own life, introduces nothing of whom the question names
        score, factor = final[leaf_id]
        final[leaf_id] = (score - float(introduced[at[leaf_id]]) * factor, factor)
        introduced[at[leaf_id]] = 0.0
    # "where has Maria made friends?": not her "Glad you've got…", written of John's
    listener = scale_to_listener(final, at, signals, {leaf_id: texts[leaf_id] for leaf_id in strongest}, frozenset(asked.content_terms), asks) if len(asked.named) == 1 and not asked.speakers else set()
    # "what did Arne say about Wilma's store?": not his "I … track my progress", told of himself
    owners = spoken_of(asked.question, asked.qents, asked.named, asked.speakers) if asked.speakers else set()
    selfish = (
        scale_of_self(final, {ids[k] for k in np.flatnonzero(speaking).tolist()}, {leaf_id: texts[leaf_id] for leaf_id in strongest}, frozenset(asked.content_terms), asks, possessor_terms(owners, asked.qents, asked.named))
        if owners
        else set()
    )
    people = people_words(memory) if asked.kind in ("person", "title") else frozenset()
    if asked.kind == "title":  # no title, the name of someone a message thanks ("Thanks, Mel…"): but of whom the question names, the entity's
        people -= {w.lower() for _, surface in asked.qents for w in words(surface)}
    answers = answer_bonus(answer_holds(asked.question, asked.kind, asked.content_terms, final, texts, at, cols, people), final, texts) if asked.kind else set()
    # "how many are coming?" asked in the chat; of a question naming an author, the reply by one of them
    answerers = {leaf_id for leaf_id in answers if not asked.named or signals[at[leaf_id], AUTHOR] > 0}
    replies = raise_replies(memory, final, asks, answerers, texts, asked.kind, asked.content_terms, at, cols) if asked.kind else {}
    worded = {leaf_id: rows[leaf_id] for leaf_id in strongest if signals[at[leaf_id], LEX] > 0}  # a lexical match
    phrases = phrase_bonus(asked.content_terms, final, worded)
    idf = idf_of(memory, asked.content_terms)
    # a section is nobody's words: not what "what did Helen say about…" asks for
    headed = heading_bonus(asked.content_terms, final, {leaf_id: rows[leaf_id] for leaf_id in strongest}, idf) if not asked.speakers else {}
    # "where…?", "what time…?", "how many people…?": the answer of the best-matching note, said in
    # other words, above that best match (after the passes that raise the best match: it stays below)
    topic_answer = (
        raise_topic_answer(final, answers, at, cols, past_answers=asked.kind == "agreement")
        if asked.kind in TOPIC_ANSWER_KINDS or asks_narrowly(asked.question)
        else None
    )
    if asked.kind == "time" and topic_answer is None:  # "when…?": "Saturday 23 March" above "on the 23rd"
        topic_answer = raise_full_date(final, answers, texts, at, cols)
    # "When is the launch?", "where do we meet?": a date or place as it stands now, which changes
    current = asked.kind in ("time", "place") and asked.window is None and asked.tense != "past"
    answering = {leaf_id: row for leaf_id, row in worded.items() if leaf_id in answers}
    # of what was said of a window still ahead ("what's coming up in April?"), the plan as it now stands
    revised = revisions(final, answering if current else worded, asked.content_terms, idf) if current or asked.ahead else {}
    for leaf_id in top:  # the only leaves the passes above change
        scores[at[leaf_id]] = final[leaf_id][0]
    # a summary's chunks after its best add no hit (the best answers as the summary, `leaf_hits`):
    # left out of the head, so that `limit` hits are shown when there are, and of `total`
    summary_of = summary_notes(memory, cols)
    folded = later_chunks(sorted(np.flatnonzero(summary_of >= 0).tolist(), key=lambda k: (-scores[k], ids[k])), summary_of)
    # Only the head is diversified and the hits shown are explained; the rest only counts in
    # `total`. A note's best leaf is in the head whenever one of its leaves is: the head's
    # notes are ranked from the head alone.
    width = max(limit * 3, 30)
    if folded:
        kept = [k for k in range(len(ids)) if k not in folded]
        head = best_ids([ids[k] for k in kept], scores[kept], width)
    else:
        head = best_ids(ids, scores, width)
    head_at = np.array([at[leaf_id] for leaf_id in head], dtype=np.int64)
    head_notes = np.unique(cols.note[head_at[cols.known[head_at]]])
    head_names = {cols.note_names[code] for code in head_notes.tolist()}
    coverage = note_coverage(memory, asked.content_terms, head_names, asked.joined)
    # the words that name the window ("7 March") are the window's to weigh: a note that names the month is not about the question
    matched = note_match(memory, [t for t in asked.searched if t not in asked.dated], head_names, asked.joined)
    note_rank = note_evidence(scores, cols, coverage, head_at, matched)
    places = {leaf_id: place for leaf_id in head if (place := cols.place(at[leaf_id])) is not None}
    if revised:
        revised_notes(note_rank, places, revised, final)
    scored: list[tuple[str, float, dict[str, Any]]] = [(leaf_id, final[leaf_id][0], {}) for leaf_id in head]
    ranked: list[tuple[str, float, dict[str, Any]]] = []
    # the named speaker's own messages, and whether each may speak for its note
    topical = on_topic(speaking, signals[: len(speaking), LEX], cols)
    voiced = {ids[k]: bool(topical[k]) for k in np.flatnonzero(speaking).tolist()}
    for leaf_id, score, flags in diversify(memory, scored, limit, places, note_rank, rows, voiced, note_best(factors, cols, head_at)):
        factor = final[leaf_id][1]
        k = at[leaf_id]
        breakdown: dict[str, Any] = {name: round(v, 4) for name, v in zip(SIGNALS, signals[k].tolist(), strict=True)}
        breakdown.update(
            {
                "context": round(float(context[k]), 4),
                "note_coverage": round(coverage.get(places.get(leaf_id, ("",))[0], 0.0), 4),
                "note_evidence": round(note_rank.get(places.get(leaf_id, ("",))[0], score), 4),
                "speaker": bool(k < len(speaking) and speaking[k]),  # its author weighed `SPEAKER_WEIGHT`
                "inside": bool(inside[k]),  # in the window: + `WINDOW_PRESENCE`
                "pair": leaf_id in pair_leaves,
                "answer": leaf_id in answers,
                "topic_answer": leaf_id == topic_answer,  # the answer of the best-matching note: at least the best leaf's score + `REVISION_MARGIN`
                "replies_to": replies.get(leaf_id),  # the message that asks the question, which it answers
                "revises": revised.get(leaf_id),  # the earlier leaf it changes, and now outranks
                "length_factor": round(float(lengths[k]), 4),
                "other_author": leaf_id in others,  # another's account of their own: its own match × `OTHER_AUTHOR`
                "to_listener": leaf_id in listener,  # the named author's words of the listener: × `TO_LISTENER`
                "of_self": leaf_id in selfish,  # the speaker's words of their own life, asked about another's: × `OF_SELF`
                "asking": asks.get(leaf_id),
                "negated": leaf_id in negated,  # says a word of the question is not done: × `NEGATED`
                "other_occasion": leaf_id in elsewhen,  # of another occurrence, or one still intended: × `OTHER_OCCASION`
                "phrase": round(phrases.get(leaf_id, 0.0), 4),
                "heading": round(headed.get(leaf_id, 0.0), 4),  # its headings' share of the question: + `HEADING_WEIGHT` ×
                "time_factor": factor,
                "ungrounded": k in ungrounded,  # its base × `UNGROUNDED`
                "bare_name": bool(k < len(bare) and bare[k]),  # an entity note's heading alone: × `UNGROUNDED`
                "informative": round(float(informative[k]), 4),
                "introduces": round(float(introduced[k]), 4),  # of its conversation's first note to say the question's words: `INTRODUCES` × their share
                "set_aside": bool(set_behind[k]),  # holds what a question searching nothing else sets aside: × `SET_ASIDE`
                "identity": round(float(identity[k]), 4),  # of the entity a "who is…?" asks about: its own note
                "task": round(float(tasked[k]), 4),  # an open task a question asks for: `TASK_WEIGHT` × its place (`retrieval/tasks.py`)
                "latest": round(float(latest[k]), 4),  # `LATEST_SAID`: a window still ahead, only an author asked; `in_time_asked`: "when did I last (first)…?"; `WINDOW_PRESENCE` × the speaker's nearness to a window without their words
                "retold": bool(np.any(retold == k)),  # outside the window, but names a time in it (`retold`)
                "names_window_day": bool(counted[k]),  # names one of the window's days (ahead; a past day asked alone, written inside it): + `WINDOW_PRESENCE` × `telling`
                "telling": round(float(counted[k] * tells[k]), 4),  # how much it tells beyond the date (`windows.telling`; 1 ahead)
                "weights": dict(weights),  # a copy: a caller's edit of it changes no later ranking
                **flags,  # `diversify`'s
            }
        )
        ranked.append((leaf_id, score, breakdown))
    hits = leaf_hits(memory, ranked, rows)
    cite_blocks(memory, hits, asked.content_terms, plain_answer(asked.kind))
    query_info: dict[str, Any] = {
        "terms": sorted(set(asked.qterms)),
        "content_terms": sorted(set(asked.content_terms)),
        "entities": [{"id": e, "surface": s} for e, s in asked.qents],
        "time_window": asked.window.to_dict() if asked.window else None,
        "window_ahead": asked.ahead,  # the window is still to come: the hits are what was said before it
        # the memory holds nothing inside the window (not only: no hit shown is inside it)
        "window_empty": asked.empty,
        # "what did I write on 11 March?": none of the asker's notes is dated inside the window
        "window_none_yours": bool(asked.own) and asked.window is not None and not yours_within(asked.window, cols),
        # "what did Bob say yesterday?": the named speakers, none of whose messages is dated inside the window
        "window_none_by": silent,
        "corrected": asked.corrected,  # misspelt word → the word read
        "answer_kind": asked.kind,
        "open_tasks": asked.only_tasks,  # asks for nothing but the open tasks: the hits are the vault's (`retrieval/tasks.py`)
        "reference_time": now.isoformat() + "Z",
    }
    return envelope(hits, len(final) - len(folded), query=query_info, **noticed(notice))
