"""The people a question names, and the terms of their names as authors and questions write
them: its entities and the authors they are, who it asks the words of ("what did Alice
say…"), and the author names it writes in lower case that the memory writes as names; and
whether a text says who someone is (`describes`)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from vaultmind.entities.extract import parse_author
from vaultmind.entities.fuzzy_names import EntityNames, entity_names
from vaultmind.entities.ids import without_title, words
from vaultmind.index.lexical import terms
from vaultmind.index.tables import has_table

if TYPE_CHECKING:
    from vaultmind.index.leaf_columns import LeafColumns
    from vaultmind.retrieval.view import MemoryView


@lru_cache(maxsize=4096)
def name_terms(name: str) -> frozenset[str]:
    """The terms of a name, and its words that are stop words ("May", "Will"), which have none."""
    return frozenset(terms(name)).union(word for word in words(name) if not terms(word))


@lru_cache(maxsize=4096)
def person_terms(author: str) -> frozenset[str]:
    """The terms of a person's name as an author or a question writes it: of "Priya Natarajan
    <priya@northwind.example>" only the name's, of a bare address its local part — never the
    domain, which every sender at it shares (and which names the company, a word to search)."""
    person = parse_author(author)
    if person is None:
        return name_terms(author)
    if person.name:  # without a title: "Dr. Elena Rossi" is Elena Rossi, "Auntie Lin" is Lin
        parts = person.name.split()
        titles = len(words(person.name)) - len(without_title(words(person.name)))
        while titles > 0 and len(parts) > 1:
            titles -= len(words(parts[0]))
            parts = parts[1:]
        return name_terms(" ".join(parts))
    return name_terms(person.handle or person.email.split("@", 1)[0] or author)


def possessed(question: str, qents: Sequence[tuple[str, str]]) -> bool:
    """Whether the question writes one of its entities in the possessive ("what is in Okafor's
    team?"): it asks about something of theirs, which a leaf that does not involve them is not."""
    return bool(possessors(question, qents))


def possessors(question: str, qents: Sequence[tuple[str, str]]) -> set[str]:
    """The entities the question writes in the possessive ("Okafor's team"): their ids."""
    return {e for e, surface in qents if surface and re.search(rf"\b{re.escape(surface)}['’]s\b", question)}


def query_entities(memory: MemoryView, question: str) -> list[tuple[str, str]]:
    """The question's entities, normalised exactly as at ingest (empty without the entity index)."""
    if not has_table(memory.index, "occurrences"):
        return []
    from vaultmind.entities.query import entity_query

    return entity_query(memory.index).find(question)


def named_authors(memory: MemoryView, qents: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The authors of the memory whose entity the question names, by any of its names (an
    alias taught in its entity note: "Natty" for Priya Natarajan): author → entity id."""
    wanted = {e for e, _ in qents}
    if not wanted:
        return {}
    from vaultmind.entities.query import entity_query

    found = entity_query(memory.index)
    return {author: e for author in memory.leaves.authors() if (e := found.author_entity(author)) in wanted}


WORD = re.compile(r"[\w'’]+")


def name_words(memory: MemoryView) -> tuple[frozenset[str], frozenset[str]]:
    """The lower-case words of the names the memory knows: of entities' names and aliases, and
    of authors'."""
    entities = _entity_words(entity_names(memory.index)) if has_table(memory.index, "entities") else frozenset()
    return entities, _author_words(memory.leaves.authors())


def people_words(memory: MemoryView) -> frozenset[str]:
    """The lower-case words of the names of the memory's people: its authors' and those of its
    person entities (names and aliases); not of organizations or products ("Harbor Hall")."""
    people = _person_words(entity_names(memory.index)) if has_table(memory.index, "entities") else frozenset()
    return people | _author_words(memory.leaves.authors())


@lru_cache(maxsize=2)
def _person_words(entities: EntityNames) -> frozenset[str]:  # kept per index state, as the names are
    return frozenset(w for name, kind in zip(entities.names, entities.kinds, strict=True) if kind == "person" for w in words(name) if w.isalpha())


@lru_cache(maxsize=2)
def _entity_words(entities: EntityNames) -> frozenset[str]:  # kept per index state, as the names are
    return frozenset(w for name in entities.names for w in words(name) if w.isalpha())


@lru_cache(maxsize=8)
def _author_words(authors: frozenset[str]) -> frozenset[str]:
    return frozenset(w for name in authors for w in words(name) if w.isalpha())


def as_named(word: str, fixed: dict[str, str]) -> str:
    """`word`, or the name's word it misspells, capitalised as the question wrote it."""
    new = fixed.get(word.lower())
    if new is None:
        return word
    return new.capitalize() if word[:1].isupper() else new


def author_terms(memory: MemoryView) -> frozenset[str]:
    """The terms of every author's name in the memory (`Emil Smith` → emil, smith), from the
    resident leaves (kept in step with every save)."""
    return _author_terms(memory.leaves.authors())


@lru_cache(maxsize=8)
def _author_terms(authors: frozenset[str]) -> frozenset[str]:
    return frozenset(t for author in authors for t in person_terms(author))


SPEAKING_VERBS = (  # a regular expression's alternatives: "say", "told", "replied"…
    r"say|says|said|tell|tells|told|mention|mentions|mentioned|write|writes|wrote|ask|asks|asked|"
    r"suggest|suggests|suggested|recommend|recommends|recommended|share|shares|shared|propose|proposes|proposed|"
    r"post|posts|posted|reply|replies|replied|answer|answers|answered|think|thinks|thought|confirm|confirms|confirmed|"
    r"send|sends|sent|email|emails|emailed|text|texts|texted"
)
_SPEECH = re.compile(  # "Helen's email address" is no mail of hers; "did Bob last mention…": Bob's words, the latest
    rf"([\w'’]+)\s+(?:(?:last|first|ever|also|just|once|recently)\s+)?({SPEAKING_VERBS})\b(?!\s+address)",
    re.I,
)
# A word before a speaker's name that may be another's, or the first of the same name: "Alice and
# Bob said", "Alice, Bob or Carol", "Alice Chen or Bob Stone"
_JOINED_NAME = re.compile(r"([\w'’]+)(?:\s*(?:,|&|\band\b|\bor\b)\s*|\s+)$", re.I)


_SENT_BY = re.compile(r"\b(?:from|by)\s+([\w'’.@-]+)", re.I)


def asked_speakers(question: str, authors: set[str] | frozenset[str]) -> tuple[set[str], set[str]]:
    """Who the question asks the words of ("What did Alice say…", "Which city did John
    recommend…", "emails from Elena"): the terms of an author's name right before a verb of
    saying (or an adverb before it: "when did Bob last mention…"), and of the authors' names
    joined to it ("what did Alice and Bob say…": both), or after "from" or "by"; and the terms
    of those verbs ("say"), which ask for the author's words and are not what the words are about."""
    speakers: set[str] = set()
    verbs: set[str] = set()
    for m in _SPEECH.finditer(question):
        if found := name_terms(m.group(1)) & authors:
            speakers |= found | _joined_speakers(question[: m.start()], authors)
            verbs.update(terms(m.group(2)))
    for m in _SENT_BY.finditer(question):
        speakers |= person_terms(m.group(1)) & authors
    return speakers, verbs


def _joined_speakers(before: str, authors: set[str] | frozenset[str]) -> set[str]:
    """The terms of the authors' names at the end of `before` (the text before a speaker's
    name), joined by "and", "or", "&", a comma or a space: "Alice, Carol and" → alice, carol;
    "Alice Chen or Bob" → alice, chen, bob; none past the first word that names no author
    ("the trip and")."""
    found: set[str] = set()
    while (m := _JOINED_NAME.search(before)) and (named := name_terms(m.group(1)) & authors):
        found |= named
        before = before[: m.start()]
    return found


def speaker_codes(
    cols: LeafColumns, speakers: set[str], named: dict[str, str], qents: Sequence[tuple[str, str]]
) -> list[int]:
    """The codes (in `cols.author_names`) of the authors the question asks the words of: one of
    their name's terms, or of the words the question names their entity by, is a speaker's."""
    codes = np.unique(cols.author[cols.author >= 0]).tolist()
    spoken = set(speaker_names([cols.author_names[code] for code in codes], speakers, named, qents))
    return [code for code in codes if cols.author_names[code] in spoken]


def spoken_of(question: str, qents: Sequence[tuple[str, str]], named: dict[str, str], speakers: set[str]) -> set[str]:
    """The entities of the authors whose thing the question asks a speaker's words about ("what
    did Arne say about Wilma's store?": Wilma): named, written in the possessive, and no speaker
    — none when a speaker's own thing is asked of too ("what did Arne say about Arne's store?")."""
    owners = possessors(question, qents)
    voices = {named[author] for author in speaker_names(list(named), speakers, named, qents)}
    return set() if owners & voices else {e for e in named.values() if e in owners and e not in voices}


def possessor_terms(owners: set[str], qents: Sequence[tuple[str, str]], named: dict[str, str]) -> list[frozenset[str]]:
    """The terms of each of `owners`' names (entity ids, `spoken_of`): as its author writes
    it, and as the question names it — in a stable order."""
    return [
        frozenset().union(*(person_terms(a) for a, e in named.items() if e == owner), *(person_terms(s) for e, s in qents if e == owner))
        for owner in sorted(owners)
    ]


def speaker_names(
    names: Iterable[str], speakers: set[str], named: dict[str, str], qents: Sequence[tuple[str, str]]
) -> list[str]:
    """The author names (as written in their notes) of `names` the question asks the words of:
    one of their name's terms, or of the words the question names their entity by, is a
    speaker's — in `names`' order."""
    out = []
    for name in names:
        if not name:
            continue
        called = {t for e, surface in qents if named.get(name) == e for t in person_terms(surface)}
        if (person_terms(name) | called) & speakers:
            out.append(name)
    return out


def capitalised_terms(text: str) -> frozenset[str]:
    """The terms of the words `text` writes with a capital ("Bill", "Summer")."""
    return frozenset(t for m in WORD.finditer(text) if m.group()[0].isupper() for t in name_terms(m.group()))


NAME_SAMPLE = 40  # leaves read to tell a name written in lower case from a word


# What is no use of a word in a sentence: a link's target (`[[bob-stone|Bob]]` keeps "Bob"),
# an address, a URL, a tag
_NOT_PROSE = re.compile(r"\[\[[^\]|]*\|([^\]]*)\]\]|\[\[[^\]]*\]\]|\S+@\S+|https?://\S+|(?<!\w)#[\w/-]+")


def _prose(text: str) -> str:
    return _NOT_PROSE.sub(lambda m: m.group(1) or " ", text)


def names_capitalised(memory: MemoryView, question: str) -> str:
    """`question` with the author names it writes in lower case ("what did john say?")
    capitalised, when the memory writes them as names: then they are read as names, as
    written "John". "bill" stays a word where the memory speaks of "the electricity bill"."""
    lowered = {m.group() for m in WORD.finditer(question) if not m.group()[0].isupper()}
    if not lowered:
        return question
    names = _written_as_names(memory, frozenset(terms(" ".join(lowered))) & author_terms(memory))
    if not names:
        return question

    def named(match: re.Match[str]) -> str:
        word = match.group()
        of = name_terms(word) if word in lowered else frozenset()
        return word[0].upper() + word[1:] if of and of <= names else word

    return WORD.sub(named, question)


def _written_as_names(memory: MemoryView, asked: frozenset[str]) -> frozenset[str]:
    """Of the terms `asked` (no stop words: "may" and "will" are names only written "May" and
    "Will"), those the memory writes as names: capitalised in at least four of five of their
    uses inside a sentence, among the leaves that hold them most (or in no text at all)."""
    if not asked:
        return frozenset()
    found = memory.leaves.search(sorted(asked), NAME_SAMPLE)
    texts = [_prose(row["text"] or "") for row in memory.leaves.rows([leaf_id for leaf_id, _ in found]).values()]
    upper: dict[str, int] = dict.fromkeys(asked, 0)
    lower: dict[str, int] = dict.fromkeys(asked, 0)
    for text in texts:
        for m in WORD.finditer(text):
            word = m.group()
            at = m.start() - 1
            while at >= 0 and text[at] in " \t":
                at -= 1
            if at < 0 or text[at] in ".!?:\n>\"“(":  # a sentence's first word: capitalised anyway
                continue
            for t in name_terms(word) & asked:
                (upper if word[0].isupper() else lower)[t] += 1
    return frozenset(t for t in asked if upper[t] >= 4 * lower[t])


def without_words(text: str, drop: set[str] | frozenset[str]) -> str:
    """`text` without the words whose terms all fall in `drop` (possessives included:
    "Emil's" goes with "emil"); the text itself when nothing else would be left."""

    def keep(match: re.Match[str]) -> str:
        word_terms = name_terms(re.sub(r"['’]s$", "", match.group(0)))
        return "" if word_terms and word_terms <= drop else match.group(0)

    out = " ".join(WORD.sub(keep, text).split())
    return out if WORD.search(out) else text


# what follows a name that a description of it does: "Dana Whitfield, events manager", "Omar
# (data engineer)", "Dana is the events manager", a table row's next cell ("| Bob | backend |");
# and what precedes one: "Contact: Dana Whitfield". A wikilink's brackets may close or open it.
_DESCRIBED_AFTER = (
    r"(?:\]\])?(?:\s*(?:,|\(|—|–|\s-|\s\|)\s*(?:(?:an?|the|our|my|their)\s+)?[a-z]"
    r"|\s+(?:is|was)\s+(?:an?|the|our|my|their)\b)"
)
_DESCRIBED_BEFORE = r"(?:^|[.;\n]\s*|\|\s*)[A-Z][\w ]{0,30}:\s*(?:\[\[(?:[^\]|\\]*\\?\|)?)?"


# In a message or a document, where a name is also addressed ("Thanks Helen, will do") or named
# in passing, only a description that says whose or what someone is introduces them: "Helen
# Okafor from our finance team", "Sam from legal" (not "from home"), "Helen, our CFO", "Omar
# (data engineer)", "Helen is the CFO", and a label before the name, "- Finance (invoices,
# deposit): Helen Okafor". A first name may stand before its surname.
_INTRODUCED_AFTER = (
    r"(?:\s+[A-Z][\w'’-]+)?"
    r"(?:\s*,\s*(?:an?|the|our|my|their|his|her)\s+\w|\s+from\s+(?:(?:our|the|their|my|his|her)\s+\w|(?!(?:home|here|there|now|then|today|tomorrow|yesterday|time|work|scratch)\b)[a-z]{3,}\b)"
    r"|\s*\((?:an?\s+|the\s+|our\s+|my\s+)?[a-z][^)\n]{0,40}\)|\s+(?:is|was)\s+(?:an?|the|our|my|their)\s+\w)"
)
_INTRODUCED_BEFORE = r"(?:(?:^|[.;\n])\s*(?:[-*+]\s+)?|\|\s*)[A-Z][\w ]{0,30}(?:\([^)\n]{0,40}\))?:\s*(?:\[\[(?:[^\]|\\]*\\?\|)?)?"


# a name addressed, not described: "Thanks, Helen, the budget is fine", "Hi Helen, the venue…"
_GREETING = re.compile(r"\b(?:thanks|thank you|hi|hey|hello|dear|cheers)[ ,]*$", re.I)


def introduces(text: str, names: Collection[str]) -> bool:
    """Whether a message or a document's `text` says who one of `names` is (`introduction`)."""
    return introduction(text, names) > 0


def introduction(text: str, names: Collection[str]) -> float:
    """How much of a message or a document's `text` says who one of `names` is, stricter than
    `describes`, which reads entity notes: all of it when a description follows the name
    ("Helen Okafor from our finance team", "Helen, our CFO": `_INTRODUCED_AFTER`); when only a
    label stands before it ("- Finance (invoices, deposit): Helen Okafor": `_INTRODUCED_BEFORE`),
    the share of the text in the lines that label it: a list's line in a long section is little
    of what the section says. "Thanks Helen, will do" and "Thanks, Helen, the budget is fine"
    only address her (`_GREETING`): nothing."""
    alternatives = _alternatives(names)
    if not alternatives:
        return 0.0
    described = re.compile(rf"\b(?i:{alternatives})\b{_INTRODUCED_AFTER}")
    if any(_GREETING.search(text, 0, found.start()) is None for found in described.finditer(text)):
        return 1.0
    labelled = re.compile(rf"{_INTRODUCED_BEFORE}(?i:{alternatives})\b")
    lines = {text.rfind("\n", 0, found.end()) + 1 for found in labelled.finditer(text) if _GREETING.search(text, 0, found.start()) is None}
    said = sum(len(text[start:].split("\n", 1)[0].strip()) for start in lines)
    return min(1.0, said / max(1, len(text.strip())))


def _alternatives(names: Collection[str]) -> str:
    """`names` as a pattern's alternatives, longest first."""
    return "|".join(re.escape(name) for name in sorted({n for n in names if n.strip()}, key=len, reverse=True))


def describes(text: str, names: Collection[str]) -> bool:
    """Whether `text` says who or what one of `names` is: the name set off by a description
    ("Contact: Dana Whitfield, events manager", "[[bob-stone|Bob]] | backend"), not named in
    passing ("Manages Omar.", "Omar's team sits next to finance")."""
    alternatives = _alternatives(names)
    if not alternatives:
        return False
    said = re.compile(rf"{_DESCRIBED_BEFORE}(?i:{alternatives})\b|\b(?i:{alternatives}){_DESCRIBED_AFTER}")
    return said.search(text) is not None


def to_each_other(memory: MemoryView, ids: Sequence[str], cols: LeafColumns, speaking: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Of the `speaking` leaves (messages by the speakers a question names), those next to a
    message by another of them in their conversation: "what did Alice and Bob say about the
    trip?" is first what they said to each other, then what each said to someone else."""
    out = np.zeros(len(ids), dtype=bool)
    authors = {cols.author_names[int(c)] for c in cols.author[speaking].tolist() if c >= 0}
    if len(authors) < 2:
        return out
    picked = [ids[k] for k in np.flatnonzero(speaking).tolist()]
    near = memory.leaves.neighbours_of(picked, 1)
    others = sorted({o for found in near.values() for o in found})
    more = memory.leaves.columns(others)
    by = {leaf_id: more.place(k) for k, leaf_id in enumerate(others)}
    at = {leaf_id: k for k, leaf_id in enumerate(ids)}
    for leaf_id in picked:
        own = cols.place(at[leaf_id])
        who = own[2] if own is not None else None
        out[at[leaf_id]] = any(
            (p := by.get(o)) is not None and p[2] in authors and p[2] != who for o in near.get(leaf_id, ())
        )
    return out
