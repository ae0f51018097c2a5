"""Surface forms of entities in a text: regex extractors, NER label mapping, message authors.

Everything here is pure (text in, spans out). Which entity a span *is* is decided later by the
registry (`registry.py`) and `resolve.py`.

Regex extractors (always on):

- email: `alice@example.com` (also inside `mailto:`), not preceded by a word character;
- url: `http(s)://…` up to whitespace or `<>()[]"'`, trailing `.,;:!?` dropped;
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
quantities, languages, laws and NORP are not entities here. A one-word hit that its text also
writes in lower case ("# Launch sync" over "the Tidepool launch") is a word capitalised by its
place, not a name; so is one that opens a heading, a callout's title, a table cell or a label
("Owner: Marco Ruiz"), unless the text capitalises it inside a sentence too
(`_capitalised_by_place`); so are several words that make a whole heading, cell, line or
label, each of which the text writes in lower case too ("# TODO: Understand Network Diagrams",
`_label_phrase`). A hit whose shape is no name (a code, a weekday, across a table's
cells) is dropped wherever it stands, and a person's takes in a kinship title (`shapes.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.utils import parseaddr
from typing import Final

from vaultmind.entities.shapes import no_name, with_title
from vaultmind.markdown.blocks import fence_after

SOURCE_PRIORITY: Final = {"link": 0, "regex": 1, "registry": 2, "ner": 3}
"""Overlapping spans: the lower value wins (then the longer span, then the earlier one)."""

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
# "@Priya Natarajan": a chat export's mention written with the person's name (Slack's `<@U…>`
# rendered), not a handle "@Priya" — the name is the person's, for NER and the registry to find.
_NAME_AFTER = re.compile(r" [A-Z][a-z]")
_HANDLE_RE = re.compile(r"(?<![^\s(])@([A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)(?![\w@])")
# "#" first and the look-behind after it: the engine then tries only where a "#" is
_HASHTAG_RE = re.compile(r"#(?<![^\s(]#)([\w/-]*[^\W\d][\w/-]*)")
_PHONE_RE = re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?![\w])")
_WIKILINK_RE = re.compile(r"!?\[\[([^\[\]|#^\n]*)(?:#[^\[\]|\n]*)?(?:\|([^\[\]\n]*))?\]\]")
_INLINE_CODE_RE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
_EDGE_JUNK = " \t\n\r\"'`*_~()[]{}<>.,;:!?#|=-–—…“”‘’«»‹›→←•·▸►/\\+"  # a summary's "Title › Heading" too
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
    source: str  # link | regex | registry | ner
    value: str = ""


def code_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of fenced code blocks and inline code spans."""
    if "`" not in text and "~~~" not in text:
        return []
    ranges = _fenced_ranges(text) if "```" in text or "~~~" in text else []
    for m in _INLINE_CODE_RE.finditer(text) if "`" in text else ():
        if not any(s <= m.start() < e for s, e in ranges):
            ranges.append((m.start(), m.end()))
    ranges.sort()
    return ranges


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
    return any(s < end and start < e for s, e in ranges)


def regex_spans(text: str, code: list[tuple[int, int]] | None = None) -> list[Span]:
    """Emails, URLs, handles, hashtags, phone numbers and wikilinks in `text`, in text order."""
    code = code_ranges(text) if code is None else code
    spans: list[Span] = []
    has_at = "@" in text
    for m in _URL_RE.finditer(text) if "://" in text else ():
        url = _trim_url(m.group(0))
        if len(url) > len("https://x"):
            spans.append(Span(m.start(), m.start() + len(url), url, "url", "regex", url))
    for m in _EMAIL_RE.finditer(text) if has_at else ():
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


