"""Chat adapters on small exports written here, plus the reference samples when present."""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EVALDATA, snapshot_files, write
from vaultmind.ingest.chat_formats import detect_chat_format
from vaultmind.ingest.chat_generic import parse_generic
from vaultmind.ingest.chatgpt import parse_chatgpt
from vaultmind.ingest.common import MessageIds, epoch_to_utc
from vaultmind.ingest.detect import ingest_paths
from vaultmind.ingest.errors import IngestError
from vaultmind.ingest.held import message_ids
from vaultmind.ingest.model import SourceBatch
from vaultmind.ingest.signal import parse_signal
from vaultmind.ingest.slack import parse_slack
from vaultmind.ingest.telegram import parse_telegram
from vaultmind.ingest.whatsapp import parse_whatsapp
from vaultmind.ingest.writer import write_batches
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.markdown.note import parse_note
from vaultmind.markdown.render import Message
from vaultmind.zones import zone

CHAT_EXPORTS = EVALDATA / "chat-exports"


def texts(batches: list[SourceBatch]) -> list[tuple[str, str, str]]:
    return [(m.author, str(m.timestamp)[:19], m.text) for b in batches for m in b.messages]


def only(batches: list[SourceBatch]) -> tuple[Message, ...]:
    assert len(batches) == 1
    return batches[0].messages


# --- generic ----------------------------------------------------------------------------------

GENERIC = [
    {"id": "m1", "author": "Alice", "timestamp": "2024-03-04T09:00:00Z", "text": "Budget?"},
    {
        "id": 2,
        "author": "Bob",
        "timestamp": 1709543110,
        "text": "Yes",
        "thread": "m1",
        "attachments": ["q3.xlsx"],
    },
    {"author": "Alice", "timestamp": "2024-03-04T10:00:00+01:00", "text": "ok", "source_ref": "https://x/3"},
    {"author": "Alice", "timestamp": "2024-03-04T10:00:00+01:00", "text": "ok"},
    {"author": "Bob", "timestamp": "2024-03-05T08:00:00", "text": ""},
]


def test_generic_array_object_and_jsonl(tmp_path: Path) -> None:
    array = write(tmp_path, "team.json", json.dumps(GENERIC, indent=2))
    batches = parse_generic(array)
    messages = only(batches)
    assert batches[0].meta.source_id == "chat:team" and batches[0].meta.scope == "chat/team"
    assert [m.message_id for m in messages[:2]] == ["m1", "2"]
    assert messages[1].text == "Yes\n[attachment: q3.xlsx]"
    assert messages[1].source_ref == "chat://chat/team/2?thread=m1"
    assert messages[2].timestamp == epoch_to_utc(1709542800) and messages[2].source_ref == "https://x/3"
    # two identical messages keep two distinct, deterministic ids; the empty one is skipped
    assert len(messages) == 4 and messages[2].message_id != messages[3].message_id
    assert messages[2].message_id.startswith("h-")

    obj = write(
        tmp_path, "obj.json", json.dumps({"platform": "irc", "conversation": "team", "messages": GENERIC})
    )
    again = parse_generic(obj)
    assert again[0].meta.source_id == "irc:team"
    assert [m.message_id for m in only(again)] == [m.message_id for m in messages]

    lines = write(tmp_path, "team.jsonl", "\n".join(json.dumps(m) for m in GENERIC) + "\n")
    assert [m.message_id for m in only(parse_generic(lines))] == [m.message_id for m in messages]


@pytest.mark.parametrize(
    ("kind", "line"),
    [
        ("chat", '{{"author": "Alice", "timestamp": "{}", "text": "The ferry leaves at nine"}}'),
        ("agent", '{{"role": "user", "timestamp": "{}", "content": "When does the ferry leave?"}}'),
    ],
)
def test_generic_chats_and_agent_transcripts_say_the_zone_of_their_local_times(
    tmp_path: Path, kind: str, line: str
) -> None:
    """A generic chat's or an agent transcript's timestamp without a zone is read in the run's
    zone (`--tz`, else UTC), as a WhatsApp export's is, but the ingest never said which; one
    with an offset or `Z` is no local time, and nothing is said of it."""
    said = []
    for name, stamp, tz in [
        ("local", "2024-03-04T09:00:00", None),
        ("berlin", "2024-03-05T09:00:00", "Europe/Berlin"),
        ("zoned", "2024-03-06T09:00:00+01:00", None),
        ("utc", "2024-03-07T09:00:00Z", None),
    ]:
        path = write(tmp_path, f"{name}.jsonl", line.format(stamp) + "\n")
        report = ingest_paths(kind, [path], tmp_path / f"vault-{name}", fmt="generic" if kind == "chat" else "auto", tz=tz)
        assert report.messages_added == 1
        said.append((report.local_zone, report.local_zone_named))
    assert said == [("UTC", False), ("Europe/Berlin", True), (None, False), (None, False)]


def test_generic_errors_name_the_line(tmp_path: Path) -> None:
    bad = [*GENERIC[:2], {"id": "x", "timestamp": "2024-03-04T09:00:00Z", "text": "no author"}]
    path = write(tmp_path, "bad.json", json.dumps(bad, indent=2))
    with pytest.raises(IngestError) as info:
        parse_generic(path)
    assert info.value.path == str(path) and "line 18" in str(info.value) and "author" in str(info.value)

    path = write(
        tmp_path,
        "bad.jsonl",
        json.dumps(GENERIC[0]) + "\n" + '{"author": "A", "timestamp": "yesterday", "text": "x"}\n',
    )
    with pytest.raises(IngestError, match="line 2: timestamp"):
        parse_generic(path)

    path = write(tmp_path, "broken.jsonl", json.dumps(GENERIC[0]) + "\n{oops\n")
    with pytest.raises(IngestError, match="line 2: invalid JSON"):
        parse_generic(path)

    in_object = {"conversation": "c", "messages": [GENERIC[0], {"author": "A", "text": "x"}]}
    path = write(tmp_path, "obj.json", json.dumps(in_object, indent=1))
    with pytest.raises(IngestError, match='line 10: message has no "timestamp"'):
        parse_generic(path)


# --- Slack ----------------------------------------------------------------------------------


def slack_export(root: Path) -> Path:
    users = [
        {"id": "U1", "team_id": "T9", "name": "alice", "profile": {"real_name": "Alice Chen"}},
        {"id": "U2", "team_id": "T9", "name": "bob", "real_name": "Bob Stone", "profile": {}},
    ]
    write(root, "users.json", json.dumps(users))
    write(root, "channels.json", json.dumps([{"id": "C1", "name": "general", "members": ["U1", "U2"]}]))
    write(root, "groups.json", "[]")
    write(root, "mpims.json", "[]")
    write(root, "dms.json", json.dumps([{"id": "D1", "members": ["U2", "U1"]}]))
    day1 = [
        {
            "type": "message",
            "subtype": "channel_join",
            "user": "U2",
            "text": "<@U2> has joined",
            "ts": "1709542700.000050",
        },
        {
            "type": "message",
            "user": "U1",
            "text": "Budget? <@U2> see <https://x.example/q3|the sheet> &amp; <#C1|general>",
            "ts": "1709542800.000100",
            "thread_ts": "1709542800.000100",
            "reply_count": 1,
        },
        {
            "type": "message",
            "user": "U2",
            "text": "On it",
            "ts": "1709543110.000200",
            "thread_ts": "1709542800.000100",
            "parent_user_id": "U1",
        },
        {
            "type": "message",
            "user": "U2",
            "ts": "1709543200.000300",
            "files": [{"id": "F1", "title": "Q3 plan"}],
        },
        {
            "type": "message",
            "subtype": "tombstone",
            "hidden": True,
            "text": "This message was deleted.",
            "ts": "1709543300.000400",
        },
        {
            "type": "message",
            "subtype": "bot_message",
            "username": "deploybot",
            "text": "deployed",
            "ts": "1709543400.000500",
        },
    ]
    write(root, "general/2024-03-04.json", json.dumps(day1, indent=2))
    write(
        root,
        "D1/2024-03-05.json",
        json.dumps([{"type": "message", "user": "U1", "text": "hi Bob", "ts": "1709629200.000000"}]),
    )
    return root


def test_slack_export_folder(tmp_path: Path) -> None:
    batches = parse_slack(slack_export(tmp_path / "export"))
    assert [b.meta.scope for b in batches] == ["slack/T9/dm-Alice Chen-Bob Stone", "slack/T9/general"]
    dm, general = batches
    assert dm.meta.title == "DM Alice Chen, Bob Stone" and dm.meta.source_id == "slack:T9/D1"
    assert general.meta.source_id == "slack:T9/C1" and general.meta.title == "#general"
    got = [(m.message_id, m.author, m.text, m.source_ref) for m in general.messages]
    assert got == [
        (
            "1709542800.000100",
            "Alice Chen",
            "Budget? @Bob Stone see [the sheet](https://x.example/q3) & #general",
            "slack://archives/C1/p1709542800000100",
        ),
        (
            "1709543110.000200",
            "Bob Stone",
            "On it",
            "slack://archives/C1/p1709543110000200?thread_ts=1709542800.000100",
        ),
        ("1709543200.000300", "Bob Stone", "[file: Q3 plan]", "slack://archives/C1/p1709543200000300"),
        ("1709543400.000500", "deploybot", "deployed", "slack://archives/C1/p1709543400000500"),
    ]
    assert general.messages[0].timestamp == epoch_to_utc("1709542800.000100")
    assert str(general.messages[0].timestamp) == "2024-03-04 09:00:00.000100+00:00"


def test_a_slack_workspace_without_team_ids_is_one_source_whatever_its_export_is_called(tmp_path: Path) -> None:
    """users.json without `team_id` (slackdump, older exports): the messages' own `team`, else
    the export's name without Slack's date tail — it had been the folder's name, so next
    month's export ("… Slack export Jul 1 2024 - Jul 31 2024") was another workspace."""
    ids = []
    for name, team in (("June", "T777"), ("July", "T777"), ("Acme Slack export Jun 1 2024 - Jun 30 2024", None),
                       ("Acme Slack export Jul 1 2024 - Jul 31 2024", None)):
        root = slack_export(tmp_path / name)
        users = json.loads((root / "users.json").read_text(encoding="utf-8"))
        write(root, "users.json", json.dumps([{k: v for k, v in u.items() if k != "team_id"} for u in users]))
        day = json.loads((root / "general/2024-03-04.json").read_text(encoding="utf-8"))
        write(root, "general/2024-03-04.json", json.dumps([{**m, "team": team} if team else m for m in day]))
        ids.append(sorted(b.meta.source_id for b in parse_slack(root)))
    assert ids[0] == ids[1] == ["slack:T777/C1", "slack:T777/D1"], "the messages' team"
    assert ids[2] == ids[3] == ["slack:Acme/C1", "slack:Acme/D1"], "the export's name without its dates"


def test_a_slack_workspace_written_under_its_export_name_is_found_again(tmp_path: Path, vault: Path) -> None:
    """Written when a workspace without team ids was named by its export's folder: the same export
    again, now named by its messages' team, adds nothing."""

    from vaultmind.ingest.writer import write_batches

    root = slack_export(tmp_path / "acme-export")
    users = json.loads((root / "users.json").read_text(encoding="utf-8"))
    write(root, "users.json", json.dumps([{k: v for k, v in u.items() if k != "team_id"} for u in users]))
    day = json.loads((root / "general/2024-03-04.json").read_text(encoding="utf-8"))
    write(root, "general/2024-03-04.json", json.dumps([{**m, "team": "T777"} for m in day]))
    batches = parse_slack(root)
    assert {b.meta.source_id for b in batches} == {"slack:T777/C1", "slack:T777/D1"}
    before = [  # as an earlier vaultmind wrote them
        replace(b, meta=replace(b.meta, source_id=b.legacy_source_id, scope=b.legacy_scope), legacy_source_id=None)
        for b in batches
    ]
    assert {b.meta.source_id for b in before} == {"slack:acme-export/C1", "slack:acme-export/D1"}
    write_batches(vault, before)
    report = ingest_paths("chat", [root], vault)
    assert (report.messages_added, report.written) == (0, [])
    # next month's export, under the team's id; then the first export once more: nothing new
    july = tmp_path / "acme-july"
    july.mkdir()
    for name in ("users.json", "channels.json", "groups.json", "mpims.json", "dms.json"):
        (july / name).write_bytes((root / name).read_bytes())
    later = [{**m, "ts": f"{float(m['ts']) + 30 * 86400:.6f}"} for m in day if m.get("type") == "message" and not m.get("subtype")]
    write(july, "general/2024-04-03.json", json.dumps([{**m, "team": "T777"} for m in later]))
    assert ingest_paths("chat", [july], vault).messages_added == len(later)
    again = ingest_paths("chat", [root], vault)
    assert again.messages_added == 0, again.written


def test_slack_zip_equals_folder(tmp_path: Path) -> None:
    folder = slack_export(tmp_path / "export")
    archive = tmp_path / "Acme Slack export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(folder.rglob("*.json")):
            zf.write(path, "export/" + path.relative_to(folder).as_posix())
    assert detect_chat_format(archive) == "slack"
    assert parse_slack(archive) == parse_slack(folder)


def test_a_day_file_of_an_export_is_that_day_of_the_export(tmp_path: Path) -> None:
    """One day file given alone reads with its export's users and channels: the same source id,
    names and mentions, so the export ingested afterwards adds only the other days."""
    folder = slack_export(tmp_path / "export")
    [day] = parse_slack(folder / "general" / "2024-03-04.json")
    whole = {batch.meta.source_id: batch for batch in parse_slack(folder)}
    assert day == whole["slack:T9/C1"]
    assert day.messages[0].author == "Alice Chen" and "@Bob Stone" in day.messages[0].text
    vault = tmp_path / "vault"
    vault.mkdir()
    first = ingest_paths("chat", [folder / "general" / "2024-03-04.json"], vault)
    then = ingest_paths("chat", [folder], vault)
    assert first.messages_added == 4 and (then.messages_added, then.messages_known) == (1, 4)
    assert sorted(p.relative_to(vault).as_posix() for p in (vault / "sources").rglob("*.md")) == [
        "sources/chat/slack/t9/dm-alice-chen-bob-stone/2024-03-05.md",
        "sources/chat/slack/t9/general/2024-03-04.md",
    ]


