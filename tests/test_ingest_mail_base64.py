"""An email text part in base64 damaged in transfer (characters lost: Python hands back the raw
base64 as its "decoded" bytes): read from another rendering, or said as not read, never shown
as a line of base64; of two copies of one message, the one whose parts all decode is kept."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.mailkit import assert_written_before_stays_known
from vaultmind.ingest.email import parse_email_paths_with_report
from vaultmind.ingest.mime import UNDECODABLE, parse_message

PLAIN = "Hello Bob,\nthe meeting moves to Thursday 10:00.\nCheers, Alice\n"
HTML = "<p>Hello Bob,<br>the meeting moves to <b>Thursday</b> 10:00 (room 4).<br>Cheers, Alice</p>\n"


def b64(text: str) -> str:
    return base64.encodebytes(text.encode()).decode()




def damaged(text: str, lost: int | None = None) -> str:
    """`text` in base64 with characters lost in its middle: to a length no base64 has (the
    email package hands back the raw base64), or by `lost` (it decodes into shifted bits)."""
    whole = base64.b64encode(text.encode()).decode().rstrip("=")
    lost = (len(whole) - 1) % 4 or 4 if lost is None else lost
    return whole[:20] + whole[20 + lost :]


DAMAGED = damaged(PLAIN)
SHIFTED = damaged(PLAIN, 2)


HEAD = (
    "From: Alice <alice@example.com>\nTo: Bob <bob@example.com>\nSubject: Meeting moved\n"
    "Date: Mon, 04 Mar 2024 10:00:00 +0000\nMIME-Version: 1.0\n"
)


def alternative(plain: str) -> str:
    return (
        'Content-Type: multipart/alternative; boundary="ALT"\n\n--ALT\n'
        "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n" + plain + "\n--ALT\n"
        "Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: base64\n\n" + b64(HTML) + "\n--ALT--\n"
    )


def direct(plain: str = DAMAGED, mid: str = "Message-ID: <direct@example.com>\n") -> str:
    return HEAD + mid + alternative(plain)


def forwarded(plain: str = DAMAGED) -> str:
    return (
        HEAD.replace("Subject: Meeting moved", "Subject: Fwd: Meeting moved") + "Message-ID: <fwd@example.com>\n"
        'Content-Type: multipart/mixed; boundary="OUT"\n\n--OUT\nContent-Type: text/plain\n\nSee below.\n\n'
        "--OUT\nContent-Type: message/rfc822\n\n" + HEAD + alternative(plain) + "\n--OUT--\n"
    )


@pytest.mark.parametrize(
    "raw",
    [direct(), forwarded(), direct(SHIFTED), forwarded(SHIFTED)],
    ids=["direct", "forwarded", "direct-shifted", "forwarded-shifted"],
)
def test_a_damaged_plain_rendering_is_read_from_the_html_one_and_said(raw: str) -> None:
    parsed = parse_message(raw.encode())
    assert "SGVsbG8" not in parsed.body + "".join(parsed.forwarded)
    assert "\x95" not in parsed.body + "".join(parsed.forwarded)
    assert "the meeting moves to Thursday 10:00 (room 4)." in parsed.body + "".join(parsed.forwarded)
    assert any(UNDECODABLE in p for p in parsed.problems)
    assert any("InvalidBase64" in p for p in parsed.problems)  # an inner part's defect counts
    # what an earlier vaultmind read (a note written then holds it, a message without a
    # Message-ID keeps the id hashed from it)
    assert parsed.body_before is not None or parsed.forwarded_before


def test_a_lone_damaged_text_part_is_said_not_read(tmp_path: Path) -> None:
    raw = HEAD + "Message-ID: <lone@example.com>\nContent-Type: text/plain; charset=utf-8\n" \
        "Content-Transfer-Encoding: base64\n\n" + DAMAGED
    path = tmp_path / "lone.eml"
    path.write_text(raw, encoding="utf-8")
    batches, warnings = parse_email_paths_with_report([path])
    assert "SGVsbG8" not in batches[0].messages[0].text
    (said,) = [w for w in warnings if UNDECODABLE in w]
    assert said.startswith(str(path)) and "not in the note" in said


@pytest.mark.parametrize("names", [("a-bad.eml", "b-good.eml"), ("b-bad.eml", "a-good.eml")])
def test_of_two_copies_the_one_whose_parts_decode_is_kept(tmp_path: Path, names: tuple[str, str]) -> None:
    """The copies tie on the message's own defects; the damaged part's decides, whichever file
    sorts first."""
    bad, good = tmp_path / names[0], tmp_path / names[1]
    bad.write_text(forwarded(), encoding="utf-8")
    good.write_text(forwarded(b64(PLAIN)), encoding="utf-8")
    batches, warnings = parse_email_paths_with_report([bad, good])
    (message,) = [m for b in batches for m in b.messages]
    assert "the meeting moves to Thursday 10:00.\nCheers, Alice" in message.text
    (said,) = [w for w in warnings if "also read with a different text" in w]
    assert f"kept the copy in {good}," in said and f"left out the one in {bad} " in said


def test_a_note_written_with_the_raw_base64_is_kept_and_known(tmp_path: Path, vault: Path) -> None:
    """A message without a Message-ID an earlier vaultmind wrote with its raw base64 as text:
    the same id, known, the note not rewritten and no message written twice."""
    path = tmp_path / "old.eml"
    path.write_text(direct(mid=""), encoding="utf-8")
    (batch,), _ = parse_email_paths_with_report([path])
    ((message_id, before),) = batch.earlier_texts
    assert "SGVsbG8" in before and message_id == batch.messages[0].message_id
    assert_written_before_stays_known(vault, batch, before)

def _unpadded(data: bytes) -> str:
    """`data` in base64 with its final `=` left off (a mailer that drops the padding): the
    email package notes a padding defect, and the bytes decode whole."""
    return base64.b64encode(data).decode().rstrip("=")


@pytest.mark.parametrize(
    ("content_type", "data"),
    [
        ("text/plain", "Café at 10, olé — see you\n".encode("cp1252")),  # no charset, not UTF-8
        ("text/plain; charset=iso-8859-1", "The \u201cplan\u201d stands.\n".encode("cp1252")),  # cp1252 labelled latin-1
        ("text/plain; charset=x-mac-roman-ce", b"Plain ASCII under a charset Python does not know.\n"),
    ],
    ids=["undeclared-cp1252", "cp1252-labelled-latin-1", "unknown-charset"],
)
def test_text_without_its_padding_is_read(content_type: str, data: bytes) -> None:
    """A padding defect alone on bytes that read as text is no damage, whatever charset the
    mail's text is in: the text is read, not said lost."""
    assert len(base64.b64encode(data).decode()) != len(_unpadded(data))  # (the padding is gone)
    raw = HEAD + "Message-ID: <pad@example.com>\nContent-Type: " + content_type + "\n" \
        "Content-Transfer-Encoding: base64\n\n" + _unpadded(data) + "\n"
    parsed = parse_message(raw.encode())
    assert not any(UNDECODABLE in said for said in parsed.lost + parsed.problems)
    assert parsed.body.strip() == data.decode("cp1252").strip()
