"""What a sync sees of the vault's folders: one folder's subtree scanned with the vault's ignore
rules, and the scan problems (unreadable folders, loops, bad names) a watcher's paths decide."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from vaultmind.index.store import Index
from vaultmind.model import FileStat, Problem
from vaultmind.vault.scan import IgnoreRules, ScanResult, scan_vault

# Problems a whole-vault scan finds (not a file's read): each such scan reports them afresh
SCAN_PROBLEMS = ("unreadable_folder", "unreadable_file", "unreadable_link", "symlink_loop", "symlink_duplicate", "broken_symlink", "bad_name")


def folder_problems(index: Index, vault: Path, prefixes: Sequence[str], scan: ScanResult) -> dict[str, list[Problem]]:
    """The scan problems (unreadable folders, loops, bad names) that the paths a watcher
    reported now decide, by path: those the subtrees scanned here found, and none for an
    older one inside them, or for an unreadable folder above them that can be listed again
    (a save inside it shows it can). The others wait for the next full pass."""
    out: dict[str, list[Problem]] = {}
    held = index.query(
        "SELECT DISTINCT path, kind FROM problems WHERE kind IN (SELECT unnest(?::VARCHAR[]))", [list(SCAN_PROBLEMS)]
    )
    for path, kind in held:
        inside = any((path + "/").startswith(prefix) for prefix in prefixes)
        folder = path.rstrip("/") + "/"
        above = kind == "unreadable_folder" and any(prefix.startswith(folder) for prefix in prefixes)
        if inside or (above and _listable(vault / path)):
            out.setdefault(path, [])
    for problem in scan.problems:
        out.setdefault(problem.path, []).append(as_scan_problem(problem))
    return out


def as_scan_problem(problem: Problem) -> Problem:
    """A problem of the scan as the index keeps it: a folder it could not list is an
    `unreadable_folder` (an `unreadable` file is a failed read; one the scan could not stat,
    an `unreadable_file`)."""
    kind = "unreadable_folder" if problem.kind == "unreadable" else problem.kind
    return Problem(problem.path, kind, problem.message)


def scan_vault_subtree(root: Path, rel_dir: str, rules: IgnoreRules) -> ScanResult:
    """Scan one folder of the vault, returning vault-relative paths."""
    sub = scan_vault(root / rel_dir, rules.below(rel_dir), vault=root)
    result = ScanResult()
    prefix = rel_dir.rstrip("/") + "/"
    result.files = {prefix + p: FileStat(prefix + p, s.size, s.mtime_ns, s.ctime_ns, s.ino) for p, s in sub.files.items()}
    result.unobservable = [prefix + p for p in sub.unobservable]
    result.problems = [Problem(prefix + p.path if p.path not in ("", ".") else rel_dir, p.kind, p.message) for p in sub.problems]
    return result


def _listable(folder: Path) -> bool:
    try:
        with os.scandir(folder):
            return True
    except OSError:
        return False
