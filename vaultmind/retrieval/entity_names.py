"""Fuzzy search over entity names and aliases that stays fast at tens of thousands of entities.

Scoring every name with `WRatio` costs about a microsecond or more per name, and loading the
entity table costs more than that, so a serving process keeps one `EntityNames` per index
state (`entity_names`): the names folded as every name is compared (`entities.ids.fold`:
compatibility forms such as full-width Latin to their letters, accents dropped, case-folded), with an index of their character trigrams. A
query is scored only against the names sharing at least one trigram with it — a name that
shares none cannot reach the cutoff (queries of one or two letters are scored against every
name) — and, when more than `MAX_SCORED` names share one, against those sharing the most
(then the most mentioned). Below that bound the results equal a full `WRatio` scan (tested);
above it a broad query (a common first name among 50k people) keeps p95 under 10 ms and
may miss weak partial matches of short names.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from rapidfuzz import fuzz, process

from vaultmind.entities.ids import fold
from vaultmind.index.store import Index

MAX_SCORED = 1000


@dataclass(frozen=True, slots=True)
class EntityRow:
    id: str
    kind: str
    display_name: str
    aliases: tuple[str, ...]
    other_names: tuple[str, ...]  # e-mail addresses and handles: matched, not shown as aliases
    mentions: int
    note_path: str | None


class EntityNames:
    def __init__(self, rows: list[EntityRow]):
        self.rows = rows
        names: list[str] = []
        owners: list[int] = []
        for i, row in enumerate(rows):
            for name in dict.fromkeys(fold(n) for n in (row.display_name, *row.aliases, *row.other_names) if n):
                names.append(name)
                owners.append(i)
        self.names = names
        self.owners = np.array(owners, dtype=np.int32)
        self.kinds = np.array([rows[o].kind for o in owners], dtype=object)
        self._mentions = np.array([rows[o].mentions for o in owners], dtype=np.int64)
        postings: dict[str, list[int]] = {}
        for pos, name in enumerate(names):
            for gram in _grams(name):
                postings.setdefault(gram, []).append(pos)
        self._postings = {g: np.array(p, dtype=np.int32) for g, p in postings.items()}

    @classmethod
    def load(cls, index: Index) -> EntityNames:
        rows = index.query(
            "SELECT id, kind, display_name, aliases, emails, handles, mentions, note_path FROM entities ORDER BY id"
        )
        return cls(
            [
                EntityRow(r[0], r[1], r[2], tuple(r[3] or ()), (*(r[4] or ()), *(r[5] or ())), int(r[6]), r[7])
                for r in rows
            ]
        )

    def candidates(self, query: str, kind: str | None = None) -> npt.NDArray[np.int32]:
        """Positions of the names worth scoring against `query` (folded)."""
        if len(query.strip()) < 3:  # one or two letters: a trigram says nothing, score them all
            every = np.arange(len(self.names), dtype=np.int32)
            return every if kind is None else every[self.kinds == kind]
        lists = [self._postings[g] for g in _grams(query) if g in self._postings]
        if not lists:
            return np.zeros(0, dtype=np.int32)
        counts = np.bincount(np.concatenate(lists), minlength=len(self.names))
        pos = np.flatnonzero(counts)
        if kind is not None:
            pos = pos[self.kinds[pos] == kind]
        if len(pos) > MAX_SCORED:  # most shared trigrams first, then the most mentioned (the tie-break)
            pos = pos[np.lexsort((pos, -self._mentions[pos], -counts[pos]))[:MAX_SCORED]]
        return np.sort(pos).astype(np.int32)

    def search(self, query: str, *, kind: str | None = None, cutoff: float) -> dict[int, float]:
        """Best `WRatio` score per matching entity (row number → score ≥ `cutoff`); `query` folded
        as the names are ("Alice" finds "Ａｌｉｃｅ", "Zoe" "Zoë")."""
        needle = fold(query)
        pos = self.candidates(needle, kind)
        if len(pos) == 0:
            return {}
        choices = [self.names[p] for p in pos.tolist()]
        best: dict[int, float] = {}
        for _, score, i in process.extract(needle, choices, scorer=fuzz.WRatio, limit=None, score_cutoff=cutoff):
            owner = int(self.owners[pos[i]])
            best[owner] = max(best.get(owner, 0.0), float(score))
        return best


def _grams(text: str) -> set[str]:
    padded = f"  {text} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def entity_names(index: Index) -> EntityNames:
    """The `EntityNames` of `index` as it stands, rebuilt only after a committed change."""
    return index.cached("entity_names", lambda _: EntityNames.load(index))
