"""Lexical search: our own incremental postings and BM25.

DuckDB's FTS index does not update on insert; postings rows are written and deleted with
their leaf, so lexical search is correct after every incremental sync. Search ranks from the
postings held in memory (`index/leaf_bm25.py`, which also counts document frequencies);
`bm25` here ranks the same way in SQL, scanning the postings (they carry no index on `term`:
building it dominated a cold index's time and memory), for the evaluation's BM25 baseline.

Terms: Unicode words, lower-cased, possessives ("'s") and plurals folded, stop words removed,
irregular past forms of common verbs taken to their base form ("won" → "win", `IRREGULAR`),
ASCII words stemmed with the Snowball English stemmer ("painted", "painting" → "paint"), and
the noun of an act sharing its verb's stem ("decision" → "decid", as "decide"; `DERIVED`); CJK
runs become overlapping character bigrams (and the single character for runs of one), so
Chinese or Japanese text is searchable without a segmenter. The same function tokenizes leaves
and queries. A change to these rules ships with a migration, so indexes rebuild their terms.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import duckdb
import Stemmer

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
# ASCII that is neither a letter, a digit nor an apostrophe, to a space: an ASCII text's words
# are then its whitespace-separated pieces (those with an apostrophe go through `_WORD`).
_ASCII_BREAKS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum() and chr(c) != "'"})
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")

STOP_WORDS = frozenset(
    """a an and are as at be but by do does did for from had has have he her hers him his i if in
    into is it its me my no not of on or our ours she so than that the their theirs them then there
    these they this those to too us was we were what when where which while who whom why will with
    would you your yours am been being can could should shall may might must just also about over
    very s t""".split()
)

_STEMMER = Stemmer.Stemmer("english")

# Irregular past forms of common verbs, to their base form, so "When did Emil win…" meets "I
# won…" as the stemmer makes "camped" meet "camp". Forms that are as often another word are
# left out ("saw", "left", "found", "felt", "rose", "fed", "lay", "read", "shot", "wound").
IRREGULAR = {
    form: base
    for base, forms in {
        "go": "went gone", "win": "won", "eat": "ate eaten", "buy": "bought", "bring": "brought",
        "think": "thought", "teach": "taught", "catch": "caught", "make": "made", "take": "took taken",
        "give": "gave given", "begin": "began begun", "write": "wrote written", "drive": "drove driven",
        "ride": "rode ridden", "run": "ran", "swim": "swam swum", "sing": "sang sung", "meet": "met",
        "tell": "told", "sell": "sold", "keep": "kept", "sleep": "slept", "spend": "spent",
        "send": "sent", "build": "built", "lose": "lost", "pay": "paid", "hear": "heard",
        "hold": "held", "know": "knew known", "grow": "grew grown", "throw": "threw thrown",
        "fly": "flew flown", "draw": "drew drawn", "choose": "chose chosen", "break": "broke broken",
        "speak": "spoke spoken", "wake": "woke woken", "forget": "forgot forgotten", "get": "got gotten",
        "become": "became", "come": "came", "fall": "fell fallen", "steal": "stole stolen",
        "see": "seen", "lead": "led", "fight": "fought", "sit": "sat", "stand": "stood",
        "understand": "understood", "mean": "meant", "wear": "wore worn", "freeze": "froze frozen",
        "seek": "sought", "flee": "fled", "deal": "dealt", "learn": "learnt", "burn": "burnt",
        "dream": "dreamt", "tear": "tore torn", "shake": "shook shaken", "hide": "hid hidden",
        "bite": "bitten", "blow": "blew blown", "forgive": "forgave forgiven", "rise": "risen",
    }.items()
    for form in forms.split()
}
IRREGULAR["goe"] = "go"  # "goes", its "s" folded as a plural's (the stemmer keeps "goe")

# Nouns of an act and the verb they name, where the stemmer leaves them apart ("decision" is
# "decis", "decide" "decid"): the noun's stem becomes the verb's, so "what did we decide…" meets
# "Decision: we move…". Nouns as often something else are left out ("application", "receipt",
# "production", "resolution", "treatment", "movement", "sale", "gift").
DERIVED = {
    _STEMMER.stemWord(noun): _STEMMER.stemWord(verb)
    for noun, verb in (
        pair.split(":")
        for pair in """decision:decide conclusion:conclude inclusion:include exclusion:exclude
        extension:extend expansion:expand permission:permit submission:submit admission:admit
        explanation:explain description:describe subscription:subscribe introduction:introduce
        reduction:reduce delivery:deliver payment:pay agreement:agree choice:choose
        solution:solve failure:fail departure:depart marriage:marry registration:register
        response:respond competition:compete discovery:discover recovery:recover injury:injure
        complaint:complain belief:believe proof:prove advice:advise death:die loss:lose
        growth:grow speech:speak flight:fly creation:create repetition:repeat
        destruction:destroy exposure:expose closure:close guidance:guide judgment:judge
        defense:defend pursuit:pursue analysis:analyze analyse:analyze""".split()
    )
}

K1 = 1.2
B = 0.75


def fold(word: str) -> str:
    """Normalise one lower-case word: strip possessives and regular plurals."""
    if "'" in word or "’" in word:
        word = re.split(r"['’]", word, maxsplit=1)[0]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """The lower-case words of a text, in order: what `_WORD` finds."""
    return split_words(text.lower(), _WORD)


def split_words(lower: str, word: re.Pattern[str]) -> list[str]:
    """`word.findall(lower)`, for a pattern whose words are runs of letters and digits joined
    by apostrophes (`_WORD`; the admission signals' `WORD_RE`). An ASCII text is split with
    `str.translate` and `split` (C loops), a third faster than the regular expression; only
    pieces holding an apostrophe go through it. The same words (tested)."""
    if not lower.isascii():
        return word.findall(lower)
    pieces = lower.translate(_ASCII_BREAKS).split()
    if "'" not in lower:
        return pieces
    out: list[str] = []
    for piece in pieces:
        if "'" in piece:
            out.extend(word.findall(piece))  # "rock'n'roll" is "rock'n" and "roll" by `_WORD`; "'quoted'" is "quoted"
        else:
            out.append(piece)
    return out


def compatibility_folded(text: str) -> str:
    """`text` in its compatibility form (NFKC), as its terms are read: full-width Latin is
    ASCII, a ligature its letters (an ASCII text as it is, untouched)."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


def terms(text: str) -> list[str]:
    """The search terms of a text, in order (duplicates kept). Compatibility forms are folded
    (NFKC) in the index and in the question alike: "ｂｕｄｇｅｔ", as an East Asian keyboard
    types it, is "budget"; "ﬁle" is "file"."""
    text = compatibility_folded(text)
    mapped = list(map(_TERMS_OF.__getitem__, words(text)))
    if text.isascii():  # one term or none ("": a stop word) to a word
        return cast(list[str], [term for term in mapped if term])
    out: list[str] = []
    for term in mapped:
        if isinstance(term, str):
            if term:
                out.append(term)
        elif term:
            out.extend(term)  # a CJK run
    return out


def _word_terms(word: str) -> tuple[str, ...]:
    """Terms of one lower-case word (uncached; see `_TERMS_OF`)."""
    if not word.isascii() and _CJK.search(word):
        return tuple(_cjk_terms(word))
    folded = _content_word(word)
    if not folded:
        return ()
    if "'" not in word and "’" not in word:  # "won't" is no form of "win"
        folded = IRREGULAR.get(folded, folded)
    if not folded.isascii():
        return (folded,)
    stem = _STEMMER.stemWord(folded)
    return (DERIVED.get(stem, stem),)


def _cjk_terms(word: str) -> list[str]:
    out: list[str] = []
    pos = 0
    for run in _CJK.finditer(word):
        if run.start() > pos:
            rest = _content_word(word[pos : run.start()])
            if rest:
                out.append(rest)
        chars = run.group()
        if len(chars) == 1:
            out.append(chars)
        else:
            out.extend(chars[i : i + 2] for i in range(len(chars) - 1))
        pos = run.end()
    if pos < len(word):
        rest = _content_word(word[pos:])
        if rest:
            out.append(rest)
    return out


def _content_word(word: str) -> str:
    """`word` folded, or "" for a stop word — recognised before folding as well as after it
    ("does" is a stop word, not the plural of "doe")."""
    if word in STOP_WORDS:
        return ""
    folded = fold(word)
    return "" if folded in STOP_WORDS else folded


_V = TypeVar("_V")


class WordCache(dict[str, _V]):
    """word → `compute(word)`, computed as the word is first looked up (`__missing__`), so a
    text's words are mapped in one pass even when it brings new ones; a vault's vocabulary
    repeats. Emptied when it holds `limit` words, which bounds the memory it keeps."""

    def __init__(self, compute: Callable[[str], _V], limit: int) -> None:
        super().__init__()
        self.compute, self.limit = compute, limit

    def __missing__(self, word: str) -> _V:
        if len(self) >= self.limit:
            self.clear()
        value = self[word] = self.compute(word)
        return value


def _terms_of(word: str) -> str | tuple[str, ...]:
    found = _word_terms(word)
    return found[0] if len(found) == 1 else found or ""


# The one cache of word → its one term, "" for a stop word, or its terms (a CJK run, only in
# non-ASCII words); a process keeps at most ~40 MB of it.
_TERMS_OF: WordCache[str | tuple[str, ...]] = WordCache(_terms_of, 1 << 18)


def term_counts(text: str) -> tuple[Counter[str], int]:
    """How often each term occurs in `text`, and the number of terms (its BM25 length).

    Equal to counting `terms(text)`, but the words are mapped and counted in bulk (C loops):
    most words have exactly one term; stop words are dropped and CJK runs expanded afterwards."""
    text = compatibility_folded(text)
    counts: Counter[Any] = Counter(map(_TERMS_OF.__getitem__, words(text)))
    counts.pop("", None)  # stop words; str and tuple keys are left
    if not text.isascii():  # CJK runs: several terms to one word
        for key in [k for k in counts if k.__class__ is tuple]:
            n = counts.pop(key)
            for term in key:
                counts[term] += n
    return counts, sum(counts.values())  # only str keys are left


def bm25(
    con: duckdb.DuckDBPyConnection,
    query_terms: Sequence[str],
    *,
    limit: int,
    note_kinds: Sequence[str] | None = None,
    leaf_kinds: Sequence[str] | None = None,
) -> list[tuple[str, float]]:
    """Top leaves by BM25 for the query terms: [(leaf_id, score)], best first, ties by id. A
    leaf's length is weighed against the mean length of its kind: messages (leaves with an
    author) against messages, emails against emails, sections of documents and notes against
    sections, and sections of entity notes against theirs (`ResidentLeaves._stats`). `note_kinds`
    and `leaf_kinds` keep the leaves of those kinds of notes and of leaves before the top is taken."""
    unique = sorted(set(query_terms))
    if not unique:
        return []
    params: list[Any] = [unique]
    kind_filter = ""
    if note_kinds:
        kind_filter = "AND l.note_path IN (SELECT path FROM notes WHERE kind IN (SELECT unnest(?)))"
        params.append(list(note_kinds))
    if leaf_kinds:
        kind_filter += " AND l.leaf_kind IN (SELECT unnest(?))"
        params.append(list(leaf_kinds))
    params.append(limit)
    sql = f"""
        WITH kinded AS (  -- messages (leaves with an author), sections of notes, of entity notes, emails
            SELECT l.id, l.note_path, l.term_count, l.kind AS leaf_kind,
                   CASE WHEN l.author IS NOT NULL AND n.source_kind = 'email' THEN 3
                        WHEN l.author IS NOT NULL THEN 0 WHEN n.kind = 'entity' THEN 2 ELSE 1 END AS kind
            FROM leaves l LEFT JOIN notes n ON n.path = l.note_path
        ),
        kinds AS (
            SELECT kind, avg(term_count)::DOUBLE AS avgdl FROM kinded GROUP BY kind
        ),
        stats AS (
            SELECT count(*)::DOUBLE AS n FROM leaves
        ),
        hits AS (
            SELECT p.leaf_id, p.term, p.tf FROM postings p WHERE p.term IN (SELECT unnest(?))
        ),
        df AS (
            SELECT term, count(*)::DOUBLE AS df FROM hits GROUP BY term
        )
        SELECT h.leaf_id,
               sum(ln(1 + (s.n - d.df + 0.5) / (d.df + 0.5))
                   * h.tf * ({K1} + 1)
                   / (h.tf + {K1} * (1 - {B} + {B} * l.term_count / greatest(k.avgdl, 1)))) AS score
        FROM hits h
        JOIN df d USING (term)
        JOIN kinded l ON l.id = h.leaf_id
        JOIN kinds k USING (kind)
        CROSS JOIN stats s
        WHERE true {kind_filter}
        GROUP BY h.leaf_id
        ORDER BY score DESC, h.leaf_id
        LIMIT ?
    """
    return [(row[0], float(row[1])) for row in con.execute(sql, params).fetchall()]
