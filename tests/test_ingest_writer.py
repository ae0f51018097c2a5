from __future__ import annotations

import os
import re
import sys
import threading
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.conftest import snapshot_files, write
from vaultmind.errors import VaultError
from vaultmind.ingest.errors import IngestError
from vaultmind.ingest.held import GENERATED_KEYS
from vaultmind.ingest.model import DocumentInput, SourceBatch
from vaultmind.ingest.names import scope_folder, slugify
from vaultmind.ingest.writer import _list_moves, write_batches, write_documents
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.markdown.note import parse_note
from vaultmind.markdown.render import Message, SourceMeta

META = SourceMeta(kind="chat", source_id="slack:acme/general", scope="slack/acme/general", title="#general")


def msg(i: int, text: str | None = None, *, day: int = 4, author: str = "Alice Chen") -> Message:
    return Message(
        message_id=f"17095428{i:02d}.000100",
        author=author,
        timestamp=datetime(2024, 3, day, 9, i, tzinfo=UTC),
        text=text if text is not None else f"message number {i}\nsecond line",
        source_ref=f"slack://archives/C01/p17095428{i:02d}000100",
    )


def batch(*messages: Message, meta: SourceMeta = META) -> SourceBatch:
    return SourceBatch(meta=meta, messages=tuple(messages))


GENERAL = "sources/chat/slack/acme/general"


def test_slugify() -> None:
    assert slugify("Hello World!") == "hello-world"
    assert slugify("Café au lait") == "cafe-au-lait"
    assert slugify("../..").startswith("x-")
    assert slugify("") == "unknown"
    assert slugify("🤓").startswith("x-") and slugify("🤓") != slugify("😀")
    assert slugify("a" * 200) == "a" * 80
    assert slugify("--a__b..c--") == "a__b..c"
    assert slugify(".hidden") == "hidden"
    assert scope_folder("Slack/Acme Corp//#general") == "slack/acme-corp/general"
    assert scope_folder("") == "unknown"


def test_day_notes_render_and_parse_back(vault: Path) -> None:
    report = write_batches(vault, [batch(msg(2), msg(1), msg(3, day=5))])
    assert report.written == [f"{GENERAL}/2024-03-04.md", f"{GENERAL}/2024-03-05.md"]
    assert report.messages_added == 3 and report.messages_known == 0
    text = (vault / GENERAL / "2024-03-04.md").read_text(encoding="utf-8")
    note = parse_note(f"{GENERAL}/2024-03-04.md", text)
    assert note.title == "#general · 2024-03-04"
    assert [leaf.message_id for leaf in note.leaves] == [msg(1).message_id, msg(2).message_id]
    assert note.leaves[0].text == "message number 1\nsecond line"
    assert note.leaves[0].timestamp == "2024-03-04T09:01:00Z"
    assert note.leaves[0].source_ref == msg(1).source_ref
    assert note.frontmatter["messages"] == 2
    assert "\r" not in text and text.endswith("\n")


def test_ingest_twice_adds_nothing_and_keeps_bytes(vault: Path) -> None:
    batches = [batch(msg(1), msg(2), msg(3, day=6))]
    write_batches(vault, batches)
    before = snapshot_files(vault)
    mtimes = {p: os.stat(vault / p).st_mtime_ns for p in before}
    report = write_batches(vault, batches)
    assert report.written == [] and report.messages_added == 0 and report.messages_known == 3
    assert sorted(report.unchanged) == sorted(before)
    assert snapshot_files(vault) == before
    assert {p: os.stat(vault / p).st_mtime_ns for p in before} == mtimes


def test_overlapping_exports_merge_by_message_id(vault: Path) -> None:
    write_batches(vault, [batch(msg(1), msg(2))])
    report = write_batches(vault, [batch(msg(2), msg(3), msg(4))])
    assert report.messages_added == 2 and report.messages_known == 1
    assert report.written == [f"{GENERAL}/2024-03-04.md"]
    merged = (vault / GENERAL / "2024-03-04.md").read_bytes()
    # the same result as one export holding everything, in any order
    other = vault.parent / "other"
    other.mkdir()
    write_batches(other, [batch(msg(4), msg(3), msg(2), msg(1))])
    assert (other / GENERAL / "2024-03-04.md").read_bytes() == merged


def _add_front_matter(path: Path, lines: str) -> bytes:
    """Properties added in Obsidian (before the body hash, as Obsidian appends them); the new bytes."""
    text = path.read_text(encoding="utf-8").replace("vaultmind_body_sha256:", lines + "vaultmind_body_sha256:", 1)
    path.write_text(text, encoding="utf-8")
    return text.encode("utf-8")


