"""What the shape of a NER hit says before any context does: names the model cannot have meant,
and a kinship title that belongs to the name after it.

No name (`no_name`):

- a hit across a table's cells ("Hosting | Hetzner"): the model read two cells as one name;
- a hit with no upper-case letter ("ready-for-sale"): a name is written with a capital;
- a hit with a colon inside, unless the model reads it as a work's title ("Alien: Covenant"):
  header fields in a row ("Content-Transfer-Encoding: Mime-Version");
- a compound whose later parts are lower-case words ("Ready-for-sale", "Follow-up"); a name's
  parts are capitalised ("Jean-Luc", "Rolls-Royce"); so is a person's last word ("Walked 2 km"
  is a sentence's start; an event may end in lower case, "Launch sync");
- a code: more digits than letters ("T-1311926934"), or a word of 8 letters and digits or more
  that mixes both ("wgo268xc0ktfylj", a mail's key or message id);
- a weekday, alone or before a date ("Fri", "Sat 2 Jul"): a date the model misread;
- a word that names a part of a document, alone ("# Title", "# Link", "Sentence containing
  foo"): a closed list (`DOCUMENT_WORDS`), as the weekdays are;
- a word of letters in random case ("YAlzoXESudhug", `_scrambled`): a generated token;
- markup or a formula: a character no name is written with inside it (`_ { } [ ] < > = \\ ^ ~ ?
  *`: "U_{GEE}(\\beta", "Linux x86_64", "dir1](dir1/Note.md", "you?I");
- a path: parts joined by a slash or a backslash ("dir1/Note", "src/App", "HTTP/1.0"), unless
  every part is a word of capitals alone ("AC/DC");
- a file name: a person or a place with a dotted lower-case ending ("Notes.md"), or a name of
  capitals alone with one ("README.md", "LICENSE.txt"); an organization, a product or a work
  may be named so ("Booking.com", "Node.js");
- a person or a place that is an acronym alone, of any length ("TODO", "SMTP" read as someone):
  people and places are not written in capitals alone (an organization or a work may be:
  "NASA", "LOTR"; for protocols and formats see `capitals._common_word`); nor does a person's
  name open with an acronym of three letters or more ("DNS Error: Domain name not found", "HTTP
  Server"; initials may: "JR Smith").

No person's name of a message's author (`generated_name`): a chat export's randomised or
placeholder name, one word of 6 letters and digits or more with a letter after a digit
("WgO268Xc0KtFylJ", "4hMU9nZIB"), one letter three times or more ("xxx", "ZZZZ"), or a word
of 6 letters or more whose case turns at least three times after its first letter, capitals in a
row after a small letter among them ("YAlzoXESudhug", "kPVTqHcBWssWFAU"); nor a placeholder: one
letter alone ("A <hello@example.com>") or words ending in a number of their own ("Author 1", "User
12", `_PLACEHOLDER`). A name and a number written as one word ("john1985", "R2D2"), a name of two
letters ("Aa", "Al", "Bo") and names with capitals inside ("McDonald", "DeLaCruz", "PostgreSQL")
stay someone's.

Kinship titles (`with_title`): the model keeps the title of "Auntie Lin", "Uncle Bob", "Grandma
Rose" on some occasions and not on others ("Auntie Lin" read as "Lin", "Auntie" left over). A
person's hit right after a capitalised title (`ids.KINSHIP_TITLES`, a closed list) on the same
line takes the title in; the id leaves it out as it leaves out "Dr." (`ids.without_title`), so
"Auntie Lin", "Aunt Lin" and "Lin" are one person, `person:lin`, known by the surfaces written.
"""

from __future__ import annotations

import re
from typing import Final

from vaultmind import calendar_names
from vaultmind.entities.ids import KINSHIP_TITLES

