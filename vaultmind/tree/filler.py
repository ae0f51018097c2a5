"""What a summary leaves out however salient its words: sentences no one needs alone.

A greeting, a thanks or a sign-off ("Thanks, Mel!") is no sentence at all; a short fragment
leaning on the sentence before it ("And in my free time."), a bare assent ("Sure, fine.", "Wow, Mel, that sounds
awesome!") or a greeting that only asks after someone ("Hey John, long time no chat!") is a
sentence the summarizer never picks.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from itertools import pairwise

from vaultmind.entities.speakers import short_form

# A greeting, a thanks or a sign-off with at most three words after it ("Thanks, Mel!")
_GREETING_RE = re.compile(
    r"^(?:hi|hello|hey|dear|thanks|thank you|many thanks|best|cheers|regards|kind regards|best regards)\b"
    r"[,!.]?(?:[ \t]+[^\s?]+){0,3}[ \t]*[,!.]?$",
    re.IGNORECASE,
)
# A fragment that leans on the sentence before it: it opens with a conjunction or a preposition
# and is shorter than LEANING_FRAGMENT_WORDS with no fact in it ("And in my free time.")
_LEANING_RE = re.compile(
    r"^(?:and|but|or|nor|so|yet|plus|by|in|on|at|with|without|for|from|to|of|about|after|before"
    r"|like|as|because|while|since|until|through|into|over|under)\b",
    re.IGNORECASE,
)
LEANING_FRAGMENT_WORDS = 7
# A fragment has no clause of its own: a heuristic, not a parser — a subject pronoun before a
# word that is no function word ("I quit", "we just called"), or a capitalised name before a
# verb-like word (a past tense in -ed, a common auxiliary or irregular verb: "Dana called",
# "Mel is") makes a sentence ("After lunch I called Dana."); "With Priya as the new lead." has none
_SUBJECT_PRONOUNS = frozenset("i we you he she they it".split())
_FUNCTION_WORDS = frozenset(
    "a an the and but or nor so yet plus by in on at with without for from to of about after before"
    " like as because while since until through into over under my our your his her their its me us"
    " him them this that these those".split()
)
_COMMON_VERBS = frozenset(
    "am is are was were be been has have had do does did will would can could shall should may might"
    " must says said goes went came got gets made makes took takes saw told gave found left quit paid"
    " bought sent met ran kept put thought knew felt".split()
)
# A sentence of these words only assents ("Sure, fine.", "Sounds good to me."); a refusal ("No.",
# "Nope.") is news and no assent
_ASSENT_WORDS = frozenset(
    "ok okay k sure fine yes yeah yep yup great cool good nice right alright perfect"
    " awesome totally definitely absolutely exactly indeed true lol haha sounds me too to for you"
    " got it will do of course agreed same thanks thank wow oh ah that that's it's is so really amazing"
    " wonderful lovely fantastic excellent incredible super sweet glad".split()
)
# A salutation followed only by these words (and assent) greets and asks after someone ("Hey John,
# long time no chat!", "Hi, how's it going?", "Hey Tim, how's it going there?"); "Hey, the hall is
# booked." is news
_SALUTATIONS = frozenset("hi hey hello hiya heya yo".split())
_PHATIC_WORDS = frozenset(
    "long time no see talk talking talked chat chatting chatted speak speaking spoke with how how's"
    " what's up going doing been it you ya again to see hear from catch catching there all everyone"
    " guys".split()
)
_WORD_EDGES = ".,!?…;:\"'“”‘’()*_-"


def is_greeting(sentence: str) -> bool:
    """A greeting, a thanks or a sign-off: no sentence at all."""
    return _GREETING_RE.match(sentence) is not None


def says_nothing_alone(text: str, facts: int, people: Collection[str] = ()) -> bool:
    """Filler however salient its words: a short fragment leaning on the sentence before it
    ("And in my free time.", "By telling our stories.") with no fact in it (`facts`: its dates,
    numbers, decisions, known names), or a sentence that only assents ("Sure, fine.") or greets
    ("Hey John, long time no chat!"), to someone of the conversation it addresses or not ("That
    sounds great, Lucinda." when Lucinda is one of `people`, the lowercased words of its
    speakers' names; "Wow, Mel, …" to Melissa, by a short form of one speaker's name)."""
    words = [w for w in (w.strip(_WORD_EDGES).lower() for w in text.split()) if w]
    said = _without_vocatives(text.split(), people)
    if said and all(w in _ASSENT_WORDS for w in said):
        return True
    if said and said[0] in _SALUTATIONS and all(w in _ASSENT_WORDS or w in _PHATIC_WORDS for w in said[1:]):
        return True
    return (
        len(words) < LEANING_FRAGMENT_WORDS
        and not facts
        and bool(_LEANING_RE.match(text))
        and not _has_clause(text.split())
    )


def _without_vocatives(tokens: list[str], people: Collection[str]) -> list[str]:
    """The words of a sentence, lowercased, without the names it addresses someone by: one of
    `people`, or a short form of one of them ("Mel" for Melissa: `speakers.short_form`), set off
    by a comma ("Wow, Mel, that sounds awesome!", "That sounds great, Lucinda.",
    "Wow Maria, that's awesome!"); "Mel booked it." addresses no one, and "Yes, Friday.", "Sure,
    Acme." answer with a word that names no one of the conversation."""
    out = []
    for at, token in enumerate(tokens):
        word = token.strip(_WORD_EDGES)
        if not word:
            continue
        set_off = token.endswith(",") or (at > 0 and tokens[at - 1].endswith(","))
        lowered = word.lower()
        if set_off and word[:1].isupper() and (lowered in people or short_form(lowered, _by_itself(people))):
            continue
        out.append(word.lower())
    return out


def _by_itself(people: Collection[str]) -> dict[str, str]:
    return {word: word for word in people}


def _has_clause(tokens: list[str]) -> bool:
    """A subject and a verb-like word after it, past the first word (see `_SUBJECT_PRONOUNS`)."""
    bare = [t.strip(_WORD_EDGES) for t in tokens]
    for subject, verb in pairwise(bare[1:]):
        word = verb.lower()
        if subject.lower() in _SUBJECT_PRONOUNS and word and word not in _FUNCTION_WORDS:
            return True
        if subject[:1].isupper() and (word in _COMMON_VERBS or (len(word) > 3 and word.endswith("ed"))):
            return True
    return False