def test_properties_added_in_obsidian_survive_every_later_ingest(vault: Path) -> None:
    write_batches(vault, [batch(msg(1), msg(2))])
    note = vault / GENERAL / "2024-03-04.md"
    edited = _add_front_matter(note, "tags:\n  - family\n# mine\naliases: [Family chat March]\n")
    again = write_batches(vault, [batch(msg(1), msg(2))])
    assert again.written == [] and note.read_bytes() == edited, "nothing new: the note is not rewritten"
    more = write_batches(vault, [batch(msg(3))])
    assert more.written == [f"{GENERAL}/2024-03-04.md"] and more.messages_added == 1
    data = split_frontmatter(note.read_text(encoding="utf-8")).data
    assert data["tags"] == ["family"] and data["aliases"] == ["Family chat March"] and data["messages"] == 3
    assert "# mine\naliases:" in note.read_text(encoding="utf-8")
    assert parse_note(f"{GENERAL}/2024-03-04.md", note.read_text(encoding="utf-8")).frontmatter["tags"] == ["family"]
    write_documents(vault, [doc("## Numbers\n\nRevenue grew 12 %.\n")])
    _add_front_matter(vault / DOC, "cssclasses: wide\n")
    write_documents(vault, [doc("## Numbers\n\nRevenue grew 15 %.\n")])
    fm = split_frontmatter((vault / DOC).read_text(encoding="utf-8"))
    assert fm.data["version"] == 2 and fm.data["cssclasses"] == "wide"


@pytest.mark.parametrize(
    "lines",
    [
        'quote: "first line\n  #second line"\n',  # a quoted value over lines, one starting with "#"
        "notes: |\n  line one\n\n  # a heading inside\n  line three\n",  # a block scalar
        "a:b: keep me\n",  # a colon inside a key
        '"title: mine": x\n',  # a quoted key that starts like vaultmind's
        "? complex\n: value\n",  # a complex key
        "tags: [x]\n# a trailing comment\n",
        'quote: "first line\n#second line"\n',  # continued at the margin with "#": not carried alone
    ],
)
def test_properties_are_carried_exactly_or_the_note_is_left_as_yours(vault: Path, lines: str) -> None:
    """Whatever a user adds to the front matter, a later ingest never loses or mangles it: the
    note is rewritten with the same values, or, when they cannot be carried as written, left as
    it is (like a note you edited) and the new messages go to a sibling."""
    write_batches(vault, [batch(msg(1))])
    note = vault / GENERAL / "2024-03-04.md"
    edited = _add_front_matter(note, lines)
    mine = {k: v for k, v in split_frontmatter(edited.decode("utf-8")).data.items() if k not in GENERATED_KEYS}
    report = write_batches(vault, [batch(msg(1), msg(2))])
    assert report.messages_added == 1
    fm = split_frontmatter(note.read_text(encoding="utf-8"))
    if note.read_bytes() == edited:  # left as yours
        assert report.written == [f"{GENERAL}/2024-03-04.2.md"] and report.kept_user_edited == [f"{GENERAL}/2024-03-04.md"]
    else:
        assert fm.error is None and fm.data["messages"] == 2
        assert {k: v for k, v in fm.data.items() if k in mine} == mine and set(mine) <= set(fm.data)
    again = write_batches(vault, [batch(msg(1), msg(2), msg(3))])
    assert again.messages_added == 1 and again.messages_known == 2, "nothing written twice"


def test_a_crlf_note_keeps_its_properties_with_lf_line_ends(vault: Path) -> None:
    write_batches(vault, [batch(msg(1))])
    note = vault / GENERAL / "2024-03-04.md"
    _add_front_matter(note, "tags:\n  - family\n")
    note.write_bytes(note.read_bytes().replace(b"\n", b"\r\n"))
    write_batches(vault, [batch(msg(1), msg(2))])
    raw = note.read_bytes()
    assert b"\r" not in raw and split_frontmatter(raw.decode("utf-8")).data["tags"] == ["family"]


def test_a_day_note_renamed_in_obsidian_is_merged_into_not_duplicated(vault: Path) -> None:
    write_batches(vault, [batch(msg(1), msg(2))])
    renamed = vault / GENERAL / "2024-03-04 dentist day.md"
    (vault / GENERAL / "2024-03-04.md").rename(renamed)
    report = write_batches(vault, [batch(msg(1), msg(2), msg(3))])
    assert report.written == [f"{GENERAL}/2024-03-04 dentist day.md"]
    assert (report.messages_added, report.messages_known) == (1, 2)
    assert not (vault / GENERAL / "2024-03-04.md").exists()
    assert [leaf.message_id for leaf in parse_note(f"{GENERAL}/{renamed.name}", renamed.read_text(encoding="utf-8")).leaves] == [
        msg(1).message_id,
        msg(2).message_id,
        msg(3).message_id,
    ]
    other = SourceMeta(kind="chat", source_id="slack:acme/random", scope="slack/acme/general", title="#random")
    mixed = write_batches(vault, [batch(msg(1), meta=other)])  # the same id in another channel is another message
    assert mixed.messages_added == 1 and mixed.written == [f"{GENERAL}/2024-03-04.md"]


def test_a_conversation_folder_renamed_in_obsidian_is_merged_into_not_duplicated(vault: Path) -> None:
    """The folder renamed (`general` → `general-archive`): its notes are still found, by the
    messages they hold, under the platform's folder; the export's next message joins them."""
    write_batches(vault, [batch(msg(1), msg(2))])
    moved = vault / "sources/chat/slack/acme/general-archive"
    (vault / GENERAL).rename(moved)
    report = write_batches(vault, [batch(msg(1), msg(2), msg(3))])
    assert (report.messages_added, report.messages_known) == (1, 2)
    assert report.written == ["sources/chat/slack/acme/general-archive/2024-03-04.md"]
    assert not (vault / GENERAL).exists()


