from __future__ import annotations

import base64
from datetime import UTC, datetime
from pathlib import Path

import pytest

from vaultmind.ingest.email import attachments_line, parse_email_paths_with_report
from vaultmind.ingest.mailheaders import decode_bytes, decode_header
from vaultmind.ingest.mime import (
    MAX_ENCLOSED,
    MAX_MESSAGE_BYTES,
    MAX_TEXT_CHARS,
    Attachment,
    MimeError,
    parse_message,
)


def eml(headers: str, body: str | bytes = "Hello.\n") -> bytes:
    """A message from header lines and a body (CRLF like on the wire)."""
    head = headers.strip("\n").replace("\n", "\r\n").encode("utf-8")
    data = body if isinstance(body, bytes) else body.replace("\n", "\r\n").encode("utf-8")
    return head + b"\r\n\r\n" + data


BASE = """From: Alice Chen <alice@example.com>
To: bob@example.com
Subject: Q3 budget
Date: Mon, 11 Mar 2024 10:00:00 +0100
Message-ID: <CAF1@mail.example.com>
MIME-Version: 1.0"""


def test_plain_message_fields() -> None:
    parsed = parse_message(
        eml(
            BASE + "\nIn-Reply-To: <p0@x.org>\nReferences: <r1@x.org>\n <p0@x.org>\n"
            "Content-Type: text/plain; charset=us-ascii",
            "Hi Bob,\n\nthe numbers.\n",
        )
    )
    assert parsed.message_id == "CAF1@mail.example.com"
    assert parsed.in_reply_to == ("p0@x.org",)
    assert parsed.references == ("r1@x.org", "p0@x.org")
    assert parsed.author == "Alice Chen <alice@example.com>"
    assert parsed.address == "alice@example.com"
    assert parsed.subject == "Q3 budget"
    assert parsed.date == datetime(2024, 3, 11, 9, 0, tzinfo=UTC)
    assert parsed.date_source == "Date"
    assert parsed.body == "Hi Bob,\n\nthe numbers."
    assert parsed.attachments == () and not parsed.html_only


def test_quoted_printable_and_base64_bodies() -> None:
    qp = parse_message(
        eml(
            BASE + "\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable",
            "Gr=C3=BC=C3=9Fe aus M=C3=BCnchen, this line is long and soft-=\nwrapped.\n",
        )
    )
    assert qp.body == "Grüße aus München, this line is long and soft-wrapped."
    b64 = base64.encodebytes("Привет, мир\nвторая строка\n".encode()).decode()
    parsed = parse_message(
        eml(BASE + "\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64", b64)
    )
    assert parsed.body == "Привет, мир\nвторая строка"


def test_encoded_and_raw_8bit_headers() -> None:
    parsed = parse_message(
        eml(
            "From: =?utf-8?q?J=C3=BCrgen_M=C3=BCller?= <jm@example.de>\n"
            "Subject: =?iso-8859-1?q?R=E9union?= =?utf-8?b?8J+YgA==?= ok\n"
            "Date: Tue, 12 Mar 2024 08:00:00 +0000\nMessage-ID: <x1@example.de>"
        )
    )
    assert parsed.author == "Jürgen Müller <jm@example.de>"
    assert parsed.subject == "Réunion😀 ok"
    raw = "From: Jörg <j@example.de>\nSubject: Café ☕\nDate: Tue, 12 Mar 2024 08:00:00 +0000\n".encode()
    parsed = parse_message(raw + b"\nbody\n")
    assert parsed.author == "Jörg <j@example.de>"
    assert parsed.subject == "Café ☕"


def test_bad_charsets_never_crash() -> None:
    assert decode_header("=?x-no-such-charset?q?abc?=") == "abc"
    assert decode_header("=?utf-8?b?not base64!!?=")  # kept as something, no exception
    parsed = parse_message(
        eml(
            BASE + "\nContent-Type: text/plain; charset=x-klingon",
            "plain ascii text \xe9\n".encode("latin-1"),
        )
    )
    assert parsed.body == "plain ascii text é"
    assert any("unknown charset" in p for p in parsed.problems)
    text, problem = decode_bytes("Grüße".encode() + b"\xff", "utf-8")
    assert text.startswith("Grüße") and problem


