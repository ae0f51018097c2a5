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
from vaultmind.tree.note import summary_id, threads_label
from vaultmind.tree.refresh import refresh_summaries

from .conftest import write
from .test_ingest_email import message, write_mbox
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


def test_a_removed_summary_whose_children_were_sealed_otherwise_gives_them_your_title(vault: Path) -> None:
    """Its group can never be sealed again (a message of it deleted after the stop): the summary
    over what is left is a new note, with a new id, that takes the title you gave the old one
    (never lose data); nothing is left waiting."""
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
        assert split_frontmatter((vault / new["path"]).read_text(encoding="utf-8")).data["title"] == "Venue week"
        waiting = memory.index.scalar("SELECT count(*) FROM jobs WHERE kind = 'tree.unsealed' AND status = 'ready'")
        assert waiting == 0


def test_a_removed_summary_none_of_whose_children_is_left_leaves_nothing_waiting(vault: Path) -> None:
    """Every message under it deleted after the stop: nothing is summarized again, and the
    kept keys are let go once a pass completes."""
    with Memory.open(tree_config(vault)) as memory:
        _sealed_then_titled_and_stale(vault, memory, 'title: "Venue week"')
        reseal_stale(memory, max_nodes=5, summarizer=_StoppedWhileSummarizing(memory))
    (vault / "sources/chat/slack/fernhill/launch/2024-03-04.md").unlink()
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        report = flush(memory, now=START + timedelta(days=30), summarizer=FallbackSummarizer())
        assert not report.sealed
        waiting = memory.index.scalar("SELECT count(*) FROM jobs WHERE kind = 'tree.unsealed' AND status = 'ready'")
        assert waiting == 0


def test_a_mailbox_s_summaries_are_titled_after_the_subjects_of_their_threads(vault: Path, tmp_path: Path) -> None:
    """A mailbox's tree mixes threads that share nothing: each summary is titled after the
    subjects of the threads its leaves are in, in their order, two at most ("Dentist
    appointment"; "Kitchen budget; Book club in April"), not after the mailbox
    ("Mailbox home · …", which told the summaries apart by their days only), at every level; one
    titled so before is retitled."""
    dentist = "The dentist moved my appointment to Friday at ten. " * 12  # a group of its own
    mails = [message("d1@x.org", "ann@x.org", "Mon, 11 Mar 2024 08:00:00 +0000", "Dentist appointment", dentist)]
    for i in range(6):
        mails.append(
            message(
                f"k{i}@x.org", "bo@x.org", f"Mon, 11 Mar 2024 1{i}:00:00 +0000", ("Re: " if i else "") + "Kitchen budget",
                f"Point {i}: the tiles, the plumber's quote and the worktop cost more than planned, so we should"
                " ask two more builders for quotes before we sign anything next week.",
                reply_to=f"k{i - 1}@x.org" if i else None,
            )
        )
    mails.append(message("b1@x.org", "cy@x.org", "Wed, 13 Mar 2024 09:00:00 +0000", "Book club in April", "On the second Tuesday."))
    mbox = write_mbox(tmp_path / "home.mbox", *mails)
    config = tree_config(vault, **{"trees.l0_tokens": 130})
    Memory.open(config).close()  # the vault's index, which the ingest writes to
    assert main(["ingest", "email", str(mbox), "--vault", str(vault)]) == 0
    with Memory.open(config) as memory:
        memory.sync()
        sealed = flush(memory, now=datetime(2030, 1, 1, tzinfo=UTC), summarizer=FallbackSummarizer()).sealed
        titles = [str(split_frontmatter((vault / row["path"]).read_text(encoding="utf-8")).data["title"]) for row in sealed]
        assert titles == [
            "Dentist appointment · 2024-03-11 · summary L1",
            "Kitchen budget · 2024-03-11 · summary L1",
            "Kitchen budget · 2024-03-11 · summary L1",
            "Kitchen budget; Book club in April · 2024-03-11 – 2024-03-13 · summary L1",
            "Dentist appointment; Kitchen budget · 2024-03-11 · summary L2",
        ]
        path = vault / sealed[0]["path"]
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("Dentist appointment", "Mailbox home"), encoding="utf-8")  # an earlier title
        memory.sync()
        assert refresh_summaries(memory).refreshed
        assert path.read_text(encoding="utf-8") == text


@pytest.mark.parametrize(
    ("subjects", "label"),
    [
        (["Kitchen budget", "Kitchen  budget", ""], "Kitchen budget"),  # one thread, its leaves
        (["Dentist", "Kitchen budget", "Dentist"], "Dentist; Kitchen budget"),
        (["Dentist", "Kitchen budget", "Book club", "Rent", "Book club"], "Dentist; Kitchen budget and 2 more"),
        (["", " "], None),  # no subject: the mailbox's label
    ],
)
def test_a_mailbox_summary_s_label_names_two_threads_at_most(subjects: list[str], label: str | None) -> None:
    assert threads_label(subjects) == label


def test_a_summary_named_before_names_followed_messages_keeps_its_name_your_title_and_links(vault: Path) -> None:
    """A summary sealed by an earlier version is named from its children's ids (their text in
    them); sealed again over the same children after an upgrade it keeps that name and path,
    with your title and properties, and the links to it, not a new name with vaultmind's title."""
    with Memory.open(tree_config(vault)) as memory:
        sealed, path, generated, _ = _sealed_then_titled_and_stale(vault, memory, 'title: "Venue week"\nmyprop: keep me')
        (row,) = summary_rows(memory)
        earlier = summary_id(str(row["tree"]), 1, list(row["children"]))  # the earlier scheme: the leaf ids
        assert earlier != sealed["id"]
        old = path.with_name(f"{earlier}.md")
        old.write_text(path.read_text(encoding="utf-8").replace(str(sealed["id"]), earlier), encoding="utf-8")
        path.unlink()
        write(vault, "Plans.md", f"# Plans\n\nSee [[{old.stem}]] for the venue week.\n")
        memory.sync()
        report = reseal_stale(memory, max_nodes=5, summarizer=FallbackSummarizer())
        rel = old.relative_to(vault).as_posix()
        assert [u["path"] for u in report.unsealed] == [s["path"] for s in report.sealed] == [rel]
        assert [s["id"] for s in report.sealed] == [earlier] and not path.exists()
        fm = split_frontmatter(old.read_text(encoding="utf-8")).data
        assert fm["id"] == earlier and fm["title"] == "Venue week" and fm["myprop"] == "keep me"
        assert fm["aliases"][0] == generated
        assert not summary_rows(memory)[0]["stale"]
