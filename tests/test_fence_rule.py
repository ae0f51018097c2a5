"""Every reader of code fences closes a fence as CommonMark does: a run of the opening
character at least as long, nothing after it. A fence line with an info string inside a block
(```` ```python ```` inside a ```` ``` ```` block) is the block's content, not its end."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

from vaultmind.entities.extract import code_ranges
from vaultmind.ingest.document import _first_h1
from vaultmind.markdown.render import escape_text, unescape_text
from vaultmind.markdown.standalone import standalone
from vaultmind.retrieval.headings import headings
from vaultmind.tree.sentences import clean_units

# a Markdown lesson: how to write a fenced block, shown inside one
LESSON = "```\n```python\nprint(1)\n```\n"


def _code_of(markdown: str) -> list[str]:
    """The contents of the fenced code blocks as markdown-it (CommonMark) reads them."""
    return [t.content for t in MarkdownIt("commonmark").parse(markdown) if t.type == "fence"]


def test_a_table_after_the_block_reads_as_a_table_and_the_block_stays_code() -> None:
    text = LESSON + "| Host | Region |\n|---|---|\n| Hetzner | eu |"
    assert _code_of(text) == ["```python\nprint(1)\n"], "CommonMark: the block ends at the bare fence"
    assert standalone(text) == LESSON + "Host: Hetzner; Region: eu."
    inside = "```\n```python\n| Host | Region |\n|---|---|\n| Hetzner | eu |\n```"
    assert standalone(inside) == inside, "a table inside the block is code, kept as it is"


def test_a_messages_code_is_not_escaped_after_an_inner_fence_line() -> None:
    text = "```\n```python\nx = a % b %% c\n```\nand 50%% off"
    lines = escape_text(text)
    assert lines[2] == "x = a % b %% c", lines
    assert lines[4] == "and 50%\\% off", lines
    assert unescape_text(lines) == text
    assert _code_of("\n".join(lines) + "\n")[0] == "```python\nx = a % b %% c\n"


def test_entity_extraction_skips_the_whole_block() -> None:
    text = LESSON + "Alice Chen"
    assert code_ranges(text) == [(0, len(LESSON) - 1)]
    longer = "```\nAlice\n````\nBob"
    assert _code_of(longer) == ["Alice\n"]
    assert code_ranges(longer) == [(0, len("```\nAlice\n````"))], "a longer run closes the block"


def test_a_comment_inside_the_block_is_no_heading() -> None:
    row = {"note_kind": "user", "title": "Guide", "heading_path": [], "text": "```\n```bash\n# install\n```\n## Setup"}
    assert headings(row) == ("Guide", "Setup")


def test_a_documents_title_is_its_first_heading_outside_code(tmp_path: Path) -> None:
    assert _first_h1("```\n```bash\n# not a title\n```\n# Install guide") == "Install guide"


def test_a_summarys_fallback_reads_no_code_as_prose() -> None:
    assert clean_units("```\n```sh\nrm -rf build\n```\nThe build is cleaned first.") == ["The build is cleaned first."]
