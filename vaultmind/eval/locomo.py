"""The LoCoMo retrieval benchmark, as a library (`vaultmind eval locomo` is its adapter).

For each sample (one long two-person conversation) of a LoCoMo file:

1. a fresh temporary vault (`init_vault`), the conversation ingested through the real chat
   adapter (`ingest.locomo` → `ingest.writer.write_batches`: one source note per session, one
   message per turn, the turn's `dia_id` as message id), then `Memory.open` + `sync()` with the
   vault's default settings (static embeddings unless told otherwise); with `ner`, then
   `Memory.enrich`: a sync of more than `[entities] ner_inline` texts leaves NER to the
   daemon's background work, which a user's memory has done but a fresh vault has not;
2. every question of categories 1–4 (5, adversarial, is skipped) asked of one retrieval mode,
   with the time of the conversation's last message as the reference time ("now"), so no
   mode can see past the conversation;
3. each hit turned into an item: its text, the turns whose FULL text the item contains, and
   the sessions it covers (see `hit_item`), then scored by `eval.metrics`.

Gold evidence comes from a `qa_flat_dev.jsonl` next to the file (or `qa_path`), whose
`evidence` lists are split and repaired; without it the sample's own `evidence` is used, split
on separators and read leniently (`D:11:26` → `D11:26`). Evidence ids that name no turn of
the conversation are dropped; a question left without evidence is skipped and counted.

Modes: `walk` (the fused read path), `search` (`Memory.search`), and `bm25-baseline` — plain
BM25 over message leaves only, with vaultmind's lexical module, the reference point the
metrics are checked against. Latency is the wall time of the retrieval call(s) alone, on a
warmed memory (`Memory.warm`).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from vaultmind.errors import UsageError
from vaultmind.eval import DEFAULT_MODE, MODES
from vaultmind.eval.metrics import Item, budget_fit, fills_budget, score_question, summarize
from vaultmind.index.lexical import bm25, terms
from vaultmind.ingest.locomo import parse_session_time, read_locomo_file, sample_batches, session_of, sessions
from vaultmind.memory import Memory
from vaultmind.model import Progress
from vaultmind.vault.atomic import write_atomic

CATEGORIES: Mapping[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
QA_FILE = "qa_flat_dev.jsonl"
MIN_ITEMS = 10  # items written per question at least
FETCH_START = 50  # hits asked for first; doubled while they do not fill the token budget
FETCH_MAX = 800

_LOOSE_DIA_ID = re.compile(r"D:?\s*(\d+)\s*:\s*(\d+)")

Retrieve = Callable[[Memory, str, int, datetime], list[dict[str, Any]]]
ProgressLine = Callable[[str], None]


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
class QuestionResult:
    question: Question
    items: list[Item]
    latency_ms: float
    scores: dict[str, float]

    def record(self) -> dict[str, Any]:
        """The `--out` line: qa_id, items in rank order (≥ 10 and through the budget's end), latency."""
        keep = max(MIN_ITEMS, budget_fit(self.items) + 1)
        return {
            "qa_id": self.question.qa_id,
            "items": [item.to_dict() for item in self.items[:keep]],
            "latency_ms": round(self.latency_ms, 3),
        }


@dataclass(slots=True)
class EvalReport:
    mode: str
    results: list[QuestionResult] = field(default_factory=list)
    skipped_no_evidence: list[str] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)
    embeddings: str | None = None
    ner_texts: int | None = None  # the texts NER read before the questions (`ner`), else None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        per_category: dict[str, Any] = {}
        for category in CATEGORIES:
            rows = [r for r in self.results if r.question.category == category]
            if rows:
                per_category[str(category)] = {"name": CATEGORIES[category], **_summary(rows)}
        return {
            "mode": self.mode,
            "n_questions": len(self.results),
            "overall": _summary(self.results),
            "per_category": per_category,
            "samples": list(self.samples),
            "skipped_no_evidence": len(self.skipped_no_evidence),
            "embeddings": self.embeddings,
            "ner_texts": self.ner_texts,
            "seconds": round(self.seconds, 1),
        }


