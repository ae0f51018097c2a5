"""How the daemon splits a large batch of the watcher's changes (a sync tool's, a checkout's, a
folder moved into the vault or renamed) into slices of at most `BULK_SLICE` paths, each one
`sync_paths` call, so that a save made meanwhile waits for one slice, not for them all.

Each path planned for a slice carries the vanished path a note most likely moved from
(`sync_diff.moved_from`): the two are applied in the same slice — and the sync applies them in
the same batch — so a renamed folder's notes stay in the index throughout, under one path or
the other, never both.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from vaultmind.index.store import Index
from vaultmind.sync_diff import indexed_states, moved_from
from vaultmind.sync_scan import scan_vault_subtree
from vaultmind.vault.scan import IgnoreRules

BULK_SLICE = 1000  # a batch of more paths (a sync tool's, a checkout's) is applied this many at a time

Planned = dict[str, str | None]
"""Paths to sync, in order, each with the vanished path applied with it (None: none)."""


def plan_paths(vault: Path, rels: list[str], rules: IgnoreRules, index: Index, *, bulk: int = BULK_SLICE) -> Planned:
    """The paths of a batch, each folder's notes listed before it when the batch holds more
    than `bulk` notes: a folder moved into the vault whole is one event, and its sync read
    every note under it at once — a save made meanwhile waited for all of them, not for a
    slice. The indexed notes gone that no note listed was paired with (deleted, as a save is)
    and the batch's other paths come first (a save in the same batch as the folder waits for
    nothing), then the notes listed, each with the indexed note it most likely was before a
    move (a renamed folder's old path names none of its notes: the index does), the vanished
    folders and the folders listed last: a folder's sync after its notes stats them only (they
    are in step by then) and takes out what it no longer holds."""
    notes: dict[str, list[str]] = {}
    for rel in rels:
        folder = vault / rel
        if folder.is_dir() and not folder.is_symlink():  # a symlinked one: a full pass (`sync_paths`)
            notes[rel] = sorted(scan_vault_subtree(vault, rel, rules).files)
    if len(rels) + sum(map(len, notes.values())) <= bulk:
        return dict.fromkeys(rels)
    vanished = [rel for rel in rels if rel not in notes and not os.path.lexists(vault / rel)]
    listed: Planned = dict.fromkeys(rel for rel in rels if rel not in notes and rel not in vanished)
    for under in notes.values():
        listed.update(dict.fromkeys(under))
    was = indexed_states(index, vanished, [rel + "/" for rel in vanished])  # what a vanished path held
    moved = moved_from(was, (path for path in listed if path not in was))
    deleted: Planned = dict.fromkeys(sorted(set(was) - set(moved.values())))  # first, as a save is
    listed.update(moved)
    folders_gone = dict.fromkeys(rel for rel in vanished if rel not in was)
    return {**deleted, **listed, **folders_gone, **dict.fromkeys(notes)}


def take(planned: Planned, count: int = BULK_SLICE) -> Planned:
    """The first paths planned, taken out of `planned`: `count` paths at most, a vanished path
    applied with one counted as a path too (at least one planned, with its own). A slice is
    then `count` paths to sync, as it was before a move's paths were paired: a slice of 1,000
    moved notes and their 1,000 old paths read 1,000 files, as many as start the worker
    processes and put the vectors after the rows (`sync_load.POOL_MIN_FILES`,
    `sync_apply.VECTORS_AFTER_FILES`), which cost a renamed folder of 1,000 notes 3-4 s more."""
    first: Planned = {}
    paths = 0
    for rel, old in itertools.islice(planned.items(), count):
        paths += 1 if old is None else 2
        if first and paths > count:
            break
        first[rel] = old
    for rel in first:
        del planned[rel]
    return first


def add_planned(backlog: Planned, planned: Planned) -> None:
    """Add the paths of a later batch to those still waiting (`backlog`), no vanished path
    dropped: a moved note still waiting with the path it left, planned again with none (a sync
    tool touched it, in a batch of its own), keeps that path — it was replaced by none, and the
    old path stayed in the index, the note there twice, until the next whole-vault pass. Paired
    anew with another, the one it had is planned on its own (synced, it is removed)."""
    for rel, old in planned.items():
        waiting = backlog.get(rel)
        if waiting is not None and waiting != old:
            if old is None:
                continue
            backlog.setdefault(waiting, None)
        backlog[rel] = old


def paths_of(planned: Planned) -> tuple[list[str], list[str]]:
    """The paths of a slice, and the vanished paths applied with them (`sync_paths`'s `gone`)."""
    return list(planned), [old for old in planned.values() if old is not None]
