"""Unusual exports, read through the whole ingest into a real temp vault: ids that collide by
type, messages in a clock change's repeated hour, edits and cut files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import snapshot_files, write
from vaultmind.ingest.common import mail_cut_short
from vaultmind.ingest.detect import ingest_paths
from vaultmind.ingest.errors import IngestError
from vaultmind.markdown.note import ParsedNote, parse_note


def _notes(vault: Path, folder: str) -> list[ParsedNote]:
    return [
        parse_note(path.relative_to(vault).as_posix(), path.read_text(encoding="utf-8"))
        for path in sorted((vault / folder).rglob("*.md"))
    ]


def _leaves(vault: Path, folder: str) -> list[tuple[str, str]]:
    return [(leaf.message_id, leaf.text) for note in _notes(vault, folder) for leaf in note.leaves]


def test_generic_ids_one_as_a_number_one_as_a_string_are_two_messages(tmp_path: Path, vault: Path) -> None:
    messages = [
        {"id": 1, "author": "Alice", "timestamp": "2024-03-04T09:00:00Z", "text": "numeric id"},
        {"id": "1", "author": "Bob", "timestamp": "2024-03-04T09:01:00Z", "text": "string id"},
        {"id": "2", "author": "Bob", "timestamp": "2024-03-04T09:02:00Z", "text": "plain"},
        {"id": 2, "author": "Bob", "timestamp": "2024-03-04T09:02:00Z", "text": "plain"},  # the same message
    ]
    path = write(tmp_path, "team.json", json.dumps(messages))
    report = ingest_paths("chat", [path], vault)
    assert report.messages_added == 3
    assert _leaves(vault, "sources/chat/chat/team") == [
        ("1", "numeric id"),
        ("1~string", "string id"),
        ("2", "plain"),
    ]
    assert any("message id '1' (a string)" in w and "'1~string'" in w for w in report.warnings)
    before = snapshot_files(vault)
    again = ingest_paths("chat", [path], vault)
    assert again.messages_added == 0 and snapshot_files(vault) == before


def _at(vault: Path, folder: str) -> list[tuple[str, str]]:
    return [
        (leaf.author or "", leaf.timestamp or "")
        for note in _notes(vault, folder)
        for leaf in note.leaves
    ]


DST_MESSAGES = [  # Europe/Berlin, 27 October 2024: 02:00–03:00 comes twice (CEST, then CET)
    ("Alice", "2024-10-27T02:50:00", "before the clocks went back"),
    ("Bob", "2024-10-27T02:10:00", "after, in the repeated hour"),
    ("Alice", "2024-10-27T02:20:00", "still the second pass"),
    ("Bob", "2024-10-27T03:05:00", "later"),
]
DST_UTC = ["2024-10-27T00:50:00Z", "2024-10-27T01:10:00Z", "2024-10-27T01:20:00Z", "2024-10-27T02:05:00Z"]


def test_naive_times_in_the_repeated_hour_follow_the_file_order(tmp_path: Path, vault: Path) -> None:
    generic = write(
        tmp_path,
        "dst.json",
        json.dumps([{"author": a, "timestamp": t, "text": x} for a, t, x in DST_MESSAGES]),
    )
    telegram = write(
        tmp_path,
        "result.json",
        json.dumps(
            {
                "name": "Night shift",
                "type": "private_group",
                "id": 77,
                "messages": [
                    {"id": n, "type": "message", "date": t, "from": a, "text": x}
                    for n, (a, t, x) in enumerate(DST_MESSAGES, 1)
                ],
            }
        ),
    )
    report = ingest_paths("chat", [generic, telegram], vault, tz="Europe/Berlin")
    assert report.messages_added == 8
    for folder in ("sources/chat/chat/dst", "sources/chat/telegram/night-shift"):
        assert [at for _, at in _at(vault, folder)] == DST_UTC
        assert [author for author, _ in _at(vault, folder)] == ["Alice", "Bob", "Alice", "Bob"]
    before = snapshot_files(vault)
    assert ingest_paths("chat", [generic, telegram], vault, tz="Europe/Berlin").messages_added == 0
    assert snapshot_files(vault) == before


def _whatsapp(tmp_path: Path, folder: str, lines: list[str]) -> Path:
    return write(tmp_path, f"{folder}/WhatsApp Chat with Dinner.txt", "\n".join(lines) + "\n")


def test_a_whatsapp_edit_keeps_the_text_before_it_and_the_message_id(tmp_path: Path, vault: Path) -> None:
    first = _whatsapp(tmp_path, "march", ["14/03/2024, 09:00 - Alice: Dinner at 7?", "14/03/2024, 09:01 - Bob: Sure"])
    edited = _whatsapp(
        tmp_path,
        "april",
        [
            "14/03/2024, 09:00 - Alice: Dinner at 8? <This message was edited>",
            "14/03/2024, 09:01 - Bob: Sure",
            "14/03/2024, 09:05 - Alice: see you",
        ],
    )
    again = _whatsapp(
        tmp_path,
        "may",
        [
            "14/03/2024, 09:00 - Alice: Dinner at 9! <This message was edited>",
            "14/03/2024, 09:01 - Bob: Sure",
            "14/03/2024, 09:05 - Alice: see you",
        ],
    )
    folder = "sources/chat/whatsapp/dinner"
    ingest_paths("chat", [first], vault)
    (dinner_id, _), (sure_id, _) = _leaves(vault, folder)
    report = ingest_paths("chat", [edited], vault)
    assert report.messages_added == 1 and report.messages_edited == 1
    assert _leaves(vault, folder)[0] == (dinner_id, "Dinner at 8?\n\n[edited, the text before:]\n> Dinner at 7?")
    settled = snapshot_files(vault)
    for export in (edited, first):  # the same export again, an older one: nothing changes
        assert ingest_paths("chat", [export], vault).messages_added == 0
        assert snapshot_files(vault) == settled
    assert ingest_paths("chat", [again], vault).messages_edited == 1
    leaves = _leaves(vault, folder)
    assert [message_id for message_id, _ in leaves[:2]] == [dinner_id, sure_id] and len(leaves) == 3
    assert leaves[0][1] == (
        "Dinner at 9!\n\n[edited, the text before:]\n> Dinner at 8?\n>\n> [edited, the text before:]\n> > Dinner at 7?"
    )
    settled = snapshot_files(vault)
    for export in (edited, first, again):
        assert ingest_paths("chat", [export], vault).messages_added == 0
        assert snapshot_files(vault) == settled


@pytest.mark.parametrize("together", [False, True])
def test_a_whatsapp_edit_marked_in_an_unknown_language_adding_to_the_last_message_is_no_cut(
    tmp_path: Path, vault: Path, together: bool
) -> None:
    """An edit that adds to the chat's last message, marked in a language vaultmind does not know
    (`<Viestiä on muokattu>`, Finnish): the new text starts with the old one, but a copy cut
    short does not end in a mark. It is kept as the message's edit — its new text, the one
    before quoted below it — not said to be a cut; either export ingested again is known."""
    first = _whatsapp(tmp_path, "march", ["14/03/2024, 09:00 - Bob: Sure", "14/03/2024, 09:05 - Alice: Dinner at 7"])
    edited = _whatsapp(
        tmp_path, "april", ["14/03/2024, 09:00 - Bob: Sure", "14/03/2024, 09:05 - Alice: Dinner at 7 or 8 <Viestiä on muokattu>"]
    )
    folder = "sources/chat/whatsapp/dinner"
    if together:
        report = ingest_paths("chat", [first, edited], vault)
    else:
        ingest_paths("chat", [first], vault)
        report = ingest_paths("chat", [edited], vault)
    assert not [w for w in report.warnings if "cut short" in w]
    assert [text for _, text in _leaves(vault, folder)] == [
        "Sure",
        "Dinner at 7 or 8 <Viestiä on muokattu>\n\n[edited, the text before:]\n> Dinner at 7",
    ]
    settled = snapshot_files(vault)
    for export in (first, edited):
        again = ingest_paths("chat", [export], vault)
        assert (again.messages_added, again.warnings) == (0, [])
        assert snapshot_files(vault) == settled


@pytest.mark.parametrize("together", [False, True])
def test_a_whatsapp_copy_cut_inside_its_last_message_reads_alike_in_one_ingest_or_two(
    tmp_path: Path, vault: Path, together: bool
) -> None:
    """A copy cut off inside the chat's last message (inside what looks like an edit's mark),
    and the whole export: the cut one is completed, whether the two come in one ingest or one
    after the other. The texts are compared as a note keeps them (no control characters) either
    way: in one ingest the whole text was compared as the export had it, its bells moving the
    mark past the cut, and the cut was read as an edit, the text before quoted below it."""
    bells = "\x07" * 40  # (a stray control character an export may hold, that no note keeps)
    cut = _whatsapp(tmp_path, "copy", ["14/03/2024, 09:00 - Bob: Sure", f"14/03/2024, 09:05 - Alice: D{bells}inner <Viestiä on muok"])
    whole = _whatsapp(tmp_path, "whole", ["14/03/2024, 09:00 - Bob: Sure", f"14/03/2024, 09:05 - Alice: D{bells}inner <Viestiä on muokattu>"])
    if together:
        ingest_paths("chat", [cut, whole], vault)
    else:
        ingest_paths("chat", [cut], vault)
        ingest_paths("chat", [whole], vault)
    assert [text for _, text in _leaves(vault, "sources/chat/whatsapp/dinner")] == ["Sure", "Dinner <Viestiä on muokattu>"]


MBOX_HEAD = (
    "From alice@example.com Mon Mar  4 09:00:00 2024\n"
    "From: Alice <alice@example.com>\nTo: bob@example.com\nSubject: Plan\n"
    "Date: Mon, 4 Mar 2024 09:00:00 +0000\nMessage-ID: <m1@example.com>\n\nFirst message, whole.\n\n"
)
MULTIPART = (
    "From alice@example.com Mon Mar  4 11:00:00 2024\n"
    "From: Alice <alice@example.com>\nTo: bob@example.com\nSubject: Photos\n"
    "Date: Mon, 4 Mar 2024 11:00:00 +0000\nMessage-ID: <m3@example.com>\nMIME-Version: 1.0\n"
    'Content-Type: multipart/mixed; boundary="BB"\n\n--BB\nContent-Type: text/plain\n\nHere are the photos.\n'
    '--BB\nContent-Type: image/png; name="a.png"\nContent-Transfer-Encoding: base64\n\niVBORw0KGgoAAAANSUhEUgAAAAEAAAAB\n'
)


def test_an_mbox_cut_in_its_last_body_is_read_as_far_as_it_goes_with_a_warning(tmp_path: Path, vault: Path) -> None:
    """A multipart message whose closing boundary never comes is said to be cut; a plain one
    ending without a line break is not (whole mboxes so end: its words cannot tell)."""
    cut = write(
        tmp_path,
        "cut.mbox",
        MBOX_HEAD + "From bob@example.com Mon Mar  4 10:00:00 2024\nFrom: Bob <bob@example.com>\n"
        "Subject: Re: Plan\nDate: Mon, 4 Mar 2024 10:00:00 +0000\nMessage-ID: <m2@example.com>\n"
        "In-Reply-To: <m1@example.com>\n\nThe budget is forty thou",
    )
    unterminated = write(tmp_path, "photos.mbox", MBOX_HEAD + MULTIPART)
    whole = write(tmp_path, "whole.mbox", MBOX_HEAD + MULTIPART + "--BB--\n\n")
    report = ingest_paths("email", [cut, unterminated, whole], vault)
    assert report.messages_added == 3
    texts = [text for _, text in _leaves(vault, "sources/email")]
    assert any(text.startswith("The budget is forty thou") for text in texts)
    said = [w for w in report.warnings if "ends inside its body" in w]
    assert len(said) == 1
    assert said[0].startswith(f"{unterminated} message 2 <m3@example.com>:")


def test_an_mbox_that_simply_ends_without_a_last_line_break_is_not_said_to_be_cut(tmp_path: Path, vault: Path) -> None:
    box = write(tmp_path, "box.mbox", MBOX_HEAD.rstrip("\n"))
    report = ingest_paths("email", [box], vault)
    assert report.messages_added == 1 and not report.warnings
    assert [text for _, text in _leaves(vault, "sources/email")] == ["First message, whole."]


REPLY = (
    "From bob@example.com Mon Mar  4 10:00:00 2024\nFrom: Bob <bob@example.com>\n"
    "Subject: Re: Plan\nDate: Mon, 4 Mar 2024 10:00:00 +0000\nMessage-ID: <m2@example.com>\n"
    "In-Reply-To: <m1@example.com>\n\nThe budget is forty thousand.\nSee you Monday.\n"
)


@pytest.mark.parametrize("together", [False, True])
def test_an_email_cut_short_is_completed_by_a_whole_copy(tmp_path: Path, vault: Path, together: bool) -> None:
    """An mbox cut off inside its last message, then a whole copy (later, or in the same
    ingest, whichever mailbox sorts first): the message keeps its Message-ID and takes the whole
    text, written once; either file ingested again changes nothing and says nothing."""
    cut = write(tmp_path, "a/cut.mbox", MBOX_HEAD + REPLY[: REPLY.index("thousand") + 4])
    whole = write(tmp_path, "b/whole.mbox", MBOX_HEAD + REPLY)
    if together:
        report = ingest_paths("email", [whole, cut], vault)
        assert report.messages_added == 2 and not report.warnings
    else:
        ingest_paths("email", [cut], vault)
        report = ingest_paths("email", [whole], vault)
        assert report.messages_added == 0
        assert [w for w in report.warnings if "'m2@example.com' was cut short in an earlier export" in w]
        assert not [w for w in report.warnings if "differs" in w]
    assert _leaves(vault, "sources/email") == [
        ("m1@example.com", "First message, whole."),
        ("m2@example.com", "The budget is forty thousand.\nSee you Monday."),
    ]
    settled = snapshot_files(vault)
    for export in (cut, whole):
        again = ingest_paths("email", [export], vault)
        assert (again.messages_added, again.warnings) == (0, [])
        assert snapshot_files(vault) == settled


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB\n" * 40
WITH_FILES = (
    "From alice@example.com Mon Mar  4 11:00:00 2024\n"
    "From: Alice <alice@example.com>\nTo: bob@example.com\nSubject: Photos\n"
    "Date: Mon, 4 Mar 2024 11:00:00 +0000\nMessage-ID: <m3@example.com>\nMIME-Version: 1.0\n"
    'Content-Type: multipart/mixed; boundary="BB"\n\n--BB\nContent-Type: text/plain\n\nHere are the photos.\n'
    '--BB\nContent-Type: image/png; name="a.png"\nContent-Transfer-Encoding: base64\n\n' + PNG
    + '--BB\nContent-Type: application/pdf; name="b.pdf"\nContent-Transfer-Encoding: base64\n\n' + PNG + "--BB--\n"
)


@pytest.mark.parametrize("together", [False, True])
@pytest.mark.parametrize("inside", ["a.png", "b.pdf"])
def test_an_email_cut_inside_an_attachment_is_completed_by_a_whole_copy(
    tmp_path: Path, vault: Path, together: bool, inside: str
) -> None:
    """An mbox cut off inside an attachment of its last message (its text whole, the file it was
    cut in listed smaller, those after it not at all), then a whole copy: the message takes the
    whole copy's attachments line, written once; either file ingested again changes nothing."""
    cut_at = WITH_FILES.index(PNG, WITH_FILES.index(f'name="{inside}"')) + len(PNG) // 2
    cut = write(tmp_path, "a/cut.mbox", MBOX_HEAD + WITH_FILES[:cut_at])
    whole = write(tmp_path, "b/whole.mbox", MBOX_HEAD + WITH_FILES)
    if together:
        report = ingest_paths("email", [whole, cut], vault)
        assert report.messages_added == 2
        assert not [w for w in report.warnings if "different text" in w]
    else:
        ingest_paths("email", [cut], vault)
        report = ingest_paths("email", [whole], vault)
        assert report.messages_added == 0
        assert [w for w in report.warnings if "'m3@example.com' was cut short in an earlier export" in w]
        assert not [w for w in report.warnings if "differs" in w]
    assert [text for message_id, text in _leaves(vault, "sources/email") if message_id == "m3@example.com"] == [
        "Here are the photos.\n\nAttachments: a.png (image/png, 960 B), b.pdf (application/pdf, 960 B)"
    ]
    settled = snapshot_files(vault)
    for export in (cut, whole):
        again = ingest_paths("email", [export], vault)
        assert again.messages_added == 0 and not [w for w in again.warnings if "differs" in w]
        assert snapshot_files(vault) == settled


