"""Surface forms of entities in a text: regex extractors, NER label mapping, message authors.

Everything here is pure (text in, spans out). Which entity a span *is* is decided later by the
registry (`registry.py`) and `resolve.py`.

Regex extractors (always on):

- email: `alice@example.com` (also inside `mailto:`), not preceded by a word character, nor
  a message's id or a list's robot between angle brackets in a mail's field
  (`mail_headers.message_address`: "Message-ID: <…@mail.example>");
- url: `http(s)://…` up to whitespace or `<>()[]"'`, trailing `.,;:!?` dropped; not an image's
  (`.jpg`, `.png`, …: a poster, a mail's pixel) nor one over `MAX_URL_CHARS` (a tracker's link,
  kilobytes of parameters): no page anyone would name;
- handle: `@name` at the start, after whitespace or `(`; dots, dashes and underscores inside
  (`@bob.stone`), not a trailing dot; not a capitalised `@Name` followed by another capitalised
  word (a mention written with the person's full name: `@Priya Natarajan`);
- hashtag: `#word` at the start, after whitespace or `(`, with at least one letter or `_`
  (`#q3-budget`, `#area/sub`); it names a topic (`topic:q3-budget`);
- phone: international numbers only (`+353 85 123 4567`), 7–15 digits, so amounts and dates
  are never taken for phone numbers;
- wikilinks `[[target|alias]]`: candidates the registry resolves when the target is an entity
  note (by path or file name); links to other notes are not entities.

Nothing inside inline code or fenced code blocks is extracted.

NER labels (spaCy, OntoNotes): PERSON → person; ORG → org; GPE, LOC, FAC → place; PRODUCT →
product; EVENT → event; WORK_OF_ART → work. Dates, times, numbers, money, percentages,
quantities, languages, laws and NORP are not entities here. A hit whose capital says nothing
about a name — a word capitalised by its place, a heading of common words, a person or an
organization in the note's own title, an interface's label, a word said to be a date, a link's claim, a
mail subject's first word before a noun, a name before a document's part in a heading, a quoted
sentence read as a work — is dropped (`capitals.py`); so is an organization's acronym used as a
word, a modifier or a mail protocol's ("the ASCII version", "some MIME?", `acronyms.py`); so is a hit whose shape is no name (a code, a weekday, a
document's part alone, across a table's cells), and a person's takes in a kinship title
(`shapes.py`); so is a word of speech ("Nah", "Wanna", "Awww"; one leading a hit is left out of
it: "Glad Max"; so is a to-do's verb: "Tell Luca", "Ping Sarah") and a one-word hit its note writes in lower case and never capitalises inside a
sentence ("Nature's amazing", `common_words.py`); so is a hit inside a mail's transport header written out in the text
("Received: … (Postfix) with SMTP id …", `mail_headers.py`), while a hit that opens the
writer's name in a reply's attribution ("On …, Megan One wrote:") is that person, in full, unless
an organization wrote it ("Acme Corp wrote:").
"""

from __future__ import annotations

import re
import string
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from email.utils import parseaddr
from typing import Final

from vaultmind.entities.acronyms import acronym_as_word
from vaultmind.entities.capitals import capital_says_nothing, in_note_title
from vaultmind.entities.common_words import (
    NoteWords,
    after_leading_adverb,
    after_leading_verb,
    after_spoken_lead,
    dropped_g,
    person_shaped,
    quoted,
    spoken,
)
from vaultmind.entities.mail_headers import (
    attribution_name,
    header_field_name,
    in_transport_field,
    message_address,
    organization_name,
)
from vaultmind.entities.shapes import no_name, with_title
from vaultmind.markdown.blocks import fence_after

SOURCE_PRIORITY: Final = {"link": 0, "regex": 1, "registry": 2, "speaker": 3, "ner": 4}
"""Overlapping spans: the lower value wins (then the longer span, then the earlier one). A
"speaker" span is a conversation's speaker called by her first name (`speakers.first_name_spans`)."""

NER_KINDS: Final = {
    "PERSON": "person",
    "PER": "person",
    "ORG": "org",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "PRODUCT": "product",
    "EVENT": "event",
    "WORK_OF_ART": "work",
}