def test_a_chat_renamed_on_its_platform_keeps_its_messages_once(vault: Path) -> None:
    """The channel renamed (`#general` → `#company-wide`, same channel id, so the same source):
    its next export writes to the new name's folder, and the same export once more found the
    old folder no more — every earlier message had been written a second time."""
    write_batches(vault, [batch(msg(1), msg(2, day=5))])
    renamed = SourceMeta(kind="chat", source_id=META.source_id, scope="slack/acme/company-wide", title="#company-wide")
    export = [batch(msg(1), msg(2, day=5), msg(3, day=6), meta=renamed)]
    first = write_batches(vault, export)
    assert (first.messages_added, first.messages_known) == (1, 2)
    assert first.written == ["sources/chat/slack/acme/company-wide/2024-03-06.md"]
    before = snapshot_files(vault)
    again = write_batches(vault, export)
    assert (again.messages_added, again.messages_known) == (0, 3) and again.written == []
    assert snapshot_files(vault) == before


def test_changed_text_keeps_the_note_and_warns(vault: Path) -> None:
    write_batches(vault, [batch(msg(1, "original"))])
    report = write_batches(vault, [batch(msg(1, "edited later"))])
    assert report.written == [] and report.messages_known == 1
    assert len(report.warnings) == 1 and "differs" in report.warnings[0]
    assert "original" in (vault / GENERAL / "2024-03-04.md").read_text(encoding="utf-8")


def test_control_characters_never_reach_a_note(vault: Path) -> None:
    """An export may carry NUL or a bell in a message ("\\u0000" in JSON, a Windows-1252
    file): a NUL would make the whole day's note read as a binary file, by vaultmind too."""
    dirty = msg(1, "hello\x00world \x07bell\tand tab", author="Alice\x00 Chen")
    write_batches(vault, [batch(dirty, msg(2))])
    data = (vault / GENERAL / "2024-03-04.md").read_bytes()
    assert b"\x00" not in data and b"\x07" not in data
    note = parse_note(f"{GENERAL}/2024-03-04.md", data.decode("utf-8"))
    assert [leaf.text for leaf in note.leaves][:1] == ["helloworld bell\tand tab"]
    again = write_batches(vault, [batch(dirty, msg(2))])  # the same export: nothing differs
    assert again.written == [] and again.warnings == [] and again.messages_known == 2
    write_documents(vault, [doc("Revenue\x00 grew.\x0c\n")])
    assert b"\x00" not in (vault / DOC).read_bytes() and b"\x0c" not in (vault / DOC).read_bytes()


def test_duplicate_ids_in_one_export_count_once(vault: Path) -> None:
    report = write_batches(vault, [batch(msg(1), msg(1)), batch(msg(1, "other text"))])
    assert report.messages_added == 1 and report.messages_known == 2
    assert any("twice" in w for w in report.warnings)


def test_user_edited_note_is_never_overwritten(vault: Path) -> None:
    write_batches(vault, [batch(msg(1), msg(2))])
    path = vault / GENERAL / "2024-03-04.md"
    edited = path.read_text(encoding="utf-8").replace("message number 1", "my correction")
    path.write_text(edited, encoding="utf-8")

    # nothing new: nothing written, the edit is the truth
    report = write_batches(vault, [batch(msg(1), msg(2))])
    assert report.written == [] and report.kept_user_edited == [] and report.messages_known == 2

    # new messages go to a sibling; the user's note is untouched
    report = write_batches(vault, [batch(msg(1), msg(2), msg(3))])
    assert path.read_text(encoding="utf-8") == edited
    assert report.kept_user_edited == [f"{GENERAL}/2024-03-04.md"]
    assert report.written == [f"{GENERAL}/2024-03-04.2.md"]
    sibling = parse_note(
        f"{GENERAL}/2024-03-04.2.md", (vault / GENERAL / "2024-03-04.2.md").read_text("utf-8")
    )
    assert [leaf.message_id for leaf in sibling.leaves] == [msg(3).message_id]

    # later exports merge into the sibling, still never into the user's note
    report = write_batches(vault, [batch(msg(3), msg(4))])
    assert report.written == [f"{GENERAL}/2024-03-04.2.md"] and report.messages_added == 1
    assert path.read_text(encoding="utf-8") == edited
    again = write_batches(vault, [batch(msg(1), msg(2), msg(3), msg(4))])
    assert again.written == [] and again.messages_added == 0