WITH_FORWARDS = (
    "From alice@example.com Mon Mar  4 11:00:00 2024\n"
    "From: Alice <alice@example.com>\nTo: bob@example.com\nSubject: Two notes\n"
    "Date: Mon, 4 Mar 2024 11:00:00 +0000\nMessage-ID: <m4@example.com>\nMIME-Version: 1.0\n"
    'Content-Type: multipart/mixed; boundary="BB"\n\n--BB\nContent-Type: text/plain\n\nThe two notes below.\n'
    "--BB\nContent-Type: message/rfc822\n\nFrom: Carol <carol@example.com>\nSubject: Venue\n\n"
    "The venue is booked for Friday evening, the whole upstairs room.\n"
    "--BB\nContent-Type: message/rfc822\n\nFrom: Dan <dan@example.com>\nSubject: Menu\n\nThe menu is fish.\n--BB--\n"
)


@pytest.mark.parametrize("together", [False, True])
@pytest.mark.parametrize("at", ["upstairs", "--BB\nContent-Type: message/rfc822\n\nFrom: Dan"], ids=["in-a-line", "at-its-end"])
def test_an_email_cut_inside_a_forwarded_message_is_completed_by_a_whole_copy(
    tmp_path: Path, vault: Path, together: bool, at: str
) -> None:
    """An mbox cut off inside the first of two messages its last message forwards as
    attachments (inside a line, or at its end), then a whole copy: the whole one goes on with
    the second forwarded message (a part lost below the cut, as its `Attachments:` line is), so
    the cut copy is completed — in one ingest, the whole copy is kept (one cut at the end of
    the first had been kept, of the first mailbox by name, and said to differ)."""
    cut = write(tmp_path, "a/cut.mbox", MBOX_HEAD + WITH_FORWARDS[: WITH_FORWARDS.index(at)])
    whole = write(tmp_path, "b/whole.mbox", MBOX_HEAD + WITH_FORWARDS)
    if together:
        report = ingest_paths("email", [whole, cut], vault)
        assert report.messages_added == 2 and not [w for w in report.warnings if "different text" in w]
    else:
        ingest_paths("email", [cut], vault)
        report = ingest_paths("email", [whole], vault)
        assert [w for w in report.warnings if "'m4@example.com' was cut short in an earlier export" in w]
        assert not [w for w in report.warnings if "differs" in w]
    [text] = [text for message_id, text in _leaves(vault, "sources/email") if message_id == "m4@example.com"]
    assert "the whole upstairs room." in text and "The menu is fish." in text
    settled = snapshot_files(vault)
    for export in (cut, whole):
        again = ingest_paths("email", [export], vault)
        assert again.messages_added == 0 and not [w for w in again.warnings if "differs" in w]
        assert snapshot_files(vault) == settled


