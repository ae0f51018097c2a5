"""How some of a question's words are read at query time, beside the index's tokenizer.

- The doer of a who-question's verb ("Who owns the runbook?"): the verb's agent noun is read
  as a form of it, where some leaf holds that noun — "Owner: Marco" answers who owns, "the
  leader of the team" who leads it, "the driver" who drives. The stemmer keeps "own" and
  "owner" apart ("manage"/"manager" it joins already); changing it would change every posting
  of the index, so the noun is searched with the verb instead, as a joined word is
  (`spelling.joined_words`). Only the verb right after "who" (and an auxiliary: "who is
  leading…", "who will host…") is read so: elsewhere "older" is no doer of "old".
- The asker's own writing ("what did I write on Thursday?", "what did I note last week?"): the
  verb asks for the asker's notes, as "say" asks for someone's words; it is not what they are
  about, and is not searched (a message that says "noted" is no note of theirs); nor are the
  words that name those notes ("in my daily note", "my journal").
- How sure the asker is ("would Lucinda likely…?", "what might Bob probably need?"): a hedge
  says nothing of what is asked, and is not searched — the stemmer reads "likely" as "like",
  which every "I'd like…" and "I like…" holds.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from vaultmind.calendar_names import WEEKDAYS, alternation
from vaultmind.index.lexical import terms

if TYPE_CHECKING:
    from vaultmind.index.resident import ResidentLeaves

# the verb of a who-question: "who owns", "who is leading", "who'll host", "who did organise"
_WHO_VERB = re.compile(
    r"^\W*who(?:(['’]s\s+)|['’](?:ll|d)\s+|\s+(?:(is\s+|was\s+|are\s+|were\s+)|(?:will|would|did|does|do|has|had|can|should)\s+)?)"
    r"([a-z]+)\b",
    re.I,
)
# what the asker wrote: "what did I write", "I noted", "what have I jotted down"; and the notes
# they wrote it in: "my daily note", "my journal", "our meeting notes"
_OWN_WRITING = re.compile(
    r"\b(?:i|we)\s+(?:(?:have|had|did|do)\s+)?(write|wrote|written|note|noted|jot|jotted|log|logged)\b"
    r"|\b(?:my|our)\s+((?:daily|own|meeting)\s+)?(notes?|journal|diary)\b",
    re.I,
)

# what someone does, which their entity note says ("Backend engineer … Owns payments"): "what
# does Bob do?", "what does Bob work on?", "what is Priya working on?", "what is Marco's job?"
ROLE = re.compile(
    r"^\s*what\s+(?:(?:does|did|do)\s+(?P<name>[^?!.]+?)\s+(?:do(?:\s+for\s+(?:a\s+)?(?:living|work))?|work\s+(?:on|as|at))"
    r"|(?:is|was)\s+(?P<working>[^?!.]+?)\s+working\s+on"
    r"|(?:is|was)\s+(?P<owner>[^?!.]+?)['’]s?\s+(?:job|role|work|position))[\s?!.]*$",
    re.IGNORECASE,
)
_ROLE_WORDS = re.compile(r"\b(?:do|work|working|job|role|position|living)\b", re.I)


def role_terms(question: str) -> set[str]:
    """The terms of the words by which a question asks what someone does ("what does Bob work
    on?": "work"; "what is Marco's job?": "job"), when it asks nothing else: they name the
    kind of answer (the role their entity note states), not its topic ("8 more working days")."""
    m = ROLE.match(question)
    if m is None:
        return set()
    asked = next(group for group in m.groups() if group)  # the name: "Will" may do, "Job" may be someone
    return {t for found in _ROLE_WORDS.finditer(question.replace(asked, " ")) for t in terms(found.group(0))}


def agent_nouns(leaves: ResidentLeaves, question: str, searched: Collection[str]) -> dict[str, tuple[str, ...]]:
    """Term of a who-question's verb → the term of its agent noun ("owns" → "owner", "runs" →
    "runner", "directs" → "director") when some leaf holds it and the stemmer keeps them apart;
    empty for any other question. The verb's term must be one of `searched`."""
    m = _WHO_VERB.match(question)
    if m is None or ((m.group(1) or m.group(2)) and not m.group(3).lower().endswith("ing")):
        return {}  # "who is late?": no verb ("later" is no doer), but "who is leading…?" has one
    found = terms(m.group(3))
    if len(found) != 1 or found[0] not in searched:
        return {}
    (verb,) = found
    forms: list[str] = []
    for noun in _nouns(verb):
        noun_terms = terms(noun)
        held = len(noun_terms) == 1 and noun_terms[0] not in (verb, *forms) and leaves.document_frequency(noun_terms[0])[0]
        if held:
            forms.append(noun_terms[0])
    return {verb: tuple(forms)} if forms else {}


def _nouns(stem: str) -> tuple[str, ...]:
    """The agent nouns a verb's stem may form: own-er, drive-r, direct-or, run-ner."""
    nouns = [stem + "er", stem + "or"]
    if stem.endswith("e"):
        nouns.append(stem + "r")
    if len(stem) >= 3 and stem[-1] not in "aeiouwxy" and stem[-2] in "aeiou" and stem[-3] not in "aeiou":
        nouns.append(stem + stem[-1] + "er")
    return tuple(nouns)