WEEKDAYS: Final = frozenset((*calendar_names.WEEKDAYS, *"mon tue tues wed thu thur thurs fri sat sun".split()))
"""The weekdays' names and their abbreviations, in lower case."""
MONTHS: Final = frozenset((*calendar_names.MONTHS, *calendar_names.MONTH_ABBREVIATIONS))
"""The months' names and their abbreviations, in lower case."""
_TITLE_BEFORE = re.compile(
    r"(?<![\w'’-])(" + "|".join(sorted((t.capitalize() for t in KINSHIP_TITLES), key=len, reverse=True)) + r")[ \t]+$"
)
_WORDS = re.compile(r"[^\W_]+")
_MARKUP = re.compile(r"[_{}\[\]<>=\\^~?*]")
_PATH = re.compile(r"[^\s/\\]+(?:[/\\][^\s/\\]+)+")
_CAPITALS = re.compile(r"[A-Z]+")
_FILE_NAME = re.compile(r"(?P<stem>[^\s.]+)\.[a-z][a-z0-9]{0,4}")
_MIXED_CODE = re.compile(r"(?=[^\W_]*\d)(?=[^\W_]*[^\W\d_])[^\W_]{8,}")
_GENERATED = re.compile(r"(?=[^\W_]*\d[^\W\d_])[^\W_]{6,}|([^\W\d_])\1{2,}", re.IGNORECASE)
# letters whose case turns at least three times after the first, with capitals in a row after a
# small letter: "YAlzoXESudhug", "kPVTqHcBWssWFAU"; "McDonald", "PostgreSQL", "OpenVPN" are names
# a placeholder for an author: one letter ("A", "J."), or words and a number after them ("Author 1")
_PLACEHOLDER = re.compile(r"[^\W\d_]\.?|[^\W\d_][^\n]*[ \t]\d+")
_CASE_RUN = re.compile(r"[A-Z]+|[a-z]+")
_CAPITALS_INSIDE = re.compile(r"[a-z][A-Z]{2}")
DOCUMENT_WORDS: Final = frozenset(
    "title subtitle heading subheading link links note notes readme index contents summary overview "
    "introduction appendix template draft chapter section paragraph sentence caption footnote header "
    "footer attachment untitled".split()
)
"""Words that name a part of a document, which a heading or a sample writes alone ("# Title",
"# Link"): no name of anything when they are a hit's only word."""


def generated_name(name: str) -> bool:
    """Whether an author's name is a generated token or a placeholder, not a person's (see the module)."""
    return _GENERATED.fullmatch(name) is not None or _PLACEHOLDER.fullmatch(name) is not None or _scrambled(name)


def _scrambled(word: str) -> bool:
    """A word of letters alone in random case (see `_CASE_RUN`): a generated token."""
    return (
        len(word) >= 6
        and word.isascii()
        and word.isalpha()
        and len(_CASE_RUN.findall(word[1:])) >= 4
        and _CAPITALS_INSIDE.search(word) is not None
    )


def no_name(surface: str, kind: str) -> bool:
    """Whether a hit's surface cannot be a name of `kind`, whatever its context (see the module)."""
    if "|" in surface or not any(ch.isupper() for ch in surface):
        return True
    if ":" in surface and kind != "work":
        return True  # "Content-Transfer-Encoding: Mime-Version", "Re: Budget"; a title may: "Alien: Covenant"
    words = _WORDS.findall(surface)
    if not words:
        return True
    if words[0].lower() in WEEKDAYS and (len(words) == 1 or words[1][0].isdigit()):
        return True
    if len(words) == 1 and (words[0].lower() in DOCUMENT_WORDS or _scrambled(words[0])):
        return True
    if kind in ("person", "place") and _acronym(surface):
        return True
    if _MARKUP.search(surface) or _path(surface) or _file_name(surface, kind):
        return True
    digits = sum(ch.isdigit() for ch in surface)
    if digits > sum(ch.isalpha() for ch in surface) or any(_MIXED_CODE.fullmatch(w) for w in words):
        return True
    spaced = surface.split()
    if kind == "person" and len(spaced) > 1 and spaced[-1].isalpha() and spaced[-1].islower():
        return True
    if kind == "person" and len(spaced) > 1 and len(spaced[0]) > 2 and _acronym(spaced[0]):
        return True  # "DNS Error", "HTTP Server": a name does not open with an acronym ("JR Smith" may)
    return any(_lower_compound(part) for part in spaced)


def _acronym(surface: str) -> bool:
    """One word of capitals alone ("HTTP", "TODO"); "R2D2" has digits and is a name."""
    return surface.isupper() and surface.isalpha()


def _path(surface: str) -> bool:
    """Parts joined by slashes ("dir1/Note", "HTTP/1.0"), not "AC/DC"."""
    return any(
        _PATH.fullmatch(word) and not all(_CAPITALS.fullmatch(part) for part in re.split(r"[/\\]", word))
        for word in surface.split()
    )


def _file_name(surface: str, kind: str) -> bool:
    """A last word with a dotted lower-case ending: for a person or a place always ("Notes.md"),
    else when the name before the dot is of capitals alone ("README.md")."""
    found = _FILE_NAME.fullmatch(surface.split()[-1])
    return found is not None and (kind in ("person", "place") or _CAPITALS.fullmatch(found["stem"]) is not None)


def _lower_compound(word: str) -> bool:
    parts = word.split("-")
    return len(parts) > 1 and any(p.isalpha() and p.islower() for p in parts[1:])


def with_title(text: str, start: int) -> int:
    """Where a person's hit starting at `start` begins with the kinship title right before it
    ("Auntie " of "Auntie Lin"), or `start` when there is none."""
    found = _TITLE_BEFORE.search(text, max(0, start - 16), start)
    return start if found is None else found.start()