def test_only_a_copy_cut_inside_an_attachment_is_an_attachment_cut_short() -> None:
    whole = "Hi.\n\nAttachments: a.png (image/png, 3 KB), b.pdf (application/pdf, 1.2 MB)"
    assert mail_cut_short("Hi.\n\nAttachments: a.png (image/png, 2 KB)", whole)
    assert mail_cut_short("Hi.\n\nAttachments: a.png (image/png, 3 KB), b.pdf (application/pdf, 800 KB)", whole)
    assert mail_cut_short("Hi.\n\nAttachments: a.png (image/png, 3 KB), b.pdf (application/pdf, 0 B)", whole)
    assert not mail_cut_short("Hi.\n\nAttachments: a.png (image/png, 4 KB)", whole)  # larger: another file
    assert not mail_cut_short("Hi.\n\nAttachments: c.png (image/png, 2 KB)", whole)  # another name
    assert not mail_cut_short("Hello.\n\nAttachments: a.png (image/png, 2 KB)", whole)  # another text
    assert not mail_cut_short(whole, whole)
    assert not mail_cut_short("Hi.\n\nAttachments: a.png (image/png, 2 KB)", "Hi.\n\nSee you.\n\n" + whole[5:])


DISCLAIMER = "\nThis email and any attachments are confidential and intended solely for the addressee.\n"


