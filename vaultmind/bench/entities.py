"""Entity benchmarks, as library functions returning plain dicts of numbers.

- `bench_ner`: spaCy NER throughput (texts/s, chars/s) on deterministic English-like texts
  full of names, after the model is loaded (load time reported apart).
- `bench_leaf_update`: the cost of one note's occurrence/edge/entity update at N leaves
  (default 100k). The index is synthetic: notes, leaves and entity notes are inserted as rows
  (no files), the graph is derived once whole (`rederive.py`) (that time is reported too: it is
  what an edit of an entity note costs), then one note is changed repeatedly and only the
  deriver's `apply` is timed: median and spread of the repeats. With `ner=True` each change
  brings new text, so the figure includes one NER call.

    python -m vaultmind.bench.entities [--leaves 100000] [--repeats 15] [--ner-texts 400] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from vaultmind.entities.graph import EntityDeriver
from vaultmind.entities.ner import NER_BATCH, NerEngine
from vaultmind.entities.registry_store import load_registry
from vaultmind.entities.settings import EntitySettings
from vaultmind.index.arrow import insert_arrow
from vaultmind.index.store import Index
from vaultmind.markdown.note import parse_note
from vaultmind.model import WrittenNote

Progress = Callable[[str, int, int], None]

FIRST = """Alice Bob Carmen Dana Elena Farid Grace Hugo Ines Jonas Kenji Lena Marco Nadia Omar Priya Quentin
Rosa Samir Tara Ugo Vera Wen Ximena Yusuf Zoe Anika Bruno Chloe Diego""".split()
LAST = """Chen Stone Ruiz Whitfield Okafor Raman Novak Silva Berg Kowalski Haddad Moreau Tanaka Costa Larsen
Fischer Romero Ivanova Brennan Nguyen""".split()
ORGS = """Fernhill Labs|Harbor Hall|Acme Corporation|Google|Microsoft|the Dublin Port Company|Northwind Traders|
Globex|Initech|Umbrella Health|Stark Industries|Wayne Enterprises|Blue Origin|Tidewater Bank""".replace(
    "\n", ""
).split("|")
PLACES = "Dublin|Paris|Berlin|Lisbon|New York|Tokyo|Nairobi|São Paulo|Oslo|Toronto".split("|")
TOPICS = "launch budget hiring roadmap offsite pricing security onboarding".split()
TEMPLATES = [
    "{p} met {q} at {o} in {c} to go through the {t} plan before Friday.",
    "Quick update from {p}: {o} signed, and {q} will send the numbers to {e} tonight. #{t}",
    "{q} asked whether {o} can host the {t} review in {c}; {p} thinks the Loft is too small.",
    "Remind {p} to call {q} about the {t} invoice from {o}, ping @{h} if it slips.",
    "notes from the call with {o}: {p} owns the {t} budget, {q} the timeline, see https://example.com/{t}",
]


_SYLLABLES = "ka lo mir dan vel sor ta ben ril gro mae tor lin qua der sen fal ori bar nes".split()


def _made_names(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    names: set[str] = set()
    while len(names) < count:
        names.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize())
    return sorted(names)


# a few common names and many rare ones, like a real vault
FIRST_POOL = FIRST + _made_names(300, 1)
LAST_POOL = LAST + _made_names(2000, 2)


def _rng_name(rng: random.Random) -> str:
    pool_first = FIRST if rng.random() < 0.5 else FIRST_POOL
    pool_last = LAST if rng.random() < 0.3 else LAST_POOL
    return f"{rng.choice(pool_first)} {rng.choice(pool_last)}"


def synthetic_text(rng: random.Random, sentences: int = 3) -> str:
    parts = []
    for _ in range(sentences):
        p, q = _rng_name(rng), _rng_name(rng)
        parts.append(
            rng.choice(TEMPLATES).format(
                p=p,
                q=q,
                o=rng.choice(ORGS),
                c=rng.choice(PLACES),
                t=rng.choice(TOPICS),
                e=f"{q.split()[0].lower()}@{rng.choice(ORGS).split()[-1].lower()}.example",
                h=p.split()[0].lower(),
            )
        )
    return " ".join(parts)


def bench_ner(texts: int = 400, *, seed: int = 0, model: str = "auto", batch: int = NER_BATCH) -> dict[str, Any]:
    """NER throughput of the configured spaCy model (texts/s and chars/s after loading), in
    batches of `batch` texts (`[entities] ner_batch`'s default: what vaultmind runs)."""
    engine = NerEngine(model, batch=batch)
    if not engine.available:
        return {"available": False, "message": engine.status()["message"]}
    rng = random.Random(seed)
    corpus = [synthetic_text(rng, rng.randint(1, 4)) for _ in range(texts)]
    started = time.perf_counter()
    engine.analyze(["Warm up with Alice Chen in Dublin."])
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    found = engine.analyze(corpus)
    seconds = time.perf_counter() - started
    chars = sum(len(t) for t in corpus)
    return {
        "available": True,
        "model": engine.model_id,
        "texts": texts,
        "batch": engine.batch,
        "mean_chars": round(chars / texts, 1),
        "load_s": round(load_s, 3),
        "seconds": round(seconds, 3),
        "texts_per_s": round(texts / seconds, 1),
        "chars_per_s": round(chars / seconds),
        "entities_per_text": round(sum(len(f) for f in found or []) / texts, 2),
    }


# -- the synthetic index ----------------------------------------------------------------------

_NOTE_COLS = ["path", "kind", "title", "size", "mtime_ns", "sha256", "source_id", "source_kind", "frontmatter",
              "frontmatter_error", "aliases", "leaf_count"]  # fmt: skip
_LEAF_COLS = ["id", "note_path", "seq", "kind", "text", "content_hash", "token_count", "term_count", "anchor",
              "heading_path", "message_id", "author", "ts", "source_ref"]  # fmt: skip


def build_index(leaves: int, *, seed: int = 0, per_note: int = 4, entity_notes: int = 300) -> Index:
    """An in-memory index holding `leaves` synthetic leaves in notes of `per_note`, plus entity notes."""
    rng = random.Random(seed)
    index = Index.open(None)
    notes: dict[str, list[Any]] = {c: [] for c in _NOTE_COLS}
    rows: dict[str, list[Any]] = {c: [] for c in _LEAF_COLS}

    def add_note(path: str, kind: str, title: str, fm: dict[str, Any], count: int) -> None:
        values = [path, kind, title, 100, 0, hashlib.sha256(path.encode()).hexdigest(), None, None,
                  json.dumps(fm, sort_keys=True), None, [], count]  # fmt: skip
        for col, value in zip(_NOTE_COLS, values, strict=True):
            notes[col].append(value)

    names = sorted({_rng_name(rng) for _ in range(entity_notes * 3)})[:entity_notes]
    for name in names:
        slug = name.lower().replace(" ", "-")
        fm = {"vaultmind": "entity", "id": f"person:{slug}", "kind": "person", "display_name": name,
              "aliases": [name.split()[0] + " " + name.split()[1][0] + "."], "emails": [f"{slug}@example.com"]}  # fmt: skip
        add_note(f"entities/person/{slug}.md", "entity", name, fm, 0)
    n_notes = (leaves + per_note - 1) // per_note
    made = 0
    for i in range(n_notes):
        path = f"notes/n{i:06d}.md"
        count = min(per_note, leaves - made)
        add_note(path, "user", f"n{i}", {}, count)
        for seq in range(count):
            text = synthetic_text(rng, rng.randint(1, 3))
            values = [hashlib.sha256(f"{path}{seq}".encode()).hexdigest()[:32], path, seq, "section", text,
                      hashlib.sha256(text.encode()).hexdigest(), len(text) // 4, len(text.split()), "", [], None,
                      None, None, None]  # fmt: skip
            for col, value in zip(_LEAF_COLS, values, strict=True):
                rows[col].append(value)
        made += count
    with index.transaction() as con:
        insert_arrow(con, "notes", pa.table(notes))
        insert_arrow(con, "leaves", pa.table(rows))
    return index


def bench_leaf_update(
    leaves: int = 100_000,
    *,
    repeats: int = 15,
    seed: int = 0,
    ner: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Median time of the entity deriver for a one-note change in an index of `leaves` leaves."""
    settings = EntitySettings(ner_model="auto" if ner else "off")
    deriver = EntityDeriver(settings)
    if ner and not deriver.ner.available:
        return {"available": False, "message": deriver.ner.status()["message"]}
    if progress:
        progress("build", 0, leaves)
    started = time.perf_counter()
    index = build_index(leaves, seed=seed)
    build_s = time.perf_counter() - started
    if progress:
        progress("build", leaves, leaves)
    with index.transaction() as con:
        started = time.perf_counter()
        deriver.apply(con, [], [], rebuild=True)
        full_s = time.perf_counter() - started
    counts = {t: int(index.scalar(f"SELECT count(*) FROM {t}")) for t in ("occurrences", "edges", "entities")}
    rng = random.Random(seed + 1)
    path = "notes/n000000.md"
    timings: list[float] = []
    for run in range(repeats + 1):
        text = f"# Note {run}\n\n{synthetic_text(rng, 2)}\n"
        parsed = parse_note(path, text)
        with index.transaction() as con:
            removed = [
                r[0] for r in con.execute("SELECT id FROM leaves WHERE note_path = ?", [path]).fetchall()
            ]
            con.execute("DELETE FROM leaves WHERE note_path = ?", [path])
            rows: dict[str, list[Any]] = {c: [] for c in _LEAF_COLS}
            for leaf in parsed.leaves:
                values = [leaf.id, path, leaf.seq, leaf.kind, leaf.text, leaf.content_hash, leaf.token_count, 0,
                          leaf.anchor, list(leaf.heading_path), None, None, None, None]  # fmt: skip
                for col, value in zip(_LEAF_COLS, values, strict=True):
                    rows[col].append(value)
            insert_arrow(con, "leaves", pa.table(rows))
            started = time.perf_counter()
            deriver.apply(con, removed, [WrittenNote.of(parsed)], rebuild=False)
            elapsed = time.perf_counter() - started
        if run:  # the first run warms caches (and loads the model)
            timings.append(elapsed)
        if progress:
            progress("update", run, repeats)
    registry_timings, registry_leaves = _registry_edits(index, deriver, max(3, repeats // 3))
    with index.lock:
        registry = load_registry(index.con)
    index.close()
    return {
        "leaves": leaves,
        "entity_notes": len(registry.entries),
        "ner": deriver.ner.model_id if ner else None,
        "build_s": round(build_s, 2),
        "full_recompute_s": round(full_s, 2),
        "rows": counts,
        "update_ms": {
            "median": round(statistics.median(timings) * 1000, 2),
            "min": round(min(timings) * 1000, 2),
            "max": round(max(timings) * 1000, 2),
            "runs": len(timings),
        },
        "registry_edit_ms": {
            "median": round(statistics.median(registry_timings) * 1000, 2),
            "min": round(min(registry_timings) * 1000, 2),
            "max": round(max(registry_timings) * 1000, 2),
            "runs": len(registry_timings),
            "leaves_rederived": registry_leaves,
        },
    }


def _registry_edits(index: Index, deriver: EntityDeriver, runs: int) -> tuple[list[float], list[int]]:
    """Time adding (then removing) an alias to one entity note: the leaves it can affect are found
    and re-derived (`entities.changes`), not the whole vault."""
    path = index.scalar("SELECT min(path) FROM notes WHERE kind = 'entity'")
    fm = json.loads(index.scalar("SELECT frontmatter FROM notes WHERE path = ?", [path]))
    base = list(fm.get("aliases", []))
    timings: list[float] = []
    touched: list[int] = []
    for run in range(runs + 1):
        fm["aliases"] = [*base, f"{FIRST_POOL[-1]} {LAST_POOL[-1]}"] if run % 2 == 0 else base
        with index.transaction() as con:
            con.execute(
                "UPDATE notes SET frontmatter = ?, sha256 = ? WHERE path = ?",
                [json.dumps(fm, sort_keys=True), hashlib.sha256(f"{path}{run}".encode()).hexdigest(), path],
            )
            started = time.perf_counter()
            deriver.apply(con, [], [], rebuild=False)
            elapsed = time.perf_counter() - started
        if run:
            timings.append(elapsed)
            touched.append(int(deriver.last.get("leaves") or -1))
    return timings, touched


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vaultmind.bench.entities", description=__doc__)
    parser.add_argument("--leaves", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--ner-texts", type=int, default=400)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = {
        "ner": bench_ner(args.ner_texts),
        "leaf_update": bench_leaf_update(args.leaves, repeats=args.repeats),
        "leaf_update_with_ner": bench_leaf_update(args.leaves, repeats=args.repeats, ner=True),
    }
    print(json.dumps(report, indent=2) if args.json else _human(report))
    return 0


def _human(report: dict[str, Any]) -> str:
    lines = []
    ner = report["ner"]
    if ner.get("available"):
        lines.append(
            f"NER {ner['model']}: {ner['texts_per_s']} texts/s, {ner['chars_per_s']:,} chars/s "
            f"({ner['texts']} texts of {ner['mean_chars']} chars; load {ner['load_s']} s)"
        )
    else:
        lines.append(f"NER unavailable: {ner.get('message')}")
    for key in ("leaf_update", "leaf_update_with_ner"):
        r = report[key]
        if not r.get("available", True):
            continue
        u = r["update_ms"]
        lines.append(
            f"{key} at {r['leaves']:,} leaves ({r['rows']['occurrences']:,} occurrences, {r['rows']['edges']:,} edges): "
            f"median {u['median']} ms (min {u['min']}, max {u['max']}, {u['runs']} runs); "
            f"full recompute {r['full_recompute_s']} s"
        )
        g = r["registry_edit_ms"]
        lines.append(
            f"  entity-note alias edit: median {g['median']} ms (min {g['min']}, max {g['max']}, {g['runs']} runs; "
            f"leaves re-derived {g['leaves_rederived']})"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
