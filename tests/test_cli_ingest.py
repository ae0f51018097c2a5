"""`vaultmind ingest` as a user runs it: notes written, then indexed (in-process or via the daemon)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DeepFolders, snapshot_files, write
from tests.conftest import run_main as run
from tests.test_ingest_chat import WHATSAPP, slack_export
from tests.unprivileged import can_drop_privileges, run_unprivileged
from vaultmind.config import load_config
from vaultmind.memory import Memory

pytestmark = pytest.mark.usefixtures("cli_vault")  # every test: a vault the command line takes, no embedder


def test_ingest_writes_and_indexes(tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = slack_export(tmp_path / "export")
    code, data, _ = run(capsys, "ingest", "chat", str(export), "--vault", str(vault), "--json")
    assert code == 0
    assert data["messages_added"] == 5 and len(data["written"]) == 2
    assert data["sync"]["added"] == 2 and data["sync"]["leaves_written"] == 5
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        hits = memory.search("deployed")["hits"]
        assert hits and hits[0]["note_path"] == "sources/chat/slack/t9/general/2024-03-04.md"
        assert hits[0]["source_refs"] == ["slack://archives/C1/p1709543400000500"]

    before = snapshot_files(vault)
    code, data, _ = run(capsys, "ingest", "chat", str(export), "--vault", str(vault), "--json")
    assert code == 0 and data["written"] == [] and data["messages_known"] == 5
    assert (data["sync"]["unchanged"], data["sync"]["added"]) == (2, 0), "its notes checked, found indexed"
    assert snapshot_files(vault) == before

    code, text, _ = run(capsys, "ingest", "chat", str(export), "--vault", str(vault))
    assert code == 0 and "0 new messages (5 already known)" in text


def test_human_summary_and_user_edits(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = write(tmp_path, "WhatsApp Chat with Alice.txt", WHATSAPP["iso.txt"])
    code, text, _ = run(capsys, "ingest", "chat", str(first), "--vault", str(vault), "--tz", "Europe/Berlin")
    assert (
        code == 0 and "3 new messages" in text and "wrote sources/chat/whatsapp/alice/2024-03-04.md" in text
    )
    note = vault / "sources/chat/whatsapp/alice/2024-03-13.md"
    note.write_text(
        note.read_text(encoding="utf-8").replace("Yes: done", "Yes: done (edited)"), encoding="utf-8"
    )
    more = write(
        tmp_path / "later",
        "WhatsApp Chat with Alice.txt",
        WHATSAPP["iso.txt"] + "2024-03-13, 22:00 - Alice: great\n",
    )
    code, text, _ = run(capsys, "ingest", "chat", str(more), "--vault", str(vault), "--tz", "Europe/Berlin")
    assert code == 0 and "kept your edits in sources/chat/whatsapp/alice/2024-03-13.md" in text
    assert "(edited)" in note.read_text(encoding="utf-8")
    assert (vault / "sources/chat/whatsapp/alice/2024-03-13.2.md").is_file()


def test_malformed_export_fails_cleanly(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path, "good.txt", WHATSAPP["iso.txt"])
    bad = write(tmp_path, "bad.txt", "2024-03-04, 09:00 - A: x\n2024-13-04, 09:00 - A: y\n")
    code, _, err = run(capsys, "ingest", "chat", str(good), str(bad), "--vault", str(vault))
    assert code == 1
    assert f"{bad}: line 2" in err
    assert snapshot_files(vault) == {}
    code, data, _ = run(capsys, "ingest", "chat", str(bad), "--vault", str(vault), "--json")
    assert code == 1 and data["error"]["code"] == "ingest" and data["error"]["path"] == str(bad)
    code, _, err = run(capsys, "ingest", "chat", str(tmp_path / "missing.txt"), "--vault", str(vault))
    assert code == 1 and "no such file" in err


def test_a_folder_without_exports_says_so(tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "exports"
    write(empty, "notes.md", "not an export\n")
    code, data, _ = run(capsys, "ingest", "chat", str(empty), "--vault", str(vault), "--json")
    assert code == 0 and data["written"] == []
    assert data["warnings"] == [f"{empty}: nothing to ingest here (looked for chat exports: .json, .jsonl, .txt, .zip)"]
    bare = tmp_path / "mail"
    bare.mkdir()
    code, data, _ = run(capsys, "ingest", "email", str(bare), "--vault", str(vault), "--json")
    assert data["warnings"] == [f"{bare}: nothing to ingest here (looked for .eml, mbox or Maildir messages)"]
    write(empty, "odd.json", '{"a": 1}')  # a candidate, not recognised: its own warning says so
    code, data, _ = run(capsys, "ingest", "chat", str(empty), "--vault", str(vault), "--json")
    assert data["warnings"] == [f"{empty / 'odd.json'}: format not recognised; skipped"]


def test_an_empty_export_or_one_of_system_notices_only_says_so(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty export file named on the command line was an error ("cannot tell which chat
    export this is"); one in a folder, or an empty JSON array, "format not recognised"; an
    export of system notices only ("created group", a Telegram service message) wrote nothing
    and said nothing. Each is said for what it is, and the ingest goes on."""
    exports = tmp_path / "exports"
    write(exports, "WhatsApp Chat with Zed.txt", "")
    write(exports, "generic.json", "[ ]\n")
    notices = (
        "04/03/2024, 09:00 - Messages and calls are end-to-end encrypted. No one outside of this chat can read them.\n"
        '14/03/2024, 09:01 - Bob created group "Q3"\n'
    )
    write(exports, "WhatsApp Chat with Q3.txt", notices)
    service = {"name": "Sys", "type": "private_group", "id": 77, "messages": [
        {"id": 1, "type": "service", "date_unixtime": "1709546340", "actor": "Alice", "action": "create_group"}
    ]}
    write(exports, "result.json", json.dumps(service))
    code, data, _ = run(capsys, "ingest", "chat", str(exports / "WhatsApp Chat with Zed.txt"), "--vault", str(vault), "--json")
    assert code == 0 and data["warnings"] == [f"{exports / 'WhatsApp Chat with Zed.txt'}: an empty file; nothing to ingest"]
    code, data, _ = run(capsys, "ingest", "chat", str(exports), "--vault", str(vault), "--json")
    assert code == 0 and data["written"] == [] and data["warnings"] == [
        f"{exports / 'WhatsApp Chat with Zed.txt'}: an empty file; skipped",
        f"{exports / 'generic.json'}: an empty file; skipped",
        f"{exports / 'WhatsApp Chat with Q3.txt'}: holds no messages (system notices aside); nothing to ingest",
        f"{exports / 'result.json'}: holds no messages (system notices aside); nothing to ingest",
    ]


