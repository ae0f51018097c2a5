"""Human and JSON output for the CLI, and a progress line for long work."""

from __future__ import annotations

import contextlib
import json
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vaultmind.config import MAX_LIMIT
from vaultmind.markdown.standalone import standalone
from vaultmind.plural import counted
from vaultmind.retrieval.evidence import NONE_YOURS, excerpt, listed_refs, none_by
from vaultmind.shell import command_line

PROGRESS_AFTER_S = 2.0
NO_TEXT = "(no text)"  # a hit whose text is empty (an email whose body could not be read)
LISTED_CHARS = 200  # of a hit's text in the query listing (`excerpt`: where the question's words are)
PROBLEMS_SHOWN = 20  # of the files skipped or with warnings, listed by `status` (`--json`: all)


def emit(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False))


LOG_EVERY_S = 10.0  # off a terminal, a phase's progress is written this often at most (besides its first and last)


class StatusLine:
    """A progress line on stderr. On a terminal it is rewritten in place (a carriage return);
    elsewhere — a log file, a pipe, a service's journal — carriage returns ran every update into
    one long line, so there it is written as whole lines: a phase's first, then one per
    `LOG_EVERY_S`, and its last — the one shown with `last`, else the latest held back when the
    line ends (`end`), so a log always shows where each phase got to. `terminal`: None to ask
    stderr at each write."""

    def __init__(self, terminal: bool | None = None):
        self.terminal = terminal
        self.open = False  # a line rewritten in place and not ended yet
        self._logged: dict[str, float] = {}  # phase → the time of its last whole line (phases take turns)
        self._held: dict[str, str] = {}  # phase → its latest text not written (off a terminal)
        self._lock = threading.Lock()  # one writer at a time: each line whole, `_held` never changed mid-iteration

    def show(self, text: str, *, phase: str, now: float, last: bool = False) -> None:
        with self._lock:  # a daemon's background thread writes it while the watcher and the API end it
            stream = sys.stderr
            terminal = self.terminal if self.terminal is not None else getattr(stream, "isatty", lambda: False)()
            if terminal:
                self._write(f"\r{text}   " + ("\n" if last else ""))
                self.open = not last
            elif last or phase not in self._logged or now - self._logged[phase] >= LOG_EVERY_S:
                self._write(f"{text}\n")
                self._logged[phase] = now
                self._held.pop(phase, None)
            else:
                self._held[phase] = text

    def end(self) -> None:
        """End a line left open, so whatever is printed next starts on a line of its own; off a
        terminal, write each phase's latest text held back (its last state)."""
        with self._lock:
            held = ["\n"] if self.open else []
            held += [f"{text}\n" for text in self._held.values()]
            self.open = False
            self._held.clear()
            if held:
                self._write("".join(held))

    @staticmethod
    def _write(text: str) -> None:
        """Write and flush stderr; a stderr gone (closed, a full disk, a pipe whose reader left)
        costs the progress line only, never the work it reports on."""
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(text)
            sys.stderr.flush()


class Progress:
    """`progress(phase, done, total)` that prints to stderr once a run of a phase has taken
    more than `PROGRESS_AFTER_S`. A run starts at a phase's first call, and again when the
    count goes back or the previous run had finished: a daemon's one-note saves ("read 1/1")
    stay quiet however long the daemon has been running, while a long reindex shows its
    phases even as they take turns. A phase that reaches its total ends its line, so whatever
    is printed next starts on a line of its own (`StatusLine`: how it shows off a terminal)."""

    def __init__(
        self, enabled: bool = True, *, clock: Callable[[], float] = time.monotonic, terminal: bool | None = None
    ):
        self.enabled = enabled
        self.clock = clock
        self.last = -1.0
        self.line = StatusLine(terminal)
        self._runs: dict[str, tuple[float, int, int]] = {}  # phase → (started, done, total)
        self._lock = threading.Lock()  # phases counted from several threads (a daemon's)

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        with self._lock:
            now = self.clock()
            run = self._runs.get(phase)
            if run is None or done < run[1] or run[1] >= run[2]:
                run = (now, done, total)
            self._runs[phase] = (run[0], done, total)
            if now - run[0] < PROGRESS_AFTER_S or (now - self.last < 0.5 and done != total):
                return
            self.last = now
            pct = 100.0 * done / total if total else 100.0
            # shown under the lock: a thread that counted "5/10" and showed it after another's
            # "10/10" left the older count as the phase's last state
            self.line.show(f"vaultmind: {phase} {done:,}/{total:,} ({pct:.0f}%)", phase=phase, now=now, last=done >= total)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.line.end()


