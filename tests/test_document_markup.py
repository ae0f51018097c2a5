"""Plain-text and HTML documents show in Obsidian as they read in their files.

Before, a `.txt` file's "50%% off" opened a comment that hid the rest of the note, its
"<Media omitted>" showed as nothing and "$$ 40" as math; an HTML page's `&lt;details&gt;`
became a live `<details>` widget folding the text after it, and `<code>&lt;div&gt;</code>` a
bare `<div>`. A `.md` document is Markdown already: it stays as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.ingest.document import parse_document_paths_with_report
from vaultmind.ingest.html import html_document
from vaultmind.ingest.writer import write_documents
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.memory import Memory

TEXT = "The sale is 50%% off until Friday.\nPhone said <Media omitted> again.\nprice: $$ 40 and $$ 50\n"
PAGE = (
    "<html><head><title>Tags</title></head><body><p>Wrap the answer in &lt;details&gt; and "
    "&lt;/details&gt; to fold it.</p><p>Then style <code>&lt;div&gt;</code> as 50%% wide.</p></body></html>"
)


def _notes(tmp_path: Path, vault: Path, files: dict[str, str]) -> dict[str, str]:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    written = write_documents(vault, parse_document_paths_with_report([folder])[0]).written
    return {Path(p).stem: split_frontmatter((vault / p).read_text(encoding="utf-8")).body for p in written}


def test_text_and_html_documents_are_escaped_and_read_back_as_written(
    tmp_path: Path, vault: Path, memory: Memory
) -> None:
    bodies = _notes(tmp_path, vault, {"sale.txt": TEXT, "tags.html": PAGE, "notes.md": "Keep 50%% and <b>bold</b>.\n"})
    assert "50%\\% off" in bodies["sale"] and "\\<Media omitted>" in bodies["sale"] and "$\\$ 40" in bodies["sale"]
    assert "\\<details> and \\</details>" in bodies["tags"], bodies["tags"]
    assert "style `<div>` as 50%\\% wide" in bodies["tags"], "inline code is a code span: nothing in it escaped"
    assert "Keep 50%% and <b>bold</b>." in bodies["notes"], "a Markdown document is written as it is"
    memory.sync()
    leaves = "\n".join(
        str(r[0]) for r in memory.index.query("SELECT text FROM leaves WHERE note_path LIKE 'sources/document/%'")
    )
    for said in ("50%% off until Friday", "<Media omitted>", "$$ 40", "<details> and </details>", "`<div>` as 50%% wide"):
        assert said in leaves, (said, leaves)


def test_unchanged_text_documents_are_unchanged_by_a_second_ingest(tmp_path: Path, vault: Path) -> None:
    _notes(tmp_path, vault, {"sale.txt": TEXT})
    again = write_documents(vault, parse_document_paths_with_report([tmp_path / "docs"])[0])
    assert again.written == [] and len(again.unchanged) == 1


def test_html_code_keeps_its_backticks() -> None:
    assert html_document("<p>Run <code>a`b</code> now</p>")[2] == "Run ``a`b`` now"
    assert html_document("<p>Run <code>x</code></p>", fences=False)[2] == "Run x", "an email's HTML is unchanged"


def test_an_html_table_of_text_is_a_markdown_table() -> None:
    """Before, its rows were lines of `a | b` with no separator row (no table in Obsidian), a `|`
    in a cell read as one more column and a `<br>` split a row in two."""
    page = (
        "<table><caption>Plans</caption><tr><th>Plan</th><th>Price</th></tr>"
        "<tr><td>Pro | Team</td><td>$10</td></tr><tr><td>Basic<br>plan</td><td>50 off "
        '<a href="https://example.org/basic">terms</a></td></tr><tr><td><code>a|b</code></td></tr></table>'
    )
    assert html_document(page)[2] == (
        "Plans\n\n| Plan | Price |\n| --- | --- |\n| Pro \\| Team | $10 |\n"
        "| Basic plan | 50 off terms (https://example.org/basic) |\n| `a\\|b` |  |"
    )
    layout = "<table><tr><td><p>Intro</p><ul><li>one</li></ul></td><td>side</td></tr></table>"
    assert "---" not in html_document(layout)[2], "a table laying out a page stays lines"
    assert html_document("<table><tr><td>a</td><td>b</td></tr></table>", fences=False)[2] == "a | b", (
        "an email's HTML is unchanged"
    )


def test_an_html_table_cell_spanning_columns_keeps_the_cells_after_it_in_their_columns() -> None:
    """Before, a `colspan="2"` header was one cell: "Age" stood over the second column, "B"'s."""
    page = (
        '<table><tr><th colspan="2">Name</th><th>Age</th></tr>'
        "<tr><td>Ada</td><td>Lovelace</td><td>36</td></tr></table>"
    )
    assert html_document(page)[2] == "| Name |  | Age |\n| --- | --- | --- |\n| Ada | Lovelace | 36 |"
    huge = '<table><tr><td colspan="999999">x</td></tr><tr><td>y</td></tr></table>'
    assert html_document(huge)[2].count("| --- ") == 1000, "a colspan is capped as HTML caps it"


