"""What the resident leaves hold (`LeafState`, the base of `resident.ResidentLeaves`): each
leaf's place, time and length, the postings, the codes of note paths and authors, the row
store, the counts BM25 keeps, and the locks a query and a load take."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from vaultmind.index.leaf_columns import NameCodes
from vaultmind.index.leaf_rows import LeafRowStore
from vaultmind.index.postings import PostingLists, TermCodes
from vaultmind.index.row_ids import RowIds, SharedIds
from vaultmind.index.store import Index

_BATCH = 8192  # rows per Arrow batch read from DuckDB (bigger batches raised peak memory ~100 MB at 50k notes)


class LeafState:
    """The state of the resident leaves, one object (`resident.ResidentLeaves`): its parts
    (`leaf_postings`, `leaf_bm25`) read and fill these fields."""

    def __init__(self, index: Index):
        self.index = index
        # reentrant: a load's first statement may open the index file again after a failed
        # reopen (`index.reopening`), which tells this structure, whose lock the load holds, to
        # load again (`apply`); the load goes on, reading the file as it is open now
        self._lock = threading.RLock()
        self._loaded = False
        self._rows = RowIds()
        self._note: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)  # code into _notes, per row
        self._seq: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._author: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)  # code into _author_names; -1 none
        self._notes = NameCodes()
        self._author_names = NameCodes()
        self._doc_len: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)  # terms (BM25's length), as stored
        self._kind: npt.NDArray[np.int8] = np.zeros(0, dtype=np.int8)  # MESSAGE, SECTION or ENTITY_SECTION, per row
        self._ts: npt.NDArray[np.datetime64] = np.zeros(0, dtype="datetime64[us]")
        self._term_code = TermCodes(pa.array([], pa.string()))
        self._lists = PostingLists(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint8))
        self._extra: dict[str, list[tuple[int, int]]] = {}
        self._place_keys: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)  # (note, seq) of loaded rows, sorted
        self._place_rows: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)  # their rows
        self._place_added: dict[tuple[int, int], int] = {}  # (note, seq) → row, for rows added since
        self._authors: Counter[str] = Counter()  # live leaves per author
        self._author_set: frozenset[str] | None = None
        self._live_stats: tuple[float, npt.NDArray[np.float64]] | None = None  # (live leaves, mean length per kind); None: not counted
        self._note_stats: tuple[npt.NDArray[np.float64], int, float] | None = None  # `_note_lengths`; None: not counted
        self._note_folders: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)  # per note code, its folder's code (`conversations`)
        self._folder_codes: dict[str, int] = {}  # folder → its code, kept across reloads (a walk reads codes twice)
        self._conversation_sizes: npt.NDArray[np.int64] | None = None  # live messages per folder code; None: not counted
        self._store = LeafRowStore(index.path.parent if index.path is not None else None)
        self.room: Callable[[Callable[[], None]], None] = run_load  # runs a load (a serving process retries it with more memory)
        self.progress: Callable[[str, int, int], None] | None = None  # told (phase, done, total) as a load goes
        self.load_seconds = 0.0  # spent loading
        self.shared_ids = SharedIds()  # one copy of the loaded ids with the vectors' (`Memory` gives both one)


    def _load(self) -> None:
        """Load every leaf from the index (`resident.ResidentLeaves._load`)."""
        raise NotImplementedError

    @contextmanager
    def _held(self) -> Iterator[None]:
        """This structure's lock, for a query. When it is not loaded, the index's lock first: a
        load reads the index, and a sync takes the index's lock and then this one (to apply
        its change), so a query that held this one while it waited for the index's would wait
        on the sync forever, and the sync on it. Loaded, a query never touches the index."""
        with self._lock:
            if self._loaded:
                yield
                return
        with self.index.lock, self._lock:
            yield

    def _ensure(self) -> None:
        if not self._loaded:
            started = time.monotonic()
            self.room(self._load)
            self.load_seconds += time.monotonic() - started


def run_load(load: Callable[[], None]) -> None:
    load()
