"""Chat exports whose shape is odd or bad: nothing they hold is lost or reordered, nothing is
written twice, and what is left out is said."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.conftest import run_main, write
from vaultmind.ingest.chat_formats import detect_chat_format
from vaultmind.ingest.detect import ingest_paths
from vaultmind.ingest.errors import IngestError
from vaultmind.ingest.locomo import parse_locomo_paths
from vaultmind.ingest.whatsapp import parse_whatsapp
from vaultmind.markdown.note import parse_note
from vaultmind.vault.template import init_vault


def _note_texts(vault: Path, rel: str) -> list[str]:
    """The texts of a note's messages, in the note's order."""
    return [leaf.text for leaf in parse_note(rel, (vault / rel).read_text(encoding="utf-8")).leaves]


# --- messages of one minute -------------------------------------------------------------------

ONE_MINUTE = (
    "14/03/2024, 09:30 - Alice: Are you coming tonight?\n"
    "14/03/2024, 09:30 - Bob: yes\n"
    "14/03/2024, 09:30 - Alice: great, see you\n"
    "14/03/2024, 09:30 - Bob: bring wine?\n"
    "14/03/2024, 09:30 - Alice: no\n"
)


def test_messages_of_one_minute_keep_the_exports_order(tmp_path: Path, vault: Path) -> None:
    """WhatsApp ids hash the message: sorted by (time, id), a minute's replies came before
    their questions. The export's order stays; a later export's new messages of that minute
    follow the note's; the same export again writes nothing."""
    export = write(tmp_path, "WhatsApp Chat with Order.txt", ONE_MINUTE)
    first = ingest_paths("chat", [export], vault)
    rel = "sources/chat/whatsapp/order/2024-03-14.md"
    assert first.written == [rel]
    said = ["Are you coming tonight?", "yes", "great, see you", "bring wine?", "no"]
    assert _note_texts(vault, rel) == said
    before = (vault / rel).read_bytes()
    again = ingest_paths("chat", [export], vault)
    assert (again.written, again.messages_added) == ([], 0) and (vault / rel).read_bytes() == before
    write(tmp_path, "WhatsApp Chat with Order.txt", ONE_MINUTE + "14/03/2024, 09:30 - Bob: ok, no wine\n")
    later = ingest_paths("chat", [export], vault)
    assert later.messages_added == 1 and _note_texts(vault, rel) == [*said, "ok, no wine"]


# --- WhatsApp: a line without an author that is no notice --------------------------------------

PASTED_CALENDAR = (
    "14/03/2024, 09:30 - Alice: my schedule:\n"
    "18/03/2024, 10:00 - dentist\n"
    "19/03/2024, 14:00 - car service\n"
    "and then free\n"
    "14/03/2024, 09:31 - Bob created group \"Week\"\n"
    "14/03/2024, 09:31 - Bob: ok\n"
)


def test_a_pasted_line_without_an_author_stays_in_its_message(tmp_path: Path, vault: Path) -> None:
    """"18/03/2024, 10:00 - dentist" pasted into a message was taken for a system line and
    dropped, with every line below it up to the next message. It and its lines stay lines of
    the message (a notice WhatsApp writes, "created group", is still dropped); the message
    keeps the id its own lines gave it, so a vault that holds it as read before gains nothing."""
    before = write(tmp_path / "before", "WhatsApp Chat with Cal.txt", PASTED_CALENDAR.replace(
        "18/03/2024, 10:00 - dentist\n19/03/2024, 14:00 - car service\nand then free\n", ""
    ))
    export = write(tmp_path, "WhatsApp Chat with Cal.txt", PASTED_CALENDAR)
    report = ingest_paths("chat", [export], vault)
    rel = "sources/chat/whatsapp/cal/2024-03-14.md"
    assert (report.written, report.messages_added) == ([rel], 2)
    assert _note_texts(vault, rel) == [
        "my schedule:\n18/03/2024, 10:00 - dentist\n19/03/2024, 14:00 - car service\nand then free",
        "ok",
    ]
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    ingest_paths("chat", [before], earlier)  # the notes as the lines' loss wrote them
    again = ingest_paths("chat", [export], earlier)
    assert (again.written, again.messages_added, again.messages_known) == ([], 0, 2)