# Control characters a note may hold (an escape sequence, a bell) that would act on the terminal
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe(text: str) -> str:
    """`text` for a terminal: control characters other than tab and newline shown as �."""
    return _CONTROL.sub("\ufffd", text)


def print_stats(result: dict[str, Any], verb: str, vault: Path) -> None:
    """A sync's or reindex's counts; the commands it names are for `vault`."""
    notes = result.get("notes")
    chunks = result.get("chunks")
    head = f"vaultmind: {verb}"
    if notes is not None:
        head += f" {counted(notes, 'note')}, {counted(int(chunks or 0), 'leaf', 'leaves')}"
    head += f" in {result.get('seconds', 0):.2f} s"
    spent = [(what, seconds) for what, seconds in (("indexing", result.get("index_seconds")), ("entities", (result.get("enriched") or {}).get("seconds"))) if seconds is not None]
    if spent:  # the whole command's time, and its parts
        head += " (" + ", ".join(f"{what} {seconds:.2f} s" for what, seconds in spent) + ")"
    print(head)
    counts: tuple[str, ...] = ("added", "modified", "renamed", "deleted", "touched", "unchanged", "embedded", "kept_unreadable")
    if result.get("rebuilt"):  # every note was read again: none of them is new to the vault
        print(f"  rebuilt: {counted(int(result.get('added') or 0), 'note')}")
        counts = counts[1:]
    parts = [f"{key} {result[key]:,}" for key in counts if result.get(key)]
    if parts:
        print("  " + ", ".join(parts))
    enriched = result.get("enriched") or {}
    if enriched.get("ner_deferred"):
        print(f"  {enriched['ner_deferred']:,} texts wait for entity recognition: {enriched['hint']}")
    elif enriched.get("entity_notes"):
        print(f"  {counted(len(enriched['entity_notes']), 'entity note')} written under entities/")
    if enriched.get("entity_notes_removed"):
        print(f"  {counted(len(enriched['entity_notes_removed']), 'entity note')} of a name read wrongly before removed: "
              + ", ".join(enriched["entity_notes_removed"]))
    for problem in enriched.get("problems") or []:
        print(f"  {problem['path']}: {problem['message']}")
    problems = result.get("problems") or []
    if problems:
        print(f"  {counted(len(problems), 'file')} skipped or with warnings — see `{command_line('status', '--vault', vault)}`")


def print_status(status: dict[str, Any]) -> None:
    index = status["index"]
    print(f"vault   {status['vault']}")
    if status["notes"] is None:  # a compaction held the index before any status counted it
        print("notes   not counted yet: the index file is being compacted")
    else:
        _print_counts(status)
    ents = status.get("entities") or {}
    if ents:
        pending = f", {ents['ner_pending']:,} texts waiting for NER" if ents.get("ner_pending") else ""
        print(f"entities {ents.get('known', 0):,} known (NER: {ents.get('model', 'off')}{pending})")
        engine = ents.get("ner_engine") or {}
        shown = engine.get("standing_in") or (not engine.get("available") and not engine.get("off"))
        if engine.get("message") and shown:  # why (a misspelt model…), or which package serves the model named
            print(safe(f"        {engine['message']}"))
    schema = f"{index['migrations']} migrations, the last {index['migration']}" if index.get("migration") else "no migration"
    snapshots = f", snapshots {index['snapshot_bytes'] / 1e6:.1f} MB" if index.get("snapshot_bytes") else ""
    print(f"index   {index['health']} ({index['bytes'] / 1e6:.1f} MB{snapshots}; schema: {schema})")
    if index.get("notice"):
        print(f"        {index['notice']}")
    if status.get("queue"):
        for line in format_queue({**status["queue"], "admission": status.get("admission")}):
            print(line)
        if status["queue"].get("notice"):
            print(safe(f"        {status['queue']['notice']}"))
    for folder in status.get("left_out") or []:
        print(safe(f"left out {folder['path']}: {folder['why']}; `[vault] include_templates = true` indexes it"))
    daemon = status.get("daemon") or {}
    print(f"daemon  {'running at ' + daemon['url'] if daemon.get('running') else 'not running'}")
    if daemon.get("upkeep_error"):  # its last background pass failed: the next one tries again
        print(safe(f"        its background upkeep failed: {daemon['upkeep_error']}"))
    for kept in status.get("ingest_warnings") or []:  # what an ingest left out, said after its output is gone
        said = kept["warnings"]
        print(f"\nthe last {kept['kind']} ingest ({kept['at']}) warned of {counted(len(said), 'thing')}:")
        for warning in said[:PROBLEMS_SHOWN]:
            print(safe(f"  {warning}"))
        if len(said) > PROBLEMS_SHOWN:
            listing = command_line("status", "--vault", status["vault"], "--json")
            print(f"  … and {len(said) - PROBLEMS_SHOWN:,} more: `{listing}` lists every one")
    problems = status.get("problems") or []
    if problems:
        kinds = Counter(p["kind"] for p in problems)
        print(f"\n{counted(len(problems), 'file')} skipped or with warnings ({', '.join(f'{k} {n:,}' for k, n in sorted(kinds.items()))}):")
        # the files skipped first, then the warnings (`indexed`: the file is indexed all the same)
        for p in sorted(problems, key=lambda p: (bool(p.get("indexed")), p["path"]))[:PROBLEMS_SHOWN]:
            print(safe(f"  {p['path']}: [{p['kind']}] {p['message']}"))
        if len(problems) > PROBLEMS_SHOWN:
            listing = command_line("status", "--vault", status["vault"], "--json")
            print(f"  … and {len(problems) - PROBLEMS_SHOWN:,} more: `{listing}` lists every one")


