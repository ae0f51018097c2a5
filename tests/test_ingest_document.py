from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import snapshot_files, write
from vaultmind.config import load_config
from vaultmind.errors import IngestError, VaultError
from vaultmind.ingest.detect import ingest_paths
from vaultmind.ingest.document import parse_document_paths_with_report
from vaultmind.ingest.html import html_document, html_to_text
from vaultmind.ingest.model import DocumentInput
from vaultmind.ingest.writer import write_documents
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.markdown.obsidian import parse_obsidian
from vaultmind.memory import Memory


def put(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


# --- HTML → text ----------------------------------------------------------------------------


def test_html_structure() -> None:
    title, h1, text = html_document(
        "<html><head><title>Page</title><style>h1{}</style></head><body>"
        "<h1>Q3 <i>report</i></h1><p>Revenue grew<br>12 %.</p>"
        "<h2>Links</h2><p><a href='https://example.com/a'>docs</a>, <a href='https://example.com'>"
        "https://example.com</a>, <a href='mailto:bob@example.com'>bob@example.com</a>, "
        "<a href='mailto:bob@example.com'>Bob</a>, <a href='#top'>top</a></p>"
        "<ul><li>one<ul><li>nested</li></ul></li><li>two</li></ul><ol><li>first</li><li>second</li></ol>"
        "<pre>def f():\n    return 1</pre><table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>"
        "<blockquote><p>quoted</p><p>twice</p></blockquote><hr><p>after&nbsp;&amp;\u200b done</p>"
        "<!-- a comment --><script>var x = '<p>no</p>';</script></body></html>"
    )
    assert (title, h1) == ("Page", "Q3 report")
    assert text == (
        "# Q3 report\n\nRevenue grew\n12 %.\n\n## Links\n\n"
        "docs (https://example.com/a), https://example.com, bob@example.com, Bob (bob@example.com), top\n\n"
        "- one\n  - nested\n- two\n\n1. first\n2. second\n\n```\ndef f():\n    return 1\n```\n\n"
        "| A | B |\n| --- | --- |\n| 1 | 2 |\n\n> quoted\n>\n> twice\n\n---\n\nafter & done"
    )


def test_html_is_tolerant() -> None:
    assert (
        html_to_text("<p>unclosed <b>bold <div>block</p></i></table>text") == "unclosed bold\nblock\n\ntext"
    )
    assert html_to_text("plain & simple") == "plain & simple"
    assert html_to_text("") == ""
    assert html_to_text("<div>a</div><div><br></div><div>b</div>") == "a\n\nb"
    assert html_to_text("<pre>x</pre>", fences=False) == "x"


# --- documents ------------------------------------------------------------------------------


def test_markdown_text_and_html_documents(tmp_path: Path) -> None:
    root = tmp_path / "Team Docs"
    put(
        root / "q3 report.md",
        "---\ntitle: Q3 report\nsource_ref: gdrive://file/1AbC\ntags: [finance]\n---\n"
        "# Something else\r\n\r\nRevenue grew 12 %.\r\n",
    )
    put(root / "notes" / "todo.txt", "buy milk\n  - keep indent\n")
    put(root / "notes" / "page.html", "<title>Intranet page</title><h1>Welcome</h1><p>Hi.</p>")
    put(root / "notes" / "heading.md", "intro\n\n```\n# not a heading\n```\n# Real heading\n")
    put(root / "notes" / ".hidden.md", "secret")
    put(root / ".obsidian" / "x.md", "config")
    put(root / "image.png", b"\x89PNG")
    docs, warnings = parse_document_paths_with_report([root])
    assert warnings == [f"{root / 'image.png'}: not a document (.md, .markdown, .txt, .html, .htm); skipped"]
    by_id = {d.source_id: d for d in docs}
    assert list(by_id) == [
        "doc:team-docs/notes/heading",
        "doc:team-docs/notes/page",
        "doc:team-docs/notes/todo",
        "doc:team-docs/q3-report",
    ]
    report = by_id["doc:team-docs/q3-report"]
    assert report.title == "Q3 report"
    assert report.body == "# Something else\n\nRevenue grew 12 %.\n"
    assert report.scope == "files/team-docs"
    assert report.source_ref == "gdrive://file/1AbC"
    assert report.modified is not None and report.modified.endswith("Z")
    todo = by_id["doc:team-docs/notes/todo"]
    assert (todo.title, todo.body, todo.scope) == (
        "todo",
        "buy milk\n  - keep indent\n",
        "files/team-docs/notes",
    )
    page = by_id["doc:team-docs/notes/page"]
    assert (page.title, page.body) == ("Intranet page", "# Welcome\n\nHi.")
    assert by_id["doc:team-docs/notes/heading"].title == "Real heading"
    # a file given directly: its id and scope come from its own folder
    [single] = parse_document_paths_with_report([root / "notes" / "todo.txt"])[0]
    assert (single.source_id, single.scope) == ("doc:notes/todo", "files/notes")


def test_front_matter_source_id_and_collisions(tmp_path: Path) -> None:
    put(tmp_path / "d" / "a.md", "---\nsource_id: notion:page/42\n---\nBody\n")
    put(tmp_path / "d" / "b.md", "# B\n")
    put(tmp_path / "d" / "b.txt", "b as text\n")
    put(tmp_path / "d" / "bad.md", "---\ntitle: [unclosed\n---\nStill read.\n")
    put(tmp_path / "d" / "latin.txt", "café".encode("cp1252"))
    docs, warnings = parse_document_paths_with_report([tmp_path / "d"])
    assert [d.source_id for d in docs] == ["notion:page/42", "doc:d/b-md", "doc:d/b-txt", "doc:d/bad", "doc:d/latin"]
    assert docs[3].body == "Still read.\n"
    assert docs[4].body == "café"
    assert any("front matter" in w for w in warnings) and any("not UTF-8" in w for w in warnings)


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no such file"):
        parse_document_paths_with_report([tmp_path / "nope.md"])
    with pytest.raises(IngestError, match="not a document"):
        parse_document_paths_with_report([put(tmp_path / "x.pdf", b"%PDF")])
    (tmp_path / "empty").mkdir()
    assert parse_document_paths_with_report([tmp_path / "empty"]) == ([], [])  # (an ingest says so: `detect`)


@pytest.mark.slow
def test_reingest_replaces_on_change_only(tmp_path: Path, vault: Path, memory: Memory) -> None:
    source = put(tmp_path / "docs" / "plan.md", "# Plan\n\nShip on Friday.\n")
    first = write_documents(vault, parse_document_paths_with_report([tmp_path / "docs"])[0])
    assert len(first.written) == 1
    note = first.written[0]
    assert note.startswith("sources/document/files/docs/")
    memory.sync()
    before = memory.index.query("SELECT text FROM leaves WHERE note_path = ? ORDER BY seq", [note])
    assert any("Ship on Friday." in t for (t,) in before)

    os.utime(source, (1_700_000_000, 1_700_000_000))  # touched, same content: a no-op
    same = write_documents(vault, parse_document_paths_with_report([tmp_path / "docs"])[0])
    assert same.written == [] and same.unchanged == [note]

    put(source, "# Plan\n\nShip on Monday instead.\n")
    changed = write_documents(vault, parse_document_paths_with_report([tmp_path / "docs"])[0])
    assert changed.written == [note] and changed.documents_replaced == 1
    assert "version: 2" in (vault / note).read_text(encoding="utf-8")
    memory.sync()
    after = [
        t for (t,) in memory.index.query("SELECT text FROM leaves WHERE note_path = ? ORDER BY seq", [note])
    ]
    assert any("Ship on Monday instead." in t for t in after)
    assert not any("Friday" in t for t in after)


def test_two_files_of_one_name_in_two_folders_are_two_documents(tmp_path: Path, vault: Path) -> None:
    """`a/README.md` and `b/README.md` (even with the same text) are two documents with two ids,
    so their leaves have two ids and both can be cited."""
    for folder in ("a", "b"):
        put(tmp_path / folder / "README.md", "# Plan\n\nThe flumox adapter ships by 30 June.\n")
        write_documents(vault, parse_document_paths_with_report([tmp_path / folder / "README.md"])[0])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        rows = memory.index.query("SELECT n.source_id, count(DISTINCT l.id) FROM leaves l JOIN notes n ON n.path = l.note_path GROUP BY ALL ORDER BY ALL")
        assert rows == [("doc:a/readme", 1), ("doc:b/readme", 1)], rows
        assert memory.index.scalar("SELECT count(DISTINCT id) FROM leaves") == 2


def test_a_document_ingested_under_the_old_id_is_found_again(tmp_path: Path, vault: Path) -> None:
    """A note written when a document's id was its path below the given folder (`doc:plan`)
    keeps that id: the same file is unchanged, a changed one is its next version."""
    put(tmp_path / "docs" / "plan.md", "# Plan\n\nFirst draft.\n")
    [doc] = parse_document_paths_with_report([tmp_path / "docs" / "plan.md"])[0]
    assert (doc.source_id, doc.legacy_source_id) == ("doc:docs/plan", "doc:plan")
    write_documents(vault, [replace(doc, source_id="doc:plan", legacy_source_id=None)])  # as written before
    assert write_documents(vault, [doc]).written == []
    put(tmp_path / "docs" / "plan.md", "# Plan\n\nSecond draft.\n")
    report = write_documents(vault, parse_document_paths_with_report([tmp_path / "docs" / "plan.md"])[0])
    assert report.documents_replaced == 1 and len(report.written) == 1
    text = (vault / report.written[0]).read_text(encoding="utf-8")
    assert 'source_id: "doc:plan"' in text and "version: 2" in text and "Second draft." in text


def test_a_file_without_text_is_skipped_with_a_warning(tmp_path: Path) -> None:
    put(tmp_path / "d" / "empty.md", "")
    put(tmp_path / "d" / "blank.txt", "  \n\n")
    put(tmp_path / "d" / "props.md", "---\ntitle: Only properties\n---\n")
    put(tmp_path / "d" / "real.md", "# Real\n\nSomething to keep.\n")
    docs, warnings = parse_document_paths_with_report([tmp_path / "d"])
    assert [d.source_id for d in docs] == ["doc:d/real"]
    assert sorted(w.rsplit("/", 1)[-1] for w in warnings) == ["blank.txt: no text; skipped", "empty.md: no text; skipped", "props.md: no text; skipped"]


def _documents(vault: Path) -> dict[str, str]:
    """source_id → the text of its note, for every document note of the vault."""
    out = {}
    for path in sorted((vault / "sources" / "document").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        [ident] = [line.split(": ", 1)[1].strip('"') for line in text.splitlines() if line.startswith("source_id: ")]
        out[ident] = text
    return out


def test_a_file_of_another_folder_of_the_same_name_never_replaces_a_document(tmp_path: Path, vault: Path) -> None:
    """`work/meeting-notes/2024-05-06.md` and `home/meeting-notes/2024-05-06.md` share their
    derived id; ingested one after the other, the second had replaced the first as its version 2."""
    work = put(tmp_path / "work" / "meeting-notes" / "2024-05-06.md", "# Weekly sync\n\nWe switch CI to the new runners.\n")
    home = put(tmp_path / "home" / "meeting-notes" / "2024-05-06.md", "# Parent-teacher meeting\n\nFractions need practice.\n")
    write_documents(vault, parse_document_paths_with_report([work.parent])[0])
    second = write_documents(vault, parse_document_paths_with_report([home.parent])[0])
    assert second.documents_replaced == 0 and len(second.written) == 1
    assert any("holds another file" in w for w in second.warnings)
    notes = _documents(vault)
    assert sorted(notes) == ["doc:meeting-notes/2024-05-06", "doc:meeting-notes/2024-05-06~2"]
    assert "new runners" in notes["doc:meeting-notes/2024-05-06"]
    assert "Fractions" in notes["doc:meeting-notes/2024-05-06~2"]
    assert f'source_ref: "{home.resolve().as_uri()}"' in notes["doc:meeting-notes/2024-05-06~2"]

    for folder in (work.parent, home.parent):  # again: each finds its own note
        again = write_documents(vault, parse_document_paths_with_report([folder])[0])
        assert again.written == [] and again.warnings == []
    put(home, "# Parent-teacher meeting\n\nFractions need practice, and spelling.\n")
    changed = write_documents(vault, parse_document_paths_with_report([home.parent])[0])
    assert changed.documents_replaced == 1
    notes = _documents(vault)
    assert "spelling" in notes["doc:meeting-notes/2024-05-06~2"] and "version: 2" in notes["doc:meeting-notes/2024-05-06~2"]
    assert "new runners" in notes["doc:meeting-notes/2024-05-06"] and "version: 1" in notes["doc:meeting-notes/2024-05-06"]


def test_both_files_of_one_id_in_one_ingest_are_kept(tmp_path: Path, vault: Path) -> None:
    a = put(tmp_path / "a" / "notes" / "plan.md", "# Plan A\n\nAlpha.\n")
    b = put(tmp_path / "b" / "notes" / "plan.md", "# Plan B\n\nBeta.\n")
    report = write_documents(vault, parse_document_paths_with_report([a.parent, b.parent])[0])
    assert len(report.written) == 2
    notes = _documents(vault)
    assert sorted(notes) == ["doc:notes/plan", "doc:notes/plan~2"]
    assert "Alpha." in notes["doc:notes/plan"] and "Beta." in notes["doc:notes/plan~2"]


def test_an_earlier_id_of_another_file_is_not_taken_for_this_one(tmp_path: Path, vault: Path) -> None:
    """`archive/2024/notes.md` ingested from `archive` has the earlier-style id `doc:2024/notes`,
    which is the current id of `2024/notes.md` ingested from `2024`: not the same document."""
    tax = put(tmp_path / "2024" / "notes.md", "# Tax return 2024\n\nFiled on time.\n")
    old = put(tmp_path / "archive" / "2024" / "notes.md", "# Old archive note\n\nBoxes in the attic.\n")
    write_documents(vault, parse_document_paths_with_report([tax.parent])[0])
    report = write_documents(vault, parse_document_paths_with_report([old.parent.parent])[0])
    assert report.documents_replaced == 0 and report.warnings == []
    notes = _documents(vault)
    assert sorted(notes) == ["doc:2024/notes", "doc:archive/2024/notes"]
    assert "Filed on time." in notes["doc:2024/notes"]


def test_a_moved_file_is_the_same_document(tmp_path: Path, vault: Path) -> None:
    """A file whose recorded place is gone was moved: its next ingest is its next version."""
    before = put(tmp_path / "old" / "docs" / "plan.md", "# Plan\n\nFirst draft.\n")
    write_documents(vault, parse_document_paths_with_report([before.parent])[0])
    after = tmp_path / "new" / "docs" / "plan.md"
    after.parent.mkdir(parents=True)
    before.rename(after)
    put(after, "# Plan\n\nSecond draft.\n")
    report = write_documents(vault, parse_document_paths_with_report([after.parent])[0])
    assert report.documents_replaced == 1
    notes = _documents(vault)
    assert list(notes) == ["doc:docs/plan"]
    assert "Second draft." in notes["doc:docs/plan"] and f'source_ref: "{after.resolve().as_uri()}"' in notes["doc:docs/plan"]


def test_a_note_written_without_its_file_learns_it_without_a_new_version(tmp_path: Path, vault: Path) -> None:
    """Notes written before documents recorded their file: the same content is no new version,
    but the note records its file, so a same-named file of another folder is told apart."""
    source = put(tmp_path / "work" / "docs" / "plan.md", "# Plan\n\nFirst draft.\n")
    [doc] = parse_document_paths_with_report([source.parent])[0]
    assert doc.source_ref == source.resolve().as_uri()
    write_documents(vault, [replace(doc, source_ref=None)])
    report = write_documents(vault, [doc])
    assert len(report.written) == 1 and report.documents_replaced == 0
    text = (vault / report.written[0]).read_text(encoding="utf-8")
    assert "version: 1" in text and source.resolve().as_uri() in text
    assert write_documents(vault, [doc]).written == []
    other = put(tmp_path / "home" / "docs" / "plan.md", "# Plan\n\nThe garden plan.\n")
    assert write_documents(vault, parse_document_paths_with_report([other.parent])[0]).documents_replaced == 0
    assert sorted(_documents(vault)) == ["doc:docs/plan", "doc:docs/plan~2"]


def test_a_file_whose_other_name_holder_is_gone_keeps_its_own_note(tmp_path: Path, vault: Path) -> None:
    """Two same-named files, `<id>` and `<id>~2`; the first is deleted (or its drive not
    mounted): ingesting the second again had taken over the first's note."""
    work = put(tmp_path / "work" / "meeting-notes" / "q3.md", "# Q3 work\n\nWork planning.\n")
    home = put(tmp_path / "home" / "meeting-notes" / "q3.md", "# Q3 home\n\nRenovation plans.\n")
    write_documents(vault, parse_document_paths_with_report([work.parent])[0])
    write_documents(vault, parse_document_paths_with_report([home.parent])[0])
    work.unlink()
    again = write_documents(vault, parse_document_paths_with_report([home.parent])[0])
    assert again.written == [] and again.documents_replaced == 0
    notes = _documents(vault)
    assert "Work planning." in notes["doc:meeting-notes/q3"] and "Renovation" in notes["doc:meeting-notes/q3~2"]


def test_a_moved_or_copied_folder_is_no_new_version_nor_a_new_document(tmp_path: Path, vault: Path) -> None:
    source = put(tmp_path / "work" / "meeting-notes" / "q3.md", "# Q3\n\nWork planning.\n")
    write_documents(vault, parse_document_paths_with_report([source.parent])[0])
    copy = tmp_path / "backup" / "meeting-notes"
    copy.mkdir(parents=True)
    (copy / "q3.md").write_bytes(source.read_bytes())
    copied = write_documents(vault, parse_document_paths_with_report([copy])[0])
    assert copied.written == [] and list(_documents(vault)) == ["doc:meeting-notes/q3"], "the same text: the same document"
    moved = tmp_path / "archive" / "meeting-notes"
    moved.parent.mkdir()
    source.parent.rename(moved)
    report = write_documents(vault, parse_document_paths_with_report([moved])[0])
    assert len(report.written) == 1 and report.documents_replaced == 0
    text = _documents(vault)["doc:meeting-notes/q3"]
    assert "version: 1" in text and (moved / "q3.md").resolve().as_uri() in text


def test_a_source_id_a_file_gives_itself_is_one_document_whichever_file_holds_it(tmp_path: Path, vault: Path) -> None:
    old = put(tmp_path / "v1" / "plan.md", "---\nsource_id: notion:page/42\n---\n# Plan\n\nFirst draft.\n")
    new = put(tmp_path / "v2" / "plan.md", "---\nsource_id: notion:page/42\n---\n# Plan\n\nSecond draft.\n")
    write_documents(vault, parse_document_paths_with_report([old])[0])
    report = write_documents(vault, parse_document_paths_with_report([new])[0])
    assert report.documents_replaced == 1 and list(_documents(vault)) == ["notion:page/42"]
    assert "Second draft." in _documents(vault)["notion:page/42"]


def test_in_one_ingest_a_copy_is_one_document_and_a_given_id_one_note(tmp_path: Path, vault: Path) -> None:
    a = put(tmp_path / "a" / "meeting-notes" / "q4.md", "# Q4\n\nPlanning.\n")
    b = put(tmp_path / "b" / "meeting-notes" / "q4.md", "# Q4\n\nPlanning.\n")
    write_documents(vault, parse_document_paths_with_report([a.parent, b.parent])[0])
    assert list(_documents(vault)) == ["doc:meeting-notes/q4"], "the same text twice: one document"
    v1 = put(tmp_path / "v1" / "travel.md", "---\nsource_id: policy:travel\n---\n# Travel\n\nOld rules.\n")
    v2 = put(tmp_path / "v2" / "travel-2025.md", "---\nsource_id: policy:travel\n---\n# Travel\n\nNew rules.\n")
    report = write_documents(vault, parse_document_paths_with_report([v1, v2])[0])
    assert any("given more than once" in w for w in report.warnings)
    notes = _documents(vault)
    assert "New rules." in notes["policy:travel"] and sum(1 for i in notes if i == "policy:travel") == 1
    assert len(list((vault / "sources" / "document").rglob("*.md"))) == 2


def test_a_file_with_control_characters_is_unchanged_by_the_same_ingest(tmp_path: Path, vault: Path) -> None:
    """A form feed or a vertical tab is not written into the note: the same file had been a new
    version at every ingest."""
    put(tmp_path / "ctrl" / "ff.txt", "Page one.\fPage two.\vEnd.\x00\n")
    first = write_documents(vault, parse_document_paths_with_report([tmp_path / "ctrl"])[0])
    assert len(first.written) == 1
    again = write_documents(vault, parse_document_paths_with_report([tmp_path / "ctrl"])[0])
    assert again.written == [] and again.documents_replaced == 0


def test_a_file_is_found_again_given_alone_or_renamed(tmp_path: Path, vault: Path) -> None:
    """Its folder ingested, then the file given alone (another derived id), or renamed within the
    folder: the same document, not a second note."""
    report = put(tmp_path / "team" / "notes" / "q3-report.md", "# Q3\n\nRevenue grew 12 %.\n")
    write_documents(vault, parse_document_paths_with_report([tmp_path / "team"])[0])
    alone = write_documents(vault, parse_document_paths_with_report([report])[0])
    assert alone.written == [] and list(_documents(vault)) == ["doc:team/notes/q3-report"]
    renamed = report.with_name("q3-final.md")
    report.rename(renamed)
    again = write_documents(vault, parse_document_paths_with_report([tmp_path / "team"])[0])
    assert again.documents_replaced == 0 and list(_documents(vault)) == ["doc:team/notes/q3-report"]
    text = _documents(vault)["doc:team/notes/q3-report"]
    assert renamed.resolve().as_uri() in text and "version: 1" in text


def test_a_symlinked_file_given_alone_is_the_file_it_links_to(tmp_path: Path, vault: Path) -> None:
    """`inbox/plan.md` → `Work/q3-report.md`, given alone, was named by the link's name and the
    target's folder (`doc:work/plan`, titled "plan"): neither file. It is the file it links to,
    the document its target given directly (or its folder) is, and its note written under the
    old id is found again by its place, not written twice."""
    target = put(tmp_path / "Work" / "q3-report.md", "Revenue grew 12 %.\n")
    put(tmp_path / "Work" / "budget.md", "# Budget\n\nTravel is capped.\n")
    (tmp_path / "inbox").mkdir()
    link = tmp_path / "inbox" / "plan.md"
    link.symlink_to(target)
    [doc] = parse_document_paths_with_report([link])[0]
    assert (doc.source_id, doc.scope, doc.title) == ("doc:work/q3-report", "files/work", "q3-report")
    assert parse_document_paths_with_report([target])[0] == [doc]
    (tmp_path / "inbox" / "costs.md").symlink_to(tmp_path / "Work" / "budget.md")
    [budget] = parse_document_paths_with_report([tmp_path / "inbox" / "costs.md"])[0]
    assert (budget.source_id, budget.title) == ("doc:work/budget", "Budget")
    write_documents(vault, [replace(budget, source_id="doc:work/costs")])  # as written before
    again = write_documents(vault, parse_document_paths_with_report([tmp_path / "inbox" / "costs.md"])[0])
    assert again.written == [] and list(_documents(vault)) == ["doc:work/costs"], "ids already written stay"


def test_a_note_vaultmind_wrote_is_no_document(tmp_path: Path, vault: Path) -> None:
    """A vault (or a backup of one) given as documents: its source, summary and entity notes are
    vaultmind's own, and their `source_id` had replaced the current version of a document."""
    put(tmp_path / "backup" / "sources" / "document" / "plan.md", "---\nvaultmind: source\nkind: document\nsource_id: \"doc:x/plan\"\n---\n# Plan\n\nOld.\n")
    put(tmp_path / "backup" / "notes" / "mine.md", "# Mine\n\nMy own words.\n")
    docs, warnings = parse_document_paths_with_report([tmp_path / "backup"])
    assert [d.title for d in docs] == ["Mine"]
    assert any("a note vaultmind wrote" in w and "plan.md" in w for w in warnings)


def test_a_document_over_the_size_limit_is_left_out_and_the_others_ingested(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import vaultmind.ingest.document as document

    monkeypatch.setattr(document, "MAX_DOCUMENT_BYTES", 100)
    put(tmp_path / "d" / "big.txt", "x " * 200)
    put(tmp_path / "d" / "small.txt", "Small and kept.\n")
    docs, warnings = parse_document_paths_with_report([tmp_path / "d"])
    assert [d.title for d in docs] == ["small"]
    assert any("big.txt" in w and "limit for a document" in w for w in warnings)


def test_utf16_and_utf32_documents_are_read_as_text_and_a_binary_file_is_skipped(tmp_path: Path, vault: Path) -> None:
    """What Windows Notepad saves as "Unicode" (UTF-16 with a byte order mark), the same without
    the mark, and UTF-32, were read as Windows-1252 (or as UTF-8 with its NULs dropped): garbage
    around the words, a lost "é". A file that truly is binary is left out, with a warning."""
    folder = tmp_path / "docs"
    put(folder / "notepad.txt", "Café budget\r\nAlice prefers Tuesday.\r\n".encode("utf-16"))
    put(folder / "plain.md", "# Zoë's plan\n\nBob owns the roadmap, naïvely.\n".encode("utf-16-le"))
    put(folder / "big-endian.md", "# Résumé\n\nThe launch is in June.\n".encode("utf-16-be"))
    put(folder / "wide.txt", "Straße UTF-32 text.\n".encode("utf-32"))
    put(folder / "image.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00" * 8)
    docs, warnings = parse_document_paths_with_report([folder])
    got = {doc.source_id.rsplit("/", 1)[-1]: (doc.title, doc.body) for doc in docs}
    assert got == {
        "big-endian": ("Résumé", "# Résumé\n\nThe launch is in June.\n"),
        "notepad": ("notepad", "Café budget\nAlice prefers Tuesday.\n"),
        "plain": ("Zoë's plan", "# Zoë's plan\n\nBob owns the roadmap, naïvely.\n"),
        "wide": ("wide", "Straße UTF-32 text.\n"),
    }
    assert warnings == [f"{folder / 'image.txt'}: looks like a binary file (NUL or control bytes), not text; skipped (if it is text, save it as UTF-8 to ingest it)"]
    report = write_documents(vault, docs)
    note = (vault / "sources/document/files/docs/notepad.md").read_text(encoding="utf-8")
    assert note.endswith("# notepad\n\nCafé budget\nAlice prefers Tuesday.\n") and len(report.written) == 4
    # still Windows-1252 when not UTF-8 and no wider encoding either
    put(folder / "legacy.txt", "Caf\xe9 au lait".encode("cp1252"))
    docs, warnings = parse_document_paths_with_report([folder / "legacy.txt"])
    assert docs[0].body == "Café au lait" and warnings == [f"{folder / 'legacy.txt'}: not UTF-8; read as Windows-1252"]


GREEK = "Καλημέρα κόσμε. Η συνάντηση είναι την Τρίτη στις 10:00.\nΦέρτε τον προϋπολογισμό.\n"
CJK = "会议在星期二举行。我们讨论预算。\n東京で会いましょう。一緒に上野へ。\n"


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_mark_of_another_script_is_text_not_binary(tmp_path: Path, encoding: str) -> None:
    """Greek or CJK in UTF-16 without a byte order mark has few NULs (its spaces, line breaks,
    digits): it was "a binary file", skipped, with advice to convert a `.txt` to `.txt`. Binary
    files stay binary, said with advice that fits them."""
    from vaultmind.vault.read import decode_note

    folder = tmp_path / "docs"
    put(folder / "greek.txt", GREEK.encode(encoding))
    put(folder / "cjk.md", CJK.encode(encoding))
    put(folder / "cut.txt", GREEK.encode(encoding) + b"\x03")  # one byte left over
    put(folder / "image.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00" * 8)
    put(folder / "doc.pdf.txt", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Length 40 >>\nstream\n" + bytes(range(256)) + b"\nendstream\n")
    docs, warnings = parse_document_paths_with_report([folder])
    got = {doc.source_id.rsplit("/", 1)[-1]: doc.body for doc in docs}
    assert got == {"cjk": CJK, "cut": GREEK + "\ufffd", "greek": GREEK}
    name = encoding.upper()
    assert warnings == [
        f"{folder / 'cut.txt'}: {name} text, but byte {len(GREEK.encode(encoding))} is not {name}; read with replacement characters",
        f"{folder / 'doc.pdf.txt'}: looks like a binary file (NUL or control bytes), not text; skipped (if it is text, save it as UTF-8 to ingest it)",
        f"{folder / 'image.txt'}: looks like a binary file (NUL or control bytes), not text; skipped (if it is text, save it as UTF-8 to ingest it)",
    ]
    text, problem = decode_note("greek.md", ("---\ntitle: Σημειώσεις\n---\n" + GREEK).encode(encoding))
    assert text is not None and text.endswith(GREEK) and problem is not None and problem.kind == "utf16"


JAPANESE = (
    "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所で"
    "ニャーニャー泣いていた事だけは記憶している。吾輩はここで始めて人間というものを見た。\n"
)
CHINESE_LINE = "我们明天在北京见面讨论项目预算"
LEGACY = {  # East Asian text in its legacy code page: not UTF-8, no NUL, and its pairs read as UTF-16 give ideographs or Hangul
    "gb2312": "会议在星期二举行，请大家准时参加。这个季度的销售额比去年同期增长了百分之十五。",
    "big5": "會議在星期二舉行，請大家準時參加。這個季度的銷售額比去年同期增長了百分之十五。",
    "shift_jis": "明日の会議は午前十時から始まります。資料は事前に共有フォルダに入れておいてください。",
    "euc_kr": "내일 회의는 오전 열 시에 시작합니다. 자료는 미리 공유 폴더에 넣어 주세요.",
}


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_cjk_without_a_mark_or_a_nul_is_text_and_legacy_code_pages_are_not_utf16(tmp_path: Path, encoding: str) -> None:
    """Japanese prose in UTF-16 without a byte order mark (its kana are pairs of ASCII bytes, "0B",
    and its one NUL is a line break's) was "a binary file"; a line of Chinese with no ASCII
    character (no NUL at all) was read as Windows-1252 garbage. Both are read as UTF-16, as
    documents and as vault notes. East Asian text in its legacy code page (whose byte pairs read
    as UTF-16 give ideographs or Hangul too, read in its code page) and Windows-1252 Latin text
    are not taken for it."""
    from vaultmind.vault.read import decode_note

    folder = tmp_path / "docs"
    put(folder / "neko.txt", JAPANESE.encode(encoding))
    put(folder / "line.txt", CHINESE_LINE.encode(encoding))
    for codec, text in LEGACY.items():
        put(folder / f"{codec}.txt", text.encode(codec))
    put(folder / "latin.txt", "Müller's Straße: résumé, naïve façade, déjà vu, piña, crêpes, garçon.".encode("cp1252"))
    docs, warnings = parse_document_paths_with_report([folder])
    got = {doc.source_id.rsplit("/", 1)[-1]: doc.body for doc in docs}
    assert got["neko"] == JAPANESE and got["line"] == CHINESE_LINE
    assert {name: got[name] for name in LEGACY} == LEGACY
    read_as = {"big5": "Big5", "euc_kr": "EUC-KR", "gb2312": "GB18030", "latin": "Windows-1252", "shift_jis": "Shift JIS"}
    assert warnings == [f"{folder / name}.txt: not UTF-8; read as {said}" for name, said in read_as.items()]
    for name, text in (("neko.md", JAPANESE), ("line.md", CHINESE_LINE)):
        read, problem = decode_note(name, text.encode(encoding))
        assert read == text and problem is not None and problem.kind == "utf16"
    for codec, text in LEGACY.items():
        read, problem = decode_note(f"{codec}.md", text.encode(codec))
        assert read == text and problem is not None and problem.kind == "not_utf8", codec


EUROPEAN = {  # a few words of European text in an 8-bit code page, whose bytes also pair as East Asian text or UTF-16
    "de": ("cp1252", "# ÄÖÜß\n"),
    "ru": ("cp1251", "Привет, мир"),
    "ru_caps": ("cp1251", "# ПРОТОКОЛ\n\nДА"),
    "koi8": ("koi8_r", "ДА НЕТ"),
    "el": ("cp1253", "Ελλάδα"),
    "el_caps": ("cp1253", "ΣΗΜΕΙΩΣΕΙΣ"),
    "tr": ("cp1254", "ĞÜŞİÖÇ HASTA"),
    "pl": ("cp1250", "Zażółć"),
    "hu": ("cp1250", "GYŐR, ŐRÜLT ŐSZI,"),
    "ro": ("cp1250", "ţara, Înţeleg şi"),
    "mac": ("mac_roman", "BIENTÔT, ÉTÉ Ça m'a été très"),
}


def test_a_few_words_of_european_text_in_an_8_bit_code_page_are_not_read_as_east_asian(tmp_path: Path) -> None:
    """A few words of Cyrillic, Greek or accented Latin text in an 8-bit code page (Windows-1251,
    KOI8-R, Windows-1253, -1250, -1254, Mac Roman) pair as GB18030 ideographs ("МОСКВА" is
    three) or as UTF-16 CJK: they were read so, a document written as Chinese. Too few words to
    name their code page are read as before: Windows-1252 for a document, replacement
    characters for a note, both said; enough of them (`mac`: five) are read in theirs."""
    from vaultmind.vault.read import decode_note

    folder = tmp_path / "docs"
    for name, (codec, text) in EUROPEAN.items():
        put(folder / f"{name}.txt", text.encode(codec))
    docs, warnings = parse_document_paths_with_report([folder])
    got = {doc.source_id.rsplit("/", 1)[-1]: doc.body for doc in docs}
    few = {name: codec_text for name, codec_text in EUROPEAN.items() if name != "mac"}
    assert got == {name: text.encode(codec).decode("cp1252", errors="replace") for name, (codec, text) in few.items()} | {
        "mac": EUROPEAN["mac"][1]
    }
    said = {name: "Mac Roman" if name == "mac" else "Windows-1252" for name in EUROPEAN}
    assert warnings == [f"{folder / name}.txt: not UTF-8; read as {said[name]}" for name in sorted(EUROPEAN)]
    for name, (codec, text) in few.items():
        read, problem = decode_note(f"{name}.md", text.encode(codec))
        assert read == text.encode(codec).decode("utf-8", errors="replace"), name
        assert problem is not None and problem.message.startswith("not valid UTF-8"), name


EUROPEAN_PROSE = {  # a sentence or two of European text in its 8-bit code page
    "ru": ("cp1251", "Привет, как дела? Встреча завтра в десять, приходи вовремя."),
    "ru_koi8": ("koi8_r", "Привет, как дела? Встреча завтра в десять, приходи вовремя."),
    "el": ("cp1253", "Καλημέρα, η συνάντηση είναι αύριο το πρωί στο γραφείο."),
    "de": ("cp1252", "Grüße aus Köln: die Brücke über den Fluß ist schön, sagt Jürgen."),
    "pl": ("cp1250", "Zażółć gęślą jaźń, spotkanie jest jutro w biurze o ósmej, proszę przyjść."),
}


def test_cyrillic_greek_or_latin_text_in_an_8_bit_code_page_keeps_its_letters(tmp_path: Path) -> None:
    """A note in Windows-1251 or KOI8-R lost every letter (each a replacement character): a
    sentence or more of European text in an 8-bit code page is read in it, as a note (said, the
    file untouched) and as a document."""
    from vaultmind.vault.read import decode_note

    folder = tmp_path / "docs"
    for name, (codec, text) in EUROPEAN_PROSE.items():
        put(folder / f"{name}.txt", text.encode(codec))
        read, problem = decode_note(f"{name}.md", text.encode(codec))
        assert read == text and problem is not None and problem.kind == "not_utf8", name
        assert problem.message.startswith(("Windows-125", "KOI8-R")), problem.message
    got = {doc.source_id.rsplit("/", 1)[-1]: doc.body for doc in parse_document_paths_with_report([folder])[0]}
    assert got == {name: text for name, (_, text) in EUROPEAN_PROSE.items()}


UTF8_WITH_CONTROLS = {  # valid UTF-8 holding a control byte or a few: more than 5 % of a short text
    "bell": "e\u0301 n\u0303 combining\x07",
    "del": "Café crème\x7f\x7f\x7f",
    "backspace": "# Heading\n\n- [[link]] #tag\n\x08\x08𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math\x07\x07\x07",
    "scripts": "Русский текст\x1b[31mשלום עולם\x08\x08\x08Ελληνικά\x01\x02\x03",
}


def test_valid_utf8_holding_control_bytes_is_read_as_utf8_not_utf16(tmp_path: Path) -> None:
    """A short UTF-8 note or document holding a control byte (a bell, a DEL, a log's
    backspaces) and a character past ASCII was read as UTF-16 without a byte order mark: CJK
    garbage ("é ñ combining" with combining accents and a bell became "旌脠滌茠捯浢楮楮朇").
    Valid UTF-8 holding a multi-byte character is UTF-8."""
    from vaultmind.vault.read import decode_note

    folder = tmp_path / "docs"
    for name, text in UTF8_WITH_CONTROLS.items():
        put(folder / f"{name}.txt", text.encode("utf-8"))
        read, problem = decode_note(f"{name}.md", text.encode("utf-8"))
        assert (read, problem) == (text, None), name
    docs, warnings = parse_document_paths_with_report([folder])
    assert warnings == [] and len(docs) == len(UTF8_WITH_CONTROLS)


LEGACY_DOCUMENTS = {  # Markdown notes of each legacy code page, ASCII words among the East Asian ones
    "gbk": "# 会议记录\n\n- 时间: 2024-03-05 10:00\n- 地点: Room 301\n\nTODO: 发送 email 给 Bob，确认 API v2 的 deadline。\n",
    "gb18030": "# 周末\n\n我们在杭州吃了东坡肉和龙井虾仁，味道非常地道。\n",
    "cp950": "# 會議紀錄\n\n- 時間: 2024-03-05 10:00\n\nTODO: 寄 email 給 Bob，確認 API v2 的 deadline。\n",
    "cp932": "# 議事録\n\n- 日時: 2024-03-05 10:00\n\nTODO: Bobさんにemailを送って、API v2のdeadlineを確認する。\n",
    "euc_jp": "# 週末\n\n京都に行ってきました。天気がよくて、嵐山はとても混んでいました。\n",
    "cp949": "# 회의록\n\n- 일시: 2024-03-05 10:00\n\nTODO: Bob에게 email을 보내서 API v2 deadline을 확인하기.\n",
}


def test_documents_in_legacy_east_asian_code_pages_are_read_in_them(tmp_path: Path, vault: Path) -> None:
    """Chinese, Japanese and Korean documents in their legacy code page (GBK/GB18030, Big5,
    Shift JIS/CP932, EUC-JP, EUC-KR/CP949), ASCII words among theirs, were read as Windows-1252
    garbage. Each is read in its code page (said), titled by its heading and written as UTF-8."""
    folder = tmp_path / "legacy"
    for codec, text in LEGACY_DOCUMENTS.items():
        put(folder / f"{codec}.md", text.encode(codec))
    docs, warnings = parse_document_paths_with_report([folder])
    got = {doc.source_id.rsplit("/", 1)[-1]: (doc.title, doc.body) for doc in docs}
    assert got == {codec: (text.split("\n")[0][2:], text) for codec, text in LEGACY_DOCUMENTS.items()}
    said = {"cp932": "Shift JIS", "cp949": "EUC-KR", "cp950": "Big5", "euc_jp": "EUC-JP", "gb18030": "GB18030", "gbk": "GB18030"}
    assert warnings == [f"{folder / codec}.md: not UTF-8; read as {name}" for codec, name in sorted(said.items())]
    report = write_documents(vault, docs)
    notes = [(vault / path).read_text(encoding="utf-8") for path in report.written]
    assert len(notes) == 6 and any(note.endswith(LEGACY_DOCUMENTS["cp949"]) for note in notes)


def test_links_between_documents_resolve_by_their_file_names(tmp_path: Path, vault: Path) -> None:
    """A folder of Markdown documents that link each other (`[[Note A]]`, `[[Note A#Heading]]`,
    `![[Note A]]`) keeps its links working in Obsidian, which finds a link by file name only:
    each new note is named after its file as written (made safe), not the slug of its title.
    Re-ingesting is a no-op; a note written under its slug before takes its file's name (no
    second copy), when nothing links to it by the old one."""
    docs = tmp_path / "My Notes"
    put(docs / "Note A.md", "# Something else\n\n## Heading\n\nThe heron nests by the lake.\n")
    put(docs / "Index.md", "See [[Note A]], [[Note A#Heading]] and [[Plan- Q3]].\n\n![[Note A]]\n")
    put(docs / "Plan: Q3?.md", "Ship it.\n")  # `:` and `?` no file name on every system may hold
    put(docs / "Café [draft].txt", "Au lait.\n")
    put(docs / "CON.md", "Reserved on Windows.\n")  # `_` after a name Windows keeps for a device
    first = write_documents(vault, parse_document_paths_with_report([docs])[0])
    folder = "sources/document/files/My Notes"
    assert sorted(first.written) == [f"{folder}/{name}.md" for name in ("CON_", "Café -draft", "Index", "Note A", "Plan- Q3")]
    names = {Path(p).stem.casefold() for p in first.written}
    index = (vault / folder / "Index.md").read_text(encoding="utf-8")
    targets = [t.split("#")[0] for t in re.findall(r"\[\[([^\]|]+)", index)]
    assert targets == ["Note A", "Note A", "Plan- Q3", "Note A"]
    assert all(t.casefold() in names for t in targets)  # as Obsidian resolves them: by file name
    snapshot = {p: (vault / p).read_bytes() for p in first.written}
    again = write_documents(vault, parse_document_paths_with_report([docs])[0])
    assert again.written == [] and sorted(again.unchanged) == sorted(first.written)
    assert {p: (vault / p).read_bytes() for p in first.written} == snapshot

    # a note written under the slug of its title is found again by its id, not doubled, and
    # takes its file's name, its bytes as they were
    old = tmp_path / "old"
    put(old / "Note B.md", "# Note B\n\nFirst draft.\n")
    [doc] = parse_document_paths_with_report([old])[0]
    written = write_documents(vault, [replace(doc, name=None)]).written  # as written before
    assert written == ["sources/document/files/old/note-b.md"]
    before = (vault / written[0]).read_bytes()
    renamed = write_documents(vault, parse_document_paths_with_report([old])[0])
    named = "sources/document/files/old/Note B.md"
    assert (renamed.renamed, renamed.written, renamed.documents_replaced) == ([(written[0], named)], [named], 0)
    assert (vault / named).read_bytes() == before
    assert write_documents(vault, parse_document_paths_with_report([old])[0]).unchanged == [named]
    put(old / "Note B.md", "# Note B\n\nSecond draft.\n")
    assert write_documents(vault, parse_document_paths_with_report([old])[0]).written == [named]
    assert sorted(p.name for p in (vault / "sources/document/files/old").iterdir()) == ["Note B.md"]


def test_links_by_path_between_documents_resolve_as_obsidian_resolves_them(tmp_path: Path, vault: Path) -> None:
    """A link by path (`[[Meeting Notes/Note C]]`, Obsidian's form when two notes share a name,
    or a Markdown link `[c](Meeting%20Notes/Note%20C.md)`) finds its note by the end of its path:
    the folders of the notes are the documents' folders as written, not slugs (`meeting-notes/`
    found no `Meeting Notes/Note C`). Folders that differ from their slug in case only stay as
    earlier versions wrote them. Notes written into the slug folders before move to the
    folders as written when nothing would lose them; a link to the old path keeps its note."""
    docs = tmp_path / "Team Wiki"
    put(docs / "Index.md", "See [[Meeting Notes/Note C]], [c](Meeting%20Notes/Note%20C.md) and [[archive/Note C]].\n")
    put(docs / "Meeting Notes/Note C.md", "# Note C\n\nThe standup moved to ten.\n")
    put(docs / "Archive/Note C.md", "# Note C\n\nThe standup was at nine.\n")
    put(docs / "Meeting Notes/Note D.md", "# Note D\n\nRetro on Friday.\n")
    docs_read = parse_document_paths_with_report([docs])[0]
    old = write_documents(vault, [replace(doc, name=None, folders=()) for doc in docs_read])  # as written before
    base = "sources/document/files/team-wiki"
    assert sorted(old.written) == [f"{base}/{p}.md" for p in ("archive/note-c", "index", "meeting-notes/note-c", "meeting-notes/note-d")]
    put(vault / "Journal.md", "Read [[meeting-notes/note-d]] today.\n")
    again = write_documents(vault, parse_document_paths_with_report([docs])[0])
    new = "sources/document/files/Team Wiki"
    assert sorted(again.renamed) == [
        (f"{base}/archive/note-c.md", f"{new}/archive/Note C.md"),
        (f"{base}/index.md", f"{new}/Index.md"),
        (f"{base}/meeting-notes/note-c.md", f"{new}/Meeting Notes/Note C.md"),
    ], "note-d is linked by its old path: it stays"
    assert (vault / base / "meeting-notes/note-d.md").is_file() and again.documents_replaced == 0
    assert not (vault / base / "archive").exists(), "a folder its notes left is removed"
    stems = [p.relative_to(vault).as_posix()[:-3].casefold() for p in vault.rglob("*.md")]
    index = (vault / new / "Index.md").read_text(encoding="utf-8")
    links = [link.target for link in parse_obsidian(split_frontmatter(index).body).links]
    assert links == ["Meeting Notes/Note C", "Meeting Notes/Note C.md", "archive/Note C"]
    found = [[s for s in stems if s.endswith("/" + t.removesuffix(".md").casefold())] for t in links]
    assert found == [[f"{new}/meeting notes/note c".casefold()]] * 2 + [[f"{new}/archive/note c".casefold()]]
    assert write_documents(vault, parse_document_paths_with_report([docs])[0]).written == []


def test_a_note_named_by_an_earlier_version_keeps_its_name_when_renaming_is_not_safe(tmp_path: Path, vault: Path) -> None:
    """Of the notes an earlier version named by the slug of their title, one a note of the vault
    links to by that name (`[[note-c]]`), one you edited, and one you renamed keep their names:
    a rename outside Obsidian would break the link, and the others are yours. The one nothing
    links to takes its file's name, in the same ingest as it gains a new version."""
    docs = tmp_path / "old"
    for name in ("Note B", "Note C", "Note D", "Note E"):
        put(docs / f"{name}.md", f"# {name}\n\nFirst draft.\n")
    folder = vault / "sources/document/files/old"
    write_documents(vault, [replace(doc, name=None) for doc in parse_document_paths_with_report([docs])[0]])  # as written before
    put(vault / "Journal.md", "Read [[note-c|the C draft]] today.\n")
    edited = folder / "note-d.md"
    edited.write_text(edited.read_text(encoding="utf-8") + "My own line.\n", encoding="utf-8")
    (folder / "note-e.md").rename(folder / "E, my name.md")
    user_notes = {p: (vault / p).read_bytes() for p in ("Journal.md", f"{folder.relative_to(vault)}/note-d.md")}
    put(docs / "Note B.md", "# Note B\n\nSecond draft.\n")
    report = write_documents(vault, parse_document_paths_with_report([docs])[0])
    base = "sources/document/files/old"
    assert report.renamed == [(f"{base}/note-b.md", f"{base}/Note B.md")] and report.documents_replaced == 1
    assert "Second draft." in (folder / "Note B.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in folder.iterdir()) == ["E, my name.md", "Note B.md", "note-c.md", "note-d.md"]
    assert {p: (vault / p).read_bytes() for p in user_notes} == user_notes
    again = write_documents(vault, parse_document_paths_with_report([docs])[0])
    assert (again.renamed, again.written) == ([], [])


class Killed(BaseException):
    """The process killed at this point (nothing of the writer's catches it)."""


def _kill_at(monkeypatch: pytest.MonkeyPatch, step: str) -> None:
    """Kill the next ingest at `step` of moving a note: while writing it at its new place, after
    that, as it removes the old one (`unlink`), or after that, as it removes the folder it left
    empty (`rmdir`)."""
    import vaultmind.ingest.writer as writer

    def killed(*args: object, **kwargs: object) -> None:
        raise Killed(step)

    if step == "write":
        monkeypatch.setattr(writer, "write_atomic", killed)
    else:
        monkeypatch.setattr(Path, step, killed)


@pytest.mark.parametrize("step", ["write", "unlink"])
@pytest.mark.parametrize("changed", [False, True], ids=["same", "next-version"])
def test_an_ingest_killed_while_moving_a_note_leaves_one_note(
    tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch, step: str, changed: bool
) -> None:
    """A note an earlier version named by the slug of its title moves to its file's name by
    writing it there, then removing the old one. Killed in between, both were on disk and
    stayed: two notes with the same text and id. The next ingest finishes the move."""
    docs = tmp_path / "docs"
    put(docs / "Note A.md", "# Note A\n\nThe heron nests by the lake.\n")
    base = "sources/document/files/docs"
    assert write_documents(vault, [replace(d, name=None) for d in parse_document_paths_with_report([docs])[0]]).written == [f"{base}/note-a.md"]
    ident = split_frontmatter((vault / base / "note-a.md").read_text(encoding="utf-8")).data["source_id"]
    if changed:
        put(docs / "Note A.md", "# Note A\n\nThe heron left the lake.\n")
    with monkeypatch.context() as patch:
        _kill_at(patch, step)
        with pytest.raises(Killed):
            write_documents(vault, parse_document_paths_with_report([docs])[0])
    again = write_documents(vault, parse_document_paths_with_report([docs])[0])
    assert again.renamed == [(f"{base}/note-a.md", f"{base}/Note A.md")]
    assert sorted(p.name for p in (vault / base).iterdir()) == ["Note A.md"]
    note = split_frontmatter((vault / base / "Note A.md").read_text(encoding="utf-8"))
    assert note.data["version"] == (2 if changed else 1) and note.data["source_id"] == ident
    assert ("left the lake" if changed else "nests by the lake") in note.body
    assert write_documents(vault, parse_document_paths_with_report([docs])[0]).written == []


@pytest.mark.parametrize("changed", [False, True], ids=["same", "next-version"])
def test_a_killed_move_to_a_new_folder_of_a_note_that_names_its_id_is_finished(
    tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch, changed: bool
) -> None:
    """A file giving its `source_id` in its front matter is found by that id, in its folder first:
    an ingest killed while moving its note into the folder as written (`Meeting Notes/`) left the
    new note there and the old one in `meeting-notes/`, and the lookup found only the new one, so
    the move was never finished and both stayed. The next ingest removes the one left."""
    docs = tmp_path / "Team Wiki"
    put(docs / "Meeting Notes/Note C.md", "---\nsource_id: wiki:note-c\n---\n# Note C\n\nThe standup moved to ten.\n")
    old = write_documents(vault, [replace(doc, name=None, folders=()) for doc in parse_document_paths_with_report([docs])[0]])
    base, new = "sources/document/files/team-wiki", "sources/document/files/Team Wiki"
    assert old.written == [f"{base}/meeting-notes/note-c.md"]
    if changed:
        put(docs / "Meeting Notes/Note C.md", "---\nsource_id: wiki:note-c\n---\n# Note C\n\nThe standup is at eleven.\n")
    with monkeypatch.context() as patch:
        _kill_at(patch, "unlink")
        with pytest.raises(Killed):
            write_documents(vault, parse_document_paths_with_report([docs])[0])
    assert (vault / base / "meeting-notes/note-c.md").is_file() and (vault / new / "Meeting Notes/Note C.md").is_file()
    again = write_documents(vault, parse_document_paths_with_report([docs])[0])
    assert again.renamed == [(f"{base}/meeting-notes/note-c.md", f"{new}/Meeting Notes/Note C.md")]
    notes = sorted(p.relative_to(vault).as_posix() for p in (vault / "sources/document").rglob("*.md"))
    assert notes == [f"{new}/Meeting Notes/Note C.md"] and not (vault / base).exists()
    note = split_frontmatter((vault / new / "Meeting Notes/Note C.md").read_text(encoding="utf-8"))
    assert (note.data["source_id"], note.data["version"]) == ("wiki:note-c", 2 if changed else 1)
    assert ("at eleven" if changed else "moved to ten") in note.body
    assert write_documents(vault, parse_document_paths_with_report([docs])[0]).written == []



def _moving_note(tmp_path: Path, vault: Path, folder: str = "docs") -> tuple[list[DocumentInput], str]:
    """A document whose note an earlier version named by its title's slug: ingesting it again
    moves the note to its file's name. Returns the documents and the note's folder."""
    docs = tmp_path / folder
    put(docs / "Note A.md", "# Note A\n\nThe heron nests by the lake.\n")
    write_documents(vault, [replace(d, name=None) for d in parse_document_paths_with_report([docs])[0]])
    return parse_document_paths_with_report([docs])[0], f"sources/document/files/{folder}"


def test_two_ingests_moving_notes_at_once_keep_each_others_list(tmp_path: Path, vault: Path) -> None:
    """The list of the notes being moved (`sources/.moving`) is shared: an ingest that overwrote
    it, or removed it when done, dropped the moves of another running at once; and one whose list
    the other removed failed after writing all its notes (the file not found)."""
    docs, base = _moving_note(tmp_path, vault)
    listed = vault / "sources/.moving"
    other = "sources/document/files/other/b.md"
    put(vault / other, "# B\n\nAnother ingest moves this one.\n")
    listed.write_text(f"{other}\n", encoding="utf-8")
    seen: list[str] = []
    report = write_documents(
        vault, docs, progress=lambda phase, *_: seen.append(listed.read_text(encoding="utf-8")) if phase == "writing" else None
    )
    assert report.renamed == [(f"{base}/note-a.md", f"{base}/Note A.md")]
    assert seen[0] == f"{base}/note-a.md\n{other}\n", "both ingests' moves listed while moving"
    assert listed.read_text(encoding="utf-8") == f"{other}\n", "the other ingest's move stays listed"

    docs, base = _moving_note(tmp_path, vault, "notes")
    report = write_documents(  # the other, done
        vault, docs, progress=lambda phase, *_: listed.unlink(missing_ok=True) if phase == "writing" else None
    )
    assert report.renamed == [(f"{base}/note-a.md", f"{base}/Note A.md")] and not listed.exists()


def test_an_unreadable_list_of_moves_is_a_vault_error_with_a_hint(tmp_path: Path, vault: Path) -> None:
    """The list of moves is read as every note is: what it cannot be read as is the vault's error,
    with a hint, not a raw decoding error."""
    docs, base = _moving_note(tmp_path, vault)
    (vault / "sources/.moving").write_bytes(b"\xff\xfe sources/x.md\n")
    with pytest.raises(VaultError, match="list of moves") as raised:
        write_documents(vault, docs)
    assert raised.value.hint and (vault / base / "note-a.md").is_file()


def test_a_folder_a_killed_move_emptied_is_removed_by_the_next_ingest(
    tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move into the folder as written removes the old note, then the folders that left empty.
    Killed in between, the move was done (nothing for the next ingest to finish) and the empty
    folder stayed for good, listed in Obsidian. The next ingest removes it, and only it: an empty
    folder you made under `sources/` stays."""
    docs = tmp_path / "Team Wiki"
    put(docs / "Meeting Notes/Note C.md", "---\nsource_id: wiki:note-c\n---\n# Note C\n\nThe standup moved to ten.\n")
    write_documents(vault, [replace(doc, name=None, folders=()) for doc in parse_document_paths_with_report([docs])[0]])
    base, new = vault / "sources/document/files/team-wiki", vault / "sources/document/files/Team Wiki"
    mine = [vault / "sources/document/files/mine", new / "Empty"]
    for folder in mine:
        folder.mkdir(parents=True)
    with monkeypatch.context() as patch:
        _kill_at(patch, "rmdir")
        with pytest.raises(Killed):
            write_documents(vault, parse_document_paths_with_report([docs])[0])
    assert (new / "Meeting Notes/Note C.md").is_file() and list(base.rglob("*")) == [base / "meeting-notes"]
    again = write_documents(vault, parse_document_paths_with_report([docs])[0])
    assert (again.written, again.renamed) == ([], [])
    assert not base.exists() and all(folder.is_dir() for folder in mine)
    assert sorted(p.name for p in (vault / "sources").iterdir()) == ["document"]


def test_a_move_whose_old_note_cannot_be_removed_says_so_and_names_it(
    tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move writes the note at its new place, then removes the old one. When the removal fails,
    the error said "cannot write … 0 of 1 notes were written" and named the new note, which was
    written: it says the removal failed and names the note left."""
    from vaultmind.errors import VaultError

    docs = tmp_path / "docs"
    put(docs / "Note A.md", "# Note A\n\nThe heron nests by the lake.\n")
    base = "sources/document/files/docs"
    write_documents(vault, [replace(d, name=None) for d in parse_document_paths_with_report([docs])[0]])

    def refused(self: Path, missing_ok: bool = False) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    with monkeypatch.context() as patch:
        patch.setattr(Path, "unlink", refused)
        with pytest.raises(VaultError) as caught:
            write_documents(vault, parse_document_paths_with_report([docs])[0])
    assert caught.value.message == f"cannot remove the note moved to {base}/Note A.md (Permission denied)"
    assert caught.value.path == str(vault / base / "note-a.md")
    assert sorted(p.name for p in (vault / base).iterdir()) == ["Note A.md", "note-a.md"]
    assert write_documents(vault, parse_document_paths_with_report([docs])[0]).renamed == [(f"{base}/note-a.md", f"{base}/Note A.md")]



def test_a_note_a_killed_move_left_and_you_edited_stays(tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The note a killed move left at its old place is removed only as vaultmind wrote it: one
    you edited since is yours, and stays as you left it."""
    docs = tmp_path / "docs"
    put(docs / "Note A.md", "# Note A\n\nThe heron nests by the lake.\n")
    put(docs / "Note B.md", "# Note B\n\nThe otter swims in the river.\n")
    base = vault / "sources/document/files/docs"
    write_documents(vault, [replace(d, name=None) for d in parse_document_paths_with_report([docs])[0]])
    for doc in parse_document_paths_with_report([docs])[0]:  # each one's move killed
        with monkeypatch.context() as patch:
            _kill_at(patch, "unlink")
            with pytest.raises(Killed):
                write_documents(vault, [doc])
    assert sorted(p.name for p in base.iterdir()) == ["Note A.md", "Note B.md", "note-a.md", "note-b.md"]
    left = base / "note-b.md"
    left.write_text(left.read_text(encoding="utf-8") + "My own line.\n", encoding="utf-8")
    mine = left.read_bytes()
    again = write_documents(vault, parse_document_paths_with_report([docs])[0])
    assert again.renamed == [("sources/document/files/docs/note-a.md", "sources/document/files/docs/Note A.md")]
    assert sorted(p.name for p in base.iterdir()) == ["Note A.md", "Note B.md", "note-b.md"] and left.read_bytes() == mine


def test_warnings_about_an_unchanged_document_are_not_said_again(tmp_path: Path, vault: Path) -> None:
    """Re-ingesting a folder repeated every warning about its files' reading (an encoding, a
    front matter) though nothing was written: they are said when the document is written (first,
    or changed), and summed up in one line while it is unchanged. A file skipped is said each time."""
    from vaultmind.ingest.detect import ingest_paths

    folder = tmp_path / "docs"
    legacy = put(folder / "legacy.txt", "Caf\xe9 au lait".encode("cp1252"))
    put(folder / "broken.md", "---\ntitle: [unclosed\n---\nThe body.\n")
    put(folder / "photo.png", b"\x89PNG\r\n")
    said = {
        f"{legacy}: not UTF-8; read as Windows-1252",
        f"{folder / 'photo.png'}: not a document (.md, .markdown, .txt, .html, .htm); skipped",
    }
    first = ingest_paths("document", [folder], vault)
    assert len(first.written) == 2 and said < set(first.warnings)
    assert [w for w in first.warnings if w.startswith(f"{folder / 'broken.md'}: front matter")]
    again = ingest_paths("document", [folder], vault)
    assert again.written == [] and again.warnings == [
        f"{folder / 'photo.png'}: not a document (.md, .markdown, .txt, .html, .htm); skipped",
        "2 warnings about documents already ingested and unchanged not repeated",
    ]
    put(legacy, "Th\xe9 au lait".encode("cp1252"))  # changed: its next version, and what its reading says
    changed = ingest_paths("document", [folder], vault)
    assert changed.documents_replaced == 1 and changed.warnings == [
        f"{folder / 'photo.png'}: not a document (.md, .markdown, .txt, .html, .htm); skipped",
        f"{legacy}: not UTF-8; read as Windows-1252",
        "1 warning about documents already ingested and unchanged not repeated",
    ]


def test_two_file_names_differing_in_case_only_are_two_notes_on_every_system(tmp_path: Path, vault: Path) -> None:
    """`Plan.md` and `plan.md` of one folder (a Linux folder) are two notes whose names differ in
    more than case: on macOS and Windows `Plan.md` and `plan.md` are one file, and Obsidian's
    links are case-insensitive."""
    put(tmp_path / "docs" / "Plan.md", "The upper one.\n")
    put(tmp_path / "docs" / "plan.md", "The lower one.\n")
    written = write_documents(vault, parse_document_paths_with_report([tmp_path / "docs"])[0]).written
    assert sorted(written) == ["sources/document/files/docs/Plan.md", "sources/document/files/docs/plan-2.md"]


def test_the_vault_s_own_notes_are_no_documents_to_ingest(tmp_path: Path) -> None:
    """`ingest document` given the vault (or a folder in it) copied the user's notes into
    sources/document/, each then found twice: they are left out, said; a .txt file in the vault,
    which the index does not read, is still a document."""
    vault = tmp_path / "vault"
    write(vault, "Projects/Plan.md", "# Plan\n\nShip in May.\n")
    write(vault, "Projects/notes.txt", "Loose notes from the call.\n")
    mine = snapshot_files(vault)
    report = ingest_paths("document", [vault / "Projects"], vault)
    written = sorted(p.relative_to(vault).as_posix() for p in (vault / "sources").rglob("*.md"))
    assert written == ["sources/document/files/projects/notes.md"]
    assert f"1 note of the vault itself skipped ({vault / 'Projects' / 'Plan.md'})" in report.warnings[0]
    report = ingest_paths("document", [vault / "Projects" / "Plan.md"], vault)
    assert report.warnings[0].startswith("1 note of the vault itself skipped")
    assert {k: v for k, v in snapshot_files(vault).items() if not k.startswith("sources/")} == mine


def test_documents_with_long_names_in_any_script_are_written(tmp_path: Path, vault: Path) -> None:
    """A file name of 80 CJK characters (240 bytes of UTF-8) failed "cannot write (File name too
    long)": the temporary file beside the note took 30 bytes more than the 255 a file name may
    hold. Temporary names now fit in 255 bytes, and a note's name in 240 bytes (cut at a
    character: 62 emoji are 248 bytes); a name that already fits is kept as it is."""
    docs = tmp_path / "long"
    cjk = ("关于预算执行情况与下一阶段工作安排的详细说明" * 4)[:80]  # 240 bytes
    emoji = "🦜" * 62
    short = "Plan Q3 ö"
    for name in (cjk, emoji, short):
        put(docs / f"{name}.txt", f"The heron nests by the lake ({name[:3]}).\n")
    written = write_documents(vault, parse_document_paths_with_report([docs])[0]).written
    assert sorted(Path(p).stem for p in written) == sorted([cjk, "🦜" * 60, short])
    for p in written:
        assert "The heron nests by the lake" in (vault / p).read_text(encoding="utf-8")
    assert sorted(write_documents(vault, parse_document_paths_with_report([docs])[0]).unchanged) == sorted(written)
