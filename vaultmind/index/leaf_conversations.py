"""The resident leaves' conversations (`LeafConversations`): the conversation of a message — the
folder of its note (a chat's days, an email thread's notes) — how many messages each holds, and
which note of a conversation introduces a word to it (the first to say it)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from vaultmind.index.leaf_bm25 import LeafBM25
from vaultmind.index.leaf_columns import EMAIL


class LeafConversations(LeafBM25):
    """The conversations of the resident leaves' messages (`ResidentLeaves`' part of them)."""

    def conversations(self, leaf_ids: Sequence[str]) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
        """Per leaf of `leaf_ids`, the code of its conversation — the folder of its note (a chat's
        days, an email thread's notes) — when it is a live message (a leaf with an author), else -1; and the
        live messages of each conversation, by code (counted once per change). A folder keeps its
        code while the process runs, a reload of the leaves included: a walk that reads the
        conversations of its candidates and then of their neighbours' leaves (`name_weight`)
        gets codes that agree though a sync reloaded them in between."""
        with self._held():
            self._ensure()
            self._code_folders()
            if self._conversation_sizes is None:
                messages = self._rows.alive & (self._author >= 0)
                self._conversation_sizes = np.bincount(self._note_folders[self._note[messages]], minlength=len(self._folder_codes)).astype(np.int64)
            rows = self._rows.find(leaf_ids)
            out = np.full(len(rows), -1, dtype=np.int32)
            message = np.flatnonzero(rows >= 0)
            message = message[self._author[rows[message]] >= 0]
            out[message] = self._note_folders[self._note[rows[message]]]
            return out, self._conversation_sizes

    def introductions(self, query_terms: Sequence[str], leaf_ids: Sequence[str], least: int) -> npt.NDArray[np.float64]:
        """Per leaf of `leaf_ids`, the idf-weighted share of `query_terms` it introduces: it is a
        message that holds the term, in the part of its conversation that says the term first —
        the chat day (the note) of the earliest dated message holding it, by time, then place; of
        an email thread, that email alone, as a thread is one note — where the conversation has
        at least `least` messages holding it (a word said once is first by default). 0 for any
        other leaf (`retrieval/introduces.py`)."""
        with self._held():
            self._ensure()
            self._code_folders()
            n, _ = self._stats()
            found = self._rows.find(leaf_ids)
            known = found >= 0
            notes = self._note[np.where(known, found, 0)]
            share = np.zeros(len(leaf_ids))
            total = 0.0
            for term in sorted(set(query_terms)):
                rows, _ = self._postings_of(term, None)
                rows = rows[self._rows.alive[rows]]
                rows = rows[(self._author[rows] >= 0) & ~np.isnat(self._ts[rows])]  # dated messages
                if len(rows) == 0:
                    continue
                weight = math.log(1 + (n - len(rows) + 0.5) / (len(rows) + 0.5))
                total += weight
                holds = known & np.isin(found, rows)
                if holds.any():
                    first = self._first_messages(rows, least)
                    days = self._note[first[self._kind[first] != EMAIL]]
                    share[holds & (np.isin(found, first) | np.isin(notes, days))] += weight
            return share / total if total > 0 else share

    def _first_messages(self, rows: npt.NDArray[np.int32], least: int) -> npt.NDArray[np.int32]:
        """Of the dated messages `rows` holding a word, per conversation with at least `least` of
        them, the earliest (by time, then place in its note) — all of those tied at it (two notes
        of a folder whose first messages share their time and place): which row came first in the
        index depends on the order the notes were synced, and would pick one of them by chance."""
        conversation = self._note_folders[self._note[rows]]
        ts, seq = self._ts[rows].astype(np.int64), self._seq[rows]
        order = np.lexsort((seq, ts, conversation))
        rows, conversation, ts, seq = rows[order], conversation[order], ts[order], seq[order]
        starts = np.flatnonzero(np.r_[True, conversation[1:] != conversation[:-1]])
        counts = np.diff(np.r_[starts, len(rows)])
        start = np.repeat(starts, counts)  # per row, the first row of its conversation
        first = (ts == ts[start]) & (seq == seq[start]) & np.repeat(counts >= least, counts)
        return np.asarray(rows[first], dtype=np.int32)

    def _code_folders(self) -> None:
        """The folder codes of the notes coded since the last call (the leaves held)."""
        names = self._notes.names
        if len(self._note_folders) < len(names):  # notes coded since: their folders
            more = [self._folder_codes.setdefault(name.rpartition("/")[0], len(self._folder_codes)) for name in names[len(self._note_folders) :]]
            self._note_folders = np.concatenate((self._note_folders, np.array(more, dtype=np.int32)))
            self._conversation_sizes = None
