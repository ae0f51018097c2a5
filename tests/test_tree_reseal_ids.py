"""A summary sealed again keeps its id only over the very children it was sealed over: after a
message or note under it was deleted it is a new note, with the id, path and bytes a fresh vault
holding the same messages gives it (docs/trees.md, "Links and titles follow"), and the old note
is gone, not left beside it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from vaultmind.memory import Memory
from vaultmind.tree.view import maintain

from .treekit import chat_day, summary_rows, tree_config

LATER = datetime(2030, 1, 1, tzinfo=UTC)


def _summaries(vault: Path) -> dict[str, bytes]:
    return {str(p.relative_to(vault)): p.read_bytes() for p in sorted((vault / "summaries").rglob("*.md"))}


def _sealed(vault: Path) -> dict[str, bytes]:
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        maintain(memory, now=LATER, flush_all=True)
        again = maintain(memory, now=LATER, flush_all=True)
        assert not again.sealed and not again.unsealed  # a rerun rewrites nothing
    return _summaries(vault)


def test_a_summary_sealed_again_after_a_note_under_it_was_deleted_is_the_one_a_fresh_vault_gives(tmp_path: Path) -> None:
    edited, fresh = tmp_path / "edited", tmp_path / "fresh"
    for vault in (edited, fresh):
        vault.mkdir()
        chat_day(vault, 0, 0, 2)
    gone = chat_day(edited, 1, 2, 1)  # one L1 over three messages of two days
    with Memory.open(tree_config(edited)) as memory:
        memory.sync()
        (first,) = maintain(memory, now=LATER, flush_all=True).sealed
        assert first["children"] == 3
        old = edited / first["path"]
        (edited / gone).unlink()
        memory.sync()
        report = maintain(memory, now=LATER, flush_all=True)
        assert [u["id"] for u in report.unsealed] == [first["id"]]
        (again,) = report.sealed
        (row,) = summary_rows(memory)
        assert again["id"] != first["id"] and again["children"] == 2 and not old.exists()
        assert row["id"] == again["id"] and not memory.index.scalar(
            "SELECT count(*) FROM jobs WHERE kind = 'tree.unsealed' AND status = 'ready'"
        )
    expected = _sealed(fresh)
    assert len(expected) == 1 and _summaries(edited) == expected  # same path, same bytes


def test_a_summary_sealed_again_over_the_same_children_keeps_its_id(vault: Path) -> None:
    """A message edited under it: the same children, so the same note (its links still resolve)."""
    chat_day(vault, 0, 0, 3)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        (first,) = maintain(memory, now=LATER, flush_all=True).sealed
        source = vault / "sources/chat/slack/fernhill/launch/2024-03-04.md"
        source.write_text(source.read_text(encoding="utf-8").replace("Update 0000", "Update 0009"), encoding="utf-8")
        memory.sync()
        report = maintain(memory, now=LATER, flush_all=True)
        assert [u["id"] for u in report.unsealed] == [first["id"]]
        (again,) = report.sealed
        assert again["id"] == first["id"] and again["path"] == first["path"] and again["children"] == 3
