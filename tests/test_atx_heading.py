"""One reading of an ATX heading line for every reader (`blocks.atx_heading`): up to three
spaces before the `#`s, closing `#`s left out only after a space — the block scanner's, which
markdown-it agrees with."""

from __future__ import annotations

from markdown_it import MarkdownIt

from vaultmind.index.lexical import terms
from vaultmind.markdown.blocks import scan_blocks
from vaultmind.retrieval.headings import headings
from vaultmind.retrieval.hits import inner_heading


def _commonmark_headings(text: str) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(text)
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


def test_a_heading_ending_in_a_hash_keeps_it() -> None:
    text = "## Learn C#\nsome text\n\n## Setup ##"
    assert _commonmark_headings(text) == ["Learn C#", "Setup"]
    assert [h.text for h in scan_blocks(text).headings] == ["Learn C#", "Setup"]
    row = {"note_kind": "user", "title": "Guide", "heading_path": [], "text": text}
    assert headings(row) == ("Guide", "Learn C#", "Setup")


def test_an_indented_heading_inside_a_section_is_cited() -> None:
    section = "Launch day checklist\n\nShip the build.\n\n  ## Contacts\n\nDana: dana@example.com"
    assert _commonmark_headings(section) == ["Contacts"]
    assert inner_heading(section, frozenset(terms("what is Dana's email address?"))) == "Contacts"