@pytest.mark.parametrize("together", [False, True])
def test_an_email_copy_extended_by_a_paragraph_is_no_completed_cut(tmp_path: Path, vault: Path, together: bool) -> None:
    """The Sent copy of a message, then the copy its recipient got, a disclaimer paragraph added
    by the sender's mail server (same Message-ID): the first is no copy cut short, so the note
    keeps its text and says the other copy differs (it had taken the longer text, "cut short in
    an earlier export"); in one ingest, the copy of the first mailbox by name is kept, as of any
    two that differ, and the other said. A copy cut inside a line, or after one, is still
    completed (`test_an_email_cut_short_is_completed_by_a_whole_copy`)."""
    sent = write(tmp_path, "a/sent.mbox", MBOX_HEAD + REPLY)
    received = write(tmp_path, "b/inbox.mbox", MBOX_HEAD + REPLY + DISCLAIMER)
    if together:
        report = ingest_paths("email", [sent, received], vault)
        assert [w for w in report.warnings if "<m2@example.com> also read with a different text" in w]
    else:
        ingest_paths("email", [sent], vault)
        report = ingest_paths("email", [received], vault)
        assert [w for w in report.warnings if "'m2@example.com' differs from the note" in w]
    assert not [w for w in report.warnings if "cut short" in w]
    kept = "The budget is forty thousand.\nSee you Monday." + ("\n" + DISCLAIMER.rstrip() if together else "")
    assert _leaves(vault, "sources/email")[1] == ("m2@example.com", kept)


