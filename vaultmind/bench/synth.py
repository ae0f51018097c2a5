"""A deterministic synthetic Obsidian vault for benchmarks: same seed and size, same bytes.

The shape follows real vaults: nested folders (depth 1–4), note sizes lognormal around 2–3 KB
with a long tail (about one 50–200 KB note per thousand), front matter in most notes (tags,
aliases, dates, status, wikilinks inside properties; a few per cent malformed, like an
unreplaced `{{date}}` template), headings, lists, tasks, code fences, callouts, tables, inline
and nested `#tags`, `[[wikilinks]]` (with `|alias`, `#heading`, `#^block`) whose in-degree
follows a power law, `![[embeds]]`, block ids and some accents, CJK and emoji. About
`sources_share` of the notes are vaultmind chat source notes under `sources/chat/…`, rendered
by the same `render_source_note` the chat adapter uses. Words come from a generated
pseudo-English vocabulary with Zipfian frequencies (so BM25 statistics look natural) and a
few hundred names of people, places and organizations reused across notes. A `.obsidian/`
folder, Obsidian's `.trash/` and a few attachments (PNG bytes) are there to be skipped.

Every note is generated from its own random stream (seed, note number), after a global plan
(folders, titles, anchors) drawn from the seed alone; no set or hash order is involved.
The words are in `bench.vocabulary`, the plan in `bench.synth_plan`, a user note's text in
`bench.synth_notes`, the chat source notes in `bench.synth_chats`; this module writes the
files, in worker processes for a large vault, and records the manifest.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import struct
import time
import zlib
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path

from vaultmind.bench.figures import Progress
from vaultmind.bench.synth_chats import ChatPlan, chat_text, plan_chats
from vaultmind.bench.synth_notes import note_text
from vaultmind.bench.synth_plan import VaultPlan, make_plan
from vaultmind.bench.vocabulary import Vocabulary, build_vocabulary
from vaultmind.errors import UsageError

MANIFEST = ".vaultmind/bench-vault.json"
"""Where the generator records its parameters and counts (inside vaultmind's own folder)."""
SOURCES_SHARE = 0.2  # the share of chat source notes in a vault `generate_vault` writes, unless told

@dataclass(slots=True)
class GenStats:
    """What `generate_vault` wrote. Everything but `seconds` is a function of (notes, seed, share)."""

    notes: int = 0
    user_notes: int = 0
    source_notes: int = 0
    messages: int = 0
    folders: int = 0
    other_files: int = 0  # attachments, .obsidian/ and .trash/ files: to be skipped by a scan
    note_bytes: int = 0
    largest_note_bytes: int = 0
    links: int = 0
    malformed_frontmatter: int = 0
    seed: int = 0
    sources_share: float = 0.0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, int | float]:
        return asdict(self)


# -- files ---------------------------------------------------------------------------------------


