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

Every sample is read and checked before the first is ingested, and its gold evidence found
(`eval.gold`: from a `qa_flat_dev.jsonl` next to the file, or `qa_path`, else the sample's own).
`checkpoint` is given the report as each conversation's questions are done, so a caller can
keep what was answered when a later one fails or the run is stopped.

Modes: `walk` (the fused read path), `search` (`Memory.search`), and `bm25-baseline` — plain
BM25 over message leaves only, with vaultmind's lexical module, the reference point the
metrics are checked against. Latency is the wall time of the retrieval call(s) alone, on a
warmed memory (`Memory.warm`).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from vaultmind.errors import UsageError
from vaultmind.eval import DEFAULT_MODE, MODES
from vaultmind.eval.gold import CATEGORIES, PreparedSample, Question, prepare_samples
from vaultmind.eval.metrics import Item, budget_fit, fills_budget, score_question, summarize
from vaultmind.index.lexical import bm25, terms
from vaultmind.ingest.locomo import read_locomo_file
from vaultmind.memory import Memory
from vaultmind.model import Progress
from vaultmind.vault.atomic import write_atomic

MIN_ITEMS = 10  # items written per question at least
FETCH_START = 50  # hits asked for first; doubled while they do not fill the token budget
FETCH_MAX = 800

Retrieve = Callable[[Memory, str, int, datetime], list[dict[str, Any]]]
ProgressLine = Callable[[str], None]


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
    samples: list[str] = field(default_factory=list)  # the conversations done, in order
    planned: int = 0  # the conversations the run asks about
    evidence: str = ""  # the file the gold evidence was read from
    evidence_from_data_file: int = 0  # questions the QA file does not list: their sample's own evidence
    dropped_evidence_ids: int = 0  # evidence ids naming no turn of their conversation
    embeddings: set[str] = field(default_factory=set)  # the models that embedded, over every sample
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
            "evidence": self.evidence,
            "evidence_from_data_file": self.evidence_from_data_file,
            "dropped_evidence_ids": self.dropped_evidence_ids,
            "embeddings": ", ".join(sorted(self.embeddings)) or None,
            "ner_texts": self.ner_texts,
            "seconds": round(self.seconds, 1),
        }


def _summary(rows: Sequence[QuestionResult]) -> dict[str, Any]:
    return summarize([r.scores for r in rows], [r.latency_ms for r in rows])


# --- hits → items ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnLookup:
    """The conversation's message leaves: leaf id → message id, message id → its text (spaces
    folded); and each turn's session, the number of the session list that holds it."""

    leaf_message: dict[str, str]
    turn_text: dict[str, str]
    turn_session: Mapping[str, int]

    @classmethod
    def from_memory(cls, memory: Memory, turn_session: Mapping[str, int]) -> TurnLookup:
        rows = memory.index.query(
            "SELECT id, message_id, text FROM leaves WHERE kind = 'message' AND message_id IS NOT NULL ORDER BY id"
        )
        return cls({r[0]: r[1] for r in rows}, {r[1]: _fold(r[2]) for r in rows}, turn_session)


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
    covered = tuple(sorted({lookup.turn_session[t] for t in known if t in lookup.turn_session}))
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
    checkpoint: Callable[[EvalReport], None] | None = None,
) -> EvalReport:
    """Ingest, index and question every sample of a LoCoMo file (see the module docstring).
    `ner`: each conversation's NER and entity notes (`Memory.enrich`) done before its questions.
    `progress` is told a line as each conversation starts and ends, `steps` the phases of
    its indexing (as a sync tells them); `checkpoint` is given the report once every sample is
    checked and again after each conversation's questions."""
    mode = mode or DEFAULT_MODE
    if mode not in RETRIEVERS:
        raise UsageError(f"unknown mode {mode!r}", hint="choose one of: " + ", ".join(MODES))
    if limit_samples is not None and limit_samples < 1:
        raise UsageError("--limit-samples must be at least 1")
    data_path = Path(path)
    samples = read_locomo_file(data_path)[:limit_samples]
    prepared, evidence = prepare_samples(
        samples, data_path=data_path, qa_path=Path(qa_path) if qa_path is not None else None
    )
    report = EvalReport(mode=mode, planned=len(prepared), evidence=evidence, ner_texts=0 if ner else None)
    keep = checkpoint or (lambda report: None)
    keep(report)
    say = progress or (lambda line: None)
    started = time.monotonic()
    for number, sample in enumerate(prepared, start=1):
        answered = _run_sample(sample, f"{number}/{len(prepared)}", report, embed_provider, ner, say, steps)
        keep(report)  # before the line that says it is done: what that line reports is kept
        if answered:
            say(answered)
    report.seconds = time.monotonic() - started
    return report