def _write_bytes(tmp_path: Path, rel: str, data: bytes) -> Path:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


WHOLE = (
    "04/03/2024, 09:00 - Alice: Dinner at 7?\n"
    "04/03/2024, 09:01 - Bob: Sure, I will bring the wine 🍷\nAnd the cake.\n"
    "04/03/2024, 09:30 - Alice: great\n"
)


@pytest.mark.parametrize(
    ("where", "end"),
    [("text", b"wine"[:2]), ("character", "🍷".encode()[:2]), ("date", b"09:3")],
)
def test_an_export_cut_in_its_last_message_is_completed_by_the_whole_one(
    tmp_path: Path, vault: Path, where: str, end: bytes
) -> None:
    """A copy cut off inside its last message (its text, a character, its date): the whole
    export later completes that message, under the id first written, rather than writing it
    again; ingesting either file again changes nothing."""
    data = WHOLE.encode("utf-8")
    whole = _write_bytes(tmp_path, "whole/WhatsApp Chat with Dinner.txt", data)
    cut = _write_bytes(tmp_path, "cut/WhatsApp Chat with Dinner.txt", data[: data.index(end) + len(end)])
    folder = "sources/chat/whatsapp/dinner"
    first = ingest_paths("chat", [cut], vault)
    if where == "date":
        assert any("ends inside a message's first line" in w and "'04/03/2024, 09:3'" in w for w in first.warnings)
    [(alice, _), (bob, cut_text)] = _leaves(vault, folder)
    assert "Sure, I will bring the wine 🍷\nAnd the cake.".startswith(cut_text)
    report = ingest_paths("chat", [whole], vault)
    assert report.messages_added == 1  # "great" alone
    leaves = _leaves(vault, folder)
    assert [message_id for message_id, _ in leaves[:2]] == [alice, bob]
    assert [text for _, text in leaves] == ["Dinner at 7?", "Sure, I will bring the wine 🍷\nAnd the cake.", "great"]
    settled = snapshot_files(vault)
    for export in (whole, cut):
        again = ingest_paths("chat", [export], vault)
        assert again.messages_added == 0 and not [w for w in again.warnings if "differs" in w]
        assert snapshot_files(vault) == settled


@pytest.mark.parametrize("order", ["cut first", "whole first"])
def test_a_cut_export_and_the_whole_one_in_one_ingest_are_one_message(tmp_path: Path, vault: Path, order: str) -> None:
    """A copy cut off inside its last message and the whole export, given to one ingest: the
    cut message is the whole one (it was written twice, its cut text and its whole text), as
    when ingested one after the other — the same id and text; either file again changes
    nothing."""
    data = WHOLE.encode("utf-8")
    whole = _write_bytes(tmp_path, "whole/WhatsApp Chat with Dinner.txt", data)
    cut = _write_bytes(tmp_path, "cut/WhatsApp Chat with Dinner.txt", data[: data.index(b"wine") + 2])
    apart = tmp_path / "apart"
    apart.mkdir()
    ingest_paths("chat", [cut], apart)
    ingest_paths("chat", [whole], apart)
    report = ingest_paths("chat", [cut, whole] if order == "cut first" else [whole, cut], vault)
    assert report.messages_added == 3
    folder = "sources/chat/whatsapp/dinner"
    assert _leaves(vault, folder) == _leaves(apart, folder)
    settled = snapshot_files(vault)
    for export in (whole, cut):
        again = ingest_paths("chat", [export], vault)
        assert again.messages_added == 0 and not [w for w in again.warnings if "differs" in w]
        assert snapshot_files(vault) == settled


