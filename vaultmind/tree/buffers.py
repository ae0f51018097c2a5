"""Trees and buffers, derived from the index on every call (nothing is stored but the vault).

- A leaf belongs to the tree of its note (`note.tree_for_note`): source notes by `source_id`,
  your own notes by top folder (unless `[trees] user_notes = false`). Summary and entity
  notes never feed a tree, nor does a note flagged `quote-only: true` (also `quote_only`,
  `vaultmind_quote_only`): it is always returned verbatim. A summary or entity note you moved
  out of `summaries/` or `entities/` is one of your notes from then on, but its front matter
  still says `vaultmind: summary` (or `entity`): it feeds no tree either (`generated_sql`),
  else its text would be summarized again, a copy of a summary in a tree of its own.
- When the `admission` table exists, only leaves whose decision is `admitted` count; without
  it every leaf of a tree counts. A gray leaf (waiting for its importance decision) is in no
  buffer yet: `gray_waiting` counts them, and says where the first one sits, past which a
  forced seal does not go (it would fold later leaves before it: a tree out of time order).
- The level-0 buffer of a tree: its leaves not among the children of any level-1 summary,
  in (time, note path, position) order. The level-n buffer: its level-n summaries that no
  level-(n+1) summary has as a child, in (time, first leaf) order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from vaultmind.index.store import Index
from vaultmind.index.tables import has_columns, has_table
from vaultmind.model import ROOT_USER_TREE, USER_TREE_PREFIX
from vaultmind.tree.deriver import SUMMARY_TEXT_SHA
from vaultmind.tree.note import UNLINKABLE_PATH, one_copy_sql
from vaultmind.tree.settings import MAX_LEVEL, TreeSettings

QUOTE_ONLY_KEYS = ("quote-only", "quote_only", "vaultmind_quote_only")
_TRUE = ("true", "yes", "on", "1")
_EPOCH = datetime(1970, 1, 1)  # where a leaf with no time sorts (after every dated one)


@dataclass(frozen=True, slots=True)
class BufferItem:
    """One node waiting in a buffer. `content` is what the snapshot check compares."""

    id: str
    content: str  # a leaf's content_hash; a summary note's text hash (`SUMMARY_TEXT_SHA`)
    tokens: int
    time: datetime | None
    note_path: str
    seq: int = 0  # a leaf's position in its note (level 0 sorts by time, note path, position)

    def order(self) -> tuple[bool, datetime, str, int]:
        """Where a leaf sits in its level-0 buffer: (no time, time, note path, position)."""
        return leaf_order(self.time, self.note_path, self.seq)


def leaf_order(time: datetime | None, note_path: str, seq: int) -> tuple[bool, datetime, str, int]:
    """The level-0 order: by time (none last), note path, position in the note."""
    return (time is None, time or _EPOCH, note_path, seq)


@dataclass(frozen=True, slots=True)
class GrayWaiting:
    """The gray leaves of one tree: how many, and the order key of the first."""

    count: int
    first: tuple[bool, datetime, str, int]


@dataclass(slots=True)
class TreeState:
    tree: str
    leaves: int = 0  # every leaf of the tree that counts (admitted, not quote-only)
    l0_items: int = 0
    l0_tokens: int = 0
    l0_newest: datetime | None = None
    levels: dict[int, int] = field(default_factory=dict)  # level >= 1 → buffered summaries
    max_level: int = 0

    def seals_due(self, settings: TreeSettings, *, force: bool) -> int:
        """About how many seals folding the tree takes (for the progress shown: a first flush of
        one large channel seals thousands of summaries): level 0 by the token budget (what is
        left too when forced), then each level by the fan-out, over what waits there and what
        comes up."""
        made, rest = divmod(self.l0_tokens, settings.l0_tokens)
        made += 1 if force and rest else 0
        total = made
        for level in range(1, MAX_LEVEL):
            made = (self.levels.get(level, 0) + made) // settings.fanout
            total += made
            if not made and level >= max(self.levels, default=0):
                break
        return total


def quote_only_sql(column: str = "n.frontmatter") -> str:
    checks = ", ".join(f"json_extract_string({column}, '$.\"{key}\"')" for key in QUOTE_ONLY_KEYS)
    values = ", ".join(f"'{v}'" for v in _TRUE)
    return f"(contains({column}, 'quote') AND lower(coalesce({checks}, 'false')) IN ({values}))"


def generated_sql(column: str = "n.frontmatter") -> str:
    """True for a note whose front matter says vaultmind wrote it (`vaultmind: summary` or
    `entity`), wherever it lives (asked of your notes only: every source note says `vaultmind:
    source`), once per note, not per leaf: the daemon's check after every save asks it."""
    value = f"json_extract_string({column}, '$.vaultmind')"
    return f"(contains({column}, 'vaultmind') AND coalesce({value}, '') IN ('summary', 'entity'))"


