"""`ingest_paths`: exports in, notes out — pick the adapter, parse everything, then write.

Parsing comes first for every path; only when all of them parsed does the writer touch the
vault, so a malformed export anywhere in the list writes nothing.

Chat format detection (`fmt="auto"`), by content rather than by name:
- a folder or `.zip` with Slack's `channels.json` / `users.json` → slack;
- a `.zip` with a `.txt` inside → whatsapp;
- JSON: a LoCoMo sample's `qa` list, `sample_id`, `speaker_a` or `dia_id` → locomo; a `mapping` tree → chatgpt; `date_unixtime` / `chats` / a Telegram chat `type`
  (`personal_chat`, `private_group` …) → telegram; `"ts"` with
  `"type": "message"` → slack (one channel); `"role"` → agent; `"author"` → generic;
  `"sender_name"` with `"timestamp_ms"` → instagram (messenger when its path names Facebook or
  Messenger);
- text whose first line is `[YYYY-MM-DD, HH:MM] …` → signal; other date-led lines → whatsapp;
- a `.md` whose first line is `[YYYY-MM-DD HH:MM:SS] Name: …` (signal-export's `chat.md`) → signal.
Other folders are walked: every `.json`, `.jsonl`, `.txt` and `.zip` inside is ingested, and
signal-export's `chat.md` files (not the `data.json` beside each); files whose format is not
recognised are skipped with a warning. The vault's own Markdown notes are never chats.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from datetime import tzinfo
from pathlib import Path
from typing import Literal

from vaultmind.errors import UsageError
from vaultmind.ingest import FORMATS, KINDS
from vaultmind.ingest.chat_formats import HEAD_BYTES, TELEGRAM_HTML_HINT, detect_chat_format, telegram_html
from vaultmind.ingest.document import DOCUMENT_KINDS, parse_document_paths_with_report
from vaultmind.ingest.documents_plan import document_note_bytes
from vaultmind.ingest.email import parse_email_paths_dated
from vaultmind.ingest.errors import IngestError, NotAnExport
from vaultmind.ingest.held_order import keep_held_orders
from vaultmind.ingest.locomo import parse_locomo_paths
from vaultmind.ingest.mailboxes import mail_file_kind
from vaultmind.ingest.maildates import date_warnings
from vaultmind.ingest.model import DocumentInput, IngestReport, SourceBatch
from vaultmind.ingest.parts import megabytes
from vaultmind.ingest.signal import named_by_folder
from vaultmind.ingest.walk import vault_note, vault_notes_skipped, walk_files
from vaultmind.ingest.writer import write_batches, write_documents
from vaultmind.model import Progress
from vaultmind.zones import zone

Kind = Literal["chat", "agent", "email", "document"]

_SUFFIXES = (".json", ".jsonl", ".txt", ".zip")
def _expand(
    kind: str, paths: Sequence[Path], fmt: str, report: IngestReport, vault: Path | None = None
) -> list[tuple[Path, str | None, bool]]:
    """(path, format, found in a folder) triples: files as given; folders walked (Slack export
    folders kept whole). A Markdown note of `vault` itself is no chat export (a note of yours
    whose first line reads as a Signal line was copied into a chat of made-up people)."""
    out: list[tuple[Path, str | None, bool]] = []
    notes: list[Path] = []  # the vault's own notes, said in one line
    for path in paths:
        if not path.exists():
            raise IngestError("no such file or folder", path=path)
        if vault_note(path, vault):
            notes.append(path)
            continue
        whole_slack = kind == "chat" and (
            fmt == "slack" or (fmt == "auto" and detect_chat_format(path) == "slack")
        )
        if not path.is_dir() or whole_slack:
            if _empty(path):
                report.warnings.append(f"{path}: an empty file; nothing to ingest")
            else:
                out.append((path, None, False))
            continue
        candidates = 0
        html_pages: list[Path] = []  # Telegram's HTML export: said once for the folder
        # a Slack export folder found in the walk is one export, as when given alone (its
        # channels' day files, read one by one, each read the whole export again, and its
        # channels.json, users.json … were said to be of no format)
        slack = kind == "chat" and fmt in ("auto", "slack")
        for child in walk_files(path, report.warnings, whole=_is_slack_export if slack else None):
            if child.is_dir():
                candidates += 1
                out.append((child, "slack", True))
                continue
            if kind == "chat" and telegram_html(child):
                if not _beside_telegram_json(child, path):  # (both formats exported: the JSON is read)
                    html_pages.append(child)
                continue
            if child.suffix.lower() not in _SUFFIXES and not (kind == "chat" and _signal_export_chat(child)):
                continue
            if vault_note(child, vault):
                notes.append(child)
                continue
            if kind == "chat" and _beside_signal_chat(child):
                continue
            candidates += 1
            if _empty(child):
                report.warnings.append(f"{child}: an empty file; skipped")
                continue
            if kind == "agent":
                found: str | None = "agent"
            else:
                try:
                    found = fmt if fmt != "auto" else detect_chat_format(child)
                except IngestError as exc:  # a zip that is none (cut short, renamed), a file that cannot be read
                    report.warnings.append(f"{exc}; skipped")
                    continue
            if found is None:
                report.warnings.append(f"{child}: format not recognised; skipped")
                continue
            out.append((child, found, True))
        if html_pages:
            report.warnings.append(_telegram_html_found(html_pages))
        elif not candidates:  # (files skipped as unrecognised have a warning each)
            what = "agent transcripts" if kind == "agent" else "chat exports"
            report.warnings.append(_nothing_found([path], f"{what}: " + ", ".join(sorted(_SUFFIXES))))
    if notes:
        report.warnings.append(vault_notes_skipped(notes, "chat exports"))
    return out


def _telegram_html_found(pages: Sequence[Path]) -> str:
    """What to say of the pages of Telegram's HTML export found in a folder: which, and which
    export to make instead (before: "nothing to ingest here")."""
    more = f" and {len(pages) - 1} more" if len(pages) > 1 else ""
    return f"{pages[0]}{more}: Telegram's HTML export, which vaultmind does not read; skipped — {TELEGRAM_HTML_HINT}"


def _beside_telegram_json(page: Path, root: Path) -> bool:
    """Whether a page of Telegram's HTML export has the export's `result.json` beside it or
    above it, up to the folder given (an export made in both formats)."""
    folder = page.parent
    while True:
        if (folder / "result.json").is_file():
            return True
        if folder == root or folder.parent == folder:
            return False
        folder = folder.parent


def _signal_export_chat(path: Path) -> bool:
    """Whether `path`, found in a folder, is signal-export's `<chat>/chat.md`: named so, in
    Signal's shape (other Markdown files — a log of yours whose lines start
    `[2024-05-01 09:12:33] Standup: ` — are no chats, and not said to be)."""
    try:
        return path.suffix.lower() == ".md" and named_by_folder(path) and detect_chat_format(path) == "signal"
    except IngestError:
        return False


def _beside_signal_chat(path: Path) -> bool:
    """signal-export's `data.json` beside its `chat.md`: the same messages again, read from
    the `chat.md` (not said to be of no format, once per chat)."""
    return path.name == "data.json" and _signal_export_chat(path.with_name("chat.md"))


def _is_slack_export(folder: Path) -> bool:
    return detect_chat_format(folder) == "slack"


def _empty(path: Path) -> bool:
    """Whether `path` is a file holding nothing but white space, or an empty JSON array or
    object (an export of nothing, a placeholder): said as such, not as a format not recognised."""
    try:
        if not path.is_file() or path.stat().st_size > HEAD_BYTES:
            return False
        return b"".join(path.read_bytes().strip(b"\x00\xef\xbb\xbf\xff\xfe").split()) in (b"", b"[]", b"{}")
    except OSError:
        return False


def parse_chat_path(
    path: Path, fmt: str, tz: tzinfo, *, date_order: str | None = None, warn: Callable[[str], None] | None = None
) -> list[SourceBatch]:
    """Parse one chat export in format `fmt` ("auto" detects it)."""
    if fmt in ("auto", "telegram") and telegram_html(path):
        raise IngestError("Telegram's HTML export, which vaultmind does not read", path=path, hint=TELEGRAM_HTML_HINT)
    if fmt == "auto":
        detected = detect_chat_format(path)
        if detected is None and mail_file_kind(path) is not None:  # an email given to `ingest chat`
            raise IngestError(
                "not a chat export: an email file", path=path, hint=f"ingest it with `vaultmind ingest email {shlex.quote(str(path))}`"
            )
        if detected is None:
            raise IngestError(
                "cannot tell which chat export this is",
                path=path,
                hint=f"pass --format {'|'.join(f for f in FORMATS if f != 'auto')} (docs/ingest.md)",
            )
        fmt = detected
    if fmt == "locomo":
        return parse_locomo_paths([path])
    if fmt == "slack":
        from vaultmind.ingest.slack import parse_slack

        return parse_slack(path, warn=warn)
    if fmt == "whatsapp":
        from vaultmind.ingest.whatsapp import parse_whatsapp

        return parse_whatsapp(path, tz=tz, date_order=date_order, warn=warn)
    if fmt == "telegram":
        from vaultmind.ingest.telegram import parse_telegram

        return parse_telegram(path, tz=tz, warn=warn)
    if fmt == "signal":
        from vaultmind.ingest.signal import parse_signal

        return parse_signal(path, tz=tz)
    if fmt in ("instagram", "messenger"):
        from vaultmind.ingest.instagram import parse_instagram

        return parse_instagram(path, platform=fmt, warn=warn)
    if fmt == "chatgpt":
        from vaultmind.ingest.chatgpt import parse_chatgpt

        return parse_chatgpt(path, warn=warn)
    if fmt == "generic":
        from vaultmind.ingest.chat_generic import parse_generic

        return parse_generic(path, tz=tz, warn=warn)
    if fmt == "agent":
        from vaultmind.ingest.agent import parse_agent

        return parse_agent(path, tz=tz, warn=warn)
    raise UsageError(f"unknown chat format {fmt!r}", hint="one of " + ", ".join(FORMATS))


def parse_paths(
    kind: str,
    paths: Sequence[str | Path],
    *,
    fmt: str = "auto",
    tz: str | None = None,
    progress: Progress | None = None,
    report: IngestReport | None = None,
    date_order: str | None = None,
    vault: Path | None = None,
) -> list[SourceBatch] | list[DocumentInput]:
    """Parse every path (nothing is written): batches for chat/agent/email, documents for document.
    `date_order` ("dmy", "mdy"; None guesses) is how WhatsApp exports write their dates; `vault`,
    the vault written to, whose own notes are no documents or emails to ingest."""
    if kind not in KINDS:
        raise UsageError(f"unknown ingest kind {kind!r}", hint="one of " + ", ".join(KINDS))
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", hint="one of " + ", ".join(FORMATS))
    files = [Path(p).expanduser() for p in paths]
    if not files:
        raise UsageError("nothing to ingest: give at least one file or folder")
    report = report if report is not None else IngestReport()
    if kind in ("email", "document"):
        found: list[SourceBatch] | list[DocumentInput]
        if kind == "email":
            found, warnings, dated = parse_email_paths_dated(files, progress=progress, vault=vault)
            report.dated.extend(dated)
        else:
            found, warnings = parse_document_paths_with_report(files, vault=vault, progress=progress)
        report.warnings.extend(warnings)
        if not found and not warnings and not report.dated:  # (a file skipped or unreadable has a warning of its own)
            what = ".eml, mbox or Maildir messages" if kind == "email" else f"{DOCUMENT_KINDS} files"
            report.warnings.append(_nothing_found(files, what))
        return found
    zone_info = zone(tz)
    expanded = _expand(kind, files, fmt, report, vault)
    batches: list[SourceBatch] = []
    for done, (path, detected, walked) in enumerate(expanded, 1):
        chosen = "agent" if kind == "agent" else (detected or fmt)
        try:
            found = parse_chat_path(path, chosen, zone_info, date_order=date_order, warn=report.warnings.append)
        except IngestError as exc:
            if not walked or (fmt != "auto" and kind != "agent") or (kind == "agent" and not isinstance(exc, NotAnExport)):
                raise  # a file you named, a format you chose, a transcript that is malformed: stop
            # a file found in a folder that only looks like an export (or, for `ingest agent`,
            # is none: a README, the agent's settings): the others still count
            report.warnings.append(f"{exc}; skipped (read as {chosen})")
        else:
            if not found and path.is_dir() and chosen in ("auto", "slack") and detect_chat_format(path) == "slack":
                # (users.json, channels.json … alone)
                report.warnings.append(f"{path}: a Slack export's lists of users and channels, without a channel's messages; nothing to ingest")
            elif not any(batch.messages for batch in found):
                report.warnings.append(f"{path}: holds no messages (system notices aside); nothing to ingest")
            batches.extend(found)
        if progress is not None:
            progress("parsing", done, len(expanded))
    return batches


def _say_local_zone(report: IngestReport, batches: Sequence[SourceBatch], tz: str | None, clock: str | None) -> None:
    """The zone the local times of the messages written were read in (`report.local_zone`), and
    whether it was named (`--tz`, `[ingest] timezone`) or is UTC by default — which the report
    says, with how to name the export's zone: local times taken for UTC without a word put every
    message hours off. `clock`, the vault's zone (`[ingest] timezone`), whose days the notes
    are: another than `--tz` names is said too (`--tz` reads the export, it files no note)."""
    report.vault_clock = clock or "UTC"
    if any(b.local_times and any(m.message_id in report.added_ids for m in b.messages) for b in batches):
        report.local_zone, report.local_zone_named = tz or "UTC", tz is not None


def _not_said_again(warnings: list[str], said_before: set[str]) -> list[str]:
    """`warnings` but those about documents already ingested and unchanged (said when they were
    written), summed up in one line."""
    kept = [w for w in warnings if w not in said_before]
    if len(kept) < len(warnings):
        n = len(warnings) - len(kept)
        kept.append(f"{n} warning{'s' if n > 1 else ''} about documents already ingested and unchanged not repeated")
    return kept


def _nothing_found(paths: Sequence[Path], what: str) -> str:
    return f"{', '.join(map(str, paths))}: nothing to ingest here (looked for {what})"


def _with_warnings_of_its_file(exc: IngestError, warnings: Sequence[str]) -> None:
    """What was said of the file an error is about before it failed, added to the error: the
    warnings of a run that stops are never printed, and one is often the cause ("no messages in
    the file" of a JSON file cut short, whose unfinished line was left out with a warning)."""
    prefix = f"{exc.path}: "
    said = [w.removeprefix(prefix) for w in warnings if exc.path is not None and w.startswith(prefix)]
    if said:
        exc.message = "; ".join([exc.message, *said])


def ingest_paths(
    kind: str,
    paths: Sequence[str | Path],
    vault: Path,
    *,
    fmt: str = "auto",
    tz: str | None = None,
    progress: Progress | None = None,
    max_note_bytes: int | None = None,
    date_order: str | None = None,
    display_tz: str | None = None,
) -> IngestReport:
    """Parse every path, then write the notes (see `ingest.writer`). Returns what was done.
    `display_tz`: the vault's zone (`[ingest] timezone`), whose days day notes are and whose
    clock callouts show; `tz`, the zone of this run's local export times.
    `max_note_bytes`: the vault's cap on a note it indexes (`[vault] max_file_mb`); a document
    over it is refused, as its note would never be found."""
    parse_report = IngestReport()
    try:
        parsed = parse_paths(
            kind, paths, fmt=fmt, tz=tz, progress=progress, report=parse_report, date_order=date_order, vault=vault
        )
    except IngestError as exc:
        _with_warnings_of_its_file(exc, parse_report.warnings)
        raise
    if kind == "chat":  # a chat read in another day/month order than its notes hold: theirs is kept
        kept, said = keep_held_orders(vault, [b for b in parsed if isinstance(b, SourceBatch)])
        parsed, parse_report.warnings[:0] = kept, said
    docs = [d for d in parsed if isinstance(d, DocumentInput)]
    if max_note_bytes is not None:  # a note over the vault's cap would never be indexed: left out, said
        sized = [(d, document_note_bytes(d)) for d in docs]
        parse_report.warnings.extend(
            f"document {d.source_id!r}: its note would take {size:,} bytes, over this vault's cap of "
            f"{megabytes(max_note_bytes)} MB a note ([vault] max_file_mb), and never be indexed; skipped "
            "(raise max_file_mb in .vaultmind/config.toml, or split the document)"
            for d, size in sized
            if size > max_note_bytes
        )
        docs = [d for d, size in sized if size <= max_note_bytes]
    if kind == "document":
        report = write_documents(vault, docs, progress=progress)
    else:
        report = write_batches(
            vault,
            [b for b in parsed if isinstance(b, SourceBatch)],
            zone=zone(display_tz),
            progress=progress,
            max_note_bytes=max_note_bytes,
        )
    _say_local_zone(report, [b for b in parsed if isinstance(b, SourceBatch)], tz, display_tz)
    # how messages without a Date header were dated: said of those written (an earlier ingest
    # that wrote the others said it then), and of those left out
    report.warnings[:0] = _not_said_again(parse_report.warnings, report.said_before) + date_warnings(parse_report.dated, report.added_ids) + [
        said
        for batch in parsed
        if isinstance(batch, SourceBatch) and any(m.message_id in report.added_ids for m in batch.messages)
        for said in batch.said_if_written
    ]
    return report