@pytest.mark.parametrize(
    ("head", "last"),
    [
        ("04/03/2024, 09:30 - Bob: Opening hours:", "24/7"),
        ("04.03.24, 09:30 - Bob: Summe:", "12.50"),
        ("04.03.24, 09:30 - Bob: Termin verschoben auf", "24.12."),
        ("04/03/2024, 09:30 - Bob: Version", "1.2.3"),
        ("[2024-03-04, 09:30] Bob: Deadline", "2024-04"),
    ],
)
def test_a_last_line_that_reads_as_a_date_begun_is_kept_in_a_file_without_a_last_line_break(
    tmp_path: Path, vault: Path, head: str, last: str
) -> None:
    """An export that simply ends without a line break, its last message's last line "24/7" or
    "12.50": no date cut short (its year is not begun, or not the year of the line above), so
    the line stays the message's."""
    path = write(tmp_path, "WhatsApp Chat with Shop.txt", f"{head}\n{last}")
    report = ingest_paths("chat", [path], vault, fmt="signal" if head.startswith("[2024") else "auto")
    assert not [w for w in report.warnings if "ends inside a message's first line" in w]
    assert [text for _, text in _leaves(vault, "sources/chat")][-1].endswith(f"\n{last}")


def test_a_signal_export_cut_in_its_last_message_is_completed(tmp_path: Path, vault: Path) -> None:
    cut = write(tmp_path, "cut/signal-trip.txt", "[2024-03-04, 09:00] Jane: Train at 8?\n[2024-03-04, 09:01] John: Yes, plat")
    whole = write(tmp_path, "whole/signal-trip.txt", "[2024-03-04, 09:00] Jane: Train at 8?\n[2024-03-04, 09:01] John: Yes, platform 4\n")
    ingest_paths("chat", [cut], vault, fmt="signal")
    ids = [message_id for message_id, _ in _leaves(vault, "sources/chat/signal/signal-trip")]
    assert ingest_paths("chat", [whole], vault, fmt="signal").messages_added == 0
    assert _leaves(vault, "sources/chat/signal/signal-trip") == [(ids[0], "Train at 8?"), (ids[1], "Yes, platform 4")]


def test_a_generic_file_of_two_conversations_reads_each_ones_repeated_hour_by_its_own_order(
    tmp_path: Path, vault: Path
) -> None:
    """Conversations listed one after the other: the second one's first message, at 02:10 of
    the repeated hour, is not read as the second pass for coming after the first one's 02:50."""
    messages = [
        {"author": "Alice", "timestamp": "2024-10-27T02:50:00", "text": "night", "conversation": "first"},
        {"author": "Bob", "timestamp": "2024-10-27T02:10:00", "text": "early", "conversation": "second"},
        {"author": "Bob", "timestamp": "2024-10-27T02:20:00", "text": "still early", "conversation": "second"},
    ]
    path = write(tmp_path, "two.json", json.dumps(messages))
    ingest_paths("chat", [path], vault, tz="Europe/Berlin")
    assert [at for _, at in _at(vault, "sources/chat/chat/second")] == ["2024-10-27T00:10:00Z", "2024-10-27T00:20:00Z"]


def test_an_eml_cut_in_a_multipart_body_says_so_and_one_without_a_last_line_break_does_not(
    tmp_path: Path, vault: Path
) -> None:
    part = MULTIPART.split("\n", 1)[1].replace("Content-Type: multipart/mixed;", "Content-Type: multipart/mixed;\n\t")
    cut = write(tmp_path, "mail/cut.eml", part)
    whole = write(tmp_path, "mail/whole.eml", part.replace("<m3@", "<m4@") + "--BB--")  # no line break at its end
    report = ingest_paths("email", [cut, whole], vault)
    assert report.messages_added == 2
    assert [w.split(":")[0] for w in report.warnings if "ends inside its body" in w] == [f"{cut} <m3@example.com>"]


def test_a_whatsapp_chat_whose_name_changes_only_in_case_is_the_same_chat(tmp_path: Path, vault: Path) -> None:
    """A contact renamed "alice" → "Alice": the next export's messages join the chat's notes
    (before, every one was written again, to a `.2.md` note beside them). Two chats of such
    names that share no message stay two."""
    before = write(tmp_path, "march/WhatsApp Chat with alice.txt", "04/03/2024, 09:00 - Alice: hi\n04/03/2024, 09:01 - Bob: hey\n")
    after = write(
        tmp_path,
        "april/WhatsApp Chat with Alice.txt",
        "04/03/2024, 09:00 - Alice: hi\n04/03/2024, 09:01 - Bob: hey\n04/03/2024, 09:02 - Bob: new\n",
    )
    ingest_paths("chat", [before], vault)
    report = ingest_paths("chat", [after], vault)
    assert (report.messages_added, report.messages_known) == (1, 2)
    assert report.written == ["sources/chat/whatsapp/alice/2024-03-04.md"]
    assert [text for _, text in _leaves(vault, "sources/chat/whatsapp/alice")] == ["hi", "hey", "new"]
    other = write(tmp_path, "may/WhatsApp Chat with ALICE.txt", "04/03/2024, 09:00 - Carol: another chat\n")
    assert ingest_paths("chat", [other], vault).written == ["sources/chat/whatsapp/alice/2024-03-04.2.md"]


