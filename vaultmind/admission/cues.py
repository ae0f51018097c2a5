"""Cues that a short message matters, which the word counts of `signals` miss.

- **An answer to a question.** "Yes." or "No, keep it." is chitchat by its words, but right
  after someone else asked "Should we cancel the contract?" it is the decision. Admission sees
  one leaf at a time, so the deriver walks each note's leaves in order with a
  `QuestionContext` and tells it whether the leaf answers a question by another author
  (`LeafInput.follows_question`); `decisive` says whether the reply opens with a word that
  decides (yes, no, agreed, cancel …).
- **A life event.** "I'm pregnant!", "Mom died this morning." are short and matter: a few
  words (pregnant, died, married, engaged, divorced, born, hired, fired …), in English, German,
  Spanish and French, matched as whole words, and a few Chinese and Japanese forms
  (`life_events`).
- **Scripts written without spaces.** A Chinese or Japanese sentence is one "word" to a
  space-based split; `cjk_units` cuts such runs into two-character units (about the length of a
  Chinese word), so a sentence of substance counts its content like its European versions.
  A unit made only of function characters (的 了 我们 …) or of Japanese kana inflections
  carries no content (`is_cjk_function`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

# Han ideographs, kana (and the prolonged-sound mark), not Hangul: Korean separates its words.
_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RE = re.compile(f"[{_CJK_CHARS}]")
_CJK_RUN_RE = re.compile(f"[{_CJK_CHARS}]+")
# The commonest Chinese function characters (particles, pronouns, copula, negation, "and").
_CJK_FUNCTION_RE = re.compile("[的了是在我你他她它们吗呢吧啊呀着过和也就都不这那有个之与而又很么]+|[\u3040-\u309f]+")

SHORT_REPLY_WORDS = 6  # a reply to a question at most this long is judged with the question
_QUESTION_END_RE = re.compile(r"[?？][^\w]*$")

DECISIVE_WORDS = frozenset(
    """yes yeah yep yup yea no nope nah agreed agree deal done confirmed confirm approved approve
    correct definitely absolutely cancel cancelled canceled keep go ja nein einverstanden genau
    sí si vale oui non d'accord""".split()
)
_FIRST_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")

LIFE_EVENT_WORDS = frozenset(
    """pregnant pregnancy miscarriage died funeral married wedding engaged divorced divorce born
    hired fired promoted retired graduated diagnosed schwanger gestorben verstorben geheiratet verlobt
    geschieden beerdigung embarazada murió falleció casado casada casados casadas boda comprometido
    comprometida divorciado divorciada despedido despedida enceinte décédé décédée marié mariée
    mariés mariage fiancé fiancée divorcé divorcée licencié licenciée""".split()
)
# Phrases of several words, looked for only when their first word is among the text's words.
LIFE_EVENT_PHRASES = {
    first: re.compile(rf"\b{first}\s+{rest}\b")
    for first, rest in (("passed", "away"), ("laid", "off"), ("expecting", r"a\s+baby"))
}
_PHRASE_FIRSTS = frozenset(LIFE_EVENT_PHRASES)
_FIRED_UP_RE = re.compile(r"\bfired\s+up\b")
_LIFE_EVENT_CJK_RE = re.compile("怀孕|去世|结婚|订婚|离婚|出生|被解雇|妊娠|亡くな|結婚|婚約|離婚")


class QuestionContext:
    """Walks the leaves of one note in order and tells, for each, whether it answers a question
    by someone else: the previous leaf is that question, or a short answer to it (several
    people answer "Yes." / "No, keep it." in turn)."""

    __slots__ = ("_asker",)

    def __init__(self) -> None:
        self._asker: str | None = None  # who asked the open question, if one is open

    def step(self, text: str, author: str | None) -> bool:
        who = (author or "").strip().lower()
        answers = self._asker is not None and bool(who) and who != self._asker
        if _QUESTION_END_RE.search(text) and who:
            self._asker = who
        elif not (answers and len(text.split()) <= SHORT_REPLY_WORDS):
            self._asker = None
        return answers


def decisive(text: str) -> bool:
    """The text opens with a word that decides: yes, no, agreed, cancel, keep …"""
    m = _FIRST_WORD_RE.search(text)
    return m is not None and m.group(0).lower().replace("’", "'") in DECISIVE_WORDS


def life_events(words: Collection[str], lower: str, cjk: bool) -> tuple[str, ...]:
    """The life-event words of a text: `words` are its distinct lower-cased words, `lower` the
    text lower-cased, `cjk` whether it holds Chinese or Japanese. Sorted, distinct."""
    found = LIFE_EVENT_WORDS.intersection(words)
    if not _PHRASE_FIRSTS.isdisjoint(words):
        matches = (phrase.search(lower) for first, phrase in LIFE_EVENT_PHRASES.items() if first in words)
        found = found.union(" ".join(m.group(0).split()) for m in matches if m)
    if "fired" in found and len(_FIRED_UP_RE.findall(lower)) == lower.count("fired"):
        found = found - {"fired"}  # "fired up": excited, not dismissed
    if cjk:
        found = found.union(m.group(0) for m in _LIFE_EVENT_CJK_RE.finditer(lower))
    return tuple(sorted(found)) if found else ()


_CJK_DATE_RE = re.compile(
    "(?:星期|礼拜|周)[一二三四五六日天]|[今明昨后前]天|[0-9０-９一二三四五六七八九十]+[月日号]|[月火水木金土日]曜日?|今日|明日|昨日"
)


def cjk_dates(text: str) -> set[str]:
    """Chinese and Japanese weekdays, days and relative days ("周五", "明天", "3月8日"), as
    `signals.extract_entities` finds their English forms."""
    return {f"date:{m.group(0)}" for m in _CJK_DATE_RE.finditer(text)}


def has_cjk(text: str) -> bool:
    return _CJK_RE.search(text) is not None


def cjk_units(words: list[str]) -> list[str]:
    """`words`, with each run of Han or kana cut into two-character units; other words as
    they are. A mixed word ("iphone价格") keeps its other letters as a word of their own."""
    out: list[str] = []
    for word in words:
        if not _CJK_RE.search(word):
            out.append(word)
            continue
        last = 0
        for m in _CJK_RUN_RE.finditer(word):
            if m.start() > last:
                out.append(word[last : m.start()])
            run = m.group(0)
            out.extend(run[i : i + 2] for i in range(0, len(run), 2))
            last = m.end()
        if last < len(word):
            out.append(word[last:])
    return out


def is_cjk_function(low: str) -> bool:
    """A unit of function characters or kana inflections only: no content."""
    return _CJK_FUNCTION_RE.fullmatch(low) is not None