def test_cp1252_body_declared_latin1_and_undeclared() -> None:
    body = "Price: 5 € – “quoted” café\n".encode("cp1252")
    declared = parse_message(eml(BASE + "\nContent-Type: text/plain; charset=iso-8859-1", body))
    assert declared.body == "Price: 5 € – “quoted” café"
    undeclared = parse_message(eml(BASE, body))
    assert undeclared.body == "Price: 5 € – “quoted” café"


def test_html_only_message_becomes_text() -> None:
    html = (
        "<html><head><style>p{color:red}</style><title>x</title></head><body>"
        "<p>Hello&nbsp;Bob,</p><p>see <a href='https://example.com/q3'>the sheet</a>:</p>"
        "<ul><li>one</li><li>two</li></ul><script>alert(1)</script></body></html>"
    )
    parsed = parse_message(eml(BASE + "\nContent-Type: text/html; charset=utf-8", html))
    assert parsed.html_only
    assert parsed.body == "Hello Bob,\n\nsee the sheet (https://example.com/q3):\n\n- one\n- two"


ALTERNATIVE = (
    BASE + '\nContent-Type: multipart/alternative; boundary="b1"',
    "--b1\nContent-Type: text/plain; charset=utf-8\n\nPlain version.\n"
    "--b1\nContent-Type: text/html; charset=utf-8\n\n<p>HTML <b>version</b>.</p>\n--b1--\n",
)


def test_multipart_alternative_prefers_plain() -> None:
    parsed = parse_message(eml(*ALTERNATIVE))
    assert parsed.body == "Plain version." and not parsed.html_only
    empty_plain = ALTERNATIVE[1].replace("Plain version.", "  ")
    parsed = parse_message(eml(ALTERNATIVE[0], empty_plain))
    assert parsed.body == "HTML version." and parsed.html_only


def test_attachments_listed_never_inlined() -> None:
    pdf = base64.encodebytes(b"%PDF-1.4 " + b"x" * 12_000).decode()
    body = (
        "--m\nContent-Type: text/plain; charset=utf-8\n\nSee attached.\n"
        '--m\nContent-Type: application/pdf; name="report.pdf"\nContent-Disposition: attachment; '
        'filename="report.pdf"\nContent-Transfer-Encoding: base64\n\n' + pdf + "--m\n"
        "Content-Type: text/plain\nContent-Disposition: attachment; filename*=utf-8''notes%20%C3%A9t%C3%A9.txt\n\n"
        "secret attached text\n--m--\n"
    )
    parsed = parse_message(eml(BASE + '\nContent-Type: multipart/mixed; boundary="m"', body))
    assert parsed.body == "See attached."
    assert "secret attached text" not in parsed.body
    assert parsed.attachments == (
        Attachment("report.pdf", "application/pdf", 12_009),
        Attachment("notes été.txt", "text/plain", 20),
    )
    assert attachments_line(parsed.attachments) == (
        "Attachments: report.pdf (application/pdf, 12 KB), notes été.txt (text/plain, 20 B)"
    )
    assert attachments_line([]) == ""


def test_broken_boundaries() -> None:
    unclosed = parse_message(
        eml(
            BASE + '\nContent-Type: multipart/mixed; boundary="zz"',
            "--zz\nContent-Type: text/plain\n\nFirst part, never closed.\n",
        )
    )
    assert unclosed.body == "First part, never closed."
    assert any("CloseBoundaryNotFound" in p for p in unclosed.problems)
    no_boundary = parse_message(
        eml(
            BASE + '\nContent-Type: multipart/alternative; boundary="nothere"',
            "--wrong\nContent-Type: text/html\n\nJust this text.\n--wrong--\n",
        )
    )
    assert no_boundary.body == "Just this text."


def test_enclosed_message_listed_and_its_text_forwarded() -> None:
    inner = "From: carol@example.com\nSubject: Original plan\nDate: Mon, 11 Mar 2024 08:00:00 +0000\n\nThe plan.\n"
    outer = (
        "--o\nContent-Type: text/plain\n\nFYI, see below.\n"
        "--o\nContent-Type: message/rfc822\nContent-Disposition: attachment\n\n" + inner + "--o--\n"
    )
    parsed = parse_message(eml(BASE + '\nContent-Type: multipart/mixed; boundary="o"', outer))
    assert parsed.body == "FYI, see below."
    assert parsed.forwarded == (
        "---------- Forwarded message ----------\nFrom: carol@example.com\n"
        "Date: Mon, 11 Mar 2024 08:00:00 +0000\nSubject: Original plan\n\nThe plan.",
    )
    assert [(a.filename, a.content_type) for a in parsed.attachments] == [
        ("Original plan.eml", "message/rfc822")
    ]
    wrapper = "--o\nContent-Type: message/rfc822\n\n" + inner + "--o--\n"
    parsed = parse_message(eml(BASE + '\nContent-Type: multipart/mixed; boundary="o"', wrapper))
    assert parsed.body == "The plan."