def _resave(path: Path, encoding: str) -> bytes:
    """The note re-saved in `encoding` with its byte order mark (Notepad's "Unicode")."""
    import codecs

    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE, "utf-32-le": codecs.BOM_UTF32_LE}
    data = bom[encoding] + path.read_text(encoding="utf-8").encode(encoding)
    path.write_bytes(data)
    return data


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le"])
def test_a_note_resaved_as_utf16_is_read_never_rewritten_and_said(vault: Path, encoding: str) -> None:
    """A source note re-saved as UTF-16 or UTF-32 (Notepad) was read as no note: the same
    export wrote all its messages again into `<day>.2.md` (which `status` then took for a sync
    tool's copy). It is read as the text it is: its messages are known; it is never rewritten
    (that would re-encode it), so new messages go to a sibling, with a warning naming it."""
    write_batches(vault, [batch(msg(1), msg(2))])
    note = vault / GENERAL / "2024-03-04.md"
    data = _resave(note, encoding)
    again = write_batches(vault, [batch(msg(1), msg(2))])
    assert (again.written, again.messages_added, again.messages_known, again.warnings) == ([], 0, 2, [])
    report = write_batches(vault, [batch(msg(1), msg(2), msg(3))])
    assert note.read_bytes() == data
    assert report.written == [f"{GENERAL}/2024-03-04.2.md"] and report.messages_added == 1
    assert report.kept_user_edited == [f"{GENERAL}/2024-03-04.md"]
    name = encoding[:6].upper()
    assert report.warnings == [
        f"{GENERAL}/2024-03-04.md: saved as {name} text, not UTF-8 (as Windows Notepad can), so vaultmind "
        f"does not write to it: its messages are known, and 1 new message(s) are written to {GENERAL}/2024-03-04.2.md; "
        "re-save it as UTF-8 to read it in Obsidian"
    ]
    # re-saved as UTF-8: vaultmind's again, and its sibling's message is not written twice
    note.write_bytes(data.decode(encoding.replace("-le", "").replace("-be", "")).encode("utf-8"))
    last = write_batches(vault, [batch(msg(1), msg(2), msg(3), msg(4))])
    assert (last.written, last.messages_added, last.messages_known) == ([f"{GENERAL}/2024-03-04.md"], 1, 3)
    held = re.findall(r'vaultmind id="([^"]+)"', note.read_text(encoding="utf-8"))
    assert held == [msg(1).message_id, msg(2).message_id, msg(4).message_id]


def test_a_note_resaved_in_a_legacy_code_page_is_read_never_rewritten_and_said(vault: Path) -> None:
    """A Chinese chat note re-saved in GBK (Windows' "ANSI" on a Chinese system) was read as no
    note: the same export wrote its messages again into `<day>.2.md`. It is read in its code
    page, its messages known, and never rewritten: new messages go to a sibling, said."""
    chinese = [msg(1, "我们明天下午三点在会议室讨论预算。"), msg(2, "好的，我会准备好上个季度的数据。")]
    write_batches(vault, [batch(*chinese)])
    note = vault / GENERAL / "2024-03-04.md"
    data = note.read_text(encoding="utf-8").encode("gbk")
    note.write_bytes(data)
    again = write_batches(vault, [batch(*chinese)])
    assert (again.written, again.messages_added, again.messages_known, again.warnings) == ([], 0, 2, [])
    report = write_batches(vault, [batch(*chinese, msg(3, "收到，谢谢。"))])
    assert note.read_bytes() == data
    assert report.written == [f"{GENERAL}/2024-03-04.2.md"] and report.messages_added == 1
    assert report.warnings == [
        f"{GENERAL}/2024-03-04.md: saved as GB18030 text, not UTF-8 (as Windows Notepad can), so vaultmind "
        f"does not write to it: its messages are known, and 1 new message(s) are written to {GENERAL}/2024-03-04.2.md; "
        "re-save it as UTF-8 to read it in Obsidian"
    ]


def test_an_email_thread_note_resaved_as_utf16_is_read(vault: Path) -> None:
    meta = SourceMeta(kind="email", source_id="mbox:alice/q3", scope="mbox/alice", title="Q3 budget")
    messages = (
        Message("<a@x>", "alice@example.com", "2024-03-11T09:00:00Z", "Hi", "mid:a@x", subject="Q3 budget"),
        Message("<b@x>", "bob@example.com", "2024-03-12T09:30:00Z", "Thanks", "mid:b@x", subject="Re: Q3 budget"),
    )
    one = SourceBatch(meta=meta, messages=messages[:1], bucket="thread", note_name="2024-03-11 Q3 budget")
    both = SourceBatch(meta=meta, messages=messages, bucket="thread", note_name="2024-03-11 Q3 budget")
    write_batches(vault, [one])
    note = vault / "sources/email/mbox/alice/2024-03-11-q3-budget.md"
    data = _resave(note, "utf-16-le")
    assert write_batches(vault, [one]).written == []
    report = write_batches(vault, [both])
    assert note.read_bytes() == data and report.messages_added == 1 and report.messages_known == 1
    assert report.written == ["sources/email/mbox/alice/2024-03-11-q3-budget.2.md"]
    assert [w.split(":")[0] for w in report.warnings] == ["sources/email/mbox/alice/2024-03-11-q3-budget.md"]


def test_foreign_file_at_target_path_is_left_alone(vault: Path) -> None:
    target = vault / GENERAL / "2024-03-04.md"
    target.parent.mkdir(parents=True)
    target.write_text("# my own note\n", encoding="utf-8")
    report = write_batches(vault, [batch(msg(1))])
    assert target.read_text(encoding="utf-8") == "# my own note\n"
    assert report.written == [f"{GENERAL}/2024-03-04.2.md"]


def test_invalid_message_writes_nothing(vault: Path) -> None:
    bad = Message("x1", "Bob", "not a time", "hi")
    with pytest.raises(IngestError) as info:
        write_batches(vault, [batch(msg(1)), batch(bad)])
    assert "x1" in str(info.value)
    assert snapshot_files(vault) == {}
    with pytest.raises(IngestError):
        write_batches(vault, [batch(Message("", "Bob", "2024-01-01T00:00:00Z", "hi"))])
    assert snapshot_files(vault) == {}


