"""Fuzzy search over entity names and aliases that stays fast at tens of thousands of entities.

Scoring every name with `WRatio` costs about a microsecond or more per name, and loading the
entity table costs more than that, so a serving process keeps one `EntityNames` per index
state (`entity_names`): the names in their search form (`search_form`: accents and case
folded, typographic apostrophes straightened, as walk and `entities show` read names), with an index of their character trigrams. A
query is scored only against the names sharing at least one trigram with it — a name that
shares none cannot reach the cutoff (queries of one or two letters are scored against every
name) — and, when more than `MAX_SCORED` names share one, against those sharing the most
(then the most mentioned). Below that bound the results equal a full `WRatio` scan (tested);
above it a broad query (a common first name among 50k people) keeps p95 under 10 ms and
may miss weak partial matches of short names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from rapidfuzz import fuzz, process

from vaultmind.entities.ids import fold
from vaultmind.index.store import Index

MAX_SCORED = 1000
FUZZY_CUTOFF = 70  # the weakest name match `search_entities` answers
INITIAL_MATCH = 95.0  # "A. Chen" for Alice Chen: as strong as a near-exact name
WORD_PREFIX_MATCH = 95.0  # "Priya S" for Priya Shah: the query starts each word of the name
SAID_MORE_CAP = 90.0  # "Priya" or "Dan" for "Priya S", "Daniel K": the query says more than the name
DOMAIN_SHARE = 0.8  # "acme" in tom@acme.example: the address's domain, not the person
_INITIAL_FIRST = re.compile(r"([^\W\d_])\.?\s+([^\W\d_][\w'-]+)")  # "a. chen"
_INITIAL_LAST = re.compile(r"([^\W\d_][\w'-]+),\s*([^\W\d_])\.?")  # "chen, a."
_NAME_WORD = re.compile(r"[^\W_][\w'-]*")


_APOSTROPHES = str.maketrans(dict.fromkeys("\u2019\u2018\u02bc", "'"))


def search_form(text: str) -> str:
    """The form names and queries are compared in: "Zoë O’Brien" → "zoe o'brien". Typed on an
    English keyboard (or sent by an agent), a name loses its accents: "Lea" is an exact match
    of Léa, as walk and `entities show` take it."""
    return fold(text.translate(_APOSTROPHES))


@dataclass(frozen=True, slots=True)
class NameMatch:
    """An entity's best match: its score and the names of it that reached it (search form); for
    an initial and a surname, that form ("a chen"), which two people may share (`_initialled`)."""

    score: float
    names: frozenset[str]


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
        addresses: list[bool] = []
        for i, row in enumerate(rows):
            own = {search_form(n) for n in (row.display_name, *row.aliases) if n}
            for name in dict.fromkeys(search_form(n) for n in (row.display_name, *row.aliases, *row.other_names) if n):
                names.append(name)
                owners.append(i)
                addresses.append(name not in own)
        self.names = names
        self.owners = np.array(owners, dtype=np.int32)
        self.addresses = np.array(addresses, dtype=bool)  # an e-mail address or a handle, not a name
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
        """Positions of the names worth scoring against `query` (in its `search_form`)."""
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
        """Best score per matching entity (row number → score ≥ `cutoff`)."""
        return _best(self._scored(search_form(query), kind, cutoff))

    def matches(self, query: str, *, kind: str | None = None, cutoff: float) -> dict[int, NameMatch]:
        """Per matching entity (row number), its best score ≥ `cutoff` and the names that gave it."""
        scored = self._scored(search_form(query), kind, cutoff)
        best = _best(scored)
        names: dict[int, set[str]] = {}
        for name, score, owner in scored:
            if score == best[owner]:
                names.setdefault(owner, set()).add(name)
        return {owner: NameMatch(score, frozenset(names[owner])) for owner, score in best.items()}

    def _scored(self, needle: str, kind: str | None, cutoff: float) -> list[tuple[str, float, int]]:
        """(name, score, owner) of every name matching `needle` (`WRatio` ≥ `cutoff`), and of
        the names an initial and a surname match (`_initialled`)."""
        pos = self.candidates(needle, kind)
        if len(pos) == 0:
            return []
        choices = [self.names[p] for p in pos.tolist()]
        found = process.extract(needle, choices, scorer=fuzz.WRatio, limit=None, score_cutoff=cutoff)
        at = pos[[i for _, _, i in found]] if found else np.zeros(0, dtype=np.int32)
        owners = self.owners[at].tolist()
        addresses = self.addresses[at].tolist()
        words = _NAME_WORD.findall(needle)
        if len(words) < 2 and not any(addresses):  # most queries: a name of one word, matching names
            scored = [(name, float(score), owner) for (name, score, _), owner in zip(found, owners, strict=True)]
        else:
            locals_ = _local_scores(needle, [found[k][0] for k, address in enumerate(addresses) if address])
            scored = [
                (name, adjusted_score(needle, name, float(score), address, words, locals_.get(name)), owner)
                for (name, score, _), owner, address in zip(found, owners, addresses, strict=True)
            ]
            scored = [s for s in scored if s[1] >= cutoff]
        return scored + self._initialled(needle, kind)

    def _initialled(self, needle: str, kind: str | None) -> list[tuple[str, float, int]]:
        """For a query written as an initial and a surname ("a. chen", "chen, a.": a signature's,
        a citation's, a mail program's form), (the form "a chen", `INITIAL_MATCH`, row number)
        of the entities whose name is a first name with that initial and that surname: the
        string match alone ranks "Daniel Chen" over Alice for "A. Chen" (more letters in
        common). The name matched is the initial's form, not the full name: Alice Chen and Amy
        Chen both match "A. Chen", which cannot tell them apart."""
        text = needle.strip()
        first, last = _INITIAL_FIRST.fullmatch(text), _INITIAL_LAST.fullmatch(text)
        if first is not None:
            initial, surname = first.group(1), first.group(2)
        elif last is not None:
            initial, surname = last.group(2), last.group(1)
        else:
            return []
        out: list[tuple[str, float, int]] = []
        for pos in self.candidates(surname, kind).tolist():
            name = self.names[pos]
            if not (name.startswith(initial) and name.endswith(surname)):
                continue  # most names sharing a trigram with the surname: no word split needed
            words = _NAME_WORD.findall(name)
            if len(words) >= 2 and words[-1] == surname and words[0].startswith(initial):
                out.append((f"{initial} {surname}", INITIAL_MATCH, int(self.owners[pos])))
        return out


def _local_scores(needle: str, addresses: list[str]) -> dict[str, float]:
    """`WRatio` of `needle` against the local part of each of `addresses`, in one call."""
    if not addresses:
        return {}
    scores = process.cdist([needle], [a.split("@", 1)[0] for a in addresses], scorer=fuzz.WRatio, dtype=np.float64)[0]
    return dict(zip(addresses, (float(x) for x in scores), strict=True))


def adjusted_score(
    needle: str, name: str, score: float, address: bool, words: list[str] | None = None, local: float | None = None
) -> float:
    """`WRatio`'s score of `name` for `needle` (of `words`, its words), set right where its partial match
    misleads: a name whose words start with the query's words in order ("priya s" for Priya Shah)
    scores `WORD_PREFIX_MATCH`, and one the query says more than ("Priya", "Dan" for "priya s",
    "daniel k") at most `SAID_MORE_CAP`, below it; an e-mail address or a handle scores by its
    local part, and a match in its domain only ("acme" in tom@acme.example) `DOMAIN_SHARE` of its
    score, below the organization called so. `local`: the local part's score, when known."""
    if address:
        if needle == name or "@" not in name:
            return score
        local = float(fuzz.WRatio(needle, name.split("@", 1)[0])) if local is None else local
        return max(local, DOMAIN_SHARE * score)
    words = _NAME_WORD.findall(needle) if words is None else words
    if len(words) < 2:
        return score
    if name.startswith(words[0]) and _starts_words(words, name.split()):  # (quick tests before splitting)
        return max(score, WORD_PREFIX_MATCH)
    if len(name) < len(needle) and words[0].startswith(name.split(" ", 1)[0]) and _starts_words(name.split(), words):
        return min(score, SAID_MORE_CAP)
    return score


def _starts_words(prefixes: list[str], words: list[str]) -> bool:
    """Whether each of `prefixes` starts the word of `words` at its place, and `words` has as many
    at least ("priya", "s" of "priya", "shah")."""
    return len(prefixes) <= len(words) and all(w.startswith(p) for p, w in zip(prefixes, words, strict=False))


def _best(scored: list[tuple[str, float, int]]) -> dict[int, float]:
    """The best score of each owner among `scored` (name, score, owner)."""
    best: dict[int, float] = {}
    for _, score, owner in scored:
        if score > best.get(owner, 0.0):
            best[owner] = score
    return best


def _grams(text: str) -> set[str]:
    padded = f"  {text} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def entity_names(index: Index) -> EntityNames:
    """The `EntityNames` of `index` as it stands, rebuilt only after a committed change."""
    return index.cached("entity_names", lambda _: EntityNames.load(index))
