"""Delivery reports (RFC 3464, RFC 6533): a bounce's status, one line per recipient, and the
headers of the message it returns, as text (`mime.parse_message` reads them so); and a bounce in
plain text, whose returned message's raw header block follows an "Original message" line
(`returned_in_text`), read alike."""

from __future__ import annotations

import re
from email import policy
from email.message import Message
from email.parser import HeaderParser

from vaultmind.ingest.mailheaders import decode_header, forwarded_header

# a delivery report's parts (RFC 3464, RFC 6533): its status, the headers of the message returned
REPORT_TYPES = frozenset(
    {"message/delivery-status", "message/global-delivery-status", "text/rfc822-headers", "message/global-headers"}
)


def report_text(part: Message, ctype: str, text: str) -> str:
    """A delivery report's part (`text`: its payload, decoded) as text: its status, one line per
    recipient (`_status`), or the headers of the message returned (From, Date, Subject, To)."""
    text = text.replace("\r\n", "\n")
    if not ctype.endswith("-status"):
        enclosed = part.get_payload()  # RFC 6533's `message/global-headers`: read as a message
        if isinstance(enclosed, list) and enclosed and isinstance(enclosed[0], Message):
            returned = enclosed[0]
        else:
            returned = HeaderParser(policy=policy.compat32).parsestr(text.lstrip("\n"), headersonly=True)
        return forwarded_header(returned, "The message returned (its headers)").strip() if returned.keys() else ""
    payload = part.get_payload()
    if isinstance(payload, list):  # (the parser reads each block of fields as a message)
        text = "\n\n".join(str(block.as_string()) for block in payload if isinstance(block, Message))
    blocks = [
        [(key.lower(), decode_header(value)) for key, value in HeaderParser(policy=policy.compat32).parsestr(block).items()]
        for block in re.split(r"\n[ \t]*\n", text.strip("\n"))
    ]
    return _status(blocks)


def _status(blocks: list[list[tuple[str, str]]]) -> str:
    """`Delivery status (reported by <server>):` and a line per recipient: its address (the one
    the message was sent to, when another), action, status code, the server's diagnostic, and
    until when a delayed message is retried."""
    fields = [field for block in blocks for field in block]
    reporter = next((_typed(value) for key, value in fields if key == "reporting-mta"), "")
    lines = [f"Delivery status{f' (reported by {reporter})' if reporter else ''}:"]
    for block in blocks:
        found = dict(reversed(block))  # (a field named twice: its first value)
        final = _typed(found.get("final-recipient", ""))
        if not final and "action" not in found:
            continue
        original = _typed(found.get("original-recipient", ""))
        who = final or original or "a recipient"
        if original and final and original.lower() != final.lower():
            who += f" (sent to {original})"
        what = ", ".join(x for x in (found.get("action", ""), found.get("status", "")) if x)
        details = [found.get("diagnostic-code", "")]
        if found.get("will-retry-until"):
            details.append(f"will retry until {found['will-retry-until']}")
        lines.append(" — ".join([f"- {who}: {what or 'no action given'}", *(x for x in details if x)]))
    if len(lines) == 1:  # no recipient named: the fields as they are
        lines += [f"{key.title()}: {value}" for key, value in fields if key != "reporting-mta"]
    return "\n".join(lines) if len(lines) > 1 or reporter else ""


def _typed(value: str) -> str:
    """A report field's value without its type (`rfc822; <bob@example.com>` → the address)."""
    return value.split(";", 1)[-1].strip().strip("<>").strip()


# a mail system's own mailboxes, which write bounces
_BOUNCERS = frozenset({"mailer-daemon", "mail-daemon", "postmaster", "mailerdaemon"})
_RETURNED_LINE = re.compile(
    r"^[ \t]*-{2,}[ \t]*(?:original message|undelivered message|returned message|message returned)[^\n]*\n", re.I | re.M
)
_FIELD = re.compile(r"^[!-9;-~]+:[ \t]")  # a header line (RFC 5322's field name, then a colon)


def returned_in_text(text: str, address: str, return_path: str) -> str:
    """A plain-text bounce's text (written by a mail system's mailbox, or with an empty
    Return-Path) whose returned message's raw header block follows an "Original message" line:
    that block as a delivery report's returned headers are read (its From, Date, Subject and To
    under "The message returned (its headers)"; `MIME-Version`, `Content-Type` and the rest left
    out), what follows it kept. Any other text as it is."""
    if address.rsplit("@", 1)[0].lower() not in _BOUNCERS and return_path.strip() != "<>":
        return text
    found = _RETURNED_LINE.search(text)
    if found is None:
        return text
    lines = text[found.end() :].lstrip("\n").split("\n")  # (a blank line after its separator)
    count = 0
    while count < len(lines) and (_FIELD.match(lines[count]) or (count and lines[count][:1] in " \t" and lines[count].strip())):
        count += 1
    if count < 2 or (count < len(lines) and lines[count].strip()):  # no header block, or one not ended by a blank line
        return text
    returned = HeaderParser(policy=policy.compat32).parsestr("\n".join(lines[:count]) + "\n\n", headersonly=True)
    rest = "\n".join(lines[count:]).strip("\n")
    return text[: found.start()] + forwarded_header(returned, "The message returned (its headers)") + rest
