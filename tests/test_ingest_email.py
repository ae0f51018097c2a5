from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.conftest import EVALDATA, snapshot_files, write
from vaultmind.errors import IngestError
from vaultmind.ingest.detect import ingest_paths
from vaultmind.ingest.email import normalize_subject, parse_email_paths, parse_email_paths_with_report
from vaultmind.ingest.held import message_ids
from vaultmind.ingest.model import SourceBatch
from vaultmind.ingest.writer import write_batches
from vaultmind.memory import Memory


def message(
    mid: str | None,
    sender: str,
    date: str | None,
    subject: str,
    body: str,
    *,
    reply_to: str | None = None,
    refs: str | None = None,
) -> str:
    lines = [f"From: {sender}", "To: team@example.com", f"Subject: {subject}"]
    if date is not None:
        lines.append(f"Date: {date}")
    if mid is not None:
        lines.append(f"Message-ID: <{mid}>")
    if reply_to:
        lines.append(f"In-Reply-To: <{reply_to}>")
    if refs:
        lines.append(f"References: {refs}")
    lines += ["MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", "", body]
    return "\n".join(lines) + "\n"


M1 = message(
    "m1@example.com",
    "Alice Chen <alice@example.com>",
    "Mon, 11 Mar 2024 09:00:00 +0000",
    "Q3 budget",
    "Hi Bob,\n\nthe numbers are attached.\n\nAlice",
)
M2 = message(
    "m2@example.com",
    "Bob Stone <bob@example.com>",
    "Mon, 11 Mar 2024 09:30:00 +0000",
    "Re: Q3 budget",
    "Thanks! Looks fine.\n\nOn Mon, Mar 11, 2024 at 9:00 AM, Alice Chen <alice@example.com> wrote:\n"
    "> Hi Bob,\n>\n> the numbers are attached.\n>\n> Alice\n\n-- \nBob Stone\nAcme Corp",
    reply_to="m1@example.com",
    refs="<m1@example.com>",
)
M3 = message(
    "m3@example.com",
    "Alice Chen <alice@example.com>",
    "Tue, 12 Mar 2024 08:00:00 +0000",
    "Re: Re: Q3 budget",
    "Great, sending it on.\n\nSent from my iPhone\n\n"
    "On Mar 11, 2024, at 9:30 AM, Bob Stone <bob@example.com> wrote:\n\n> Thanks! Looks fine.\n> Bob",
    reply_to="m2@example.com",
    refs="<m1@example.com> <m2@example.com>",
)
OTHER = message(
    "o1@example.com",
    "carol@example.com",
    "Wed, 13 Mar 2024 12:00:00 +0100",
    "Offsite",
    "Who is coming?",
)


def write_mbox(path: Path, *messages: str) -> Path:
    parts = []
    for text in messages:
        parts.append("From MAILER-DAEMON Mon Mar 11 09:00:00 2024\n" + text + "\n")
    path.write_text("".join(parts), encoding="utf-8")
    return path


