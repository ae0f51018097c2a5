"""Evidence for agents: the top hits as one compact, cited block within a token budget.

Each item carries its citation — the vault link and the original `source_ref` — so an agent
can quote it and a person can follow it. A question with no grounding in the memory (no
known entity, no salient term) gets an explicit "no grounding" answer instead of arbitrary
top-k text; a grounded question's words that the memory never mentions are named. Items are
taken in rank order while they fit the budget; one that does not is left out, and a smaller
one after it may still come in; then the room left is shared by those left out that hold the
question's words, each cut to its passage holding them (a long email is one item, not dropped
for its length); the block ends by naming what it still left out. The first item
never gives way to weaker ones: when it does not fit whole, its text is cut to fit (marked
"shortened"; from the sentence holding most of the question's words, with "…" where text was
left out), its citation down to the vault link if it must, as long as `MIN_SHORTENED_CHARS` of
it fit; when even that is too much, the block says the budget is too small.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultmind.entities.extract import display_of
from vaultmind.index.lexical import terms
from vaultmind.markdown.blocks import atx_heading
from vaultmind.markdown.spans import hard_split
from vaultmind.markdown.standalone import one_line, one_line_but_code, readable_headings, standalone
from vaultmind.markdown.tokens import MAX_CHARS_PER_TOKEN, count_tokens
from vaultmind.retrieval.answer_type import ASKING_WORDS, OPEN_TASK, open_task_of
from vaultmind.retrieval.budget import EVIDENCE_BUDGET
from vaultmind.shell import command_line

if TYPE_CHECKING:
    from vaultmind.index.resident import ResidentLeaves
    from vaultmind.index.store import Index

SALIENT_MAX_DF = 0.25  # a term in more than a quarter of all leaves grounds nothing
SALIENT_FEW = 4  # a term in fewer leaves than this is specific however small the memory
MIN_SHORTENED_CHARS = 80  # of the first item's text, or it is left out rather than cut
_WORD = re.compile(r"\w+")
LISTED_REFS = 2
"""Source refs a hit shows (a summary has one per message it folds); `listed_refs`."""
# the question asks what the asker wrote in a window that none of their notes is dated in
NONE_YOURS = "none of your notes is dated inside this window: the items below are what else the memory holds"


def none_by(names: Sequence[str]) -> str:
    """The notice of a window none of whose messages is by the speakers the question names
    ("what did Bob say yesterday?" when Bob wrote nothing that day). Each person once, as shown:
    "Alice Chen" and "Alice Chen <alice@…>" are one speaker."""
    who = " or ".join(dict.fromkeys(display_of(name) for name in names))
    return f"nothing by {who} is dated inside this window: the items below are what {who} said nearest it"


_AHEAD_NONE = "Nothing in the memory falls inside this window yet, and nothing said before it was found."


def is_grounded(query_info: dict[str, Any], salient_terms: list[str]) -> bool:
    """A known entity, a salient term, a time window ("what did we do yesterday?") or the
    vault's open tasks ("what are my open tasks?") ground a question."""
    return (
        bool(query_info.get("entities"))
        or bool(salient_terms)
        or bool(query_info.get("time_window"))
        or bool(query_info.get("open_tasks"))
    )


def salient_terms(leaves: ResidentLeaves, terms: list[str]) -> list[str]:
    """Query terms that exist in the index and are not near-ubiquitous (from the resident
    postings: no SQL). A term in fewer than `SALIENT_FEW` leaves is not near-ubiquitous: in a
    memory of one note whose leaves all repeat its title ("Tidepool launch"), "tidepool" is
    in every leaf, and still the most specific word the memory has."""
    out = set()
    for term in set(terms) - ASKING_WORDS:
        df, total = leaves.document_frequency(term)
        if df and (df < SALIENT_FEW or df / total <= SALIENT_MAX_DF):
            out.add(term)
    return sorted(out)


