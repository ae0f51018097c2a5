"""`vaultmind init`: the vault template, the demo memory and `init_vault`, on real folders."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import fields
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

import pytest
import yaml

from vaultmind.cli.main import main
from vaultmind.config import _SCHEMA, FEATURE_KEYS, Config, load_config
from vaultmind.errors import RefuseToClobber, VaultError
from vaultmind.index.store import Index
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.markdown.render import SourceMeta, render_source_note
from vaultmind.vault.atomic import is_temp_name, write_atomic
from vaultmind.vault.template import GITIGNORE_LINES, init_vault, template_files, template_root

from .conftest import run_main

REPO = Path(__file__).resolve().parents[1]
VAULTMIND_FILES = {"sources/README.md", "summaries/README.md", "entities/README.md", ".vaultmind/config.toml"}
OBSIDIAN_FILES = {f.path for f in template_files(demo=False) if f.group == "obsidian"}
DEMO_FILES = {f.path for f in template_files(demo=True) if f.group == "demo"}
# a document note's front matter, in order (docs/vault-format.md)
DOCUMENT_KEYS = [
    "vaultmind", "kind", "source_id", "scope", "version", "title", "time_start", "time_end", "source_ref",
    "vaultmind_body_sha256",
]  # fmt: skip


def tree(root: Path) -> dict[str, str]:
    """sha256 of every file under `root` (symlinks not followed), by POSIX path."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def notes(root: Path) -> dict[str, str]:
    """Every Markdown note Obsidian would show (dot-folders are hidden), by path."""
    return {
        rel: (root / rel).read_text(encoding="utf-8")
        for rel in tree(root)
        if rel.endswith(".md") and not any(part.startswith(".") for part in rel.split("/"))
    }


def make_user_vault(root: Path) -> None:
    files = {
        "Inbox.md": "# Inbox\n\n- call the bank\n",
        "Projects/Garden.md": "---\ntags: [garden]\n---\n# Garden\n\nSee [[Inbox]].\n",
        ".gitignore": "node_modules/\n",
        ".obsidian/app.json": '{"alwaysUpdateLinks": true}\n',
        ".obsidian/workspace.json": "{}\n",
        "attachments/photo.png": "\x89PNG not really",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode("utf-8"))


# --- a new vault -----------------------------------------------------------------------------


def test_new_vault_gets_the_layout_and_a_default_config(tmp_path: Path) -> None:
    report = init_vault(tmp_path / "vault")
    root = tmp_path / "vault"
    assert report.vault == root.resolve()
    expected = VAULTMIND_FILES | OBSIDIAN_FILES | {".gitignore", "Welcome to vaultmind.md"}
    assert set(report.created) == expected
    assert set(tree(root)) == expected
    assert report.skipped == [] and report.warnings == []
    for folder in ("sources", "summaries", "entities"):
        assert (root / folder).is_dir()
    assert load_config(root) == Config(vault=root.resolve())


def test_template_package_files_are_never_copied(tmp_path: Path) -> None:
    assert (REPO / "vault_template" / "__init__.py").is_file()
    fake = tmp_path / "template"
    for rel in ("__init__.py", "__pycache__/x.cpython-311.pyc", "sources/README.md", ".demo/a.md"):
        (fake / rel).parent.mkdir(parents=True, exist_ok=True)
        (fake / rel).write_text("x\n")
    assert [(f.path, f.group) for f in template_files(root=fake)] == [
        ("sources/README.md", "core"),
        ("a.md", "demo"),
    ]
    init_vault(tmp_path / "vault", demo=True)
    assert not [rel for rel in tree(tmp_path / "vault") if "__init__" in rel or "__pycache__" in rel]


def test_new_vault_refuses_a_non_empty_folder_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / ".hidden").write_text("mine\n")
    before = tree(root)
    with pytest.raises(RefuseToClobber) as exc:
        init_vault(root, demo=True)
    assert "--existing" in (exc.value.hint or "")
    assert exc.value.path == str(root)
    assert tree(root) == before
    assert sorted(p.name for p in root.iterdir()) == [".hidden"]


