"""What `vaultmind status` reports: counts, index health, problems, entities, admission, queue.

The counts read from the index — notes by kind, leaves, texts without a vector or waiting for
NER, problems, clashing names and conflict copies, links, tags, admission — are kept per index
generation (`Index.generation`, bumped by every commit): a status asked again before anything
changed answers from them, one after a change counts again. Those an NER step cannot change
(all but the entities') are kept per `Index.notes_generation`, which the daemon's NER catch-up
does not bump: a status between two of its steps reads only the entities' counts, and the texts
still waiting for NER as the last step left them (`backfill.ner_pending`, counted once, then
less what each step analysed). What changes without a commit is
read on every status: the daemon's state (starting, catching up, behind), the index file's
size, a quarantine notice, the embedder's error, the NER process, and the job queue (whose
deferred jobs become ready with time).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vaultmind.index.quarantine import take_quarantine_notice
from vaultmind.index.store import BACKLOG_LEFT, REBUILD_UNDER_WAY, Index
from vaultmind.index.tables import has_table
from vaultmind.plural import counted
from vaultmind.shell import command_line
from vaultmind.vault.layout import conflict_original

if TYPE_CHECKING:
    from vaultmind.config import Config
    from vaultmind.embed.base import Embedder
    from vaultmind.entities.graph import EntityDeriver


class _Syncing(Protocol):
    @property
    def derivers(self) -> Sequence[object]: ...

    @property
    def embed_error(self) -> str | None: ...


class OpenMemory(Protocol):
    """An open memory as a status reads it (`memory.Memory` is one)."""

    @property
    def index(self) -> Index: ...

    @property
    def config(self) -> Config: ...

    @property
    def embedder(self) -> Embedder | None: ...

    @property
    def syncer(self) -> _Syncing: ...

    @property
    def behind(self) -> str | None: ...

    @property
    def catching_up(self) -> int: ...

# DuckDB's buffer pool while `status` counts (reads only). At 50k notes, in process: the texts
# without a vector +30 MB for a moment under 32 MB, +15–18 MB under 16 MB (the blocks its two
# scans cache), in about the same time
STATUS_MEMORY_LIMIT = "16MB"


def read_counts(memory: OpenMemory, *, loading: bool) -> tuple[dict[str, Any], bool]:
    """The index's counts for a status, and whether any was counted now by a scan (False: kept
    from a status of the same generation, or of the same notes between two NER steps). While the
    daemon starts (`loading`) the two that hash every leaf are left out (None)."""
    from vaultmind.entities.backfill import entity_deriver

    idx = memory.index
    model = memory.embedder.model_id if memory.embedder else None
    deriver = entity_deriver(memory)
    ner = (deriver.ner.model_id, deriver.ner.available) if deriver is not None else None
    name = f"status:{loading}:{model}:{ner}"
    kept = idx.view(name)
    if kept is not None and kept[0] == idx.generation:
        return kept[1], False
    return idx.small_pool_read(lambda: _counts(idx, name, model, deriver, loading=loading), STATUS_MEMORY_LIMIT)


def _counts(
    index: Index, name: str, model: str | None, deriver: EntityDeriver | None, *, loading: bool
) -> tuple[dict[str, Any], bool]:
    """`read_counts` under the lock: the notes' counts of this `notes_generation` (kept, or
    counted now) and the entities' of this generation; whether any was counted by a scan."""
    from vaultmind.entities.backfill import ner_pending, ner_pending_known
    from vaultmind.entities.read import ner_status

    kept = index.view(f"{name}:notes")
    notes = kept[1] if kept is not None and kept[0] == index.notes_generation else None
    scanned = notes is None
    if notes is None:
        notes = _note_counts(index, model, loading=loading)
        index.keep_view(f"{name}:notes", index.notes_generation, notes)
    pending: int | None = None
    if not loading and deriver is not None:
        scanned = scanned or not ner_pending_known(index, deriver)
        pending = ner_pending(index, deriver)
    counts = {
        **notes,
        "entities": {
            **ner_status(index),
            "known": int(index.scalar("SELECT count(*) FROM entities")) if has_table(index, "entities") else 0,
            "ner_pending": pending if deriver is not None else 0,
        },
    }
    index.keep_view(name, index.generation, counts)
    return counts, scanned


