"""`walk`: deterministic, LLM-free retrieval fusing lexical, dense, entity, graph and time signals.

1. Read the question: its search terms (same tokenizer as the index), a time window if it
   names one (`timeparse`), and its entities (same normalization and registry as ingest).
   Words that name an author of the memory ("what did Nate say…") are matched by the author
   and entity signals, not by content: the lexical and dense queries leave them out. A
   message rarely names its own author, so keeping them would favour the messages addressed
   *to* that person over the ones written by them (the question's own wording is kept when
   nothing else is left). A name counts as written capitalised ("Bill", not the "bill" that is
   due; "Summer", not "the summer holidays"), or as the question names an author's entity,
   stop words included ("What did Will say?"); a name that is a word of the question's time
   window ("in May") is the month, not May Chen ("Jan" in "in January" is still Jan). A name
   written in lower case ("what did john say?") is read as capitalised when the memory writes
   it as a name (`names_capitalised`). A question about nothing but its author ("What did
   John Doe say?") is not searched densely: the nearest vectors to "what did say" are noise.
   A misspelt word no leaf holds, and no word list, is read as the English word leaves hold
   with two letters swapped back or a left-out letter put back ("lauch" → "launch";
   `retrieval/spelling.py`), and `query.corrected` says so; a misspelt name the same way, as
   a word of a name the memory knows (an entity's or an author's: "Okafro" → Okafor) before
   the question's entities and authors are read, and a name's possessive written without its
   apostrophe as the possessive ("Okafors team" → Okafor's; not "James", an English word).
   The verb of a who-question is searched with its agent noun where a leaf holds it ("who owns
   the runbook?" meets "Owner: Marco", which the stemmer keeps apart from "own"), and the
   verbs by which the asker asks what they wrote ("what did I note last week?") are not
   searched, as "say" is not, and the asker is the author of their own notes (`author`;
   `retrieval/wording.py`) — and of what such a question asks: a name it holds is not an
   author ("what did I write to Paul?" is not "what did Paul say?"). A
   question about nothing but its author ("what did Whitfield say?") also takes that author's
   latest messages as candidates: they seldom hold their own name. Their messages then rank
   latest first (of equal matches, and of near-equal ones, the latest stands: it may change
   what came before): each adds
   `LATEST_SAID` × how late among them it was written (`windows.recency`), and no context is
   given, as no message matched a question that asks nothing but who spoke.
2. Gather candidates: BM25 top-N, dense top-N, the leaves where the query entities occur
   (for two or more entities related within `max_hops` in the co-occurrence graph, the leaves
   holding both come first — hop tightening), and, with a window, leaves inside it.
   Unsealed leaves are searchable from the moment they are indexed.
3. Score every candidate with one documented formula (weights in `WEIGHTS`):

       base    = Σ w_s · s   for s in lex, dense, entity, graph, note, note_dense, author
       score   = (base · length_factor + CONTEXT_SHARE · context) · time_factor · asking
                 + PHRASE_WEIGHT · phrase · time_factor + WINDOW_PRESENCE · inside

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
            terms: a static vector of many words is their blurred mean (its nearest message
            shares the drift, not the point), while each more word makes the lexical match
            more specific
   entity = share of the query's entities the leaf mentions, is written by, or whose entity
            note it is in ("who is Dana?": her own note, when it holds more than a heading)
                                                                           ∈ [0, 1]
   graph  = strongest co-occurrence weight between an entity of the leaf and a query
            entity, normalised by the strongest such weight (0 when the leaf already has
            every query entity)                                            ∈ [0, 1]
   note   = how well the leaf's whole note (conversation, session, document) matches: the
            mean of its best three lexical scores, scaled so the best note is 1; a section of
            a document or note counts thrice (a document says a thing in one section, a
            conversation over several messages)
   note_dense = the same over the note's best three dense scores
   author = 1 when the leaf's author is named in the question ("what did Nate say…"), by a
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
   phrase = the share of the question's adjacent pairs of content terms (in order, stop words
            skipped: "win fourth video game tournament" has four) that the leaf also holds
            adjacent — or, for `PHRASE_GAP_CREDIT` of a pair, with one term between ("move the
            public launch" for "move the launch") — among the `ASKING_TOP` strongest leaves
            that match the question's words (lex > 0; the others are not tokenized),
            added as `PHRASE_WEIGHT` · phrase · time_factor: of the messages that share a
            question's words, the one that says them together ("I won my fourth video game
            tournament") is the one it asks about, not the one that has them apart ("my first
            video game tournament … I won").
   other_author: a question about an author of the memory ("when did John run a 5K?"), not
            for their words: of the `ASKING_TOP` strongest leaves, a message by someone else
            that names none of the question's entities and speaks in the first person ("Last
            weekend I ran a 5K charity run": Maria's own run) keeps `OTHER_AUTHOR` of its own
            match (base · length_factor · time_factor); the context it earned stays, and it
            still gives its full base as context (a question to John is often the message
            before his answer).
   asking = `ASKING_ONLY` for a message that only asks ("What pet do you have?"), or that holds
            the question's terms only in what it asks ("Love seeing your dedication! Any
            activities you're looking forward to?" for "what activities does Mel enjoy?"), and
            `ASKING_LAST` for one that ends with a question, among the `ASKING_TOP`
            strongest leaves (`answer_type.asking`): a question matches a question's words but
            holds no answer (the message after it, which earns its context, does); else 1.
   time_factor = 1 inside the window, `AFTER_WINDOW` for up to `AFTER_WINDOW_DAYS` after it
            (people tell of an event afterwards: "I watched it last night" is written the
            day after the evening the question names) but never past the reference time
            (what was written later was not there yet), `OUTSIDE_WINDOW` elsewhere — but 1 for
            one of the strongest messages outside it whose own time expression, read from when
            it was written, names a time in it ("a convention last month", written in April, for
            March; "a trip next month" said before it: `retold`) — 1 without
            a window or without a timestamp (a note of yours outside the window counts as
            without one: its date finds it, never takes it down; `_window_times`) — except for a question about nothing but its
            window ("what happened yesterday?": only asking words besides it), where a leaf
            without a time has no claim and is outside; a summary's leaves take their
            summary's time range (inside when it overlaps the window). A window the memory
            holds nothing in (nor just after it) ranks nothing: "what is due by 10 May?" asked
            in March reads last May, and used to take every dated message down below undated
            notes; the window is still reported (`query.time_window`). The window's relative
            words ("last", "week", "yesterday", the weekday of "last Tuesday") are not
            searched, lexically or densely: a message that says "last year's price" is no
            match for "what happened last month?", nor one that says "Tuesday 23 April" for
            "what happened last Tuesday?"; the words that name a date ("June", "14", "Q2")
            still are. A question whose only words are its window's relative ones ("what did
            we do yesterday?") searches no words: the window's leaves, the dense and entity
            signals rank. A date or month named without its year and without relative words
            ("on 7 March", "in May") is the most recent one before the reference time, or, when
            the memory holds nothing then, an earlier year in which it holds something (an
            archive of 2024 asked in 2026): the one holding most of the question's lexical
            matches (not the window's own words: "March 20" says nothing of the year asked
            about), else most messages of the authors it names, else the latest (`windows.year_held`).
            A question about what is to come ("what will we do in April?", by its auxiliaries)
            reads the next one, and so does one about what is when the next one is within
            `windows.PRESENT_AHEAD` ("what are we doing in January?" asked in December), and
            one that does not ask what was when no year holds anything, or asks what was
            planned for it ("what did we plan for April?", `windows.asks_of_plans`; not
            "what did we decide on 7 August?"); "on Friday" asked of
            what is to come is the coming Friday. A window the memory holds nothing in that is
            still ahead of the reference time (a note of yours dated for a day of it, a
            party's `date:`, is said before it: `_said_in`), or begun but empty ("what is happening in
            April?" asked in March, "next week", "today" at breakfast), can only be told of by
            what was said before it: its own words ("April") are searched like any other (not
            its asking words: "doing"), a question about nothing but it ranks the
            `windows.LEAD_UP_DAYS` before the reference time (or the window's length, when
            longer; their latest leaves) as its window — its plan words still searched ("what
            is the May plan?", for the plans written whenever before that name one of its
            days: `_told_plans`), as they are beside other words ("the plan for the launch
            in April") — a leaf that names one of its days
            ("Friday 21 March", "next Tuesday", read from when it was written:
            `windows.names_a_day_in`) adds `WINDOW_PRESENCE`, and each adds `LATEST_SAID` × how
            late in those days it was written (plans change: "we move the launch to 23 April"
            over "still 9 April"); `query.window_ahead` says so.
   inside = 1 for a leaf whose time falls in the question's window, else 0: of a window's
            leaves, even those no other signal reaches come before the weak matches outside
            it ("what happened in May?"). A question about nothing but its window ("what
            happened last week?", "what did we do in March?": only asking words and the
            window's own words besides it) is not searched, lexically or
            densely — "what happened" says nothing of which messages matter — and each leaf
            inside the window adds `INFORMATIVE` · min(1, terms / `INFORMATIVE_TERMS`): the
            messages that say the most lead, not "ok" and "me too". The same for a question
            about nothing but whom or what it names ("tell me about Bob": not the word "tell"),
            among the leaves that involve them.
   Two query entities related within `max_hops` that a leaf holds together add half an
   entity weight (hop tightening). When no leaf holds a word of the question's content, the
   dense match is all that speaks for a leaf, and the best one scores in full however weak it
   is: then a leaf that involves none of the query's entities, nor names a day of a window still
   ahead, keeps `UNGROUNDED` of its base ("what is Helen Okafor responsible for?": Helen's
   mail, not the nearest vector; "what happens on the May bank holiday?": "final invoices by
   10 May"). A question about something of an entity's, the entity written in the possessive
   ("what is in Okafor's team?"), when some leaf holds a word of it and involves the entity:
   the leaves of notes that never involve it keep `UNGROUNDED` of their base (`_apart`; "Ok
   team, Dad's 60th!" of the family's chat, where Helen never speaks nor is named, had ranked
   above "Helen Okafor from our finance team"). An entity note of nothing but its heading
   ("# Mei Chen") keeps `UNGROUNDED` of its base too (`breakdown.bare_name`): it matches a
   name's words at a short leaf's best, and says nothing.
   heading: a section of a document or of a note of yours whose headings (its note's title,
            its heading path, the headings inside its text) include one the question names —
            every term of it, but the numbers, months and days that date it, is one of the
            question's: "Rollback" for "what is the rollback plan?" — adds `HEADING_WEIGHT` ×
            the share (by idf) of the question's terms those headings hold, times the time
            factor, among the `ASKING_TOP` strongest leaves (`retrieval/headings.py`); not for a
            question that names a speaker. BM25 weighs each leaf's length against the mean of
            its own kind's (messages, sections, entity notes: `ResidentLeaves._stats`).
   answer: a question that asks for a time ("When…"), a place ("Where…"), a person ("Who…"),
   a number ("How many…"), a title ("What book…"), an email address ("What is Helen's email
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
   testing"). For a place ("Where…") or a time of day, when the strongest leaf holds none,
   the strongest leaf of its note that holds one ranks right after it (`_topic_answer`,
   `breakdown.topic_answer`): "Ok team, Dad's 60th!" matches "where is Dad's 60th dinner?"
   best, and "I booked Golden Lantern, 19:00", said in the same conversation in none of its
   words, answers it, and "what time is the dinner?" too. Where no leaf among the strongest
   names a time of day with a word of the question and the best match's note names none,
   the day answers "what time…?" as it answers "when…?" ("what time is the launch?" of a
   memory that says only "Tuesday 23 April"; `_answer_test`). A message among the strongest that
   asks the question itself (a question of the same kind holding all its words: "Party
   planning: how many are coming?") is answered by the first reply after it (within
   `CONTEXT_SPAN`, by someone else; of a question naming an author, by them) that holds the
   answer and neither jokes nor declines ("somewhere in London lol", "no idea"): the reply rises to the asking message's score as a statement, plus
   `REVISION_MARGIN` (`retrieval/replies.py`, `breakdown.replies_to`).
   identity: a question about nothing but who or what an entity is ("who is Bob?", "what is
   Harbor Hall?", "tell me about Dana") or what someone does ("what does Bob work on?", "what
   is Marco's job?": the words "work", "job" are not searched, `wording.role_terms`) adds `IDENTITY_WEIGHT` to the leaves of that entity's
   own note (when they hold more than its heading), and half that to the leaves of other
   entities' notes that mention it ("Harbor Hall … Contact: Dana Whitfield, events manager"):
   what the memory says it is comes first. When its own note says nothing (a heading alone:
   "# Dana Whitfield"), those of them that say who it is add all of `IDENTITY_WEIGHT`
   ("Contact: Dana Whitfield, events manager"; not "Manages Omar.", `_describing`). When it
   has no note of its own, the messages and document sections that say who it is add half of
   `IDENTITY_WEIGHT` ("Helen Okafor from our finance team", "Finance (invoices, deposit): Helen
   Okafor"; not "Thanks Helen, will do": `people.introduces`, `_introducing`).
   revision: a question about a time or place as it stands now (no window, not asking what
   was) — of the strongest leaves that share its words and hold such an answer, one that says
   something changed in a sentence naming a word of the question ("party postponed again: 26
   April": `revisions.changes`; not one that asks, proposes or denies it), at least
   `REVISION_COVER` by idf of the question's words ("our app launch moved" changes no "code
   freeze for the app"; a word of time it names is the new time, "book club moved to Friday"
   no change of the Friday market, unless it says it beside another of the question's words,
   as the question does: "move the launch evening" changes the launch evening), ranks just
   above the earlier ones it shares that word with ("the party is on 5 April"), the latest of several
   changes first, its note before theirs, when it scores at least `REVISION_FLOOR` of the
   strongest of them (`_revisions`; `breakdown.revises` names it). The same among what was said
   of a window still ahead ("what's coming up in April?": Porto, which replaced Lisbon).
4. Diversify: a hit whose text repeats an earlier hit's (same content hash, or ≥ 90 % of its
   terms) is moved behind the others, and the first five hits are the best hits of the five
   notes with the most evidence (when there are that many), so one conversation cannot crowd
   out every other source — among the notes whose evidence is at least `SPREAD_FLOOR` of the
   best note's: a note far weaker than the best does not take a place from the best note's
   second and third hits (often the answer itself, or the message after the match). A note's
   evidence is its best leaf's score plus `NOTE_COVERAGE` times the idf-weighted share of the
   question's terms found anywhere in the note: the note that holds every part of the
   question, spread over several messages, rises above one that matches a single message by
   luck. When the question names a speaker ("what did Helen say…"), a note's place goes to
   the speaker's own best message in it rather than to a better match by someone else (Alice's
   mail to Helen holds the question's words, Helen's reply the answer) — when some leaf holds
   the question's words, only to a message of the speaker's that holds one of them or follows
   one that does within `CONTEXT_SPAN` messages ("what did Mei say about Facebook?": not her
   "I will pay for Auntie's train.", said before Daniel's message about Facebook). A hit that
   outscores one of those five but follows them has `behind_other_notes` in its breakdown
   (`near_duplicate` for a repeat); `note_evidence` is its note's evidence.

Each hit's `breakdown` carries every signal, its weight and the final score.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from vaultmind.embed.base import embed_query
from vaultmind.entities.ids import words
from vaultmind.index.lexical import terms
from vaultmind.retrieval.answer_type import (
    ASKING_WORDS,
    AnswerKind,
    Asking,
    answer_kind,
    answer_test,
    asking,
    asks_about,
    asks_clock,
    holds_answer,
    kind_terms,
)
from vaultmind.retrieval.entity_graph import EntityGraph
from vaultmind.retrieval.headings import heading_shares
from vaultmind.retrieval.hits import cite_blocks, envelope, leaf_hits
from vaultmind.retrieval.ordering import (
    Pairs,
    diversify,
    leaf_terms,
    note_coverage,
    note_evidence,
    term_pairs,
)
from vaultmind.retrieval.people import (
    WORD,
    as_named,
    asked_speakers,
    author_terms,
    capitalised_terms,
    describes,
    introduces,
    name_terms,
    name_words,
    named_authors,
    names_capitalised,
    person_terms,
    possessed,
    query_entities,
    speaker_codes,
    without_words,
)
from vaultmind.retrieval.replies import answered_replies, asks_the_question, no_answer
from vaultmind.retrieval.retold import retold_leaves
from vaultmind.retrieval.revisions import changes
from vaultmind.retrieval.spelling import corrections, joined_words, name_corrections, possessives
from vaultmind.retrieval.timeparse import MONTHS, WEEKDAYS
from vaultmind.retrieval.windows import (
    OUTSIDE_WINDOW,
    after_end,
    asks_of_plans,
    coming_weekday,
    lateness,
    lead_up,
    naive_utc,
    names_a_day_in,
    question_tense,
    question_window,
    recency,
    relative_terms,
    summary_time_factors,
    time_factors,
    within,
    year_held,
    yearless,
)
from vaultmind.retrieval.wording import ROLE, agent_nouns, asker_writes, merged, own_writing, role_terms
from vaultmind.vault.layout import note_kind

if TYPE_CHECKING:
    from vaultmind.index.resident import LeafColumns
    from vaultmind.model import NoteKind
    from vaultmind.retrieval.timeparse import TimeWindow
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
# the signals' columns in walk's arrays (`_signals`)
LEX, DENSE, ENTITY, GRAPH, NOTE, NOTE_DENSE, AUTHOR = (
    SIGNALS.index(name) for name in ("lex", "dense", "entity", "graph", "note", "note_dense", "author")
)
CONTEXT_SHARE = 0.3
CONTEXT_SEEDS = 20
COMMON_REMOVAL = 1.0  # share of the vault's mean direction taken out of the question's vector
CONTEXT_SPAN = 2  # messages either side of a seed that earn context
CONTEXT_DECAY = 0.4  # per message further away than the next one
NOTE_TOP = 3
SPEAKER_WEIGHT = 0.5
WINDOW_PRESENCE = 0.15
CANDIDATES = 200
ANSWER_TOP = 100
ANSWER_WEIGHT = 0.2
# `_topic_answer`, and for "what time…?" (a time of day; any time: too many messages name one, LoCoMo's S-MRR fell)
TOPIC_ANSWER_KINDS = ("place",)
REVISION_MARGIN = 0.01  # how far above the leaf it changes a later one that says what changed ranks
REVISION_FLOOR = 0.2  # … when it scores at least this share of it
REVISION_COVER = 0.4  # … and names at least this share (by idf) of the question
SHORT_TERMS = 12
SHORT_EXPONENT = 0.15
ASKING_ONLY = 0.7
ASKING_LAST = 0.9
ASKING_TOP = 40
PHRASE_WEIGHT = 0.3
PHRASE_GAP_CREDIT = 0.5  # a question's pair said with one term between
HEADING_WEIGHT = 1.0  # a section whose headings hold the question's words: + this × their share of it
OWN_NOTE_MIN_TERMS = 4  # an entity note's leaf about its entity holds more than its name
IDENTITY_WEIGHT = 0.5  # "who is Bob?": + this to the leaves of his own entity note
INFORMATIVE = 0.1  # a window-only question: + this × min(1, terms / `INFORMATIVE_TERMS`) inside the window
INFORMATIVE_TERMS = 24
LATEST_SAID = 0.03  # a window still ahead: + this × how late in the days before it a leaf was written
# (and a question about nothing but its author: × how late among the author's messages)
UNGROUNDED = 0.5  # a leaf's share of its score when no leaf matches a word and it involves no query entity
NAMED_DENSE = 0.25  # the dense weight when the question names an author of the memory (module doc)
OTHER_AUTHOR = 0.8  # … and the share of its own match kept by another's first-person message naming none of them
DENSE_TERMS = 4  # a question searching more terms than this weighs dense × this / its terms (module doc)


# of a window still ahead, these words ask about it too ("what's planned for next month?") — but
# the plan words name what a message about it may say ("the plan for May"), and stay searched
PLAN_WORDS = frozenset(terms("plan plans planned planning schedule scheduled"))
AHEAD_ASKING = ASKING_WORDS | PLAN_WORDS | frozenset(terms("upcoming coming"))


def walk(
    memory: MemoryView,
    question: str,
    *,
    limit: int = 10,
    reference_time: datetime | None = None,
    max_hops: int = 2,
) -> dict[str, Any]:
    """Ranked hits for a question: `{hits, total, truncated, query}` (see module doc)."""
    now = naive_utc(reference_time) if reference_time else datetime.now(UTC).replace(tzinfo=None)
    names = name_words(memory)
    # "Okafro": Okafor; "Okafors team": Okafor's
    misnamed = {**name_corrections(memory.leaves, question, *names), **possessives(question, *names)}
    if misnamed:
        question = WORD.sub(lambda m: as_named(m.group(), misnamed), question)
    question = names_capitalised(memory, question)
    qterms = terms(question)
    window = question_window(question, reference_time)
    qents = query_entities(memory, question)
    if window is not None:  # "in May" names a month, not May Chen (but "Jan" is not "in January")
        said = set(words(window.text))
        qents = [(e, surface) for e, surface in qents if not set(words(surface)) <= said]
    named = named_authors(memory, qents)
    said_names = {t for e, surface in qents if e in named.values() for t in person_terms(surface)}
    # An author's name as the question writes it (capitalised: "Bill", not the "bill" that is
    # due), or a name of an author's entity it names ("May", "Will": stop words too).
    authors = (author_terms(memory) & capitalised_terms(question)) | said_names
    if window is not None:  # "in May" is the month, not May Chen, as an author too
        authors -= set(words(window.text))
    own = own_writing(question)  # "what did I note…" asks for the asker's notes, as "say" for someone's words
    if own and asker_writes(question):  # … and the asker wrote them: "what did I write to Paul?" names whom to, not who wrote
        authors, named = frozenset(), {}
    content_terms = [t for t in qterms if t not in authors] or qterms
    content_text = without_words(question, authors) if authors else question
    speakers, verbs = asked_speakers(question, authors) if authors else (set(), set())
    verbs |= own
    if verbs:  # "say" in "what did Alice say about…" asks for her words; it is not what they are about
        content_terms = [t for t in content_terms if t not in verbs]
    if window is not None:  # the window's relative words ("last week") are its, not the content's
        relative = relative_terms(window.text)
        content_terms = [t for t in content_terms if t not in relative]
        content_text = without_words(content_text, relative)

    fixed = corrections(memory.leaves, question, content_terms) if content_terms else {}
    if fixed:  # "lauch" is no word and no leaf holds it: "launch" is, a letter put back
        content_terms = [new for t in content_terms for new in (fixed[t][2] if t in fixed else (t,))]
        read_as = {old: new for old, new, _ in fixed.values()}
        content_text = re.sub(r"\w+", lambda m: read_as.get(m.group(0).lower(), m.group(0)), content_text)

    asked_who = _asked_who(question, qents)  # "who is Bob?", "what does Bob work on?"
    if asked_who is not None:  # "work" asks what he does, which "working days" does not say
        roles = role_terms(question)
        content_terms = [t for t in content_terms if t not in roles]
    # "What did John Doe say?" is about nothing but its author: no meaning to search densely
    # (the nearest vectors to "what did say" are noise, scaled up to a full dense score)
    only_names = bool(authors) and all(t in authors for t in content_terms)
    kind = answer_kind(question)
    asked_kind = kind_terms(question)  # "what time…", "…email address?": no leaf says them beside its answer
    if asked_kind:
        content_terms = [t for t in content_terms if t not in asked_kind]
    # "What happened last week?" asks for its window, nothing else: neither the words nor the
    # meaning of "what happened" say which of the window's messages matter (`INFORMATIVE`)
    # ("what happened in March?": the window's own words say nothing more)
    dated = set(terms(window.text)) if window is not None else set()
    asking_only = all(t in ASKING_WORDS or t in dated for t in content_terms)
    tense = question_tense(question)
    if window is not None and yearless(window.text):  # "March" says which month, not which year
        wording = [] if asking_only else [t for t in content_terms if t not in dated]
        window = year_held(
            memory.leaves, window, wording, authors, candidates=CANDIDATES, now=now, tense=tense, planned=asks_of_plans(question, window)
        )
    elif window is not None:  # "what will we do on Friday?": the coming Friday
        window = coming_weekday(window, now, tense)
    # A window still ahead (or begun, but holding nothing yet: "today" at breakfast) can only be
    # told of by what was said before it. "What is happening in April?" asked in March is about
    # the messages that name April.
    empty = window is not None and not _said_in(memory, window.start, window.end, now)
    ahead = empty and window is not None and window.end > now
    if ahead:
        asking_only = all(t in AHEAD_ASKING for t in content_terms)
        if not asking_only:  # "what are we doing in April?": April, not "doing" (but "the plan for April": plan)
            content_terms = [t for t in content_terms if t not in AHEAD_ASKING or t in PLAN_WORDS]
    only_window = window is not None and asking_only
    # "Tell me about Bob": nothing but whom it names (`INFORMATIVE` among the leaves about them)
    only_entity = not only_window and bool(content_terms) and asking_only and bool(qents)
    # "ice cream" is held by "icecream" too; "who owns…" by "Owner:"
    joined = merged(joined_words(memory.leaves, question, content_terms), agent_nouns(memory.leaves, question, content_terms))
    searched = content_terms if not (only_window or only_entity) else []
    if only_window and ahead:  # "what is the May plan?": its plan words are searched still
        searched = [t for t in content_terms if t in PLAN_WORDS]
    lexical = memory.leaves.search(searched, CANDIDATES, joined) if searched else []
    if lexical and window is not None and only_window:  # … for the plans that name one of its days
        lexical = _told_plans(memory, lexical, window)
    dense: list[tuple[str, float]] = []
    if (
        memory.embedder is not None
        and memory.vectors is not None
        and content_text.strip()
        and not only_names
        and not only_window
        and not only_entity
    ):
        query_vector = embed_query(memory.embedder, content_text)
        dense = memory.vectors.search(without_common(query_vector, memory.vectors.mean_direction()), CANDIDATES)

    entity_leaves, pair_leaves, graph_weights, own_notes = _entity_signals(memory, [e for e, _ in qents], max_hops)
    candidates: set[str] = {i for i, _ in lexical} | {i for i, _ in dense} | set(entity_leaves)
    if only_names:  # "what did Whitfield say?": their messages, which seldom hold their own name
        written_by = sorted(name for name in memory.leaves.authors() if person_terms(name) & authors)
        candidates |= set(memory.leaves.by_authors(written_by, CANDIDATES))
    timed = window  # the window that ranks: none when the memory holds nothing then ("due by 10 May")
    leading = window is not None and ahead and only_window  # "what are we doing next week?": what was said lately
    if window is not None and leading:
        timed = lead_up(window, now)
    if timed is not None:  # its leaves, found even sharing no word (of the days before a window ahead, the latest)
        held = set(memory.leaves.in_window(timed.start, timed.end, CANDIDATES, latest=leading))
        candidates |= held
        if not _said_in(memory, timed.start, after_end(timed, now), now):
            timed = None

    ids = sorted(candidates)
    at = {leaf_id: k for k, leaf_id in enumerate(ids)}  # a leaf's place in walk's arrays
    cols = memory.leaves.columns(ids)
    pair_bonus = WEIGHTS["entity"] * 0.5  # hop tightening: related query entities together
    lex, den = _normalise_max(dict(lexical)), _normalise_dense(dict(dense))
    signals = _signals(ids, at, cols, lex, den, qents, authors, entity_leaves, graph_weights, named)
    if own:  # "what did I write on Thursday?": the asker is the author of their own notes
        signals[_of_kind(cols, "user"), AUTHOR] = 1.0
    weights = _weights(named, len(set(searched)))
    base = _base(signals, weights)
    # of a window still ahead, which leaves name one of its days ("Friday 21 March")
    told = _told_of(memory, ids, cols, window) if window is not None and ahead else np.zeros(len(ids), dtype=bool)
    ungrounded = _ground(base, signals, told) if content_terms and not lexical and dense and (qents or told.any()) else set()
    if not ungrounded and lexical and possessed(question, qents):  # "Okafor's team": not "Ok team, Dad's 60th!"
        ungrounded = _apart(base, signals, cols)
    bare = _bare_names(cols)  # "# Mei Chen", an entity note of nothing but its heading
    base[bare] *= UNGROUNDED
    speaking = np.zeros(len(ids), dtype=bool)
    if speakers:  # the speaker's own messages, not those of a listener the question also names
        speaking = np.isin(cols.author, speaker_codes(cols, speakers, named, qents)) & (signals[:, AUTHOR] > 0)
        base[speaking] += SPEAKER_WEIGHT - WEIGHTS["author"]
    for leaf_id in pair_leaves:  # entity leaves: all among the candidates
        base[at[leaf_id]] += pair_bonus
    # "what did Dana say?" matches nothing whose next message answers it: no context, her messages by when
    context_of, reached, more = _context(memory, ids, at, base, cols, seeds=0 if only_names else CONTEXT_SEEDS)
    if reached:  # leaves only context brings: no signal of their own
        at.update((leaf_id, k) for k, leaf_id in enumerate(reached, start=len(ids)))
        ids = ids + reached
        if more.note_names is cols.note_names and more.author_names is cols.author_names:
            cols = cols.extended(more)
        else:  # the leaves were reloaded meanwhile: all the columns from the new load
            cols = memory.leaves.columns(ids)
        signals = np.vstack((signals, np.zeros((len(reached), len(SIGNALS)))))
        base = np.concatenate((base, np.zeros(len(reached))))
        more_told = _told_of(memory, reached, more, window) if window is not None and ahead else np.zeros(len(reached), dtype=bool)
        told = np.concatenate((told, more_told))
    context = np.zeros(len(ids))
    for leaf_id, value in context_of.items():  # candidates, or leaves context reached
        context[at[leaf_id]] = value
    lengths = _length_factors(cols.length)
    factors = np.ones(len(ids))
    retold = np.zeros(0, dtype=np.int64)
    if timed is not None:
        # a question about nothing but its window ("what happened yesterday?"): a leaf without
        # a time has no claim on it
        factors = time_factors(timed, _window_times(timed, cols), now, undated=OUTSIDE_WINDOW if only_window else 1.0)
        summary_time_factors(memory.index, timed, cols, factors)
        if not only_window:  # "we went to a convention last month", written in April, tells of March
            retold = retold_leaves(memory, ids, cols, base * lengths + CONTEXT_SHARE * context, factors, timed)
            factors[retold] = 1.0
    scores = (base * lengths + CONTEXT_SHARE * context) * factors
    identity = _identity(memory, asked_who, entity_leaves, own_notes, at, cols)
    if asked_who is not None and not own_notes.get(asked_who):  # "who is Helen?" of no note of hers
        identity = np.maximum(identity, _introducing(memory, asked_who, qents, entity_leaves, at, cols))
    scores += identity
    inside = within(timed, cols.ts) if timed is not None else np.zeros(len(ids), dtype=bool)
    scores += WINDOW_PRESENCE * inside
    latest = np.zeros(len(ids))
    if window is not None and ahead:  # of what was said of a window still to come, the latest (plans change),
        latest = LATEST_SAID * lateness(lead_up(window, now), cols.ts)
        scores += latest + WINDOW_PRESENCE * told  # and what names one of its days
    elif only_names:  # "what did Dana say?": of her messages, the latest first (ties, near-ties)
        latest = LATEST_SAID * recency(cols.ts, signals[:, AUTHOR] > 0)
        scores += latest
    informative = np.zeros(len(ids))
    about = inside if timed is not None and only_window else None  # of the window's messages, those that say the most
    if only_entity:  # of the leaves about whom it names, those that say the most
        about = (signals[:, ENTITY] > 0) | (signals[:, AUTHOR] > 0)
        about = np.concatenate((about, np.zeros(len(ids) - len(about), dtype=bool)))
    if about is not None:
        informative = INFORMATIVE * np.minimum(1.0, np.nan_to_num(cols.length) / INFORMATIVE_TERMS) * about
        scores += informative
    final: dict[str, tuple[float, float]] = dict(zip(ids, zip(scores.tolist(), factors.tolist(), strict=True), strict=True))
    top = _best(ids, scores, ANSWER_TOP if kind else ASKING_TOP)
    rows = memory.leaves.rows(top)  # also the rows `diversify` reads
    texts = {leaf_id: row["text"] or "" for leaf_id, row in rows.items()}
    strongest = [leaf_id for leaf_id in top[:ASKING_TOP] if leaf_id in rows]
    asks = _asking(final, {leaf_id: texts[leaf_id] for leaf_id in strongest}, frozenset(content_terms))
    # "when did John run a 5K?": not Maria's "I ran a 5K charity run"
    others = _others(final, at, signals, base * lengths, cols, {leaf_id: texts[leaf_id] for leaf_id in strongest}) if named and not speakers else set()
    answers = _answer_bonus(_answer_test(question, kind, content_terms, final, texts, at, cols), final, texts) if kind else set()
    # "where…?" and "what time…?": the answer of the best-matching note, said in other words
    topic_answer = _topic_answer(final, answers, at, cols) if kind in TOPIC_ANSWER_KINDS or asks_clock(question) else None
    # "how many are coming?" asked in the chat; of a question naming an author, the reply by one of them
    answerers = {leaf_id for leaf_id in answers if not named or signals[at[leaf_id], AUTHOR] > 0}
    replies = _replies(final, asks, answerers, texts, kind, content_terms, at, cols) if kind else {}
    worded = {leaf_id: rows[leaf_id] for leaf_id in strongest if signals[at[leaf_id], LEX] > 0}  # a lexical match
    phrases = _phrase_bonus(content_terms, final, worded)
    idf = _idf(memory, content_terms)
    # a section is nobody's words: not what "what did Helen say about…" asks for
    headed = _heading_bonus(content_terms, final, {leaf_id: rows[leaf_id] for leaf_id in strongest}, idf) if not speakers else {}
    # "When is the launch?", "where do we meet?": a date or place as it stands now, which changes
    current = kind in ("time", "place") and window is None and tense != "past"
    answering = {leaf_id: row for leaf_id, row in worded.items() if leaf_id in answers}
    # of what was said of a window still ahead ("what's coming up in April?"), the plan as it now stands
    revised = _revisions(final, answering if current else worded, content_terms, idf) if current or ahead else {}
    for leaf_id in top:  # the only leaves the passes above change
        scores[at[leaf_id]] = final[leaf_id][0]
    # Only the head is diversified and the hits shown are explained; the rest only counts in
    # `total`. A note's best leaf is in the head whenever one of its leaves is: the head's
    # notes are ranked from the head alone.
    head = _best(ids, scores, max(limit * 3, 30))
    head_at = np.array([at[leaf_id] for leaf_id in head], dtype=np.int64)
    head_notes = np.unique(cols.note[head_at[cols.known[head_at]]])
    coverage = note_coverage(memory, content_terms, {cols.note_names[code] for code in head_notes.tolist()}, joined)
    note_rank = note_evidence(scores, cols, coverage, head_at)
    places = {leaf_id: place for leaf_id in head if (place := cols.place(at[leaf_id])) is not None}
    if revised:
        _revised_notes(note_rank, places, revised, final)
    scored: list[tuple[str, float, dict[str, Any]]] = [(leaf_id, final[leaf_id][0], {}) for leaf_id in head]
    ranked: list[tuple[str, float, dict[str, Any]]] = []
    # the named speaker's own messages, and whether each may speak for its note
    topical = _on_topic(speaking, signals[: len(speaking), LEX], cols)
    voiced = {ids[k]: bool(topical[k]) for k in np.flatnonzero(speaking).tolist()}
    for leaf_id, score, flags in diversify(memory, scored, limit, places, note_rank, rows, voiced):
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
                "topic_answer": leaf_id == topic_answer,  # the answer of the best-matching note: + `ANSWER_WEIGHT`
                "replies_to": replies.get(leaf_id),  # the message that asks the question, which it answers
                "revises": revised.get(leaf_id),  # the earlier leaf it changes, and now outranks
                "length_factor": round(float(lengths[k]), 4),
                "other_author": leaf_id in others,  # another's account of their own: its own match × `OTHER_AUTHOR`
                "asking": asks.get(leaf_id),
                "phrase": round(phrases.get(leaf_id, 0.0), 4),
                "heading": round(headed.get(leaf_id, 0.0), 4),  # its headings' share of the question: + `HEADING_WEIGHT` ×
                "time_factor": factor,
                "ungrounded": k in ungrounded,  # its base × `UNGROUNDED`
                "bare_name": bool(k < len(bare) and bare[k]),  # an entity note's heading alone: × `UNGROUNDED`
                "informative": round(float(informative[k]), 4),
                "identity": round(float(identity[k]), 4),  # of the entity a "who is…?" asks about: its own note
                "latest": round(float(latest[k]), 4),  # `LATEST_SAID`: a window still ahead, or only an author asked
                "retold": bool(np.any(retold == k)),  # outside the window, but names a time in it (`retold`)
                "names_window_day": bool(told[k]),  # a window still ahead: names one of its days, + `WINDOW_PRESENCE`
                "weights": weights,
                **flags,  # `diversify`'s
            }
        )
        ranked.append((leaf_id, score, breakdown))
    hits = leaf_hits(memory, ranked, rows)
    cite_blocks(memory, hits, content_terms)
    query_info: dict[str, Any] = {
        "terms": sorted(set(qterms)),
        "content_terms": sorted(set(content_terms)),
        "entities": [{"id": e, "surface": s} for e, s in qents],
        "time_window": window.to_dict() if window else None,
        "window_ahead": ahead,  # the window is still to come: the hits are what was said before it
        # the memory holds nothing inside the window (not only: no hit shown is inside it)
        "window_empty": empty,
        # "what did I write on 11 March?": none of the asker's notes is dated inside the window
        "window_none_yours": bool(own) and window is not None and not _yours_within(window, cols),
        "corrected": {**misnamed, **{word: new for word, new, _ in fixed.values()}},  # misspelt word → the word read
        "answer_kind": kind,
        "reference_time": now.isoformat() + "Z",
    }
    return envelope(hits, len(final), query=query_info)


def without_common(q: npt.NDArray[np.float32], mean: npt.NDArray[np.float32] | None) -> npt.NDArray[np.float32]:
    """The question's vector with `COMMON_REMOVAL` of its component along the vault's unit mean
    direction taken out, normalised (unchanged without a mean, or when nothing would be left)."""
    if mean is None or mean.shape != q.shape:
        return q
    out = q - COMMON_REMOVAL * float(q @ mean) * mean
    norm = float(np.linalg.norm(out))
    return (out / norm).astype(np.float32) if norm > 1e-6 else q


def _context(
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
    strongest = _best(ids, base, seeds)
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


def _best(ids: list[str], scores: npt.NDArray[np.float64], k: int) -> list[str]:
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


def _length_factor(length: float | None) -> float:
    if length is None:
        return 1.0
    whole = int(length)
    if whole == length and 0 <= whole < len(_LENGTH_FACTORS):  # a term count: looked up
        return _LENGTH_FACTORS[whole]
    return _length_value(length)


def _length_value(length: float) -> float:
    return float((min(max(length, 1.0), SHORT_TERMS) / SHORT_TERMS) ** SHORT_EXPONENT)


_LENGTH_FACTORS = tuple(_length_value(float(n)) for n in range(SHORT_TERMS + 1))


def _length_factors(lengths: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """`_length_factor` of each length (NaN: unknown, 1)."""
    out = np.ones(len(lengths))
    short = np.flatnonzero(lengths < SHORT_TERMS)  # NaN is not: 1
    whole = lengths[short]
    counted = (whole >= 0) & (whole == np.floor(whole))
    out[short[counted]] = np.array(_LENGTH_FACTORS)[whole[counted].astype(np.int64)]
    for k in short[~counted].tolist():  # not a term count: the formula
        out[k] = _length_factor(float(lengths[k]))
    return out


def _signals(
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
) -> npt.NDArray[np.float64]:
    """Each candidate's signals (module doc), one row per id of `ids` (`at`: their places),
    columns in `SIGNALS` order. A message counts as involving its author (for the entity signal)
    when the question names them: by a word of their name, or by any name of the entity they
    resolve to (`named`, from `named_authors`)."""
    out = np.zeros((len(ids), len(SIGNALS)))
    for column, values in ((LEX, lex), (DENSE, den)):  # leaves of the searches: all candidates
        out[[at[leaf_id] for leaf_id in values], column] = list(values.values())
    sections = _sections(cols)
    out[:, NOTE] = _note_shares(out[:, LEX], cols.note, sections)
    out[:, NOTE_DENSE] = _note_shares(out[:, DENSE], cols.note, sections)
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
        held = np.zeros((len(ids), len(column_of)), dtype=bool)
        places = [(at[leaf_id], column_of[e]) for leaf_id, ents in entity_leaves.items() if leaf_id in at for e in ents]
        if places:
            held[tuple(np.array(places).T)] = True
        for code, ents in implied.items():
            by_author = cols.author == code
            for e in ents:
                held[by_author, column_of[e]] = True
        out[:, ENTITY] = held.sum(axis=1) / len(qents)
    if graph_weights:
        near = [(k, weight) for leaf_id, weight in graph_weights.items() if (k := at.get(leaf_id)) is not None]
        rows = np.array([k for k, _ in near], dtype=np.int64)
        weights = np.array([weight for _, weight in near])
        below = out[rows, ENTITY] < 1.0
        out[rows[below], GRAPH] = weights[below]
    return out


def _ground(base: npt.NDArray[np.float64], signals: npt.NDArray[np.float64], told: npt.NDArray[np.bool_]) -> set[int]:
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
    return cols.known & (cols.author < 0) & ~_of_kind(cols, "entity")


def _yours_within(window: TimeWindow, cols: LeafColumns) -> bool:
    """Whether a leaf of one of the asker's notes (among the candidates, which hold the
    window's leaves) is dated inside `window`."""
    return bool((_of_kind(cols, "user") & within(window, cols.ts)).any())