def _tree_sql() -> str:
    return (
        "CASE WHEN n.kind = 'source' THEN n.source_id "
        f"ELSE '{USER_TREE_PREFIX}' || CASE WHEN strpos(n.path, '/') > 0 "
        f"THEN split_part(n.path, '/', 1) ELSE '{ROOT_USER_TREE[len(USER_TREE_PREFIX) :]}' END END"
    )


def tree_leaves_sql(
    index: Index, settings: TreeSettings, tree: str | None = None, decision: str = "admitted"
) -> tuple[str, list[Any]]:
    """A subquery of every leaf that feeds a tree (or only `tree`), with its `tree` and `active`
    time (its own, never after its note was last written: one dated in the future does not keep
    its tree from going quiet), and its parameters. Filtering one tree inside the subquery lets DuckDB skip the rest.
    With an `admission` table, only the leaves of that `decision` (`gray`: those waiting for one)."""
    kinds = "(n.kind = 'source' AND n.source_id IS NOT NULL)"
    if settings.user_notes:
        kinds = f"({kinds} OR n.kind = 'user')"
    params: list[Any] = []
    if tree is not None and tree.startswith(USER_TREE_PREFIX):
        folder = tree[len(USER_TREE_PREFIX) :]
        if folder == ROOT_USER_TREE[len(USER_TREE_PREFIX) :]:
            kinds = "(n.kind = 'user' AND strpos(n.path, '/') = 0)" if settings.user_notes else "false"
        else:
            kinds = "(n.kind = 'user' AND starts_with(n.path, ?))" if settings.user_notes else "false"
            params.append(folder + "/")
    elif tree is not None:
        kinds = "(n.kind = 'source' AND n.source_id = ?)"
        params.append(tree)
    admitted = ""
    if has_table(index, "admission") and has_columns(index, "admission", ("leaf_id", "decision")):
        admitted = f"AND l.id IN (SELECT leaf_id FROM admission WHERE decision = '{decision}')"
    sql = f"""(SELECT l.id, l.note_path, l.seq, l.ts, l.token_count, l.content_hash,
                       {_tree_sql()} AS tree,
                       least(l.ts, make_timestamp(n.mtime_ns // 1000)) AS active
                FROM leaves l JOIN notes n ON n.path = l.note_path
                WHERE {kinds} AND NOT {quote_only_sql()}
                  AND n.path NOT IN (SELECT g.path FROM notes g WHERE g.kind = 'user' AND {generated_sql("g.frontmatter")})
                  AND NOT regexp_matches(n.path, '{UNLINKABLE_PATH}') {admitted})"""
    return sql, params


_COVERED_L0 = "(SELECT unnest(children) FROM summaries WHERE level = 1)"


def l0_buffer(index: Index, settings: TreeSettings, tree: str) -> list[BufferItem]:
    sql, params = tree_leaves_sql(index, settings, tree)
    rows = index.query(  # a leaf in two notes (a sync tool's conflict copy) is one item: the shorter path's
        f"""SELECT t.id, t.content_hash, t.token_count, t.ts, t.note_path, t.seq FROM {sql} t
            WHERE t.id NOT IN {_COVERED_L0}
            QUALIFY {one_copy_sql("t.id", "t.note_path")}""",
        params,
    )
    # (time, note path, position), no time last; sorted here: DuckDB's sort costs more at this size
    rows.sort(key=lambda r: leaf_order(r[3], r[4], r[5]))
    return [BufferItem(r[0], r[1], int(r[2]), r[3], r[4], int(r[5])) for r in rows]