def _forwards(count: int, text: str = "") -> bytes:
    """A message attaching `count` messages, each saying "INNER-<i>", with `text` of its own."""
    inner = "From: c{i}@example.com\nSubject: inner {i}\nDate: Mon, 11 Mar 2024 08:00:00 +0000\n\nINNER-{i} said.\n"
    parts = (f"--o\nContent-Type: text/plain\n\n{text}\n" if text else "") + "".join(
        "--o\nContent-Type: message/rfc822\nContent-Disposition: attachment\n\n" + inner.format(i=i) for i in range(count)
    )
    return eml(BASE + '\nContent-Type: multipart/mixed; boundary="o"', parts + "--o--\n")


@pytest.mark.parametrize(("count", "text"), [(4, "FYI, four of them."), (2, "")])
def test_every_attached_message_keeps_its_text(count: int, text: str) -> None:
    """Four forwards beside a text of its own, or two without one: none of their texts is lost
    (the first of those without an outer text is the message's text, the others follow it)."""
    parsed = parse_message(_forwards(count, text))
    said = "\n".join([parsed.body, *parsed.forwarded])
    assert [said.count(f"INNER-{i} said.") for i in range(count)] == [1] * count
    assert parsed.body.startswith(text or "INNER-0 said.")
    assert not parsed.problems and not parsed.lost


def test_attached_messages_past_the_cap_are_said() -> None:
    parsed = parse_message(_forwards(MAX_ENCLOSED + 1, "So many."))
    assert len(parsed.forwarded) == MAX_ENCLOSED
    assert parsed.lost == (
        f"more than {MAX_ENCLOSED} attached messages: the text of those after the {MAX_ENCLOSED}th is not read",
    )
    assert len(parsed.attachments) == MAX_ENCLOSED + 1, "each is still listed"


def test_date_fallbacks() -> None:
    received = (
        "Received: from b by c; Tue, 12 Mar 2024 10:00:05 +0000\n"
        "Received: from a by b; Tue, 12 Mar 2024 10:00:00 +0000\n"
    )
    parsed = parse_message(eml(received + "From: a@example.com\nDate: not a date"))
    assert parsed.date == datetime(2024, 3, 12, 10, 0, 5, tzinfo=UTC), "the newest hop: the mailbox's own server"
    assert parsed.date_source == "Received"
    parsed = parse_message(eml("From: a@example.com\nDate: yesterday-ish"))
    assert parsed.date is None and parsed.date_source == ""


def test_sender_fallbacks_and_missing_message_id() -> None:
    parsed = parse_message(eml("Sender: list@example.org\nDate: Tue, 12 Mar 2024 10:00:00 +0000"))
    assert parsed.author == "list@example.org" and parsed.message_id is None
    parsed = parse_message(eml('From: "Stone, Bob" <BOB@Example.com>\nDate: Tue, 12 Mar 2024 10:00:00 +0000'))
    assert parsed.author == "Stone, Bob <BOB@Example.com>" and parsed.address == "bob@example.com"


