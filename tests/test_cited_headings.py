"""A hit on a section of your own note cites a heading Obsidian opens: a link that names a chain
of headings (`Note#Q2 launch#Contingency`) is read one heading after another in note order, so
each one must stand after the one before it."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

from vaultmind.config import load_config
from vaultmind.memory import Memory

from .conftest import write

BUDGET = """# Budget 2024

## Q2 launch

Total **€18,000**, approved by Helen Okafor on 11 March
([[sources/email/fernhill/q2-launch-budget/2024-03-11#^m-20240311130500-3d77-fernhill-example|her email]]).

| Line | Amount | Note |
| --- | ---: | --- |
| Launch evening at [[harbor-hall\\|Harbor Hall]] | €6,500 | venue €4,200 + catering; deposit €1,500 paid 8 March |
| Paid ads | €4,000 | hard cap, from 22 April |
| Design contractor | €3,000 | |
| Infrastructure | €2,100 | load test €1,200; second staging cluster €900 until 30 April |
| Press kit and launch video | €1,600 | |
| Contingency | €800 | only with Helen's OK |

> [!warning] Infrastructure
> The second staging cluster is switched off on 30 April. Agreed with Bob in
> [[sources/chat/slack/fernhill/dm-alice-bob/2024-03-05#^m-1709648081-000700|our DM]].

## Tools and subscriptions

| Tool | Per month |
| --- | ---: |
| Design tool, 3 seats | €45 |
| Error monitoring | €26 |
| Newsletter | €19 |
"""


def _opens(text: str, anchor: str) -> bool:
    """Whether Obsidian finds the heading chain `anchor` ("#A#B") in `text`: each name matched by
    a heading after the one matched before it."""
    names = [m.group(1).strip().casefold() for m in re.finditer(r"^#{1,6}\s+(.+)$", text, re.M)]
    chain = [part.casefold() for part in anchor.lstrip("#").split("#")]
    at = 0
    for name in names:
        if at < len(chain) and name == chain[at]:
            at += 1
    return at == len(chain)


def test_a_section_opening_under_the_note_title_cites_a_heading_that_opens(vault: Path) -> None:
    note = write(vault, "Budget 2024.md", BUDGET)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = [
            hit
            for hit in memory.walk("who approved the Q2 launch budget?")["hits"]
            if hit["note_path"] == "Budget 2024.md"
        ]
    assert hits
    for hit in hits:
        # the section's text opens with "# Budget 2024": its "## Q2 launch" was cited inside
        # itself, "#Q2 launch#Q2 launch", a chain Obsidian cannot follow
        assert _opens(note.read_text(encoding="utf-8"), hit["anchor"]), hit["anchor"]
        assert unquote(hit["link"]).endswith("Budget 2024" + hit["anchor"]), hit["link"]


def test_a_sub_heading_named_as_its_section_is_no_opening_of_the_section(vault: Path) -> None:
    """A note "Contacts" with a "## Contacts" part further down: that sub-heading was taken for
    the section's own opening, the parts above it merged into one, and the hit on "Harbor
    office" cited the whole section instead of its heading."""
    note = write(vault, "Contacts.md", (
        "# Contacts\n\nThe people to call while we travel in May.\n\n"
        "## Harbor office\n\nThe harbor office number is 555-0100; ask Marta there about the ferry tickets.\n\n"
        "## Contacts\n\nEmergency numbers: 112 anywhere in the country.\n"
    ))
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = [h for h in memory.walk("which number do I call about the ferry tickets?")["hits"] if h["note_path"] == "Contacts.md"]
    assert [h["anchor"] for h in hits[:1]] == ["#Contacts#Harbor office"]
    assert _opens(note.read_text(encoding="utf-8"), hits[0]["anchor"])