def write_maildir(folder: Path, *messages: tuple[str, str]) -> Path:
    for sub in ("cur", "new", "tmp"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    for name, text in messages:
        (folder / "cur" / name).write_text(text, encoding="utf-8")
    return folder


PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="  # base64


def write_eml(path: Path, raw: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(raw, encoding="utf-8")
    return path


def texts(batch: SourceBatch) -> list[str]:
    return [m.text for m in batch.messages]


def test_thread_across_mbox_and_maildir_with_duplicates(tmp_path: Path) -> None:
    inbox = write_mbox(tmp_path / "inbox.mbox", M1, M3, OTHER)
    sent = write_maildir(
        tmp_path / "sent", ("1710149400.M1P1.host:2,S", M2), ("1710147600.M2P1.host:2,S", M1)
    )  # M1 again: the same message in two exports
    batches, warnings = parse_email_paths_with_report([inbox, sent])
    assert warnings == []
    assert len(batches) == 2
    thread, other = batches
    assert thread.bucket == "thread"
    assert thread.note_name == "2024-03-11-q3-budget"
    assert thread.meta.kind == "email"
    assert thread.meta.source_id == "email:inbox"
    assert thread.meta.scope == "inbox/q3-budget"
    assert thread.meta.title == thread.meta.subject == "Q3 budget"
    assert [m.message_id for m in thread.messages] == ["m1@example.com", "m2@example.com", "m3@example.com"]
    assert [m.author for m in thread.messages] == [
        "Alice Chen <alice@example.com>",
        "Bob Stone <bob@example.com>",
        "Alice Chen <alice@example.com>",
    ]
    assert texts(thread) == [
        "Hi Bob,\n\nthe numbers are attached.\n\nAlice",
        "Thanks! Looks fine.",
        "Great, sending it on.",
    ]
    first = thread.messages[0]
    assert first.source_ref == "mid:m1@example.com"
    assert first.subject == "Q3 budget" and thread.messages[2].subject == "Re: Re: Q3 budget"
    assert first.timestamp == datetime(2024, 3, 11, 9, 0, tzinfo=UTC)
    assert other.note_name == "2024-03-13-offsite" and other.meta.scope == "inbox/offsite"
    assert other.messages[0].timestamp == datetime(2024, 3, 13, 11, 0, tzinfo=UTC)
    # deterministic, whatever the order of the exports
    assert parse_email_paths([sent, inbox])[0].messages == thread.messages
    assert parse_email_paths([inbox, sent]) == batches


def test_folders_of_eml_files_and_accounts(tmp_path: Path) -> None:
    folder = tmp_path / "Work Mail"
    (folder / "2024").mkdir(parents=True)
    (folder / "2024" / "a.eml").write_text(M1, encoding="utf-8")
    (folder / "b.eml").write_text(M2, encoding="utf-8")
    (folder / ".hidden.eml").write_text(OTHER, encoding="utf-8")
    (folder / "notes.pdf").write_bytes(b"%PDF-1.4")
    batches, warnings = parse_email_paths_with_report([folder])
    assert [w.split(": ", 1)[1] for w in warnings] == ["not an email file (.eml, mbox); skipped"]
    assert len(batches) == 1 and len(batches[0].messages) == 2
    assert batches[0].meta.source_id == "email:work-mail"  # the folder given, sub-folders included
    overridden = parse_email_paths([folder], account="Alice Work")
    assert overridden[0].meta.source_id == "email:alice-work"
    assert overridden[0].meta.scope == "alice-work/q3-budget"
    single = parse_email_paths([folder / "2024" / "a.eml"])
    assert single[0].meta.source_id == "email:2024"
    assert single[0].note_name == "2024-03-11-q3-budget"


def test_missing_ids_dates_and_senders(tmp_path: Path) -> None:
    no_id = message(None, "dave@example.com", "Thu, 14 Mar 2024 10:00:00 +0000", "Lunch", "Pizza?")
    no_date = message("nd@example.com", "erin@example.com", None, "Undated", "When?")
    no_sender = (
        "Subject: Who\nDate: Thu, 14 Mar 2024 11:00:00 +0000\nMessage-ID: <ns@example.com>\n\nAnonymous.\n"
    )
    folder = tmp_path / "box"
    folder.mkdir()
    for name, text in (("1.eml", no_id), ("2.eml", no_date), ("3.eml", no_sender), ("4.eml", "\n\n")):
        (folder / name).write_text(text, encoding="utf-8")
    os.utime(folder / "2.eml", (1710410400, 1710410400))  # 2024-03-14 10:00 UTC
    batches, warnings = parse_email_paths_with_report([folder])
    assert sorted(w.split(": ", 1)[1] for w in warnings) == [
        "1 message without a usable Date header — dated by the file's modification time, when it was saved,"
        " not sent (2024-03-14T10:00:00Z); give it a Date: header to date it otherwise",
        "no sender (From, Sender, Reply-To, Return-Path); author 'unknown'",
        "unparseable: empty message",
    ]
    by_subject = {b.meta.subject: b.messages[0] for b in batches}
    assert set(by_subject) == {"Lunch", "Who", "Undated"}
    lunch = by_subject["Lunch"]
    assert lunch.message_id.startswith("nomid-") and lunch.source_ref is None
    assert parse_email_paths([folder / "1.eml"])[0].messages[0].message_id == lunch.message_id
    assert by_subject["Who"].author == "unknown"


def test_envelope_dates(tmp_path: Path) -> None:
    undated = message("u1@example.com", "x@example.com", None, "Envelope", "Body")
    mbox = tmp_path / "old.mbox"
    escaped = undated + ">From here on, we ship.\n>>From stays quoted.\n"
    mbox.write_text("From x@example.com Sat Jun 30 06:06:01 2012\n" + escaped + "\n", encoding="utf-8")
    [parsed] = parse_email_paths([mbox])[0].messages
    assert parsed.timestamp == datetime(2012, 6, 30, 6, 6, 1, tzinfo=UTC)
    assert parsed.text == "Body\nFrom here on, we ship.\n>From stays quoted."
    maildir = write_maildir(tmp_path / "md", ("1341036361.M1P2.host:2,S", undated))
    assert parse_email_paths([maildir])[0].messages[0].timestamp == datetime(2012, 6, 30, 6, 6, 1, tzinfo=UTC)


def test_a_body_line_starting_from_left_unescaped_in_an_mbox_stays_in_its_message(tmp_path: Path) -> None:
    """A line of a message's body that starts with "From " and that the mbox's writer did not
    escape as ">From " (mboxo writers that escape nothing, a file joined by hand) split the
    message: the lines from it on were "message 3: unparseable: no headers", lost. A `From `
    line not followed by a message's headers is a line of the message before it."""
    body = "Thanks.\nFrom what I remember the room is booked.\nFrom: the caretaker\nBob"
    reply = message("r1@example.com", "Bob Stone <bob@example.com>", "Mon, 11 Mar 2024 10:00:00 +0000", "Re: Q3 budget", body, reply_to="m1@example.com")
    mbox = write_mbox(tmp_path / "inbox.mbox", M1, reply, OTHER)
    batches, warnings = parse_email_paths_with_report([mbox])
    got = {m.message_id: m.text for batch in batches for m in batch.messages}
    assert got["r1@example.com"] == body and len(got) == 3 and warnings == []
    # after a blank line (the mbox's separator's shape): the paragraph break stays
    body = "Para one.\n\nFrom here on we go.\nLast line."
    reply = message("r2@example.com", "Bob Stone <bob@example.com>", "Mon, 11 Mar 2024 10:00:00 +0000", "Re: Q3 budget", body)
    batches, _ = parse_email_paths_with_report([write_mbox(tmp_path / "blank.mbox", reply, OTHER)])
    assert {m.message_id: m.text for batch in batches for m in batch.messages}["r2@example.com"] == body


def test_maildir_subfolders_belong_to_the_account(tmp_path: Path) -> None:
    root = write_maildir(tmp_path / "alice", ("1710147600.M1P1.host:2,S", M1))
    write_maildir(root / ".Sent", ("1710149400.M1P1.host:2,S", M2))
    batches = parse_email_paths([root])
    assert [(b.meta.source_id, len(b.messages)) for b in batches] == [("email:alice", 2)]


def test_subjects_and_colliding_names(tmp_path: Path) -> None:
    assert normalize_subject("Re: AW: [team] Fwd: Budget  plan") == "Budget plan"
    assert normalize_subject("RE[2]: SV: Status") == "Status"
    assert normalize_subject("[Fwd: Whole subject in brackets]") == "[Fwd: Whole subject in brackets]"
    assert normalize_subject("Re:") == ""
    a = message("a@x.org", "a@x.org", "Mon, 11 Mar 2024 09:00:00 +0000", "Hello", "one")
    b = message("b@x.org", "b@x.org", "Mon, 11 Mar 2024 10:00:00 +0000", "Re: Hello", "two")  # no refs
    c = message("c@x.org", "c@x.org", "Mon, 11 Mar 2024 11:00:00 +0000", "", "three")
    mbox = write_mbox(tmp_path / "box.mbox", a, b, c)
    names = [batch.note_name for batch in parse_email_paths([mbox])]
    assert names[0] == "2024-03-11-hello"
    assert names[1] is not None and names[1].startswith("2024-03-11-hello-") and len(names[1]) == 23
    assert names[2] == "2024-03-11-no-subject"


def test_attachments_line_and_html_only(tmp_path: Path) -> None:
    text = (
        "From: a@example.com\nDate: Mon, 11 Mar 2024 09:00:00 +0000\nMessage-ID: <att@example.com>\n"
        'Subject: Files\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b"\n\n'
        "--b\nContent-Type: text/html; charset=utf-8\n\n<p>See the <b>file</b>.</p>\n"
        '--b\nContent-Type: application/pdf; name="q3.pdf"\nContent-Transfer-Encoding: base64\n\n'
        "JVBERi0xLjQK\n--b--\n"
    )
    path = tmp_path / "att.eml"
    path.write_text(text, encoding="utf-8")
    [batch] = parse_email_paths([path])
    assert batch.messages[0].text == "See the file.\n\nAttachments: q3.pdf (application/pdf, 9 B)"


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no such file"):
        parse_email_paths([tmp_path / "missing.mbox"])
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\n", encoding="utf-8")
    with pytest.raises(IngestError, match="not an email file"):
        parse_email_paths([notes])
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "x.mbox").write_text("From nobody\nSubject: no date\n\nbody\n", encoding="utf-8")
    os.utime(empty / "x.mbox", (0, 0))  # extracted without its time: no date anywhere
    with pytest.raises(IngestError, match="no email message could be read") as info:
        parse_email_paths([empty])
    assert info.value.hint == (
        f"{empty / 'x.mbox'}: 1 message without a usable Date header — 1 left out (message 1 (subject 'no date')):"
        " no Received header, envelope or file time either; give it a Date: header to ingest it"
    )


@pytest.mark.slow
def test_end_to_end_one_note_per_thread(tmp_path: Path, vault: Path, memory: Memory) -> None:
    inbox = write_mbox(tmp_path / "inbox.mbox", M1, M3, OTHER)
    sent = write_maildir(
        tmp_path / "sent", ("1710149400.M1P1.host:2,S", M2), ("1710147600.M2P1.host:2,S", M1)
    )
    report = write_batches(vault, parse_email_paths([inbox, sent]))
    assert report.written == [
        "sources/email/inbox/offsite/2024-03-13-offsite.md",
        "sources/email/inbox/q3-budget/2024-03-11-q3-budget.md",
    ]
    assert report.messages_added == 4
    memory.sync()
    rows = memory.index.query(
        "SELECT note_path, message_id, author, text, source_ref FROM leaves WHERE kind = 'message' "
        "ORDER BY note_path, ts, message_id"
    )
    budget = [r for r in rows if r[0].endswith("q3-budget.md")]
    assert [(r[1], r[3]) for r in budget] == [
        ("m1@example.com", "Hi Bob,\n\nthe numbers are attached.\n\nAlice"),
        ("m2@example.com", "Thanks! Looks fine."),
        ("m3@example.com", "Great, sending it on."),
    ]
    assert budget[1][2] == "Bob Stone <bob@example.com>" and budget[1][4] == "mid:m2@example.com"
    assert len(rows) == 4
    # ingesting the same exports again changes nothing
    again = write_batches(vault, parse_email_paths([sent, inbox]))
    assert again.written == [] and again.messages_added == 0 and again.messages_known == 4


FLANKER = EVALDATA / "email" / "mime-flanker"


@pytest.mark.slow
@pytest.mark.skipif(not FLANKER.is_dir(), reason="MIME robustness corpus not available")
def test_flanker_corpus_parses_or_is_reported() -> None:
    files = sorted(FLANKER.rglob("*.eml"))
    batches, warnings = parse_email_paths_with_report(files)
    unparseable = [w for w in warnings if ": unparseable: " in w]
    ids = {m.message_id for b in batches for m in b.messages}
    parsed = len(files) - len(unparseable)
    print(
        f"flanker: {parsed}/{len(files)} messages parse ({len(ids)} distinct Message-IDs), {len(unparseable)} reported"
    )
    for line in unparseable:
        print("  ", line.rsplit("/", 1)[-1])
    assert parsed >= 39
    assert all(m.author and m.timestamp for b in batches for m in b.messages)


def test_same_message_id_different_text_is_reported(tmp_path: Path) -> None:
    a = write_mbox(tmp_path / "a.mbox", M1)
    b = write_mbox(tmp_path / "b.mbox", M1.replace("the numbers are attached.", "edited copy"))
    for order in ([a, b], [b, a]):
        batches, warnings = parse_email_paths_with_report(order)
        assert batches[0].messages[0].text == "Hi Bob,\n\nthe numbers are attached.\n\nAlice"
        assert len(warnings) == 1 and "also read with a different text" in warnings[0]


CLEAN_COPY = (
    b"From: Ana <ana@example.org>\nTo: Bob <bob@example.org>\nSubject: Tickets\n"
    b"Date: Tue, 02 Jan 2024 10:00:00 +0000\nMessage-ID: <dup-2@example.org>\n"
    b"Content-Type: text/plain; charset=utf-8\n\n"
    b"Meet me at the caf\xc3\xa9 by the harbour, Jos\xc3\xa9 will bring the tickets.\n"
)


@pytest.mark.parametrize("names", [("a-bad.eml", "b-good.eml"), ("b-bad.eml", "a-good.eml")])
def test_of_two_differing_copies_the_one_read_cleanly_is_kept(tmp_path: Path, names: tuple[str, str]) -> None:
    """A copy whose bytes are not valid in its charset (replaced when read) loses to a clean
    copy of the same message, whichever file sorts first; the warning names both copies."""
    bad, good = tmp_path / names[0], tmp_path / names[1]
    good.write_bytes(CLEAN_COPY)
    bad.write_bytes(CLEAN_COPY.replace(b"caf\xc3\xa9", b"caf\xff").replace(b"Jos\xc3\xa9", b"Jos\xfe"))
    batches, warnings = parse_email_paths_with_report([bad, good])
    (message,) = [m for b in batches for m in b.messages]
    assert "café" in message.text and "José" in message.text and "\ufffd" not in message.text
    (said,) = [w for w in warnings if "also read with a different text" in w]
    assert f"kept the copy in {good}," in said and f"left out the one in {bad} " in said


def _mbox_notes(vault: Path) -> dict[str, list[str]]:
    """Each email note of the vault → its message ids, in note order."""
    from vaultmind.ingest.held import message_ids

    return {
        p.relative_to(vault).as_posix(): message_ids(p.read_bytes())
        for p in sorted((vault / "sources" / "email").rglob("*.md"))
    }


def test_a_reply_ingested_later_joins_its_thread_and_no_message_is_written_twice(tmp_path: Path, vault: Path) -> None:
    """Across ingests as within one: a reply joins the note of the thread it answers; a message
    already in the vault (from another mailbox: Message-IDs are global) is known, not copied."""
    first = write_mbox(tmp_path / "Inbox.mbox", M1, OTHER)
    write_batches(vault, parse_email_paths([first]))
    reply = write_mbox(tmp_path / "later.mbox", M2)
    joined = write_batches(vault, parse_email_paths([reply]))
    assert joined.written == ["sources/email/inbox/q3-budget/2024-03-11-q3-budget.md"] and joined.messages_added == 1
    full = write_mbox(tmp_path / "Work.mbox", M1, M2, M3, OTHER)
    again = write_batches(vault, parse_email_paths([full]))
    assert again.messages_added == 1 and again.messages_known == 3
    notes = _mbox_notes(vault)
    assert notes == {
        "sources/email/inbox/offsite/2024-03-13-offsite.md": ["o1@example.com"],
        "sources/email/inbox/q3-budget/2024-03-11-q3-budget.md": ["m1@example.com", "m2@example.com", "m3@example.com"],
    }, notes
    assert write_batches(vault, parse_email_paths([full, first, reply])).written == []


def test_threads_that_only_share_a_subject_and_day_stay_apart_across_ingests(tmp_path: Path, vault: Path) -> None:
    carol = message("hi-c@example.com", "carol@example.com", "Mon, 4 Mar 2024 09:00:00 +0000", "Hi", "Lunch?")
    dan = message("hi-d@example.com", "dan@example.com", "Mon, 4 Mar 2024 15:00:00 +0000", "Hi", "Call me.")
    for folder in ("one", "a", "b"):
        (tmp_path / folder).mkdir()
    together = tmp_path / "one"
    write_batches(together, parse_email_paths([write_mbox(together / "acct.mbox", carol, dan)]))
    write_batches(vault, parse_email_paths([write_mbox(tmp_path / "a" / "acct.mbox", carol)]))
    write_batches(vault, parse_email_paths([write_mbox(tmp_path / "b" / "acct.mbox", dan)]))
    assert _mbox_notes(vault) == _mbox_notes(together) and len(_mbox_notes(vault)) == 2


def test_recipients_are_kept_in_the_note_and_survive_a_rewrite(tmp_path: Path, vault: Path) -> None:
    """To and Cc are written on each message's meta line (the note is the record), decoded, and
    kept when the note is rewritten with a later reply."""
    cc = M1.replace("To: team@example.com", "To: Bob Stone <bob@example.com>, =?utf-8?q?J=C3=B6rg?= <jorg@example.com>\nCc: carol@example.com")
    write_batches(vault, parse_email_paths([write_mbox(tmp_path / "inbox.mbox", cc)]))
    note = vault / "sources/email/inbox/q3-budget/2024-03-11-q3-budget.md"
    line = 'to="Bob Stone <bob@example.com>; Jörg <jorg@example.com>" cc="carol@example.com"'
    assert line in note.read_text(encoding="utf-8")
    write_batches(vault, parse_email_paths([write_mbox(tmp_path / "later.mbox", M2)]))
    text = note.read_text(encoding="utf-8")
    assert line in text and 'to="team@example.com"' in text, "the first message's recipients, and the reply's"


def test_a_reply_ingested_before_its_thread_never_duplicates_a_message(tmp_path: Path, vault: Path) -> None:
    """Sent (the reply), then Inbox (the first message, nothing linking it yet), then both:
    every message stays in one note."""
    for folder in ("sent", "inbox"):
        (tmp_path / folder).mkdir()
    sent, inbox = write_mbox(tmp_path / "sent" / "sent.mbox", M2), write_mbox(tmp_path / "inbox" / "inbox.mbox", M1)
    write_batches(vault, parse_email_paths([sent]))
    write_batches(vault, parse_email_paths([inbox]))
    write_batches(vault, parse_email_paths([inbox, sent]))
    held = [mid for ids in _mbox_notes(vault).values() for mid in ids]
    assert sorted(held) == ["m1@example.com", "m2@example.com"], _mbox_notes(vault)


def test_a_reply_without_its_thread_keeps_what_it_quotes(tmp_path: Path, vault: Path, memory: Memory) -> None:
    """The quoted parent is cut only when the message it answers is in the ingest or the vault:
    a reply exported alone (a Sent folder) keeps what it quoted, and it can be found by it."""
    note = vault / "sources/email/sent/q3-budget/2024-03-11-q3-budget.md"
    write_batches(vault, parse_email_paths([write_mbox(tmp_path / "Sent.mbox", M2)]))
    text = note.read_text(encoding="utf-8")
    assert "> Thanks! Looks fine.\n>\n> On Mon, Mar 11, 2024 at 9:00 AM, Alice Chen <alice@example.com> wrote:\n" in text
    assert "> > the numbers are attached." in text and "Acme Corp" not in text  # not the signature
    memory.sync()
    hit = memory.search("numbers attached")["hits"][0]
    assert hit["note_path"] == note.relative_to(vault).as_posix() and hit["content"].startswith("Thanks! Looks fine.")

    for name in ("one", "two"):
        other = tmp_path / name
        other.mkdir()
        both = write_mbox(tmp_path / f"{name}.mbox", M1, M2)
        if name == "two":  # the first message ingested on its own first, then the thread
            write_batches(other, parse_email_paths([write_mbox(tmp_path / "first.mbox", M1)]))
        write_batches(other, parse_email_paths([both]))
        [thread] = (other / "sources" / "email").rglob("*.md")
        assert "> > the numbers" not in thread.read_text(encoding="utf-8"), name

    again = write_batches(vault, parse_email_paths([write_mbox(tmp_path / "All.mbox", M1, M2)]))
    assert again.messages_added == 1 and not again.warnings, "the reply's kept quote is not a different text"


def test_recipients_are_searched_and_shown_with_the_hit(tmp_path: Path, vault: Path, memory: Memory) -> None:
    """To and Cc: on the leaf, searched with it ("what did Bob send to Megan?") and named in its
    hit and its evidence."""
    from vaultmind.retrieval.evidence import format_evidence

    to_megan = message(
        "g1@example.com", "Bob Stone <bob@example.com>", "Tue, 12 Mar 2024 10:00:00 +0000", "Keys",
        "The spare keys are in the blue tin.",
    ).replace("To: team@example.com", "To: Megan One <megan@example.com>\nCc: carol@example.com")  # fmt: skip
    other = message(
        "g2@example.com", "Bob Stone <bob@example.com>", "Tue, 12 Mar 2024 11:00:00 +0000", "Lunch",
        "Lunch is at noon in the blue room.",
    )  # fmt: skip
    write_batches(vault, parse_email_paths([write_mbox(tmp_path / "sent.mbox", to_megan, other)]))
    memory.sync()
    result = memory.walk("what did Bob send to Megan?")
    first = result["hits"][0]
    assert first["content"] == "The spare keys are in the blue tin."
    assert (first["to"], first["cc"]) == (["Megan One <megan@example.com>"], ["carol@example.com"])
    assert [h["to"] for h in result["hits"] if h["content"].startswith("Lunch")] == [["team@example.com"]]
    assert memory.search("carol")["hits"][0]["content"] == first["content"], "a Cc is searched by its address's name"
    assert "Bob Stone <bob@example.com> → Megan One (cc carol@example.com)" in format_evidence(result)


def test_a_message_forwarded_as_an_attachment_keeps_its_text(tmp_path: Path, vault: Path, memory: Memory) -> None:
    """"FYI" with the original attached as a message: the original's text follows as a forwarded
    message (it is in the vault nowhere else), and it is found by its words."""
    inner = "From: carol@example.com\nSubject: Original plan\nDate: Mon, 11 Mar 2024 08:00:00 +0000\n\nThe ferry leaves at 7:40 from pier 3.\n"
    fwd = (
        "From: Bob Stone <bob@example.com>\nTo: team@example.com\nSubject: Fwd: Original plan\n"
        "Date: Tue, 12 Mar 2024 09:00:00 +0000\nMessage-ID: <fwd1@example.com>\nMIME-Version: 1.0\n"
        'Content-Type: multipart/mixed; boundary="o"\n\n'
        "--o\nContent-Type: text/plain\n\nFYI, see below.\n"
        "--o\nContent-Type: message/rfc822\nContent-Disposition: attachment\n\n" + inner + "--o--\n"
    )
    write_batches(vault, parse_email_paths([write_mbox(tmp_path / "sent.mbox", fwd)]))
    [note] = (vault / "sources" / "email").rglob("*.md")
    text = note.read_text(encoding="utf-8")
    assert "> FYI, see below.\n>\n> ---------- Forwarded message ----------\n> From: carol@example.com\n" in text
    assert "> The ferry leaves at 7:40 from pier 3.\n>\n> Attachments: Original plan.eml (message/rfc822, " in text
    memory.sync()
    assert memory.search("ferry pier")["hits"][0]["content"].startswith("FYI, see below.")
    # forwarded in a reply to a thread the vault holds: still kept (it is no quote of the parent)
    reply = fwd.replace("Message-ID: <fwd1@example.com>", "Message-ID: <fwd2@example.com>\nIn-Reply-To: <m1@example.com>")
    write_batches(vault, parse_email_paths([write_mbox(tmp_path / "inbox.mbox", M1)]))
    write_batches(vault, parse_email_paths([write_mbox(tmp_path / "more.mbox", reply)]))
    held = "".join(p.read_text(encoding="utf-8") for p in (vault / "sources" / "email").rglob("*.md"))
    assert held.count("> The ferry leaves at 7:40 from pier 3.") == 2


def test_a_mail_forwarded_inside_a_reply_is_no_quote_of_the_parent(tmp_path: Path, vault: Path) -> None:
    """A reply that forwards another mail below its own text ("Forwarded message"): the separator
    cuts it as a quote, but it quotes no message it answers — its text is kept, whether the
    parent comes in the same ingest or is in the vault already. A real quote is still cut."""
    forward = message(
        "m9@example.com", "Bob Stone <bob@example.com>", "Mon, 11 Mar 2024 11:00:00 +0000", "Re: Q3 budget",
        "FYI see below.\n\n---------- Forwarded message ---------\nFrom: Vendor <v@vendor.example>\n"
        "Date: Sun, 10 Mar 2024 at 09:00\nSubject: quote\nTo: Bob <bob@example.com>\n\n"
        "The price is 500 EUR per seat, valid until April.",
        reply_to="m1@example.com", refs="<m1@example.com>",
    )  # fmt: skip
    write_batches(vault, parse_email_paths([write_mbox(tmp_path / "a.mbox", M1, M2, forward)]))
    together = "".join(p.read_text(encoding="utf-8") for p in (vault / "sources" / "email").rglob("*.md"))
    assert together.count("The price is 500 EUR per seat") == 1
    assert together.count("the numbers are attached") == 1, "M2's quote of M1 is cut: M1 is there"
    apart = vault.parent / "apart"
    write_batches(apart, parse_email_paths([write_mbox(tmp_path / "b.mbox", M1)]))
    write_batches(apart, parse_email_paths([write_mbox(tmp_path / "c.mbox", forward)]))
    held = "".join(p.read_text(encoding="utf-8") for p in (apart / "sources" / "email").rglob("*.md"))
    assert held.count("The price is 500 EUR per seat") == 1


def test_what_was_not_read_and_what_was_read_with_problems_is_said(tmp_path: Path) -> None:
    """A part nested past the cap loses its text: said by the message; bytes read in a wrong
    charset are counted, the first named (a mailbox may have hundreds)."""
    deep = "".join(f'--b{i}\nContent-Type: multipart/mixed; boundary="b{i - 1}"\n\n' for i in range(20, 0, -1))
    nested = message("deep@example.com", "a@example.com", "Mon, 11 Mar 2024 09:00:00 +0000", "deep", "")
    nested = nested.replace("Content-Type: text/plain; charset=utf-8", 'Content-Type: multipart/mixed; boundary="b20"')
    nested += deep + "--b0\nContent-Type: text/plain\n\nburied words\n"
    latin = [
        message(f"l{i}@example.com", "b@example.com", "Mon, 11 Mar 2024 10:00:00 +0000", "caf\u00e9", "caf\u00e9 au lait")
        .replace("charset=utf-8", "charset=us-ascii")
        for i in range(3)
    ]
    _, warnings = parse_email_paths_with_report([write_mbox(tmp_path / "odd.mbox", nested, *latin)])
    box = tmp_path / "odd.mbox"
    assert f"{box} message 1: MIME nesting deeper than 12 levels not followed: part of its text is not in the note" in warnings
    [odd] = [w for w in warnings if " read with " in w]  # the nested one's unclosed parts, the three charsets
    assert odd.startswith(f"{box} message 1: read with MIME defects") and odd.endswith("(and 3 more messages)")


def test_a_sent_folder_keeps_the_replies_it_quotes_that_are_nowhere_else(tmp_path: Path, vault: Path) -> None:
    """Your first mail and your answer to their reply, exported from Sent: their reply exists only
    as your quote of it, which is kept, though your first mail (an older ancestor) is there."""
    write_batches(vault, parse_email_paths([write_mbox(tmp_path / "Sent.mbox", M1, M3)]))
    [note] = (vault / "sources" / "email").rglob("*.md")
    text = note.read_text(encoding="utf-8")
    assert "> > Thanks! Looks fine." in text, "the reply M3 quotes (M2) is in the vault nowhere else"
    assert text.count("the numbers are attached") == 1, "M1 itself, once"


def _all_ids(vault: Path) -> list[str]:
    """Every message id held by an email thread note anywhere in the vault, moved ones included."""
    from vaultmind.ingest.held import message_ids

    return sorted(
        mid
        for p in vault.rglob("*.md")
        if ".vaultmind" not in p.parts and "kind: email" in p.read_text(encoding="utf-8")
        for mid in message_ids(p.read_bytes())
    )


def test_a_thread_note_moved_anywhere_is_found_and_never_written_twice(tmp_path: Path, vault: Path) -> None:
    """A thread note moved out of sources/ (dragged into a folder of yours) is yours: left as it is,
    its messages known, the thread's new ones in a note of their own. Moved within sources/, it
    is still vaultmind's: new replies join it where it is, as a chat's renamed day note does."""
    write_batches(vault, parse_email_paths([write_mbox(tmp_path / "Inbox.mbox", M1, M2)]))
    note = vault / "sources/email/inbox/q3-budget/2024-03-11-q3-budget.md"
    moved = vault / "Projects" / "Budget thread.md"
    moved.parent.mkdir()
    note.rename(moved)
    before = moved.read_bytes()
    (tmp_path / "later").mkdir()
    later = write_mbox(tmp_path / "later" / "Inbox.mbox", M1, M2, M3)
    report = write_batches(vault, parse_email_paths([later]))
    assert moved.read_bytes() == before, "your note is never written to"
    assert report.written == ["sources/email/inbox/q3-budget/2024-03-11-q3-budget.md"]
    assert (report.messages_added, report.messages_known) == (1, 2)
    assert message_ids(note.read_bytes()) == ["m3@example.com"]
    assert [w.split(": ", 1)[0] for w in report.warnings] == ["Projects/Budget thread.md"]
    assert "outside sources/, so it is yours and left as it is" in report.warnings[0]
    assert _all_ids(vault) == ["m1@example.com", "m2@example.com", "m3@example.com"]
    again = write_batches(vault, parse_email_paths([later]))
    assert again.written == [] and again.messages_added == 0 and again.warnings == []

    # moved within sources/: still vaultmind's, found there, and the reply joins it
    other = tmp_path / "other"
    other.mkdir()
    write_batches(other, parse_email_paths([write_mbox(tmp_path / "Inbox.mbox", M1, M2)]))
    archived = other / "sources" / "archive" / "budget.md"
    archived.parent.mkdir(parents=True)
    (other / "sources/email/inbox/q3-budget/2024-03-11-q3-budget.md").rename(archived)
    joined = write_batches(other, parse_email_paths([later]))
    assert joined.written == ["sources/archive/budget.md"] and joined.warnings == []
    assert message_ids(archived.read_bytes()) == ["m1@example.com", "m2@example.com", "m3@example.com"]
    assert _all_ids(other) == ["m1@example.com", "m2@example.com", "m3@example.com"]


def test_a_parent_ingested_after_its_reply_joins_the_reply_s_note(tmp_path: Path, vault: Path) -> None:
    """A reply first, its parent in a later run: one thread note. The reply's note records the
    Message-IDs it answers that it does not hold (`answers` on its meta line); the parent, whose
    Message-ID it names, joins it — from the same folder of .eml files, or another mailbox."""
    box = tmp_path / "mail"
    box.mkdir()
    (box / "m2.eml").write_text(M2, encoding="utf-8")
    write_batches(vault, parse_email_paths([box / "m2.eml"]))
    note = vault / "sources/email/mail/q3-budget/2024-03-11-q3-budget.md"
    assert 'answers="m1@example.com"' in note.read_text(encoding="utf-8")
    (box / "m1.eml").write_text(M1, encoding="utf-8")
    report = write_batches(vault, parse_email_paths([box / "m1.eml"]))
    assert report.written == ["sources/email/mail/q3-budget/2024-03-11-q3-budget.md"], report.written
    assert _mbox_notes(vault) == {"sources/email/mail/q3-budget/2024-03-11-q3-budget.md": ["m1@example.com", "m2@example.com"]}
    assert "answers=" not in note.read_text(encoding="utf-8"), "a thread held whole records nothing more"
    assert write_batches(vault, parse_email_paths([box])).written == []

    # the last reply first (References name both), then the first message, then the middle one,
    # each from its own mailbox; and a second reply to a parent the vault still lacks
    other = tmp_path / "other"
    other.mkdir()
    for name, mail in (("c", M3), ("a", M1), ("b", M2)):
        write_batches(other, parse_email_paths([write_mbox(tmp_path / f"{name}.mbox", mail)]))
    assert list(_mbox_notes(other).values()) == [["m1@example.com", "m2@example.com", "m3@example.com"]]
    first = message("p1@example.com", "carol@example.com", "Wed, 13 Mar 2024 09:00:00 +0000", "Trip", "Where to?")
    answers = [
        message(f"r{n}@example.com", "dan@example.com", f"Wed, 13 Mar 2024 1{n}:00:00 +0000", "Re: Trip", text, reply_to="p1@example.com")
        for n, text in ((1, "Lisbon."), (2, "Or Porto."))
    ]
    for n, mail in enumerate([*answers, first]):
        write_batches(other, parse_email_paths([write_mbox(tmp_path / f"trip{n}.mbox", mail)]))
    trip = [ids for path, ids in _mbox_notes(other).items() if "/trip/" in path]
    assert trip == [["p1@example.com", "r1@example.com", "r2@example.com"]], _mbox_notes(other)


def test_an_eml_without_a_date_is_dated_by_received_else_its_file_time(tmp_path: Path, vault: Path) -> None:
    """No Date header: the newest Received header's time (the mailbox's own server's), else the
    file's modification time — ingested, with a warning naming the file and the date used."""
    hops = (
        "Received: from mx by mail.example.com; Tue, 12 Mar 2024 10:05:00 +0000\n"
        "Received: from laptop by mx; Tue, 12 Mar 2024 10:00:00 +0000\n"
    )
    folder = tmp_path / "saved"
    folder.mkdir()
    received, bare = folder / "received.eml", folder / "bare.eml"
    received.write_text(hops + message("rc@example.com", "erin@example.com", None, "Hops", "Via two servers."), encoding="utf-8")
    bare.write_text(message(None, "erin@example.com", None, "Bare", "No date at all."), encoding="utf-8")
    os.utime(bare, (1714564800, 1714564800))  # 2024-05-01 12:00 UTC
    batches, warnings = parse_email_paths_with_report([folder])
    assert warnings == [
        f"{bare}: 1 message without a usable Date header — dated by the file's modification time, when it was"
        " saved, not sent (2024-05-01T12:00:00Z); give it a Date: header to date it otherwise",
        f"{received}: 1 message without a usable Date header — dated by its newest Received header (2024-03-12T10:05:00Z)",
    ]
    report = write_batches(vault, batches)
    assert report.written == ["sources/email/saved/bare/2024-05-01-bare.md", "sources/email/saved/hops/2024-03-12-hops.md"]
    assert 'at="2024-03-12T10:05:00Z"' in (vault / report.written[1]).read_text(encoding="utf-8")
    # a copy of the file (another modification time) is the same message, though it has no Message-ID
    os.utime(bare, (1717243200, 1717243200))
    again = write_batches(vault, parse_email_paths([folder]))
    assert again.written == [] and again.messages_known == 2


def test_an_mbox_message_without_a_date_prefers_received_then_the_envelope_and_says_so(tmp_path: Path) -> None:
    mbox = tmp_path / "old.mbox"
    undated = message("u1@example.com", "x@example.com", None, "Envelope", "Body")
    hop = "Received: from a by b; Fri, 29 Jun 2012 23:00:00 +0000\n"
    hopped = hop + message(None, "x@example.com", None, "Hopped", "Body two")
    envelope = "From x@example.com Sat Jun 30 06:06:01 2012\n"
    mbox.write_text(envelope + undated + "\n" + envelope + hopped + "\n", encoding="utf-8")
    batches, warnings = parse_email_paths_with_report([mbox])
    assert warnings == [
        f"{mbox}: 2 messages without a usable Date header — dated 1 by its newest Received header"
        " (message 2 (subject 'Hopped'): 2012-06-29T23:00:00Z), 1 by the mbox's From line (message 1 <u1@example.com>:"
        " 2012-06-30T06:06:01Z)",
    ]
    assert {b.meta.subject: b.messages[0].timestamp for b in batches} == {
        "Hopped": datetime(2012, 6, 29, 23, 0, tzinfo=UTC),
        "Envelope": datetime(2012, 6, 30, 6, 6, 1, tzinfo=UTC),
    }


def _offsite() -> dict[str, str]:
    """One thread whose subject changes: A; B answers A; D and C answer B; E answers C (its
    References name C only); G names B only."""
    venue, decision = "Offsite venue", "Offsite decision (was: Offsite venue)"
    return {
        "A": message("a2@ex.com", "alice@ex.com", "Fri, 01 Mar 2024 09:00:00 +0000", venue, "Where shall we go?"),
        "B": message("b2@ex.com", "bob@ex.com", "Tue, 05 Mar 2024 10:00:00 +0000", f"Re: {venue}", "The lake house.",
                     reply_to="a2@ex.com", refs="<a2@ex.com>"),
        "D": message("d2@ex.com", "dan@ex.com", "Wed, 06 Mar 2024 11:30:00 +0000", f"Re: {venue}", "Or the city.",
                     reply_to="b2@ex.com", refs="<a2@ex.com> <b2@ex.com>"),
        "C": message("c2@ex.com", "carol@ex.com", "Sat, 09 Mar 2024 11:00:00 +0000", decision, "Lake house it is.",
                     reply_to="b2@ex.com", refs="<a2@ex.com> <b2@ex.com>"),
        "E": message("e2@ex.com", "erin@ex.com", "Mon, 11 Mar 2024 12:00:00 +0000", f"Re: {decision}", "Booked.",
                     reply_to="c2@ex.com", refs="<c2@ex.com>"),
        "G": message("g2@ex.com", "gus@ex.com", "Thu, 14 Mar 2024 08:00:00 +0000", f"Re: {venue}", "Count me in.",
                     refs="<b2@ex.com>"),
    }  # fmt: skip


@pytest.mark.parametrize("order", ["EABC", "GECABD", "ECA", "EGDCBA"])
def test_a_thread_a_message_links_across_two_notes_holds_each_message_once(
    tmp_path: Path, vault: Path, order: str
) -> None:
    """E (naming only C) alone, then A and B (a note of their own): C answers B's note and is
    named by E's. Whatever the order, each message is in one note, the whole mailbox adds
    nothing twice and is idempotent, and no note vaultmind wrote is removed (a link of yours to
    it keeps working): the thread may stay in two notes."""
    mails = _offsite()
    written: set[str] = set()
    for n, name in enumerate(order):
        report = write_batches(vault, parse_email_paths([write_mbox(tmp_path / f"{n}-{name}.mbox", mails[name])]))
        written.update(report.written)
    assert all((vault / path).exists() for path in written), "no note vaultmind wrote is removed"
    held = [i for ids in _mbox_notes(vault).values() for i in ids]
    assert sorted(held) == sorted(f"{name.lower()}2@ex.com" for name in order), "each message once"
    whole = write_mbox(tmp_path / "all.mbox", *mails.values())
    write_batches(vault, parse_email_paths([whole]))
    assert sorted(_all_ids(vault)) == sorted(f"{n}2@ex.com" for n in "abcdeg")
    again = write_batches(vault, parse_email_paths([whole]))
    assert (again.written, again.messages_added) == ([], 0)


def test_no_message_is_dated_1970_or_left_out_while_something_dates_it(tmp_path: Path) -> None:
    """An mbox `From ` line at the epoch (`Thu Jan  1 00:00:00 1970`, a mailer's placeholder)
    dated its message 1970; a Date header at the epoch did too; Google Takeout's `From ` line
    (a zone before the year) was not read; an mbox or Maildir message with no date anywhere,
    or a Maildir file whose name holds no delivery time, was left out. The chain is Date →
    newest Received → envelope → the file's modification time, an epoch time counting as none;
    each file says once how many of its messages were dated otherwise, and by what."""
    epoch = "From MAILER-DAEMON Thu Jan  1 00:00:00 1970\n"
    hop = "Received: from mx by mail.example.com; Wed, 13 Mar 2024 10:00:00 +0000\n"
    mbox = tmp_path / "old.mbox"
    mbox.write_text(
        epoch + message("e1@example.com", "carol@example.com", None, "Epoch envelope", "Due Friday.") + "\n"
        + epoch + hop + message("e2@example.com", "carol@example.com", "Thu, 01 Jan 1970 00:00:00 +0000", "Epoch date", "Second.") + "\n"
        + "From 1590000000000000000@xxx Mon Mar 09 14:10:24 +0200 2020\n"
        + message("e3@example.com", "dan@example.com", None, "Takeout", "Exported.") + "\n",
        encoding="utf-8",
    )
    os.utime(mbox, (1714564800, 1714564800))  # 2024-05-01 12:00 UTC
    maildir = write_maildir(
        tmp_path / "md",
        ("renamed-by-a-tool", message("n1@example.com", "erin@example.com", "Tue, 12 Mar 2024 09:15:00 +0000", "Named", "Dated.")),
        ("bare", message("n2@example.com", "erin@example.com", None, "Bare", "Undated.")),
    )
    os.utime(maildir / "cur" / "bare", (1710000000, 1710000000))  # 2024-03-09 16:00 UTC
    batches, warnings = parse_email_paths_with_report([mbox, maildir])
    got = {m.message_id: m.timestamp.isoformat() for b in batches for m in b.messages}
    assert got == {
        "e1@example.com": "2024-05-01T12:00:00+00:00",  # the mbox's time, not 1970
        "e2@example.com": "2024-03-13T10:00:00+00:00",  # its Received header, not its Date of 1970
        "e3@example.com": "2020-03-09T12:10:24+00:00",
        "n1@example.com": "2024-03-12T09:15:00+00:00",
        "n2@example.com": "2024-03-09T16:00:00+00:00",
    }
    assert warnings == [
        f"{mbox}: 3 messages without a usable Date header — dated 1 by its newest Received header (message 2"
        " <e2@example.com>: 2024-03-13T10:00:00Z), 1 by the mbox's From line (message 3 <e3@example.com>:"
        " 2020-03-09T12:10:24Z), 1 by the file's modification time, when it was saved, not sent (message 1"
        " <e1@example.com>: 2024-05-01T12:00:00Z); give them a Date: header to date them otherwise",
        f"{maildir}: 1 message without a usable Date header — dated by the file's modification time, when it was"
        " saved, not sent (message bare <n2@example.com>: 2024-03-09T16:00:00Z); give it a Date: header to date it otherwise",
    ]


def test_date_warnings_are_said_of_the_messages_an_ingest_writes(tmp_path: Path, vault: Path) -> None:
    """Ingesting an unchanged mbox again said again how its undated messages were dated, though
    it wrote nothing; a message added since is said alone."""
    from vaultmind.ingest.detect import ingest_paths

    envelope = "From x@example.com Sat Jun 30 06:06:01 2012\n"
    first = envelope + message("u1@example.com", "x@example.com", None, "Envelope", "Body") + "\n"
    mbox = tmp_path / "old.mbox"
    mbox.write_text(first, encoding="utf-8")
    said = ingest_paths("email", [mbox], vault).warnings
    assert said == [f"{mbox}: 1 message without a usable Date header — dated by the mbox's From line (message 1 <u1@example.com>: 2012-06-30T06:06:01Z)"]
    again = ingest_paths("email", [mbox], vault)
    assert (again.messages_added, again.messages_known, again.warnings) == (0, 1, [])
    mbox.write_text(first + envelope + message("u2@example.com", "x@example.com", None, "Later", "Two") + "\n", encoding="utf-8")
    later = ingest_paths("email", [mbox], vault)
    assert later.messages_added == 1 and later.warnings == [
        f"{mbox}: 1 message without a usable Date header — dated by the mbox's From line (message 2 <u2@example.com>: 2012-06-30T06:06:01Z)"
    ]


SIGNATURES = "".join(  # what a large provider puts above a message's own headers: kilobytes of them
    f"{name}: i={i}; a=rsa-sha256; d=example.com; s=s{i};\n" + "".join(f"\tb={'x' * 70}\n" for _ in range(10))
    for i in range(1, 4)
    for name in ("ARC-Seal", "ARC-Message-Signature", "DKIM-Signature")
)


def test_an_email_whose_header_block_opens_with_kilobytes_of_signatures_is_an_email(tmp_path: Path) -> None:
    """A message file without the .eml suffix whose first 4 KB held only ARC and DKIM
    signatures (or a header named with a dot, as RFC 5322 allows) was "not an email file",
    skipped; in an mbox, such a message was taken for a body line of the message before it,
    its own lost in that one's text. The header block is read to 64 KB, header names are what
    RFC 5322 allows."""
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "signed").write_text(SIGNATURES + M1, encoding="utf-8")
    (folder / "dotted").write_text("X.Original-To: team@example.com\n" + M2, encoding="utf-8")
    batches, warnings = parse_email_paths_with_report([folder])
    assert sorted(m.message_id for b in batches for m in b.messages) == ["m1@example.com", "m2@example.com"] and warnings == []
    mbox = write_mbox(tmp_path / "inbox.mbox", M1, SIGNATURES + M2)
    batches, warnings = parse_email_paths_with_report([mbox])
    got = {m.message_id: m.text for b in batches for m in b.messages}
    assert sorted(got) == ["m1@example.com", "m2@example.com"] and "ARC-Seal" not in got["m1@example.com"] and warnings == []


