"""A calendar invitation whose only rendering is its `text/calendar` part: its note says the
event (title, time, place, organizer, description), not just the attachments line."""

from __future__ import annotations

from pathlib import Path

from tests.mailkit import assert_written_before_stays_known
from vaultmind.ingest.email import parse_email_paths_with_report
from vaultmind.ingest.invites import invitations_text
from vaultmind.ingest.mime import parse_message

CALENDAR = """BEGIN:VCALENDAR\r
METHOD:REQUEST\r
BEGIN:VEVENT\r
DTSTART:20240307T090000Z\r
DTEND:20240307T100000Z\r
SUMMARY:Budget review\r
LOCATION:Room 4.12\r
ORGANIZER;CN="Alice Chen":mailto:alice@example.com\r
DESCRIPTION:Bring the Q1 numbers\\, and the\\nforecast.\r
BEGIN:VALARM\r
DESCRIPTION:Reminder\r
END:VALARM\r
END:VEVENT\r
END:VCALENDAR\r
"""


def invitation(calendar: str = CALENDAR, mid: str = "Message-ID: <inv1@example.com>\n") -> str:
    return (
        "From: Alice <alice@example.com>\nTo: Bob <bob@example.com>\nSubject: Invitation: Budget review\n"
        "Date: Mon, 04 Mar 2024 10:00:00 +0000\n" + mid + "MIME-Version: 1.0\n"
        'Content-Type: multipart/mixed; boundary="M"\n\n--M\nContent-Type: multipart/alternative; boundary="A"\n\n'
        "--A\nContent-Type: text/calendar; charset=UTF-8; method=REQUEST\n\n" + calendar + "\n--A--\n\n"
        '--M\nContent-Type: application/ics; name="invite.ics"\nContent-Disposition: attachment; filename="invite.ics"\n\n'
        + calendar + "\n--M--\n"
    )


def test_an_invitation_with_no_other_text_shows_its_event() -> None:
    parsed = parse_message(invitation().encode())
    assert parsed.body == (
        "[invitation] Budget review\n"
        "When: 2024-03-07 09:00–10:00 UTC\n"
        "Where: Room 4.12\n"
        "Organizer: Alice Chen <alice@example.com>\n"
        "Bring the Q1 numbers, and the\nforecast."
    )  # (the same event in the attached .ics once; the alarm's description is not the event's)
    assert [a.filename for a in parsed.attachments] == ["unnamed.ics", "invite.ics"]
    assert parsed.body_before == ""  # what an earlier vaultmind read: a note written then holds it


def test_zones_folded_lines_all_day_and_cancelled_events() -> None:
    calendar = (
        "BEGIN:VCALENDAR\nMETHOD:CANCEL\nBEGIN:VEVENT\nDTSTART;TZID=Europe/Berlin:20240307T100000\n"
        "DTEND;TZID=Europe/Berlin:20240307T113000\nSUMMARY:Long title that the calendar\n  folds\nEND:VEVENT\n"
        "BEGIN:VEVENT\nDTSTART;VALUE=DATE:20240310\nSUMMARY:Offsite\nEND:VEVENT\n"
        "BEGIN:VEVENT\nDTSTART;TZID=W. Europe Standard Time:20240311T090000\nSUMMARY:Standup\nEND:VEVENT\nEND:VCALENDAR\n"
    )
    assert invitations_text([calendar]) == (
        "[invitation cancelled] Long title that the calendar folds\nWhen: 2024-03-07 09:00–10:30 UTC\n\n"
        "[invitation cancelled] Offsite\nWhen: 2024-03-10\n\n"
        "[invitation cancelled] Standup\nWhen: 2024-03-11 09:00 (W. Europe Standard Time)"
    )
    assert invitations_text(["not a calendar"]) == "" and invitations_text(["BEGIN:VEVENT\nEND:VEVENT"]) == ""


def test_an_invitation_with_text_keeps_only_its_text() -> None:
    raw = invitation().replace(
        "--A\nContent-Type: text/calendar", "--A\nContent-Type: text/plain\n\nBudget review, Thursday.\n\n--A\nContent-Type: text/calendar"
    )
    assert parse_message(raw.encode()).body == "Budget review, Thursday."


def test_a_note_written_before_invitations_were_read_is_kept_and_known(tmp_path: Path, vault: Path) -> None:
    """A message without a Message-ID keeps its id (hashed from the text read then), and its
    note, written with the attachments line alone, is known and not rewritten."""
    path = tmp_path / "invite.eml"
    path.write_text(invitation(mid=""), encoding="utf-8")
    (batch,), _ = parse_email_paths_with_report([path])
    assert "[invitation] Budget review" in batch.messages[0].text
    ((message_id, before),) = batch.earlier_texts
    assert before.startswith("Attachments: unnamed.ics") and message_id == batch.messages[0].message_id
    assert_written_before_stays_known(vault, batch, before)
