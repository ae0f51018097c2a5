"""A summary sealed again keeps its id only over the very children it was sealed over: after a
message or note under it was deleted it is a new note, with the id, path and bytes a fresh vault
holding the same messages gives it (docs/trees.md, "Links and titles follow"), and the old note
is gone, not left beside it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from vaultmind.markdown.frontmatter import split_frontmatter
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


def _given(path: Path, title: str) -> None:
    """What a person adds to a summary note in Obsidian: a title of theirs, tags, a property."""
    text = path.read_text(encoding="utf-8")
    generated = split_frontmatter(text).data["title"]
    text = text.replace(f'title: "{generated}"', f'title: "{title}"', 1)
    path.write_text(text.replace("\nvaultmind_body_sha256:", "\ntags: [mine]\nproject: harbor\nvaultmind_body_sha256:", 1), encoding="utf-8")


def _yours(path: Path) -> tuple[object, object, object]:
    fm = split_frontmatter(path.read_text(encoding="utf-8")).data
    return fm.get("title"), fm.get("tags"), fm.get("project")


def test_what_you_gave_a_summary_goes_to_the_one_sealed_again_after_a_note_under_it_was_deleted(tmp_path: Path) -> None:
    """Never lose data: the summary sealed over what is left is a new note (the id a fresh vault
    gives), and the title, tags and properties you gave the old one go with it, as they do when
    it is sealed again over the same children; vaultmind's new title stays its first alias."""
    vault = tmp_path / "v"
    vault.mkdir()
    chat_day(vault, 0, 0, 2)
    gone = chat_day(vault, 1, 2, 1)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        (first,) = maintain(memory, now=LATER, flush_all=True).sealed
        _given(vault / first["path"], "Venue week")
        memory.sync()
        (vault / gone).unlink()
        memory.sync()
        (again,) = maintain(memory, now=LATER, flush_all=True).sealed
        assert again["id"] != first["id"] and not (vault / first["path"]).exists()
        assert _yours(vault / again["path"]) == ("Venue week", ["mine"], "harbor")
        aliases = split_frontmatter((vault / again["path"]).read_text(encoding="utf-8")).data["aliases"]
        assert aliases == ["#launch · 2024-03-04 · summary L1"]
        assert not memory.index.scalar("SELECT count(*) FROM jobs WHERE kind = 'tree.unsealed' AND status = 'ready'")
        rerun = maintain(memory, now=LATER, flush_all=True)
        assert not rerun.sealed and not rerun.unsealed


def test_what_you_gave_a_summary_above_goes_with_it_when_a_message_below_is_deleted(vault: Path) -> None:
    """A message deleted under one of an L2's days: that day's L1 is a new note, so the L2 over
    it is one too; your title and tags on both follow them to the new notes."""
    for day in range(3):
        chat_day(vault, day, 3 * day, 3)
    chat_day(vault, 3, 9, 1)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        sealed = maintain(memory, now=LATER, flush_all=True).sealed
        day1 = sealed[1]  # the L1 over the second day
        (above,) = [s for s in sealed if s["level"] == 2]
        _given(vault / day1["path"], "Day two")
        _given(vault / above["path"], "Launch fortnight")
        memory.sync()
        chat_day(vault, 1, 3, 2)  # the day's last message deleted
        memory.sync()
        report = maintain(memory, now=LATER, flush_all=True)
        by_level = {s["level"]: s for s in report.sealed}
        assert sorted(by_level) == [1, 2] and by_level[2]["id"] != above["id"]
        assert _yours(vault / by_level[1]["path"]) == ("Day two", ["mine"], "harbor")
        assert _yours(vault / by_level[2]["path"]) == ("Launch fortnight", ["mine"], "harbor")
        assert not memory.index.scalar("SELECT count(*) FROM jobs WHERE kind = 'tree.unsealed' AND status = 'ready'")