def test_an_eml_with_a_byte_order_mark_or_blank_lines_before_its_headers_is_read(tmp_path: Path) -> None:
    """An .eml saved with a UTF-8 byte order mark (Windows Notepad) or with blank lines above
    its headers was taken for an email and then "unparseable: no headers", its message lost.
    The mark and the blank lines are dropped, as when telling that it is an email."""
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "marked.eml").write_bytes(b"\xef\xbb\xbf" + M1.encode("utf-8"))
    (folder / "pasted").write_text("\n\r\n" + M2, encoding="utf-8")
    batches, warnings = parse_email_paths_with_report([folder])
    assert sorted(m.message_id for b in batches for m in b.messages) == ["m1@example.com", "m2@example.com"] and warnings == []


def test_a_folder_of_mixed_exports_gives_only_its_emails(tmp_path: Path) -> None:
    """Any file of a folder whose first line looked like `name:` was taken for an email: a JSON
    chat export (`[{"id": …`), a note starting "Note: …" became "(no subject)" messages by
    "unknown", their text lost or garbled. A file is an email when it starts with a header
    block holding a header every message has (From, Date, Subject, Received…)."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    (folder / "saved-message").write_text("Received: from mx by mail.example.com; Tue, 12 Mar 2024 10:05:00 +0000\n" + M1, encoding="utf-8")
    (folder / "m2.eml").write_text(M2, encoding="utf-8")
    (folder / "chat.json").write_text('[{"id": "m1", "author": "Alice", "timestamp": "2024-03-04T09:00:00Z", "text": "Budget?"}]\n', encoding="utf-8")
    (folder / "result.json").write_text('{"name": "Q3 team",\n "type": "private_group", "id": 4242, "messages": []}\n', encoding="utf-8")
    (folder / "note.txt").write_text("Note: the herons are back.\nTODO: count them.\n", encoding="utf-8")
    batches, warnings = parse_email_paths_with_report([folder])
    assert [m.message_id for b in batches for m in b.messages] == ["m1@example.com", "m2@example.com"]
    assert warnings == [f"{folder / name}: not an email file (.eml, mbox); skipped" for name in ("chat.json", "note.txt", "result.json")]


def test_a_nameless_inline_image_of_an_html_email_is_listed(tmp_path: Path) -> None:
    """An HTML-only message with an image pasted into it (a `multipart/related` part with a
    Content-ID and no file name) listed no attachment: the note did not say an image was sent.
    It is listed, named by its Content-ID (or its type); a note written before, without it,
    holds the message as it was read then: known, left as it is, no warning."""
    raw = (
        "From: Alice <alice@example.com>\nTo: bob@example.com\nSubject: The chart\n"
        "Date: Mon, 04 Mar 2024 09:00:00 +0000\nMessage-ID: <chart1@example.com>\nMIME-Version: 1.0\n"
        'Content-Type: multipart/related; boundary="REL"\n\n'
        "--REL\nContent-Type: text/html; charset=utf-8\n\n"
        '<html><body><p>Here is the chart:</p><img src="cid:image001.png@01DA6E"><img src="cid:ii_lt9x"></body></html>\n'
        "--REL\nContent-Type: image/png\nContent-Transfer-Encoding: base64\nContent-ID: <image001.png@01DA6E>\n\n"
        f"{PNG_1PX}\n"
        "--REL\nContent-Type: image/jpeg\nContent-Transfer-Encoding: base64\nContent-ID: <ii_lt9x>\n"
        "Content-Disposition: inline\n\n"
        f"{PNG_1PX}\n"
        "--REL--\n"
    )
    eml = write_eml(tmp_path / "mail" / "chart.eml", raw)
    [batch] = parse_email_paths([eml])
    [msg] = batch.messages
    assert msg.text.endswith("Attachments: image001.png (image/png, 70 B), ii_lt9x.jpg (image/jpeg, 70 B)")
    vault = tmp_path / "vault"
    before = msg.text.rsplit("\n\nAttachments:", 1)[0]
    written = write_batches(vault, [replace(batch, messages=(replace(msg, text=before),), earlier_texts=())])
    note = vault / written.written[0]
    was = note.read_bytes()
    again = write_batches(vault, parse_email_paths([eml]))
    assert (again.written, again.warnings, again.messages_known) == ([], [], 1)
    assert note.read_bytes() == was


def test_an_mbox_cut_short_in_a_header_leaves_the_message_above_as_it_is(tmp_path: Path) -> None:
    """A download cut off inside the last message's header block: the block, not a message's
    (its last line is cut), was taken for lines of the message above, whose note kept them for
    good. That message keeps its own text; the cut one is skipped, said, and the whole file,
    ingested later, adds it and nothing else."""
    first = message("m1@x", "a@example.com", "Mon, 04 Mar 2024 09:00:00 +0000", "Hi", "Hello there")
    second = message("m2@x", "b@example.com", "Mon, 04 Mar 2024 10:00:00 +0000", "Re: Hi", "Hello back", reply_to="m1@x")
    whole = f"From a@x Mon Mar 04 09:00:00 2024\n{first}\nFrom b@x Mon Mar 04 10:00:00 2024\n{second}"
    box = tmp_path / "box.mbox"
    box.write_text(whole[: whole.index("Subject: Re: Hi") + len("Subj")], encoding="utf-8")
    batches, warnings = parse_email_paths_with_report([box])
    [[only]] = [batch.messages for batch in batches]
    assert only.text == "Hello there"
    assert warnings == [f"{box} message 2: the file ends inside its header (cut short?); skipped — ingest the whole file to read it"]
    vault = tmp_path / "vault"
    write_batches(vault, batches)
    box.write_text(whole, encoding="utf-8")
    report = write_batches(vault, parse_email_paths([box]))
    assert (report.messages_added, report.messages_known, report.warnings) == (1, 1, [])


def test_the_images_of_an_html_rendering_not_read_are_listed(tmp_path: Path) -> None:
    """Apple Mail sends a pasted image inside the HTML rendering of a `multipart/alternative`
    (plain text, then HTML with its images): the plain text was read and the HTML rendering,
    its image with it, left out, so the note did not say an image was sent. The images of the
    renderings not read are listed; a note written before, without them, is left as it is."""
    raw = (
        "From: Alice <alice@example.com>\nTo: bob@example.com\nSubject: The chart\n"
        "Date: Mon, 04 Mar 2024 09:00:00 +0000\nMessage-ID: <chart2@example.com>\nMIME-Version: 1.0\n"
        'Content-Type: multipart/alternative; boundary="ALT"\n\n'
        "--ALT\nContent-Type: text/plain; charset=utf-8\n\nHere is the chart:\n\n"
        "--ALT\nContent-Type: multipart/related; boundary=\"REL\"\n\n"
        "--REL\nContent-Type: text/html; charset=utf-8\n\n"
        '<html><body><p>Here is the chart:</p><img src="cid:F3B1A2C4-77@home"></body></html>\n'
        "--REL\nContent-Type: image/png\nContent-Transfer-Encoding: base64\nContent-ID: <F3B1A2C4-77@home>\n\n"
        f"{PNG_1PX}\n"
        "--REL--\n--ALT--\n"
    )
    eml = write_eml(tmp_path / "mail" / "chart.eml", raw)
    [batch] = parse_email_paths([eml])
    [msg] = batch.messages
    assert msg.text == "Here is the chart:\n\nAttachments: F3B1A2C4-77.png (image/png, 70 B)"
    vault = tmp_path / "vault"
    written = write_batches(vault, [replace(batch, messages=(replace(msg, text="Here is the chart:"),), earlier_texts=())])
    was = (vault / written.written[0]).read_bytes()
    again = write_batches(vault, parse_email_paths([eml]))
    assert (again.written, again.warnings) == ([], [])
    assert (vault / written.written[0]).read_bytes() == was


def test_an_image_shown_in_the_html_and_attached_is_listed_once(tmp_path: Path) -> None:
    """A message whose HTML rendering shows the photo it also attaches (the same file, in the
    `multipart/related` of the rendering not read and in the `multipart/mixed`) listed it
    twice: "photo.png (…), photo.png (…)". It is listed once, and a note written before the
    renderings' images were listed is left as it is."""
    raw = (
        "From: Alice <alice@example.com>\nTo: bob@example.com\nSubject: The photo\n"
        "Date: Mon, 04 Mar 2024 09:00:00 +0000\nMessage-ID: <photo1@example.com>\nMIME-Version: 1.0\n"
        'Content-Type: multipart/mixed; boundary="MIX"\n\n'
        '--MIX\nContent-Type: multipart/alternative; boundary="ALT"\n\n'
        "--ALT\nContent-Type: text/plain; charset=utf-8\n\nHere it is\n"
        '--ALT\nContent-Type: multipart/related; boundary="REL"\n\n'
        '--REL\nContent-Type: text/html; charset=utf-8\n\n<p>Here it is <img src="cid:p1@x"></p>\n'
        '--REL\nContent-Type: image/png; name="photo.png"\nContent-Transfer-Encoding: base64\n'
        'Content-ID: <p1@x>\nContent-Disposition: inline; filename="photo.png"\n\n'
        f"{PNG_1PX}\n--REL--\n--ALT--\n"
        '--MIX\nContent-Type: image/png; name="photo.png"\nContent-Transfer-Encoding: base64\n'
        'Content-Disposition: attachment; filename="photo.png"\n\n'
        f"{PNG_1PX}\n--MIX--\n"
    )
    eml = write_eml(tmp_path / "mail" / "photo.eml", raw)
    [batch] = parse_email_paths([eml])
    [msg] = batch.messages
    assert msg.text == "Here it is\n\nAttachments: photo.png (image/png, 70 B)"
    vault = tmp_path / "vault"
    written = write_batches(vault, [batch])
    again = write_batches(vault, parse_email_paths([eml]))
    assert (again.written, again.warnings, again.messages_known) == ([], [], 1)
    assert (vault / written.written[0]).read_text(encoding="utf-8").count("photo.png") == 1


