"""scan → diff → apply on real files and a real DuckDB index."""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from vaultmind.config import Config, load_config
from vaultmind.index.arrow import execute_with, key_table
from vaultmind.index.lexical import terms
from vaultmind.index.store import Index
from vaultmind.markdown.note import parse_note
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.markdown.tokens import count_tokens
from vaultmind.memory import Memory

from .conftest import (
    DERIVED_QUERIES,
    DeepFolders,
    cold_rows,
    dump_index,
    migrations_through,
    snapshot_files,
    write,
)
from .unprivileged import can_drop_privileges, run_unprivileged

NOTE_A = """---
title: Project Atlas
tags: [project, work/planning]
aliases: [Atlas]
---
# Project Atlas

The launch moved to **May 14** after the review with [[People/Alice Chen|Alice]].

## Risks

Budget overrun on the #infra side; see [[Budget 2024#Q3]].
"""

NOTE_B = """# Budget 2024

## Q3

We spend 40k on servers. ^q3-line
"""


def _vault_with_notes(vault: Path) -> None:
    write(vault, "Projects/Atlas.md", NOTE_A)
    write(vault, "Budget 2024.md", NOTE_B)
    write(vault, "People/Alice Chen.md", "# Alice Chen\n\nLeads the Atlas launch.\n")


def test_reindex_twice_gives_identical_rows_and_ids(vault: Path, memory: Memory) -> None:
    _vault_with_notes(vault)
    first = memory.reindex()
    assert first.added == 3
    rows1 = dump_index(memory)
    assert len(rows1["notes"]) == 3
    assert rows1["leaves"], "notes produce leaves"
    second = memory.reindex()
    assert second.added == 3
    assert dump_index(memory) == rows1


def test_cold_rebuild_in_fresh_index_has_same_ids(vault: Path, memory: Memory, tmp_path: Path) -> None:
    _vault_with_notes(vault)
    memory.reindex()
    rows = dump_index(memory)
    other = load_config(vault, embed_provider="none")
    other_index = tmp_path / "other.duckdb"
    from vaultmind.index.store import Index

    with Memory(other, Index.open(other_index), None) as fresh:
        fresh.reindex()
        assert dump_index(fresh) == rows


def test_incremental_add_modify_delete_rename(vault: Path, memory: Memory) -> None:
    _vault_with_notes(vault)
    memory.sync()
    stats = memory.sync()
    assert (stats.added, stats.modified, stats.deleted, stats.unchanged) == (0, 0, 0, 3)

    write(vault, "Budget 2024.md", NOTE_B + "\nQ4 is frozen.\n")
    stats = memory.sync()
    assert stats.modified == 1 and stats.unchanged == 2

    os.rename(vault / "People/Alice Chen.md", vault / "People/Alice.md")
    stats = memory.sync()
    assert stats.renamed == 1 and stats.deleted == 0 and stats.added == 0
    paths = [row[0] for row in memory.index.query("SELECT path FROM notes ORDER BY path")]
    assert paths == ["Budget 2024.md", "People/Alice.md", "Projects/Atlas.md"]

    (vault / "Projects/Atlas.md").unlink()
    stats = memory.sync()
    assert stats.deleted == 1
    assert memory.index.scalar("SELECT count(*) FROM leaves WHERE note_path = 'Projects/Atlas.md'") == 0
    assert memory.index.scalar("SELECT count(*) FROM links WHERE src_path = 'Projects/Atlas.md'") == 0


def test_renames_of_notes_with_the_same_text_are_counted_one_for_one(vault: Path, memory: Memory) -> None:
    """Each path gone pairs with one new path of its text: two copies renamed and a third
    deleted count as two renames and a deletion, not a rename, an addition and two deletions."""
    same = "# Same\n\nIdentical body text about Grace Hopper and compilers.\n"
    for name in "abcdef":
        write(vault, f"D/{name}.md", same)
    memory.sync()
    os.rename(vault / "D/a.md", vault / "D/a2.md")
    (vault / "E").mkdir()
    os.rename(vault / "D/b.md", vault / "E/b.md")
    (vault / "D/c.md").unlink()
    stats = memory.sync()
    assert (stats.renamed, stats.deleted, stats.added) == (2, 1, 0)
    assert memory.index.scalar("SELECT count(*) FROM notes") == 5


def test_touch_without_content_change_is_not_reparsed(vault: Path, memory: Memory) -> None:
    _vault_with_notes(vault)
    memory.sync()
    path = vault / "Budget 2024.md"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    stats = memory.sync()
    assert stats.touched == 1 and stats.modified == 0
    assert memory.sync().unchanged == 3


def test_two_notes_of_one_size_and_mtime_that_swap_names_are_read_again(vault: Path, memory: Memory) -> None:
    """Written in one clock tick, two notes of one size share their mtime: the stat shortcut
    also compares the inode's change time, which a rename sets, so a swap of their names is
    seen (by a sync, as by the watcher's events)."""
    write(vault, "a.md", "# A\n\nappleword\n")
    write(vault, "b.md", "# B\n\nbananword\n")
    same = (vault / "a.md").stat().st_mtime_ns
    os.utime(vault / "b.md", ns=(same, same))
    os.utime(vault / "a.md", ns=(same, same))
    memory.sync()
    os.rename(vault / "a.md", vault / "t.md")
    os.rename(vault / "b.md", vault / "a.md")
    os.rename(vault / "t.md", vault / "b.md")
    assert (vault / "a.md").stat().st_mtime_ns == (vault / "b.md").stat().st_mtime_ns == same
    stats = memory.sync()
    assert stats.modified == 2
    hits = memory.search("appleword", limit=1)["hits"]
    assert hits[0]["note_path"] == "b.md" and "appleword" in hits[0]["content"]
    assert memory.sync().unchanged >= 2  # the change times are kept: the next sync reads nothing


def test_notes_of_two_folders_that_swap_names_are_read_again(vault: Path, memory: Memory) -> None:
    """A folder renamed sets neither time of the notes in it: two folders of notes of one size
    written in one clock tick that swap names had kept each other's rows, every sync after
    saying "unchanged". The stat shortcut compares the inode too."""
    write(vault, "A/n1.md", "# N\n\nalphaword\n")
    write(vault, "B/n1.md", "# N\n\nbravoword\n")
    memory.sync()
    indexed = dict(memory.index.query("SELECT path, ino FROM notes WHERE path IN ('A/n1.md', 'B/n1.md')"))
    assert indexed == {p: (vault / p).stat().st_ino for p in ("A/n1.md", "B/n1.md")}
    os.rename(vault / "A", vault / "T")
    os.rename(vault / "B", vault / "A")
    os.rename(vault / "T", vault / "B")
    # the times as one clock tick would leave them: only the inodes tell the notes apart
    memory.index.con.execute(
        "UPDATE notes SET ctime_ns = ?, mtime_ns = ? WHERE path = 'A/n1.md'",
        [(vault / "A/n1.md").stat().st_ctime_ns, (vault / "A/n1.md").stat().st_mtime_ns],
    )
    memory.index.con.execute(
        "UPDATE notes SET ctime_ns = ?, mtime_ns = ? WHERE path = 'B/n1.md'",
        [(vault / "B/n1.md").stat().st_ctime_ns, (vault / "B/n1.md").stat().st_mtime_ns],
    )
    assert memory.sync().modified == 2
    assert memory.search("bravoword", limit=1)["hits"][0]["note_path"] == "A/n1.md"
    assert memory.sync().unchanged >= 2


