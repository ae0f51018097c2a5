"""Summary notes kept up to date after their seal: entity links that follow the entity notes,
titles, and no rewrite of an unchanged vault."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.memory import Memory
from vaultmind.tree.engine import seal_ready
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.note import children_digest
from vaultmind.tree.refresh import refresh_summaries
from vaultmind.tree.view import maintain

from .conftest import snapshot_files, write
from .treekit import chat_day, summary_rows, tree_config

FALLBACK = FallbackSummarizer()
LATER = datetime(2030, 1, 1, tzinfo=UTC)
HELEN = "entities/person/helen-okafor.md"
HELEN_NOTE = '---\nvaultmind: entity\nid: "person:helen-okafor"\n---\n# Helen Okafor\n'


def _front(vault: Path, rel: str) -> dict[str, object]:
    return split_frontmatter((vault / rel).read_text(encoding="utf-8")).data


def test_a_summary_links_an_entity_whose_note_came_after_its_seal(vault: Path) -> None:
    chat_day(vault, 0, 0, 9)  # three L1 summaries and one L2, every message names Helen Okafor
    config = tree_config(vault, **{"entities.create_threshold": 1000})  # no entity note yet
    with Memory.open(config) as memory:
        memory.sync()
        seal_ready(memory, summarizer=FALLBACK)
        rows = summary_rows(memory)
        assert sorted(r["level"] for r in rows) == [1, 1, 1, 2]
        assert all(_front(vault, r["note_path"])["entities"] == [] for r in rows)
        write(vault, HELEN, HELEN_NOTE)
        memory.sync()
        report = maintain(memory, now=LATER, summarizer=FALLBACK)
        assert not report.sealed and not report.unsealed
        rows = summary_rows(memory)
        link = "[[entities/person/helen-okafor|Helen Okafor]]"
        for row in rows:
            fm = _front(vault, row["note_path"])
            assert link in fm["entities"], row["note_path"]  # type: ignore[operator]
            assert "person:helen-okafor" in row["entities"]
            assert not row["stale"], "rewriting a child's links must not make its parent stale"
        before = snapshot_files(vault)
        again = maintain(memory, now=LATER, summarizer=FALLBACK)
        assert not again.refreshed and not again.sealed
        assert snapshot_files(vault) == before, "an unchanged vault is not rewritten"
        (vault / HELEN).unlink()  # a link to a deleted note would make an empty one when clicked
        memory.sync()
        maintain(memory, now=LATER, summarizer=FALLBACK)
        for row in summary_rows(memory):
            assert _front(vault, row["note_path"])["entities"] == [] and not row["stale"]


def _strip_title(text: str) -> str:
    """The note as vaultmind wrote it before summary titles existed."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("title:"))
    end = next(i for i in range(start + 2, len(lines)) if not lines[i].startswith("  - "))
    return "\n".join(lines[:start] + lines[end:])


def test_summaries_have_a_readable_title_and_old_ones_get_it_unless_edited(vault: Path) -> None:
    chat_day(vault, 0, 0, 6)
    chat_day(vault, 1, 6, 3)
    with Memory.open(tree_config(vault, **{"trees.fanout": 4})) as memory:  # three L1 summaries, no L2
        memory.sync()
        seal_ready(memory, summarizer=FALLBACK)
        rows = sorted(summary_rows(memory), key=lambda r: (r["level"], str(r["time_start"])))
        titles = [_front(vault, r["note_path"])["title"] for r in rows]
        assert titles == [
            "#launch · 2024-03-04 · summary L1",
            "#launch · 2024-03-04 · summary L1",
            "#launch · 2024-03-05 · summary L1",
        ]
        for row, title in zip(rows, titles, strict=True):
            assert _front(vault, row["note_path"])["aliases"] == [title]
        old, edited, yours = (vault / r["note_path"] for r in rows[:3])
        written = {p: p.read_text(encoding="utf-8") for p in (old, edited, yours)}
        old.write_text(_strip_title(written[old]), encoding="utf-8")  # an older vaultmind's note
        edited_text = _strip_title(written[edited]).replace("\n---\n", "\n---\nMy own summary. ", 1)
        edited.write_text(edited_text, encoding="utf-8")
        mine = "aliases:\n  - launch notes\nvaultmind_body_sha256:"  # added in Obsidian, before titles
        yours.write_text(_strip_title(written[yours]).replace("vaultmind_body_sha256:", mine), encoding="utf-8")
        memory.sync()
        report = maintain(memory, now=LATER, summarizer=FALLBACK)
        assert not report.sealed and not report.unsealed
        assert old.read_text(encoding="utf-8") == written[old], "the title is back, byte for byte"
        assert edited.read_text(encoding="utf-8") == edited_text, "a summary you edited is never rewritten"
        assert _front(vault, rows[2]["note_path"])["aliases"] == [titles[2], "launch notes"]
        assert [r["user_edited"] for r in summary_rows(memory) if r["note_path"] == rows[1]["note_path"]] == [True]