def test_thread_bucket_and_email(vault: Path) -> None:
    meta = SourceMeta(kind="email", source_id="mbox:alice/q3", scope="mbox/alice", title="Q3 budget")
    messages = (
        Message("<a@x>", "alice@example.com", "2024-03-11T09:00:00Z", "Hi", "mid:a@x", subject="Q3 budget"),
        Message(
            "<b@x>", "bob@example.com", "2024-03-12T09:30:00Z", "Thanks", "mid:b@x", subject="Re: Q3 budget"
        ),
    )
    one = SourceBatch(meta=meta, messages=messages[:1], bucket="thread", note_name="2024-03-11 Q3 budget")
    both = SourceBatch(meta=meta, messages=messages, bucket="thread", note_name="2024-03-11 Q3 budget")
    write_batches(vault, [one])
    report = write_batches(vault, [both])
    assert report.written == ["sources/email/mbox/alice/2024-03-11-q3-budget.md"]
    text = (vault / report.written[0]).read_text(encoding="utf-8")
    assert 'subject="Re: Q3 budget"' in text and 'subject="Q3 budget"' in text
    assert write_batches(vault, [both]).written == []


def test_thread_bucket_needs_a_name(vault: Path) -> None:
    with pytest.raises(IngestError):
        write_batches(vault, [SourceBatch(meta=META, messages=(msg(1),), bucket="thread")])


def test_os_error_midway_leaves_complete_notes(vault: Path) -> None:
    # a regular file where a folder must go makes the second note fail after the first is written
    (vault / "sources" / "chat" / "zz").mkdir(parents=True)
    (vault / "sources" / "chat" / "zz" / "blocked").write_text("x", encoding="utf-8")
    blocked = SourceMeta(kind="chat", source_id="x:blocked", scope="zz/blocked/deeper", title="b")
    with pytest.raises(VaultError) as info:
        write_batches(vault, [batch(msg(1)), batch(msg(2), meta=blocked)])
    assert "1 of 2 notes were written" in str(info.value)
    note = (vault / GENERAL / "2024-03-04.md").read_text(encoding="utf-8")
    assert len(parse_note(f"{GENERAL}/2024-03-04.md", note).leaves) == 1


def doc(body: str, *, title: str = "Q3 report", modified: str = "2024-03-01T10:00:00Z") -> DocumentInput:
    return DocumentInput(
        source_id="document:acme/drive/q3",
        scope="acme/drive",
        title=title,
        body=body,
        modified=modified,
        source_ref="gdrive://file/1AbC",
    )


DOC = "sources/document/acme/drive/q3-report.md"


def test_documents_version_and_replace(vault: Path) -> None:
    report = write_documents(vault, [doc("## Numbers\n\nRevenue grew 12 %.\n")])
    assert report.written == [DOC]
    fm = split_frontmatter((vault / DOC).read_text(encoding="utf-8"))
    assert fm.data["version"] == 1 and fm.data["source_id"] == "document:acme/drive/q3"
    assert fm.body.startswith("# Q3 report\n\n## Numbers")
    assert fm.data["time_start"] == fm.data["time_end"] == "2024-03-01T10:00:00Z"

    same = write_documents(
        vault, [doc("## Numbers\n\nRevenue grew 12 %.\n", modified="2024-03-02T00:00:00Z")]
    )
    assert same.written == [] and same.unchanged == [DOC]

    # a renamed title keeps the file (found by source_id) and bumps the version
    changed = write_documents(
        vault,
        [doc("## Numbers\n\nRevenue grew 15 %.", title="Q3 report v2", modified="2024-03-07T16:50:00Z")],
    )
    assert changed.written == [DOC] and changed.documents_replaced == 1
    fm = split_frontmatter((vault / DOC).read_text(encoding="utf-8"))
    assert fm.data["version"] == 2 and fm.data["title"] == "Q3 report v2"
    assert fm.data["time_start"] == "2024-03-01T10:00:00Z" and fm.data["time_end"] == "2024-03-07T16:50:00Z"
    assert "15 %" in fm.body and "12 %" not in fm.body


def test_a_document_note_moved_in_obsidian_is_found_and_replaced_where_it_is(vault: Path) -> None:
    write_documents(vault, [doc("Revenue grew 12 %.")])
    moved = vault / "sources/document/archive/q3-report.md"
    moved.parent.mkdir(parents=True)
    (vault / DOC).rename(moved)
    assert write_documents(vault, [doc("Revenue grew 12 %.")]).unchanged == ["sources/document/archive/q3-report.md"]
    changed = write_documents(vault, [doc("Revenue grew 15 %.", modified="2024-03-07T16:50:00Z")])
    assert changed.written == ["sources/document/archive/q3-report.md"] and not (vault / DOC).exists()
    fm = split_frontmatter(moved.read_text(encoding="utf-8"))
    assert fm.data["version"] == 2 and "15 %" in fm.body


