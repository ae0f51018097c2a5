"""One entry for every `memory_tree` mode, taking JSON-style arguments.

The HTTP API, the MCP server and the CLI all call `run_mode(memory, mode, args)`, so each mode
validates its arguments once and every adapter maps the same errors; `walk` and `search`
without a `limit` return the vault's `[search] limit` of hits (set here, so for every adapter).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from vaultmind.arguments import whole_number
from vaultmind.errors import UsageError
from vaultmind.index.lexical import compatibility_folded, terms
from vaultmind.retrieval import modes
from vaultmind.retrieval.budget import EVIDENCE_BUDGET
from vaultmind.retrieval.evidence import (
    format_evidence,
    is_grounded,
    salient_terms,
    source_words,
    unknown_words,
)
from vaultmind.retrieval.search import search
from vaultmind.retrieval.walk import walk

if TYPE_CHECKING:
    from vaultmind.retrieval.view import MemoryView

MODES = (
    "walk", "search", "search_entities", "query_source", "drill_down", "cover_window", "fetch_leaves", "ingest_document",
)  # fmt: skip


# Each mode's arguments: another is a mistake (a misspelt "budget" would otherwise be ignored)
ARGUMENTS: dict[str, tuple[str, ...]] = {
    "walk": ("query", "limit", "reference_time", "evidence", "budget_tokens"),
    "search": ("query", "limit"),
    "search_entities": ("query", "kind", "limit"),
    "query_source": ("source_id", "kind", "since", "until", "query", "limit"),
    "drill_down": ("node_id", "depth", "limit"),
    "cover_window": ("start", "end", "limit"),
    "fetch_leaves": ("ids",),
    "ingest_document": ("title", "body", "source_id", "source_ref"),
}


# A question's length (`query` of every mode that takes one), the same for the API, MCP and the
# command line: a question reads each of its words' postings, so a pasted book would hold a
# daemon's request thread for seconds per thousand words.
MAX_QUESTION_CHARS = 2000


def refuse_stray(given: Iterable[str], known: Iterable[str], *, noun: str, where: str, hint: str) -> None:
    """A UsageError naming the keys of `given` not in `known`, if any (a misspelt "budget" is
    never ignored): "unknown argument 'budget' for walk", "unknown key 'x' in the request"."""
    stray = sorted(set(given) - set(known))
    if stray:
        raise UsageError(f"unknown {noun}{'s' if len(stray) > 1 else ''} {', '.join(map(repr, stray))} {where}", hint=hint)


def run_mode(memory: MemoryView, mode: str, args: dict[str, Any]) -> dict[str, Any]:
    handler = _HANDLERS.get(mode)
    if handler is None:
        raise UsageError(f"unknown mode {mode!r}", hint="one of: " + ", ".join(MODES))
    refuse_stray(args, ARGUMENTS[mode], noun="argument", where=f"for {mode}", hint=f"{mode} takes " + ", ".join(ARGUMENTS[mode]))
    question = args.get("query")
    if isinstance(question, str) and len(question) > MAX_QUESTION_CHARS:
        raise UsageError(
            f"'query' is {len(question):,} characters; a question is at most {MAX_QUESTION_CHARS:,}",
            hint="ask about its main words, or ingest the text (ingest_document) and search it",
        )
    if isinstance(question, str):  # "Ｈａｒｂｏｒ Ｈａｌｌ" is Harbor Hall, a name and its words
        args = {**args, "query": compatibility_folded(question)}
    return handler(memory, args)


def _walk(memory: MemoryView, args: dict[str, Any]) -> dict[str, Any]:
    question = _str(args, "query")
    result = walk(
        memory,
        question,
        limit=modes.check_limit(_int(args, "limit", memory.config.search_limit)),
        reference_time=_time(args, "reference_time", keep_offset=True),
    )
    query = result.get("query") or {}
    window = set(terms((query.get("time_window") or {}).get("text", "")))  # the window says them
    searched = [t for t in query.get("content_terms") or () if t not in window]
    # "how much is the hotel?" in a memory that never says "hotel": said first, in JSON and text
    unknown = not_in_memory(memory, question, searched, named=[e["surface"] for e in query.get("entities") or ()])
    read = dict(query.get("corrected") or {})  # "lauch" read as "launch"
    asked = terms(re.sub(r"\w+", lambda m: read.get(m.group(0).lower(), m.group(0)), question))
    # "what was it?": nothing names what it asks about; said in every answer, as the evidence says it
    grounded = is_grounded(query, salient_terms(memory.leaves, asked))
    if "query" in result:
        result["query"]["unknown"] = unknown
        result["query"]["grounded"] = grounded
    if _bool(args, "evidence"):
        result["evidence"] = format_evidence(
            result,
            budget_tokens=_int(args, "budget_tokens", EVIDENCE_BUDGET),
            grounded=grounded,
            unknown=unknown,
            question=question,
            vault=memory.config.vault,
        )
    return result


def not_in_memory(memory: MemoryView, question: str, searched: Iterable[str], named: Iterable[str] = ()) -> list[str]:
    """The question's searched words the memory never mentions (`unknown_words`), but for a word
    naming a kind or platform of its sources: "who wrote in the slack channel?" of a memory of
    Slack's messages, which never say "slack"."""
    unknown = unknown_words(memory.leaves, question, set(searched), named=list(named))
    if unknown:
        sources = source_words(memory.index)
        unknown = [word for word in unknown if not frozenset(terms(word)) <= sources]
    return unknown


