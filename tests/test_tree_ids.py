"""A summary's id names its children by what they are; two summaries never share one."""

from __future__ import annotations

from pathlib import Path

from vaultmind.memory import Memory
from vaultmind.tree.engine import seal_ready
from vaultmind.tree.fallback import FallbackSummarizer

from .conftest import write
from .treekit import TOPICS, summary_rows, tree_config

SOURCE = "chat:exported/team"


def _day(vault: Path, day: int) -> None:
    """A chat note written by another tool in vaultmind's form, its messages without ids (each
    is named by its place in the note: the first message of every day is message 0)."""
    messages = "".join(
        f"> [!message] Alice Chen · 2024-03-0{day} 09:0{i}\n"
        f"> Day {day}: Alice Chen went over {TOPICS[(day + i) % len(TOPICS)]} with Bob Stone.\n\n"
        for i in range(3)
    )
    write(
        vault,
        f"sources/chat/exported/team/2024-03-0{day}.md",
        f'---\nvaultmind: source\nkind: chat\nsource_id: "{SOURCE}"\nscope: exported/team\ntitle: team\n---\n# team\n\n{messages}',
    )


def test_two_groups_of_messages_with_the_same_ids_in_one_tree_are_two_summaries(vault: Path) -> None:
    """Named by their ids alone, the first three messages of two days were one id: the second
    seal wrote its summary over the first's note, and the first day's messages fell out of
    the tree."""
    _day(vault, 4)
    with Memory.open(tree_config(vault, **{"trees.fanout": 100})) as memory:
        memory.sync()
        tokens = memory.index.scalar("SELECT sum(token_count) FROM leaves")
    _day(vault, 5)
    with Memory.open(tree_config(vault, **{"trees.fanout": 100, "trees.l0_tokens": tokens})) as memory:
        memory.sync()
        assert memory.index.scalar("SELECT count(DISTINCT message_id) FROM leaves") == 3, "ids repeat"
        sealed = seal_ready(memory, summarizer=FallbackSummarizer()).sealed
        rows = summary_rows(memory)
    assert len(sealed) == 2 and len({s["path"] for s in sealed}) == 2
    assert len(rows) == 2 and all((vault / s["path"]).exists() for s in sealed)