def test_user_edited_document_gets_a_sibling_only_when_the_source_changes(vault: Path) -> None:
    write_documents(vault, [doc("Revenue grew 12 %.")])
    path = vault / DOC
    edited = path.read_text(encoding="utf-8") + "\nMy own remark.\n"
    path.write_text(edited, encoding="utf-8")
    assert write_documents(vault, [doc("Revenue grew 12 %.")]).written == []
    report = write_documents(vault, [doc("Revenue grew 20 %.")])
    assert path.read_text(encoding="utf-8") == edited
    assert report.kept_user_edited == [DOC]
    assert report.written == ["sources/document/acme/drive/q3-report.2.md"]
    fm = split_frontmatter((vault / report.written[0]).read_text(encoding="utf-8"))
    assert fm.data["version"] == 2
    assert write_documents(vault, [doc("Revenue grew 20 %.")]).written == []


def test_a_document_note_resaved_as_utf16_is_read_never_rewritten(vault: Path) -> None:
    """Unchanged, the document writes nothing (it wrote `q3-report-2.md`); changed, its next
    version goes beside it, said."""
    write_documents(vault, [doc("Revenue grew 12 %.")])
    data = _resave(vault / DOC, "utf-16-le")
    assert write_documents(vault, [doc("Revenue grew 12 %.")]).written == []
    report = write_documents(vault, [doc("Revenue grew 20 %.")])
    assert (vault / DOC).read_bytes() == data
    assert report.written == ["sources/document/acme/drive/q3-report.2.md"]
    assert report.warnings == [
        f"{DOC}: saved as UTF-16 text, not UTF-8 (as Windows Notepad can), so vaultmind does not write to it: "
        "its next version is written to sources/document/acme/drive/q3-report.2.md; re-save it as UTF-8 to read it in Obsidian"
    ]


def test_documents_with_the_same_name_do_not_collide(vault: Path) -> None:
    a = DocumentInput(source_id="doc:a", scope="files", title="Notes", body="A")
    b = DocumentInput(source_id="doc:b", scope="files", title="Notes", body="B")
    report = write_documents(vault, [a, b])
    assert report.written == ["sources/document/files/notes-2.md", "sources/document/files/notes.md"]
    assert write_documents(vault, [b, a]).written == []


def test_bench_ingest_reports_a_rate(tmp_path: Path) -> None:
    from vaultmind.bench.ingest import run_ingest_bench, synthetic_export

    first = synthetic_export(tmp_path / "a.jsonl", 50).read_bytes()
    assert synthetic_export(tmp_path / "b.jsonl", 50).read_bytes() == first, "deterministic export"
    figures = run_ingest_bench(200, embed_provider="none", derivers=False, workdir=tmp_path)
    assert figures["messages"] == 200 and figures["notes"] == 8 and figures["messages_per_s"] > 0


def _local(i: int, hour: int, text: str, author: str = "Alice Chen") -> Message:
    """A message of an export with local times: its id hashes its UTC time, as WhatsApp's do."""
    at = datetime(2024, 3, 4, hour, i, tzinfo=UTC)
    return Message(message_id=f"h-{hour:02d}{i:02d}", author=author, timestamp=at, text=text)


def test_the_same_export_read_in_another_zone_is_refused_not_written_twice(vault: Path) -> None:
    texts = ["Climbing at six?", "ok", "Bring the rope", "ok", "See you there"]
    write_batches(vault, [batch(*(_local(i, 9, t) for i, t in enumerate(texts)))])
    before = snapshot_files(vault)
    with pytest.raises(IngestError, match="5 messages would be written again, 1 h later") as caught:
        write_batches(vault, [batch(*(_local(i, 10, t) for i, t in enumerate(texts)))])
    assert "--tz" in (caught.value.hint or "")
    assert snapshot_files(vault) == before, "nothing written"
    with pytest.raises(IngestError, match="2 h earlier"):
        write_batches(vault, [batch(*(_local(i, 7, t) for i, t in enumerate(texts)))])


def test_a_later_export_read_in_another_zone_is_refused_though_it_has_new_messages(vault: Path) -> None:
    texts = ["Climbing at six?", "ok", "Bring the rope", "Who drives?", "I do", "See you there"]
    write_batches(vault, [batch(*(_local(i, 9, t) for i, t in enumerate(texts)))])
    later = [_local(i, 10, t) for i, t in enumerate(texts)] + [_local(30 + i, 12, f"new message {i}") for i in range(4)]
    with pytest.raises(IngestError, match="6 messages would be written again, 1 h later"):
        write_batches(vault, [batch(*later)])


def test_repeats_a_zone_cannot_explain_are_merged(vault: Path) -> None:
    """A bot's hourly post: with the platform's ids (a zone cannot change them), or with hashed
    ids but one text only — the next posts repeat earlier ones an hour or more apart."""
    def post(i: int, hour: int, prefix: str) -> Message:
        return Message(f"{prefix}{hour:02d}", "ci-bot", datetime(2024, 3, 4, hour, 0, tzinfo=UTC), "Nightly build passed")

    for prefix in ("m", "h-"):
        write_batches(vault, [batch(*(post(0, hour, prefix) for hour in range(0, 12)), meta=replace(META, source_id=f"irc:{prefix}"))])
        later = [post(0, hour, prefix) for hour in range(0, 17)]
        report = write_batches(vault, [batch(*later, meta=replace(META, source_id=f"irc:{prefix}"))])
        assert report.messages_added == 5
    # three texts in turn, hashed ids: its earlier posts are still in the export, under their ids
    texts = ("Backup started", "Backup finished", "Sync OK")
    rotating = [Message(f"h-{hour:02d}{k}", "homelab", datetime(2024, 3, 5, hour, 10 * k, tzinfo=UTC), text)
                for hour in range(0, 17) for k, text in enumerate(texts)]
    meta = replace(META, source_id="irc:homelab", scope="irc/homelab")
    write_batches(vault, [batch(*rotating[:36], meta=meta)])
    assert write_batches(vault, [batch(*rotating, meta=meta)]).messages_added == 15


