"""A WhatsApp chat exported again in another form than the export its notes came from: a contact
saved since (a number becomes a name, in the messages and in a chat of two's file name), an
iPhone's times with seconds after an Android's without (or the other way), the phone set to
another language. The messages the notes hold are known (their ids and text kept); only the
new ones are written, and the report says what was taken for what."""

from __future__ import annotations

import random
import time
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import snapshot_files, write
from vaultmind.ingest import held as held_notes
from vaultmind.ingest.detect import ingest_paths
from vaultmind.ingest.held import read_existing
from vaultmind.ingest.model import SourceBatch
from vaultmind.ingest.reexport import author_renames
from vaultmind.markdown.render import Message, SourceMeta

GROUP = "WhatsApp Chat with Climbing Group.txt"
GROUP_JAN = """\
04/03/2024, 09:15 - Alice: Who's in for Saturday?
04/03/2024, 09:16 - +49 170 1234567: Me! I'll bring the rope.
04/03/2024, 09:17 - +49 170 1234567: And the quickdraws.
04/03/2024, 09:20 - Alice: Great
"""


def _ingest(vault: Path, folder: Path) -> tuple[int, int, list[str]]:
    report = ingest_paths("chat", [folder], vault, date_order="dmy")
    return report.messages_added, report.messages_known, report.warnings


def _held(vault: Path, rel: str) -> list[tuple[str, str, str, str]]:
    """(id, author, UTC time, text) of the messages of a note, in its order."""
    note = read_existing(vault, rel)
    assert note is not None, rel
    return [(i, m.author, str(m.timestamp), m.text) for i, m in note.messages().items()]


def _chat_notes(vault: Path) -> list[str]:
    return sorted(p for p in snapshot_files(vault) if p.startswith("sources/chat/"))


def test_contact_saved_between_exports_of_a_group(tmp_path: Path, vault: Path) -> None:
    """Carla's number, then her name after she was saved as a contact: her messages were all
    written a second time under the name. Now they are known, the note keeps them as they were
    (ids, author), the one new message is written under her name, and the report says so."""
    write(tmp_path / "jan", GROUP, GROUP_JAN)
    write(tmp_path / "mar", GROUP, GROUP_JAN.replace("+49 170 1234567", "Carla Ruiz") + "05/03/2024, 18:00 - Carla Ruiz: Forecast says sun\n")
    assert _ingest(vault, tmp_path / "jan")[0] == 4
    day = "sources/chat/whatsapp/climbing-group/2024-03-04.md"
    before = _held(vault, day)
    added, known, warnings = _ingest(vault, tmp_path / "mar")
    assert (added, known) == (1, 4)
    assert _held(vault, day) == before
    assert [m[1] for m in _held(vault, "sources/chat/whatsapp/climbing-group/2024-03-05.md")] == ["Carla Ruiz"]
    assert any("Carla Ruiz is the +49 170 1234567 of the earlier export" in w for w in warnings), warnings
    assert _ingest(vault, tmp_path / "mar") == (0, 5, [])  # again: nothing new, nothing said


