"""A summary's title names its source as its notes do together, not as one of them does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from vaultmind.cli.main import main
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory
from vaultmind.tree.engine import flush, reseal_stale, seal_ready
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.refresh import refresh_summaries

from .conftest import write
from .test_ingest_email import M1, M2, M3, OTHER, write_mbox
from .treekit import PEOPLE, chat_day, summary_rows, text, tree_config

START = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)


def _note(vault: Path, source_id: str, scope: str, name: str, title: str, day: int, first: int) -> None:
    date = START + timedelta(days=day)
    messages = [
        Message(f"{day}.{i}", PEOPLE[i % len(PEOPLE)], date + timedelta(minutes=10 * (i - first)), text(i))
        for i in range(first, first + 3)
    ]
    write(
        vault,
        f"sources/chat/{scope}/{name}.md",
        render_source_note(SourceMeta("chat", source_id, scope, title), messages),
    )


@pytest.mark.parametrize(
    ("titles", "label"),
    [
        (("Ana and Ben, part 1 (2024-03-04)", "Ana and Ben, part 2 (2024-03-05)"), "Ana and Ben"),
        (("Ana and Ben", "Ana and Ben · part 2"), "Ana and Ben"),  # one title starts the other
        (("Venue deposit", "Re: Press kit"), "chat:box"),  # threads with nothing in common: the tree id
        (("Re: Venue deposit", "Re: Press kit"), "chat:box"),
    ],
)
def test_a_summary_is_titled_after_what_its_source_notes_share(
    vault: Path, titles: tuple[str, str], label: str
) -> None:
    for day, title in enumerate(titles):
        _note(vault, "chat:box", "box", f"n{day}", title, day, 3 * day)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        sealed = seal_ready(memory, summarizer=FallbackSummarizer()).sealed
    assert sealed
    for row in sealed:
        title = split_frontmatter((vault / row["path"]).read_text(encoding="utf-8")).data["title"]
        assert str(title).startswith(label + " · 2024-03-0"), title


def _sealed_then_titled_and_stale(vault: Path, memory: Memory, given: str) -> tuple[dict[str, object], Path, str, str]:
    """A day's summary sealed, then given a title by a person (`given`: the front matter lines
    that replace vaultmind's title) and made stale (its children's digest no longer matches),
    synced: the sealed row, its note's path, the generated title and the digest."""
    chat_day(vault, 0, 0, 3)
    memory.sync()
    (sealed,) = seal_ready(memory, summarizer=FallbackSummarizer()).sealed
    path = vault / sealed["path"]
    text = path.read_text(encoding="utf-8")
    generated = split_frontmatter(text).data["title"]
    digest = split_frontmatter(text).data["children_sha256"]
    text = text.replace(f'title: "{generated}"', given, 1)
    path.write_text(text.replace(digest, "0" * 64), encoding="utf-8")  # no longer matches: stale
    memory.sync()
    return sealed, path, generated, digest


def test_a_summary_sealed_again_over_the_same_children_keeps_your_title_and_properties(vault: Path) -> None:
    """docs/trees.md: same children, same id and path, so what you gave the note stays."""
    with Memory.open(tree_config(vault)) as memory:
        sealed, path, generated, digest = _sealed_then_titled_and_stale(vault, memory, 'title: "Venue week"\ntags:\n  - venue')
        (row,) = summary_rows(memory)
        assert row["stale"] and not row["user_edited"]
        report = reseal_stale(memory, max_nodes=5, summarizer=FallbackSummarizer())
        assert [u["path"] for u in report.unsealed] == [s["path"] for s in report.sealed] == [sealed["path"]]
        fm = split_frontmatter(path.read_text(encoding="utf-8")).data
        assert fm["title"] == "Venue week" and fm["aliases"][0] == generated and fm["tags"] == ["venue"]
        assert fm["children_sha256"] == digest and not summary_rows(memory)[0]["stale"]


