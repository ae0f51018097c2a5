"""Cheap admission signals of one leaf: pure functions of its text, its note and the owner.

No LLM, no model, no I/O: a handful of regular expressions and word lists, fast enough to
score every leaf of a large vault during a sync. Each signal is a value in [0, 1]:

| signal | what it measures |
|---|---|
| `length` | content words (not stop words, chat filler, ids or random tokens): <= 1 → 0, ramps to 1 at 20 |
| `content` | share of words that carry content: <= 20 % → 0, >= 60 % → 1 |
| `statement` | share of sentences that state something: a question counts 0, an exclamation 0.5 |
| `variety` | type/token ratio of the words (repetition is noise): <= 0.25 → 0, >= 0.55 → 1; neutral 0.5 under 8 words |
| `entities` | distinct entity-like mentions per word (at least 12 words counted), 1 per 6 words → 1 |
| `kind_prior` | what the note is: document 0.8, email 0.7, chat 0.45 |
| `source_prior` | where it came from (the `source_id` platform): email/docs higher, group chat lower |

Words are split on spaces and punctuation; a run of Chinese or Japanese characters is cut into
two-character units first (`cues.cjk_units`).

and two boosts, added after the weighted mean (see `decide`):

- `interaction` — the owner's engagement: the owner sent it (0.6), it is a reply (0.3), a
  direct conversation of at most two participants (0.3), it mentions the owner (0.3); summed,
  capped at 1. Absent engagement is 0, not "neutral": that is what lets scores spread.
- `priority` — the note or the leaf carries a priority tag (`#priority`, `#important`, …).
- `life_event` — the text names a life event ("pregnant", "died", "married" …: `cues`).

Entities are a regex proxy (the entities module does the real extraction): runs of
capitalised words that are not common sentence starters, e-mail addresses, URLs, @handles,
#tags, numbers of two or more digits, amounts, dates, clock times, weekdays, months and
relative dates ("yesterday", "next week").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress

from vaultmind.admission.cues import cjk_dates, cjk_units, decisive, has_cjk, is_cjk_function, life_events
from vaultmind.calendar_names import WEEKDAYS, alternation
from vaultmind.index.lexical import WordCache, split_words

WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_EMAIL_RE = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_URL_RE = re.compile(r"\bhttps?://[^\s<>()\]\[]+[^\s<>()\]\[.,;:!?'\"]")
_HANDLE_RE = re.compile(r"(?<![\w@])@[A-Za-z0-9_][A-Za-z0-9_.-]*[A-Za-z0-9_]|(?<![\w@])@[A-Za-z0-9_]")
_HASHTAG_RE = re.compile(r"#(?<![\w#&]#)([A-Za-z][\w/-]+)")  # look-behind after "#": see `_CAP_RUN_RE`
_DATE_RE = re.compile(
    r"\b(?:\d{4}-\d{2}-\d{2}|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}|\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?|\d{1,2}\s?[ap]\.?m\.?)\b",
    re.IGNORECASE,
)
_NUMBER_RE = re.compile(r"(?<![\w.])(?:[$€£¥]\s?\d[\d,.]*|\d[\d,.]*\d\s?%?|\d\s?%)")
_UNITS = (
    rf"(?:week|weekend|month|year|{alternation(WEEKDAYS)}|summer|winter"
    r"|spring|fall|autumn)"
)
# Over lower-cased text (twice as fast as IGNORECASE). Each branch starts with its letter and
# then looks behind it for a word character, as a leading `\b` would, so that the engine tries
# only where a y, t, l or n is (twice as fast again).
_RELATIVE_RE = re.compile(
    rf"(?:y(?<!\wy)esterday|t(?<!\wt)(?:oday|onight|omorrow|his\s+{_UNITS})"
    rf"|l(?<!\wl)ast\s+{_UNITS}|n(?<!\wn)ext\s+{_UNITS})\b"
)
_UPPER = "A-ZÀ-ÖØ-ÞĀĂĄĆĈĊČĎĐĒĔĖĘĚĜĞĠĢĤĦĨĪĬĮİĴĶĹĻĽĿŁŃŅŇŊŌŎŐŒŔŖŘŚŜŞŠŢŤŦŨŪŬŮŰŲŴŶŸŹŻŽΑ-ΩЀ-Я"
_CAP_WORD = rf"[{_UPPER}][^\W_]*(?:['’-][^\W_]+)*"
# A run of capitalised words not glued to a word, an apostrophe, "@", "#" or "-" before it. The
# capital comes first and the look-behind after it (two characters: the one before, and the
# capital), so the regex engine only tries where a capital is: twice as fast as the look-behind
# first, which it tries at every position.
_CAP_RUN_RE = re.compile(rf"[{_UPPER}](?<![\w'’@#-].)[^\W_]*(?:['’-][^\W_]+)*(?:[ \t]+{_CAP_WORD})*(?![\w'’-])")
_SENTENCE_END_CHARS = frozenset('.!?…:;\n"“([-')
_DIGIT_RE = re.compile(r"\d")
_MIXED_RE = re.compile(r"\d[^\W\d_]|[^\W\d_]\d")
_LAUGH_RE = re.compile(r"[ah]*h[ah]*|[eh]*h[eh]*|l+o+l+[lo]*|lmf?a+o+")
_NAME_WORD_RE = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_SENTENCE_END_RE = re.compile(r"[^.!?…\n\w]*[^\W_][^.!?…\n]*([.!?…]*)")  # a sentence with a word → its end
_ORDINARY_RE = re.compile(r"(?:ly|ing|ed|ness|ful|['’](?:s|re|ll|ve|d|m|t)|n['’]t)$", re.IGNORECASE)

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you your yours
    yourself yourselves i'm i've i'd i'll you're you've you'll it's that's there's what's let's
    don't doesn't didn't can't won't isn't aren't wasn't weren't haven't hasn't couldn't wouldn't
    shouldn't im ive dont cant wont isnt also really much many well still even get got go going
    gonna wanna one like know think thing things lot lots make made way sure maybe something anything
    everything always never ever yet though since lets us them their theirs it'd he's she's we're
    they're we've they've the""".split()
)

