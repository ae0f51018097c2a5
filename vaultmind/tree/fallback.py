"""The deterministic extractive summarizer: no LLM, same children → same bytes.

1. Clean each child into sentences (`tree.sentences`: markup, attachments, a mail's quoted
   reply and forwarded headers, greetings go). A summary's own prose gives back who said each
   sentence and when.
2. Score each sentence by term salience — Σ over its distinct terms of (tf − ½) × log(1 + N/df),
   tf counted over all children, df = children containing the term (N of them), divided by
   the square root of its term count — with a bonus for opening a child, a malus for
   fragments of fewer than four words, and a bonus for facts (up to three dates, times,
   numbers, decisions such as "moved", "booked", "approved", names of the child's entities):
   salience alone favours the words a chat repeats ("Great, I'll book the hut") over the news
   said once ("the trip is moved to Saturday 20 April"). Sentences under 30 % of the best
   score are filler, and so is what says nothing alone: a short fragment leaning on the
   sentence before it ("And in my free time.") and a bare assent ("Sure, fine.").
3. Pick greedily: the score, raised for names (people, places, …) not yet covered and for an
   author, note or summary the summary says nothing of yet, lowered for terms already picked,
   while the rendered summary stays within the budget, and never one the summary already says
   (the same words, case and spacing aside: a message pasted twice). A sentence too long for what is left
   is tried shorter — without its lead-in ("Heads up: "), then without its trailing clauses —
   before it is given up: a small budget keeps the news of several messages, not one whole.
4. Render the picked sentences in their original order as prose: messages attributed to their
   authors ("Alice Chen asked: …", "Bob Stone said: …"), sections introduced by their note
   title, and a date before each day's paragraph when the children span several days (though
   what is kept was said on one) — in a summary of summaries too, with the authors and days
   the child summaries gave. What no one is named as saying has a paragraph of its own: after
   "Alice Chen said: …" it would read, at the next level, as hers.

The output never exceeds the budget, which never exceeds the children's own size, but for
who said it and when in front of a summary that keeps what one voice said (one short message).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from vaultmind.calendar_names import MONTH_ABBREVIATIONS, WEEKDAYS, alternation
from vaultmind.entities.ids import normalize
from vaultmind.index.lexical import terms as lexical_terms
from vaultmind.markdown.render import no_tag
from vaultmind.markdown.tokens import count_tokens
from vaultmind.tree.filler import says_nothing_alone
from vaultmind.tree.names import NAME_ABBREVIATIONS, name_candidates
from vaultmind.tree.sentences import clean_units, split_sentences
from vaultmind.tree.summarize import FALLBACK_IDENTITY, ChildText, SummaryText

MAX_SENTENCES = 400
NAME_BONUS = 0.35
REPEAT_MALUS = 0.3
FIRST_BONUS = 1.15
SHORT_MALUS = 0.6
MIN_SCORE = 0.3  # relative to the best sentence: below it, a sentence is filler ("ok thanks")
FACT_BONUS = 0.6  # a sentence with dates, numbers, decisions, known names: what a reader looks for
MAX_FACTS = 3
SPEAKER_BONUS = 0.5  # a message, an author or a section the summary does not yet say anything of

# A sentence's end: its final punctuation, a quotation closed after it (`"Done!"`) or a bracket;
# a quotation closed after a word (`"kills the launch story"`) ends no sentence
_END_RE = re.compile(r"(?:[.!?…。！？][\"'”’]*|\))$")
_MESSAGES = ("message", "email")
# How `_render` attributes what a summary says: a day before its paragraph, an author before
# what they said ("Bob Stone replied: ")
_DAY_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}):\s+")
# A name's word ends in no full stop but an initial's, a title's or a company's ("Foo B. Baz",
# "Dr. Rossi", "Acme Inc."): a sentence before the name ("They bring us joy. John said: ", "Is it
# moved? No. Bob said: ") is what someone said, not a name
_NAME_WORD = (
    r"(?:[^\s:!?]*[^\s:!?.]|[A-ZÀ-Þ]\."
    rf"|(?:{'|'.join(NAME_ABBREVIATIONS)})\.)"
)
_SAID_RE = re.compile(
    rf"(?:^|(?<=[.!?…\"'”’)] ))((?:{_NAME_WORD} ){{0,5}}{_NAME_WORD}) (said|asked|replied|wrote): "
)
# What makes a sentence worth keeping beyond its words' salience: a time, a number, a decision
_FACT_RE = re.compile(
    r"\d+(?:[.:,/-]\d+)*(?:st|nd|rd|th|am|pm|h|k|%)?\b"
    rf"|\b(?:{alternation(MONTH_ABBREVIATIONS)})[a-z]*\b"
    rf"|\b(?:{alternation(WEEKDAYS)})\b|\b(?:today|tomorrow|tonight|next week)\b"
    r"|\b(?:decid|agree|confirm|book|reserv|mov|postpon|cancel|reschedul|schedul|deadline|due|chose|pick|"
    r"approv|sign|launch|ship|deliver|pay|paid|price|cost|budget)\w*",
    re.IGNORECASE,
)
# Where a sentence too long for the budget may be cut: after a short lead-in ("Heads up: "),
# or before a trailing clause (", the forecast is bad")
_LEAD_IN_RE = re.compile(r"^[^,;:]{1,24}:\s+(?=\S)")
_CLAUSE_END_RE = re.compile(r"\s*(?:[,;:]|\s[–—-])\s+")


@dataclass(slots=True)
class _Sentence:
    child: int
    pos: int
    text: str
    terms: frozenset[str]
    names: frozenset[str]
    facts: int = 0
    score: float = 0.0
    voice: _Voice | None = None


@dataclass(frozen=True, slots=True)
class _Voice:
    """Who says a sentence, and when: a message's author and day, a section's note title, or,
    in a summary of summaries, the author and day the child summary attributed it to."""

    kind: str  # message | email | section | summary
    who: str  # an author, a note title, a summary's id
    day: str = ""  # YYYY-MM-DD of a message, or of a child summary's unattributed text


class FallbackSummarizer:
    """Extractive and deterministic; also what every other summarizer falls back to."""

    name = "fallback"

    @property
    def identity(self) -> str:
        return FALLBACK_IDENTITY

    def summarize(self, children: Sequence[ChildText], budget_tokens: int) -> SummaryText:
        return SummaryText(extractive_summary(children, budget_tokens), FALLBACK_IDENTITY)


def extractive_summary(children: Sequence[ChildText], budget_tokens: int) -> str:
    """The most salient sentences of `children` as prose of at most `budget_tokens` tokens."""
    limit = min(budget_tokens, sum(c.tokens for c in children))
    if limit <= 0:
        return ""
    known = [_known_names(child) for child in children]
    sentences = _sentences(children, known)
    if not sentences:
        return _clip(_named(children), budget_tokens)
    _score(sentences, len(children))
    dated = len(_days_said_on(sentences)) > 1
    chosen = _select(children, sentences, limit, dated, known)
    if chosen:
        return _render(children, chosen, dated)
    best = max(sentences, key=lambda s: (s.score, -s.child, -s.pos))
    return _voiced(_render(children, [best], dated), best.text, limit)


def _voiced(rendered: str, sentence: str, limit: int) -> str:
    """The one sentence a summary keeps when none fits whole (`rendered`: it with who said it),
    clipped to `limit` tokens; who said it (or the note it is from) stays in front however
    short the children are, else a summary of one short message would not say whose it is."""
    finished = _finish(sentence)
    voice = rendered[: -len(finished)] if rendered.endswith(finished) else ""  # on top of `limit`: not their text
    clipped = _clip(finished if count_tokens(finished) <= limit else sentence, limit)  # its "." goes first
    return voice + clipped if clipped else ""


def _named(children: Sequence[ChildText], shown: int = 5) -> str:
    """What a summary of children holding no sentence says (notes whose text is only embeds
    and headings: `## Notes` over `![[Daily.base]]`): where they come from, the first `shown`
    notes' titles (a section's heading left out) or speakers, so that no summary note is
    written empty. It may be longer than such children's few tokens (an empty one says less),
    never than the summary's budget (`extractive_summary` clips it)."""
    names = list(dict.fromkeys((c.title or "").split(" › ")[0] or _speaker(c.author or "") or c.id for c in children))
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return f"Only embeds or headings, no text: {', '.join(names[:shown])}{more}."


