"""The alias registry: entity notes (`entities/<kind>/<slug>.md`) read back from the index.

Every note under `entities/` (except `vaultmind: readme` notes) is one registry entry:

- `id`: front matter `id` when it is a canonical id, else `<kind>:<slug of the file name>`;
- `kind`: front matter `kind`, else the id's kind, else the folder (`entities/person/…`);
- `display_name`: front matter `display_name`, else the note title;
- `aliases`, `emails`, `handles`: lists (a single string is one item; a handle may be
  `{kind: slack, value: U123}`, read as `slack:U123`).

Names are *claimed* with a strength: an alias (or email, handle) listed in a note is an
explicit claim (2), the display name a weaker one (1), the file name and id slug the weakest
(0). A name resolves to the entity with the strongest claim; when several entities hold the
strongest claim on a name, the name is **ambiguous**: vaultmind reports it
(`vaultmind entities ambiguous`) and never picks one. So merging two people is adding one's
name to the other's `aliases`; adding another entity's *id* (`person:bob-stone`) to `aliases`
merges everything that resolves to that id into this note.

Names are compared by `ids.normalize` (accents, case and punctuation ignored). In running
text, aliases of at most 3 characters and all-capital aliases (`AC`, `NASA`) match only with
the case written in the note; so does the one-word name of a note vaultmind wrote itself (whose
display name is still the one it read in the text: `EntityNote.generated`) — `org:apple`,
written for "Apple", is not the apple someone ate, and `topic:launch`, written for the tag
`#launch`, is the tag only, never the word "launch" (add a name to `aliases` to have it match in
any case). Surface forms that match no name exactly are matched with
rapidfuzz (`token_sort_ratio` ≥ `[entities] fuzzy_threshold`, default 90) against names of the
same kind that share at least one content word (`content_words`) with it; several entities
above the threshold is again ambiguous, never guessed. A person named by one word (an NER
span, a message author: "Dana") that matches no name resolves to the one person whose full
name starts with that word ("Dana Whitfield"); when several people share it, it stays unresolved.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz, process

from vaultmind.entities.extract import Span, in_ranges
from vaultmind.entities.ids import (
    canonical_id,
    email_key,
    given_name,
    handle_key,
    key_of,
    kind_of,
    make_id,
    name_key,
    normalize,
    without_particle_token,
    word_spans,
    words,
)

EXPLICIT, DISPLAY, IMPLICIT = 2, 1, 0
MAX_NAME_WORDS = 8
FUZZY_MIN_CHARS = 5
LINK_MEMO = 1 << 14  # `Registry.by_link` answers kept (emptied when full)
ID_LIKE = re.compile(r"^[A-Za-z]+:\S+$")
_FUZZY_CACHE_MAX = 200_000
GIVEN_MIN_CHARS = 3
_LEADING_WORD_KINDS = ("person", "org")  # the kinds whose full name's first word may name them alone
RULES = 8  # version of the resolution rules, part of the digest: a new rule re-resolves every leaf
# (6: a generated note's one-word name matches only as written; the case forms of one name add up)
# (7: a character of a script written without spaces is a word: "李明" matches in "我和李明一起")
# (8: a one-word place after "to"/"in"/"from"… is not the person whose name it starts: "flew to Austin")


_CONFLICT_COPY = re.compile(r"conflict", re.IGNORECASE)  # how sync tools name the copies they make


@dataclass(frozen=True, slots=True)
class EntityNote:
    """One registry entry (several notes with the same id are merged into one)."""

    id: str
    kind: str
    display_name: str
    note_path: str
    aliases: tuple[str, ...] = ()
    emails: tuple[str, ...] = ()
    handles: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()  # every note that declares this id
    # a note vaultmind wrote, its display name still the one vaultmind read in the text
    # (`registry_store.entity_note_from`): its one-word names match only as written there
    generated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "display_name": self.display_name,
            "note_path": self.note_path,
            "aliases": list(self.aliases),
            "emails": list(self.emails),
            "handles": list(self.handles),
            "paths": list(self.paths),
        }


ANY_CASE = None
NEVER_IN_TEXT: frozenset[str] = frozenset()  # matched by lookups (authors, links, NER), never in running text


@dataclass(frozen=True, slots=True)
class Claim:
    entity_id: str
    strength: int
    # the forms (words as written, one space between) the name must have in running text:
    # `ANY_CASE`, or only these (short and all-capital names, a generated note's one word)
    case_forms: frozenset[str] | None

    def fits(self, exact: str) -> bool:
        return self.case_forms is None or exact in self.case_forms

    def looser(self, other: frozenset[str] | None) -> frozenset[str] | None:
        """The forms this claim and another of the same name allow together."""
        return None if self.case_forms is None or other is None else self.case_forms | other


@dataclass(frozen=True, slots=True)
class Match:
    """The outcome of resolving one name: an id, or the candidates that made it ambiguous."""

    entity_id: str | None
    candidates: tuple[str, ...] = ()

    @property
    def ambiguous(self) -> bool:
        return self.entity_id is None and len(self.candidates) > 1


NO_MATCH = Match(None)


@dataclass
class Registry:
    entries: dict[str, EntityNote] = field(default_factory=dict)
    names: dict[str, list[Claim]] = field(default_factory=dict)  # normalized name → claims
    emails: dict[str, set[str]] = field(default_factory=dict)
    handles: dict[str, set[str]] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)  # merged id → id of the note that took it
    by_path: dict[str, str] = field(default_factory=dict)  # note path → id
    by_stem: dict[str, set[str]] = field(default_factory=dict)  # casefolded link target → ids
    problems: list[str] = field(default_factory=list)
    fuzzy_threshold: float = 90.0
    digest: str = ""
    _first_words: dict[str, int] = field(
        default_factory=dict
    )  # first word of a name → most words of such names
    _choices: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # kind → content word → names
    _given: dict[str, set[str]] = field(default_factory=dict)  # first word of a person's or an org's full name → ids
    _fuzzy: dict[tuple[str, str], Match] = field(default_factory=dict)
    # `resolve.resolve_author`'s answers by raw author (the registry never changes once built)
    authors: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    _links: dict[str, Match] = field(default_factory=dict, compare=False, repr=False)  # `by_link`'s, by target
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- building --------------------------------------------------------------------------

    @classmethod
    def build(cls, notes: Iterable[EntityNote], *, fuzzy_threshold: float = 90.0) -> Registry:
        reg = cls(fuzzy_threshold=fuzzy_threshold)
        merged: dict[str, EntityNote] = {}
        # of two notes of one id, the first by path is the entity's — never a sync tool's conflict
        # copy ("… (conflict copy 2026-01-01).md", "….sync-conflict-….md") before its original
        for note in sorted(notes, key=lambda n: (bool(_CONFLICT_COPY.search(n.note_path)), n.note_path)):
            old = merged.get(note.id)
            if old is None:
                merged[note.id] = note
                continue
            reg.problems.append(
                f"{note.note_path}: declares id {note.id} like {old.note_path}; their names are merged"
            )
            merged[note.id] = EntityNote(
                old.id,
                old.kind,
                old.display_name,
                old.note_path,
                _union(old.aliases, note.aliases),
                _union(old.emails, note.emails),
                _union(old.handles, note.handles),
                (*old.paths, *note.paths),
                old.generated and note.generated,
            )
        reg.entries = dict(sorted(merged.items()))
        for entry in reg.entries.values():
            reg._index(entry)
        reg._resolve_redirects()
        reg.digest = hashlib.sha256(
            json.dumps(
                [RULES, [[e.to_json(), e.generated] for e in reg.entries.values()]], sort_keys=True
            ).encode("utf-8")
        ).hexdigest()
        return reg

    def _claim(self, name: str, entity_id: str, strength: int, *, as_read: str | None = None) -> None:
        """`entity_id` claims `name`. `as_read`: a one-word name vaultmind read in the text (a
        generated note's display name), which matches in running text only as written there —
        not at all when it was read in lower case (a tag: `#launch` is found as a tag)."""
        key = normalize(name)
        if not key:
            return
        exact = " ".join(words(name, keep_case=True))
        case_forms: frozenset[str] | None = ANY_CASE
        if as_read is not None and " " not in key:
            case_forms = frozenset({as_read}) if as_read != as_read.lower() else NEVER_IN_TEXT
        elif len(exact) <= 3:
            case_forms = frozenset({exact}) if strength > IMPLICIT else NEVER_IN_TEXT
        elif strength > IMPLICIT and exact.upper() == exact and any(c.isalpha() for c in exact):
            case_forms = frozenset({exact})
        claims = self.names.setdefault(key, [])
        for i, claim in enumerate(claims):
            if claim.entity_id == entity_id:
                claims[i] = Claim(entity_id, max(strength, claim.strength), claim.looser(case_forms))
                return
        claims.append(Claim(entity_id, strength, case_forms))
        parts = key.split(" ")
        self._first_words[parts[0]] = max(self._first_words.get(parts[0], 0), min(len(parts), MAX_NAME_WORDS))

    def _index(self, entry: EntityNote) -> None:
        for path in entry.paths:
            self.by_path[path] = entry.id
            stem = path[:-3] if path.lower().endswith(".md") else path
            for target in (stem, stem.rsplit("/", 1)[-1]):
                self.by_stem.setdefault(target.casefold(), set()).add(entry.id)
        read = words(entry.display_name, keep_case=True)
        as_read = read[0] if entry.generated and len(read) == 1 else None
        self._claim(key_of(entry.id).replace("-", " "), entry.id, IMPLICIT, as_read=as_read)
        if kind_of(entry.id) in _LEADING_WORD_KINDS:
            for name in (entry.display_name, *entry.aliases):
                first = given_name(words(name))
                if first is not None and len(first) >= GIVEN_MIN_CHARS:
                    self._given.setdefault(first, set()).add(entry.id)
        self._claim(entry.display_name, entry.id, DISPLAY, as_read=as_read)
        for alias in entry.aliases:
            if ID_LIKE.match(alias) and canonical_id(alias) is not None:
                continue  # an id in `aliases` is a merge, handled by _resolve_redirects
            self._claim(alias, entry.id, EXPLICIT)
        for email in entry.emails:
            key = email_key(email)
            if key:
                self.emails.setdefault(key, set()).add(entry.id)
        for handle in entry.handles:
            for key in _handle_keys(handle):
                self.handles.setdefault(key, set()).add(entry.id)

    def _resolve_redirects(self) -> None:
        wanted: dict[str, set[str]] = {}
        for entry in self.entries.values():
            for alias in entry.aliases:
                target = canonical_id(alias) if ID_LIKE.match(alias) else None
                if target is not None and target != entry.id:
                    wanted.setdefault(target, set()).add(entry.id)
        for source, takers in sorted(wanted.items()):
            if len(takers) > 1:
                self.problems.append(
                    f"{source} is listed in the aliases of {', '.join(sorted(takers))}; not merged"
                )
                continue
            self.redirects[source] = next(iter(takers))
        cyclic: set[str] = set()
        for source in sorted(self.redirects):
            seen = [source]
            current = self.redirects[source]
            while current in self.redirects and current not in seen:
                seen.append(current)
                current = self.redirects[current]
            if current in seen and current not in cyclic:  # (a loop reached again from outside it: said once)
                loop = seen[seen.index(current) :]
                cyclic.update(loop)
                self.problems.append(f"merge cycle between {', '.join(loop)}; not merged")
        for ident in cyclic:
            self.redirects.pop(ident, None)

    # -- lookups ---------------------------------------------------------------------------

    def final(self, entity_id: str) -> str:
        """Follow merges (`aliases` that list another id) to the id that absorbed `entity_id`."""
        seen = 0
        while entity_id in self.redirects and seen < 16:
            entity_id = self.redirects[entity_id]
            seen += 1
        return entity_id

    def _decide(self, ids: Iterable[str]) -> Match:
        finals = sorted({self.final(i) for i in ids})
        if len(finals) == 1:
            return Match(finals[0])
        return Match(None, tuple(finals)) if finals else NO_MATCH

    def by_name(self, name: str, *, kinds: Iterable[str] | None = None) -> Match:
        """Exact (normalized) lookup of a name, any case, restricted to `kinds` when given."""
        claims = self.names.get(name_key(name))
        if not claims:
            return NO_MATCH
        wanted = set(kinds) if kinds is not None else None
        pool = [c for c in claims if wanted is None or kind_of(c.entity_id) in wanted]
        if not pool:
            return NO_MATCH
        top = max(c.strength for c in pool)
        return self._decide(c.entity_id for c in pool if c.strength == top)

    def by_email(self, address: str) -> Match:
        return self._decide(self.emails.get(email_key(address), ()))

    def by_handle(self, handle: str) -> Match:
        for key in _handle_keys(handle):
            found = self.handles.get(key)
            if found:
                return self._decide(found)
        return NO_MATCH

    def by_link(self, target: str) -> Match:
        """A wikilink target (`entities/person/alice-chen`, `alice-chen`, `Alice Chen`); a vault's
        leaves link the same notes over and over, so the answers are remembered."""
        found = self._links.get(target)
        if found is None:
            if len(self._links) >= LINK_MEMO:
                self._links.clear()
            found = self._links[target] = self._by_link(target)
        return found

    def _by_link(self, target: str) -> Match:
        clean = target.strip()
        if clean.lower().endswith(".md"):
            clean = clean[:-3]
        found = self.by_stem.get(clean.casefold()) or self.by_stem.get(clean.rsplit("/", 1)[-1].casefold())
        if found:
            return self._decide(found)
        return self.by_name(clean.rsplit("/", 1)[-1])

    def fuzzy(self, name: str, kind: str) -> Match:
        """rapidfuzz match of a name against the names of entities of `kind` that share at least
        one content word with it (`content_words`): "Priya Ramen" finds "Priya Raman", but
        "Marie" never finds "Maria"."""
        key = normalize(name)
        if len(key) < FUZZY_MIN_CHARS or self.fuzzy_threshold > 100:
            return NO_MATCH
        shared = content_words(key)
        if not shared:
            return NO_MATCH
        with self._lock:
            cached = self._fuzzy.get((key, kind))
            if cached is not None:
                return cached
            by_word = self._choices.get(kind)
            if by_word is None:
                by_word = {}
                for k, claims in self.names.items():
                    if len(k) >= FUZZY_MIN_CHARS and any(kind_of(c.entity_id) == kind for c in claims):
                        for word in content_words(k):
                            by_word.setdefault(word, []).append(k)
                self._choices[kind] = by_word
        choices = sorted({k for word in shared for k in by_word.get(word, ())})
        found = (
            process.extract(
                key, choices, scorer=fuzz.token_sort_ratio, score_cutoff=self.fuzzy_threshold, limit=8
            )
            if choices
            else []
        )
        ids = {c.entity_id for k, _, _ in found for c in self.names[k] if kind_of(c.entity_id) == kind}
        match = self._decide(ids)
        with self._lock:
            if len(self._fuzzy) >= _FUZZY_CACHE_MAX:
                self._fuzzy.clear()
            self._fuzzy[(key, kind)] = match
        return match

    def resolve_name(self, name: str, kind: str) -> Match:
        """A name seen as `kind` (NER, authors): exact name, else fuzzy within the kind, else —
        for a person named by one word — the one person whose full name starts with it."""
        match = self.by_name(name)
        if match.entity_id is not None or match.ambiguous:
            return match
        match = self.fuzzy(name, kind)
        if match.entity_id is not None or match.ambiguous:
            return match
        if kind == "person":
            return self.given_name(name)
        # "Priya" read as a place beside the note "Priya Shah", "Acme" beside "Acme Corp": the
        # model's label for the same word varies, the one note its name starts stays
        return self.given_name(name, _LEADING_WORD_KINDS) if kind in ("org", "place") else match

    def given_name(self, name: str, kinds: tuple[str, ...] = ("person",)) -> Match:
        """"Dana" → the person whose full name (display name or an alias) is "Dana …", when
        exactly one has it; no match when several do (never guessed, and not reported: a
        shared first name is normal). With `kinds` ("person", "org"), the one entity of those
        kinds whose name starts with the word ("Acme" → Acme Corp)."""
        key = normalize(name)
        if " " in key or len(key) < GIVEN_MIN_CHARS:
            return NO_MATCH
        finals = {self.final(i) for i in self._given.get(key, ()) if kind_of(i) in kinds}
        return Match(finals.pop()) if len(finals) == 1 else NO_MATCH

    def find_names(
        self, text: str, code: list[tuple[int, int]]
    ) -> tuple[list[Span], list[tuple[str, Match]]]:
        """Registry names in running text (longest first): resolved spans, and ambiguous names.

        Case rule: a claim with `case_forms` matches only where the text has one of those forms.
        """
        if not self.names:
            return [], []
        first = self._first_words
        tokens = word_spans(text) if text.isascii() else [without_particle_token(t, first) for t in word_spans(text)]
        spans: list[Span] = []
        ambiguous: list[tuple[str, Match]] = []
        i = 0
        n = len(tokens)
        while i < n:
            longest = first.get(tokens[i][0], 0)
            if not longest:
                i += 1
                continue
            hit = 0
            for length in range(min(longest, n - i), 0, -1):
                key = " ".join(t[0] for t in tokens[i : i + length])
                claims = self.names.get(key)
                if not claims:
                    continue
                start, end = tokens[i][1], tokens[i + length - 1][2]
                if in_ranges(start, end, code):
                    continue
                surface = text[start:end]
                exact_case = " ".join(words(surface, keep_case=True))
                usable = [c for c in claims if c.fits(exact_case)]
                if not usable:
                    continue
                top = max(c.strength for c in usable)
                match = self._decide(c.entity_id for c in usable if c.strength == top)
                if match.entity_id is not None:
                    spans.append(
                        Span(start, end, surface, kind_of(match.entity_id), "registry", match.entity_id)
                    )
                else:
                    ambiguous.append((surface, match))
                hit = length
                break
            i += hit or 1
        return spans, ambiguous

    def ambiguous_names(self) -> list[dict[str, Any]]:
        """Names, addresses and handles that several entities hold with equal strength."""
        out: list[dict[str, Any]] = []
        for key, claims in sorted(self.names.items()):
            top = max(c.strength for c in claims)
            match = self._decide(c.entity_id for c in claims if c.strength == top)
            if match.ambiguous:
                out.append({"name": key, "candidates": list(match.candidates), "why": "registry"})
        for label, table in (("email", self.emails), ("handle", self.handles)):
            for key, ids in sorted(table.items()):
                match = self._decide(ids)
                if match.ambiguous:
                    out.append(
                        {
                            "name": f"{label} {key}",
                            "candidates": list(match.candidates),
                            "why": "registry",
                            "id": make_id(label, key),  # the id its mentions are indexed under
                        }
                    )
        return out


_NAME_STOPWORDS = frozenset("the and for von van der den del des les los las".split())


def content_words(key: str) -> list[str]:
    """The words of a normalized name that fuzzy matching may share (3+ characters, not
    "the", "van", …)."""
    return [w for w in key.split(" ") if len(w) >= 3 and w not in _NAME_STOPWORDS]


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*a, *b)))


def _handle_keys(handle: str) -> Iterator[str]:
    """`"slack:U01ALICE"` → `"slack:u01alice"`, `"u01alice"`; `"@alice"` → `"alice"`."""
    key = handle_key(handle)
    if not key:
        return
    yield key
    if ":" in key:
        rest = key.split(":", 1)[1].lstrip("@")
        if rest:
            yield rest