def test_the_calendar_rendering_of_an_invitation_is_no_attachment(tmp_path: Path) -> None:
    """An invitation sent as HTML and calendar renderings (no plain text): the HTML one is
    read, and its calendar rendering was listed as an attachment ("unnamed.ics") with the
    images of the renderings not read. A text rendering is no file: it is not listed, as when
    the message has a plain text rendering too."""
    raw = (
        "From: Alice <alice@example.com>\nTo: bob@example.com\nSubject: Invitation: sync\n"
        "Date: Mon, 04 Mar 2024 09:00:00 +0000\nMessage-ID: <invite1@example.com>\nMIME-Version: 1.0\n"
        'Content-Type: multipart/alternative; boundary="ALT"\n\n'
        "--ALT\nContent-Type: text/html; charset=utf-8\n\n<p>Sync on Friday at 10</p>\n"
        "--ALT\nContent-Type: text/calendar; charset=utf-8; method=REQUEST\n\n"
        "BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:Sync\nEND:VEVENT\nEND:VCALENDAR\n--ALT--\n"
    )
    eml = write_eml(tmp_path / "mail" / "invite.eml", raw)
    [batch] = parse_email_paths([eml])
    [msg] = batch.messages
    assert msg.text == "Sync on Friday at 10"
    vault = tmp_path / "vault"
    write_batches(vault, [batch])
    again = write_batches(vault, parse_email_paths([eml]))
    assert (again.written, again.warnings) == ([], [])


