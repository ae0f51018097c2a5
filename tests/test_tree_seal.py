"""The two-phase seal under concurrency, the summary note on disk, and index parity."""

from __future__ import annotations

import shutil
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vaultmind.markdown.frontmatter import body_sha256, split_frontmatter
from vaultmind.markdown.tokens import count_tokens
from vaultmind.memory import Memory
from vaultmind.tree.engine import flush, seal_ready
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.note import parse_link
from vaultmind.tree.report import SealReport
from vaultmind.tree.summarize import SummaryText
from vaultmind.tree.view import maintain

from .conftest import snapshot_files, write
from .treekit import SlowSummarizer, chat_day, dump_all, l0_ids, summary_rows, tree_config, tree_leaf_ids

FALLBACK = FallbackSummarizer()
LATER = datetime(2030, 1, 1, tzinfo=UTC)


def _seal_in_thread(memory: Memory, summarizer: Any) -> tuple[threading.Thread, list[SealReport]]:
    out: list[SealReport] = []
    thread = threading.Thread(
        target=lambda: out.append(seal_ready(memory, summarizer=summarizer)), daemon=True
    )
    thread.start()
    return thread, out


def test_leaves_appended_while_the_summarizer_runs_stay_in_the_buffer(vault: Path) -> None:
    chat_day(vault, 0, 0, 4)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        before = tree_leaf_ids(memory)
        slow = SlowSummarizer()
        thread, reports = _seal_in_thread(memory, slow)
        assert slow.entered.wait(30)
        # The summarizer holds no lock: the index keeps answering and syncing meanwhile.
        chat_day(vault, 1, 4, 1)
        memory.sync_paths([f"sources/chat/{'slack/fernhill/launch'}/2024-03-05.md"])
        assert l0_ids(memory) == tree_leaf_ids(memory)  # nothing sealed yet
        slow.release.set()
        thread.join(30)
        (report,) = reports
        assert [s["children"] for s in report.sealed] == [3] and not report.aborted
        (row,) = summary_rows(memory)
        assert row["children"] == before[:3]  # exactly the snapshot
        appended = [i for i in tree_leaf_ids(memory) if i not in before]
        assert len(appended) == 1
        assert l0_ids(memory) == [before[3], *appended]  # the late leaf survived, in order


def test_sealing_stops_between_seals_once_the_daemon_stops(vault: Path) -> None:
    """A stopping daemon closes the index after its background thread: a long run of seals
    (the first flush of a large vault) must end at the next seal, not write on."""
    chat_day(vault, 0, 0, 4)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        memory.stopping.set()
        assert flush(memory, now=LATER, summarizer=FALLBACK).sealed == []
        assert seal_ready(memory, summarizer=FALLBACK).sealed == [] and summary_rows(memory) == []
        memory.stopping.clear()
        assert flush(memory, now=LATER, summarizer=FALLBACK).sealed


def test_upkeep_begins_no_phase_once_the_daemon_stops(vault: Path) -> None:
    """`maintain` on the way out would read every tree's state three times for nothing."""
    chat_day(vault, 0, 0, 4)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        memory.stopping.set()
        report = maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK)
        assert report.sealed == [] and report.flushed == [] and summary_rows(memory) == []
        memory.stopping.clear()
        report = maintain(memory, now=LATER, flush_all=True, summarizer=FALLBACK)
        assert report.sealed and report.flushed and summary_rows(memory)


def test_a_competing_seal_wins_cleanly(vault: Path) -> None:
    chat_day(vault, 0, 0, 4)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        first, second = SlowSummarizer(), SlowSummarizer()
        thread_a, reports_a = _seal_in_thread(memory, first)
        assert first.entered.wait(30)
        thread_b, reports_b = _seal_in_thread(memory, second)
        assert second.entered.wait(30)  # both took the same snapshot
        first.release.set()
        thread_a.join(30)
        second.release.set()
        thread_b.join(30)
        (a,), (b,) = reports_a, reports_b
        assert len(a.sealed) == 1 and not a.aborted
        assert b.sealed == [] and "another seal won" in b.aborted[0]["reason"]
        rows = summary_rows(memory)
        assert len(rows) == 1  # no duplicate
        assert sorted(p.name for p in (vault / "summaries").rglob("*.md")) == [
            Path(rows[0]["note_path"]).name
        ]


