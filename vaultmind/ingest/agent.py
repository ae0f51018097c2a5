"""Agent transcripts: OpenAI-style message lists, as JSON or JSON Lines.

Shapes read: `[{role, content, …}, …]` (one session named after the file), `{id, messages:
[…]}`, a JSON array of such sessions, JSON Lines of messages or of sessions, JSON Lines whose
lines wrap a message as `{"message": {role, content}, "uuid", "timestamp", "sessionId"}` (Claude
Code), and a Codex CLI rollout (`session_meta`, then `response_item` lines whose `payload` is a
message; its `event_msg` lines repeat them and are skipped).

What is kept: the prose of `user` and `assistant` turns, in order; a `content` that is one
object (not a string or a list of parts) is read as a part, else kept as a JSON code block; so
is a part of a list of no kind vaultmind knows (a message written before such parts were kept
keeps its text).
What is dropped:
- system / developer prompts, `tool` / `function` results, `tool_calls` / `function_call`, and
  content parts of type tool_use, tool_result, function_call(_output), thinking, reasoning
  (and, in a list, any `…tool_use`, `…tool_result`, `…_call`, `…_call_output`);
  `<tool_call>…</tool_call>`-style blocks inside text; a message that is only a tool call's JSON;
- what the agent wrote into a user turn that the user did not type (`agent_injected`): slash
  command markup and its output, an interruption's mark, AGENTS.md, reminders;
- base64 payloads: data URIs become `[image]` (or `[data]`), image parts `[image]`;
- model-written recaps (`is_recap`): a flag (`is_summary`, `isCompactSummary`, `is_recap`, or a
  `name` / `metadata.type` of summary, recap, compaction), a message opening with "This session
  is being continued from a previous conversation", or an assistant message whose first line
  opens with a conversation-summary phrase (`RECAP_OPENINGS`).

One note per session (`sources/chat/agent/<session id>.md`). The session id is the
transcript's own (`id`, `session_id`, `sessionId`, `conversation_id`), else the file's name
and the hash of the session's first message (`transcript-3fa2c1d0`): the `transcript.json` of
two runs are two sessions, and the same transcript grown by new turns is the same one (lines
without a role above the first message, a summary, are not hashed; a note named by such a
line's hash before is found again: `agent_earlier`). A Claude Code subagent's turns
(`isSidechain`) are the agent's prompt and the subagent's answers (`SUBAGENT_AUTHORS`), never
the user's words. Message id = the message's own id,
else its 0-based position in the transcript; `source_ref` = `agent://session/<id>/<position>`.
A Claude Code `uuid` is unique across sessions (`SourceBatch.unique_ids`): a resumed session's
copy of the earlier one's turns is written once (`agent_resumed`).
Times come from the message (`timestamp`, `created_at`, `created`, `time`), else the session,
else the transcript file's modification time; a message without one is placed 1 µs after the
one before, so order is kept.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any
from urllib.parse import quote

from vaultmind.ingest.agent_injected import user_words
from vaultmind.ingest.common import (
    as_str,
    is_local_time,
    json_items,
    parse_time,
    read_text,
    strip_base64,
)
from vaultmind.ingest.errors import NotAnExport, ingest_error
from vaultmind.ingest.model import SourceBatch
from vaultmind.markdown.render import Message, SourceMeta

# a Claude Code subagent's turns (`isSidechain`): its prompt is the agent's, not the user's words
SUBAGENT_AUTHORS = {"user": "assistant (to subagent)", "assistant": "subagent"}
ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "model": "assistant"}
TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
IMAGE_PARTS = frozenset({"image_url", "image", "input_image", "output_image"})
# parts that are no prose (tool traffic, reasoning): dropped, in a list of parts or as the content
DROPPED_PARTS = frozenset(
    {"tool_use", "tool_result", "function_call", "function_call_output", "thinking", "redacted_thinking", "reasoning"}
)
# a part of a list that is tool traffic by its kind's name, as tool_use and tool_result are: a
# server's or an MCP server's tool (`server_tool_use`, `web_search_tool_result`,
# `mcp_tool_result`), an OpenAI built-in one (`web_search_call`, `computer_call_output`);
# dropped, as vaultmind always dropped such parts, not kept as parts of unknown kinds are
_TOOL_PART_RE = re.compile(r"(?:tool_use|tool_result|_call|_call_output)$")
RECAP_FLAGS = frozenset({"summary", "recap", "compaction", "conversation_summary", "compact_summary"})
RECAP_OPENINGS = (
    "summary of the conversation",
    "summary of our conversation",
    "conversation summary",
    "summary so far",
    "recap:",
    "here's a summary of our",
    "here is a summary of our",
    "here's a summary of the conversation",
    "here is a summary of the conversation",
    "here's a summary of this conversation",
    "here is a summary of this conversation",
    "here's a recap",
    "here is a recap",
    "to recap our conversation",
    "recap of our conversation",
    "recap of the conversation",
)
CONTINUATION = "this session is being continued from a previous conversation"
_TIME_KEYS = ("timestamp", "created_at", "created", "time", "create_time")
_ID_KEYS = ("id", "session_id", "sessionId", "conversation_id")
_TOOL_BLOCK_RE = re.compile(
    r"<(tool_call|tool_calls|tool_response|tool_result|function_call|function_calls|function_results"
    r"|environment_context|user_instructions)\b[^>]*>"
    r".*?</\1>",
    re.DOTALL,
)
_DECORATION = " \t#*_>`-"


def parse_agent(path: Path, *, tz: tzinfo = UTC, warn: Callable[[str], None] | None = None) -> list[SourceBatch]:
    """Parse one agent transcript file into one batch per session."""
    text = read_text(path)
    stripped = text.lstrip()
    if not stripped.startswith(("[", "{")):
        raise NotAnExport("not an agent transcript: not JSON", path=path)
    items, _ = json_items(path, text, warn)
    if not items:
        raise ingest_error(path, "no messages in the transcript", line=1)
    sessions: dict[str, _Session] = {}
    order: list[str] = []
    rollout = _rollout_id(items)
    for line, item in items:
        if not isinstance(item, dict):
            raise ingest_error(path, "expected a message or session object", line=line)
        if rollout is not None:  # Codex: `response_item` lines hold the messages, the rest are events
            if item.get("type") != "response_item" or not isinstance(item.get("payload"), dict):
                continue
            item = {**item["payload"], "timestamp": item.get("timestamp")}
            session = sessions.setdefault(rollout, _Session(rollout, None, named=True))
            session.messages.append((line, item))
            if rollout not in order:
                order.append(rollout)
            continue
        if isinstance(item.get("messages"), list):
            own = _first(item, _ID_KEYS)
            sid = own or (path.stem if len(items) == 1 else f"{path.stem}-{line}")
            session = sessions.setdefault(sid, _Session(sid, _first(item, ("title", "name")), named=own is not None))
            session.time = session.time or _opt_time(item, tz)
            session.messages.extend((line, m) for m in item["messages"])
        else:
            own = as_str(item.get("sessionId")) or as_str(item.get("session_id"))
            sid = own or path.stem
            session = sessions.setdefault(sid, _Session(sid, None, named=own is not None))
            # (a line without the id before those with it, a Claude Code summary line: the
            # session is still named by its own id, the file's name)
            session.named = session.named or own is not None
            session.messages.append((line, item))
        if sid not in order:
            order.append(sid)
    for session in sessions.values():
        if not session.named and session.messages:  # `transcript.json` of two runs: two sessions
            session.id = f"{session.id}-{_first_hash(session.messages)}"
    if not any(_role(raw) is not None for session in sessions.values() for _, raw in session.messages):
        # (a README, the agent's settings.json beside its transcripts: said and skipped in a folder)
        raise NotAnExport("not an agent transcript: no message has a role (user, assistant …)", path=path)
    fallback = datetime.fromtimestamp(path.stat().st_mtime, UTC).replace(microsecond=0)
    batches = []
    for sid in order:
        batch = _session_batch(path, sessions[sid], tz, fallback)
        if batch is not None:
            batches.append(batch)
    return batches


def _rollout_id(items: list[tuple[int, Any]]) -> str | None:
    """The session id of a Codex CLI rollout (`rollout-….jsonl`: a `session_meta` line, then
    `response_item` lines whose `payload` is a message, and `event_msg` lines that repeat what
    was said for the terminal), else None."""
    first = items[0][1] if items else None
    if isinstance(first, dict) and first.get("type") == "session_meta" and isinstance(first.get("payload"), dict):
        return as_str(first["payload"].get("id"))
    return None


def _first_hash(messages: list[tuple[int, Any]]) -> str:
    """The hash that names a session without an id of its own: of its first message (any role,
    a system prompt too), not of a line of metadata before it that has no role at all (a summary
    line, rewritten as the session goes on). A note an earlier vaultmind named by its first line
    is found again (`agent_earlier`)."""
    first = next((raw for _, raw in messages if _has_role(raw)), messages[0][1])
    text = json.dumps(first, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


class _Session:
    __slots__ = ("id", "legacy_id", "messages", "named", "time", "title")

    def __init__(self, sid: str, title: str | None, *, named: bool):
        self.id = sid
        self.title = title
        self.named = named  # the transcript gives the id (else it is the file's name and the first message's hash)
        self.legacy_id = sid  # the id before the hash was added
        self.time: tuple[datetime, bool] | None = None  # the session's time, and whether it was local (`_opt_time`)
        self.messages: list[tuple[int, Any]] = []


def _role(raw: object) -> str | None:
    """The role of a transcript's message (`raw`, or the `message` it wraps), or None."""
    if not isinstance(raw, dict):
        return None
    item = raw["message"] if isinstance(raw.get("message"), dict) else raw
    return ROLES.get(str(item.get("role") or raw.get("type") or "").strip().lower())  # ("User", "AI")


