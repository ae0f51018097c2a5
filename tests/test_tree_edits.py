"""Edits flow back: stale ancestors, bounded re-seal, edited summaries kept, quote-only notes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

import pytest

from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.memory import Memory
from vaultmind.tree import engine, owned
from vaultmind.tree.engine import flush, reseal_stale, seal_ready
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.note import SummaryNote
from vaultmind.tree.view import maintain, tree_view

from .conftest import snapshot_files, write
from .treekit import SCOPE, TREE, chat_day, dump_all, l0_ids, summary_rows, tree_config, tree_leaf_ids

FALLBACK = FallbackSummarizer()
LATER = datetime(2030, 1, 1, tzinfo=UTC)
DAY0 = f"sources/chat/{SCOPE}/2024-03-04.md"


def _build(vault: Path, memory: Memory) -> None:
    """9 messages → three L1 summaries (3 leaves each) → one L2."""
    chat_day(vault, 0, 0, 9)
    memory.sync()
    seal_ready(memory, summarizer=FALLBACK)
    assert sorted(int(r["level"]) for r in summary_rows(memory)) == [1, 1, 1, 2]


def _edit_message(vault: Path, old: str, new: str) -> None:
    path = vault / DAY0
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _covered_once(memory: Memory) -> None:
    """Every leaf of the source is under exactly one L1 summary or waiting in the buffer."""
    rows = summary_rows(memory)
    covered = [leaf for r in rows if r["level"] == 1 for leaf in r["children"]]
    assert sorted(covered + l0_ids(memory)) == sorted(tree_leaf_ids(memory))
    assert len(covered) == len(set(covered))


def test_an_edited_leaf_makes_its_ancestors_stale_and_reseal_is_bounded(vault: Path) -> None:
    with Memory.open(tree_config(vault)) as memory:
        _build(vault, memory)
        before = {r["id"]: r for r in summary_rows(memory)}
        _edit_message(vault, "the builder for", "the painter for")  # same size, new text
        memory.sync()
        stale = {r["id"]: r for r in summary_rows(memory) if r["stale"]}
        # the L1 above it and the L2 above that
        assert sorted(int(r["level"]) for r in stale.values()) == [1, 2]
        view = tree_view(memory, TREE)
        assert [s["why"] for s in view["stale"]] == [
            "a child changed since this summary was sealed",
            "a summary below it is stale",
        ]
        # Bounded: one node per call.
        first = reseal_stale(memory, max_nodes=1, summarizer=FALLBACK)
        assert [u["level"] for u in first.unsealed] == [1] and [s["level"] for s in first.sealed] == [1]
        assert len(first.sealed) == 1 and sum(r["stale"] for r in summary_rows(memory)) == 1  # the L2 waits
        assert first.sealed[0]["path"] == first.unsealed[0]["path"], "the same children: the same name"
        assert tree_view(memory, TREE)["stale"][0]["why"] == "a child changed since this summary was sealed"
        second = reseal_stale(memory, max_nodes=5, summarizer=FALLBACK)
        assert [u["level"] for u in second.unsealed] == [2] and [s["level"] for s in second.sealed] == [2]
        assert second.sealed[0]["path"] == second.unsealed[0]["path"]
        after = summary_rows(memory)
        assert not any(r["stale"] for r in after)
        assert {r["id"] for r in after} == set(before), "sealed again under the same names"
        _covered_once(memory)
        incremental = dump_all(memory)
        memory.reindex()
        assert dump_all(memory) == incremental


def test_a_deleted_source_makes_summaries_stale_and_reseal_folds_what_is_left(vault: Path) -> None:
    with Memory.open(tree_config(vault)) as memory:
        chat_day(vault, 0, 0, 3)
        chat_day(vault, 1, 3, 3)
        chat_day(vault, 2, 6, 3)
        memory.sync()
        seal_ready(memory, summarizer=FALLBACK)
        (vault / f"sources/chat/{SCOPE}/2024-03-05.md").unlink()
        memory.sync()
        stale = [r for r in summary_rows(memory) if r["stale"]]
        assert sorted(int(r["level"]) for r in stale) == [1, 2]
        report = reseal_stale(memory, max_nodes=10, summarizer=FALLBACK)
        assert len(report.unsealed) == 2
        rows = summary_rows(memory)
        assert not any(r["stale"] for r in rows)
        assert sorted(int(r["level"]) for r in rows) == [1, 1]  # two L1s left: below the fan-out, no L2
        _covered_once(memory)


def test_an_edited_summary_is_kept_marked_and_never_overwritten(vault: Path) -> None:
    with Memory.open(tree_config(vault)) as memory:
        _build(vault, memory)
        l1 = next(r for r in summary_rows(memory) if r["level"] == 1)
        path = vault / l1["note_path"]
        mine = path.read_text(encoding="utf-8").rstrip("\n") + "\n\nMy own note: Helen prefers Tuesday.\n"
        path.write_text(mine, encoding="utf-8")
        memory.sync()
        rows = {r["id"]: r for r in summary_rows(memory)}
        assert rows[l1["id"]]["user_edited"] and not rows[l1["id"]]["stale"]
        l2 = next(r for r in rows.values() if r["level"] == 2)
        assert l2["stale"]  # its child's content changed: the parent folds the edit in
        # A leaf under the edited summary changes too: the summary is stale, but it is yours.
        child_text = memory.index.query("SELECT text FROM leaves WHERE id = ?", [l1["children"][0]])[0][0]
        _edit_message(vault, child_text.split(":")[0] + ":", child_text.split(":")[0] + " (edited):")
        memory.sync()
        report = maintain(memory, now=LATER, summarizer=FALLBACK)
        assert path.read_text(encoding="utf-8") == mine  # never overwritten
        assert any(k["path"] == l1["note_path"] and "edited by you" in k["reason"] for k in report.kept)
        rows = {r["id"]: r for r in summary_rows(memory)}
        assert rows[l1["id"]]["user_edited"] and rows[l1["id"]]["stale"]
        new_l2 = next(r for r in rows.values() if r["level"] == 2)
        assert not new_l2["stale"] and l1["id"] in new_l2["children"]
        assert [u["id"] for u in report.unsealed] == [l2["id"]]  # only the parent was re-sealed …
        assert new_l2["id"] == l2["id"]  # … over the same children (the edited one included), so same id
        assert split_frontmatter((vault / new_l2["note_path"]).read_text(encoding="utf-8")).body.strip()
        _covered_once(memory)
        view = tree_view(memory, TREE)
        assert view["stale"] == [] and [s["action"] for s in view["edited"]] == ["kept: you edited it"]


def test_a_parent_you_edited_is_reported_as_yours_not_stale(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vaultmind.cli.tree import print_tree

    with Memory.open(tree_config(vault)) as memory:
        _build(vault, memory)
        l2 = next(r for r in summary_rows(memory) if r["level"] == 2)
        path = vault / l2["note_path"]
        mine = path.read_text(encoding="utf-8").rstrip("\n") + "\n\nMy own note: the launch slipped a week.\n"
        path.write_text(mine, encoding="utf-8")
        _edit_message(vault, "Update 0004:", "Update 4004:")  # a leaf below it changes
        memory.sync()
        assert {r["id"]: r["stale"] for r in summary_rows(memory)}[l2["id"]]  # the index knows …
        view = tree_view(memory, TREE)
        assert [s["level"] for s in view["stale"]] == [1]  # … but only the L1 is listed as stale
        (edited,) = view["edited"]
        assert (edited["path"], edited["action"]) == (l2["note_path"], "kept: you edited it")
        assert edited["why"] == "a summary below it is stale"
        assert [lv["stale"] for lv in view["levels"]] == [1, 0] and [lv["edited"] for lv in view["levels"]] == [0, 1]
        (listed,) = tree_view(memory)["trees"]
        assert (listed["stale"], listed["edited"]) == (1, 1)
        print_tree(view)
        out = capsys.readouterr().out
        assert f"L2 {l2['note_path']}: a summary below it is stale — " not in out
        assert f"edited by you (kept as you wrote them):\n  L2 {l2['note_path']}" in out
        report = maintain(memory, now=LATER, summarizer=FALLBACK)
        assert path.read_text(encoding="utf-8") == mine
        assert [u["level"] for u in report.unsealed] == [1]
        assert tree_view(memory, TREE)["stale"] == []


def test_a_note_you_edited_at_the_target_path_is_not_overwritten(vault: Path) -> None:
    with Memory.open(tree_config(vault)) as memory:
        chat_day(vault, 0, 0, 3)
        memory.sync()
        report = seal_ready(memory, summarizer=FALLBACK)
        (sealed,) = report.sealed
        target = vault / sealed["path"]
        target.unlink()
        memory.sync()
        write(vault, sealed["path"], "# My own summary\n\nNo front matter, so this note is mine.\n")
        memory.sync_paths([sealed["path"]])  # a note without `vaultmind: summary` is not a summary row
        again = seal_ready(memory, summarizer=FALLBACK)
        # sealed beside your note, the same summary, at the next path; your note untouched
        assert not again.aborted and [k["path"] for k in again.kept] == [sealed["path"]]
        (beside,) = again.sealed
        assert beside["id"] == sealed["id"] and beside["path"] == sealed["path"][: -len(".md")] + "-2.md"
        assert target.read_text(encoding="utf-8").startswith("# My own summary")
        (row,) = summary_rows(memory)
        assert row["note_path"] == beside["path"] and not row["stale"] and not l0_ids(memory)
        files = snapshot_files(vault)
        later = maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK)
        assert not later.sealed and not later.aborted and not later.unsealed and snapshot_files(vault) == files


def test_notes_of_yours_at_every_path_of_a_summary_are_reported_with_what_to_do(vault: Path) -> None:
    with Memory.open(tree_config(vault)) as memory:
        chat_day(vault, 0, 0, 3)
        memory.sync()
        (sealed,) = seal_ready(memory, summarizer=FALLBACK).sealed
        (vault / sealed["path"]).unlink()
        stem = sealed["path"][: -len(".md")]
        mine = [sealed["path"], *(f"{stem}-{n}.md" for n in range(2, 9))]
        for path in mine:
            write(vault, path, "# Mine\n\nNot a summary.\n")
        memory.sync()
        files = snapshot_files(vault)
        again = seal_ready(memory, summarizer=FALLBACK)
        assert not again.sealed and [k["path"] for k in again.kept] == mine
        (aborted,) = again.aborted
        assert "notes of yours hold all 8 paths" in aborted["reason"] and "move one of them away" in aborted["reason"]
        assert snapshot_files(vault) == files


def test_a_summary_whose_vaultmind_key_you_changed_is_yours(vault: Path) -> None:
    """Ownership is the `vaultmind: summary` key and the body hash: change either and the note is
    yours. Changing the key takes the note out of the tree: its children are sealed again beside it."""
    with Memory.open(tree_config(vault)) as memory:
        chat_day(vault, 0, 0, 3)
        memory.sync()
        (sealed,) = seal_ready(memory, summarizer=FALLBACK).sealed
        target = vault / sealed["path"]
        claimed = target.read_text(encoding="utf-8").replace("vaultmind: summary", "vaultmind: mine", 1)
        target.write_text(claimed, encoding="utf-8")
        memory.sync()
        report = maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK)
        assert target.read_text(encoding="utf-8") == claimed  # not reverted
        (again,) = report.sealed
        assert again["path"].endswith("-2.md") and not report.aborted
        later = maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK)
        assert not later.sealed and not later.unsealed and target.read_text(encoding="utf-8") == claimed


def test_a_quote_only_note_is_never_summarized(vault: Path) -> None:
    write(
        vault,
        "Journal/2024-03-04.md",
        "---\nquote-only: true\n---\n# Monday\n\n" + "Helen Okafor called about the Berlin venue. " * 40,
    )
    write(vault, "Journal/2024-03-05.md", "# Tuesday\n\n" + "The Harbor Hall deposit is paid. " * 10)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        report = maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK)
        (sealed,) = report.sealed
        assert sealed["tree"] == "notes:Journal"
        (row,) = summary_rows(memory)
        paths = memory.index.query(
            "SELECT DISTINCT note_path FROM leaves WHERE id IN (SELECT unnest(?::VARCHAR[]))",
            [row["leaf_ids"]],
        )
        assert paths == [("Journal/2024-03-05.md",)]
        body = (vault / row["note_path"]).read_text(encoding="utf-8")
        assert "Helen Okafor called" not in body
        # the quote-only note is still indexed and searchable, verbatim
        quoted = memory.index.scalar("SELECT count(*) FROM leaves WHERE note_path = 'Journal/2024-03-04.md'")
        assert quoted > 0


def test_flush_is_reproducible_from_the_time_passed_in(vault: Path) -> None:
    with Memory.open(tree_config(vault)) as memory:
        chat_day(vault, 0, 0, 2)
        memory.sync()
        assert flush(memory, now=datetime(2024, 3, 4, 12, tzinfo=UTC), summarizer=FALLBACK).sealed == []
        assert len(flush(memory, now=datetime(2024, 3, 6, tzinfo=UTC), summarizer=FALLBACK).sealed) == 1


def test_a_rewritten_summary_keeps_the_properties_you_added(vault: Path) -> None:
    """A summary rewritten after its child note moved (its links follow) keeps the front matter
    keys vaultmind does not write, as you wrote them."""
    with Memory.open(tree_config(vault)) as memory:
        _build(vault, memory)
        l1 = next(r for r in summary_rows(memory) if r["level"] == 1)
        path = vault / l1["note_path"]
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("vaultmind: summary\n", "vaultmind: summary\ntags:\n  - keep-this\nmy_rating: 5\n", 1), encoding="utf-8")
        (vault / DAY0).rename(vault / DAY0.replace("2024-03-04.md", "2024-03-04 kickoff.md"))
        memory.sync()
        reseal_stale(memory, max_nodes=10, summarizer=FALLBACK)
        rewritten = path.read_text(encoding="utf-8")
    assert "2024-03-04 kickoff#^" in rewritten and "2024-03-04 kickoff#^" not in text, "its links follow the move"
    assert "\ntags:\n  - keep-this\nmy_rating: 5\n" in rewritten
    assert split_frontmatter(rewritten).data["my_rating"] == 5


def test_a_summary_links_only_the_entities_that_have_a_note(vault: Path) -> None:
    """Helen Okafor has an entity note, #tidepool none: a link to the topic's would lead nowhere
    (and clicking it in Obsidian would make an empty note)."""
    from vaultmind.tree.hydrate import _entity_infos, summary_entity_links

    write(vault, "entities/person/helen-okafor.md", '---\nvaultmind: entity\nid: "person:helen-okafor"\n---\n# Helen Okafor\n')
    write(vault, "notes/plan.md", "# Plan\n\nHelen Okafor leads the #tidepool launch.\n")
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        infos = _entity_infos(memory.index, ["person:helen-okafor", "topic:tidepool"])
    assert infos["person:helen-okafor"].has_note and not infos["topic:tidepool"].has_note
    links = summary_entity_links("Plan: Helen Okafor leads the Tidepool launch.", infos)
    assert links == ["[[entities/person/helen-okafor|Helen Okafor]]"]


def test_a_conflict_copy_of_a_summary_or_a_source_is_folded_once(vault: Path) -> None:
    """A sync tool's copy of an L1 summary ("… (conflict copy …).md", same summary id) had been
    sealed into the L2 beside its original, which made the L2 stale at once: the daemon
    re-sealed it every few seconds, for ever. A copy of a day note's leaves had counted twice."""
    chat_day(vault, 0, 0, 6)  # two L1 summaries: one short of the fanout
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        seal_ready(memory, summarizer=FALLBACK)
        [first, _] = sorted((r for r in summary_rows(memory) if r["level"] == 1), key=lambda r: r["note_path"])
        original = vault / first["note_path"]
        copy = original.with_name(original.stem + " (conflict copy 2026-01-01).md")
        copy.write_bytes(original.read_bytes())
        day = vault / DAY0
        day.with_name(day.stem + " (conflict copy 2026-01-01).md").write_bytes(day.read_bytes())
        memory.sync()
        seal_ready(memory, summarizer=FALLBACK)
        assert sorted(int(r["level"]) for r in summary_rows(memory) if "conflict" not in r["note_path"]) == [1, 1]
        assert not any(r["level"] == 2 for r in summary_rows(memory)), "two summaries and a copy are not three"
        chat_day(vault, 1, 6, 3)
        memory.sync()
        seal_ready(memory, summarizer=FALLBACK)
        [top] = [r for r in summary_rows(memory) if r["level"] == 2]
        assert len(set(top["children"])) == 3 == len(top["children"])
        text = (vault / top["note_path"]).read_text(encoding="utf-8")
        assert "conflict copy" not in text, "the parent links the originals"
        assert reseal_stale(memory, max_nodes=10, summarizer=FALLBACK).sealed == [], "nothing stale: no loop"
        assert not any(r["stale"] for r in summary_rows(memory))
        l1 = {r["id"]: r["children"] for r in summary_rows(memory) if r["level"] == 1}  # the copy: one id
        covered = [leaf for children in l1.values() for leaf in children]
        assert sorted(covered + l0_ids(memory)) == sorted(set(tree_leaf_ids(memory))), "each leaf once"


