"""The passes of `walk` over its strongest leaves that reorder the top: the phrase, heading
and answer bonuses, a reply that answers a message asking the question, the answer of the
best-matching note, and the messages scaled down for only asking or for telling of another
author's own life (where they stand in the formula: docs/ranking.md):

   phrase = the share of the question's adjacent pairs of content terms (in order, stop words
            skipped: "win fourth table tennis tournament" has four) that the leaf also holds
            adjacent — or, for `PHRASE_GAP_CREDIT` of a pair, with one term between ("move the
            public launch" for "move the launch") — among the `ASKING_TOP` strongest leaves
            that match the question's words (lex > 0; the others are not tokenized),
            added as `PHRASE_WEIGHT` · phrase · time_factor: of the messages that share a
            question's words, the one that says them together ("I won my fourth table tennis
            tournament") is the one it asks about, not the one that has them apart ("my first
            table tennis tournament … I won").
   other_author: a question about an author of the memory ("when did John run a 5K?"), not
            for their words: of the `ASKING_TOP` strongest leaves, a message by someone else
            that names none of the question's entities and speaks in the first person ("Last
            weekend I ran a 5K charity run", "we ran…": Maria's own run) keeps `OTHER_AUTHOR`
            of its own match (base · length_factor · time_factor); the context it earned stays, and it
            still gives its full base as context (a question to John is often the message
            before his answer).
   to_listener = `TO_LISTENER` for a message of the `ASKING_TOP` strongest by the one author
            a question names (not for their words) that holds its terms only in sentences
            written to its listener and says nothing in the first person ("Glad you've got
            that close tie back. Friends you can count on…" for "where has Maria made
            friends?": John's friend; `retrieval/listener.py`); else 1.
   of_self = `OF_SELF` for a message of the `ASKING_TOP` strongest by the speaker of a question
            that asks for their words about another author's thing ("what did Arne say about
            Wilma's store?") that holds its terms only in sentences that speak in the first
            person and not to the listener ("I keep my store notes on a whiteboard": his own;
            `listener.tells_of_self`); else 1.
   asking = `ASKING_ONLY` for a message that only asks ("What pet do you have?"), or that holds
            the question's terms only in what it asks ("Love seeing your dedication! Any
            activities you're looking forward to?" for "what activities does Mel enjoy?"), and
            `ASKING_LAST` for one that ends with a question, among the `ASKING_TOP`
            strongest leaves (`asking.asking`; a first-person wish to be told or advised,
            "I'm always up for some book recommendations", asks too: `retrieval/asking.py`):
            a question matches a question's words but holds no answer (the message after it, which earns its context, does); else 1.
   negated = `NEGATED` for one of the `ASKING_TOP` strongest leaves that says a word of the
            question is not done ("OK, let's not decide in chat" for "when did we decide to
            move the launch?": put off, no answer; `negation.negated_terms`), unless the
            question negates too ("why didn't we…?"), or asks what is still to come ("when do
            we decide…?") and the leaf puts it off to a time ("We decide at Thursday's launch
            sync": `negation.puts_off`, the answer); else 1 (`breakdown.negated`).
   other_occasion = `OTHER_OCCASION` for one of the `ASKING_TOP` strongest leaves about another
            occasion than the question's (`retrieval/occasion.py`): another ordinal before a
            word the question's goes with ("I won my first table tennis tournament" for "when did
            Emil win his fourth table tennis tournament?"), or, for "when did…?" asked of no plan,
            only what someone means to do in every sentence holding the question's words
            ("We're thinking about going camping"); else 1 (`breakdown.other_occasion`).
   heading: a section of a document or of a note of yours whose headings (its note's title,
            its heading path, the headings inside its text) include one the question names —
            every term of it, but the numbers, months and days that date it, is one of the
            question's: "Rollback" for "what is the rollback plan?" — adds `HEADING_WEIGHT` ×
            the share (by idf) of the question's terms those headings hold, times the time
            factor, among the `ASKING_TOP` strongest leaves (`retrieval/headings.py`); not for a
            question that names a speaker. BM25 weighs each leaf's length against the mean of
            its own kind's (messages, sections, entity notes: `ResidentLeaves._stats`).
   answer: a question that asks for a time ("When…"), a place ("Where…"), a person ("Who…"),
   a number ("How many…"), a title ("What book…": a quoted one, or a capitalised word that
   is no name of the memory's people, but those the question names, nor a time:
   `answer_type.names_title`), an email address ("What is Helen's email
   address?", no question of what Helen emailed) or an open task of a note ("What are my tasks
   for tomorrow?": `- [ ] Call the plumber`) adds `ANSWER_WEIGHT` (times the time factor) to those of the
   `ANSWER_TOP` strongest leaves whose text holds one (`answer_type`): of two messages that
   match "When is the concert?" alike, the one that says "Saturday" is the answer. The words by
   which a question names the kind it asks for ("what time", "which year", "how much",
   "email address", "my tasks";
   `answer_type.kind_terms`) are not searched: no leaf writes them beside its answer ("19:30"),
   and "took a long time" is no better match for "what time is the dinner?". Some questions
   say more than their kind (`answer_type.answer_test`): "what time…?" asks for a time of day
   ("19:00"), "how much is / does…?" for a sum of money written in a sentence with the
   question's words ("€1,200 for a load-testing run", not "7 to 9 working days, plus load
   testing"). For a place ("Where…"), a time of day, a count of people ("how many people…?"),
   a length of time ("how long does…?") or a sum of money ("how much is…?"; "She charges £15
   an hour" after "Found a new cleaner"), when the strongest leaf holds none, the strongest
   leaf of its note that holds one ranks right above it (`raise_topic_answer`,
   `breakdown.topic_answer`): "Ok team, Dad's 60th!" matches "where is Dad's 60th dinner?"
   best, and "I booked Golden Lantern, 19:00, table for 9", said in the same conversation in
   none of its words, answers it, and "what time is the dinner?" and "how many people are
   coming to the dinner?" too; the best match follows it, as the answer's context. For
   "when…?", a strongest leaf that names its day only as an ordinal ("on the 23rd") has the
   leaf of its note that writes that day with its month ("Saturday 23 March") ranked right
   above it (`raise_full_date`). Where no leaf among the strongest
   names a time of day with a word of the question and the best match's note names none,
   the day answers "what time…?" as it answers "when…?" ("what time is the launch?" of a
   memory that says only "Tuesday 23 April"; `answer_holds`). A message among the strongest that
   asks the question itself (a question of the same kind holding all its words: "Party
   planning: how many are coming?") is answered by the first reply after it (within
   `CONTEXT_SPAN`, by someone else; of a question naming an author, by them) that holds the
   answer and neither jokes nor declines ("somewhere in London lol", "no idea"): the reply rises to the asking message's score as a statement, plus
   `REVISION_MARGIN` (`retrieval/replies.py`, `breakdown.replies_to`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from vaultmind.index.lexical import terms
from vaultmind.retrieval.answer_type import (
    AnswerKind,
    answer_test,
    asks_clock,
    asks_narrowly,
    bare_days,
    dated_days,
    holds_answer,
)
from vaultmind.retrieval.asking import Asking, asking, asks_about
from vaultmind.retrieval.counts import counted_thing, counts
from vaultmind.retrieval.headings import heading_shares
from vaultmind.retrieval.listener import FIRST_PERSON, tells_of_listener, tells_of_self
from vaultmind.retrieval.negation import asks_ahead, negated_terms, negates, puts_off
from vaultmind.retrieval.occasion import asks_of_intent, names_other_ordinal, only_intends, ordinals
from vaultmind.retrieval.ordering import adjacent_pairs, leaf_terms, term_pairs
from vaultmind.retrieval.replies import Message, answered_replies, asks_the_question
from vaultmind.retrieval.revisions import REVISION_MARGIN
from vaultmind.retrieval.signals import AUTHOR, CONTEXT_SPAN, ENTITY

if TYPE_CHECKING:
    from vaultmind.index.leaf_columns import LeafColumns
    from vaultmind.retrieval.view import MemoryView


ANSWER_WEIGHT = 0.2
ASKING_ONLY = 0.7
ASKING_LAST = 0.9
NEGATED = 0.9
PHRASE_WEIGHT = 0.3
PHRASE_GAP_CREDIT = 0.5  # a question's pair said with one term between
HEADING_WEIGHT = 1.0  # a section whose headings hold the question's words: + this × their share of it
REPLY_REACH = 2 * CONTEXT_SPAN  # messages after one that asks the question where its reply is looked for
OTHER_OCCASION = 0.7  # a message of another occurrence than the question's, or of one only intended
OTHER_AUTHOR = 0.8  # the share of its own match kept by another's first-person message naming none of the question's entities
TO_LISTENER = 0.8  # the share kept by the named author's message that holds the question's words only where it speaks to its listener
OF_SELF = 0.8  # the share kept by the speaker's message that holds them only where it tells of itself, asked about another


def _scaled(final: dict[str, tuple[float, float]], leaves: set[str], by: float) -> set[str]:
    """Multiplies the value of each of `leaves` in `final` by `by`; returns them."""
    for leaf_id in leaves:
        value, factor = final[leaf_id]
        final[leaf_id] = (value * by, factor)
    return leaves


def scale_asking(final: dict[str, tuple[float, float]], texts: dict[str, str], query_terms: frozenset[str]) -> dict[str, Asking]:
    """Scales down the leaves of `texts` (the strongest) that only ask or end asking; returns them.
    One that ends asking and holds the question's terms only in what it asks (`asks_about`)
    counts as only asking: it tells nothing of them."""
    found: dict[str, Asking] = {}
    for leaf_id, text in texts.items():
        kind = asking(text)
        if kind == "last" and asks_about(text, query_terms):
            kind = "only"
        if kind is not None:
            _scaled(final, {leaf_id}, ASKING_ONLY if kind == "only" else ASKING_LAST)
            found[leaf_id] = kind
    return found


def scale_negated(final: dict[str, tuple[float, float]], texts: Mapping[str, str], question: str, query_terms: frozenset[str]) -> set[str]:
    """Scales down by `NEGATED` the leaves of `texts` (the strongest) that say a term of
    `query_terms` is not done ("OK, let's not decide in chat" for "when did we decide to move
    the launch?"): put off or denied, it is no answer; unless the question negates too ("why
    didn't we decide?" asks about what was not done), or asks when it is still to be done and
    the leaf puts it off to a time ("We decide at Thursday's launch sync" for "when do we
    decide…?": `negation.puts_off`). Returns them."""
    if negates(question):
        return set()
    ahead = asks_ahead(question)
    found = {
        leaf_id
        for leaf_id, text in texts.items()
        if not query_terms.isdisjoint(negated_terms(text)) and not (ahead and puts_off(text, query_terms))
    }
    return _scaled(final, found, NEGATED)


def scale_other_occasion(
    final: dict[str, tuple[float, float]], texts: Mapping[str, str], question: str, query_terms: frozenset[str], *, past_event: bool
) -> set[str]:
    """Scales down by `OTHER_OCCASION` the leaves of `texts` (the strongest) that tell of another
    occasion than the question's (`retrieval/occasion.py`): another ordinal before the words the
    question's goes with ("my first table tennis tournament" for "when did Emil win his fourth
    table tennis tournament?"), or, for a question of when something was done (`past_event`) and
    of no plan, only what someone means to do in every sentence holding the question's words
    ("We're thinking about going camping" for "when did Melissa go camping?"). Returns them."""
    asked = ordinals(question)
    intended = past_event and not asks_of_intent(question)
    if not asked and not intended:
        return set()
    found = {
        leaf_id
        for leaf_id, text in texts.items()
        if (asked and names_other_ordinal(text, asked)) or (intended and only_intends(text, query_terms))
    }
    return _scaled(final, found, OTHER_OCCASION)


def other_authors(
    final: dict[str, tuple[float, float]],
    at: dict[str, int],
    signals: npt.NDArray[np.float64],
    own: npt.NDArray[np.float64],
    cols: LeafColumns,
    texts: dict[str, str],
    naming: npt.NDArray[np.float64],
) -> set[str]:
    """Of `texts` (the strongest leaves; the question names an author of the memory), the
    messages by someone else that name none of the question's entities (entity and author
    signals 0) and speak in the first person ("Last weekend I ran a 5K"): someone telling of
    their own life. Each keeps `OTHER_AUTHOR` of its own match (`own`: base × length factor,
    times its time factor); the context it earned stays. One that names them only by a name
    common in its conversation ("Thanks, Mel! My family…" in Melissa's chat; `naming`, per row,
    the strongest weight of a query entity it names: `retrieval/name_weight.py`) is scaled by
    the share the name leaves unweighed, 1 − its weight. Returns them."""
    found: set[str] = set()
    for leaf_id, text in texts.items():
        k = at[leaf_id]
        unnamed = 1.0 - (float(naming[k]) if k < len(naming) and signals[k, ENTITY] else 0.0)
        if cols.author[k] < 0 or signals[k, AUTHOR] or unnamed <= 0 or not FIRST_PERSON.search(text):
            continue
        value, factor = final[leaf_id]
        final[leaf_id] = (value - (1 - OTHER_AUTHOR) * float(own[k]) * factor * unnamed, factor)
        found.add(leaf_id)
    return found


def scale_to_listener(
    final: dict[str, tuple[float, float]],
    at: dict[str, int],
    signals: npt.NDArray[np.float64],
    texts: dict[str, str],
    query_terms: frozenset[str],
    asks: Mapping[str, Asking],
) -> set[str]:
    """Of `texts` (the strongest leaves; the question names one author of the memory), the
    messages by that author that tell of the person they are written to
    (`listener.tells_of_listener`: "Glad you've got that same close tie back. Friends you can
    count on…" for "where has Maria made friends?") keep `TO_LISTENER` of their score, as
    one that only asks does (those are scaled already). Returns them."""
    found = {
        leaf_id
        for leaf_id, text in texts.items()
        if signals[at[leaf_id], AUTHOR] and asks.get(leaf_id) != "only" and tells_of_listener(text, query_terms)
    }
    return _scaled(final, found, TO_LISTENER)


def scale_of_self(
    final: dict[str, tuple[float, float]],
    speaking: set[str],
    texts: dict[str, str],
    query_terms: frozenset[str],
    asks: Mapping[str, Asking],
    possessors: Sequence[frozenset[str]],
) -> set[str]:
    """Of `texts` (the strongest leaves; the question asks for a speaker's words about another
    person it names: "what did Arne say about Wilma's store?"), the speaker's messages (`speaking`)
    that hold the question's words only where they tell of themselves, not of the `possessors`
    (the terms of each one's names; `listener.tells_of_self`: "I mark each milestone in
    green so I can follow my progress", not "I love Wilma's new store") keep `OF_SELF` of their
    score, as one that only asks does (those are scaled already). Returns them."""
    found = {
        leaf_id
        for leaf_id, text in texts.items()
        if leaf_id in speaking and asks.get(leaf_id) != "only" and tells_of_self(text, query_terms, possessors)
    }
    return _scaled(final, found, OF_SELF)


def phrase_bonus(
    query_terms: Sequence[str], final: dict[str, tuple[float, float]], rows: dict[str, dict[str, Any]]
) -> dict[str, float]:
    """Add `PHRASE_WEIGHT` × the leaf's phrase share (module doc) to each leaf of `rows` that
    says one of the query's adjacent term pairs (together, or one term apart for
    `PHRASE_GAP_CREDIT` of it); returns the shares."""
    wanted = adjacent_pairs(query_terms)
    shares: dict[str, float] = {}
    if not wanted:
        return shares
    for leaf_id, row in rows.items():
        text = row["text"] or ""
        held = leaf_terms(row["content_hash"], text)[0]
        said = {pair for pair in wanted if pair[0] in held and pair[1] in held}
        if not said:  # no pair has both its terms here: no need for the leaf's pairs
            continue
        adjacent, gapped = term_pairs(row["content_hash"], text)
        together = said & adjacent
        share = (len(together) + PHRASE_GAP_CREDIT * len((said & gapped) - together)) / len(wanted)
        if share:
            value, factor = final[leaf_id]
            final[leaf_id] = (value + PHRASE_WEIGHT * share * factor, factor)
            shares[leaf_id] = share
    return shares


def heading_bonus(
    query_terms: Sequence[str],
    final: dict[str, tuple[float, float]],
    rows: dict[str, dict[str, Any]],
    idf: Callable[[str], float],
) -> dict[str, float]:
    """Add `HEADING_WEIGHT` × the share of the question its headings hold (by idf; its note's
    title, its heading path, the headings in its text: `headings.heading_shares`) to each
    section of `rows` (the strongest leaves), times its time factor; returns the shares."""
    shares = heading_shares(query_terms, rows, idf) if query_terms else {}
    for leaf_id, share in shares.items():
        value, factor = final[leaf_id]
        final[leaf_id] = (value + HEADING_WEIGHT * share * factor, factor)
    return shares


def answer_bonus(holds: Callable[[str], bool], final: dict[str, tuple[float, float]], texts: dict[str, str]) -> set[str]:
    """Among `texts` (the `ANSWER_TOP` strongest leaves), those holding the kind of answer the
    question asks for (`holds`: `answer_type.answer_test`) gain `ANSWER_WEIGHT` (times their
    time factor); their ids are returned."""
    holding = {leaf_id for leaf_id, text in texts.items() if holds(text)}
    for leaf_id in holding:
        value, factor = final[leaf_id]
        final[leaf_id] = (value + ANSWER_WEIGHT * factor, factor)
    return holding


def answer_holds(
    question: str,
    kind: AnswerKind,
    content_terms: Sequence[str],
    final: Mapping[str, tuple[float, float]],
    texts: Mapping[str, str],
    at: dict[str, int],
    cols: LeafColumns,
    people: frozenset[str] = frozenset(),
) -> Callable[[str], bool]:
    """What holds the answer (`answer_type.answer_test`). "What time…?" asks for a time of day
    only where the memory says one of what it asks about: a leaf of `texts` (the strongest)
    naming a time of day with a word of the question, or in the note of the best match (where
    `raise_topic_answer` finds it). Otherwise the day it is on answers it, as for "when…?": "what
    time is the launch?" of a memory that says only "the launch is Tuesday 23 April" is not
    "Standup is at 9:30". "How many sailors are in the usability tests?" asks for a count of
    sailors ("5 sailors") only where a leaf of `texts` writes one beside another of the
    question's words ("usability tests with 5 sailors", not "I would get two turtles" for "how
    many turtles does Emil have?", which says nothing else the question asks of): `counts`;
    otherwise any number answers it."""
    holds = answer_test(question, kind, content_terms, people)
    thing = counted_thing(question) if kind == "quantity" and not asks_narrowly(question) else None
    beside = frozenset(content_terms) - {thing}
    if thing is not None and any(counts(text, thing) and not beside.isdisjoint(terms(text)) for text in texts.values()):
        return lambda text: counts(text, str(thing))
    if kind != "time" or not asks_clock(question) or not final:
        return holds
    wanted = frozenset(content_terms)
    clocked = [leaf_id for leaf_id, text in texts.items() if holds(text)]
    if any(not wanted.isdisjoint(terms(texts[leaf_id])) for leaf_id in clocked):
        return holds
    best = at[max(final, key=lambda leaf_id: final[leaf_id][0])]
    if cols.known[best] and any(cols.known[at[leaf_id]] and cols.note[at[leaf_id]] == cols.note[best] for leaf_id in clocked):
        return holds
    return lambda text: holds_answer(kind, text)


def raise_topic_answer(
    final: dict[str, tuple[float, float]], answers: set[str], at: dict[str, int], cols: LeafColumns, past_answers: bool = False
) -> str | None:
    """When the strongest leaf holds no answer of the kind asked for ("Ok team, Dad's 60th!"
    for "where is Dad's 60th dinner?"), the strongest leaf of its note that holds one ("I
    booked Golden Lantern") ranks right above it, the first of its note: the conversation that
    matches the question best is where its answer was said, often in words the question does
    not use, and the evidence cites the answer first. With `past_answers`, the strongest leaf
    that holds none, wherever one that holds one stands: an agreement ("Deal: …") closes the
    talk that led to it, also when a note records it in the question's words ("Agreed with
    Bob: …"). Its id is returned."""
    if not answers or not final:
        return None
    open_talk = [leaf_id for leaf_id in final if leaf_id not in answers] if past_answers else list(final)
    if not open_talk:
        return None
    best = max(open_talk, key=lambda leaf_id: final[leaf_id][0])
    if best in answers or not cols.known[at[best]]:
        return None
    note = cols.note[at[best]]
    held = [leaf_id for leaf_id in sorted(answers) if cols.known[at[leaf_id]] and cols.note[at[leaf_id]] == note]
    if not held:
        return None
    found = max(held, key=lambda leaf_id: final[leaf_id][0])
    value, factor = final[found]
    final[found] = (max(value, final[best][0] + REVISION_MARGIN), factor)
    return found


def raise_full_date(
    final: dict[str, tuple[float, float]], answers: set[str], texts: Mapping[str, str], at: dict[str, int], cols: LeafColumns
) -> str | None:
    """When the strongest leaf names its day only as an ordinal ("lunch at home on the 23rd"
    for "when is Dad's birthday?"), the strongest leaf of its note among `answers` that writes
    that day with its month ("March. Saturday 23 March.", the reply to "the 23rd of March,
    right?") ranks right above it (`raise_topic_answer`): the full date answers "when…?", the
    bare day only with it. Its id is returned."""
    if not answers or not final:
        return None
    best = max(final, key=lambda leaf_id: final[leaf_id][0])
    days = bare_days(texts.get(best, ""))
    if not days:
        return None
    dated = {leaf_id for leaf_id in answers if not days.isdisjoint(dated_days(texts[leaf_id]))}
    return raise_topic_answer(final, dated, at, cols)


def raise_replies(
    memory: MemoryView,
    final: dict[str, tuple[float, float]],
    asks: Mapping[str, Asking],
    answers: set[str],
    texts: Mapping[str, str],
    kind: AnswerKind,
    content_terms: Sequence[str],
    at: dict[str, int],
    cols: LeafColumns,
) -> dict[str, str]:
    """Of the messages that ask (`asks`), those that ask the question itself ("Party planning:
    how many are coming?"): the reply to each (`replies.first_reply`, within `REPLY_REACH`
    messages after it) rises to where the asking message would stand as a statement, when it
    holds the answer (of `answers`; `replies.answered_replies`). Reply id → the message it
    answers. For a question that names an author of the memory, `answers` holds only their
    messages: "what books has John read?" is not Tim's reply to John's "what book are you
    reading?". A reply that jokes or declines ("somewhere in London lol", "Not me",
    `replies.no_answer`) is passed over for the next."""
    asked = {
        leaf_id: ASKING_ONLY if how == "only" else ASKING_LAST
        for leaf_id, how in asks.items()
        if asks_the_question(texts[leaf_id], kind, content_terms)
    }
    if not asked or not answers:
        return {}
    near = memory.leaves.neighbours_of(sorted(asked), REPLY_REACH)
    rows = memory.leaves.rows(sorted({o for found in near.values() for o in found}))
    later = memory.leaves.columns(sorted(rows))
    place = {leaf_id: later.place(k) for k, leaf_id in enumerate(sorted(rows))}
    conversation: dict[str, tuple[str | None, list[Message]]] = {}
    for asker in asked:
        where = cols.place(at[asker])
        if where is None:
            continue
        following = sorted((p[1], o, p[2]) for o in near.get(asker, ()) if (p := place.get(o)) is not None and p[1] > where[1])
        conversation[asker] = (where[2], [(o, who, rows[o]["text"] or "") for _, o, who in following])
    return answered_replies(final, asked, answers, conversation, margin=REVISION_MARGIN, kind=kind)


def idf_of(memory: MemoryView, content_terms: Sequence[str]) -> Callable[[str], float]:
    """The inverse document frequency of each of the question's terms, log(1 + N / df)."""
    total = max(memory.leaves.document_frequency("")[1], 1)
    idf = {t: math.log(1 + total / max(memory.leaves.document_frequency(t)[0], 1)) for t in set(content_terms)}
    return idf.__getitem__