def test_ingest_goes_through_the_running_daemon(
    tmp_path: Path, vault: Path, daemon: Memory, capsys: pytest.CaptureFixture[str]
) -> None:
    export = slack_export(tmp_path / "export")
    code, data, _ = run(capsys, "ingest", "chat", str(export), "--vault", str(vault), "--json")
    assert code == 0 and data["messages_added"] == 5
    assert data["sync"] is not None and data["sync"]["leaves_written"] + data["sync"]["unchanged"] >= 0
    count = daemon.index.scalar("SELECT count(*) FROM leaves WHERE note_path LIKE 'sources/chat/slack/%'")
    assert count == 5


def test_ingesting_documents_says_documents_not_messages(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    write(docs, "runbook.md", "# Runbook\n\nOpen the doors at six.\n")
    write(docs, "retro.txt", "Sprint retro: ship smaller.\n")
    code, text, _ = run(capsys, "ingest", "document", str(docs), "--vault", str(vault))
    assert code == 0 and text.startswith("vaultmind: ingested 2 documents — 2 notes written, 0 unchanged")
    assert "messages" not in text.splitlines()[0]
    code, text, _ = run(capsys, "ingest", "document", str(docs), "--vault", str(vault))
    assert code == 0 and text.startswith("vaultmind: ingested 2 documents — 0 notes written, 2 unchanged")
    note = vault / "sources/document/files/docs/runbook.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nMy own line.\n", encoding="utf-8")
    write(docs, "runbook.md", "# Runbook\n\nOpen the doors at seven.\n")
    code, text, _ = run(capsys, "ingest", "document", str(docs), "--vault", str(vault))
    assert "kept your edits in sources/document/files/docs/runbook.md (the new version went to a sibling note)" in text


