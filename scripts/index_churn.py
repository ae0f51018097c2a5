#!/usr/bin/env python3
"""The index file under churn: a seeded synthetic vault (`vaultmind bench generate`) indexed,
then changed round after round through the sync path the daemon uses (`Memory.sync_paths`): 20
notes edited, one renamed, one deleted, one added a round. Every 25 rounds the index is
checkpointed and its file size and DuckDB's block counts are printed as JSON lines (also in
WORKDIR/samples.jsonl); every 100, the size of a copy of the same rows into a fresh file
(`COPY FROM DATABASE`) and each table's blocks. At the end the final vault is indexed afresh,
for comparison. See docs/benchmarks.md, *Index file under churn*.

    python scripts/index_churn.py WORKDIR NOTES ROUNDS [SEED] [--serve] [--compact]

`--serve`: the serving process's settings (`Memory.serve`); `--compact`: after each round the
daemon's idle compaction (`Memory.compact_if_wasteful`), measuring every 30 s.
WORKDIR is removed first.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import time
from pathlib import Path

import duckdb

from vaultmind.bench.synth import generate_vault
from vaultmind.config import load_config
from vaultmind.memory import Memory

WORDS = "alpha beta gamma delta river stone garden market winter summer budget meeting plan draft review".split()
rng = random.Random(0)


def sentence() -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18))).capitalize() + "."


def user_notes(vault: Path) -> list[Path]:
    return sorted(p for p in vault.rglob("*.md") if ".vaultmind" not in p.parts)


def storage(con: duckdb.DuckDBPyConnection) -> dict[str, object]:
    size = con.execute("PRAGMA database_size").fetchone()
    names = [d[0] for d in con.description]
    row = dict(zip(names, size, strict=True))
    return {"blocks": row["total_blocks"], "used": row["used_blocks"], "free": row["free_blocks"]}


def fresh_copy_size(work: Path, con: duckdb.DuckDBPyConnection) -> int:
    target = work / "copy.duckdb"
    target.unlink(missing_ok=True)
    con.execute(f"ATTACH '{target}' AS fresh_copy")
    con.execute("COPY FROM DATABASE " + con.execute("SELECT current_database()").fetchone()[0] + " TO fresh_copy")
    con.execute("DETACH fresh_copy")
    size = target.stat().st_size
    target.unlink()
    return size


def per_table(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()").fetchall()]
    out = {}
    for t in tables:
        n = con.execute(
            "SELECT count(DISTINCT block_id) FROM pragma_storage_info(?) WHERE persistent AND block_id >= 0", [t]
        ).fetchone()[0]
        out[t] = int(n)
    return out



def main() -> None:
    global rng
    work = Path(sys.argv[1])
    notes = int(sys.argv[2])
    rounds = int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 and not sys.argv[4].startswith("-") else 52
    serve = "--serve" in sys.argv
    rng = random.Random(seed)
    vault = work / "vault"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    generate_vault(vault, notes, seed=seed)
    (vault / ".vaultmind").mkdir(exist_ok=True)
    config = load_config(vault, embed_provider="static")
    log = open(work / "samples.jsonl", "w")  # noqa: SIM115 (open for the whole run)
    t0 = time.time()
    with Memory.open(config) as memory:
        memory.reindex()
        memory.index.checkpoint()
        if serve:
            memory.serve()
        idx = memory.index.path
        assert idx is not None
        counter = 0
        for r in range(rounds + 1):
            if r % 25 == 0:
                with memory.index.lock:
                    memory.index.con.execute("CHECKPOINT")
                    st = storage(memory.index.con)
                    sample = {"round": r, "t": round(time.time() - t0, 1), "file": idx.stat().st_size, **st}
                    if r % 100 == 0:
                        sample["fresh_copy"] = fresh_copy_size(work, memory.index.con)
                        sample["table_blocks"] = per_table(memory.index.con)
                log.write(json.dumps(sample) + "\n")
                log.flush()
                print(json.dumps({k: v for k, v in sample.items() if k != "table_blocks"}), flush=True)
            if r == rounds:
                break
            # one round: 20 edits, 1 rename, 1 delete, 1 create
            files = user_notes(vault)
            changed: list[str] = []
            gone: list[str] = []
            for p in rng.sample(files, 20):
                text = p.read_text(encoding="utf-8")
                lines = text.split("\n")
                at = rng.randrange(len(lines) + 1)
                lines.insert(at, sentence())
                if len(lines) > 40 and rng.random() < 0.5:
                    del lines[rng.randrange(len(lines))]
                p.write_text("\n".join(lines), encoding="utf-8")
                changed.append(p.relative_to(vault).as_posix())
            victim = rng.choice([p for p in user_notes(vault) if p.relative_to(vault).as_posix() not in changed])
            new = victim.with_name(f"renamed-{counter}.md")
            counter += 1  # noqa: SIM113
            victim.rename(new)
            gone.append(victim.relative_to(vault).as_posix())
            changed.append(new.relative_to(vault).as_posix())
            dead = rng.choice([p for p in user_notes(vault) if p.relative_to(vault).as_posix() not in changed])
            dead.unlink()
            gone.append(dead.relative_to(vault).as_posix())
            born = vault / "churn" / f"new-{counter}.md"
            born.parent.mkdir(exist_ok=True)
            born.write_text(f"# New {counter}\n\n" + "\n\n".join(sentence() for _ in range(rng.randint(2, 8))), encoding="utf-8")
            changed.append(born.relative_to(vault).as_posix())
            memory.sync_paths(changed, gone=gone)
            if "--compact" in sys.argv:  # the daemon's idle upkeep, measuring every 30 s here
                import vaultmind.memory as memory_module

                memory_module.WASTE_CHECK_S = 30.0
                done = memory.compact_if_wasteful()
                if done:
                    print(json.dumps({"round": r, "compacted": {k: v for k, v in done.items() if k != "rows"}}), flush=True)
                    log.write(json.dumps({"round": r, "compacted": {k: v for k, v in done.items() if k != "rows"}}) + "\n")
        end_path = idx
    print("done", time.time() - t0, flush=True)
    # a fresh reindex of the final vault, for comparison
    final = work / "fresh.duckdb"
    from vaultmind.embed.providers import create_embedder
    from vaultmind.index.store import Index

    with Memory(config, Index.open(final), create_embedder(config)) as cold:
        cold.reindex()
    print(json.dumps({"final_file": end_path.stat().st_size, "fresh_reindex": final.stat().st_size}), flush=True)


if __name__ == "__main__":
    main()
