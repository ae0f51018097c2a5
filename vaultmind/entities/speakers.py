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
- `opens_before_pronoun`: a person's one-word guess that opens a sentence before a pronoun ("Glad
  you made it!", "Catch you later") is a word of the sentence: a name is followed by its verb
  ("Dana called"), "Will you …?" asks. A speaker called so ("Mel you're the best") is settled first.
"""

from __future__ import annotations

import re
from typing import Final

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