def test_a_slack_channel_whose_folder_is_named_by_its_id_is_titled_by_its_name(tmp_path: Path) -> None:
    """An export whose conversation folders are named by the channel's id (`C1/`, as slackdump and
    Enterprise Grid write them) gave the note `#C1`, filed under `c1/`, though `channels.json`
    names it `general`; a folder the metadata does not list keeps its folder's name."""
    folder = slack_export(tmp_path / "export")
    (folder / "general").rename(folder / "C1")
    write(folder, "C9/2024-03-06.json", json.dumps([{"type": "message", "user": "U1", "text": "hi", "ts": "1709715600.000000"}]))
    batches = {b.meta.source_id: b for b in parse_slack(folder)}
    assert batches["slack:T9/C1"].meta.title == "#general" and batches["slack:T9/C1"].meta.scope == "slack/T9/general"
    assert len(batches["slack:T9/C1"].messages) == 4
    assert batches["slack:T9/C9"].meta.title == "#C9", "nothing names it: its folder does"
    [day] = parse_slack(folder / "C1" / "2024-03-04.json")  # one day file of it, given alone
    assert day == batches["slack:T9/C1"]
    vault = tmp_path / "vault"
    vault.mkdir()
    assert ingest_paths("chat", [folder], vault).messages_added == 6
    note = (vault / "sources/chat/slack/t9/general/2024-03-04.md").read_text(encoding="utf-8")
    assert split_frontmatter(note).data["title"] == "#general · 2024-03-04"


