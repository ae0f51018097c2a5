"""Each resident leaf's full row (`LEAF_META_SQL`'s columns), kept on disk: the SQL a load and a
save read them with, and the scratch file that holds them (`LeafRowStore`), read back by offset
for the few hits a query shows."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from vaultmind.index.growing import appended
from vaultmind.index.scratch import ScratchFile
from vaultmind.index.snapshot_file import FileBytes, copy_bytes

LEAF_FIELDS = (
    "id", "note_path", "seq", "anchor", "text", "ts", "author", "source_ref", "message_id", "content_hash",
    "term_count", "heading_path", "mail_to", "mail_cc",
)  # fmt: skip
LEAF_COLUMNS = ", ".join(f"l.{name}" for name in LEAF_FIELDS)
NOTE_EXPRESSIONS = {
    "note_kind": "n.kind", "title": "n.title", "source_id": "n.source_id",
    "scope": "coalesce(json_extract_string(n.frontmatter, '$.scope'), '')", "source_kind": "n.source_kind",
}  # fmt: skip
NOTE_FIELDS = tuple(NOTE_EXPRESSIONS)
NOTE_COLUMNS = ", ".join(f"{expression} AS {name}" for name, expression in NOTE_EXPRESSIONS.items())
LEAF_META_SQL = f"SELECT {LEAF_COLUMNS}, {NOTE_COLUMNS} FROM leaves l JOIN notes n ON n.path = l.note_path"


def note_fields(kind: str, title: str | None, source_id: str | None, source_kind: str | None, frontmatter: str) -> dict[str, Any]:
    """A note's part of its leaves' `LEAF_META_SQL` rows (`NOTE_EXPRESSIONS`), from the values
    its `notes` row is written with: what a save hands the resident leaves, as a load reads it."""
    parsed = json.loads(frontmatter)
    scope = parsed.get("scope") if isinstance(parsed, dict) else None
    if scope is not None and not isinstance(scope, str):  # json_extract_string: other values as JSON
        scope = json.dumps(scope, ensure_ascii=False, separators=(",", ":"))
    values = {"note_kind": kind, "title": title, "source_id": source_id, "scope": scope or "", "source_kind": source_kind}
    return {name: values[name] for name in NOTE_FIELDS}


def _json_sql(fields: dict[str, str]) -> str:
    """DuckDB's JSON text of an object of `fields` (name: SQL expression), in their order."""
    return "to_json({" + ", ".join(f"'{name}': {expression}" for name, expression in fields.items()) + "})::VARCHAR"


# A leaf's load reads the leaves and the notes apart, and joins them here by path (`_with_notes`):
# joined by DuckDB, a load at 50k notes held ~110 MB more (the notes' hash table did not fit a
# small pool, and the join then held the leaves' rows; a larger pool kept the scan's blocks).
# Each leaf's row goes to the row store as JSON (`LEAF_META_SQL`'s columns, in order): the
# leaf's part, without its text (a null keeps its place; to_json of the texts held ~90 MB of
# their blocks until the scan's end) and its closing brace, then its note's part (`tail`).
LEAF_ROWS_SQL = (
    "SELECT l.id, l.note_path, l.seq, l.author, l.ts, l.term_count, "
    + _json_sql({name: "NULL::VARCHAR" if name == "text" else f"l.{name}" for name in LEAF_FIELDS})
    + " AS head, l.text FROM leaves l"
)
NOTE_ROWS_SQL = (
    "SELECT n.path, n.kind AS note_kind, n.source_kind, "
    f"',' || substr({_json_sql(NOTE_EXPRESSIONS)}, 2) AS tail FROM notes n"
)