def clean_ner_span(text: str, start: int, end: int, label: str) -> Span | None:
    """A NER hit as a `Span`: trimmed of punctuation, a leading "the" and a trailing "'s";
    None when it is not an entity kind, spans lines, has no letter left, or is an acronym of
    at most 3 letters (entity notes still teach those: add "IBM" to an alias list)."""
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
    if len(surface) < 2 or "\n" in surface or not _LETTER_RE.search(surface) or len(surface) > 120:
        return None
    if len(surface) <= 3 and surface.isupper():
        return None  # "SDK", "UTC", "PR", "3M": the small models take most short acronyms for organizations
    if no_name(surface, kind) or (kind != "person" and _header_field(text, surface, end)):
        return None
    if kind == "person":
        start = with_title(text, start)
        surface = text[start:end]
    if _common_word(text, surface) and not (kind == "person" and _written_as_name(text, surface, start)):
        return None
    if _weak_guess(text, surface, start, end, kind) or _label_phrase(text, surface, start, end):
        return None
    return Span(start, end, surface, kind, "ner", surface)


def _header_field(text: str, surface: str, end: int) -> bool:
    """A mail header's field ("Content-Type: text/plain", "h=MIME-Version: Message-Id:" of a
    quoted signature): capitalised parts joined by hyphens, right before a colon."""
    return text.startswith(":", end) and _HEADER_FIELD.fullmatch(surface) is not None


def _common_word(text: str, surface: str) -> bool:
    """A one-word hit that the same text also writes in lower case ("# Launch sync" above "the
    Tidepool launch"): a word capitalised by its place (a heading, a sentence's start), which the
    small models take for a name. So is an acronym the text also writes in lower case, in an
    address, a URL or a file name ("SMTP" beside "smtp.example.com", "HTTP" beside "http://…",
    "JSON" beside "data.json"): a protocol's or a format's, not an organization's. A name the
    memory knows (an author, an entity note) is still found there by the registry; only the
    model's guess is dropped."""
    acronym = surface.isalpha() and surface.isupper()
    if " " in surface or not surface[:1].isupper() or not (surface[1:].islower() or acronym):
        return False
    if acronym:  # in a file or host name between hyphens too: "draft-ietf-http-auth.txt"
        return re.search(rf"(?<![^\W_]){re.escape(surface.lower())}(?![^\W_])", text) is not None
    return re.search(rf"(?<![\w-]){re.escape(surface.lower())}(?![\w-])", text) is not None


# a word after which a capitalised word is someone: "called Bill", "with Bill", "told Bill"
_TO_SOMEONE = re.compile(
    r"(?:^|\W)(?:call|called|calling|phoned|rang|texted|emailed|messaged|met|meet|meeting|asked|ask|told|tell|"
    r"thanked|thank|invited|paid|pay|with|to|from|by|for|and)\s+$",
    re.I,
)
_MID_SENTENCE = r"(?<=[a-z,;:] )"  # a capital after a lower-case word: the word's own, not its place's


def _written_as_name(text: str, surface: str, start: int) -> bool:
    """Whether the text writes a one-word person the model found as a name, though it also
    writes the word in lower case ("Called Bill about the water bill"): right after a word that
    takes a person ("called", "with", "to"), or capitalised inside a sentence twice. A word
    capitalised only by its place ("# Launch sync", "Will said he will come") stays a word."""
    if _TO_SOMEONE.search(text[max(0, start - 12) : start]) is not None:
        return True
    return len(re.findall(rf"{_MID_SENTENCE}{re.escape(surface)}(?![\w-])", text)) >= 2