# -- sentences -----------------------------------------------------------------------------


def _sentences(children: Sequence[ChildText], known: Sequence[Sequence[str]]) -> list[_Sentence]:
    """The sentences of `children`, at most a share of MAX_SENTENCES each; `known[i]`: the
    names child i mentions (`_known_names`)."""
    out: list[_Sentence] = []
    per_child = max(8, MAX_SENTENCES // max(1, len(children)))
    for ci, child in enumerate(children):
        pos = 0
        for voice, unit in _voiced_units(child):
            for text in split_sentences(unit):
                if pos >= per_child:
                    break
                names = frozenset(normalize(n) for n in name_candidates(text)) - {""}
                facts = _facts(text, known[ci])
                out.append(_Sentence(ci, pos, text, frozenset(lexical_terms(text)), names, facts, 0.0, voice))
                pos += 1
    return out


def _voiced_units(child: ChildText) -> list[tuple[_Voice, str]]:
    """The units of `child`, each with who says it. A summary's own prose says it too, as
    `_render` wrote it ("2024-05-02: Alice Chen said: … Bob Stone replied: …"): that prefix
    goes back into the voice, so a summary of summaries scores what was said, not who said it,
    and still says who said it and when, of every sentence it keeps."""
    units = clean_units(child.text, mail=child.kind == "email")
    if child.kind in _MESSAGES:
        voice = _Voice(child.kind, _speaker(child.author or ""), (child.time or "")[:10])
        return [(voice, unit) for unit in units]
    if child.kind == "section":
        return [(_Voice("section", child.title or ""), unit) for unit in units]
    out: list[tuple[_Voice, str]] = []
    for unit in units:
        dated = _DAY_RE.match(unit)
        day = dated.group(1) if dated else (child.time or "")[:10]
        unit = unit[dated.end() :] if dated else unit
        said = list(_SAID_RE.finditer(unit))
        head = unit[: said[0].start()] if said else unit
        if head.strip():  # said by no one it names (a one-message summary, a section's): its day
            out.append((_Voice("summary", child.id, day), head))
        for at, match in enumerate(said):
            kind = "email" if match.group(2) == "wrote" else "message"
            end = said[at + 1].start() if at + 1 < len(said) else len(unit)
            out.append((_Voice(kind, match.group(1), day), unit[match.end() : end]))
    return out


def _known_names(child: ChildText) -> list[str]:
    """The names of the entities `child` mentions, normalized."""
    return [name for name in map(normalize, child.entities) if name]


def _facts(text: str, known: Sequence[str]) -> int:
    """Distinct dates, numbers, decisions and `known` names (`_known_names`) in `text`, at most
    MAX_FACTS."""
    found = {m.group(0).lower() for m in _FACT_RE.finditer(text)}
    lowered = normalize(text)
    found |= {name for name in known if name in lowered}
    return min(MAX_FACTS, len(found))


def _score(sentences: list[_Sentence], n_children: int) -> None:
    tf: Counter[str] = Counter()
    df: Counter[str] = Counter()
    seen: dict[int, set[str]] = {}
    for s in sentences:
        tf.update(s.terms)
        seen.setdefault(s.child, set()).update(s.terms)
    for terms in seen.values():
        df.update(terms)
    # (tf - 1/2): a term said once is peripheral, one the children keep coming back to is the topic
    weight = {t: (tf[t] - 0.5) * math.log(1.0 + n_children / df[t]) for t in tf}
    for s in sentences:
        if s.terms:
            s.score = math.fsum(weight[t] for t in s.terms) / math.sqrt(len(s.terms))  # in any order alike
        if s.pos == 0:
            s.score *= FIRST_BONUS
        if len(s.text.split()) < 4:
            s.score *= SHORT_MALUS  # a fragment ("March.") says little even with a date in it
        else:
            s.score *= 1 + FACT_BONUS * s.facts / MAX_FACTS
    top = max((s.score for s in sentences), default=0.0) or 1.0
    for s in sentences:
        s.score = s.score / top


def _select(
    children: Sequence[ChildText],
    sentences: list[_Sentence],
    limit: int,
    dated: bool,
    known: Sequence[Sequence[str]],
) -> list[_Sentence]:
    """Greedy: the best gain first; a sentence too long for what is left of the budget is tried
    shorter (its lead-in, then its trailing clauses cut) before it is given up."""
    best_of: dict[int, float] = {}
    for s in sentences:
        best_of[s.child] = max(best_of.get(s.child, 0.0), s.score)
    people = _people(sentences)
    remaining = [s for s in sentences if _worth_picking(s, children, best_of, people)]
    chosen: list[_Sentence] = []
    names: set[str] = set()
    picked_terms: set[str] = set()
    voices: set[str] = set()
    covered: set[int] = set()
    said: set[str] = set()  # what is picked, as `_said` reads it: never the same sentence twice
    while remaining:
        best = max(remaining, key=lambda s: _gain(s, names, picked_terms, voices, covered, children))
        remaining.remove(best)
        for form in _shorter_forms(best, known[best.child]):
            if form is not best and says_nothing_alone(form.text, form.facts, people):
                continue  # cut to a fragment that leans on what was cut ("By telling our stories")
            if _said(form.text) in said:
                continue  # a message repeated (pasted twice, quoted back) is said once
            trial = sorted([*chosen, form], key=lambda s: (s.child, s.pos))
            if _size(children, trial, dated) <= limit:
                chosen = trial
                names |= form.names
                picked_terms |= form.terms
                voices.add(_voice_key(form))
                covered.add(form.child)
                said.add(_said(form.text))
                break
    return chosen


def _size(children: Sequence[ChildText], chosen: Sequence[_Sentence], dated: bool) -> int:
    """What the budget counts of a summary: its prose as rendered; of what one voice says (one
    author on one day, one section, one child summary), its own words alone: who said it (and
    the day) stays in front on top of the budget, so one short message is kept whole after
    "Dana said: " rather than losing its last clause to its author's name (docs/trees.md)."""
    if len({_voice_key(s) + "|" + (s.voice.day if s.voice else "") for s in chosen}) == 1:
        return count_tokens(" ".join(_finish(s.text) for s in chosen))
    return count_tokens(_render(children, chosen, dated))


def _said(text: str) -> str:
    """A sentence as a repeat is recognized: case, spacing and the closing stop aside."""
    return " ".join(text.casefold().split()).rstrip(".!?…。！？ ")


def _worth_picking(
    s: _Sentence, children: Sequence[ChildText], best_of: dict[int, float], people: frozenset[str]
) -> bool:
    """Not filler: over MIN_SCORE of the best sentence — of the best of its own child in a child
    summary, which stands for a stretch of days: one whose words the others do not repeat still
    has its say, a line added to it ("My own note.") does not — and not something that says
    nothing alone."""
    best = best_of[s.child] if children[s.child].kind == "summary" else 1.0
    return s.score >= MIN_SCORE * best and not says_nothing_alone(s.text, s.facts, people)


def _people(sentences: Sequence[_Sentence]) -> frozenset[str]:
    """The words of the names of who speaks among `sentences` (authors, and the speakers child
    summaries name), lowercased: the conversation's people, whom a sentence may address."""
    return frozenset(
        word.lower()
        for s in sentences
        if s.voice is not None and s.voice.kind in _MESSAGES
        for word in s.voice.who.split()
    )


def _voice_key(s: _Sentence) -> str:
    """Who says it: a message's author, a section's note, a summary itself."""
    voice = s.voice
    if voice is not None and voice.who and voice.kind in _MESSAGES:
        return "author:" + voice.who
    if voice is not None and voice.who and voice.kind == "section":
        return "section:" + voice.who
    return f"child:{s.child}"


def _shorter_forms(s: _Sentence, known: Sequence[str]) -> Iterator[_Sentence]:
    """`s` itself, then cut: without its lead-in, then its trailing clauses dropped one by one
    (never shorter than four words), each keeping the names, terms and facts (`known`: the
    child's entity names, normalized) it still has; made only as they are asked for."""
    yield s
    texts = [s.text]
    lead = _LEAD_IN_RE.match(s.text)
    core = s.text[lead.end() :] if lead else s.text
    if core != s.text:
        texts.append(core[:1].upper() + core[1:])
    cuts = [m.start() for m in _CLAUSE_END_RE.finditer(core)]
    for cut in reversed(cuts):
        part = core[:cut].rstrip()
        if len(part.split()) >= 4:
            texts.append(part[:1].upper() + part[1:])
    for text in dict.fromkeys(texts[1:]):
        names = frozenset(n for n in s.names if n in normalize(text))
        facts = _facts(text, known) if s.facts else 0  # a part has no fact the whole lacks
        yield replace(s, text=text, terms=frozenset(lexical_terms(text)), names=names, facts=facts)


def _gain(
    s: _Sentence,
    names: set[str],
    picked: set[str],
    voices: set[str],
    covered: set[int],
    children: Sequence[ChildText],
) -> tuple[bool, float, int, int]:
    """How much `s` adds to what is picked. A child summary nothing is picked from yet comes
    first: each stands for a stretch of days, and a summary of summaries says what each was
    about before it says more of any."""
    new_names = len(s.names - names)
    repeat = len(s.terms & picked) / len(s.terms) if s.terms else 0.0
    value = s.score * (1 + NAME_BONUS * new_names / (1 + len(s.names))) * (1 - REPEAT_MALUS * repeat)
    if _voice_key(s) not in voices:
        value *= 1 + SPEAKER_BONUS
    uncovered = children[s.child].kind == "summary" and s.child not in covered
    return (uncovered, value, -s.child, -s.pos)


# -- prose ---------------------------------------------------------------------------------


def _speaker(author: str) -> str:
    """`Bob Stone <bob@example.com>` → `Bob Stone`."""
    name = author.strip()
    if name.endswith(">") and "<" in name:
        head = name[: name.rindex("<")].strip().strip('"')
        if head:
            return head
    return name


def _finish(text: str) -> str:
    """A sentence with its final punctuation ("in total:" → "in total.")."""
    if _END_RE.search(text):
        return text
    return text.rstrip(",;:–— ") + "."


def _days_said_on(sentences: Sequence[_Sentence]) -> set[str]:
    """The days `sentences` were said on: a message's day and, in a summary of summaries, the day
    a child summary gives what it attributes and what it says without naming who said it."""
    return {
        s.voice.day for s in sentences if s.voice is not None and s.voice.kind != "section" and s.voice.day
    }


def _render(children: Sequence[ChildText], chosen: Sequence[_Sentence], dated: bool) -> str:
    """`chosen` as attributed prose; `dated` (the children span several days): each day's
    paragraph opens with its date, even when what is kept was all said on one of them."""
    paragraphs: list[list[str]] = []
    group_key: tuple[str, str] | None = None
    group: list[str] = []
    paragraph_key: str | None = None
    last_question = False

    def flush_group() -> None:
        nonlocal group, last_question
        if not group or group_key is None:
            return
        kind, who = group_key
        who = no_tag(who)  # "Dana Whitfield #ops said:" tags no summary with `ops`
        text = " ".join(_finish(s) for s in group)
        if kind in _MESSAGES and who:
            asked = text.endswith("?")
            verb = (
                "asked" if asked else "replied" if last_question else "wrote" if kind == "email" else "said"
            )
            text = f"{who} {verb}: {text}"
            last_question = asked
        elif kind == "section" and who:
            text = f"{who}: {text}"
        paragraphs[-1].append(text)
        group = []

    for s in chosen:
        voice = s.voice or _Voice("summary", children[s.child].id)
        # a message's day; what no one is named as saying (a section's, a child summary's
        # unattributed text, an authorless message's) a paragraph of its own: after "X said: "
        # it would read as X's
        attributed = voice.kind in _MESSAGES and bool(voice.who)
        para = voice.day if attributed else f"{voice.day} {voice.kind}:{voice.who}"
        key = (voice.kind, voice.who)
        if para != paragraph_key or not paragraphs:
            flush_group()
            paragraphs.append([])
            if dated and voice.day:
                paragraphs[-1].append(f"{voice.day}:")
            paragraph_key = para
            group_key = key
            last_question = False
        elif key != group_key:
            flush_group()
            group_key = key
        group.append(s.text)
    flush_group()
    return "\n\n".join(" ".join(p) for p in paragraphs if p)


def _clip(text: str, limit: int) -> str:
    """`text` cut at a word boundary so it fits `limit` tokens (with "…" when cut)."""
    if count_tokens(text) <= limit:
        return text
    words = text.split()
    lo, hi = 0, len(words)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(" ".join(words[:mid]) + " …") <= limit:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]) + " …" if lo else ""