def unknown_words(
    leaves: ResidentLeaves, question: str, searched: Collection[str], named: Collection[str] = ()
) -> list[str]:
    """The question's words none of whose search terms occurs anywhere in the memory
    ("kubernetes" in a memory that never mentions it), in the question's order, each once —
    among the words walk searched (`searched`: its content terms; not a time window's words,
    an author's name or the verb asking for their words), and not a word of a name the question
    resolved to an entity (`named`: "Harbour Hall" is the memory's Harbor Hall)."""
    names = {word.lower() for surface in named for word in _WORD.findall(surface)}
    out: list[str] = []
    for word in dict.fromkeys(_WORD.findall(question)):
        if word.lower() in names:
            continue
        word_terms = set(terms(word))
        if not word_terms or not word_terms <= set(searched) or word_terms <= ASKING_WORDS:
            continue
        if all(leaves.document_frequency(t)[0] == 0 for t in word_terms):
            out.append(word)
    return out


def source_words(index: Index) -> frozenset[str]:
    """The search terms that name the kinds and platforms of the memory's sources ("chat",
    "email", "slack", "whatsapp": a note's `source_kind` and its `source_id`'s prefix): a
    question's "slack" names where the memory's messages were said, which they seldom say, and
    is never a word the memory does not know. Read once per state of the index (a pass over
    every note, asked by each walk and search with a word the memory does not know)."""
    return index.cached("source_words", lambda _: _read_source_words(index))


def _read_source_words(index: Index) -> frozenset[str]:
    rows = index.query(
        "SELECT DISTINCT source_kind FROM notes WHERE source_kind IS NOT NULL "
        "UNION SELECT DISTINCT split_part(source_id, ':', 1) FROM notes WHERE source_id IS NOT NULL"
    )
    return frozenset(t for (name,) in rows for t in terms(name))


def format_evidence(
    result: dict[str, Any],
    *,
    budget_tokens: int = EVIDENCE_BUDGET,
    grounded: bool = True,
    unknown: Sequence[str] = (),
    question: str | None = None,
    vault: Path | None = None,
) -> str:
    """A Markdown block of cited hits whose total size stays within `budget_tokens` (as
    `count_tokens` counts them: never under what a tokenizer gives), whatever it says (no
    grounding, a budget too small). `unknown`: the question's words the memory never mentions,
    named first so an agent does not take the items for an answer about them. Items left out for the budget are named last. `question`: as asked, so a question
    without grounding is answered with the words it searched as it wrote them; `vault`: the
    vault the commands the block names run on (`shell.command_line`)."""
    query = result.get("query") or {}
    if not grounded:
        missing = f"Not in the memory: {', '.join(unknown)}.\n" if unknown else ""
        words = searched_words(question or "", query.get("terms") or ())
        said = f" (searched: {', '.join(words)})" if words else ""
        return within(
            budget_tokens,
            missing + "No grounding: the question names no known entity and no word that is specific in this "
            f"memory{said}. Ask with a name, a place, a project or a distinctive word.",
            missing + "No grounding: ask with a name, a place, a project or a distinctive word.",
            "No grounding: ask with a name or a distinctive word.",
            "No grounding.",
        )
    hits = result.get("hits", [])
    if not hits:
        window = query.get("time_window")
        if window:  # "what did we do yesterday?" of a day the memory holds nothing of
            none = _AHEAD_NONE if query.get("window_ahead") else "Nothing in the memory falls inside this window."
            return within(budget_tokens, f"Time window: {window['start']} – {window['end']} (from “{window['text']}”)\n" + none, none)
        return within(budget_tokens, "No evidence found in the memory for this question.", "No evidence found.")
    lines = []
    if result.get("notice"):  # the embedder failed: the items were found without dense search
        lines.append(str(result["notice"])[0].upper() + str(result["notice"])[1:] + ".")
    if unknown:
        lines.append(f"Not in the memory: {', '.join(unknown)}.")
    if query.get("corrected"):  # "lauch", no word the memory holds, read as "launch"
        lines.append("Read as: " + ", ".join(f"“{old}” → “{new}”" for old, new in query["corrected"].items()) + ".")
    window = query.get("time_window")
    if window:
        lines.append(f"Time window: {window['start']} – {window['end']} (from “{window['text']}”)")
        if query.get("window_none_yours"):  # "what did I write on 11 March?"
            lines.append(NONE_YOURS[0].upper() + NONE_YOURS[1:] + ".")
        if query.get("window_none_by"):  # "what did Bob say yesterday?"
            notice = none_by(query["window_none_by"])
            lines.append(notice[0].upper() + notice[1:] + ".")
        if query.get("window_ahead"):  # "what is happening in April?" asked in March
            lines.append("Nothing in the memory falls inside this window yet: the items below were said before it.")
        elif not any(_in_window(hit, window) for hit in hits):
            lines.append(
                "Nothing in the memory falls inside this window; the items below are from outside it."
                if query.get("window_empty", True)
                else "None of the items below falls inside this window."
            )
    used = sum(count_tokens(line) + 1 for line in lines)
    items: list[tuple[int, str, int]] = []  # (rank, block, cost) of the items taken
    left: dict[int, int] = {}  # rank → cost of the items left out
    focus = frozenset(query.get("content_terms") or query.get("terms") or ())
    tasks = query.get("answer_kind") == "task"  # "what do I need to do…?": each item from its open tasks on
    for rank, hit in enumerate(hits, start=1):
        block = _item(rank, hit, tasks=tasks, vault=vault)
        cost = count_tokens(block) + 1
        if used + cost > budget_tokens and rank == 1:
            block = _first_cut(hit, budget_tokens - used, len(hits), focus, tasks=tasks, vault=vault)
            if not block:  # it never gives way to a weaker, smaller item
                least = _least_room(hit, budget_tokens - used, len(hits), focus, tasks=tasks, vault=vault)
                return _too_small(budget_tokens, len(hits), used, least)
            cost = count_tokens(block) + 1
        if used + cost > budget_tokens:  # left out; a smaller item after it may still fit
            left[rank] = cost
            continue
        items.append((rank, block, cost))
        used += cost
    used += _excerpts(hits, left, items, budget_tokens - used, focus, tasks=tasks, vault=vault)

    def left_note() -> str | None:  # what was left out, with sizes, or only their numbers
        for note in (_left_out(left), _left_out(left, sizes=False)):
            if used + count_tokens(note) + 1 <= budget_tokens:
                return note
        return None

    while left and len(items) > 1 and left_note() is None:
        rank, _, cost = items.pop()  # room for saying what was left out (never the last item)
        left[rank] = cost
        used -= cost
    lines.extend(block for _, block, _ in items)
    if left and (note := left_note()) is not None:
        lines.append(note)
    return "\n".join(lines)