def test_a_new_chunk_size_cuts_every_note_again_on_the_next_sync(vault: Path) -> None:
    """Leaves are cut at the configured size: after `[chunking] max_tokens` changes, the next
    sync cuts every note again (as a reindex would), not only the notes edited later."""
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    for i in range(3):
        paragraphs = [" ".join(words[(i + j + k) % 10] for k in range(80)) for j in range(10)]
        write(vault, f"n{i}.md", f"# N{i}\n\n" + "\n\n".join(paragraphs) + "\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        wide = memory.index.scalar("SELECT count(*) FROM leaves")
    with Memory.open(load_config(vault, embed_provider="none", chunk_tokens=100)) as memory:
        assert memory.sync().modified == 0
        narrow = memory.index.scalar("SELECT count(*) FROM leaves")
        assert narrow > wide
        assert memory.sync().unchanged == 3  # cut once
        rows = dump_index(memory)
        memory.reindex()
        assert dump_index(memory) == rows


DOCUMENT = """---
vaultmind: source
kind: document
source_id: "drive:runbook"
scope: drive
version: 1
title: Runbook
time_start: "2024-03-01T09:00:00Z"
time_end: "2024-03-07T16:30:00Z"
---
# Runbook

## Launch day

Open the doors at six and check the projector.
"""


def _indexed_before(
    vault: Path, monkeypatch: pytest.MonkeyPatch, migration: str, *, undated: bool = False, then: Sequence[str] = ()
) -> Config:
    """The vault synced under the migrations before `migration` (`undated`: its leaves without
    a time, as the code before 0019 left a document's; `then`: statements that make the rows
    what the code before left), then every shipped migration in place for the next open."""
    import vaultmind.index.migrate as migrate
    from vaultmind.index.schema import migrations

    config = load_config(vault, embed_provider="none")
    shipped = migrations()
    monkeypatch.setattr(migrate, "migrations", lambda: _up_to(shipped, migration, inclusive=False))
    with Memory.open(config) as memory:
        memory.sync()
        if undated:
            memory.index.con.execute("UPDATE leaves SET ts = NULL")
        for statement in then:
            memory.index.con.execute(statement)
    monkeypatch.setattr(migrate, "migrations", lambda: shipped)
    return config


def test_a_document_s_leaves_take_its_last_change_as_their_time(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A document source note's leaves are dated by its `time_end`, so windows and source
    queries find it; an index from before that holds documents is rebuilt once for it
    (migration 0019), one without documents is not."""
    write(vault, "sources/documents/drive/runbook.md", DOCUMENT)
    write(vault, "plain.md", "# Plain\n\nA note about the projector.\n")
    config = _indexed_before(vault, monkeypatch, "0019", undated=True)
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        times = memory.index.query("SELECT DISTINCT strftime(ts, '%Y-%m-%dT%H:%M') FROM leaves WHERE note_path LIKE 'sources/%'")
        assert times == [("2024-03-07T16:30",)]
        found = memory.query("query_source", {"kind": "document", "since": "2024-03-07", "until": "2024-03-08"})
        assert found["total"] == 1 and "projector" in found["hits"][0]["content"]
        hits = memory.walk("projector on 7 March 2024", limit=5, reference_time=datetime(2024, 6, 1))["hits"]
        doc = next(h for h in hits if h["note_path"].startswith("sources/"))
        assert doc["breakdown"]["time_factor"] == 1.0
        rows = dump_index(memory)
        memory.reindex()
        assert dump_index(memory) == rows


@pytest.mark.parametrize("migration", ["0019", "0020", "0021", "0022", "0023", "0024", "0025", "0027", "0028", "0031", "0032"])  # documents' times, email subjects, anchors, properties, titles, nouns, recipients, your notes' dates, message refs, unclosed math, section leaf ids
def test_an_index_without_the_notes_a_migration_rebuilds_for_is_not_rebuilt(
    vault: Path, monkeypatch: pytest.MonkeyPatch, migration: str
) -> None:
    write(vault, "plain.md", "# Plain\n\nA note about the projector.\n")
    config = _indexed_before(vault, monkeypatch, migration)
    migrations_through(monkeypatch, "0032_section_leaf_ids_by_text")  # 0033 rebuilds any index holding a leaf
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") is None
        assert memory.sync().unchanged == 1


def test_an_index_holding_a_dated_note_of_yours_is_rebuilt_for_its_date(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Migration 0027: a daily note (a date in its file name) and a note with a `date` property
    give their leaves that time; an index from before holding one is rebuilt once, and a time
    window then finds it."""
    write(vault, "Daily/2024-03-07.md", "# Thursday\n\nCalled the plumber about the tap.\n")
    write(vault, "Ideas.md", "---\ndate: 2024-02-20\n---\n# Ideas\n\nA boat rental app.\n")
    write(vault, "plain.md", "# Plain\n\nA note about the projector.\n")
    config = _indexed_before(vault, monkeypatch, "0027", undated=True)
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        times = dict(memory.index.query("SELECT note_path, strftime(any_value(ts), '%Y-%m-%dT%H:%M') FROM leaves GROUP BY note_path"))
        assert times == {"Daily/2024-03-07.md": "2024-03-07T12:00", "Ideas.md": "2024-02-20T12:00", "plain.md": None}
        hits = memory.walk("what did I note last week?", limit=3, reference_time=datetime(2024, 3, 12, 12))["hits"]
        assert hits[0]["note_path"] == "Daily/2024-03-07.md" and hits[0]["breakdown"]["inside"]
        rows = dump_index(memory)
        memory.reindex()
        assert dump_index(memory) == rows


def test_an_index_holding_a_note_with_unclosed_math_is_rebuilt_for_what_it_hid(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Migration 0031: "$$$ a lot" opened a math block that never closed, and a "<!--" within a
    line a comment: the rest of the note lost its headings, tags and links; prose between two
    `---` rules was in no leaf. An index from before (its rows without them) holding such a note
    is rebuilt once, and the note is not touched."""
    write(vault, "Budget.md", "# Budget\n\n$$$ a lot\n\n# Travel\n\nFlights to Rome #trip [[Rome]]\n")
    write(vault, "Draft.md", "Write a <!-- to open a comment.\n\nSee #later\n")
    write(vault, "Journal.md", "---\nThe kiln repair costs 400 euros.\n\n---\n\nCall Dana.\n")
    write(vault, "plain.md", "# Plain\n\nA note about the projector.\n")
    before = snapshot_files(vault)
    config = _indexed_before(  # as the code before left them: without what was hidden
        vault, monkeypatch, "0031", then=["DELETE FROM tags", "DELETE FROM links", "DELETE FROM leaves WHERE note_path = 'Journal.md'"]
    )
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        assert sorted(memory.index.query("SELECT path, tag FROM tags")) == [("Budget.md", "trip"), ("Draft.md", "later")]
        assert memory.index.query("SELECT src_path, target FROM links") == [("Budget.md", "Rome")]
        assert memory.search("kiln repair", limit=1)["hits"][0]["note_path"] == "Journal.md"
        headings = memory.index.query("SELECT DISTINCT heading_path[-1] FROM leaves WHERE note_path = 'Budget.md' ORDER BY 1")
        assert headings == [("Budget",), ("Travel",)]
        rows = dump_index(memory)
        memory.reindex()
        assert dump_index(memory) == rows
    assert snapshot_files(vault) == before


def test_an_index_holding_a_note_read_with_replacement_characters_is_rebuilt_to_read_it(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 0031: a note in Windows-1251 lost every letter (replacement characters); it is
    read in its code page now, and an index from before holding such a note is rebuilt once."""
    (vault / "ru.md").write_bytes("Встреча завтра в десять, приходи вовремя.\n".encode("cp1251"))
    write(vault, "plain.md", "# Plain\n\nA note about the projector.\n")
    before = snapshot_files(vault)
    config = _indexed_before(  # as the code before left it
        vault,
        monkeypatch,
        "0031",
        then=["UPDATE leaves SET text = 'В' WHERE note_path = 'ru.md'", "UPDATE problems SET message = 'not valid UTF-8 (byte 0); indexed with replacement characters'"],
    )
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        assert memory.search("встреча", limit=1)["hits"][0]["note_path"] == "ru.md"
        [(message,)] = memory.index.query("SELECT message FROM problems WHERE path = 'ru.md'")
        assert message.startswith("Windows-1251 text, not UTF-8")
    assert snapshot_files(vault) == before


def test_an_index_holding_a_message_without_a_ref_is_rebuilt_to_cite_it(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Migration 0028: a WhatsApp message (its meta line names no `ref`) cites
    `chat://whatsapp/<chat>/<id>`, derived when indexed; an index from before, whose row has no
    ref, is rebuilt once for it, and the note is not touched."""
    meta = SourceMeta(kind="chat", source_id="whatsapp:Family Group", scope="whatsapp/Family Group", title="Family Group")
    message = Message(message_id="h-0123456789abcdef", author="Alice", timestamp="2024-03-04T09:00:00Z", text="The boat rental opens on Saturday")
    note = write(vault, "sources/chat/whatsapp/family-group/2024-03-04.md", render_source_note(meta, [message]))
    write(vault, "plain.md", "# Plain\n\nA note about the projector.\n")
    before = snapshot_files(vault)
    config = _indexed_before(vault, monkeypatch, "0028", then=["UPDATE leaves SET source_ref = NULL"])
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        refs = dict(memory.index.query("SELECT note_path, source_ref FROM leaves"))
        assert refs == {note.relative_to(vault).as_posix(): "chat://whatsapp/Family%20Group/h-0123456789abcdef", "plain.md": None}
        rows = dump_index(memory)
        memory.reindex()
        assert dump_index(memory) == rows
    assert snapshot_files(vault) == before and "ref=" not in note.read_text(encoding="utf-8")


def _rebuilt_once_for_token_counts(
    vault: Path, monkeypatch: pytest.MonkeyPatch, migration: str, name: str, text: str, counted_before: str
) -> None:
    """An index from before `migration` (its leaves' counts set back by `counted_before`) is
    rebuilt once: every leaf counted as now, the note `name` (holding `text`) cut as a fresh
    parse cuts it, its rows those a fresh index has, and the notes not touched."""
    write(vault, name, text)
    write(vault, "plain.md", "# Plain\n\nA note about the projector.\n")
    before = snapshot_files(vault)
    config = _indexed_before(vault, monkeypatch, migration, then=[counted_before])
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        counts = memory.index.query("SELECT text, token_count FROM leaves")
        assert all(count == count_tokens(text) for text, count in counts)
        assert len(counts) == len(parse_note(name, (vault / name).read_text()).leaves) + 1
        rows = dump_index(memory)
        memory.reindex()
        assert dump_index(memory) == rows
    assert snapshot_files(vault) == before


def test_an_index_holding_leaves_is_rebuilt_for_their_token_counts(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Migration 0033: digits and hashes count about a token a character (they counted half),
    so a deploy log is cut into more leaves."""
    log = "".join(f"- 2024-03-{1 + i % 28:02d} 10:{i % 60:02d} deployed {i:040x}\n" for i in range(120))
    _rebuilt_once_for_token_counts(
        vault, monkeypatch, "0033", "Deploys.md", "# Deploys\n\n" + log, "UPDATE leaves SET token_count = token_count // 2"
    )


def test_an_index_holding_leaves_is_rebuilt_for_word_token_counts(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Migration 0034: an ordinary word counts about a token with the space before it (it
    counted about two), so a note of prose is cut into about half as many leaves."""
    prose = " ".join(f"Entry {i}: the committee reviewed the harbour budget and agreed to meet again soon." for i in range(150))
    _rebuilt_once_for_token_counts(
        vault, monkeypatch, "0034", "Minutes.md", "# Minutes\n\n" + prose + "\n", "UPDATE leaves SET token_count = token_count * 2"
    )


def test_an_index_holding_leaves_is_rebuilt_for_caps_and_cyrillic_token_counts(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 0036: an ALL-CAPS word's capitals and a Cyrillic word's letters count about half
    a token each after the first (they counted one), so such a note is cut into fewer leaves."""
    lines = [f"ITEM {i}: THE BOARD APPROVED THE BUDGET. Совет утвердил бюджет на следующий год." for i in range(120)]
    _rebuilt_once_for_token_counts(
        vault, monkeypatch, "0036", "Board.md", "# Board\n\n" + "\n".join(lines) + "\n", "UPDATE leaves SET token_count = token_count * 2"
    )


def test_an_index_holding_a_nouns_old_term_is_rebuilt_for_its_verbs(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Migration 0024: "decision" shares "decide"'s term; an index whose postings hold the old
    term is rebuilt once, and the note is then found by the verb."""
    write(vault, "notes/sync.md", "# Sync\n\nDecision: the public launch moves to 23 April.\n")
    config = _indexed_before(vault, monkeypatch, "0024", then=["UPDATE postings SET term = 'decis' WHERE term = 'decid'"])
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        assert [h["note_path"] for h in memory.search("when did we decide", limit=3)["hits"]] == ["notes/sync.md"]
        assert memory.index.query("SELECT count(*) FROM postings WHERE term = 'decis'") == [(0,)]


def _email_thread(vault: Path) -> None:
    meta = SourceMeta(
        kind="email", source_id="email:work", scope="work/quarterly-security-review",
        title="[sec] Quarterly security review", subject="[sec] Quarterly security review",
    )  # fmt: skip
    messages = [
        Message(message_id="sec-1", author="Security Team", timestamp="2025-04-03T08:00:00Z",
                text="Reminder: rotate your SSH keys by April 15.", source_ref="mid:sec-1@example.org"),
        Message(message_id="sec-2", author="Kai Mueller", timestamp="2025-04-03T09:00:00Z",
                text="Done for my keys.", source_ref="mid:sec-2@example.org"),
    ]  # fmt: skip
    write(vault, "sources/email/work/quarterly-security-review/2025-04-03.md", render_source_note(meta, messages))


def test_an_email_threads_subject_finds_its_first_message(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The subject is in the note's front matter, in no message: its words are searched with
    the thread's first message (whose text is unchanged). An index from before holding email
    is rebuilt once for it (migration 0020); one without email is not."""
    _email_thread(vault)
    config = _indexed_before(vault, monkeypatch, "0020")
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        hits = memory.search("quarterly", limit=5)["hits"]
        assert [h["content"] for h in hits] == ["Reminder: rotate your SSH keys by April 15."]
        assert memory.walk("the quarterly review")["hits"][0]["content"] == hits[0]["content"]
        terms_of = dict(memory.index.query("SELECT message_id, term_count FROM leaves"))
        assert terms_of["sec-1"] > len(terms("Reminder: rotate your SSH keys by April 15.")), "the subject's too"
        rows = dump_index(memory)
        memory.reindex()
        assert dump_index(memory) == rows


def test_an_index_from_before_recipients_is_rebuilt_once_for_them(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Migration 0025: an email's To and Cc are kept on its leaf; an index from before that holds
    email is rebuilt once, and the recipient is then found."""
    meta = SourceMeta(kind="email", source_id="email:work", scope="work/keys", title="Keys", subject="Keys")
    mail = Message(message_id="k-1", author="Bob Stone <bob@example.com>", timestamp="2025-04-03T08:00:00Z",
                   text="The spare keys are in the blue tin.", to=("Megan One <megan@example.com>",))  # fmt: skip
    write(vault, "sources/email/work/keys/2025-04-03-keys.md", render_source_note(meta, [mail]))
    config = _indexed_before(vault, monkeypatch, "0025", then=["UPDATE leaves SET mail_to = NULL, mail_cc = NULL"])
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        assert memory.index.query("SELECT mail_to FROM leaves") == [(["Megan One <megan@example.com>"],)]
        assert memory.search("megan", limit=3)["hits"][0]["to"] == ["Megan One <megan@example.com>"]


def test_links_tags_and_frontmatter_are_indexed(vault: Path, memory: Memory) -> None:
    _vault_with_notes(vault)
    memory.sync()
    links = memory.index.query(
        "SELECT target, kind, heading, alias FROM links WHERE src_path = 'Projects/Atlas.md' ORDER BY line"
    )
    assert ("People/Alice Chen", "wikilink", None, "Alice") in links
    assert ("Budget 2024", "wikilink", "Q3", None) in links
    tags = {row[0] for row in memory.index.query("SELECT tag FROM tags WHERE path = 'Projects/Atlas.md'")}
    assert {"project", "work/planning", "infra"} <= tags
    title, aliases = memory.index.query("SELECT title, aliases FROM notes WHERE path = 'Projects/Atlas.md'")[
        0
    ]
    assert title == "Project Atlas" and aliases == ["Atlas"]


def test_ignored_folders_are_not_indexed(vault: Path, memory: Memory) -> None:
    _vault_with_notes(vault)
    write(vault, ".obsidian/snippets/x.md", "# not a note\n")
    write(vault, ".trash/old.md", "# trashed\n")
    write(vault, ".git/notes.md", "# git\n")
    write(vault, "Projects/.venv/lib/README.md", "# a tool's hidden folder, deep in the vault\n")
    write(vault, "Projects/.draft.md", "# a hidden note\n")
    write(vault, "notes.txt", "plain text is not a note")
    memory.sync()
    paths = {row[0] for row in memory.index.query("SELECT path FROM notes")}
    assert paths == {"Projects/Atlas.md", "Budget 2024.md", "People/Alice Chen.md"}
    write(vault, "Projects/.venv/lib/other.md", "# created while watched\n")
    assert memory.sync_paths(["Projects/.venv/lib/other.md", "Projects/.venv"]).added == 0


def test_configured_ignore_globs(vault: Path) -> None:
    _vault_with_notes(vault)
    write(vault, "Templates/Daily.md", "---\ndate: {{date}}\n---\n# {{title}}\n")
    write(vault, "scratch.excalidraw.md", "# drawing\n")
    write(vault, ".vaultmind/config.toml", '[vault]\nignore = ["Templates/**", "*.excalidraw.md"]\n')
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        paths = {row[0] for row in memory.index.query("SELECT path FROM notes")}
    assert paths == {"Projects/Atlas.md", "Budget 2024.md", "People/Alice Chen.md"}


def test_a_reindex_takes_up_new_ignore_rules_and_pauses_background_upkeep(vault: Path) -> None:
    """A reindex (`/v1/reindex` in a daemon) rebuilt with the rules read at start, and left
    background upkeep running beside it."""
    _vault_with_notes(vault)
    write(vault, "Templates/Daily.md", "# Daily\n\nA template.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        write(vault, ".vaultmind/config.toml", '[vault]\nignore = ["Templates/**"]\n')
        before = memory._last_foreground
        memory.reindex()
        assert memory._last_foreground > before, "foreground work"
        paths = {row[0] for row in memory.index.query("SELECT path FROM notes")}
    assert paths == {"Projects/Atlas.md", "Budget 2024.md", "People/Alice Chen.md"}


def test_bad_input_is_reported_not_fatal(vault: Path, memory: Memory) -> None:
    _vault_with_notes(vault)
    (vault / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (vault / "latin1.md").write_bytes("Caf\xe9 au lait, na\xefve".encode("latin-1"))
    write(
        vault, "broken-fm.md", "---\ntitle: [unclosed\ndate: {{date}}\n---\n# Body survives\n\nText here.\n"
    )
    (vault / "huge.md").write_bytes(b"x" * (2 * 1024 * 1024))
    (vault / "notepad.md").write_bytes("# Saved by Notepad\n\nUnicode text, Zoë.\n".encode("utf-16"))
    (vault / "no-bom.md").write_bytes("# Without a mark\n\nZoë owns Borealis.\n".encode("utf-16-le"))
    config = load_config(vault, embed_provider="none", max_file_bytes=1024 * 1024)
    with Memory.open(config) as memory2:
        memory2.sync()
        status = memory2.status()
        kinds = {(p["path"], p["kind"]) for p in status["problems"]}
        assert ("binary.md", "binary") in kinds
        assert ("latin1.md", "not_utf8") in kinds
        assert ("broken-fm.md", "frontmatter") in kinds
        assert ("huge.md", "too_large") in kinds
        messages = {p["path"]: p["message"] for p in status["problems"]}
        assert "max_file_mb" in messages["huge.md"]
        # UTF-16 (what Notepad saves as "Unicode"), with or without its byte order mark: indexed
        # as the text it is, and reported, since Obsidian reads notes as UTF-8; never rewritten
        assert ("notepad.md", "utf16") in kinds and "re-save it as UTF-8" in messages["notepad.md"]
        assert ("no-bom.md", "utf16") in kinds
        paths = {row[0] for row in memory2.index.query("SELECT path FROM notes")}
        assert {"broken-fm.md", "latin1.md", "notepad.md", "no-bom.md"} <= paths
        wide = memory2.index.query("SELECT note_path, text FROM leaves WHERE note_path IN ('notepad.md', 'no-bom.md') ORDER BY 1")
        assert [(p, " ".join(t.split())) for p, t in wide] == [
            ("no-bom.md", "# Without a mark Zoë owns Borealis."),
            ("notepad.md", "# Saved by Notepad Unicode text, Zoë."),
        ]
        assert (vault / "notepad.md").read_bytes().startswith(b"\xff\xfe")
        assert "binary.md" not in paths and "huge.md" not in paths
        text = memory2.index.scalar(
            "SELECT string_agg(text, ' ') FROM leaves WHERE note_path = 'broken-fm.md'"
        )
        assert "Body survives" in text
        # fixing the file clears its problem; so does removing a file that was never indexed
        write(vault, "broken-fm.md", "---\ntitle: fixed\n---\n# Body survives\n")
        (vault / "binary.md").unlink()
        (vault / "huge.md").unlink()
        memory2.sync()
        kinds = {(p["path"], p["kind"]) for p in memory2.status()["problems"]}
        assert ("binary.md", "binary") not in kinds and ("huge.md", "too_large") not in kinds
        assert ("broken-fm.md", "frontmatter") not in kinds


def test_a_note_with_a_stray_nul_byte_is_indexed_and_said_a_binary_file_is_not(vault: Path) -> None:
    """One stray NUL byte (a sync tool's glitch, a paste) made a whole note "a binary file",
    skipped: its text was in no search. It is indexed, the NUL read as a replacement character,
    and `status` names the note and the line; the file is not touched. NUL-dense files (an
    image, a database saved as `.md`) stay binary, however short."""
    stray = b"# Harbour\n\nAlice met Bob at the harbour.\x00 They talked about kingfishers.\n\nSecond\x00line.\n"
    (vault / "stray.md").write_bytes(stray)
    (vault / "tiny.md").write_bytes(b"# Tiny\x00\n")
    (vault / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x08\x06" + b"kingfisher" * 3)
    (vault / "db.md").write_bytes(b"SQLite format 3\x00\x10\x00\x01\x01\x00@  " + bytes(4000) + b"herons " * 40)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        problems = {p["path"]: (p["kind"], p["message"]) for p in memory.status()["problems"]}
        texts = dict(memory.index.query("SELECT note_path, string_agg(text, ' ') FROM leaves GROUP BY 1"))
    assert problems["stray.md"] == (
        "nul_bytes",
        "2 stray NUL bytes (the first on line 3), indexed as \ufffd; the file is left as it is — "
        "delete them in an editor that shows them",
    )
    assert problems["tiny.md"][0] == "nul_bytes"
    assert [problems[name][0] for name in ("image.md", "db.md")] == ["binary"] * 2
    assert "kingfishers" in texts["stray.md"] and "\x00" not in texts["stray.md"] and "\ufffd" in texts["stray.md"]
    assert not {"image.md", "db.md"} & set(texts)
    assert (vault / "stray.md").read_bytes() == stray
    # the NUL deleted: the warning goes
    (vault / "stray.md").write_bytes(stray.replace(b"\x00", b""))
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert "stray.md" not in {p["path"] for p in memory.status()["problems"]}


def test_a_lowered_size_cap_applies_to_notes_already_indexed(vault: Path) -> None:
    """`max_file_mb` lowered: the next sync drops the notes now over the cap and reports them,
    as a cold rebuild would, though their files did not change; raised again, they come back."""
    write(vault, "small.md", "# Small\n\nA short note about herons.\n")
    write(vault, "big.md", "# Big\n\n" + "A long note about kingfishers. " * 200 + "\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
    low = load_config(vault, embed_provider="none", max_file_bytes=2048)
    with Memory.open(low) as memory:
        stats = memory.sync()
        assert stats.deleted == 1
        paths = {row[0] for row in memory.index.query("SELECT path FROM notes")}
        assert paths == {"small.md"}
        kinds = {(p["path"], p["kind"]) for p in memory.status()["problems"]}
        assert ("big.md", "too_large") in kinds
        rows = dump_index(memory)
    cold_vault = vault.parent / "cold"
    shutil.copytree(vault, cold_vault, ignore=shutil.ignore_patterns(".vaultmind"))
    with Memory.open(load_config(cold_vault, embed_provider="none", max_file_bytes=2048)) as cold:
        cold.reindex()
        assert dump_index(cold) == rows, "the same index as a cold rebuild under the lower cap"
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert memory.index.scalar("SELECT count(*) FROM notes WHERE path = 'big.md'") == 1


def test_self_referring_front_matter_is_indexed(vault: Path, memory: Memory) -> None:
    """`key: &a [*a]` is a YAML list that holds itself; it used to recurse without end and
    stop the whole sync."""
    write(vault, "loop.md", "---\nkey: &a [*a]\ntitle: Loop\n---\n# Loop\n\nThe body is here.\n")
    write(vault, "other.md", "# Other\n\nAnother note.\n")
    memory.sync()
    row = memory.index.query("SELECT frontmatter FROM notes WHERE path = 'loop.md'")
    assert json.loads(row[0][0]) == {"key": [None], "title": "Loop"}
    assert memory.status()["notes"]["total"] == 2


def test_front_matter_whose_aliases_expand_to_millions_of_values_is_invalid_and_its_body_indexed(
    vault: Path, memory: Memory
) -> None:
    """Seven levels of nine aliases each (a few hundred bytes) expand to 9**7 values: copied
    out, they took seconds, most of a gigabyte and tens of megabytes of stored JSON."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 8)]
    write(vault, "bomb.md", "---\n" + "\n".join(lines) + "\ntitle: Bomb\n---\n# Bomb\n\nThe laughing otter.\n")
    write(vault, "small.md", "---\nbase: &b [x, y]\nagain: *b\n---\n# Small\n\nA fair alias.\n")
    memory.sync()
    stored = dict(memory.index.query("SELECT path, frontmatter FROM notes"))
    assert len(stored["bomb.md"]) < 10_000
    assert json.loads(stored["bomb.md"])["title"] == "Bomb"
    assert json.loads(stored["small.md"]) == {"base": ["x", "y"], "again": ["x", "y"]}
    problems = {(p["path"], p["kind"]): p["message"] for p in memory.status()["problems"]}
    assert "aliases expand" in problems["bomb.md", "frontmatter"]
    assert ("small.md", "frontmatter") not in problems
    texts = dict(memory.index.query("SELECT note_path, string_agg(text, ' ') FROM leaves GROUP BY note_path"))
    assert "laughing otter" in texts["bomb.md"]


def test_a_note_the_parser_cannot_take_keeps_its_rows_and_stops_nothing(
    vault: Path, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(vault, "a.md", "# A\n\nAlpha text.\n")
    write(vault, "b.md", "# B\n\nBravo text.\n")
    import vaultmind.sync_note as sync_note

    real = sync_note.parse_note

    def fails_on_b(path: str, text: str, **kwargs: object) -> object:
        if path == "b.md":
            raise RecursionError("maximum recursion depth exceeded")
        return real(path, text, **kwargs)  # type: ignore[arg-type]

    with Memory.open(config) as memory:
        memory.sync()
        monkeypatch.setattr(sync_note, "parse_note", fails_on_b)
        write(vault, "a.md", "# A\n\nAlpha text, edited.\n")
        write(vault, "b.md", "# B\n\nBravo text, edited.\n")
        memory.sync()  # does not raise
        problems = {p["path"]: p for p in memory.status()["problems"]}
        assert problems["b.md"]["kind"] == "parse_error" and "RecursionError" in problems["b.md"]["message"]
        texts = dict(memory.index.query("SELECT note_path, string_agg(text, ' ') FROM leaves GROUP BY note_path"))
        assert "edited" in texts["a.md"]  # the other note is indexed
        assert texts["b.md"].endswith("Bravo text.")  # what the index held is kept
    monkeypatch.undo()
    with Memory.open(config) as memory:  # a vaultmind that can parse it (an upgrade)
        memory.sync()  # its first sync reads it again
        assert "b.md" not in {p["path"] for p in memory.status()["problems"]}
        texts = dict(memory.index.query("SELECT note_path, string_agg(text, ' ') FROM leaves GROUP BY note_path"))
    assert "edited" in texts["b.md"]


def test_a_note_the_parser_cannot_take_is_one_problem_and_is_not_parsed_again_until_it_changes(
    vault: Path, memory: Memory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Its `parse_error` was added again at every sync (one more row each time), and the note
    read and parsed again each time, with a traceback logged."""
    write(vault, "old.md", "# Old\n\nFine for now.\n")
    memory.sync()
    import vaultmind.sync_note as sync_note

    real = sync_note.parse_note
    parsed: list[str] = []

    def fails_on_boom(path: str, text: str, **kwargs: object) -> object:
        parsed.append(path)
        if "BOOM" in text:
            raise ValueError("boom")
        return real(path, text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sync_note, "parse_note", fails_on_boom)
    write(vault, "old.md", "# Old\n\nNow BOOM.\n")
    write(vault, "new.md", "# New\n\nBOOM from the start.\n")
    with caplog.at_level("WARNING"):
        for _ in range(3):
            memory.sync()
        memory.sync_paths(["old.md", "new.md"])
    problems = memory.index.query("SELECT path, kind FROM problems ORDER BY ALL")
    assert problems == [("new.md", "parse_error"), ("old.md", "parse_error")]
    assert parsed.count("old.md") == 1, "its stat is recorded: not read again while unchanged"
    assert not [r for r in caplog.records if r.exc_info], "a warning, without a traceback"
    assert any("old.md" in r.getMessage() and "boom" in r.getMessage() for r in caplog.records)
    monkeypatch.undo()
    write(vault, "old.md", "# Old\n\nFine again.\n")
    memory.sync()
    assert memory.index.query("SELECT path, kind FROM problems") == []
    assert memory.index.scalar("SELECT string_agg(text, ' ') FROM leaves WHERE note_path = 'old.md'").endswith("again.")


UNREADABLE_SCENARIO = """
import json
from vaultmind.config import load_config
from vaultmind.memory import Memory

(vault / "keep.md").write_text("# Keep\\n\\nThe otter sleeps.\\n")
(vault / "locked.md").write_text("# Locked\\n\\nThe badger digs.\\n")
(vault / "Team").mkdir()
(vault / "Team" / "alice.md").write_text("# Alice\\n\\nAlice leads.\\n")
out = {}
with Memory.open(load_config(vault, embed_provider="none")) as memory:
    memory.sync()
    before = memory.index.query("SELECT id, text FROM leaves ORDER BY id")
    (vault / "locked.md").write_text("# Locked\\n\\nedited while locked\\n")
    (vault / "locked.md").chmod(0)
    (vault / "Team").chmod(0)
    stats = memory.sync()
    out["kept"] = stats.kept_unreadable
    out["deleted"] = stats.deleted
    out["same_rows"] = memory.index.query("SELECT id, text FROM leaves ORDER BY id") == before
    out["problems"] = sorted({(p["path"], p["kind"]) for p in memory.status()["problems"]})
    (vault / "locked.md").chmod(0o644)
    (vault / "Team").chmod(0o755)
    memory.sync()
    out["after_fix"] = memory.index.scalar(
        "SELECT string_agg(text, ' ') FROM leaves WHERE note_path = 'locked.md'"
    )
    out["problems_after_fix"] = [p["kind"] for p in memory.status()["problems"]]
print(json.dumps(out))
"""


@pytest.mark.skipif(not can_drop_privileges(), reason="needs setpriv to drop root privileges")
def test_unreadable_files_and_folders_keep_their_rows() -> None:
    out = run_unprivileged(UNREADABLE_SCENARIO)
    assert out["deleted"] == 0
    assert out["kept"] >= 2, "the locked file and the unlistable folder's note are kept"
    assert out["same_rows"], "no row of an unreadable path is deleted or changed"
    problems = {tuple(p) for p in out["problems"]}
    assert ("locked.md", "unreadable") in problems
    assert any(kind == "unreadable_folder" and path.startswith("Team") for path, kind in problems)
    assert "edited while locked" in out["after_fix"], "once readable again, the edit is indexed"
    assert out["problems_after_fix"] == []


REBUILD_UNREADABLE_SCENARIO = """
import json
from vaultmind.config import load_config
from vaultmind.memory import Memory

(vault / "keep.md").write_text("# Keep\\n\\nThe otter sleeps. #animal\\n")
(vault / "locked.md").write_text("# Locked\\n\\nThe badger digs [[keep]].\\n")
(vault / "Team").mkdir()
(vault / "Team" / "alice.md").write_text("---\\ntags: [team]\\n---\\n# Alice\\n\\nAlice leads.\\n")
query = "SELECT note_path, string_agg(text, ' ' ORDER BY seq) FROM leaves GROUP BY note_path ORDER BY 1"
out = {}
for bulk_files in (1, 10_000):  # a bulk load, then batch by batch
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.syncer.bulk_files = bulk_files
        memory.sync()
        before = memory.index.query(query)
        (vault / "locked.md").chmod(0)
        (vault / "Team").chmod(0)
        stats = memory.reindex()
        out[f"same_{bulk_files}"] = memory.index.query(query) == before
        out[f"terms_{bulk_files}"] = memory.index.scalar(
            "SELECT count(*) FROM postings JOIN leaves ON leaf_id = id WHERE note_path = 'locked.md'"
        )
        out[f"kept_{bulk_files}"] = stats.kept_unreadable
        (vault / "locked.md").chmod(0o644)
        (vault / "Team").chmod(0o755)
        memory.sync()
        out[f"problems_{bulk_files}"] = memory.index.query("SELECT path, kind FROM problems")
        out[f"read_again_{bulk_files}"] = memory.index.scalar("SELECT count(*) FROM notes WHERE sha256 = ''")
        rows = {name: memory.index.query(sql) for name, sql in QUERIES.items()}
        memory.reindex()
        out[f"as_cold_{bulk_files}"] = rows == {name: memory.index.query(sql) for name, sql in QUERIES.items()}
print(json.dumps(out))
"""


@pytest.mark.skipif(not can_drop_privileges(), reason="needs setpriv to drop root privileges")
def test_a_rebuild_keeps_the_rows_of_notes_it_cannot_read_or_list() -> None:
    """A reindex (or the rebuild a migration or a new chunk size calls for) emptied every
    derived table: the notes it could not read, or whose folder it could not list, lost their
    rows. Kept, they are read again once they can be."""
    out = run_unprivileged(f"QUERIES = {DERIVED_QUERIES!r}\n" + REBUILD_UNREADABLE_SCENARIO)
    for bulk in (1, 10_000):
        assert out[f"same_{bulk}"] and out[f"terms_{bulk}"] > 0
        assert out[f"kept_{bulk}"] >= 2
        assert out[f"problems_{bulk}"] == [] and out[f"read_again_{bulk}"] == 0
        assert out[f"as_cold_{bulk}"]


UNREACHABLE_LINK_SCENARIO = """
import json, os
from vaultmind.config import load_config
from vaultmind.memory import Memory

(vault / "Projects").mkdir()
(vault / "Projects" / "reference.md").write_text("# Reference\\n\\nThe old reference.\\n")
secret = vault.parent / "secret"
(secret / "inner").mkdir(parents=True)
os.symlink(secret / "inner", vault / "Projects" / "ref")  # a symlink whose target cannot be stat-ed
out = {}
with Memory.open(load_config(vault, embed_provider="none")) as memory:
    secret.chmod(0)
    memory.sync()
    (vault / "Projects" / "reference.md").unlink()
    out["deleted"] = memory.sync().deleted
    out["notes"] = [r[0] for r in memory.index.query("SELECT path FROM notes")]
    out["problems"] = memory.index.query("SELECT path, kind FROM problems")
    secret.chmod(0o755)
print(json.dumps(out))
"""


@pytest.mark.skipif(not can_drop_privileges(), reason="needs setpriv to drop root privileges")
def test_a_symlink_that_cannot_be_followed_hides_only_what_is_behind_it() -> None:
    """`Projects/ref`, a link it could not stat, kept `Projects/reference.md` (a name it
    begins) from ever being deleted, and was called an unreadable folder."""
    out = run_unprivileged(UNREACHABLE_LINK_SCENARIO)
    assert out["deleted"] == 1 and out["notes"] == []
    assert [tuple(p) for p in out["problems"]] == [("Projects/ref", "unreadable_link")]


UNENTERABLE_FOLDER_SCENARIO = """
import json
from vaultmind.config import load_config
from vaultmind.memory import Memory

(vault / "Team").mkdir()
(vault / "Team" / "alice.md").write_text("# Alice\\n\\nAlice leads.\\n")
(vault / "free.md").write_text("# Free\\n\\nFree text.\\n")
out = {}
with Memory.open(load_config(vault, embed_provider="none")) as memory:
    memory.sync()
    (vault / "Team").chmod(0o644)  # listed, not entered
    (vault / "free.md").write_text("# Free\\n\\nFree text, edited.\\n")
    try:
        stats = memory.sync_paths(["Team/alice.md", "free.md"])  # one watcher batch
        out["deleted"] = stats.deleted
    except OSError as exc:
        out["error"] = repr(exc)
    out["notes"] = [r[0] for r in memory.index.query("SELECT path FROM notes ORDER BY 1")]
    out["free"] = memory.index.scalar("SELECT string_agg(text, ' ') FROM leaves WHERE note_path = 'free.md'")
    out["problems"] = memory.index.query("SELECT path FROM problems")
    (vault / "Team").chmod(0o755)
print(json.dumps(out))
"""


@pytest.mark.skipif(not can_drop_privileges(), reason="needs setpriv to drop root privileges")
def test_a_path_under_a_folder_that_cannot_be_entered_keeps_its_rows_and_stops_no_batch() -> None:
    """A PermissionError stopped the watcher's whole batch until the next full pass."""
    out = run_unprivileged(UNENTERABLE_FOLDER_SCENARIO)
    assert "error" not in out and out["deleted"] == 0
    assert out["notes"] == ["Team/alice.md", "free.md"]
    assert "edited" in out["free"]
    assert out["problems"] == [["Team/alice.md"]]


UNCHANGED_UNLOCK_SCENARIO = """
import json
from vaultmind.config import load_config
from vaultmind.memory import Memory

(vault / "locked.md").write_text("---\\ntitle: [unclosed\\n---\\nThe badger digs.\\n")
out = {}
with Memory.open(load_config(vault, embed_provider="none")) as memory:
    memory.sync()
    (vault / "locked.md").chmod(0)
    memory.sync()
    out["locked"] = sorted({p["kind"] for p in memory.status()["problems"] if p["path"] == "locked.md"})
    (vault / "locked.md").chmod(0o644)
    memory.sync()
    out["unlocked"] = sorted({p["kind"] for p in memory.status()["problems"] if p["path"] == "locked.md"})
print(json.dumps(out))
"""


@pytest.mark.skipif(not can_drop_privileges(), reason="needs setpriv to drop root privileges")
def test_a_file_readable_again_with_the_same_bytes_is_no_longer_unreadable() -> None:
    """Unlocked without an edit: its bytes are the ones indexed, and 'unreadable' had stayed
    until a reindex. Its front matter problem, of those same bytes, stays."""
    out = run_unprivileged(UNCHANGED_UNLOCK_SCENARIO)
    assert "unreadable" in out["locked"]
    assert out["unlocked"] == ["frontmatter"]


WATCHED_FOLDER_SCENARIO = """
import json
from vaultmind.config import load_config
from vaultmind.memory import Memory

(vault / "Team").mkdir()
(vault / "Team" / "alice.md").write_text("# Alice\\n\\nAlice leads.\\n")
out = {}
with Memory.open(load_config(vault, embed_provider="none")) as memory:
    memory.sync()
    (vault / "Team").chmod(0)
    memory.sync_paths(["Team"])  # the watcher reports the folder
    out["locked"] = sorted({(p["path"], p["kind"]) for p in memory.status()["problems"]})
    (vault / "Team").chmod(0o755)
    (vault / "Team" / "alice.md").write_text("# Alice\\n\\nAlice leads the otters.\\n")
    memory.sync_paths(["Team/alice.md"])  # a save inside it
    out["unlocked"] = sorted({(p["path"], p["kind"]) for p in memory.status()["problems"]})
    out["text"] = memory.index.scalar("SELECT string_agg(text, ' ') FROM leaves WHERE note_path = 'Team/alice.md'")
print(json.dumps(out))
"""


@pytest.mark.skipif(not can_drop_privileges(), reason="needs setpriv to drop root privileges")
def test_a_watched_folder_reports_being_unreadable_and_a_save_inside_clears_it() -> None:
    """What the watcher reports decides the folder's problem at once, not the next full pass:
    a folder it cannot list is reported, and a save inside it once it can clears that."""
    out = run_unprivileged(WATCHED_FOLDER_SCENARIO)
    assert [tuple(p) for p in out["locked"]] == [("Team", "unreadable_folder")]
    assert out["unlocked"] == [] and "otters" in out["text"]


def test_symlink_loop_and_case_clash(vault: Path, memory: Memory) -> None:
    _vault_with_notes(vault)
    os.symlink(vault / "Projects", vault / "Projects" / "loop")
    write(vault, "Notes/Idea.md", "# Idea one\n")
    write(vault, "Notes/idea.md", "# idea two\n")
    write(vault, "Notes/Cr\u00e8me.md", "# composed\n")  # è as one code point, as Linux keeps it
    write(vault, "Notes/Cre\u0300me.md", "# decomposed\n")  # e and a combining accent, as macOS writes it
    memory.sync()
    status = memory.status()
    kinds = {(p["path"], p["kind"]) for p in status["problems"]}
    assert ("Projects/loop", "symlink_loop") in kinds
    assert ("Notes/Idea.md", "case_clash") in kinds and ("Notes/idea.md", "case_clash") in kinds
    assert ("Notes/Cr\u00e8me.md", "case_clash") in kinds and ("Notes/Cre\u0300me.md", "case_clash") in kinds
    assert memory.index.scalar("SELECT count(*) FROM notes WHERE lower(path) = 'notes/idea.md'") == 2


def test_a_symlink_to_a_folder_holding_the_vault_is_not_followed(tmp_path: Path) -> None:
    """Obsidian follows symlinked folders, and so does vaultmind, but a link to `..` would
    walk everything beside the vault: it is reported and skipped, in a full sync and in the
    scan of a folder the watcher reports."""
    vault = tmp_path / "home" / "vault"
    _vault_with_notes(vault)
    write(tmp_path / "home", "elsewhere/private.md", "# not part of the vault\n")
    write(tmp_path, "shared/Shared note.md", "# Shared\n\nkept in another folder\n")
    os.symlink(tmp_path / "home", vault / "up")
    os.symlink(vault, vault / "Projects" / "self")
    os.symlink(tmp_path / "shared", vault / "Shared")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        paths = {row[0] for row in memory.index.query("SELECT path FROM notes")}
        assert paths == {"Projects/Atlas.md", "Budget 2024.md", "People/Alice Chen.md", "Shared/Shared note.md"}
        kinds = {(p["path"], p["kind"]) for p in memory.status()["problems"]}
        assert {("up", "symlink_loop"), ("Projects/self", "symlink_loop")} <= kinds
        memory.sync_paths(["Projects"])  # a folder event: the subtree scan applies the same rule
        after = {row[0] for row in memory.index.query("SELECT path FROM notes")}
        assert after == paths


def test_user_notes_are_never_modified(vault: Path, memory: Memory) -> None:
    _vault_with_notes(vault)
    write(vault, "broken-fm.md", "---\ntitle: [unclosed\n---\nbody\n")
    before = snapshot_files(vault)
    memory.reindex()
    memory.sync()
    memory.search("launch budget")
    memory.status()
    assert snapshot_files(vault) == before


def test_corrupt_index_is_quarantined_and_rebuilt(vault: Path) -> None:
    _vault_with_notes(vault)
    config = load_config(vault, embed_provider="none")
    config.state_dir.mkdir(parents=True, exist_ok=True)
    config.index_path.write_bytes(b"this is not a duckdb file" * 100)
    with Memory.open(config) as memory:
        assert memory.index.quarantined and "quarantine" in memory.index.quarantined
        memory.sync()
        status = memory.status()
        assert status["index"]["health"] == "rebuilt"
        assert status["notes"]["total"] == 3
        assert memory.status()["index"]["health"] == "ok"  # said once, also by a long-running daemon
    quarantined = list((config.state_dir / "quarantine").iterdir())
    assert quarantined, "the broken file is kept for inspection"
    with Memory.open(config) as memory:  # reported once: the next open is clean
        assert memory.index.quarantined is None
        assert memory.status()["index"]["health"] == "ok"
    config.index_path.write_bytes(b"broken again" * 100)
    with Memory.open(config) as memory:  # asked before anything was indexed again: say what to do
        index = memory.status()["index"]
        assert index["health"] == "quarantined" and "run `vaultmind reindex" in index["notice"]
        index = memory.status()["index"]
        assert index["health"] == "empty" and "nothing is indexed yet" in index["notice"]


def test_a_quarantine_made_by_another_command_is_reported_by_the_next_status(vault: Path) -> None:
    """A `sync` (or a query) that finds the index broken moves it aside and rebuilds it; the
    next status, in another process, still reports it, once. Only the last three broken copies
    are kept."""
    _vault_with_notes(vault)
    config = load_config(vault, embed_provider="none")
    config.state_dir.mkdir(parents=True, exist_ok=True)
    for attempt in range(5):
        config.index_path.write_bytes(b"not a duckdb file, take %d" % attempt * 100)
        with Memory.open(config) as memory:
            memory.sync()
    with Memory.open(config) as memory:
        index = memory.status()["index"]
        assert index["health"] == "rebuilt" and "could not be opened" in index["notice"]
        assert "index-5.duckdb" in index["notice"] and index["notice"].endswith("the index was rebuilt from the notes")
        assert memory.status()["index"]["health"] == "ok", "reported once"
    kept = sorted(p.name for p in (config.state_dir / "quarantine").glob("*.duckdb"))
    assert kept == ["index-3.duckdb", "index-4.duckdb", "index-5.duckdb"], "the newest three, numbered on"
    assert (config.state_dir / "quarantine" / "index-5.duckdb").read_bytes().startswith(b"not a duckdb file, take 4")


def test_sync_paths_handles_folder_moves(vault: Path, memory: Memory) -> None:
    _vault_with_notes(vault)
    memory.sync()
    os.rename(vault / "People", vault / "Team")
    memory.sync_paths(["People", "Team"])
    paths = sorted(row[0] for row in memory.index.query("SELECT path FROM notes"))
    assert paths == ["Budget 2024.md", "Projects/Atlas.md", "Team/Alice Chen.md"]


def test_a_note_replaced_by_a_folder_of_its_name_goes_when_that_path_is_synced(
    vault: Path, memory: Memory, tmp_path: Path
) -> None:
    write(vault, "a.md", "# A\n\nThe alpha text.\n")
    write(vault, "keep.md", "# Keep\n\nKept.\n")
    memory.sync()
    (vault / "a.md").unlink()
    write(vault, "a.md/x.md", "# X\n\nThe inner text.\n")
    stats = memory.sync_paths(["a.md"])
    assert (stats.added, stats.deleted) == (1, 1)
    assert dump_index(memory) == cold_rows(memory.config, tmp_path)


def test_a_path_whose_name_is_not_utf8_is_reported_not_a_crash(vault: Path, memory: Memory) -> None:
    """`sync_paths` (a watcher's batch, `/v1/sync`) stopped on DuckDB refusing the name."""
    write(vault, "ok.md", "# OK\n\nFine.\n")
    bad_file, bad_folder = os.fsdecode(b"bad\xff.md"), os.fsdecode(b"dir\xfe")
    (vault / bad_file).write_text("latin name\n")
    (vault / bad_folder).mkdir()
    (vault / bad_folder / "in.md").write_text("inside\n")
    memory.sync()
    for given in (bad_file, bad_folder, f"{bad_folder}/in.md", "never\ud800.md"):
        stats = memory.sync_paths([given, "ok.md"])
        assert stats.scanned == 1
    assert sorted(memory.index.query("SELECT path, kind FROM problems")) == [
        ("bad\ufffd.md", "bad_name"),
        ("dir\ufffd", "bad_name"),
        ("dir\ufffd/in.md", "bad_name"),
        ("never\ufffd\ufffd\ufffd.md", "bad_name"),
    ]
    assert [row[0] for row in memory.index.query("SELECT path FROM notes")] == ["ok.md"]


def test_file_changing_while_read_never_yields_a_torn_read(vault: Path) -> None:
    """Another process rewrites a note non-stop: every read is a complete version, or is
    reported as changing (and the caller keeps the old rows) — never a half-written file."""
    import subprocess
    import sys

    from vaultmind.vault.read import read_note

    target = vault / "busy.md"
    target.write_text("# Busy\n\nstart\n", encoding="utf-8")
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, itertools\n"
            "p = sys.argv[1]\n"
            "for n in itertools.count():\n"
            "    with open(p, 'w') as fh:\n"
            "        fh.write('# Busy\\n\\n' + 'x' * (n % 5000) + '\\nEND\\n')\n",
            str(target),
        ]
    )
    torn = reported = complete = 0
    try:
        for _ in range(300):
            result = read_note(vault, "busy.md", 1 << 20)
            if result.problem is not None:
                assert result.problem.kind == "changed_while_reading" and result.keep_rows
                reported += 1
            elif result.data is not None:
                text = result.data.decode()
                if text.endswith("END\n") or text == "# Busy\n\nstart\n":
                    complete += 1
                elif text:
                    torn += 1
    finally:
        writer.kill()
        writer.wait()
    assert torn == 0, f"{torn} torn reads"
    assert complete > 0


def test_batched_apply_equals_one_batch(vault: Path, tmp_path: Path) -> None:
    """Large syncs apply in batches (bounded memory); the rows are the same as in one batch."""
    from vaultmind.index.store import Index

    _vault_with_notes(vault)
    write(
        vault,
        "entities/person/alice-chen.md",
        "---\nvaultmind: entity\nid: person:alice-chen\nkind: person\ndisplay_name: Alice Chen\naliases: [Alice]\n---\nLeads.\n",
    )
    for i in range(7):
        write(vault, f"More/n{i}.md", f"# N{i}\n\nAlice met Bob about the budget, item {i}.\n")
    config = load_config(vault, embed_provider="none")
    with Memory(config, Index.open(tmp_path / "one.duckdb"), None) as one:
        one.reindex()
        expected = dump_index(one)
        expected_indexes = _indexes(one.index)
    with Memory(config, Index.open(tmp_path / "many.duckdb"), None) as many:
        many.syncer.apply_batch = 2
        many.syncer.bulk_files = 1  # lookup indexes suspended during the load, built at its end
        stats = many.reindex()
        assert stats.added == 11
        assert dump_index(many) == expected
        assert _indexes(many.index) == expected_indexes
        assert many.index.get_meta("suspended_indexes") is None
        os.rename(vault / "More/n1.md", vault / "More/renamed.md")
        (vault / "More/n2.md").unlink()
        stats = many.sync()
        assert (stats.renamed, stats.deleted) == (1, 1)


# `graph._leaf_rows`, and `graph._leaf_rows_and_texts` (a whole re-derivation's slice)
ENTITY_LEAF_READS = re.compile(r"SELECT id, note_path, content_hash, author, ts(?:, text)? FROM leaves")


def _rows_with_entities(memory: Memory) -> dict[str, Any]:
    tables = ("occurrences", "edges", "entities")
    return dump_index(memory) | {name: memory.index.query(f"SELECT * FROM {name} ORDER BY ALL") for name in tables}


def _rebuild_in_batches(vault: Path, path: Path) -> tuple[dict[str, Any], int]:
    """A rebuild in batches of two notes (one bulk load), its rows, and how many times the
    entity deriver read leaf rows back from the index (DuckDB's query log)."""
    with Memory(load_config(vault, embed_provider="none"), Index.open(path), None) as memory:
        memory.syncer.apply_batch = 2
        memory.syncer.bulk_files = 1
        memory.index.con.execute("CALL enable_logging('QueryLog')")
        memory.reindex()
        logged = memory.index.con.execute("SELECT message FROM duckdb_logs WHERE type = 'QueryLog'").fetchall()
        return _rows_with_entities(memory), sum(bool(ENTITY_LEAF_READS.search(message)) for (message,) in logged)


def test_a_rebuilds_later_batches_derive_entities_from_their_own_rows(vault: Path, tmp_path: Path) -> None:
    """A later batch of a rebuild whose leaf ids no earlier batch wrote hands its inserted leaf
    rows to the entity deriver, which then reads none back (that read scanned every row the
    load had written); when a batch's leaves share ids with an earlier batch's (two copies of
    one conversation), they are read back, so the other copy's occurrences stay. Either way
    the rows are those of a rebuild in one batch."""
    _vault_with_notes(vault)
    write(
        vault,
        "entities/person/alice-chen.md",
        "---\nvaultmind: entity\nid: person:alice-chen\nkind: person\ndisplay_name: Alice Chen\naliases: [Alice]\n---\nLeads.\n",
    )
    for i in range(7):
        write(vault, f"More/n{i}.md", f"# N{i}\n\nAlice met Bob about the budget, item {i}.\n")
    with Memory(load_config(vault, embed_provider="none"), Index.open(tmp_path / "one.duckdb"), None) as one:
        one.reindex()
        expected = _rows_with_entities(one)
    rows, reads = _rebuild_in_batches(vault, tmp_path / "many.duckdb")
    assert rows == expected and expected["occurrences"]
    assert reads == 1  # the first batch's rebuild of every occurrence reads them; no later batch does

    meta = SourceMeta("chat", "slack:team/launch", "slack/team/launch", "Launch")
    chat = render_source_note(meta, [Message("m1", "bob", "2024-03-01T10:00:00Z", "Alice ships the Atlas launch.")])
    write(vault, "sources/chat/a-copy.md", chat)  # in a batch of its own
    write(vault, "sources/chat/zz-copy.md", chat)  # in the next: its leaf ids are the first copy's
    with Memory(load_config(vault, embed_provider="none"), Index.open(tmp_path / "two.duckdb"), None) as one:
        one.reindex()
        expected = _rows_with_entities(one)
    rows, reads = _rebuild_in_batches(vault, tmp_path / "many2.duckdb")
    shared = [row for row in expected["occurrences"] if "copy.md" in str(row)]
    assert rows == expected and len({str(row) for row in shared}) >= 2
    assert reads == 2  # the last batch's leaves are read back, with the first copy's row


def test_a_batched_sync_counts_the_vectors_of_every_batch(vault: Path) -> None:
    """`embedded` sums over the batches of a large sync (it used to report the last batch's),
    also in a whole-vault load, whose cached blocks are dropped between the steps of a batch
    and whose vectors are written after its rows."""
    for i in range(7):
        write(vault, f"More/n{i}.md", f"# N{i}\n\nItem {i} of the budget, a text of its own.\n")
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.syncer.apply_batch = 2
        memory.syncer.bulk_files = 1
        phases: list[str] = []
        memory.syncer.progress = lambda phase, done, total: phases.append(phase)
        stats = memory.reindex()
        stored = memory.index.scalar("SELECT count(*) FROM embeddings")
        assert stats.added == 7 and stored == memory.index.scalar("SELECT count(DISTINCT content_hash) FROM leaves")
        assert stats.embedded == stored
        # the load's vectors come in a pass of their own, after all of its rows
        assert "embed" in phases and "read" not in phases[phases.index("embed") :]


def test_a_whole_vault_sync_embeds_the_leaves_left_without_a_vector(vault: Path) -> None:
    """The backlog pass finds leaves whose vector is missing (a provider that failed, a model
    switched) and embeds their texts, once per content hash, with the vectors a first
    embedding gives."""
    for i in range(5):
        write(vault, f"More/n{i}.md", f"# N{i}\n\nItem {i} of the budget, a text of its own.\n")
    write(vault, "More/copy.md", "# N0\n\nItem 0 of the budget, a text of its own.\n")  # same leaves as n0
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.reindex()
        first = dict(memory.index.query("SELECT content_hash, vec::VARCHAR FROM embeddings"))
        dropped = sorted(first)[::2]
        with memory.index.transaction() as con:
            execute_with(con, "DELETE FROM embeddings WHERE content_hash IN (SELECT h FROM _rows)", rows=key_table(dropped, "h"))
        # `status` counts leaves, and copy.md's leaves share n0's vectors
        without = memory.index.scalar(
            "SELECT count(*) FROM leaves WHERE content_hash NOT IN (SELECT content_hash FROM embeddings)"
        )
        leaves = memory.index.scalar("SELECT count(*) FROM leaves")
        assert without > len(dropped)
        vectors = memory.status()["embeddings"]
        assert (vectors["embedded"], vectors["missing"]) == (leaves - without, without)
        stats = memory.sync()
        assert stats.embedded == len(dropped)
        assert dict(memory.index.query("SELECT content_hash, vec::VARCHAR FROM embeddings")) == first
        assert memory.sync().embedded == 0
        vectors = memory.status()["embeddings"]
        assert (vectors["embedded"], vectors["missing"]) == (leaves, 0)


def test_a_save_looks_up_only_its_new_texts(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A saved note writes all its leaves again; those with an id it had before (an id derives
    from the text) have their vector, so only new texts are looked up, and embedded when no
    note has them yet."""

    def section(word: str) -> str:  # ~300 tokens: no two fit in one leaf
        return f"## Part {word}\n\n" + " ".join(f"{word}{j}" for j in range(240))

    sections = [section(w) for w in ("otter", "lantern", "copper")]
    write(vault, "long.md", "# Long\n\n" + "\n\n".join(sections) + "\n")
    write(vault, "other.md", section("quokka") + "\n")
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        before = {str(i) for (i,) in memory.index.query("SELECT id FROM leaves WHERE note_path = 'long.md'")}
        had = {str(h) for (h,) in memory.index.query("SELECT content_hash FROM embeddings")}
        asked: list[set[str]] = []
        query = memory.index.query

        def spy(sql: str, params: Any = None) -> list[tuple[Any, ...]]:
            if "FROM embeddings" in sql and params and isinstance(params[-1], str):
                asked.append(set(params[-1].split("\x1f")))
            return query(sql, params)

        monkeypatch.setattr(memory.index, "query", spy)
        write(vault, "long.md", "# Long\n\n" + "\n\n".join([*sections, section("quokka"), section("closing")]) + "\n")
        stats = memory.sync_paths(["long.md"])
        after = dict(query("SELECT id, content_hash FROM leaves WHERE note_path = 'long.md'"))
        new = {str(h) for i, h in after.items() if i not in before}
        assert new and len(after) - len(new) == len(before)
        assert asked == [new]  # the unchanged sections: not asked about
        assert new & had  # some of the copied section's texts had their vectors (other.md) …
        assert stats.embedded == len(new - had) > 0  # … the others are embedded now


def _indexes(index: Index) -> list[tuple[str, str]]:
    return [(str(n), str(t)) for n, t in index.query("SELECT index_name, table_name FROM duckdb_indexes() ORDER BY 1")]


def test_indexes_suspended_by_a_crashed_load_come_back_on_open(tmp_path: Path) -> None:
    """A load that dies with its lookup indexes dropped: the next open creates them again."""
    path = tmp_path / "index.duckdb"
    index = Index.open(path)
    before = _indexes(index)
    assert ("leaves_id", "leaves") in before
    index.suspend_indexes()
    suspended = _indexes(index)
    assert ("leaves_id", "leaves") not in suspended and ("edges_a", "edges") in suspended
    index.con.close()  # the process dies here: no resume
    reopened = Index.open(path)
    try:
        assert _indexes(reopened) == before
        assert reopened.get_meta("suspended_indexes") is None
    finally:
        reopened.close()


def test_lookup_indexes_are_on_one_column_and_older_pair_indexes_go(tmp_path: Path) -> None:
    """DuckDB 1.5 looks rows up through an ART index of one column only; an index over a pair
    of columns is only kept up to date, at a cost on every insert and checkpoint. Migration
    0012 drops three an older index has, changing no row (no rebuild); the last one,
    `embeddings_key`, went with 0017."""
    from vaultmind.index.schema import migrations, rebuilds

    assert not rebuilds(dict(migrations())["0012_drop_composite_indexes"])
    path = tmp_path / "index.duckdb"
    index = Index.open(path)
    columns = {str(name): str(sql).split("(", 1)[1] for name, sql in index.query("SELECT index_name, sql FROM duckdb_indexes()")}
    assert [name for name, cols in columns.items() if "," in cols] == [], columns
    pairs = {
        "ner_cache_key": "ner_cache (content_hash, model)",
        "llm_cache_key": "llm_cache (content_hash, model, prompt_hash)",
        "summaries_tree": "summaries (tree, level)",
    }
    for name, target in pairs.items():  # as an index from before 0012 has them
        index.con.execute(f"CREATE INDEX {name} ON {target}")
    index.con.execute("DELETE FROM migrations WHERE name = '0012_drop_composite_indexes'")
    index.close()
    reopened = Index.open(path)
    try:
        assert not {name for name, _ in _indexes(reopened)} & set(pairs)
        assert reopened.get_meta("needs_rebuild") is None
    finally:
        reopened.close()


def _source_note() -> str:
    from vaultmind.markdown.render import Message, SourceMeta, render_source_note

    meta = SourceMeta("chat", "slack:acme/general", "slack/acme/general", "general")
    return render_source_note(
        meta,
        [
            Message("m1", "Alice <alice@example.com>", "2024-03-04T09:00:00Z", "the launch review moved"),
            Message("m2", "@bob", "2024-03-04T09:05:00Z", "launch budget approved"),
        ],
    )


def test_leaf_in_two_notes_keeps_its_postings_when_one_goes(vault: Path, memory: Memory, tmp_path: Path) -> None:
    """A copied source note shares its leaf ids; deleting the copy leaves the original searchable,
    and the postings equal a cold rebuild after every step."""
    from vaultmind.index.store import Index

    text = _source_note()
    write(vault, "sources/chat/a.md", text)
    write(vault, "sources/chat/copy-of-a.md", text)
    write(vault, "notes/n.md", "# N\n\nThe launch is near.\n")
    config = load_config(vault, embed_provider="none")

    def cold() -> dict[str, list[tuple[object, ...]]]:
        with Memory(config, Index.open(None), None) as fresh:
            fresh.reindex()
            return dump_index(fresh)

    def postings_of(term: str) -> int:
        """Its postings rows, once each belongs to the note number of a note holding its leaf."""
        strays = memory.index.scalar(
            "SELECT count(*) FROM postings p WHERE NOT EXISTS (SELECT 1 FROM notes n JOIN leaves l "
            "ON l.note_path = n.path WHERE n.note_no = p.note_no AND l.id = p.leaf_id)"
        )
        assert strays == 0
        return int(memory.index.scalar("SELECT count(*) FROM postings WHERE term = ?", [term]))

    memory.sync()
    assert dump_index(memory) == cold()
    assert postings_of("launch") == 5  # 2 + 2 copies + 1
    (vault / "sources/chat/copy-of-a.md").unlink()
    memory.sync()
    assert dump_index(memory) == cold() and postings_of("launch") == 3
    assert [h["note_path"] for h in memory.search("launch review", limit=1)["hits"]] == ["sources/chat/a.md"]
    (vault / "notes/n.md").unlink()
    memory.sync()
    assert dump_index(memory) == cold() and postings_of("launch") == 2


def test_a_save_before_the_upgrade_rebuild_replaces_unnumbered_postings(vault: Path, memory: Memory) -> None:
    """Rows written before notes were numbered (an upgraded index whose rebuild has not run
    yet) are still replaced by a save: their postings go by leaf id."""
    from vaultmind.index.store import Index

    write(vault, "notes/a.md", "# A\n\nThe launch moved to May.\n")
    write(vault, "notes/b.md", "# B\n\nThe launch budget.\n")
    memory.sync()
    memory.index.con.execute("UPDATE notes SET note_no = NULL")
    memory.index.con.execute("UPDATE postings SET note_no = NULL")
    write(vault, "notes/a.md", "# A\n\nThe review moved to June.\n")
    memory.sync_paths(["notes/a.md"])
    with Memory(load_config(vault, embed_provider="none"), Index.open(None), None) as fresh:
        fresh.reindex()
        assert dump_index(memory) == dump_index(fresh)
    assert memory.index.scalar("SELECT count(*) FROM postings WHERE term = 'launch'") == 1


@pytest.mark.slow
def test_parsing_in_worker_processes_gives_the_same_rows(vault: Path, tmp_path: Path) -> None:
    """A large sync parses in worker processes, a batch ahead of the apply; the rows are the
    same as parsing in this process, batch after batch."""
    from vaultmind.index.store import Index

    _vault_with_notes(vault)
    write(vault, "sources/chat/a.md", _source_note())
    write(vault, "bad.md", "---\ntitle: [unclosed\n---\n# Bad front matter\n\nStill indexed.\n")
    for i in range(9):
        write(vault, f"More/n{i}.md", f"# N{i}\n\nAlice met Bob about the budget, item {i}. #tag{i % 3}\n")
    config = load_config(vault, embed_provider="none")
    with Memory(config, Index.open(tmp_path / "one.duckdb"), None) as one:
        one.syncer.workers = 0
        expected_stats = one.reindex()
        expected = dump_index(one)
        expected_problems = one.syncer.problems()
    with Memory(config, Index.open(tmp_path / "pool.duckdb"), None) as pooled:
        pooled.syncer.workers = 2
        pooled.syncer.pool_min_files = 1
        pooled.syncer.apply_batch = 3
        threads = pooled.index.scalar("SELECT current_setting('threads')")
        stats = pooled.reindex()
        assert pooled.index.scalar("SELECT current_setting('threads')") == threads  # one while the workers ran
        assert (stats.added, stats.leaves_written) == (expected_stats.added, expected_stats.leaves_written)
        assert dump_index(pooled) == expected
        assert pooled.syncer.problems() == expected_problems
        write(vault, "More/n1.md", "# N1\n\nChanged.\n")
        (vault / "More/n2.md").unlink()
        stats = pooled.sync()
        assert (stats.modified, stats.deleted) == (1, 1)


_DROPPED_BY = {
    "0016_drop_admission_occurrence_leaf_indexes": {
        ("admission_leaf", "admission"), ("admission_hash", "admission"), ("occurrences_leaf", "occurrences")
    },
    "0017_drop_embeddings_and_leaf_note_indexes": {("embeddings_key", "embeddings"), ("leaves_note", "leaves")},
}


def _up_to(shipped: tuple[tuple[str, str], ...], name: str, *, inclusive: bool) -> tuple[tuple[str, str], ...]:
    """The shipped migrations before `name` (or through it), as an index of that time had them,
    the last one also adding the columns and tables this code's syncs write — the notes' change
    time (0018) and inode (0026), an email leaf's recipients (0025), an occurrence's reading
    (0030), who talks with whom (0041) — as that index had the code of its time."""
    kept = [m for m in shipped if m[0] < name or (inclusive and m[0] == name)]
    last, sql = kept[-1]
    columns = [f"ALTER TABLE notes ADD COLUMN IF NOT EXISTS {c} BIGINT;" for c in ("ctime_ns", "ino")]
    if last >= "0015":  # 0015 makes the leaves table anew, with the columns of its time
        columns += [f"ALTER TABLE leaves ADD COLUMN IF NOT EXISTS {c} VARCHAR[];" for c in ("mail_to", "mail_cc")]
    if last >= "0003":
        columns.append("ALTER TABLE occurrences ADD COLUMN IF NOT EXISTS read_as VARCHAR;")
        columns.append(dict(shipped)["0041_talks"])  # (its statements say IF NOT EXISTS)
    kept[-1] = (last, sql + "\n" + "\n".join(columns) + "\n")
    return tuple(kept)


def _dump_without_recipients(memory: Memory) -> dict[str, list[tuple[object, ...]]]:
    """`dump_index` of an index from before 0025 (no recipients' columns)."""
    queries = {**DERIVED_QUERIES, "leaves": DERIVED_QUERIES["leaves"].replace(", mail_to, mail_cc", "")}
    return {name: memory.index.query(sql) for name, sql in queries.items()}


def _without_recipients(monkeypatch: pytest.MonkeyPatch) -> None:
    """Syncs write leaves as the code before 0025 did: without recipients' columns."""
    import vaultmind.sync_write as sync_write

    real = sync_write.insert_arrow

    def insert(con: Any, table: str, data: pa.Table) -> None:
        if table == "leaves":
            data = data.drop_columns([c for c in ("mail_to", "mail_cc") if c in data.schema.names])
        real(con, table, data)

    monkeypatch.setattr(sync_write, "insert_arrow", insert)


@pytest.mark.parametrize("name", sorted(_DROPPED_BY))
def test_a_migration_that_drops_lookup_indexes_keeps_every_row(vault: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Migrations 0016 and 0017 drop lookup indexes that each save and checkpoint paid for (their
    nodes stay in memory until a checkpoint, which writes them out whole): nothing is derived
    again, every row and vector stays, and a save after it leaves the index equal to a cold
    rebuild."""
    import vaultmind.index.migrate as migrate
    from vaultmind.index.schema import migrations, rebuilds

    shipped = migrations()
    assert not rebuilds(dict(shipped)[name])
    write(vault, "notes/a.md", "# Launch\n\nDana moved the launch review to Friday.\n\nBudget approved by Dana.\n")
    write(vault, "notes/b.md", "Plain note about ferries and harbours in Lisbon.\n")
    monkeypatch.setattr(migrate, "migrations", lambda: _up_to(shipped, name, inclusive=False))
    config = load_config(vault, embed_provider="static")
    dropped = _DROPPED_BY[name]
    rows = "SELECT * FROM admission ORDER BY ALL"
    vectors = "SELECT * FROM embeddings ORDER BY ALL"
    with Memory.open(config) as mem:
        mem.reindex()
        before = dump_index(mem), mem.index.query(vectors)
        indexes = _indexes(mem.index)
    assert dropped <= set(indexes)
    monkeypatch.setattr(migrate, "migrations", lambda: _up_to(shipped, name, inclusive=True))
    with Memory.open(config) as mem:
        assert mem.index.get_meta("needs_rebuild") is None
        assert (dump_index(mem), mem.index.query(vectors)) == before
        assert _indexes(mem.index) == [i for i in indexes if i not in dropped]
        write(vault, "notes/a.md", "# Launch\n\nDana moved the launch review to Monday.\n\nBudget approved by Dana.\n")
        assert mem.sync().modified == 1
        after_save = dump_index(mem), mem.index.query(rows), mem.index.query(vectors)
    with Memory.open(config) as mem:
        mem.reindex()
        assert (dump_index(mem), mem.index.query(rows), mem.index.query(vectors)) == after_save


def test_named_compression_migration_keeps_every_row_and_vector(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Migration 0015 creates `leaves`, `admission` and `embeddings` again with their columns'
    compression named, copying their rows: an index from before it keeps every row, vector and
    lookup index, needs no rebuild, and from then on a column of repeated texts is still stored
    with FSST (unnamed, DuckDB would have tried, and chosen, a dictionary)."""
    import vaultmind.index.migrate as migrate
    from vaultmind.index.schema import migrations, rebuilds

    shipped = migrations()
    assert not rebuilds(dict(shipped)["0015_named_compression"])
    write(vault, "notes/a.md", "# Launch\n\nThe launch review moved to Friday.\n\n## Budget\n\nBudget approved by Dana.\n")
    write(vault, "notes/b.md", "Plain note about ferries and harbours.\n")
    older = _up_to(shipped, "0015", inclusive=False)
    monkeypatch.setattr(migrate, "migrations", lambda: older)
    config = load_config(vault, embed_provider="static")
    with monkeypatch.context() as patch, Memory.open(config) as mem:
        _without_recipients(patch)
        mem.reindex()
        before = _dump_without_recipients(mem)
        cached = mem.index.query("SELECT * FROM embeddings ORDER BY ALL")
        admitted = mem.index.query("SELECT * FROM admission ORDER BY ALL")
        indexes = _indexes(mem.index)
    assert cached and admitted
    monkeypatch.setattr(migrate, "migrations", lambda: _up_to(shipped, "0023", inclusive=False))  # 0023 rebuilds b.md
    with Memory.open(config) as mem:
        assert mem.index.get_meta("needs_rebuild") is None
        assert _dump_without_recipients(mem) == before
        assert mem.index.query("SELECT count(*) FROM leaves WHERE mail_to IS NOT NULL OR mail_cc IS NOT NULL") == [(0,)]
        assert mem.index.query("SELECT * FROM embeddings ORDER BY ALL") == cached
        assert mem.index.query("SELECT * FROM admission ORDER BY ALL") == admitted
        later = _DROPPED_BY["0016_drop_admission_occurrence_leaf_indexes"] | _DROPPED_BY["0017_drop_embeddings_and_leaf_note_indexes"]
        assert _indexes(mem.index) == [i for i in indexes if i not in later]  # dropped by 0016 and 0017
        assert not {t for (t,) in mem.index.query("SELECT table_name FROM duckdb_tables()")} - set(mem.index.tables)
        assert mem.sync().added == 0  # nothing to derive again
        con = mem.index.con
        con.execute("CREATE TABLE unnamed AS SELECT * FROM leaves LIMIT 0")
        con.execute("CREATE TEMP TABLE one AS SELECT * REPLACE ('the same words again' AS text) FROM leaves LIMIT 1")
        for table in ("leaves", "unnamed"):  # the same text in 4,000 rows
            con.execute(f"INSERT INTO {table} SELECT one.* FROM one, range(4000)")
        con.execute("CHECKPOINT")
        used = dict(
            con.execute(
                """SELECT 'leaves', compression FROM pragma_storage_info('leaves') WHERE column_name = 'text' AND segment_type = 'VARCHAR'
                   UNION ALL
                   SELECT 'unnamed', compression FROM pragma_storage_info('unnamed') WHERE column_name = 'text' AND segment_type = 'VARCHAR'"""
            ).fetchall()
        )
        assert used == {"leaves": "FSST", "unnamed": "Dictionary"}


def test_postings_compression_migration_keeps_every_posting(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Migration 0029 creates `postings` again with its texts' compression named (FSST for
    terms, a dictionary for leaf ids), copying its rows: an index from before it keeps every
    row, needs no rebuild, finds what it found, and from then on terms that repeat are still
    stored with FSST (unnamed, DuckDB would have tried, and chosen, a dictionary)."""
    from vaultmind.index.schema import migrations, rebuilds

    assert not rebuilds(dict(migrations())["0029_postings_named_compression"])
    write(vault, "notes/a.md", "# Launch\n\nThe launch review moved to Friday.\n\n## Budget\n\nBudget approved by Dana.\n")
    write(vault, "notes/b.md", "Plain note about ferries and harbours.\n")
    config = _indexed_before(vault, monkeypatch, "0029")
    migrations_through(monkeypatch, "0032_section_leaf_ids_by_text")  # 0033 rebuilds any index holding a leaf
    with Memory.open(config) as mem:
        before = dump_index(mem), mem.index.query("SELECT * FROM postings ORDER BY ALL")
        found = [hit["note_path"] for hit in mem.search("ferries harbour", limit=5)["hits"]]
    assert before[1] and found
    with Memory.open(config) as mem:
        assert mem.index.get_meta("needs_rebuild") is None
        assert (dump_index(mem), mem.index.query("SELECT * FROM postings ORDER BY ALL")) == before
        assert [hit["note_path"] for hit in mem.search("ferries harbour", limit=5)["hits"]] == found
        assert mem.sync().added == 0  # nothing to derive again
        con = mem.index.con
        # three terms over 30,000 postings of 3,000 leaves: left to itself, DuckDB picks a
        # column's compression by its own analysis, which varies from run to run on the same
        # rows (FSST or Dictionary for these leaf ids, seen both); the named columns do not
        con.execute(
            "INSERT INTO postings SELECT ['launch', 'review', 'budget'][i % 3 + 1], 'leaf-' || (i // 10), 1, 0 "
            "FROM range(30000) t(i)"
        )
        con.execute("CHECKPOINT")
        used: dict[str, set[str]] = {}
        for column, compression in con.execute(
            "SELECT column_name, compression FROM pragma_storage_info('postings') WHERE segment_type = 'VARCHAR'"
        ).fetchall():
            used.setdefault(column, set()).add(compression)
        assert used == {"term": {"FSST"}, "leaf_id": {"Dictionary"}}


TRIP = "# Trip\n\n## Day 1\n\n### Notes\n\n{}\n\n## Day 2\n\n### Notes\n\n{}\n\n## Notes\n\n{}\n"


def test_a_heading_that_repeats_an_earlier_one_is_anchored_by_the_chain_obsidian_resolves(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """"Notes" under "Day 2" is `#Day 2#Notes` (Obsidian opens the first "Notes" after "Day 2"),
    the first "Notes" stays `#Notes`; a third, top-level one that no chain reaches before the
    first keeps its text. An index from before is rebuilt once for it (migration 0021)."""
    long = " ".join(["The ridge trail above the fjord was steep and wet."] * 60)
    write(vault, "Trip.md", TRIP.format(long, long.replace("ridge", "kayak"), long.replace("ridge", "ferry")))
    config = _indexed_before(vault, monkeypatch, "0021")
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        anchors = dict(memory.index.query("SELECT DISTINCT list_aggregate(heading_path, 'string_agg', '/'), anchor FROM leaves"))
        assert anchors == {
            "Trip/Day 1/Notes": "#Notes",
            "Trip/Day 2/Notes": "#Day 2#Notes",
            "Trip/Notes": "#Notes",  # "#Trip#Notes" would open Day 1's
        }, anchors
        hit = memory.search("kayak", limit=1)["hits"][0]
        assert hit["wikilink"] == "[[Trip#Day 2#Notes]]" and hit["link"].endswith("file=Trip%23Day%202%23Notes")


def test_a_note_that_is_all_properties_is_found_by_them(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A book note with an empty body (every fact in its properties) has one leaf of its title
    and its values, citing the note; an empty note without properties and a readme have none.
    An index from before is rebuilt once for it (migration 0022)."""
    write(vault, "References/Out of Control.md", '---\nauthor:\n  - "[[Kevin Kelly]]"\nyear: 1994\nisbn: 9780201483406\n---\n')
    write(vault, "Untitled.md", "")
    write(vault, "About.md", "---\nvaultmind: readme\ntags: [x]\n---\n")
    before = snapshot_files(vault)
    config = _indexed_before(  # as the code before left it: no leaf
        vault, monkeypatch, "0022", then=["DELETE FROM leaves", "UPDATE notes SET leaf_count = 0"]
    )
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        leaves = memory.index.query("SELECT note_path, text, anchor FROM leaves ORDER BY note_path")
        assert leaves == [
            ("References/Out of Control.md", "Out of Control\nauthor: [[Kevin Kelly]]\nyear: 1994\nisbn: 9780201483406", "")
        ]
        (control,) = terms("control")
        assert memory.index.query("SELECT tf FROM postings WHERE term = ?", [control]) == [(1,)], "the title once"
        for question in ("Out of Control", "9780201483406", "Kevin Kelly 1994"):
            hit = memory.search(question, limit=1)["hits"][0]
            assert hit["note_path"] == "References/Out of Control.md" and hit["wikilink"] == "[[References/Out of Control]]"
    assert snapshot_files(vault) == before, "the note itself is untouched"


def test_a_note_of_yours_is_found_by_its_title(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file name (or front matter `title`) is searched with the first leaf when the text
    does not open with it as its heading; a note whose H1 is its title is counted once. An
    index from before is rebuilt once for it (migration 0023)."""
    write(vault, "Projects/Phoenix.md", "Kickoff on Monday with the design team.\n")
    write(vault, "Plain.md", "# Plain\n\nA note about the projector.\n")
    config = _indexed_before(vault, monkeypatch, "0023")
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        pending = memory.status()["index"]
        assert pending["health"] == "rebuild pending" and "vaultmind sync" in pending["notice"]
        memory.sync()
        assert memory.status()["index"]["health"] == "ok"
        assert memory.search("phoenix", limit=1)["hits"][0]["note_path"] == "Projects/Phoenix.md"
        (plain,) = terms("plain")
        counts = dict(memory.index.query("SELECT n.path, p.tf FROM postings p JOIN leaves l ON l.id = p.leaf_id JOIN notes n ON n.path = l.note_path WHERE p.term = ?", [plain]))
        assert counts == {"Plain.md": 1}, counts


def test_a_conflict_copy_of_a_note_is_named_in_status(vault: Path) -> None:
    """A sync tool's conflict copy holds the same messages as its note: both are indexed, and
    answers show them twice; `status` says which note repeats which."""
    _email_thread(vault)
    original = "sources/email/work/quarterly-security-review/2025-04-03.md"
    copy = original.replace(".md", " (conflict 2026-12-03).md")
    (vault / copy).write_bytes((vault / original).read_bytes())
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        problems = [p for p in memory.status()["problems"] if p["kind"] == "copy"]
    assert [p["path"] for p in problems] == [copy], "the copy is named, not the note it repeats"
    assert original in problems[0]["message"] and "the same messages" in problems[0]["message"]


def test_a_conflict_copy_of_an_entity_note_is_named_and_the_original_stays_the_entitys(vault: Path) -> None:
    write(vault, "entities/person/dana-park.md", '---\nvaultmind: entity\nid: "person:dana-park"\nkind: person\n'
          "display_name: Dana Park\naliases:\n  - Dana\n---\n# Dana Park\n\nRuns the pottery studio.\n")
    original = vault / "entities/person/dana-park.md"
    copy = "entities/person/dana-park (conflict copy 2026-01-01).md"
    (vault / copy).write_bytes(original.read_bytes())
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        problems = [p for p in memory.status()["problems"] if p["kind"] == "copy"]
        assert [p["path"] for p in problems] == [copy]
        assert "the same entity id" in problems[0]["message"]
        path = memory.index.scalar("SELECT note_path FROM entities WHERE id = 'person:dana-park'")
    assert path == "entities/person/dana-park.md"


LEGACY_NOTES = {  # a note of each legacy East Asian code page: (codec, what status names, its text)
    "gbk": ("gbk", "GB18030", "# 周会\n\n王小明负责数据分析，下周五之前把报告发给大家。\n"),
    "big5": ("big5", "Big5", "# 週會\n\n陳小華負責資料分析，下週五之前把報告寄給大家。\n"),
    "sjis": ("shift_jis", "Shift JIS", "# 週次会議\n\n田中さんはデータ分析の担当です。金曜日までに報告を送ってください。\n"),
    "eucjp": ("euc_jp", "EUC-JP", "# 週次会議\n\n田中さんはデータ分析の担当です。金曜日までに報告を送ってください。\n"),
    "euckr": ("euc_kr", "EUC-KR", "# 주간 회의\n\n김민수 씨는 데이터 분석 담당입니다. 금요일까지 보고서를 보내 주세요.\n"),
}


def test_a_note_in_a_legacy_east_asian_code_page_is_indexed_as_its_text(vault: Path) -> None:
    """A note of Chinese, Japanese or Korean saved in its legacy code page (GBK, Big5, Shift JIS,
    EUC-JP, EUC-KR: Windows' "ANSI" there) was indexed as replacement characters, its words in
    no search. It is read in its code page, and `status` names it; the file is not touched.
    Latin text in Windows-1252 is read in it too, and said."""
    for name, (codec, _, text) in LEGACY_NOTES.items():
        (vault / f"{name}.md").write_bytes(text.encode(codec))
    (vault / "latin.md").write_bytes("# Café\n\nZoë's crème brûlée, naïve façade.\n".encode("cp1252"))
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        problems = {p["path"]: (p["kind"], p["message"]) for p in memory.status()["problems"]}
        texts = dict(memory.index.query("SELECT note_path, string_agg(text, ' ') FROM leaves GROUP BY 1"))
        titles = dict(memory.index.query("SELECT path, title FROM notes"))
    for name, (codec, said, text) in LEGACY_NOTES.items():
        body = text.split("\n", 2)[2].strip()
        assert body in texts[f"{name}.md"] and titles[f"{name}.md"] == text[2:].split("\n")[0], name
        assert problems[f"{name}.md"] == (
            "not_utf8",
            f"{said} text, not UTF-8; indexed, but Obsidian reads notes as UTF-8 — re-save it as UTF-8 to see it there",
        )
        assert (vault / f"{name}.md").read_bytes() == text.encode(codec)
    assert problems["latin.md"][0] == "not_utf8" and problems["latin.md"][1].startswith("Windows-1252 text, not UTF-8")
    assert "Zoë's crème brûlée, naïve façade." in texts["latin.md"]


def test_a_binary_file_without_a_nul_byte_is_skipped_and_latin_text_is_not(vault: Path) -> None:
    """Compressed data (a `.gz` renamed `.md`) or random bytes without a NUL in their first 8 KB
    were indexed as garbage (`not_utf8`). They are binary: skipped and said. A Windows-1252 note
    (accents, one stray control byte) and a Chinese one in GBK are still text."""
    import random
    import zlib

    rng = random.Random(36)
    noise = bytes(rng.randrange(1, 256) for _ in range(3000))
    packed = zlib.compress(b"Kingfishers nest by the harbour. " * 50 + noise, 9)[2:]  # raw deflate
    packed = packed.replace(b"\x00", b"\x01")
    (vault / "archive.md").write_bytes(packed)
    (vault / "noise.md").write_bytes(noise)
    (vault / "latin.md").write_bytes("# Café\n\nZoë met the kingfisher man in Köln.\x1a\n".encode("cp1252"))
    (vault / "gbk.md").write_bytes(LEGACY_NOTES["gbk"][2].encode("gbk"))
    assert b"\x00" not in packed + noise
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        problems = {p["path"]: p["kind"] for p in memory.status()["problems"]}
        paths = {row[0] for row in memory.index.query("SELECT path FROM notes")}
    assert problems == {"archive.md": "binary", "noise.md": "binary", "latin.md": "not_utf8", "gbk.md": "not_utf8"}
    assert paths == {"latin.md", "gbk.md"}


CONTROL_NOTES = {  # text not in UTF-8 holding more than 1 % control bytes: (code page, text)
    "alarm.md": ("cp1252", "# Alarme\n\n" + "Alerte déclenchée\x07\n" * 10),
    "progress.md": ("cp1252", "Progrès: 10%\x08\x08\x0820%\x08\x08\x0830% terminé\n" * 2),
    "export.md": ("cp1252", "Note exportée\x7f depuis l'ancien outil, café\n" * 5),
    "dos.md": ("cp1252", "Ligne un été\x1a ligne deux hôtel\x1a fin\n" * 3),
    "terminal.md": ("cp1252", "user@host:~$ ls\r\n\x1b[01;34mdossier\x1b[0m  café.txt\r\n\x07" * 4),
    "cyrillic.md": ("cp1251", "Сигнал тревоги сработал\x07\n" * 8),
    "greek.md": ("cp1253", "Ειδοποίηση ενεργοποιήθηκε\x07\n" * 8),
}


def test_text_not_in_utf8_with_a_few_control_bytes_is_indexed_not_skipped_as_binary(vault: Path) -> None:
    """A note in an 8-bit code page holding more than 1 % control bytes (a log pasted with its
    bells or backspaces, an old tool's DEL or ^Z, Cyrillic text with a bell) was skipped as a
    binary file, its text in no search. It is indexed (`not_utf8`); random bytes are binary."""
    import random

    for name, (codec, text) in CONTROL_NOTES.items():
        (vault / name).write_bytes(text.encode(codec))
    rng = random.Random(7)
    (vault / "noise.md").write_bytes(bytes(rng.randrange(1, 256) for _ in range(2000)))
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        problems = {p["path"]: p["kind"] for p in memory.status()["problems"]}
        paths = {row[0] for row in memory.index.query("SELECT path FROM notes")}
    assert problems == {"noise.md": "binary"} | dict.fromkeys(CONTROL_NOTES, "not_utf8")
    assert paths == set(CONTROL_NOTES)


def test_a_vault_deeper_than_the_recursion_limit_is_scanned(
    vault: Path, memory: Memory, deep_folders: DeepFolders
) -> None:
    """The vault scan recursed once per folder: a note 1,100 folders down stopped every sync
    with a RecursionError. It is indexed, and the notes beside the tree too."""
    import sys

    _vault_with_notes(vault)
    (vault / "Deep").mkdir()
    folder = deep_folders.make(vault / "Deep", sys.getrecursionlimit() + 100)
    write(folder, "bottom.md", "# Bottom\n\nThe heron nests at the bottom.\n")
    memory.sync()
    paths = [row[0] for row in memory.index.query("SELECT path FROM notes ORDER BY path")]
    assert len(paths) == 4 and any(path.endswith("/d/bottom.md") for path in paths)
    assert "Budget 2024.md" in paths


def test_a_reindex_reports_its_first_progress_after_a_few_files_not_a_whole_batch(config: Config) -> None:
    """A reindex's first count came once a whole batch of 600 files was applied (11 s at 3,000
    notes under load): the first batches are small, growing to the full size."""
    for i in range(200):
        write(config.vault, f"n{i:03d}.md", f"# Note {i}\n\nA note about copper {i}.\n")
    calls: list[tuple[str, int, int]] = []

    def reads() -> list[int]:
        done = [done for phase, done, _ in calls if phase == "read"]
        calls.clear()
        return done

    with Memory.open(config) as memory:
        memory.syncer.progress = lambda *call: calls.append(call)
        memory.reindex()
        assert memory.counts()["notes"] == 200
        assert reads() == [0, 50, 150, 200], "50 files, then twice the last batch"
        memory.syncer.apply_batch = 80
        memory.reindex()
        assert reads() == [0, 50, 130, 200], "up to the full size"


def test_batches_of_no_files_still_end() -> None:
    """A batch size of 0 (a setting gone wrong) applied nothing and looped for ever."""
    from vaultmind.sync_apply import _batch_bounds

    assert _batch_bounds(3, 0) == [(0, 1), (1, 2), (2, 3)]
    assert _batch_bounds(0, 600) == []


def test_new_ignore_rules_wait_for_the_sync_in_hand(vault: Path) -> None:
    """The daemon's watcher takes up `[vault] ignore` at each step while a request's sync may
    run on another thread: the rules change between syncs, never under one."""
    _vault_with_notes(vault)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        rules = memory.syncer.rules
        write(vault, ".vaultmind/config.toml", '[vault]\nignore = ["Projects/**"]\n')
        changed: list[bool] = []
        with memory.sync_lock:  # a sync in hand on this thread
            taker = threading.Thread(target=lambda: changed.append(memory.reload_ignores()))
            taker.start()
            taker.join(1.0)
            assert memory.syncer.rules is rules and memory.config.ignore == (), "not under the sync"
        taker.join(10)
        assert changed == [True] and memory.syncer.rules.ignores_dir("Projects")


def test_the_written_out_spaces_are_those_str_strip_takes_off() -> None:
    """`sync_write._SPACE` is written out (finding it over every code point cost each process
    ~0.1 s at import): it must stay what this Python's `str.strip` takes off."""
    from vaultmind.sync_write import _SPACE

    assert set(_SPACE) == {chr(c) for c in range(0x110000) if chr(c).isspace()}
    assert all((c + "x" + c).strip() == "x" for c in _SPACE)  # each is one `str.strip()` takes off