def test_an_updated_export_with_repeated_short_messages_is_merged(vault: Path) -> None:
    """New messages that repeat a few held ones ("ok") are an update, not a zone mix-up."""
    write_batches(vault, [batch(_local(0, 9, "ok"), _local(1, 9, "Climbing at six?"), _local(2, 9, "ok"))])
    later = [_local(i, 11, t) for i, t in enumerate(["ok", "Rope is in the car", "ok", "Running late", "Parking now"])]
    report = write_batches(vault, [batch(*later)])
    assert report.messages_added == 5


def test_day_notes_and_callout_times_follow_the_vaults_zone(vault: Path) -> None:
    """A morning message in Tokyo (22:30 UTC the day before) had been filed under the day before
    and shown as 22:30; the meta line keeps UTC, so nothing else changes."""
    from zoneinfo import ZoneInfo

    morning = Message("m1", "Haruto", datetime(2024, 3, 11, 22, 30, tzinfo=UTC), "Good morning! Breakfast at 8.")
    evening = Message("m2", "Haruto", datetime(2024, 3, 12, 12, 0, tzinfo=UTC), "Good night.")
    report = write_batches(vault, [batch(morning, evening)], zone=ZoneInfo("Asia/Tokyo"))
    assert report.written == [f"{GENERAL}/2024-03-12.md"]
    text = (vault / GENERAL / "2024-03-12.md").read_text(encoding="utf-8")
    assert "> [!message] Haruto · 2024-03-12 07:30" in text and "> [!message] Haruto · 2024-03-12 21:00" in text
    assert 'at="2024-03-11T22:30:00Z"' in text
    assert [leaf.timestamp for leaf in parse_note(f"{GENERAL}/2024-03-12.md", text).leaves] == [
        "2024-03-11T22:30:00Z",
        "2024-03-12T12:00:00Z",
    ]
    utc = write_batches(vault, [batch(morning, evening)])  # the clock changed back: nothing written twice
    assert utc.messages_added == 0


def test_the_same_export_on_another_clock_writes_nothing_again(vault: Path) -> None:
    """Ingested on UTC days, then with the vault's zone set: a zone day takes messages from two
    UTC day notes, and had written some of them again to a `.2.md` copy."""
    from zoneinfo import ZoneInfo

    messages = [
        Message(f"d{day}-{hh}{mm}", "Alice Chen", datetime(2025, 3, day, hh, mm, tzinfo=UTC), f"day {day} at {hh}:{mm}")
        for day in (1, 2, 3)
        for hh, mm in ((6, 0), (12, 30), (22, 15), (23, 50))
    ]
    write_batches(vault, [batch(*messages)])
    before = snapshot_files(vault)
    for zone in ("America/Los_Angeles", "Asia/Tokyo"):
        report = write_batches(vault, [batch(*messages)], zone=ZoneInfo(zone))
        assert (report.messages_added, report.written) == (0, []), zone
    assert snapshot_files(vault) == before
    later = Message("d4-0100", "Alice Chen", datetime(2025, 3, 4, 1, 0, tzinfo=UTC), "a new one")
    report = write_batches(vault, [batch(*messages, later)], zone=ZoneInfo("America/Los_Angeles"))
    assert report.messages_added == 1 and not any(".2.md" in path for path in report.written)


def test_after_a_clock_change_each_day_keeps_its_own_note(vault: Path) -> None:
    """Ten UTC days written, then the vault's zone set: every local day has messages in the next
    UTC day's note. Days had been joined one to the next, and ten days' new messages went into
    one note."""
    from zoneinfo import ZoneInfo

    def every_two_hours(days: range) -> list[Message]:
        return [
            Message(f"c{day:02d}-{hour:02d}", "Alice Chen", datetime(2025, 3, day, hour, 0, tzinfo=UTC), f"day {day} hour {hour}")
            for day in days
            for hour in range(0, 24, 2)
        ]

    write_batches(vault, [batch(*every_two_hours(range(1, 11)))])
    report = write_batches(vault, [batch(*every_two_hours(range(1, 13)))], zone=ZoneInfo("America/Los_Angeles"))
    assert report.messages_added == 24
    for path in (vault / GENERAL).glob("*.md"):
        note = parse_note(f"{GENERAL}/{path.name}", path.read_text(encoding="utf-8"))
        days = {leaf.timestamp[:10] for leaf in note.leaves if leaf.timestamp}
        name = path.stem[:10]
        assert len(days) <= 2 and all(abs(int(day[8:]) - int(name[8:])) <= 1 for day in days), (path.name, days)
    ids = [leaf.message_id for p in (vault / GENERAL).glob("*.md") for leaf in parse_note(f"{GENERAL}/{p.name}", p.read_text(encoding="utf-8")).leaves]
    assert len(ids) == len(set(ids)) == 144