def test_each_note_is_parsed_once_when_authors_were_renamed(tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Matching renamed authors reads the messages of every note the export's days have, and
    planning the export reads them again: the note's messages are parsed once (in a large group
    that was a tenth of the ingest's time)."""
    parsed: list[str] = []

    def counted(body: str, **options: Any) -> list[Any]:
        parsed.append(body)
        return real(body, **options)

    real = held_notes.message_leaves
    write(tmp_path / "jan", GROUP, GROUP_JAN)
    write(tmp_path / "mar", GROUP, GROUP_JAN.replace("+49 170 1234567", "Carla Ruiz") + "04/03/2024, 18:00 - Carla Ruiz: Forecast says sun\n")
    _ingest(vault, tmp_path / "jan")
    monkeypatch.setattr(held_notes, "message_leaves", counted)
    assert _ingest(vault, tmp_path / "mar")[:2] == (1, 4)
    assert len(parsed) == len(set(parsed)) == 1


def test_two_people_are_not_taken_for_one(tmp_path: Path, vault: Path) -> None:
    """A rename needs strong evidence: one message alike is not enough in a group, and a held
    author whose message in the export's span is not found again under the new name (someone
    who left, whose messages the newer export lacks) is no one's earlier name."""
    write(tmp_path / "jan", GROUP, "04/03/2024, 09:15 - Alice: Hi\n04/03/2024, 09:16 - Dan: Hi all\n")
    write(tmp_path / "mar", GROUP, "04/03/2024, 09:15 - Alice: Hi\n04/03/2024, 09:16 - Eve: Hi all\n")
    _ingest(vault, tmp_path / "jan")
    added, _, warnings = _ingest(vault, tmp_path / "mar")
    assert added == 1 and not any("earlier export" in w for w in warnings)
    write(tmp_path / "jan2", "WhatsApp Chat with Crew.txt", GROUP_JAN.replace("Great\n", "Great\n04/03/2024, 09:21 - +49 170 1234567: See you\n04/03/2024, 09:22 - Alice: Bye\n"))
    write(tmp_path / "mar2", "WhatsApp Chat with Crew.txt", GROUP_JAN.replace("+49 170 1234567", "Carla Ruiz") + "04/03/2024, 09:22 - Alice: Bye\n")
    _ingest(vault, tmp_path / "jan2")
    added, _, warnings = _ingest(vault, tmp_path / "mar2")
    assert added == 2 and not any("earlier export" in w for w in warnings)


def test_chat_of_two_renamed_with_its_contact(tmp_path: Path, vault: Path) -> None:
    """The chat's file is named after the contact: "with +49 170 1234567", then "with Carla
    Ruiz". The whole chat was written again in a second folder; now the new export joins the
    chat's notes, and only its new message is written."""
    one = "04/03/2024, 09:15 - You: Hi, is the bike still for sale?\n04/03/2024, 09:16 - +49 170 1234567: Yes, 120 EUR.\n"
    write(tmp_path / "jan", "WhatsApp Chat with +49 170 1234567.txt", one)
    write(
        tmp_path / "mar",
        "WhatsApp Chat with Carla Ruiz.txt",
        one.replace("+49 170 1234567", "Carla Ruiz") + "05/03/2024, 18:00 - Carla Ruiz: Still free?\n",
    )
    _ingest(vault, tmp_path / "jan")
    day = "sources/chat/whatsapp/49-170-1234567/2024-03-04.md"
    before = _held(vault, day)
    added, known, warnings = _ingest(vault, tmp_path / "mar")
    assert (added, known) == (1, 2)
    assert _chat_notes(vault) == [day, "sources/chat/whatsapp/49-170-1234567/2024-03-05.md"]
    assert _held(vault, day) == before
    assert any("the chat 'Carla Ruiz' is the chat '+49 170 1234567'" in w for w in warnings), warnings


def test_chat_of_two_not_joined_to_another_contacts_chat(tmp_path: Path, vault: Path) -> None:
    """A new chat that shares a message with another contact's chat (the same greeting sent to
    both in one minute) is its own chat."""
    write(tmp_path / "a", "WhatsApp Chat with +49 170 1234567.txt", "01/01/2024, 00:00 - You: Happy new year!\n01/01/2024, 00:01 - +49 170 1234567: You too!\n")
    write(tmp_path / "b", "WhatsApp Chat with Bob.txt", "01/01/2024, 00:00 - You: Happy new year!\n01/01/2024, 00:02 - Bob: Thanks, same to you\n")
    _ingest(vault, tmp_path / "a")
    added, _, _ = _ingest(vault, tmp_path / "b")
    assert added == 2 and any(p.startswith("sources/chat/whatsapp/bob/") for p in _chat_notes(vault))


ANDROID = "04.03.24, 09:15 - Alice: Good morning!\n04.03.24, 09:16 - Bob: Morning. Dinner tonight?\n04.03.24, 09:16 - Bob: ok\n"
IOS = "[04.03.24, 09:15:12] Alice: Good morning!\r\n[04.03.24, 09:16:40] Bob: Morning. Dinner tonight?\r\n[04.03.24, 09:16:50] Bob: ok\r\n"


def _ios_zip(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / "WhatsApp Chat - Family.zip", "w") as archive:
        archive.writestr("_chat.txt", text)
    return folder


def test_android_then_iphone_export(tmp_path: Path, vault: Path) -> None:
    """An Android export (no seconds), then the iPhone's of the same chat (seconds): each message
    was written twice. Now they are known by author, text and minute, the note's ids kept."""
    write(tmp_path / "android", "WhatsApp Chat with Family.txt", ANDROID)
    _ios_zip(tmp_path / "ios", IOS + "[05.03.24, 10:00:00] Alice: new on iOS\r\n")
    _ingest(vault, tmp_path / "android")
    day = "sources/chat/whatsapp/family/2024-03-04.md"
    before = _held(vault, day)
    added, known, _ = _ingest(vault, tmp_path / "ios")
    assert (added, known) == (1, 3)
    assert _held(vault, day) == before


def test_iphone_then_android_export(tmp_path: Path, vault: Path) -> None:
    """The other way round: the note's times have seconds, the export's none."""
    _ios_zip(tmp_path / "ios", IOS)
    write(tmp_path / "android", "WhatsApp Chat with Family.txt", ANDROID + "05.03.24, 10:00 - Alice: new on Android\n")
    _ingest(vault, tmp_path / "ios")
    added, known, _ = _ingest(vault, tmp_path / "android")
    assert (added, known) == (1, 3)


def test_two_iphone_messages_of_one_minute_stay_two(tmp_path: Path, vault: Path) -> None:
    """Exports that both write seconds are compared by their seconds: a second "ok" of the same
    minute in a later export is a new message."""
    _ios_zip(tmp_path / "one", "[04.03.24, 09:16:10] Bob: ok\r\n")
    _ios_zip(tmp_path / "two", "[04.03.24, 09:16:10] Bob: ok\r\n[04.03.24, 09:16:50] Bob: ok\r\n")
    _ingest(vault, tmp_path / "one")
    assert _ingest(vault, tmp_path / "two")[:2] == (1, 1)


def test_phone_language_changed_between_exports(tmp_path: Path, vault: Path) -> None:
    """English, then German: "<Medien ausgeschlossen>" is the "<Media omitted>" the note holds,
    "Diese Nachricht wurde gelöscht." its "This message was deleted"; the note keeps its text.
    Two media of one minute stay two."""
    write(
        tmp_path / "en",
        "WhatsApp Chat with Family.txt",
        "04/03/2024, 09:15 - Alice: Good morning!\n04/03/2024, 09:16 - Bob: <Media omitted>\n"
        "04/03/2024, 09:16 - Bob: <Media omitted>\n04/03/2024, 09:17 - Alice: This message was deleted\n",
    )
    write(
        tmp_path / "de",
        "WhatsApp Chat mit Family.txt",
        "04.03.24, 09:15 - Alice: Good morning!\n04.03.24, 09:16 - Bob: <Medien ausgeschlossen>\n"
        "04.03.24, 09:16 - Bob: <Medien ausgeschlossen>\n04.03.24, 09:16 - Bob: <Medien ausgeschlossen>\n"
        "04.03.24, 09:17 - Alice: Diese Nachricht wurde gelöscht.\n",
    )
    _ingest(vault, tmp_path / "en")
    day = "sources/chat/whatsapp/family/2024-03-04.md"
    before = _held(vault, day)
    added, known, _ = _ingest(vault, tmp_path / "de")
    assert (added, known) == (1, 4)  # the third media of 09:16 is new
    after = _held(vault, day)
    assert after[: len(before)] == before or set(before) <= set(after)
    assert [m[3] for m in after].count("<Medien ausgeschlossen>") == 1


@pytest.mark.slow
def test_a_large_group_with_every_contact_renamed_is_matched_in_time() -> None:
    """A 20,000-message group of 150 people, first exported from a phone that showed numbers,
    then from one that shows names: each earlier name is tried against the names that wrote its
    first message, not against every author of the group (that took minutes)."""
    start, people = datetime(2024, 1, 1, tzinfo=UTC), 150
    held, incoming = [], []
    for i in range(20_000):
        person, at, text = i * 7 % people, start + timedelta(minutes=7 * i), f"message {i} about the trip"
        held.append(Message(f"h-{2 * i:016x}", f"+49 170 {person:07d}", at, text))
        incoming.append(Message(f"h-{2 * i + 1:016x}", f"Person {person:03d}", at, text))
    batch = SourceBatch(SourceMeta("chat", "whatsapp:Trip", "whatsapp/trip", "Trip"), tuple(incoming))
    began = time.thread_time()  # this thread's work, not the time other processes of a loaded host took
    renames = author_renames(held, {m.message_id for m in held}, batch, None)
    assert time.thread_time() - began < 30
    assert renames == {m.author: (m.author.replace("+49 170 0000", "Person "), 133 + (i < 50)) for i, m in enumerate(held[:people])}


def _group_export(messages: int, people: int, named: bool, extra: int = 0) -> str:
    """A large group's Android export, the same every time: a few people write most of it, one
    message in four is short ("ok", "<Media omitted>", the same text of several people in one
    minute), some of two lines; each person writes at least twice. Its authors are phone
    numbers, or the names the contacts were saved under."""
    rng = random.Random(52)
    words = "trip rope rain bus tickets dinner map tent camp lake summit coffee seats price photo late early meet trail".split()
    short = ("ok", "haha", "yes", "👍", "<Media omitted>", "This message was deleted", "same")
    weights = [1 / (rank + 1) ** 0.8 for rank in range(people)]
    at, lines = datetime(2023, 1, 2, 8, 0), []
    for i in range(messages + extra):
        at += timedelta(seconds=rng.choice((5, 20, 40, 90, 300, 1800, 21600)))
        person = i % people if i < 2 * people else rng.choices(range(people), weights)[0]
        who = f"Person {person:03d}" if named else f"+49 170 {person * 7919 % 10**7:07d}"
        text = rng.choice(short) if rng.random() < 0.25 else " ".join(rng.choices(words, k=rng.randrange(3, 12))).capitalize()
        text += "\n" + " ".join(rng.choices(words, k=5)) if rng.random() < 0.03 else ""
        lines.append(f"{at:%d/%m/%Y, %H:%M} - {who}: {text}\n")
    return "".join(lines)


@pytest.mark.slow
def test_a_large_group_export_with_every_contact_renamed_is_ingested_again_in_time(tmp_path: Path, vault: Path) -> None:
    """A 10,000-message group of 200 people, first exported from a phone that showed numbers,
    then (with more messages) from one that shows names, each ingested as the command line
    does: every person's rename is found and said, only the new messages are written, and the
    second ingest costs seconds of the processor (trying every author of the group for every
    renamed one took minutes). Processor time, as the machine's load does not count in it."""
    messages, people, extra = 10_000, 200, 300
    write(tmp_path / "numbers", "WhatsApp Chat with Alpine Club.txt", _group_export(messages, people, named=False))
    write(tmp_path / "names", "WhatsApp Chat with Alpine Club.txt", _group_export(messages, people, named=True, extra=extra))
    assert _ingest(vault, tmp_path / "numbers")[:2] == (messages, 0)
    began = time.process_time()
    added, known, warnings = _ingest(vault, tmp_path / "names")
    assert time.process_time() - began < 20
    assert (added, known) == (extra, messages)
    renamed = {w.split(": ", 1)[1].split(" of the earlier export")[0] for w in warnings if "of the earlier export" in w}
    assert renamed == {f"Person {p:03d} is the +49 170 {p * 7919 % 10**7:07d}" for p in range(people)}
