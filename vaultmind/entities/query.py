"""Query-side entity recognition: the same normalization and registry as ingest, for a question."""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise

import duckdb

from vaultmind.calendar_names import MONTHS, WEEKDAYS
from vaultmind.entities.ids import NAME_KINDS, people_by_first_name, word_spans
from vaultmind.entities.registry_store import load_registry
from vaultmind.entities.resolve import resolve_author, resolve_text
from vaultmind.entities.settings import EntitySettings
from vaultmind.entities.tables import META_FUZZY, get_meta
from vaultmind.index.store import Index

_STOPWORDS = frozenset(
    """a about after all also an and any are as at be been but by can could did do does for from
    had has have he her him his how i if in into is it its me my no not of on or our out she so
    some than that the their them then there these they this to up us was we were what when where
    which who whom why will with would you your last next week month year today yesterday tomorrow
    said say says tell told show find meeting meetings note notes""".split()
)
# a month's or a day's name is written with its capital whatever it means: "the March parade",
# "what did we decide for May?" name no Bill March, no Brian May
_CALENDAR = frozenset((*MONTHS, *WEEKDAYS))


def query_entities(
    con: duckdb.DuckDBPyConnection, text: str, *, fuzzy_threshold: float | None = None
) -> list[tuple[str, str]]:
    """The entities a query mentions, as (entity id, surface), in order of appearance.

    Uses what ingest uses except its NER model (normalization, registry, regex), then looks the
    query's word n-grams up among the ids of known entities (`dana whitfield` →
    `person:dana-whitfield`, `Ned` → `person:ned`). A surface matching entities of several
    kinds yields each of them; an ambiguous registry name yields the id it was indexed under
    (its own surface), never one of the candidates. Read-only.

    No NER model runs on a question: an entity the index does not know cannot select a leaf,
    and every known one is found by its name. On the LoCoMo dev split the walk ranks the same
    with the model and without it (docs/eval.md), a question costs ~3 ms less, and a serving
    process never loads spaCy (~110 MB) to read questions.
    """
    return EntityQuery(con, fuzzy_threshold=fuzzy_threshold).find(text)