def _saved_meanwhile(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str, path: Path, text: str
) -> None:
    """Your editor saves `path` right after vaultmind judged it its own (`<module>.<name>` runs
    between that check and the write or delete)."""
    real = getattr(module, name)

    def then_you_save(*args: object, **kwargs: object) -> object:
        out = real(*args, **kwargs)
        path.write_text(text, encoding="utf-8")
        return out

    monkeypatch.setattr(module, name, then_you_save)


def test_a_summary_saved_by_you_while_it_is_rewritten_is_kept(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Memory.open(tree_config(vault)) as memory:
        chat_day(vault, 0, 0, 3)
        memory.sync()
        (sealed,) = seal_ready(memory, summarizer=FALLBACK).sealed
        path = vault / sealed["path"]
        note = SummaryNote(sealed["id"], TREE, 1, (), "0" * 64, None, None, (), "fallback", "Another text.")
        mine = path.read_text(encoding="utf-8") + "My own line.\n"
        _saved_meanwhile(monkeypatch, owned, "with_user_keys", path, mine)
        assert owned.write_owned(path, note) is None
        assert path.read_text(encoding="utf-8") == mine


def test_a_stale_summary_saved_by_you_while_it_is_removed_is_kept(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Memory.open(tree_config(vault)) as memory:
        chat_day(vault, 0, 0, 3)
        memory.sync()
        (sealed,) = seal_ready(memory, summarizer=FALLBACK).sealed
        _edit_message(vault, "Update 0001:", "Update 1001:")
        memory.sync()
        path = vault / sealed["path"]
        mine = path.read_text(encoding="utf-8") + "My own line.\n"
        _saved_meanwhile(monkeypatch, engine, "is_owned", path, mine)
        report = reseal_stale(memory, max_nodes=5, summarizer=FALLBACK)
        assert not report.unsealed and [k["path"] for k in report.kept] == [sealed["path"]]
        assert path.read_text(encoding="utf-8") == mine