# where a line's own words begin: after quote, list and task markers ("> - [ ] ", "2. ")
_LINE_HEAD = re.compile(r"[ \t]*(?:>[ \t]*)*(?:(?:[-*+]|\d{1,3}[.)])[ \t]+)?(?:\[[ xX]\][ \t]+)?")
# the title of a heading ("## ") or of a callout ("> [!warning] ")
_TITLE_HEAD = re.compile(r"[ \t]*(?:>[ \t]*)*(?:#{1,6}|\[![\w-]+\][+-]?)[ \t]+")
_CELL_HEAD = re.compile(r"[ \t]*(?:>[ \t]*)*\|(?:[^|\n]*\|)*[ \t]*")  # the start of a table cell
_FIRST_CELL = re.compile(r"[ \t]*(?:>[ \t]*)*\|[ \t]*")  # … of a row's first cell
_TABLE_RULE = re.compile(r"[ \t]*(?:>[ \t]*)*\|?[ \t]*:?-{3,}")  # the line under a table's header row
# a label: the word, up to three lower-case words, a colon, then a value that is no lower-case
# word ("Owner: Marco Ruiz", "Hire fee: €4,200"); "Marco: launching without …" is someone speaking
_LABEL = re.compile(r"((?:[ \t]+[a-z][\w'’-]*){0,3})[ \t]*(?:\([^()\n]*\))?:[ \t]+(?=[^\sa-z])")
# a heading that goes on with a word that joins the first to lower-case ones: "Tools and
# subscriptions", "Notes on pricing"; a name leads "Noah swimming lessons", "Noah at the pool"
_JOINED_WORDS = re.compile(r"[ \t]+(?:and|or|&|of|for|on|about|vs\.?|versus)[ \t]+[a-z]")
_HEADER_FIELD = re.compile(r"[A-Z][\w]*(?:-[A-Z0-9][\w]*)+")  # a mail header's field: "Content-Type:"
_IN_TABLES = ("person", "place")  # kinds a table's body names in cells of their own: "| 2 April | Bob |", "| Berlin |"
# a label that says who speaks, not what a line is about: "Dana said: we're booked"
_SAYING = frozenset(
    "said says wrote writes asked asks replied replies added adds answered answers told tells mentions notes "
    "thinks thought feels felt suggests proposes reckons explains confirms agrees comments reports argues".split()
)


def _weak_guess(text: str, surface: str, start: int, end: int, kind: str) -> bool:
    """A one-word hit where its capital says nothing (`_capitalised_by_place`), which the text
    never capitalises inside a sentence either."""
    return (
        " " not in surface
        and _capital_first_only(surface)
        and _capitalised_by_place(text, start, end, kind)
        and not _named_inside(text, surface)
    )


# before a hit that is a whole title, cell or line: its marker, a label of its own ("# TODO: "), bold
_LABEL_BEFORE = re.compile(r"(?:[^\W\d_][\w-]*:[ \t]+)?[*_]*$")
# after it: the line's or the cell's end, or the colon of a label ("Sender Address: …")
_WHOLE_AFTER = re.compile(r"[*_]*[ \t]*(?:[:|].*)?")


def _label_phrase(text: str, surface: str, start: int, end: int) -> bool:
    """A hit of several words that is the whole title of a heading or a callout, a table cell, a
    line or a label before its colon ("# TODO: Understand Network Diagrams", "| Inbox Rules |",
    "Sender Address: postmaster@…"), each word of which the text also writes in lower case
    (`_common_word`): words capitalised by their place, as a title or a button is written, not
    a name. A name's words are not all common words ("# Helen Okafor", "## Hetzner Cloud")."""
    words = surface.split()
    if len(words) < 2 or not all(_common_word(text, word) and _in_prose(text, word) for word in words):
        return False
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    head = _LABEL_BEFORE.sub("", text[line_start:start], count=1)
    return _WHOLE_AFTER.fullmatch(text, end, line_end) is not None and any(
        place.fullmatch(head) for place in (_TITLE_HEAD, _CELL_HEAD, _LINE_HEAD)
    )


def _in_prose(text: str, word: str) -> bool:
    """Whether the text writes a word in lower case as a word of prose, not only in an address or
    a file name ("dan.le@example.com" does not make "Dan Le" common words); an acronym is a
    protocol's wherever it is written in lower case ("DNS" beside "no-dns", `_common_word`)."""
    if word.isupper():
        return True
    return re.search(rf"(?<![\w.@/-]){re.escape(word.lower())}(?![\w@/-]|\.\w)", text) is not None