def _summary(rows: Sequence[QuestionResult]) -> dict[str, Any]:
    return summarize([r.scores for r in rows], [r.latency_ms for r in rows])


# --- questions and gold evidence -----------------------------------------------------------------


def load_qa_file(path: str | Path) -> dict[tuple[str, int], dict[str, Any]]:
    """The records of a flat QA file (JSON lines with sample_id, qa_index, question, evidence)."""
    file = Path(path)
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise UsageError("no such QA file", path=file, hint="pass a JSON-lines file of questions") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the QA file: {exc}", path=file) from exc
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            key = (str(record["sample_id"]), int(record["qa_index"]))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise UsageError(
                f"line {number}: not a QA record ({exc})",
                path=file,
                hint="each line is an object with sample_id, qa_index, question and evidence",
            ) from None
        out[key] = record
    return out


def sample_questions(
    sample: Mapping[str, Any], flat: Mapping[tuple[str, int], Mapping[str, Any]], *, qa_source: str
) -> tuple[list[Question], list[str]]:
    """The sample's questions of categories 1–4 with their gold turns and sessions, and the
    ids of those skipped for lack of evidence naming a turn of the conversation."""
    sample_id = str(sample["sample_id"]).strip()
    turn_ids = {
        str(turn.get("dia_id", "")).strip()
        for _, turns in sessions(sample["conversation"], path=qa_source, where=f"sample {sample_id}")
        for turn in turns
        if isinstance(turn, dict)
    }
    questions: list[Question] = []
    skipped: list[str] = []
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
                raise UsageError(
                    f"question {sample_id}:{qa_index} differs from the data file's",
                    path=qa_source,
                    hint="pass the QA file that belongs to this data file with --qa",
                )
            evidence = _evidence_ids(record.get("evidence"))
        else:
            evidence = _evidence_ids(qa.get("evidence"))
        gold = tuple(dict.fromkeys(e for e in evidence if e in turn_ids))
        if not gold:
            skipped.append(f"{sample_id}:{qa_index}")
            continue
        gold_sessions = tuple(sorted({s for s in (session_of(t) for t in gold) if s is not None}))
        questions.append(Question(sample_id, qa_index, category, text, gold, gold_sessions))
    return questions, skipped


def _evidence_ids(raw: Any) -> list[str]:
    entries = raw if isinstance(raw, list) else [raw] if isinstance(raw, str) else []
    out: list[str] = []
    for entry in entries:
        out.extend(f"D{m.group(1)}:{m.group(2)}" for m in _LOOSE_DIA_ID.finditer(str(entry)))
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
        raise UsageError(f"sample {sample_id} has no dated session", path=path)
    return latest


# --- hits → items ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnLookup:
    """The conversation's message leaves: leaf id → message id, message id → its text (spaces folded)."""

    leaf_message: dict[str, str]
    turn_text: dict[str, str]

    @classmethod
    def from_memory(cls, memory: Memory) -> TurnLookup:
        rows = memory.index.query(
            "SELECT id, message_id, text FROM leaves WHERE kind = 'message' AND message_id IS NOT NULL ORDER BY id"
        )
        return cls({r[0]: r[1] for r in rows}, {r[1]: _fold(r[2]) for r in rows})


def _fold(text: str) -> str:
    return " ".join(text.split())


