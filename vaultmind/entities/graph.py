"""The entity deriver: entities, occurrences and co-occurrence edges, kept equal to a cold rebuild.

Tables (migration `0003_entities`):

- `occurrences`: one row per (entity, leaf row): the first surface of the entity in the leaf,
  the leaf's note and time. A message's author is an occurrence of the leaf too.
- `edges`: unordered pairs `a < b` with `weight` = the number of distinct leaves mentioning both.
- `entities`: every entity of an entity note (even with no mention) and every entity found in
  a leaf, with `mentions` = distinct leaves mentioning it.

Incremental rule: a sync hands over the leaves that went away and the notes just written. Only
those leaf ids are re-derived (from the `leaves` rows as they now are, so a leaf id present in
two notes stays right), edge weights move by the difference of their pairs, and the rows of the
entities they touch are recomputed. When the registry (the entity notes' ids, names, addresses,
handles, paths), the NER model or the matching settings change, every leaf may resolve
differently: everything is recomputed (NER results come from the cache, so this is cheap next
to the first indexing). A signature of those inputs is kept in `meta`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from itertools import combinations
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from vaultmind.config import Config
from vaultmind.entities.extract import display_of, parse_author
from vaultmind.entities.ids import NAME_KINDS, kind_of, word_spans
from vaultmind.entities.ner import NerEngine, content_hash, count_pending, pending_texts, store_spans
from vaultmind.entities.registry import Registry, load_registry
from vaultmind.entities.resolve import resolve_text
from vaultmind.entities.settings import EntitySettings
from vaultmind.index.store import Index
from vaultmind.model import ParsedNote

if TYPE_CHECKING:
    from vaultmind.memory import Memory

log = logging.getLogger(__name__)

EXTRACTOR_VERSION = "1"
META_SIGNATURE = "entities.signature"
META_NER = "entities.ner_package"
META_FUZZY = "entities.fuzzy_threshold"
REBUILD_CHUNK = 2000
MAX_ALIASES = 20

_OCC_SCHEMA = pa.schema(
    [("entity_id", pa.string()), ("leaf_id", pa.string()), ("note_path", pa.string()),
     ("surface", pa.string()), ("ts", pa.timestamp("us"))]
)  # fmt: skip
_ENTITY_SCHEMA = pa.schema(
    [("id", pa.string()), ("kind", pa.string()), ("display_name", pa.string()), ("note_path", pa.string()),
     ("aliases", pa.list_(pa.string())), ("emails", pa.list_(pa.string())), ("handles", pa.list_(pa.string())),
     ("mentions", pa.int32())]
)  # fmt: skip
_EDGE_SCHEMA = pa.schema([("a", pa.string()), ("b", pa.string()), ("d", pa.int32())])

LeafRow = tuple[str, str, str, str, str | None, datetime | None]
"""(id, note_path, text, content_hash, author, ts) as read from `leaves`."""


class EntityDeriver:
    """`sync.Deriver` for entities; see the module docstring."""

    name = "entities"

    def __init__(self, settings: EntitySettings, ner: NerEngine | None = None):
        self.settings = settings
        self.ner = ner if ner is not None else NerEngine(settings.ner_model, batch=settings.ner_batch)
        self._budget = 0  # NER texts the current apply may still run

    @classmethod
    def from_config(cls, config: Config) -> EntityDeriver:
        return cls(EntitySettings.from_config(config))

    # -- the Deriver protocol --------------------------------------------------------------

    def apply(
        self,
        con: duckdb.DuckDBPyConnection,
        removed_leaf_ids: Sequence[str],
        written: Sequence[ParsedNote],
        *,
        rebuild: bool,
    ) -> None:
        affected = sorted(set(removed_leaf_ids) | {leaf.id for note in written for leaf in note.leaves})
        self.refresh(con, affected, rebuild=rebuild, ner_budget=self.settings.ner_inline)

    def refresh(
        self, con: duckdb.DuckDBPyConnection, leaf_ids: Sequence[str], *, rebuild: bool = False, ner_budget: int = 0
    ) -> None:
        """Bring the rows of `leaf_ids` up to date (everything, when the signature changed).

        At most `ner_budget` texts without a cached NER result are run through the model; the
        others are derived without NER for now and picked up by `backfill_ner`.
        """
        registry = load_registry(con, fuzzy_threshold=self.settings.fuzzy_threshold)
        signature = self.signature(registry)
        self._budget = ner_budget
        if rebuild or get_meta(con, META_SIGNATURE) != signature:
            self.ner.warn_if_degraded()
            self.rebuild_all(con, registry)
            set_meta(con, META_SIGNATURE, signature)
            set_meta(con, META_NER, self.ner.package if self.ner.package and self.ner.model_id else "off")
            set_meta(con, META_FUZZY, repr(float(self.settings.fuzzy_threshold)))
        elif leaf_ids:
            self.update_leaves(con, registry, leaf_ids)

    def signature(self, registry: Registry) -> str:
        data = {
            "version": EXTRACTOR_VERSION,
            "registry": registry.digest,
            "ner": self.ner.model_id,
            "fuzzy": self.settings.fuzzy_threshold,
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode("utf-8")).hexdigest()[:32]

    # -- work ------------------------------------------------------------------------------

    def rebuild_all(self, con: duckdb.DuckDBPyConnection, registry: Registry) -> None:
        """Recompute every occurrence, edge and entity row from the `leaves` table."""
        con.execute("DELETE FROM occurrences")
        con.execute("DELETE FROM edges")
        con.execute("DELETE FROM entities")
        ids = [row[0] for row in con.execute("SELECT DISTINCT id FROM leaves ORDER BY id").fetchall()]
        for start in range(0, len(ids), REBUILD_CHUNK):
            rows = _leaf_rows(con, ids[start : start + REBUILD_CHUNK])
            columns, _ = self._derive(con, registry, rows)
            _insert(con, "occurrences", _OCC_SCHEMA, columns)
        con.execute(
            """
            INSERT INTO edges
            SELECT o1.entity_id, o2.entity_id, count(DISTINCT o1.leaf_id)::INTEGER
            FROM occurrences o1 JOIN occurrences o2 ON o1.leaf_id = o2.leaf_id AND o1.entity_id < o2.entity_id
            GROUP BY o1.entity_id, o2.entity_id
            """
        )
        refresh_entities(con, registry, None)

    def update_leaves(self, con: duckdb.DuckDBPyConnection, registry: Registry, leaf_ids: Sequence[str]) -> None:
        """Re-derive the occurrences of `leaf_ids` and move edges and entities accordingly."""
        _register_keys(con, "_ent_leaves", leaf_ids)
        try:
            old_rows = con.execute(
                "SELECT leaf_id, list(DISTINCT entity_id) FROM occurrences "
                "WHERE leaf_id IN (SELECT k FROM _ent_leaves) GROUP BY leaf_id"
            ).fetchall()
            con.execute("DELETE FROM occurrences WHERE leaf_id IN (SELECT k FROM _ent_leaves)")
        finally:
            con.unregister("_ent_leaves")
        old = {leaf: set(ents) for leaf, ents in old_rows}
        columns, new = self._derive(con, registry, _leaf_rows(con, leaf_ids))
        _insert(con, "occurrences", _OCC_SCHEMA, columns)

        delta: Counter[tuple[str, str]] = Counter()
        for leaf in set(old) | set(new):
            delta.update(combinations(sorted(new.get(leaf, ())), 2))
            delta.subtract(combinations(sorted(old.get(leaf, ())), 2))
        _apply_edge_delta(con, {pair: d for pair, d in delta.items() if d})

        touched: set[str] = set()
        for group in (*old.values(), *new.values()):
            touched.update(group)
        if touched:
            refresh_entities(con, registry, sorted(touched))

    def _derive(
        self, con: duckdb.DuckDBPyConnection, registry: Registry, rows: Sequence[LeafRow]
    ) -> tuple[dict[str, list[Any]], dict[str, set[str]]]:
        """Occurrence columns for `rows`, and the entity set of each leaf id."""
        spans, ran = self.ner.spans_for(con, [(row[3], row[2]) for row in rows], max_run=self._budget)
        self._budget = max(0, self._budget - ran)
        columns: dict[str, list[Any]] = {name: [] for name in _OCC_SCHEMA.names}
        per_leaf: dict[str, set[str]] = defaultdict(set)
        for leaf_id, note_path, text, chash, author, ts in rows:
            self_id = registry.by_path.get(note_path)
            resolved = resolve_text(
                registry,
                text,
                spans.get(chash),
                author=author,
                self_id=registry.final(self_id) if self_id else None,
            )
            for mention in resolved.mentions:
                columns["entity_id"].append(mention.entity_id)
                columns["leaf_id"].append(leaf_id)
                columns["note_path"].append(note_path)
                columns["surface"].append(mention.surface)
                columns["ts"].append(ts)
                per_leaf[leaf_id].add(mention.entity_id)
        return columns, per_leaf


# -- NER outside the sync --------------------------------------------------------------------


def backfill_ner(
    index: Index,
    deriver: EntityDeriver,
    *,
    batch: int = 256,
    max_texts: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> int:
    """Run NER on the leaves a sync left without it, then re-derive those leaves.

    The model runs without holding the index; each batch is then committed in its own short
    transaction, so queries and syncs go on meanwhile. Returns the number of texts analysed.
    Safe to call any time (nothing to do: returns 0); stops early when the model cannot run.
    """
    model = deriver.ner.model_id
    if model is None or not deriver.ner.available:
        return 0
    with index.lock:
        total = count_pending(index.con, model)
    if max_texts is not None:
        total = min(total, max_texts)
    done = 0
    while done < total:
        with index.lock:
            todo = pending_texts(index.con, model, min(batch, total - done))
        if not todo:
            break
        found = deriver.ner.analyze([text for _, text in todo])
        if found is None:
            break
        fresh = {h: spans for (h, _), spans in zip(todo, found, strict=True)}
        with index.transaction() as con:
            store_spans(con, model, fresh)
            _register_keys(con, "_ner_done", sorted(fresh))
            try:
                ids = [r[0] for r in con.execute(
                    "SELECT DISTINCT id FROM leaves WHERE content_hash IN (SELECT k FROM _ner_done) ORDER BY id"
                ).fetchall()]  # fmt: skip
            finally:
                con.unregister("_ner_done")
            deriver.refresh(con, ids)
        done += len(todo)
        if progress is not None:
            progress("ner", done, total)
    return done


def entity_deriver(memory: Memory) -> EntityDeriver | None:
    """The entity deriver a `Memory`'s syncer runs (None when entities are not derived)."""
    for deriver in memory.syncer.derivers:
        if isinstance(deriver, EntityDeriver):
            return deriver
    return None


