"""What a new user reads first: the README's set-up, `ingest --help`, the welcome note."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from vaultmind.ingest import FORMATS

from .conftest import run_main, write_chat

REPO = Path(__file__).resolve().parents[1]
CHAT_APPS = [f for f in FORMATS if f not in ("auto", "generic", "locomo")]  # apps people chat in


def _setup_command() -> list[str]:
    """The README's set-up command (the first shell block), split into its commands."""
    block = re.search(r"```bash\n(.*?)```", (REPO / "README.md").read_text(encoding="utf-8"), re.S)
    assert block is not None
    return [part.strip() for part in block.group(1).split("&&")]


@pytest.mark.skipif(
    shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs the git checkout"
)
def test_the_demo_vault_the_readme_makes_in_the_checkout_is_ignored_by_git() -> None:
    (init,) = [c for c in _setup_command() if c.startswith("vaultmind init")]
    folder = shlex.split(init)[-1]
    # `git status` in the checkout listed the demo vault, notes and index, as untracked
    for path in (f"{folder}/Demo tour.md", f"{folder}/.vaultmind/index.duckdb"):
        checked = subprocess.run(["git", "-C", str(REPO), "check-ignore", "-q", path], check=False)
        assert checked.returncode == 0, f"{path} is not ignored by the repository's .gitignore"


def test_ingest_help_says_what_each_kind_reads(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run_main(capsys, "ingest", "--help")
    out = capsys.readouterr().out
    description = out[out.index("\n\n") : out.index("positional arguments:")].lower()
    for fmt in FORMATS[1:]:  # Instagram, Messenger and LoCoMo were left out
        assert fmt in description, (fmt, description)
    for reads in ("claude code", ".eml", "mbox", "maildir", ".md", ".txt", ".html"):
        assert reads in " ".join(description.split()), (reads, description)


def test_the_welcome_note_names_every_chat_app_ingest_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    assert run_main(capsys, "init", str(vault))[0] == 0
    welcome = (vault / "Welcome to vaultmind.md").read_text(encoding="utf-8")
    (line,) = [line for line in welcome.splitlines() if line.startswith("vaultmind ingest chat")]
    for app in CHAT_APPS:
        assert app in line.lower(), (app, line)


def test_explain_counts_a_notes_messages_from_one(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_chat(
        vault,
        "2024-03-04",
        [("Alice", "The hall is booked for Friday."), ("Bob", "Great, I'll bring the banner.")],
    )
    (vault / ".obsidian").mkdir()
    assert run_main(capsys, "init", "--existing", str(vault))[0] == 0
    code, hits, _ = run_main(capsys, "query", "search", "banner", "--vault", str(vault), "--json")
    assert code == 0 and hits["hits"][0]["message_id"] == "2024-03-04-1"
    code, out, _ = run_main(capsys, "explain", hits["hits"][0]["node_id"], "--vault", str(vault))
    # the second message of the note was "message 1 of …", the first "message 0 of …"
    assert code == 0 and "(message 2 of sources/chat/two/2024-03-04.md#^" in out, out


def test_the_demo_tour_names_the_command_that_writes_its_summaries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "demo"
    assert run_main(capsys, "init", "--demo", str(vault))[0] == 0
    assert run_main(capsys, "reindex", "--vault", str(vault))[0] == 0
    tour = (vault / "Demo tour.md").read_text(encoding="utf-8")
    said = " ".join(tour[tour.index("Summaries appear") :].split("\n\n")[0].split())
    # the tour said summaries appear "once vaultmind has sealed them", naming no command
    (flush,) = [c for c in re.findall(r"`(vaultmind [^`]+)`", said) if c.startswith("vaultmind flush")]
    monkeypatch.chdir(vault)  # the tour's commands run in the vault's folder
    assert run_main(capsys, *shlex.split(flush)[1:])[0] == 0
    assert list((vault / "summaries").rglob("s-*.md"))


def test_the_demo_tours_questions_are_all_in_the_memory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The tour's "where is Dad's birthday dinner?" was answered under "not in the memory:
    birthday" (the family chat said "Dad's 60th" only): each question to try is found in the
    demo's words, and the dinner's answer is the one its evidence table links."""
    vault = tmp_path / "demo"
    assert run_main(capsys, "init", "--demo", str(vault))[0] == 0
    tour = (vault / "Demo tour.md").read_text(encoding="utf-8")
    questions = re.findall(r'^vaultmind query walk "([^"]+)"$', tour, re.M)
    assert "where is Dad's birthday dinner?" in questions
    (dinner,) = re.findall(r"^\| Dad's birthday dinner \| \[\[[^#]+#\^([^\\|]+)", tour, re.M)
    for question in questions:
        code, data, err = run_main(capsys, "query", "walk", question, "--vault", str(vault), "--json")
        assert code == 0 and data["query"]["unknown"] == [], (question, data["query"]["unknown"], err)
        if "birthday" in question:
            assert data["hits"][0]["anchor"] == f"^{dinner}", data["hits"][0]
