"""Words of speech the small NER models take for names: a common word capitalised by a message's
start, an interjection, a word drawn out for effect.

A chat message is short, and opens with whatever its writer says first: "Glad to hear it!",
"Wanna see my moves?", "Nah, I haven't", "Nature's amazing", "Awww!". The model reads the
capital of such a word as a name's, and one message alone cannot tell "Nature's amazing" from
"Italy's amazing". Its note can: the conversation writes the word in lower case elsewhere
("I love being in nature") and never capitalises it inside a sentence, where a capital is the
word's own ("we flew to Italy"). So a one-word guess is dropped when:

- its note writes it in lower case as a word of prose and never capitalised after a lower-case
  word or a comma (`NoteWords.common`): a common word, whatever kind the model guessed. A name
  that is also a word stays a name when the note writes it so once ("Will" in "thanks, Will"
  beside "I will"); a work's title is often a common word and keeps its hit when it is written
  between quotes or emphasis marks ('"Perfect" by Ed Sheeran', "*Dune*", `quoted`);
- it is a word of speech (`SPOKEN_WORDS`, a small closed list, the last resort where the note
  says nothing): an interjection, a greeting, thanks or a cheer ("Nah", "Yay", "Haha", "Omg",
  "Thanks", "Congrats"), a spoken contraction ("Wanna", "Lemme", "Gotta"), or an adjective a
  reply opens with, its subject dropped ("Glad to hear it", "Sorry about that"). A guess of
  several words led by one is the rest ("Glad Max is home": Max);
- it draws out a letter three times or more (`drawn_out`: "Awww", "Sooo", "Yesss"), as no
  name is written;
- it is a verb with its final g dropped for an apostrophe ("Startin' my biz", `dropped_g`).

A work's title may be a word of speech too ("Hello", "Sorry", "Thanks"): a work's guess keeps it. A
name the memory knows (an author, an entity note) is found by the registry, before the model,
and is never dropped here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

SPOKEN_WORDS: Final = frozenset(
    # interjections and sounds
    "ah aha ahh argh aw aww eh gee gosh haha hahaha hehe hmm hmmm huh lol lmao meh oh ooh oops ouch "
    "phew ugh uh um umm whoa woah wow yikes yay woohoo hooray omg "
    # greetings, thanks, cheers, assent and dissent
    "hi hey hiya hello bye goodbye thanks thx congrats congratulations bummer okay ok yeah yep yup nah nope "
    # spoken contractions
    "wanna gonna gotta lemme gimme dunno kinda sorta "
    # adjectives a reply opens with, its subject dropped; a season's greeting ("Merry Christmas")
    "glad sorry merry".split()
)
"""Words of speech that open a message and are never a name alone (see the module)."""

LEADING_ADVERBS: Final = frozenset(
    # when
    "later tonight today yesterday tomorrow then meanwhile afterwards afterward earlier now soon "
    "recently lately eventually finally once again also "
    # how the writer takes it
    "luckily sadly apparently unfortunately fortunately hopefully honestly actually basically anyway "
    "maybe perhaps suddenly".split()
)
"""Adverbs that open a sentence before its subject, which a model reads as the first word of the
name after them ("Later Jean-Luc Picard called" as an organization): never part of a name."""
CONTACT_VERBS: Final = frozenset(
    "ask tell call ping email e-mail text remind message invite thank meet cc dm phone ring contact "
    "congratulate pay send wish".split()
)
"""Verbs of a to-do line that open it before the person it is about ("Tell Luca to pack light",
"Ping Sarah about the invoice", "Email Jonathan the slides"), which a model reads as the first
word of the name after them: never part of a name there."""
_LEADING_WORD = re.compile(r"([A-Z][a-z]+(?:-[a-z]+)?),?[ \t]+(?=[A-Z])")
_NAME_WORD = re.compile(r"[A-Z][^\W\d_]*(?:[-'’][A-Z]?[^\W\d_]+)*")

# a word of prose: not inside an address, a path or a file name ("hi@example.com", "audio/basic")
_PROSE_WORD = re.compile(r"(?<![\w.@/-])[^\W\d_]+(?![\w@-]|\.\w)")
# a capitalised word after a lower-case word or a comma: the capital is the word's own
_NAMED_INSIDE = re.compile(r"(?<=[a-z,;:] )[^\W\d_]+(?![\w-])")
_DRAWN_OUT = re.compile(r"([^\W\d_])\1{2,}", re.IGNORECASE)
_DROPPED_G = re.compile(r"['’](?![^\W_])")
_QUOTE_MARKS = frozenset("\"“”'‘’*_")
_LEADING_SPOKEN = re.compile(r"([^\W\d_]+),?[ \t]+(?=[^\W\d_])")


@dataclass(frozen=True, slots=True)
class NoteWords:
    """What a note's texts say of its words: those written in lower case as prose (`lower`) and
    those capitalised inside a sentence (`named`)."""

    lower: frozenset[str]
    named: frozenset[str]

    @classmethod
    def of(cls, texts: Iterable[str]) -> NoteWords:
        lower: set[str] = set()
        named: set[str] = set()
        for text in texts:
            lower.update(w for w in _PROSE_WORD.findall(text) if w.islower())
            named.update(w for w in _NAMED_INSIDE.findall(text) if w[0].isupper())
        return cls(frozenset(lower), frozenset(named))

    def common(self, surface: str) -> bool:
        """Whether the one-word hit `surface` is a common word of the note (see the module)."""
        return (
            surface.isalpha()
            and surface[0].isupper()
            and surface[1:].islower()
            and surface.lower() in self.lower
            and surface not in self.named
        )


def spoken(word: str) -> bool:
    """Whether `word` alone is a word of speech (`SPOKEN_WORDS`, "Awww": see the module)."""
    return word.lower() in SPOKEN_WORDS or drawn_out(word)


def drawn_out(word: str) -> bool:
    """A word with one letter three times or more in a row: "Awww", "Sooo"."""
    return _DRAWN_OUT.search(word) is not None


def dropped_g(text: str, surface: str, end: int) -> bool:
    """Whether the one-word hit `surface` ending at `end` of `text` is a verb whose final g is
    written as an apostrophe ("Startin' my biz"); "Berlin's" is a possessive."""
    return surface.isalpha() and surface.endswith("in") and _DROPPED_G.match(text, end) is not None


def quoted(text: str, start: int, end: int) -> bool:
    """Whether the hit at `start`–`end` of `text` is written between quotes or emphasis marks, as
    a title is ('"Perfect" by Ed Sheeran', "*Dune*")."""
    return text[start - 1 : start] in _QUOTE_MARKS and text[end : end + 1] in _QUOTE_MARKS


def after_leading_adverb(text: str, start: int, end: int) -> int:
    """Where a hit of several words at `start`–`end` begins once a capitalised adverb that opens it
    and its sentence is left out ("Later Jean-Luc Picard", "Tonight, Root Shaw"): `start` when
    none does. Inside a sentence the word is the name's own ("we listened to Today FM", "Now TV")."""
    return _after_lead(text, start, end, LEADING_ADVERBS)