def complete_ner(memory: Memory, *, progress: Callable[[str, int, int], None] | None = None) -> int:
    """`backfill_ner` for a `Memory`: NER on every leaf still waiting for it."""
    deriver = entity_deriver(memory)
    return 0 if deriver is None else backfill_ner(memory.index, deriver, progress=progress)


def ner_pending(index: Index, deriver: EntityDeriver) -> int:
    """Distinct leaf texts still waiting for NER (0 when NER is off or unavailable)."""
    model = deriver.ner.model_id
    if model is None or not deriver.ner.available:
        return 0
    with index.lock:
        return count_pending(index.con, model)


# -- rows ----------------------------------------------------------------------------------


def _leaf_rows(con: duckdb.DuckDBPyConnection, leaf_ids: Sequence[str]) -> list[LeafRow]:
    _register_keys(con, "_ent_rows", leaf_ids)
    try:
        rows = con.execute(
            "SELECT id, note_path, text, content_hash, author, ts FROM leaves "
            "WHERE id IN (SELECT k FROM _ent_rows) ORDER BY id, note_path"
        ).fetchall()
    finally:
        con.unregister("_ent_rows")
    return [(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows]


def refresh_entities(con: duckdb.DuckDBPyConnection, registry: Registry, ids: Sequence[str] | None) -> None:
    """Recompute the `entities` rows of `ids` (None: all) from the registry and `occurrences`."""
    if ids is None:
        con.execute("DELETE FROM entities")
        where = ""
        wanted: Iterable[str] = set(registry.entries)
    else:
        _register_keys(con, "_ent_ids", ids)
        con.execute("DELETE FROM entities WHERE id IN (SELECT k FROM _ent_ids)")
        where = "WHERE entity_id IN (SELECT k FROM _ent_ids)"
        wanted = {i for i in ids if i in registry.entries}
    try:
        mentions = dict(
            con.execute(f"SELECT entity_id, count(DISTINCT leaf_id) FROM occurrences {where} GROUP BY entity_id").fetchall()
        )
        surfaces: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for ident, surface, n in con.execute(
            f"SELECT entity_id, surface, count(*) FROM occurrences {where} GROUP BY entity_id, surface"
        ).fetchall():
            surfaces[ident].append((surface, n))
    finally:
        if ids is not None:
            con.unregister("_ent_ids")
    columns: dict[str, list[Any]] = {name: [] for name in _ENTITY_SCHEMA.names}
    for ident in sorted(set(wanted) | set(mentions)):
        entry = registry.entries.get(ident)
        if entry is not None:
            values: tuple[Any, ...] = (
                entry.id, entry.kind, entry.display_name, entry.note_path,
                list(entry.aliases), list(entry.emails), list(entry.handles),
            )  # fmt: skip
        else:
            display, aliases, emails = _describe(surfaces.get(ident, []))
            values = (ident, kind_of(ident), display or ident, None, aliases, emails, [])
        for name, value in zip(_ENTITY_SCHEMA.names, (*values, int(mentions.get(ident, 0))), strict=True):
            columns[name].append(value)
    _insert(con, "entities", _ENTITY_SCHEMA, columns)


def _describe(counts: list[tuple[str, int]]) -> tuple[str, list[str], list[str]]:
    """Display name (most frequent form), other forms, and addresses of an extracted entity."""
    forms: Counter[str] = Counter()
    emails: set[str] = set()
    for surface, n in counts:
        forms[display_of(surface).lstrip("#") or surface] += n
        author = parse_author(surface) if surface.endswith(">") else None
        if author is not None and author.email:
            emails.add(author.email.lower())
    ranked = sorted(forms.items(), key=lambda item: (-item[1], item[0]))
    if not ranked:
        return "", [], sorted(emails)
    display = ranked[0][0]
    aliases = [form for form, _ in ranked[1 : 1 + MAX_ALIASES]]
    return display, aliases, sorted(emails)


def _apply_edge_delta(con: duckdb.DuckDBPyConnection, delta: dict[tuple[str, str], int]) -> None:
    if not delta:
        return
    pairs = sorted(delta)
    table = pa.table(
        {
            "a": pa.array([p[0] for p in pairs], pa.string()),
            "b": pa.array([p[1] for p in pairs], pa.string()),
            "d": pa.array([delta[p] for p in pairs], pa.int32()),
        },
        schema=_EDGE_SCHEMA,
    )
    con.register("_edge_delta", table)
    try:
        con.execute("UPDATE edges SET weight = edges.weight + d.d FROM _edge_delta d WHERE edges.a = d.a AND edges.b = d.b")
        con.execute(
            "INSERT INTO edges SELECT d.a, d.b, d.d FROM _edge_delta d "
            "WHERE d.d > 0 AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.a = d.a AND e.b = d.b)"
        )
        con.execute(
            "DELETE FROM edges WHERE weight <= 0 AND EXISTS "
            "(SELECT 1 FROM _edge_delta d WHERE edges.a = d.a AND edges.b = d.b)"
        )
    finally:
        con.unregister("_edge_delta")


def _register_keys(con: duckdb.DuckDBPyConnection, name: str, keys: Sequence[str]) -> None:
    con.register(name, pa.table({"k": pa.array(list(keys), pa.string())}))


def _insert(con: duckdb.DuckDBPyConnection, table: str, schema: pa.Schema, columns: dict[str, list[Any]]) -> None:
    if not columns[schema.names[0]]:
        return
    data = pa.table({name: columns[name] for name in schema.names}, schema=schema)
    view = f"_ent_ins_{table}"
    con.register(view, data)
    try:
        cols = ", ".join(schema.names)
        con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {view}")
    finally:
        con.unregister(view)


# -- meta ----------------------------------------------------------------------------------


def get_meta(con: duckdb.DuckDBPyConnection, key: str) -> str | None:
    row = con.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
    return None if row is None else str(row[0])


def set_meta(con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])