class EntityQuery:
    """Everything `query_entities` reads from the index, loaded once: the registry and the ids
    of known entities. A serving process keeps one per index state (`entity_query`), so a
    question costs no SQL at all."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, fuzzy_threshold: float | None = None):
        threshold = fuzzy_threshold if fuzzy_threshold is not None else stored_fuzzy_threshold(con)
        self.registry = load_registry(con, fuzzy_threshold=threshold)
        self.known = frozenset(str(r[0]) for r in con.execute("SELECT id FROM entities").fetchall())
        self.first_names = person_words(self.known)

    def find(self, text: str) -> list[tuple[str, str]]:
        resolved = resolve_text(self.registry, text, None)
        out = [(m.entity_id, m.surface) for m in resolved.mentions]
        seen = {ident for ident, _ in out}
        taken = [(m.start, m.end) for m in resolved.mentions if m.start >= 0]
        for ident, surface in _ngram_entities(self.known, text, taken, self.first_names):
            if ident not in seen:
                seen.add(ident)
                out.append((ident, surface))
        return out


    def author_entity(self, author: str) -> str | None:
        """The entity a message's author resolves to, as ingest resolves it (registry names,
        aliases, emails and handles)."""
        return resolve_author(self.registry, author, [])


def entity_query(index: Index) -> EntityQuery:
    """The `EntityQuery` of `index` as it stands, rebuilt only after a committed change."""
    return index.cached("entity_query", lambda _: EntityQuery(index.con))


def stored_fuzzy_threshold(con: duckdb.DuckDBPyConnection) -> float:
    """The fuzzy threshold the index was built with (the default before the first sync)."""
    value = get_meta(con, META_FUZZY)
    try:
        return float(value) if value is not None else EntitySettings().fuzzy_threshold
    except ValueError:
        return EntitySettings().fuzzy_threshold


def first_names(known: frozenset[str]) -> dict[str, str]:
    """The first word of each known person's id that no other person's id starts with
    ("marco" → `person:marco-ruiz`): a question says "Marco", the index knows Marco Ruiz."""
    return {first: idents[0] for first, idents in people_by_first_name(known).items() if len(idents) == 1}


def person_words(known: frozenset[str]) -> dict[str, str]:
    """The words that name one known person alone: their first name (`first_names`), or the
    last word of their id when no other person's id ends with it and none starts with it
    ("okafor" → `person:helen-okafor`): "what is in Okafor's team?" names Helen Okafor, and
    "Chen", the surname of three, names none of them. A surname that is a month's or a day's
    name ("May", "March") names no one alone, nor does the last word of an id that is not all
    words of letters (`person:retro-3-march`, a heading read as a name)."""
    lasts: dict[str, list[str]] = defaultdict(list)
    starts: set[str] = set()
    for ident in known:
        kind, _, slug = ident.partition(":")
        if kind == "person" and "-" in slug:
            parts = slug.split("-")
            if all(part.isalpha() for part in parts) and parts[-1] not in _CALENDAR:
                lasts[parts[-1]].append(ident)
            starts.add(parts[0])
    surnames = {last: idents[0] for last, idents in lasts.items() if len(idents) == 1 and last not in starts}
    return {**surnames, **first_names(known)}


def _as_name(text: str, token: tuple[str, int, int], *, alone: bool) -> bool:
    """Whether a stop word of `text` is written as a name ("What did Will say?"): capitalised,
    and, `alone`, not the first word of a sentence ("Will you come?")."""
    if not text[token[1]].isupper():
        return False
    before = text[: token[1]].rstrip()
    return not alone or (bool(before) and before[-1] not in ".!?:;\"“(")


def _slug_of(tokens: list[tuple[str, int, int]]) -> str:
    """The id key the words `tokens` spell: "-" between words, none between the characters of
    one run of a script written without spaces (`word_spans` cuts "李明" in two; its id is
    `person:李明`)."""
    out = [tokens[0][0]]
    for before, token in pairwise(tokens):
        out.append(("" if before[2] == token[1] else "-") + token[0])
    return "".join(out)


def _ngram_entities(
    known: frozenset[str],
    text: str,
    taken: list[tuple[int, int]],
    firsts: dict[str, str] | None = None,
    max_words: int = 4,
) -> list[tuple[str, str]]:
    """Known entity ids spelled by word n-grams of `text` outside the `taken` character ranges.
    A single word needs four letters, or three and a capital; one written as a name that is the
    first name of exactly one known person, or a surname only they have (`firsts`:
    `person_words`), names that person too. A stop word counts
    only written as a name (`_as_name`: "Will" in "What did Will say?", not "will")."""
    tokens = word_spans(text)
    free = [not any(s < t[2] and t[1] < e for s, e in taken) for t in tokens]
    grams: dict[str, tuple[int, int]] = {}
    for i in range(len(tokens)):
        for n in range(1, max_words + 1):
            if i + n > len(tokens) or not free[i + n - 1]:
                break
            part = tokens[i : i + n]
            if n == 1 and (part[0][0].isdigit() or len(part[0][0]) < (3 if text[part[0][1]].isupper() else 4)):
                continue  # a short word names an entity only when written as a name ("Ned", not "ned")
            if not all(_as_name(text, t, alone=n == 1) for t in {part[0], part[-1]} if t[0] in _STOPWORDS):
                continue
            grams.setdefault(_slug_of(part), (i, i + n))
    if not grams:
        return []
    found = sorted(ident for ident in (f"{kind}:{key}" for key in grams for kind in NAME_KINDS) if ident in known)
    by_key: dict[str, list[str]] = defaultdict(list)
    for ident in found:
        by_key[ident.partition(":")[2]].append(ident)
    for key, (lo, hi) in grams.items():
        person = (firsts or {}).get(key)
        if person is not None and hi - lo == 1 and text[tokens[lo][1]].isupper() and person not in by_key[key]:
            by_key[key].append(person)
            # and the entities of other kinds known by the person's whole name, as the whole name
            # would have named them ("Okafor" names `place:helen-okafor`, a mention the NER model
            # took for a place, as "Helen Okafor" does)
            slug = person.partition(":")[2]
            by_key[key].extend(o for kind in NAME_KINDS if (o := f"{kind}:{slug}") in known and o not in by_key[key])
    by_key = defaultdict(list, {key: idents for key, idents in by_key.items() if idents})
    chosen: list[tuple[int, int, str]] = []  # longest first, no overlaps
    for key in sorted(by_key, key=lambda k: (-(grams[k][1] - grams[k][0]), grams[k][0])):
        lo, hi = grams[key]
        if all(hi <= c_lo or c_hi <= lo for c_lo, c_hi, _ in chosen):
            chosen.append((lo, hi, key))
    out: list[tuple[str, str]] = []
    for lo, hi, key in sorted(chosen):
        surface = text[tokens[lo][1] : tokens[hi - 1][2]]
        out.extend((ident, surface) for ident in by_key[key])
    return out
