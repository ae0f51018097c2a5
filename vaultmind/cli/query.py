"""`vaultmind query <mode> …`: every memory_tree mode from the command line."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from vaultmind.cli.args import entity_name, iso_time, positive_int, question
from vaultmind.cli.context import config_from_args, through_daemon_or_local
from vaultmind.cli.output import PROGRESS_AFTER_S, emit, print_hits, safe
from vaultmind.errors import UsageError
from vaultmind.plural import counted
from vaultmind.retrieval.budget import EVIDENCE_BUDGET
from vaultmind.shell import command_line

if TYPE_CHECKING:
    from vaultmind.config import Config
    from vaultmind.held_memory import HeldMemory

LIMIT_HELP = "number of hits (default: [search] limit in the vault's config.toml, 10 unless set; at most 500)"
ZONE_HELP = "without an offset such as +02:00, in this machine's time zone, as --at"


def add_query_parser(sub: Any, vault_args: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "query", help="ask the memory (modes: walk, search, entities, source, window, leaves, drill; ingest writes)"
    )
    modes = p.add_subparsers(title="modes", metavar="MODE")

    q = modes.add_parser(
        "walk", help="hybrid retrieval: lexical + dense + entities + graph + time (the default way to ask)"
    )
    q.add_argument("text", type=question, help="the question")
    q.add_argument("--limit", type=positive_int, default=None, help=LIMIT_HELP)
    q.add_argument(
        "--at",
        type=iso_time,
        default=None,
        help="reference time for 'last week' etc. (ISO 8601; an offset such as +02:00 is the calendar "
        "'yesterday' is read on; without one, this machine's time zone; default now). It places "
        "the question's time words; messages written after it are still searched",
    )
    q.add_argument("--evidence", action="store_true", help="also print a cited evidence block for agents")
    q.add_argument(
        "--budget", type=positive_int, default=None, help=f"with --evidence: token budget of the evidence block (default {EVIDENCE_BUDGET})"
    )
    q.set_defaults(
        handler=lambda a: _run(
            a,
            "walk",
            {
                "query": a.text,
                "limit": a.limit,
                "reference_time": a.at if a.at is not None else datetime.now().astimezone().isoformat(),
                "evidence": a.evidence,
                "budget_tokens": _evidence_budget(a),
            },
        )
    )
    vault_args(q)

    q = modes.add_parser(
        "search", help="ranked leaves for a text query (lexical + dense, reciprocal-rank fusion)"
    )
    q.add_argument("text", type=question, help="what to look for")
    q.add_argument("--limit", type=positive_int, default=None, help=LIMIT_HELP)
    q.set_defaults(handler=lambda a: _run(a, "search", {"query": a.text, "limit": a.limit}))
    vault_args(q)

    q = modes.add_parser("entities", help="fuzzy match over entity names and aliases (the api's search_entities)")
    q.add_argument("text", type=entity_name, help="a name, alias, email or handle")
    q.add_argument("--kind", default=None, help="person, org, place, email, topic, …")
    q.add_argument("--limit", type=positive_int, default=None, help="number of entities (default 10)")
    q.set_defaults(
        handler=lambda a: _run(a, "search_entities", {"query": a.text, "kind": a.kind, "limit": a.limit})
    )
    vault_args(q)

    q = modes.add_parser("source", help="leaves of one source or kind, in a time window (the api's query_source)")
    q.add_argument("--source-id", default=None, help='e.g. "slack:acme/general", or "notes:Meetings" (a hit\'s tree)')
    q.add_argument("--kind", default=None, help="chat, email, document or note")
    q.add_argument("--since", default=None, help=f"ISO 8601 start (inclusive; {ZONE_HELP})")
    q.add_argument("--until", default=None, help=f"ISO 8601 end (exclusive; {ZONE_HELP})")
    q.add_argument(
        "--rerank", default=None, metavar="TEXT", help="re-rank by TEXT: its words and its meaning (lexical and dense fused, as search does)"
    )
    q.add_argument("--limit", type=positive_int, default=None, help="number of leaves (default 50, at most 500)")
    q.set_defaults(
        handler=lambda a: _run(
            a,
            "query_source",
            {
                "source_id": a.source_id,
                "kind": a.kind,
                "since": a.since,
                "until": a.until,
                "query": a.rerank,
                "limit": a.limit,
            },
        )
    )
    vault_args(q)

    q = modes.add_parser("window", help="the fewest nodes covering a time window (the api's cover_window)")
    q.add_argument("start", help=f"ISO 8601 start (inclusive; {ZONE_HELP})")
    q.add_argument("end", help=f"ISO 8601 end (exclusive; {ZONE_HELP})")
    q.add_argument("--limit", type=positive_int, default=None, help="number of nodes (default 100, at most 500)")
    q.set_defaults(
        handler=lambda a: _run(a, "cover_window", {"start": a.start, "end": a.end, "limit": a.limit})
    )
    vault_args(q)

    q = modes.add_parser(
        "leaves", help="nodes by id (leaves, summaries, entities), in the order given (the api's fetch_leaves)"
    )
    q.add_argument(
        "ids", nargs="+", help="node ids (the `id` of a hit), or unique prefixes of at least 6 characters; at most 500"
    )
    q.set_defaults(handler=lambda a: _run(a, "fetch_leaves", {"ids": a.ids}))
    vault_args(q)

    q = modes.add_parser(
        "drill", help="a summary's children, breadth first; an entity's leaves, newest first (the api's drill_down)"
    )
    q.add_argument(
        "node_id", help="the `id` of a hit (a summary or an entity), or a unique prefix of at least 6 characters"
    )
    q.add_argument("--depth", type=positive_int, default=1, help="levels of a summary to go down (default 1, at most 4)")
    q.add_argument("--limit", type=positive_int, default=None, help="number of nodes (default 100, at most 500)")
    q.set_defaults(handler=lambda a: _run(a, "drill_down", {"node_id": a.node_id, "depth": a.depth, "limit": a.limit}))
    vault_args(q)

    q = modes.add_parser(
        "ingest",
        help="write a document into the vault and index it (the api's ingest_document, its one write)",
        description=(
            "Write a document given as text as a source note under sources/document/agent/ and index it at once; "
            "its leaves are the answer. The same --source-id again with another title or text is its next version."
        ),
    )
    q.add_argument("title", help="the document's title")
    q.add_argument("--source-id", required=True, help="the document's own id (the same id again: its next version)")
    q.add_argument("--source-ref", default=None, help="where it came from (a URL, an id)")
    q.add_argument("--body", default=None, help="its text (Markdown); without it, read from standard input")
    q.set_defaults(handler=_ingest)
    vault_args(q)


# The modes' time arguments: `--at` (default now), `--since`, `--until`, a window's ends
TIMES = frozenset(("reference_time", "since", "until", "start", "end"))


def in_asker_zone(value: str) -> str:
    """A time the command line was given, with this machine's offset when it has none: one rule
    for every time of every mode, whether a daemon in another zone or this process answers
    (which reads a time without an offset as UTC), so "yesterday" is the asker's and a window's
    ends are the asker's clock times. A value that is no ISO time goes on as it is, for the
    error that names it."""
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return when.astimezone().isoformat() if when.tzinfo is None else when.isoformat()
    except (ValueError, OverflowError):  # (a year-1 time this machine's offset takes before the calendar)
        return value


def ask(
    config: Config, mode: str, mode_args: dict[str, Any], *, progress: bool = False, held: HeldMemory | None = None
) -> dict[str, Any]:
    """A mode's answer, as the command line and the MCP server get it: from the vault's daemon
    when one runs, else from the index opened here (`held`: the one the MCP server keeps
    between its calls), brought up to date with the vault first (`answer_here`)."""

    def local(memory: Any) -> dict[str, Any]:
        return answer_here(config, memory, mode, mode_args)

    from vaultmind.client import WORK_TIMEOUT_S

    # a document's write is waited for: an agent told "busy" would not know whether it was written
    timeout = WORK_TIMEOUT_S if mode == "ingest_document" else None
    answer: dict[str, Any] = through_daemon_or_local(
        config,
        lambda c: c.call("POST", "/v1/query", {"mode": mode, "args": mode_args}, timeout=timeout),
        local,
        progress=progress,
        held=held,
    )
    return answer


def answer_here(config: Config, memory: Any, mode: str, mode_args: dict[str, Any]) -> dict[str, Any]:
    """A mode's answer from the index opened in this process (no daemon runs), after the one
    sync every other path runs (`Memory.sync`: incremental, a stat of each note when nothing
    changed, and then nothing written: `changes_only`), so a note deleted since is never
    answered and one just saved is found. An index
    an older vaultmind built is not rebuilt for a question, one that cannot be written answers
    as it is: the answer's `notice` says either, with how to (said on stderr, an agent's MCP
    host showed it to nobody)."""
    from vaultmind.index.store import REBUILD_UNDER_WAY

    notice = None
    loaded_before = memory.load_seconds  # a memory kept from an earlier call (`HeldMemory`) loaded then
    if memory.index.scalar("SELECT count(*) FROM notes") == 0:
        if memory.index.get_meta("needs_rebuild") == REBUILD_UNDER_WAY:  # the wait is said, and why
            print("vaultmind: a rebuild of the index was interrupted; finishing it first", file=sys.stderr)
        memory.sync()
    elif memory.index.get_meta("needs_rebuild"):  # an index an older vaultmind built: the listing says it ("note: …")
        notice = (
            "this index was built by an older vaultmind and is not rebuilt yet, so these answers lack what "
            "this version derives from the notes and may miss notes changed since it was last synced; "
            f"run `{command_line('sync', '--vault', config.vault)}` once (or start `{command_line('serve', '--vault', config.vault)}`) to rebuild it"
        )
    else:
        notice = _brought_up_to_date(config, memory)
    result: dict[str, Any] = memory.query(mode, mode_args)
    if (loading := memory.load_seconds - loaded_before) > PROGRESS_AFTER_S:
        print(
            f"vaultmind: {loading:.1f} s of this went to loading the index into memory; "
            f"while `{command_line('serve', '--vault', config.vault)}` runs, it stays loaded and questions "
            "take milliseconds",
            file=sys.stderr,
        )
    if notice is not None:
        result["notice"] = "; ".join(filter(None, (result.get("notice"), notice)))
    return result


def _brought_up_to_date(config: Config, memory: Any) -> str | None:
    """Sync the index with the vault before a question is answered here; a sync that took long
    is said on stderr (its progress shows meanwhile on a terminal). None, or the answer's
    notice when the index could not be written (a read-only folder, a full disk): the
    question is answered from the index as it was, which may miss the latest changes."""
    import duckdb

    from vaultmind.errors import VaultmindError

    try:
        stats = memory.sync(changes_only=True)
    except (OSError, duckdb.Error, VaultmindError) as exc:
        return (
            f"the index could not be brought up to date with the vault ({exc}), so these answers may miss "
            "notes changed since it was last synced"
        )
    if stats.seconds > PROGRESS_AFTER_S:
        changed = stats.added + stats.modified + stats.renamed + stats.deleted
        print(
            f"vaultmind: {stats.seconds:.1f} s of this went to bringing the index up to date ({counted(changed, 'note')} "
            f"changed); while `{command_line('serve', '--vault', config.vault)}` runs, it keeps the index current",
            file=sys.stderr,
        )
    return None


def _ingest(args: argparse.Namespace) -> int:
    if args.body is None and sys.stdin.isatty():  # it would wait on the terminal, saying nothing
        raise UsageError(
            "`query ingest` reads the document's text from standard input, which is a terminal here",
            hint="pass --body TEXT, or pipe the text in: `cat notes.md | vaultmind query ingest TITLE --source-id ID`",
        )
    body = sys.stdin.read() if args.body is None else args.body
    ingest = {"title": args.title, "body": body, "source_id": args.source_id, "source_ref": args.source_ref}
    return _run(args, "ingest_document", ingest)


def _evidence_budget(args: argparse.Namespace) -> int:
    """The evidence block's budget; `--budget` without `--evidence` is refused, as it would
    size a block nothing prints."""
    if args.budget is not None and not args.evidence:
        raise UsageError("--budget sizes the evidence block, which only --evidence prints", hint="add --evidence, or leave --budget out")
    return int(args.budget or EVIDENCE_BUDGET)


# The command line's flags for the arguments it passes under another name
_FLAGS = {
    "reference_time": "--at", "budget_tokens": "--budget", "source_id": "--source-id", "since": "--since",
    "until": "--until", "start": "START", "end": "END", "kind": "--kind",
}  # fmt: skip
# an argument named, where the modes' messages name one ("'until' must be after 'since'", "'source_id'
# or 'kind' is needed"), not a value said back ("'kind' = 'since'", "unknown entity kind 'end'")
_ARGUMENT = re.compile(r"(?:^|(?<= or )|(?<= after ))'(" + "|".join(_FLAGS) + r")'")


def as_flags(exc: UsageError) -> UsageError:
    """A mode's error as the command line says it: each argument it names ("'start' …", as an
    agent or an API client wrote it) with the flag that sets it beside it, "'start' (START on the
    command line) …". The mode's answer, from a daemon or from here, names the argument only."""
    message = _ARGUMENT.sub(lambda named: f"{named.group(0)} ({_FLAGS[named.group(1)]} on the command line)", exc.message)
    return exc if message == exc.message else UsageError(message, path=exc.path, hint=exc.hint)


def _run(args: argparse.Namespace, mode: str, mode_args: dict[str, Any]) -> int:
    clean = {k: in_asker_zone(v) if k in TIMES else v for k, v in mode_args.items() if v is not None}
    config = config_from_args(args)
    try:
        result = ask(config, mode, clean, progress=True)
    except UsageError as exc:
        named = as_flags(exc)
        if named is exc:
            raise
        raise named from exc
    if args.json:
        emit(result)
    else:
        if ingested := result.get("ingested"):
            done = "written" if ingested["changed"] else "unchanged"
            print(f"vaultmind: {ingested['note']} {done} ({counted(ingested['leaves'], 'leaf', 'leaves')})")
            for warning in ingested["warnings"]:
                print(f"  warning: {warning}", file=sys.stderr)
        print_hits(result, config.vault, mode)
        if result.get("evidence"):
            print("\n" + safe(result["evidence"]))
    return 0