_NAMED_ADDRESS_RE = re.compile(r'\s*"?([^"<>]*?)"?\s*<([^<>\s]+@[^<>\s]+)>\s*')
_SURNAME_FIRST_RE = re.compile(r"([^\W\d_][\w'.-]*(?: [^\W\d_][\w'.-]*){0,2}), ([^\W\d_][\w'.-]*(?: [^\W\d_][\w'.-]*){0,2})")
_NAME_SUFFIXES = frozenset(
    "jr sr ii iii iv phd md esq inc llc ltd gmbh ag co corp plc sa bv oy ab".split()
)
_EMAIL_RE = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![\w@-])"
)
_URL_RE = re.compile(r"(?<![\w/])https?://[^\s<>()\[\]\"'`]+", re.IGNORECASE)
_URL_TRAIL = ".,;:!?*_~"
MAX_URL_CHARS = 200
_IMAGE_URL = re.compile(r"\.(?:jpe?g|png|gif|webp|svg|bmp|ico|avif)(?:[?#]|$)", re.IGNORECASE)
# "@Priya Natarajan": a chat export's mention written with the person's name (Slack's `<@U…>`
# rendered), not a handle "@Priya" — the name is the person's, for NER and the registry to find.
_NAME_AFTER = re.compile(r" [A-Z][a-z]")
_HANDLE_RE = re.compile(r"(?<![^\s(])@([A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)(?![\w@])")
# "#" first and the look-behind after it: the engine then tries only where a "#" is
_HASHTAG_RE = re.compile(r"#(?<![^\s(]#)([\w/-]*[^\W\d][\w/-]*)")
_PHONE_RE = re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?![\w])")
_WIKILINK_RE = re.compile(r"!?\[\[([^\[\]|#^\n]*)(?:#[^\[\]|\n]*)?(?:\|([^\[\]\n]*))?\]\]")
_INLINE_CODE_RE = re.compile(r"(`+)(?!`)(?:[^\n]|\n(?![ \t]*\n))+?(?<!`)\1(?!`)")  # never across a blank line
_EDGE_JUNK = " \t\n\r\"'`*_~()[]{}<>.,;:!?#|=-–—…“”‘’«»‹›→←•·▸►/\\+\ufffd"  # a summary's "Title › Heading" too; a broken byte
_LEADING_THE = re.compile(r"^(?:the|The|THE)\s+")
_POSSESSIVE = re.compile(r"(?:['’]s|['’])$")
_LETTER_RE = re.compile(r"[^\W\d_]")


@dataclass(frozen=True, slots=True)
class Span:
    """One surface form found in a text.

    `kind` is the entity kind the extractor believes in (`person`, `email`, … or `link` for a
    wikilink whose target the registry must resolve); `value` is what identifies it for that
    kind (the address, the handle, the link target, or the surface itself).
    """

    start: int
    end: int
    surface: str
    kind: str
    source: str  # link | regex | registry | speaker | ner
    value: str = ""


def code_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of fenced code blocks and inline code spans: sorted and disjoint (one
    that overlaps another is merged with it), as `in_ranges` takes them."""
    if "`" not in text and "~~~" not in text:
        return []
    fenced = _fenced_ranges(text) if "```" in text or "~~~" in text else []  # sorted, disjoint
    ranges = list(fenced)
    opens = [s for s, _ in fenced]
    for m in _INLINE_CODE_RE.finditer(text) if "`" in text else ():
        at = bisect_right(opens, m.start()) - 1  # the one block that could hold its start
        if at < 0 or m.start() >= fenced[at][1]:
            ranges.append((m.start(), m.end()))
    return merged_ranges(ranges)


def merged_ranges(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`ranges` sorted, each run of overlapping or touching ones merged into one: a span
    overlaps the result exactly when it overlaps one of `ranges`."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def _fenced_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of fenced code blocks, each from its opening line to its closing line
    (or the text's end)."""
    ranges: list[tuple[int, int]] = []
    fence, start, at = "", 0, 0
    for line in text.split("\n"):
        toggled = fence_after(line, fence)
        if toggled is not None:
            if toggled:
                start = at
            else:
                ranges.append((start, at + len(line)))
            fence = toggled
        at += len(line) + 1
    if fence:
        ranges.append((start, len(text)))
    return ranges


def in_ranges(start: int, end: int, ranges: list[tuple[int, int]]) -> bool:
    """Whether `start`–`end` overlaps one of `ranges` (sorted and disjoint: `merged_ranges`);
    a bisection, so a text with thousands of code spans is not read once per candidate."""
    at = bisect_left(ranges, (end,))  # the ranges that start before `end` are those before `at`
    return at > 0 and ranges[at - 1][1] > start