def _excerpts(
    hits: Sequence[dict[str, Any]],
    left: dict[int, int],
    items: list[tuple[int, str, int]],
    room: int,
    focus: Collection[str],
    *,
    tasks: bool,
    vault: Path | None,
) -> int:
    """The items left out for the budget that hold one of the question's words (`focus`), cut
    to the passage holding most of them (`excerpt`, marked "shortened", with their citation)
    in the `room` the whole items left, shared between them in rank order, room kept to name
    those still left out; each taken is moved from `left` to `items` (in rank order). A long
    email is one item: it is not dropped for its length when a passage of it answers. Returns
    the tokens they take."""
    wanted = frozenset(focus) - ASKING_WORDS
    candidates = [rank for rank in sorted(left) if wanted.intersection(terms(str(hits[rank - 1].get("content", ""))))]
    taken = 0
    for i, rank in enumerate(candidates):
        rest = {other: cost for other, cost in left.items() if other != rank}
        reserve = count_tokens(_left_out(rest, sizes=False)) + 1 if rest else 0
        share = (room - taken - reserve) // (len(candidates) - i)
        block = _item(rank, hits[rank - 1], room=share - 1, focus=focus, tasks=tasks, vault=vault)
        if block:
            cost = count_tokens(block) + 1
            items.append((rank, block, cost))
            del left[rank]
            taken += cost
    items.sort()
    return taken


def _left_out(left: dict[int, int], *, sizes: bool = True) -> str:
    listed = ", ".join(f"[{rank}] ({cost} tokens)" if sizes else f"[{rank}]" for rank, cost in sorted(left.items()))
    return f"Left out for the budget: {listed}."


def _in_window(hit: dict[str, Any], window: dict[str, str]) -> bool:
    """Whether the hit's time range overlaps the window (a hit without a time does not)."""
    span = hit.get("time_range") or {}
    start, end = span.get("start"), span.get("end") or span.get("start")
    if not start or not end:
        return False
    try:
        first, last = _utc(start), _utc(end)
        return first < _utc(window["end"]) and last >= _utc(window["start"])
    except ValueError:
        return False


def _utc(text: str) -> datetime:
    when = datetime.fromisoformat(text)
    return when.astimezone(UTC).replace(tzinfo=None) if when.tzinfo else when


