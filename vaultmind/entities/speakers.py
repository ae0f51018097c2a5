"""How the speakers of a conversation write to each other, which the small NER models misread.

A message calls the others by a short form of their name ("Mel" for Melissa, "Luci" for
Lucinda), opens with a greeting or a cheer before a name ("Congrats Jolene!", "Yep John, …",
read as a person "Congrats Jolene"), and cheers with a capitalised word ("Woohoo, thanks Emil!",
"Awesome!", read as an organization). Given the speakers of the conversation (its authors, by
the first word of their name: `resolve.py`), a guess of the model is settled here:

- `short_form`: a one-word guess that starts the first name of exactly one speaker, and is the
  first name of none, is that speaker (at least `SHORT_FORM_MIN_CHARS` letters); "Jo" where John
  and Jolene both write stays "Jo";
- `addressed`: a guess of several words that opens a sentence, ends in a speaker's first name and
  is followed by a comma, a full stop, "!" or "?" (or ends the text) is that speaker called by a
  greeting ("Bye Lucinda!", "Yep John, we went"); "Elton John sang" stays Elton John;
- `exclamation`: an organization's one-word guess that opens a sentence ending in "!" and is
  followed by "!" or a comma ("Woohoo!", "Awesome, Mel!") is a cheer, no name. A speaker's own
  name there ("Maria, that's great!", read as an organization) is the speaker: that is settled first;
- `first_name_spans`: a speaker's first name written in a message, capitalised as she writes it
  and not followed by another capitalised word ("Thanks Luca", "Hey Maya, …", "Sean is coming"),
  is that speaker even where the model tags nothing (a short line, a name at its end) — when no
  other speaker has that first name ("Jo" for two Jo's stays unresolved); a mail's recipients
  count as its speakers. A name the message calls its reader by ("Thanks Luca", "Hey Maya, …",
  "Sean, can you …", "Great, Maya!": `vocative`) is left to the model: the message is written
  to her, not about her, and counting it makes a question about her find what the others told
  her. Only a name the message speaks of, as its place in the sentence says, counts
  (`spoken_of`: "Luca's place", "Sean is coming", "to Sean"). "Will you …?" (a speaker named
  Will) is a question, not a name (`opens_before_pronoun`);
- `opens_before_pronoun`: a person's one-word guess that opens a sentence before a pronoun ("Glad
  you made it!", "Catch you later") is a word of the sentence: a name is followed by its verb
  ("Dana called"), "Will you …?" asks. A speaker called so ("Mel you're the best") is settled first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Final

from vaultmind.entities.common_words import SPOKEN_WORDS
from vaultmind.entities.extract import Span, in_ranges

SHORT_FORM_MIN_CHARS: Final = 2
"""The shortest short form of a speaker's first name read as that speaker ("Jo" for Jolene)."""

_CLOSING: Final = "\"'”’)]*_"  # what may close a sentence after its full stop
_AFTER_CALL: Final = re.compile(r"[ \t]*(?:[,.!?…]|\Z)")
_CHEER_AFTER: Final = re.compile(r"[ \t]*(?:!|,)")
_SENTENCE_END: Final = re.compile(r"[.!?…]")
_PRONOUN_AFTER: Final = re.compile(
    r"[ \t]+(?:you|you[’']?(?:re|ve|ll|d)|y[’']?all|it|it[’']?s|that|everyone|everybody|we|they)(?![\w’'])"
)


def short_form(key: str, speakers: dict[str, str]) -> str | None:
    """The speaker whose first name the normalized one-word guess `key` shortens, if exactly one
    speaker's does and none is called `key` (see the module)."""
    if len(key) < SHORT_FORM_MIN_CHARS or key in speakers:
        return None
    found = {ident for first, ident in speakers.items() if first.startswith(key)}
    return found.pop() if len(found) == 1 else None


def addressed(text: str, start: int, end: int, key: str, speakers: dict[str, str]) -> str | None:
    """The speaker a guess of several words (normalized `key`, at `start`–`end` of `text`) calls
    by a greeting before her first name, else None (see the module)."""
    last = key.rsplit(" ", 1)[-1]
    if " " not in key or last not in speakers or not opens_sentence(text, start):
        return None
    return speakers[last] if _AFTER_CALL.match(text, end) else None


def exclamation(text: str, start: int, end: int) -> bool:
    """Whether the one-word hit at `start`–`end` of `text` is a cheer opening an exclamation
    (see the module)."""
    if not opens_sentence(text, start) or _CHEER_AFTER.match(text, end) is None:
        return False
    close = _SENTENCE_END.search(text, end)
    return close is not None and close.group(0) == "!"


