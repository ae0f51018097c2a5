"""A child's text as the sentences an extractive summary picks from (`tree.fallback`, step 1).

Code blocks, tables, headings (a setext heading's text and underline too, outside a mail, whose
"--" opens a signature), thematic breaks, block ids, comments and embeds go; list, quote and
callout markers and emphasis are stripped; `[text](url)` keeps its text; wikilinks stay (they keep
linking in Obsidian), except those inside their own note (`[[#Decisions]]`, `[[#^k1]]`), which
in a summary would point at the summary: their text stays (the alias, else the heading). A line
that is only a bracketed note ("[image: …]") goes, and so, in an email, do its attachments line,
a forwarded mail's header lines and all from the quoted reply or the signature on ("-----
Original Message -----", "On … wrote:", "-- "); greetings and thanks ("Thanks, Mel!") are no sentences.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vaultmind.markdown.blocks import BLOCK_ID_RE, CALLOUT_RE, atx_heading, fence_after
from vaultmind.tree.filler import is_greeting

MAX_SENTENCE_WORDS = 60

# Looser than `markdown.blocks.QUOTE_RE` on purpose: every run of quote markers goes, with a tab
# or any space after each (">\t> x", as mail clients nest), for a summary sentence must never
# carry a ">" even where the block scanner reads no nested quote.
_QUOTE_RE = re.compile(r"^(?:>\s?)+")
_LIST_RE = re.compile(r"^(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")
# A line that is only a bracketed note, as adapters write what a message shared instead of text
# ("[image: a photo of a sign]", "[attachment: plan.pdf]", "[image]"): nothing anyone said
_ATTACHMENT_RE = re.compile(r"^\[[^\[\]]*\]$")
# A setext heading's underline ("Title" over "====="), and a thematic break ("---", "* * *"): as
# Obsidian shows them, a heading and a rule, never words of the paragraph above
_SETEXT_RE = re.compile(r"^(?:=+|-+)$")
_RULE_RE = re.compile(r"^(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_COMMENT_RE = re.compile(r"%%.*?%%|<!--.*?-->")
_EMBED_RE = re.compile(r"!\[\[[^\]]*\]\]|!\[[^\]]*\]\([^)]*\)")
# A link inside its own note (`[[#Decisions]]`, `[[#^k1|the key line]]`) would point at the
# summary: its text stays, the link goes
_SAME_NOTE_LINK_RE = re.compile(r"\[\[#(\^?)([^\]|]*)(?:\|([^\]]*))?\]\]")
_MDLINK_RE = re.compile(r"(?<!!)\[([^\]\[]+)\]\((?:[^()\s]|\([^()]*\))+\)")


def _same_note_text(link: re.Match[str]) -> str:
    """An alias, else a heading's text; a bare block link says nothing."""
    return link.group(3) or ("" if link.group(1) else link.group(2).replace("#", " ").strip())