def _search(memory: MemoryView, args: dict[str, Any]) -> dict[str, Any]:
    """`search`'s hits, and `query.unknown` as walk's: "zebrafish" in a memory that never says it
    is said so, not answered by ten unrelated hits alone."""
    question = _str(args, "query")
    result = search(memory, question, limit=modes.check_limit(_int(args, "limit", memory.config.search_limit)))
    return {**result, "query": {"unknown": not_in_memory(memory, question, terms(question))}}


_HANDLERS: dict[str, Callable[[MemoryView, dict[str, Any]], dict[str, Any]]] = {
    "walk": _walk,
    "search": _search,
    "search_entities": lambda m, a: modes.search_entities(
        m, _str(a, "query"), kind=_opt_str(a, "kind"), limit=_int(a, "limit", 10)
    ),
    "query_source": lambda m, a: modes.query_source(
        m,
        source_id=_opt_str(a, "source_id"),
        kind=_opt_str(a, "kind"),
        since=_time(a, "since"),
        until=_time(a, "until"),
        query=_opt_str(a, "query"),
        limit=_int(a, "limit", 50),
    ),
    "drill_down": lambda m, a: modes.drill_down(
        m, _str(a, "node_id"), depth=_int(a, "depth", 1), limit=_int(a, "limit", 100)
    ),
    "cover_window": lambda m, a: modes.cover_window(
        m, _required_time(a, "start"), _required_time(a, "end"), limit=_int(a, "limit", 100)
    ),
    "fetch_leaves": lambda m, a: modes.fetch_leaves(m, _str_list(a, "ids")),
    "ingest_document": lambda m, a: m.ingest_document(
        _str(a, "title"), _str(a, "body"), _str(a, "source_id"), source_ref=_opt_str(a, "source_ref")
    ),
}


def _name(key: str) -> str:
    """An argument as an error names it: its key, as the agent or the API client wrote it (the
    command line puts its flag beside it: `cli/query.py`'s `as_flags`)."""
    return f"'{key}'"


def _str(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{_name(key)} must be a non-empty string")
    return _unicode(key, value)


def _opt_str(args: dict[str, Any], key: str) -> str | None:
    """An optional string argument: absent, null or "" are None."""
    value = args.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise UsageError(f"{_name(key)} must be a string")
    return _unicode(key, value)


def _unicode(key: str, value: str) -> str:
    """`value`, when it can be written as UTF-8 (a lone surrogate, half an emoji cut by a
    client, cannot)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(f"{_name(key)} is not valid Unicode (at character {exc.start})") from exc
    return value


def _bool(args: dict[str, Any], key: str) -> bool:
    value = args.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise UsageError(f"{_name(key)} must be true or false")
    return value


def _str_list(args: dict[str, Any], key: str) -> list[str]:
    value = args.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{_name(key)} must be a list of strings")
    return [_unicode(key, v) for v in value]


def _int(args: dict[str, Any], key: str, default: int) -> int:
    value = whole_number(args.get(key), _name(key), least=1)
    return default if value is None else value


def _time(args: dict[str, Any], key: str, *, keep_offset: bool = False) -> datetime | None:
    """`args[key]` as a naive UTC datetime; with `keep_offset`, a time given with an offset
    keeps it (the asker's calendar: `walk` reads "yesterday" on it)."""
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise UsageError(f"{_name(key)} must be an ISO 8601 date or time")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise UsageError(f"{_name(key)} = {value!r} is not an ISO 8601 date or time") from exc
    try:
        utc = parsed.astimezone(UTC).replace(tzinfo=None) if parsed.tzinfo else parsed
    except OverflowError as exc:  # 0001-01-01T00:00+14:00 is before the calendar's first day in UTC
        raise UsageError(f"{_name(key)} = {value!r} is outside the calendar vaultmind can count in") from exc
    return parsed if keep_offset else utc


def _required_time(args: dict[str, Any], key: str) -> datetime:
    value = _time(args, key)
    if value is None:
        raise UsageError(f"{_name(key)} is required")
    return value
