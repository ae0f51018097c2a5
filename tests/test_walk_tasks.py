"""`walk` on a question that asks for the open tasks ("what are my open tasks?")."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest

import vaultmind.retrieval.walk as walk_module
from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.answer_type import answer_kind
from vaultmind.retrieval.evidence import format_evidence, is_grounded
from vaultmind.retrieval.tasks import due_date

from .conftest import write, write_chat

AT = datetime(2024, 3, 12, 12)


def _tasks_vault(vault: Path) -> None:
    write(vault, "Projects/Launch.md", "# Launch\n\n## Press\n\n- [ ] Send the press kit to the journalists 📅 2024-03-14\n- [x] Draft the press release\n")
    write(vault, "Daily/2024-03-01.md", "---\ndate: 2024-03-01\n---\n# Friday\n\nRainy.\n\n## Tomorrow\n\n- [ ] Renew the passport\n")
    write(vault, "Daily/2024-03-11.md", "---\ndate: 2024-03-11\n---\n# Monday\n\nQuiet day.\n\n## Tomorrow\n\n- [ ] Call the plumber about the tap\n- [ ] Book the room for the launch party\n")
    write(vault, "Daily/2024-03-08.md", "---\ndate: 2024-03-08\n---\n# Friday\n\n- [ ] Launch: reread the launch plan\n")
    write(vault, "Daily/2024-03-20.md", "---\ndate: 2024-03-20\n---\n# Wednesday\n\n## Tomorrow\n\n- [ ] Water the plants\n")
    write(vault, "Daily/2024-03-05.md", "---\ndate: 2024-03-05\n---\n# Tuesday\n\n- [x] Paid the rent\n- [x] Fixed the launch checklist\n")
    write_chat(vault, "2024-03-11", [("Bob Stone", "The launch checklist is long, honestly."), ("Alice Chen", "Same here.")])


def test_due_dates_are_read_from_open_tasks_only() -> None:
    assert due_date("- [ ] Send the kit 📅 2024-03-14\n- [ ] Call Dana due: 2024-03-13") == date(2024, 3, 13)
    assert due_date("* [ ] Renew [due:: 2024-04-02]") == date(2024, 4, 2)
    assert due_date("- [x] Paid 📅 2024-03-01\n- [ ] Pay again") is None, "a done task's date is no due date"
    assert due_date("- [ ] Book it due 2024-02-31") is None, "no such day"


def test_a_question_for_the_open_tasks_gathers_them_in_order(vault: Path) -> None:
    """"What are my open tasks?" has no search word left: the open tasks of the vault are its
    hits, the one due first, then the daily notes at the question's time, newest first, then
    the note dated after it; a note whose tasks are all done is none of them."""
    _tasks_vault(vault)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What are my open tasks?", limit=5, reference_time=AT)
        assert result["query"]["open_tasks"]
        paths = [hit["note_path"] for hit in result["hits"] if hit["breakdown"]["task"] > 0]
        assert paths == ["Projects/Launch.md", "Daily/2024-03-11.md", "Daily/2024-03-08.md", "Daily/2024-03-01.md", "Daily/2024-03-20.md"]
        assert [hit["note_path"] for hit in result["hits"][:5]] == paths
        assert "Daily/2024-03-05.md" not in [hit["note_path"] for hit in result["hits"]]
        assert is_grounded(result["query"], [])
        assert "Call the plumber" in format_evidence(result)
        # the same asked as "what do I need to do?"
        again = memory.walk("What do I need to do?", limit=5, reference_time=AT)
        assert [hit["note_path"] for hit in again["hits"][:5]] == paths


def test_other_words_filter_the_open_tasks(vault: Path) -> None:
    """"What are my open tasks for the launch?": the open tasks that say "launch" lead, in the
    order of the rule (the note of 8 March, which says it twice, after the one of 11 March); the chat message and the done tasks that say it
    come after them, and the open tasks that do not say it are not raised."""
    _tasks_vault(vault)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What are my open tasks for the launch?", limit=5, reference_time=AT)
        assert not result["query"]["open_tasks"] and result["query"]["content_terms"] == ["launch"]
        hits = result["hits"]
        assert [hit["note_path"] for hit in hits[:3]] == ["Projects/Launch.md", "Daily/2024-03-11.md", "Daily/2024-03-08.md"]
        assert hits[0]["breakdown"]["task"] > hits[1]["breakdown"]["task"] > hits[2]["breakdown"]["task"] > 0
        assert all(hit["breakdown"]["task"] == 0 for hit in hits[3:])
        assert "Daily/2024-03-01.md" not in [hit["note_path"] for hit in hits]



@pytest.mark.parametrize(
    "question",
    ["What's pending for the launch?", "What is still open for the launch?", "What is outstanding for the launch?", "What remains to be done for the launch?"],
)
def test_what_is_pending_asks_for_the_open_tasks(vault: Path, question: str) -> None:
    """"What's pending…?", "what is still open…?": the open tasks, as "what are my open tasks…?"
    asks for them; the words that ask ("pending", "still open") are not searched."""
    _tasks_vault(vault)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk(question, limit=5, reference_time=AT)
        assert result["query"]["answer_kind"] == "task" and result["query"]["content_terms"] == ["launch"]
        assert [hit["note_path"] for hit in result["hits"][:3]] == ["Projects/Launch.md", "Daily/2024-03-11.md", "Daily/2024-03-08.md"]
    assert answer_kind("What is open on Sunday?") is None and answer_kind("What's left of the budget?") is None

def _due_vault(vault: Path) -> None:
    write(vault, "Projects/Press.md", "---\ndate: 2024-03-01\n---\n# Press\n\n- [ ] Send the press kit 📅 2024-03-15\n- [ ] Book the photographer 📅 2024-03-20\n")
    write(vault, "Projects/Venue.md", "---\ndate: 2024-02-20\n---\n# Venue\n\n- [ ] Pay the venue deposit 📅 2024-03-13\n")
    write(vault, "Daily/2024-03-11.md", "---\ndate: 2024-03-11\n---\n# Monday\n\n## Tomorrow\n\n- [ ] Call the plumber about the tap\n")
    write(vault, "Daily/2024-03-04.md", "---\ndate: 2024-03-04\n---\n# Monday\n\n- [ ] Renew the passport\n")
    write(vault, "Projects/Later.md", "---\ndate: 2024-03-12\n---\n# Later\n\n- [ ] Plan the summer party 📅 2024-04-02\n")


def test_a_window_asks_for_the_tasks_due_inside_it_soonest_first(vault: Path) -> None:
    """"What is due this week?" asks for open tasks: those due this week lead, the soonest
    first, however long ago they were written, then the tasks written this week with no due
    date; a task written this week but due later, or one written last week, is not raised."""
    _due_vault(vault)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        for question in ("What is due this week?", "Which tasks are due this week?"):
            result = memory.walk(question, limit=6, reference_time=AT)
            assert result["query"]["answer_kind"] == "task"
            raised = [hit["note_path"] for hit in result["hits"] if hit["breakdown"]["task"] > 0]
            assert raised == ["Projects/Venue.md", "Projects/Press.md", "Daily/2024-03-11.md"], question
            assert [hit["note_path"] for hit in result["hits"][:3]] == raised


def test_a_window_tests_every_due_date_of_a_leaf(vault: Path) -> None:
    """A leaf with an overdue task and another due this week is of "what is due this week?":
    every task's due date is tested, not only the leaf's soonest."""
    write(vault, "Projects/Badges.md", "---\ndate: 2024-02-01\n---\n# Badges\n\n- [ ] File the invoice 📅 2024-03-01\n- [ ] Print the badges 📅 2024-03-14\n")
    write(vault, "Projects/Old.md", "---\ndate: 2024-02-01\n---\n# Old\n\n- [ ] Return the keys 📅 2024-03-02\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What is due this week?", limit=6, reference_time=AT)
        raised = [hit["note_path"] for hit in result["hits"] if hit["breakdown"]["task"] > 0]
        assert raised == ["Projects/Badges.md"]


def test_open_task_candidates_are_capped(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A vault of more open tasks than `TASK_CANDIDATES` scores only the first ones in the
    order: "what are my open tasks?" walks no more leaves than that."""
    _tasks_vault(vault)
    monkeypatch.setattr(walk_module, "TASK_CANDIDATES", 2)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What are my open tasks?", limit=5, reference_time=AT)
        assert [hit["note_path"] for hit in result["hits"]] == ["Projects/Launch.md", "Daily/2024-03-11.md"]
        assert result["total"] == 2


def test_a_task_question_cites_and_shows_the_tasks_not_the_decision_above_them(vault: Path) -> None:
    """"What do I need to do before the launch?": the meeting's section that holds both its
    decision (with a block id, saying "launch") and its action items is cited at the action
    items, and its evidence starts there, not at the decision."""
    write(
        vault,
        "Meetings/Launch sync.md",
        "---\ndate: 2024-03-07\n---\n# Launch sync\n\n## Decisions\n\n- Move the public launch to 23 April. ^decision-move\n"
        "- Code freeze on 16 April.\n\n## Action items\n\n- [ ] Alice: move the venue booking\n"
        "- [ ] Priya: usability tests before code freeze\n",
    )
    write_chat(vault, "2024-03-08", [("Bob Stone", "The launch party playlist is ready."), ("Alice Chen", "Lovely.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What do I need to do before the launch?", limit=3, reference_time=AT)
        first = result["hits"][0]
        assert first["note_path"] == "Meetings/Launch sync.md"
        assert first["anchor"].endswith("#Action items") and first["wikilink"].endswith("#Action items]]")
        item = format_evidence(result).split("\n[2]")[0]
        assert "… Action items: - [ ] Alice: move the venue booking" in item
        assert "Move the public launch" not in item
