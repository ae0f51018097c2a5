"""Trees and buffers derived from the index; gates (token budget, fan-out), cascade, flush."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from vaultmind.memory import Memory
from vaultmind.tree.buffers import buffer, tree_states
from vaultmind.tree.engine import flush, seal_ready
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.note import tree_for_note, tree_slug
from vaultmind.tree.settings import TreeSettings

from .conftest import write
from .treekit import TREE, chat_day, l0_ids, summary_rows, tokens_of, tree_config, tree_leaf_ids

FALLBACK = FallbackSummarizer()


def test_tree_ids_and_folders() -> None:
    assert (
        tree_for_note("source", "sources/chat/x/2024-03-04.md", "slack:acme/general") == "slack:acme/general"
    )
    assert tree_for_note("user", "Projects/Tidepool.md", None) == "notes:Projects"
    assert tree_for_note("user", "Inbox.md", None) == "notes:/"
    assert tree_for_note("summary", "summaries/x/L1/s-1.md", None) is None
    assert tree_for_note("entity", "entities/person/a.md", None) is None
    assert tree_slug("slack:acme/general") == "slack-acme-general"
    assert tree_slug("notes:/") == "notes"
    assert tree_slug("notes:Projects") == "notes-projects"


def test_buffers_are_derived_from_the_index(vault: Path) -> None:
    chat_day(vault, 1, 10, 2)  # written first, but later in time
    chat_day(vault, 0, 0, 2)
    write(
        vault,
        "Projects/Plan.md",
        "# Plan\n\nShip the Tidepool launch with Helen Okafor in Berlin on 23 April.\n",
    )
    write(
        vault,
        "Private/Diary.md",
        "---\nquote-only: true\n---\n# Diary\n\nA private entry about Berlin and Helen.\n",
    )
    write(
        vault,
        "entities/person/helen-okafor.md",
        '---\nvaultmind: entity\nid: "person:helen-okafor"\n---\n# Helen\n',
    )
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        settings = TreeSettings.from_extra(memory.config.extra)
        states = tree_states(memory.index, settings)
        assert set(states) == {TREE, "notes:Projects"}  # no entity tree, quote-only folder has no leaves
        assert l0_ids(memory) == tree_leaf_ids(memory)  # (time, path, position) order, not file order
        first = memory.index.query("SELECT note_path FROM leaves WHERE id = ?", [l0_ids(memory)[0]])[0][0]
        assert first.endswith("2024-03-04.md")
        assert states[TREE].l0_items == 4 and states[TREE].l0_tokens == tokens_of(0, 2) + tokens_of(10, 2)
        assert buffer(memory.index, settings, "notes:Projects", 0)[0].note_path == "Projects/Plan.md"


def test_tree_states_are_counted_once_per_committed_state(vault: Path) -> None:
    """Asked again with nothing written in between, the buffers come from the first count; a
    save, or a seal, counts them again."""
    chat_day(vault, 0, 0, 2)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        settings = TreeSettings.from_extra(memory.config.extra)
        first = tree_states(memory.index, settings)
        assert tree_states(memory.index, settings) is first
        assert tree_states(memory.index, settings, TREE) is not first  # one tree: its own count
        chat_day(vault, 1, 10, 2)
        memory.sync()
        again = tree_states(memory.index, settings)
        assert again is not first and again[TREE].l0_items == first[TREE].l0_items + 2
        flush(memory, now=datetime(2030, 1, 1, tzinfo=UTC), summarizer=FallbackSummarizer())
        assert tree_states(memory.index, settings)[TREE].l0_items == 0


def test_level0_seals_at_the_token_budget(vault: Path) -> None:
    chat_day(vault, 0, 0, 2)
    with Memory.open(tree_config(vault)) as memory:  # budget = messages 0..2
        memory.sync()
        assert seal_ready(memory, summarizer=FALLBACK).sealed == []  # 2 of 3: below the budget
        chat_day(vault, 0, 0, 4)
        memory.sync()
        report = seal_ready(memory, summarizer=FALLBACK)
        assert [s["level"] for s in report.sealed] == [1]
        leaves = tree_leaf_ids(memory)
        (row,) = summary_rows(memory)
        assert row["children"] == leaves[:3]  # the longest head within the budget
        assert l0_ids(memory) == leaves[3:]  # the rest keeps waiting
        assert row["leaf_ids"] == leaves[:3] and not row["stale"] and not row["user_edited"]


def test_upper_levels_seal_at_fanout_and_cascade(vault: Path) -> None:
    chat_day(vault, 0, 0, 9)
    chat_day(vault, 1, 9, 9)
    chat_day(vault, 2, 18, 9)
    with Memory.open(tree_config(vault)) as memory:  # 3 messages per L1, fan-out 3
        memory.sync()
        report = seal_ready(memory, summarizer=FALLBACK)
        rows = summary_rows(memory)
        by_level: dict[int, list[dict[str, object]]] = {}
        for row in rows:
            by_level.setdefault(int(row["level"]), []).append(row)  # type: ignore[call-overload]
        assert {level: len(r) for level, r in by_level.items()} == {1: 9, 2: 3, 3: 1}
        assert all(len(r["children"]) == 3 for r in by_level[2] + by_level[3])  # type: ignore[arg-type]
        assert by_level[3][0]["leaf_ids"] == tree_leaf_ids(memory)  # the root covers every leaf, in order
        assert len(report.sealed) == 13 and not report.aborted
        assert seal_ready(memory, summarizer=FALLBACK).sealed == []  # nothing left to do: idempotent


def test_cascade_never_goes_above_level_32(vault: Path) -> None:
    for n in range(3):  # three hand-written level-32 summaries: a full level-32 buffer
        write(
            vault,
            f"summaries/slack-fernhill-launch/L32/s-top{n}.md",
            f'---\nvaultmind: summary\nid: "s-top{n}"\ntree: "{TREE}"\nlevel: 32\nchildren: []\n---\nTop {n}.\n',
        )
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        assert len(summary_rows(memory)) == 3
        report = seal_ready(memory, summarizer=FALLBACK)
        assert report.sealed == [] and max(int(r["level"]) for r in summary_rows(memory)) == 32  # type: ignore[call-overload]


def test_flush_seals_quiet_level0_buffers_and_never_forces_upper_levels(vault: Path) -> None:
    chat_day(vault, 0, 0, 4)  # one L1 of 3, one message left waiting
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        seal_ready(memory, summarizer=FALLBACK)
        newest = datetime(2024, 3, 4, 9, 30, tzinfo=UTC)  # the waiting message's time
        assert (
            flush(memory, now=datetime(2024, 3, 5, 9, 0, tzinfo=UTC), summarizer=FALLBACK).sealed == []
        )  # 23.5 h
        report = flush(memory, now=newest.replace(day=5), summarizer=FALLBACK)  # exactly 24 h later
        assert report.flushed == [TREE] and [s["level"] for s in report.sealed] == [1]
        assert [s["children"] for s in report.sealed] == [1]  # a single leaf may be flushed at level 1 …
        assert l0_ids(memory) == []
        levels = [int(r["level"]) for r in summary_rows(memory)]  # type: ignore[call-overload]
        assert levels == [1, 1]  # … but two L1s (fan-out 3) are never forced into an L2
        again = flush(memory, now=datetime(2030, 1, 1, tzinfo=UTC), summarizer=FALLBACK)
        assert again.sealed == [] and again.flushed == []


def test_a_message_dated_in_the_future_does_not_hold_its_tree_open(vault: Path) -> None:
    """A leaf counts from its time, or from when its note was last written if that is earlier:
    one mis-dated 2099 kept the whole level-0 buffer from being flushed until then."""
    from vaultmind.markdown.render import Message, SourceMeta, render_source_note

    from .treekit import PEOPLE, SCOPE, SOURCE_ID, START, text

    messages = [Message(f"0.{i}", PEOPLE[i], START.replace(minute=10 * i), text(i)) for i in range(2)]
    messages.append(Message("0.2", PEOPLE[2], datetime(2099, 1, 1, tzinfo=UTC), text(2)))
    write(vault, f"sources/chat/{SCOPE}/2024-03-04.md", render_source_note(SourceMeta("chat", SOURCE_ID, SCOPE, "#launch"), messages))
    with Memory.open(tree_config(vault, **{"trees.l0_tokens": tokens_of(0, 10)})) as memory:
        memory.sync()
        report = flush(memory, now=datetime.now(UTC) + timedelta(days=2), summarizer=FALLBACK)
        assert report.flushed == [TREE] and [s["children"] for s in report.sealed] == [3]