def test_a_line_without_an_author_above_every_message_is_said(tmp_path: Path, vault: Path) -> None:
    export = write(tmp_path, "WhatsApp Chat with Top.txt", "14/03/2024, 09:00 - agenda\nitem one\n14/03/2024, 09:30 - Alice: hi\n")
    report = ingest_paths("chat", [export], vault)
    assert report.messages_added == 1
    assert [w for w in report.warnings if "line 1: '14/03/2024, 09:00 - agenda' and the 1 line(s) below it" in w and "left out" in w]


# --- WhatsApp: the day/month order of a chat ---------------------------------------------------


def test_an_am_pm_clock_reads_dates_month_first(tmp_path: Path) -> None:
    """Dates that read both ways, in order either way: a clock writing "AM"/"PM" is a US
    export's, read month first (said, with the flag that reads it the other way)."""
    export = write(tmp_path, "WhatsApp Chat with US.txt", "3/4/24, 9:30 AM - Alice: hi\n3/5/24, 9:31 AM - Bob: hello\n")
    [batch] = parse_whatsapp(export)
    assert [str(m.timestamp)[:10] for m in batch.messages] == ["2024-03-04", "2024-03-05"]
    assert [s for s in batch.said_if_written if "read as month/day" in s and "--date-order dmy" in s]


def test_a_later_export_that_settles_the_other_date_order_writes_nothing_twice(tmp_path: Path, vault: Path) -> None:
    """The first export's dates read both ways (read day first, said); a later one holds
    "03/15/24", which reads only month first. Read so, every message the notes hold got another
    time and id, and was written again. The messages the notes hold are known as read then (said),
    the new one is written; the vault's reading is kept for a whole export that reads so."""
    first = "03/04/24, 09:30 - Alice: hi\n03/05/24, 09:31 - Bob: hello\n"
    export = write(tmp_path, "WhatsApp Chat with Pat.txt", first)
    assert ingest_paths("chat", [export], vault).messages_added == 2
    write(tmp_path, "WhatsApp Chat with Pat.txt", first + "03/15/24, 09:00 - Alice: later\n")
    later = ingest_paths("chat", [export], vault)
    assert (later.messages_added, later.messages_known) == (1, 2)
    assert later.written == ["sources/chat/whatsapp/pat/2024-03-15.md"]
    assert [w for w in later.warnings if "notes read its dates as day/month" in w and "--date-order mdy" in w]
    again = ingest_paths("chat", [export], vault)
    assert (again.written, again.messages_added) == ([], 0)
    # the first export again, whose dates alone read month first as well as day first: as the notes read it
    write(tmp_path, "WhatsApp Chat with Pat.txt", first.replace("09:30", "9:30 AM").replace("09:31", "9:31 AM"))
    am_pm = ingest_paths("chat", [export], vault)
    assert (am_pm.written, am_pm.messages_added, am_pm.messages_known) == ([], 0, 2)


# --- WhatsApp: the chat of a zip ---------------------------------------------------------------