def _slack_notes(vault: Path) -> dict[str, list[tuple[str, str]]]:
    """Source id → (note, message id) of every message in the vault's Slack notes."""
    out: dict[str, list[tuple[str, str]]] = {}
    for path in sorted((vault / "sources/chat/slack").rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        note = parse_note(rel, path.read_text(encoding="utf-8"))
        out.setdefault(str(note.frontmatter["source_id"]), []).extend((rel, str(leaf.message_id)) for leaf in note.leaves)
    return out


@pytest.mark.parametrize("alone", ["general.json", "general"])
@pytest.mark.parametrize("export_first", [False, True])
def test_a_slack_channel_ingested_alone_and_with_its_export_is_one_source(
    tmp_path: Path, alone: str, export_first: bool
) -> None:
    """A channel's file (`general.json`) or folder (`general/` and its day files) ingested alone
    has no channel id: it was `slack:T9/general` beside the export's `slack:T9/C1`, the channel's
    history written twice (`2024-03-04.2.md`). Its messages name their team: one source now, in
    either order, each message once."""
    folder = slack_export(tmp_path / "export")
    day = json.loads((folder / "general/2024-03-04.json").read_text(encoding="utf-8"))
    write(folder, "general/2024-03-04.json", json.dumps([{**m, "team": "T9"} for m in day]))
    lone = tmp_path / "lone"
    write(lone, "general/2024-03-04.json", json.dumps([{**m, "team": "T9"} for m in day]))
    write(lone, "general.json", json.dumps([{**m, "team": "T9"} for m in day]))
    vault = tmp_path / "vault"
    vault.mkdir()
    runs = [[folder], [lone / alone]] if export_first else [[lone / alone], [folder]]
    reports = [ingest_paths("chat", paths, vault) for paths in runs]
    assert sum(r.messages_added for r in reports) == 5 and reports[1].messages_known == 4
    notes = _slack_notes(vault)
    general = notes.pop("slack:T9/C1" if export_first else "slack:T9/general")
    assert notes == {"slack:T9/D1": [("sources/chat/slack/t9/dm-alice-chen-bob-stone/2024-03-05.md", "1709629200.000000")]}
    assert general == [
        ("sources/chat/slack/t9/general/2024-03-04.md", ts)
        for ts in ("1709542800.000100", "1709543110.000200", "1709543200.000300", "1709543400.000500")
    ]
    again = [ingest_paths("chat", paths, vault) for paths in runs]
    assert [(r.messages_added, r.written) for r in again] == [(0, []), (0, [])]


def test_a_slack_channel_file_without_a_team_is_continued_by_its_export_when_they_share_messages(tmp_path: Path) -> None:
    """Messages without `team`: the file alone is of `slack:workspace/general`. The export that
    holds its messages continues its notes (and the file after the export joins the export's);
    one that holds none of them is another source, as before: nothing is written twice."""
    folder = slack_export(tmp_path / "export")
    lone = write(tmp_path / "lone", "general.json", (folder / "general/2024-03-04.json").read_text(encoding="utf-8"))
    other = write(tmp_path / "other", "general.json", json.dumps([{"type": "message", "user": "U1", "text": "later", "ts": "1709715600.000100"}]))
    for order in ([lone, folder], [folder, lone]):
        vault = tmp_path / f"vault-{len(list(tmp_path.iterdir()))}"
        vault.mkdir()
        reports = [ingest_paths("chat", [path], vault) for path in order]
        assert sum(r.messages_added for r in reports) == 5 and reports[1].messages_known == 4
        notes = _slack_notes(vault)
        general = "slack:workspace/general" if order[0] == lone else "slack:T9/C1"
        assert sorted(notes) == sorted([general, "slack:T9/D1"]) and len(notes[general]) == 4
        assert ingest_paths("chat", [other], vault).messages_added == 1
        assert len(_slack_notes(vault)["slack:workspace/general"]) == (5 if order[0] == lone else 1)
        assert ingest_paths("chat", [folder], vault).messages_added == 0


def _renamed(folder: Path, root: Path, name: str) -> Path:
    """A copy of a `slack_export` with its channel C1 renamed `name` (its folder too)."""
    write(root, "users.json", (folder / "users.json").read_text(encoding="utf-8"))
    write(root, "channels.json", json.dumps([{"id": "C1", "name": name, "created": 1709000000}]))
    for day in sorted((folder / "general").iterdir()):
        write(root, f"{name}/{day.name}", day.read_text(encoding="utf-8"))
    return root


def _teamed(folder: Path, team: str | None = "T9") -> list[dict[str, Any]]:
    """The messages of the export's #general day, each naming `team` (none: without it)."""
    day = json.loads((folder / "general/2024-03-04.json").read_text(encoding="utf-8"))
    return [{**m, "team": team} if team else m for m in day]


@pytest.mark.parametrize("team", ["T9", None])
@pytest.mark.parametrize("file_first", [True, False])
def test_a_slack_channel_file_and_its_export_in_one_ingest_write_each_message_once(
    tmp_path: Path, team: str | None, file_first: bool
) -> None:
    """`vaultmind ingest chat ~/Downloads/*`: the channel's file and the export in the same run
    were two sources of one folder (`2024-03-04.md` and `2024-03-04.2.md`, or, without a team,
    `workspace/general/` beside `t9/general/`). The file joins the export's conversation: each
    message once, under the export's channel id, with the export's names."""
    folder = slack_export(tmp_path / "export")
    write(folder, "general/2024-03-04.json", json.dumps(_teamed(folder, team)))
    later = {"type": "message", "user": "U1", "text": "only in the file", "ts": "1709629300.000100"}
    lone = write(tmp_path / "lone", "general.json", json.dumps([*_teamed(folder, team), later]))
    vault = tmp_path / "vault"
    vault.mkdir()
    report = ingest_paths("chat", [lone, folder] if file_first else [folder, lone], vault)
    assert (report.messages_added, report.messages_known) == (6, 4)
    notes = _slack_notes(vault)
    assert sorted(notes) == ["slack:T9/C1", "slack:T9/D1"]
    assert [ts for _, ts in notes["slack:T9/C1"]] == [
        "1709542800.000100", "1709543110.000200", "1709543200.000300", "1709543400.000500", "1709629300.000100"
    ]
    assert {path for path, _ in notes["slack:T9/C1"]} == {
        "sources/chat/slack/t9/general/2024-03-04.md", "sources/chat/slack/t9/general/2024-03-05.md"
    }
    first = (vault / "sources/chat/slack/t9/general/2024-03-04.md").read_text(encoding="utf-8")
    assert "Alice Chen" in first and "@Bob Stone" in first, "the export's names"
    for paths in ([lone, folder], [folder], [lone]):
        again = ingest_paths("chat", paths, vault)
        assert (again.messages_added, again.written) == (0, [])


@pytest.mark.parametrize("runs", ["file, renamed export, renamed file", "export, renamed file, renamed export"])
def test_a_slack_channel_renamed_between_exports_is_one_conversation(tmp_path: Path, runs: str) -> None:
    """A channel renamed #general → #announcements: its file under one name and its export (or
    its file) under the other share their messages' `ts`, so they are one conversation — the
    file's `slack:T9/general` was not joined with the export's `slack:T9/C1` of another folder,
    and every shared message was written twice."""
    folder = slack_export(tmp_path / "export")
    write(folder, "general/2024-03-04.json", json.dumps(_teamed(folder)))
    renamed = _renamed(folder, tmp_path / "renamed", "announcements")
    day3 = {"type": "message", "user": "U1", "text": "after the rename", "ts": "1709715600.000100", "team": "T9"}
    write(renamed, "announcements/2024-03-06.json", json.dumps([day3]))
    general = write(tmp_path / "old", "general.json", json.dumps(_teamed(folder)))
    announcements = write(tmp_path / "new", "announcements.json", json.dumps([*_teamed(folder)[2:], day3]))
    order = [general, renamed, announcements] if runs.startswith("file") else [folder, announcements, renamed]
    vault = tmp_path / "vault"
    vault.mkdir()
    reports = [ingest_paths("chat", [path], vault) for path in order]
    dm = 0 if runs.startswith("file") else 1  # the export's DM
    assert sum(r.messages_added for r in reports) == 5 + dm, [r.written for r in reports]
    notes = _slack_notes(vault)
    channel = notes.pop("slack:T9/general" if runs.startswith("file") else "slack:T9/C1")
    assert sorted(ts for _, ts in channel) == [
        "1709542800.000100", "1709543110.000200", "1709543200.000300", "1709543400.000500", "1709715600.000100"
    ]
    assert {path.rsplit("/", 1)[0] for path, _ in channel} == {"sources/chat/slack/t9/general"}
    assert list(notes) in ([], ["slack:T9/D1"])
    for path in order:
        assert ingest_paths("chat", [path], vault).messages_added == 0


def test_a_renamed_slack_channel_s_notes_moved_out_of_sources_are_still_known(tmp_path: Path) -> None:
    """A channel's file (#general, two days) ingested, its notes dragged out of sources/, then
    the channel's export under its new name (#announcements): the moved notes' messages were
    known only under the file's id, not the export's, and both days were written again."""
    days = {
        "2024-03-04": [{"type": "message", "ts": "1709542800.000100", "user": "U01", "text": "Morning all", "team": "T01"},
                       {"type": "message", "ts": "1709543100.000200", "user": "U02", "text": "On it", "team": "T01"}],
        "2024-03-05": [{"type": "message", "ts": "1709629200.000100", "user": "U01", "text": "Day two: launch plan", "team": "T01"}],
        "2024-03-06": [{"type": "message", "ts": "1709715600.000100", "user": "U01", "text": "After the rename", "team": "T01"}],
    }  # fmt: skip
    general = write(tmp_path / "old", "general.json", json.dumps(days["2024-03-04"] + days["2024-03-05"]))
    export = tmp_path / "export"
    write(export, "channels.json", json.dumps([{"id": "C01", "name": "announcements", "created": 1700000000}]))
    write(export, "users.json", json.dumps([{"id": "U01", "name": "alice", "team_id": "T01", "real_name": "Alice Chen"},
                                            {"id": "U02", "name": "bob", "team_id": "T01", "real_name": "Bob Stone"}]))  # fmt: skip
    for day, messages in days.items():
        write(export, f"announcements/{day}.json", json.dumps(messages))
    vault = tmp_path / "vault"
    vault.mkdir()
    ingest_paths("chat", [general], vault)
    (vault / "Projects").mkdir()
    for note in sorted((vault / "sources").rglob("*.md")):
        note.rename(vault / "Projects" / note.relative_to(vault).as_posix().replace("/", "_"))
    report = ingest_paths("chat", [export], vault)
    assert (report.messages_added, report.messages_known) == (1, 3)
    held = [message_id for _, message_id in _held(vault)]  # the moved notes' and those in sources/
    assert sorted(held) == sorted(set(held)) and len(held) == 4, "no message twice"


@pytest.mark.parametrize("runs", ["general.json | renamed | bare.json", "renamed | bare.json", "export + renamed",
                                  "general.json + bare.json + announcements.json", "bare.json + renamed + export"])
def test_a_renamed_slack_channel_in_one_ingest_or_given_without_a_team_is_one_conversation(tmp_path: Path, runs: str) -> None:
    """The same channel under its two names in one ingest (both exports; the files alone), or a
    file whose messages name no team after the renamed export (`|`: separate ingests, `+`: one
    ingest): each message once."""
    folder = slack_export(tmp_path / "export")
    write(folder, "general/2024-03-04.json", json.dumps(_teamed(folder)))
    renamed = _renamed(folder, tmp_path / "renamed", "announcements")
    day3 = {"type": "message", "user": "U1", "text": "after the rename", "ts": "1709715600.000100", "team": "T9"}
    write(renamed, "announcements/2024-03-06.json", json.dumps([day3]))
    given = {
        "export": folder,
        "renamed": renamed,
        "general.json": write(tmp_path / "old", "general.json", json.dumps(_teamed(folder))),
        "bare.json": write(tmp_path / "bare", "general.json", json.dumps(_teamed(folder, None))),
        "announcements.json": write(tmp_path / "new", "announcements.json", json.dumps([*_teamed(folder)[2:], day3])),
    }
    vault = tmp_path / "vault"
    vault.mkdir()
    ingests = [[given[name.strip()] for name in run.split("+")] for run in runs.split("|")]
    for paths in ingests:
        ingest_paths("chat", paths, vault)
    held = [ts for notes in _slack_notes(vault).values() for _, ts in notes]
    assert len(held) == len(set(held)), _slack_notes(vault)
    for paths in ingests:
        assert ingest_paths("chat", paths, vault).messages_added == 0


def test_a_slack_note_of_another_name_of_its_channel_at_a_day_s_own_path_is_known(tmp_path: Path) -> None:
    """Written before the channel's file and export were joined: the day's note of the renamed
    channel's file (`slack:T9/announcements`) in the folder the export writes to. The export's
    message it holds is known: it was written again into `2024-03-06.2.md`."""
    from vaultmind.ingest.writer import write_batches

    folder = slack_export(tmp_path / "export")
    write(folder, "general/2024-03-04.json", json.dumps(_teamed(folder)))
    renamed = _renamed(folder, tmp_path / "renamed", "announcements")
    day3 = {"type": "message", "user": "U1", "text": "after the rename", "ts": "1709715600.000100", "team": "T9"}
    write(renamed, "announcements/2024-03-06.json", json.dumps([day3]))
    [lone] = parse_slack(write(tmp_path / "new", "announcements.json", json.dumps([day3])))
    vault = tmp_path / "vault"
    vault.mkdir()
    ingest_paths("chat", [folder], vault)
    write_batches(vault, [lone])  # as the file alone was written before
    assert _slack_notes(vault)["slack:T9/announcements"] == [
        ("sources/chat/slack/t9/announcements/2024-03-06.md", "1709715600.000100")
    ]
    report = ingest_paths("chat", [renamed], vault)
    assert (report.messages_added, report.written) == (0, [])


def test_slack_bad_day_file_names_file_and_line(tmp_path: Path) -> None:
    folder = slack_export(tmp_path / "export")
    write(folder, "general/2024-03-06.json", '[\n  {"type": "message", "user": "U1", "text": "x"}\n]')
    with pytest.raises(IngestError) as info:
        parse_slack(folder)
    assert "2024-03-06.json" in str(info.value) and "line 2" in str(info.value)


# --- WhatsApp, Signal -------------------------------------------------------------------------

WHATSAPP = {
    "android_dmy.txt": (
        "04/03/2024, 09:00 - Messages and calls are end-to-end encrypted. No one outside of this chat can read them.\n"
        "04/03/2024, 09:00 - Alice: Budget?\n"
        "second line\n"
        '04/03/2024, 09:01 - Bob created group "Q3"\n'
        "13/03/2024, 21:05 - Bob: Yes: done\n"
        "13/03/2024, 21:06 - Bob: <Media omitted>\n"
    ),
    "ios_mdy_12h.txt": (  # iOS says some notices as the group, after a left-to-right mark
        "[3/4/24, 8:59:00\u202fAM] Q3: \u200eMessages and calls are end-to-end encrypted. No one outside of this "
        "chat, not even WhatsApp, can read or listen to them.\n"
        "\u200e[3/4/24, 9:00:00\u202fAM] Alice: Budget?\n"
        "second line\n"
        "\u200e[3/4/24, 9:01:00\u202fAM] \u200eBob created group \u201cQ3\u201d\n"
        "[3/13/24, 9:05:00\u202fPM] Bob: Yes: done\n"
        "[3/13/24, 9:06:00\u202fPM] Bob: <Media omitted>\n"
    ),
    "german_dots.txt": (
        "04.03.24, 09:00 - Alice: Budget?\nsecond line\n"
        "13.03.24, 21:05 - Bob: Yes: done\n"
        "13.03.24, 21:06 - Bob: <Media omitted>\n"
    ),
    "spanish_12h.txt": (
        "04/03/2024, 9:00 a. m. - Alice: Budget?\nsecond line\n"
        "13/03/2024, 9:05 p. m. - Bob: Yes: done\n"
        "13/03/2024, 9:06 p. m. - Bob: <Media omitted>\n"
    ),
    "iso.txt": (
        "2024-03-04, 09:00 - Alice: Budget?\nsecond line\n"
        "2024-03-13, 21:05 - Bob: Yes: done\n"
        "2024-03-13, 21:06 - Bob: <Media omitted>\n"
    ),
}


def test_whatsapp_locale_formats_parse_alike(tmp_path: Path) -> None:
    expected = [
        ("Alice", "2024-03-04 09:00:00", "Budget?\nsecond line"),
        ("Bob", "2024-03-13 21:05:00", "Yes: done"),
        ("Bob", "2024-03-13 21:06:00", "<Media omitted>"),
    ]
    ids = None
    for name, text in WHATSAPP.items():
        batches = parse_whatsapp(write(tmp_path, name, text))
        assert texts(batches) == expected, name
        these = [m.message_id for m in only(batches)]
        assert ids is None or these == ids, "ids depend on content, not on the date format"
        ids = these


def test_whatsapp_ios_media_lines_stay_and_only_notices_go(tmp_path: Path) -> None:
    text = (
        "[3/4/24, 9:00:00\u202fAM] Family: \u200eAlice added Bob\n"
        "[3/4/24, 9:01:00\u202fAM] Alice: \u200eimage omitted\n"
        "[3/4/24, 9:02:00\u202fAM] Bob: I added the receipts to the folder\n"
        "[3/4/24, 9:03:00\u202fAM] Alice: \u200eGuest list - names added.pdf \u2022 \u200e2 pages \u200e<attached: 1-list.pdf>\n"
        "[3/4/24, 9:04:00\u202fAM] Alice: \u200eWe left\n"
        "[3/4/24, 9:05:00\u202fAM] Family: \u200eBob left\n"
    )
    assert [(a, t) for a, _, t in texts(parse_whatsapp(write(tmp_path, "WhatsApp Chat - Family.txt", text)))] == [
        ("Alice", "image omitted"),
        ("Bob", "I added the receipts to the folder"),
        ("Alice", "Guest list - names added.pdf \u2022 2 pages <attached: 1-list.pdf>"),
        ("Alice", "We left"),
    ], "only what the chat itself says, as a whole notice sentence, is a notice"


def test_whatsapp_ambiguous_dates_follow_message_order(tmp_path: Path) -> None:
    # 03/04 then 04/04 then 05/04: as month-first that is Mar 4, Apr 4, May 4 (in order);
    # as day-first it is Apr 3, Apr 4, Apr 5 (also in order) → tie → day-first
    path = write(
        tmp_path, "a.txt", "03/04/24, 10:00 - A: x\n04/04/24, 10:00 - A: y\n05/04/24, 10:00 - A: z\n"
    )
    assert [t for _, t, _ in texts(parse_whatsapp(path))] == [
        "2024-04-03 10:00:00",
        "2024-04-04 10:00:00",
        "2024-04-05 10:00:00",
    ]
    # 12/01 then 01/02: month-first keeps the order (Dec 1 2023 → Jan 2 2024 is not: years equal)
    path = write(
        tmp_path, "b.txt", "01/05/24, 10:00 - A: x\n02/01/24, 10:00 - A: y\n03/01/24, 10:00 - A: z\n"
    )
    assert [t[:10] for _, t, _ in texts(parse_whatsapp(path))] == ["2024-01-05", "2024-02-01", "2024-03-01"]


def test_whatsapp_says_when_the_date_order_is_a_guess_and_takes_one_given(tmp_path: Path, vault: Path) -> None:
    """Dates that read both ways, in order either way (a US chat of early January): read day
    first with a warning naming `--date-order`; `date_order="mdy"` reads them month first; an
    order the dates cannot have is an error naming the line."""
    text = "01/02/24, 09:00 - Alice: happy new year recap\n01/03/24, 09:00 - Bob: thanks\n"  # (a 24 h clock: no hint)
    path = write(tmp_path, "WhatsApp Chat with US Friend.txt", text)
    report = ingest_paths("chat", [path], vault)
    assert [w for w in report.warnings if "reads as day/month and as month/day" in w and "--date-order mdy" in w]
    assert ingest_paths("chat", [path], vault).warnings == [], "the same export again: nothing written, nothing said"
    assert report.written == ["sources/chat/whatsapp/us-friend/2024-02-01.md", "sources/chat/whatsapp/us-friend/2024-03-01.md"]
    month_first = parse_whatsapp(path, date_order="mdy")
    assert [t[:10] for _, t, _ in texts(month_first)] == ["2024-01-02", "2024-01-03"]
    later = write(tmp_path, "late.txt", text + "01/15/24, 09:00 - Alice: dentist\n")
    with pytest.raises(IngestError, match="does not read as day/month") as caught:
        parse_whatsapp(later, date_order="dmy")
    assert "line 3" in str(caught.value)
    settled: list[str] = []
    parse_whatsapp(later, warn=settled.append)
    assert settled == [], "a day above 12 settles it: no warning"


def test_whatsapp_says_nothing_of_the_date_order_of_an_export_without_messages(tmp_path: Path, vault: Path) -> None:
    """An export of system notices and empty or deleted messages only, dated both ways, was
    told its date order is a guess, beside "holds no messages": there is nothing read so."""
    text = (
        "01/02/24, 9:00 AM - Messages and calls are end-to-end encrypted.\n"
        "01/03/24, 9:01 AM - Alice created group \"Trip\"\n"
        "01/03/24, 9:02 AM - Bob: \n"
    )
    path = write(tmp_path, "WhatsApp Chat with Trip.txt", text)
    report = ingest_paths("chat", [path], vault)
    assert report.warnings == [f"{path}: holds no messages (system notices aside); nothing to ingest"]
    said: list[str] = []
    assert parse_whatsapp(path, warn=said.append) == [] and said == []


def test_whatsapp_reads_the_repeated_hour_of_a_clock_change_in_the_files_order(tmp_path: Path) -> None:
    text = "27/10/2024, 02:50 - A: first\n27/10/2024, 02:10 - B: second\n27/10/2024, 02:20 - A: third\n"
    batches = parse_whatsapp(write(tmp_path, "dst.txt", text), tz=zone("Europe/Berlin"))
    assert [str(m.timestamp) for m in only(batches)] == [
        "2024-10-27 00:50:00+00:00",  # summer time
        "2024-10-27 01:10:00+00:00",  # after the clocks went back
        "2024-10-27 01:20:00+00:00",
    ]
    offline = "27/10/2024, 02:50 - A: first\n27/10/2024, 02:48 - B: sent offline\n27/10/2024, 02:55 - A: next\n"
    batches = parse_whatsapp(write(tmp_path, "offline.txt", offline), tz=zone("Europe/Berlin"))
    assert [str(m.timestamp) for m in only(batches)] == [
        "2024-10-27 00:50:00+00:00",
        "2024-10-27 00:48:00+00:00",  # a small step back is a late message, not the second pass
        "2024-10-27 00:55:00+00:00",
    ]


def test_whatsapp_chat_name_zip_and_timezone(tmp_path: Path) -> None:
    path = write(tmp_path, "WhatsApp Chat with Alice.txt", WHATSAPP["iso.txt"])
    batches = parse_whatsapp(path, tz=zone("Europe/Berlin"))
    assert batches[0].meta.source_id == "whatsapp:Alice" and batches[0].meta.title == "Alice"
    assert str(batches[0].messages[0].timestamp) == "2024-03-04 08:00:00+00:00"
    archive = tmp_path / "WhatsApp Chat - Alice.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("_chat.txt", WHATSAPP["iso.txt"])
    assert detect_chat_format(archive) == "whatsapp"
    assert parse_whatsapp(archive, tz=zone("Europe/Berlin")) == batches
    # a second download of the same export ("… (1).txt") is the same chat
    again = write(tmp_path / "Downloads", "WhatsApp Chat with Alice (1).txt", WHATSAPP["iso.txt"])
    [download] = parse_whatsapp(again, tz=zone("Europe/Berlin"))
    assert (download.meta, download.messages) == (batches[0].meta, batches[0].messages)


def test_an_edited_whatsapp_message_replaces_its_text_before_the_edit(tmp_path: Path, vault: Path) -> None:
    """The next export says "<This message was edited>" after the new text: a new id (WhatsApp
    ids hash the text), and the text before the edit had stayed, ranking above the correction.
    The message shows the new text, the one before quoted below it."""
    first = (
        "2024-03-04, 09:00 - Alice: Dinner at 6 at the harbour\n"
        "2024-03-04, 09:00 - Alice: Bring the cake\n"
        "2024-03-04, 09:01 - Bob: ok\n"
    )
    export = write(tmp_path, "WhatsApp Chat with Alice.txt", first)
    ingest_paths("chat", [export], vault)
    write(tmp_path, "WhatsApp Chat with Alice.txt", first.replace(
        "Dinner at 6 at the harbour", "Dinner at 7 at the harbour <This message was edited>"
    ) + "2024-03-04, 10:00 - Bob: See you at 7\n")
    [batch] = parse_whatsapp(export)
    assert len(batch.edited) == 1 and "edited" not in batch.messages[0].text
    report = ingest_paths("chat", [export], vault)
    assert (report.messages_added, report.messages_edited) == (1, 1)
    note = (vault / "sources/chat/whatsapp/alice/2024-03-04.md").read_text(encoding="utf-8")
    # the new text, the one before the edit quoted below it (as Telegram's and Slack's edits)
    assert "> Dinner at 7 at the harbour\n>\n> [edited, the text before:]\n> > Dinner at 6 at the harbour" in note
    assert "Bring the cake" in note, "the other message of that minute stays"
    again = ingest_paths("chat", [export], vault)
    assert again.written == [] and again.messages_edited == 0


EDIT_BEFORE = (
    "2024-03-04, 09:00 - Alice: Dinner at 6 at the harbour\n"
    "2024-03-04, 09:00 - Alice: Bring the cake\n"
    "2024-03-04, 09:01 - Bob: ok\n"
)
EDIT_AFTER = EDIT_BEFORE.replace("Dinner at 6 at the harbour", "Dinner at 7 at the harbour <This message was edited>")


def _whatsapp_texts(vault: Path, day: str = "") -> list[str]:
    """The texts of the one WhatsApp note (of `day`), sorted (messages of one minute are in id order)."""
    [note] = (vault / "sources/chat/whatsapp").rglob(f"*{day}.md")
    return sorted(leaf.text for leaf in parse_note(note.relative_to(vault).as_posix(), note.read_text(encoding="utf-8")).leaves)


@pytest.mark.parametrize("order", ["newest first", "in one ingest"])
def test_an_edited_whatsapp_message_is_one_message_whichever_export_comes_first(
    tmp_path: Path, vault: Path, order: str
) -> None:
    """The export after an edit ingested before the one before it, or both in one ingest: one
    message, the new text with the one before quoted below it, as when the older comes first
    (both had stayed, as two messages); ingesting either again changes nothing."""
    older = write(tmp_path / "march", "WhatsApp Chat with Alice.txt", EDIT_BEFORE)
    newer = write(tmp_path / "april", "WhatsApp Chat with Alice.txt", EDIT_AFTER)
    if order == "in one ingest":
        ingest_paths("chat", [older, newer], vault)
    else:
        ingest_paths("chat", [newer], vault)
        assert ingest_paths("chat", [older], vault).messages_added == 0
    assert _whatsapp_texts(vault) == [
        "Bring the cake",
        "Dinner at 7 at the harbour\n\n[edited, the text before:]\n> Dinner at 6 at the harbour",
        "ok",
    ]
    settled = snapshot_files(vault)
    for export in (older, newer):
        again = ingest_paths("chat", [export], vault)
        assert (again.messages_added, again.written, again.warnings) == (0, [], [])
        assert snapshot_files(vault) == settled


@pytest.mark.parametrize("newest", ["Dinner at 8", "Dinner at 10"])  # (their ids sort either side of the middle one's)
def test_a_whatsapp_message_edited_twice_shows_its_newest_text_when_three_exports_come_in_one_ingest(
    tmp_path: Path, newest: str
) -> None:
    """Three exports of one chat in one ingest: before the edit, after it, after a second edit.
    The newest export's text shows, the two before it quoted in turn, as when ingested oldest
    first (the order of the ids had decided it: the text of the middle one could show)."""
    later = "2024-03-05, 10:00 - Bob: see you\n"
    exports = [
        write(tmp_path / "march", "WhatsApp Chat with Alice.txt", EDIT_BEFORE),
        write(tmp_path / "april", "WhatsApp Chat with Alice.txt", EDIT_AFTER + later),
        write(
            tmp_path / "may",
            "WhatsApp Chat with Alice.txt",
            EDIT_AFTER.replace("Dinner at 7", newest) + later + "2024-03-06, 11:00 - Alice: yes\n",
        ),
    ]
    for n, paths in enumerate((exports, exports[::-1])):
        (into := tmp_path / f"vault-{n}").mkdir()
        report = ingest_paths("chat", paths, into)
        assert (report.messages_edited, report.warnings) == (2, [])
        assert _whatsapp_texts(into, "2024-03-04")[1] == (
            f"{newest} at the harbour\n\n[edited, the text before:]\n> Dinner at 7 at the harbour\n>\n"
            "> [edited, the text before:]\n> > Dinner at 6 at the harbour"
        )
        settled = snapshot_files(into)
        for export in exports:
            again = ingest_paths("chat", [export], into)
            assert (again.messages_added, again.written, again.warnings) == (0, [], [])
            assert snapshot_files(into) == settled


@pytest.mark.parametrize("order", [(2, 0, 1), (0, 2, 1)])
def test_an_older_whatsapp_export_of_an_edit_ingested_after_a_newer_one_stays_below_the_newest_text(
    tmp_path: Path, vault: Path, order: tuple[int, int, int]
) -> None:
    """Exports before an edit, after it, after a second edit, the newest not ingested last: an
    export that ends before the notes' newest message is older than them, so its edit is a text
    the message showed before the note's newest (it had become the newest, the note's text
    quoted below it as its text before). Every export ingested again changes nothing."""
    later = "2024-03-05, 10:00 - Bob: see you\n"
    texts = [EDIT_BEFORE, EDIT_AFTER + later, EDIT_AFTER.replace("Dinner at 7", "Dinner at 8") + later + "2024-03-06, 11:00 - Alice: yes\n"]
    exports = [write(tmp_path / f"export-{n}", "WhatsApp Chat with Alice.txt", text) for n, text in enumerate(texts)]
    for n in order:
        ingest_paths("chat", [exports[n]], vault)
    assert _whatsapp_texts(vault, "2024-03-04")[1] == (
        "Dinner at 8 at the harbour\n\n[edited, the text before:]\n> Dinner at 7 at the harbour\n>\n"
        "> [edited, the text before:]\n> > Dinner at 6 at the harbour"
    )
    settled = snapshot_files(vault)
    for export in exports:
        again = ingest_paths("chat", [export], vault)
        assert (again.messages_added, again.written, again.warnings) == (0, [], [])
        assert snapshot_files(vault) == settled


@pytest.mark.parametrize(
    ("mark", "order"),
    [
        ("This message was edited", (2, 1, 0)),
        ("This message was edited", (1, 2, 0)),
        ("Detta meddelande har redigerats", (2, 1, 0)),  # (a language whose mark vaultmind does not read)
    ],
)
def test_the_oldest_whatsapp_export_of_a_message_edited_twice_ingested_last_is_quoted_below_every_edit(
    tmp_path: Path, vault: Path, mark: str, order: tuple[int, int, int]
) -> None:
    """Exports before an edit, after it and after a second edit, the oldest ingested last: its
    text, unmarked, is the one before every edit the note shows, quoted innermost (it had
    stayed a message of its own beside the edited one). A mark vaultmind does not read stays in
    the text: nothing is lost, nothing dropped. Every export ingested again changes nothing."""
    later = "2024-03-05, 10:00 - Bob: see you\n"
    edited = EDIT_AFTER.replace("This message was edited", mark)
    texts = [EDIT_BEFORE, edited + later, edited.replace("Dinner at 7", "Dinner at 8") + later + "2024-03-06, 11:00 - Alice: yes\n"]
    exports = [write(tmp_path / f"export-{n}", "WhatsApp Chat with Alice.txt", text) for n, text in enumerate(texts)]
    for n in order:
        ingest_paths("chat", [exports[n]], vault)
    shown = "" if mark == "This message was edited" else f" <{mark}>"
    assert _whatsapp_texts(vault, "2024-03-04") == [
        "Bring the cake",
        f"Dinner at 8 at the harbour{shown}\n\n[edited, the text before:]\n> Dinner at 7 at the harbour{shown}\n>\n"
        "> [edited, the text before:]\n> > Dinner at 6 at the harbour",
        "ok",
    ]
    settled = snapshot_files(vault)
    for export in exports:
        again = ingest_paths("chat", [export], vault)
        assert (again.messages_added, again.written, again.warnings) == (0, [], [])
        assert snapshot_files(vault) == settled


def test_a_newer_whatsapp_export_with_its_media_is_no_older_text_of_an_edit(tmp_path: Path, vault: Path) -> None:
    """An export without media, then a newer one with them attached: the message reads
    `<Media omitted>` in one, `IMG-….jpg (file attached)` in the other, and no mark says it was
    edited. The newer export ends after every message the notes hold, so it is no older export
    of an edit: its text is no "text before" of the note's (both stay, as they did), and the
    newer one ingested first takes the older one's text as before."""
    without = "2024-03-04, 09:00 - Alice: <Media omitted>\n2024-03-04, 09:01 - Bob: nice\n"
    attached = without.replace("<Media omitted>", "IMG-20240304-WA0001.jpg (file attached)") + "2024-03-05, 10:00 - Bob: more\n"
    older = write(tmp_path / "march", "WhatsApp Chat with Alice.txt", without)
    newer = write(tmp_path / "april", "WhatsApp Chat with Alice.txt", attached)
    ingest_paths("chat", [older], vault)
    report = ingest_paths("chat", [newer], vault)
    assert (report.messages_added, report.messages_edited) == (2, 0)
    assert _whatsapp_texts(vault, "2024-03-04") == ["<Media omitted>", "IMG-20240304-WA0001.jpg (file attached)", "nice"]


def test_an_older_whatsapp_export_does_not_take_a_deleted_message_for_an_edit(tmp_path: Path, vault: Path) -> None:
    older = write(tmp_path / "march", "WhatsApp Chat with Alice.txt", EDIT_BEFORE)
    newer = write(tmp_path / "april", "WhatsApp Chat with Alice.txt", EDIT_BEFORE.replace("Dinner at 6 at the harbour", "This message was deleted"))
    ingest_paths("chat", [newer], vault)
    assert ingest_paths("chat", [older], vault).messages_added == 1
    assert _whatsapp_texts(vault) == ["Bring the cake", "Dinner at 6 at the harbour", "This message was deleted", "ok"]


def test_a_german_edit_mark_with_its_full_stop_is_read_and_a_message_written_with_it_keeps_its_id(
    tmp_path: Path, vault: Path
) -> None:
    """German exports write "<Diese Nachricht wurde bearbeitet.>": the mark is cut from the
    text and the edit replaces the text before it. A note an earlier vaultmind wrote with the
    mark in the text (its id hashing it) keeps the message, its id and its text: nothing is
    written twice, nothing said."""
    german = EDIT_AFTER.replace("This message was edited", "Diese Nachricht wurde bearbeitet.")
    [batch] = parse_whatsapp(write(tmp_path / "de", "WhatsApp Chat with Alice.txt", german))
    assert batch.messages[0].text == "Dinner at 7 at the harbour" and batch.edited == (batch.messages[0].message_id,)
    ingest_paths("chat", [write(tmp_path / "march", "WhatsApp Chat with Alice.txt", EDIT_BEFORE)], vault)
    ingest_paths("chat", [tmp_path / "de/WhatsApp Chat with Alice.txt"], vault)
    assert _whatsapp_texts(vault)[1] == "Dinner at 7 at the harbour\n\n[edited, the text before:]\n> Dinner at 6 at the harbour"
    before = tmp_path / "vault-before"
    before.mkdir()
    # as an earlier vaultmind wrote it: the mark kept in the text, the id hashing it
    said = "Dinner at 7 at the harbour <Diese Nachricht wurde bearbeitet.>"
    assert batch.messages[0].message_id == MessageIds()("Alice", batch.messages[0].timestamp, said)
    then = replace(batch.messages[0], text=said)
    write_batches(before, [replace(batch, edited=(), earlier_texts=(), messages=(then, *batch.messages[1:]))])
    settled = snapshot_files(before)
    report = ingest_paths("chat", [tmp_path / "de/WhatsApp Chat with Alice.txt"], before)
    assert (report.messages_added, report.warnings) == (0, [])
    assert snapshot_files(before) == settled


def test_whatsapp_dates_written_with_dots_are_day_first_without_a_guess(tmp_path: Path, vault: Path) -> None:
    """ "12.03.24" (a German or Russian export) reads both ways, in order either way: dates
    written with dots are day first in every locale, so no warning asks for `--date-order`
    (it was said at every ingest, the same export's again included)."""
    path = write(tmp_path, "WhatsApp Chat mit Anna.txt", "[01.02.24, 09:00:00] Anna: hallo\n[01.03.24, 09:00:00] Ben: hi\n")
    report = ingest_paths("chat", [path], vault)
    assert report.warnings == []
    assert [t[:10] for _, t, _ in texts(parse_whatsapp(path))] == ["2024-02-01", "2024-03-01"]
    assert [t[:10] for _, t, _ in texts(parse_whatsapp(path, date_order="mdy"))] == ["2024-01-02", "2024-01-03"]



def test_whatsapp_dates_written_with_dots_in_order_only_month_first_are_read_so(tmp_path: Path, vault: Path) -> None:
    """Dots say "day first" only when nothing else tells: dates that are in time order only
    read month first ("01.09.24" then "02.01.24") are read so, as before, without a warning;
    a vault that holds them so learns nothing new from the export."""
    days = ["01.02.24", "01.03.24", "01.05.24", "01.09.24", "02.01.24"]
    path = write(tmp_path, "WhatsApp Chat with Anna.txt", "".join(f"{d}, 10:00 - Anna: day {d}\n" for d in days))
    assert [t[:10] for _, t, _ in texts(parse_whatsapp(path))] == [
        "2024-01-02",
        "2024-01-03",
        "2024-01-05",
        "2024-01-09",
        "2024-02-01",
    ]
    first = ingest_paths("chat", [path], vault, date_order="mdy")
    report = ingest_paths("chat", [path], vault)
    assert (first.messages_added, report.messages_added, report.messages_edited, report.warnings) == (5, 0, 0, [])

def test_one_message_sent_to_two_chats_stays_in_both(tmp_path: Path, vault: Path) -> None:
    """"Happy new year!" sent to two groups in the same minute has one hashed id in both: each
    chat keeps it, and neither chat's messages go into the other's note."""
    family = write(tmp_path, "WhatsApp Chat with Family.txt", "01/01/2025, 00:00 - Me: Happy new year!!\n01/01/2025, 00:05 - Mum: Same to you\n")
    climbing = write(tmp_path, "WhatsApp Chat with Climbing.txt", "01/01/2025, 00:00 - Me: Happy new year!!\n01/01/2025, 00:07 - Zoe: Crag on the 3rd?\n")
    ingest_paths("chat", [family], vault)
    report = ingest_paths("chat", [climbing], vault)
    assert report.messages_added == 2
    texts = {p.parent.name: p.read_text(encoding="utf-8") for p in (vault / "sources/chat/whatsapp").rglob("*.md")}
    assert sorted(texts) == ["climbing", "family"]
    assert "Happy new year" in texts["climbing"] and "Crag" in texts["climbing"] and "Mum" not in texts["climbing"]
    assert "Zoe" not in texts["family"]


def test_a_download_ingested_under_its_numbered_name_is_found_again(tmp_path: Path, vault: Path) -> None:
    """Ingested when " (1)" was part of the chat's name: its next export, downloaded as " (2)"
    or under its plain name, adds only its new messages, to the chat's notes."""

    from vaultmind.ingest.writer import write_batches

    export = write(tmp_path, "WhatsApp Chat with Alice (1).txt", WHATSAPP["iso.txt"])
    [batch] = parse_whatsapp(export)
    assert (batch.meta.source_id, batch.legacy_source_id) == ("whatsapp:Alice", "whatsapp:Alice (*)")
    before = replace(batch, meta=replace(batch.meta, source_id="whatsapp:Alice (1)", scope="whatsapp/Alice (1)"), legacy_source_id=None)
    write_batches(vault, [before])  # as an earlier vaultmind wrote it
    assert ingest_paths("chat", [export], vault).written == []
    grown = WHATSAPP["iso.txt"] + "2024-03-14, 08:00 - Alice: One more\n"
    for name, known in (("WhatsApp Chat with Alice (2).txt", 3), ("WhatsApp Chat with Alice.txt", 4)):
        report = ingest_paths("chat", [write(tmp_path / name[:-4], name, grown)], vault)
        assert (report.messages_added, report.messages_known) == (4 - known, known), name
    notes = sorted(p.parent.name for p in (vault / "sources/chat/whatsapp").rglob("*.md"))
    assert set(notes) == {"alice-1"}, notes
    room = write(tmp_path, "WhatsApp Chat with Room (101).txt", "2024-03-04, 09:00 - Alice: Key is under the mat\n")
    assert parse_whatsapp(room)[0].meta.title == "Room (101)", "a name's own number is no download's"


def test_a_whatsapp_message_line_pasted_into_a_message_stays_in_it(tmp_path: Path, vault: Path) -> None:
    """A message quoting lines copied from another chat was cut at each of them: the pasted
    "12/01/2024, 10:15 - Bob: hi" became a message of Bob's in January, in a chat he is not in;
    a pasted line of another layout or date format (an iOS line, a year-first or month-first
    date) became a message too, or stopped the ingest ("the date format changes within the
    file", "the date order changes within the file"). Such lines
    stay in the message they were pasted into, whose id is its own lines' (the id a note
    written before gave it: that note is left as it is, without a warning)."""
    export = write(tmp_path, "WhatsApp Chat with Trip.txt", (
        "13/03/2024, 09:00 - Alice: Look what Bob wrote in the other group:\n"
        "12/01/2024, 10:15 - Bob: hi, the ferry leaves at 7\n"
        "12/01/2024, 10:16 - Carl: from pier 3\n"
        "13/03/2024, 09:02 - Dan: and this one\n"
        "[2024-02-11, 08:00:00] Erin: bring cash\n"
        "13/03/2024, 09:05 - Alice: ok, and from the US group:\n"
        "12/31/2023, 23:59 - Zoe: happy new year\n"
        "12/03/2024, 23:30 - Dan: (sent offline)\n"
    ))
    [batch] = parse_whatsapp(export)
    assert [(m.author, m.text) for m in batch.messages] == [
        ("Alice", "Look what Bob wrote in the other group:\n12/01/2024, 10:15 - Bob: hi, the ferry leaves at 7\n"
                  "12/01/2024, 10:16 - Carl: from pier 3"),
        ("Dan", "and this one\n[2024-02-11, 08:00:00] Erin: bring cash"),
        ("Alice", "ok, and from the US group:\n12/31/2023, 23:59 - Zoe: happy new year"),  # (month first)
        ("Dan", "(sent offline)"),  # a participant's, hours back: a message
    ]
    own = {m.message_id: m.text.split("\n", 1)[0] for m in batch.messages}
    assert sorted(batch.earlier_texts) == sorted((m.message_id, own[m.message_id]) for m in batch.messages[:3])
    # a note written before held each message's own lines alone: it stays as it is
    write_batches(vault, [replace(batch, messages=tuple(replace(m, text=own[m.message_id]) for m in batch.messages), earlier_texts=())])
    before = snapshot_files(vault)
    again = ingest_paths("chat", [export], vault)
    assert (again.written, again.warnings, again.messages_added) == ([], [], 0)
    assert snapshot_files(vault) == before


def test_a_whatsapp_line_without_the_space_after_the_name_is_no_line_of_the_message_above(tmp_path: Path, vault: Path) -> None:
    """"13/03/2024, 09:01 - Alice:." (a participant's name, a colon, no space) was made a line of
    Bob's message above it, once lines without an author were kept as lines pasted into it. It
    is a message line written wrong: left out, as reference parsers leave it, and said."""
    export = write(tmp_path, "WhatsApp Chat with Ferry.txt", (
        "13/03/2024, 09:00 - Alice: the ferry leaves at 7\n"
        "13/03/2024, 09:00 - Bob: from pier 3\n"
        "13/03/2024, 09:01 - Alice:.\n"
        "13/03/2024, 09:02 - Bob: see you there\n"
        "13/03/2024, 09:03 - dentist at 10\n"
    ))
    [batch] = parse_whatsapp(export)
    assert [(m.author, m.text) for m in batch.messages] == [
        ("Alice", "the ferry leaves at 7"),
        ("Bob", "from pier 3"),
        ("Bob", "see you there\n13/03/2024, 09:03 - dentist at 10"),  # (a pasted line stays one)
    ]
    report = ingest_paths("chat", [export], vault)
    assert report.messages_added == 3
    assert [w for w in report.warnings if "line 3" in w and "Alice" in w and "left out" in w], report.warnings


def test_whatsapp_lines_a_participant_writes_another_way_stay_messages(tmp_path: Path, vault: Path) -> None:
    """A file that writes the chat's own lines two ways (a phone whose clock went from 24 h to
    12 h, two exports joined, one with seconds): the lines of the fewer way were taken for
    lines pasted from another chat, and Bob's "hey" became a line of Alice's "hi". A line of
    another way by someone who writes lines of the usual way is a message, as it was before;
    a stranger's is still pasted."""
    export = write(tmp_path, "WhatsApp Chat with Mix.txt", (
        "13/03/2024, 09:00 - Alice: hi\n"
        "13/03/2024, 09:05 - Bob: hey\n"
        "13/03/2024, 9:10 PM - Alice: new phone\n"
        "13/03/2024, 9:12 PM - Bob: nice\n"
        "14/03/2024, 8:00 AM - Alice: morning\n"
        "14/03/2024, 8:01 AM - Bob: look:\n"
        "[2024-02-11, 08:00:00] Erin: bring cash\n"
    ))
    [batch] = parse_whatsapp(export)
    assert [(m.author, m.text) for m in batch.messages] == [
        ("Alice", "hi"),
        ("Bob", "hey"),
        ("Alice", "new phone"),
        ("Bob", "nice"),
        ("Alice", "morning"),
        ("Bob", "look:\n[2024-02-11, 08:00:00] Erin: bring cash"),
    ]
    first = ingest_paths("chat", [export], vault)
    again = ingest_paths("chat", [export], vault)
    assert (first.messages_added, again.messages_added, again.written, again.warnings) == (6, 0, [], [])


def test_whatsapp_messages_below_a_line_that_reads_as_a_system_line_are_kept(tmp_path: Path, vault: Path) -> None:
    """A message listing dated lines without a name ("18/03/2024, 10:00 - dentist", a pasted
    calendar) reads them as system lines. Their later date made the chat's next message, by
    someone who writes once, look pasted: it became a line of the system line above it and
    was dropped with it. A system line dates nothing, and nothing is put into one. (Such a
    line is no notice WhatsApp writes: it and its lines stay lines of the message above.)"""
    export = write(tmp_path, "WhatsApp Chat with Week.txt", (
        "13/03/2024, 09:00 - Alice: my calendar for next week:\n"
        "18/03/2024, 10:00 - dentist\n"
        "19/03/2024, 14:00 - team lunch\n"
        "13/03/2024, 09:05 - Bob: ok\n"
        "13/03/2024, 09:06 - Carl: see you there\n"
        "13/03/2024, 09:07 - Alice: good\n"
    ))
    [batch] = parse_whatsapp(export)
    assert [(m.author, m.text) for m in batch.messages] == [
        ("Alice", "my calendar for next week:\n18/03/2024, 10:00 - dentist\n19/03/2024, 14:00 - team lunch"),
        ("Bob", "ok"),
        ("Carl", "see you there"),
        ("Alice", "good"),
    ]
    report = ingest_paths("chat", [export], vault)
    assert (report.messages_added, report.warnings) == (4, [])
    [note] = [vault / rel for rel in report.written]
    assert "> ok\n" in note.read_text(encoding="utf-8") and "> see you there\n" in note.read_text(encoding="utf-8")


def test_whatsapp_malformed_names_the_line(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="line 1"):
        parse_whatsapp(write(tmp_path, "x.txt", "hello there\n04/03/2024, 09:00 - A: x\n"))
    with pytest.raises(IngestError, match="line 2: invalid date"):
        parse_whatsapp(write(tmp_path, "y.txt", "2024-03-04, 09:00 - A: x\n2024-02-30, 09:00 - A: y\n"))
    # each date reads only one way, and not the same way: named, not an internal error
    with pytest.raises(IngestError, match="line 2: the date order changes"):
        parse_whatsapp(write(tmp_path, "z.txt", "31/12/24, 10:00 - A: x\n12/31/24, 10:05 - B: y\n"))


def test_signal_text(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "Alice.txt",
        "[2019-12-24, 12:23] Jane Doe: Hello John!\n[2020-01-17, 21:49] John Doe: Hello\nJane!\n",
    )
    assert detect_chat_format(path) == "signal"
    batches = parse_signal(path)
    assert batches[0].meta.source_id == "signal:Alice"
    assert texts(batches) == [
        ("Jane Doe", "2019-12-24 12:23:00", "Hello John!"),
        ("John Doe", "2020-01-17 21:49:00", "Hello\nJane!"),
    ]


# --- Telegram ---------------------------------------------------------------------------------

TELEGRAM_CHAT: dict[str, Any] = {
    "name": "Q3 team",
    "type": "private_group",
    "id": 4242,
    "messages": [
        {
            "id": 1,
            "type": "service",
            "date": "2024-03-04T09:59:00",
            "date_unixtime": "1709546340",
            "actor": "Alice",
            "action": "create_group",
        },
        {
            "id": 2,
            "type": "message",
            "date": "2024-03-04T10:00:00",
            "date_unixtime": "1709546400",
            "from": "Alice",
            "text": "Budget?",
        },
        {
            "id": 3,
            "type": "message",
            "date_unixtime": "1709546460",
            "from": "Bob",
            "text": [
                "See ",
                {"type": "bold", "text": "this"},
                " ",
                {"type": "text_link", "text": "sheet", "href": "https://x.example/q3"},
            ],
        },
        {
            "id": 4,
            "type": "message",
            "date_unixtime": "1709546520",
            "from": None,
            "text": "",
            "photo": "photos/1.jpg",
        },
        {
            "id": 5,
            "type": "message",
            "date": "2024-03-04T11:00:00",
            "from": "Bob",
            "text": "",
            "media_type": "sticker",
            "sticker_emoji": "👍",
        },
    ],
}


def test_a_telegram_export_without_unix_times_is_recognised(tmp_path: Path, vault: Path) -> None:
    """Telegram Desktop before 2021 wrote only the local `date`: such an export was "cannot
    tell which chat export this is" without `--format telegram`. Its chat `type` says it; its
    times are read in the zone given."""
    old = {
        "name": "Alice", "type": "personal_chat", "id": 123,
        "messages": [{"id": 1, "type": "message", "date": "2019-07-01T10:00:00", "from": "Alice", "from_id": 123, "text": "hi"}],
    }
    export = write(tmp_path, "result.json", json.dumps(old, indent=1))
    assert detect_chat_format(export) == "telegram"
    report = ingest_paths("chat", [export], vault, tz="Europe/Berlin")
    assert report.written == ["sources/chat/telegram/alice/2019-07-01.md"]
    assert 'at="2019-07-01T08:00:00Z"' in (vault / report.written[0]).read_text(encoding="utf-8")


def test_telegram_single_and_batch(tmp_path: Path) -> None:
    single = write(tmp_path, "result.json", json.dumps(TELEGRAM_CHAT))
    batch = write(
        tmp_path,
        "all.json",
        json.dumps({"about": "x", "chats": {"list": [TELEGRAM_CHAT]}, "left_chats": {"list": []}}),
    )
    assert detect_chat_format(single) == detect_chat_format(batch) == "telegram"
    batches = parse_telegram(single, tz=zone("Europe/Berlin"))
    assert parse_telegram(batch, tz=zone("Europe/Berlin")) == batches
    meta = batches[0].meta
    assert (meta.source_id, meta.scope, meta.title) == ("telegram:4242", "telegram/Q3 team", "Q3 team")
    got = [(m.message_id, m.author, m.text, m.source_ref) for m in only(batches)]
    assert got == [
        ("2", "Alice", "Budget?", "telegram://chat/4242/2"),
        ("3", "Bob", "See this [sheet](https://x.example/q3)", "telegram://chat/4242/3"),
        ("4", "Deleted Account", "[photo]", "telegram://chat/4242/4"),
        ("5", "Bob", "👍", "telegram://chat/4242/5"),
    ]
    assert str(batches[0].messages[3].timestamp) == "2024-03-04 10:00:00+00:00"  # local Berlin time


def test_a_forwarded_telegram_message_says_who_wrote_it(tmp_path: Path) -> None:
    forward = {"id": 11, "type": "message", "date": "2024-05-01T09:00:00", "from": "Tom Becker",
               "forwarded_from": "Hausverwaltung Schulz", "text": "Water is off on 10 May, 8 to 12."}
    export = write(tmp_path, "result.json", json.dumps({**TELEGRAM_CHAT, "messages": [forward]}))
    [message] = only(parse_telegram(export))
    assert (message.author, message.text) == ("Tom Becker", "[forwarded from Hausverwaltung Schulz]\nWater is off on 10 May, 8 to 12.")


def test_telegram_chats_without_a_name_keep_theirs_across_exports(tmp_path: Path) -> None:
    """Telegram lists an account's chats by recent activity: a chat without a name had been
    named by its place in the list ("chat-2"), another at the next export."""
    saved = {**TELEGRAM_CHAT, "name": None, "type": "saved_messages", "id": 999}
    nameless = {**TELEGRAM_CHAT, "name": None, "type": "personal_chat", "id": 77}
    names = []
    for order in ([TELEGRAM_CHAT, saved, nameless], [nameless, saved, TELEGRAM_CHAT]):
        export = write(tmp_path, "result.json", json.dumps({"chats": {"list": order}, "left_chats": {"list": []}}))
        names.append(sorted((b.meta.source_id, b.meta.title) for b in parse_telegram(export)))
    assert names[0] == names[1]
    assert names[0] == [("telegram:4242", "Q3 team"), ("telegram:77", "chat-77"), ("telegram:999", "Saved Messages")]


def test_telegram_bad_time_names_the_message(tmp_path: Path) -> None:
    bad = {"name": "x", "id": 1, "messages": [{"id": 1, "type": "message", "from": "A", "text": "hi"}]}
    with pytest.raises(IngestError, match="message 0"):
        parse_telegram(write(tmp_path, "bad.json", json.dumps(bad)))
    bad["messages"][0] |= {"date_unixtime": "1709546400", "edited_unixtime": "soon"}
    with pytest.raises(IngestError, match="message 0: cannot read the edit time 'soon'"):
        parse_telegram(write(tmp_path, "bad.json", json.dumps(bad)))


def test_telegram_empty_edit_time_reads_as_unedited(tmp_path: Path, vault: Path) -> None:
    """A message whose edit time is empty (`"edited": null`, `""`) stopped the ingest of the
    whole chat ("no edited_unixtime or edited"), which had read before: it is read unedited."""
    chat = {"name": "Team", "type": "private_group", "id": 7, "messages": [
        {"id": 1, "type": "message", "date": "2024-03-04T09:00:00", "date_unixtime": "1709542800", "from": "A",
         "text": "hi", "edited": None},
        {"id": 2, "type": "message", "date": "2024-03-04T09:01:00", "date_unixtime": "1709542860", "from": "B",
         "text": "hey", "edited": "", "edited_unixtime": ""},
    ]}
    export = write(tmp_path, "result.json", json.dumps(chat))
    [batch] = parse_telegram(export)
    assert [(m.text, m.edited) for m in batch.messages] == [("hi", None), ("hey", None)]
    report = ingest_paths("chat", [export], vault)
    assert (report.messages_added, report.warnings) == (2, [])


def _telegram_edit(text: str, edited: int | None) -> dict[str, Any]:
    """A Telegram chat export of two messages, the first `text`, edited at `edited` (epoch s)."""
    first: dict[str, Any] = {"id": 7, "type": "message", "date_unixtime": "1709546400", "from": "Alice", "text": text}
    if edited is not None:
        first |= {"edited": "2024-03-04T11:00:00", "edited_unixtime": str(edited)}
    second = {"id": 8, "type": "message", "date_unixtime": "1709546460", "from": "Bob", "text": "ok"}
    return {"name": "Trip", "type": "private_group", "id": 99, "messages": [first, second]}


def test_a_telegram_message_edited_after_an_export_shows_its_new_text(tmp_path: Path, vault: Path) -> None:
    """Telegram keeps a message's id through an edit: the next export's text was taken for a
    conflict, the note kept the text before the edit, and said it differed. The note shows the
    new text, the one before kept below it (quoted), the id unchanged; an older export changes
    nothing, and a second edit keeps both earlier texts."""
    export = tmp_path / "result.json"
    note = vault / "sources/chat/telegram/trip/2024-03-04.md"
    export.write_text(json.dumps(_telegram_edit("Meet at 6 at the harbour", None)), encoding="utf-8")
    ingest_paths("chat", [export], vault)
    export.write_text(json.dumps(_telegram_edit("Meet at 7 at the harbour", 1709550000)), encoding="utf-8")
    report = ingest_paths("chat", [export], vault)
    assert (report.messages_edited, report.messages_added, report.warnings) == (1, 0, [])
    assert report.written == ["sources/chat/telegram/trip/2024-03-04.md"]
    [message] = [m for m in parse_note("sources/chat/telegram/trip/2024-03-04.md", note.read_text(encoding="utf-8")).leaves if m.message_id == "7"]
    assert message.text == (
        "Meet at 7 at the harbour\n\n[edited 2024-03-04T11:00:00Z, the text before:]\n> Meet at 6 at the harbour"
    )
    assert message.source_ref == "telegram://chat/99/7"
    assert 'edited="2024-03-04T11:00:00Z"' in note.read_text(encoding="utf-8")
    before = snapshot_files(vault)
    for text, edited in (("Meet at 7 at the harbour", 1709550000), ("Meet at 6 at the harbour", None)):
        export.write_text(json.dumps(_telegram_edit(text, edited)), encoding="utf-8")
        again = ingest_paths("chat", [export], vault)  # the same export again, then the first one
        assert (again.written, again.messages_edited, again.warnings) == ([], 0, [])
    assert snapshot_files(vault) == before
    export.write_text(json.dumps(_telegram_edit("Meet at 8 at the pier", 1709553600)), encoding="utf-8")
    assert ingest_paths("chat", [export], vault).messages_edited == 1
    [message] = [m for m in parse_note("sources/chat/telegram/trip/2024-03-04.md", note.read_text(encoding="utf-8")).leaves if m.message_id == "7"]
    assert message.text.startswith("Meet at 8 at the pier\n\n[edited 2024-03-04T12:00:00Z, the text before:]\n")
    assert "> Meet at 7 at the harbour" in message.text and "> > Meet at 6 at the harbour" in message.text


def test_a_slack_message_edited_after_an_export_shows_its_new_text(tmp_path: Path, vault: Path) -> None:
    """Slack marks an edit (`edited.ts`) and keeps the message's `ts`: the next export's text
    had been reported as differing from the note, which kept the text before the edit. As for
    Telegram, the note shows the new text, the one before quoted below it, the id unchanged."""
    export = slack_export(tmp_path / "export")
    day = export / "general" / "2024-03-04.json"
    ingest_paths("chat", [export], vault)
    messages = json.loads(day.read_text(encoding="utf-8"))
    [edited] = [m for m in messages if m.get("text") == "On it"]
    edited |= {"text": "On it, done by Friday", "edited": {"user": "U2", "ts": "1709550000.000000"}}
    day.write_text(json.dumps(messages), encoding="utf-8")
    report = ingest_paths("chat", [export], vault)
    assert (report.messages_edited, report.warnings) == (1, [])
    note = (vault / "sources/chat/slack/t9/general/2024-03-04.md").read_text(encoding="utf-8")
    assert "> On it, done by Friday\n>\n> [edited 2024-03-04T11:00:00Z, the text before:]\n> > On it\n" in note
    assert 'id="1709543110.000200"' in note
    assert ingest_paths("chat", [export], vault).written == []


def test_two_exports_of_a_telegram_edit_in_one_ingest_end_as_one_after_the_other(tmp_path: Path, vault: Path) -> None:
    """Given together, in either order, the exports before and after an edit write what
    ingesting them one after the other writes."""
    old = write(tmp_path / "old", "result.json", json.dumps(_telegram_edit("Meet at 6", None)))
    new = write(tmp_path / "new", "result.json", json.dumps(_telegram_edit("Meet at 7", 1709550000)))
    ingest_paths("chat", [old], vault)
    ingest_paths("chat", [new], vault)
    one_by_one = snapshot_files(vault)
    for order in ([old, new], [new, old]):
        together = tmp_path / f"vault-{len(order)}-{order[0].parent.name}"
        together.mkdir()
        report = ingest_paths("chat", order, together)
        assert report.warnings == []
        assert snapshot_files(together) == one_by_one


# --- ChatGPT ----------------------------------------------------------------------------------


def chatgpt_conversation() -> dict[str, Any]:
    def node(
        nid: str, parent: str | None, children: list[str], message: dict[str, Any] | None
    ) -> dict[str, Any]:
        return {"id": nid, "parent": parent, "children": children, "message": message}

    def msg(mid: str, role: str, parts: list[Any], t: float | None, **extra: Any) -> dict[str, Any]:
        content = extra.pop("content", {"content_type": "text", "parts": parts})
        return {
            "id": mid,
            "author": {"role": role},
            "create_time": t,
            "content": content,
            "recipient": "all",
            **extra,
        }

    png = "data:image/png;base64," + "iVBORw0KGgo" * 20
    return {
        "title": "Q3 budget help",
        "create_time": 1709542800.0,
        "conversation_id": "6f1c2a9b-0000-4000-8000-000000000001",
        "current_node": "a2",
        "mapping": {
            "root": node("root", None, ["sys"], None),
            "sys": node("sys", "root", ["u1"], msg("sys", "system", [""], None, weight=0.0)),
            "u1": node(
                "u1",
                "sys",
                ["a1-old", "a1"],
                msg("u1", "user", ["How do I split the Q3 budget?"], 1709542800.5),
            ),
            "a1-old": node("a1-old", "u1", [], msg("a1-old", "assistant", ["An older answer"], 1709542801.0)),
            "a1": node(
                "a1",
                "u1",
                ["t1"],
                msg(
                    "a1",
                    "assistant",
                    ["search('q3')"],
                    1709542802.0,
                    recipient="browser",
                    content={"content_type": "code", "text": "search('q3')"},
                ),
            ),
            "t1": node("t1", "a1", ["u2"], msg("t1", "tool", ["results…"], 1709542803.0)),
            "u2": node(
                "u2",
                "t1",
                ["a2"],
                msg(
                    "u2",
                    "user",
                    [
                        "And with this chart?",
                        {"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"},
                    ],
                    1709542810.0,
                ),
            ),
            "a2": node(
                "a2",
                "u2",
                [],
                msg(
                    "a2",
                    "assistant",
                    [f"Split it 60/40 \ue200cite\ue202turn0search0\ue201. Chart: {png}"],
                    1709542820.0,
                ),
            ),
        },
    }


def test_chatgpt_current_branch_prose_only(tmp_path: Path) -> None:
    path = write(tmp_path, "conversations.json", json.dumps([chatgpt_conversation()], indent=1))
    assert detect_chat_format(path) == "chatgpt"
    batches = parse_chatgpt(path)
    batch = batches[0]
    assert batch.bucket == "whole" and batch.note_name == "2024-03-04-6f1c2a9b"
    assert (
        batch.meta.source_id == "chatgpt:6f1c2a9b-0000-4000-8000-000000000001"
        and batch.meta.scope == "chatgpt"
    )
    assert [(m.message_id, m.author, m.text) for m in batch.messages] == [
        ("u1", "user", "How do I split the Q3 budget?"),
        ("u2", "user", "And with this chart?\n[image]"),
        ("a2", "ChatGPT", "Split it 60/40 . Chart: [image]"),
    ]


def test_chatgpt_malformed_names_line(tmp_path: Path) -> None:
    path = write(tmp_path, "conversations.json", '[\n  {"title": "x", "mapping": {}},\n  {"title": "y"}\n]')
    with pytest.raises(IngestError, match="line 2: conversation 0: no id"):
        parse_chatgpt(path)


# --- the write path end to end ------------------------------------------------------------------


def test_ingest_twice_and_overlapping_exports(tmp_path: Path, vault: Path) -> None:
    first = write(tmp_path, "WhatsApp Chat with Alice.txt", WHATSAPP["android_dmy.txt"])
    report = ingest_paths("chat", [first], vault)
    assert report.messages_added == 3 and len(report.written) == 2
    before = snapshot_files(vault)
    again = ingest_paths("chat", [first], vault)
    assert again.written == [] and again.messages_added == 0 and again.messages_known == 3
    assert snapshot_files(vault) == before

    # a later export of the same chat overlaps the first: only the new message is added
    later = write(
        tmp_path / "later",
        "WhatsApp Chat with Alice.txt",
        WHATSAPP["android_dmy.txt"].split("13/03/2024, 21:05")[0].split("04/03/2024, 09:01")[0]
        + "13/03/2024, 21:05 - Bob: Yes: done\n13/03/2024, 21:06 - Bob: <Media omitted>\n14/03/2024, 08:00 - Alice: thanks\n",
    )
    report = ingest_paths("chat", [later], vault)
    assert report.messages_added == 1 and report.messages_known == 3
    note = vault / "sources/chat/whatsapp/alice/2024-03-13.md"
    parsed = parse_note("sources/chat/whatsapp/alice/2024-03-13.md", note.read_text(encoding="utf-8"))
    assert [leaf.text for leaf in parsed.leaves] == ["Yes: done", "<Media omitted>"]
    assert (vault / "sources/chat/whatsapp/alice/2024-03-14.md").is_file()


def test_malformed_export_writes_nothing(tmp_path: Path, vault: Path) -> None:
    good = write(tmp_path, "good.txt", WHATSAPP["iso.txt"])
    bad = write(tmp_path, "bad.jsonl", json.dumps(GENERIC[0]) + "\n" + '{"author": "A", "text": "x"}\n')
    with pytest.raises(IngestError) as info:
        ingest_paths("chat", [good, bad], vault)
    assert str(bad) in str(info.value) and "line 2" in str(info.value)
    assert snapshot_files(vault) == {}


def test_folder_walk_skips_unknown_files(tmp_path: Path, vault: Path) -> None:
    folder = tmp_path / "exports"
    write(folder, "a.txt", WHATSAPP["iso.txt"])
    write(folder, "notes.txt", "just some text\n")
    write(folder, ".hidden/b.txt", WHATSAPP["iso.txt"])
    report = ingest_paths("chat", [folder], vault)
    assert report.messages_added == 3
    assert any("notes.txt" in w and "not recognised" in w for w in report.warnings)


def test_a_file_in_a_folder_that_only_looks_like_an_export_is_skipped_not_fatal(tmp_path: Path, vault: Path) -> None:
    """A `target.json` beside the exports reads as the generic format but is none: it is skipped
    with its error, and the real exports beside it are ingested. Named on its own, it stops."""
    folder = tmp_path / "exports"
    write(folder, "a.txt", WHATSAPP["iso.txt"])
    write(folder, "target.json", '[{"author": "Alice", "timestamp": "2024-03-04T09:00:00Z"}]\n')
    report = ingest_paths("chat", [folder], vault)
    assert report.messages_added == 3
    assert [w for w in report.warnings if "target.json" in w and "skipped (read as generic)" in w], report.warnings
    with pytest.raises(IngestError):
        ingest_paths("chat", [folder / "target.json"], vault)


def test_notes_render_and_parse_back_one_leaf_per_message(tmp_path: Path, vault: Path) -> None:
    export = slack_export(tmp_path / "export")
    report = ingest_paths("chat", [export], vault)
    leaves = []
    for rel in report.written:
        leaves.extend(parse_note(rel, (vault / rel).read_text(encoding="utf-8")).leaves)
    batches = parse_slack(export)
    messages = {m.message_id: m for b in batches for m in b.messages}
    assert len(leaves) == len(messages) == report.messages_added
    for leaf in leaves:
        assert leaf.message_id is not None
        original = messages[leaf.message_id]
        assert (leaf.text, leaf.author, leaf.source_ref) == (
            original.text,
            original.author,
            original.source_ref,
        )


# --- the reference samples (read by path, only when present) ---------------------------------


def _squash(text: str) -> str:
    return re.sub(r"\s", "", text)


def _against_target(batches: list[SourceBatch], target: Path) -> None:
    want = sorted(
        (t["timestamp"], t["author"], _squash(t["message"])) for t in json.loads(target.read_text("utf-8"))
    )
    got = sorted(
        (f"{m.timestamp:%Y-%m-%dT%H:%M:%S}", m.author, _squash(m.text)) for b in batches for m in b.messages
    )
    assert got == want


@pytest.mark.skipif(not CHAT_EXPORTS.is_dir(), reason="reference chat exports not present")
def test_reference_samples_match_their_targets() -> None:
    miner = CHAT_EXPORTS / "chat-miner"
    for path in sorted((miner / "whatsapp").glob("*.txt")):
        assert detect_chat_format(path) == "whatsapp"
        _against_target(parse_whatsapp(path), miner / "whatsapp" / "target.json")
    for name in ("test_single_export.json", "test_batch_export.json"):
        _against_target(parse_telegram(miner / "telegram" / name), miner / "telegram" / "target.json")
    _against_target(parse_signal(miner / "signal" / "test_export.txt"), miner / "signal" / "target.json")
    export = CHAT_EXPORTS / "slackdump-export" / "source_export_dir"
    batches = parse_slack(export)
    ids = [m.message_id for m in batches[0].messages]
    assert len(ids) == 14 and "1736554636.807919" not in ids  # the channel_join is dropped
    replies = [m for m in batches[0].messages if m.source_ref and "thread_ts=" in m.source_ref]
    assert len(replies) == 4


def test_a_chatgpt_answer_regenerated_after_an_ingest_is_marked_replaced_not_kept_as_said(tmp_path: Path, vault: Path) -> None:
    """An answer written by an earlier ingest, then regenerated in ChatGPT, stayed beside the new
    one as if both were said. It stays (nothing is deleted) with a last line saying it was
    replaced; the new answer is added; ingesting again changes nothing. Switching back to the
    first answer in ChatGPT moves the mark; an older export changes no mark."""
    conv = chatgpt_conversation()
    first = write(tmp_path / "1", "conversations.json", json.dumps([conv]))
    conv["mapping"]["u2"]["children"].append("a2b")
    regenerated = {"id": "a2b", "author": {"role": "assistant"}, "create_time": 1709543000.0, "recipient": "all",
                   "content": {"content_type": "text", "parts": ["Split it 50/50."]}}
    conv["mapping"]["a2b"] = {"id": "a2b", "parent": "u2", "children": [], "message": regenerated}
    second = write(tmp_path / "2", "conversations.json", json.dumps([{**conv, "current_node": "a2b"}]))
    back = write(tmp_path / "3", "conversations.json", json.dumps([{**conv, "current_node": "a2"}]))
    rel = "sources/chat/chatgpt/2024-03-04-6f1c2a9b.md"

    def leaves() -> list[tuple[str | None, str]]:
        return [(leaf.message_id, leaf.text) for leaf in parse_note(rel, (vault / rel).read_text(encoding="utf-8")).leaves]

    assert ingest_paths("chat", [first], vault).messages_added == 3
    report = ingest_paths("chat", [second], vault)
    assert (report.messages_added, report.written, report.warnings) == (1, [rel], [])
    replaced = "Split it 60/40 . Chart: [image]\n\n[replaced: an earlier answer, regenerated in ChatGPT]"
    assert leaves()[2:] == [("a2", replaced), ("a2b", "Split it 50/50.")]
    before = snapshot_files(vault)
    assert ingest_paths("chat", [second], vault).written == [] and snapshot_files(vault) == before
    older = ingest_paths("chat", [first], vault)
    assert (older.written, older.warnings) == ([], []) and snapshot_files(vault) == before
    assert ingest_paths("chat", [back], vault).written == [rel]
    assert leaves()[2:] == [
        ("a2", "Split it 60/40 . Chart: [image]"),
        ("a2b", "Split it 50/50.\n\n[replaced: an earlier answer, regenerated in ChatGPT]"),
    ]


def _capital(nodes: list[tuple[str, str | None, str, str, int]], current: str) -> list[dict[str, Any]]:
    """A ChatGPT export of one conversation: (id, parent, role, text, seconds) per message."""
    mapping: dict[str, dict[str, Any]] = {"root": {"id": "root", "parent": None, "children": [], "message": None}}
    for nid, parent, role, text, t in nodes:
        message = {"id": nid, "author": {"role": role}, "create_time": 1710000000 + t, "recipient": "all",
                   "content": {"content_type": "text", "parts": [text]}}
        mapping[nid] = {"id": nid, "parent": parent or "root", "children": [], "message": message}
        mapping[parent or "root"]["children"].append(nid)
    return [{"id": "conv00001234", "conversation_id": "conv00001234", "title": "Capital", "create_time": 1710000000,
             "mapping": mapping, "current_node": current}]


def _chatgpt_leaves(vault: Path) -> list[tuple[str | None, str]]:
    [path] = sorted((vault / "sources/chat/chatgpt").glob("*.md"))
    rel = path.relative_to(vault).as_posix()
    return [(leaf.message_id, leaf.text) for leaf in parse_note(rel, path.read_text(encoding="utf-8")).leaves]


def test_a_chatgpt_message_whose_own_text_ends_like_a_mark_keeps_it(tmp_path: Path, vault: Path) -> None:
    """A prompt that ends in a "[replaced: …]" line of its own (a vaultmind note pasted into
    ChatGPT) lost that line when its answer was regenerated, said as "kept the note's text".
    Only the mark vaultmind puts right after a message's own text (as the export gives it) is
    a mark."""
    mark = "\n\n[replaced: an earlier answer, regenerated in ChatGPT]"
    prompt = "Why does my vaultmind note end like this?" + mark
    u1, a1, a1b = ("u1", None, "user", prompt, 10), ("a1", "u1", "assistant", "Sydney.", 20), ("a1b", "u1", "assistant", "Canberra.", 100)
    first = write(tmp_path / "1", "conversations.json", json.dumps(_capital([u1, a1], "a1")))
    second = write(tmp_path / "2", "conversations.json", json.dumps(_capital([u1, a1, a1b], "a1b")))
    back = write(tmp_path / "3", "conversations.json", json.dumps(_capital([u1, a1, a1b], "a1")))
    ingest_paths("chat", [first], vault)
    report = ingest_paths("chat", [second], vault)
    assert (report.messages_added, report.warnings) == (1, [])
    assert _chatgpt_leaves(vault) == [("u1", prompt), ("a1", "Sydney." + mark), ("a1b", "Canberra.")]
    report = ingest_paths("chat", [back], vault)
    assert report.warnings == []
    assert _chatgpt_leaves(vault) == [("u1", prompt), ("a1", "Sydney."), ("a1b", "Canberra." + mark)]


def test_an_older_chatgpt_export_changes_no_mark_of_a_newer_one(tmp_path: Path, vault: Path) -> None:
    """The marks follow the newest export ingested: an export that does not hold every message
    of the note (an older one, before a prompt was edited) changes none — e3 after e5 took the
    marks back, leaving the old prompt and the edited one both unmarked."""
    u1, a1 = ("u1", None, "user", "Capital of Australia?", 10), ("a1", "u1", "assistant", "Sydney.", 20)
    a1b, a1c = ("a1b", "u1", "assistant", "Canberra.", 100), ("a1c", "u1", "assistant", "Canberra, since 1913.", 200)
    u1e, a1e = ("u1e", None, "user", "Capital city of Australia, officially?", 300), ("a1e", "u1e", "assistant", "Officially Canberra (ACT).", 310)
    exports = {
        "e1": _capital([u1, a1], "a1"),
        "e3": _capital([u1, a1, a1b, a1c], "a1c"),
        "e4": _capital([u1, a1, a1b, a1c], "a1"),  # switched back to the first answer
        "e5": _capital([u1, a1, a1b, a1c, u1e, a1e], "a1e"),  # the prompt edited
    }
    paths = {name: write(tmp_path / name, "conversations.json", json.dumps(conv)) for name, conv in exports.items()}
    for name in ("e1", "e3", "e5"):
        ingest_paths("chat", [paths[name]], vault)
    newest = _chatgpt_leaves(vault)
    assert [(i, text.endswith("]")) for i, text in newest] == [
        ("u1", True), ("a1", True), ("a1c", True), ("u1e", False), ("a1e", False)
    ]
    for name in ("e3", "e4", "e1"):
        report = ingest_paths("chat", [paths[name]], vault)
        assert (report.written, report.warnings) == ([], []), name
        assert _chatgpt_leaves(vault) == newest, name


def test_several_chatgpt_exports_in_one_ingest_show_the_newest_branch(tmp_path: Path, vault: Path) -> None:
    """Exports of one conversation given together wrote every branch unmarked: an answer since
    regenerated read as said. The export that holds all the others' messages is the newest;
    what it holds off its branch is written marked, in any order of the paths."""
    u1, a1 = ("u1", None, "user", "Capital of Australia?", 10), ("a1", "u1", "assistant", "Sydney.", 20)
    a1b = ("a1b", "u1", "assistant", "Canberra.", 100)
    old = write(tmp_path / "old", "conversations.json", json.dumps(_capital([u1, a1], "a1")))
    new = write(tmp_path / "new", "conversations.json", json.dumps(_capital([u1, a1, a1b], "a1b")))
    mark = "\n\n[replaced: an earlier answer, regenerated in ChatGPT]"
    for order, where in (((old, new), vault), ((new, old), tmp_path / "other")):
        if where != vault:
            where.mkdir()
        ingest_paths("chat", list(order), where)
        assert _chatgpt_leaves(where) == [("u1", "Capital of Australia?"), ("a1", "Sydney." + mark), ("a1b", "Canberra.")]
    assert snapshot_files(vault) == snapshot_files(tmp_path / "other"), "the same note in either order"


# --- notes moved out of sources/ ------------------------------------------------------------------


def _grown_chatgpt(extra: int) -> list[dict[str, Any]]:
    """The ChatGPT conversation with `extra` more prompts after its last answer."""
    conv = chatgpt_conversation()
    parent = "a2"
    for n in range(1, extra + 1):
        nid = f"u3-{n}"
        conv["mapping"][parent]["children"].append(nid)
        message = {"id": nid, "author": {"role": "user"}, "create_time": 1709542900.0 + n, "recipient": "all",
                   "content": {"content_type": "text", "parts": [f"One more question, number {n}"]}}
        conv["mapping"][nid] = {"id": nid, "parent": parent, "children": [], "message": message}
        conv["current_node"] = parent = nid
    return [conv]


def _slack_channel(extra: int) -> list[dict[str, Any]]:
    said = ["Budget?", "On it", "Done, see the sheet"][: 2 + extra]
    return [{"type": "message", "user": "U1", "team": "T9", "text": text, "ts": f"17095428{n:02d}.000100"} for n, text in enumerate(said)]


def _telegram(extra: int) -> dict[str, Any]:
    return {**TELEGRAM_CHAT, "messages": TELEGRAM_CHAT["messages"][:3 + extra]}


def _agent(extra: int) -> dict[str, Any]:
    turns = [{"role": "user", "content": "Find the Q3 budget owner."}, {"role": "assistant", "content": "Alice Chen owns it."},
             {"role": "user", "content": "Thanks, and the Q4 one?"}]
    return {"id": "s1", "created_at": "2024-03-04T09:00:00Z", "messages": turns[: 2 + extra]}


# (ingest kind, export file name, the export's text with 0 or 1 message more)
MOVED_EXPORTS: dict[str, tuple[str, str, Any]] = {
    "whatsapp": ("chat", "WhatsApp Chat with Alice.txt", lambda extra: "14/03/2024, 09:00 - Alice: Dinner at 7?\n14/03/2024, 09:05 - Bob: Sure\n"
                 + "14/03/2024, 21:00 - Bob: Great evening\n" * extra),
    "telegram": ("chat", "result.json", lambda extra: json.dumps(_telegram(extra))),
    "slack": ("chat", "general.json", lambda extra: json.dumps(_slack_channel(extra))),
    "generic": ("chat", "team.json", lambda extra: json.dumps(GENERIC[: 2 + extra])),
    "chatgpt": ("chat", "conversations.json", lambda extra: json.dumps(_grown_chatgpt(extra))),
    "agent": ("agent", "sess.json", lambda extra: json.dumps(_agent(extra))),
}


def _held(vault: Path) -> list[tuple[str, str]]:
    """(source id, message id) of every message of every note in the vault, sorted."""
    out = []
    for path in sorted(vault.rglob("*.md")):
        raw = path.read_bytes()
        source_id = str(split_frontmatter(raw.decode("utf-8")).data.get("source_id"))
        out += [(source_id, message_id) for message_id in message_ids(raw)]
    return sorted(out)


@pytest.mark.parametrize("fmt", sorted(MOVED_EXPORTS))
def test_a_chat_note_moved_out_of_sources_is_yours_and_its_messages_never_written_twice(tmp_path: Path, vault: Path, fmt: str) -> None:
    """A chat's note dragged out of sources/ into a folder of yours (any chat kind) is yours: left
    as it is, its messages known; the conversation's new messages go to a note of their own in
    sources/, with a warning naming the moved note. Every message had been written again."""
    kind, name, text = MOVED_EXPORTS[fmt]
    export = write(tmp_path / "1", name, text(0))
    first = ingest_paths(kind, [export], vault)
    assert len(first.written) == 1 and first.messages_added >= 2
    moved = vault / "Projects" / "Kept this one.md"
    moved.parent.mkdir()
    (vault / first.written[0]).rename(moved)
    before = moved.read_bytes()
    held = _held(vault)

    later = write(tmp_path / "2", name, text(1))
    report = ingest_paths(kind, [later], vault)
    assert moved.read_bytes() == before, "your note is never written to"
    assert (report.messages_added, report.messages_known) == (1, first.messages_added)
    assert report.written == first.written, "the new message goes to a note of its own at the note's place"
    assert [w.split(": ", 1)[0] for w in report.warnings] == ["Projects/Kept this one.md"]
    assert "this chat note is outside sources/, so it is yours and left as it is" in report.warnings[0]
    assert report.written[0] in report.warnings[0], "the warning says where new messages go"
    assert "Projects/Kept this one.md" in report.unchanged, "the moved note is indexed with the export's other notes"
    now = _held(vault)
    assert len(now) == len(held) + 1 and len(set(now)) == len(now), "no message twice"

    snapshot = snapshot_files(vault)
    again = ingest_paths(kind, [later], vault)
    assert (again.written, again.messages_added, again.warnings) == ([], 0, [])
    assert snapshot_files(vault) == snapshot


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_a_chat_note_moved_out_and_re_saved_as_utf16_is_still_known(tmp_path: Path, vault: Path, encoding: str) -> None:
    """Moved out of sources/ and re-saved by Notepad as "Unicode": the look for moved notes read
    only UTF-8 front matter, so every message of the note was written again."""
    kind, name, text = MOVED_EXPORTS["whatsapp"]
    export = write(tmp_path / "1", name, text(0))
    first = ingest_paths(kind, [export], vault)
    moved = vault / "Projects" / "Kept this one.md"
    moved.parent.mkdir()
    moved.write_bytes((vault / first.written[0]).read_text(encoding="utf-8").encode(encoding))
    (vault / first.written[0]).unlink()
    before = moved.read_bytes()
    report = ingest_paths(kind, [write(tmp_path / "2", name, text(1))], vault)
    assert moved.read_bytes() == before, "your note is never written to"
    assert (report.messages_added, report.messages_known) == (1, first.messages_added)


def test_a_moved_chat_note_counts_only_for_its_own_chat(tmp_path: Path, vault: Path) -> None:
    """"Happy new year!" sent to two chats in the same minute has one hashed id in both: the
    family chat's day note moved out of sources/ holds it for the family chat only — the
    climbing chat's copy is still written, and neither chat's messages go into the other's."""
    family = write(tmp_path, "WhatsApp Chat with Family.txt", "01/01/2025, 00:00 - Me: Happy new year!!\n01/01/2025, 00:05 - Mum: Same to you\n")
    climbing = write(tmp_path, "WhatsApp Chat with Climbing.txt", "01/01/2025, 00:00 - Me: Happy new year!!\n01/01/2025, 00:07 - Zoe: Crag on the 3rd?\n")
    ingest_paths("chat", [family], vault, date_order="dmy")
    moved = vault / "Family" / "New year 2025.md"
    moved.parent.mkdir()
    (vault / "sources/chat/whatsapp/family/2025-01-01.md").rename(moved)
    report = ingest_paths("chat", [climbing, family], vault, date_order="dmy")
    assert (report.messages_added, report.messages_known) == (2, 2)
    assert report.written == ["sources/chat/whatsapp/climbing/2025-01-01.md"]
    climbing_note = (vault / report.written[0]).read_text(encoding="utf-8")
    assert "Happy new year" in climbing_note and "Crag" in climbing_note and "Mum" not in climbing_note
    assert not list(vault.glob("sources/chat/whatsapp/family/*.md")), "the family chat's messages are all in your note"


# --- encodings --------------------------------------------------------------------------------


NOTEPAD_WHATSAPP = "14/03/2024, 09:00 - Alice: Dinner at 7? Café Zürich\n14/03/2024, 09:05 - Bob: Sure 👍\n15/03/2024, 10:00 - Alice: Thanks\n"


def _notes_text(vault: Path) -> dict[str, str]:
    return {p.relative_to(vault).as_posix(): p.read_text(encoding="utf-8") for p in sorted((vault / "sources").rglob("*.md"))}


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_a_whatsapp_export_saved_as_utf16_is_read_as_its_utf8_original(tmp_path: Path, vault: Path, encoding: str) -> None:
    """A WhatsApp `.txt` re-saved by Windows Notepad as "Unicode" (UTF-16, a byte order mark and
    CRLF; or without a mark) is detected and read: the same notes, the same message ids, as the
    UTF-8 export — ingesting one after the other adds nothing. It had been refused, "not UTF-8 text"."""
    utf8 = write(tmp_path / "utf8", "WhatsApp Chat with Alice.txt", NOTEPAD_WHATSAPP)
    wide = tmp_path / "wide" / "WhatsApp Chat with Alice.txt"
    wide.parent.mkdir()
    wide.write_bytes(NOTEPAD_WHATSAPP.replace("\n", "\r\n").encode(encoding))
    assert detect_chat_format(wide) == "whatsapp"
    report = ingest_paths("chat", [wide], vault)
    assert (report.messages_added, report.warnings) == (3, [])
    other = tmp_path / "other"
    other.mkdir()
    ingest_paths("chat", [utf8], other)
    assert _notes_text(vault) == _notes_text(other), "the same notes, byte for byte"
    again = ingest_paths("chat", [utf8], vault)
    assert (again.written, again.messages_added, again.messages_known) == ([], 0, 3)


def test_json_exports_saved_as_utf16_are_detected_and_read(tmp_path: Path, vault: Path) -> None:
    """A generic, Telegram or Slack JSON export saved as UTF-16 with a byte order mark (Notepad's
    "Unicode") is detected by its content and read."""
    exports = {
        "team.json": (json.dumps(GENERIC, ensure_ascii=False, indent=1), "generic"),
        "result.json": (json.dumps(TELEGRAM_CHAT, ensure_ascii=False, indent=1), "telegram"),
        "general.json": (json.dumps(_slack_channel(1)), "slack"),
    }
    for name, (text, fmt) in exports.items():
        path = tmp_path / name
        path.write_bytes(text.replace("\n", "\r\n").encode("utf-16"))
        assert detect_chat_format(path) == fmt, name
    report = ingest_paths("chat", [tmp_path / name for name in exports], vault)
    assert report.messages_added == 4 + 4 + 3 and report.warnings == []
    assert "[attachment: q3.xlsx]" in (vault / "sources/chat/chat/team/2024-03-04.md").read_text(encoding="utf-8")


def test_an_export_in_no_encoding_it_can_be_read_as_names_the_line(tmp_path: Path) -> None:
    """Text that is neither UTF-8 nor UTF-16/32 (a Windows-1252 export), a UTF-16 file cut in
    the middle of a character, and a binary file are refused, naming the file and the line."""
    latin = tmp_path / "WhatsApp Chat with Alice.txt"
    latin.write_bytes("14/03/2024, 09:00 - Alice: hi\n14/03/2024, 09:05 - Bob: Café\n".encode("cp1252"))
    with pytest.raises(IngestError, match=r"line 2: not UTF-8 text"):
        parse_whatsapp(latin)
    cut = tmp_path / "WhatsApp Chat with Bob.txt"
    cut.write_bytes("14/03/2024, 09:00 - Alice: hi\n14/03/2024, 09:05 - Bob: ok\n".encode("utf-16") + b"\x41")
    with pytest.raises(IngestError, match=r"line 3: not UTF-16 text"):
        parse_whatsapp(cut)
    binary = tmp_path / "team.json"
    binary.write_bytes(b"[\x00\x01\x02\x03" * 100)
    with pytest.raises(IngestError, match="a binary file, not text") as info:
        parse_generic(binary)
    assert str(binary) in str(info.value)


def test_a_message_that_differs_by_a_control_character_is_not_written_twice(tmp_path: Path, vault: Path) -> None:
    """A WhatsApp message's id hashes its text as the export has it, a stray NUL or bell
    included, though its note drops them: the same message from an export without the stray
    character (or with another) was written again beside it. It is known by its text as the
    note keeps it, and keeps the id it was written with; two identical messages of one minute
    stay two."""
    dirty = "14/03/2024, 09:00 - Alice: lunch at\x00 noon?\n14/03/2024, 09:01 - Bob: ok\n14/03/2024, 09:01 - Bob: ok\x07\n"
    clean = "14/03/2024, 09:00 - Alice: lunch at noon?\n14/03/2024, 09:01 - Bob: ok\n14/03/2024, 09:01 - Bob: ok\n14/03/2024, 09:05 - Alice: see you\n"
    first = ingest_paths("chat", [write(tmp_path / "a", "WhatsApp Chat with Alice.txt", dirty)], vault)
    note = vault / "sources/chat/whatsapp/alice/2024-03-14.md"
    ids = message_ids(note.read_bytes())
    assert first.messages_added == 3 and len(ids) == 3
    again = ingest_paths("chat", [write(tmp_path / "b", "WhatsApp Chat with Alice.txt", clean)], vault)
    assert (again.messages_added, again.messages_known) == (1, 3)
    body = note.read_text(encoding="utf-8")
    assert body.count("lunch at noon?") == 1 and body.count("see you") == 1 and message_ids(note.read_bytes())[:3] == ids
    # both exports in one ingest, into a new vault: each message once
    other = tmp_path / "other"
    both = ingest_paths("chat", [tmp_path / "a" / "WhatsApp Chat with Alice.txt", tmp_path / "b" / "WhatsApp Chat with Alice.txt"], other)
    assert both.messages_added == 4
    assert (other / "sources/chat/whatsapp/alice/2024-03-14.md").read_text(encoding="utf-8").count("lunch at noon?") == 1


def _slack_files(files: list[dict[str, Any]]) -> str:
    return json.dumps(
        [{"type": "message", "user": "U1", "text": "", "ts": f"17095432{n:02d}.000100", "files": [f]} for n, f in enumerate(files)]
    )


def test_a_slack_file_without_a_title_is_named_by_its_name_or_type(tmp_path: Path, vault: Path) -> None:
    """A shared file is shown by its title, else its name, else its type, else as "a file",
    with why Slack no longer shows it (it was `[file: file]`); a note an earlier vaultmind
    wrote so is known as it is: ingesting the export again changes nothing and says nothing."""
    files = [
        {"id": "F1", "name": "q3.pdf", "filetype": "pdf"},
        {"id": "F2", "pretty_type": "PDF", "filetype": "pdf"},
        {"id": "F3", "filetype": "png"},
        {"id": "F4", "mode": "tombstone"},
        {"id": "F5", "mode": "hidden_by_limit"},
    ]
    path = write(tmp_path / "now", "general.json", _slack_files(files))
    ingest_paths("chat", [path], vault)
    [note] = (vault / "sources/chat/slack").rglob("*.md")
    assert [leaf.text for leaf in parse_note(note.relative_to(vault).as_posix(), note.read_text(encoding="utf-8")).leaves] == [
        "[file: q3.pdf]",
        "[file: PDF]",
        "[file: png]",
        "[file: a file, deleted]",
        "[file: a file, hidden by the workspace's plan]",
    ]
    before = tmp_path / "vault-before"
    before.mkdir()
    # what an earlier vaultmind wrote for a file without title or name: "[file: file]"
    said = write(tmp_path / "then", "general.json", _slack_files([f if "name" in f else {"id": f["id"], "title": "file"} for f in files]))
    ingest_paths("chat", [said], before)
    settled = snapshot_files(before)
    report = ingest_paths("chat", [path], before)
    assert (report.messages_added, report.warnings) == (0, [])
    assert snapshot_files(before) == settled


def test_a_named_slack_file_slack_no_longer_shows_keeps_a_note_written_before_as_it_is(
    tmp_path: Path, vault: Path
) -> None:
    """A deleted file, or one hidden by the workspace's plan, that still has its name reads
    `[file: q3.pdf, deleted]`; a note an earlier vaultmind wrote as `[file: q3.pdf]` is the
    message as read then: the export ingested again says nothing and changes nothing."""
    files = [{"id": "F1", "name": "q3.pdf", "mode": "tombstone"}, {"id": "F2", "title": "Plan", "mode": "hidden_by_limit"}]
    path = write(tmp_path / "now", "general.json", _slack_files(files))
    ingest_paths("chat", [path], vault)
    [note] = (vault / "sources/chat/slack").rglob("*.md")
    leaves = parse_note(note.relative_to(vault).as_posix(), note.read_text(encoding="utf-8")).leaves
    assert [leaf.text for leaf in leaves] == ["[file: q3.pdf, deleted]", "[file: Plan, hidden by the workspace's plan]"]
    before = tmp_path / "vault-before"
    before.mkdir()
    # as an earlier vaultmind wrote them: by their name alone
    then = write(tmp_path / "then", "general.json", _slack_files([{"id": "F1", "name": "q3.pdf"}, {"id": "F2", "title": "Plan"}]))
    ingest_paths("chat", [then], before)
    settled = snapshot_files(before)
    for _ in range(2):
        report = ingest_paths("chat", [path], before)
        assert (report.messages_added, report.warnings) == (0, [])
        assert snapshot_files(before) == settled


def _instagram_thread(messages: list[dict[str, Any]]) -> str:
    """A conversation file as Instagram's "Download your information" writes it: each byte of
    the UTF-8 of a text written as a character of its own, messages newest first."""
    return json.dumps(
        {
            "participants": [{"name": "Jos\u00c3\u00a9 Garc\u00c3\u00ada"}, {"name": "Ann"}],
            "title": "Jos\u00c3\u00a9 Garc\u00c3\u00ada",
            "thread_path": "inbox/josegarcia_1234567890",
            "messages": messages,
        }
    )


def test_an_instagram_export_is_read_and_its_texts_are_fixed(tmp_path: Path, vault: Path) -> None:
    """Instagram's JSON export was refused ("cannot tell which chat export this is"). Its
    conversation files are read: Meta's byte-per-character text ("cafÃ©") as written ("café"),
    a real "Ã©" left as it is; media as lines; a message with neither text nor media (unsent)
    left out; the two files of one conversation are one conversation, named by its thread;
    the same export again changes nothing. A Facebook download's file is Messenger's."""
    newer = [
        {"sender_name": "Ann", "timestamp_ms": 1709546400000, "content": "Caf\u00c3\u00a9 at 7? \u00f0\u009f\u0098\u008a"},
        {"sender_name": "Jos\u00c3\u00a9 Garc\u00c3\u00ada", "timestamp_ms": 1709546100000, "photos": [{"uri": "a.jpg"}, {"uri": "b.jpg"}]},
        {"sender_name": "Ann", "timestamp_ms": 1709546000000, "is_unsent": True},
    ]
    older = [
        {"sender_name": "Jos\u00c3\u00a9 Garc\u00c3\u00ada", "timestamp_ms": 1709460000000, "content": "look",
         "share": {"link": "https://www.instagram.com/p/abc/"}},
        {"sender_name": "Ann", "timestamp_ms": 1709459900000, "content": "the sign said \u00c3\u00a9 (\u00c3 then \u00a9)"},
    ]
    folder = tmp_path / "instagram-ann-2024-03-05/your_instagram_activity/messages/inbox/josegarcia_1234567890"
    first = write(folder, "message_1.json", _instagram_thread(newer))
    second = write(folder, "message_2.json", _instagram_thread(older))
    assert detect_chat_format(first) == "instagram"
    report = ingest_paths("chat", [folder.parent], vault)
    assert (report.messages_added, report.warnings) == (4, [])
    notes = sorted((vault / "sources/chat/instagram/josegarcia_1234567890").glob("*.md"))
    assert [n.name for n in notes] == ["2024-03-03.md", "2024-03-04.md"]
    day = notes[1].read_text(encoding="utf-8")
    assert 'title: "José García · 2024-03-04"' in day and "source_id: \"instagram:josegarcia_1234567890\"" in day
    assert "> [!message] José García · 2024-03-04 09:55\n> [photo]\n> [photo]\n" in day
    assert "> Café at 7? 😊\n" in day
    before = notes[0].read_text(encoding="utf-8")
    assert "> look\n> [shared: https://www.instagram.com/p/abc/]\n" in before
    assert "the sign said \u00c3\u00a9 (\u00c3 then \u00a9)" in before, "a text that is no UTF-8 read so stays"
    settled = snapshot_files(vault)
    again = ingest_paths("chat", [first, second], vault)
    assert (again.messages_added, again.written) == (0, []) and snapshot_files(vault) == settled
    messenger = write(tmp_path / "facebook-ann-2024-03-05/messages/inbox/bob_987", "message_1.json", _instagram_thread(older))
    assert detect_chat_format(messenger) == "messenger"


def test_a_slack_export_found_in_a_folder_is_read_as_one_export(tmp_path: Path, vault: Path) -> None:
    """A Slack export folder inside the folder given (`~/Downloads` holding it beside a
    WhatsApp chat) is one export, as when given alone: its `channels.json`, `users.json` … are
    no files "of no format", and its channels' day files are not each read as the export."""
    downloads = tmp_path / "Downloads"
    slack_export(downloads / "Slack export Mar 2024")
    write(downloads, "WhatsApp Chat with Alice.txt", "2024-03-04, 09:00 - Alice: hi\n")
    report = ingest_paths("chat", [downloads], vault)
    assert report.warnings == []
    alone = tmp_path / "alone"
    alone.mkdir()
    by_itself = ingest_paths("chat", [downloads / "Slack export Mar 2024"], alone)
    assert report.messages_added == by_itself.messages_added + 1
    assert sorted(p for p in report.written if "/slack/" in p) == sorted(by_itself.written)


def test_a_slack_bot_s_attachments_are_kept_below_its_text_but_link_previews_are_not(tmp_path: Path, vault: Path) -> None:
    """A bot's post with a text of its own and attachments (a pull request's title and body):
    both are the message; a link's preview (an attachment with `from_url`) is not, when the
    message says something itself. A note written when attachments below a text were left out
    is known as it is: ingesting again changes nothing and says nothing."""
    pr = {"fallback": "PR #42", "text": "Fix the retry loop: jobs no longer run twice", "title": "PR #42"}
    unfurl = {"from_url": "https://news.example/x", "text": "A long article preview", "title": "News"}
    day = [
        {"type": "message", "subtype": "bot_message", "username": "github", "text": "opened a pull request", "ts": "1709543200.000100", "attachments": [pr]},
        {"type": "message", "user": "U1", "text": "look https://news.example/x", "ts": "1709543300.000100", "attachments": [unfurl]},
    ]
    path = write(tmp_path / "now", "general.json", json.dumps(day))
    [batch] = parse_slack(path)
    assert [m.text for m in batch.messages] == [
        "opened a pull request\n\nFix the retry loop: jobs no longer run twice",
        "look https://news.example/x",
    ]
    before = tmp_path / "vault-before"
    before.mkdir()
    said = write(tmp_path / "then", "general.json", json.dumps([{k: v for k, v in m.items() if k != "attachments"} for m in day]))
    ingest_paths("chat", [said], before)
    settled = snapshot_files(before)
    report = ingest_paths("chat", [path], before)
    assert (report.messages_added, report.warnings) == (0, [])
    assert snapshot_files(before) == settled