def hit_item(hit: Mapping[str, Any], lookup: TurnLookup) -> Item:
    """An item from a hit of any mode.

    Text: `text` (search) or `content` (walk). The turns the hit claims: explicit `dia_ids` /
    `message_ids` (summary nodes list their descendant leaves' message ids there), its
    `message_id`, and the message ids of its `leaf_id` / `node_id` / `child_ids` when those are
    message leaves. A claimed turn counts as contained only when its full text (spaces folded)
    is inside the item's text; the item covers the sessions of every claimed turn.
    """
    raw_text = hit.get("text")
    text = raw_text if isinstance(raw_text, str) else str(hit.get("content") or "")
    claimed: list[str] = []
    for key in ("dia_ids", "message_ids"):
        values = hit.get(key)
        if isinstance(values, list | tuple):
            claimed.extend(str(v) for v in values)
    if isinstance(hit.get("message_id"), str):
        claimed.append(hit["message_id"])
    node_ids = [hit.get("leaf_id"), hit.get("node_id")]
    children = hit.get("child_ids")
    if isinstance(children, list | tuple):
        node_ids.extend(children)
    for node_id in node_ids:
        if isinstance(node_id, str):
            message_id = lookup.leaf_message.get(node_id)
            claimed.append(message_id if message_id is not None else node_id)
    known = [t for t in dict.fromkeys(claimed) if t in lookup.turn_text]
    flat = _fold(text)
    contained = tuple(t for t in known if lookup.turn_text[t] in flat)
    covered = tuple(sorted({s for s in (session_of(t) for t in known) if s is not None}))
    return Item(text=text, dia_ids=contained, sessions=covered)


# --- retrieval modes ---------------------------------------------------------------------------------


def _retrieve_walk(memory: Memory, question: str, limit: int, now: datetime) -> list[dict[str, Any]]:
    return list(memory.walk(question, limit=limit, reference_time=now)["hits"])


def _retrieve_search(memory: Memory, question: str, limit: int, now: datetime) -> list[dict[str, Any]]:
    return list(memory.search(question, limit=limit)["hits"])


def _retrieve_bm25(memory: Memory, question: str, limit: int, now: datetime) -> list[dict[str, Any]]:
    """Plain BM25 over the message leaves of source notes: the reference baseline."""
    index = memory.index
    with index.lock:
        ranked = bm25(index.con, terms(question), limit=limit, note_kinds=("source",), leaf_kinds=("message",))
    if not ranked:
        return []
    rows = index.query(
        "SELECT id, text FROM leaves WHERE id IN (SELECT unnest(?::VARCHAR[]))", [[leaf_id for leaf_id, _ in ranked]]
    )
    text = dict(rows)
    return [{"leaf_id": i, "text": text[i], "score": s} for i, s in ranked]


RETRIEVERS: Mapping[str, Retrieve] = {
    "walk": _retrieve_walk,
    "search": _retrieve_search,
    "bm25-baseline": _retrieve_bm25,
}


def ask(
    memory: Memory, retrieve: Retrieve, question: str, now: datetime, lookup: TurnLookup
) -> tuple[list[Item], float]:
    """Items for a question — at least MIN_ITEMS and enough to fill the token budget when the
    mode has that many — and the retrieval wall time in ms (summed over any re-asks)."""
    limit = FETCH_START
    spent = 0.0
    while True:
        started = time.perf_counter()
        hits = retrieve(memory, question, limit, now)
        spent += (time.perf_counter() - started) * 1000.0
        items = [hit_item(hit, lookup) for hit in hits]
        if len(hits) < limit or fills_budget(items) or limit >= FETCH_MAX:
            return items, spent
        limit *= 2


# --- the run -----------------------------------------------------------------------------------------