class _Verbose:
    """A summarizer that ignores its budget (the reference's small-model failure)."""

    name = "verbose"
    identity = "ollama:verbose@000000000000"

    def summarize(self, children: Any, budget_tokens: int) -> SummaryText:
        text = " ".join(c.text for c in children)
        return SummaryText(text + " " + text, self.identity, llm_calls=1)


def test_a_summary_is_never_longer_than_its_children(vault: Path) -> None:
    chat_day(vault, 0, 0, 4)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        report = seal_ready(memory, summarizer=_Verbose())
        (sealed,) = report.sealed
        assert sealed["summarizer"] == "fallback" and "longer than its children" in sealed["note"]
        assert report.llm_calls == 1 and report.fallbacks == 1
        (row,) = summary_rows(memory)
        body = split_frontmatter((vault / row["note_path"]).read_text(encoding="utf-8")).body
        children = memory.index.query(
            "SELECT sum(token_count) FROM leaves WHERE id IN (SELECT unnest(?::VARCHAR[]))", [row["children"]]
        )[0][0]
        assert 0 < count_tokens(body) <= min(400, children)


def test_summary_notes_render_cleanly_and_deterministically(vault: Path, tmp_path: Path) -> None:
    chat_day(vault, 0, 0, 9)
    write(
        vault,
        "Projects/Tidepool.md",
        "# Tidepool\n\n## Plan\n\n"
        + "\n\n".join(f"Step {i}: Helen Okafor books the Berlin venue {i}. " * 6 for i in range(7)),
    )
    twin = tmp_path / "twin"
    shutil.copytree(vault, twin)
    with Memory.open(tree_config(vault, **{"trees.l0_tokens": 600})) as memory:
        memory.sync()
        report = seal_ready(memory, summarizer=FALLBACK)
        report.merge(flush(memory, now=LATER, summarizer=FALLBACK))
        assert {s["tree"] for s in report.sealed} == {"slack:fernhill/launch", "notes:Projects"}
        rows = summary_rows(memory)
        for row in rows:
            text = (vault / row["note_path"]).read_text(encoding="utf-8")
            fm = split_frontmatter(text)
            assert fm.error is None and fm.data["vaultmind"] == "summary" and fm.data["id"] == row["id"]
            assert fm.data["vaultmind_body_sha256"] == body_sha256(fm.body) and not row["user_edited"]
            assert "\r" not in text and text.endswith("\n")
            assert len(row["children"]) == len(fm.data["children"]) and not row["stale"]
            for link_text in fm.data["children"]:
                link = parse_link(link_text)
                assert link is not None and (vault / link.note_path).is_file()
                target = (vault / link.note_path).read_text(encoding="utf-8")
                if link.anchor.startswith("^"):
                    assert f"\n{link.anchor}\n" in target  # a real block id
                elif link.anchor:
                    assert f" {link.anchor[1:]}\n" in target  # a real heading
        sections = [r for r in rows if r["tree"] == "notes:Projects"]
        parts = [
            c
            for r in sections
            for c in split_frontmatter((vault / r["note_path"]).read_text()).data["children"]
        ]
        assert any("· part 2" in c for c in parts)  # a section cut in several leaves: one link per part
        # Obsidian's graph: the summary links down to its children.
        linked = memory.index.query(
            "SELECT DISTINCT target FROM links WHERE src_path = ?", [rows[0]["note_path"]]
        )
        assert linked
    with Memory.open(tree_config(twin, **{"trees.l0_tokens": 600})) as memory:
        memory.sync()
        seal_ready(memory, summarizer=FALLBACK)
        flush(memory, now=LATER, summarizer=FALLBACK)
    assert snapshot_files(vault) == snapshot_files(twin)  # same vault, same summaries, same bytes


def test_index_after_seals_equals_a_cold_rebuild(vault: Path) -> None:
    chat_day(vault, 0, 0, 9)
    chat_day(vault, 1, 9, 5)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        seal_ready(memory, summarizer=FALLBACK)
        assert {r["level"] for r in summary_rows(memory)} == {1, 2}
        incremental = dump_all(memory)
        memory.reindex()
        assert dump_all(memory) == incremental
