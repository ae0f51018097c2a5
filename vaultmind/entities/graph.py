"""The entity deriver: entities, occurrences and co-occurrence edges, kept equal to a cold rebuild.

Tables (migration `0003_entities`):

- `occurrences`: one row per (entity, leaf row): the first surface of the entity in the leaf,
  the leaf's note and time. A message's author is an occurrence of the leaf too. `read_as`
  (migration `0030`): the id the leaf read a name as, when its kind is settled (`kinds.py`).
- `edges`: unordered pairs `a < b` with `weight` = the number of distinct leaves mentioning both.
- `talks`: per note, pairs `a < b` with `weight` = its messages in which one replies to or mails
  the other (`talks.py`); the notes of the leaves an update derives or moves are computed again.
- `entities`: see `catalog.py`.

How a sync updates them (`EntityDeriver.apply`):

- leaves written or gone: only those leaf ids are re-derived, from the `leaves` rows as they
  now are (so a leaf id present in two notes stays right); edge weights and mention counts
  move by the difference of each leaf's entity set; entity rows change only where needed;
  the names the leaves read (before and after) are settled again (`kinds.settle`), and the
  other leaves whose occurrences that moves count in the same differences;
- entity notes changed (the registry): the leaves that can resolve differently are found
  (`changes.py`) and re-derived; when that is most of the vault, everything is recomputed;
- NER model, fuzzy threshold, extractor version or resolution rules (`registry.RULES`) changed:
  everything is recomputed (NER results come from the cache, so this costs far less than the
  first indexing);
- the mentions of the leaves a sync writes are mostly resolved where their notes were parsed
  (`prep.EntityPrep`: in the parsing workers of a large sync, with the registry committed when the
  work was handed out, without NER); such a result is used only when that registry is the one
  in force and NER has nothing for the leaf, else the leaf is resolved here.

What the rows were derived with is kept in `meta` (`tables.META_*`). The texts a sync leaves
without NER are run through the model later (`backfill.py`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from vaultmind.config import Config
from vaultmind.entities.catalog import OccRow, apply_entity_delta, refresh_entities
from vaultmind.entities.changes import affected_leaves, changed_ids, registry_from_snapshot, registry_snapshot
from vaultmind.entities.common_words import NoteWords
from vaultmind.entities.edges import move_edges
from vaultmind.entities.ids import key_of
from vaultmind.entities.kinds import settle, settles
from vaultmind.entities.leaf_reads import (
    LeafRow,
    TableTexts,
    note_authors,
    note_titles,
    note_words,
    table_leaf_rows,
)
from vaultmind.entities.ner import NerEngine
from vaultmind.entities.ner_cache import count_pending, spans_for
from vaultmind.entities.ner_process import ModelProcess
from vaultmind.entities.prep import EntityPrep, Mentions, PreparedNote, mentions_of
from vaultmind.entities.query import query_entities, stored_fuzzy_threshold
from vaultmind.entities.rederive import Steps, clear, committed, rederive, within
from vaultmind.entities.registry import RULES, Registry
from vaultmind.entities.registry_store import load_registry, recent_registry
from vaultmind.entities.settings import EntitySettings
from vaultmind.entities.tables import (
    META_FUZZY,
    META_NER,
    META_REGISTRY,
    META_REGISTRY_DIGEST,
    META_SIGNATURE,
    OCC_SCHEMA,
    columns_for,
    get_meta,
    insert,
    set_meta,
)
from vaultmind.entities.talks import insert_talks, recipient_notes, refresh_talks
from vaultmind.index.arrow import execute_with, key_table
from vaultmind.index.store import Index
from vaultmind.model import WrittenNote

__all__ = ["EntityDeriver", "LeafRow", "query_entities", "stored_fuzzy_threshold"]

log = logging.getLogger(__name__)

EXTRACTOR_VERSION = "21"  # 2: a person's title is not part of their id; 3: "› Launch" is Launch;
# 4: an author written "Chen, Alice <address>" is Alice Chen; 5: a kinship title is a title, shapes no name;
# 6: an organization, product or work has one kind across the vault (`kinds.py`); 7: no model
# guesses in a text that is no English prose (`language.py`); an acronym alone, a path, a file name
# or markup is no name (`shapes.py`); a person settles with those kinds; 8: a heading, cell or label
# of common words is no name (`extract._label_phrase`); a generated author name is no person;
# 9: a code fence ends as in CommonMark (`blocks.fence_closes`); a two-letter author ("Aa") is someone;
# 10: an interface's label in a sentence (`capitals._interface_label`), a heading over an embedded
# view, a document's part ("Title"), a word of letters in random case and a mail's transport header
# are no names; a reply's attribution names a person; a place's one-word guess settles to a person
# named in full too; 11: an organization, or a person but a full name, in the heading that is the
# note's title is no name (`capitals.in_note_title`), nor a heading over a view's part or a
# numbered step's verb; 12: an organization's one word between a determiner and a noun ("the Pro
# tier") is weak evidence (`capitals._qualifies_a_noun`); 13: … but not before a function word ("the
# Guardian as"); a mail's field named with a common word ("Received:") is a mail's only with a mail's
# value or beside its other fields; an organization's reply attribution ("Acme Corp wrote:") stays one
# 14: an organization before a verb in the past tense keeps its hit ("the Guardian reported"), and so
# does a name written in lower case only in an address; a word said to be a date ("Target is still
# Tuesday"), an organization opening a cell that goes on in lower case, a step's verb before a
# preposition, a link's claim ("[[Calmness is a superpower]]") and a person opening with an acronym are no names;
# a message's id in a quoted header is no address (`mail_headers.message_address`); an acronym used
# as a word ("the ASCII version", "some MIME?", `acronyms.py`), a placeholder author ("A", "Author 1"),
# a subject's first word before a noun, a name before "Template" in a heading, a quoted sentence read
# as a work and a paragraph of Latin filler in English prose (`language.foreign_paragraphs`) are no names;
# 15: a conversation's speakers are found by their first name read as any kind, a short form of it
# ("Mel" for Melissa) and a greeting before it ("Congrats Jolene!"); a cheer read as an organization
# ("Woohoo, thanks Emil!"), a person opening a sentence before a pronoun ("Glad you …") and a mail
# server's name ("Microsoft SMTP Server") are no names (`speakers.py`, `acronyms.mail_program`); an
# author writing from a mail system's mailbox ("Mail Delivery System <MAILER-DAEMON@…>") is no person;
# 16: a one-word guess its note writes in lower case and never capitalises inside a sentence
# ("Nature's amazing"), a word of speech ("Glad", "Wanna", "Nah"), a drawn-out word ("Awww") and a
# verb with its g dropped ("Startin'") are no names; a word of speech leading a guess is left out
# ("Glad Max": Max; `common_words.py`); 17: a name's broken byte (U+FFFD) at its edge is left out,
# and an image's URL or one over `extract.MAX_URL_CHARS` (a tracker's) is no entity; 18: an adverb
# opening a guess ("Later Jean-Luc Picard") is left out, and a person's name it led is a person's
# 19: a to-do's verb opening a guess ("Tell Luca", "Remind Maya") is left out, and what it led is a
# person when read as a place; "Merry" alone is a word of speech; a speaker spoken of by first name
# is that speaker, a mail's recipients among its people (`speakers.first_name_spans`); a one-word
# place or org guess is the one person or org note its name starts; a note's `kind` wins over its
# id's; a Korean name is found before its particle ("김민수가")
# 20: such a verb is left out of a person's or a place's guess only, not an organization's ("Contact
# Energy"); 21: who talks with whom (`talks`, migration `0041`) is derived with the rest
REBUILD_CHUNK = 2000
TARGETED_MAX_SHARE = 0.5  # a registry change touching more of the leaves than this recomputes all

class EntityDeriver:
    """`sync.Deriver` for entities; see the module docstring."""

    name = "entities"

    def __init__(
        self,
        settings: EntitySettings,
        ner: NerEngine | None = None,
        *,
        targeted_max_share: float = TARGETED_MAX_SHARE,
    ):
        self.settings = settings
        self.targeted_max_share = targeted_max_share
        self.ner = ner if ner is not None else NerEngine(settings.ner_model, batch=settings.ner_batch, config_file=settings.config_file)
        self._budget = 0  # NER texts the current apply may still run
        self.inline_ner = settings.ner_inline  # NER texts an apply runs itself (`serve`: none)
        self.last: dict[str, Any] = {}  # what the last refresh did: mode, leaves
        # (note path, leaf id) → (registry digest, content hash, author, mentions): prepared
        # results for the apply in progress
        self._ready: dict[tuple[str, str], tuple[str, str, str | None, Mentions]] = {}
        self.prepared_leaves = 0  # leaf rows derived from prepared results (so far)

    @classmethod
    def from_config(cls, config: Config) -> EntityDeriver:
        return cls(EntitySettings.from_config(config))

    def serve(self) -> None:
        """For a long-running process: the model runs in a child process that leaves when idle
        (`NerEngine.isolate`), and every new text goes to `backfill_ner` (which a daemon runs
        after a pause in saves) instead of being run inside the sync: a save is queryable
        without waiting for the model, and its people and places follow a few seconds later."""
        if self.ner.package is not None and self.ner.model_id is not None:
            self.ner.isolate(ModelProcess(self.ner.package, self.ner.batch))
        self.inline_ner = 0

    def close(self) -> None:
        """Stop the model's child process, if any."""
        self.ner.close()

    def interrupt(self) -> None:
        """Stop the model's child process at once, whatever it is doing (`NerEngine.interrupt`)."""
        self.ner.interrupt()

    # -- the Deriver protocol --------------------------------------------------------------

    def apply(
        self,
        con: duckdb.DuckDBPyConnection,
        removed_leaf_ids: Sequence[str],
        written: Sequence[WrittenNote],
        *,
        rebuild: bool,
        changed_paths: Sequence[str] = (),
        prepared: Mapping[str, PreparedNote] | None = None,
        leaves: pa.Table | None = None,
    ) -> None:
        affected = sorted(set(removed_leaf_ids) | {leaf_id for note in written for leaf_id in note.leaf_ids})
        rows = None if leaves is None else table_leaf_rows(leaves, affected)
        texts = None if leaves is None else TableTexts(leaves)
        self._ready = {}
        for path, item in (prepared or {}).items():
            if item is not None:
                digest, resolved = item
                for leaf_id, chash, author, mentions in resolved:
                    self._ready[(path, leaf_id)] = (digest, chash, author, mentions)
        try:
            self.refresh(con, affected, rebuild=rebuild, ner_budget=self.inline_ner, texts=texts, rows=rows)
        finally:
            self._ready = {}

    def preparer(self, con: duckdb.DuckDBPyConnection) -> EntityPrep:
        """`resolve_text` of each leaf without NER, with the registry `con` last read (the
        last write's: `recent_registry`); run where notes are parsed. `apply` uses a result
        when the registry in force has the same digest and NER has nothing for the leaf (the
        common case of a large first index); a registry changed since costs a re-derivation."""
        return EntityPrep(recent_registry(con, fuzzy_threshold=self.settings.fuzzy_threshold))

    def signature(self) -> str:
        data = {
            "version": EXTRACTOR_VERSION,
            # in the registry's digest too, but a digest change re-derives only the leaves whose
            # names changed: new rules must re-derive every leaf
            "rules": RULES,
            "ner": self.ner.model_id,
            "fuzzy": self.settings.fuzzy_threshold,
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode("utf-8")).hexdigest()[:32]

    def refresh(
        self,
        con: duckdb.DuckDBPyConnection,
        leaf_ids: Sequence[str],
        *,
        rebuild: bool = False,
        ner_budget: int = 0,
        texts: Mapping[str, str] | None = None,
        rows: Sequence[LeafRow] | None = None,
        words: Mapping[str, NoteWords] | None = None,
        registry: Registry | None = None,
    ) -> None:
        """Bring the rows of `leaf_ids` up to date, and everything a registry change affects.

        At most `ner_budget` texts without a cached NER result are run through the model; the
        others are derived without NER for now and picked up by `backfill_ner`. `texts`: texts
        the caller has already read, by content hash (not read again); `rows`: every `leaves`
        row of `leaf_ids`, as `_leaf_rows` gives them (not looked up again); `words`: what
        notes' texts say of their words (`leaf_reads.note_words`), read already (a step of NER
        reads them before its transaction, under a small pool: `backfill.backfill_ner`);
        `registry`: the registry of the notes as `con` sees them, where the caller knows it (a
        step of NER writes no note: `registry_store.committed_registry`), else it is read.
        """
        if registry is None:
            registry = load_registry(con, fuzzy_threshold=self.settings.fuzzy_threshold)
        signature = self.signature()
        self._budget = ner_budget
        full = rebuild or get_meta(con, META_SIGNATURE) != signature
        if not full and get_meta(con, META_REGISTRY_DIGEST) != registry.digest:
            old = registry_from_snapshot(
                get_meta(con, META_REGISTRY), fuzzy_threshold=self.settings.fuzzy_threshold
            )
            if old is None:
                full = True
            else:
                extra = affected_leaves(con, old, registry)
                total = int(con.execute("SELECT count(*) FROM leaves").fetchone()[0])  # type: ignore[index]
                if len(extra) > self.targeted_max_share * max(total, 1):
                    full = True
                else:
                    ids = sorted(set(leaf_ids) | set(extra))
                    self.update_leaves(con, registry, ids, texts)
                    refresh_talks(con, registry, recipient_notes(con, old, registry))
                    refresh_entities(con, registry, sorted(changed_ids(old, registry)))
                    self.last = {"mode": "registry", "leaves": len(ids)}
                    self._remember(con, registry, signature)
                    return
        if full:  # every step in this transaction (`rederive.py`): a stopped sliced one is moot
            self.ner.warn_if_degraded()
            self._limit_budget(con)
            clear(con)
            self._rederive(within(con), registry, signature)
        elif leaf_ids:
            self.update_leaves(con, registry, leaf_ids, texts, rows, words)
            self.last = {"mode": "leaves", "leaves": len(leaf_ids)}
        else:
            self.last = {"mode": "none", "leaves": 0}

    def catch_up(self, index: Index) -> None:
        """Before a sync's batches and NER's steps (`backfill_ner`): when what the rows are
        derived with changed (`signature`), re-derive every leaf in slices, each committed
        (`rederive.py`; one stopped between two goes on from there), rather than inside the
        transaction of the first batch or step. An index never derived is left to the sync
        (a first index)."""
        with index.lock:  # (read outside a transaction: a commit would make the readers' views stale)
            stored = index.get_meta(META_SIGNATURE)
            signature = self.signature()
            if stored is None or stored == signature:
                return
            registry = load_registry(index.con, fuzzy_threshold=self.settings.fuzzy_threshold)
            self._budget = 0  # the texts NER has not seen: to `backfill_ner`, which follows
            self.ner.warn_if_degraded()
            self._rederive(committed(index), registry, signature)

    def _rederive(self, steps: Steps, registry: Registry, signature: str) -> None:
        """Recompute every occurrence, edge and entity row from the `leaves` table, in the
        steps of `rederive.py`, where `steps` runs them. The NER budget (`_limit_budget`) holds
        for the whole re-derivation, as for any other apply: with more texts without a cached
        result than it allows, none is run here (all are left to `backfill_ner`), where slice
        by slice a short last slice had the model loaded for a handful of texts (1–2 s of a
        first index)."""

        def derive(con: duckdb.DuckDBPyConnection, ids: Sequence[str]) -> dict[str, list[Any]]:
            rows, texts = _leaf_rows_and_texts(con, ids)
            return self._derive(con, registry, rows, texts)[0]

        def finish(con: duckdb.DuckDBPyConnection) -> None:
            refresh_entities(con, registry, None)
            self._remember(con, registry, signature)

        def talk(con: duckdb.DuckDBPyConnection, notes: Sequence[str]) -> None:
            insert_talks(con, registry, notes)

        rederive(steps, f"{signature} {registry.digest}", REBUILD_CHUNK, derive, talk, finish)
        self.last = {"mode": "full", "leaves": None}

    def _remember(self, con: duckdb.DuckDBPyConnection, registry: Registry, signature: str) -> None:
        clear(con)  # a sliced re-derivation stopped midway is moot
        set_meta(con, META_SIGNATURE, signature)
        set_meta(con, META_REGISTRY_DIGEST, registry.digest)
        set_meta(con, META_REGISTRY, registry_snapshot(registry))
        set_meta(con, META_NER, self.ner.package if self.ner.package and self.ner.model_id else "off")
        set_meta(con, META_FUZZY, repr(float(self.settings.fuzzy_threshold)))

    # -- work ------------------------------------------------------------------------------

    def _limit_budget(self, con: duckdb.DuckDBPyConnection) -> None:
        """A whole re-derivation runs no NER when more texts lack a result than its budget."""
        # (a rebuild of a vault NER has seen: 400k cached texts at 50k notes, compared by their
        # 64-bit hashes in parts of the hash space)
        if self._budget and self.ner.model_id is not None and count_pending(con, self.ner.model_id) > self._budget:
            self._budget = 0

    def update_leaves(
        self,
        con: duckdb.DuckDBPyConnection,
        registry: Registry,
        leaf_ids: Sequence[str],
        texts: Mapping[str, str] | None = None,
        rows: Sequence[LeafRow] | None = None,
        words: Mapping[str, NoteWords] | None = None,
    ) -> None:
        """Re-derive the occurrences of `leaf_ids` and move edges and entities accordingly
        (`texts`, `rows`, `words`: as `refresh`)."""
        deleted = execute_with(
            con,
            "DELETE FROM occurrences WHERE leaf_id IN (SELECT k FROM _rows) RETURNING leaf_id, entity_id, surface, read_as, note_path",
            rows=key_table(leaf_ids),
        ).fetchall()
        rows_of = _leaf_rows(con, leaf_ids) if rows is None else rows
        columns, _ = self._derive(con, registry, rows_of, texts, words)
        insert(con, "occurrences", OCC_SCHEMA, columns)
        reads = [str(r[3]) for r in deleted if r[3]] + [r for r in columns["read_as"] if r]
        moved = settle(con, sorted({key_of(r) for r in reads}))
        after = {(m[0], m[4]): m[2] for m in moved}
        old_rows: list[OccRow] = [(r[0], r[1], r[2]) for r in deleted]
        new_rows: list[OccRow] = [
            (leaf, after.get((leaf, read), ident) if read else ident, surface)
            for leaf, ident, surface, read in zip(
                columns["leaf_id"], columns["entity_id"], columns["surface"], columns["read_as"], strict=True
            )
        ]
        # the notes whose talks may change: of the leaves derived (before and after), and of those moved
        notes = {str(r[4]) for r in deleted} | set(columns["note_path"]) | {r[1] for r in rows_of}
        others = sorted({m[0] for m in moved} - set(leaf_ids))
        if others:  # leaves whose names settled to another kind: their rows before and after
            before = {(m[0], m[4]): m[1] for m in moved}
            for leaf, ident, surface, read, path in execute_with(
                con,
                "SELECT leaf_id, entity_id, surface, read_as, note_path FROM occurrences WHERE leaf_id IN (SELECT k FROM _rows)",
                rows=key_table(others),
            ).fetchall():
                old_rows.append((leaf, before.get((leaf, read), ident) if read else ident, surface))
                new_rows.append((leaf, ident, surface))
                notes.add(str(path))

        move_edges(con, old_rows, new_rows)
        apply_entity_delta(con, registry, old_rows, new_rows)
        refresh_talks(con, registry, notes)

    def _derive(
        self,
        con: duckdb.DuckDBPyConnection,
        registry: Registry,
        rows: Sequence[LeafRow],
        known: Mapping[str, str] | None = None,
        words: Mapping[str, NoteWords] | None = None,
    ) -> tuple[dict[str, list[Any]], dict[str, set[str]]]:
        """Occurrence columns for `rows`, and the entity set of each leaf id. A leaf's text is
        read only when its prepared mentions cannot be used and `known` (texts by content hash)
        lacks it: at 50k notes, reading the texts of a batch's leaves scanned the whole text
        column (~110 MB of DuckDB's pool per batch); so did those of a step of background NER
        whose texts many leaves share (+80 MB)."""
        first: dict[str, tuple[str, str]] = {}  # content hash → a (leaf id, note path) holding it
        for row in rows:
            first.setdefault(row[2], (row[0], row[1]))
        known = known or {}
        texts: dict[tuple[str, str], str] = {}  # read so far (or given), by (leaf id, note path)

        def read(keys: Sequence[tuple[str, str, str]]) -> None:
            """The texts of (leaf id, note path, content hash) `keys`: given, else read."""
            unread = [(k[0], k[1]) for k in keys if k[2] not in known]
            texts.update({(k[0], k[1]): known[k[2]] for k in keys if k[2] in known})
            if unread:
                texts.update(_leaf_texts(con, unread))

        def texts_of(hashes: Sequence[str]) -> dict[str, str]:
            read([(*first[h], h) for h in hashes if first[h] not in texts])
            return {h: texts[first[h]] for h in hashes}

        spans, ran = spans_for(self.ner, con, sorted(first), texts_of, max_run=self._budget)
        self._budget = max(0, self._budget - ran)
        columns = columns_for(OCC_SCHEMA)
        per_leaf: dict[str, set[str]] = defaultdict(set)
        ready = self._ready
        digest = registry.digest
        found: dict[tuple[str, str], Mentions] = {}
        for leaf_id, note_path, chash, author, _ in rows:
            done = ready.get((note_path, leaf_id)) if ready and not spans.get(chash) else None
            if done is not None and done[0] == digest and done[1] == chash and done[2] == author:
                found[(leaf_id, note_path)] = done[3]
                self.prepared_leaves += 1
        read([(r[0], r[1], r[2]) for r in rows if (r[0], r[1]) not in found and (r[0], r[1]) not in texts])
        authors = note_authors(con, sorted({r[1] for r in rows if r[3] and (r[0], r[1]) not in found}))
        guessed = sorted({r[1] for r in rows if spans.get(r[2]) and (r[0], r[1]) not in found})
        titles = note_titles(con, guessed)
        given = words or {}
        words = {**given, **note_words(con, [path for path in guessed if path not in given])}
        for leaf_id, note_path, chash, author, ts in rows:
            mentions = found.get((leaf_id, note_path))
            if mentions is None:
                text = texts[(leaf_id, note_path)]
                mentions = mentions_of(
                    registry, note_path, text, spans.get(chash), author, authors.get(note_path, ()),
                    titles.get(note_path, ""), words.get(note_path),
                )  # fmt: skip
            for entity_id, surface in mentions:
                columns["entity_id"].append(entity_id)
                columns["leaf_id"].append(leaf_id)
                columns["note_path"].append(note_path)
                columns["surface"].append(surface)
                columns["ts"].append(ts)
                columns["read_as"].append(entity_id if settles(registry, entity_id) else None)
                per_leaf[leaf_id].add(entity_id)
        return columns, per_leaf


