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

A question with a time window ("what is due this week?", "what do I need to do tomorrow?")
asks for the tasks of that window (`of_window`): the leaves with a task due inside it (any of
their due dates, an overdue one beside it or not), and those without a due date on a leaf
dated inside it. They are gathered and raised as above, in the same order (the
soonest due first), beside the tasks its other words match.

A question that names where its tasks come from ("which tasks are still open from the launch
sync?") asks for the tasks of the notes whose names hold the most of the words after its
"from" (`of_named_source`), in the same order: a "from" that sets a source aside ("apart from
the garden", "other than those from…") or starts a time ("from Monday to Friday") names none.

Of the open tasks gathered for a question, only the first `TASK_CANDIDATES` in that order
become candidates: a vault of thousands of open tasks shows its first ones, and the walk
scores no more leaves than a search brings.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import numpy.typing as npt

from vaultmind.calendar_names import alternation
from vaultmind.index.lexical import terms
from vaultmind.retrieval.answer_type import OPEN_TASK
from vaultmind.retrieval.timeparse import MONTHS, WEEKDAYS

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from vaultmind.retrieval.timeparse import TimeWindow
    from vaultmind.retrieval.view import MemoryView

TASK_WEIGHT = 1.0
_TIME_WORDS = alternation([*MONTHS, *WEEKDAYS, "today", "tomorrow", "yesterday", "tonight", "now", "then", "last", "next"])
TASK_CANDIDATES = 200  # the open tasks a question gathers: the first, in the module's order
# a task's due date as Obsidian's Tasks plugin (📅), Dataview (`[due:: …]`) or plain text writes it
# where a question's tasks come from: "…open from the launch sync?" (not "apart from the garden",
# "other than those from…", "except from…"; not "from Monday to Friday", "from 1 April", a time)
_FROM = re.compile(
    rf"^(?!.*\b(?:apart|other\s+than|except|besides)\b.*\bfrom\b).*?\bfrom\s+(?!(?:{_TIME_WORDS})\b|\d)([^?!.]+)",
    re.I,
)
_DUE = re.compile(r"(?:📅\ufe0f?|\bdue(?:::?|\s+on)?)\s*(\d{4})-(\d{2})-(\d{2})\b", re.I)


def due_date(text: str) -> date | None:
    """The soonest due date written on one of the text's open tasks; None when none has one."""
    return min(due_dates(text), default=None)


def due_dates(text: str) -> tuple[date, ...]:
    """The due dates written on the text's open tasks, the soonest first."""
    if "📅" not in text and "due" not in text.lower():  # most tasks: no date to look for (a 10th of the time)
        return ()
    dates: list[date] = []
    for line in OPEN_TASK.finditer(text):
        for m in _DUE.finditer(line.group(0)):
            try:
                dates.append(date(int(m.group(1)), int(m.group(2)), int(m.group(3))))
            except ValueError:  # "2024-02-31": no date
                continue
    return tuple(sorted(dates))


class OpenTask(NamedTuple):
    """A leaf holding an open task: its id, the due dates of its open tasks (the soonest
    first), its time, its note's path."""

    id: str
    dues: tuple[date, ...]
    ts: datetime | None
    note: str

    @property
    def due(self) -> date | None:
        """The soonest due date of its open tasks."""
        return self.dues[0] if self.dues else None


def open_tasks(memory: MemoryView, now: datetime) -> list[OpenTask]:
    """The live leaves that hold an open task, in the module's order (`now`: the question's
    time, naive UTC)."""
    rows = memory.index.query("SELECT id, note_path, seq, ts, text FROM leaves WHERE contains(text, '[ ]')")
    rows = [row for row in rows if OPEN_TASK.search(row[4])]
    if not rows:
        return []
    known = memory.leaves.columns([row[0] for row in rows]).known
    held = [(seq, OpenTask(leaf_id, due_dates(text), ts, path)) for (leaf_id, path, seq, ts, text), live in zip(rows, known.tolist(), strict=True) if live]

    def order(row: tuple[int, OpenTask]) -> tuple[int, float, str, int]:
        seq, task = row
        if task.due is not None:
            return (0, float(task.due.toordinal()), task.note, seq)
        if task.ts is not None and task.ts <= now:
            return (1, -(task.ts - datetime.min).total_seconds(), task.note, seq)
        return (2, 0.0, task.note, seq)

    return [task for _, task in sorted(held, key=order)]


def of_named_source(tasks: list[OpenTask], question: str) -> list[OpenTask]:
    """Of `tasks`, for a question that names where they come from ("which tasks are still open
    from the launch sync?"), those of the notes whose names hold the most of the words after
    its "from" ("2024-03-07 Launch sync", not the daily note of that day, whose text says
    "Launch sync" too), in the module's order; all of them when no note's name holds one, or
    the question names no source ("open tasks for the launch": the tasks that say it, anywhere)."""
    source = _FROM.search(question)
    if source is None or not tasks:
        return tasks
    asked = set(terms(source.group(1)))
    held = {note: len(asked.intersection(terms(PurePosixPath(note).stem))) for note in {task.note for task in tasks}}
    most = max(held.values())
    return [task for task in tasks if held[task.note] == most] if most else tasks


def of_window(tasks: list[OpenTask], window: TimeWindow) -> list[OpenTask]:
    """Of `tasks`, those of the window, in their order: one of its tasks due inside it, or,
    without a due date, on a leaf dated inside it."""

    def inside(task: OpenTask) -> bool:
        if task.dues:  # a due day overlaps the window
            days = (datetime.combine(due, time.min) for due in task.dues)
            return any(day < window.end and day + timedelta(days=1) > window.start for day in days)
        return task.ts is not None and window.contains(task.ts)

    return [task for task in tasks if inside(task)]


def task_scores(ordered: list[OpenTask], at: Mapping[str, int], size: int, among: Collection[str] | None = None) -> npt.NDArray[np.float64]:
    """What each of walk's `size` leaves adds for being an open task: `TASK_WEIGHT` × (1 + its
    place in `ordered` from the end, over their number), of the leaves of `ordered` that are
    `among` (None: all of them); 0 for any other."""
    raised = [task.id for task in ordered if task.id in at and (among is None or task.id in among)]
    added = np.zeros(size)
    for k, leaf_id in enumerate(raised):
        added[at[leaf_id]] = TASK_WEIGHT * (1.0 + (len(raised) - k) / len(raised))
    return added
