"""The vault's scan: symlinked folders, ignore rules, names and paths it cannot see."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.sync_scan import scan_vault_subtree
from vaultmind.vault.scan import IgnoreRules, scan_vault

from .conftest import cold_rows, dump_index, write
from .unprivileged import can_drop_privileges, run_unprivileged


def _paths(memory: Memory) -> list[str]:
    return sorted(row[0] for row in memory.index.query("SELECT path FROM notes"))


def _problems(memory: Memory) -> set[tuple[str, str]]:
    return {(p["path"], p["kind"]) for p in memory.status()["problems"]}


@pytest.mark.parametrize("link", ["Archive", "zArchive"])  # the link's name before the real folder's, and after
def test_a_symlinked_folder_inside_the_vault_leaves_its_notes_under_their_own_path(tmp_path: Path, link: str) -> None:
    """The real folder wins whatever the order of the names: the link is reported and not
    followed, a save seen by the watcher and the next full pass agree, and the index is what a
    cold rebuild makes of the vault."""
    vault = tmp_path / "vault"
    write(vault, "notes/plan.md", "# Plan\n\nThe launch is in May.\n")
    os.symlink(vault / "notes", vault / link)
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        assert _paths(memory) == ["notes/plan.md"]
        assert (link, "symlink_loop") in _problems(memory)
        assert not any(path.startswith("notes") for path, _ in _problems(memory))
        write(vault, "notes/plan.md", "# Plan\n\nThe launch is in June.\n")
        memory.sync_paths(["notes/plan.md"])  # what the watcher reports for the edit
        assert _paths(memory) == ["notes/plan.md"]
        memory.sync_paths(["notes"])  # a folder's event: its subtree's scan
        memory.sync()
        assert _paths(memory) == ["notes/plan.md"]
        assert dump_index(memory) == cold_rows(config, tmp_path)


@pytest.mark.parametrize("link", ["Notes/alias.md", "Notes/zalias.md"])  # before the real note's name, and after
def test_a_symlinked_note_inside_the_vault_is_indexed_once_under_its_own_path(tmp_path: Path, link: str) -> None:
    """`alias.md -> real.md`: the note is indexed under its own path only (its leaves were
    indexed under both, every hit doubled), the link is reported, a watcher's event for the
    link or the note agrees with a full pass, and a link to a note outside the vault is still
    that note."""
    vault = tmp_path / "vault"
    write(vault, "Notes/real.md", "# Real\n\nThe zebra migration is in July.\n")
    write(tmp_path, "elsewhere/kept.md", "# Kept\n\nThe heron nests in March.\n")
    os.symlink("real.md", vault / link)  # relative, as `ln -s` makes it
    os.symlink(tmp_path / "elsewhere/kept.md", vault / "Notes/outside.md")
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        assert _paths(memory) == ["Notes/outside.md", "Notes/real.md"]
        assert [h["note_path"] for h in memory.search("zebra migration", limit=5)["hits"]] == ["Notes/real.md"]
        (problem,) = [p for p in memory.status()["problems"] if p["kind"] == "symlink_duplicate"]
        assert problem["path"] == link and "leads to Notes/real.md" in problem["message"]
        write(vault, "Notes/real.md", "# Real\n\nThe zebra migration is in August.\n")
        memory.sync_paths([link, "Notes/real.md"])  # what the watcher reports
        assert _paths(memory) == ["Notes/outside.md", "Notes/real.md"]
        assert (link, "symlink_duplicate") in _problems(memory)
        memory.sync()
        assert dump_index(memory) == cold_rows(config, tmp_path)
        os.unlink(vault / link)
        memory.sync_paths([link])
        assert (link, "symlink_duplicate") not in _problems(memory)


def test_a_symlinked_note_leading_to_a_file_of_the_vault_that_is_no_note_is_that_note(tmp_path: Path) -> None:
    """`plan.md -> plan.txt`: the text file is no note, so nothing else indexes it; the link
    is the note (it was taken for a second path of a note and indexed nowhere), by a full pass
    and a watcher's event alike."""
    vault = tmp_path / "vault"
    write(vault, "Notes/plan.txt", "# Plan\n\nThe ferry leaves at noon.\n")
    os.symlink("plan.txt", vault / "Notes/plan.md")
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        assert _paths(memory) == ["Notes/plan.md"]
        assert not [kind for _, kind in _problems(memory) if kind == "symlink_duplicate"]
        write(vault, "Notes/plan.txt", "# Plan\n\nThe ferry leaves at dusk.\n")
        memory.sync_paths(["Notes/plan.md"])
        assert [h["note_path"] for h in memory.search("ferry dusk", limit=5)["hits"]] == ["Notes/plan.md"]
        assert dump_index(memory) == cold_rows(config, tmp_path)


