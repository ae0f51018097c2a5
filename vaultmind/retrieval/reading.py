"""The question's reading: what `walk` searches for, and what the question asks of it.

Before anything is scored, the question is read into its search terms and the text searched
densely, its time window (`asked_window`; after an event, `after_event`), its entities, the
authors it names and whose words it asks for (`people`), and what it asks for beyond its words:
the kind of answer (`answer_type`), who someone is (`identity`), the open tasks (`tasks`), a
window alone, or nothing but its author or entity; what it sets aside, when it asks nothing else
("what did Mei say apart from the garden?", `set_aside`), is not searched. Misspellings are
read as the words and names the memory holds (`spelling`); the words that say how the asker
asks (`wording`: "say", "likely", "recently"), the kind of answer and the window's relative
words are not searched.
docs/ranking.md ("1. Read the question") tells every rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from vaultmind.entities.ids import words
from vaultmind.index.lexical import terms
from vaultmind.retrieval.after_event import event_window
from vaultmind.retrieval.answer_type import ASKING_WORDS, AnswerKind, answer_kind, kind_terms
from vaultmind.retrieval.asked_window import (
    Tense,
    asks_of_plans,
    coming_weekday,
    question_tense,
    question_window,
    relative_terms,
    year_held,
    yearless,
)
from vaultmind.retrieval.identity import asked_entity
from vaultmind.retrieval.people import (
    WORD,
    as_named,
    asked_speakers,
    author_terms,
    capitalised_terms,
    name_words,
    named_authors,
    names_capitalised,
    person_terms,
    query_entities,
    without_words,
)
from vaultmind.retrieval.set_aside import set_aside
from vaultmind.retrieval.signals import CANDIDATES
from vaultmind.retrieval.spelling import corrections, joined_words, name_corrections, possessives
from vaultmind.retrieval.tasks import OpenTask, of_named_source, open_tasks
from vaultmind.retrieval.timeparse import TimeWindow
from vaultmind.retrieval.windows import said_in
from vaultmind.retrieval.wording import (
    agent_nouns,
    asker_writes,
    asks_earliest,
    asks_latest,
    hedges,
    merged,
    own_writing,
    role_terms,
    vague_times,
)

if TYPE_CHECKING:
    from vaultmind.retrieval.view import MemoryView


# of a window still ahead, these words ask about it too ("what's planned for next month?") — but
# the plan words name what a message about it may say ("the plan for May"), and stay searched
PLAN_WORDS = frozenset(terms("plan plans planned planning schedule scheduled"))
AHEAD_ASKING = ASKING_WORDS | PLAN_WORDS | frozenset(terms("upcoming coming"))


@dataclass(frozen=True, slots=True)
class Reading:
    """A question as `walk` reads it (each field as `read_question` tells it)."""

    question: str  # names spelt and capitalised as the memory writes them
    qterms: list[str]  # all its search terms
    window: TimeWindow | None  # the time it asks about, its year and weekday settled
    qents: list[tuple[str, str]]  # its entities: (id, surface)
    named: dict[str, str]  # the authors whose entity it names: author → entity id
    authors: frozenset[str]  # the terms of the authors' names it writes
    own: set[str]  # the verbs by which it asks what the asker wrote ("note")
    speakers: set[str]  # the terms of the authors whose words it asks for
    evented: bool  # its window is the time after an event it names (`after_event`)
    content_terms: list[str]  # what its words are about: what is weighed and searched
    content_text: str  # the text searched densely
    corrected: dict[str, str]  # misspelt word → the word read
    asked_who: str | None  # the entity it asks who or what it is ("who is Bob?")
    only_names: bool  # about nothing but its author ("what did Dana say?")
    latest: bool  # asks for the latest time it happened ("when did I last email Dana?": `asks_latest`)
    earliest: bool  # asks for the earliest time it happened ("when did I first email Dana?": `asks_earliest`)
    kind: AnswerKind | None  # the kind of answer it asks for (`answer_type`)
    tense: Tense | None
    dated: set[str]  # the terms of its window's words
    empty: bool  # the memory holds nothing inside the window
    ahead: bool  # … and the window is still to come
    only_window: bool  # about nothing but its window ("what happened last week?")
    only_entity: bool  # about nothing but whom it names ("tell me about Bob")
    tasks: list[OpenTask]  # for a task question, the vault's open tasks (of the source it names)
    only_tasks: bool  # asks for nothing but the open tasks
    joined: dict[str, tuple[str, ...]]  # a term's other written forms ("icecream", "owner")
    searched: list[str]  # the terms searched lexically
    aside: frozenset[str]  # the terms of what it sets aside ("apart from the garden": `set_aside`)


def read_question(
    memory: MemoryView,
    question: str,
    reference_time: datetime | None,
    now: datetime,
    ask: Callable[[str], Sequence[dict[str, Any]]],
    *,
    setting_aside: bool = True,
) -> Reading:
    """The question read against the memory at `now` (its window relative to `reference_time`);
    `ask` walks another question, the hits of "when <event>?" for a window after an event.
    What it sets aside is not searched when it searches nothing else (`set_aside`); read again
    without `setting_aside` when it does."""
    asked = question
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
    aside = set_aside(question) if setting_aside else None  # "apart from the garden": anything but it, nor whom it names
    aside_terms = aside.terms | aside.marker_terms if aside is not None else frozenset()
    if aside is not None:
        qents = [(e, surface) for e, surface in qents if not (named_terms := set(terms(surface))) or not named_terms <= aside.terms]
    named = named_authors(memory, qents)
    said_names = {t for e, surface in qents if e in named.values() for t in person_terms(surface)}
    # An author's name as the question writes it (capitalised: "Bill", not the "bill" that is
    # due), or a name of an author's entity it names ("May", "Will": stop words too).
    authors = (author_terms(memory) & capitalised_terms(question)) | said_names
    if window is not None:  # "in May" is the month, not May Chen, as an author too
        authors -= set(words(window.text))
    authors -= aside_terms
    own = own_writing(question)  # "what did I note…" asks for the asker's notes, as "say" for someone's words
    if own and asker_writes(question):  # … and the asker wrote them: "what did I write to Paul?" names whom to, not who wrote
        authors, named = frozenset(), {}
    content_terms = [t for t in qterms if t not in authors] or qterms
    content_text = without_words(question, authors) if authors else question
    if aside_terms:  # the thing set aside is not searched, lexically or densely
        content_terms = [t for t in content_terms if t not in aside_terms]
        content_text = without_words(content_text, aside_terms)
    speakers, verbs = asked_speakers(question, authors) if authors else (set(), set())
    evented = window is None and bool(speakers)  # "what did Priya say after the launch was moved?": once it was (`after_event`)
    if evented:
        window = event_window(question, ask)
    verbs |= own
    hedged = hedges(question)  # "would Lucinda likely…?": how sure, not what (read as "like")
    vague = vague_times(question)  # "…attend recently?": when, to the asker; a message's "recently" is of its own day
    vague = vague if any(t not in vague and t not in ASKING_WORDS for t in content_terms) else set()  # "what happened lately?" keeps it
    if any(t not in hedged and t not in vague for t in content_terms):
        verbs |= hedged | vague
        content_text = without_words(content_text, vague) if vague else content_text
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

    asked_who = asked_entity(question, qents)  # "who is Bob?", "what does Bob work on?"
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
    # meaning of "what happened" say which of the window's messages matter (walk's `INFORMATIVE`)
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
    empty = window is not None and not said_in(memory, window.start, window.end, now)
    ahead = empty and window is not None and window.end > now
    if ahead:
        asking_only = all(t in AHEAD_ASKING for t in content_terms)
        if not asking_only:  # "what are we doing in April?": April, not "doing" (but "the plan for April": plan)
            content_terms = [t for t in content_terms if t not in AHEAD_ASKING or t in PLAN_WORDS]
    only_window = window is not None and asking_only
    # "Tell me about Bob": nothing but whom it names (walk's `INFORMATIVE` among the leaves about them)
    only_entity = not only_window and bool(content_terms) and asking_only and bool(qents)
    # "what are my open tasks?": the vault's open tasks, in their order (`retrieval/tasks.py`)
    tasks = of_named_source(open_tasks(memory, now), question) if kind == "task" else []
    only_tasks = bool(tasks) and asking_only and window is None
    # "ice cream" is held by "icecream" too; "who owns…" by "Owner:"
    joined = merged(joined_words(memory.leaves, question, content_terms), agent_nouns(memory.leaves, question, content_terms))
    searched = content_terms if not (only_window or only_entity) else []
    if only_window and ahead:  # "what is the May plan?": its plan words are searched still
        searched = [t for t in content_terms if t in PLAN_WORDS]
    if aside is not None and searched:  # "what sports besides basketball?": a message may name it beside the answer
        return read_question(memory, asked, reference_time, now, ask, setting_aside=False)
    return Reading(
        question=question,
        qterms=qterms,
        window=window,
        qents=qents,
        named=named,
        authors=authors,
        own=own,
        speakers=speakers,
        evented=evented,
        content_terms=content_terms,
        content_text=content_text,
        corrected={**misnamed, **{word: new for word, new, _ in fixed.values()}},
        asked_who=asked_who,
        only_names=only_names,
        latest=asks_latest(question),
        earliest=asks_earliest(question),
        kind=kind,
        tense=tense,
        dated=dated,
        empty=empty,
        ahead=ahead,
        only_window=only_window,
        only_entity=only_entity,
        tasks=tasks,
        only_tasks=only_tasks,
        joined=joined,
        searched=searched,
        aside=aside.terms if aside is not None else frozenset(),
    )