def _leaf_rows(con: duckdb.DuckDBPyConnection, leaf_ids: Sequence[str]) -> list[LeafRow]:
    """The `leaves` rows of `leaf_ids` (every note holding one), in a stable order."""
    rows = execute_with(
        con,
        "SELECT id, note_path, content_hash, author, ts FROM leaves WHERE id IN (SELECT k FROM _rows) "
        "ORDER BY id, note_path",
        rows=key_table(leaf_ids),
    ).fetchall()
    return [(r[0], r[1], r[2], r[3], r[4]) for r in rows]


def _leaf_rows_and_texts(
    con: duckdb.DuckDBPyConnection, leaf_ids: Sequence[str]
) -> tuple[list[LeafRow], dict[str, str]]:
    """`_leaf_rows` and the texts of those rows by content hash, in one read: a whole
    re-derivation reads the text of every leaf, and finding the texts of a slice of leaf ids
    scans the whole text column (at 50k notes ~150 MB of blocks, 2–6 s on one thread): once per
    slice rather than twice."""
    rows = execute_with(
        con,
        "SELECT id, note_path, content_hash, author, ts, text FROM leaves WHERE id IN (SELECT k FROM _rows) "
        "ORDER BY id, note_path",
        rows=key_table(leaf_ids),
    ).fetchall()
    return [(r[0], r[1], r[2], r[3], r[4]) for r in rows], {r[2]: r[5] for r in rows}


def _leaf_texts(con: duckdb.DuckDBPyConnection, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The text of each (leaf id, note path) in `keys`, looked up by id (the `leaves_id` index
    answers that in ~4 ms at 50k notes; a join on id and path, or on the content hash, scans the
    whole table: ~90 ms)."""
    rows = execute_with(
        con,
        "SELECT id, note_path, text FROM leaves WHERE id IN (SELECT k FROM _rows)",
        rows=key_table(sorted({key[0] for key in keys})),
    ).fetchall()
    wanted = set(keys)
    return {(r[0], r[1]): r[2] for r in rows if (r[0], r[1]) in wanted}