# -- the read side -------------------------------------------------------------------------

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
    was built with — from the cache when the text was seen, never written to it), then, for
    lower-case queries NER cannot read, looks the query's word n-grams up among the ids of
    known entities (`dana whitfield` → `person:dana-whitfield`). A surface matching entities of
    several kinds yields each of them; an ambiguous registry name yields the id it was indexed
    under (its own surface), never one of the candidates.
    """
    threshold = fuzzy_threshold if fuzzy_threshold is not None else stored_fuzzy_threshold(con)
    registry = load_registry(con, fuzzy_threshold=threshold)
    package = get_meta(con, META_NER) or "off"
    engine = _ENGINES.get(package)
    if engine is None:
        engine = _ENGINES[package] = NerEngine(package)
    spans = engine.spans_for(con, [(content_hash(text), text)], write_cache=False)[0] if text.strip() else {}
    resolved = resolve_text(registry, text, spans.get(content_hash(text)))
    out = [(m.entity_id, m.surface) for m in resolved.mentions]
    seen = {ident for ident, _ in out}
    for ident, surface in _ngram_entities(con, text):
        if ident not in seen:
            seen.add(ident)
            out.append((ident, surface))
    return out


def stored_fuzzy_threshold(con: duckdb.DuckDBPyConnection) -> float:
    """The fuzzy threshold the index was built with (the default before the first sync)."""
    value = get_meta(con, META_FUZZY)
    try:
        return float(value) if value is not None else EntitySettings().fuzzy_threshold
    except ValueError:
        return EntitySettings().fuzzy_threshold


def _ngram_entities(con: duckdb.DuckDBPyConnection, text: str, max_words: int = 4) -> list[tuple[str, str]]:
    tokens = list(word_spans(text))
    grams: dict[str, tuple[int, int]] = {}
    for i in range(len(tokens)):
        for n in range(1, max_words + 1):
            if i + n > len(tokens):
                break
            part = tokens[i : i + n]
            if n == 1 and (len(part[0][0]) < 4 or part[0][0] in _STOPWORDS or part[0][0].isdigit()):
                continue
            if part[0][0] in _STOPWORDS or part[-1][0] in _STOPWORDS:
                continue
            grams.setdefault("-".join(t[0] for t in part), (i, i + n))
    if not grams:
        return []
    keys = sorted(grams)
    candidates = [f"{kind}:{key}" for key in keys for kind in NAME_KINDS]
    _register_keys(con, "_q_ids", candidates)
    try:
        found = [row[0] for row in con.execute("SELECT id FROM entities WHERE id IN (SELECT k FROM _q_ids) ORDER BY id").fetchall()]
    finally:
        con.unregister("_q_ids")
    by_key: dict[str, list[str]] = defaultdict(list)
    for ident in found:
        by_key[ident.partition(":")[2]].append(ident)
    # longest first, no overlaps, then in order of appearance
    chosen: list[tuple[int, int, str]] = []
    for key in sorted(by_key, key=lambda k: (-(grams[k][1] - grams[k][0]), grams[k][0])):
        lo, hi = grams[key]
        if all(hi <= c_lo or c_hi <= lo for c_lo, c_hi, _ in chosen):
            chosen.append((lo, hi, key))
    out: list[tuple[str, str]] = []
    for lo, hi, key in sorted(chosen):
        surface = text[tokens[lo][1] : tokens[hi - 1][2]]
        out.extend((ident, surface) for ident in by_key[key])
    return out
