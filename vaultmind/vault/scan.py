"""Walk a vault and report what is there without reading file contents.

The walk never follows a symlink loop, prunes ignored folders early, and separates files it
saw from paths it could not observe (a folder it cannot list): the sync step must never take
an unobservable path for a deleted one.
"""

from __future__ import annotations

import copy
import errno
import os
import re
import stat as stat_mod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath

from vaultmind.model import FileStat, Problem
from vaultmind.vault.atomic import is_temp_name
from vaultmind.vault.layout import is_note

_GONE = (errno.ENOENT, errno.ENOTDIR)  # nothing at the path, or a file where a folder was


@dataclass(slots=True)
class ScanResult:
    files: dict[str, FileStat] = field(default_factory=dict)
    unobservable: list[str] = field(default_factory=list)  # folder prefixes ("dir/") we could not list
    problems: list[Problem] = field(default_factory=list)
    other_files: int = 0  # non-note files (attachments), counted only
    temps: list[str] = field(default_factory=list)  # vaultmind's own temporary files (`vault.atomic.is_temp_name`)

    def is_observed(self, path: str) -> bool:
        """Whether `path` was seen: not an unobservable path, nor inside one (by whole names:
        `a/ref` hides `a/ref` and `a/ref/x.md`, never `a/reference.md`; "" hides the vault)."""
        for hidden in self.unobservable:
            hidden = hidden.rstrip("/")
            if not hidden or path == hidden or path.startswith(hidden + "/"):
                return False
        return True


class IgnoreRules:
    """Glob rules over vault-relative POSIX paths, written as in a `.gitignore`.

    A pattern with a "/" before its end matches the whole path ("Templates/**",
    "daily/*.md", "a/**/b"); one without matches a file or folder name at any depth
    ("*.excalidraw.md", "node_modules"). "**" spans folders ("**/Private": a Private folder at
    any depth), "*" and "?" stay within one name. A trailing "/" ("Private/", "a/b/") matches
    folders only. A folder a pattern matches is left out with everything inside it.
    """

    def __init__(self, patterns: Iterable[str]):
        self.patterns = tuple(p.strip() for p in patterns if p.strip())
        rules: dict[tuple[bool, bool], list[str]] = {}  # (whole path, folders only) → regexes
        for pattern in self.patterns:
            if body := pattern.strip("/"):
                rules.setdefault(("/" in body, pattern.endswith("/")), []).append(_glob_to_regex(body))

        def joined(*keys: tuple[bool, bool], tail: str = "") -> re.Pattern[str] | None:
            found = [rx for key in keys for rx in rules.get(key, ())]
            return re.compile("(?:" + "|".join(found) + ")" + tail) if found else None

        # a file: the rules for any path; a folder: all, its own path or everything in it
        # matched at once (`ignores_dir` asks about "path/\x00")
        self._path, self._name = joined((True, False)), joined((False, False))
        self._folder_path = joined((True, False), (True, True), tail="(?:/\x00)?")
        self._folder_name = joined((False, False), (False, True))
        self._folder = ""  # the folder the paths asked about are relative to (`below`)

    def below(self, folder: str) -> IgnoreRules:
        """The same rules for paths relative to `folder` of the vault (a subtree's scan)."""
        rules = copy.copy(self)
        rules._folder = self._folder + folder.strip("/") + "/"
        return rules

    def ignores_file(self, path: str) -> bool:
        if self._folder:
            path = self._folder + path
        if self._path is not None and self._path.fullmatch(path):
            return True
        name = path.rsplit("/", 1)[-1]
        return self._name is not None and self._name.fullmatch(name) is not None

    def ignores_dir(self, path: str) -> bool:
        """True when folder `path` and everything under it is ignored: a name rule, a path rule
        matching the folder ("**/Private", "daily/*") or all inside it ("dir/**")."""
        if self._folder:
            path = self._folder + path
        if self._folder_name is not None and self._folder_name.fullmatch(path.rsplit("/", 1)[-1]):
            return True
        return self._folder_path is not None and self._folder_path.fullmatch(path + "/\x00") is not None

    def dead_patterns(self) -> list[str]:
        """The patterns that can match no path of the vault: nothing but "/", or a folder
        that is empty ("a//b"), "." or ".." ("./Private": paths are relative to the vault and
        have none of these)."""
        return [p for p in self.patterns if any(part in ("", ".", "..") for part in p.strip("/").split("/"))]


@lru_cache(maxsize=256)
def _glob_to_regex(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(ch))
        i += 1
    return "(?:" + "".join(out) + ")"