@pytest.mark.parametrize(
    ("zone", "utc"),
    [("GMT+1", "09:00"), ("GMT+0100", "09:00"), ("UTC+05:30", "04:30"), ("CET", "09:00"), ("MESZ", "08:00"), ("GMT", "10:00")],
)
def test_a_date_whose_zone_is_an_offset_after_gmt_or_a_zone_name_is_read_in_it(tmp_path: Path, zone: str, utc: str) -> None:
    """"Tue, 12 Mar 2024 10:00:00 GMT+1" or "… CET" was read as UTC, an hour or more off. A
    message without a Message-ID keeps the id an earlier vaultmind gave it (hashing the time as
    it read it then): the id of the same message dated "+0000"."""
    head = "From: a@example.com\nTo: b@example.com\nSubject: Zones\nDate: Tue, 12 Mar 2024 10:00:00 "
    [[zoned]] = [b.messages for b in parse_email_paths([write(tmp_path / "z", "a.eml", head + zone + "\n\nSee you.\n")])]
    [[plain]] = [b.messages for b in parse_email_paths([write(tmp_path / "p", "a.eml", head + "+0000\n\nSee you.\n")])]
    assert zoned.timestamp == datetime.fromisoformat(f"2024-03-12T{utc}:00+00:00")
    assert zoned.message_id == plain.message_id and zoned.message_id.startswith("nomid-")


