"""Which vanished path each new path of a move is paired with (`sync_diff.moved_from`): the
removal that goes with the write, in one apply batch and one slice of the daemon's."""

from __future__ import annotations

import random
import time

from vaultmind.sync_diff import moved_from
from vaultmind.watch_slices import Planned, add_planned


def test_the_path_sharing_its_folder_is_paired_before_one_sharing_only_its_name() -> None:
    """`a/index.md` was paired first, in path order, with the first new `index.md`, and took
    `c/x/index.md` from `b/x/index.md`, whose folder `x` it shares: each removal then went
    with the other note's write (one note there twice, the other's old path left, between
    the two batches)."""
    pairs = moved_from(["a/index.md", "b/x/index.md"], ["c/x/index.md", "d/index.md"])
    assert pairs == {"c/x/index.md": "b/x/index.md", "d/index.md": "a/index.md"}


def test_a_folder_moved_into_a_folder_that_is_moved_pairs_each_note_with_its_own_old_path() -> None:
    """`mv Inbox Projects/Inbox; mv Projects Archive`: names repeat in both folders."""
    gone = [f"Inbox/{n}.md" for n in ("index", "todo")] + [f"Projects/{n}.md" for n in ("index", "todo")]
    new = [f"Archive/Inbox/{n}.md" for n in ("index", "todo")] + [f"Archive/{n}.md" for n in ("index", "todo")]
    assert moved_from(gone, new) == {
        "Archive/Inbox/index.md": "Inbox/index.md",
        "Archive/Inbox/todo.md": "Inbox/todo.md",
        "Archive/index.md": "Projects/index.md",
        "Archive/todo.md": "Projects/todo.md",
    }


def test_only_paths_of_the_same_file_name_are_paired_and_each_once() -> None:
    pairs = moved_from(["a/n.md", "b/n.md", "c/other.md"], ["d/n.md", "e/renamed.md"])
    assert pairs == {"d/n.md": "a/n.md"}  # the first in path order of those alike
    assert moved_from([], ["a.md"]) == {} and moved_from(["a.md"], []) == {}


def test_the_pairs_do_not_depend_on_the_order_the_paths_come_in() -> None:
    gone = [f"Old/{i % 7}/{j}/index.md" for i in range(30) for j in range(3)] + ["Old/index.md", "x/index.md"]
    new = [f"New/{i % 5}/{j}/index.md" for i in range(30) for j in range(4)] + ["New/index.md"]
    expected = moved_from(gone, new)
    shuffled = random.Random(53)
    for _ in range(5):
        shuffled.shuffle(gone)
        shuffled.shuffle(new)
        assert moved_from(gone, new) == expected
    assert moved_from(reversed(gone), iter(new)) == expected


def test_thousands_of_notes_of_one_name_moved_are_paired_in_a_moment() -> None:
    """A site's or a Johnny-Decimal vault's `index.md` in every folder: each vanished path was
    compared with every new one of its name (1,000 took a second, 3,000 seven; the daemon's
    plan and the sync each pair them), now looked up once per folder level."""
    count = 4000
    gone = [f"Docs/s{i:05d}/index.md" for i in range(count)]
    new = [f"Site/s{i:05d}/index.md" for i in range(count)]
    started = time.perf_counter()
    pairs = moved_from(gone, new)
    elapsed = time.perf_counter() - started
    assert pairs == {f"Site/s{i:05d}/index.md": f"Docs/s{i:05d}/index.md" for i in range(count)}
    assert elapsed < 1.0, f"{elapsed:.2f} s"


def test_a_later_batch_added_to_the_backlog_drops_no_vanished_path() -> None:
    backlog: Planned = {"Archive/a.md": "Projects/a.md", "Archive/b.md": "Projects/b.md", "Archive/c.md": None}
    add_planned(backlog, {"Archive/a.md": None, "Archive/b.md": "Inbox/b.md", "Archive/c.md": "Old/c.md", "d.md": None})
    assert backlog == {
        "Archive/a.md": "Projects/a.md",  # kept
        "Archive/b.md": "Inbox/b.md",
        "Projects/b.md": None,  # synced on its own: removed
        "Archive/c.md": "Old/c.md",
        "d.md": None,
    }
