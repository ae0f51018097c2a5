"""Cutting text into spans within a token budget: by sentence, line, whitespace or character
(`split_span`, `hard_split`), then packing consecutive spans greedily back up to the budget
(`pack_spans`). Offsets are into the text; nothing non-blank is lost."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from vaultmind.markdown.tokens import (
    MAX_CHARS_PER_TOKEN,
    count_tokens,
    opening_discount,
    running_quarters,
    token_quarters,
)

_LEADING_BLANK_RE = re.compile(r"(?:[ \t]*\n)+")


_SENTENCE_END_RE = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+|(?<=[。！？])\s*")


_LAST_SPACE_RE = re.compile(r"\s+(?=\S*\Z)")
_BLANK_RE = re.compile(r"\s+")


def split_span(text: str, start: int, end: int, limit: int, levels: Sequence[str]) -> list[tuple[int, int]]:
    """Cut text[start:end] into spans each within `limit` tokens, trying `levels` in order."""
    if count_tokens(text[start:end]) <= limit or not levels:
        return [(start, end)] if text[start:end].strip() else []
    level = levels[0]
    if level == "char":
        return hard_split(text, start, end, limit)
    if level == "line":
        cuts = [m.start() for m in re.finditer("\n", text[start:end])]
        pieces = _cut(start, end, [(c, c + 1) for c in cuts])
    elif level == "sentence":
        pieces = _cut(start, end, [(m.start(), m.end()) for m in _SENTENCE_END_RE.finditer(text[start:end])])
    else:  # space: fill up to the limit, then cut at the last whitespace
        return [(s, e) for s, e in hard_split(text, start, end, limit, snap=True) if text[s:e].strip()]
    if len(pieces) <= 1:
        return split_span(text, start, end, limit, levels[1:])
    out: list[tuple[int, int]] = []
    for s, e in pieces:
        out.extend(
            split_span(text, s, e, limit, levels[1:]) if count_tokens(text[s:e]) > limit else [(s, e)]
        )
    return [(s, e) for s, e in out if text[s:e].strip()]


def _cut(start: int, end: int, seps: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans between separators (relative offsets) of the absolute span [start, end)."""
    out = []
    pos = start
    for s, e in seps:
        out.append((pos, start + s))
        pos = start + e
    out.append((pos, end))
    return [(s, e) for s, e in out if e > s]


def hard_split(text: str, start: int, end: int, limit: int, *, snap: bool = False) -> list[tuple[int, int]]:
    """Cut text[start:end] into the longest spans within `limit` tokens; with `snap`, end
    each span at its last whitespace when it has one (whitespace between spans is dropped)."""
    out = []
    pos = start
    while pos < end:
        # the largest stop with count_tokens(text[pos:stop]) <= limit (a token holds at most
        # MAX_CHARS_PER_TOKEN characters)
        lo, hi = pos + 1, min(end, pos + MAX_CHARS_PER_TOKEN * (limit + 1))
        if count_tokens(text[pos:hi]) <= limit:
            lo = hi
        else:
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if count_tokens(text[pos:mid]) <= limit:
                    lo = mid
                else:
                    hi = mid - 1
        stop = nxt = lo
        if snap and stop < end and not text[stop].isspace():
            m = _LAST_SPACE_RE.search(text, pos, stop)
            if m is not None and m.start() > pos:
                stop, nxt = m.start(), m.end()
        out.append((pos, stop))
        pos = nxt
        while snap and pos < end and text[pos].isspace():
            pos += 1
    return out


def window_spans(text: str, limit: int, most: int) -> list[tuple[int, int]]:
    """The first `most` of the spans `hard_split(text, 0, len(text), limit, snap=True)` would
    cut (the same but for rounding at a span's first word), found from one running count
    (`running_quarters`) instead of a binary search of counts per span: a long email in windows
    of 2,000 tokens took 12 ms by the search, this a fraction. Each span's count is checked
    (`opening_discount`), and one the running count misjudged (a word longer than the budget)
    is cut by `hard_split`."""
    running = running_quarters(text)
    spans: list[tuple[int, int]] = []
    pos, end = 0, len(text)
    while len(spans) < most:
        blank = _BLANK_RE.match(text, pos)
        pos = blank.end() if blank else pos
        if pos >= end:
            break
        room = int(running[pos]) + 4 * limit - opening_discount(text, pos, running)
        stop = min(end, max(pos + 1, int(np.searchsorted(running, room, side="right")) - 1))
        nxt = stop
        if stop < end and not text[stop].isspace():
            m = _LAST_SPACE_RE.search(text, pos, stop)
            if m is not None and m.start() > pos:
                stop, nxt = m.start(), m.end()
            else:  # it ends inside its first word, a run of letters the running count weighs less alone
                stop = nxt = hard_split(text, pos, min(end, pos + MAX_CHARS_PER_TOKEN * (limit + 1)), limit)[0][1]
        if int(running[stop] - running[pos]) + opening_discount(text, pos, running, stop) <= 4 * limit:
            spans.append((pos, stop))
        else:
            spans += hard_split(text, pos, stop, limit, snap=True)
        pos = nxt
    return [(s, e) for s, e in spans[:most] if text[s:e].strip()]


def trimmed_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The offsets of text[start:end] without its trailing whitespace and leading blank lines."""
    stop = start + len(text[start:end].rstrip())
    blank = _LEADING_BLANK_RE.match(text, start, stop)
    return (start if blank is None else blank.end()), stop


def pack_spans(
    text: str, spans: Sequence[tuple[int, int]], limit: int, *, strip: bool = True
) -> list[tuple[int, int]]:
    """Greedily join consecutive spans (with the text between them) within `limit` tokens;
    the offsets of each joined span holding non-blank text (with `strip`, trimmed as
    `trimmed_span` does)."""
    out: list[tuple[int, int]] = []
    cur_start = cur_end = -1
    cur_q = 0
    for s, e in spans:
        if cur_start >= 0:
            q = cur_q + token_quarters(text[cur_end:e])
            if (q + 3) // 4 <= limit:
                cur_end, cur_q = e, q
                continue
            out.append((cur_start, cur_end))
        cur_start, cur_end, cur_q = s, e, token_quarters(text[s:e])
    if cur_start >= 0:
        out.append((cur_start, cur_end))
    if strip:
        out = [trimmed_span(text, s, e) for s, e in out]
    return [(s, e) for s, e in out if text[s:e].strip()]