def test_caps_and_unreadable_input() -> None:
    with pytest.raises(MimeError, match="empty"):
        parse_message(b"  \r\n")
    with pytest.raises(MimeError, match="no headers"):
        parse_message(b"\r\n\r\njust a body, no headers\r\n")
    long = ("word " * 19 + "word\n") * (MAX_TEXT_CHARS // 100 + 500)
    parsed = parse_message(eml(BASE, long))
    assert len(parsed.body) < MAX_TEXT_CHARS + 100
    assert parsed.body.endswith("more characters not ingested]")


@pytest.mark.slow
def test_a_message_over_the_cap_is_read_to_it(tmp_path: Path) -> None:
    """A mail with a large attachment (34 MB encoded, as a 25 MB file is) was dropped whole, its
    text too, as "unparseable": it is read to the cap — headers and text kept — and said."""
    big = eml(
        BASE + '\nContent-Type: multipart/mixed; boundary="o"',
        "--o\nContent-Type: text/plain\n\nThe video of the launch, attached.\n"
        "--o\nContent-Type: video/mp4\nContent-Disposition: attachment; filename=launch.mp4\n"
        "Content-Transfer-Encoding: base64\n\n" + ("A" * 76 + "\n") * (34 * 2**20 // 77) + "--o--\n",
    )
    said = f"{len(big) / 2**20:.1f} MB, over the 32 MB cap: what follows its first 32 MB (attachments, mostly) is not read"
    parsed = parse_message(big[: MAX_MESSAGE_BYTES + 1], size=len(big))
    assert parsed.body == "The video of the launch, attached." and parsed.subject == "Q3 budget"
    assert parsed.lost == (said,)
    path = tmp_path / "big.eml"
    path.write_bytes(big)
    batches, warnings = parse_email_paths_with_report([path])
    assert [m.text.splitlines()[0] for b in batches for m in b.messages] == ["The video of the launch, attached."]
    assert warnings == [f"{path}: {said}: part of its text is not in the note"]


def test_a_name_written_surname_first_without_quotes_stays_whole() -> None:
    """`Chen, Alice <alice@example.com>` (company mail programs write it so) is one person, not
    "Chen" and then "Alice"; in To and Cc as in From."""
    headers = BASE.replace("From: Alice Chen <alice@example.com>", "From: Chen, Alice <alice@example.com>").replace(
        "To: bob@example.com", "To: Stone, Bob <bob@example.com>, Doe, Jane <jane@example.com>\nCc: Team, carol@example.com"
    )
    parsed = parse_message(eml(headers))
    assert parsed.author == "Chen, Alice <alice@example.com>"
    assert parsed.to == ("Stone, Bob <bob@example.com>", "Doe, Jane <jane@example.com>")
    assert parsed.cc == ("carol@example.com",)


def test_a_quoted_name_keeps_its_own_quotes() -> None:
    """`"Doe, John \"JD\"" <john@…>` had lost the quote that closes "JD"."""
    headers = BASE.replace("From: Alice Chen <alice@example.com>", 'From: "Doe, John \\"JD\\"" <john@example.com>').replace(
        "To: bob@example.com", "To: 'Bob Stone' <bob@example.com>"
    )
    parsed = parse_message(eml(headers))
    assert parsed.author == 'Doe, John "JD" <john@example.com>'
    assert parsed.to == ("Bob Stone <bob@example.com>",)


STATUS = """Reporting-MTA: dns; mx.example.org
Arrival-Date: Mon, 11 Mar 2024 10:00:02 +0100

Original-Recipient: rfc822;bob@old.example.com
Final-Recipient: rfc822; bob@example.com
Action: failed
Status: 5.1.1
Diagnostic-Code: smtp; 550 5.1.1 <bob@example.com>: user unknown

Final-Recipient: rfc822;carol@example.com
Action: delayed
Status: 4.4.1
Will-Retry-Until: Wed, 13 Mar 2024 10:00:00 +0100
"""

BOUNCE = """From: Mail Delivery System <MAILER-DAEMON@mx.example.org>
To: alice@example.com
Subject: Undelivered Mail Returned to Sender
Date: Mon, 11 Mar 2024 10:00:05 +0100
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="RR\""""


def _report(*parts: str) -> bytes:
    body = "".join(f"--RR\n{part}\n" for part in parts) + "--RR--\n"
    return eml(BOUNCE, body)


@pytest.mark.parametrize("headers_type", ["text/rfc822-headers", "message/global-headers"])
def test_a_delivery_status_only_bounce_reads_as_its_status_and_the_original_subject(headers_type: str) -> None:
    """A bounce of a delivery status and the returned headers (RFC 3464's part, or RFC 6533's,
    which the parser reads as an enclosed message), no human-readable text: each recipient's
    status (action, code, diagnostic), and the message that was not delivered."""
    parsed = parse_message(
        _report(
            "Content-Type: message/delivery-status\n\n" + STATUS,
            f"Content-Type: {headers_type}\n\nFrom: Alice <alice@example.com>\nTo: bob@old.example.com\n"
            "Subject: Q3 budget\nDate: Mon, 11 Mar 2024 10:00:00 +0100\nMessage-ID: <CAF1@mail.example.com>\n",
        )
    )
    assert parsed.body == (
        "Delivery status (reported by mx.example.org):\n"
        "- bob@example.com (sent to bob@old.example.com): failed, 5.1.1 — smtp; 550 5.1.1 <bob@example.com>: user unknown\n"
        "- carol@example.com: delayed, 4.4.1 — will retry until Wed, 13 Mar 2024 10:00:00 +0100\n"
        "\n"
        "---------- The message returned (its headers) ----------\n"
        "From: Alice <alice@example.com>\n"
        "Date: Mon, 11 Mar 2024 10:00:00 +0100\n"
        "Subject: Q3 budget\n"
        "To: bob@old.example.com"
    )
    if headers_type == "text/rfc822-headers":  # as read before (the returned headers as raw text): a note written then is known by it
        assert parsed.body_before is not None and parsed.body_before.startswith("From: Alice <alice@example.com>\nTo: bob@old")


def test_a_bounce_returning_the_whole_message_is_not_that_message() -> None:
    """A delivery status and the message returned whole: the status is the bounce's text, the
    returned message follows it as forwarded (not taken for the bounce's own text)."""
    parsed = parse_message(
        _report(
            "Content-Type: message/delivery-status\n\n" + STATUS,
            "Content-Type: message/rfc822\n\nFrom: Alice <alice@example.com>\nSubject: Q3 budget\n\nThe numbers.\n",
        )
    )
    assert parsed.body.startswith("Delivery status (reported by mx.example.org):\n- bob@example.com")
    assert parsed.forwarded == ("---------- Forwarded message ----------\nFrom: Alice <alice@example.com>\nSubject: Q3 budget\n\nThe numbers.",)
    assert parsed.body_before == "The numbers."


def test_a_bare_delivery_status_message_is_no_empty_message() -> None:
    """A message that is a delivery status alone (its top-level type), fields of one group
    spread over several blocks."""
    parsed = parse_message(
        eml("Content-Type: message/delivery-status\nMIME-Version: 1.0", "Reporting-Mta: dns; a92.example.com\n\n"
            "Final-Recipient: RFC822; <demo@example.com>\nAction: failed\nStatus: 4.2.2\n")
    )
    assert parsed.body == "Delivery status (reported by a92.example.com):\n- demo@example.com: failed, 4.2.2"
    assert parsed.body_before == ""


def test_a_message_without_a_report_has_no_earlier_body() -> None:
    parsed = parse_message(eml(BASE + "\nContent-Type: text/plain", "Hi.\n"))
    assert (parsed.body, parsed.body_before) == ("Hi.", None)


PLAIN_BOUNCE = """Delivery to the following recipient failed permanently:

     friend@nowhere.example

----- Original message -----

MIME-Version: 1.0
Date: Sat, 4 May 2024 09:00:00 +0200
Subject: Picnic
From: Ana <ana@example.org>
To: friend@nowhere.example
Content-Type: multipart/alternative; boundary=abc123

See you at the picnic.
"""


def test_a_plain_text_bounce_reads_its_returned_headers_as_a_report_does() -> None:
    """A bounce in plain text (from a mail system's mailbox, or with an empty Return-Path) returns
    the message's raw header block after an "Original message" line: it reads as a report's
    returned headers (From, Date, Subject, To), its MIME-Version and Content-Type left out (they
    matched questions about MIME); the text below is kept. A person's message quoting such a
    block is left as it is. The text as an earlier vaultmind read it is its body before."""
    parsed = parse_message(
        eml("Return-Path: <>\nFrom: Mail Delivery Subsystem <mailer-daemon@example.net>\nSubject: Delivery failure\n"
            "Date: Sat, 4 May 2024 09:01:00 +0200\nContent-Type: text/plain", PLAIN_BOUNCE)
    )
    assert "MIME-Version" not in parsed.body and "Content-Type" not in parsed.body and "boundary" not in parsed.body
    assert "---------- The message returned (its headers) ----------\nFrom: Ana <ana@example.org>\n" in parsed.body
    assert "Subject: Picnic\nTo: friend@nowhere.example\n\nSee you at the picnic." in parsed.body
    assert parsed.body.startswith("Delivery to the following recipient failed permanently:")
    assert parsed.body_before is not None and "Content-Type: multipart/alternative" in parsed.body_before
    person = parse_message(eml("From: Bob <bob@example.org>\nSubject: fwd\nContent-Type: text/plain", PLAIN_BOUNCE))
    assert "Content-Type: multipart/alternative" in person.body and person.body_before is None
