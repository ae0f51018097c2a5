"""Snapshot files of resident structures beside the index: named numpy arrays under a key.

A resident structure that took long to build from the index (the BM25 postings, the vectors
with their first-pass projections) leaves its arrays in such a file, and the next process that
needs the same structure reads them instead of the index. The file says what it was taken of
(its key: a digest of what the structure follows from); a reader asks for a key and gets
nothing when the file holds another one, is missing or is damaged. It is a cache: deleting it
costs one slower load.

The layout: a magic line, a JSON header's length (8 bytes, little-endian) and the header (the
key, each array's name, type, shape and place), then the arrays' bytes, each at a multiple of
`ALIGN` from the end of the header.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

ALIGN = 64


def save_arrays(path: Path, magic: bytes, key: str, arrays: Mapping[str, npt.NDArray[Any]]) -> None:
    """Write `arrays` to `path` under `key`, from their buffers (no copy of a contiguous one).
    The file is written beside `path`, then moved over it: a reader finds the old one or the
    new one whole."""
    offsets, at = [], 0
    for array in arrays.values():
        offsets.append(at)
        at += -(-array.nbytes // ALIGN) * ALIGN
    places = [_place(name, array, offset) for (name, array), offset in zip(arrays.items(), offsets, strict=True)]
    header = json.dumps({"key": key, "arrays": places}).encode()
    part = path.with_name(path.name + ".part")
    try:
        with part.open("wb") as out:
            out.write(magic + len(header).to_bytes(8, "little") + header)
            start = -(-out.tell() // ALIGN) * ALIGN
            for offset, array in zip(offsets, arrays.values(), strict=True):
                out.seek(start + offset)
                out.write(np.ascontiguousarray(array).data)
        os.replace(part, path)
    except OSError:
        part.unlink(missing_ok=True)  # a full disk: no half-written file left behind
        raise


def _place(name: str, array: npt.NDArray[Any], offset: int) -> dict[str, Any]:
    """An array's entry in the header (its shape only when it is not one-dimensional)."""
    place: dict[str, Any] = {"name": name, "dtype": array.dtype.str, "count": int(array.size), "offset": offset}
    if array.ndim != 1:
        place["shape"] = list(array.shape)
    return place


def load_arrays(path: Path, magic: bytes, key: str, what: str) -> dict[str, npt.NDArray[Any]] | None:
    """The arrays `save_arrays` wrote to `path`, when it wrote them under `key` (None otherwise,
    or when the file is missing or damaged — said in the log, naming `what` it holds)."""
    try:
        with path.open("rb") as f:
            if f.read(len(magic)) != magic:
                raise ValueError(f"not a {what} snapshot")
            header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
            if header.get("key") != key:
                return None
            start = -(-f.tell() // ALIGN) * ALIGN
            arrays: dict[str, npt.NDArray[Any]] = {}
            for place in header["arrays"]:
                f.seek(start + int(place["offset"]))
                count = int(place["count"])
                array = np.fromfile(f, dtype=np.dtype(place["dtype"]), count=count)
                if len(array) != count:
                    raise ValueError("the file ends early")
                arrays[str(place["name"])] = array.reshape(place["shape"]) if "shape" in place else array
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.info("the %s snapshot %s cannot be read (%s); loading them from the index", what, path, exc)
        return None
    return arrays
