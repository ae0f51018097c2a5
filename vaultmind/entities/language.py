"""Whether a text is English prose, the only language the NER models vaultmind runs are
trained on (`ner.AUTO_MODELS`).

On a text in another language (a Latin filler, "Lorem ipsum dolor sit amet", a message in
Russian) an English model takes word after word for a name: "Lorem", "Nulla", "Suisque
Tritonidos". Such a text keeps what the registry and the regex extractors find in it; only the
model's guesses are dropped (`resolve.resolve_text`).

The test is one a reader makes at a glance. A text whose letters are mostly of another script
than the Latin one (Cyrillic, Greek, Chinese …) is no English, however short; nor is one with
a line that opens with the typesetters' filler, "Lorem ipsum" (two words that are the filler's
own, whatever follows them; "the mockup still says lorem ipsum" is English). Otherwise English
prose is held together by its function words ("the", "and", "of", "you" …: a closed class,
a quarter to a half of the lower-case words of any English text), which a text in another
language lacks. Only lower-case words count (names, headings'
capitals and table cells say nothing about the language), outside code, URLs and addresses;
a text with fewer than `MIN_WORDS` of them is too short to tell and counts as English. Words
that are function words in Latin too ("in", "a", "at", "me", "do", "is") are left out.

An English text may hold a paragraph of filler all the same ("## Formulation" over "Cras
imperdiet enim felis, vitae placerat turpis egestas sed. Nulla maximus vel orci …"): a
paragraph of `MIN_PARAGRAPH_WORDS` different lower-case words or more, none of them a function
word, is no English prose either, and the model's guesses inside it are dropped
(`foreign_paragraphs`). A table of a machine's output repeats a few words ("sec", "version"):
it is not judged so.
"""

from __future__ import annotations

import re
from typing import Final

MIN_WORDS: Final = 20
"""Lower-case words a text needs before its language is judged."""
MIN_SHARE: Final = 0.05
"""Function words among a text's lower-case words below which it is no English prose (English: a
quarter to a half; Latin filler and other languages: none or next to none)."""

MIN_PARAGRAPH_WORDS: Final = 10
"""Different lower-case words a paragraph needs before it is judged on its own (`foreign_paragraphs`)."""

FUNCTION_WORDS: Final = frozenset(
    "the and of to on for with from by are was were be been being it its this that these those "
    "i you he she we they him them my your his her our their not but or if so what which who "
    "there here have has had will would can could should just all about than then when how".split()
)
_WORD = re.compile(r"(?<![\w@./:-])[^\W\d_]+(?![\w@/:-])")
_NOT_PROSE = re.compile(r"\S*(?:://|@)\S*")  # URLs and addresses
_LETTER = re.compile(r"[^\W\d_]")
_LATIN_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f\u1e00-\u1eff]")
# a paragraph: lines up to a blank line or a heading, a heading's own line left out
_PARAGRAPH = re.compile(r"^(?![ \t]*#)[^\n]+(?:\n(?![ \t]*(?:#|\n))[^\n]+)*", re.MULTILINE)
_FILLER = re.compile(r"^[\W\d_]*lorem ipsum(?!\w)", re.IGNORECASE | re.MULTILINE)


def english_prose(text: str, code: list[tuple[int, int]] | None = None) -> bool:
    """Whether `text` (without the `code` ranges) reads as English, or is too short to tell."""
    if code:
        parts, at = [], 0
        for start, end in code:
            parts.append(text[at:start])
            at = max(at, end)
        parts.append(text[at:])
        text = " ".join(parts)
    if _FILLER.search(text) or len(_LATIN_LETTER.findall(text)) * 2 < len(_LETTER.findall(text)):
        return False
    words = _lower_words(text)
    if len(words) < MIN_WORDS:
        return True
    return sum(w in FUNCTION_WORDS for w in words) >= MIN_SHARE * len(words)


def foreign_paragraphs(text: str) -> list[tuple[int, int]]:
    """Character ranges of the paragraphs of `text` that are no English prose: at least
    `MIN_PARAGRAPH_WORDS` different lower-case words and not one function word among them (see the
    module)."""
    found: list[tuple[int, int]] = []
    for paragraph in _PARAGRAPH.finditer(text):
        words = set(_lower_words(paragraph.group(0)))
        if len(words) >= MIN_PARAGRAPH_WORDS and words.isdisjoint(FUNCTION_WORDS):
            found.append(paragraph.span())
    return found


def _lower_words(text: str) -> list[str]:
    """The lower-case words of `text`, outside URLs and addresses."""
    return [w for w in _WORD.findall(_NOT_PROSE.sub(" ", text)) if w.islower()]