def after_leading_verb(text: str, start: int, end: int) -> int:
    """Where a hit of several words at `start`–`end` begins once a to-do's verb that opens it and
    its sentence is left out ("Tell Luca", "Remind Maya", `CONTACT_VERBS`): `start` when none
    does. Inside a sentence the word is the name's own ("the Ask Jeeves site")."""
    return _after_lead(text, start, end, CONTACT_VERBS)


def _after_lead(text: str, start: int, end: int, words: frozenset[str]) -> int:
    """Where the hit at `start`–`end` begins once one of `words`, capitalised, opening it and its
    sentence before another capitalised word, is left out: `start` when none does."""
    lead = _LEADING_WORD.match(text, start, end)
    if lead is None or lead.group(1).lower() not in words or not _opens_sentence(text, start):
        return start
    return lead.end()


def _opens_sentence(text: str, at: int) -> bool:
    """Whether `at` is where a sentence, a line or a quotation begins (after its spaces)."""
    before = text[:at].rstrip(" \t")
    return not before or before[-1] in _SENTENCE_OPENERS


_SENTENCE_OPENERS = frozenset(".!?…\n:;\"“‘'(*>-–—")


def person_shaped(surface: str) -> bool:
    """Whether a name is written as a person's is, two or three capitalised words ("Jean-Luc
    Picard", "Root Shaw"): what an organization's guess led by an adverb was (`after_leading_adverb`)."""
    parts = surface.split()
    return 2 <= len(parts) <= 3 and all(_NAME_WORD.fullmatch(p) for p in parts)


def after_spoken_lead(text: str, start: int, end: int) -> int:
    """Where a hit of several words at `start`–`end` begins once a word of speech that leads it is
    left out ("Glad Max", "Thanks, Emil"): `start` when none does."""
    lead = _LEADING_SPOKEN.match(text, start, end)
    return lead.end() if lead is not None and lead.group(1).lower() in SPOKEN_WORDS else start


PLACE_PREPOSITIONS: Final = frozenset(
    "to in from at near into onto via around across through toward towards outside inside within "
    "between".split()
)
"""Prepositions of motion or location: a one-word name after them the model reads as a place
("I flew to Austin", "a week in Paris") is that place, not a person whose name it starts."""
TO_A_PERSON: Final = frozenset(
    "talk talked talking talks spoke speak speaking said say says wrote write writing sent send "
    "gave give giving reply replied replying listen listened introduced married engaged next".split()
)
"""Verbs before "to" that make what follows a person ("talked to Jordan", "sent it to Priya")."""
_WORD_BEFORE = re.compile(r"([^\W\d_]+)[ \t]+$")


def after_place_preposition(text: str, start: int, end: int) -> bool:
    """Whether the one-word hit at `start`–`end` of `text` follows a preposition of motion or
    location (`PLACE_PREPOSITIONS`) and is no possessive ("to Austin", not "to Austin's place",
    "talked to Austin", "with Austin"): where a place the model saw stays a place."""
    if text[end : end + 2] in ("'s", "’s"):
        return False
    before = _WORD_BEFORE.search(text, max(0, start - 40), start)
    if before is None or before.group(1).lower() not in PLACE_PREPOSITIONS:
        return False
    if before.group(1).lower() != "to":
        return True
    verb = _WORD_BEFORE.search(text, max(0, before.start() - 40), before.start())
    return verb is None or verb.group(1).lower() not in TO_A_PERSON
