"""A save's entity rows come from the rows it writes, unless another note may hold one of its
leaf ids (`sync_write.held_elsewhere`): then they are read back from the index, and either way
they equal a cold rebuild's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.entities import graph
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory

from .conftest import write
from .test_entities_graph import cold_rebuild, dump_entities

CHAT = render_source_note(
    SourceMeta("chat", "slack:acme/general", "slack/acme/general", "general"),
    [
        Message("m1", "Alice Chen <alice@example.com>", "2024-03-04T09:00:00Z", "ping @bob about #launch"),
        Message("m2", "@bob", "2024-03-04T09:05:00Z", "#launch is on with Fernhill Labs, alice@example.com"),
    ],
)
DOCUMENT = "# Plan\n\nAlice Chen and @bob plan #launch.\n\n## Budget\n\nFernhill Labs pays for #budget.\n"


def _document(source_id: str) -> str:
    return f"---\nvaultmind: source\nkind: document\nsource_id: {source_id}\n---\n{DOCUMENT}"


# (what the note holding the same leaf ids is, its path and text; the note it copies, its path and text)
SHARED = {
    "chat copy": ("sources/chat/copy.md", CHAT, "sources/chat/a.md", CHAT),
    "padded source_id": (
        "sources/chat/copy.md",
        CHAT.replace('source_id: "slack:acme/general"', 'source_id: "  slack:acme/general\\t"'),
        "sources/chat/a.md",
        CHAT,
    ),
    "true and 'true'": (
        "sources/document/b.md",
        _document("true"),
        "sources/document/a.md",
        _document('"true"'),
    ),
    "a source keyed by a note's path": (
        "sources/document/b.md",
        _document("Notes/plan.md"),
        "Notes/plan.md",
        DOCUMENT,
    ),
}

LONG = (
    "\n\n".join(f"## Part {i}\n\nAlice Chen met @bob{i} at Fernhill Labs about #topic{i}." for i in range(40))
    + "\n"
)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the entity deriver reads back from `leaves` by leaf id: rows and texts."""
    seen: list[str] = []
    rows, texts = graph._leaf_rows, graph._leaf_texts

    def leaf_rows(con: object, leaf_ids: Sequence[str]) -> object:
        seen.append(f"rows of {len(leaf_ids)}")
        return rows(con, leaf_ids)  # type: ignore[arg-type]

    def leaf_texts(con: object, keys: Sequence[tuple[str, str]]) -> object:
        seen.append(f"texts of {len(keys)}")
        return texts(con, keys)  # type: ignore[arg-type]

    monkeypatch.setattr(graph, "_leaf_rows", leaf_rows)
    monkeypatch.setattr(graph, "_leaf_texts", leaf_texts)
    return seen


@pytest.mark.parametrize("case", sorted(SHARED))
def test_a_save_reads_back_only_the_leaves_another_note_may_hold(
    vault: Path, reads: list[str], case: str
) -> None:
    copy_path, copy_text, path, text = SHARED[case]
    write(vault, ".vaultmind/config.toml", '[entities]\nner_model = "off"\n')
    write(vault, path, text)
    write(vault, copy_path, copy_text)
    write(vault, "Notes/long.md", LONG)
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        shared = memory.index.scalar(
            "SELECT count(*) FROM (SELECT id FROM leaves GROUP BY id HAVING count(*) = 2)"
        )
        assert shared == memory.index.scalar("SELECT count(*) FROM leaves WHERE note_path = ?", [path]) > 0

        # a long note of your own, a leaf changed and one added: its rows are the ones written
        reads.clear()
        write(
            vault,
            "Notes/long.md",
            LONG.replace("#topic3.", "#topic3 and Harbor Hall.") + "\nBob Stone, #late.\n",
        )
        memory.sync()
        assert reads == []
        assert dump_entities(memory) == cold_rebuild(config)

        # either note of a pair holding the same leaves: read back, as the other holds them
        for edited, body in ((copy_path, copy_text), (path, text)):
            reads.clear()
            write(vault, edited, body.replace("#launch", "#start", 1))
            memory.sync()
            assert any(read.startswith("rows of") for read in reads)
            assert dump_entities(memory) == cold_rebuild(config)
            write(vault, edited, body)
            memory.sync()
            assert dump_entities(memory) == cold_rebuild(config)

        # the copy deleted: the leaves it held are the other note's alone again
        (vault / copy_path).unlink()
        memory.sync()
        assert dump_entities(memory) == cold_rebuild(config)
