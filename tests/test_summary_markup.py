"""Summary notes read in Obsidian as their messages were written, and say who said them.

Before, a summary's body carried message text raw: "50%% off" opened a comment that hid the
rest of the summary, "<Media omitted>" showed as nothing, and an author "Dana Whitfield #ops"
tagged the summary `ops`. A summary of one short message left out who said it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from vaultmind.ingest.document import parse_document_paths_with_report
from vaultmind.ingest.writer import write_documents
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.markdown.render import (
    Message,
    SourceMeta,
    escape_markup,
    no_tag,
    render_source_note,
    shown_line,
    unescape_shown,
)
from vaultmind.memory import Memory
from vaultmind.tree.engine import flush
from vaultmind.tree.fallback import FallbackSummarizer, extractive_summary
from vaultmind.tree.summarize import ChildText

from .conftest import write
from .treekit import tree_config

FAR = datetime(2100, 1, 1, tzinfo=UTC)
DISCOUNT = "The caterer gives 50%% off the menu on Friday 12 April if we book 40 seats at the Harbor Hall."
MEDIA = "Marco said the phone shows <Media omitted> again for the venue photos from the Harbor Hall."
PRICE = "The Harbor Hall asks $$ 40 a seat and $$ 200 for the sound check on Friday 12 April."
MESSAGES = (("Dana Whitfield #ops", DISCOUNT), ("Marco Ruiz", MEDIA), ("Priya Raman", PRICE))


def _chat_day(vault: Path, day: int) -> None:
    """Day `day` (1-3) of a chat: the message `MESSAGES[day - 1]`."""
    author, text = MESSAGES[day - 1]
    meta = SourceMeta("chat", "chat:party", "chat/party", f"Party · 2024-04-0{day}")
    message = Message(f"m{day}", author, datetime(2024, 4, day, 9, 0, tzinfo=UTC), text)
    write(vault, f"sources/chat/party/2024-04-0{day}.md", render_source_note(meta, [message]))


def _bodies(vault: Path, level: int) -> dict[str, str]:
    return {
        p.relative_to(vault).as_posix(): split_frontmatter(p.read_text(encoding="utf-8")).body
        for p in sorted((vault / "summaries").rglob(f"L{level}/*.md"))
    }


def test_summaries_escape_message_markup_once_and_read_back_as_written(vault: Path) -> None:
    with Memory.open(tree_config(vault)) as memory:
        sealed = []
        for day in (1, 2, 3):  # a flush a day: one message a summary, three summaries one above
            _chat_day(vault, day)
            memory.sync()
            sealed += flush(memory, now=FAR, older_than_hours=0, summarizer=FallbackSummarizer()).sealed
        assert [s["level"] for s in sealed] == [1, 1, 1, 2], sealed
        ones = _bodies(vault, 1)
        text = "\n".join(ones.values())
        assert "Dana Whitfield \\#ops said: The caterer gives 50%\\% off the menu" in text, text
        assert "\\<Media omitted>" in text and "asks $\\$ 40 a seat" in text, text
        assert "50%%" not in text and " <Media" not in text and "$$" not in text, "no markup Obsidian would hide"
        tags = memory.index.query("SELECT DISTINCT tag FROM tags WHERE path LIKE 'summaries/%'")
        assert ("ops",) not in tags, tags
        leaves = "\n".join(
            str(r[0]) for r in memory.index.query("SELECT text FROM leaves WHERE note_path LIKE 'summaries/%/L1/%'")
        )
        assert "50%% off" in leaves and "<Media omitted>" in leaves and "asks $$ 40" in leaves, (
            "a summary is read (searched, quoted) as it shows"
        )
        assert "Dana Whitfield #ops said: The caterer" in leaves and "\\" not in leaves, (
            "a name's escaped `#` is read as it shows, as its message's author is"
        )
        (top,) = _bodies(vault, 2).values()
        assert "\\\\" not in top, f"the summary of summaries escapes once, not twice: {top!r}"
        assert "%%" not in top and " <Media" not in top and "$$" not in top, top


def test_a_summary_of_one_short_message_or_section_says_whose_it_is() -> None:
    at = "2024-04-01T09:00:00Z"
    one = [ChildText("m1", "Booked the hall for Friday.", "message", "Dana Whitfield", at)]
    assert extractive_summary(one, 3000) == "Dana Whitfield said: Booked the hall for Friday."
    section = [ChildText("s1", "Total 18,000 EUR, approved on 11 March.", "section", None, None, "Budget 2024 › Q2")]
    assert extractive_summary(section, 3000) == "Budget 2024 › Q2: Total 18,000 EUR, approved on 11 March."


def test_a_shown_name_reads_back_as_written() -> None:
    """`unescape_shown` undoes what a heading (`shown_line`) and a summary (`no_tag` on a name,
    then `escape_markup`) put in, as Obsidian's reading view shows it."""
    for name in ("Dana Whitfield #ops", "#launch · 2024-03-07", "Kickoff 50%% <b>bold</b> $$ ^x1", "C# tips"):
        assert unescape_shown(shown_line(name)) == name, name
        assert unescape_shown(escape_markup(f"{no_tag(name)} said: hi")) == f"{name} said: hi", name
    assert unescape_shown("`\\#code` stays") == "`\\#code` stays", "code is verbatim"


def test_a_documents_own_escaped_hash_is_read_as_its_file_has_it_and_tags_no_summary(tmp_path: Path, vault: Path) -> None:
    """A `\\#` in a document is its author's: a `.md` writer's way to write "#ops" without the
    tag, a `.txt` file's own text. Read without it, the summary of that section said "#ops" and
    Obsidian tagged the summary `ops`."""
    folder = tmp_path / "docs"
    folder.mkdir()
    said = "The channel \\#ops is muted until the Harbor Hall booking on Friday 12 April is done."
    (folder / "plan.md").write_text(f"# Plan\n\n{said}\n", encoding="utf-8")
    (folder / "raw.txt").write_text(f"{said}\n", encoding="utf-8")
    write_documents(vault, parse_document_paths_with_report([folder])[0])
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        leaves = memory.index.query("SELECT text FROM leaves WHERE note_path LIKE 'sources/document/%'")
        assert len(leaves) == 2 and all(said in str(text) for (text,) in leaves), leaves
        sealed = flush(memory, now=FAR, older_than_hours=0, summarizer=FallbackSummarizer()).sealed
        assert len(sealed) == 2 and all(said in body for body in _bodies(vault, 1).values()), _bodies(vault, 1)
        assert memory.index.query("SELECT tag FROM tags WHERE path LIKE 'summaries/%'") == []