_EMPHASIS_RE = re.compile(r"(\*\*|__|~~|==)")
_SPLIT_RE = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+(?=[\"“'(\[A-ZÀ-Þ0-9])|(?<=[。！？])")
_LETTER_RE = re.compile(r"[^\W\d_]")
# A date as a reply's attribution gives it: a numeric date or a time, a weekday or a month name
_NUMERIC_DATE = r"\d{1,4}[./-]\d{1,2}[./-]\d{1,4}|\d:\d\d"
_DATE_WORD = (
    r"\b(?:(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?|jan(?:uary)?|feb(?:ruary)?"
    r"|mar(?:ch)?|märz|apr(?:il)?|ma[iy]|june?|july?|aug(?:ust)?|sept?(?:ember)?|o[ck]t(?:ober)?"
    r"|nov(?:ember)?|de[cz](?:ember)?)\b\.?"
)
# Who wrote the quoted mail: an address, or a capitalised name that is no weekday or month
_MAIL_WRITER = rf"@|\s(?!(?i:{_DATE_WORD}))(?-i:[A-ZÀ-Þ][\w'’-]+)"
# Where the quoted part of a mail the adapter could not strip begins ("----- Original Message
# -----", "On Tue, 3 Apr 2012, Bob <bob@example.com> wrote:", in any of the usual languages):
# the rest of the child is quoted. An attribution has a date, an address or a name, and ends
# "wrote:": "Back in 2019 the founder wrote:" is the mail's own text
_QUOTED_MAIL_RE = re.compile(
    r"^(?:-{2,}\s*original message\s*-{2,}|_{5,}"
    rf"|(?=.*(?:{_NUMERIC_DATE}|{_DATE_WORD}))(?=.*(?:{_MAIL_WRITER}))"
    r".{4,200}\b(?:wrote|schrieb|a écrit|escribió|scrisse|написал[а]?)\b.{0,120}:\s*$"
    r"|(?:from|von|de):\s.*(?:sent|gesendet|envoy[ée]|date):\s)",
    re.IGNORECASE,
)
# A forwarded mail's banner, and its header lines and the line listing a mail's attachments where
# they are headers: in a block of header lines (From, Date, Subject together) or with a value
# shaped as one (an address, a date, a file name); said by no one, they go (the forwarded text
# stays, and so does "To: do list below")
_MAIL_BANNER_RE = re.compile(
    r"^(?:-{2,}\s*forwarded message\s*-{2,}|(?:begin )?forwarded message:)",
    re.IGNORECASE,
)
_MAIL_HEADER_RE = re.compile(
    r"^(?:from|to|cc|bcc|sent|date|subject|reply-to|resent-[a-z]+|attachments):(?:\s+(.*))?$",
    re.IGNORECASE,
)
_HEADER_VALUE_RE = re.compile(rf"@|{_NUMERIC_DATE}|\w\.[a-z0-9]{{2,4}}\b", re.IGNORECASE)


def clean_units(text: str, mail: bool = False) -> list[str]:
    """Prose units of a child: list items on their own, wrapped lines joined (a paragraph's, and a
    list item's: "- the migration takes 9 days. Subscription" over "  renewals stop in April." is
    one item, as Obsidian renders it). In an email (`mail`), quoted text left in the body ends it
    and a forwarded mail's header lines go."""
    units: list[str] = []
    current: list[str] = []
    fence = ""
    raws = text.replace("\r", "").split("\n")
    lines = [_QUOTE_RE.sub("", raw.strip()).strip() for raw in raws]
    headers = _mail_headers(lines) if mail else set()
    for at, raw in enumerate(raws):
        toggled = fence_after(raw, fence)
        if toggled is not None:
            fence = toggled
            continue
        if fence:
            continue
        line = lines[at]
        if mail and (_QUOTED_MAIL_RE.match(line) or line == "--"):
            break  # the quoted reply, or the signature ("-- "), the adapter left in
        if current and not mail and _SETEXT_RE.match(line):
            current = []  # the paragraph was a heading's text
            continue
        if at in headers or _ATTACHMENT_RE.match(line) or _RULE_RE.match(line):
            line = ""
        if not line or line.startswith("|") or atx_heading(line) is not None:
            if current:
                units.append(" ".join(current))
                current = []
            continue
        item = _LIST_RE.match(line)
        line = _LIST_RE.sub("", line)
        callout = CALLOUT_RE.match(line)  # a callout head ("> [!note] Title")
        is_item = bool(item or callout)  # a list item or a callout head starts a unit of its own
        line = (callout.group(3) or "") if callout else line
        line = BLOCK_ID_RE.sub("", line)
        line = _COMMENT_RE.sub("", line)
        line = _EMBED_RE.sub("", line)
        if "[[#" in line:
            line = re.sub(r"\s+(?=[.,;:!?])|(?<= ) +", "", _SAME_NOTE_LINK_RE.sub(_same_note_text, line))
        line = _MDLINK_RE.sub(r"\1", line)
        line = _EMPHASIS_RE.sub("", line).strip()
        if not line:
            continue
        if is_item and current:
            units.append(" ".join(current))
            current = []
        current.append(line)
        if callout:  # a callout's title stands alone; a list item goes on on its wrapped lines
            units.append(" ".join(current))
            current = []
    if current:
        units.append(" ".join(current))
    return [" ".join(u.split()) for u in units if u.strip()]


def _mail_headers(lines: Sequence[str]) -> set[int]:
    """The lines of a mail that are a forwarded mail's banner or header lines: a header line in a
    block of them ("From:" over "Date:" over "Subject:") or with a value shaped as one (an
    address, a date, a file name); "To: do list below" alone is the mail's own text."""
    keyed = [_MAIL_HEADER_RE.match(line) for line in lines]

    def in_block(at: int) -> bool:
        return any(0 <= near < len(lines) and keyed[near] for near in (at - 1, at + 1))

    out = set()
    for at, (line, header) in enumerate(zip(lines, keyed, strict=True)):
        if _MAIL_BANNER_RE.match(line) or (
            header and (in_block(at) or _HEADER_VALUE_RE.search(header.group(1) or ""))
        ):
            out.add(at)
    return out


def split_sentences(unit: str) -> list[str]:
    out = []
    for part in _SPLIT_RE.split(unit):
        part = part.strip()
        if not part or not _LETTER_RE.search(part) or is_greeting(part):
            continue
        words = part.split()
        if len(words) > MAX_SENTENCE_WORDS:
            part = " ".join(words[:MAX_SENTENCE_WORDS]).rstrip(",;:") + " …"
        out.append(part)
    return out