class LeafRowStore:
    """Each leaf's `LEAF_META_SQL` row in an unnamed temporary file next to the index (deleted
    by the OS when the process ends), read back by offset: the rows of a whole vault stay on
    disk (the page cache, not this process's memory) and a hit's row costs two reads. A record
    is the row as JSON with a null for its text, then the text as UTF-8 elsewhere in the file
    (`LEAF_ROWS_SQL`). Row i of the resident structures is record i here; rows are only
    appended, a reload starts the file over."""

    def __init__(self, folder: Path | None):
        self._folder = folder
        self._file: ScratchFile | None = None
        self._start, self._size = _no_spans()  # each row's JSON
        self._text_start, self._text_size = _no_spans()  # its text
        self._end = 0

    def _scratch(self) -> ScratchFile:
        if self._file is None:
            self._file = ScratchFile(self._folder, "vaultmind-rows-")
        return self._file

    def clear(self) -> None:
        if self._file is not None:
            self._file.truncate()
        self._start, self._size = _no_spans()
        self._text_start, self._text_size = _no_spans()
        self._end = 0

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self.clear()

    def append_columns(self, rows: pa.Array | pa.ChunkedArray, texts: pa.Array | pa.ChunkedArray) -> None:
        """Append the records of two string columns, straight from their buffers: the rows as
        JSON (their text null) and the texts."""
        start, size = self._write_column(rows)
        text_start, text_size = self._write_column(texts)
        self._append(start, size, text_start, text_size)

    def _write_column(self, column: pa.Array | pa.ChunkedArray) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
        array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        if len(array) == 0:
            return _no_spans()
        if pa.types.is_large_string(array.type) or pa.types.is_string_view(array.type):
            array = array.cast(pa.large_string())
            wide = True
        else:
            wide = False
        offsets = np.frombuffer(array.buffers()[1], dtype=np.int64 if wide else np.int32)
        offsets = offsets[array.offset : array.offset + len(array) + 1].astype(np.int64)
        data = memoryview(array.buffers()[2] or b"")[int(offsets[0]) : int(offsets[-1])]
        return self._write(bytes(data) if not data.contiguous else data, offsets - offsets[0])

    def reorder(self, order: npt.NDArray[np.int64]) -> None:
        """Record i becomes record order[i] (the file stays as it is)."""
        self._start, self._size = self._start[order], self._size[order]
        self._text_start, self._text_size = self._text_start[order], self._text_size[order]

    def append_rows(self, rows: Sequence[dict[str, Any]]) -> None:
        """Append rows given as dicts (a few leaves a save added), stored as a load stores them."""
        texts = pa.array([row["text"] for row in rows], pa.string())
        encoded = pa.array(
            [json.dumps({**row, "text": None}, ensure_ascii=False, separators=(",", ":"), default=str) for row in rows],
            pa.string(),
        )
        self.append_columns(encoded, texts)

    def _write(self, data: bytes | memoryview, offsets: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
        """Write records back to back at the file's end: (their starts, their sizes)."""
        self._scratch().write(self._end, data)
        start = self._end + offsets[:-1]
        self._end += len(data)
        return start, np.diff(offsets).astype(np.int32)

    def _append(self, start: npt.NDArray[np.int64], size: npt.NDArray[np.int32],
                text_start: npt.NDArray[np.int64], text_size: npt.NDArray[np.int32]) -> None:  # fmt: skip
        self._start, self._size = appended(self._start, start), appended(self._size, size)
        self._text_start = appended(self._text_start, text_start)
        self._text_size = appended(self._text_size, text_size)

    def spans(self) -> dict[str, npt.NDArray[Any]]:
        """Where each record lies in the file (`restore` takes them back)."""
        return {"start": self._start, "size": self._size, "text_start": self._text_start, "text_size": self._text_size}

    def contents(self) -> FileBytes:
        """The file's bytes, to be copied elsewhere (a snapshot)."""
        return FileBytes(self._scratch().fd, 0, self._end)

    def take_contents(self, contents: FileBytes) -> None:
        """Start the file over as a copy of `contents` (`contents`' of a store; its records'
        places follow, `take_spans`)."""
        self.clear()
        copy_bytes(contents, self._scratch().fd, 0)
        self._end = contents.size

    def take_spans(self, spans: dict[str, npt.NDArray[Any]]) -> None:
        """The records' places as `spans` gave them."""
        self._start, self._size = spans["start"], spans["size"]
        self._text_start, self._text_size = spans["text_start"], spans["text_size"]

    @property
    def nbytes(self) -> int:
        """Bytes held in memory (the offsets; the rows themselves are in the file)."""
        return sum(a.nbytes for a in (self._start, self._size, self._text_start, self._text_size))

    def text(self, i: int) -> str:
        """Row `i`'s text alone: one read, no metadata decoded."""
        return self._scratch().read(int(self._text_start[i]), int(self._text_size[i])).decode()

    def row(self, i: int) -> dict[str, Any]:
        file = self._scratch()
        row: dict[str, Any] = json.loads(file.read(int(self._start[i]), int(self._size[i])))
        row["text"] = self.text(i)
        if row.get("ts") is not None:
            row["ts"] = datetime.fromisoformat(row["ts"])
        return row


def _no_spans() -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
    """No records' (starts, sizes)."""
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
