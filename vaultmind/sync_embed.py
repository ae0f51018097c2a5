"""The vectors of the leaves a sync wrote: every leaf whose (content hash, model) has no vector
yet is embedded and its vector stored (cached by content hash + model id, so a rename or a
reindex never embeds again)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from vaultmind.embed.base import Embedder
from vaultmind.errors import EmbedError
from vaultmind.index.row_groups import fill_last_group
from vaultmind.index.store import Index
from vaultmind.index.vector_codec import as_stored, stored_vectors
from vaultmind.markdown.tokens import MAX_CHARS_PER_TOKEN
from vaultmind.model import Progress
from vaultmind.sync_write import drop_written_blocks, insert_rows

EMBED_FETCH_ROWS = 8_192  # leaf rows whose missing vectors are read, embedded and written at a time
LOOKUP_MEMORY_LIMIT = "16MB"  # DuckDB's pool while a save looks up which of its texts have a vector
BACKLOG_MEMORY_LIMIT = "16MB"  # DuckDB's pool while a whole-vault sync counts the texts without one


class DimensionChanged(EmbedError):
    """The model answered vectors of another dimension than those stored for it (a model
    replaced behind its name, say by `ollama pull`): its stored vectors were dropped, and every
    text is to be embedded again."""

    def __init__(self, model: str, old: int, new: int):
        super().__init__(
            f"{model} now answers {new}-d vectors, the index held {old}-d ones: they were dropped and every text is embedded again"
        )


def drop_other_widths(index: Index, model: str, width: int) -> int | None:
    """Drop `model`'s stored vectors whose dimension is not `width`; the dimension of one of
    them (None: there were none, nothing dropped). A lookup of the small `dim` column, once
    per open index and dimension (`Index.vector_widths`): not on every save."""
    if index.vector_widths.get(model) == width:
        return None
    row = index.query("SELECT dim FROM embeddings WHERE model = ? AND dim <> ? LIMIT 1", [model, width])
    if row:
        with index.transaction() as con:
            con.execute("DELETE FROM embeddings WHERE model = ? AND dim <> ?", [model, width])
    index.vector_widths[model] = width
    return int(row[0][0]) if row else None


def drop_other_windows(index: Index, embedder: Embedder) -> int:
    """Drop the stored vectors of texts the model now reads in other windows than when they
    were embedded; returns how many. An embedder that cuts long texts by a window it learns
    or is told (`window_tokens`: Ollama's, whose context a setting or a pulled model changes)
    has the window its vectors were made with kept in `meta`: when it differs, a text longer
    than the smaller of the two was read otherwise, and is embedded again; none with no window
    kept (vectors of before windows: their texts were read up to Ollama's context alone). A
    text that fits both is sent the same, and keeps its vector. Picked by their counted tokens
    with a margin (a text dropped that did fit only gets its same vector again)."""
    window = getattr(embedder, "window_tokens", None)
    if not isinstance(window, int):
        return 0
    key = f"embed_window:{embedder.model_id}"
    kept = index.get_meta(key)
    if kept == str(window):
        return 0
    bound = window if kept is None or not kept.isdigit() else min(window, int(kept))
    with index.transaction() as con:
        dropped = con.execute(
            """DELETE FROM embeddings WHERE model = ? AND content_hash IN (
                   SELECT content_hash FROM leaves WHERE token_count > ? OR length(text) > ?)""",
            [embedder.model_id, bound * 3 // 4, bound * MAX_CHARS_PER_TOKEN],
        ).fetchone()
        index.set_meta(con, key, str(window))
    return int(dropped[0]) if dropped else 0


def adopt_former_ids(index: Index, embedder: Embedder) -> int:
    """Take the vectors stored under the model's former ids (`former_ids`, when it has any) as
    its own, those of texts without one: the same model's vectors are not embedded again.
    Returns how many were taken."""
    former = list(getattr(embedder, "former_ids", ()))
    if not former or not index.scalar("SELECT count(*) FROM embeddings WHERE list_contains(?::VARCHAR[], model)", [former]):
        return 0
    with index.transaction() as con:
        con.execute(
            """DELETE FROM embeddings WHERE list_contains(?::VARCHAR[], model)
               AND content_hash IN (SELECT content_hash FROM embeddings WHERE model = ?)""",
            [former, embedder.model_id],
        )
        taken = con.execute(
            "UPDATE embeddings SET model = ? WHERE list_contains(?::VARCHAR[], model)", [embedder.model_id, former]
        ).fetchone()
    return int(taken[0]) if taken else 0


def embed_missing(
    index: Index,
    embedder: Embedder,
    batch: int,
    progress: Progress | None,
    only: dict[str, str] | None = None,
    *,
    into: dict[str, npt.NDArray[np.float32]] | None = None,
    fill_groups: bool = False,
) -> int:
    """Embed every leaf whose (content hash, model) has no vector yet. Returns how many.

    `only` (texts by content hash: the leaves an apply just wrote) limits the work to
    them — one lookup of their hashes instead of a scan of every leaf, which at 400k
    leaves took over a second per save. `into` receives the vectors embedded for them,
    by content hash, as stored (the resident vectors then need not read them back).
    Raises `DimensionChanged` (nothing of the batch stored) when the model's vectors are
    not of the dimension of those stored for it.

    Within a whole-vault load's transaction, or with `fill_groups` (the vectors of a large sync,
    whose checkpoint waits for them), the vectors of the last part-filled row group of
    `embeddings` are moved ahead of the new ones (`row_groups.fill_last_group`), so that the
    checkpoint does not rewrite that group in memory. They are moved before the first batch
    is embedded: moved after it, the move's blocks came on top of a static model's tables
    (at 50k notes the daemon's start-up on an upgraded index peaked there, 474 MiB)."""
    model = embedder.model_id
    if only is not None:
        if not only:
            return 0
        have = stored_hashes(index, model, only)
        todo = sorted((h, text) for h, text in only.items() if h not in have)
    else:
        total = backlog_size(index, model)
        if not total:
            return 0
        if progress:
            progress("embed", 0, total)
        if index.in_bulk or fill_groups:
            fill_last_group(index, "embeddings", total)
            drop_written_blocks(index)  # a load's full row groups are written as they fill
        done = 0
        end = int(index.scalar("SELECT coalesce(max(rowid) + 1, 0) FROM leaves"))
        for start in range(0, end, EMBED_FETCH_ROWS):
            todo = index.query(
                """SELECT l.content_hash, any_value(l.text) FROM leaves l
                   WHERE l.rowid >= ? AND l.rowid < ? AND NOT EXISTS (
                       SELECT 1 FROM embeddings e WHERE e.content_hash = l.content_hash AND e.model = ?)
                   GROUP BY l.content_hash ORDER BY l.content_hash""",
                [start, start + EMBED_FETCH_ROWS, model],
            )
            done = _embed_rows(index, embedder, todo, done, total, batch, progress)
            drop_written_blocks(index)
        return done
    if progress and todo:
        progress("embed", 0, len(todo))
    return _embed_rows(index, embedder, todo, 0, len(todo), batch, progress, into)


def backlog_size(index: Index, model: str) -> int:
    """How many distinct texts of `leaves` have no vector for `model` (hashes only: selecting
    the texts too read the whole text column of `leaves`, though almost always nothing is
    missing). An anti join, not a correlated NOT EXISTS: DuckDB answers that by holding the
    hash of every leaf (at 50k notes +180 MB and 0.28 s on every reconcile of the daemon).
    Outside a load it runs on one DuckDB thread under a small pool (`Index.small_pool_read`):
    the join's table of every vector's hash then spills instead of adding to what a serving
    daemon holds. At 50k notes, in process, nothing missing: +67 MiB and 0.5–0.8 s under the
    full pool, +18–20 MiB and 1.7–2.4 s under this one; the daemon's whole-vault reconcile
    after a start-up on an upgraded index peaked here, above its loaded resident structures."""

    def count() -> int:
        return int(
            index.scalar(
                """SELECT count(DISTINCT l.content_hash) FROM leaves l
                   ANTI JOIN (SELECT content_hash FROM embeddings WHERE model = ?) e
                        ON e.content_hash = l.content_hash""",
                [model],
            )
        )

    return count() if index.in_bulk else index.small_pool_read(count, BACKLOG_MEMORY_LIMIT)


def stored_hashes(index: Index, model: str, hashes: Iterable[str]) -> set[str]:
    """Those of `hashes` whose vector for `model` is stored. There is no index on the hash to
    look them up by: the lookup scans the table's hash column (~14 MiB at 50k notes), on one
    DuckDB thread under a small pool (`Index.small_pool_read`), so that its blocks are dropped
    as the scan moves on instead of all staying cached until the save's pass drops them: in
    process at 50k notes, the lookup's own rise of the RSS ~16.8 → ~6.5 MiB."""
    wanted = "\x1f".join(sorted(hashes))
    if not wanted:
        return set()

    def read() -> set[str]:
        rows = index.query(
            """SELECT content_hash FROM embeddings
               WHERE model = ? AND content_hash IN (SELECT unnest(string_split(?, chr(31))))""",
            [model, wanted],
        )
        return {str(row[0]) for row in rows}

    return index.small_pool_read(read, LOOKUP_MEMORY_LIMIT)


def _embed_rows(
    index: Index,
    embedder: Embedder,
    todo: Sequence[tuple[str, str]],
    done: int,
    total: int,
    batch: int,
    progress: Progress | None,
    into: dict[str, npt.NDArray[np.float32]] | None = None,
) -> int:
    """Embed and store (content hash, text) rows in batches; returns `done` plus their count."""
    batch = max(1, batch)
    model = embedder.model_id
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        vectors = embedder.embed([text for _, text in chunk])
        if start == 0 and (old := drop_other_widths(index, model, int(vectors.shape[1]))) is not None:
            raise DimensionChanged(model, old, int(vectors.shape[1]))
        with index.transaction() as con:
            insert_rows(
                con,
                "embeddings",
                {
                    "content_hash": [h for h, _ in chunk],
                    "model": [model] * len(chunk),
                    "dim": [int(vectors.shape[1])] * len(chunk),
                    "vec": stored_vectors(vectors),
                },
            )
        if into is not None:
            into.update(zip((h for h, _ in chunk), as_stored(vectors), strict=True))
        done += len(chunk)
        if progress:
            progress("embed", done, total)
    return done
