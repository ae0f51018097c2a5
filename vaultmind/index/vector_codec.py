"""How vectors are stored in `embeddings.vec`: float16 blobs (float32 ones written before are
still read), and reading them back without a Python object per vector; the leaves' ids and
content hashes a load of the vectors places them by (`leaf_keys`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from vaultmind.index.row_ids import hex_bytes, id_array, pack_ids

# Stored vectors are float16: half the bytes of float32 in the file, in every scan and in each
# checkpoint that writes new ones, for a change of cosine of about 1e-4 between unit vectors.
# Rows written as float32 before are still read (their blobs are twice as long per dimension).
VECTOR_DTYPE = np.dtype("<f2")
_STORED: dict[int, np.dtype[Any]] = {2: np.dtype("<f2"), 4: np.dtype("<f4")}
_KEYS_BATCH = 65_536  # leaves' ids and hashes read at a time (`leaf_keys`)


def matrix_of(
    vecs: pa.ChunkedArray | pa.Array, dims: pa.ChunkedArray | pa.Array, width: int | None = None
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """Stored vectors (`VECTOR_DTYPE` blobs, or float32 ones written before it) as one float32
    matrix, read from the Arrow buffers without a Python object per vector, and which of them
    it holds. `dims` says each vector's dimension, so a blob's length gives its element size.
    Only vectors of dimension `width` are kept (None: the first's): one of another dimension
    (a model that changed behind its name) or a broken blob is left out, the others kept."""
    array = vecs.combine_chunks() if isinstance(vecs, pa.ChunkedArray) else vecs
    n = len(array)
    if n == 0:
        return np.zeros((0, width or 0), dtype=np.float32), np.zeros(0, dtype=bool)
    wide = pa.types.is_large_binary(array.type)
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64 if wide else np.int32)[array.offset : array.offset + n + 1]
    lengths = np.diff(offsets)
    dim = np.asarray(dims.to_numpy(zero_copy_only=False), dtype=np.int64)
    width = int(dim[0]) if width is None else width
    uniform = not array.null_count and (lengths == lengths[0]).all() and (dim == width).all()
    size = _element_size(int(lengths[0]), width) if uniform else 0
    if not size:
        # mixed dimensions or element sizes (after a model change, or old float32 rows beside new ones)
        decoded = [
            vector_of(b, d) if d == width else None for b, d in zip(array.to_pylist(), dim.tolist(), strict=True)
        ]
        kept = np.array([row is not None for row in decoded], dtype=bool)
        rows = [row for row in decoded if row is not None]
        return (np.stack(rows) if rows else np.zeros((0, width), dtype=np.float32)), kept
    data = np.frombuffer(array.buffers()[2], dtype=np.uint8)[int(offsets[0]) : int(offsets[-1])]
    return data.view(_STORED[size]).reshape(n, width).astype(np.float32), np.ones(n, dtype=bool)


def _element_size(length: int, dim: int) -> int:
    """Bytes per dimension of a stored blob; 0 when it is neither float16 nor float32."""
    size = length // dim if dim > 0 else 0
    return size if size in _STORED and size * dim == length else 0


def vector_of(blob: bytes | None, dim: int) -> npt.NDArray[np.float32] | None:
    """One stored vector (`embeddings.vec` of dimension `dim`) as float32; None for a blob that
    is not one (empty, or of a length that fits neither float16 nor float32)."""
    size = _element_size(len(blob), dim) if blob else 0
    return np.frombuffer(blob, dtype=_STORED[size]).astype(np.float32) if blob and size else None


def stored_vectors(vectors: npt.NDArray[np.floating[Any]]) -> list[bytes]:
    """Vectors as the blobs `embeddings.vec` keeps (`VECTOR_DTYPE`, one per row)."""
    return [row.tobytes() for row in np.ascontiguousarray(vectors, dtype=VECTOR_DTYPE)]


def as_stored(vectors: npt.NDArray[np.floating[Any]]) -> npt.NDArray[np.float32]:
    """Vectors as reading their `stored_vectors` back gives them (float32 from `VECTOR_DTYPE`)."""
    return np.asarray(vectors, dtype=VECTOR_DTYPE).astype(np.float32)


def stored_width(con: Any, model: str) -> int | None:
    """The dimension of most of `model`'s stored vectors (None: none stored). One dimension,
    but for a model that changed behind its name, until its vectors are embedded again."""
    row = con.execute(
        "SELECT dim FROM embeddings WHERE model = ? GROUP BY dim ORDER BY count(*) DESC, dim LIMIT 1", [model]
    ).fetchone()
    return int(row[0]) if row else None


def leaf_keys(con: Any, compact: bool = False) -> tuple[npt.NDArray[np.bytes_], npt.NDArray[np.bytes_]] | None:
    """Every leaf's id and content hash, as two bytes arrays in the same (table) order. Read
    in batches into arrays sized from a count: at 50k notes the whole table as Arrow, plus its
    copies, had cost ~130 MB for a moment. `compact`: the ids packed as `pack_ids` packs them
    and the hashes as `hash_prefix` gives them, a batch at a time (None when an id is not a
    leaf id or a hash not hexadecimal): half the bytes of the ids through the load and its sort."""
    count = int(con.execute("SELECT count(*) FROM leaves").fetchone()[0])
    keys: npt.NDArray[np.bytes_] | None = None
    hashes: npt.NDArray[np.bytes_] | None = None
    at = 0
    for batch in con.execute("SELECT id, content_hash FROM leaves").to_arrow_reader(_KEYS_BATCH):
        part_keys, part_hashes = id_array(batch.column(0)), id_array(batch.column(1))
        if compact and len(part_keys):
            part_keys, packed = pack_ids(part_keys)
            part_hashes, hexadecimal = hash_prefix(part_hashes)
            if not packed or not hexadecimal.all():
                return None
        n = len(part_keys)
        if keys is None or hashes is None:
            keys, hashes = np.empty(count, dtype=part_keys.dtype), np.empty(count, dtype=part_hashes.dtype)
        if part_keys.dtype.itemsize > keys.dtype.itemsize:  # ids of another width (not hex)
            keys = keys.astype(part_keys.dtype)
        if part_hashes.dtype.itemsize > hashes.dtype.itemsize:
            hashes = hashes.astype(part_hashes.dtype)
        keys[at : at + n], hashes[at : at + n] = part_keys, part_hashes
        at += n
    if keys is None or hashes is None:
        return np.zeros(0, dtype="S1"), np.zeros(0, dtype="S1")
    return keys[:at], hashes[:at]


def hash_prefix(hashes: npt.NDArray[np.bytes_]) -> tuple[npt.NDArray[np.bytes_], npt.NDArray[np.bool_]]:
    """Hexadecimal content hashes (sha256: 64 digits) as the 16 bytes of their first 32 digits,
    a quarter of the memory while the vectors load (two of a vault's texts sharing 128 bits: odds
    of about 1e-27 at a million texts); and which were hexadecimal of at least 32 digits (the
    others come out as zeros)."""
    return hex_bytes(hashes, 32, any_case=True)


