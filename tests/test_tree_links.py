"""Every note a tree folds is linked back exactly: a summary's children resolve to its leaves."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from vaultmind.memory import Memory
from vaultmind.tree.engine import reseal_stale
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.note import leaf_link, parse_link
from vaultmind.tree.view import maintain

from .conftest import migrations_through, snapshot_files, write
from .treekit import summary_rows, tree_config

FALLBACK = FallbackSummarizer()
LATER = datetime(2030, 1, 1, tzinfo=UTC)
BODY = "# Plan\n\nHelen Okafor booked the Harbor Hall for the launch on Friday in Berlin.\n"


@pytest.mark.parametrize(
    "path",
    ["Caps/Upper.MD", "Caps/Trail .md", "Caps/twice.md.md", "Caps/x.Md", "Caps/Lead/ Space.md", "Caps/a  b.md"],
)
def test_a_note_at_any_legal_path_is_summarized_once_and_stays_sealed(vault: Path, path: str) -> None:
    write(vault, path, BODY)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        report = maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK)
        assert not report.aborted, report.aborted
        (sealed,) = report.sealed
        (row,) = summary_rows(memory)
        assert not row["stale"] and len(row["children"]) == 1
        files = snapshot_files(vault)
        # the next passes find nothing to do: no stale summary deleted, nothing written again
        again = reseal_stale(memory, max_nodes=10, summarizer=FALLBACK)
        assert not again.unsealed and not again.sealed and not again.aborted
        later = maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK)
        assert not later.sealed and not later.unsealed and not later.aborted
        assert snapshot_files(vault) == files
        assert sealed["path"] in {p for p in files}


@pytest.mark.parametrize(
    "path",
    [
        "Caps/Upper.MD", "Caps/Trail .md", "Caps/twice.md.md", "Caps/ Lead.md", "a.md", "A/b c.md",
        "C# tips.md", "Plans [draft].md", "a|b ^c.md", "100% (final).md",
    ],
)  # fmt: skip
@pytest.mark.parametrize("anchor", ["", "^m-1", "#Plan", "#Day 2#Notes", "#Setup [v2] | draft"])
def test_a_leaf_link_reads_back_as_the_path_and_anchor_it_was_made_from(path: str, anchor: str) -> None:
    for part in (None, 2):
        link = parse_link(leaf_link(path, anchor, part, "Plan [draft] | v2"))
        assert link is not None and (link.note_path, link.anchor, link.part) == (path, anchor, part)


def test_a_note_whose_path_no_link_can_carry_stays_out_of_the_trees(vault: Path) -> None:
    """A leading space is lost by every wikilink reader: the note is searched, never folded."""
    write(vault, " Lead.md", BODY)
    write(vault, "Plain.md", BODY.replace("Friday", "Monday"))
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        report = maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK)
        assert not report.aborted
        (row,) = summary_rows(memory)
        assert memory.index.query(
            "SELECT DISTINCT note_path FROM leaves WHERE id IN (SELECT unnest(?::VARCHAR[]))", [row["leaf_ids"]]
        ) == [("Plain.md",)]
        assert memory.index.scalar("SELECT count(*) FROM leaves WHERE note_path = ' Lead.md'") > 0
        again = maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK)
        assert not again.sealed and not again.aborted and not again.unsealed


@pytest.mark.parametrize("path", ["Notes/C# tips.md", "Notes/Plans [draft].md", "Notes/a|b.md", "Notes/x^y.md"])
def test_a_note_whose_name_ends_a_wikilink_is_summarized_with_a_markdown_link_obsidian_follows(
    vault: Path, path: str
) -> None:
    """`# | ^ [ ]` end a wikilink's target (`[[Notes/C# tips]]` is a link to "Notes/C"): such a
    note was left out of the trees. Its leaves are linked as Obsidian documents for any path, a
    Markdown link with the path URL-encoded, which reads back as the note; the summary stays sealed
    and is written the same way again."""
    write(vault, path, BODY)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        report = maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK)
        assert not report.aborted, report.aborted
        (row,) = summary_rows(memory)
        assert not row["stale"]
        summary = (vault / row["note_path"]).read_text(encoding="utf-8")
        encoded = path.replace("#", "%23").replace(" ", "%20").replace("[", "%5B").replace("]", "%5D")
        encoded = encoded.replace("|", "%7C").replace("^", "%5E")
        name = path.removeprefix("Notes/").removesuffix(".md").replace("[", "").replace("]", "").replace("|", " ")
        assert f'  - "[{name} › Plan]({encoded}#Plan)"' in summary, summary
        assert "[[" not in summary.split("children:")[1].split("children_sha256")[0]
        files = snapshot_files(vault)
        again = maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK)
        assert not again.sealed and not again.unsealed and not again.aborted
        assert not reseal_stale(memory, max_nodes=10, summarizer=FALLBACK).unsealed
        assert snapshot_files(vault) == files


def test_a_summary_s_markdown_link_is_a_link_of_the_index_and_finds_its_summary_again(vault: Path) -> None:
    """A Markdown link in `children` (front matter) is recorded in `links` with its path decoded,
    as a wikilink is: a note deleted and written back (a sync tool's delete and create) makes its
    summary whole again, as it does the summary of a note linked by a wikilink."""
    write(vault, "Notes/C# tips.md", BODY)
    write(vault, "Other/Plain tips.md", BODY.replace("Friday", "Monday"))
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        assert not maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK).aborted
        rows = {row["tree"]: row for row in summary_rows(memory)}
        assert set(rows) == {"notes:Notes", "notes:Other"}
        links = memory.index.query("SELECT src_path, target, kind, heading FROM links ORDER BY 1")
        assert (rows["notes:Notes"]["note_path"], "Notes/C# tips.md", "markdown", "Plan") in links
        assert (rows["notes:Other"]["note_path"], "Other/Plain tips", "wikilink", "Plan") in links
        for path in ("Notes/C# tips.md", "Other/Plain tips.md"):
            text = (vault / path).read_text(encoding="utf-8")
            (vault / path).unlink()
            memory.sync()
            assert all(row["stale"] for row in summary_rows(memory) if row["tree"] == "notes:" + path.split("/")[0])
            write(vault, path, text)
            memory.sync()
            assert not any(row["stale"] for row in summary_rows(memory)), path


def test_an_index_whose_summaries_hold_markdown_links_is_rebuilt_for_them(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 0035: an index from before (the front matter's Markdown links not recorded) that
    holds such a summary is rebuilt once, and then records them; one without is not rebuilt (a
    note of yours with one records it when it next changes)."""
    migrations_through(monkeypatch, "0035_front_matter_markdown_links")  # seen alone
    write(vault, "Notes/C# tips.md", BODY)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        assert not maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK).aborted
        (row,) = summary_rows(memory)
        memory.index.con.execute("DELETE FROM links")  # as an index from before read it
        memory.index.con.execute("DELETE FROM migrations WHERE name = '0035_front_matter_markdown_links'")
    with Memory.open(tree_config(vault)) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        assert memory.index.query("SELECT target, kind FROM links WHERE src_path = ?", [row["note_path"]]) == [
            ("Notes/C# tips.md", "markdown")
        ]
    (vault / row["note_path"]).unlink()
    write(vault, "Reading.md", '---\nsource: "[the paper](Papers/Tidal%20energy.pdf)"\n---\nRead it.\n')
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        memory.index.con.execute("DELETE FROM migrations WHERE name = '0035_front_matter_markdown_links'")
    with Memory.open(tree_config(vault)) as memory:
        assert memory.index.get_meta("needs_rebuild") is None