def test_new_vault_refuses_a_file(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    target.write_text("# not a folder\n")
    with pytest.raises(RefuseToClobber):
        init_vault(target)
    assert target.read_text() == "# not a folder\n"


def test_init_again_on_a_vaultmind_vault_says_so_and_names_the_next_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's set-up line run twice (after a Ctrl-C of its reindex, as the message then
    says to): the second `init --demo` had exited 1, so the `&&` chain stopped before `reindex`.
    It succeeds, writes nothing, and names the vault it found and the command that uses it."""
    root = tmp_path / "demo-vault"
    assert main(["init", "--demo", str(root)]) == 0
    (root / "Welcome to vaultmind.md").write_text("# mine now\n")  # edited since: still the vault
    before = tree(root)
    capsys.readouterr()
    for args in (["init", "--demo", str(root)], ["init", str(root)]):
        assert main(args) == 0
        out = capsys.readouterr().out
        assert "already is a vaultmind vault" in out and "nothing was written" in out, out
        assert f"next: vaultmind reindex --vault {root}" in out, out
        assert "--existing" not in out, out
    assert main(["init", "--demo", str(root), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["already"] is True and report["created"] == []
    assert tree(root) == before


def test_existing_names_only_the_gitignore_lines_it_lacks(tmp_path: Path) -> None:
    done = tmp_path / "done"
    init_vault(done)
    skipped = {s.path: s.reason for s in init_vault(done, existing=True).skipped}
    assert skipped[".gitignore"] == "exists; left unchanged", skipped[".gitignore"]
    partial = tmp_path / "partial"
    make_user_vault(partial)
    (partial / ".gitignore").write_text(".trash/\n.vaultmind/*\n")
    skipped = {s.path: s.reason for s in init_vault(partial, existing=True).skipped}
    assert "would add: !.vaultmind/config.toml  .obsidian/workspace*.json)" in skipped[".gitignore"]
    assert ".trash/" not in skipped[".gitignore"]


def test_second_init_refuses_what_the_vault_is_not_and_changes_nothing(tmp_path: Path) -> None:
    """A vault without the demo is not the vault `init --demo` asks for: it refuses it (nothing
    is written) rather than say it already is, and says it lacks the demo."""
    root = tmp_path / "vault"
    init_vault(root)
    before = tree(root)
    with pytest.raises(RefuseToClobber) as exc:
        init_vault(root, demo=True)
    assert "is already a vaultmind vault without the demo" in exc.value.message
    assert "for a new demo vault, name an empty or missing folder" in str(exc.value.hint)
    assert init_vault(root).already
    assert tree(root) == before


def test_init_again_on_a_demo_vault_missing_a_file_goes_on_and_puts_nothing_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The set-up line run again on its demo vault, whose welcome note the user deleted, was
    refused ("is already a vaultmind vault"), stopping the line before its reindex. It is the
    vault asked for: `init` succeeds and writes nothing (a deleted note is not brought back),
    naming what is not there, and how to add back vaultmind's own files among them."""
    root = tmp_path / "demo-vault"
    assert main(["init", "--demo", str(root)]) == 0
    (root / "Welcome to vaultmind.md").unlink()
    (root / ".gitignore").unlink()
    before = tree(root)
    capsys.readouterr()
    assert main(["init", "--demo", str(root)]) == 0
    out = capsys.readouterr().out
    assert "already is a vaultmind vault with the demo; nothing was written" in out, out
    assert "not there, not put back: .gitignore, Welcome to vaultmind.md" in out, out
    assert f"vaultmind's own files among them (.gitignore): `vaultmind init --existing {root}` adds them back" in out, out
    assert f"next: vaultmind reindex --vault {root}" in out, out
    assert main(["init", "--demo", str(root), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["already"] is True and report["created"] == []
    assert report["missing"] == [".gitignore", "Welcome to vaultmind.md"] and report["restorable"] == [".gitignore"]
    assert tree(root) == before
    assert main(["init", "--existing", str(root)]) == 0
    assert (root / ".gitignore").exists() and not (root / "Welcome to vaultmind.md").exists()


def test_output_is_deterministic_lf_and_leaves_no_temp_files(tmp_path: Path) -> None:
    init_vault(tmp_path / "a", demo=True)
    init_vault(tmp_path / "b", demo=True)
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    for rel in tree(tmp_path / "a"):
        assert b"\r" not in (tmp_path / "a" / rel).read_bytes(), rel
        assert not is_temp_name(rel.rsplit("/", 1)[-1])


# --- an existing vault -----------------------------------------------------------------------


def test_existing_adds_only_vaultmind_files_and_touches_nothing_else(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    make_user_vault(root)
    before = tree(root)
    report = init_vault(root, existing=True)
    after = tree(root)
    assert {rel: after[rel] for rel in before} == before  # every pre-existing file byte-identical
    assert set(after) - set(before) == VAULTMIND_FILES
    assert set(report.created) == VAULTMIND_FILES
    skipped = {s.path: s.reason for s in report.skipped}
    assert set(skipped) == OBSIDIAN_FILES | {".gitignore"}
    assert all(line in skipped[".gitignore"] for line in GITIGNORE_LINES)
    assert "path:sources" in skipped[".obsidian/graph.json"]
    assert not (root / "Welcome to vaultmind.md").exists()
    assert load_config(root) == Config(vault=root.resolve())


def test_existing_says_each_reason_for_leaving_files_alone_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "vault"
    make_user_vault(root)
    assert main(["init", "--existing", str(root)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  skipped:")]
    alone = [line for line in lines if "its own Obsidian settings" in line]
    assert len(alone) == 1 and all(path in alone[0] for path in OBSIDIAN_FILES), lines


def test_existing_without_obsidian_or_gitignore_gets_them(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / "Daily").mkdir(parents=True)
    (root / "Daily" / "2024-01-01.md").write_text("# New year\n")
    report = init_vault(root, existing=True)
    assert set(report.created) == VAULTMIND_FILES | OBSIDIAN_FILES | {".gitignore"}
    assert (root / "Daily" / "2024-01-01.md").read_text() == "# New year\n"


def test_existing_given_the_folder_that_holds_a_vault_names_the_vault_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`init --existing` pointed one level too high (a clone whose vault is its `vault/`
    folder) had made that folder a vault — Obsidian settings, vaultmind's folders — and indexed
    the repository's every file beside the vault. It names the vault inside and writes nothing."""
    outer = tmp_path / "clone"
    make_user_vault(outer / "vault")
    (outer / "README.md").write_text("# A vault of mine\n")
    before = tree(outer)
    assert main(["init", "--existing", str(outer)]) == 1
    err = capsys.readouterr().err
    assert "is not an Obsidian vault itself, but vault/ inside it is (holding .obsidian/ or .vaultmind/)" in err, err
    assert f"vaultmind init --existing {outer / 'vault'}" in err
    assert tree(outer) == before, "nothing written"
    assert main(["init", "--existing", str(outer / "vault")]) == 0


def test_a_folder_holding_vaultmind_vaults_is_answered_with_each_one_and_with_vault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command given (or run in) the folder holding a vaultmind vault hinted `init --existing`
    with the first vault found, though that vault already was one, named none of the others, and
    from the working folder named none at all."""
    parent = tmp_path / "parent"
    assert main(["init", "--demo", str(parent / "work")]) == 0
    (parent / "README.txt").write_text("# readme\n")
    capsys.readouterr()
    assert main(["status", "--vault", str(parent)]) == 2
    err = capsys.readouterr().err
    assert f"`vaultmind status --vault {parent / 'work'}`" in err and "init --existing" not in err, err
    assert main(["init", "--demo", str(parent / "personal")]) == 0
    (parent / "obsidian" / ".obsidian").mkdir(parents=True)
    capsys.readouterr()
    assert main(["status", "--vault", str(parent)]) == 2
    err = capsys.readouterr().err
    for vault in ("personal", "work"):
        assert f"`vaultmind status --vault {parent / vault}`" in err, err
    assert f"`vaultmind init --existing {parent / 'obsidian'}`" in err, err
    assert main(["init", "--existing", str(parent)]) == 1
    assert "but obsidian/ and personal/ and work/ inside it are" in capsys.readouterr().err
    monkeypatch.delenv("VAULTMIND_VAULT", raising=False)
    monkeypatch.chdir(parent)
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert "is not in a vaultmind vault" in err and f"`vaultmind status --vault {parent / 'work'}`" in err, err


def test_existing_given_a_folder_of_notes_with_a_vault_two_levels_down_takes_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder of Markdown notes of its own (no `.obsidian/`), one project of which is an
    Obsidian vault two levels down, is the folder the user means: it was refused, pointing at
    the project's vault — with no way to take the folder. Its notes are left as they were, and
    it is told that the vault inside is indexed with it."""
    notes = tmp_path / "Notes"
    (notes / "Daily").mkdir(parents=True)
    (notes / "Daily" / "2024-03-04.md").write_text("# Monday\n\nCalled Dana about the launch.\n")
    make_user_vault(notes / "Projects" / "website")
    before = tree(notes)
    assert main(["init", "--existing", str(notes), "--json"]) == 0, capsys.readouterr().err
    report = json.loads(capsys.readouterr().out)
    assert report["vault"] == str(notes.resolve())
    assert any("Projects/website/ inside is an Obsidian vault of its own" in w for w in report["warnings"]), report
    after = tree(notes)
    assert {path: after[path] for path in before} == before, "every note as it was"
    # a repository's own documents at its top are no notes of its own: the vault inside is meant
    clone = tmp_path / "clone"
    make_user_vault(clone / "docs" / "vault")
    (clone / "README.md").write_text("# Notes\n")
    (clone / "LICENSE.md").write_text("MIT\n")
    assert main(["init", "--existing", str(clone)]) == 1
    assert "docs/vault/ inside it is" in capsys.readouterr().err


def test_existing_is_idempotent(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    make_user_vault(root)
    init_vault(root, existing=True)
    before = tree(root)
    report = init_vault(root, existing=True)
    assert report.created == []
    assert tree(root) == before


def test_existing_never_overwrites_a_vaultmind_file_the_user_changed(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / ".vaultmind").mkdir(parents=True)
    (root / ".vaultmind" / "config.toml").write_text("[search]\nlimit = 3\n")
    (root / "sources").mkdir()
    (root / "sources" / "README.md").write_text("my own readme\n")
    report = init_vault(root, existing=True)
    assert (root / ".vaultmind" / "config.toml").read_text() == "[search]\nlimit = 3\n"
    assert (root / "sources" / "README.md").read_text() == "my own readme\n"
    assert {".vaultmind/config.toml", "sources/README.md"} <= {s.path for s in report.skipped}


def test_existing_needs_a_folder(tmp_path: Path) -> None:
    with pytest.raises(VaultError) as exc:
        init_vault(tmp_path / "missing", existing=True)
    assert f"`vaultmind init {tmp_path / 'missing'}`" in (exc.value.hint or "")
    assert not (tmp_path / "missing").exists()


def test_existing_of_a_file_names_a_command_that_works(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`init NOTE.md --existing`: the hint names the folder holding the file, with a command
    `init` accepts. Before, it sent the user to `init NOTE.md`, which fails as well."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n", encoding="utf-8")
    code, _, err = run_main(capsys, "init", str(notes / "a.md"), "--existing")
    assert code != 0 and "is a file, not a vault folder" in err
    hinted = re.findall(r"`vaultmind (init [^`]+)`", err)
    assert hinted == [f"init --existing {notes}"], err
    code, _, err = run_main(capsys, *hinted[0].split())
    assert code == 0, err
    assert (notes / ".vaultmind" / "config.toml").is_file()


def test_existing_warns_about_user_notes_in_vaultmind_folders(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / "sources").mkdir(parents=True)
    (root / "sources" / "papers.md").write_text("# Papers I cite\n")
    (root / "Entities").mkdir()
    report = init_vault(root, existing=True)
    assert any("sources/ already holds 1 note" in w for w in report.warnings)
    assert any(w.startswith("Entities/") for w in report.warnings)
    assert (root / "sources" / "papers.md").read_text() == "# Papers I cite\n"


def test_existing_with_demo_adds_welcome_and_demo(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    make_user_vault(root)
    before = tree(root)
    report = init_vault(root, existing=True, demo=True)
    assert set(report.created) == VAULTMIND_FILES | DEMO_FILES | {"Welcome to vaultmind.md"}
    after = tree(root)
    assert {rel: after[rel] for rel in before} == before


def test_existing_with_demo_refuses_if_a_demo_path_is_taken(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    make_user_vault(root)
    (root / "Budget 2024.md").write_text("# my budget\n")
    before = tree(root)
    with pytest.raises(RefuseToClobber) as exc:
        init_vault(root, existing=True, demo=True)
    assert "Budget 2024.md" in exc.value.message
    assert tree(root) == before  # refused before writing anything


def test_never_writes_through_a_symlink_out_of_the_vault(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "vault"
    root.mkdir()
    (root / "sources").symlink_to(outside, target_is_directory=True)
    with pytest.raises(VaultError):
        init_vault(root, existing=True)
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in root.iterdir()) == ["sources"]


def test_existing_dangling_symlink_is_not_replaced(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "note.md").write_text("# A note\n")
    (root / ".gitignore").symlink_to(tmp_path / "nowhere")
    report = init_vault(root, existing=True)
    assert ".gitignore" in {s.path for s in report.skipped}
    assert (root / ".gitignore").is_symlink()
    assert not (tmp_path / "nowhere").exists()


def test_existing_refuses_what_does_not_look_like_a_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--existing` writes into the folder it is given: never the file system's root or a home
    folder, nor a folder with neither Obsidian's settings nor a note near the top; a file is
    called a file. Nothing is written when it refuses."""
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    (home / "Documents" / "n.md").write_text("# n\n")
    monkeypatch.setenv("HOME", str(home))
    for folder, says in ((Path("/"), "file system's root"), (home, "home folder")):
        with pytest.raises(VaultError, match=says):
            init_vault(folder, existing=True)
    bare = tmp_path / "downloads"
    (bare / "a" / "b").mkdir(parents=True)
    (bare / "a" / "b" / "data.csv").write_text("1,2\n")
    with pytest.raises(VaultError, match="does not look like a vault"):
        init_vault(bare, existing=True)
    assert sorted(p.name for p in bare.iterdir()) == ["a"]
    (tmp_path / "file.md").write_text("# f\n")
    with pytest.raises(VaultError, match="is a file"):
        init_vault(tmp_path / "file.md", existing=True)
    (bare / "a" / "b" / "deep.md").write_text("# a note two folders down\n")
    assert init_vault(bare, existing=True).created
    obsidian_only = tmp_path / "fresh-obsidian"
    (obsidian_only / ".obsidian").mkdir(parents=True)
    assert init_vault(obsidian_only, existing=True).created


def test_existing_takes_a_folder_whose_notes_are_all_deep_down(tmp_path: Path) -> None:
    """A vault whose notes all lie several folders down (`Areas/Work/2024/Q1/`) was refused: only
    the first three levels were looked at. A note at any depth counts; a folder without one is
    still refused, the message naming what was looked for, and nothing of the user's changes."""
    vault = tmp_path / "notes"
    deep = vault / "Areas" / "Work" / "2024" / "Q1" / "March"
    deep.mkdir(parents=True)
    (deep / "standup.md").write_text("# Standup\n")
    (vault / "Areas" / "todo.txt").write_text("not a note\n")
    bare = tmp_path / "no-notes"
    (bare / "a" / "b" / "c" / "d" / "e").mkdir(parents=True)
    (bare / "a" / "b" / "c" / "d" / "e" / "data.csv").write_text("1,2\n")
    with pytest.raises(VaultError, match=r"no \.obsidian/ folder in it and no Markdown note \(\.md\) in it or any folder below"):
        init_vault(bare, existing=True)
    assert sorted(p.name for p in bare.iterdir()) == ["a"]
    report = init_vault(vault, existing=True)
    assert "entities/README.md" in report.created
    assert (deep / "standup.md").read_text() == "# Standup\n"
    assert (vault / "Areas" / "todo.txt").read_text() == "not a note\n"
    assert "Welcome to vaultmind.md" not in report.created


# --- the demo memory -------------------------------------------------------------------------


def test_demo_writes_the_demo_notes(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    report = init_vault(root, demo=True)
    assert set(report.created) >= DEMO_FILES
    demo = REPO / "vault_template" / ".demo"
    for rel in DEMO_FILES:
        assert (root / rel).read_bytes() == (demo / rel).read_bytes()
    assert not (root / ".demo").exists()
    kinds = {rel.split("/")[1] for rel in DEMO_FILES if rel.startswith("sources/")}
    assert kinds == {"chat", "email", "document"}
    assert 15 <= len(DEMO_FILES) <= 25
    assert not DEMO_FILES & {f.path for f in template_files(demo=False)}


def test_generated_notes_hash_their_body(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    init_vault(root, demo=True)
    generated = 0
    for rel, text in notes(root).items():
        if not text.startswith("---\n"):
            continue
        end = text.index("\n---\n", 3) + len("\n---\n")
        data = yaml.safe_load(text[4 : end - len("---\n")])
        assert split_frontmatter(text).error is None, rel
        if rel.split("/")[0] in ("sources", "summaries", "entities"):
            assert "vaultmind" in data, f"{rel}: vaultmind folders hold vaultmind notes only"
        if "vaultmind_body_sha256" in data:
            body = text[end:]
            assert data["vaultmind_body_sha256"] == hashlib.sha256(body.encode("utf-8")).hexdigest(), rel
            generated += 1
        elif data.get("vaultmind") == "readme":  # the welcome note, the demo tour: kept out of answers
            assert rel.split("/")[0] not in ("sources", "summaries", "entities"), rel
        else:
            assert not any(key.startswith("vaultmind") for key in data), (
                f"{rel}: a user note with vaultmind keys"
            )
    assert generated == 3 + len([rel for rel in DEMO_FILES if rel.startswith(("sources/", "entities/"))])


def _thread_as_eml(note: str, folder: Path) -> None:
    """The messages of an email source note written back as the .eml files a mail client
    exports (each answers the one before): From, Date, Message-ID, Subject and the text."""
    folder.mkdir(parents=True, exist_ok=True)
    callouts = re.findall(r"^> \[!email\] .*\n((?:>.*\n)*?)> %% vaultmind (.*) %%$", note, re.MULTILINE)
    assert callouts
    ids: list[str] = []
    for n, (lines, meta) in enumerate(callouts, start=1):
        keys = dict(re.findall(r'(\w+)="([^"]*)"', meta))
        mail = EmailMessage()
        mail["From"] = keys["author"]
        mail["Date"] = format_datetime(datetime.fromisoformat(keys["at"]))
        mail["Message-ID"] = f"<{keys['id']}>"
        mail["Subject"] = keys["subject"]
        if ids:
            mail["In-Reply-To"] = f"<{ids[-1]}>"
            mail["References"] = " ".join(f"<{i}>" for i in ids)
        mail.set_content("\n".join(line.removeprefix(">").removeprefix(" ") for line in lines.splitlines()))
        (folder / f"{n}.eml").write_bytes(bytes(mail))
        ids.append(keys["id"])


def test_demo_email_notes_are_what_ingest_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each demo email thread, exported as .eml files and ingested with `vaultmind ingest email`
    into a fresh vault, gives the demo's note: the same path (`<thread>/<date>-<thread>.md`, as
    docs/vault-format.md says) and the same bytes."""
    demo = REPO / "vault_template" / ".demo"
    threads = sorted((demo / "sources" / "email").rglob("*.md"))
    assert len(threads) == 2
    for n, path in enumerate(threads):
        rel = path.relative_to(demo).as_posix()
        account = rel.split("/")[2]
        text = path.read_text(encoding="utf-8")
        _thread_as_eml(text, tmp_path / f"export-{n}" / account)
        vault = tmp_path / f"vault-{n}"
        init_vault(vault)
        code, data, err = run_main(
            capsys, "ingest", "email", str(tmp_path / f"export-{n}" / account), "--vault", str(vault), "--json"
        )
        assert code == 0, err
        assert data["written"] == [rel]
        assert (vault / rel).read_text(encoding="utf-8") == text


def test_demo_document_note_has_the_keys_ingest_writes() -> None:
    """The demo's document note is where `vaultmind ingest document` puts one
    (`sources/document/files/<folder>/<file name>.md`) with the keys it writes."""
    demo = REPO / "vault_template" / ".demo"
    (path,) = (demo / "sources" / "document").rglob("*.md")
    data = split_frontmatter(path.read_text(encoding="utf-8")).data
    assert path.relative_to(demo).as_posix().startswith(f"sources/document/{data['scope']}/")
    assert data["scope"].startswith("files/") and data["source_id"].startswith("doc:")
    assert list(data) == DOCUMENT_KEYS


def test_demo_source_and_entity_notes_follow_the_format(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    init_vault(root, demo=True)
    for rel, text in notes(root).items():
        data = split_frontmatter(text).data
        body = split_frontmatter(text).body
        if rel.startswith("sources/") and data.get("vaultmind") == "source":
            kind = data["kind"]
            assert rel.startswith(f"sources/{kind}/")
            if kind == "document":
                assert list(data) == DOCUMENT_KEYS
                continue
            keys = ["vaultmind", "kind", "source_id", "scope", "title"]
            keys += ["subject"] if kind == "email" else []
            keys += ["participants", "time_start", "time_end", "messages", "vaultmind_body_sha256"]
            assert list(data) == keys, rel
            assert rel.startswith(f"sources/{kind}/{data['scope']}/"), rel
            callout = "message" if kind == "chat" else "email"
            heads = re.findall(rf"^> \[!{callout}\] .+ · \d{{4}}-\d\d-\d\d \d\d:\d\d$", body, re.MULTILINE)
            metas = re.findall(r"^> %% vaultmind id=.* %%$", body, re.MULTILINE)
            blocks = re.findall(r"^\^m-[a-z0-9-]+$", body, re.MULTILINE)
            assert len(heads) == len(metas) == len(blocks) == data["messages"] >= 3, rel
            shown = SourceMeta(kind, data["source_id"], data["scope"], data["title"])  # the title as rendered
            assert body.startswith(split_frontmatter(render_source_note(shown, [])).body + "\n"), rel
            assert data["time_start"] <= data["time_end"]
        elif rel.startswith("entities/") and data.get("vaultmind") == "entity":
            kind, stem = rel.removeprefix("entities/").removesuffix(".md").split("/")
            assert list(data) == [
                "vaultmind",
                "id",
                "kind",
                "display_name",
                "aliases",
                "emails",
                "handles",
                "vaultmind_body_sha256",
            ]
            assert data["id"] == f"{kind}:{stem}" and data["kind"] == kind


def test_demo_generator_output_is_up_to_date() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "make_demo_vault.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --- links resolve the way Obsidian resolves them --------------------------------------------

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_WIKILINK = re.compile(r"!?\[\[([^\[\]]+?)\]\]")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*$", re.MULTILINE)
_BLOCK = re.compile(r"(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t]*$", re.MULTILINE)


def resolve(name: str, paths: list[str]) -> str | None:
    """Obsidian's rule: a path (with or without .md), else a unique file name, case-insensitive."""
    want = name.lower().removesuffix(".md")
    by_path = [p for p in paths if p.lower().removesuffix(".md") == want]
    if by_path:
        return by_path[0]
    if "/" in want:
        tail = [p for p in paths if p.lower().removesuffix(".md").endswith("/" + want)]
        return tail[0] if len(tail) == 1 else None
    by_stem = [p for p in paths if p.rsplit("/", 1)[-1].lower().removesuffix(".md") == want]
    return by_stem[0] if len(by_stem) == 1 else None


def broken_links(root: Path) -> list[str]:
    all_notes = notes(root)
    paths = sorted(all_notes)
    broken = []
    for rel, text in all_notes.items():
        scrubbed = _INLINE_CODE.sub("", _FENCE.sub("", text))
        for match in _WIKILINK.finditer(scrubbed):
            inner = match.group(1).replace("\\|", "|")
            target, _, _alias = inner.partition("|")
            name, _, anchor = target.partition("#")
            resolved = resolve(name, paths) if name else rel
            if resolved is None:
                broken.append(f"{rel}: [[{inner}]] has no target")
                continue
            body = split_frontmatter(all_notes[resolved]).body
            if anchor.startswith("^"):
                if anchor[1:] not in _BLOCK.findall(body):
                    broken.append(f"{rel}: [[{inner}]]: no block ^{anchor[1:]} in {resolved}")
            elif anchor:
                headings = {h.lower() for h in _HEADING.findall(_FENCE.sub("", body))}
                if anchor.lower() not in headings:
                    broken.append(f"{rel}: [[{inner}]]: no heading {anchor!r} in {resolved}")
    return broken


@pytest.mark.parametrize("kwargs", [{"demo": True}, {"demo": False}], ids=["new-with-demo", "new"])
def test_every_wikilink_resolves_in_a_new_vault(tmp_path: Path, kwargs: dict[str, bool]) -> None:
    init_vault(tmp_path / "vault", **kwargs)
    assert broken_links(tmp_path / "vault") == []


def test_every_wikilink_resolves_in_an_existing_vault(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    make_user_vault(root)
    init_vault(root, existing=True)
    assert broken_links(root) == []


def test_the_resolver_catches_broken_links(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "Note.md").write_text("# Top\n\ntext ^blk\n")
    (tmp_path / "b.md").write_text(
        "[[note#Top]] [[a/Note#^blk|x]] `[[ignored]]` [[Nope]] [[Note#Missing]] [[Note#^zzz]]\n"
    )
    assert len(broken_links(tmp_path)) == 3


def test_demo_uses_the_obsidian_syntax_the_parser_must_handle(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    init_vault(root, demo=True)
    user = "\n".join(
        text
        for rel, text in notes(root).items()
        if rel.split("/")[0] not in ("sources", "summaries", "entities")
    )
    assert re.search(r"\[\[[^\]|#]+#[^\]^|]+\]\]", user)  # [[Note#Heading]]
    assert re.search(r"\[\[[^\]]+\|[^\]]+\]\]", user)  # [[Note|alias]]
    assert re.search(r"!\[\[[^\]]+\]\]", user)  # ![[embed]]
    assert re.search(r"\[\[[^\]]+#\^[^\]]+\]\]", user)  # [[Note#^block]]
    assert re.search(r"(?:^|\s)#[a-z]+/[a-z]+", user)  # nested tag
    assert re.search(r"^> \[!\w+\]", user, re.MULTILINE)  # callout
    assert re.search(r"^```", user, re.MULTILINE)  # code block
    assert re.search(r" \^[a-z0-9-]+$", user, re.MULTILINE)  # block id


# --- the settings files ----------------------------------------------------------------------


def test_config_documents_every_setting_at_its_default(tmp_path: Path) -> None:
    text = (REPO / "vault_template" / ".vaultmind" / "config.toml").read_text(encoding="utf-8")
    assert tomllib.loads(text) == {
        s: {}
        for s in ("vault", "chunking", "embeddings", "ollama", "watch", "server", "search", "ingest", "time", "privacy", *FEATURE_KEYS)
    }
    documented: list[tuple[str, str]] = []
    section = ""
    uncommented = []
    for line in text.splitlines():
        if m := re.fullmatch(r"\[(\w+)\]", line):
            section = m.group(1)
        elif m := re.fullmatch(r"# (\w+) = (.+)", line):
            documented.append((section, m.group(1)))
            line = line[2:]
        uncommented.append(line)
    features = [(section, key) for section, keys in FEATURE_KEYS.items() for key in keys]
    assert documented == list(_SCHEMA) + features, "config.toml must list every setting, in order"
    vault = tmp_path / "vault"
    (vault / ".vaultmind").mkdir(parents=True)
    (vault / ".vaultmind" / "config.toml").write_text("\n".join(uncommented) + "\n", encoding="utf-8")
    config = load_config(vault)
    assert config.with_(extra={}) == Config(vault=vault.resolve())  # documented values are the defaults
    assert set(config.extra) == {f"{s}.{k}" for s, k in features}
    from vaultmind.admission.decide import Policy
    from vaultmind.entities.settings import EntitySettings
    from vaultmind.queue.workers import QueueSettings
    from vaultmind.tree.settings import TreeSettings

    bare = Config(vault=vault.resolve())
    assert Policy.from_extra(config.extra, "m") == Policy.from_extra({}, "m")
    assert QueueSettings.from_extra(config.extra) == QueueSettings.from_extra({})
    assert TreeSettings.from_extra(config.extra) == TreeSettings.from_extra({})
    assert EntitySettings.from_config(config) == EntitySettings.from_config(bare)
    assert {f.name for f in fields(Config)} - {"vault", "extra", "template_folders"} == {attr for attr, _ in _SCHEMA.values()}


def test_config_says_how_the_lease_is_raised_above_lease_s(tmp_path: Path) -> None:
    """A `lease_s` under twice the LLM timeout + 60 s is raised without a word: the file says so."""
    from vaultmind.queue.workers import LEASE_MARGIN_S, WorkerPool

    text = (REPO / "vault_template" / ".vaultmind" / "config.toml").read_text(encoding="utf-8")
    said = text.split("# lease_s =")[0].rsplit("\n\n", 1)[-1]
    assert "twice [ollama] timeout_s" in said and f"+ {LEASE_MARGIN_S:.0f}" in said, said
    write_config = tmp_path / ".vaultmind" / "config.toml"
    write_config.parent.mkdir(parents=True)
    write_config.write_text("[ollama]\ntimeout_s = 100\n[queue]\nlease_s = 30\n", encoding="utf-8")
    index = Index.open(None)
    try:
        assert WorkerPool(load_config(tmp_path), index=index).lease_s == 2 * 100 + LEASE_MARGIN_S
    finally:
        index.close()


def test_graph_json_colours_vaultmind_folders() -> None:
    graph = json.loads((REPO / "vault_template" / ".obsidian" / "graph.json").read_text())
    groups = {g["query"]: g["color"] for g in graph["colorGroups"]}
    assert set(groups) == {"path:sources", "path:summaries", "path:entities"}
    for color in groups.values():
        assert color["a"] == 1 and isinstance(color["rgb"], int) and 0 <= color["rgb"] <= 0xFFFFFF
    assert len({c["rgb"] for c in groups.values()}) == 3
    assert graph["search"] == "" and graph["hideUnresolved"] is False


def test_obsidian_settings_hide_nothing_and_enable_the_core_plugins() -> None:
    obsidian = REPO / "vault_template" / ".obsidian"
    app = json.loads((obsidian / "app.json").read_text())
    assert app["userIgnoreFilters"] == []
    assert app["alwaysUpdateLinks"] is False
    plugins = json.loads((obsidian / "core-plugins.json").read_text())
    for plugin in (
        "graph",
        "backlink",
        "outgoing-link",
        "page-preview",
        "global-search",
        "tag-pane",
        "properties",
    ):
        assert plugins[plugin] is True, plugin
    appearance = json.loads((obsidian / "appearance.json").read_text())
    for snippet in appearance["enabledCssSnippets"]:
        assert (obsidian / "snippets" / f"{snippet}.css").is_file()


def test_gitignore_keeps_config_and_drops_derived_state() -> None:
    lines = (REPO / "vault_template" / ".gitignore").read_text().splitlines()
    assert [line for line in lines if line and not line.startswith("#")] == list(GITIGNORE_LINES)


def test_template_is_found() -> None:
    assert template_root().joinpath(".vaultmind", "config.toml").is_file()


# --- atomic writes ---------------------------------------------------------------------------


def test_write_atomic_creates_replaces_and_refuses(tmp_path: Path) -> None:
    target = tmp_path / "note.md"
    write_atomic(target, b"one\n", overwrite=False)
    assert target.read_bytes() == b"one\n"
    with pytest.raises(RefuseToClobber):
        write_atomic(target, b"two\n", overwrite=False)
    assert target.read_bytes() == b"one\n"
    write_atomic(target, b"two\n", overwrite=True)
    assert target.read_bytes() == b"two\n"
    (tmp_path / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    with pytest.raises(RefuseToClobber):
        write_atomic(tmp_path / "dangling.md", b"x", overwrite=False)
    assert not (tmp_path / "nowhere.md").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling.md", "note.md"]


def test_write_atomic_respects_mode(tmp_path: Path) -> None:
    write_atomic(tmp_path / "token", b"secret", overwrite=False, mode=0o600)
    assert (tmp_path / "token").stat().st_mode & 0o777 == 0o600
    write_atomic(tmp_path / "note.md", b"x", overwrite=False)
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "note.md").stat().st_mode & 0o777 == 0o666 & ~umask


def test_write_atomic_needs_the_folder(tmp_path: Path) -> None:
    with pytest.raises(VaultError):
        write_atomic(tmp_path / "missing" / "note.md", b"x", overwrite=True)


def test_a_leaf_budget_below_the_chunkers_minimum_is_refused(tmp_path: Path) -> None:
    """The chunker never cuts leaves smaller than MIN_CHUNK_TOKENS; a smaller configured budget
    used to be raised silently, so `max_tokens = 40` gave 64-token leaves."""
    from vaultmind.errors import ConfigError
    from vaultmind.markdown.tokens import MIN_CHUNK_TOKENS

    vault = tmp_path / "vault"
    (vault / ".vaultmind").mkdir(parents=True)
    config = vault / ".vaultmind" / "config.toml"
    config.write_text(f"[chunking]\nmax_tokens = {MIN_CHUNK_TOKENS - 1}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=f"max_tokens must be at least {MIN_CHUNK_TOKENS}"):
        load_config(vault)
    config.write_text(f"[chunking]\nmax_tokens = {MIN_CHUNK_TOKENS}\n", encoding="utf-8")
    assert load_config(vault).chunk_tokens == MIN_CHUNK_TOKENS