def scan_vault(root: Path, rules: IgnoreRules, *, vault: Path | None = None) -> ScanResult:
    """Stat every note under `root` (depth-first, sorted), honouring ignore rules. `vault`:
    the vault `root` lies in, when it is one of its folders (a symlink leading to a folder
    that holds the vault is not followed). A folder of the vault that is gone (removed since
    it was named, as a watcher's batch names it) holds nothing: its notes are deleted, as a
    full pass would; only the vault's own folder gone is unobservable."""
    result = ScanResult()
    gone_is_empty = vault is not None
    seen_dirs: set[tuple[int, int]] = set()
    try:
        st = root.stat()
    except OSError as exc:
        if gone_is_empty and exc.errno in _GONE:
            return result
        result.unobservable.append("")
        result.problems.append(Problem("", "unreadable", f"cannot read the vault folder: {exc.strerror}"))
        return result
    seen_dirs.add((st.st_dev, st.st_ino))
    vault = vault if vault is not None else root
    holding = _folders_holding(vault)
    _walk(str(root), "", rules, result, _Seen(seen_dirs, holding, folder_id(vault), gone_is_empty))
    return result


@dataclass(slots=True)
class _Seen:
    folders: set[tuple[int, int]]  # (device, inode) of every folder walked
    holding: set[tuple[int, int]]  # (device, inode) of the vault and of each folder above it
    vault: tuple[int, int] | None  # (device, inode) of the vault
    gone_is_empty: bool  # the walk's own folder, when gone, holds nothing (one of the vault's)


def _folders_holding(vault: Path) -> set[tuple[int, int]]:
    """(device, inode) of the vault's folder and of every folder above it: compared by identity,
    not by path, so case-insensitive file systems and bind mounts cannot hide a match."""
    return {key for folder in (vault, *vault.resolve().parents) if (key := folder_id(folder)) is not None}


def folder_id(folder: Path | str) -> tuple[int, int] | None:
    """A folder's (device, inode), None when nothing is at `folder`."""
    try:
        st = os.stat(folder)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _inside_vault(link: str, vault: tuple[int, int] | None) -> str | None:
    """The vault-relative path a symlink leads to, when that is inside the vault (compared by
    identity, as `_folders_holding` does): a folder there is walked, and a note indexed, under
    its own path (or ignored there); None when it leads elsewhere."""
    if vault is None:
        return None
    target = Path(os.path.realpath(link))
    for folder in target.parents:
        if folder_id(folder) == vault:
            return target.relative_to(folder).as_posix()
    return None


def linked_note(link: str, rel: str, vault: tuple[int, int] | None) -> Problem | None:
    """The problem of note `rel` when it is a symlink to a note inside the vault (`alias.md ->
    real.md`): that note is indexed under its own path, or ignored there, and never twice (the
    same leaves under two paths, every hit doubled); None for any other file. A symlink to a
    note kept outside the vault, or to a file of the vault that is no note (`plan.md ->
    plan.txt`, indexed nowhere else), is that note, indexed under the link's path."""
    if not os.path.islink(link) or (target := _inside_vault(link, vault)) is None or not is_note(target):
        return None
    return Problem(
        rel,
        "symlink_duplicate",
        f"symlink leads to {target}, a note of the vault indexed under its own path (unless the ignore rules leave it out);"
        " not indexed twice",
    )


def _walk(abs_dir: str, rel_dir: str, rules: IgnoreRules, result: ScanResult, seen: _Seen) -> None:
    """Depth first, each folder in name order. Iterative (a stack of folder listings): a
    recursive walk hit Python's recursion limit in a tree deeper than about 990 folders."""
    listings = [_listing(abs_dir, rel_dir, result, gone_is_empty=seen.gone_is_empty)]
    while listings:
        entries, rel_here = listings[-1]
        entry = next(entries, None)
        if entry is None:
            listings.pop()
            continue
        folder = _visit(entry, rel_here + entry.name, rules, result, seen)
        if folder is not None:
            listings.append(_listing(entry.path, folder, result))


def _listing(
    abs_dir: str, rel_dir: str, result: ScanResult, *, gone_is_empty: bool = False
) -> tuple[Iterator[os.DirEntry[str]], str]:
    """The entries of a folder in name order, with its vault-relative path (`a/b/`); none, said,
    when it cannot be listed (none, unsaid, when it is gone and `gone_is_empty`)."""
    try:
        with os.scandir(abs_dir) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        if gone_is_empty and exc.errno in _GONE:
            return iter([]), rel_dir
        result.unobservable.append(rel_dir)
        result.problems.append(
            Problem(rel_dir or ".", "unreadable", f"cannot list folder ({exc.strerror}); its notes are kept as they were")
        )
        entries = []
    return iter(entries), rel_dir


def _may_be_indexed(rel: str, rules: IgnoreRules) -> bool:
    """Whether a symlink to nothing at `rel` may have led to what the vault indexes, and is
    reported: what it was meant to be is unknown, so a name the rules would index as a note, or
    one with no suffix they would enter as a folder (`Work` linked to a drive since unplugged:
    its notes leave the index, and `status` says why). Not an editor's lock `.#Note.md` (hidden:
    the watcher would not hear of its removal, and the report would stand) nor a `pic.png`."""
    if is_note(rel):
        return not rules.ignores_file(rel) and not rules.ignores_dir(rel)
    return not PurePosixPath(rel).suffix and not rules.ignores_dir(rel)


