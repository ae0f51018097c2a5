"""walk: "which tasks are still open from the launch sync?" names the note its tasks come from."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.tasks import of_named_source, open_tasks

from .conftest import write

AT = datetime(2024, 3, 12, 12)


def _vault(vault: Path) -> None:
    write(
        vault,
        "Daily/2024-03-07.md",
        "---\ndate: 2024-03-07\n---\n# Thursday\n\n- Launch sync: we moved the launch. The launch sync ran long.\n\n"
        "## Tomorrow\n\n- [ ] Confirm the venue for the launch\n",
    )
    write(
        vault,
        "Meetings/2024-03-07 Launch sync.md",
        "---\ndate: 2024-03-07\n---\n# Weekly sync\n\n## Action items\n\n- [ ] Alice: move the venue booking\n- [x] Marco: tell the journalists\n",
    )
    write(vault, "Projects/Garden.md", "# Garden\n\n- [ ] Water the plants\n")


def test_tasks_from_a_named_note_are_that_notes(vault: Path) -> None:
    _vault(vault)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("Which tasks are still open from the launch sync?", limit=5, reference_time=AT)
        hits = result["hits"]
        assert hits[0]["note_path"] == "Meetings/2024-03-07 Launch sync.md", [h["note_path"] for h in hits]
        assert hits[0]["breakdown"]["task"] > 0
        daily = next(h for h in hits if h["note_path"] == "Daily/2024-03-07.md")
        assert daily["breakdown"]["task"] == 0, "its text says the launch sync; its name does not"

        anywhere = memory.walk("What are my open tasks for the launch?", limit=5, reference_time=AT)
        raised = {h["note_path"] for h in anywhere["hits"] if h["breakdown"]["task"] > 0}
        assert raised == {"Daily/2024-03-07.md"}, "no source named: the tasks that say it"


def test_a_from_that_sets_a_source_aside_or_starts_a_time_names_none(vault: Path) -> None:
    _vault(vault)
    write(vault, "Projects/Friday review.md", "# Friday review\n\n- [ ] Collect the week's numbers\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        tasks = open_tasks(memory, AT)
        for question in (
            "Which tasks are still open apart from the garden?",
            "Which tasks are still open other than those from the garden?",
            "What tasks are due from Monday to Friday?",
        ):
            assert of_named_source(tasks, question) == tasks, f"{question}: no source named (set aside, or a time)"
        assert {t.note for t in of_named_source(tasks, "Which tasks are open from the garden?")} == {"Projects/Garden.md"}