FILLER_WORDS = frozenset(
    """ok okay k kk okey lol lmao lmfao rofl haha hahaha hahahaha hehe heh hah ha yes yeah yea yep yup
    ya yah no nope nah sure thanks thank thx ty tysm cool nice great awesome amazing wow oh ohh ah ahh
    hmm hm mm mhm uh um hi hey heya hello hiya yo bye goodbye cya night gn morning gm good see later
    np welcome omg wtf true right totally exactly indeed agreed agree alright fine love glad happy sorry
    please pls plz congrats congratulations cheers xoxo xo xx lovely sweet same problem later soon
    definitely absolutely""".split()
)

_CAP_EXTRA = frozenset(
    """hey hi hello thanks thank yes no yeah wow oh ok okay sure well so and but or then also just
    however anyway btw fyi imo re fwd fw dear regards best sent looks sounds seems feels means hold
    catch keep take talk tell check try enjoy come hope wish""".split()
)

_NON_ENTITY_CAPS = STOP_WORDS | FILLER_WORDS | _CAP_EXTRA
_NON_CONTENT = STOP_WORDS | FILLER_WORDS


@dataclass(frozen=True, slots=True)
class LeafInput:
    """What admission looks at: one leaf and the note around it."""

    leaf_id: str
    note_path: str
    note_kind: str  # source | user | summary | entity
    source_kind: str | None  # chat | email | document (source notes)
    source_id: str | None
    seq: int
    text: str
    content_hash: str
    author: str | None
    participants: tuple[str, ...] = ()
    subject: str | None = None  # a thread's subject (email notes)
    threaded: bool = False  # the note is one thread (chat thread notes, email threads)
    tags: tuple[str, ...] = ()  # the note's tags, lower-cased, without "#"
    follows_question: bool = False  # the previous leaf of the note is a question by someone else


@dataclass(frozen=True, slots=True)
class Owner:
    """Who the vault belongs to: names, handles and e-mail addresses (`admission.owner`)."""

    names: tuple[str, ...] = ()

    @property
    def known(self) -> bool:
        return bool(self.names)

    def wrote(self, author: str | None) -> bool:
        if not author or not self.names:
            return False
        text = author.lower()
        for name in self.names:
            needle = name.lower()
            if text == needle or _contains_word(text, needle):
                return True
        return False

    def mentioned_in(self, text: str) -> bool:
        lowered = text.lower()
        return any(_contains_word(lowered, name.lower()) for name in self.names if len(name) >= 3)


@dataclass(frozen=True, slots=True)
class Signals:
    """The cheap signals of one leaf, with what they were computed from."""

    words: int
    content_words: int
    entities: tuple[str, ...]  # distinct, "kind:value", sorted
    values: dict[str, float]  # signal name → value in [0, 1]
    interaction: float
    interaction_why: tuple[str, ...]  # "sent", "reply", "dm", "mention"
    priority_tags: tuple[str, ...]
    extras: dict[str, str] = field(default_factory=dict)
    life_events: tuple[str, ...] = ()  # life-event words in the text (`cues.life_events`)
    answers_question: bool = False  # it follows a question by someone else (`LeafInput.follows_question`)
    decisive: bool = False  # it opens with a word that decides (`cues.decisive`)


# -- priors ----------------------------------------------------------------------------------

KIND_PRIOR: dict[str, float] = {"document": 0.8, "email": 0.7, "chat": 0.45}
_DEFAULT_KIND_PRIOR = 0.5