def test_a_document_note_renamed_to_its_files_name_is_indexed_there_only(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A document note an earlier version named by the slug of its title (`note-a.md`), indexed
    there, takes its file's name when ingested again: the summary says so, and the index holds
    it at its new place only (the old one, no longer on disk, is forgotten by the same sync)."""
    from dataclasses import replace

    from vaultmind.ingest.document import parse_document_paths_with_report
    from vaultmind.ingest.writer import write_documents

    docs = tmp_path / "docs"
    write(docs, "Note A.md", "# Note A\n\nThe heron nests by the lake.\n")
    old = write_documents(vault, [replace(doc, name=None) for doc in parse_document_paths_with_report([docs])[0]]).written
    assert old == ["sources/document/files/docs/note-a.md"]
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync_paths(old)
        assert [hit["note_path"] for hit in memory.search("heron")["hits"]] == old
    code, data, _ = run(capsys, "ingest", "document", str(docs), "--vault", str(vault), "--json")
    new = "sources/document/files/docs/Note A.md"
    assert code == 0 and data["renamed"] == [{"from": old[0], "to": new}] and data["written"] == [new]
    with Memory.open(config) as memory:
        assert [hit["note_path"] for hit in memory.search("heron")["hits"]] == [new]
    code, text, _ = run(capsys, "ingest", "document", str(docs), "--vault", str(vault))
    assert code == 0 and "0 notes written, 1 unchanged" in text and "renamed" not in text


@pytest.mark.parametrize("through", ["local sync", "daemon"])
def test_ingest_names_the_paths_its_sync_missed_alike_with_or_without_a_daemon(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest, through: str
) -> None:
    """`ingest --json`'s `sync` had `missing` only through a daemon, and there it listed the place
    a renamed note left, which the ingest hands to the sync on purpose so the index forgets it."""
    from dataclasses import replace

    from vaultmind.ingest.document import parse_document_paths_with_report
    from vaultmind.ingest.writer import write_documents

    docs = tmp_path / "docs"
    write(docs, "Note A.md", "# Note A\n\nThe heron nests by the lake.\n")
    old = write_documents(vault, [replace(doc, name=None) for doc in parse_document_paths_with_report([docs])[0]]).written
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync_paths(old)
    if through == "daemon":
        request.getfixturevalue("daemon")
    code, data, _ = run(capsys, "ingest", "document", str(docs), "--vault", str(vault), "--json")
    assert code == 0 and data["renamed"] == [{"from": old[0], "to": "sources/document/files/docs/Note A.md"}]
    assert (data["sync"]["missing"], data["sync"]["ignored"]) == ([], []), data["sync"]


def test_a_move_an_ingest_was_killed_in_is_finished_and_indexed_once(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ingest killed after writing a note at its file's name and before removing it from its
    old place left both, the old one indexed: the next ingest removes it and the index holds the
    document once, at its new place."""
    from dataclasses import replace

    from vaultmind.ingest.document import parse_document_paths_with_report
    from vaultmind.ingest.writer import write_documents

    docs = tmp_path / "docs"
    write(docs, "Note A.md", "# Note A\n\nThe heron nests by the lake.\n")
    old = write_documents(vault, [replace(doc, name=None) for doc in parse_document_paths_with_report([docs])[0]]).written
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync_paths(old)

    def killed(self: Path, missing_ok: bool = False) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(Path, "unlink", killed)
        with pytest.raises(KeyboardInterrupt):
            write_documents(vault, parse_document_paths_with_report([docs])[0])
    new = "sources/document/files/docs/Note A.md"
    assert (vault / old[0]).is_file() and (vault / new).is_file()
    code, data, _ = run(capsys, "ingest", "document", str(docs), "--vault", str(vault), "--json")
    assert code == 0 and data["renamed"] == [{"from": old[0], "to": new}] and data["unchanged"] == [new]
    assert not (vault / old[0]).exists()
    with Memory.open(config) as memory:
        assert [hit["note_path"] for hit in memory.search("heron")["hits"]] == [new]


def test_notes_the_daemon_indexed_first_are_said_to_be_indexed(capsys: pytest.CaptureFixture[str]) -> None:
    """The running daemon's watcher may index the written notes before the ingest asks it to:
    the report says so rather than "+0 notes"."""
    from vaultmind.cli.ingest import _print

    base = {"written": ["a.md"], "unchanged": [], "kept_user_edited": [], "kind": "chat", "messages_added": 1,
            "messages_known": 0, "documents_replaced": 0, "warnings": []}  # fmt: skip
    _print(base | {"sync": {"added": 0, "modified": 0, "unchanged": 1, "leaves_written": 0, "seconds": 0.01}})
    assert "indexed: nothing new (already indexed, as by a running daemon's watcher" in capsys.readouterr().out
    _print(base | {"sync": {"added": 1, "modified": 0, "unchanged": 0, "leaves_written": 3, "seconds": 0.01}})
    assert "indexed: +1 ~0 notes, 3 leaves" in capsys.readouterr().out


def test_the_vaults_time_zone_reads_local_export_times_unless_tz_says_otherwise(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = write(tmp_path, "WhatsApp Chat with Alice.txt", WHATSAPP["iso.txt"])
    write(vault, ".vaultmind/config.toml", '[ingest]\ntimezone = "Europe/Berlin"\n')
    code, data, _ = run(capsys, "ingest", "chat", str(export), "--vault", str(vault), "--json")
    assert code == 0 and data["messages_added"] == 3
    text = (vault / "sources/chat/whatsapp/alice/2024-03-04.md").read_text(encoding="utf-8")
    assert 'at="2024-03-04T08:00:00Z"' in text, "09:00 in Berlin"
    code, data, _ = run(capsys, "ingest", "chat", str(export), "--vault", str(vault), "--json")
    assert data["messages_added"] == 0 and data["messages_known"] == 3, "the same zone: the same messages"
    before = snapshot_files(vault)
    code, data, _ = run(capsys, "ingest", "chat", str(export), "--vault", str(vault), "--tz", "UTC", "--json")
    assert code == 1, "--tz overrides the vault's zone: the same messages, an hour later"
    message = data["error"]["message"]
    assert "3 messages would be written again, 1 h later" in message and "Nothing was written" in message
    assert "--tz it was first ingested with" in data["error"]["hint"]
    assert snapshot_files(vault) == before
    write(vault, ".vaultmind/config.toml", '[ingest]\ntimezone = "Europe/Berlinn"\n')
    code, data, _ = run(capsys, "ingest", "chat", str(export), "--vault", str(vault), "--json")
    assert code == 1 and "[ingest] timezone = 'Europe/Berlinn' is no time zone" in data["error"]["message"]


def test_a_document_over_the_vaults_note_cap_is_left_out_and_said(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A document whose note the vault would never index (over `[vault] max_file_mb`) is left
    out with a warning naming the setting, instead of being written and then skipped by every
    sync; the others are written."""
    write(vault, ".vaultmind/config.toml", "[vault]\nmax_file_mb = 0.01\n")
    docs = tmp_path / "docs"
    write(docs, "small.md", "# Small\n\nThe kumquat order ships Friday.\n")
    write(docs, "big.txt", "kumquatzilla " * 2000)
    write(docs, "edge.txt", "kumquat " * 1295)  # its text fits, its note (front matter, title) does not
    code, data, _ = run(capsys, "ingest", "document", str(docs), "--vault", str(vault), "--json")
    assert code == 0 and data["written"] == ["sources/document/files/docs/small.md"], "the others are written"
    skipped = sorted(w.split("'")[1] for w in data["warnings"] if "over this vault's cap of 0.01 MB" in w)
    assert skipped == ["doc:docs/big", "doc:docs/edge"] and all("max_file_mb" in w for w in data["warnings"])


def test_running_an_interrupted_ingest_again_indexes_what_it_wrote(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run killed after writing its notes and before indexing them (or whose daemon died):
    the same command again finds the notes unchanged, and indexes them."""
    from vaultmind.ingest.detect import parse_paths
    from vaultmind.ingest.model import SourceBatch
    from vaultmind.ingest.writer import write_batches

    export = slack_export(tmp_path / "export")
    write_batches(vault, [b for b in parse_paths("chat", [export]) if isinstance(b, SourceBatch)])  # written, not indexed
    code, data, _ = run(capsys, "ingest", "chat", str(export), "--vault", str(vault), "--json")
    assert code == 0 and data["written"] == [] and data["sync"]["added"] == 2
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        assert memory.search("deployed")["hits"][0]["note_path"] == "sources/chat/slack/t9/general/2024-03-04.md"


def test_an_edited_message_is_said_replaced(tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = write(tmp_path, "WhatsApp Chat with Alice.txt", "2024-03-04, 09:00 - Alice: Dinner at 6\n")
    run(capsys, "ingest", "chat", str(export), "--vault", str(vault))
    write(tmp_path, "WhatsApp Chat with Alice.txt", "2024-03-04, 09:00 - Alice: Dinner at 7 <This message was edited>\n")
    code, text, _ = run(capsys, "ingest", "chat", str(export), "--vault", str(vault))
    assert code == 0 and "messages replaced by their edited text: 1" in text
    write(tmp_path, "WhatsApp Chat with Alice.txt", "2024-03-04, 09:00 - Alice: Dinner at 8 <This message was edited>\n")
    code, data, _ = run(capsys, "ingest", "chat", str(export), "--vault", str(vault), "--json")
    assert code == 0 and data["messages_edited"] == 1


UNENTERABLE_FOLDER_SCENARIO = """
import json
from vaultmind.ingest.detect import ingest_paths

inbox = vault.parent / "inbox"
for folder, name, text in (("2024", "plan.md", "# Plan\\n\\nHerons at the lake in May.\\n"),
                           ("locked", "notes.md", "# Notes\\n\\nKept apart.\\n"),
                           ("closed", "diary.md", "# Diary\\n\\nNot for you.\\n")):
    (inbox / folder).mkdir(parents=True)
    (inbox / folder / name).write_text(text)
(inbox / "locked").chmod(0o444)  # listed, not entered: its entries cannot be looked at
(inbox / "closed").chmod(0)  # not even listed
try:
    report = ingest_paths("document", [inbox], vault)
    out = {"written": sorted(report.written), "warnings": [w.replace(str(inbox), "INBOX") for w in report.warnings]}
finally:
    (inbox / "locked").chmod(0o755)
    (inbox / "closed").chmod(0o755)
print(json.dumps(out))
"""


@pytest.mark.skipif(not can_drop_privileges(), reason="needs root's setpriv or a non-root user")
def test_a_folder_that_can_be_listed_but_not_entered_is_said_and_the_rest_ingested() -> None:
    """A folder given to ingest that holds a folder with mode r-- (listed, not entered) stopped
    the whole ingest with a PermissionError: looking at its entries raises. Its entries are now
    skipped with a warning naming each, as an unlistable folder is, and the rest is written."""
    out = run_unprivileged(UNENTERABLE_FOLDER_SCENARIO)
    assert out["written"] == ["sources/document/files/inbox/2024/plan.md"]
    assert "INBOX/locked/notes.md: cannot be looked at (Permission denied); skipped" in out["warnings"]
    assert "INBOX/closed: cannot list the folder (Permission denied); skipped" in out["warnings"]


def test_a_folder_with_symlinks_is_read_once_whatever_the_adapter(tmp_path: Path, vault: Path) -> None:
    """A symlink loop in a folder given to `ingest document` wrote its document again at each
    turn (41 notes, 40 folders deep); a link to a folder beside it wrote its documents twice;
    `ingest email` read its mailboxes again at each turn; `ingest chat` ignored a linked folder
    altogether. Every adapter follows a linked folder, reads each real folder and file once,
    and says what it skipped."""
    from vaultmind.ingest.detect import ingest_paths

    inbox = tmp_path / "inbox"
    write(inbox / "2024", "plan.md", "# Plan\n\nHerons at the lake in May.\n")
    write(inbox / "2024", "WhatsApp Chat with Q3.txt", WHATSAPP["android_dmy.txt"])
    write(inbox / "2024", "box.mbox", "From a@example.com Mon Mar 11 09:00:00 2024\nFrom: a@example.com\nSubject: Hi\n"
          "Date: Mon, 11 Mar 2024 09:00:00 +0000\nMessage-ID: <x1@example.com>\n\nHello\n")
    (inbox / "2024" / "again").symlink_to(inbox)  # a loop
    (inbox / "latest").symlink_to(inbox / "2024")  # the same folder twice
    (inbox / "gone.md").symlink_to(tmp_path / "nowhere.md")
    outside = tmp_path / "elsewhere"
    write(outside, "WhatsApp Chat with Team.txt", WHATSAPP["iso.txt"])
    (inbox / "team").symlink_to(outside)  # a linked folder: read
    skipped = [
        f"{inbox / '2024' / 'again'}: a symlink to a folder that holds it (a loop); skipped",
        f"{inbox / 'gone.md'}: a symlink to nothing (its target is gone); skipped",
        f"{inbox / 'latest'}: the same folder as {inbox / '2024'} (a symlink); read once, there",
    ]
    docs = ingest_paths("document", [inbox], vault)
    assert sorted(docs.written) == [
        "sources/document/files/inbox/2024/WhatsApp Chat with Q3.md",
        "sources/document/files/inbox/2024/plan.md",
        "sources/document/files/inbox/team/WhatsApp Chat with Team.md",
    ]
    assert [w for w in docs.warnings if ": a symlink" in w or "(a symlink)" in w] == skipped
    mails = ingest_paths("email", [inbox], vault)
    assert mails.messages_added == 1 and [w for w in mails.warnings if ": a symlink" in w or "(a symlink)" in w] == skipped
    chats = ingest_paths("chat", [inbox], vault)
    assert sorted({p.rsplit("/", 1)[0] for p in chats.written}) == ["sources/chat/whatsapp/q3", "sources/chat/whatsapp/team"]
    assert [w for w in chats.warnings if ": a symlink" in w or "(a symlink)" in w] == skipped



def test_a_folder_tree_deeper_than_the_recursion_limit_is_walked(
    tmp_path: Path, vault: Path, deep_folders: DeepFolders
) -> None:
    """The folder walker recursed once per level: a tree 1,100 folders deep stopped the ingest
    with a RecursionError, and so did the next ingest's look at the notes it mirrors below
    `sources/document/` (`Path.rglob`, `os.walk`). It is walked as a shallow one is."""
    import sys

    from vaultmind.ingest.detect import ingest_paths

    depth = sys.getrecursionlimit() + 100
    inbox = tmp_path / "inbox"
    write(inbox, "a.md", "# A\n\nOtters at the weir.\n")
    write(deep_folders.make(inbox, depth), "deep.md", "# Deep\n\nHerons at the bottom.\n")
    write(inbox, "z.md", "# Z\n\nSwans in the reeds.\n")
    deep_folders.remove_later(vault / "sources/document/files/inbox/d")  # (the note's folders, made by the ingest)
    report = ingest_paths("document", [inbox], vault)
    assert report.warnings == []
    assert len(report.written) == 3 and any(path.endswith("/deep.md") for path in report.written)
    write(inbox, "b.md", "# B\n\nGrebes on the lake.\n")  # the next ingest reads the notes below sources/ too
    again = ingest_paths("document", [inbox], vault)
    assert (again.written, again.warnings) == (["sources/document/files/inbox/b.md"], [])


def _messenger_thread(messages: list[dict[str, object]]) -> str:
    """A Messenger conversation file as Facebook's "Download your information" writes it (the
    shape of Instagram's): UTF-8 bytes written as characters, messages newest first."""
    return json.dumps(
        {
            "participants": [{"name": "Bj\u00c3\u00b6rn"}, {"name": "Ann"}],
            "title": "Bj\u00c3\u00b6rn",
            "thread_path": "inbox/bjorn_987654321",
            "messages": messages,
        }
    )


def test_format_messenger_reads_a_facebook_export_not_named_so(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Messenger conversation whose path names neither Facebook nor Messenger (its folder
    renamed) reads as Instagram's shape by itself; `--format messenger` makes it Messenger's:
    its notes under `sources/chat/messenger/<thread>/`, `source_id` `messenger:<thread>`, its
    two files one conversation, its texts fixed; again, nothing changes."""
    folder = tmp_path / "exports/bjorn_987654321"
    write(folder, "message_1.json", _messenger_thread(
        [{"sender_name": "Ann", "timestamp_ms": 1709546400000, "content": "Sk\u00c3\u00a5l!", "gifs": [{"uri": "g.gif"}]},
         {"sender_name": "Bj\u00c3\u00b6rn", "timestamp_ms": 1709546100000, "content": "Kaffe?"}]
    ))
    write(folder, "message_2.json", _messenger_thread(
        [{"sender_name": "Bj\u00c3\u00b6rn", "timestamp_ms": 1709460000000, "files": [{"uri": "files/plan.pdf"}]}]
    ))
    code, data, _ = run(capsys, "ingest", "chat", str(folder), "--vault", str(vault), "--format", "messenger", "--json")
    assert code == 0 and data["messages_added"] == 3 and data["warnings"] == []
    assert sorted(data["written"]) == [
        "sources/chat/messenger/bjorn_987654321/2024-03-03.md",
        "sources/chat/messenger/bjorn_987654321/2024-03-04.md",
    ]
    day = (vault / "sources/chat/messenger/bjorn_987654321/2024-03-04.md").read_text(encoding="utf-8")
    assert 'source_id: "messenger:bjorn_987654321"' in day and 'title: "Björn · 2024-03-04"' in day
    assert "> [!message] Ann · 2024-03-04 10:00\n> Skål!\n> [GIF]\n" in day
    earlier = (vault / "sources/chat/messenger/bjorn_987654321/2024-03-03.md").read_text(encoding="utf-8")
    assert "> [file: plan.pdf]\n" in earlier
    settled = snapshot_files(vault)
    code, data, _ = run(capsys, "ingest", "chat", str(folder), "--vault", str(vault), "--format", "messenger", "--json")
    assert (code, data["messages_added"], data["written"]) == (0, 0, [])
    assert snapshot_files(vault) == settled


def test_a_locomo_file_is_detected_and_the_hint_names_every_format(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A LoCoMo file given to `ingest chat` without `--format` was "cannot tell which chat export
    this is", and that error's hint listed every format but `locomo`."""
    from tests.test_locomo import SAMPLE
    from vaultmind.ingest import FORMATS

    qa = [{"question": f"What did Alice say on day {i}?", "answer": "x", "evidence": ["D1:1"], "category": 1} for i in range(900)]
    export = write(tmp_path, "locomo10.json", json.dumps([{"qa": qa} | {k: v for k, v in SAMPLE.items() if k != "qa"}]))  # the qa list first, past the head read
    assert export.stat().st_size > 65536
    code, data, _ = run(capsys, "ingest", "chat", str(export), "--vault", str(vault), "--json")
    assert code == 0 and data["written"] and all(p.startswith("sources/chat/locomo/") for p in data["written"])
    odd = write(tmp_path, "odd.json", '{"a": 1}')
    code, _, err = run(capsys, "ingest", "chat", str(odd), "--vault", str(vault))
    assert code == 1 and "cannot tell which chat export" in err
    assert "--format " + "|".join(f for f in FORMATS if f != "auto") in err


def test_an_email_given_to_ingest_chat_and_a_chat_given_to_ingest_email_say_which_command(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An `.eml` given to `ingest chat` was "cannot tell which chat export this is"; a chat
    export given to `ingest email`, only "not an email file"."""
    mail = write(
        tmp_path,
        "my mail.eml",
        "From: a@example.org\nTo: b@example.org\nSubject: hi\nDate: Mon, 4 Mar 2024 09:00:00 +0000\n"
        "Message-ID: <1@example.org>\n\nhello\n",
    )
    code, _, err = run(capsys, "ingest", "chat", str(mail), "--vault", str(vault))
    assert code == 1 and "an email file" in err and f"vaultmind ingest email '{mail}'" in err
    chat = write(tmp_path, "WhatsApp Chat with Alice.txt", WHATSAPP["iso.txt"])
    code, _, err = run(capsys, "ingest", "email", str(chat), "--vault", str(vault))
    assert code == 1 and "a whatsapp chat export" in err and f"vaultmind ingest chat '{chat}'" in err
    assert snapshot_files(vault) == {}
    code, data, _ = run(capsys, "ingest", "email", str(mail), "--vault", str(vault), "--json")
    assert code == 0 and data["messages_added"] == 1


def test_local_export_times_read_as_utc_by_default_are_said_once_with_how_to_name_the_zone(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --tz (and no [ingest] timezone) a WhatsApp export's local times were stored as UTC
    without a word: the report says so once for the run, and which zone a --tz run used."""
    alice = write(tmp_path, "WhatsApp Chat with Alice.txt", WHATSAPP["iso.txt"])
    bob = write(tmp_path, "WhatsApp Chat with Bob.txt", WHATSAPP["android_dmy.txt"])
    code, text, _ = run(capsys, "ingest", "chat", str(alice), str(bob), "--vault", str(vault))
    assert code == 0 and text.count("read in UTC, as neither --tz nor [ingest] timezone names a zone") == 1, text
    code, data, _ = run(capsys, "ingest", "chat", str(alice), "--vault", str(vault), "--json")
    assert code == 0 and data["messages_added"] == 0 and data["local_zone"] is None, "nothing written: nothing to say"
    other = tmp_path / "other"
    (other / ".vaultmind").mkdir(parents=True)
    code, data, _ = run(capsys, "ingest", "chat", str(bob), "--vault", str(other), "--json")
    assert code == 0 and (data["local_zone"], data["local_zone_named"]) == ("UTC", False)
    code, text, _ = run(capsys, "ingest", "chat", str(alice), "--vault", str(other), "--tz", "Europe/Berlin")
    assert code == 0 and "local times (the export names no zone) read in Europe/Berlin\n" in text, text
    slack = slack_export(tmp_path / "slack")  # times in UTC (epoch seconds): no zone to say
    code, data, _ = run(capsys, "ingest", "chat", str(slack), "--vault", str(vault), "--json")
    assert code == 0 and data["messages_added"] > 0 and data["local_zone"] is None


def test_plain_ingest_names_the_notes_its_sync_left_out(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only `--json` named the notes the sync left out: the summary said "+0 notes" and no more."""
    write(vault, ".vaultmind/config.toml", '[vault]\nignore = ["sources/document/files/ignored/**"]\n')
    for n in range(5):
        write(tmp_path / "ignored", f"Note {n}.md", f"# Note {n}\n\nThe heron nests by the lake {n}.\n")
    code, out, _ = run(capsys, "ingest", "document", str(tmp_path / "ignored"), "--vault", str(vault))
    folder = "sources/document/files/ignored"
    assert code == 0 and "5 notes written" in out, out
    assert (
        f"  not indexed, left out by the ignore rules ([vault] ignore): {folder}/Note 0.md, {folder}/Note 1.md, "
        f"{folder}/Note 2.md and 2 more\n"
    ) in out, out

    sync_paths = Memory.sync_paths

    def deleted_first(memory: Memory, paths: list[str], **kwargs: Any) -> Any:  # by the user, mid-ingest
        (vault / paths[0]).unlink()
        return sync_paths(memory, paths, **kwargs)

    monkeypatch.setattr(Memory, "sync_paths", deleted_first)
    write(tmp_path / "kept", "Heron.md", "# Heron\n\nThe heron left the lake.\n")
    code, out, _ = run(capsys, "ingest", "document", str(tmp_path / "kept"), "--vault", str(vault))
    assert code == 0, out
    assert "  not indexed, neither in the vault nor in the index: sources/document/files/kept/Heron.md\n" in out, out
    assert "ignore rules" not in out


@pytest.mark.parametrize(
    ("kind", "flags", "said"),
    [
        ("email", ["--tz", "Europe/Berlin"], "--tz is for chat exports and agent transcripts, not for email"),
        ("document", ["--format", "whatsapp", "--date-order", "mdy"], "--format and --date-order are for chat exports"),
        ("agent", ["--format", "slack"], "--format is for chat exports, not for agent transcripts"),
    ],
)
def test_chat_flags_given_for_other_kinds_are_refused_not_ignored(
    capsys: pytest.CaptureFixture[str], vault: Path, tmp_path: Path, kind: str, flags: list[str], said: str
) -> None:
    doc = write(tmp_path / "in", "a.md", "# A\n\nText.\n")
    code, _, err = run(capsys, "ingest", kind, str(doc), "--vault", str(vault), *flags)
    assert code == 2 and said in err
    assert not (vault / "sources" / kind).exists(), "nothing written"


def test_an_agent_folder_without_transcripts_says_it_looked_for_transcripts(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "sessions"
    empty.mkdir()
    code, data, _ = run(capsys, "ingest", "agent", str(empty), "--vault", str(vault), "--json")
    assert code == 0 and data["warnings"] == [f"{empty}: nothing to ingest here (looked for agent transcripts: .json, .jsonl, .txt, .zip)"]


def test_tz_says_the_notes_are_filed_by_the_vaults_days(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--tz` reads the export's times; the notes keep the vault's days and clock (UTC without
    `[ingest] timezone`), as docs/ingest.md says, and the run now says so once, with how to file
    them by the export's zone. Nothing is said when the vault's zone is the one --tz names."""
    alice = write(tmp_path, "WhatsApp Chat with Alice.txt", WHATSAPP["iso.txt"])
    bob = write(tmp_path, "WhatsApp Chat with Bob.txt", WHATSAPP["android_dmy.txt"])
    code, text, _ = run(capsys, "ingest", "chat", str(alice), str(bob), "--vault", str(vault), "--tz", "America/New_York")
    assert code == 0 and text.count("notes are filed by UTC days and show UTC times") == 1, text
    assert 'set timezone = "America/New_York" under [ingest]' in text
    berlin = tmp_path / "berlin"
    write(berlin, ".vaultmind/config.toml", '[ingest]\ntimezone = "Europe/Berlin"\n')
    code, data, _ = run(capsys, "ingest", "chat", str(alice), "--vault", str(berlin), "--tz", "Europe/Berlin", "--json")
    assert code == 0 and (data["local_zone"], data["vault_clock"]) == ("Europe/Berlin", "Europe/Berlin")
    code, text, _ = run(capsys, "ingest", "chat", str(bob), "--vault", str(berlin), "--tz", "Europe/Berlin")
    assert code == 0 and "read in Europe/Berlin" in text and "notes are filed by" not in text, text