@contextmanager
def _scratch_folder() -> Iterator[Path]:
    """A new folder in the system's temporary folder for one conversation's vault, removed after,
    whatever stops the run. Made inside the `try` under a name chosen before: a Ctrl-C or SIGTERM
    landing just after it is made still finds it removed (`tempfile.TemporaryDirectory` makes its
    folder before it can clean up, and left an empty one about one stop in ten)."""
    path = Path(tempfile.gettempdir()) / f"vaultmind-eval-{os.getpid()}-{secrets.token_hex(6)}"
    try:
        path.mkdir(mode=0o700)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _run_sample(
    sample: PreparedSample,
    position: str,
    report: EvalReport,
    embed_provider: str | None,
    ner: bool,
    say: ProgressLine,
    steps: Progress | None,
) -> str:
    """One conversation: a temporary vault, its indexing, its questions; its results added to
    `report`. Returns the line that tells its figures (empty when it had no questions)."""
    from vaultmind.config import load_config
    from vaultmind.ingest.writer import write_batches
    from vaultmind.vault.template import init_vault

    sample_id, batches, questions = sample.sample_id, sample.batches, sample.questions.questions
    with _scratch_folder() as tmp:
        t0 = time.monotonic()
        say(f"{sample_id} ({position}): indexing {len(batches)} sessions")
        vault = Path(tmp) / "vault"
        init_vault(vault)
        write_batches(vault, batches)
        config = load_config(vault, embed_provider=embed_provider)
        with Memory.open(config, progress=steps) as memory:
            memory.sync()
            if ner:  # what a daemon's background work gives a conversation once it has run
                report.ner_texts = (report.ner_texts or 0) + int(memory.enrich()["ner_texts"])
            memory.warm()  # as a daemon does before it serves: no question pays for loading
            if memory.embedder is not None:
                report.embeddings.add(memory.embedder.model_id)
            lookup = TurnLookup.from_memory(memory, sample.turn_sessions)
            turns = sum(len(b.messages) for b in batches)
            say(
                f"{sample_id} ({position}): {len(batches)} sessions, {turns} turns "
                f"({len(lookup.turn_text)} indexed) in {time.monotonic() - t0:.1f} s; "
                f"asking {len(questions)} questions ({report.mode})"
            )
            t1 = time.monotonic()
            retrieve = RETRIEVERS[report.mode]
            done: list[QuestionResult] = []
            for question in questions:
                items, latency = ask(memory, retrieve, question.question, sample.now, lookup)
                scores = score_question(items, question.gold_turns, question.gold_sessions)
                done.append(QuestionResult(question, items, latency, scores))
    report.results.extend(done)
    report.samples.append(sample_id)
    report.skipped_no_evidence.extend(sample.questions.skipped)
    report.dropped_evidence_ids += sample.questions.dropped_evidence_ids
    report.evidence_from_data_file += sample.questions.from_data_file
    if not done:
        return ""
    summary = _summary(done)
    return f"{sample_id}: answered in {time.monotonic() - t1:.1f} s — " + ", ".join(
        f"{k} {summary[k]:.3f}" for k in ("S@5", "S-MRR", "T-R@5", "T-B1k")
    )


def write_results(report: EvalReport, out: str | Path) -> None:
    """One JSON line per question (`QuestionResult.record`), in file and question order. While
    the run has conversations left to answer, `partial_path(out)` stands beside it, written
    before the lines are, so that no reader takes a run's first conversations for the whole of
    it, whatever stops the run (a kill that no handler sees too); it goes once the last
    conversation's lines are written."""
    target = check_out(out)
    lines = [json.dumps(r.record(), ensure_ascii=False) for r in report.results]
    data = ("\n".join(lines) + "\n" if lines else "").encode("utf-8")
    partial = partial_path(target)
    finished = len(report.samples)
    if finished < report.planned:
        record = {
            "partial": True,
            "conversations_done": finished,
            "conversations_planned": report.planned,
            "questions": len(report.results),
            "samples": list(report.samples),
            "results": target.name,
        }
        write_atomic(partial, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"), overwrite=True)
    write_atomic(target, data, overwrite=True)
    if finished >= report.planned:
        partial.unlink(missing_ok=True)


def partial_path(out: Path) -> Path:
    """The file that says `out` holds a run's first conversations only: `results.jsonl.partial`."""
    return out.with_name(out.name + PARTIAL_SUFFIX)


PARTIAL_SUFFIX = ".partial"


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