def _print_counts(status: dict[str, Any]) -> None:
    """The status's counts: notes by kind, leaves and their embeddings, links and tags."""
    notes = status["notes"]
    print(
        f"notes   {notes['total']:,} (user {notes['user']:,}, sources {notes['source']:,}, "
        f"summaries {notes['summary']:,}, entities {notes['entity']:,}"
        + (f"; vaultmind's guides {notes['readme']:,})" if notes.get("readme") else ")")
    )
    emb = status["embeddings"]
    line = f"leaves  {status['leaves']:,}"
    if emb.get("model") and emb.get("embedded") is None:  # a daemon still starting counts them once ready
        line += f" — embedded with {emb['model']} (counted once the daemon has started)"
    elif emb.get("model"):
        line += f" — embedded {emb['embedded']:,} with {emb['model']}"
        if emb.get("missing"):
            line += f", {emb['missing']:,} waiting"
    print(line)
    if (status.get("trees") or {}).get("notice"):
        print(safe(f"        {status['trees']['notice']}"))
    print(f"links   {status['links']:,}; tags {status['tags']:,}")


def print_hits(result: dict[str, Any], vault: Path | None = None, mode: str | None = None) -> None:
    """Human listing of `mode`'s `{hits, total, truncated}`; the commands it names run on `vault`."""
    hits = result["hits"]
    query = result.get("query") or {}
    if result.get("notice"):  # the embedder failed: the hits were found without dense search
        print(safe(f"note: {result['notice']}"))
    window = query.get("time_window")
    if window:
        ahead = "; nothing in it yet: what was said before it" if query.get("window_ahead") else ""
        print(f"time window: {window['start']} – {window['end']} (from “{window['text']}”{ahead})")
        if query.get("window_none_yours"):  # "what did I write on 11 March?"
            print(NONE_YOURS)
        if query.get("window_none_by"):  # "what did Bob say yesterday?"
            print(safe(none_by(query["window_none_by"])))
    if query.get("corrected"):
        print("read as: " + ", ".join(f"“{old}” → “{new}”" for old, new in query["corrected"].items()))
    if query.get("unknown"):  # the hits below cannot be about these words
        print(safe("not in the memory: " + ", ".join(query["unknown"])))
    if query.get("grounded") is False:  # as the evidence block says it: the hits below answer nothing named
        print("no grounding: the question names no known entity and no word that is specific in this memory")
    if not hits:
        print("no hits")
    focus = query.get("content_terms") or query.get("terms") or ()  # each hit's text shown around them
    tasks = query.get("answer_kind") == "task"
    scored = any(hit.get("score") for hit in hits)  # (source, window, drill, leaves: in their own order, unscored)
    for rank, hit in enumerate(hits, start=1):
        if hit.get("node_kind") == "entity":
            aliases = ", ".join(hit.get("aliases") or [])
            print(safe(f"{rank:2}. {hit['node_id']}  {hit['display_name']}  ({hit['mentions']} mentions){'  aka ' + aliases if aliases else ''}"))
            continue
        anchor = hit.get("anchor") or ""
        where = hit["note_path"] + (anchor if anchor.startswith("#") else f"#{anchor}" if anchor else "")
        span = hit.get("time_range") or {}
        when = " – ".join(dict.fromkeys(t for t in (span.get("start"), span.get("end")) if t))  # a summary's range
        refs = listed_refs(hit, vault)
        node = f"id {hit['node_id']}" if hit.get("node_id") else ""  # for `explain`, `query drill`, `query leaves`
        meta = " · ".join(x for x in (node, hit.get("author"), when, *refs) if x)
        print(safe(f"{rank:2}. {where}" + (f"  (score {hit['score']:.4f}{_placed(hit, hits[rank:])})" if scored else "")))
        if meta:
            print(safe(f"    {meta}"))
        text = excerpt(standalone(str(hit.get("content") or "")), LISTED_CHARS, focus, tasks=tasks)
        print(safe(f"    {text}" if text.strip() else f"    {NO_TEXT}"))
        if hit.get("link"):
            print(f"    {hit['link']}")
    if result.get("truncated"):
        more = "raise --limit" if len(hits) < MAX_LIMIT else f"at most {MAX_LIMIT} are shown: narrow the question"
        print(f"({result['total']} {_COUNTED.get(mode or '', 'nodes')}; showing {len(hits)} — {more})")
    if result.get("missing"):
        from vaultmind.retrieval.modes import missing_ids

        print(safe(f"not found: {missing_ids(result['missing'])}"))