_HEDGES = re.compile(r"\b(?:likely|unlikely|probably|possibly|presumably|potentially|perhaps|maybe)\b", re.I)
# words that place a time only relative to the asker: "recently" in a message is of its own day
_VAGUE_TIMES = re.compile(r"\b(?:recently|lately|soon|currently|nowadays)\b", re.I)
# the place of an adverb of time after an auxiliary and its subject of a word or two ("did I
# last…", "did the team first…"): not right after a determiner or a possessive, where the word is
# an adjective of a thing ("did the last meeting…", "is Jolene's first screenplay…")
_AFTER_SUBJECT = (
    r"\b(?:did|do|does|have|has|had|was|were|is|are)\s+(?:[\w'’]+\s+)??"
    r"(?!(?:the|a|an|my|our|your|his|her|their|its|this|that)\b)[\w'’]+(?<!\w['’]s)\s+"
)
# the periods "last"/"first" name as adjectives ("last week", "first day")
_NOT_ADVERB = rf"(?!\s+(?:week|weekend|month|year|night|day|season|summer|winter|spring|autumn|fall|time|{alternation(WEEKDAYS)})\b)"
# "last" asking for the latest time, which no message says of it: "when did I last email Dana?",
# "when was Bob last here?", "when was the last time we talked about…?" (not "did we meet last
# week?", nor "did the last meeting…?", an adjective of a thing)
_LATEST = re.compile(rf"{_AFTER_SUBJECT}(?P<last>last)\b{_NOT_ADVERB}|\bthe\s+(?P<time>last\s+time)\b", re.I)
# its mirror, "first" (or "initially", "originally", "at first") asking for the earliest time:
# "when did Jolene first watch…?", "the first time we talked about…", "what did Dana initially
# plan?" (not "his first tournament", an adjective of a thing, nor "first place", "originally
# from", "at first sight")
_EARLIEST = re.compile(
    rf"{_AFTER_SUBJECT}(?P<first>first)\b{_NOT_ADVERB}(?!\s+(?:place|prize|half|quarter|round)\b)"
    r"|\bthe\s+(?P<time>(?:first|earliest)\s+time)\b"
    r"|\b(?P<adverb>initially|originally(?!\s+from\b)|at\s+first(?!\s+(?:sight|glance)\b))",
    re.I,
)


def asks_latest(question: str) -> bool:
    """Whether the question asks for the latest time something happened ("when did I last email
    Dana?", "the last time we talked about…"; `_LATEST`: not "last week", "last Monday")."""
    return _LATEST.search(question) is not None


def asks_earliest(question: str) -> bool:
    """Whether the question asks for the earliest time something happened ("when did I first
    email Dana?", "the first time we talked about…", "what did Dana initially plan?"; `_EARLIEST`:
    not "his first tournament", "first week")."""
    return not asks_latest(question) and _EARLIEST.search(question) is not None


def hedges(question: str) -> set[str]:
    """The terms of the words by which the question says how sure its asker is ("likely",
    "probably", "perhaps"): not what it asks about — unless another of its words has the same
    term ("would Tim likely like…": the second is asked)."""
    return _asker_words(_HEDGES, question)


def vague_times(question: str) -> set[str]:
    """The terms of the words by which the question places its time only relative to the asker
    ("what did Lucinda attend recently?", "would Melissa go again soon?"): not what it asks
    about, and no time window — a message that says "recently" or "soon" says it of the day it
    was written ("Talk to you soon!"); nor "last" asking for the latest time ("when did I last
    email Dana?", "when was the last time we talked about…?"). Unless another of its words has
    the same term. ("first" asking for the earliest time stays: a message often says it of
    itself, "I first watched it three years ago".)"""
    latest = {t for m in _LATEST.finditer(question) for t in terms(m.group("last") or m.group("time"))}
    return _asker_words(_VAGUE_TIMES, question) | latest


def _asker_words(pattern: re.Pattern[str], question: str) -> set[str]:
    """The terms of the question's words `pattern` finds, but those another of its words has."""
    found = {t for m in pattern.finditer(question) for t in terms(m.group(0))}
    return found - set(terms(pattern.sub(" ", question))) if found else found


def own_writing(question: str) -> set[str]:
    """The terms of the verbs by which the question asks what the asker wrote ("what did I
    note…"), and of the notes it names as theirs ("in my daily note"): not searched (the
    memory seldom says "daily", and a message that says "noted" is no note of theirs)."""
    return {t for m in _OWN_WRITING.finditer(question) for group in m.groups() if group for t in terms(group)}


def asker_writes(question: str) -> bool:
    """Whether the question asks what the asker wrote by a verb ("what did I write to Paul?"),
    not only names their notes ("what did Kate say in my notes?", whose speaker is Kate)."""
    return any(m.group(1) for m in _OWN_WRITING.finditer(question))


def merged(*forms: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    """Several term → other forms maps as one (each term's forms in order, once)."""
    out: dict[str, list[str]] = {}
    for mapping in forms:
        for term, more in mapping.items():
            kept = out.setdefault(term, [])
            kept.extend(form for form in more if form not in kept)
    return {term: tuple(more) for term, more in out.items()}