def test_a_symlink_does_not_open_a_folder_the_ignore_rules_leave_out(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, "Private/secret.md", "# Secret\n\nThe pin is 1234.\n")
    write(vault, "open.md", "# Open\n\nNothing to hide.\n")
    os.symlink(vault / "Private", vault / "Linked")
    with Memory.open(load_config(vault, embed_provider="none", ignore=("Private/**",))) as memory:
        memory.sync()
        assert _paths(memory) == ["open.md"]
        assert ("Linked", "symlink_loop") in _problems(memory)


def _left_out(patterns: list[str], path: str) -> bool:
    """Whether the rules leave `path` out, as the scan meets it: a folder above it, or itself."""
    rules = IgnoreRules(patterns)
    parts = path.split("/")
    return any(rules.ignores_dir("/".join(parts[:i])) for i in range(1, len(parts))) or rules.ignores_file(path)


@pytest.mark.parametrize(
    ("pattern", "left_out", "kept"),
    [
        ("Private/", ["Private/x.md", "a/Private/x.md"], ["Private.md", "a/Privates/x.md"]),  # a folder, at any depth
        ("**/Private", ["Private/x.md", "a/b/Private/x.md", "a/Private"], ["a/Private2/x.md"]),
        ("a/**/b", ["a/b/x.md", "a/c/d/b/x.md"], ["ab/x.md", "c/a/b/x.md", "a/bb/x.md"]),
        ("a/b/", ["a/b/x.md", "a/b/c/x.md"], ["a/b.md", "c/a/b/x.md"]),
        ("daily/*", ["daily/x.md", "daily/2024/x.md"], ["daily.md", "y/daily/x.md"]),
        ("Templates/**", ["Templates/x.md", "Templates/a/x.md"], ["Templates.md", "a/Templates/x.md"]),
        ("*.excalidraw.md", ["x.excalidraw.md", "a/b/x.excalidraw.md"], ["x.md"]),
        ("node_modules", ["node_modules/x.md", "a/node_modules/b/x.md"], ["node_modules2/x.md"]),
        ("draft?.md", ["draft1.md", "a/draftX.md"], ["draft12.md", "draft/.md"]),
        ("/daily/*.md", ["daily/x.md"], ["y/daily/x.md", "daily/a/x.md"]),
    ],
)
def test_ignore_globs_read_as_in_a_gitignore(pattern: str, left_out: list[str], kept: list[str]) -> None:
    assert [path for path in left_out if not _left_out([pattern], path)] == []
    assert [path for path in kept if _left_out([pattern], path)] == []


def test_a_folder_written_with_a_trailing_slash_is_not_indexed(tmp_path: Path) -> None:
    """`ignore = ["Private/"]`, as a .gitignore writes a folder, used to leave out nothing."""
    vault = tmp_path / "vault"
    write(vault, "Private/secret.md", "# Secret\n\nThe pin is 1234.\n")
    write(vault, "Work/Private/plan.md", "# Plan\n\nNot for the index.\n")
    write(vault, "open.md", "# Open\n\nNothing to hide.\n")
    with Memory.open(load_config(vault, embed_provider="none", ignore=("Private/",))) as memory:
        memory.sync()
        assert _paths(memory) == ["open.md"]
        memory.sync_paths(["Private/secret.md", "Work/Private"])  # the watcher's events, alike
        assert _paths(memory) == ["open.md"]
    assert sorted(scan_vault(vault, IgnoreRules(["**/Private"])).files) == ["open.md"]