@pytest.mark.parametrize(
    ("dated_then", "utc"),
    [
        ("Received: from mx.example.com by mail.example.com; Tue, 12 Mar 2024 09:05:00 +0000\n", "09:05"),
        ("", "08:30"),  # no Received: the mbox's From line dated it
    ],
)
def test_a_message_without_a_message_id_whose_date_is_read_only_now_keeps_its_id(
    tmp_path: Path, vault: Path, dated_then: str, utc: str
) -> None:
    """A Date an earlier vaultmind could not read at all ("2024-03-12 10:00:00 CET") dated the
    message by its Received header or its envelope, and its id hashed that time. Read now (its
    zone known), the message keeps that id: an mbox ingested before is known, not written twice."""
    envelope = "From a@example.com Tue Mar 12 08:30:00 2024\n"
    head = f"{envelope}{dated_then}From: a@example.com\nTo: b@example.com\nSubject: Zones\n"
    then = write(tmp_path / "then", "box.mbox", head + "\nSee you.\n")  # as it was read: no Date
    now = write(tmp_path / "now", "box.mbox", head + "Date: 2024-03-12 10:00:00 CET\n\nSee you.\n")
    [[was]] = [b.messages for b in parse_email_paths([then])]
    [[read]] = [b.messages for b in parse_email_paths([now])]
    assert was.timestamp == datetime.fromisoformat(f"2024-03-12T{utc}:00+00:00")
    assert read.timestamp == datetime.fromisoformat("2024-03-12T09:00:00+00:00")
    assert read.message_id == was.message_id
    ingest_paths("email", [then], vault)
    report = ingest_paths("email", [now], vault)
    assert (report.messages_added, report.messages_known) == (0, 1)


