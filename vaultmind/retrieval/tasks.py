"""The open tasks of the vault, for a question that asks for them ("what are my open tasks?").

Such a question names only the kind of answer it asks for: its words ("open", "tasks", "my")
are no search words (`answer_type.kind_terms`), and no message or section says them beside a
task. So `walk` gathers the leaves that hold an open task (`- [ ] …`, as `answer_type` reads
one) itself, and orders them by one rule (`open_tasks`):

1. the leaves with a due date on one of their open tasks (`📅 2024-03-13`, `due: 2024-03-13`,
   `[due:: 2024-03-13]`), the soonest (or longest overdue) first;
2. then the leaves dated at or before the question's time, the newest first (today's daily
   note before last week's meeting);
3. then the rest (undated, or dated after the question's time).

Ties go by note path and place in the note. Each such leaf adds `TASK_WEIGHT` × (1 + how early
in that order it comes, 1 for the first down to 1/n for the last) to its score (`task_scores`):
they lead the hits, in that order (such a question is not searched otherwise: nothing else
weighs). With other search words ("open tasks for the launch"), only the task leaves that hold
one of them are raised, by the same rule among themselves: the words filter the tasks, and
their match adds to the raise as for any leaf, so a task leaf that matches them far better can
pass the one just before it in the order.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from vaultmind.retrieval.answer_type import OPEN_TASK

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from vaultmind.retrieval.view import MemoryView

TASK_WEIGHT = 1.0
# a task's due date as Obsidian's Tasks plugin (📅), Dataview (`[due:: …]`) or plain text writes it
_DUE = re.compile(r"(?:📅\ufe0f?|\bdue(?:::?|\s+on)?)\s*(\d{4})-(\d{2})-(\d{2})\b", re.I)


def due_date(text: str) -> date | None:
    """The soonest due date written on one of the text's open tasks; None when none has one."""
    dates: list[date] = []
    for line in OPEN_TASK.finditer(text):
        for m in _DUE.finditer(line.group(0)):
            try:
                dates.append(date(int(m.group(1)), int(m.group(2)), int(m.group(3))))
            except ValueError:  # "2024-02-31": no date
                continue
    return min(dates) if dates else None


def open_tasks(memory: MemoryView, now: datetime) -> list[str]:
    """The live leaves that hold an open task, in the module's order (`now`: the question's
    time, naive UTC)."""
    rows = memory.index.query("SELECT id, note_path, seq, ts, text FROM leaves WHERE contains(text, '[ ]')")
    rows = [row for row in rows if OPEN_TASK.search(row[4])]
    if not rows:
        return []
    known = memory.leaves.columns([row[0] for row in rows]).known

    def order(row: tuple[str, str, int, datetime | None, str]) -> tuple[int, float, str, int]:
        _, path, seq, ts, text = row
        due = due_date(text)
        if due is not None:
            return (0, float(due.toordinal()), path, seq)
        if ts is not None and ts <= now:
            return (1, -(ts - datetime.min).total_seconds(), path, seq)
        return (2, 0.0, path, seq)

    return [row[0] for row in sorted((r for r, live in zip(rows, known.tolist(), strict=True) if live), key=order)]


def task_scores(ordered: list[str], at: Mapping[str, int], size: int, among: Collection[str] | None = None) -> npt.NDArray[np.float64]:
    """What each of walk's `size` leaves adds for being an open task: `TASK_WEIGHT` × (1 + its
    place in `ordered` from the end, over their number), of the leaves of `ordered` that are
    `among` (None: all of them); 0 for any other."""
    raised = [leaf_id for leaf_id in ordered if leaf_id in at and (among is None or leaf_id in among)]
    added = np.zeros(size)
    for k, leaf_id in enumerate(raised):
        added[at[leaf_id]] = TASK_WEIGHT * (1.0 + (len(raised) - k) / len(raised))
    return added