def test_the_chat_of_a_whatsapp_zip_is_the_member_that_reads_as_one(tmp_path: Path, vault: Path) -> None:
    """An Android zip "with media" holds the files sent with the chat: a document `Agenda.txt`
    sorted before `WhatsApp Chat with Order.txt` and was read instead (an error naming neither).
    The chat is the member whose lines read as message lines; an error names the zip and the
    member."""
    archive = tmp_path / "WhatsApp Chat with Order.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("WhatsApp Chat with Order.txt", ONE_MINUTE)
        zf.writestr("Agenda.txt", "1. wine\n2. cheese\n")
    assert detect_chat_format(archive) == "whatsapp"
    report = ingest_paths("chat", [archive], vault)
    assert report.written == ["sources/chat/whatsapp/order/2024-03-14.md"] and report.messages_added == 5
    broken = tmp_path / "WhatsApp Chat with Bad.zip"
    with zipfile.ZipFile(broken, "w") as zf:
        zf.writestr("Agenda.txt", "1. wine\n")
        zf.writestr("WhatsApp Chat with Bad.txt", "14/03/2024, 09:30 - Alice: hi\n14/03/2024, 25:30 - Bob: yes\n")
    with pytest.raises(IngestError) as caught:
        ingest_paths("chat", [broken], vault)
    assert f"{broken}:WhatsApp Chat with Bad.txt" in str(caught.value) and "line 2" in str(caught.value)
    media = tmp_path / "WhatsApp Chat with Media.zip"
    with zipfile.ZipFile(media, "w") as zf:
        zf.writestr("Agenda.txt", "1. wine\n")
    with pytest.raises(IngestError, match=r"Media\.zip.*no WhatsApp chat in this zip.*Agenda\.txt"):
        ingest_paths("chat", [media], vault, fmt="whatsapp")


# --- folders: a file that is no export ----------------------------------------------------------


def test_a_folder_walked_skips_a_broken_zip_and_what_is_no_transcript(tmp_path: Path, vault: Path) -> None:
    """A zip cut short (or a file renamed `.zip`) stopped the whole chat ingest of its folder,
    and `ingest agent FOLDER` stopped at its first file that is no transcript (a README, the
    agent's settings): each is skipped with a warning naming it, the rest ingested."""
    chats = tmp_path / "Downloads"
    write(chats, "WhatsApp Chat with Order.txt", ONE_MINUTE)
    (chats / "photos.zip").write_bytes(b"PK\x03\x04 not really a zip")
    report = ingest_paths("chat", [chats], vault)
    assert report.messages_added == 5
    assert [w for w in report.warnings if "photos.zip" in w and "skipped" in w]
    runs = tmp_path / "runs"
    write(runs, "session.jsonl", (
        '{"type":"user","sessionId":"s-1","uuid":"u1","timestamp":"2024-03-04T09:00:00Z",'
        '"message":{"role":"user","content":"fix the bug"}}\n'
        '{"type":"assistant","sessionId":"s-1","uuid":"u2","timestamp":"2024-03-04T09:00:05Z",'
        '"message":{"role":"assistant","content":[{"type":"text","text":"Done."}]}}\n'
    ))
    write(runs, "a-readme.txt", "just some notes\n")
    write(runs, "b-settings.json", '{"theme": "dark", "permissions": {"allow": []}}\n')
    agent = ingest_paths("agent", [runs], vault)
    assert agent.written == ["sources/chat/agent/s-1.md"] and agent.messages_added == 2
    assert {name for name in ("a-readme.txt", "b-settings.json") for w in agent.warnings if name in w and "skipped" in w} == {
        "a-readme.txt", "b-settings.json"
    }


# --- generic JSON --------------------------------------------------------------------------------


def test_a_generic_objects_messages_are_its_own_not_a_nested_arrays(tmp_path: Path, vault: Path) -> None:
    """The first `"messages": [` of the text was read, a nested one coming before the object's
    own: its messages were ingested instead of the file's."""
    export = write(tmp_path, "c.json", json.dumps({
        "platform": "x",
        "conversation": "c",
        "meta": {"messages": [{"author": "Z", "timestamp": "2024-01-01T00:00:00Z", "text": "wrong"}]},
        "messages": [
            {"author": "A", "timestamp": "2024-03-04T09:00:00Z", "text": "right one"},
            {"author": "B", "timestamp": "2024-03-04T09:01:00Z", "text": 7},
        ],
    }, indent=1))
    with pytest.raises(IngestError, match=r"line 1[0-9]: \"text\" must be a string"):
        ingest_paths("chat", [export], vault)  # (the line of the object's own second message)
    write(tmp_path, "c.json", export.read_text(encoding="utf-8").replace("7", '"right two"'))
    report = ingest_paths("chat", [export], vault)
    assert report.written == ["sources/chat/x/c/2024-03-04.md"]
    assert _note_texts(vault, "sources/chat/x/c/2024-03-04.md") == ["right one", "right two"]


