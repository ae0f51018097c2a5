"""The synthetic vault's words: a generated pseudo-English vocabulary with Zipfian frequencies
(so BM25 statistics look natural), a few hundred names of people, places and organizations,
tags, headings and folder names; and the fixed benchmark queries drawn from it."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np


def _split(text: str, sep: str | None = None) -> list[str]:
    return text.split(sep)


FUNCTION_WORDS = _split(
    "the of and to a in is that for it with as was on be by this are from at or have an but not "
    "which we they you all can their has more one will would there been if so what about when "
    "into some could them other than then its only also over after how our most these two may"
)


_ONSETS = _split("b c d f g h j k l m n p r s t v w z br ch cl cr dr fl gr pl pr sh st str th tr")


_VOWELS = _split("a e i o u a e i o ai ea ou io ee")


_CODAS = ["", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ck", "rt", "ng", "x"]


_SUFFIXES = ["", "", "", "", "", "tion", "ing", "ed", "ly", "ment", "ness", "er", "al", "ity"]


_FIRST = _split(
    "Alice Bob Carol Dmitri Elena Farah Gustav Hana Ivan Jamal Keiko Liam Mei Nadia Omar Priya "
    "Quentin Rosa Sven Tomás Uma Viktor Wen Yusuf Zoë José Søren Amélie Björn Chiara Daniel Emma "
    "Felix Grace Hugo Ines Jonas Kofi Lena Marco Nora Oskar Paula Ravi Sara Theo Ugo Vera Willa"
)


_LAST = _split(
    "Chen Stone Raman Ruiz García Müller Nakamura Okafor Kowalski Larsen Haddad Novak Silva "
    "Dubois Rossi Kim Patel Nguyen Schmidt Ivanova Costa Jensen Moreau Tanaka Brennan Fischer "
    "Ahmed Lindqvist O'Neill Herrera Yilmaz Bakker Petrov Santos Wójcik Andersen Mbeki Park"
)


_PLACES = _split(
    "Zürich|São Paulo|Lisbon|Kyoto|東京|Reykjavík|Montréal|Cape Town|Kraków|Oaxaca|Bergen|"
    "Harbor Hall|Fernhill|Marrakesh|Tallinn|Busan|Valparaíso|Göteborg|Hanoi|Nairobi",
    "|",
)


_ORG_SUFFIX = ["Labs", "Inc", "GmbH", "Studio", "Collective", "Foundation", "Partners", "Systems"]


NON_ASCII = _split(
    "café naïve résumé façade jalapeño smörgåsbord über Ångström Łódź crème brûlée Ελληνικά "
    "Москва 会议记录 学习笔记 データベース 회의록 東京 要点 🚀 ✅ 📌 🎉 🤔 ☕ —"
)


HEADINGS = _split(
    "Overview|Context|Notes|Ideas|Open questions|Next steps|Decisions|References|Log|Summary|"
    "Action items|Background|Details|Risks|Links|Zusammenfassung|要点|Follow-ups|Draft|Agenda",
    "|",
)


TOP_FOLDERS = _split(
    "Projects|Areas|Resources|Archive|Meetings|People|Clippings|Reading|Zettelkasten|Work|"
    "Personal|Recherche|メモ|Écrits",
    "|",
)


ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


@dataclass(frozen=True, slots=True)
class Vocabulary:
    words: list[str]
    array: np.ndarray  # `words` as a numpy object array, for fast sampling
    cum: np.ndarray  # cumulative Zipf weights over `words`, normalised to 1
    names: list[str]  # people, places and organizations
    people: list[str]
    tags: list[str]


def build_vocabulary(seed: int = 0, size: int = 30_000) -> Vocabulary:
    """Pseudo-English words, most frequent first (Zipf s≈1.05), plus names and tags."""
    rng = random.Random(f"vm-synth:{seed}:vocab")
    seen: dict[str, None] = dict.fromkeys(FUNCTION_WORDS)
    while len(seen) < size:
        syllables = rng.choices((1, 2, 3, 4), weights=(4, 6, 3, 1))[0]
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables))
        word += rng.choice(_CODAS) + rng.choice(_SUFFIXES)
        if len(word) < 3 or word.startswith("vmnonce"):
            continue
        seen.setdefault(word, None)
    words = list(seen)
    head, tail = words[: len(FUNCTION_WORDS)], words[len(FUNCTION_WORDS) :]
    tail.sort(key=lambda w: len(w) + rng.random() * 10)  # shorter words tend to be frequent
    words = head + tail
    weights = 1.0 / np.arange(1, len(words) + 1, dtype=np.float64) ** 1.05
    cum = np.cumsum(weights)
    cum /= cum[-1]
    people = [
        f"{first} {last}"
        for first, last in zip(rng.sample(_FIRST * 5, 240), rng.sample(_LAST * 8, 240), strict=True)
    ]
    people = list(dict.fromkeys(people))
    orgs = [f"{rng.choice(tail[:2000]).title()} {rng.choice(_ORG_SUFFIX)}" for _ in range(80)]
    tags = [rng.choice(tail[:3000]) for _ in range(90)]
    tags += [
        f"{p}/{rng.choice(tail[:3000])}" for p in ("project", "area", "type", "status") for _ in range(12)
    ]
    tags += [f"area/{rng.choice(tail[:500])}/{rng.choice(tail[:500])}" for _ in range(10)] + [
        "日本語",
        "lecture-notes",
    ]
    array = np.empty(len(words), dtype=object)
    array[:] = words
    return Vocabulary(words, array, cum, people + _PLACES + orgs, people, list(dict.fromkeys(tags)))


def bench_queries(seed: int = 0, count: int = 40) -> list[str]:
    """A fixed set of queries drawn from the vault's vocabulary: common, mid, rare, names."""
    vocab = build_vocabulary(seed)
    rng = random.Random(f"vm-synth:{seed}:queries")
    content = vocab.words[len(FUNCTION_WORDS) :]
    queries: list[str] = []
    for i in range(count):
        kind = i % 5
        if kind == 0:
            queries.append(rng.choice(content[:200]))
        elif kind == 1:
            queries.append(" ".join(rng.sample(content[:3000], 2)))
        elif kind == 2:
            queries.append(" ".join(rng.sample(content[200:20000], 3)))
        elif kind == 3:
            queries.append(rng.choice(vocab.names))
        else:
            queries.append(
                f"{rng.choice(vocab.people)} {rng.choice(content[:1000])} {rng.choice(content[:5000])}"
            )
    return queries
