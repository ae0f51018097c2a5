"""The resident leaves' columns as arrays (`LeafColumns`), the codes of their note paths and
authors (`NameCodes`), and the kinds of leaf BM25 weighs apart."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

# the kinds of leaf whose lengths BM25 weighs apart (`leaf_bm25.LeafBM25._stats`)
MESSAGE, SECTION, ENTITY_SECTION, EMAIL = 0, 1, 2, 3


@dataclass(frozen=True, slots=True)
class LeafColumns:
    """Some leaves' places, authors, lengths and times as arrays, in the order they were asked
    for (`ResidentLeaves.columns`). A leaf that is not live has `known` False, note and author -1,
    length NaN and no time (NaT). Codes index `note_names` and `author_names`: the lists of the
    load that gave them (a reload makes new lists; these stay as they were)."""

    known: npt.NDArray[np.bool_]
    note: npt.NDArray[np.int32]
    seq: npt.NDArray[np.int32]
    author: npt.NDArray[np.int32]
    length: npt.NDArray[np.float64]
    ts: npt.NDArray[np.datetime64]
    note_names: list[str]
    author_names: list[str]

    def extended(self, more: LeafColumns) -> LeafColumns:
        """These columns followed by `more`'s (both of the same load: the same code lists)."""
        assert more.note_names is self.note_names and more.author_names is self.author_names
        return LeafColumns(
            np.concatenate((self.known, more.known)), np.concatenate((self.note, more.note)),
            np.concatenate((self.seq, more.seq)), np.concatenate((self.author, more.author)),
            np.concatenate((self.length, more.length)), np.concatenate((self.ts, more.ts)),
            self.note_names, self.author_names,
        )  # fmt: skip

    def place(self, k: int) -> tuple[str, int, str | None] | None:
        """(note_path, seq, author) of the k-th leaf; None when it is not live."""
        if not self.known[k]:
            return None
        who = int(self.author[k])
        return self.note_names[int(self.note[k])], int(self.seq[k]), self.author_names[who] if who >= 0 else None


class NameCodes:
    """Distinct strings (note paths, authors) numbered in order of first appearance."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._code: dict[str, int] = {}

    @classmethod
    def of(cls, names: list[str]) -> NameCodes:
        """Codes numbering `names` in their order (distinct)."""
        codes = cls()
        codes.names = names
        codes._code = {name: i for i, name in enumerate(names)}
        return codes

    def find(self, name: str) -> int | None:
        return self._code.get(name)

    def code(self, name: str) -> int:
        found = self._code.get(name)
        if found is None:
            found = self._code[name] = len(self.names)
            self.names.append(name)
        return found

    def codes(self, column: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.int32]:
        """The code of each value of a string column (-1 for null), through its dictionary: one
        Python call per distinct value, not per row."""
        array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        encoded = array.dictionary_encode()
        mapping = np.array([*(self.code(v) for v in encoded.dictionary.to_pylist()), -1], dtype=np.int32)
        indices = pc.fill_null(encoded.indices, len(mapping) - 1).to_numpy(zero_copy_only=False)
        codes: npt.NDArray[np.int32] = mapping[indices]
        return codes


def ts_array(column: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.datetime64]:
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    out: npt.NDArray[np.datetime64] = array.cast(pa.timestamp("us")).to_numpy(zero_copy_only=False).astype("datetime64[us]")
    return out