def test_a_pattern_that_can_match_no_path_is_named() -> None:
    rules = IgnoreRules(["/", "./Private/**", "a//b", "../x", "Private/", "**/Private", "a/**/b"])
    assert rules.dead_patterns() == ["/", "./Private/**", "a//b", "../x"]


def test_a_folder_gone_before_its_scan_holds_nothing(vault: Path) -> None:
    """A folder a watcher's batch names, removed before its subtree is scanned: nothing is
    there (its notes leave the index, as a full pass would), not a folder that cannot be read
    (its notes kept, a problem filed against it)."""
    write(vault, "Projects/Kept/a.md", "# A\n")
    gone = scan_vault_subtree(vault, "Projects/Gone", IgnoreRules([]))
    assert (gone.files, gone.unobservable, gone.problems) == ({}, [], [])
    assert gone.is_observed("Projects/Gone/old.md")
    write(vault, "Projects/File", "a file where the folder was\n")
    replaced = scan_vault_subtree(vault, "Projects/File", IgnoreRules([]))
    assert (replaced.unobservable, replaced.problems) == ([], [])
    whole = scan_vault(vault / "Gone", IgnoreRules([]))  # the vault's own folder gone: nothing is known
    assert whole.unobservable == [""] and not whole.is_observed("a.md")


def test_a_name_not_utf8_is_reported_only_where_a_note_or_folder_would_be_indexed(vault: Path) -> None:
    """A hidden file, a file that is no note and a file in an ignored folder are never indexed,
    whatever their name: "rename it to index it" would be untrue; a note's and a folder's
    names are still reported, by the scan and by a watcher's batch alike."""
    raw = os.fsencode(vault)
    for name in (b".hidden-\xe9.md", b"Caf\xe9.pdf", b"caf\xe9.md"):
        with open(os.path.join(raw, name), "wb") as f:
            f.write(b"# x\n")
    os.makedirs(os.path.join(raw, b".git", b"objects"))
    with open(os.path.join(raw, b".git", b"objects", b"\xff\xfe"), "wb") as f:
        f.write(b"x")
    os.makedirs(os.path.join(raw, b"Ann\xe9e"))
    write(vault, "ok.md", "# OK\n")
    scan = scan_vault(vault, IgnoreRules(load_config(vault).all_ignores))
    assert [(p.path, p.kind) for p in scan.problems] == [("Ann\ufffde", "bad_name"), ("caf\ufffd.md", "bad_name")]
    assert sorted(scan.files) == ["ok.md"] and scan.other_files == 2  # counted as they would be under a valid name
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        memory.sync_paths([os.fsdecode(b"Caf\xe9.pdf"), os.fsdecode(b".hidden-\xe9.md"), "ok.md"])
        assert sorted(_problems(memory)) == [("Ann\ufffde", "bad_name"), ("caf\ufffd.md", "bad_name")]


UNSEARCHABLE_SCENARIO = """
import json
from vaultmind.config import load_config
from vaultmind.memory import Memory

(vault / "Team" / "sub").mkdir(parents=True)
(vault / "Team" / "a.md").write_text("# A\\n\\nThe alpha note.\\n")
(vault / "Team" / "sub" / "b.md").write_text("# B\\n\\nThe beta note.\\n")
out = {}
with Memory.open(load_config(vault, embed_provider="none")) as memory:
    memory.sync()
    (vault / "Team").chmod(0o644)  # listed, but what is in it cannot be stat-ed
    memory.sync()
    out["locked"] = sorted(memory.index.query("SELECT path, kind FROM problems"))
    out["kept"] = sorted(r[0] for r in memory.index.query("SELECT path FROM notes"))
    (vault / "Team").chmod(0o755)
    memory.sync()
    out["open"] = memory.index.query("SELECT path, kind FROM problems")
print(json.dumps(out))
"""


