"""BM25 over the resident leaves (`LeafBM25`): leaves ranked for a query, document frequencies,
the notes holding a term, and BM25 with each note as one document — the same figures as the SQL
definitions in `lexical.py`."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from vaultmind.index.leaf_columns import EMAIL, ENTITY_SECTION, MESSAGE, SECTION
from vaultmind.index.leaf_postings import LeafPostings
from vaultmind.index.lexical import K1, B


class LeafBM25(LeafPostings):
    """The BM25 queries of the resident leaves (k1 = 1.2, b = 0.75)."""

    def search(
        self, query_terms: Sequence[str], limit: int, joined: Mapping[str, Sequence[str]] | None = None
    ) -> list[tuple[str, float]]:
        """[(leaf_id, bm25)] best first, ties by id — the same ranking as `lexical.bm25`. A term
        of `joined` is also held by the leaves holding its joined forms ("ice" by "icecream")."""
        unique = sorted(set(query_terms))
        with self._held():
            self._ensure()
            alive = self._rows.alive
            n, of_kind = self._stats()
            if n == 0 or not unique:
                return []
            scores = np.zeros(len(self._rows))
            for term in unique:
                rows, tfs = self._postings_of(term, joined)
                keep = alive[rows]
                rows, tfs = rows[keep], tfs[keep]
                if len(rows) == 0:
                    continue
                df = float(len(rows))
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                # a leaf's length against the mean of its own kind's (`_stats`)
                avgdl = of_kind[self._kind[rows]]
                dl = self._doc_len[rows]
                scores[rows] += idf * tfs * (K1 + 1) / (tfs + K1 * (1 - B + B * dl / avgdl))
            hit = np.flatnonzero(scores > 0)
            if len(hit) == 0:
                return []
            k = min(limit, len(hit))
            top = hit[self._rows.top_rows(hit, scores[hit], k)]
            return self._rows.best_first(top, scores[top])

    def document_frequency(self, term: str, joined: Mapping[str, Sequence[str]] | None = None) -> tuple[int, int]:
        """(leaves containing `term` or, by `joined`, a form of it joined to a neighbour, live leaves)."""
        with self._held():
            self._ensure()
            rows, _ = self._postings_of(term, joined)
            return int(np.count_nonzero(self._rows.alive[rows])), int(self._stats()[0])

    def _stats(self) -> tuple[float, npt.NDArray[np.float64]]:
        """(live leaves, the mean length of the live leaves of each kind — messages, sections of
        documents and notes, sections of entity notes — at least 1), counted once per change
        (BM25's N and avgdl: a pass over every row). A leaf's length is weighed against its own
        kind's mean, as BM25F weighs each field's: a memory of short chat messages made every
        document section "long", and "Worth planning for." outranked the runbook's "Rollback"
        section for "what is the rollback plan?"; the short entity notes made sections look
        long as well; and an email among them, a letter beside chat lines, lost to the note that
        only named its subject. A message is a leaf with an author, an email one of an email
        note (`lexical.bm25` alike)."""
        if self._live_stats is None:
            alive = self._rows.alive
            n = float(np.count_nonzero(alive))
            means = [_mean_length(self._doc_len[alive & (self._kind == kind)]) for kind in (MESSAGE, SECTION, ENTITY_SECTION, EMAIL)]
            self._live_stats = (n, np.array(means))
        return self._live_stats

    def notes_with(
        self, query_terms: Sequence[str], among: Collection[str], joined: Mapping[str, Sequence[str]] | None = None
    ) -> dict[str, set[str]]:
        """Per term of `query_terms`, those of the notes `among` (paths) with at least one live
        leaf holding it or, by `joined`, a form of it joined to a neighbour (the paths are
        looked up once for all the terms)."""
        with self._held():
            self._ensure()
            found = [(path, code) for path in among if (code := self._notes.find(path)) is not None]
            if not found:
                return {term: set() for term in query_terms}
            paths = [path for path, _ in found]
            codes = np.array([code for _, code in found], dtype=np.int64)
            out: dict[str, set[str]] = {}
            for term in query_terms:
                rows, _ = self._postings_of(term, joined)
                held = np.zeros(len(self._notes.names), dtype=bool)
                held[self._note[rows[self._rows.alive[rows]]]] = True
                out[term] = {paths[k] for k in np.flatnonzero(held[codes]).tolist()}
            return out

    def note_bm25(
        self, query_terms: Sequence[str], among: Collection[str], joined: Mapping[str, Sequence[str]] | None = None
    ) -> dict[str, float]:
        """Per note of `among` (paths) that holds a term of `query_terms`, BM25 with the note as one
        document: a term's frequency summed over the note's live leaves, the note's length the sum
        of theirs against the mean of the notes with live leaves, a term's idf from how many of
        those notes hold it (or, by `joined`, a form of it joined to a neighbour)."""
        with self._held():
            self._ensure()
            found = [(path, code) for path in among if (code := self._notes.find(path)) is not None]
            lengths, n, mean = self._note_lengths()
            if not found or n == 0:
                return {}
            codes = np.array([code for _, code in found], dtype=np.int64)
            norm = K1 * (1 - B + B * lengths[codes] / mean)
            scores = np.zeros(len(codes))
            for term in sorted(set(query_terms)):
                rows, tfs = self._postings_of(term, joined)
                keep = self._rows.alive[rows]
                tf = np.bincount(self._note[rows[keep]], weights=tfs[keep], minlength=len(lengths))
                df = float(np.count_nonzero(tf))
                if df:
                    held = tf[codes]
                    scores += math.log(1 + (n - df + 0.5) / (df + 0.5)) * held * (K1 + 1) / (held + norm)
            return {path: float(value) for (path, _), value in zip(found, scores.tolist(), strict=True) if value > 0}

    def _note_lengths(self) -> tuple[npt.NDArray[np.float64], int, float]:
        """(each note code's length, the sum of its live leaves' lengths; how many notes have a
        live leaf; their mean length, at least 1), counted once per change (`note_bm25`)."""
        stats = self._note_stats
        if stats is None:
            alive = self._rows.alive
            lengths = np.bincount(self._note[alive], weights=self._doc_len[alive], minlength=len(self._notes.names)).astype(np.float64)
            held = np.bincount(self._note[alive], minlength=len(self._notes.names)) > 0
            n = int(np.count_nonzero(held))
            stats = (lengths, n, max(float(lengths[held].mean()), 1.0) if n else 1.0)
            self._note_stats = stats
        return stats


def _mean_length(lengths: npt.NDArray[np.int32]) -> float:
    """BM25's avgdl of some leaves: their mean length, at least 1 (1 for none)."""
    return max(float(lengths.mean()), 1.0) if len(lengths) else 1.0