# what a truncated listing's total counts: walk and search rank candidates, the other modes
# list every node that qualifies (the leaves of a window, a source, a summary's children)
_COUNTED = {"walk": "candidates", "search": "candidates", "search_entities": "entities"}


def _placed(hit: dict[str, Any], below: Sequence[dict[str, Any]]) -> str:
    """Why a walk hit sits below hits with lower scores, or above higher ones, for the listing."""
    breakdown = hit.get("breakdown") or {}
    if breakdown.get("near_duplicate"):
        return "; repeats a hit above"
    if breakdown.get("behind_other_notes"):
        return "; after the best hits of other notes"
    evidence = breakdown.get("note_evidence")
    outscored = any(
        other["score"] > hit["score"] and not (other.get("breakdown") or {}).get("behind_other_notes")
        for other in below
    )
    if evidence is not None and outscored:  # the first hits: one per note, by their notes' evidence
        return f"; its note's evidence {evidence:.4f}"
    return ""


def format_queue(report: dict[str, Any], *, jobs: bool = False) -> list[str]:
    """Human lines for a queue report (`vaultmind queue` and `vaultmind status`); one with no
    counts (a status during a compaction before any was counted, the workers paused:
    `status.with_daemon`) says its health alone."""
    if report.get("depth") is None:
        return [f"queue   not counted yet; health {report['health']}"]
    lines = [
        f"queue   {report['depth']:,} waiting (ready {report['ready']:,}, deferred {report['deferred']:,}, "
        f"running {report['running']:,}); failed {report['failed']:,}; health {report['health']}"
    ]
    if report.get("ran") is not None:
        processed = report.get("processed") or {}
        parts = ", ".join(f"{k} {v}" for k, v in processed.items() if v)
        lines.append(f"        ran {counted(report['ran'], 'job')}{': ' + parts if parts else ''}")
    for cause in report.get("causes") or []:
        when = f" (next try {cause['next_try']})" if cause.get("next_try") else ""
        lines.append(
            f"  {cause['state']:<8} {cause['count']:,} × {cause['failure_class']}: {cause['error']}{when}"
        )
        if cause.get("meaning"):
            lines.append(f"           → {cause['meaning']}")
    adm = report.get("admission")
    if adm:
        total = adm["admitted"] + adm["dropped"] + adm["gray"]
        lines.append(
            f"admission {total:,} leaves: admitted {adm['admitted']:,}, dropped {adm['dropped']:,}, "
            f"gray (waiting for the LLM) {adm['gray']:,}"
        )
        if adm.get("by_rules"):  # no Ollama answered: information, not a fault
            lines.append(
                f"          {adm['by_rules']:,} of them decided by rules while the LLM was not reachable "
                "(provisional: asked again once it answers)"
            )
    if jobs:
        for job in report.get("jobs") or []:
            line = f"  #{job['id']:<6} {job['kind']:<16} {job['status']:<8} attempts {job['attempts']}/{job['max_attempts']}"
            if job["status"] == "ready":
                line += f" at {job['available_at']}"
            if job.get("last_error"):
                line += f" — {job['last_error'][:120]}"
            lines.append(line)
    return lines