def _note_counts(index: Index, model: str | None, *, loading: bool) -> dict[str, Any]:
    """The counts of a status no NER step changes: notes by kind, leaves, texts without a vector
    (None while `loading`), problems, migrations, links, tags, admission."""
    from vaultmind.admission import admission_status

    kinds = dict(  # vaultmind's guides (the folders' READMEs, the welcome note) apart: no leaves
        index.query(
            "SELECT CASE WHEN json_extract_string(frontmatter, '$.vaultmind') = 'readme' THEN 'readme' "
            "ELSE kind END AS k, count(*) FROM notes GROUP BY k ORDER BY k"
        )
    )
    leaves = int(index.scalar("SELECT count(*) FROM leaves"))
    missing: int | None = None if loading else 0
    if model and not loading:  # an anti join on 64-bit hashes of the hashes: at 50k notes +40 MB, not +170 MB
        missing = int(
            index.scalar(
                "SELECT count(*) FROM leaves l ANTI JOIN (SELECT hash(content_hash) AS h FROM embeddings "
                "WHERE model = ?) e ON e.h = hash(l.content_hash)",
                [model],
            )
        )
    return {
        "kinds": kinds,
        "leaves": leaves,
        "missing": missing,
        "problems": [
            {"path": p, "kind": k, "message": m}
            for p, k, m in index.query("SELECT path, kind, message FROM problems ORDER BY path, kind")
        ]
        + _clashes(index)
        + _copies(index),
        "migrations": [str(name) for (name,) in index.query("SELECT name FROM migrations ORDER BY seq")],
        # set by a migration this version ran, or by a rebuild until it commits (`REBUILD_UNDER_WAY`)
        "needs_rebuild": index.get_meta("needs_rebuild"),
        "backlog_left": index.get_meta(BACKLOG_LEFT) is not None,  # a daemon ended before applying it all
        "schema_version": index.get_meta("schema_version"),  # the migrations' scheme the index was created under
        "extractive": _extractive_summaries(index),
        "links": int(index.scalar("SELECT count(*) FROM links")),
        "tags": int(index.scalar("SELECT count(DISTINCT tag) FROM tags")),
        "admission": admission_status(index),
    }


def _extractive_summaries(index: Index) -> int:
    """Summary notes of vaultmind's (not edited) that the fallback summarizer wrote."""
    if not has_table(index, "summaries"):
        return 0
    return int(index.scalar("SELECT count(*) FROM summaries WHERE summarizer = 'fallback' AND NOT user_edited"))


def _rebuild_pending(marker: str, vault: Path) -> str:
    """Why the index is to be rebuilt (`needs_rebuild`'s value says who asked) and what does it."""
    finish = f"the next sync, reindex or serve rebuilds it; run `{command_line('sync', '--vault', vault)}`"
    if marker == REBUILD_UNDER_WAY:
        return (
            "a rebuild of the index was interrupted: it holds fewer notes than the vault (or none) "
            f"until one finishes; {finish}"
        )
    return f"this version of vaultmind derives the index's rows anew (a migration asks for it): {finish}"


# the problems whose file is indexed all the same (warnings); the others' files are left out
INDEXED_ANYWAY = frozenset(
    {"frontmatter", "not_utf8", "utf16", "utf32", "nul_bytes", "case_clash", "copy", "conflict_copy", "merge_conflict"}
)


def index_bytes(config: Config) -> int:
    """The size of the index and its write-ahead log (a daemon's recent saves live there first);
    a log checkpointed away between listing and reading it counts 0, never an error."""
    size = 0
    for path in (config.index_path, Path(f"{config.index_path}.wal")):
        with contextlib.suppress(FileNotFoundError):
            size += os.path.getsize(path)
    return size


def snapshot_bytes(config: Config) -> int:
    """The size of the snapshots of the resident structures beside the index (a cache a
    question without a daemon reads instead of the index: `index.snapshot_file.SNAPSHOTS`)."""
    from vaultmind.index.snapshot_file import SNAPSHOTS

    size = 0
    for name in SNAPSHOTS:
        with contextlib.suppress(FileNotFoundError):
            size += os.path.getsize(config.index_path.parent / name)
    return size


