"""Canonical entity ids and the one text normalization used on ingest and on queries.

An id is `<kind>:<key>`:

| kind | key | example |
|---|---|---|
| person, org, place, product, event, work, topic | `slug(name)` (a person's without a title) | `person:alice-chen`, `topic:q3-budget` |
| email | the address, lower-cased | `email:alice@example.com` |
| handle | the handle, lower-cased, without `@` | `handle:bob.stone` |
| url | scheme and host lower-cased, trailing `/` and `#fragment` dropped | `url:https://example.com/a` |
| phone | `+` and the digits | `phone:+353851234567` |

`normalize` is what every comparison of names goes through (registry aliases, surface forms in
leaves, query text): Unicode NFKD, accents stripped, case-folded, every run of characters that
are not letters or digits collapsed to one space, each character of a script written without
spaces (Chinese, Japanese, Thai) a word of its own. `slug` is the same with `-` for the spaces,
except that it keeps a run of such characters whole (`person:李明`).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Container, Iterable, Sequence
from functools import lru_cache
from typing import Final

NAME_KINDS: Final = ("person", "org", "place", "product", "event", "work", "topic")
"""Kinds whose key is the slug of a name."""

KINDS: Final = (*NAME_KINDS, "email", "handle", "url", "phone")

KIND_ALIASES: Final = {
    "people": "person",
    "persons": "person",
    "organization": "org",
    "organisation": "org",
    "organizations": "org",
    "organisations": "org",
    "orgs": "org",
    "company": "org",
    "location": "place",
    "locations": "place",
    "places": "place",
    "products": "product",
    "events": "event",
    "topics": "topic",
    "hashtag": "topic",
    "works": "work",
    "emails": "email",
    "handles": "handle",
}

MAX_SLUG: Final = 80

_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_WORD_RE = re.compile(rf"[^\W_](?:[^\W_]|[{_MARKS}])*")
_ASCII_WORD_RE = re.compile(r"[a-z0-9]+")
_PHONE_KEEP_RE = re.compile(r"\d+")
# scripts written without spaces between words (Thai, Lao, Myanmar, Khmer, Hiragana, Katakana
# and its half-width forms, Han): a run of them is a sentence, not a word, so names match in them
# character by character
_UNSPACED = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\uff66-\uff9f"  # half-width Katakana
)
_UNSPACED_RE = re.compile(f"[{_UNSPACED}]")
_UNSPACED_PIECE_RE = re.compile(f"[{_UNSPACED}]|[^{_UNSPACED}]+")


_HANGUL_RE = re.compile("[\uac00-\ud7a3]+")
_UNSPACED_NAME_RE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7a3]{3,}")  # Han, Hangul
# Korean particles, written on the word before them ("김민수가", "김민수를"): the longer first
KOREAN_PARTICLES: Final = tuple(
    sorted(
        "이 가 은 는 을 를 와 과 의 도 랑 로 만 께 에 "
        "이랑 에게 한테 께서 에서 으로 부터 까지 처럼 보다 하고 이나 이다 "
        "에게서 한테서 이에요 예요 입니다".split(),
        key=len,
        reverse=True,
    )
)


def without_particle(word: str) -> str | None:
    """A word of Hangul syllables without the particle it ends with ("김민수가" → "김민수"), when
    two syllables at least are left; None for any other word."""
    if not _HANGUL_RE.fullmatch(word):
        return None
    for particle in KOREAN_PARTICLES:
        if word.endswith(particle) and len(word) - len(particle) >= 2:
            return word[: -len(particle)]
    return None


def without_particle_token(token: tuple[str, int, int], names: Container[str]) -> tuple[str, int, int]:
    """A word of a text (normalized, start, end: `word_spans`) without a Korean particle written
    on it ("김민수가" → "김민수"), unless the whole word is one of `names`."""
    stem = None if token[0] in names else without_particle(token[0])
    return token if stem is None else (stem, token[1], token[2] - (len(token[0]) - len(stem)))


def unspaced_full_name(key: str) -> bool:
    """Whether an id's key is a name of three Han or Hangul characters or more, written without
    spaces as Chinese, Japanese and Korean full names are ("王小明", "田中太郎", "김민수"): a full
    name, though one word (a name in kana, "さくら", is a given name)."""
    return _UNSPACED_NAME_RE.fullmatch(key) is not None


def fold(text: str, *, keep_case: bool = False) -> str:
    """NFKD, accents (combining marks) removed, case-folded unless `keep_case`."""
    if text.isascii():
        return text if keep_case else text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", stripped if keep_case else stripped.casefold())


def words(text: str, *, keep_case: bool = False) -> list[str]:
    """The normalized words of `text` (letters and digits; everything else separates)."""
    return _WORD_RE.findall(fold(text, keep_case=keep_case))


def normalize(text: str) -> str:
    """The matching form of a name: `"  Zoë O'Brien "` → `"zoe o brien"`; a character of a script
    written without spaces is a word of its own (`"李明"` → `"李 明"`), so a name matches inside a
    sentence of such a script (`word_spans`). Not `slug`'s words: ids keep such a name whole."""
    return " ".join(piece for word in words(text) for piece in _unspaced_pieces(word))