def test_two_whatsapp_chats_named_alike_but_for_case_that_share_a_message_stay_two(tmp_path: Path, vault: Path) -> None:
    """Chats with "alice" and with "Alice" (two contacts), each holding the "ok" you sent both in
    one minute: the one shared message does not make them one chat, and the second's messages
    are not written into the first's notes."""
    first = write(
        tmp_path,
        "a/WhatsApp Chat with alice.txt",
        "12/03/2024, 10:00 - alice: party tonight?\n12/03/2024, 14:30 - You: ok\n12/03/2024, 16:00 - alice: cool\n",
    )
    second = write(
        tmp_path,
        "b/WhatsApp Chat with Alice.txt",
        "12/03/2024, 14:22 - Alice: lunch?\n12/03/2024, 14:30 - You: ok\n12/03/2024, 15:00 - Alice: see you\n",
    )
    ingest_paths("chat", [first], vault)
    report = ingest_paths("chat", [second], vault)
    assert report.messages_added == 3
    by_note = {note.path: [leaf.text for leaf in note.leaves] for note in _notes(vault, "sources/chat/whatsapp/alice")}
    assert by_note == {
        "sources/chat/whatsapp/alice/2024-03-12.md": ["party tonight?", "ok", "cool"],
        "sources/chat/whatsapp/alice/2024-03-12.2.md": ["lunch?", "ok", "see you"],
    }


@pytest.mark.parametrize(
    "content_type",
    [
        "multipart/alternative; boundary=simple-boundary \n",  # unquoted, white space after it
        'multipart/alternative;\n boundary="simple-boundary"; charset=utf-8\n',
        'text/plain; boundary="NOT-USED"\n',  # no multipart: a stray parameter
    ],
)
def test_a_whole_email_is_not_said_to_be_cut_for_how_its_boundary_is_written(
    tmp_path: Path, vault: Path, content_type: str
) -> None:
    body = "--simple-boundary\nContent-Type: text/plain\n\nSee you at noon.\n--simple-boundary--\n"
    if content_type.startswith("text/plain"):
        body = "See you at noon.\n"
    head = "From: a@example.com\nTo: b@example.com\nSubject: Lunch\nDate: Mon, 4 Mar 2024 10:00:00 +0000\n"
    head += "Message-ID: <l1@example.com>\nMIME-Version: 1.0\nContent-Type: " + content_type
    eml = write(tmp_path, "mail/lunch.eml", head + "\n" + body)
    mbox = write(tmp_path, "box.mbox", "From a@example.com Mon Mar  4 10:00:00 2024\n" + head.replace("<l1@", "<l2@") + "\n" + body + "\n")
    report = ingest_paths("email", [eml, mbox], vault)
    assert report.messages_added == 2
    assert not [w for w in report.warnings if "ends inside its body" in w]
    assert all("See you at noon." in text for _, text in _leaves(vault, "sources/email"))


def test_a_message_deleted_since_is_not_completed_by_a_later_one_it_starts(tmp_path: Path, vault: Path) -> None:
    """A whole export whose last message, "ok", is deleted for everyone before the next export,
    which holds "This message was deleted" and "ok see you" sent in the same minute: "ok" is
    no message cut short, and keeps its text beside the two new ones."""
    head = "13/03/2024, 09:05 - Alice: lunch today?\n13/03/2024, 09:07 - Bob: sure\n"
    before = write(tmp_path, "a/WhatsApp Chat with Bob.txt", head + "13/03/2024, 09:30 - Alice: ok\n")
    after = write(
        tmp_path,
        "b/WhatsApp Chat with Bob.txt",
        head + "13/03/2024, 09:30 - Alice: This message was deleted\n13/03/2024, 09:30 - Alice: ok see you\n",
    )
    ingest_paths("chat", [before], vault)
    report = ingest_paths("chat", [after], vault)
    assert not [w for w in report.warnings if "cut short" in w]
    texts = sorted(text for _, text in _leaves(vault, "sources/chat/whatsapp/bob"))
    assert texts == sorted(["lunch today?", "sure", "ok", "This message was deleted", "ok see you"])


@pytest.mark.parametrize("order", ["newest first", "by author"])
def test_a_generic_conversation_not_in_time_order_reads_the_repeated_hour_as_its_first_pass(
    tmp_path: Path, vault: Path, order: str
) -> None:
    """A file listing a conversation newest first (as many APIs return it) or sorted by author:
    its order says nothing of which pass of the repeated hour a time is, so "night" at 02:50 is
    the first pass (00:50 UTC), as before, not moved an hour later."""
    messages = [
        {"author": "Bob", "timestamp": "2024-10-27T01:20:00", "text": "still up?"},
        {"author": "Alice", "timestamp": "2024-10-27T01:50:00", "text": "evening"},
        {"author": "Bob", "timestamp": "2024-10-27T02:10:00", "text": "early"},
        {"author": "Alice", "timestamp": "2024-10-27T02:50:00", "text": "night"},
        {"author": "Bob", "timestamp": "2024-10-27T03:10:00", "text": "after"},
    ]
    listed = messages[::-1] if order == "newest first" else sorted(messages, key=lambda m: m["author"])
    path = write(tmp_path, "late.json", json.dumps(listed))
    ingest_paths("chat", [path], vault, tz="Europe/Berlin")
    assert sorted(_at(vault, "sources/chat/chat/late"), key=lambda a: a[1]) == [
        ("Bob", "2024-10-26T23:20:00Z"),
        ("Alice", "2024-10-26T23:50:00Z"),
        ("Bob", "2024-10-27T00:10:00Z"),
        ("Alice", "2024-10-27T00:50:00Z"),
        ("Bob", "2024-10-27T02:10:00Z"),
    ]