@pytest.mark.skipif(not can_drop_privileges(), reason="needs setpriv to drop root privileges")
def test_a_file_that_cannot_be_stat_ed_is_no_unreadable_folder() -> None:
    """A folder that can be listed but not entered: its files are `unreadable_file` (they were
    kept as `unreadable_folder`), its folders `unreadable_folder`; the notes are kept, and the
    problems go once it can be entered."""
    out = run_unprivileged(UNSEARCHABLE_SCENARIO)
    assert [tuple(p) for p in out["locked"]] == [("Team/a.md", "unreadable_file"), ("Team/sub", "unreadable_folder")]
    assert out["kept"] == ["Team/a.md", "Team/sub/b.md"]
    assert out["open"] == []


def test_a_subtree_s_rules_are_the_vault_s_rules_below_its_folder(vault: Path) -> None:
    rules = IgnoreRules(["Work/drafts/**", "Private/", "*.tmp.md"])
    work = rules.below("Work")
    assert work.patterns == rules.patterns and work.dead_patterns() == []
    assert work.ignores_dir("drafts") and work.ignores_dir("a/Private") and work.ignores_file("x.tmp.md")
    assert not work.ignores_dir("other") and not rules.ignores_dir("drafts")
    assert work.below("drafts").ignores_file("x.md") and not work.below("other").ignores_file("x.md")
    write(vault, "Work/drafts/d.md", "# D\n")
    write(vault, "Work/plan.md", "# Plan\n")
    assert sorted(scan_vault_subtree(vault, "Work", rules).files) == ["Work/plan.md"]


def test_a_case_only_rename_is_a_rename_for_the_watcher_and_a_full_pass(tmp_path: Path) -> None:
    """`Note.md` → `note.md` (as a case-insensitive system's rename shows it too): one rename,
    nothing added nor deleted, the leaves kept (their text, not read again); then `NOTE.md` by a full pass alike."""
    vault = tmp_path / "vault"
    write(vault, "Note.md", "# Plan\n\nThe launch is in May.\n")
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        leaves = memory.index.query("SELECT content_hash, text FROM leaves ORDER BY ALL")
        os.rename(vault / "Note.md", vault / "note.md")
        stats = memory.sync_paths(["Note.md", "note.md"])
        assert (stats.added, stats.deleted, stats.renamed) == (0, 0, 1)
        assert _paths(memory) == ["note.md"]
        os.rename(vault / "note.md", vault / "NOTE.md")
        stats = memory.sync()
        assert (stats.added, stats.deleted, stats.renamed) == (0, 0, 1)
        assert _paths(memory) == ["NOTE.md"]
        assert memory.index.query("SELECT content_hash, text FROM leaves ORDER BY ALL") == leaves
        assert dump_index(memory) == cold_rows(config, tmp_path)


def test_a_linked_folder_whose_target_is_gone_is_reported(tmp_path: Path) -> None:
    """A folder linked from outside the vault (`Work` → a drive since unplugged): its notes
    leave the index, and `status` says why. A link to nothing was reported only when its name
    is a note's (so that an editor's lock link `.#Note.md` is not): the linked folder's notes
    went with no word said."""
    vault, outside = tmp_path / "vault", tmp_path / "drive" / "Work"
    write(vault, "start.md", "# Start\n\nThe first note.\n")
    write(outside.parent, "Work/plan.md", "# Plan\n\nThe launch is in May.\n")
    os.symlink(outside, vault / "Work")
    (vault / "pic.png").symlink_to("nowhere.png")  # an attachment: not reported, as before
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        assert _paths(memory) == ["Work/plan.md", "start.md"]
        outside.rename(outside.parent / "Work-unplugged")
        memory.sync()
        assert _paths(memory) == ["start.md"]
        assert _problems(memory) == {("Work", "broken_symlink")}
        (vault / "Work").unlink()
        memory.sync_paths(["Work"])  # as the watcher hears of it
        assert _problems(memory) == set()
