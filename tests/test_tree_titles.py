"""A summary's title names its source as its notes do together, not as one of them does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory
from vaultmind.tree.engine import reseal_stale, seal_ready
from vaultmind.tree.fallback import FallbackSummarizer

from .conftest import write
from .treekit import PEOPLE, chat_day, summary_rows, text, tree_config

START = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)


def _note(vault: Path, source_id: str, scope: str, name: str, title: str, day: int, first: int) -> None:
    date = START + timedelta(days=day)
    messages = [
        Message(f"{day}.{i}", PEOPLE[i % len(PEOPLE)], date + timedelta(minutes=10 * (i - first)), text(i))
        for i in range(first, first + 3)
    ]
    write(
        vault,
        f"sources/chat/{scope}/{name}.md",
        render_source_note(SourceMeta("chat", source_id, scope, title), messages),
    )


@pytest.mark.parametrize(
    ("titles", "label"),
    [
        (("Ana and Ben, part 1 (2024-03-04)", "Ana and Ben, part 2 (2024-03-05)"), "Ana and Ben"),
        (("Ana and Ben", "Ana and Ben · part 2"), "Ana and Ben"),  # one title starts the other
        (("Venue deposit", "Re: Press kit"), "chat:box"),  # threads with nothing in common: the tree id
        (("Re: Venue deposit", "Re: Press kit"), "chat:box"),
    ],
)
def test_a_summary_is_titled_after_what_its_source_notes_share(
    vault: Path, titles: tuple[str, str], label: str
) -> None:
    for day, title in enumerate(titles):
        _note(vault, "chat:box", "box", f"n{day}", title, day, 3 * day)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        sealed = seal_ready(memory, summarizer=FallbackSummarizer()).sealed
    assert sealed
    for row in sealed:
        title = split_frontmatter((vault / row["path"]).read_text(encoding="utf-8")).data["title"]
        assert str(title).startswith(label + " · 2024-03-0"), title


def test_a_summary_sealed_again_over_the_same_children_keeps_your_title_and_properties(vault: Path) -> None:
    """docs/trees.md: same children, same id and path, so what you gave the note stays."""
    with Memory.open(tree_config(vault)) as memory:
        chat_day(vault, 0, 0, 3)
        memory.sync()
        (sealed,) = seal_ready(memory, summarizer=FallbackSummarizer()).sealed
        path = vault / sealed["path"]
        text = path.read_text(encoding="utf-8")
        generated = split_frontmatter(text).data["title"]
        digest = split_frontmatter(text).data["children_sha256"]
        text = text.replace(f'title: "{generated}"', 'title: "Venue week"\ntags:\n  - venue', 1)
        path.write_text(text.replace(digest, "0" * 64), encoding="utf-8")  # no longer matches: stale
        memory.sync()
        (row,) = summary_rows(memory)
        assert row["stale"] and not row["user_edited"]
        report = reseal_stale(memory, max_nodes=5, summarizer=FallbackSummarizer())
        assert [u["path"] for u in report.unsealed] == [s["path"] for s in report.sealed] == [sealed["path"]]
        fm = split_frontmatter(path.read_text(encoding="utf-8")).data
        assert fm["title"] == "Venue week" and fm["aliases"][0] == generated and fm["tags"] == ["venue"]
        assert fm["children_sha256"] == digest and not summary_rows(memory)[0]["stale"]