def test_a_windows_1252_export_whose_one_accent_ends_it_is_refused_not_cut(tmp_path: Path, vault: Path) -> None:
    """"café" in Windows-1252 at the very end reads as a UTF-8 character cut short: a lone byte
    after ASCII text is no UTF-8 copy cut off, and the file is refused naming the line (as
    before) rather than read with its "é" silently dropped."""
    path = _write_bytes(
        tmp_path, "WhatsApp Chat with Bob.txt", b"12/03/2024, 14:22 - Alice: hi\n12/03/2024, 14:23 - Bob: meet at the caf\xe9"
    )
    with pytest.raises(IngestError, match="line 2: not UTF-8 text"):
        ingest_paths("chat", [path], vault)


def test_a_telegram_chat_not_in_time_order_reads_the_repeated_hour_as_its_first_pass(tmp_path: Path, vault: Path) -> None:
    """A Telegram export without `date_unixtime` listed newest first: its order says nothing of
    the repeated autumn hour, so 02:10 is its first pass (it was read as the second, an hour
    late, for coming after 02:50); `date_unixtime`, when given, settles it."""
    times = ["2024-10-27T03:30:00", "2024-10-27T02:50:00", "2024-10-27T02:10:00"]
    chat = {
        "name": "Night",
        "type": "personal_chat",
        "id": 7,
        "messages": [{"id": n, "type": "message", "date": at, "from": "Ann", "text": f"m{n}"} for n, at in enumerate(times)],
    }
    path = write(tmp_path, "result.json", json.dumps(chat))
    ingest_paths("chat", [path], vault, fmt="telegram", tz="Europe/Berlin")
    assert sorted(at for _, at in _at(vault, "sources/chat/telegram")) == [
        "2024-10-27T00:10:00Z",
        "2024-10-27T00:50:00Z",
        "2024-10-27T02:30:00Z",
    ]


def test_one_telegram_message_far_out_of_order_leaves_the_files_order_to_read_the_repeated_hour(
    tmp_path: Path, vault: Path
) -> None:
    """A Telegram export without `date_unixtime`, in time order but for one message dated a
    month back (its date wrong, or sent long ago): that message keeps its time, and the file's
    order still says that 02:10 after 02:50 is the repeated hour's second pass (one such
    message had made the whole file read as unordered, each time its first pass)."""
    times = ["2024-10-27T01:30:00", "2024-09-27T12:00:00", "2024-10-27T02:50:00", "2024-10-27T02:10:00", "2024-10-27T03:30:00"]
    chat = {
        "name": "Night",
        "type": "personal_chat",
        "id": 7,
        "messages": [{"id": n, "type": "message", "date": at, "from": "Ann", "text": f"m{n}"} for n, at in enumerate(times)],
    }
    path = write(tmp_path, "result.json", json.dumps(chat))
    ingest_paths("chat", [path], vault, fmt="telegram", tz="Europe/Berlin")
    assert sorted(at for _, at in _at(vault, "sources/chat/telegram")) == [
        "2024-09-27T10:00:00Z",  # (summer time)
        "2024-10-26T23:30:00Z",
        "2024-10-27T00:50:00Z",
        "2024-10-27T01:10:00Z",  # the second pass: after 02:50 in the file
        "2024-10-27T02:30:00Z",
    ]


def test_one_message_dated_on_two_days_by_two_exports_of_one_ingest_is_written_once(tmp_path: Path, vault: Path) -> None:
    """Two exports of one conversation in one ingest, one dating a message an hour later, across
    midnight: it is written once, to the day it came first to — as when they are ingested one
    after the other."""
    def export(name: str, at: str) -> Path:
        messages = [{"id": "m1", "author": "Alice", "timestamp": at, "text": "kumquat crates at dawn"}]
        return write(tmp_path, name, json.dumps({"platform": "chat", "conversation": "team", "messages": messages}))

    first, second = export("a.json", "2024-03-04T23:30:00Z"), export("b.json", "2024-03-05T00:30:00Z")
    together = ingest_paths("chat", [first, second], vault, fmt="generic")
    assert together.written == ["sources/chat/chat/team/2024-03-04.md"]
    assert (together.messages_added, together.messages_known) == (1, 1)
    apart = tmp_path / "apart"
    ingest_paths("chat", [first], apart, fmt="generic")
    again = ingest_paths("chat", [second], apart, fmt="generic")
    assert again.written == [] and snapshot_files(apart) == snapshot_files(vault)