def _unspaced_pieces(word: str) -> list[str]:
    """A word cut into each character of a script written without spaces and the runs between."""
    return _UNSPACED_PIECE_RE.findall(word) if _UNSPACED_RE.search(word) else [word]


@lru_cache(maxsize=1 << 14)
def name_key(name: str) -> str:
    """`normalize` of a name, remembered: the names a vault's leaves look up (authors, link
    targets, surfaces) repeat thousands of times; a long text is normalized with `normalize`."""
    return normalize(name)


def slug(text: str) -> str:
    """The id key of a name: `"Zoë O'Brien"` → `"zoe-o-brien"` ("" when nothing is left).

    Longer than `MAX_SLUG` characters: cut at a word boundary and suffixed with 8 hex digits of
    the sha256 of the full slug, so distinct long names keep distinct ids.
    """
    full = "-".join(words(text))
    if len(full) <= MAX_SLUG:
        return full
    digest = hashlib.sha256(full.encode("utf-8")).hexdigest()[:8]
    head = full[: MAX_SLUG - 9]
    if "-" in head:
        head = head.rsplit("-", 1)[0]
    return f"{head}-{digest}"


def canonical_kind(kind: str) -> str | None:
    """`"Organization"` → `"org"`; None for a kind vaultmind does not know."""
    value = kind.strip().lower()
    value = KIND_ALIASES.get(value, value)
    return value if value in KINDS else None


def make_id(kind: str, value: str) -> str | None:
    """The canonical id of `value` seen as `kind` (None when nothing usable is left)."""
    k = canonical_kind(kind)
    if k is None:
        return None
    if k == "email":
        key = email_key(value)
    elif k == "handle":
        key = handle_key(value)
    elif k == "url":
        key = url_key(value)
    elif k == "phone":
        key = phone_key(value)
    elif k == "person":
        key = slug(" ".join(without_title(words(value))))
    else:
        key = slug(value)
    return f"{k}:{key}" if key else None


PERSON_TITLES = frozenset(
    ("dr", "prof", "professor", "mr", "mrs", "ms", "mx", "miss", "sir", "dame", "mme", "mlle", "herr", "frau")
)


KINSHIP_TITLES = frozenset(
    "aunt auntie aunty uncle grandma grandpa granny grandad granddad grandmother grandfather "
    "nana nan nanna nonna nonno oma opa cousin".split()
)
"""Titles a family writes before a name ("Auntie Lin", "Uncle Bob"): not part of the id either."""