def _capital_first_only(word: str) -> bool:
    """A word written as any word is at a sentence's start ("Infrastructure", "Content-Type"):
    the capital of "TestFlight" or "DKIM" inside the word is the name's own, wherever it stands."""
    return all(not any(ch.isupper() for ch in part[1:]) for part in word.split("-"))


def _capitalised_by_place(text: str, start: int, end: int, kind: str) -> bool:
    """Whether a word stands where any word is capitalised, which makes the model's guess weak
    evidence: the first word of a heading, a callout's title or a table cell ("## Tools and
    subscriptions", "| Infrastructure | €2,100 |"), and the first word of a label ("Owner:
    Marco Ruiz", "Hire fee: €4,200"). A person is named alone in a heading, a table's body or
    before a colon all the time ("## Dana", "## Dana and Marco", "| 2 April | Beta | Bob |",
    "Bob: beta by Friday"), so a person's hit is weak only in a heading that goes on in lower
    case, the first cell of a table's header row ("| Line | Amount |"; the columns after it are
    people's in a rota, "| Week | Anna | Ben |") and a label of several words that is no verb
    of saying or thinking ("Dana said:", "Kofi mentioned:", "Amara thinks:" are someone
    speaking); a place too is named in a table's body ("| Berlin | sales |"), and an
    organization in a body cell after the first ("| Hosting | Hetzner | €40 |": the first
    cell names the line, "| Infrastructure | €2,100 |"). A heading "goes on in lower case"
    when a joining word leads lower-case ones ("Tools and subscriptions", "Notes on pricing"),
    not when a name leads them ("Noah swimming lessons"). The first word of a sentence is no
    weak place: "Target is still 9 April" cannot be told from "Google is hiring" without a
    dictionary."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    head, rest = text[line_start:start], text[end:line_end]
    person = kind == "person"
    if _TITLE_HEAD.fullmatch(head):
        return not person or _JOINED_WORDS.match(rest) is not None
    if _CELL_HEAD.fullmatch(head):
        header = _TABLE_RULE.match(text, line_end + 1) is not None
        first = _FIRST_CELL.fullmatch(head) is not None
        if kind == "org":
            return header or first
        return kind not in _IN_TABLES or (header and (not person or first))
    if _LINE_HEAD.fullmatch(head):
        label = _LABEL.match(rest)
        return label is not None and (not person or _labels_a_thing(label.group(1)))
    return False


def _labels_a_thing(words: str) -> bool:
    """Whether the lower-case words between a person's hit and a colon make it a label of a
    thing ("Hire fee:"), not someone speaking ("Dana said:", "Bob wrote:")."""
    said = words.split()
    return bool(said) and said[0] not in _SAYING and not said[0].endswith("ed")  # "Kofi mentioned:"


def _named_inside(text: str, surface: str) -> bool:
    """Whether the text also capitalises the word inside a sentence (after a lower-case word or
    a comma): there the capital is the word's own ("the Pro tier"), so it names something."""
    return re.search(rf"{_MID_SENTENCE}{re.escape(surface)}(?![\w-])", text) is not None


def select_spans(spans: list[Span]) -> list[Span]:
    """Non-overlapping spans, preferring links, then regex, then registry names, then NER;
    within one source the longer span, then the earlier one. Returned in text order."""
    if len(spans) < 2:  # most texts: nothing to rank
        return list(spans)
    ranked = sorted(spans, key=lambda s: (SOURCE_PRIORITY[s.source], -(s.end - s.start), s.start, s.kind))
    taken: list[Span] = []
    for span in ranked:
        if all(span.end <= t.start or t.end <= span.start for t in taken):
            taken.append(span)
    return sorted(taken, key=lambda s: (s.start, s.end))


@dataclass(frozen=True, slots=True)
class Author:
    """A message author split into what can identify them."""

    name: str  # "" when only an address or handle was given
    email: str  # "" when none
    handle: str  # "" unless the author is written as "@handle"
    raw: str


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
            return Author(reading_order(name.strip().strip('"').strip()), addr, "", raw)
    if not _LETTER_RE.search(raw):
        return None
    return Author(raw, "", "", raw)


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