def opens_before_pronoun(text: str, start: int, end: int) -> bool:
    """Whether the one-word hit at `start`–`end` of `text` opens a sentence before a pronoun
    (see the module)."""
    return opens_sentence(text, start) and _PRONOUN_AFTER.match(text, end) is not None


def opens_sentence(text: str, start: int) -> bool:
    """Whether `start` opens a sentence of `text`: its start, a line's, or after a full stop,
    "!" or "?"."""
    before = text[:start].rstrip(" \t")
    if not before or before.endswith("\n"):
        return True
    return before.rstrip(_CLOSING)[-1:] in (".", "!", "?", "…")


_CAPITALISED_AFTER: Final = re.compile(r"[ \t]+[A-Z]")


def first_name_spans(text: str, firsts: Mapping[str, str], code: list[tuple[int, int]]) -> list[Span]:
    """Spans of the speakers' first names in `text` (`firsts`: a first name as its speaker writes
    it → her id, only names one speaker has), outside `code` (see the module)."""
    if not firsts:
        return []
    spans = []
    for match in _first_names(tuple(sorted(firsts))).finditer(text):
        start, end = match.span()
        if in_ranges(start, end, code) or _CAPITALISED_AFTER.match(text, end) or opens_before_pronoun(text, start, end):
            continue
        if vocative(text, start, end) or not spoken_of(text, start, end):
            continue
        spans.append(Span(start, end, match.group(0), "person", "speaker", firsts[match.group(0)]))
    return spans


@lru_cache(maxsize=256)
def _first_names(names: tuple[str, ...]) -> re.Pattern[str]:
    """One word of `names`, whole: not inside a word, an address, a handle or a hyphenated name."""
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w@.'’-])(?:{alternatives})(?![\w@-]|['’]\w(?<!['’]s))")


_GREETINGS: Final = frozenset(
    "hi hey hiya hello bye goodbye thanks thx thank you congrats congratulations dear morning evening night "
    "yo ok okay yeah yep yes no nope sorry cheers welcome love miss".split()
)
_LAST_WORD: Final = re.compile(r"([^\W\d_]+)[ \t]*,?[ \t]*$")
_CALL_AFTER: Final = re.compile(r"[ \t]*[,!?]")
_CALL_ENDS: Final = re.compile(r"[ \t]*(?:[.!?…]|\Z)")
_CALLED_OUT: Final = re.compile(r"[ \t]*!")


def vocative(text: str, start: int, end: int) -> bool:
    """Whether the name at `start`–`end` of `text` calls the message's reader: after a greeting,
    thanks or another word of speech ("Hey Maya", "Thanks so much Luca", "Woohoo Melanie!"),
    opening a sentence or after a comma before a comma, "!" or "?" ("Sean, can you …", "Wow,
    Caroline, that's great") or a pronoun ("No doubt, Jon you've got this"), after a comma at a
    sentence's end ("Great, Maya."), or before "!" ("That is really great Jon!")."""
    before = text[max(0, start - 40) : start]
    last = _LAST_WORD.search(before)
    if last is not None and (last.group(1).lower() in _GREETINGS or last.group(1).lower() in SPOKEN_WORDS):
        return True
    if _CALLED_OUT.match(text, end):
        return True  # "That is really great Jon!"
    after_comma = before.rstrip(" \t").endswith(",")
    if (after_comma or opens_sentence(text, start)) and (_CALL_AFTER.match(text, end) or _PRONOUN_AFTER.match(text, end)):
        return True  # "Sean, can you …", "Wow, Caroline, that's great", "No doubt, Jon you've got this"
    return after_comma and _CALL_ENDS.match(text, end) is not None


_PREPOSITIONS: Final = frozenset(
    "to with for at from and or about of by without like than tell told ask asked call called invite "
    "invited meet met see saw visit visited thank thanked".split()
)
_SPOKEN_OF_AFTER: Final = re.compile(r"['’]s\b|[ \t]+[a-z]")


def spoken_of(text: str, start: int, end: int) -> bool:
    """Whether the name at `start`–`end` of `text` is someone the message speaks of, as its
    place in the sentence says: owning something ("Luca's place"), before its verb ("Sean is
    coming", "Maya already booked") or after a preposition or a verb of meeting and telling
    ("Happy birthday to Sean", "dinner with Maya"). A name alone before a full stop or a comma
    ("same here Caroline.", "Got it Nate, …") is the reader called."""
    if _SPOKEN_OF_AFTER.match(text, end):
        return True
    last = _LAST_WORD.search(text[max(0, start - 40) : start])
    return last is not None and not text[last.end(1) : start].strip(" \t") and last.group(1).lower() in _PREPOSITIONS