def regex_spans(text: str, code: list[tuple[int, int]] | None = None) -> list[Span]:
    """Emails, URLs, handles, hashtags, phone numbers and wikilinks in `text`, in text order."""
    code = code_ranges(text) if code is None else code
    spans: list[Span] = []
    has_at = "@" in text
    for m in _URL_RE.finditer(text) if "://" in text else ():
        url = _trim_url(m.group(0))
        if len("https://x") < len(url) <= MAX_URL_CHARS and not _IMAGE_URL.search(url):
            spans.append(Span(m.start(), m.start() + len(url), url, "url", "regex", url))
    for m in _EMAIL_RE.finditer(text) if has_at else ():
        if not message_address(text, m.start()):
            spans.append(Span(m.start(), m.end(), m.group(0), "email", "regex", m.group(0)))
    for m in _HANDLE_RE.finditer(text) if has_at else ():
        if len(m.group(1)) >= 2 and not (m.group(1)[0].isupper() and _NAME_AFTER.match(text, m.end())):
            spans.append(Span(m.start(), m.end(), m.group(0), "handle", "regex", m.group(1)))
    for m in _HASHTAG_RE.finditer(text) if "#" in text else ():
        tag = m.group(1).rstrip("/-")
        if tag:
            spans.append(Span(m.start(), m.start() + 1 + len(tag), "#" + tag, "topic", "regex", tag))
    for m in _PHONE_RE.finditer(text) if "+" in text else ():
        digits = sum(ch.isdigit() for ch in m.group(0))
        if 7 <= digits <= 15:
            spans.append(Span(m.start(), m.end(), m.group(0), "phone", "regex", m.group(0)))
    for m in _WIKILINK_RE.finditer(text) if "[[" in text else ():
        target = m.group(1).strip()
        if not target:
            continue
        alias = (m.group(2) or "").strip()
        spans.append(Span(m.start(), m.end(), alias or target.rsplit("/", 1)[-1], "link", "link", target))
    if code:
        spans = [s for s in spans if not in_ranges(s.start, s.end, code)]
    spans.sort(key=lambda s: (s.start, s.end))
    return spans


def _trim_url(url: str) -> str:
    while url and url[-1] in _URL_TRAIL:
        url = url[:-1]
    return url


def ner_kind(label: str) -> str | None:
    """The entity kind of a spaCy label, or None for labels that are not entities here."""
    return NER_KINDS.get(label)


def clean_ner_span(
    text: str, start: int, end: int, label: str, title: str = "", note: NoteWords | None = None
) -> Span | None:
    """A NER hit as a `Span`: trimmed of punctuation, a leading "the", a leading adverb ("Later
    Jean-Luc Picard": a person's name, whatever the model read), a to-do's leading verb ("Tell
    Luca", "Remind Maya": a person, even read as a place) and a trailing "'s";
    None when it is not an entity kind, spans lines, has no letter left, or is an acronym of
    at most 3 letters (entity notes still teach those: add "IBM" to an alias list). `title`:
    the title of the note `text` is a leaf of, whose heading names no person or organization
    (`capitals.in_note_title`); `note`: what the texts of that note say of their words, which
    makes a one-word hit a common word (`common_words.NoteWords.common`)."""
    kind = ner_kind(label)
    if kind is None:
        return None
    while start < end and text[start] in _EDGE_JUNK:
        start += 1
    while end > start and text[end - 1] in _EDGE_JUNK:
        end -= 1
    surface = text[start:end]
    lead = _LEADING_THE.match(surface)
    if lead and kind != "work":
        start += lead.end()
        surface = text[start:end]
    poss = _POSSESSIVE.search(surface)
    if poss:
        end -= len(poss.group(0))
        surface = text[start:end].rstrip()
        end = start + len(surface)
    if kind != "work":  # "Glad Max is home", "Nah", "Awww", "Startin' my biz" (`common_words.py`)
        start = after_spoken_lead(text, start, end)
        unled = after_leading_adverb(text, start, end)  # "Later Jean-Luc Picard called"
        if unled != start and kind == "org" and person_shaped(text[unled:end]) and not organization_name(text[unled:end]):
            kind = "person"  # the adverb made the model read a person's name as an organization's
        # "Tell Luca to pack light", "Remind Maya"; an organization's own word stays ("Contact Energy")
        unverbed = after_leading_verb(text, unled, end) if kind in ("person", "place") else unled
        if unverbed != unled and kind == "place":
            kind = "person"  # who a to-do tells, reminds or pings is someone, however the model read it
        start = unverbed
        surface = text[start:end]
        if " " not in surface and (spoken(surface) or dropped_g(text, surface, end)):
            return None
    if len(surface) < 2 or "\n" in surface or not _LETTER_RE.search(surface) or len(surface) > 120:
        return None
    writer = attribution_name(text, start)
    if writer is not None:  # "On …, Megan One wrote:": the writer, read as a place or in part
        whole = kind == "org" and writer == (start, end)  # the model read the whole name as an organization's
        start, end = writer
        surface = text[start:end]
        kind = "org" if whole or organization_name(surface) else "person"  # "Acme Corp wrote:" stays one
    if len(surface) <= 3 and surface.isupper():
        return None  # "SDK", "UTC", "PR", "3M": the small models take most short acronyms for organizations
    if no_name(surface, kind) or (kind != "person" and header_field_name(text, surface, end)):
        return None
    if acronym_as_word(text, surface, kind):  # "the ASCII version", "some MIME?" (`acronyms.py`)
        return None
    if in_transport_field(text, start):
        return None  # "by mx.example.org (Postfix) with SMTP id …" (`mail_headers.py`)
    if kind == "person":
        start = with_title(text, start)
        surface = text[start:end]
    if capital_says_nothing(text, surface, start, end, kind) or in_note_title(text, start, end, kind, title):
        return None
    if note is not None and note.common(surface) and not (kind == "work" and quoted(text, start, end)):
        return None  # "Nature's amazing" in a conversation that writes "nature" (`common_words.py`)
    return Span(start, end, surface, kind, "ner", surface)