@pytest.mark.parametrize(
    ("zone", "received", "utc"),
    [
        ("GMT+0100 (CET)", "", "09:00"),  # JavaScript's and some webmail's Date, its zone's name after it
        ("BST", "", "09:00"),  # British Summer Time
        ("IST", "", "04:30"),  # India's, without a Received header to tell
        ("IST", "Tue, 12 Mar 2024 09:00:40 +0000", "09:00"),  # Irish Summer Time, as the Received says
        ("IST", "Tue, 12 Mar 2024 08:01:00 +0000", "08:00"),  # Israel's
        ("IST", "Tue, 12 Mar 2024 08:31:00 +0000", "08:00"),  # Israel's: Ireland's 09:00 is after it came
    ],
)
def test_more_date_zones_are_read_in_their_offset(tmp_path: Path, zone: str, received: str, utc: str) -> None:
    """"… 10:00:00 GMT+0100 (CET)", "… BST" and "… IST" were read as UTC. IST names three zones:
    the one read puts the Date nearest before the newest Received header, India's without one."""
    hop = f"Received: from mx.example.com by mail.example.com; {received}\n" if received else ""
    text = f"{hop}From: a@example.com\nTo: b@example.com\nSubject: Zones\nDate: Tue, 12 Mar 2024 10:00:00 {zone}\n\nSee you.\n"
    [[zoned]] = [b.messages for b in parse_email_paths([write(tmp_path, "a.eml", text)])]
    assert zoned.timestamp == datetime.fromisoformat(f"2024-03-12T{utc}:00+00:00")


@pytest.mark.parametrize("mid", ["zone@example.com", None])
def test_a_note_an_earlier_vaultmind_dated_by_a_misread_zone_is_re_dated(tmp_path: Path, vault: Path, mid: str | None) -> None:
    """A note written when "CET" read as UTC holds the message an hour late: ingesting the mail
    again moves it to the time its Date says (its id kept; said once), and again changes
    nothing. A note you edited keeps its time."""
    raw = message(mid, "Ann <ann@example.com>", "Tue, 12 Mar 2024 23:30:00 CET", "Zones", "See you at the harbour.")
    eml = write(tmp_path / "mail", "a.eml", raw)
    [batch] = parse_email_paths([eml])
    [now] = batch.messages
    then = replace(now, timestamp=datetime(2024, 3, 12, 23, 30, tzinfo=UTC))  # as an earlier vaultmind read it
    yours = tmp_path / "yours"
    for root in (vault, yours):
        write_batches(root, [replace(batch, messages=(then,))])
    [note] = (vault / "sources/email").rglob("*.md")
    assert 'at="2024-03-12T23:30:00Z"' in note.read_text(encoding="utf-8")
    report = ingest_paths("email", [eml], vault)
    assert (report.messages_added, report.written) == (0, [note.relative_to(vault).as_posix()])
    assert report.warnings == [
        f"{note.relative_to(vault).as_posix()}: message {now.message_id!r} re-dated 2024-03-12T23:30:00Z → "
        "2024-03-12T22:30:00Z, as its Date header reads (an earlier vaultmind misread its zone)"
    ]
    text = note.read_text(encoding="utf-8")
    assert 'at="2024-03-12T22:30:00Z"' in text and 'time_start: "2024-03-12T22:30:00Z"' in text
    settled = snapshot_files(vault)
    again = ingest_paths("email", [eml], vault)
    assert (again.written, again.warnings) == ([], []) and snapshot_files(vault) == settled
    [mine] = (yours / "sources/email").rglob("*.md")
    mine.write_text(mine.read_text(encoding="utf-8").replace("See you at", "See you later at"), encoding="utf-8")
    kept = snapshot_files(yours)
    ingest_paths("email", [eml], yours)
    assert snapshot_files(yours) == kept, "a note you edited is never rewritten"