def run_locomo(
    path: str | Path,
    *,
    qa_path: str | Path | None = None,
    mode: str | None = None,
    limit_samples: int | None = None,
    embed_provider: str | None = None,
    ner: bool = False,
    progress: ProgressLine | None = None,
    steps: Progress | None = None,
) -> EvalReport:
    """Ingest, index and question every sample of a LoCoMo file (see the module docstring).
    `ner`: each conversation's NER and entity notes (`Memory.enrich`) done before its questions.
    `progress` is told a line as each conversation starts and ends, `steps` the phases of
    its indexing (as a sync tells them)."""
    from vaultmind.config import load_config
    from vaultmind.ingest.writer import write_batches
    from vaultmind.vault.template import init_vault

    mode = mode or DEFAULT_MODE
    if mode not in RETRIEVERS:
        raise UsageError(f"unknown mode {mode!r}", hint="choose one of: " + ", ".join(MODES))
    if limit_samples is not None and limit_samples < 1:
        raise UsageError("--limit-samples must be at least 1")
    say = progress or (lambda line: None)
    data_path = Path(path)
    samples = read_locomo_file(data_path)[:limit_samples]
    qa_file = Path(qa_path) if qa_path is not None else data_path.with_name(QA_FILE)
    flat = load_qa_file(qa_file) if qa_path is not None or qa_file.is_file() else {}
    qa_source = str(qa_file) if flat else str(data_path)
    report = EvalReport(mode=mode, ner_texts=0 if ner else None)
    retrieve = RETRIEVERS[mode]
    started = time.monotonic()
    for number, sample in enumerate(samples, start=1):
        sample_id = str(sample["sample_id"]).strip()
        questions, skipped = sample_questions(sample, flat, qa_source=qa_source)
        report.skipped_no_evidence.extend(skipped)
        report.samples.append(sample_id)
        now = reference_time(sample, path=data_path)
        batches = sample_batches(sample, path=data_path)
        with tempfile.TemporaryDirectory(prefix="vaultmind-eval-") as tmp:
            t0 = time.monotonic()
            say(f"{sample_id} ({number}/{len(samples)}): indexing {len(batches)} sessions")
            vault = Path(tmp) / "vault"
            init_vault(vault)
            write_batches(vault, batches)
            config = load_config(vault, embed_provider=embed_provider)
            with Memory.open(config, progress=steps) as memory:
                memory.sync()
                if ner:  # what a daemon's background work gives a conversation once it has run
                    report.ner_texts = (report.ner_texts or 0) + int(memory.enrich()["ner_texts"])
                memory.warm()  # as a daemon does before it serves: no question pays for loading
                report.embeddings = memory.embedder.model_id if memory.embedder else None
                lookup = TurnLookup.from_memory(memory)
                turns = sum(len(b.messages) for b in batches)
                say(
                    f"{sample_id} ({number}/{len(samples)}): {len(batches)} sessions, {turns} turns "
                    f"({len(lookup.turn_text)} indexed) in {time.monotonic() - t0:.1f} s; "
                    f"asking {len(questions)} questions ({mode})"
                )
                t1 = time.monotonic()
                for question in questions:
                    items, latency = ask(memory, retrieve, question.question, now, lookup)
                    scores = score_question(items, question.gold_turns, question.gold_sessions)
                    report.results.append(QuestionResult(question, items, latency, scores))
                done = report.results[-len(questions) :] if questions else []
                if done:
                    summary = _summary(done)
                    say(
                        f"{sample_id}: answered in {time.monotonic() - t1:.1f} s — "
                        + ", ".join(f"{k} {summary[k]:.3f}" for k in ("S@5", "S-MRR", "T-R@5", "T-B1k"))
                    )
    report.seconds = time.monotonic() - started
    return report


def write_results(report: EvalReport, out: str | Path) -> None:
    """One JSON line per question (`QuestionResult.record`), in file and question order."""
    lines = [json.dumps(r.record(), ensure_ascii=False) for r in report.results]
    data = ("\n".join(lines) + "\n" if lines else "").encode("utf-8")
    write_atomic(check_out(out), data, overwrite=True)


def check_out(out: str | Path) -> Path:
    """`--out` as a file the results can be written to: checked before the run, which takes
    minutes, rather than after it."""
    target = Path(out)
    if not target.parent.is_dir():
        raise UsageError("the folder for --out does not exist", path=target.parent)
    if target.is_dir():
        raise UsageError("--out names a folder; give a file name in it", path=target)
    if not os.access(target.parent, os.W_OK):
        raise UsageError("the folder for --out cannot be written to", path=target.parent)
    return target