def _visit(entry: os.DirEntry[str], rel: str, rules: IgnoreRules, result: ScanResult, seen: _Seen) -> str | None:
    """Record one entry of a folder; the folder path (`rel/`) to walk next when it is a folder to enter."""
    if not is_utf8(entry.name):  # bytes the file system gave that are not UTF-8 (an old archive's Latin-1)
        try:
            folder = entry.is_dir()
        except OSError:
            folder = False
        if folder and rules.ignores_dir(rel):
            return None
        if not folder and (not is_note(rel) or rules.ignores_file(rel)):  # never indexed, whatever its name
            result.other_files += 1
            return None
        result.problems.append(bad_name(rel))
        return None
    try:
        is_link = entry.is_symlink()
        st = entry.stat(follow_symlinks=True)
    except FileNotFoundError:
        if not is_link:
            return None  # vanished while scanning: the next event will tell
        if _may_be_indexed(rel, rules):
            result.problems.append(Problem(rel, "broken_symlink", "symlink points to nothing; skipped"))
        else:
            result.other_files += 1
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            result.problems.append(Problem(rel, "symlink_loop", "symlink loops back on itself; skipped"))
        elif is_link:  # what it leads to, a note or a folder, cannot be seen
            result.unobservable.append(rel)
            result.problems.append(
                Problem(rel, "unreadable_link", f"cannot stat what the symlink leads to ({exc.strerror}); kept as it was")
            )
        elif entry.is_dir(follow_symlinks=False):
            result.unobservable.append(rel + "/")
            result.problems.append(Problem(rel, "unreadable", f"cannot stat ({exc.strerror}); kept as it was"))
        else:  # (`unreadable` is a folder's, once in the index: `sync_scan.as_scan_problem`)
            result.unobservable.append(rel)
            result.problems.append(Problem(rel, "unreadable_file", f"cannot stat ({exc.strerror}); kept as it was"))
        return None
    if stat_mod.S_ISDIR(st.st_mode):
        if rules.ignores_dir(rel):
            return None
        key = (st.st_dev, st.st_ino)
        if is_link and key in seen.holding:
            result.problems.append(
                Problem(rel, "symlink_loop", "symlink leads to a folder that holds the vault; not followed")
            )
            return None
        if is_link and _inside_vault(entry.path, seen.vault) is not None:  # whatever the order of the names
            result.problems.append(
                Problem(rel, "symlink_loop", "symlink leads to a folder inside the vault, indexed under its own path; not followed")
            )
            return None
        if key in seen.folders:
            result.problems.append(
                Problem(rel, "symlink_loop", "folder is reached twice through a symlink; skipped the second time")
            )
            return None
        seen.folders.add(key)
        return rel + "/"
    if stat_mod.S_ISREG(st.st_mode):
        if not is_link and is_temp_name(entry.name):
            result.temps.append(rel)
            return None
        if not is_note(rel) or rules.ignores_file(rel):
            result.other_files += 1
            return None
        if is_link and (twin := linked_note(entry.path, rel, seen.vault)) is not None:
            result.problems.append(twin)
            return None
        result.files[rel] = FileStat(rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    return None


def is_utf8(name: str) -> bool:
    """Whether a name from the file system is valid UTF-8 (Python keeps other bytes as lone
    surrogates, which no UTF-8 text — the index, JSON, a link — can hold)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def bad_name(rel: str) -> Problem:
    """The problem of a path whose name is not valid UTF-8, shown with �."""
    try:
        raw = rel.encode("utf-8", "surrogateescape")  # the bytes the file system gave
    except UnicodeEncodeError:  # a name not from the file system (an API request's)
        raw = rel.encode("utf-8", "surrogatepass")
    shown = raw.decode("utf-8", "replace")
    return Problem(shown, "bad_name", "the name is not valid UTF-8 (shown with �); skipped — rename it to index it")


def stat_one(root: Path, rel: str) -> FileStat | None:
    """Stat a single note (for watcher events); None if it is gone or not a regular file."""
    if not is_utf8(rel):
        return None
    try:
        st = os.stat(root / rel)
    except OSError:
        return None
    if not stat_mod.S_ISREG(st.st_mode):
        return None
    return FileStat(rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def walk_folders(
    root: Path, *, hidden: bool = True, regular: bool = False, skip: Path | None = None
) -> Iterator[tuple[Path, list[str]]]:
    """(folder, the names of its files) for `root` and every folder below it, top-down, each
    folder's in name order; symlinked folders are not followed, hidden ones (`.trash`) skipped
    unless `hidden`, and the folder `skip` not entered. A file is anything but a folder (a
    symlink to a file, too), or with `regular` a regular file only. A folder that cannot be
    listed, or an entry that cannot be looked at, is passed over. Iterative, as `os.walk` and
    `Path.rglob` are not (before Python 3.12): a tree deeper than about 990 folders (a deep
    folder of documents, mirrored below `sources/document/`) hit the recursion limit."""
    folders = [root]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        below: list[Path] = []
        files: list[str] = []
        for entry in entries:
            if not hidden and entry.name.startswith("."):
                continue
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_folder:
                if (path := folder / entry.name) != skip:
                    below.append(path)
            elif entry.is_file(follow_symlinks=False) if regular else not entry.is_dir():
                files.append(entry.name)
        yield folder, files
        folders.extend(reversed(below))
