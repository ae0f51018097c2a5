"""walk: a question naming a speaker and a window that holds nothing by them ("what did Bob say
yesterday?" when only Alice wrote that day) says so, and ranks the speaker's words nearest it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.evidence import format_evidence, none_by

from .conftest import run_main, write, write_chat

MARCH_12 = datetime(2024, 3, 12, 12)


def _chats(vault: Path) -> None:
    write_chat(vault, "2024-02-01", [("Bob Stone", "The staging cluster is ready for the load test next week.")])
    write_chat(
        vault,
        "2024-03-04",
        [
            ("Bob Stone", "The payments migration needs about eight more working days."),
            ("Alice Chen", "Understood, I will tell marketing."),
        ],
    )
    write_chat(vault, "2024-03-07", [("Bob Stone", "Code freeze moves to Tuesday 16 April.")])
    write_chat(
        vault,
        "2024-03-11",
        [
            ("Alice Chen", "Here is the launch budget for the second quarter: eighteen thousand euros in total, venue and ads included."),
            ("Helen Okafor", "Approved, with the contingency only spent with my OK."),
        ],
    )


def test_a_window_without_the_speakers_words_says_so_and_ranks_their_nearest(vault: Path) -> None:
    _chats(vault)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("What did Bob say yesterday?", limit=5, reference_time=MARCH_12)
        assert result["query"]["window_none_by"] == ["Bob Stone"]
        assert result["query"]["time_window"]["start"] == "2024-03-11T00:00:00Z"
        hits = result["hits"]
        assert [h["author"] for h in hits[:3]] == ["Bob Stone"] * 3, "his three messages, not the others' inside the window"
        assert hits[0]["content"] == "Code freeze moves to Tuesday 16 April.", "the nearest the window first"
        assert "payments migration" in hits[1]["content"] and "staging cluster" in hits[2]["content"]
        nearest = memory.leaves.by_authors(["Bob Stone"], 2, near=(datetime(2024, 3, 11), datetime(2024, 3, 12)))
        assert [memory.leaves.rows([i])[i]["text"] for i in nearest] == [hits[0]["content"], hits[1]["content"]]
        evidence = format_evidence(result)
        assert "Nothing by Bob Stone is dated inside this window: the items below are what Bob Stone said nearest it." in evidence

        about = memory.walk("What did Bob say about the staging cluster yesterday?", limit=3, reference_time=MARCH_12)
        assert about["query"]["window_none_by"] == ["Bob Stone"]
        assert "staging cluster" in about["hits"][0]["content"], "what he said of it, though the farthest"

        alice = memory.walk("What did Alice say yesterday?", limit=3, reference_time=MARCH_12)
        assert alice["query"]["window_none_by"] == [], "she wrote that day"
        assert alice["hits"][0]["author"] == "Alice Chen" and alice["hits"][0]["breakdown"]["inside"]
        window = memory.walk("What happened yesterday?", limit=3, reference_time=MARCH_12)
        assert window["query"]["window_none_by"] == [] and window["hits"][0]["breakdown"]["inside"], "no speaker named"


def test_the_listing_says_the_speaker_wrote_nothing_in_the_window(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _chats(vault)
    (vault / ".obsidian").mkdir()
    code, _, err = run_main(capsys, "init", "--existing", str(vault))
    assert code == 0, err
    code, out, err = run_main(capsys, "query", "walk", "what did Bob say yesterday?", "--vault", str(vault), "--at", "2024-03-12T12:00:00")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1] == "nothing by Bob Stone is dated inside this window: the items below are what Bob Stone said nearest it"
    assert "Bob Stone · 2024-03-07" in lines[3]
    code, data, _ = run_main(capsys, "query", "walk", "what did Bob say yesterday?", "--vault", str(vault), "--at", "2024-03-12T12:00:00", "--json")
    assert code == 0 and data["query"]["window_none_by"] == ["Bob Stone"]


def test_a_window_empty_but_for_a_note_just_after_it_still_ranks_the_speakers_nearest(vault: Path) -> None:
    """"What did Alice say about the budget last week?" when nothing was written that week, but a
    daily note of today lies just after it: her messages nearest the window, not the user's notes
    (which count as undated outside a window while every message was taken down by it)."""
    _chats(vault)
    write(vault, "Budget 2024.md", "# Budget 2024\n\n- The budget spreadsheet: venue, ads, design, contingency.\n")
    write(vault, "Daily/2024-04-02.md", "---\ndate: 2024-04-02\n---\n# Today\n\n- Gym, then groceries.\n")
    question = "What did Alice say about the budget last week?"
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk(question, limit=3, reference_time=datetime(2024, 4, 3, 12))
        assert result["query"]["window_empty"] and result["query"]["time_window"]["start"] == "2024-03-25T00:00:00Z"
        assert result["query"]["window_none_by"] == ["Alice Chen"]
        assert result["hits"][0]["author"] == "Alice Chen" and "launch budget" in result["hits"][0]["content"]
        assert "Nothing by Alice Chen is dated inside this window" in format_evidence(result)


def test_the_notice_names_each_speaker_once_as_shown() -> None:
    """An author written "Name <address>" and as "Name" is one speaker in the notice."""
    assert none_by(["Alice Chen", "Alice Chen <alice@fernhill.example>"]) == (
        "nothing by Alice Chen is dated inside this window: the items below are what Alice Chen said nearest it"
    )
