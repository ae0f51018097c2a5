"""Column arrays that a save appends a few rows to, with room kept after their rows.

The resident structures hold one array per leaf column (note codes, lengths, times, the row
store's offsets, …: ~54 bytes a leaf, ~23 MB at 50k notes). Appending with `np.concatenate`
copied every one of them on every save, and the C heap kept the copies' pages until the
save's memory was handed back: +20–22 MB for a moment per save at 50k notes. `appended`
writes the new rows into room left after the old ones, and copies only when that room is used
up (once every `ROOM_ROWS` rows).
"""

from __future__ import annotations

import functools
import threading
import weakref
from typing import Any

import numpy as np
import numpy.typing as npt

ROOM_ROWS = 4096  # rows of room an array gets when it is copied (~220 KB over the leaf columns)

# The buffers `appended` made, by id: (a weak reference to it, the rows in use). Only such a
# buffer is written past a view's end, and only by the view over all its rows in use: a view
# someone else made of an array (a slice of a load's larger array) is never written past.
_buffers: dict[int, tuple[weakref.ReferenceType[npt.NDArray[Any]], int]] = {}
_lock = threading.RLock()  # its weak references' callbacks may run while it is held


def appended(current: npt.NDArray[Any], more: npt.ArrayLike) -> npt.NDArray[Any]:
    """`current` followed by `more` (1-D), as `np.concatenate` gives it; `current` is left as it
    was. The result is a view of a larger buffer: the next call with it appends in place."""
    extra = np.asarray(more)
    n, k = len(current), len(extra)
    dtype = np.result_type(current, extra)
    base = current.base
    with _lock:
        if isinstance(base, np.ndarray) and dtype == current.dtype:
            found = _buffers.get(id(base))
            if (
                found is not None
                and found[0]() is base
                and found[1] == n
                and len(base) >= n + k
                and current.ctypes.data == base.ctypes.data
            ):
                base[n : n + k] = extra
                _buffers[id(base)] = (found[0], n + k)
                return base[: n + k]
        buffer: npt.NDArray[Any] = np.empty(n + k + max(ROOM_ROWS, k), dtype)
        buffer[:n] = current
        buffer[n : n + k] = extra
        key = id(buffer)
        _buffers[key] = (weakref.ref(buffer, functools.partial(_forget, key)), n + k)
        return buffer[: n + k]


def _forget(key: int, ref: weakref.ReferenceType[npt.NDArray[Any]]) -> None:
    with _lock:
        found = _buffers.get(key)
        if found is not None and found[0] is ref:
            del _buffers[key]