def _has_role(raw: object) -> bool:
    """Whether `raw` is a message of any role (`_role`'s, or another: "system", "tool"), not a
    line of metadata."""
    if not isinstance(raw, dict):
        return False
    item = raw["message"] if isinstance(raw.get("message"), dict) else raw
    return "role" in item or _role(raw) is not None


def _first(item: dict[str, Any], keys: Iterable[str]) -> str | None:
    for key in keys:
        value = as_str(item.get(key))
        if value:
            return value
    return None


def _opt_time(item: dict[str, Any], tz: tzinfo) -> tuple[datetime, bool] | None:
    """The time `item` gives, and whether it is a local one without a zone (read in `tz`)."""
    for key in _TIME_KEYS:
        value = item.get(key)
        if value is not None:
            try:
                return parse_time(value, tz), is_local_time(value)
            except (ValueError, OverflowError, OSError):
                return None
    return None


def _session_batch(path: Path, session: _Session, tz: tzinfo, fallback: datetime) -> SourceBatch | None:
    messages: list[Message] = []
    # a message's texts as vaultmind read it before: parts of unknown kinds left out, the agent's injected context kept
    earlier: list[tuple[str, str]] = []
    unique: set[str] = set()  # ids that are unique across sessions (Claude Code's `uuid`s)
    previous: tuple[datetime, bool] | None = None
    local_times = False  # a message kept has a local time (its own, or the one it follows)
    first_user = ""
    for index, (line, raw) in enumerate(session.messages):
        if not isinstance(raw, dict):
            raise ingest_error(path, f"session {session.id!r}: message {index} is not an object", line=line)
        item = raw["message"] if isinstance(raw.get("message"), dict) else raw
        own = _opt_time(raw, tz) or (_opt_time(item, tz) if item is not raw else None)
        if own is None and any(k in raw for k in _TIME_KEYS):
            raise ingest_error(
                path, f"session {session.id!r}: message {index} has an unreadable time", line=line
            )
        if own is None and previous is not None:
            own = previous[0] + timedelta(microseconds=1), previous[1]
        timestamp, local = own or session.time or (fallback, False)
        previous = timestamp, local
        role = _role(raw)
        if role is None or raw.get("isMeta") is True or is_recap(raw) or is_recap(item):
            continue
        read = _prose(item.get("content"))
        text = user_words(read) if role == "user" else read  # (what the agent injected: not the user's words)
        if not text or (role == "assistant" and _opens_recap(text)) or _is_tool_json(text):
            continue
        first_user = first_user or (text if role == "user" and raw.get("isSidechain") is not True else "")
        message_id = as_str(raw.get("uuid")) or as_str(item.get("id")) or str(index)
        if message_id == as_str(raw.get("uuid")):
            unique.add(message_id)
        for before in {read, _prose(item.get("content"), unknown=False)} - {text, ""}:
            earlier.append((message_id, before))  # a note written then keeps it: known, not rewritten
        local_times = local_times or local
        messages.append(
            Message(
                message_id=message_id,
                author=SUBAGENT_AUTHORS[role] if raw.get("isSidechain") is True else role,
                timestamp=timestamp,
                text=text,
                source_ref=f"agent://session/{quote(session.id, safe='')}/{index}",
            )
        )
    if not messages:
        return None
    title = session.title or _title_from(first_user) or f"Agent session {session.id}"
    meta = SourceMeta(kind="chat", source_id=f"agent:{session.id}", scope="agent", title=title)
    legacy = None if session.named else session.legacy_id  # the file's name alone, as it was
    return SourceBatch(
        meta=meta,
        messages=tuple(messages),
        bucket="whole",
        note_name=session.id,
        legacy_source_id=f"agent:{legacy}" if legacy else None,
        legacy_note_name=legacy,
        earlier_texts=tuple(sorted(earlier)),
        unique_ids=frozenset(unique),
        local_times=local_times,
    )