class _StoppedWhileSummarizing(FallbackSummarizer):
    """Ctrl-C (or `vaultmind stop`) arriving while a seal is being summarized."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def summarize(self, children, budget):  # type: ignore[no-untyped-def]
        self.memory.stopping.set()
        return super().summarize(children, budget)


def test_a_stop_between_removing_a_stale_summary_and_sealing_it_again_keeps_your_title(vault: Path) -> None:
    """DESIGN: a crash at any instant loses nothing. The note is removed before its children are
    summarized again; what you gave it waits in the index, not in the stopped process's memory."""
    with Memory.open(tree_config(vault)) as memory:
        sealed, path, generated, _ = _sealed_then_titled_and_stale(vault, memory, 'title: "Venue week"\nmyprop: keep me')
        report = reseal_stale(memory, max_nodes=5, summarizer=_StoppedWhileSummarizing(memory))
        assert [u["path"] for u in report.unsealed] == [sealed["path"]] and not report.sealed
        assert not path.exists()
    with Memory.open(tree_config(vault)) as memory:  # the next start
        memory.sync()
        report = flush(memory, now=START + timedelta(days=30), summarizer=FallbackSummarizer())
        assert [s["path"] for s in report.sealed] == [sealed["path"]]
        fm = split_frontmatter(path.read_text(encoding="utf-8")).data
        assert fm["title"] == "Venue week" and fm["myprop"] == "keep me" and fm["aliases"][0] == generated
        waiting = memory.index.scalar("SELECT count(*) FROM jobs WHERE kind = 'tree.unsealed' AND status = 'ready'")
        assert waiting == 0


def test_a_removed_summary_whose_children_were_sealed_otherwise_leaves_nothing_waiting(vault: Path) -> None:
    """Its group can never be sealed again (a new leaf joined it): the note is a new one, with
    vaultmind's title, and the kept keys are let go once a pass completes."""
    with Memory.open(tree_config(vault)) as memory:
        sealed, _, _, _ = _sealed_then_titled_and_stale(vault, memory, 'title: "Venue week"')
        reseal_stale(memory, max_nodes=5, summarizer=_StoppedWhileSummarizing(memory))
        assert memory.index.scalar("SELECT count(*) FROM jobs WHERE kind = 'tree.unsealed' AND status = 'ready'") == 1
    chat_day(vault, 0, 0, 2)  # the last message deleted: its group is gone
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        report = flush(memory, now=START + timedelta(days=30), summarizer=FallbackSummarizer())
        (new,) = report.sealed
        assert new["path"] != sealed["path"]
        assert split_frontmatter((vault / new["path"]).read_text(encoding="utf-8")).data["title"] != "Venue week"
        waiting = memory.index.scalar("SELECT count(*) FROM jobs WHERE kind = 'tree.unsealed' AND status = 'ready'")
        assert waiting == 0


def test_a_mailbox_s_summaries_are_titled_after_the_mailbox_not_its_id(vault: Path, tmp_path: Path) -> None:
    """The threads of a mailbox share nothing ("Q3 budget", "Offsite"): its summaries are titled
    after the mailbox and their days ("Mailbox alice-example.com · 2024-03-11 · summary L1"),
    not after the tree id ("email:alice-example.com · …"); one titled so before is retitled."""
    mbox = write_mbox(tmp_path / "alice@example.com.mbox", M1, M2, M3, OTHER)
    Memory.open(tree_config(vault)).close()  # the vault's index, which the ingest writes to
    assert main(["ingest", "email", str(mbox), "--vault", str(vault)]) == 0
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        sealed = flush(memory, now=datetime(2030, 1, 1, tzinfo=UTC), summarizer=FallbackSummarizer()).sealed
        assert sealed and {row["tree"] for row in sealed} == {"email:alice-example.com"}
        for row in sealed:
            title = str(split_frontmatter((vault / row["path"]).read_text(encoding="utf-8")).data["title"])
            assert title.startswith("Mailbox alice-example.com · 2024-03-1") and title.endswith(" · summary L1"), title
        path = vault / sealed[0]["path"]
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("Mailbox alice-example.com", "email:alice-example.com"), encoding="utf-8")
        memory.sync()
        assert refresh_summaries(memory).refreshed
        assert path.read_text(encoding="utf-8") == text