def gray_waiting(index: Index, settings: TreeSettings, tree: str | None = None) -> dict[str, GrayWaiting]:
    """Per tree (or only `tree`), its gray leaves: admitted or dropped once the LLM (or, with
    none, the rules) decides. None without an `admission` table."""
    if not (has_table(index, "admission") and has_columns(index, "admission", ("leaf_id", "decision"))):
        return {}
    sql, params = tree_leaves_sql(index, settings, tree, decision="gray")
    rows = index.query(
        f"""SELECT t.tree, t.ts, t.note_path, t.seq FROM {sql} t
            WHERE t.id NOT IN {_COVERED_L0}
            QUALIFY {one_copy_sql("t.id", "t.note_path")}""",
        params,
    )
    keys: dict[str, list[tuple[bool, datetime, str, int]]] = {}
    for name, ts, note_path, seq in rows:
        keys.setdefault(str(name), []).append(leaf_order(ts, note_path, int(seq)))
    return {name: GrayWaiting(len(found), min(found)) for name, found in sorted(keys.items())}


def level_buffer(index: Index, tree: str, level: int) -> list[BufferItem]:
    """Level-`level` summaries of `tree` that no summary one level up has as a child; a summary
    held by two notes (a sync tool's conflict copy) once, by the shorter path's: sealed twice
    into one parent, it had made the parent stale at once, and the daemon re-sealed it forever."""
    rows = index.query(
        f"""SELECT s.id, {SUMMARY_TEXT_SHA.format(path="s.note_path")},
                  (SELECT coalesce(sum(token_count), 0) FROM leaves x WHERE x.note_path = s.note_path),
                  s.time_start, s.note_path
           FROM summaries s JOIN notes n ON n.path = s.note_path
           LEFT JOIN leaves fl ON fl.id = s.leaf_ids[1]
           WHERE s.tree = ? AND s.level = ?
             AND s.id NOT IN (SELECT unnest(children) FROM summaries p WHERE p.tree = ? AND p.level = ?)
           QUALIFY {one_copy_sql("s.id", "s.note_path")}
           ORDER BY s.time_start NULLS LAST, fl.ts NULLS LAST, fl.note_path NULLS LAST, fl.seq NULLS LAST, s.id""",
        [tree, level, tree, level + 1],
    )
    return [BufferItem(r[0], r[1], int(r[2]), r[3], r[4]) for r in rows]


def buffer(index: Index, settings: TreeSettings, tree: str, level: int) -> list[BufferItem]:
    return l0_buffer(index, settings, tree) if level == 0 else level_buffer(index, tree, level)


def tree_states(index: Index, settings: TreeSettings, tree: str | None = None) -> dict[str, TreeState]:
    """Buffer sizes of every tree (or one), in two queries, once per committed state of the
    index (read-only: callers share the result). The daemon's tree check after each save asks
    twice, for sealing and for flushing, and at 50k notes each time joined every leaf with its
    note and its admission (0.5 s, +140 MB); the second is answered from the first when sealing
    wrote nothing."""
    return index.cached(f"tree_states:{tree}:{settings!r}", lambda _: _tree_states(index, settings, tree))


def _tree_states(index: Index, settings: TreeSettings, tree: str | None) -> dict[str, TreeState]:
    states: dict[str, TreeState] = {}
    sql, params = tree_leaves_sql(index, settings, tree)
    for name, leaves, items, tokens, newest in index.query(
        f"""SELECT t.tree, count(*), count(*) FILTER (WHERE t.id NOT IN {_COVERED_L0}),
                   coalesce(sum(t.token_count) FILTER (WHERE t.id NOT IN {_COVERED_L0}), 0),
                   max(t.active) FILTER (WHERE t.id NOT IN {_COVERED_L0})
            FROM (SELECT * FROM {sql} x
                  QUALIFY {one_copy_sql("x.id", "x.note_path")}) t
            GROUP BY t.tree""",
        params,
    ):
        states[name] = TreeState(name, int(leaves), int(items), int(tokens), newest)
    where = "WHERE s.tree = ?" if tree is not None else ""
    params = [tree] if tree is not None else []
    for name, level, buffered, total in index.query(
        f"""WITH covered AS (
                SELECT DISTINCT tree, level - 1 AS level, unnest(children) AS id FROM summaries WHERE level > 1)
            SELECT s.tree, s.level, count(DISTINCT s.id) FILTER (WHERE c.id IS NULL), count(DISTINCT s.id)
            FROM summaries s LEFT JOIN covered c ON c.tree = s.tree AND c.level = s.level AND c.id = s.id
            {where} GROUP BY s.tree, s.level""",
        params,
    ):
        state = states.setdefault(name, TreeState(name))
        if buffered:
            state.levels[int(level)] = int(buffered)
        if total:
            state.max_level = max(state.max_level, int(level))
    return dict(sorted(states.items()))