def _of_kind(cols: LeafColumns, kind: NoteKind) -> npt.NDArray[np.bool_]:
    """Which leaves are of a note of `kind` ("entity", "user": `vault.layout.note_kind`)."""
    return cols.known & np.isin(cols.note, _kind_codes(cols, kind))


def _kind_codes(cols: LeafColumns, kind: NoteKind) -> list[int]:
    """The codes of the notes of `kind` among the live leaves' notes."""
    return [code for code in np.unique(cols.note[cols.known]).tolist() if note_kind(cols.note_names[code]) == kind]


def _said_in(memory: MemoryView, start: datetime, end: datetime, now: datetime) -> bool:
    """Whether the memory holds something said from `start` to `end`. A note of yours dated
    after the reference time is not: its date is the day it is for (a party's `date:
    2025-12-20`), written before it — a window ahead holding only such notes is still ahead,
    told of by what was said before ("what is happening in December?"), not taken for a
    window whose messages are all there is."""
    if start < now and memory.leaves.in_window(start, min(end, now), 1):
        return True
    later = memory.leaves.in_window(max(start, now), end, CANDIDATES) if end > now else []
    return bool(later) and not bool(_of_kind(memory.leaves.columns(later), "user").all())


def _window_times(window: TimeWindow, cols: LeafColumns) -> npt.NDArray[np.datetime64]:
    """The leaves' times as a window ranks them: a note of yours outside the window counts as
    undated. Its date (a daily note's day, a `created` stamp, "2023-01-01 Tax rules") lets a
    window find it, never takes it down: a note is kept and edited, and what it says may hold
    long after that day ("what is my squat this year?" finds the gym log created in 2021), as
    it did when your notes had no time."""
    outside = _of_kind(cols, "user") & ~within(window, cols.ts)
    return np.where(outside, np.datetime64("NaT", "us"), cols.ts)