BOUNCE_HEAD = (
    "From: Mail Delivery System <MAILER-DAEMON@mx.example.org>\nTo: alice@example.com\n"
    "Subject: Undelivered Mail Returned to Sender\nDate: Mon, 11 Mar 2024 10:00:05 +0000\nMIME-Version: 1.0\n"
)
BOUNCE_STATUS = (
    'Content-Type: multipart/report; report-type=delivery-status; boundary="RR"\n\n'
    "--RR\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mx.example.org\n\n"
    "Final-Recipient: rfc822; bob@example.com\nAction: failed\nStatus: 5.1.1\n"
    "Diagnostic-Code: smtp; 550 5.1.1 user unknown\n\n"
)
BOUNCE_REPORT = (
    BOUNCE_STATUS + "--RR\nContent-Type: text/rfc822-headers\n\nFrom: Alice <alice@example.com>\nTo: bob@example.com\n"
    "Subject: Q3 budget\n\n--RR--\n"
)


def test_a_bounce_without_text_is_written_as_its_status(tmp_path: Path, vault: Path) -> None:
    """A bounce of a delivery status alone (no Message-ID, no human-readable part) reads as what
    it is: the failed recipient, the status, the returned message's subject."""
    path = write(tmp_path, "box/bounce.eml", BOUNCE_HEAD + BOUNCE_REPORT)
    report = ingest_paths("email", [path], vault)
    assert report.messages_added == 1 and not report.warnings
    [note] = (vault / "sources/email/box").rglob("*.md")
    text = note.read_text(encoding="utf-8")
    assert "> - bob@example.com: failed, 5.1.1 — smtp; 550 5.1.1 user unknown\n" in text
    assert "> Subject: Q3 budget\n" in text


RETURNED_HEADERS = "From: Alice <alice@example.com>\nTo: bob@example.com\nSubject: Q3 budget\nDate: Mon, 11 Mar 2024 09:00:00 +0000"


@pytest.mark.parametrize(
    ("read_before", "report"),
    [
        ("", BOUNCE_STATUS + "--RR--\n"),
        (
            f"Your message could not be delivered.\n\n{RETURNED_HEADERS}\n",
            BOUNCE_STATUS.replace("--RR\n", "--RR\nContent-Type: text/plain\n\nYour message could not be delivered.\n\n--RR\n", 1)
            + f"--RR\nContent-Type: text/rfc822-headers\n\n{RETURNED_HEADERS}\n\n--RR--\n",
        ),
    ],
    ids=["status-only", "text-and-returned-headers"],
)
def test_a_bounce_written_before_is_known_as_it_is(tmp_path: Path, vault: Path, read_before: str, report: str) -> None:
    """A note written when vaultmind read no delivery report holds the bounce as read then (empty;
    or its text and the returned headers as raw text, cut as a quote and put back below it),
    under the id hashed from that body: the bounce ingested again is that message (known, no
    new id, no warning), and its note is left as it was; in a new vault it reads as its status."""
    path = write(tmp_path, "box/bounce.eml", BOUNCE_HEAD + "Content-Type: text/plain\n\n" + read_before)
    ingest_paths("email", [path], vault)
    [before] = [message_ids(p.read_bytes()) for p in (vault / "sources/email/box").rglob("*.md")]
    settled = snapshot_files(vault)
    write(tmp_path, "box/bounce.eml", BOUNCE_HEAD + report)
    again = ingest_paths("email", [path], vault)
    assert (again.messages_added, again.messages_known, again.warnings) == (0, 1, [])
    assert snapshot_files(vault) == settled
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert ingest_paths("email", [path], fresh).messages_added == 1
    [note] = (fresh / "sources/email/box").rglob("*.md")
    assert message_ids(note.read_bytes()) == before
    assert "> - bob@example.com: failed, 5.1.1" in note.read_text(encoding="utf-8")


def test_a_huge_subject_is_cut_in_the_title_and_kept_whole_in_its_message(tmp_path: Path, vault: Path, memory: Memory) -> None:
    """A mail whose subject runs to kilobytes (seen in a MIME test corpus: 60 KB) gets a title
    a person can read in the note, its front matter and every hit; the subject stays whole in
    its message's line, and a second ingest rewrites nothing."""
    subject = " ".join(f"word{i}" for i in range(1200))  # ~10 KB
    mail = message("big@example.com", "Alice Chen <alice@example.com>", "Mon, 11 Mar 2024 09:00:00 +0000", subject, "Body text.")
    box = write_mbox(tmp_path / "inbox.mbox", mail)
    report = write_batches(vault, parse_email_paths([box]))
    [path] = report.written
    text = (vault / path).read_text(encoding="utf-8")
    memory.sync()
    [(title,)] = memory.index.query("SELECT title FROM notes WHERE path = ?", [path])
    assert len(title) <= 200 and title.endswith("…") and title.startswith("word0 word1 ")
    assert f"# {title}\n" in text and f'subject: "{title}"\n' in text
    assert f'subject="{subject}"' in text  # the message's own line keeps it whole
    again = write_batches(vault, parse_email_paths([box]))
    assert again.written == [] and again.messages_known == 1


def test_a_subject_with_letters_no_accent_makes_names_its_note_in_ascii_and_an_older_name_is_kept(
    tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Straße`, `Łódź`, `Søren`: the note's file and folder spell them `ss`, `L`, `o` (as a
    chat's folder does: `vault.layout.ascii_letters`); they were dropped (`strae`, `odz`,
    `sren`). A thread an earlier vaultmind wrote under the old name keeps it: its reply joins
    that note, and nothing is written twice."""
    from vaultmind.ingest import names
    from vaultmind.ingest.detect import ingest_paths

    old = message("s1@example.com", "a@example.com", "Mon, 11 Mar 2024 09:00:00 +0000", "Treffen in der Straße", "Um neun.")
    reply = message(
        "s2@example.com", "b@example.com", "Tue, 12 Mar 2024 09:00:00 +0000", "Re: Treffen in der Straße", "Passt.",
        reply_to="s1@example.com",
    )
    new = message("l1@example.com", "a@example.com", "Wed, 13 Mar 2024 09:00:00 +0000", "Łódź trip with Søren", "At noon.")
    mbox = write_mbox(tmp_path / "box.mbox", old)
    with monkeypatch.context() as earlier:  # an earlier vaultmind: letters no accent makes dropped
        earlier.setattr(names, "ascii_letters", lambda text: text)
        assert ingest_paths("email", [mbox], vault).written == [
            "sources/email/box/treffen-in-der-strae/2024-03-11-treffen-in-der-strae.md"
        ]
    write_mbox(mbox, old, reply, new)
    report = ingest_paths("email", [mbox], vault)
    assert sorted(report.written) == [
        "sources/email/box/lodz-trip-with-soren/2024-03-13-lodz-trip-with-soren.md",
        "sources/email/box/treffen-in-der-strae/2024-03-11-treffen-in-der-strae.md",
    ]
    assert (report.messages_added, report.messages_known) == (2, 1)
    kept = (vault / "sources/email/box/treffen-in-der-strae/2024-03-11-treffen-in-der-strae.md").read_text(encoding="utf-8")
    assert "Passt." in kept and not (vault / "sources/email/box/treffen-in-der-strasse").exists()


def test_a_subject_with_no_latin_letter_names_its_note_by_its_own_characters(tmp_path: Path, vault: Path) -> None:
    """`ガイド` and `カイト`, `회의`: a subject of another script is named by the hash of its own
    characters, as ever. Spelling Latin letters in ASCII dropped the kana's voicing mark and
    split the Hangul first, so `ガイド` was named as `カイト` is, and `회의` otherwise than before."""
    from vaultmind.ingest.detect import ingest_paths
    from vaultmind.ingest.names import slugify

    subjects = ("ガイド", "カイト", "회의")
    mails = [
        message(f"k{n}@example.com", "a@example.com", "Mon, 11 Mar 2024 09:00:00 +0000", subject, "Um neun.")
        for n, subject in enumerate(subjects)
    ]
    written = ingest_paths("email", [write_mbox(tmp_path / "box.mbox", *mails)], vault).written
    assert sorted(written) == sorted(f"sources/email/box/{slugify(s)}/2024-03-11-{slugify(s)}.md" for s in subjects)
    assert len({slugify(s) for s in subjects}) == 3


def test_a_folder_holding_the_vault_has_its_notes_left_out_in_one_line(tmp_path: Path) -> None:
    """`ingest email FOLDER` of a folder holding the vault warned "not an email file" for each of
    the vault's notes (its own email notes among them); `ingest document` said them in one line."""
    vault = tmp_path / "vault"
    write(vault, "Projects/Plan.md", "# Plan\n\nShip in May.\n")
    write(vault, "Daily/2024-03-04.md", "# Monday\n\nGym.\n")
    write(
        tmp_path,
        "one.eml",
        "From: a@x.org\nTo: b@x.org\nSubject: Hi\nDate: Mon, 4 Mar 2024 10:00:00 +0000\nMessage-ID: <1@x.org>\n\nHello there.\n",
    )
    report = ingest_paths("email", [tmp_path], vault)
    assert report.messages_added == 1
    assert report.warnings == [
        f"2 notes of the vault itself skipped ({vault / 'Daily' / '2024-03-04.md'} …): vaultmind indexes them as they "
        "are; ingest emails from outside the vault"
    ], report.warnings