def is_recap(item: dict[str, Any]) -> bool:
    """True for a message flagged as a model-written summary of the conversation."""
    metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    assert isinstance(metadata, dict)
    for source in (item, metadata):
        if any(source.get(flag) is True for flag in ("is_summary", "isCompactSummary", "is_recap")):
            return True
        for key in ("type", "kind", "name"):
            value = source.get(key)
            if isinstance(value, str) and value.lower() in RECAP_FLAGS:
                return True
    content = item.get("content")
    text = content if isinstance(content, str) else _prose(content)
    return text.lstrip(_DECORATION).lower().startswith(CONTINUATION)


def _opens_recap(text: str) -> bool:
    first = next((line for line in text.split("\n") if line.strip()), "")
    opening = first.strip(_DECORATION).lower().replace("\u2019", "'")
    return opening.startswith(RECAP_OPENINGS)


def _prose(content: Any, *, unknown: bool = True) -> str:
    """The user-visible prose of a message's content (a string, a list of parts, or one object).
    A part of a list of no kind vaultmind knows is kept as a content object is (`_object_prose`);
    `unknown=False` drops it, as vaultmind did before (`SourceBatch.earlier_texts`)."""
    if isinstance(content, str):
        pieces = [content]
    elif isinstance(content, dict):
        pieces = [_object_prose(content)]
    elif isinstance(content, list):
        pieces = []
        for part in content:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict):
                kind = str(part.get("type") or "")
                if kind in TEXT_PARTS and isinstance(part.get("text"), str):
                    pieces.append(part["text"])
                elif kind in IMAGE_PARTS:
                    pieces.append("[image]")
                elif unknown and not _TOOL_PART_RE.search(kind):
                    pieces.append(_object_prose(part))
    else:
        return ""
    text = "\n\n".join(p for p in pieces if p.strip())
    return strip_base64(_TOOL_BLOCK_RE.sub("", text)).strip()