def _apart(base: npt.NDArray[np.float64], signals: npt.NDArray[np.float64], cols: LeafColumns) -> set[int]:
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


def _bare_names(cols: LeafColumns) -> npt.NDArray[np.bool_]:
    """Which leaves are an entity note's heading alone ("# Mei Chen": no more terms than the
    name its file is named for): they say nothing of whom they name, but match the name's words
    as a whole, a short leaf's BM25 at its best, and "who is Mei?" had shown "# Mei Chen" first.
    "# May Chen / My aunt, a nurse." says something, however short."""
    named = np.full(len(cols.note_names) + 1, -1.0)  # per note code, its name's terms (-1: no entity note; last: no note)
    for code in _kind_codes(cols, "entity"):
        name = cols.note_names[code].rsplit("/", 1)[-1].removesuffix(".md").replace("-", " ")
        named[code] = min(len(terms(name)), OWN_NOTE_MIN_TERMS)
    return cols.known & (np.nan_to_num(cols.length, nan=np.inf) <= named[cols.note])


def _weights(named: Mapping[str, str], searched: int) -> dict[str, float]:
    """The signals' weights for a question: `WEIGHTS`, with the dense one `NAMED_DENSE` when
    it names an author of the memory (`named`): their own words are the evidence, the entity
    and author signals find them, and the nearest vectors of the rest of the question only
    say the topic, often in someone else's words. Of a question searching more than
    `DENSE_TERMS` terms, the dense weight is scaled by `DENSE_TERMS` / `searched`: its vector
    is the blurred mean of many words, its words together a specific lexical match."""
    dense = NAMED_DENSE if named else WEIGHTS["dense"]
    if searched > DENSE_TERMS:
        dense *= DENSE_TERMS / searched
    return {**WEIGHTS, "dense": dense} if dense != WEIGHTS["dense"] else WEIGHTS


