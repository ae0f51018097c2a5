"""A summary or entity note you move out of vaultmind's folders is yours, and feeds no tree."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from vaultmind.memory import Memory
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.view import maintain, tree_view

from .conftest import write
from .treekit import TREE, chat_day, summary_rows, tree_config

LATER = datetime(2030, 1, 1, tzinfo=UTC)
FALLBACK = FallbackSummarizer()


def test_a_summary_moved_out_of_summaries_is_not_summarized_again_and_its_tree_seals_its_own(
    vault: Path,
) -> None:
    chat_day(vault, 0, 0, 9)
    config = tree_config(vault)
    with Memory.open(config) as memory:
        memory.sync()
        maintain(memory, now=LATER, summarizer=FALLBACK)
        rows = summary_rows(memory)
    l1 = sorted(r["note_path"] for r in rows if r["level"] == 1)[0]
    (l2,) = [r["note_path"] for r in rows if r["level"] == 2]
    moved = vault / "Archive/Launch week summary.md"  # moved in Obsidian, which rewrites the link to it
    moved.parent.mkdir()
    (vault / l1).rename(moved)
    held = moved.read_bytes()
    l2_text = (vault / l2).read_text(encoding="utf-8")
    (vault / l2).write_text(
        l2_text.replace(f"[[{l1[:-3]}]]", "[[Archive/Launch week summary]]"), encoding="utf-8"
    )
    with Memory.open(config) as memory:
        memory.sync()
        report = maintain(memory, now=LATER, summarizer=FALLBACK)
        assert [t["tree"] for t in tree_view(memory)["trees"]] == [TREE], "no tree of the moved summary"
        assert {(s["level"], s["path"]) for s in report.sealed} == {(1, l1), (2, l2)}, "sealed again in place"
        assert {r["tree"] for r in summary_rows(memory)} == {TREE}
        again = maintain(memory, now=LATER, summarizer=FALLBACK)
        assert again.sealed == again.unsealed == []
    assert moved.read_bytes() == held, "the note you moved is left as it is"
    assert not (vault / "summaries/notes-archive").exists()


def test_an_entity_note_moved_among_your_notes_feeds_no_tree(vault: Path) -> None:
    write(
        vault,
        "People/Alice Chen.md",
        '---\nvaultmind: entity\nid: "person:alice-chen"\nkind: person\ndisplay_name: Alice Chen\n---\n'
        "# Alice Chen\n\nAlice Chen runs the venue bookings for the Harbor Hall launch in Berlin.\n",
    )
    write(
        vault,
        "People/Bob.md",
        "# Bob\n\nBob Stone checks the catering quote from Saffron Table every Friday.\n",
    )
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        (people,) = [t for t in tree_view(memory)["trees"] if t["tree"] == "notes:People"]
        assert people["leaves"] == 1, "Bob's note only"