def test_a_moved_note_with_a_long_front_matter_and_crlf_line_ends_is_found(vault: Path) -> None:
    """A big group's day note (its participants fill more than the first 8 KB) moved out of
    sources/ and given Windows line ends (a sync tool, git) still holds its messages: none is
    written again. Its front matter had been looked for in its first 8 KB only, LF only."""
    crowd = [msg(i % 60, f"hello from person {i}", author=f"Participant Number {i:03d} of the big group") for i in range(400)]
    crowd = [replace(m, message_id=f"m{i}", timestamp=datetime(2024, 3, 4, 9, i % 60, i // 60, tzinfo=UTC)) for i, m in enumerate(crowd)]
    write_batches(vault, [batch(*crowd)])
    note = vault / GENERAL / "2024-03-04.md"
    assert note.read_bytes().index(b"\n---\n", 4) > 8192, "a front matter longer than 8 KB"
    moved = vault / "Groups" / "The big day.md"
    moved.parent.mkdir()
    moved.write_bytes(note.read_bytes().replace(b"\n", b"\r\n"))
    note.unlink()
    before = moved.read_bytes()
    report = write_batches(vault, [batch(*crowd, msg(59, "one more"))])
    assert (report.messages_added, report.messages_known) == (1, 400)
    assert report.written == [f"{GENERAL}/2024-03-04.md"] and moved.read_bytes() == before
    assert [w.split(": ", 1)[0] for w in report.warnings] == ["Groups/The big day.md"]


@pytest.mark.parametrize("kind", ["chat", "email"])
def test_a_re_ingest_whose_messages_are_all_in_sources_never_reads_your_notes(vault: Path, kind: str) -> None:
    """Notes moved out of sources/ are looked for only when the export has messages that are not
    found under sources/: ingesting the same export again reads none of your notes (the whole
    vault had been read at each email ingest, once per ingest). A message not found there makes
    the ingest look, and find a note moved anywhere."""
    meta = replace(META, kind="email", source_id="mail:inbox", scope="email/inbox") if kind == "email" else META
    export = [SourceBatch(meta=meta, messages=(msg(1), msg(2)), bucket="thread" if kind == "email" else "day", note_name="budget" if kind == "email" else None)]
    write_batches(vault, export)
    yours = vault / "Journal" / "2024-03-04.md"
    yours.parent.mkdir()
    yours.write_text("---\ntags: [daily]\n---\n# Monday\n", encoding="utf-8")
    opened: list[str] = []

    def audit(event: str, args: tuple[object, ...]) -> None:
        if event == "open" and watching and isinstance(args[0], str | Path) and "Journal" in str(args[0]):
            opened.append(str(args[0]))

    watching = True
    sys.addaudithook(audit)  # (hooks cannot be removed: it stops watching below)
    try:
        again = write_batches(vault, export)
        assert (again.written, again.messages_added, opened) == ([], 0, [])
        grown = [replace(export[0], messages=(msg(1), msg(2), msg(3)))]
        assert write_batches(vault, grown).messages_added == 1
        assert opened, "a message not found under sources/: the vault is looked at"
    finally:
        watching = False


def test_the_list_of_moves_is_read_and_written_under_a_lock(vault: Path) -> None:
    """Two ingests at once each read `sources/.moving`, add their lines and write it back: the
    one writing last dropped the other's. The update waits for the lock the other holds."""
    import fcntl  # (POSIX: elsewhere the list is written without a lock)

    write(vault, "sources/chat/a.md", "a\n")
    _list_moves(vault, add=["sources/chat/a.md"])
    fd = os.open(vault / "sources", os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another ingest's update in progress
    other = threading.Thread(target=_list_moves, args=(vault,), kwargs={"add": ["sources/chat/b.md"]})
    other.start()
    other.join(0.5)
    assert other.is_alive(), "it waits"
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    other.join(10)
    assert (vault / "sources" / ".moving").read_text() == "sources/chat/a.md\nsources/chat/b.md\n"



def test_a_save_while_a_note_is_written_is_kept(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A note saved in Obsidian while the ingest writes its new bytes (after the plan's check,
    before the rename) is left as saved, with a warning: its bytes are compared again just
    before the rename."""
    import vaultmind.vault.atomic as atomic

    [path] = write_batches(vault, [SourceBatch(META, (msg(1),))]).written
    note = vault / path
    saved = note.read_text(encoding="utf-8") + "\nMy own line, saved in Obsidian.\n"
    write_new = atomic._write_new

    def saving_meanwhile(temp: Path, data: bytes, mode: int) -> None:
        write_new(temp, data, mode)
        note.write_text(saved, encoding="utf-8")  # the user's save, while the ingest writes

    monkeypatch.setattr(atomic, "_write_new", saving_meanwhile)
    report = write_batches(vault, [SourceBatch(META, (msg(1), msg(2)))])
    assert note.read_text(encoding="utf-8") == saved, "the save is kept"
    assert report.written == [] and report.warnings == [f"{path}: changed on disk during the ingest; left alone (run the ingest again)"]
    assert [p.name for p in note.parent.iterdir()] == [note.name], "no temporary file left"
