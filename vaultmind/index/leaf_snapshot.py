"""The resident leaves as a load from the index left them (each leaf's place, time, length and
kind, the note paths and authors they are coded by, and the row store: every leaf's row and
text), in a snapshot beside the index (`.vaultmind/resident-leaves.bin`), so that the next
process that loads the same leaves reads a few arrays and copies one file instead of streaming
and decoding every leaf (at 10k notes ~0.7 s of a question asked without a daemon). The
postings have their own snapshot (`leaf_postings`).

The snapshot is keyed by everything a load reads (`leaves_key`): a load under another key
ignores it and writes a new one."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from vaultmind.index.leaf_rows import LEAF_FIELDS, LeafRowStore
from vaultmind.index.snapshot_file import FileBytes, load_arrays, save_arrays, snapshot_key

log = logging.getLogger(__name__)

_FORMAT = 1
_MAGIC = b"vaultmind leaves 1\n"
_COLUMNS = ("note", "author", "seq", "doc_len", "ts", "kind")
_SPANS = ("start", "size", "text_start", "text_size")


@dataclass(slots=True)
class HeldLeaves:
    """What a load of the leaves holds besides the row store's file: the ids as read (in row
    order), the note paths and authors the rows are coded by, and the rows' columns (`_COLUMNS`,
    as `leaf_state.LeafState` names them) and record places in the row store (`_SPANS`)."""

    keys: npt.NDArray[np.bytes_]
    notes: list[str]
    authors: list[str]
    columns: dict[str, npt.NDArray[Any]]
    spans: dict[str, npt.NDArray[Any]]


def leaves_key(con: Any) -> str:
    """What a load of the leaves follows from: every column of every leaf (its text through its
    content hash, the SHA-256 of the text: hashing the texts themselves took ~0.5 s at 10k
    notes) and the columns of every note its rows take, as a count and a sum of hashes per
    table (order free, read by DuckDB); the last migration and vaultmind's version."""
    fields = [name for name in LEAF_FIELDS if name != "text"]
    leaves = con.execute(f"SELECT count(*), sum({_row_hash(con, 'leaves', fields)}) FROM leaves").fetchone()
    note_fields = ["path", "kind", "title", "source_id", "frontmatter", "source_kind"]
    notes = con.execute(f"SELECT count(*), sum({_row_hash(con, 'notes', note_fields)}) FROM notes").fetchone()
    return snapshot_key(con, _FORMAT, leaves, notes)


def _row_hash(con: Any, table: str, fields: list[str]) -> str:
    """The SQL of one `hash()` of `fields` of a row of `table`, each list column as its JSON
    text: DuckDB hashes a list as its elements one after another, so two lists side by side
    hashed as they are (a message's To and Cc) hash the same when an element moves from one to
    the other (["b", "c"], ["d"] as ["b"], ["c", "d"]), and a null list as an empty one."""
    lists = {
        str(name)
        for (name,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND data_type LIKE '%[]'", [table]
        ).fetchall()
    }
    return "hash(" + ", ".join(f"to_json({name})" if name in lists else name for name in fields) + ")"


def save_leaves(path: Path, key: str, held: HeldLeaves, store: LeafRowStore) -> None:
    """Write `held` and the bytes of `store`'s file to `path` under `key` (moved into place whole)."""
    notes_data, notes_ends = _strings(held.notes)
    authors_data, authors_ends = _strings(held.authors)
    arrays: dict[str, npt.NDArray[Any] | FileBytes] = {
        "keys": held.keys, "notes": notes_data, "notes_ends": notes_ends, "authors": authors_data,
        "authors_ends": authors_ends,
    }  # fmt: skip
    arrays |= {name: held.columns[name] for name in _COLUMNS}
    arrays["ts"] = held.columns["ts"].view(np.int64)
    arrays |= {f"span_{name}": held.spans[name] for name in _SPANS}
    arrays["rows"] = store.contents()
    save_arrays(path, _MAGIC, key, arrays)


def load_leaves(path: Path, key: str, store: LeafRowStore) -> HeldLeaves | None:
    """What `save_leaves` wrote to `path` under `key`, its rows copied into `store` (None:
    another key, no file, or a damaged one; `store` is then to be loaded afresh)."""
    arrays = load_arrays(path, _MAGIC, key, "leaves", {"rows": store.take_contents})
    if arrays is None:
        return None
    try:
        columns = {name: arrays[name] for name in _COLUMNS}
        columns["ts"] = columns["ts"].view("datetime64[us]")
        spans = {name: arrays[f"span_{name}"] for name in _SPANS}
        notes = _names(arrays["notes"], arrays["notes_ends"])
        authors = _names(arrays["authors"], arrays["authors_ends"])
        rows = len(arrays["keys"])
        if any(len(a) != rows for a in (*columns.values(), *spans.values())):
            raise ValueError("its arrays differ in length")
    except (KeyError, ValueError, UnicodeDecodeError) as exc:
        log.info("the leaves snapshot %s cannot be read (%s); loading them from the index", path, exc)
        return None
    return HeldLeaves(arrays["keys"], notes, authors, columns, spans)


def _strings(names: list[str]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """`names` as one UTF-8 buffer and each one's end in it."""
    encoded = [name.encode("utf-8", "surrogatepass") for name in names]
    ends = np.cumsum([len(e) for e in encoded], dtype=np.int64) if encoded else np.zeros(0, dtype=np.int64)
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), ends


def _names(data: npt.NDArray[np.uint8], ends: npt.NDArray[np.int64]) -> list[str]:
    """The strings `_strings` made."""
    raw = data.tobytes()
    bounds = [0, *ends.tolist()]
    return [raw[a:b].decode("utf-8", "surrogatepass") for a, b in pairwise(bounds)]