def test_a_generic_id_given_to_two_messages_keeps_both(tmp_path: Path, vault: Path) -> None:
    """Two messages of one id that differ were one "already known", the second lost. The second
    is another message, kept as `1~2`, said; the same message listed twice stays one."""
    export = write(tmp_path, "team.json", json.dumps([
        {"id": "1", "author": "A", "timestamp": "2024-03-04T09:00:00Z", "text": "first"},
        {"id": "1", "author": "B", "timestamp": "2024-03-04T09:05:00Z", "text": "second"},
        {"id": "1", "author": "A", "timestamp": "2024-03-04T09:00:00Z", "text": "first"},
    ]))
    report = ingest_paths("chat", [export], vault)
    assert (report.messages_added, report.messages_known) == (2, 1)
    assert _note_texts(vault, "sources/chat/chat/team/2024-03-04.md") == ["first", "second"]
    assert report.warnings == [
        f"{export}: line 1: message id '1' is also the id of an earlier message that differs of conversation "
        "'team'; kept as message '1~2' (give each message an id of its own)"
    ]
    again = ingest_paths("chat", [export], vault)
    assert (again.written, again.messages_added) == ([], 0)


# --- LoCoMo -------------------------------------------------------------------------------------


def test_locomo_reads_a_folder_a_byte_order_mark_and_skips_an_empty_turn(tmp_path: Path, vault: Path) -> None:
    """`--format locomo` took a folder for a file ("Is a directory"), a file saved with a byte
    order mark was not JSON, and an empty turn was written as an empty callout."""
    sample = {
        "sample_id": "c1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": ""},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "hello"},
            ],
        },
        "qa": [],
    }
    folder = tmp_path / "samples"
    folder.mkdir()
    (folder / "s.json").write_bytes(b"\xef\xbb\xbf" + json.dumps([sample]).encode("utf-8"))
    [batch] = parse_locomo_paths([folder / "s.json"])
    assert [(m.message_id, m.text) for m in batch.messages] == [("D1:2", "hello")]
    report = ingest_paths("chat", [folder], vault, fmt="locomo")
    assert report.written == ["sources/chat/locomo/c1/session-1.md"] and report.messages_added == 1
    assert _note_texts(vault, "sources/chat/locomo/c1/session-1.md") == ["hello"]


# --- a note with a byte that is not UTF-8 ----------------------------------------------------------


def test_a_note_with_a_byte_that_is_not_utf8_keeps_its_messages_known(tmp_path: Path, vault: Path) -> None:
    """One stray byte made the note read as empty: its messages were unknown, and the next
    ingest wrote every one of them again to `<day>.2.md`. They are known; the note is never
    rewritten (the byte would be lost): a new message goes to the sibling, said."""
    export = write(tmp_path, "WhatsApp Chat with Order.txt", ONE_MINUTE)
    ingest_paths("chat", [export], vault)
    note = vault / "sources/chat/whatsapp/order/2024-03-14.md"
    raw = note.read_bytes().replace(b"bring wine?", b"bring wine\xff?")
    note.write_bytes(raw)
    again = ingest_paths("chat", [export], vault)
    assert (again.written, again.messages_added, again.messages_known) == ([], 0, 5)
    write(tmp_path, "WhatsApp Chat with Order.txt", ONE_MINUTE + "14/03/2024, 09:40 - Bob: ok\n")
    later = ingest_paths("chat", [export], vault)
    assert (later.written, later.messages_added) == (["sources/chat/whatsapp/order/2024-03-14.2.md"], 1)
    assert _note_texts(vault, "sources/chat/whatsapp/order/2024-03-14.2.md") == ["ok"]
    assert note.read_bytes() == raw
    assert [w for w in later.warnings if "2024-03-14.md: line" in w and "not UTF-8 text" in w]