def test_an_html_table_cell_without_its_end_tag_keeps_its_text() -> None:
    """HTML lets a cell end at the next cell or row, unwritten; before, such a cell's text was
    lost ("b"), or the whole table fell back to lines when no cell was closed."""
    one_open = "<table><tr><td>a</td><td>b</tr><tr><td>c</td><td>d</td></tr></table>"
    assert html_document(one_open)[2] == "| a | b |\n| --- | --- |\n| c | d |"
    none_closed = "<table><tr><td>a<td>b<tr><td>c<td>d</table>"
    assert html_document(none_closed)[2] == "| a | b |\n| --- | --- |\n| c | d |"


def test_an_html_page_cut_short_in_a_table_or_an_inline_code_keeps_its_text() -> None:
    """Before, a `<table>` never closed (a page cut short) or a `<code>` never closed held back
    the rest of the page: nothing after it was written."""
    assert html_document("<p>x</p><table><tr><td>a</td><td>b</td></tr>")[2] == "x\n\n| a | b |\n| --- | --- |"
    assert html_document("<p>a <code>b</p><h2>Next</h2><ul><li>one</li></ul>")[2] == "a `b`\n\n## Next\n\n- one"
    assert html_document("<p>x <code>open")[2] == "x `open`"


def test_an_html_link_in_an_inline_code_keeps_its_address_apart() -> None:
    """Before, `<code><a href=…>k</a></code>` read "`khttp://x.org`" (the address glued to the
    text, inside the span), and a `<br>` in a span broke the line before it and joined its words."""
    assert html_document('<p>see <code><a href="http://x.org">k</a></code> now</p>')[2] == (
        "see `k` (http://x.org) now"
    )
    assert html_document("<p>see <code>a<br>b</code> now</p>")[2] == "see `a b` now"


TITLED = {
    "#ops notes.txt": "Deploy went fine.\n",
    "page.html": "<html><head><title>#launch 50%% review</title></head><body><p>Went well.</p></body></html>",
    "draft.md": '---\ntitle: "#q3 plan ^abc"\n---\nSteps to take.\n',
}


def test_a_document_s_title_heading_is_escaped_and_read_as_it_shows(tmp_path: Path, vault: Path, memory: Memory) -> None:
    """A document ingested from "#ops notes.txt" was headed "# #ops notes": Obsidian listed the
    note under the tag `ops`; a title's "50%%" hid the rest of its note, its "^abc" made a block
    id. The heading vaultmind writes over a document is escaped as a chat's title is, and
    vaultmind reads it as Obsidian shows it: the title, the leaf, no tag."""
    bodies = _notes(tmp_path, vault, TITLED)
    assert bodies["ops notes"].startswith("# \\#ops notes\n\nDeploy went fine."), bodies["ops notes"]
    assert bodies["page"].startswith("# \\#launch 50%\\% review\n"), bodies["page"]
    assert bodies["draft"].startswith("# \\#q3 plan \\^abc\n"), bodies["draft"]
    memory.sync()
    assert memory.index.query("SELECT path, tag FROM tags WHERE path LIKE 'sources/document/%'") == []
    titles = {str(r[0]) for r in memory.index.query("SELECT title FROM notes WHERE path LIKE 'sources/document/%'")}
    assert titles == {"#ops notes", "#launch 50%% review", "#q3 plan ^abc"}, titles
    leaves = "\n".join(
        str(r[0]) for r in memory.index.query("SELECT text FROM leaves WHERE note_path LIKE 'sources/document/%'")
    )
    for said in ("# #ops notes\n\nDeploy went fine.", "# #launch 50%% review\n", "# #q3 plan ^abc\n"):
        assert said in leaves, (said, leaves)


def test_a_document_headed_unescaped_before_is_written_again_escaped_under_its_version(
    tmp_path: Path, vault: Path
) -> None:
    """A note an earlier vaultmind wrote with the heading "# #ops notes" holds the same document:
    the next ingest writes it again, escaped, still version 1 (no new version of an unchanged
    file), and the one after leaves it unchanged."""
    from vaultmind.markdown.frontmatter import body_sha256

    _notes(tmp_path, vault, {"#ops notes.txt": "Deploy went fine.\n"})
    note = next(vault.glob("sources/document/**/ops notes.md"))
    text = note.read_text(encoding="utf-8")
    escaped = split_frontmatter(text).body
    old = escaped.replace("# \\#ops notes", "# #ops notes")
    note.write_text(text.replace(escaped, old).replace(body_sha256(escaped), body_sha256(old)), encoding="utf-8")
    again = write_documents(vault, parse_document_paths_with_report([tmp_path / "docs"])[0])
    assert [Path(p).name for p in again.written] == ["ops notes.md"], again
    rewritten = split_frontmatter(note.read_text(encoding="utf-8"))
    assert rewritten.body == escaped and rewritten.data["version"] == 1, rewritten.data
    third = write_documents(vault, parse_document_paths_with_report([tmp_path / "docs"])[0])
    assert third.written == [] and len(third.unchanged) == 1