def without_title(name_words: list[str]) -> list[str]:
    """A person's name words without the titles before it ("Dr. Elena Rossi" is Elena Rossi:
    the sender of an email and the signature under it are one person; "Auntie Lin" is Lin,
    the Lin of her own messages); a title alone stays."""
    at = 0
    while at < len(name_words) - 1 and (name_words[at] in PERSON_TITLES or name_words[at] in KINSHIP_TITLES):
        at += 1
    return name_words[at:]


def given_name(name_words: Sequence[str]) -> str | None:
    """The first name of a person's full name (its words, normalized: of two words or more), the
    word a first name alone may name them by ("Dana" for Dana Whitfield); None for a name of
    one word. The rule every reader of first names shares: the registry over the names of
    entity notes (`Registry.given_name`), a question over the ids it knows (`query.first_names`),
    `entities show` over the same (`people_by_first_name`)."""
    return name_words[0] if len(name_words) >= 2 else None


def people_by_first_name(known: Iterable[str]) -> dict[str, list[str]]:
    """The person ids among `known`, by the first name of the name the id spells (`given_name`:
    "marco" → [`person:marco-ruiz`]), each list sorted."""
    people: dict[str, list[str]] = {}
    for ident in sorted(known):
        kind, _, key = ident.partition(":")
        first = given_name(key.split("-")) if kind == "person" else None
        if first is not None:
            people.setdefault(first, []).append(ident)
    return people


def parse_id(text: str) -> tuple[str, str] | None:
    """`"person:alice-chen"` → `("person", "alice-chen")`; None unless it is a canonical id.

    The kind may be spelled loosely (`organization:acme` → `("org", "acme")`); the key is
    brought to its canonical form.
    """
    if ":" not in text:
        return None
    kind, _, rest = text.strip().partition(":")
    ident = make_id(kind, rest)
    if ident is None:
        return None
    k, _, key = ident.partition(":")
    return k, key


def canonical_id(text: str) -> str | None:
    """`text` as a canonical id if it is one (`"Person:Alice Chen"` → `"person:alice-chen"`)."""
    parsed = parse_id(text)
    return None if parsed is None else f"{parsed[0]}:{parsed[1]}"


def kind_of(entity_id: str) -> str:
    return entity_id.partition(":")[0]


def key_of(entity_id: str) -> str:
    return entity_id.partition(":")[2]


def email_key(value: str) -> str:
    text = value.strip().strip("<>").strip()
    if text.lower().startswith("mailto:"):
        text = text[7:]
    return text.lower() if "@" in text and " " not in text else ""


def handle_key(value: str) -> str:
    text = value.strip().lstrip("@").rstrip(".").strip()
    return text.casefold() if text and " " not in text else ""


def url_key(value: str) -> str:
    text = value.strip()
    scheme, sep, rest = text.partition("://")
    if not sep or not rest:
        return ""
    rest = rest.split("#", 1)[0]
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}{slash}{path}".rstrip("/")


def phone_key(value: str) -> str:
    digits = "".join(_PHONE_KEEP_RE.findall(value))
    return "+" + digits if 7 <= len(digits) <= 15 else ""


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """(normalized word, start, end) for each word of `text`, offsets into `text`.

    A word whose folded form contains several words (rare ligatures) yields them all with the
    same offsets, so the sequence of words equals `normalize(text).split()` exactly: a character
    of a script written without spaces is a word with its own offsets (`"李明说"` → 李, 明, 说).
    """
    if text.isascii():
        return [(m.group(), m.start(), m.end()) for m in _ASCII_WORD_RE.finditer(text.lower())]
    out: list[tuple[str, int, int]] = []
    for match in _WORD_RE.finditer(text):
        word = match.group()
        if word.isascii():
            out.append((word.lower(), match.start(), match.end()))
            continue
        at = match.start()
        for piece in _unspaced_pieces(word):  # folded again: "ｶﾀｶﾅ" and "㍿" fold to several characters
            out.extend(
                (part, at, at + len(piece)) for found in _WORD_RE.findall(fold(piece)) for part in _unspaced_pieces(found)
            )
            at += len(piece)
    return out