def test_an_ingest_that_stops_on_a_file_says_what_was_said_of_it_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A generic JSON export cut short: its one unfinished line is left out with a warning, and
    the run then stops with "no messages in the file". The warnings of a run that stops are
    never printed, so the error carries the one about its file: the cause, and what to do."""
    vault = tmp_path / "vault"
    init_vault(vault)
    cut = write(
        tmp_path, "exports/cut.json", '{"messages": [{"author": "Ann", "text": "hi", "timestamp": "2024-05-01T09:00:00Z"}, '
    )
    code, _, err = run_main(capsys, "ingest", "chat", str(cut), "--vault", str(vault))
    assert code == 1
    assert f"{cut}: line 1: no messages in the file; line 1: the last line is not complete JSON" in err, err
    assert "ingest the file again once it is complete" in err, err
    assert not (vault / "sources" / "chat").exists()


# --- pasted lines dated ahead -----------------------------------------------------------------

GRANT = (
    "01/03/2024, 09:15 - Bob: Deadlines from the funder:\n"
    "14/03/2024, 17:00 - submissions close: upload the PDF\n"
    "20/03/2024, 12:00 - review panel: room 2\n"
    "01/03/2024, 09:16 - Alice: thanks!\n"
    "01/03/2024, 09:20 - Alice: I'll draft the budget today\n"
    "01/03/2024, 09:21 - Bob: 👍\n"
    "01/03/2024, 11:40 - Dana: I can review on the 12th\n"
)


def test_pasted_lines_dated_ahead_stay_in_their_message_and_swallow_nothing(tmp_path: Path, vault: Path) -> None:
    """A schedule pasted into a message, its lines starting with a later date and holding a
    colon ("14/03/2024, 17:00 - submissions close: upload the PDF"), made messages of made-up
    people ("submissions close", "review panel") on made-up days; dated after the chat's next
    messages, those then looked pasted from elsewhere, and Alice's and Dana's messages became
    lines of "review panel" and of Bob's 👍. The schedule's lines are lines of Bob's message."""
    [batch] = parse_whatsapp(write(tmp_path, "WhatsApp Chat with Grant Team.txt", GRANT))
    assert [(m.author, str(m.timestamp)[:16], m.text) for m in batch.messages] == [
        ("Bob", "2024-03-01 09:15", "Deadlines from the funder:\n14/03/2024, 17:00 - submissions close: upload the PDF\n"
                                       "20/03/2024, 12:00 - review panel: room 2"),
        ("Alice", "2024-03-01 09:16", "thanks!"),
        ("Alice", "2024-03-01 09:20", "I'll draft the budget today"),
        ("Bob", "2024-03-01 09:21", "👍"),
        ("Dana", "2024-03-01 11:40", "I can review on the 12th"),
    ]


def test_pasted_lines_dated_ahead_same_notes_twice_and_a_newer_export_adds_only_its_new(tmp_path: Path) -> None:
    older = write(tmp_path, "old/WhatsApp Chat with Grant Team.txt", GRANT)
    newer = write(tmp_path, "new/WhatsApp Chat with Grant Team.txt", GRANT + (
        "25/03/2024, 10:00 - Alice: budget sent\n"
        "25/03/2024, 10:05 - Dana: got it\n"
    ))
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    first = ingest_paths("chat", [older], a)
    ingest_paths("chat", [older], b)
    assert first.written == ["sources/chat/whatsapp/grant-team/2024-03-01.md"]
    assert {p: (a / p).read_bytes() for p in first.written} == {p: (b / p).read_bytes() for p in first.written}
    again = ingest_paths("chat", [older], a)
    assert (again.messages_added, again.written) == (0, [])
    later = ingest_paths("chat", [newer], a)
    assert (later.messages_added, later.written) == (2, ["sources/chat/whatsapp/grant-team/2024-03-25.md"])
    assert _note_texts(a, "sources/chat/whatsapp/grant-team/2024-03-01.md").count("I'll draft the budget today") == 1