def status_report(memory: OpenMemory, counts: dict[str, Any], *, loading: bool, take_notice: bool = True) -> dict[str, Any]:
    """The whole status: `counts` (`read_counts`) with what is read on every status.
    `take_notice`: this status is the user's (`vaultmind status`), which says a quarantine's
    notice once; a poll (the plugin's status bar, `doctor`) says it too and leaves it for the
    user's status."""
    from vaultmind.entities.backfill import entity_deriver
    from vaultmind.ingest.warnings_kept import kept_warnings
    from vaultmind.queue.status import queue_status

    idx = memory.index
    config = memory.config
    kinds = counts["kinds"]
    model = memory.embedder.model_id if memory.embedder else None
    leaves, missing = counts["leaves"], counts["missing"]
    size = index_bytes(config)
    applied = counts["migrations"]
    health = "ok"
    # said once, by the user's first status after it, whichever process moved the file
    notice = take_quarantine_notice(config.index_path, keep=not take_notice) or idx.quarantined
    if take_notice:
        idx.quarantined = None
    empty = sum(kinds.values()) == 0
    if notice:
        health = "quarantined" if empty else "rebuilt"
        if empty:
            notice += f"; nothing is indexed yet: run `{command_line('reindex', '--vault', config.vault)}`"
        else:
            notice += "; the index was rebuilt from the notes"
    elif counts["needs_rebuild"]:  # before `empty`: an interrupted rebuild leaves no rows
        health = "rebuild pending"
        notice = _rebuild_pending(counts["needs_rebuild"], config.vault)
    elif empty:
        health = "empty"
        notice = f"nothing is indexed yet: run `{command_line('reindex', '--vault', config.vault)}`"
    if loading and health == "ok":
        health = "loading"
        notice = (
            "the daemon is starting: it applies what changed in the vault and loads what questions read; "
            "texts waiting for a vector or for NER are counted once it is ready"
        )
    if memory.catching_up and health == "ok":
        health = "catching up"
        notice = f"{counted(memory.catching_up, 'changed file')} of a large change still to apply (in slices, saves first)"
    elif counts["backlog_left"] and health == "ok":
        health = "behind"
        notice = (
            "the daemon ended before it applied all of a large change to the vault: the index lags the vault "
            f"until the next sync; run `{command_line('sync', '--vault', config.vault)}` (or start the daemon)"
        )
    if memory.behind:
        health = "behind"
        notice = f"{notice}; {memory.behind}" if notice else memory.behind
    entities = dict(counts["entities"])
    deriver = entity_deriver(memory)
    if deriver is not None:  # the model as this process runs it: whether it can, and where
        entities["ner_engine"] = {**deriver.ner.status(), "process": deriver.ner.process_id}

    return {
        "vault": str(config.vault),
        "loading": loading,  # the daemon is starting (counts that hash every leaf: null)
        "index": {
            "path": str(config.index_path),
            "bytes": size,
            "snapshot_bytes": snapshot_bytes(config),  # derived: the next load takes them again when deleted
            "schema_version": int(counts["schema_version"]) if counts["schema_version"] else None,  # as the index holds it
            "migrations": len(applied),
            "migration": applied[-1] if applied else None,  # the last applied
            "health": health,
            "notice": notice,
            "compacting": None,  # while a compaction copies the file (`while_compacting`)
        },
        "notes": {
            "total": sum(kinds.values()),
            "source": kinds.get("source", 0),
            "summary": kinds.get("summary", 0),
            "entity": kinds.get("entity", 0),
            "user": kinds.get("user", 0),
            "readme": kinds.get("readme", 0),
        },
        "leaves": leaves,
        "links": counts["links"],
        "tags": counts["tags"],
        "embeddings": {
            "model": model,
            "embedded": None if missing is None else leaves - missing if model else 0,
            "missing": missing if model else None,
            "error": memory.syncer.embed_error,
        },
        "entities": entities,
        "trees": _extractive_notice(counts.get("extractive", 0), config),
        "admission": counts["admission"],
        "queue": _llm_waits(queue_status(idx, vault=config.vault), config),
        # each with whether the file is indexed all the same (a warning) or left out
        "problems": [{**p, "indexed": p["kind"] in INDEXED_ANYWAY} for p in counts["problems"]],
        "ingest_warnings": kept_warnings(config.state_dir),  # what each kind's last ingest left out, and why
        "left_out": [  # folders left out as a whole, with why (once each, not per file)
            {"path": f"{t.path}/", "why": f"the templates folder of {t.plugin} ({t.settings})"}
            for t in config.left_out_templates
            if (config.vault / t.path).is_dir()
        ],
    }


COMPACTING_POLL_S = 0.1  # a status waiting for the index looks this often whether a compaction holds it


def compaction_holding(index: Index) -> dict[str, int] | None:
    """The steps of the compaction that holds the index (`Index.compacting`), or None once the
    index is free of one. A status waits for the index's lock only while no compaction holds it:
    the copy takes 6–24 s at 2,000 notes and 22–35 s at 50k, which a status bar polling every
    few seconds must not wait for."""
    while not index.lock.acquire(timeout=COMPACTING_POLL_S):
        compacting = index.compacting
        if compacting is not None:
            return compacting
    index.lock.release()
    return None