def _first_cut(
    hit: dict[str, Any], room: int, count: int, focus: Collection[str], *, tasks: bool = False, vault: Path | None = None
) -> str:
    """The first item cut to fit `room` tokens: with room kept to name the others when it can,
    and its citation down to the vault link and its author to a name when it must; "" when
    even then less than `MIN_SHORTENED_CHARS` of its text would fit."""
    reserve = count_tokens(_left_out(dict.fromkeys(range(2, count + 1), 0), sizes=False)) + 1 if count > 1 else 0
    for keep, compact in ((reserve, False), (reserve, True), (0, True)):
        block = _item(1, hit, room=room - keep - 1, compact=compact, focus=focus, tasks=tasks, vault=vault)
        if block:
            return block
    return ""


def _least_room(
    hit: dict[str, Any], room: int, count: int, focus: Collection[str], *, tasks: bool, vault: Path | None
) -> int:
    """The fewest tokens in which `_first_cut` itself gives the first item (its `room` being too
    few): found by bisection, so a budget of that many more than the lines above it is accepted
    (a size worked out apart from the cut, its marks and its passage, was itself refused)."""

    def fits(tokens: int) -> bool:
        block = _first_cut(hit, tokens, count, focus, tasks=tasks, vault=vault)
        return bool(block) and count_tokens(block) + 1 <= tokens

    low, high = max(room, 0), max(room, 0) + 1
    while not fits(high) and high < 1 << 24:  # (the whole item fits in its own cost: this ends)
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if fits(middle) else (middle, high)
    return high


def _too_small(budget_tokens: int, count: int, used: int, least: int) -> str:
    beside = f", beside {used} for the lines above it" if used else ""
    return within(
        budget_tokens,
        f"The token budget ({budget_tokens}) is too small for the first of the {count} items found "
        f"(shortened, it takes at least {least} with its citation{beside}): ask with a larger budget.",
        f"The token budget ({budget_tokens}) is too small: ask with at least {least + used}.",
        f"Budget too small: at least {least + used}.",
        "Too small.",
    )


def within(budget_tokens: int, *answers: str) -> str:
    """The first of `answers` (longest first) that fits `budget_tokens`; the last cut to fit
    when none does: the budget bounds every answer."""
    for answer in answers:
        if count_tokens(answer) <= budget_tokens:
            return answer
    last = answers[-1]
    return last[: hard_split(last, 0, len(last), budget_tokens)[0][1]] if budget_tokens > 0 else ""


def searched_words(question: str, searched: Collection[str]) -> list[str]:
    """The question's words as it wrote them whose search terms are among `searched` (the
    terms walk read from it), in its order, each once."""
    wanted = set(searched)
    return [
        word for word in dict.fromkeys(_WORD.findall(question)) if (found := set(terms(word))) and found <= wanted
    ]


def _head_and_cite(hit: dict[str, Any], *, compact: bool, shortened: bool, vault: Path | None = None) -> tuple[str, str]:
    """An item's head (who, when) and citation; `compact`: the author's name without their
    address, and the vault link without the original `source_ref`."""
    who = hit.get("author") or hit.get("title") or ""
    if compact and who:
        who = display_of(who)
    elif who and (hit.get("to") or hit.get("cc")):  # an email: to whom
        who += " → " + _people(hit.get("to") or []) + (f" (cc {_people(hit['cc'])})" if hit.get("cc") else "")
    span = hit.get("time_range") or {}
    when = " – ".join(dict.fromkeys(t for t in (span.get("start"), span.get("end")) if t))  # a summary's range
    head = " · ".join(x for x in (who, when, "shortened" if shortened else "") if x)
    cites = [hit.get("wikilink") or hit.get("note_path", "")]
    if not compact:
        cites.extend(listed_refs(hit, vault))
    return head, " · ".join(c for c in cites if c)


def listed_refs(hit: dict[str, Any], vault: Path | None = None) -> list[str]:
    """A hit's source refs as shown to a reader: a summary folds one per message, so past
    `LISTED_REFS` the rest is said as a count and, for a hit with a node id, the command that
    lists them (on `vault`, when given)."""
    refs = list(hit.get("source_refs") or [])
    if len(refs) <= LISTED_REFS:
        return refs
    rest = f"and {len(refs) - LISTED_REFS:,} more"
    node_id = hit.get("node_id")
    return [*refs[:LISTED_REFS], f"{rest} (`{command_line('query', 'drill', node_id, vault=vault)}`)" if node_id else rest]


