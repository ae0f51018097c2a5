"""Trees at scale: what the daemon and the sync cost over tens of thousands of summaries.

    python -m vaultmind.bench.trees --scale [--messages 3000] [--leaves-per-summary 2]
                                    [--fanout 8] [--passes 3] [--json]
    (`--messages 50000 --fanout 2`: about 50,000 summaries)

Sealing thousands of summaries through the engine takes hours (each seal is a two-phase commit
with a sync), so here the deterministic chat vault of `bench.trees` is folded by writing the
summary notes a seal would write — same ids, paths, links, `children_sha256`, times — level by
level, each level synced before the next (a parent's digest covers its children's text, read
from the index); bodies are short fixed sentences, not summaries. A level-n buffer keeps
`n mod fanout` summaries, as a real fold leaves it. Not timed. Then, medians of `--passes`:

- `tree_states_s`: the buffer sizes of every tree (what each daemon pass asks), uncached;
- `seal_idle_s`: `seal_ready` with nothing to seal (one tree's state computed afresh);
- `level_buffer_s`: the level-1 buffer of the largest tree (what each seal reads twice);
- `refresh_gated_s`: a refresh pass over the unchanged vault;
- `sync_one_source_s`: an incremental sync of one source note whose last message changed (its
  leaf and the summaries above it are recomputed, alternately edited and restored);
- `resolve_all_s`: the deriver resolving every summary at once (its rebuild's share);
- `reindex_s`: a cold `reindex` of the whole vault (sources, summaries, every deriver);
- `seal_s_per_seal`: sealing new messages of one channel into the full vault, per seal.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from vaultmind.bench.tree_vault import CHANNELS, CountingSummarizer, write_chat_vault
from vaultmind.config import load_config
from vaultmind.errors import UsageError
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory
from vaultmind.tree.buffers import _tree_states, level_buffer
from vaultmind.tree.deriver import SUMMARY_TEXT_SHA, resolve_rows, summary_info
from vaultmind.tree.engine import seal_ready
from vaultmind.tree.note import (
    SummaryNote,
    children_digest,
    leaf_link,
    summary_id,
    summary_link,
    summary_path,
    summary_title,
    tree_slug,
)
from vaultmind.tree.refresh import refresh_summaries
from vaultmind.tree.settings import TreeSettings

_BODY = "The team went over {topic} and agreed to check the numbers again before friday."
_TOPICS = ("the venue deposit", "the load test", "the press kit", "the budget review", "the release notes")


def _median(fn: Callable[[], Any], passes: int) -> float:
    times = []
    for _ in range(passes):
        at = time.perf_counter()
        fn()
        times.append(time.perf_counter() - at)
    return round(statistics.median(times), 4)


def _write(root: Path, note: SummaryNote, path: str) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(note.render(), encoding="utf-8")


def _fold_level_1(memory: Memory, per_summary: int) -> list[str]:
    """L1 summaries over every admitted leaf (as a seal folds: a summary over a dropped one is
    stale), `per_summary` leaves each, in buffer order; their paths."""
    rows = memory.index.query(
        """SELECT n.source_id, l.id, l.note_path, l.anchor, l.content_hash, l.ts, n.title
           FROM leaves l JOIN notes n ON n.path = l.note_path
           WHERE n.kind = 'source' AND l.id IN (SELECT leaf_id FROM admission WHERE decision = 'admitted')
           ORDER BY n.source_id, l.ts, l.note_path, l.seq"""
    )
    by_tree: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        by_tree.setdefault(row[0], []).append(row)
    paths: list[str] = []
    for tree, leaves in by_tree.items():
        for at in range(0, len(leaves), per_summary):
            group = leaves[at : at + per_summary]
            sid = summary_id(tree, 1, [g[1] for g in group])
            path = summary_path(tree_slug(tree), 1, sid)
            start, end = group[0][5], group[-1][5]
            note = SummaryNote(
                id=sid, tree=tree, level=1,
                children=tuple(leaf_link(g[2], g[3]) for g in group),
                children_sha256=children_digest([g[4] for g in group]),
                time_start=start, time_end=end, entities=(), summarizer="fallback",
                body=_BODY.format(topic=_TOPICS[len(paths) % len(_TOPICS)]),
                title=summary_title(f"#{tree.rsplit('/', 1)[-1]}", 1, start, end),
            )  # fmt: skip
            _write(memory.config.vault, note, path)
            paths.append(path)
    return paths


def _fold_level(memory: Memory, level: int, fanout: int) -> list[str]:
    """Level-`level` summaries over the level below, `fanout` each; the rest stays buffered."""
    rows = memory.index.query(
        f"""SELECT s.tree, s.id, s.note_path, {SUMMARY_TEXT_SHA.format(path="s.note_path")},
                  s.time_start, s.time_end
           FROM summaries s WHERE s.level = ? ORDER BY s.tree, s.time_start, s.id""",
        [level - 1],
    )
    by_tree: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        by_tree.setdefault(row[0], []).append(row)
    paths: list[str] = []
    for tree, children in by_tree.items():
        for at in range(0, len(children) - fanout + 1, fanout):
            group = children[at : at + fanout]
            sid = summary_id(tree, level, [g[1] for g in group])
            path = summary_path(tree_slug(tree), level, sid)
            start, end = group[0][4], group[-1][5]
            note = SummaryNote(
                id=sid, tree=tree, level=level,
                children=tuple(summary_link(g[2]) for g in group),
                children_sha256=children_digest([g[3] for g in group]),
                time_start=start, time_end=end, entities=(), summarizer="fallback",
                body=_BODY.format(topic=_TOPICS[len(paths) % len(_TOPICS)]),
                title=summary_title(f"#{tree.rsplit('/', 1)[-1]}", level, start, end),
            )  # fmt: skip
            _write(memory.config.vault, note, path)
            paths.append(path)
    return paths


def fold(memory: Memory, per_summary: int, fanout: int) -> dict[int, int]:
    """Write and sync the whole fold; summaries per level."""
    levels: dict[int, int] = {}
    paths = _fold_level_1(memory, per_summary)
    level = 1
    while paths:
        memory.sync_paths(paths)
        levels[level] = len(paths)
        level += 1
        paths = _fold_level(memory, level, fanout)
    return levels


def _new_day(root: Path, channel: str, count: int) -> None:
    """A new day of `count` messages in `channel`, after every other day."""
    at = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
    batch = [
        Message(
            f"{channel}-new-{i}",
            "Alice Chen",
            at + timedelta(minutes=5 * i),
            f"About the new plan, step {i}.",
        )
        for i in range(count)
    ]
    meta = SourceMeta("chat", f"slack:bench/{channel}", f"slack/bench/{channel}", f"#{channel}")
    path = root / "sources" / "chat" / "slack" / "bench" / channel / f"{at:%Y-%m-%d}.md"
    path.write_text(render_source_note(meta, batch), encoding="utf-8")


def bench_tree_scale(
    workdir: Path,
    *,
    messages: int = 20000,
    per_summary: int = 2,
    fanout: int = 2,
    passes: int = 3,
    seed: int = 0,
) -> dict[str, Any]:
    if messages <= 0 or per_summary <= 0 or fanout < 2 or passes <= 0:
        raise UsageError(
            "--messages, --leaves-per-summary and --passes must be positive, --fanout at least 2"
        )
    workdir.mkdir(parents=True, exist_ok=True)
    if any(workdir.iterdir()):
        raise UsageError(f"{workdir} is not empty", hint="the benchmark writes a fresh vault")
    write_chat_vault(workdir, messages, seed)
    extra = {
        "admission.llm": False,
        "entities.ner_model": "off",
        "trees.l0_tokens": 100,  # the fold covers every leaf; the new day below seals a few times
        "trees.fanout": fanout,
    }
    config = load_config(workdir, embed_provider="none", extra=extra)
    out: dict[str, Any] = {"messages": messages, "leaves_per_summary": per_summary, "fanout": fanout}
    with Memory.open(config) as memory:
        memory.sync()
        started = time.perf_counter()
        levels = fold(memory, per_summary, fanout)
        out["fold_s"] = round(time.perf_counter() - started, 3)
        index = memory.index
        out["leaves"] = int(
            index.scalar(
                "SELECT count(*) FROM leaves l JOIN notes n ON n.path = l.note_path WHERE n.kind = 'source'"
            )
        )
        out["summaries"] = int(sum(levels.values()))
        out["summaries_per_level"] = {str(k): v for k, v in levels.items()}
        out["stale"] = int(index.scalar("SELECT count(*) FROM summaries WHERE stale"))
        settings = TreeSettings.from_extra(config.extra)
        tree = str(
            index.scalar("SELECT tree FROM summaries GROUP BY tree ORDER BY count(*) DESC, tree LIMIT 1")
        )
        out["tree_states_s"] = _median(lambda: _tree_states(index, settings, None), passes)

        def idle() -> None:
            index.generation += 1  # as after a save: the states are computed afresh
            if seal_ready(memory).sealed:
                raise RuntimeError("the folded vault had something to seal")

        out["seal_idle_s"] = _median(idle, passes)
        out["level_buffer_s"] = _median(lambda: level_buffer(index, tree, 1), passes)
        refresh_summaries(memory)
        refresh_summaries(memory)
        out["refresh_gated_s"] = _median(lambda: refresh_summaries(memory), passes)
        source = str(
            index.scalar("SELECT max(path) FROM notes WHERE kind = 'source' AND source_id = ?", [tree])
        )
        text = (config.vault / source).read_text(encoding="utf-8")
        edited = text.rstrip("\n") + " (edited)\n"
        flips = iter([edited, text] * passes)

        def sync_one() -> None:
            (config.vault / source).write_text(next(flips), encoding="utf-8")
            memory.sync_paths([source])

        out["sync_one_source_s"] = _median(sync_one, passes)
        if (config.vault / source).read_text(encoding="utf-8") != text:
            sync_one()
        infos = []
        for path, fm_json in index.query(
            "SELECT path, frontmatter FROM notes WHERE path IN (SELECT note_path FROM summaries)"
        ):
            info = summary_info(path, json.loads(fm_json), False)
            if info is not None:
                infos.append(info)
        infos.sort(key=lambda i: (i.level, i.path))
        with index.lock:
            out["resolve_all_s"] = _median(lambda: resolve_rows(index.con, infos), passes)
        out["reindex_s"] = _median(memory.reindex, max(1, passes // 2))
        out["stale_after_reindex"] = int(index.scalar("SELECT count(*) FROM summaries WHERE stale"))
        _new_day(config.vault, CHANNELS[0], 40)
        memory.sync()
        at = time.perf_counter()
        report = seal_ready(memory, summarizer=CountingSummarizer())
        seconds = time.perf_counter() - at
        out["seals"] = len(report.sealed)
        out["seal_s_per_seal"] = round(seconds / len(report.sealed), 4) if report.sealed else None
    return out


def describe(result: dict[str, Any]) -> Sequence[str]:
    return [
        f"{result['summaries']} summaries over {result['leaves']} leaves (levels {result['summaries_per_level']}), "
        f"folded in {result['fold_s']:.1f} s; stale: {result['stale']}",
        f"tree_states {result['tree_states_s']:.4f} s, idle seal_ready {result['seal_idle_s']:.4f} s, "
        f"level_buffer {result['level_buffer_s']:.4f} s, gated refresh {result['refresh_gated_s']:.4f} s",
        f"sync of one source note {result['sync_one_source_s']:.4f} s, resolve every summary "
        f"{result['resolve_all_s']:.4f} s, cold reindex {result['reindex_s']:.2f} s, "
        f"{result['seals']} seals at {result['seal_s_per_seal']} s each",
    ]