def while_compacting(config: Config, last: dict[str, Any] | None, compacting: dict[str, int]) -> dict[str, Any]:
    """The status while a compaction holds the index, read without it: the last status's
    counts (the compaction changes no row), with the file's size now, `index.compacting`
    (steps done and in all) and the health `compacting` (unless the last said worse); before
    any status was worked out, every key with nothing counted (`uncounted`)."""
    report: dict[str, Any] = dict(last) if last is not None else uncounted(config)
    index = dict(report.get("index") or {"path": str(config.index_path), "health": "ok", "notice": None})
    done, total = compacting["done"], compacting["total"]
    said = "the index file is being compacted" + (f" (step {done} of {total})" if total else "")
    said += "; the counts are those of the last status before it" if last is not None else ""
    if index["health"] == "ok":
        index["health"], index["notice"] = "compacting", said
    else:
        index["notice"] = f"{index['notice']}; {said}" if index["notice"] else said
    index["bytes"] = index_bytes(config)
    index["compacting"] = dict(compacting)
    report["index"] = index
    return report


def uncounted(config: Config) -> dict[str, Any]:
    """A status with nothing counted yet (a compaction held the index before any status was
    worked out): every key there, `null` or empty, as docs/architecture.md promises; left out,
    a client reading `problems` or `notes` failed (the Obsidian plugin's status bar showed its
    own TypeError)."""
    counted = ("index", "notes", "leaves", "links", "tags", "embeddings", "entities", "trees", "admission", "queue")
    listed = ("problems", "ingest_warnings", "left_out")
    return {"vault": str(config.vault), "loading": False, **dict.fromkeys(counted), **{key: [] for key in listed}}


def with_daemon(report: dict[str, Any], daemon: dict[str, Any]) -> dict[str, Any]:
    """The status of a serving daemon, with its own report (`Daemon.report`) under `daemon`;
    its worker pool paused (a corrupt index) is the queue's health, "paused", and said first in
    its notice: no background job runs until the pause ends or the index is rebuilt."""
    report = {**report, "daemon": daemon}
    paused = (daemon.get("workers") or {}).get("blocked")
    if paused:
        queue = report["queue"] or {}  # (none counted yet: `uncounted`)
        said = f"the daemon's workers are paused: {paused}"
        notice = f"{said}; {queue['notice']}" if queue.get("notice") else said
        report["queue"] = {**queue, "health": "paused", "notice": notice}
    return report


def _extractive_notice(extractive: int, config: Config) -> dict[str, Any]:
    """The trees' part: with an Ollama summarizer configured, how many summaries the fallback
    wrote (Ollama did not answer, or refused their answers) and how to have the model write
    them: they are never rewritten on their own once it answers (`docs/trees.md`)."""
    from vaultmind.tree.settings import TreeSettings

    summarizer = TreeSettings.from_extra(config.extra).summarizer
    if summarizer == "fallback" or not extractive:
        return {"summarizer": summarizer, "extractive": extractive, "notice": None}
    notice = (
        f"{counted(extractive, 'summary', 'summaries')} written by the extractive fallback (Ollama did not answer, "
        "or its answers were refused); they stay so: once Ollama answers, delete them (a tree's listing, "
        f"`{command_line('tree', 'TREE', vault=config.vault)}`, names each summary's summarizer) and "
        f"`{command_line('flush', vault=config.vault)}` has the model write them"
    )
    return {"summarizer": summarizer, "extractive": extractive, "notice": notice}


def _llm_waits(queue: dict[str, Any], config: Config) -> dict[str, Any]:
    """The queue's report with a `notice` when its LLM work (summaries by `[trees] summarizer`)
    waits on an Ollama that does not answer (health "degraded" from the queue): the host and
    what to do. Gray admission leaves never wait for it: with no Ollama to ask, the rules
    decide them (`admission.importance`), which status counts as information."""
    if not any(c["failure_class"] == "llm_unreachable" and c["state"] == "deferred" for c in queue["causes"]):
        return queue
    notice = (
        f"Ollama at {config.ollama_host} is not reachable: its LLM work waits (summaries are extractive meanwhile); "
        f"start Ollama (`ollama serve`) and see `{command_line('doctor', vault=config.vault)}`; without it, "
        'set [trees] summarizer = "fallback", then run '
        f"`{command_line('sync', vault=config.vault)}` (restarting a running `{command_line('serve', vault=config.vault)}` first)"
    )
    return {**queue, "notice": notice}