SOURCE_PRIOR: dict[str, float] = {
    # platform (the part of source_id before ":") → prior
    "gmail": 0.75,
    "mbox": 0.7,
    "imap": 0.7,
    "eml": 0.7,
    "outlook": 0.7,
    "document": 0.75,
    "gdrive": 0.75,
    "notion": 0.75,
    "file": 0.7,
    "meeting": 0.8,
    "agent": 0.65,
    "chatgpt": 0.65,
    "signal": 0.6,
    "whatsapp": 0.55,
    "telegram": 0.5,
    "imessage": 0.55,
    "sms": 0.5,
    "instagram": 0.45,
    "slack": 0.45,
    "discord": 0.4,
}


def platform_of(source_id: str | None) -> str:
    if not source_id or ":" not in source_id:
        return ""
    return source_id.split(":", 1)[0].strip().lower()


@lru_cache(maxsize=4096)  # a few sources, thousands of leaves each
def source_prior(source_kind: str | None, source_id: str | None) -> float:
    prior = SOURCE_PRIOR.get(platform_of(source_id))
    if prior is not None:
        return prior
    return KIND_PRIOR.get(source_kind or "", _DEFAULT_KIND_PRIOR)


# -- text ------------------------------------------------------------------------------------


def words_of(text: str) -> list[str]:
    return WORD_RE.findall(text)


def is_content_word(word: str) -> bool:
    return _CONTENT_OF[word.lower().replace("’", "'")]


def _content_count(counts: Counter[str]) -> int:
    """How many of the counted words (lower-cased, plain apostrophes) are content words."""
    return sum(compress(counts.values(), map(_CONTENT_OF.__getitem__, counts)))


def _is_content(low: str) -> bool:
    """`low` is lower-cased, with typographic apostrophes made plain."""
    if len(low) < 2 or low in _NON_CONTENT or len(low) > 30:
        return False
    if len(low) >= 6 and _MIXED_RE.search(low):
        return False  # an id, a hash, a random token: "7gssu1dirvixlo", "a1b2c3d4"
    if not low.isascii() and is_cjk_function(low):
        return False
    return not (len(low) >= 4 and _LAUGH_RE.fullmatch(low) is not None)


_CONTENT_OF: WordCache[bool] = WordCache(_is_content, 1 << 16)  # `_is_content` by word


def extract_entities(text: str) -> tuple[str, ...]:
    """Distinct entity-like mentions in `text`, as sorted "kind:value" strings (see module doc)."""
    found: set[str] = set()
    masked = text
    if "://" in masked:
        for m in _URL_RE.finditer(masked):
            found.add(f"url:{m.group(0)}")
        masked = _URL_RE.sub(" ", masked)
    if "@" in masked:
        for m in _EMAIL_RE.finditer(masked):
            found.add(f"email:{m.group(0).lower()}")
        masked = _EMAIL_RE.sub(" ", masked)
        for m in _HANDLE_RE.finditer(masked):
            found.add(f"handle:{m.group(0)[1:].lower()}")
    if "#" in masked:
        for m in _HASHTAG_RE.finditer(masked):
            found.add(f"tag:{m.group(1).lower()}")
    if _DIGIT_RE.search(masked):
        for m in _DATE_RE.finditer(masked):
            found.add(f"date:{m.group(0).lower()}")
        for m in _NUMBER_RE.finditer(_DATE_RE.sub(" ", masked)):
            found.add(f"number:{m.group(0).replace(' ', '')}")
    for m in _RELATIVE_RE.finditer(masked.lower()):
        found.add("date:" + " ".join(m.group(0).split()))
    for run in _capitalised_runs(masked):
        found.add(f"name:{run.lower()}")
    if not masked.isascii() and has_cjk(masked):
        found |= cjk_dates(masked)
    return tuple(sorted(found))


def _capitalised_runs(text: str) -> list[str]:
    """Runs of capitalised words separated only by spaces or tabs, minus common sentence starters.

    A word that starts a sentence is capitalised anyway: alone, it counts only when it does not
    look like an ordinary word (an adverb, a gerund, a contraction …).
    """
    runs: list[str] = []
    for m in _CAP_RUN_RE.finditer(text):
        words = m.group(0).split()
        first = 0
        while first < len(words) and _plain_word(words[first]):
            first += 1
        words = words[first:]
        while words and _plain_word(words[-1]):
            words.pop()
        if not words:
            continue
        if len(words) == 1:
            word = words[0]
            if len(word) < 2 or not _NAME_WORD_RE.fullmatch(word):
                continue
            if first == 0 and not word.isupper() and _ORDINARY_RE.search(word):
                i = m.start() - 1
                while i >= 0 and text[i] in " \t":
                    i -= 1
                if i < 0 or text[i] in _SENTENCE_END_CHARS:
                    continue
        runs.append(" ".join(words))
    return runs


