"""A mail's own lines written out in a text: the fields of its transport, whose words are the
servers' and the programs', not names, and a reply's attribution, which names its writer.

A bounce quotes the headers of the message it returns, a forwarded or broken message shows
its own, and the small NER models read their words as names: "Postfix" a person in "by
mx.example.org (Postfix) with SMTP id …", "Frontend Transport" an organization in
"… via Frontend Transport;", "DomainKey" in "DomainKey-Signature: a=rsa-sha1; …",
"Content-Transfer-Encoding" in a signature's list of fields ("h=Content-Transfer-Encoding:
Mime-Version: …").

A reply's attribution line ("On Mon, Apr 2, 2012 at 6:26 PM, Megan One <megan@example.com>
wrote:", "Marc Slemko wrote:") names the writer of the quoted message: a hit that opens the
name there is that person, the whole name before the address or "wrote:" (`attribution_name`),
whatever the model read ("Megan" as a place, "One" left out).

A transport field (`TRANSPORT_FIELD`: `Received:`, `DKIM-Signature:`, an `X-…:` field, the
`Content-…:` fields …) is a line that opens with its name and a colon, with the lines folded
under it (each starting with a space or a tab). The fields that name people — `From:`, `To:`,
`Cc:`, `Reply-To:`, `Sender:` — and `Subject:` are not transport fields: "From: Kirk Douglas
<kirk@example.com>" names a person wherever it is quoted.
"""

from __future__ import annotations

import re
from typing import Final

TRANSPORT_FIELD: Final = re.compile(
    r"(?:Received|Received-SPF|Return-Path|Delivered-To|X-[\w-]+|DKIM-Signature|DomainKey-Signature|ARC-[\w-]+|"
    r"Authentication-Results|Message-I[Dd]|MIME-Version|Content-[\w-]+|References|In-Reply-To)[ \t]*:",
    re.IGNORECASE,
)
# a reply's attribution: the line up to the writer's name, and from the name to its end
_ATTRIBUTION_HEAD = re.compile(r"[ \t]*(?:>[ \t]*)*(?:-+[ \t]*)?(?:On[ \t][^\n]*,[ \t]*)?")
_ATTRIBUTION_NAME = re.compile(
    r"([^\W\d_][^\W\d_ .'’-]*(?:[ .'’-]+[^\W\d_][\w.'’-]*){0,3})[ \t]*(?:<[^<>\n]*>[ \t]*)?wrote:[ \t]*$",
    re.MULTILINE,
)
_FIELD_NAME = re.compile(r"[A-Z][\w]*(?:-[A-Z0-9][\w]*)+")  # "Content-Type", "MIME-Version"
MAX_FOLDED_LINES: Final = 40
"""Lines folded under one field looked back over, at most (a signature's runs to a dozen)."""


def in_transport_field(text: str, start: int) -> bool:
    """Whether the character at `start` is inside a mail transport field written out in `text`:
    on the field's own line or on a line folded under it."""
    line_start = text.rfind("\n", 0, start) + 1
    for _ in range(MAX_FOLDED_LINES):
        if TRANSPORT_FIELD.match(text, line_start) is not None:
            return True
        if line_start == 0 or text[line_start : line_start + 1] not in (" ", "\t"):
            return False
        line_start = text.rfind("\n", 0, line_start - 1) + 1
    return False


def header_field_name(text: str, surface: str, end: int) -> bool:
    """Whether a hit ending at `end` is a mail header's field name ("Content-Type: text/plain",
    "h=MIME-Version: Message-Id:" of a quoted signature): capitalised parts joined by hyphens,
    right before a colon."""
    return text.startswith(":", end) and _FIELD_NAME.fullmatch(surface) is not None


def attribution_name(text: str, start: int) -> tuple[int, int] | None:
    """The span of the writer's name when `start` opens it in a reply's attribution line (see the
    module), else None."""
    line_start = text.rfind("\n", 0, start) + 1
    if _ATTRIBUTION_HEAD.fullmatch(text, line_start, start) is None:
        return None
    named = _ATTRIBUTION_NAME.match(text, start)
    return None if named is None else (named.start(1), named.end(1))
