"""Leaf ids ↔ row numbers of the resident structures, compactly (`RowIds`)."""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from vaultmind.index.growing import appended


class RowIds:
    """Leaf ids ↔ row numbers, with tombstones.

    The ids of a load sit in one numpy bytes array (UTF-8, looked up by binary search in a
    sorted copy) rather than a Python string and dict entry per leaf (~170 bytes each); ids
    appended since the load are kept in a dict. A lookup gives the live row of an id. Leaf ids
    are 32 lowercase hex digits: when every loaded id is, they are held as their 16 bytes
    (`_packed`; at 50k notes 13.7 → 6.9 MB per copy), which sort as the digits do.

    A leaf id can live in two notes at once (a copied source note keeps its message ids):
    such ids are remembered as shared, and removing one marks the rows `stale` — the caller
    then reloads, since the copy that remains must keep its row."""

    def __init__(self) -> None:
        self._keys: npt.NDArray[np.bytes_] = np.zeros(0, dtype="S1")  # loaded ids, in row order
        self._sorted: npt.NDArray[np.bytes_] = self._keys  # the same, sorted
        self._perm: npt.NDArray[np.int64] | None = None  # row of each sorted id (None: already sorted)
        self._sorted_high: npt.NDArray[np.uint64] | None = None  # `_high_words` of `_sorted` (16-byte keys)
        self._packed = False  # `_keys` hold the bytes of hex ids (`HEX_ID_DIGITS` digits each)
        self._added: list[str] = []  # ids of the rows appended since the load
        self._added_pos: dict[str, int] = {}
        self.alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self.shared: set[str] = set()
        self.stale = False

    def reset(
        self, ids: Sequence[str] | npt.NDArray[np.bytes_], *, packed: bool = False, like: Iterable[RowIds] = ()
    ) -> None:
        """Load `ids` (strings, or UTF-8 bytes; `packed`: the `hex_bytes` of hex ids). When one
        of `like` holds the same ids in the same order, its arrays are taken rather than a copy
        made (they are never changed in place: a load makes new ones); the tombstones and rows
        appended after are each one's own."""
        keys = ids if isinstance(ids, np.ndarray) else _encode_ids(ids)
        self._packed = packed
        if not packed:
            keys, self._packed = pack_ids(keys)
        twin = next((other for other in like if other is not self and other._holds(keys, self._packed)), None)
        if twin is not None:  # one copy for both
            self._keys, self._sorted, self._perm, self._sorted_high = twin._keys, twin._sorted, twin._perm, twin._sorted_high
            self.shared = set(twin.shared)
            self._fresh()
            return
        self._keys = keys
        self._perm = None
        self._sorted = keys
        if len(keys) > 1 and not bool((keys[1:] >= keys[:-1]).all()):
            self._perm = np.argsort(keys, kind="stable")
            self._sorted = keys[self._perm]
        self._sorted_high = _high_words(self._sorted) if keys.dtype.itemsize == 16 else None
        same = self._sorted[1:] == self._sorted[:-1] if len(keys) > 1 else np.zeros(0, dtype=bool)
        self.shared = {self._decode(k) for k in self._sorted[1:][same].tolist()} if same.any() else set()
        self._fresh()

    def loaded_keys(self) -> tuple[npt.NDArray[np.bytes_], bool]:
        """The loaded ids as held, and whether packed (`reset` takes them back)."""
        return self._keys, self._packed

    def _fresh(self) -> None:
        """Every loaded row alive, none appended (after a load)."""
        self._added = []
        self._added_pos = {}
        self.alive = np.ones(len(self._keys), dtype=bool)
        self.stale = False

    def _holds(self, keys: npt.NDArray[np.bytes_], packed: bool) -> bool:
        """Whether these rows' loaded ids are `keys` (held the same way), in the same order."""
        mine = self._keys
        return self._packed == packed and mine.dtype == keys.dtype and len(mine) == len(keys) and bool(
            len(keys) and np.array_equal(mine, keys)
        )

    def __len__(self) -> int:
        return len(self._keys) + len(self._added)

    def id_of(self, row: int) -> str:
        base = len(self._keys)
        return self._added[row - base] if row >= base else self._decode(self._keys[row])

    def ids_of(self, rows: Sequence[int] | npt.NDArray[np.integer]) -> list[str]:
        """`id_of` of each of `rows`; loaded packed ids are turned into hex digits in one go."""
        rows = np.asarray(rows, dtype=np.int64)
        if not self._all_packed(rows):
            return [self.id_of(row) for row in rows.tolist()]
        digits = self._keys[rows].tobytes().hex()  # each key whole: numpy keeps its padding
        step = HEX_ID_DIGITS
        return [digits[i : i + step] for i in range(0, len(digits), step)]

    def top_rows(
        self, rows: npt.NDArray[np.integer], scores: npt.NDArray[np.floating], k: int
    ) -> npt.NDArray[np.int64]:
        """Positions in `rows`/`scores` of the `k` best: higher score first, ties by id, so
        which of the rows tied at the cut survive does not depend on the rows' order (a live
        index and a cold rebuild agree)."""
        if len(scores) <= k:
            return np.arange(len(scores))
        part = np.argpartition(-scores, k - 1)[:k]
        cut = scores[part].min()
        above = np.flatnonzero(scores > cut)
        tied = np.flatnonzero(scores == cut)
        if len(above) + len(tied) == k:
            return np.concatenate((above, tied))
        ids = self.ids_of(np.asarray(rows)[tied])
        order = sorted(range(len(tied)), key=ids.__getitem__)[: k - len(above)]
        return np.concatenate((above, tied[order]))

    def best_first(self, rows: npt.NDArray[np.integer], scores: npt.NDArray[np.floating]) -> list[tuple[str, float]]:
        """`best_first` of the ids of `rows` with their `scores`; when every row is a loaded
        packed id, ordered by numpy (packed ids sort as their hex digits do)."""
        rows = np.asarray(rows, dtype=np.int64)
        if self._all_packed(rows):
            order = np.lexsort((self._keys[rows], -scores))
            return list(zip(self.ids_of(rows[order]), scores[order].tolist(), strict=True))
        return best_first(zip(self.ids_of(rows), scores.tolist(), strict=True))

    def _all_packed(self, rows: npt.NDArray[np.integer]) -> bool:
        """Whether `rows` (some) are all loaded rows held as whole packed ids."""
        whole = self._keys.dtype.itemsize == HEX_ID_DIGITS // 2
        return self._packed and whole and bool(len(rows)) and int(rows.max()) < len(self._keys)

    def _decode(self, key: bytes) -> str:
        """A loaded id as a string (numpy drops a packed id's trailing zero bytes: put back)."""
        return key.ljust(HEX_ID_DIGITS // 2, b"\0").hex() if self._packed else bytes(key).decode()

    def find(self, leaf_ids: Sequence[str]) -> npt.NDArray[np.int64]:
        """The live row of each id (-1: unknown or removed); of an id loaded twice, the later."""
        out = np.full(len(leaf_ids), -1, dtype=np.int64)
        rest = np.arange(len(leaf_ids))
        if self._added_pos:
            added = [self._added_pos.get(leaf_id, -1) for leaf_id in leaf_ids]
            out[:] = added
            rest = np.flatnonzero(out < 0)
        if len(rest) and len(self._sorted):
            needles, fits = self._needles([leaf_ids[k] for k in rest.tolist()] if len(rest) < len(leaf_ids) else leaf_ids)
            out[rest[fits]] = self._loaded_rows(needles[fits])
        known = out >= 0
        known[known] = self.alive[out[known]]
        out[~known] = -1
        return out

    def find_keys(self, keys: npt.NDArray[np.bytes_]) -> npt.NDArray[np.int64]:
        """`find` for ids given as UTF-8 bytes (an `id_array`), among the loaded rows only."""
        if self._packed:  # only hex ids can be among them
            keys, hexadecimal = hex_bytes(keys, HEX_ID_DIGITS)
            out = np.full(len(keys), -1, dtype=np.int64)
            out[hexadecimal] = self._loaded_rows(keys[hexadecimal])
        else:
            out = self._loaded_rows(keys) if len(self._sorted) else np.full(len(keys), -1, dtype=np.int64)
        known = out >= 0
        known[known] = self.alive[out[known]]
        out[~known] = -1
        return out

    def _loaded_rows(self, needles: npt.NDArray[np.bytes_]) -> npt.NDArray[np.int64]:
        """The loaded row of each id (the later of an id loaded twice; -1: none), dead or alive."""
        if needles.dtype.itemsize > self._sorted.dtype.itemsize:  # longer ids cannot be among them
            fits = np.char.str_len(needles) <= self._sorted.dtype.itemsize
            out = np.full(len(needles), -1, dtype=np.int64)
            out[fits] = self._loaded_rows(needles[fits].astype(self._sorted.dtype))
            return out
        high = self._sorted_high
        if high is not None and needles.dtype == self._sorted.dtype:
            # by the ids' first 8 bytes, as integers: a third of the time of comparing bytes
            needle_high = _high_words(needles)
            at = np.searchsorted(high, needle_high, side="right") - 1
            found = at >= 0
            found[found] = self._sorted[at[found]] == needles[found]
            # an id whose first 8 bytes another loaded id shares may lie before the one found
            clash = ~found & (at >= 0)
            clash[clash] = high[at[clash]] == needle_high[clash]
            if clash.any():
                at[clash] = np.searchsorted(self._sorted, needles[clash], side="right") - 1
                found[clash] = self._sorted[at[clash]] == needles[clash]
        else:
            at = np.searchsorted(self._sorted, needles, side="right") - 1
            found = at >= 0
            found[found] = self._sorted[at[found]] == needles[found]
        rows = at if self._perm is None else self._perm[np.maximum(at, 0)]
        return np.where(found, rows, -1).astype(np.int64)

    def _needles(self, leaf_ids: Sequence[str]) -> tuple[npt.NDArray[np.bytes_], npt.NDArray[np.bool_]]:
        """`leaf_ids` in the dtype of the loaded ids, and which of them fit its width (a longer
        id cannot be among them; numpy would cut it)."""
        if self._packed:
            return self._packed_needles(leaf_ids)
        width = self._sorted.dtype.itemsize
        joined = "".join(leaf_ids).encode()
        if len(joined) == width * len(leaf_ids) and all(len(leaf_id) == width for leaf_id in leaf_ids):
            # ASCII ids of the loaded width (hex ids): one buffer, no conversion per id
            return np.frombuffer(joined, dtype=self._sorted.dtype), np.ones(len(leaf_ids), dtype=bool)
        text = np.array(leaf_ids, dtype=str)
        try:
            fits = np.char.str_len(text) <= width
            return text.astype(self._sorted.dtype), fits  # ASCII ids: done in C
        except UnicodeEncodeError:
            encoded = [leaf_id.encode() for leaf_id in leaf_ids]
            fits = np.fromiter((len(e) <= width for e in encoded), dtype=bool, count=len(encoded))
            return np.array([e if len(e) <= width else b"" for e in encoded], dtype=self._sorted.dtype), fits

    def _packed_needles(self, leaf_ids: Sequence[str]) -> tuple[npt.NDArray[np.bytes_], npt.NDArray[np.bool_]]:
        """`leaf_ids` as the bytes of their hex digits, and which are hex ids (the others,
        as zeros, cannot be among the loaded)."""
        joined = "".join(leaf_ids)
        if len(joined) == HEX_ID_DIGITS * len(leaf_ids) and joined == joined.lower():
            try:  # every id of the width, and lowercase: one conversion
                raw = bytes.fromhex(joined)
                return np.frombuffer(raw, dtype=f"S{HEX_ID_DIGITS // 2}"), np.ones(len(leaf_ids), dtype=bool)
            except ValueError:
                pass
        return hex_bytes(np.array([leaf_id.encode() for leaf_id in leaf_ids], dtype=bytes), HEX_ID_DIGITS)

    def rank(self, total: int) -> npt.NDArray[np.int64]:
        """A sort key for rows 0 … total - 1: loaded rows in id order, appended rows after them."""
        rank = np.arange(total, dtype=np.int64)
        if self._perm is not None:
            rank[self._perm] = np.arange(len(self._perm))
        return rank

    def row(self, leaf_id: str) -> int | None:
        found = int(self.find([leaf_id])[0])
        return found if found >= 0 else None

    def extend(self, leaf_ids: Sequence[str]) -> list[int]:
        """Append rows for `leaf_ids` (a re-added id tombstones its old row); their row numbers."""
        start = len(self)
        rows = []
        self.alive = appended(self.alive, np.ones(len(leaf_ids), dtype=bool))
        for offset, leaf_id in enumerate(leaf_ids):
            old = self.row(leaf_id)
            if old is not None:  # still alive: the same id in another note
                self.shared.add(leaf_id)
                self.alive[old] = False
            self._added.append(leaf_id)
            self._added_pos[leaf_id] = start + offset
            rows.append(start + offset)
        return rows

    def remove(self, leaf_id: str) -> None:
        i = self.row(leaf_id)
        if i is not None:
            self.alive[i] = False
        self._added_pos.pop(leaf_id, None)
        if leaf_id in self.shared:
            self.stale = True

    @property
    def nbytes(self) -> int:
        """Bytes held (the appended ids estimated at 170 bytes each: string, list and dict entry)."""
        return self.loaded_nbytes + self.alive.nbytes + 170 * len(self._added)

    @property
    def loaded_nbytes(self) -> int:
        """Bytes of the loaded ids' arrays (those `SharedIds` lets two structures share)."""
        extra = self._sorted.nbytes + self._perm.nbytes if self._perm is not None else 0
        extra += self._sorted_high.nbytes if self._sorted_high is not None else 0
        return self._keys.nbytes + extra

    @property
    def dead_share(self) -> float:
        return 0.0 if not len(self) else 1.0 - float(np.count_nonzero(self.alive)) / len(self)


class SharedIds:
    """One copy of the loaded ids for the resident structures of the same leaves: the leaves'
    and their vectors' rows are both every leaf in id order (at 50k notes 10.3 MB each: the
    packed ids and their high words). Each load passes its ids through `reset`: when another
    structure holds the same ones (every leaf has a vector), its arrays are taken. Only weak
    references are kept: a structure let go takes its ids with it."""

    def __init__(self) -> None:
        self._holders: weakref.WeakSet[RowIds] = weakref.WeakSet()

    def reset(self, rows: RowIds, ids: npt.NDArray[np.bytes_], *, packed: bool = False) -> None:
        """`rows.reset(ids, packed=packed)`, taking the arrays of another structure's rows that
        hold the same ids."""
        rows.reset(ids, packed=packed, like=list(self._holders))
        self._holders.add(rows)

    def counted_elsewhere(self, rows: RowIds) -> bool:
        """Whether `rows` hold the loaded ids of another structure too (counted with its bytes)."""
        return len(rows._keys) > 0 and any(other is not rows and other._keys is rows._keys for other in self._holders)


def best_first(scored: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    """(id, score) pairs, highest score first, ties by id (then as given): the order of every
    resident search. The scores as Python floats: sorting on numpy scalars costs a few times more."""
    return sorted(scored, key=lambda pair: (-pair[1], pair[0]))


HEX_ID_DIGITS = 32  # a leaf id: 32 lowercase hex digits (`markdown.chunking`)

_HEX_VALUE = np.full(256, 255, dtype=np.uint8)
for _digit, _value in zip(b"0123456789abcdef", range(16), strict=True):
    _HEX_VALUE[_digit] = _value
_HEX_VALUE_ANY_CASE = _HEX_VALUE.copy()
for _digit, _value in zip(b"ABCDEF", range(10, 16), strict=True):
    _HEX_VALUE_ANY_CASE[_digit] = _value


def pack_ids(keys: npt.NDArray[np.bytes_]) -> tuple[npt.NDArray[np.bytes_], bool]:
    """`keys` as their `hex_bytes` when every one is a leaf id (`HEX_ID_DIGITS` lowercase hex
    digits), and whether they are; otherwise `keys` as they are."""
    packed, hexadecimal = hex_bytes(keys, HEX_ID_DIGITS)
    if len(keys) and bool(hexadecimal.all()):
        return packed, True
    return keys, False


def hex_bytes(
    keys: npt.NDArray[np.bytes_], digits: int, *, any_case: bool = False
) -> tuple[npt.NDArray[np.bytes_], npt.NDArray[np.bool_]]:
    """The first `digits` hex digits (lowercase, or either case with `any_case`) of each key
    as `digits // 2` bytes, and which keys are such digits throughout: exactly `digits` of
    them, or at least as many with `any_case` (the others come out as zeros). Bytes sort as
    their lowercase digits do."""
    n, width = len(keys), keys.dtype.itemsize
    size = digits // 2
    packed = np.zeros(n, dtype=f"S{size}")
    valid = np.zeros(n, dtype=bool)
    if n == 0 or width < digits:
        return packed, valid
    table = _HEX_VALUE_ANY_CASE if any_case else _HEX_VALUE
    codes = np.ascontiguousarray(keys).view(np.uint8).reshape(n, width)
    raw = packed.view(np.uint8).reshape(n, size)
    for start in range(0, n, _HEX_BLOCK):  # a block at a time: the temporaries stay small
        stop = min(n, start + _HEX_BLOCK)
        values = table[codes[start:stop, :digits]]
        ok = np.all(values < 16, axis=1)
        if not any_case and width > digits:  # a longer key is not such an id
            ok &= codes[start:stop, digits] == 0
        values[~ok] = 0
        raw[start:stop] = (values[:, 0::2] << 4) | values[:, 1::2]
        valid[start:stop] = ok
    return packed, valid


_HEX_BLOCK = 16_384


def _high_words(keys: npt.NDArray[np.bytes_]) -> npt.NDArray[np.uint64]:
    """The first 8 bytes of each 16-byte key as an unsigned integer (big-endian: they sort as
    the keys do)."""
    return np.ascontiguousarray(keys).view(">u8")[::2].astype(np.uint64)


def _encode_ids(ids: Sequence[str]) -> npt.NDArray[np.bytes_]:
    return np.array([i.encode() for i in ids], dtype=bytes) if len(ids) else np.zeros(0, dtype="S1")


def id_array(column: pa.ChunkedArray | pa.Array) -> npt.NDArray[np.bytes_]:
    """A string column as a numpy bytes array (read from the Arrow buffers when every id has
    the same length, as hex ids do)."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    n = len(array)
    if n == 0:
        return np.zeros(0, dtype="S1")
    if pa.types.is_string(array.type) and not array.null_count:
        offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[array.offset : array.offset + n + 1]
        width = int(offsets[1] - offsets[0])
        if width > 0 and bool((np.diff(offsets) == width).all()):
            data = np.frombuffer(array.buffers()[2], dtype=np.uint8)[int(offsets[0]) : int(offsets[-1])]
            keys: npt.NDArray[np.bytes_] = data.view(f"S{width}").copy()
            if not bool((np.char.str_len(keys) == width).all()):  # a NUL byte: numpy would strip it
                return _encode_ids(array.to_pylist())
            return keys
    return _encode_ids([str(x) for x in array.to_pylist()])
