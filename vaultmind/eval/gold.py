"""The LoCoMo questions an eval asks, with their gold evidence; every sample checked up front.

Gold evidence comes from a flat QA file (`qa_flat_dev.jsonl` next to the data file, or the
one given), whose `evidence` lists are split and repaired; a question that file does not list
falls back to the sample's own `evidence`, split on separators and read leniently
(`D:11:26` → `D11:26`; an id of another shape counts when it names a turn as written). Evidence
ids that name no turn of the conversation are dropped and counted; a question left without
evidence is skipped and counted.

A turn's session is the `session_<n>` list that holds it, not a number read from its id.

`prepare_samples` reads every sample — its batches, its reference time, its questions —
before the first is ingested: a malformed sample late in the file stops the run before any
work, not after the conversations before it were indexed and asked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from vaultmind.errors import IngestError
from vaultmind.ingest.locomo import parse_session_time, sample_batches, sessions
from vaultmind.ingest.model import SourceBatch

CATEGORIES: Mapping[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
QA_FILE = "qa_flat_dev.jsonl"

_LOOSE_DIA_ID = re.compile(r"D:?\s*(\d+)\s*:\s*(\d+)")
_EVIDENCE_SEPARATORS = re.compile(r"[;,]")


@dataclass(frozen=True, slots=True)
class Question:
    sample_id: str
    qa_index: int
    category: int
    question: str
    gold_turns: tuple[str, ...]
    gold_sessions: tuple[int, ...]

    @property
    def qa_id(self) -> str:
        return f"{self.sample_id}:{self.qa_index}"


@dataclass(slots=True)
class SampleQuestions:
    """A sample's questions of categories 1–4 that have gold evidence; the ids of those skipped
    for lack of it; the evidence ids dropped for naming no turn; the questions whose evidence
    came from the sample itself though a QA file was given (it does not list them)."""

    questions: list[Question] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    dropped_evidence_ids: int = 0
    from_data_file: int = 0


@dataclass(frozen=True, slots=True)
class PreparedSample:
    """One sample, read and checked: what the run ingests and asks."""

    sample_id: str
    batches: list[SourceBatch]
    now: datetime  # the reference time: the conversation's last message
    turn_sessions: dict[str, int]  # dia_id → the number of the session list holding it
    questions: SampleQuestions


def load_qa_file(path: str | Path) -> dict[tuple[str, int], dict[str, Any]]:
    """The records of a flat QA file (JSON lines with sample_id, qa_index, question, evidence).
    A file without any is an error: the run would take every question's evidence from the
    data file instead, though a QA file was given (or found next to it)."""
    file = Path(path)
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise IngestError("no such QA file", path=file, hint="pass a JSON-lines file of questions") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"cannot read the QA file: {exc}", path=file) from exc
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            key = (str(record["sample_id"]), int(record["qa_index"]))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise IngestError(
                f"line {number}: not a QA record ({exc})",
                path=file,
                hint="each line is an object with sample_id, qa_index, question and evidence",
            ) from None
        out[key] = record
    if not out:
        raise IngestError(
            "the QA file holds no question record",
            path=file,
            hint="each line is an object with sample_id, qa_index, question and evidence",
        )
    return out


def turn_sessions(sample: Mapping[str, Any], *, path: str | Path) -> dict[str, int]:
    """Each turn's dia_id → the number of the `session_<n>` list that holds it."""
    sample_id = str(sample["sample_id"]).strip()
    return {
        str(turn["dia_id"]).strip(): number
        for number, turns in sessions(sample["conversation"], path=path, where=f"sample {sample_id}")
        for turn in turns
        if isinstance(turn, dict) and isinstance(turn.get("dia_id"), str | int)
    }


