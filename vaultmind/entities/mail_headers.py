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
when the model read a place or anything but an organization ("Megan" as a place, "One" left
out). An organization writes replies too: "Acme Corp wrote:", "Google Support wrote:" stay
organizations when the model read the whole name as one or the name ends in an organization's
word (`organization_name`); "Adam" read as an organization in "Adam Renberg <adam@…> wrote:" is
a part of a person's name.

A transport field (`TRANSPORT_FIELD`: `Received:`, `DKIM-Signature:`, an `X-…:` field, the
`Content-…:` fields …) is a line that opens with its name as mails write it and a colon, with
the lines folded under it (each starting with a space or a tab). A field named with a common
word — `Received:`, `References:` — is a mail's only with a mail's value ("Received: from
mx.example.org (…)", "References: <a1@mail.example>") or next to another of a mail's fields: a
note's own label "Received: €500 deposit from Helen Okafor" keeps its names. The fields that
name people — `From:`, `To:`, `Cc:`, `Reply-To:`, `Sender:` — and `Subject:` are not transport
fields: "From: Kirk Douglas <kirk@example.com>" names a person wherever it is quoted.

A mail system's own mailbox (`mailer-daemon@…`, `postmaster@…`) is a server's: the name it writes
under ("Mail Delivery Subsystem <mailer-daemon@googlemail.com>") is no person, the address is its
entity (`mail_system_address`).

An address between angle brackets in a field that holds a message's id or a mailing list's
machinery — `Message-ID:`, `In-Reply-To:`, `References:`, `Content-ID:`, a `List-…:` field —
is no one's address (`message_address`): "<CAKsfaB…@mail.gmail.com>" is a message, "<mailto:
u+mq6t…@list.example>" a list's unsubscribe robot.
"""

from __future__ import annotations

import re
from typing import Final

TRANSPORT_FIELD: Final = re.compile(
    r"(Received|Received-SPF|Return-Path|Delivered-To|X-[\w-]+|DKIM-Signature|DomainKey-Signature|ARC-[\w-]+|"
    r"Authentication-Results|Message-I[Dd]|MIME-Version|Mime-Version|Content-[\w-]+|References|In-Reply-To)"
    r"[ \t]*:[ \t]*"
)
# the fields named with a common word, which a note writes as a label of its own ("Received: €500
# from Helen Okafor", "References: Stanford University"), and the values they hold in a mail:
# "from mx.example.org (…)", "by 10.0.0.1 with SMTP id …", "from localhost (…)"; "<a1@mail.example>"
_WORD_FIELDS: Final = {
    "Received": re.compile(r"(?:from|by)[ \t]+(?:[\w-]+\.[\w.-]+|\[|[\w.-]+[ \t]+\()"),
    "References": re.compile(r"<[^<>\s]+@[^<>\s]+>"),
}
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
    line_start = _field_start(text, start, TRANSPORT_FIELD)
    return line_start is not None and _transport_field(text, line_start)


def _field_start(text: str, start: int, field: re.Pattern[str]) -> int | None:
    """Where the line of the field `field` that the character at `start` is in starts: its own
    line, or the line it is folded under; None when it is in no such field."""
    line_start = text.rfind("\n", 0, start) + 1
    for _ in range(MAX_FOLDED_LINES):
        if field.match(text, line_start) is not None:
            return line_start
        if line_start == 0 or text[line_start : line_start + 1] not in (" ", "\t"):
            return None
        line_start = text.rfind("\n", 0, line_start - 1) + 1
    return None


# the fields whose addresses are a message's id or a mailing list's machinery, not anyone's:
# "Message-ID: <20171013.254C@mail.example>", "List-Unsubscribe: <mailto:u+mq6t@mail.example>"
# in any case, and quoted in a reply ("> Message-ID:"), as mails write them
_ID_FIELD: Final = re.compile(
    r"[ \t]*(?:>[ \t]*)*(?:Message-ID|Resent-Message-ID|In-Reply-To|References|Content-ID|List-[\w-]+)[ \t]*:", re.I
)
_ADDRESS_OPENS = re.compile(r"<(?:mailto:)?$")


def message_address(text: str, start: int) -> bool:
    """Whether the address at `start` is written between angle brackets in a mail's id or list
    field (`_ID_FIELD`, in any case, maybe quoted: "Message-id:", "> In-Reply-To:"): a message's id ("Message-ID: <CAKsfaB…@mail.gmail.com>", a reply's
    "References:") or a list's unsubscribe address, which the small print of a quoted mail holds;
    no one's address. "From: Bob <bob@example.com>" and "References: alice@example.com" written
    by hand stay addresses."""
    return (
        _ADDRESS_OPENS.search(text, max(0, start - 8), start) is not None
        and _field_start(text, start, _ID_FIELD) is not None
    )


def _transport_field(text: str, line_start: int, *, alone: bool = False) -> bool:
    """Whether the field opening the line at `line_start` is a mail's: a field named as only mails
    name theirs ("DKIM-Signature:", "X-Mailer:"), or one named with a common word that holds a
    mail's value (`_WORD_FIELDS`) or stands next to another of a mail's fields — unless `alone`,
    when its neighbours are not looked at."""
    field = TRANSPORT_FIELD.match(text, line_start)
    if field is None:
        return False
    shape = _WORD_FIELDS.get(field.group(1))
    if shape is None or shape.match(text, field.end()) is not None:
        return True
    if alone:
        return False
    return any(_transport_field(text, at, alone=True) for at in _neighbour_fields(text, line_start))


def _neighbour_fields(text: str, line_start: int) -> list[int]:
    """Where the lines of the fields before and after the one at `line_start` start (over the
    lines folded under them)."""
    starts: list[int] = []
    at = line_start
    for _ in range(MAX_FOLDED_LINES):  # back to the line opening the field before
        if at == 0:
            break
        at = text.rfind("\n", 0, at - 1) + 1
        if text[at : at + 1] not in (" ", "\t"):
            starts.append(at)
            break
    at = line_start
    for _ in range(MAX_FOLDED_LINES):  # on past the lines folded under this one
        at = text.find("\n", at) + 1
        if at == 0 or at == len(text):
            break
        if text[at] not in (" ", "\t"):
            starts.append(at)
            break
    return starts


def header_field_name(text: str, surface: str, end: int) -> bool:
    """Whether a hit ending at `end` is a mail header's field name ("Content-Type: text/plain",
    "h=MIME-Version: Message-Id:" of a quoted signature): capitalised parts joined by hyphens,
    right before a colon."""
    return text.startswith(":", end) and _FIELD_NAME.fullmatch(surface) is not None


# the last word of a name that is an organization's: "Acme Corp", "Google Support", "Stripe Team"
_ORGANIZATION_WORDS: Final = frozenset(
    "corp corporation inc incorporated llc ltd limited gmbh ag plc co company group support team "
    "service services helpdesk desk billing sales notifications bot".split()
)


def organization_name(name: str) -> bool:
    """Whether a name ends in an organization's word ("Acme Corp.", "Google Support")."""
    words = name.split()
    return len(words) > 1 and words[-1].rstrip(".").lower() in _ORGANIZATION_WORDS


def attribution_name(text: str, start: int) -> tuple[int, int] | None:
    """The span of the writer's name when `start` opens it in a reply's attribution line (see the
    module), else None."""
    line_start = text.rfind("\n", 0, start) + 1
    if _ATTRIBUTION_HEAD.fullmatch(text, line_start, start) is None:
        return None
    named = _ATTRIBUTION_NAME.match(text, start)
    return None if named is None else (named.start(1), named.end(1))


# the mailboxes of a mail system itself (RFC 5321's postmaster, the bounce robot's mailer-daemon)
_MAIL_SYSTEM_MAILBOXES: Final = frozenset({"mailer-daemon", "postmaster"})


def mail_system_address(address: str) -> bool:
    """Whether `address` is a mail system's own mailbox ("MAILER-DAEMON@aol.com",
    "postmaster@example.no"): what writes from it is a mail server's bounce, no one's message, so
    its name ("Mail Delivery Subsystem") is no person."""
    return address.rsplit("@", 1)[0].lower() in _MAIL_SYSTEM_MAILBOXES