def _others(
    final: dict[str, tuple[float, float]],
    at: dict[str, int],
    signals: npt.NDArray[np.float64],
    own: npt.NDArray[np.float64],
    cols: LeafColumns,
    texts: dict[str, str],
) -> set[str]:
    """Of `texts` (the strongest leaves; the question names an author of the memory), the
    messages by someone else that name none of the question's entities (entity and author
    signals 0) and speak in the first person ("Last weekend I ran a 5K"): someone telling of
    their own life. Each keeps `OTHER_AUTHOR` of its own match (`own`: base × length factor,
    times its time factor); the context it earned stays. Returns them."""
    found: set[str] = set()
    for leaf_id, text in texts.items():
        k = at[leaf_id]
        if cols.author[k] < 0 or signals[k, AUTHOR] or signals[k, ENTITY] or not _FIRST_PERSON.search(text):
            continue
        value, factor = final[leaf_id]
        final[leaf_id] = (value - (1 - OTHER_AUTHOR) * float(own[k]) * factor, factor)
        found.add(leaf_id)
    return found


_FIRST_PERSON = re.compile(r"\b(?:I|[Mm]y|[Mm]e|[Mm]ine|[Mm]yself)\b")  # "I" also of "I'm", "I’ve"


def _base(signals: npt.NDArray[np.float64], weights: Mapping[str, float]) -> npt.NDArray[np.float64]:
    """Σ w_s · s per row, added in `SIGNALS` order."""
    base = weights[SIGNALS[0]] * signals[:, 0]
    for column, name in enumerate(SIGNALS[1:], start=1):
        base = base + weights[name] * signals[:, column]
    return base


