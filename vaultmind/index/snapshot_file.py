"""Snapshot files of resident structures beside the index: named numpy arrays under a key.

A resident structure that took long to build from the index (the BM25 postings, the vectors
with their first-pass projections) leaves its arrays in such a file, and the next process that
needs the same structure reads them instead of the index. The file says what it was taken of
(its key: a digest of what the structure follows from); a reader asks for a key and gets
nothing when the file holds another one, is missing or is damaged. It is a cache: deleting it
costs one slower load.

The layout: a magic line, a JSON header's length (8 bytes, little-endian) and the header (the
key, each array's name, type, shape and place), then the arrays' bytes, each at a multiple of
`ALIGN` from the end of the header. Each array's type says its byte order: a file a machine
of the other order wrote reads the same here (turned into this machine's order as it is read).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from vaultmind import __version__
from vaultmind.index.part_files import part_path, remove_dead_parts

log = logging.getLogger(__name__)

ALIGN = 64
KEEP_FREE_BYTES = 1 << 30  # left free on the index's disk: a snapshot that would take it is not written

# the snapshots beside the index file, by what they hold (`leaf_postings`, `leaf_snapshot`, `vector_snapshot`)
POSTINGS_SNAPSHOT = "resident-postings.bin"
LEAVES_SNAPSHOT = "resident-leaves.bin"
VECTORS_SNAPSHOT = "resident-vectors.bin"
SNAPSHOTS = (POSTINGS_SNAPSHOT, LEAVES_SNAPSHOT, VECTORS_SNAPSHOT)


@dataclass(frozen=True, slots=True)
class FileBytes:
    """`size` bytes of an open file (`fd`) from `offset`: written into a snapshot as one more
    array of bytes, copied by the system (`copy_bytes`), never held by this process."""

    fd: int
    offset: int
    size: int

    @property
    def nbytes(self) -> int:
        return self.size


Copier = Callable[[FileBytes], None]  # takes an array's bytes as they lie in a snapshot (`load_arrays`)


# what `copy_file_range` fails with where the system, the file system or a sandbox's filter
# does not copy these two files in the kernel (other errors, a full disk, are the copy's own)
_NO_KERNEL_COPY = {errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL, errno.EPERM}


def copy_bytes(source: FileBytes, fd: int, offset: int) -> None:
    """Copy `source` into the file `fd` at `offset`, file to file (`copy_file_range` where the
    system has it and copies these files, else through a buffer of `_STEP` bytes)."""
    done = 0
    kernel = hasattr(os, "copy_file_range")
    while done < source.size:
        size = min(source.size - done, _STEP)
        moved = 0
        if kernel:
            try:
                moved = os.copy_file_range(source.fd, fd, size, source.offset + done, offset + done)
            except OSError as exc:
                if exc.errno not in _NO_KERNEL_COPY:
                    raise
                kernel = False
        if not kernel:
            data = os.pread(source.fd, size, source.offset + done)
            moved = os.pwrite(fd, data, offset + done) if data else 0
        if moved <= 0:
            raise OSError(f"a copy of {source.size} bytes ended {source.size - done} bytes short")
        done += moved


_STEP = 1 << 24


def snapshot_key(con: Any, snapshot_format: int, *parts: object) -> str:
    """A snapshot's key: a digest of its format, vaultmind's version, the index's last migration
    and `parts` (what its rows follow from, read by the caller)."""
    last = con.execute("SELECT max(name) FROM migrations").fetchone()
    text = "|".join(str(part) for part in (snapshot_format, __version__, last, *parts))
    return hashlib.blake2b(text.encode(), digest_size=20).hexdigest()


def save_arrays(path: Path, magic: bytes, key: str, arrays: Mapping[str, npt.NDArray[Any] | FileBytes]) -> None:
    """Write `arrays` to `path` under `key`, from their buffers (no copy of a contiguous one;
    `FileBytes` copied from their file). The file is written beside `path` under a name of
    this process's own, then moved over it: a reader finds the old one or the new one whole,
    and two processes writing at once do not write into the same file."""
    offsets, at = [], 0
    for array in arrays.values():
        offsets.append(at)
        at += -(-array.nbytes // ALIGN) * ALIGN
    places = [_place(name, array, offset) for (name, array), offset in zip(arrays.items(), offsets, strict=True)]
    header = json.dumps({"key": key, "arrays": places}).encode()
    part = part_path(path)
    remove_dead_parts(path, shared=[f"{path.name}.part"])
    _check_room(path, len(header) + at + 2 * ALIGN)
    try:
        with part.open("wb") as out:
            out.write(magic + len(header).to_bytes(8, "little") + header)
            start = -(-out.tell() // ALIGN) * ALIGN
            for offset, array in zip(offsets, arrays.values(), strict=True):
                if isinstance(array, FileBytes):
                    out.flush()
                    copy_bytes(array, out.fileno(), start + offset)
                    continue
                out.seek(start + offset)
                out.write(np.ascontiguousarray(array).data)
        os.replace(part, path)
    except OSError:
        part.unlink(missing_ok=True)  # a full disk: no half-written file left behind
        raise


def _check_room(path: Path, size: int) -> None:
    """Refuse (OSError, ENOSPC) a snapshot of `size` bytes that would leave less than
    `KEEP_FREE_BYTES` free on the index's disk, counting the old one it replaces: a cache
    must not take the room the index's own writes, a checkpoint or a rebuild, need."""
    with contextlib.suppress(FileNotFoundError):
        size -= path.stat().st_size
    free = shutil.disk_usage(path.parent).free
    if free - size < KEEP_FREE_BYTES:
        raise OSError(
            errno.ENOSPC,
            f"not written: it would leave {max(free - size, 0) / 1e6:,.0f} MB free, under the "
            f"{KEEP_FREE_BYTES / 1e6:,.0f} MB kept for the index",
        )


