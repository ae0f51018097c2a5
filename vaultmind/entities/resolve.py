"""From one text (a leaf, or a query) to the entities it mentions.

The same function serves ingest and queries, so a name in a question resolves to the id it
was indexed under. Order of work:

1. spans: regex extractors, registry names in the text, NER hits (`extract.py`, `registry.py`);
   wikilinks count only when they point at an entity note; ambiguous registry names are left
   to NER; a text that is not English prose gets no NER hits (`language.py`);
2. overlaps: links, then regex, then registry names, then NER (`extract.select_spans`);
3. each span → an id: registry first (email, handle, name, then fuzzy within the kind), else
   the canonical id of the surface; an ambiguous name keeps the id of its own surface
   (`person:alex`) and is reported, never assigned to one of the candidates;
4. merges (an id listed in another note's `aliases`) are followed; a guess of the model that
   no registry name claims is the person the same text names in full (its author included):
   "Helen Okafor" read as a place in her own message, "Priya" beside "Priya Natarajan" (read
   as a person, an organization or a place: "Megan" beside "Megan One"); in a
   conversation, the other authors count as named ("Thanks Priya" to Priya Natarajan, who
   wrote another of its messages), and so do the short forms and greetings its speakers call
   each other by ("Mel" for Melissa, "Congrats Jolene!"), while a cheer read as an organization
   ("Woohoo, thanks Emil!") or a person opening a sentence before a pronoun ("Glad you made it!")
   is no entity, and a speaker the others speak of by first name ("Sean is coming") is that
   speaker even where the model tags nothing (`speakers.first_name_spans`; a mail's recipients
   count as its speakers) (`speakers.py`);
5. a message's author comes first; each id once, with its first surface.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from vaultmind.entities.common_words import NoteWords, after_place_preposition
from vaultmind.entities.extract import (
    Span,
    clean_ner_span,
    code_ranges,
    in_ranges,
    merged_ranges,
    parse_author,
    regex_spans,
    select_spans,
)
from vaultmind.entities.ids import kind_of, make_id, name_key
from vaultmind.entities.language import english_prose, foreign_paragraphs
from vaultmind.entities.mail_headers import mail_system_address
from vaultmind.entities.ner import RawSpan
from vaultmind.entities.registry import NO_MATCH, Match, Registry
from vaultmind.entities.shapes import generated_name
from vaultmind.entities.speakers import (
    addressed,
    exclamation,
    first_name_spans,
    opens_before_pronoun,
    short_form,
)


@dataclass(frozen=True, slots=True)
class Mention:
    entity_id: str
    surface: str
    start: int = -1  # where the first surface is in the text (-1: the author)
    end: int = -1


@dataclass(frozen=True, slots=True)
class Ambiguity:
    surface: str
    candidates: tuple[str, ...]


@dataclass(slots=True)
class Resolved:
    mentions: list[Mention]
    ambiguous: list[Ambiguity]


def resolve_text(
    registry: Registry,
    text: str,
    ner: Sequence[RawSpan] | None,
    *,
    author: str | None = None,
    self_id: str | None = None,
    companions: Sequence[str] = (),
    title: str = "",
    note: NoteWords | None = None,
) -> Resolved:
    """The entities `text` mentions (and `author`, first), each once with its first surface.
    `companions`: the other authors of the conversation the text is a message of, whose full
    names settle the model's one-word guesses as the author's does; `title`: the title of the
    note the text is a leaf of, `note` what that note's texts say of their words
    (`extract.clean_ner_span`)."""
    ambiguous: list[Ambiguity] = []
    found: list[tuple[str, str, int, int]] = []
    author_id = resolve_author(registry, author, ambiguous) if author else None
    if author and author_id is not None:
        found.append((author_id, author.strip(), -1, -1))

    code = code_ranges(text)
    candidates: list[Span] = []
    link_ids: dict[tuple[int, int], str] = {}
    for span in regex_spans(text, code):
        if span.kind == "link":
            match = registry.by_link(span.value)
            if match.entity_id is None:
                continue  # a link to an ordinary note, not an entity
            link_ids[(span.start, span.end)] = match.entity_id
        candidates.append(span)
    names, unclear = registry.find_names(text, code)
    candidates.extend(names)
    if companions:  # "Thanks Luca", where Luca Romano writes too (`speakers.first_name_spans`)
        candidates.extend(first_name_spans(text, _speaker_firsts(registry, author, author_id, companions), code))
    for surface, match in unclear:
        ambiguous.append(Ambiguity(surface, match.candidates))
    english = bool(ner) and english_prose(text, code)
    skipped = merged_ranges(code + foreign_paragraphs(text)) if english else code  # "Nulla maximus vel orci …"
    for start, end, label in ner if english and ner else ():
        if 0 <= start < end <= len(text):
            hit = clean_ner_span(text, start, end, label, title, note)
            if hit is not None and not in_ranges(hit.start, hit.end, skipped):
                candidates.append(hit)

    resolved: list[tuple[Span, str]] = []
    for span in select_spans(candidates):
        if span.kind == "link":
            ident: str | None = link_ids[(span.start, span.end)]
        else:
            ident = _resolve_span(registry, text, span, ambiguous)
        if ident is not None:
            resolved.append((span, registry.final(ident)))
    people = _full_names(registry, resolved, author, author_id, companions)
    speakers = _speakers(registry, author, author_id, companions)
    for span, ident in resolved:
        settled = _same_person(text, span, ident, people, speakers)
        if settled == ident and _no_name(text, span, ident):
            continue
        found.append((settled, span.surface, span.start, span.end))

    seen: set[str] = set()
    mentions: list[Mention] = []
    for ident, surface, start, end in found:
        ident = registry.final(ident)
        if ident in seen or ident == self_id:
            continue
        seen.add(ident)
        mentions.append(Mention(ident, surface, start, end))
    return Resolved(mentions, ambiguous)


# a one-word guess that may be a first name the model misread: "Megan" read as a place beside "Megan One"
_ONE_PERSON_KINDS = ("person", "org", "place")


def _full_names(
    registry: Registry,
    resolved: list[tuple[Span, str]],
    author: str | None,
    author_id: str | None,
    companions: Sequence[str],
) -> dict[str, str]:
    """The people of two words or more a text names (its author included), then the other
    authors of its conversation: normalized name → id."""
    people: dict[str, str] = {}
    _add_author(people, author, author_id)
    for span, ident in resolved:
        if kind_of(ident) == "person" and " " in (key := name_key(span.surface)):
            people.setdefault(key, ident)
    for other in companions:
        if other != author:
            _add_author(people, other, resolve_author(registry, other, []))
    return people


def _add_author(people: dict[str, str], author: str | None, author_id: str | None) -> None:
    if author_id is not None and kind_of(author_id) == "person":
        key = _full_name_of(author or "")
        if key is not None:
            people.setdefault(key, author_id)


def _speakers(
    registry: Registry, author: str | None, author_id: str | None, companions: Sequence[str]
) -> dict[str, str]:
    """The people who write in the conversation (its author and the others), by the first word
    of their name, one word or more ("Melissa", "Dana Whitfield"): normalized first name → id."""
    out: dict[str, str] = {}
    for name, ident in _people_of(registry, author, author_id, companions):
        if first := _first_name_of(name):
            out.setdefault(first, ident)
    return out


def _speaker_firsts(
    registry: Registry, author: str | None, author_id: str | None, companions: Sequence[str]
) -> dict[str, str]:
    """The first names of the conversation's people as they write them, each only when one
    person of the conversation has it ("Luca" → `person:luca-romano`): `first_name_spans`."""
    found: dict[str, set[str]] = {}
    for name, ident in _people_of(registry, author, author_id, companions):
        named = parse_author(name)
        first = named.name.split(" ", 1)[0] if named is not None and named.name else ""
        if len(first) >= 2 and first[0].isupper() and first.isalpha():
            found.setdefault(first, set()).add(ident)
    return {first: ids.pop() for first, ids in found.items() if len(ids) == 1}


def _people_of(
    registry: Registry, author: str | None, author_id: str | None, companions: Sequence[str]
) -> list[tuple[str, str]]:
    """(name as written, id) of the conversation's people: its author and the others, who are
    people (not an address alone, an organization or a handle's robot)."""
    pairs = ((author, author_id), *((c, resolve_author(registry, c, [])) for c in companions))
    return [(name, ident) for name, ident in pairs if name and ident is not None and kind_of(ident) == "person"]


@lru_cache(maxsize=1 << 12)
def _first_name_of(author: str) -> str:
    """The normalized first word of an author's name ("" for an address or a handle alone)."""
    named = parse_author(author)
    return name_key(named.name).split(" ", 1)[0] if named is not None and named.name else ""


@lru_cache(maxsize=1 << 12)  # a conversation's few authors write thousands of messages
def _full_name_of(author: str) -> str | None:
    """The normalized name of an author of two words or more, else None."""
    named = parse_author(author)
    key = name_key(named.name) if named is not None else ""
    return key if " " in key else None


def forget_names() -> None:
    """Empty the memos of names (`name_key`, `_full_name_of`, `_first_name_of`): sized for a whole vault's leaves
    (~4 MB full at 50k notes), they serve a bulk pass — a cold index, the daemon's NER catch-up —
    and a daemon's saves after it hardly reuse them."""
    name_key.cache_clear()
    _full_name_of.cache_clear()
    _first_name_of.cache_clear()


def _same_person(text: str, span: Span, ident: str, people: dict[str, str], speakers: dict[str, str]) -> str:
    """The person the same text names in full, for a guess of the model no name in the
    registry claims: "Helen Okafor" read as a place where she writes or is named as a person,
    "Priya" (even read as an organization or a place) beside "Priya Natarajan" — when exactly
    one person of the text has that first name; else the speaker of the conversation it names
    (`speakers.py`): by her first name ("Lucinda" read as a place where Lucinda writes), a
    short form of it ("Mel" for Melissa) or after a greeting ("Congrats Jolene!")."""
    if span.source != "ner" or ident != make_id(span.kind, span.surface) or not (people or speakers):
        return ident
    key = name_key(span.surface)
    if span.kind not in _ONE_PERSON_KINDS:
        return people.get(key, ident) if " " in key else ident
    if " " in key:
        return addressed(text, span.start, span.end, key, speakers) or people.get(key, ident)
    firsts = {pid for name, pid in people.items() if name.split(" ", 1)[0] == key}
    if len(firsts) == 1:
        return firsts.pop()
    if firsts:
        return ident
    return speakers.get(key) or short_form(key, speakers) or ident


def _no_name(text: str, span: Span, ident: str) -> bool:
    """A one-word guess of the model no name claims that a message writes as a word: a cheer
    read as an organization ("Woohoo, thanks Emil!"), a person opening a sentence before a
    pronoun ("Glad you made it!"; `speakers.py`)."""
    if span.source != "ner" or ident != make_id(span.kind, span.surface) or " " in span.surface.strip():
        return False
    if span.kind == "org":
        return exclamation(text, span.start, span.end)
    return span.kind == "person" and opens_before_pronoun(text, span.start, span.end)


def _pick(match: Match, fallback: str | None, surface: str, ambiguous: list[Ambiguity]) -> str | None:
    if match.entity_id is not None:
        return match.entity_id
    if match.ambiguous:
        ambiguous.append(Ambiguity(surface, match.candidates))
    return fallback


def _resolve_span(registry: Registry, text: str, span: Span, ambiguous: list[Ambiguity]) -> str | None:
    if span.source in ("registry", "speaker"):
        return span.value
    kind = span.kind
    if kind == "email":
        return _pick(registry.by_email(span.value), make_id("email", span.value), span.surface, ambiguous)
    if kind == "handle":
        return _pick(registry.by_handle(span.value), make_id("handle", span.value), span.surface, ambiguous)
    if kind == "topic":
        own = make_id("topic", span.value)
        if own is not None and own in registry.entries:
            return own
        return _pick(registry.by_name(span.value, kinds=("topic",)), own, span.surface, ambiguous)
    if kind in ("url", "phone"):
        return make_id(kind, span.value)
    match = registry.resolve_name(span.surface, kind)
    if _a_place_not_a_person(text, span, match):
        match = NO_MATCH
    return _pick(match, make_id(kind, span.surface), span.surface, ambiguous)


def _a_place_not_a_person(text: str, span: Span, match: Match) -> bool:
    """Whether a one-word place or organization the model saw, which `Registry.resolve_name`
    gives to the person whose name it starts ("Priya" → Priya Shah), is written where a place
    is ("I flew to Austin" beside the note "Austin Lee"): then it stays the model's place."""
    return (
        span.kind in ("place", "org")
        and match.entity_id is not None
        and kind_of(match.entity_id) == "person"
        and " " not in span.surface.strip()
        and after_place_preposition(text, span.start, span.end)
    )


_AUTHORS_CACHE_MAX = 50_000


def resolve_author(registry: Registry, raw: str, ambiguous: list[Ambiguity]) -> str | None:
    """The id of a message's author. A vault's messages have few authors, each seen thousands of
    times: the answer (and what it found ambiguous) is kept on the registry, which never changes."""
    cached: tuple[str | None, tuple[Ambiguity, ...]] | None = registry.authors.get(raw)
    if cached is None:
        found: list[Ambiguity] = []
        cached = (_author_id(registry, raw, found), tuple(found))
        if len(registry.authors) >= _AUTHORS_CACHE_MAX:
            registry.authors.clear()
        registry.authors[raw] = cached
    ambiguous.extend(cached[1])
    return cached[0]


def _author_id(registry: Registry, raw: str, ambiguous: list[Ambiguity]) -> str | None:
    author = parse_author(raw)
    if author is None:
        return None
    if author.handle:
        return _pick(registry.by_handle(author.handle), make_id("handle", author.handle), raw, ambiguous)
    if author.email:
        match = registry.by_email(author.email)
        if match.entity_id is not None:
            return match.entity_id
        if match.ambiguous:
            ambiguous.append(Ambiguity(raw, match.candidates))
        if not author.name:
            return make_id("email", author.email)
    by_handle = registry.by_handle(author.name)
    if by_handle.entity_id is not None:
        return by_handle.entity_id
    # "WgO268Xc0KtFylJ", "Mail Delivery System <MAILER-DAEMON@…>": kept as the leaf's author, no person
    if generated_name(author.name) or (author.email and mail_system_address(author.email)):
        fallback = make_id("email", author.email) if author.email else None
        return _pick(registry.resolve_name(author.name, "person"), fallback, raw, ambiguous)
    return _pick(registry.resolve_name(author.name, "person"), make_id("person", author.name), raw, ambiguous)