def _note_shares(
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


def _asking(final: dict[str, tuple[float, float]], texts: dict[str, str], query_terms: frozenset[str]) -> dict[str, Asking]:
    """Scales down the leaves of `texts` (the strongest) that only ask or end asking; returns them.
    One that ends asking and holds the question's terms only in what it asks (`asks_about`)
    counts as only asking: it tells nothing of them."""
    found: dict[str, Asking] = {}
    for leaf_id, text in texts.items():
        kind = asking(text)
        if kind == "last" and asks_about(text, query_terms):
            kind = "only"
        if kind is not None:
            value, factor = final[leaf_id]
            final[leaf_id] = (value * (ASKING_ONLY if kind == "only" else ASKING_LAST), factor)
            found[leaf_id] = kind
    return found


def _phrase_bonus(
    query_terms: Sequence[str], final: dict[str, tuple[float, float]], rows: dict[str, dict[str, Any]]
) -> dict[str, float]:
    """Add `PHRASE_WEIGHT` × the leaf's phrase share (module doc) to each leaf of `rows` that
    says one of the query's adjacent term pairs (together, or one term apart for
    `PHRASE_GAP_CREDIT` of it); returns the shares."""
    wanted = _adjacent_pairs(query_terms)
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


def _heading_bonus(
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


def _adjacent_pairs(seq: Sequence[str]) -> Pairs:
    """The ordered pairs of neighbouring terms (a term next to itself is no pair)."""
    return frozenset((a, b) for a, b in itertools.pairwise(seq) if a != b)


def _answer_bonus(holds: Callable[[str], bool], final: dict[str, tuple[float, float]], texts: dict[str, str]) -> set[str]:
    """Among `texts` (the `ANSWER_TOP` strongest leaves), those holding the kind of answer the
    question asks for (`holds`: `answer_type.answer_test`) gain `ANSWER_WEIGHT` (times their
    time factor); their ids are returned."""
    holding = {leaf_id for leaf_id, text in texts.items() if holds(text)}
    for leaf_id in holding:
        value, factor = final[leaf_id]
        final[leaf_id] = (value + ANSWER_WEIGHT * factor, factor)
    return holding


def _answer_test(
    question: str,
    kind: AnswerKind,
    content_terms: Sequence[str],
    final: Mapping[str, tuple[float, float]],
    texts: Mapping[str, str],
    at: dict[str, int],
    cols: LeafColumns,
) -> Callable[[str], bool]:
    """What holds the answer (`answer_type.answer_test`). "What time…?" asks for a time of day
    only where the memory says one of what it asks about: a leaf of `texts` (the strongest)
    naming a time of day with a word of the question, or in the note of the best match (where
    `_topic_answer` finds it). Otherwise the day it is on answers it, as for "when…?": "what
    time is the launch?" of a memory that says only "the launch is Tuesday 23 April" is not
    "Standup is at 9:30"."""
    holds = answer_test(question, kind, content_terms)
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


def _topic_answer(
    final: dict[str, tuple[float, float]], answers: set[str], at: dict[str, int], cols: LeafColumns
) -> str | None:
    """When the strongest leaf holds no answer of the kind asked for ("Ok team, Dad's 60th!"
    for "where is Dad's 60th dinner?"), the strongest leaf of its note that holds one ("I
    booked Golden Lantern") ranks right after it, above the note's other leaves: the
    conversation that matches the question best is where its answer was said, often in words
    the question does not use. Its id is returned."""
    if not answers or not final:
        return None
    best = max(final, key=lambda leaf_id: final[leaf_id][0])
    if best in answers or not cols.known[at[best]]:
        return None
    note = cols.note[at[best]]
    same = [leaf_id for leaf_id in final if cols.known[at[leaf_id]] and cols.note[at[leaf_id]] == note and leaf_id != best]
    held = [leaf_id for leaf_id in same if leaf_id in answers]
    if not held:
        return None
    found = max(held, key=lambda leaf_id: final[leaf_id][0])
    runner_up = max((final[leaf_id][0] for leaf_id in same if leaf_id != found), default=0.0)
    value, factor = final[found]
    final[found] = (max(value, min(runner_up + REVISION_MARGIN, final[best][0] - REVISION_MARGIN)), factor)
    return found


def _replies(
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
    how many are coming?"): the reply after each that holds the answer (of `answers`) rises to
    where the asking message would stand as a statement (`replies.answered_replies`). Reply id
    → the message it answers. For a question that names an author of the memory, `answers`
    holds only their messages: "what books has John read?" is not Tim's reply to John's "what
    book are you reading?". A reply that jokes or declines ("somewhere in London lol", "Not
    me", `replies.no_answer`) is passed over for the next."""
    asked = {
        leaf_id: ASKING_ONLY if how == "only" else ASKING_LAST
        for leaf_id, how in asks.items()
        if asks_the_question(texts[leaf_id], kind, content_terms)
    }
    answering = {leaf_id for leaf_id in answers if not no_answer(texts[leaf_id])}  # not a joke, not "no idea"
    return answered_replies(final, asked, answering, lambda leaf_id: cols.place(at[leaf_id]), span=CONTEXT_SPAN, margin=REVISION_MARGIN)


def _identity(
    memory: MemoryView,
    asked: str | None,
    entity_leaves: dict[str, frozenset[str]],
    own_notes: dict[str, list[str]],
    at: dict[str, int],
    cols: LeafColumns,
) -> npt.NDArray[np.float64]:
    """Per leaf, what it says of the entity a question asks who or what it is (`asked`: "who is
    Bob?"): `IDENTITY_WEIGHT` for its own note's leaves, half that for other entity notes'
    leaves that mention it ("Harbor Hall … Contact: Dana Whitfield, events manager") — all of
    it, when its own note says nothing (a heading alone, or no note), for those that say who
    it is (`_describing`): then they are what the memory says of it, above a mail she signed."""
    out = np.zeros(len(cols.known))
    if asked is None:
        return out
    entity = _of_kind(cols, "entity")
    noted = [leaf_id for leaf_id, ents in entity_leaves.items() if asked in ents and leaf_id in at and entity[at[leaf_id]]]
    out[[at[leaf_id] for leaf_id in noted]] = IDENTITY_WEIGHT / 2
    if not own_notes.get(asked):
        out[[at[leaf_id] for leaf_id in _describing(memory, asked, noted)]] = IDENTITY_WEIGHT
    out[[at[leaf_id] for leaf_id in own_notes.get(asked, ()) if leaf_id in at]] = IDENTITY_WEIGHT
    return out


def _introducing(
    memory: MemoryView,
    asked: str,
    qents: Sequence[tuple[str, str]],
    entity_leaves: dict[str, frozenset[str]],
    at: dict[str, int],
    cols: LeafColumns,
) -> npt.NDArray[np.float64]:
    """Per leaf, `IDENTITY_WEIGHT` / 2 for the messages and document sections that say who the
    entity a question asks about is ("Helen Okafor from our finance team", "- Finance: Helen
    Okafor": `people.introduces`), when it has no note of its own: they are what the memory
    says of her, above the mails she signed or was sent. The entities the question's name
    reads as (Helen, Helen Okafor) count alike, and so does that name: "This is Sam from legal"
    introduces Sam Patel, asked "what is Sam's role?"."""
    out = np.zeros(len(cols.known))
    surface = next((name_terms(s) for e, s in qents if e == asked), None)
    same = {e for e, s in qents if name_terms(s) == surface}
    entity = _of_kind(cols, "entity")
    mentioning = [leaf_id for leaf_id, ents in entity_leaves.items() if ents & same and leaf_id in at and not entity[at[leaf_id]]]
    if not mentioning:
        return out
    # and the name the question uses: "Sam" of Sam Patel, whose note holds only his full name
    names = [s for e, s in qents if e in same] + [name for e in sorted(same) for name in _names(memory, e)]
    rows = memory.leaves.rows(mentioning)
    said = [leaf_id for leaf_id in mentioning if (row := rows.get(leaf_id)) is not None and introduces(row["text"] or "", names)]
    out[[at[leaf_id] for leaf_id in said]] = IDENTITY_WEIGHT / 2
    return out


def _names(memory: MemoryView, entity_id: str) -> list[str]:
    """The names of an entity: its registry entry's name and aliases, else its id's slug."""
    from vaultmind.entities.query import entity_query

    entry = entity_query(memory.index).registry.entries.get(entity_id)
    return [entry.display_name, *entry.aliases] if entry is not None else [entity_id.split(":", 1)[-1].replace("-", " ")]


def _describing(memory: MemoryView, asked: str, leaf_ids: Sequence[str]) -> list[str]:
    """Of the leaves of other entities' notes that mention `asked`, those that say who or what
    it is (`describes`). When its own note is a heading alone, these are what the memory says
    of it, above a mail it signed; a note that names it in passing is not, above the note of
    yours that says who it is."""
    if not leaf_ids:
        return []
    names = _names(memory, asked)
    rows = memory.leaves.rows(list(leaf_ids))
    return [leaf_id for leaf_id in leaf_ids if (row := rows.get(leaf_id)) is not None and describes(row["text"] or "", names)]


def _idf(memory: MemoryView, content_terms: Sequence[str]) -> Callable[[str], float]:
    """The inverse document frequency of each of the question's terms, log(1 + N / df)."""
    total = max(memory.leaves.document_frequency("")[1], 1)
    idf = {t: math.log(1 + total / max(memory.leaves.document_frequency(t)[0], 1)) for t in set(content_terms)}
    return idf.__getitem__


def _told_of(memory: MemoryView, ids: list[str], cols: LeafColumns, window: TimeWindow) -> npt.NDArray[np.bool_]:
    """Which leaves name a day inside `window`, read from when they were written
    (`windows.names_a_day_in`)."""
    out = np.zeros(len(ids), dtype=bool)
    dated = [k for k in range(len(ids)) if not np.isnat(cols.ts[k])]
    rows = memory.leaves.rows([ids[k] for k in dated])
    for k in dated:
        row = rows.get(ids[k])
        if row is not None and row["text"]:
            out[k] = names_a_day_in(window, row["text"], cols.ts[k].astype("datetime64[us]").astype(datetime))
    return out


def _told_plans(memory: MemoryView, lexical: list[tuple[str, float]], window: TimeWindow) -> list[tuple[str, float]]:
    """Of the leaves holding a plan word of a question about nothing but a window still ahead
    ("what is the May plan?"), those that name one of its days, written whenever before: a
    plan of another time ("change of plans: the launch moves to April") is none of its."""
    ids = [leaf_id for leaf_id, _ in lexical]
    told = _told_of(memory, ids, memory.leaves.columns(ids), window)
    return [hit for hit, named in zip(lexical, told.tolist(), strict=True) if named]


_TIME_TERMS = frozenset(
    terms(" ".join([*MONTHS, *WEEKDAYS, "day week weekend month year today tomorrow tonight morning afternoon evening"]))
)


# words that say which of a thing's times is asked ("the next release"), not what the thing is
_WHICH_ONE = frozenset(terms("next new upcoming current latest first last final"))


def _revisions(
    final: dict[str, tuple[float, float]], rows: dict[str, Any], content_terms: Sequence[str], weight: Callable[[str], float]
) -> dict[str, str]:
    """Of `rows` (strong leaves that share the question's words and hold the kind of answer it
    asks for), one that says something changed ("we move the launch to 23 April") and was
    written after others that share one of the question's words with it ("target is still 9
    April") ranks just above them all (`REVISION_MARGIN`), when it scores at least
    `REVISION_FLOOR` of the strongest of them before this pass: of those, it says how things
    stand. What the change names must be at least `REVISION_COVER` of the question, by `weight`
    (idf): "our app launch moved" changes no "code freeze for the app", nor "launch moved" the
    "launch sync". Changes are taken in the order they were
    written, so the latest of several ("moved again to 7 April") comes first. Returns each such
    leaf → the leaf it changes (the strongest before this pass)."""
    asked = frozenset(content_terms)
    pairs = _adjacent_pairs(content_terms)
    said = {leaf_id: leaf_terms(row["content_hash"], row["text"] or "")[0] & asked for leaf_id, row in rows.items()}
    before = {leaf_id: final[leaf_id][0] for leaf_id in rows}
    changed: dict[str, str] = {}
    timed = sorted((row["ts"], leaf_id) for leaf_id, row in rows.items() if row["ts"] is not None and said[leaf_id])
    for ts, leaf_id in timed:
        # what changed is named where the change is said ("party postponed again: 26 April"),
        # not elsewhere in the message ("the team lunch moved; also, the launch slides…")
        said_terms = [terms(sentence) for sentence in changes(rows[leaf_id]["text"] or "")]
        about = asked.intersection(t for seq in said_terms for t in seq)
        if asked - _TIME_TERMS:  # "book club moved to Friday" is no change of the Friday market
            # (but of "what's coming up in April?", April is what changed, and of "when is the
            # launch evening?", "move the launch evening" names the evening with the launch)
            about -= _TIME_TERMS - {t for pair in pairs & {p for seq in said_terms for p in itertools.pairwise(seq)} for t in pair}
        if sum(map(weight, about)) < REVISION_COVER * sum(map(weight, asked - _WHICH_ONE)):
            continue  # "our app launch moved" names too little of "when is the launch sync?"
        earlier = [other for when, other in timed if when < ts and said[other] & about]
        if not earlier:
            continue
        strongest = max(earlier, key=lambda other: (before[other], other))
        value, factor = final[leaf_id]
        if value < before[strongest] * REVISION_FLOOR:
            continue
        top = max(final[other][0] for other in earlier)  # earlier changes included, as they now stand
        final[leaf_id] = (max(value, top + REVISION_MARGIN), factor)
        changed[leaf_id] = strongest
    return changed


def _revised_notes(
    note_rank: dict[str, float],
    places: dict[str, tuple[str, int, str | None]],
    revised: dict[str, str],
    final: dict[str, tuple[float, float]],
) -> None:
    """A note holding a change ranks above the note of the leaf it changes (in `note_rank`, in
    place), a later change's above an earlier's (`revised` is in the order they were written):
    a change posted on a later day is another day's note, which often covers fewer of the
    question's words."""
    best: dict[str, float] = {}
    for leaf_id, place in places.items():
        if leaf_id in final:
            best[place[0]] = max(best.get(place[0], -math.inf), final[leaf_id][0])
    for order, (leaf_id, old) in enumerate(revised.items(), start=1):
        if leaf_id in places and old in places:
            note, old_note = places[leaf_id][0], places[old][0]
            # only over a note the changed leaf leads: not over another day's note that holds it
            # beside a stronger leaf about something else
            leads = final[old][0] >= best.get(old_note, math.inf)
            if note != old_note and note in note_rank and old_note in note_rank and leads:
                note_rank[note] = max(note_rank[note], note_rank[old_note] + REVISION_MARGIN * order)


def _on_topic(speaking: npt.NDArray[np.bool_], lex: npt.NDArray[np.float64], cols: LeafColumns) -> npt.NDArray[np.bool_]:
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


def _entity_signals(
    memory: MemoryView, entity_ids: Sequence[str], max_hops: int
) -> tuple[dict[str, frozenset[str]], set[str], dict[str, float], dict[str, list[str]]]:
    """Leaves per query entity, leaves holding related pairs, graph proximity per leaf, and the
    leaves of the query entities' own notes (entity → leaf ids)."""
    if not entity_ids:
        return {}, set(), {}, {}
    graph = memory.entity_graph()
    by_leaf = dict(graph.leaves_of(entity_ids))
    # an entity's own note is about it ("who is Dana?"), though it never mentions itself as one
    from vaultmind.entities.query import entity_query

    entries = entity_query(memory.index).registry.entries  # the entities that have a note
    notes = {entry.note_path: e for e in entity_ids if (entry := entries.get(e)) is not None}
    own: dict[str, list[str]] = {}
    for path, leaf_ids in memory.leaves.of_notes(sorted(notes)).items():
        lengths = memory.leaves.columns(leaf_ids).length
        for leaf_id, length in zip(leaf_ids, lengths.tolist(), strict=True):
            if length > OWN_NOTE_MIN_TERMS:  # a note of nothing but its heading ("# Tom Becker") says nothing
                by_leaf[leaf_id] = by_leaf.get(leaf_id, frozenset()) | {notes[path]}
                own.setdefault(notes[path], []).append(leaf_id)
    pair_leaves: set[str] = set()
    if len(entity_ids) >= 2:
        related = _related_pairs(graph, entity_ids, max_hops)
        for leaf_id, ents in by_leaf.items():
            if any(a in ents and b in ents for a, b in related):
                pair_leaves.add(leaf_id)
    proximity: dict[str, float] = {}
    neighbours = graph.near_leaves(entity_ids, CANDIDATES)
    if neighbours:
        top = float(neighbours[0][1]) or 1.0
        proximity = {leaf_id: float(w) / top for leaf_id, w in neighbours}
    return by_leaf, pair_leaves, proximity, own


_WHO = re.compile(
    r"^\s*(?:(?:who|what)(?:\s+(?:is|was|are|were)|['’]s)|tell\s+me\s+(?:more\s+)?about|describe"
    r"|what\s+do\s+(?:we|you|i)\s+know\s+(?:about|of))"
    r"\s+(?:the\s+)?(?P<name>[^?!.]+?)[\s?!.]*$",
    re.IGNORECASE,
)


def _asked_who(question: str, qents: Sequence[tuple[str, str]]) -> str | None:
    """The query entity a question asks nothing but who or what it is ("who is Bob?", "what is
    Harbor Hall?", "tell me about Dana") or what they do ("what does Bob work on?": their note
    says "Backend engineer", and "working days" is no answer), else None."""
    for pattern in (_WHO, ROLE):
        m = pattern.match(question)
        name = next((group for group in m.groups() if group), None) if m is not None else None
        asked = name_terms(name) if name else None
        found = next((e for e, surface in qents if asked and name_terms(surface) == asked), None)
        if found is not None:
            return found
    return None


def _related_pairs(graph: EntityGraph, entity_ids: Sequence[str], max_hops: int) -> list[tuple[str, str]]:
    """Pairs of query entities connected within `max_hops` co-occurrence edges."""
    ids = sorted(set(entity_ids))
    pairs: list[tuple[str, str]] = []
    for i, a in enumerate(ids):
        reach = _reachable(graph, a, max_hops)
        pairs.extend((a, b) for b in ids[i + 1 :] if b in reach)
    return pairs


def _reachable(graph: EntityGraph, start: str, hops: int) -> set[str]:
    seen = {start}
    frontier = {start}
    for _ in range(hops):
        frontier = {n for node in frontier for n in graph.neighbours(node)} - seen
        seen |= frontier
    return seen


def _normalise_max(scores: dict[str, float]) -> dict[str, float]:
    top = max(scores.values(), default=0.0)
    return {k: v / top for k, v in scores.items()} if top > 0 else {}


def _normalise_dense(scores: dict[str, float]) -> dict[str, float]:
    if not scores:
        return {}
    floor = statistics.median(scores.values())
    top = max(scores.values())
    span = top - floor
    if span <= 0:
        return {k: 1.0 for k in scores}
    return {k: max(0.0, (v - floor) / span) for k, v in scores.items()}


