"""Query-side entity recognition: the same pipeline as ingest, for a question."""

from __future__ import annotations

from collections import defaultdict

import duckdb

from vaultmind.entities.ids import NAME_KINDS, word_spans
from vaultmind.entities.ner import NerEngine, RawSpan
from vaultmind.entities.registry_store import load_registry
from vaultmind.entities.resolve import resolve_text
from vaultmind.entities.settings import EntitySettings
from vaultmind.entities.tables import META_FUZZY, META_NER, get_meta
from vaultmind.index.store import Index

_STOPWORDS = frozenset(
    """a about after all also an and any are as at be been but by can could did do does for from
    had has have he her him his how i if in into is it its me my no not of on or our out she so
    some than that the their them then there these they this to up us was we were what when where
    which who whom why will with would you your last next week month year today yesterday tomorrow
    said say says tell told show find meeting meetings note notes""".split()
)
_ENGINES: dict[str, NerEngine] = {}


def query_entities(
    con: duckdb.DuckDBPyConnection, text: str, *, fuzzy_threshold: float | None = None
) -> list[tuple[str, str]]:
    """The entities a query mentions, as (entity id, surface), in order of appearance.

    Uses exactly what ingest uses (normalization, registry, regex, the NER model the index
    was built with), then, for lower-case queries NER cannot read, looks the query's word
    n-grams up among the ids of known entities (`dana whitfield` → `person:dana-whitfield`). A
    surface matching entities of several kinds yields each of them; an ambiguous registry name
    yields the id it was indexed under (its own surface), never one of the candidates. Read-only.
    """
    return EntityQuery(con, fuzzy_threshold=fuzzy_threshold).find(text)


class EntityQuery:
    """Everything `query_entities` reads from the index, loaded once: the registry, the NER
    engine the index was built with, and the ids of known entities. A serving process keeps
    one per index state (`entity_query`), so a question costs no SQL at all."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, fuzzy_threshold: float | None = None):
        threshold = fuzzy_threshold if fuzzy_threshold is not None else stored_fuzzy_threshold(con)
        self.registry = load_registry(con, fuzzy_threshold=threshold)
        package = get_meta(con, META_NER) or "off"
        engine = _ENGINES.get(package)
        if engine is None:
            engine = _ENGINES[package] = NerEngine(package)
        self.engine = engine
        self.known = frozenset(str(r[0]) for r in con.execute("SELECT id FROM entities").fetchall())

    def find(self, text: str) -> list[tuple[str, str]]:
        spans = _question_spans(self.engine, text) if text.strip() else None
        resolved = resolve_text(self.registry, text, spans)
        out = [(m.entity_id, m.surface) for m in resolved.mentions]
        seen = {ident for ident, _ in out}
        taken = [(m.start, m.end) for m in resolved.mentions if m.start >= 0]
        for ident, surface in _ngram_entities(self.known, text, taken):
            if ident not in seen:
                seen.add(ident)
                out.append((ident, surface))
        return out


def entity_query(index: Index) -> EntityQuery:
    """The `EntityQuery` of `index` as it stands, rebuilt only after a committed change."""
    return index.cached("entity_query", lambda _: EntityQuery(index.con))


_SPANS: dict[tuple[str, str], list[RawSpan] | None] = {}
_SPANS_MAX = 1024


def _question_spans(engine: NerEngine, text: str) -> list[RawSpan] | None:
    """NER spans of one question (remembered: agents repeat questions); None without NER.

    The model gives the same spans as the index's cache would for the same text."""
    key = (engine.package or "off", text)
    if key in _SPANS:
        return _SPANS[key]
    found = engine.analyze([text]) if engine.model_id is not None else None
    spans = found[0] if found else None
    if len(_SPANS) >= _SPANS_MAX:
        _SPANS.pop(next(iter(_SPANS)))
    _SPANS[key] = spans
    return spans


def stored_fuzzy_threshold(con: duckdb.DuckDBPyConnection) -> float:
    """The fuzzy threshold the index was built with (the default before the first sync)."""
    value = get_meta(con, META_FUZZY)
    try:
        return float(value) if value is not None else EntitySettings().fuzzy_threshold
    except ValueError:
        return EntitySettings().fuzzy_threshold


def _ngram_entities(
    known: frozenset[str], text: str, taken: list[tuple[int, int]], max_words: int = 4
) -> list[tuple[str, str]]:
    """Known entity ids spelled by word n-grams of `text` outside the `taken` character ranges."""
    tokens = word_spans(text)
    free = [not any(s < t[2] and t[1] < e for s, e in taken) for t in tokens]
    grams: dict[str, tuple[int, int]] = {}
    for i in range(len(tokens)):
        for n in range(1, max_words + 1):
            if i + n > len(tokens) or not free[i + n - 1]:
                break
            part = tokens[i : i + n]
            if n == 1 and (len(part[0][0]) < 4 or part[0][0].isdigit()):
                continue
            if part[0][0] in _STOPWORDS or part[-1][0] in _STOPWORDS:
                continue
            grams.setdefault("-".join(t[0] for t in part), (i, i + n))
    if not grams:
        return []
    found = sorted(ident for ident in (f"{kind}:{key}" for key in grams for kind in NAME_KINDS) if ident in known)
    by_key: dict[str, list[str]] = defaultdict(list)
    for ident in found:
        by_key[ident.partition(":")[2]].append(ident)
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
