"""The diff step of a sync (`sync.Syncer`): what the index holds of each path, which files must
be read, and what each one read means for its batch.

A file whose (size, mtime, ctime, inode) the index holds is unchanged, unless its last read
failed for a reason a stat cannot see change (permissions) or it is over the size cap (which
may have been lowered: it is read, and reported). A file read is touched (same hash: its stat
updated only), modified, renamed (a vanished path's hash reappears here), added, or too large
or unreadable (reported; an unreadable note's rows are kept).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from vaultmind.index.store import Index
from vaultmind.model import FileStat, Problem, SyncStats
from vaultmind.sync_note import Loaded
from vaultmind.sync_write import RETRIED, BatchPlan


@dataclass(frozen=True, slots=True)
class IndexedState:
    path: str
    size: int
    mtime_ns: int
    sha256: str
    ctime_ns: int | None = None  # None: indexed before vaultmind kept it
    ino: int | None = None  # likewise


def indexed_states(index: Index, paths: Sequence[str] | None, prefixes: Sequence[str] = ()) -> dict[str, IndexedState]:
    """What the index holds of `paths` and of every path under `prefixes`; of all, for None."""
    if paths is None:
        rows = index.query("SELECT path, size, mtime_ns, sha256, ctime_ns, ino FROM notes")
    else:
        if not paths and not prefixes:
            return {}
        rows = index.query(
            """
            SELECT path, size, mtime_ns, sha256, ctime_ns, ino FROM notes
            WHERE path IN (SELECT unnest(?::VARCHAR[]))
               OR list_any_value(list_filter(?::VARCHAR[], p -> starts_with(path, p))) IS NOT NULL
            """,
            [list(paths), list(prefixes)],
        )
    return {r[0]: IndexedState(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows}


def paths_to_retry(index: Index, *, parse_errors: bool = False) -> set[str]:
    """Paths whose last read failed for a reason a stat cannot see change (permissions); with
    `parse_errors`, also the notes the parser could not take (this vaultmind may)."""
    kinds = (*RETRIED, "parse_error") if parse_errors else RETRIED
    rows = index.query(f"SELECT DISTINCT path FROM problems WHERE kind IN ({', '.join(map(repr, kinds))})")
    return {row[0] for row in rows}


def unchanged(old: IndexedState | None, st: FileStat, *, retry: set[str], max_file_bytes: int) -> bool:
    """Whether the file at `st.path`, indexed as `old`, need not be read (see the module doc)."""
    return (
        old is not None
        and (old.size, old.mtime_ns, old.ctime_ns) == (st.size, st.mtime_ns, st.ctime_ns)
        # the inode: none kept yet (indexed before 0026) reads the note once; 0 is not
        # known (Windows' scandir gives none), and is not compared
        and old.ino is not None
        and (old.ino == st.ino or not old.ino or not st.ino)
        and old.path not in retry
        and st.size <= max_file_bytes  # over a lowered cap: read, and reported
    )


def moved_from(gone: Iterable[str], new: Iterable[str]) -> dict[str, str]:
    """Each new path mapped to the vanished path it most likely was moved from: one of the same
    file name, the one sharing the most folder names before it (a note of a renamed folder
    keeps its name under the folder). A guess from names only, made before any file is read:
    it says which removal goes with which write (in the same apply batch, the same slice of a
    large change, so a moved note is never missing nor there twice); whether it is a rename
    is the content hash's to say (`diff_loaded`).

    The pairs that share the longest tail of folder names are made first (`_by_tail`), so a
    path is not taken by one that shares only its file name from the one that shares its
    folder too; within a tail, in path order (the same pairs whatever order the paths come
    in). Each path is looked up once per folder level, not compared with every path of its
    name: a vault's 1,000 `index.md` moved took a second, its 3,000 seven."""
    olds = {path: path.split("/") for path in sorted(set(gone))}
    news = {path: path.split("/") for path in sorted(set(new) - set(olds))}
    moved: dict[str, str] = {}
    for depth in range(max((len(parts) for parts in olds.values()), default=0), 0, -1):
        waiting = _by_tail({path: parts for path, parts in news.items() if len(parts) >= depth}, depth)
        for old, parts in list(olds.items()):
            candidates = waiting.get(tuple(parts[-depth:])) if len(parts) >= depth else None
            if candidates:
                path = candidates.pop()
                moved[path] = old
                del olds[old], news[path]
    return moved


def _by_tail(paths: dict[str, list[str]], depth: int) -> dict[tuple[str, ...], list[str]]:
    """`paths` by their last `depth` names, each list in reverse path order (`pop` takes the first)."""
    out: dict[tuple[str, ...], list[str]] = {}
    for path, parts in reversed(paths.items()):
        out.setdefault(tuple(parts[-depth:]), []).append(path)
    return out


def diff_loaded(
    loaded: Loaded,
    old: IndexedState | None,
    plan: BatchPlan,
    stats: SyncStats,
    gone_hashes: Counter[str],
    shas: dict[str, str],
) -> None:
    """Put what the file read (`loaded`), indexed as `old`, means into its batch's `plan` and
    the sync's `stats`. `gone_hashes`: the hashes of the paths gone (a rename's), counted: each
    path gone pairs with one new path of its hash (notes of the same text renamed together);
    `shas`: the hash of each path the plan writes, for its apply."""
    path = loaded.path
    if loaded.problem is not None and loaded.keep_rows:
        plan.problems[path] = [loaded.problem]
        plan.read_only.add(path)
        if old is not None:
            stats.kept_unreadable += 1
            if loaded.problem.kind == "parse_error" and loaded.stat is not None:
                plan.touch[path] = loaded.stat  # not read (nor parsed) again until it changes
        return
    if loaded.stat is None:  # vanished between scan and read
        if old is not None:
            plan.remove.add(path)
        plan.clear_problems.add(path)
        return
    if loaded.sha is None:  # too large
        assert loaded.problem is not None
        plan.problems[path] = [loaded.problem]
        if old is not None:
            plan.remove.add(path)
        return
    sha = loaded.sha
    if old is not None and loaded.same:
        plan.touch[path] = loaded.stat
        plan.read_only.add(path)  # readable again, if it was not
        stats.touched += 1
        return
    problems = [found for found in (loaded.decode_problem, loaded.conflict) if found is not None]
    note = loaded.written
    if note is None:
        plan.problems[path] = problems
        if old is not None:
            plan.remove.add(path)
        return
    if note.frontmatter_error:
        problems.append(Problem(path, "frontmatter", f"{note.frontmatter_error}; the body is indexed"))
    plan.problems[path] = problems
    plan.write[path] = loaded
    plan.clear_problems.add(path)
    if old is not None:
        stats.modified += 1
    elif gone_hashes[sha] > 0:
        stats.renamed += 1
        gone_hashes[sha] -= 1
    else:
        stats.added += 1
    shas[path] = sha