def select_spans(spans: list[Span]) -> list[Span]:
    """Non-overlapping spans, preferring links, then regex, then registry names, then NER;
    within one source the longer span, then the earlier one. Returned in text order."""
    if len(spans) < 2:  # most texts: nothing to rank
        return list(spans)
    ranked = sorted(spans, key=lambda s: (SOURCE_PRIORITY[s.source], -(s.end - s.start), s.start, s.kind))
    taken: list[Span] = []  # in text order, disjoint
    starts: list[int] = []
    for span in ranked:
        at = bisect_right(starts, span.start)
        if at > 0 and taken[at - 1].end > span.start:
            continue  # the last taken span that starts at or before it reaches into it
        if at < len(taken) and taken[at].start < span.end:
            continue  # the first taken span that starts after it starts within it
        taken.insert(at, span)
        starts.insert(at, span.start)
    return taken


@dataclass(frozen=True, slots=True)
class Author:
    """A message author split into what can identify them."""

    name: str  # "" when only an address or handle was given
    email: str  # "" when none
    handle: str  # "" unless the author is written as "@handle"
    raw: str


_NAME_EDGE = string.whitespace + "\ufffd"  # around an author's name: white space, a broken byte (U+FFFD)


def parse_author(author: str | None) -> Author | None:
    """`"Bob Stone <bob@example.com>"`, `"bob@example.com"`, `"@bob"` or `"Bob Stone"`.

    The name of an address written surname first, as companies' mail programs do ("Chen, Alice
    <alice@example.com>", quoted or not), is the name in reading order: Alice Chen."""
    raw = (author or "").strip()
    if not raw or raw.lower() in ("unknown", "none", "null"):
        return None
    if raw.startswith("@") and " " not in raw and len(raw) > 2:
        return Author("", "", raw[1:], raw)
    if "@" in raw:
        named = _NAMED_ADDRESS_RE.fullmatch(raw)  # parseaddr reads "Chen, Alice <…>" as two addresses
        name, addr = (named.group(1), named.group(2)) if named else parseaddr(raw)
        if addr and "@" in addr and _EMAIL_RE.fullmatch(addr):
            return Author(reading_order(name.strip(_NAME_EDGE + '"')), addr, "", raw)
    if not _LETTER_RE.search(raw):
        return None
    return Author(raw.strip(_NAME_EDGE), "", "", raw)


def reading_order(name: str) -> str:
    """"Chen, Alice" → "Alice Chen": a person's name written surname first, one comma between
    one to three words each side. "Acme, Inc.", "Stone, Jr." and longer texts stay as they are."""
    match = _SURNAME_FIRST_RE.fullmatch(name)
    if match is None or match.group(2).rstrip(".").lower() in _NAME_SUFFIXES:
        return name
    return f"{match.group(2)} {match.group(1)}"


def display_of(surface: str) -> str:
    """How a surface is shown: the name of an author written `Name <address>` (in reading
    order), or the surface itself."""
    if surface.endswith(">") and "<" in surface:
        name = surface[: surface.rindex("<")].strip().strip('"').strip()
        if name:
            return reading_order(name)
    return surface