def test_a_document_s_text_is_made_into_its_note_s_body_once_per_ingest(
    tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The note body of a document (its text with line breaks as \\n, no control characters,
    under its title's heading) was made again for each question the plan asked of it: its two
    hashes (escaped heading and the unescaped one written before) made it twice each, eight
    times in all, ~1.7 s for a 5 MB file. It is made once; the plan and its outcome are the same."""
    import vaultmind.ingest.documents_plan as documents_plan

    made: list[int] = []
    real = documents_plan.note_text

    def counted(text: str) -> str:  # the real function, its calls counted
        made.append(len(text))
        return real(text)

    monkeypatch.setattr(documents_plan, "note_text", counted)
    bodies = _notes(tmp_path, vault, {"#ops notes.txt": "Deploy went fine.\n" * 1000})
    assert bodies["ops notes"].startswith("# \\#ops notes\n\nDeploy went fine.\n"), bodies["ops notes"][:80]
    assert made == [len("Deploy went fine.\n" * 1000)], made
    made.clear()
    again = write_documents(vault, parse_document_paths_with_report([tmp_path / "docs"])[0])
    assert again.written == [] and len(again.unchanged) == 1
    assert len(made) == 1, made


def _leaves_of(memory: Memory, path_like: str) -> list[str]:
    rows = memory.index.query("SELECT text FROM leaves WHERE note_path LIKE ? ORDER BY seq", [path_like])
    return [str(row[0]) for row in rows]


def test_only_the_title_heading_vaultmind_wrote_is_read_unescaped_never_an_author_s_line(
    tmp_path: Path, vault: Path, memory: Memory
) -> None:
    """The title heading was read as it shows wherever a line of the note matched it: a heading
    the author escaped themselves further down ("# \\#hashtag day") read "# #hashtag day", and a
    note of yours in the sources folder naming itself a document was read so too. Only the
    first line of a document's note vaultmind wrote is the title's heading."""
    author = "Intro line.\n\n# \\#hashtag day\n\n" + "The author wrote that heading escaped. " * 40 + "\n"
    bodies = _notes(tmp_path, vault, {"day.md": '---\ntitle: "#hashtag day"\n---\n' + author})
    assert bodies["day"].startswith("# \\#hashtag day\n\nIntro line.\n\n# \\#hashtag day\n"), bodies["day"][:80]
    mine = "---\nkind: document\ntitle: \"#own\"\n---\n# \\#own\n\nMy note, escaped as I like.\n"
    (vault / "sources" / "mine.md").write_text(mine, encoding="utf-8")
    memory.sync()
    day = "\n".join(_leaves_of(memory, "sources/document/%"))
    assert day.startswith("# #hashtag day\n\nIntro line."), day[:80]
    assert day.count("# \\#hashtag day") == 1 and day.count("# #hashtag day") == 1, day
    assert _leaves_of(memory, "sources/mine.md")[0].startswith("# \\#own\n"), "a note of yours is read as written"


@pytest.mark.parametrize("title", ["\\#hashtag day", "#hashtag day", "\\\\#x", "a \\#b #c", "%% x", "\\%% y", "#q ^ab", "plain"])
def test_a_title_s_heading_reads_back_as_the_title(title: str) -> None:
    from vaultmind.markdown.render import title_heading, title_reader, unescape_markup

    read = title_reader(title) or (lambda text: text)
    assert read(unescape_markup(title_heading(title))) == f"# {title}"
    assert read(unescape_markup(title_heading(title)) + "\n\nmore") == f"# {title}\n\nmore"


def test_a_document_titled_with_its_own_escape_is_read_and_kept_as_written(tmp_path: Path, vault: Path, memory: Memory) -> None:
    bodies = _notes(tmp_path, vault, {"\\#hashtag day.txt": "Went well.\n"})
    (body,) = bodies.values()  # (the note named without its backslash)
    assert body.startswith("# \\#hashtag day\n\nWent well."), bodies
    memory.sync()
    assert _leaves_of(memory, "sources/document/%")[0].startswith("# \\#hashtag day\n\nWent well.")
    again = write_documents(vault, parse_document_paths_with_report([tmp_path / "docs"])[0])
    assert again.written == [] and len(again.unchanged) == 1