@lru_cache(maxsize=1 << 14)
def _plain_word(word: str) -> bool:
    return word.lower().replace("’", "'") in _NON_ENTITY_CAPS


# -- the signals -------------------------------------------------------------------------------


def _ramp(x: float, lo: float, hi: float) -> float:
    if x <= lo:
        return 0.0
    if x >= hi:
        return 1.0
    return (x - lo) / (hi - lo)


def length_signal(content_words: int) -> float:
    """<= 1 content word → 0; linear to 1 at 20; long texts stay at 1 up to 4,000 words, then
    fall to 0.6 at 12,000 (a huge chunk is usually pasted data, not a memory)."""
    if content_words >= 4000:
        return round(1.0 - 0.4 * _ramp(content_words, 4000, 12000), 4)
    return round(_ramp(content_words, 1, 20), 4)


def statement_signal(text: str) -> float:
    """Share of sentences that state something; questions count 0, exclamations 0.5."""
    ends = _SENTENCE_END_RE.findall(text)
    if not ends:
        return 0.0
    questions = sum(1 for e in ends if e.endswith("?"))
    exclamations = sum(1 for e in ends if e.endswith("!"))
    return round((len(ends) - questions - 0.5 * exclamations) / len(ends), 4)


def compute_signals(leaf: LeafInput, owner: Owner, priority_tags: Iterable[str]) -> Signals:
    lower = leaf.text.lower().replace("’", "'")
    words = split_words(lower, WORD_RE)
    cjk = not leaf.text.isascii() and has_cjk(leaf.text)
    if cjk:
        words = cjk_units(words)
    n = len(words)
    counts = Counter(words)
    content = _content_count(counts)
    entities = extract_entities(leaf.text)

    values = {
        "length": length_signal(content),
        "content": round(_ramp(content / n, 0.2, 0.6), 4) if n else 0.0,
        "statement": statement_signal(leaf.text),
        "variety": round(_ramp(len(counts) / n, 0.25, 0.55), 4) if n >= 8 else 0.5,
        "entities": round(min(1.0, len(entities) / max(n, 12) * 6.0), 4),
        "kind_prior": KIND_PRIOR.get(leaf.source_kind or "", _DEFAULT_KIND_PRIOR),
        "source_prior": source_prior(leaf.source_kind, leaf.source_id),
    }

    why: list[str] = []
    amount = 0.0
    if owner.wrote(leaf.author):
        why.append("sent")
        amount += 0.6
    if is_reply(leaf):
        why.append("reply")
        amount += 0.3
    if leaf.source_kind in ("chat", "email") and 0 < len(leaf.participants) <= 2:
        why.append("dm")
        amount += 0.3
    if owner.known and "sent" not in why and owner.mentioned_in(leaf.text):
        why.append("mention")
        amount += 0.3

    wanted = _wanted(tuple(priority_tags))
    inline = {m.group(1).lower() for m in _HASHTAG_RE.finditer(leaf.text)} if "#" in leaf.text else set()
    hits = sorted((set(leaf.tags) | inline) & wanted)
    return Signals(
        words=n,
        content_words=content,
        entities=entities,
        values=values,
        interaction=round(min(1.0, amount), 4),
        interaction_why=tuple(why),
        priority_tags=tuple(hits),
        life_events=life_events(counts.keys(), lower, cjk),
        answers_question=leaf.follows_question,
        decisive=leaf.follows_question and decisive(leaf.text),
    )


@lru_cache(maxsize=64)
def _wanted(priority_tags: tuple[str, ...]) -> frozenset[str]:
    return frozenset(t.lower().lstrip("#") for t in priority_tags)


_REPLY_SUBJECT_RE = re.compile(r"^\s*(?:re|aw|sv|antw|vs|r)\s*(?:\[\d+\])?\s*:", re.IGNORECASE)


def is_reply(leaf: LeafInput) -> bool:
    """A reply: a later message of a thread, or a message of a thread whose subject says "Re:"."""
    if leaf.source_kind == "email":
        return leaf.seq > 0 or bool(leaf.subject and _REPLY_SUBJECT_RE.match(leaf.subject))
    return leaf.threaded and leaf.seq > 0


def _contains_word(text: str, needle: str) -> bool:
    if not needle:
        return False
    start = text.find(needle)
    while start != -1:
        before = text[start - 1] if start > 0 else " "
        end = start + len(needle)
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = text.find(needle, start + 1)
    return False


def owner_from(values: Sequence[str] | str | None) -> Owner:
    if values is None:
        return Owner()
    items = [values] if isinstance(values, str) else list(values)
    return Owner(tuple(sorted({str(v).strip() for v in items if str(v).strip()})))
