"""Names in a summary that its children never mention: the "no new entities" check.

A name is a run of capitalised words inside a sentence (a capitalised word that opens a
sentence counts only when another capitalised word follows it and it is not a common word:
"Dana Whitfield said…" is a name, "Revenue grew…" and "The Tidepool…" start with none; alone,
it counts when a verb that takes a person follows it: "Marcus will call…", "Marcus said…"),
plus what the entity extractor's regexes find (e-mail addresses, handles, URLs, hashtags,
phone numbers). A possessive is its name's ("Alice Chen's deposit" names Alice Chen). A name is
known when its normalised words appear, in order, in the children's text, authors, titles or
entity names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from vaultmind.calendar_names import MONTHS, WEEKDAYS
from vaultmind.entities.extract import regex_spans
from vaultmind.entities.ids import normalize
from vaultmind.index.lexical import STOP_WORDS
from vaultmind.tree.summarize import ChildText

# The words before a name that end in a full stop, which ends no sentence there ("Dr. Rossi",
# "Acme Inc."; with an initial's: "Foo B. Baz"): `fallback` and `llm` read sentences past them
NAME_ABBREVIATIONS = (
    "Dr", "Mr", "Mrs", "Ms", "Mx", "Prof", "Rev", "Fr", "Sgt", "Capt", "Col", "Gen", "Lt", "Hon", "St", "Jr", "Sr",
    "Inc", "Ltd", "Co", "Corp", "Bros", "LLC", "PLC",
)  # fmt: skip
_WORD = r"[A-ZÀ-ÖØ-Þ][\w'’-]*[\w]|[A-ZÀ-ÖØ-Þ]"
_NAME_RE = re.compile(rf"(?<![\w@#/.-])(?:{_WORD})(?:[ \t]+(?:{_WORD}))*")
_OPENERS = frozenset('.!?…:;\n"“(*-')
_OPENING_WORDS = frozenset(
    """after although before both during each every first finally however last later meanwhile most next
    once overall since some still thus together until yet""".split()
)
_POSSESSIVE_RE = re.compile(r"(?:['’]s|(?<=s)['’])$")
_NEXT_WORD_RE = re.compile(r"[ \t]+([a-z]+)")
_TAKES_A_PERSON = frozenset(  # a verb after a sentence's one capitalised word: it is someone
    """will would can could should must shall might may said says asked asks told tells agreed
    agrees replied replies wrote writes called calls emailed phoned promised promises suggested
    suggests wants wanted thinks thought""".split()
)
_IGNORE = frozenset(
    (
        *"""i i'm i've i'll i'd ok okay yes no hi hey hello thanks thank today tomorrow yesterday
        q1 q2 q3 q4 am pm utc tl dr fyi asap eta""".split(),
        *WEEKDAYS,
        *MONTHS,
    )
)


def name_candidates(text: str) -> list[str]:
    """Capitalised names (and extractor hits) in `text`, in order, without repeats."""
    out: dict[str, None] = {}
    for match in _NAME_RE.finditer(text):
        words = match.group(0).split()
        words[-1] = _POSSESSIVE_RE.sub("", words[-1])  # "Alice Chen's deposit"
        if _at_sentence_start(text, match.start()) and (
            _common(words[0]) or (len(words) == 1 and not _takes_a_person(text, match.end()))
        ):
            words = words[1:]  # a sentence's first word is capitalised anyway ("Revenue grew")
        while words and normalize(words[0]) in _IGNORE:
            words = words[1:]
        if not words:
            continue
        name = " ".join(words)
        if all(normalize(w) in _IGNORE for w in words):
            continue
        out.setdefault(name, None)
    for span in _extractor_spans(text):
        out.setdefault(span, None)
    return list(out)


def _common(word: str) -> bool:
    norm = normalize(word)
    return norm in STOP_WORDS or norm in _IGNORE or norm in _OPENING_WORDS


def _takes_a_person(text: str, end: int) -> bool:
    after = _NEXT_WORD_RE.match(text, end)
    return after is not None and after.group(1) in _TAKES_A_PERSON


def _at_sentence_start(text: str, pos: int) -> bool:
    i = pos - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return i < 0 or text[i] in _OPENERS


def _extractor_spans(text: str) -> Iterable[str]:
    return [s.surface for s in regex_spans(text) if s.kind != "link"]


def known_text(children: Sequence[ChildText]) -> str:
    """Everything the children say, normalised and padded, for `unknown_names`."""
    parts: list[str] = []
    for child in children:
        parts.append(child.text)
        if child.author:
            parts.append(child.author)
        if child.title:
            parts.append(child.title)
        parts.extend(child.entities)
    return " " + " ".join(normalize(p) for p in parts if p) + " "


def unknown_names(summary: str, children: Sequence[ChildText], known: str | None = None) -> list[str]:
    """Names in `summary` that none of `children` mentions (empty: the subset check passes)."""
    haystack = known if known is not None else known_text(children)
    missing: list[str] = []
    for name in name_candidates(summary):
        norm = normalize(name)
        if norm and f" {norm} " not in haystack:
            missing.append(name)
    return missing


def mentions(text_norm: str, names: Iterable[str]) -> bool:
    """True when any of `names` occurs (as whole normalised words) in the normalised `text_norm`."""
    padded = f" {text_norm} "
    return any(n and f" {n} " in padded for n in (normalize(name) for name in names))