def _clashes(index: Index) -> list[dict[str, str]]:
    """Notes whose names differ only in case or in how their accents are encoded."""
    clashes = index.query(  # by the names' 64-bit hashes first, as `_copies` (at 50k notes +19 → +4 MB)
        """SELECT list_sort(list(path)) FROM notes
           WHERE hash(lower(nfc_normalize(path))) IN
               (SELECT hash(lower(nfc_normalize(path))) FROM notes GROUP BY 1 HAVING count(*) > 1)
           GROUP BY lower(nfc_normalize(path)) HAVING count(*) > 1 ORDER BY 1"""
    )
    out = []
    for (paths,) in clashes:
        for path in paths:
            others = ", ".join(p for p in paths if p != path)
            out.append(
                {
                    "path": path,
                    "kind": "case_clash",
                    "message": f"name differs only in case or in how its accents are encoded from {others}; "
                    "both are indexed, but Obsidian on macOS/Windows sees one file — rename one",
                }
            )
    return out


def _copies(index: Index) -> list[dict[str, str]]:
    """Notes that hold what another note holds — the same messages, summary id or entity id — as
    a sync tool's conflict copy does ("note (conflict 2026-12-03).md"): both are indexed, and
    answers show them twice; each such note but the one of the shortest name is named, with
    the one it repeats."""
    # The ids held more than once are found by their 64-bit hash first, and only their leaves
    # grouped with their paths: grouping every message leaf by id with its paths held ~75 MB
    # for a moment at 50k notes (the hashes first: ~7 MB; a colliding hash only adds a
    # candidate the grouping by id then drops).
    groups = index.query(
        "SELECT DISTINCT paths FROM (SELECT list_sort(list(DISTINCT note_path)) AS paths FROM leaves "
        "WHERE message_id IS NOT NULL AND hash(id) IN (SELECT hash(id) FROM leaves WHERE message_id IS NOT NULL "
        "GROUP BY 1 HAVING count(*) > 1) GROUP BY id HAVING count(DISTINCT note_path) > 1) ORDER BY paths"
    )
    what = {tuple(paths): "the same messages" for (paths,) in groups}
    if has_table(index, "summaries"):
        for (paths,) in index.query(
            "SELECT list_sort(list(note_path)) FROM summaries GROUP BY id HAVING count(*) > 1 ORDER BY 1"
        ):
            what.setdefault(tuple(paths), "the same summary id")
    for (paths,) in index.query(  # entity notes declaring one id: their names are merged
        """SELECT list_sort(list(path)) FROM notes
           WHERE kind = 'entity' AND json_extract_string(frontmatter, '$.id') IS NOT NULL
           GROUP BY json_extract_string(frontmatter, '$.id') HAVING count(*) > 1 ORDER BY 1"""
    ):
        what.setdefault(tuple(paths), "the same entity id")
    out = []
    for group, held in sorted(what.items()):
        paths = sorted(group, key=lambda p: (len(p), p))  # the original: the shortest name
        for path in paths[1:]:
            out.append(
                {
                    "path": path,
                    "kind": "copy",
                    "message": f"holds {held} as {paths[0]} (a sync tool's conflict copy?); both are "
                    "indexed and answers show them twice — keep one",
                }
            )
    named = {entry["path"] for entry in out}
    return out + [entry for entry in _conflict_copies(index) if entry["path"] not in named]


def _conflict_copies(index: Index) -> list[dict[str, str]]:
    """Notes a sync tool's name calls a conflict copy of a note the vault still holds
    (`Trip.sync-conflict-20241201-123456-ABCDEFG.md` beside `Trip.md`): the user's own text,
    indexed like any note, but two versions of one note that the user should merge."""
    copies = {
        path: original
        for (path,) in index.query("SELECT path FROM notes WHERE path ILIKE '%conflict%' ORDER BY path")
        if (original := conflict_original(path)) is not None
    }
    if not copies:
        return []
    held = {
        path
        for (path,) in index.query("SELECT path FROM notes WHERE path IN (SELECT unnest(?::VARCHAR[]))", [sorted(set(copies.values()))])
    }
    return [
        {
            "path": path,
            "kind": "conflict_copy",
            "message": f"a sync tool's conflict copy of {original}; both are indexed and answers show "
            "them twice — merge what differs into one and delete the other",
        }
        for path, original in copies.items()
        if original in held
    ]