def _people(listed: Sequence[str], most: int = 3) -> str:
    """Recipients by name, the first `most` of them ("Megan One, Bob Smith and 4 more")."""
    names = ", ".join(display_of(person) for person in listed[:most])
    return names + (f" and {len(listed) - most} more" if len(listed) > most else "")


def _item(
    rank: int,
    hit: dict[str, Any],
    *,
    room: int | None = None,
    compact: bool = False,
    focus: Collection[str] = (),
    tasks: bool = False,
    vault: Path | None = None,
) -> str:
    """An item's block; with `room` (tokens), its text cut to fit in it (`excerpt`), or "" when
    less than `MIN_SHORTENED_CHARS` of the text would. With `tasks` (a question for open
    tasks), a text that holds one starts at its first (`from_tasks`)."""
    head, cite = _head_and_cite(hit, compact=compact, shortened=room is not None, vault=vault)
    content = standalone(str(hit.get("content", "")))
    text = from_tasks(content) if tasks else one_line_but_code(content)
    if room is None:
        return f"[{rank}] {head}\n{text}\n   ↳ {cite}"
    left = room - count_tokens(f"[{rank}] {head}\n\n   ↳ {cite}")  # tokens for the text
    fits = MAX_CHARS_PER_TOKEN * left  # characters: no token holds more
    while fits >= MIN_SHORTENED_CHARS:
        text = excerpt(content, fits, focus, tasks=tasks)
        used = count_tokens(text)
        if used <= left:  # a text counts no more than its parts: the block fits `room`
            return f"[{rank}] {head}\n{text}\n   ↳ {cite}"
        fits = min(fits - 1, fits * left // used)  # fewer characters, as many fewer as it is over
    return ""


def from_tasks(content: str) -> str:
    """`content` on one line from its first open task on, with the heading right above that
    task's list ("… ## Action items - [ ] Alice: move the booking…"), marked "… " where text
    before it is left out; all of it when it holds no open task: the meeting's decisions
    above its action items are not what "what do I need to do?" asks for."""
    found = open_task_of(content)
    start = found.start() if found is not None else 0
    above, newline, line = content[:start].rstrip("\n").rpartition("\n")
    heading = atx_heading(line) if found is not None else None
    if heading is not None and heading[1]:  # the list's heading
        start = len(above) + len(newline)
    lead = "… " if content[:start].strip() else ""
    return lead + one_line(content[start:])


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def excerpt(content: str, fits: int, focus: Collection[str], *, tasks: bool = False) -> str:
    """About `fits` characters of `content`, cut at a word and marked "…": from the sentence
    (or line) holding the most of the question's terms (`focus`, as the index reads them:
    `lexical.terms`) on, the sentences before it too when the rest fits, or from the start when
    none holds any. With `tasks` (a question for open tasks), an open task's line counts as
    holding one more. A tight budget keeps the answer ("Deposit: €1,500, due by 15 March…"),
    not the greeting above it; the CLI's listing shows each hit this way."""
    sentences = [joined for part in _SENTENCE.split(readable_headings(content)) if (joined := " ".join(part.split()))]
    wanted = frozenset(focus) - ASKING_WORDS
    start, best = 0, 0
    for i, sentence in enumerate(sentences if wanted or tasks else ()):
        found = len(wanted.intersection(terms(sentence))) + (tasks and OPEN_TASK.match(sentence) is not None)
        if found > best:
            start, best = i, found
    while start > 0 and len(" ".join(sentences[start - 1 :])) <= fits - 2:
        start -= 1
    lead = "… " if start else ""
    body, room = " ".join(sentences[start:]), fits - len(lead)
    if len(body) > room:
        cut = body[: room + 1]
        body = (cut[: cut.rfind(" ")] if " " in cut else cut[:room]).rstrip() + "…"
    elif start and room - len(body) > 12:  # room left: the end of the sentence before, from a word
        earlier = sentences[start - 1][-(room - len(body) - 1) :]
        if " " in earlier[1:]:  # (a tail with no space in it would start inside a word)
            body = f"{earlier[earlier.find(' ', 1) + 1 :]} {body}"
    return lead + body