def sample_questions(
    sample: Mapping[str, Any],
    flat: Mapping[tuple[str, int], Mapping[str, Any]],
    *,
    qa_source: str,
    sessions_of: Mapping[str, int] | None = None,
) -> SampleQuestions:
    """The sample's questions of categories 1–4 with their gold turns and sessions (see the
    module docstring). `sessions_of`: the sample's `turn_sessions`, read here when not given."""
    sample_id = str(sample["sample_id"]).strip()
    where = sessions_of if sessions_of is not None else turn_sessions(sample, path=qa_source)
    out = SampleQuestions()
    for qa_index, qa in enumerate(sample.get("qa") or []):
        if not isinstance(qa, dict):
            continue
        try:
            category = int(qa.get("category", 0))
        except (TypeError, ValueError):
            continue
        if category not in CATEGORIES:
            continue
        text = str(qa.get("question", "")).strip()
        record = flat.get((sample_id, qa_index))
        if record is not None:
            if str(record.get("question", "")).strip() != text:
                raise IngestError(
                    f"question {sample_id}:{qa_index} differs from the data file's",
                    path=qa_source,
                    hint="pass the QA file that belongs to this data file with --qa",
                )
            evidence = _evidence_ids(record.get("evidence"), where)
        else:
            out.from_data_file += 1 if flat else 0
            evidence = _evidence_ids(qa.get("evidence"), where)
        gold = tuple(dict.fromkeys(e for e in evidence if e in where))
        out.dropped_evidence_ids += len({e for e in evidence if e not in where})
        if not gold:
            out.skipped.append(f"{sample_id}:{qa_index}")
            continue
        gold_sessions = tuple(sorted({where[t] for t in gold}))
        out.questions.append(Question(sample_id, qa_index, category, text, gold, gold_sessions))
    return out


def _evidence_ids(raw: Any, turns: Mapping[str, int]) -> list[str]:
    """The turn ids evidence entries name: each part between separators (";", ",") that is a
    turn's id as written, else the `D<n>:<m>` ids in it read leniently, else its words."""
    entries = raw if isinstance(raw, list) else [raw] if isinstance(raw, str) else []
    out: list[str] = []
    for part in (p.strip() for entry in entries for p in _EVIDENCE_SEPARATORS.split(str(entry))):
        if part in turns:
            out.append(part)
            continue
        loose = [f"D{m.group(1)}:{m.group(2)}" for m in _LOOSE_DIA_ID.finditer(part)]
        out.extend(loose if loose else part.split())
    return out


def reference_time(sample: Mapping[str, Any], *, path: str | Path) -> datetime:
    """The time of the conversation's last message (the adapter's session time + 1 s per turn)."""
    sample_id = str(sample["sample_id"]).strip()
    conversation = sample["conversation"]
    latest: datetime | None = None
    for number, turns in sessions(conversation, path=path, where=f"sample {sample_id}"):
        raw = conversation.get(f"session_{number}_date_time")
        if not turns or not isinstance(raw, str):
            continue
        last = parse_session_time(raw) + timedelta(seconds=len(turns) - 1)
        latest = last if latest is None or last > latest else latest
    if latest is None:
        raise IngestError(f"sample {sample_id} has no dated session", path=path)
    return latest


def prepare_samples(
    samples: Sequence[Mapping[str, Any]], *, data_path: Path, qa_path: Path | None
) -> tuple[list[PreparedSample], str]:
    """Every sample read and checked before the first is ingested (an error names the file, the
    sample and what is wrong), and where the gold evidence comes from: the QA file's path when
    one is used, else the data file's. No question to score at all is an error too: a table of
    zeros would read as a retrieval that found nothing."""
    qa_file = qa_path if qa_path is not None else data_path.with_name(QA_FILE)
    flat = load_qa_file(qa_file) if qa_path is not None or qa_file.is_file() else {}
    qa_source = str(qa_file) if flat else str(data_path)
    prepared: list[PreparedSample] = []
    for sample in samples:
        sample_id = str(sample["sample_id"]).strip()
        batches = sample_batches(sample, path=data_path)
        where = turn_sessions(sample, path=data_path)
        now = reference_time(sample, path=data_path)
        asked = sample_questions(sample, flat, qa_source=qa_source, sessions_of=where)
        prepared.append(PreparedSample(sample_id, batches, now, where, asked))
    if not any(p.questions.questions for p in prepared):
        raise IngestError(
            "no question to score: none of categories 1-4 with evidence naming a turn of its conversation",
            path=data_path,
            hint=f"gold evidence was read from {qa_source}",
        )
    return prepared, qa_source
