"""How vectors are stored in `embeddings.vec`: float16 blobs (float32 ones written before are
still read), and reading them back without a Python object per vector."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

# Stored vectors are float16: half the bytes of float32 in the file, in every scan and in each
# checkpoint that writes new ones, for a change of cosine of about 1e-4 between unit vectors.
# Rows written as float32 before are still read (their blobs are twice as long per dimension).
VECTOR_DTYPE = np.dtype("<f2")
_STORED: dict[int, np.dtype[Any]] = {2: np.dtype("<f2"), 4: np.dtype("<f4")}


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
