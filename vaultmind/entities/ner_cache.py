"""The NER results an index keeps: `ner_cache` rows by (content hash, model id), the leaf texts
still waiting for a model, and `spans_for`, which takes a text's spans from the cache or runs
the model on it (`ner.NerEngine`). Kept apart from the model so that the process running it
(`ner.NerEngine.isolate`) imports neither DuckDB nor Arrow."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from vaultmind.entities.ner import NerEngine, RawSpan
from vaultmind.index.arrow import execute_with, key_table
from vaultmind.index.hash_slices import count_in_slices


def spans_for(
    engine: NerEngine,
    con: duckdb.DuckDBPyConnection,
    hashes: Sequence[str],
    texts: Callable[[Sequence[str]], Mapping[str, str]],
    *,
    write_cache: bool = True,
    max_run: int | None = None,
) -> tuple[dict[str, list[RawSpan]], int]:
    """NER spans for content hashes, from the cache, else from `engine`'s model (`texts` gives
    the texts of the hashes to run; it is called only when there are any).

    The uncached texts are run when there are at most `max_run` of them (None: no limit),
    else none is; texts not run are absent from the result, as are all uncached ones when
    the model is unavailable. New results are added to
    `ner_cache` when `write_cache`. Returns (spans by hash, number of texts run).
    """
    if engine.model_id is None or not hashes:
        return {}, 0
    keys = sorted(set(hashes))
    result = cached_spans(con, engine.model_id, keys)
    keys = [h for h in keys if h not in result]
    if max_run is not None and len(keys) > max_run:
        keys = []  # a large import: all of it to `backfill_ner`; the model is not even loaded
    if not keys:
        return result, 0
    todo = texts(keys)
    found = engine.analyze([todo[k] for k in keys])
    if found is None:
        return result, 0
    fresh = dict(zip(keys, found, strict=True))
    result.update(fresh)
    if write_cache:
        store_spans(con, engine.model_id, fresh)
    return result, len(keys)


def encode_spans(spans: Sequence[RawSpan]) -> str:
    return json.dumps([[s, e, label] for s, e, label in spans], separators=(",", ":"))


def decode_spans(data: str) -> list[RawSpan]:
    try:
        raw = json.loads(data)
    except ValueError:
        return []
    out: list[RawSpan] = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, list) and len(item) == 3:
            out.append((int(item[0]), int(item[1]), str(item[2])))
    return out


# leaves (`l`) whose text has no NER result for the model (the parameter): an anti join on the
# cached hashes, not a correlated NOT EXISTS, which DuckDB answers by holding every leaf's hash;
# on their 64-bit hashes (`hash`), not the 64-character ones: the join's table holds every cached
# text of the model, ~40 MB late in a 50k catch-up on the full hashes. Two texts whose 64-bit
# hashes collide (odds ~1e-8 at 430k texts) would leave the second without NER, as
# `count_pending` would not count it either.
_NO_NER_YET = "ANTI JOIN (SELECT hash(content_hash) AS h FROM ner_cache WHERE model = ?) c ON c.h = hash(l.content_hash)"


# rows read per pending leaf at most, when reading every row of their range (a catch-up at 50k
# notes reads ~1.5; streaming the range in batches instead held more, not less)
PENDING_SPAN = 2


def pending_texts(con: duckdb.DuckDBPyConnection, model: str, limit: int) -> list[tuple[str, str]]:
    """(content hash, text) of the leaves among the first `limit` found with no NER result for
    `model` yet (as DuckDB's scan meets them: mostly the first in the file), each hash once, by
    hash. An anti join that stops at `limit` rows, then the texts of the rows it found
    (`leaf_rows_at`). At 50k notes, finding every pending hash first (a correlated `NOT
    EXISTS`, which DuckDB answers by holding every leaf's hash) took ~130 MB and 0.2 s on each
    fetch of the background catch-up; this takes 8 MB and 0.03 s. Grouping the texts of every
    pending leaf had filled DuckDB's pool (~490 MB), and taking the texts of hashes spread over
    the whole file read the whole text column (+80 MB). For 4,096 texts, reading their range
    and dropping the other rows here takes +11 MB where filtering the range by hash in DuckDB
    (a join against its hash column, and grouping the texts) took +62 MB."""
    found = con.execute(
        f"SELECT l.content_hash, l.rowid FROM leaves l {_NO_NER_YET} LIMIT ?", [model, limit]
    ).fetchall()
    texts: dict[str, str] = {}
    for h, text in leaf_rows_at(con, "content_hash, text", sorted(row for _, row in found)):
        texts.setdefault(h, text)  # a hash is of its text: any row will do
    return sorted(texts.items())


def leaf_rows_at(con: duckdb.DuckDBPyConnection, columns: str, rowids: Sequence[int]) -> list[tuple[Any, ...]]:
    """`columns` of the `leaves` rows at `rowids` (ascending, distinct). When their range holds
    few other rows (at most `PENDING_SPAN` per row asked for, as a catch-up's pending leaves,
    met in the order they were written) every row of it is read and the others dropped here;
    otherwise DuckDB joins the row numbers."""
    if not rowids:
        return []
    low, high = rowids[0], rowids[-1]
    if high - low < PENDING_SPAN * len(rowids):
        keep = set(rowids)
        in_range = con.execute(f"SELECT rowid, {columns} FROM leaves WHERE rowid BETWEEN ? AND ?", [low, high])
        return [row[1:] for row in in_range.fetchall() if row[0] in keep]
    return execute_with(
        con,
        f"SELECT {columns} FROM leaves WHERE rowid IN (SELECT k FROM _rows)",
        rows=key_table(rowids, type=pa.int64()),
    ).fetchall()


def count_pending(con: duckdb.DuckDBPyConnection, model: str) -> int:
    """Distinct leaf texts with no NER result for `model`. A count, so the hashes are compared
    by their 64-bit hash (at 50k notes +20 MB instead of +56 MB while a daemon answers
    `status`; two of 430k hashes colliding, which could only lower the count, has odds of
    about 1e-8), in parts of the hash space (`count_in_slices`: +21 → +6–12 MB)."""
    return count_in_slices(
        con,
        "SELECT count(DISTINCT hash(l.content_hash)) FROM leaves l ANTI JOIN "
        "(SELECT hash(content_hash) AS h FROM ner_cache WHERE model = ? AND hash(content_hash) % {slices} = {slice}) c "
        "ON c.h = hash(l.content_hash) WHERE hash(l.content_hash) % {slices} = {slice}",
        [model],
    )


def cached_spans(
    con: duckdb.DuckDBPyConnection, model: str, hashes: Sequence[str]
) -> dict[str, list[RawSpan]]:
    if not hashes:
        return {}
    rows = execute_with(
        con,
        "SELECT content_hash, any_value(spans) FROM ner_cache WHERE model = ? "
        "AND content_hash IN (SELECT k FROM _rows) GROUP BY content_hash",
        [model],
        rows=key_table(hashes),
    ).fetchall()
    return {h: decode_spans(s) for h, s in rows}


def store_spans(con: duckdb.DuckDBPyConnection, model: str, spans: dict[str, list[RawSpan]]) -> None:
    if not spans:
        return
    keys = sorted(spans)
    table = pa.table(
        {
            "content_hash": pa.array(keys, pa.string()),
            "model": pa.array([model] * len(keys), pa.string()),
            "spans": pa.array([encode_spans(spans[k]) for k in keys], pa.string()),
        }
    )
    execute_with(
        con,
        "INSERT INTO ner_cache SELECT n.content_hash, n.model, n.spans FROM _rows n WHERE NOT EXISTS "
        "(SELECT 1 FROM ner_cache c WHERE c.content_hash = n.content_hash AND c.model = n.model)",
        rows=table,
    )