def test_a_tree_named_by_channel_id_is_listed_with_its_channel_title(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Slack channel's tree is `slack:T1/C1` (ids: a renamed channel keeps its tree) and its
    folder `summaries/slack-t1-c1/`, while its notes are in `sources/chat/slack/t1/launch/`:
    `vaultmind tree` and the summaries' titles say which channel it is."""
    from vaultmind.cli.tree import print_trees
    from vaultmind.tree.view import tree_view

    chat_day(vault, 0, 0, 3, source_id="slack:T1/C1", scope="slack/t1/launch")
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        (sealed,) = seal_ready(memory, summarizer=FALLBACK).sealed
        listed = tree_view(memory)
        detail = tree_view(memory, "slack:T1/C1")
    (tree,) = listed["trees"]
    assert (tree["tree"], tree["title"], tree["folder"]) == ("slack:T1/C1", "#launch", "summaries/slack-t1-c1")
    assert detail["title"] == "#launch"
    assert sealed["path"].startswith("summaries/slack-t1-c1/L1/")
    assert _front(vault, sealed["path"])["title"] == "#launch · 2024-03-04 · summary L1"
    print_trees(listed, vault)
    assert capsys.readouterr().out.splitlines()[1].endswith("  #launch")


def test_a_title_you_gave_a_summary_is_kept_by_the_refresh(vault: Path) -> None:
    chat_day(vault, 0, 0, 6)
    chat_day(vault, 1, 6, 3)
    with Memory.open(tree_config(vault, **{"trees.fanout": 4})) as memory:  # three L1 summaries, no L2
        memory.sync()
        seal_ready(memory, summarizer=FALLBACK)
        rows = sorted(summary_rows(memory), key=lambda r: (r["level"], str(r["time_start"])))
        renamed, added, untouched = (vault / r["note_path"] for r in rows[:3])
        generated = [_front(vault, r["note_path"])["title"] for r in rows]
        text = renamed.read_text(encoding="utf-8")
        renamed.write_text(text.replace(f'title: "{generated[0]}"', 'title: "Venue week"', 1), encoding="utf-8")
        old = _strip_title(added.read_text(encoding="utf-8"))  # an older vaultmind's note, titled by you
        added.write_text(old.replace("\nid:", '\ntitle: "Catering and load tests"\nid:', 1), encoding="utf-8")
        untouched_text = untouched.read_text(encoding="utf-8")
        memory.sync()
        report = maintain(memory, now=LATER, summarizer=FALLBACK)
        assert not report.sealed and not report.unsealed
        assert _front(vault, rows[0]["note_path"])["title"] == "Venue week"
        assert _front(vault, rows[0]["note_path"])["aliases"] == [generated[0]]
        assert _front(vault, rows[1]["note_path"])["title"] == "Catering and load tests"
        assert _front(vault, rows[1]["note_path"])["aliases"] == [generated[1]]  # vaultmind's title, as an alias
        assert untouched.read_text(encoding="utf-8") == untouched_text
        titles = memory.index.query(
            "SELECT title FROM notes WHERE path IN (SELECT unnest(?::VARCHAR[])) ORDER BY title",
            [[r["note_path"] for r in rows[:2]]],
        )
        assert titles == [("Catering and load tests",), ("Venue week",)]
        assert not any(r["user_edited"] or r["stale"] for r in summary_rows(memory))
        before = snapshot_files(vault)
        again = maintain(memory, now=LATER, summarizer=FALLBACK)
        assert not again.refreshed and snapshot_files(vault) == before


def _nine_messages_then_helen(vault: Path, memory: Memory) -> dict[str, dict[str, object]]:
    """Three L1 summaries and one L2 sealed before Helen Okafor's entity note exists, then the note."""
    memory.sync()
    seal_ready(memory, summarizer=FALLBACK)
    rows = {str(r["note_path"]): r for r in summary_rows(memory)}
    assert sorted(int(r["level"]) for r in rows.values()) == [1, 1, 1, 2]  # type: ignore[call-overload]
    write(vault, HELEN, HELEN_NOTE)
    memory.sync()
    return rows


def _stop_after_level_1(memory: Memory) -> None:
    """The daemon stops right after the refresh synced the notes it rewrote at level 1."""
    sync_paths = memory.sync_paths

    def sync_then_stop(paths: list[str]) -> None:
        sync_paths(paths)
        memory.stopping.set()
        memory.sync_paths = sync_paths  # type: ignore[method-assign]

    memory.sync_paths = sync_then_stop  # type: ignore[method-assign]


def test_a_refresh_stopped_between_levels_is_finished_by_the_next_run(vault: Path) -> None:
    """The L1 summaries are rewritten (Helen's link), then the daemon stops before their parent
    is: the parent is not stale (it summarizes their text, which did not change), and the next
    run finishes the refresh — the parent is not summarized again."""
    chat_day(vault, 0, 0, 9)
    config = tree_config(vault, **{"entities.create_threshold": 1000})
    with Memory.open(config) as memory:
        rows = _nine_messages_then_helen(vault, memory)
        (l2_path,) = (p for p, r in rows.items() if r["level"] == 2)
        l2_body = split_frontmatter((vault / l2_path).read_text(encoding="utf-8")).body
        _stop_after_level_1(memory)
        stopped = refresh_summaries(memory)
        assert sorted(r["level"] for r in stopped.refreshed) == [1, 1, 1]
        assert [r["stale"] for r in summary_rows(memory) if r["note_path"] == l2_path] == [False]
    with Memory.open(config) as memory:  # the next start
        memory.sync()
        report = maintain(memory, now=LATER, summarizer=FALLBACK)
        assert not report.unsealed and not report.sealed, "nothing it summarizes changed"
        assert [(r["level"], r["path"]) for r in report.refreshed] == [(2, l2_path)]
        after = summary_rows(memory)
        assert sorted(str(r["note_path"]) for r in after) == sorted(rows)
        assert not any(r["stale"] for r in after)
        assert split_frontmatter((vault / l2_path).read_text(encoding="utf-8")).body == l2_body
        assert "[[entities/person/helen-okafor|Helen Okafor]]" in _front(vault, l2_path)["entities"]  # type: ignore[operator]
        assert memory.index.query("SELECT DISTINCT status FROM jobs WHERE kind = 'tree.refresh'") == [("done",)]
        (vault / HELEN).unlink()  # the links go again, and the stop lands after level 1 again …
        memory.sync()
        _stop_after_level_1(memory)
        assert sorted(r["level"] for r in refresh_summaries(memory).refreshed) == [1, 1, 1]
    l1 = vault / next(p for p, r in rows.items() if r["level"] == 1)
    l1.write_text(l1.read_text(encoding="utf-8").rstrip("\n") + "\n\nMy own note.\n", encoding="utf-8")
    with Memory.open(config) as memory:  # … and you edit a summary below the parent meanwhile
        memory.sync()
        report = maintain(memory, now=LATER, summarizer=FALLBACK)
        assert [u["level"] for u in report.unsealed] == [2], "the parent folds your edit in"


def test_a_refresh_runs_only_when_what_it_depends_on_changed(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vaultmind.tree import refresh

    reads: list[int] = []
    load_rows = refresh.load_rows

    def counted(*args: object) -> list[object]:
        reads.append(1)
        return load_rows(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(refresh, "load_rows", counted)
    chat_day(vault, 0, 0, 9)
    with Memory.open(tree_config(vault, **{"entities.create_threshold": 1000})) as memory:
        _nine_messages_then_helen(vault, memory)
        assert refresh_summaries(memory).refreshed and reads
        assert not refresh_summaries(memory).refreshed  # a pass after one that wrote: checks, writes nothing
        reads.clear()
        chat_day(vault, 1, 9, 1)  # a new message waits in the buffer: no summary depends on it
        memory.sync()
        assert not refresh_summaries(memory).refreshed and reads == []
        write(vault, HELEN, HELEN_NOTE.replace("# Helen Okafor", "# Helen Okafor\n\nOur venue contact."))
        memory.sync()  # the entity note's text changed, not its name or place: nothing read
        assert not refresh_summaries(memory).refreshed and reads == []
        retitled = HELEN_NOTE.replace("\n---\n", '\ndisplay_name: "Dr Helen Okafor"\naliases:\n  - "Helen Okafor"\n---\n', 1)
        write(vault, HELEN, retitled)  # retitled in Obsidian: every link says so
        memory.sync()
        assert len(refresh_summaries(memory).refreshed) == 4 and reads
        for row in summary_rows(memory):
            assert _front(vault, str(row["note_path"]))["entities"] == ["[[entities/person/helen-okafor|Dr Helen Okafor]]"]
        reads.clear()
        for day in ("2024-03-04", "2024-03-05"):  # the channel renamed: each day's note says so
            source = vault / f"sources/chat/slack/fernhill/launch/{day}.md"
            text = source.read_text(encoding="utf-8")
            source.write_text(text.replace("#launch · ", "#launch-week · "), encoding="utf-8")
        memory.sync()  # the source's title changed: every summary's title follows
        assert len(refresh_summaries(memory).refreshed) == 4 and reads
        for row in summary_rows(memory):
            assert str(_front(vault, str(row["note_path"]))["title"]).startswith("#launch-week · ")


def _sealed_with_helen(vault: Path, memory: Memory) -> list[str]:
    """Three L1 summaries and one L2 sealed with Helen Okafor's entity note there: all link it."""
    write(vault, HELEN, HELEN_NOTE)
    memory.sync()
    seal_ready(memory, summarizer=FALLBACK)
    paths = [str(r["note_path"]) for r in summary_rows(memory)]
    assert len(paths) == 4
    for path in paths:
        assert _front(vault, path)["entities"] == ["[[entities/person/helen-okafor|Helen Okafor]]"]
    return paths


def _move(vault: Path, old: str, new: str) -> None:
    (vault / new).parent.mkdir(parents=True, exist_ok=True)
    (vault / old).rename(vault / new)


def _as_rebuilt(memory: Memory) -> list[dict[str, object]]:
    """The summary rows, checked equal to those of a cold rebuild."""
    rows = summary_rows(memory)
    memory.reindex()
    assert summary_rows(memory) == rows
    return rows


def test_summaries_follow_an_entity_note_renamed_or_moved(vault: Path) -> None:
    """An entity note keeps the id its front matter declares wherever it lives: renamed in
    Obsidian (which rewrites the links to it, here before the note's own move is synced) or
    moved outside it (the links still name the old place), its summaries keep the link — at
    every level — and vaultmind rewrites its own to the new place, never one you edited."""
    chat_day(vault, 0, 0, 9)
    with Memory.open(tree_config(vault, **{"entities.create_threshold": 1000})) as memory:
        paths = _sealed_with_helen(vault, memory)
        renamed = "entities/person/team/Helen O.md"
        for path in paths:  # Obsidian rewrites the links to a renamed note (by name: the shortest)
            note = vault / path
            text = note.read_text(encoding="utf-8")
            note.write_text(text.replace("entities/person/helen-okafor|", "Helen O|"), encoding="utf-8")
        memory.sync()
        _move(vault, HELEN, renamed)
        memory.sync()
        assert [r["entities"] for r in _as_rebuilt(memory)] == [["person:helen-okafor"]] * 4
        renaming = maintain(memory, now=LATER, summarizer=FALLBACK)
        assert not renaming.sealed and not renaming.unsealed, "the children's text is what it was"
        for path in paths:  # as a seal writes it
            assert _front(vault, path)["entities"] == ["[[entities/person/team/Helen O|Helen Okafor]]"], path
        rows = _as_rebuilt(memory)
        assert [r["note_path"] for r in rows] == paths
        assert [(r["entities"], r["stale"]) for r in rows] == [(["person:helen-okafor"], False)] * 4
        l1 = vault / paths[0]
        mine = l1.read_text(encoding="utf-8").rstrip("\n") + "\n\nMy own note.\n"
        l1.write_text(mine, encoding="utf-8")
        memory.sync()
        assert [u["level"] for u in maintain(memory, now=LATER, summarizer=FALLBACK).unsealed] == [2]
        _move(vault, renamed, "entities/Helen.md")  # moved by hand: no link follows
        memory.sync()
        _as_rebuilt(memory)
        report = maintain(memory, now=LATER, summarizer=FALLBACK)
        assert not report.sealed and not report.unsealed
        assert sorted(r["path"] for r in report.refreshed) == sorted(p for p in paths if p != paths[0])
        assert l1.read_text(encoding="utf-8") == mine, "a summary you edited is yours"
        for path in paths[1:]:
            assert _front(vault, path)["entities"] == ["[[entities/Helen|Helen Okafor]]"], path
        rows = {r["note_path"]: r for r in summary_rows(memory)}
        assert [rows[p]["entities"] for p in paths[1:]] == [["person:helen-okafor"]] * 3
        assert [rows[p]["stale"] for p in paths[1:]] == [False] * 3, "the parent folded your edit in already"


def test_obsidian_rewriting_the_links_of_a_renamed_entity_summarizes_nothing_again(vault: Path) -> None:
    """A parent summarizes its children's text: the links Obsidian rewrites in the children's
    front matter when an entity note is renamed leave it as it is (before, its digest covered
    the children's files, and every parent of a renamed entity's summaries was summarized
    again, up to the root); a child whose text changes still makes it stale, and a digest
    recorded over the children's files, as vaultmind wrote it before, still holds."""
    chat_day(vault, 0, 0, 9)
    with Memory.open(tree_config(vault, **{"entities.create_threshold": 1000})) as memory:
        paths = _sealed_with_helen(vault, memory)
        parent = vault / paths[-1]
        body = split_frontmatter(parent.read_text(encoding="utf-8")).body
        for path in paths:
            note = vault / path
            text = note.read_text(encoding="utf-8")
            note.write_text(text.replace("entities/person/helen-okafor|", "Helen O|"), encoding="utf-8")
        _move(vault, HELEN, "entities/person/Helen O.md")
        memory.sync()
        assert [r["stale"] for r in _as_rebuilt(memory)] == [False] * 4
        report = maintain(memory, now=LATER, summarizer=FALLBACK)
        assert not report.sealed and not report.unsealed
        assert split_frontmatter(parent.read_text(encoding="utf-8")).body == body
        files = {p: hashlib.sha256((vault / p).read_bytes()).hexdigest() for p in paths[:-1]}
        text = parent.read_text(encoding="utf-8")
        recorded = str(_front(vault, paths[-1])["children_sha256"])
        parent.write_text(text.replace(recorded, children_digest(list(files.values()))), encoding="utf-8")
        memory.sync()
        assert [r["stale"] for r in _as_rebuilt(memory)] == [False] * 4, "a digest over the files holds"
        child = vault / paths[0]
        child.write_text(child.read_text(encoding="utf-8").rstrip("\n") + "\n\nMy own line.\n", encoding="utf-8")
        memory.sync()
        stale = {r["note_path"]: r["stale"] for r in _as_rebuilt(memory)}
        assert stale[paths[-1]], "a child's new text makes its parent stale"


def test_summaries_follow_an_entity_note_linked_by_the_end_of_its_path(vault: Path) -> None:
    """A link by the end of a note's path (`[[team/Helen O]]`, as Obsidian writes it when two
    notes share the name, in any case) finds that note as Obsidian finds it: a sync that writes
    the note recomputes the summaries linking it so, which then count its declared id (they
    had kept the id the link's path spells, found by its full path or name only)."""
    chat_day(vault, 0, 0, 9)
    with Memory.open(tree_config(vault, **{"entities.create_threshold": 1000})) as memory:
        paths = _sealed_with_helen(vault, memory)
        for path in paths:
            note = vault / path
            text = note.read_text(encoding="utf-8")
            note.write_text(text.replace("entities/person/helen-okafor|", "Team/helen O|"), encoding="utf-8")
        memory.sync()
        _move(vault, HELEN, "entities/person/team/Helen O.md")
        memory.sync()
        assert [r["entities"] for r in _as_rebuilt(memory)] == [["person:helen-okafor"]] * 4


def test_an_occurrence_found_after_the_seal_is_linked_by_the_next_gated_pass(vault: Path) -> None:
    """The NER catching up finds an entity with a note in leaves already summarized: nothing
    else the refresh fingerprints changes, and the summaries must still link it."""
    chat_day(vault, 0, 0, 9)
    with Memory.open(tree_config(vault, **{"entities.create_threshold": 1000})) as memory:
        write(vault, HELEN, HELEN_NOTE)
        memory.sync()
        with memory.index.transaction() as con:  # not found yet when the leaves are sealed
            con.execute("CREATE TEMP TABLE found_later AS SELECT * FROM occurrences WHERE entity_id = 'person:helen-okafor'")
            con.execute("DELETE FROM occurrences WHERE entity_id = 'person:helen-okafor'")
        seal_ready(memory, summarizer=FALLBACK)
        assert not refresh_summaries(memory).refreshed  # a complete pass that wrote nothing
        with memory.index.transaction() as con:  # the catch-up finds them
            assert con.execute("INSERT INTO occurrences SELECT * FROM found_later").fetchone()[0] > 0  # type: ignore[index]
        assert len(refresh_summaries(memory).refreshed) == 4
        for row in summary_rows(memory):
            assert _front(vault, str(row["note_path"]))["entities"] == ["[[entities/person/helen-okafor|Helen Okafor]]"]