def _place(name: str, array: npt.NDArray[Any] | FileBytes, offset: int) -> dict[str, Any]:
    """An array's entry in the header (its shape only when it is not one-dimensional)."""
    if isinstance(array, FileBytes):
        return {"name": name, "dtype": "|u1", "count": array.size, "offset": offset}
    place: dict[str, Any] = {"name": name, "dtype": array.dtype.str, "count": int(array.size), "offset": offset}
    if array.ndim != 1:
        place["shape"] = list(array.shape)
    return place


def load_arrays(
    path: Path, magic: bytes, key: str, what: str, copiers: Mapping[str, Copier] | None = None
) -> dict[str, npt.NDArray[Any]] | None:
    """The arrays `save_arrays` wrote to `path`, when it wrote them under `key` (None otherwise,
    or when the file is missing or damaged — said in the log, naming `what` it holds). An array
    named in `copiers` is not read: its copier is handed its bytes in the file, while it is open
    (and it must be there)."""
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
                if copiers and place["name"] in copiers:
                    if start + int(place["offset"]) + count > os.fstat(f.fileno()).st_size:
                        raise ValueError("the file ends early")
                    copiers[place["name"]](FileBytes(f.fileno(), start + int(place["offset"]), count))
                    continue
                array = np.fromfile(f, dtype=np.dtype(place["dtype"]), count=count)
                if len(array) != count:
                    raise ValueError("the file ends early")
                if not array.dtype.isnative:  # written by a machine of the other byte order (a copied vault)
                    array = array.astype(array.dtype.newbyteorder("="))
                arrays[str(place["name"])] = array.reshape(place["shape"]) if "shape" in place else array
            if copiers and not set(copiers) <= {str(place["name"]) for place in header["arrays"]}:
                raise ValueError("an array is missing")
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.info("the %s snapshot %s cannot be read (%s); loading them from the index", what, path, exc)
        return None
    return arrays