def _object_prose(content: dict[str, Any]) -> str:
    """A content that is one object rather than a string or a list: a part on its own
    (`{"type": "text", "text": …}`), a `parts` list, or an object of no kind vaultmind knows,
    kept as a compact JSON code block so nothing a transcript says is silently dropped. Tool
    traffic and reasoning are dropped as they are in a list of parts."""
    kind = str(content.get("type") or "")
    if kind in DROPPED_PARTS:
        return ""
    text = content.get("text")
    if isinstance(text, str) and kind in TEXT_PARTS | {""}:
        return text
    if isinstance(text, dict) and isinstance(text.get("value"), str) and kind in TEXT_PARTS:
        return str(text["value"])  # OpenAI Assistants: {"type": "text", "text": {"value": …, "annotations": […]}}
    if kind in IMAGE_PARTS:
        return "[image]"
    if not kind and isinstance(content.get("parts"), list):  # {"content_type": "text", "parts": [...]}
        return _prose(content["parts"])
    if not content:
        return ""
    return f"```json\n{json.dumps(content, ensure_ascii=False, sort_keys=True)}\n```"


def _is_tool_json(text: str) -> bool:
    """A message that is only a JSON tool call (`{"name": …, "arguments": …}` and the like)."""
    if not text.startswith("{"):
        return False
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return False
    keys = set(data) if isinstance(data, dict) else set()
    return bool(keys & {"tool", "tool_calls", "function", "function_call"}) or (
        "name" in keys and bool(keys & {"arguments", "parameters", "input"})
    )


def _title_from(text: str) -> str:
    first = next((line.strip() for line in text.split("\n") if line.strip()), "")
    return first if len(first) <= 80 else first[:79].rstrip() + "…"