def test_a_pasted_line_dated_ahead_below_a_pasted_line_without_an_author_stays_in_the_message(tmp_path: Path) -> None:
    """The schedule's line above has no author ("04/03/2024, 09:30 - registration opens"): the
    line dated ahead went on as a message of "submissions close" on 5 March, Alice's messages
    below it folded in as lines pasted from elsewhere."""
    [batch] = parse_whatsapp(write(tmp_path, "WhatsApp Chat with Grant Team.txt", (
        "01/03/2024, 09:15 - Bob: Deadlines from the funder:\n"
        "04/03/2024, 09:30 - registration opens\n"
        "05/03/2024, 17:00 - submissions close: upload the PDF\n"
        "01/03/2024, 09:16 - Alice: thanks!\n"
        "01/03/2024, 09:21 - Bob: 👍\n"
    )))
    assert [(m.author, m.text) for m in batch.messages] == [
        ("Bob", "Deadlines from the funder:\n04/03/2024, 09:30 - registration opens\n"
                "05/03/2024, 17:00 - submissions close: upload the PDF"),
        ("Alice", "thanks!"),
        ("Bob", "👍"),
    ]


def test_a_member_who_writes_once_followed_by_a_message_sent_offline_keeps_her_message(tmp_path: Path) -> None:
    """Carol writes once, at 14:00; Bob's message written offline at 11:00 arrives after it, and
    the chat goes on at 15:05. Carol's line was more than an hour after both the line above it
    and the next one, so it was taken for a pasted line dated ahead and made a line of Bob's
    "maybe". The chat reaches her time again right after Bob's late message: hers is a message."""
    [batch] = parse_whatsapp(write(tmp_path, "WhatsApp Chat with Friends.txt", (
        "01/03/2024, 10:00 - Alice: anyone around later?\n"
        "01/03/2024, 10:05 - Bob: maybe\n"
        "01/03/2024, 14:00 - Carol: I'm in town at 6, see you there\n"
        "01/03/2024, 11:00 - Bob: (written on the train, offline)\n"
        "01/03/2024, 15:05 - Alice: great\n"
        "01/03/2024, 15:10 - Bob: ok\n"
    )))
    assert [(m.author, str(m.timestamp)[11:16], m.text) for m in batch.messages] == [
        ("Alice", "10:00", "anyone around later?"),
        ("Bob", "10:05", "maybe"),
        ("Carol", "14:00", "I'm in town at 6, see you there"),
        ("Bob", "11:00", "(written on the train, offline)"),
        ("Alice", "15:05", "great"),
        ("Bob", "15:10", "ok"),
    ]


def test_a_line_pasted_ahead_in_a_chat_with_yourself_stays_in_its_message(tmp_path: Path) -> None:
    """Only you write in a chat with yourself: the lines below a pasted schedule are one
    author's, as messages sent offline are, yet they are the chat's days, not a few messages
    delivered late, and the line stays a line of the message it was pasted into."""
    notes = "".join(f"{day:02d}/03/2024, 09:00 - Me: note {day}-{n}\n" for day in range(2, 13) for n in range(2))
    [batch] = parse_whatsapp(write(tmp_path, "WhatsApp Chat with Me.txt", (
        "01/03/2024, 09:15 - Me: Conference:\n"
        "14/03/2024, 17:00 - keynote: hall A\n"
        + notes
        + "15/03/2024, 10:00 - Me: keynote was good\n"
    )))
    assert batch.messages[0].text == "Conference:\n14/03/2024, 17:00 - keynote: hall A"
    assert {m.author for m in batch.messages} == {"Me"}
    assert len(batch.messages) == 1 + 22 + 1