def _png(rng: random.Random) -> bytes:
    """A valid 1×1 PNG followed by padding, like a pasted screenshot's worth of bytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = zlib.compress(b"\x00" + bytes(rng.randrange(256) for _ in range(3)))
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", raw)
    )
    return (
        png + chunk(b"tEXt", b"Comment\x00" + rng.randbytes(rng.randrange(200, 4000))) + chunk(b"IEND", b"")
    )


_OBSIDIAN_FILES = {
    ".obsidian/app.json": '{\n  "alwaysUpdateLinks": false,\n  "newFileLocation": "folder",\n  "attachmentFolderPath": "attachments"\n}\n',
    ".obsidian/appearance.json": '{\n  "cssTheme": "Minimal",\n  "baseFontSize": 16\n}\n',
    ".obsidian/core-plugins.json": '[\n  "file-explorer",\n  "global-search",\n  "graph",\n  "backlink",\n  "daily-notes",\n  "templates"\n]\n',
    ".obsidian/community-plugins.json": '[\n  "dataview"\n]\n',
    ".obsidian/plugins/dataview/manifest.json": '{\n  "id": "dataview",\n  "version": "0.5.66"\n}\n',
    ".obsidian/plugins/dataview/main.js": "'use strict';\n"
    + "module.exports = function plugin() { return 42; };\n" * 200,
    ".obsidian/workspace.json": '{\n  "main": {"type": "split", "children": []},\n  "lastOpenFiles": []\n}\n',
    ".trash/Old idea.md": "---\ntags: [trash]\n---\nA deleted note in Obsidian's trash: to be skipped.\n",
    ".trash/Scratch.md": "Scratch text that was deleted.\n",
}


_CHUNK = 1000
_PARALLEL_FROM = 4000  # below this many notes, worker start-up costs more than it saves


@dataclass(slots=True)
class _Part:
    """Counts of one chunk of notes, written by one worker."""

    notes: int = 0
    messages: int = 0
    note_bytes: int = 0
    largest: int = 0
    links: int = 0
    malformed: int = 0


_worker_state: tuple[Path, int, Vocabulary, VaultPlan, list[ChatPlan]] | None = None


def _init_worker(root: Path, user_notes: int, sources: int, seed: int) -> None:
    global _worker_state
    vocab = build_vocabulary(seed)
    _worker_state = (
        root,
        seed,
        vocab,
        make_plan(user_notes, seed, vocab),
        plan_chats(sources, seed, vocab),
    )


def _write_chunk(kind: str, lo: int, hi: int) -> _Part:
    """Generate and write notes lo..hi-1 of one kind ("user" or "chat"); the worker's state
    comes from `_init_worker`, so any split of the work gives the same bytes."""
    assert _worker_state is not None
    root, seed, vocab, plan, chats = _worker_state
    part = _Part()
    made: set[str] = set()
    for number in range(lo, hi):
        if kind == "user":
            path = plan.notes[number].path
            text, links, malformed = note_text(seed, number, vocab, plan)
            part.malformed += malformed or plan.notes[number].kind == "template"
        else:
            path = chats[number].path
            text, messages, links = chat_text(seed, number, chats[number], vocab, plan)
            part.messages += messages
        data = text.encode("utf-8")
        folder = path.rpartition("/")[0]
        if folder and folder not in made:
            os.makedirs(root / folder, exist_ok=True)
            made.add(folder)
        with open(root / path, "wb") as fh:
            fh.write(data)
        part.notes += 1
        part.note_bytes += len(data)
        part.largest = max(part.largest, len(data))
        part.links += links
    return part


def generate_vault(
    root: str | Path,
    notes: int,
    seed: int = 0,
    *,
    sources_share: float = SOURCES_SHARE,
    workers: int | None = None,
    progress: Progress | None = None,
) -> GenStats:
    """Write a synthetic vault of `notes` Markdown notes (user notes + chat source notes) to
    `root`, which must be missing or empty. Same arguments, same bytes, whatever `workers`
    (processes; default: one per core for large vaults)."""
    global _worker_state
    started = time.perf_counter()
    if notes < 1:
        raise UsageError(f"--notes must be at least 1, got {notes}")
    if not 0.0 <= sources_share <= 1.0:
        raise UsageError(f"--sources-share must be between 0 and 1, got {sources_share:g}")
    root = Path(root).resolve()
    if root.exists() and any(root.iterdir()):
        raise UsageError(f"{root} is not empty", path=root, hint="generate into a new or empty folder")
    root.mkdir(parents=True, exist_ok=True)
    sources = round(notes * sources_share)
    user_notes = notes - sources
    jobs = [("user", lo, min(lo + _CHUNK, user_notes)) for lo in range(0, user_notes, _CHUNK)]
    jobs += [("chat", lo, min(lo + _CHUNK, sources)) for lo in range(0, sources, _CHUNK)]
    if workers is None:
        workers = min(os.cpu_count() or 1, 4) if notes >= _PARALLEL_FROM else 1
    stats = GenStats(seed=seed, sources_share=sources_share)
    parts: list[_Part] = []
    done = 0
    if workers <= 1:
        _init_worker(root, user_notes, sources, seed)
        try:
            for job in jobs:
                parts.append(_write_chunk(*job))
                done += job[2] - job[1]
                if progress:
                    progress("generate", done, notes)
        finally:
            _worker_state = None
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker,
                                 initargs=(root, user_notes, sources, seed)) as pool:  # fmt: skip
            futures = {pool.submit(_write_chunk, *job): job for job in jobs}
            for future in as_completed(futures):
                parts.append(future.result())
                job = futures[future]
                done += job[2] - job[1]
                if progress:
                    progress("generate", done, notes)
    vocab = build_vocabulary(seed)
    plan = make_plan(user_notes, seed, vocab)
    rng = random.Random(f"vm-synth:{seed}:files")
    files = [(rel, _png(rng)) for rel in plan.attachments]
    files += [(rel, text.encode("utf-8")) for rel, text in _OBSIDIAN_FILES.items()]
    for rel, data in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    stats.user_notes = user_notes
    stats.source_notes = sources
    stats.notes = notes
    stats.messages = sum(p.messages for p in parts)
    stats.note_bytes = sum(p.note_bytes for p in parts)
    stats.largest_note_bytes = max((p.largest for p in parts), default=0)
    stats.links = sum(p.links for p in parts)
    stats.malformed_frontmatter = sum(p.malformed for p in parts)
    stats.other_files = len(files)
    folders = {n.path.rpartition("/")[0] for n in plan.notes}
    stats.folders = len(folders | {c.path.rpartition("/")[0] for c in plan_chats(sources, seed, vocab)})
    manifest = {
        "generator": "vaultmind.bench.synth",
        **{k: v for k, v in stats.to_dict().items() if k != "seconds"},
    }
    (root / MANIFEST).parent.mkdir(exist_ok=True)
    (root / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    stats.seconds = time.perf_counter() - started
    return stats


def read_manifest(vault: str | Path) -> dict[str, object] | None:
    """The generator's record of a synthetic vault, or None for any other vault."""
    try:
        data = json.loads((Path(vault) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("generator") == "vaultmind.bench.synth" else None
