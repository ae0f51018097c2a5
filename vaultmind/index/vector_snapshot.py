"""The resident vectors as a load from the index and its first preparation left them, in a
snapshot beside the index (`.vaultmind/resident-vectors.bin`), so that the next process that
loads the same vectors reads a few arrays instead of decoding every stored vector and finding
the first pass's axes again (at 10k notes ~0.6 s of a question asked without a daemon).

Only rows held in memory are kept (float32, or int8 with the first pass): clustered rows live
in a scratch file in cluster order and are loaded from the index as before. The snapshot is
keyed by everything the rows follow from (`vectors_key`): a load under another key ignores it
and writes a new one."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from vaultmind.index.snapshot_file import VECTORS_SNAPSHOT, load_arrays, save_arrays, snapshot_key
from vaultmind.index.vector_scan import FirstPass

if TYPE_CHECKING:
    from vaultmind.index.store import Index

log = logging.getLogger(__name__)

_FORMAT = 1
_MAGIC = b"vaultmind vectors 1\n"


@dataclass(slots=True)
class HeldVectors:
    """What a prepared load of the vectors holds in memory: the loaded ids (as `RowIds` holds
    them), the rows (float32 `matrix`, or int8 `q8` with their `scale`), the int8 rows' first
    pass (its axes and blocks) and the sum of the rows (`mean_direction`'s)."""

    keys: npt.NDArray[np.bytes_]
    packed: bool
    matrix: npt.NDArray[np.float32] | None
    q8: npt.NDArray[np.int8] | None
    scale: npt.NDArray[np.float32]
    head: FirstPass | None
    total: npt.NDArray[np.float64] | None  # None: not summed (no vectors)


def vectors_key(con: Any, model_id: str, settings: tuple[object, ...]) -> str:
    """What the rows follow from: every leaf's id and content hash, every stored vector of
    `model_id` (its text's hash, dimension and bytes), as a count and a sum of hashes (order
    free: ~50 ms at 70k vectors, read by DuckDB); the last migration, vaultmind's version and
    the loader's `settings` (thresholds, the first pass's shape)."""
    leaves = con.execute("SELECT count(*), sum(hash(id, content_hash)) FROM leaves").fetchone()
    vectors = con.execute(
        "SELECT count(*), sum(hash(content_hash, dim, vec)) FROM embeddings WHERE model = ?", [model_id]
    ).fetchone()
    return snapshot_key(con, _FORMAT, model_id, settings, leaves, vectors)


def save_vectors(path: Path, key: str, held: HeldVectors) -> None:
    """Write `held` to `path` under `key` (moved into place whole)."""
    arrays: dict[str, npt.NDArray[Any]] = {
        "keys": held.keys, "packed": np.array([held.packed], dtype=np.uint8), "scale": held.scale,
    }  # fmt: skip
    if held.total is not None:
        arrays["total"] = held.total
    if held.matrix is not None:
        arrays["matrix"] = held.matrix
    if held.q8 is not None:
        arrays["q8"] = held.q8
    if held.head is not None:
        arrays["axes"] = held.head.axes
        arrays |= {f"block_{i}": block for i, block in enumerate(held.head.blocks)}
    save_arrays(path, _MAGIC, key, arrays)


def load_vectors(path: Path, key: str) -> HeldVectors | None:
    """What `save_vectors` wrote to `path` under `key` (None: another key, no file, or a damaged
    one)."""
    arrays = load_arrays(path, _MAGIC, key, "vectors")
    if arrays is None:
        return None
    q8 = arrays.get("q8")
    head = None
    try:
        if q8 is not None and "axes" in arrays:
            blocks: list[npt.NDArray[np.float32]] = []
            while f"block_{len(blocks)}" in arrays:
                blocks.append(arrays[f"block_{len(blocks)}"])
            head = FirstPass(q8, arrays["axes"], tuple(blocks))
        return HeldVectors(
            keys=arrays["keys"], packed=bool(arrays["packed"][0]), matrix=arrays.get("matrix"), q8=q8,
            scale=arrays["scale"], head=head, total=arrays.get("total"),
        )  # fmt: skip
    except (KeyError, IndexError) as exc:
        log.info("the vectors snapshot %s cannot be read (%s); loading them from the index", path, exc)
        return None


def read_vectors(
    index: Index, model_id: str, settings: tuple[object, ...], cluster_from: int
) -> tuple[str | None, HeldVectors | None]:
    """For a load of `model_id`'s vectors from `index` in the usual form: the key its rows would
    be kept under (None: they are not kept) and the rows a snapshot holds under that key (None:
    none does). A load reads or takes a snapshot when one is there, or when the leaves are
    fewer than `cluster_from` (more are clustered, and their key, ~0.2 s at 50k notes, would be
    worked out at every load for nothing)."""
    path = snapshot_path(index)
    if path is None:
        return None, None
    with index.lock:
        if not path.exists() and int(index.scalar("SELECT count(*) FROM leaves")) >= cluster_from:
            return None, None
        key = vectors_key(index.con, model_id, settings)
    return key, load_vectors(path, key)


def keep_vectors(index: Index, key: str, held: HeldVectors | None) -> None:
    """Write `held` as the snapshot beside `index` under `key`; None: delete the one there (it
    can only be stale). A file that cannot be written (a full disk, a read-only folder) is
    said in the log: the next load reads the index."""
    path = snapshot_path(index)
    if path is None:
        return
    try:
        if held is None:
            path.unlink(missing_ok=True)
        else:
            save_vectors(path, key, held)
    except OSError as exc:
        log.info("could not write the vectors snapshot %s: %s", path, exc)


def snapshot_path(index: Index) -> Path | None:
    """The vectors' snapshot beside `index`'s file (None: an index in memory)."""
    return index.path.parent / VECTORS_SNAPSHOT if index.path is not None else None
