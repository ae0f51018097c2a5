"""The Obsidian plugin (`plugins/vaultmind/`): built from its own files with npm, its client
driven from Node against a real daemon on a temp vault, and installed into a vault."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write, write_chat
from vaultmind.memory import Memory

pytestmark = pytest.mark.slow

PLUGIN = Path(__file__).resolve().parent.parent / "plugins" / "vaultmind"


def _npm(*args: str, cwd: Path = PLUGIN) -> subprocess.CompletedProcess[str]:
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("the Obsidian plugin's tests need Node.js 18+ with npm on PATH (the plugin is built with them)")
    return subprocess.run([npm, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def built() -> Path:
    """The plugin built from its lock file (`npm ci` once, then `npm run build`)."""
    if not (PLUGIN / "node_modules" / ".package-lock.json").is_file():
        done = _npm("ci", "--no-audit", "--no-fund")
        assert done.returncode == 0, done.stderr
    done = _npm("run", "build")
    assert done.returncode == 0, done.stdout + done.stderr
    return PLUGIN


def _client(vault: Path, *args: str) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [node, str(PLUGIN / "test" / "client.mjs"), str(vault), *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


@pytest.fixture
def chat_vault(vault: Path) -> Iterator[Path]:
    write_chat(
        vault,
        "2024-03-08",
        [("Dana", "The venue is booked: Harbor Hall, the Loft, for 120 guests."), ("Sam", "Great, I'll tell catering.")],
    )
    write(vault, "Launch plan.md", "# Launch plan\n\nWhich venue holds 120 guests? Harbor Hall has the Loft.\n")
    yield vault


def test_its_own_tests_pass_and_the_build_is_a_plugin_obsidian_loads(built: Path, tmp_path: Path) -> None:
    # on a fresh checkout: nothing built yet (`npm test` builds first), the lock file's packages installed
    fresh = tmp_path / "vaultmind"
    shutil.copytree(PLUGIN, fresh, ignore=shutil.ignore_patterns("node_modules", "build", "main.js"))
    (fresh / "node_modules").symlink_to(PLUGIN / "node_modules", target_is_directory=True)
    done = _npm("test", cwd=fresh)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^# fail 0$", done.stdout, re.MULTILINE) and (fresh / "build" / "api.mjs").is_file()
    manifest = json.loads((built / "manifest.json").read_text())
    package = json.loads((built / "package.json").read_text())
    assert manifest["id"] == "vaultmind" and manifest["version"] == package["version"]
    bundle = (built / "main.js").read_text()
    assert 'require("obsidian")' in bundle  # the app provides it: not bundled
    assert "module.exports" in bundle


def test_a_question_is_answered_by_the_running_daemon_with_a_link_to_the_message(
    built: Path, chat_vault: Path, daemon: Memory
) -> None:
    answer = _client(chat_vault, "ask", "Which venue is booked?")
    top = answer["result"]["hits"][0]
    assert top["note_path"] == "sources/chat/two/2024-03-08.md"
    assert "Harbor Hall" in top["content"]
    assert top["link_text"] == "sources/chat/two/2024-03-08#" + top["anchor"]
    # the link the panel opens names a block the note really has
    note = (chat_vault / top["note_path"]).read_text()
    assert re.search(rf"(^|\s){re.escape(top['anchor'])}$", note, re.MULTILINE)


def test_related_memory_of_a_note_comes_from_other_notes(built: Path, chat_vault: Path, daemon: Memory) -> None:
    hits = _client(chat_vault, "related", "Launch plan.md")["result"]["hits"]
    paths = [hit["note_path"] for hit in hits]
    assert "sources/chat/two/2024-03-08.md" in paths
    assert "Launch plan.md" not in paths


def test_status_reports_the_index_the_daemon_holds(built: Path, chat_vault: Path, daemon: Memory) -> None:
    result = _client(chat_vault, "status")["result"]
    assert result["health"]["ready"] is True
    assert result["status"]["notes"]["total"] == daemon.status()["notes"]["total"] == 2
    assert result["status"]["index"]["health"] == "ok"


def test_without_a_daemon_it_says_how_to_start_one(built: Path, tmp_path: Path) -> None:
    vault = tmp_path / "My Notes"
    (vault / ".vaultmind").mkdir(parents=True)
    error = _client(vault, "ask", "anything")["error"]
    assert error["message"] == "vaultmind is not running for this vault"
    assert error["hint"] == f"start it in a terminal: vaultmind serve --vault '{vault}'"


def test_a_daemon_upgrading_its_index_is_starting_with_what_it_does(built: Path, vault: Path) -> None:
    from tests.test_daemon_starting import upgrading

    with upgrading(vault):
        answer = _client(vault, "status")
    assert answer["error"]["message"] == "vaultmind is starting: upgrading the index (migration 0035) 3/9"
    assert answer["error"]["status"] is None


def test_a_wrong_token_is_read_again_then_reported_with_the_daemon_s_hint(
    built: Path, chat_vault: Path, daemon: Memory
) -> None:
    info_path = chat_vault / ".vaultmind" / "daemon.json"
    info = json.loads(info_path.read_text())
    info_path.write_text(json.dumps({**info, "token": "stale"}))
    error = _client(chat_vault, "ask", "Which venue is booked?")["error"]
    assert error["status"] == 401
    assert "daemon.json" in error["hint"]
    info_path.write_text(json.dumps(info))
    assert _client(chat_vault, "ask", "Which venue is booked?")["result"]["hits"]


def test_install_copies_the_plugin_into_the_vault_and_nothing_else(built: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault, "note.md", "# mine\n")
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run([node, str(PLUGIN / "install.mjs"), str(vault)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    installed = vault / ".obsidian" / "plugins" / "vaultmind"
    assert sorted(p.name for p in installed.iterdir()) == ["main.js", "manifest.json", "styles.css"]
    assert (installed / "main.js").read_bytes() == (built / "main.js").read_bytes()
    assert (vault / "note.md").read_text() == "# mine\n"
    # given relative to where `npm run install-into` was typed, not to the plugin's folder
    again = subprocess.run(
        [node, str(PLUGIN / "install.mjs"), "vault"], capture_output=True, text=True, timeout=60,
        cwd=PLUGIN, env={**os.environ, "INIT_CWD": str(tmp_path)},
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert str(installed) in again.stdout
    bare = tmp_path / "not-a-vault"
    bare.mkdir()
    done = subprocess.run([node, str(PLUGIN / "install.mjs"), str(bare)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "has no .obsidian/ folder" in done.stderr


def test_the_plugins_longest_question_is_the_one_the_api_takes() -> None:
    """The plugin cuts a selection to the longest question the API takes: a longer cap would be
    refused by every daemon, a shorter one would cut questions short for nothing."""
    from vaultmind.retrieval.dispatch import MAX_QUESTION_CHARS

    source = (PLUGIN / "src" / "text.ts").read_text(encoding="utf-8")
    found = re.search(r"export const QUESTION_CHARS = ([\d_]+);", source)
    assert found is not None, "text.ts no longer declares QUESTION_CHARS"
    assert int(found.group(1).replace("_", "")) == MAX_QUESTION_CHARS


def test_related_memory_lists_no_summary_of_the_open_note(built: Path, chat_vault: Path, daemon: Memory) -> None:
    """A summary whose text is the open note's own came first in its related memory, under the
    title "Notes · summary L1": related memory lists other notes, each by its best leaf."""
    from vaultmind.client import published

    client = published(daemon.config)
    assert client is not None
    client.call("POST", "/v1/flush", {"all": True})
    searched = client.call("POST", "/v1/search", {"query": "Launch plan Which venue holds 120 guests", "limit": 50})
    summaries = [hit for hit in searched["hits"] if hit["node_kind"] == "summary"]
    assert summaries, "the search finds summaries (else this test shows nothing)"
    hits = _client(chat_vault, "related", "Launch plan.md")["result"]["hits"]
    assert [hit["note_path"] for hit in hits] == ["sources/chat/two/2024-03-08.md"]
    assert all(hit["node_kind"] == "leaf" for hit in hits)
