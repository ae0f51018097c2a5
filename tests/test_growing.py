"""`growing.appended`: rows appended into room after an array's rows, never over another's."""

from __future__ import annotations

import numpy as np

from vaultmind.index.growing import ROOM_ROWS, appended


def test_appends_go_into_the_room_left_and_copy_when_it_is_used_up() -> None:
    first = appended(np.arange(3, dtype=np.int32), np.array([3], np.int32))
    column = first
    for value in range(4, 4 + ROOM_ROWS - 1):
        column = appended(column, np.array([value], np.int32))
        assert column.ctypes.data == first.ctypes.data  # in place
    assert column.tolist() == list(range(3 + ROOM_ROWS))
    copied = appended(column, np.array([-1, -2], np.int32))  # past the room: a new buffer
    assert copied.ctypes.data != first.ctypes.data
    assert copied.tolist() == [*range(3 + ROOM_ROWS), -1, -2]
    assert copied.dtype == np.int32


def test_never_writes_past_a_view_it_did_not_make_nor_over_rows_a_later_append_wrote() -> None:
    whole = np.arange(10)
    part = appended(whole[:5], [99])  # a slice of someone's array: its rows after stay theirs
    assert whole.tolist() == list(range(10)) and part.tolist() == [0, 1, 2, 3, 4, 99]
    older = appended(np.zeros(2), [1.0])
    newer = appended(older, [2.0])
    other = appended(older, [3.0])  # from the older view: a copy, the newer rows kept
    assert newer.tolist() == [0.0, 0.0, 1.0, 2.0] and other.tolist() == [0.0, 0.0, 1.0, 3.0]
    widened = appended(np.array([1, 2], np.int8), np.array([300], np.int16))  # as np.concatenate
    assert widened.dtype == np.int16 and widened.tolist() == [1, 2, 300]
