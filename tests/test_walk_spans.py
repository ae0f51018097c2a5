"""walk: a span named by its ends ("from Monday to Friday", "from March to May") or by the week a
day is in ("during the week of 4 March") is the question's window (`retrieval/spans.py`)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.asked_window import question_window

from .conftest import write_chat

MARCH_13 = datetime(2024, 3, 13, 12)  # a Wednesday


def _window(question: str) -> tuple[str, str] | None:
    window = question_window(question, MARCH_13)
    return None if window is None else (window.start.date().isoformat(), window.end.date().isoformat())


def test_spans_read_as_windows() -> None:
    assert _window("What did Bob say from Monday to Friday?") == ("2024-03-11", "2024-03-16"), "the latest Monday, to the end of Friday"
    assert _window("what happened between Monday and Tuesday?") == ("2024-03-11", "2024-03-13")
    assert _window("what happened from Friday to Monday?") == ("2024-03-08", "2024-03-12"), "over the weekend into Monday"
    assert _window("What happened from March to May?") == ("2024-03-01", "2024-06-01"), "this March, begun, to the end of May"
    assert _window("what did we spend from November to February?") == ("2023-11-01", "2024-03-01")
    assert _window("what did we spend from November to February 2023?") == ("2022-11-01", "2023-03-01"), "one year for both"
    assert _window("What did we discuss during the week of 6 March?") == ("2024-03-04", "2024-03-11"), "Monday to Monday"
    assert _window("what happened in the week of March 4th, 2023?") == ("2023-02-27", "2023-03-06")
    assert _window("what happened between 4 and 6 March?") == ("2024-03-04", "2024-03-07"), "days, as before"
    assert _window("what did we agree from the start?") is None


def _chats(vault: Path) -> None:
    write_chat(vault, "2024-02-27", [("Bob Stone", "The staging cluster for the payments tests is ready.")])
    write_chat(vault, "2024-03-05", [("Bob Stone", "The payments migration needs about eight more working days.")])
    write_chat(vault, "2024-03-07", [("Bob Stone", "Code freeze for the payments work moves to Tuesday 16 April.")])
    write_chat(vault, "2024-03-12", [("Bob Stone", "Payments tests are green on staging today.")])
    write_chat(vault, "2024-06-03", [("Bob Stone", "Payments dashboard is live for the whole team.")])


def test_a_span_ranks_the_messages_inside_it_first(vault: Path) -> None:
    _chats(vault)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        week = memory.walk("What did Bob say about payments during the week of 6 March?", limit=5, reference_time=MARCH_13)
        assert week["query"]["time_window"]["text"] == "during the week of 6 march"
        inside = {h["content"] for h in week["hits"] if h["breakdown"]["inside"]}
        assert inside == {
            "Code freeze for the payments work moves to Tuesday 16 April.",
            "The payments migration needs about eight more working days.",
        }, "the messages of 4–10 March, not of 27 February or 12 March"
        assert {h["content"] for h in week["hits"][:2]} == inside, "they lead"

        weekdays = memory.walk("What did Bob say about payments from Monday to Friday?", limit=5, reference_time=MARCH_13)
        assert weekdays["hits"][0]["content"] == "Payments tests are green on staging today.", "Tuesday 12 March, this week"
        assert [h["breakdown"]["inside"] for h in weekdays["hits"]].count(True) == 1

        months = memory.walk("What did Bob say about payments from March to May?", limit=5, reference_time=MARCH_13)
        assert months["query"]["time_window"]["start"] == "2024-03-01T00:00:00Z"
        assert months["query"]["time_window"]["end"] == "2024-06-01T00:00:00Z"
        assert "staging cluster" not in " ".join(h["content"] for h in months["hits"][:3]), "February is outside it"
