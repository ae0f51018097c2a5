"""`vaultmind ingest <chat|agent|email|document> PATH... --vault V`: exports → source notes.

Parses every path (nothing is written when one is malformed), writes the notes (see
`vaultmind.ingest.writer`), then brings the index in step with them: through the daemon's
`POST /v1/sync` when one runs for the vault, else in-process.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from vaultmind.cli.args import vault_args
from vaultmind.cli.context import config_from_args, through_daemon_or_local
from vaultmind.cli.output import Progress, emit
from vaultmind.ingest import FORMATS, KINDS
from vaultmind.ingest.model import kept_edits_said
from vaultmind.ingest.warnings_kept import keep_warnings
from vaultmind.plural import counted

SYNC_PATHS_SHOWN = 3  # of the notes the sync left out (ignored, missing), named by the summary


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "ingest",
        help="turn exports (chat, agent transcripts, email, documents) into source notes",
        description=(
            "Write exports as canonical source notes, then index them. chat: Slack, WhatsApp, "
            "Telegram, Signal, Instagram, Facebook Messenger, ChatGPT and LoCoMo exports and the "
            "generic JSON format; agent: Claude Code, Codex CLI and OpenAI-style JSON transcripts; "
            "email: .eml files, mbox files and Maildir folders; document: .md, .markdown, .txt, "
            ".html and .htm files. Ingesting the same export again adds nothing; notes you edited are never "
            "overwritten. See docs/ingest.md."
        ),
    )
    p.add_argument("kind", choices=KINDS, help="what the paths hold")
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="export files or folders")
    vault_args(p, json_flag=False)
    p.add_argument(
        "--format",
        dest="fmt",
        choices=FORMATS,
        default="auto",
        help="chat export format (default: auto, detected from each file's content)",
    )
    p.add_argument(
        "--tz",
        default=None,
        metavar="ZONE",
        help="time zone of exports that write local times without one (WhatsApp, Signal, "
        "Telegram without date_unixtime), e.g. Europe/Berlin (default: [ingest] timezone in the "
        "vault's config, else UTC)",
    )
    p.add_argument(
        "--date-order",
        choices=("auto", "dmy", "mdy"),
        default="auto",
        help="how WhatsApp exports write dates: day/month, month/day, or auto (a day above 12, "
        "else the order that keeps messages in order, else day/month, with a warning)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON report")
    p.set_defaults(handler=cmd_ingest)


def _refuse_chat_flags(args: argparse.Namespace) -> None:
    """`--format` and `--date-order` say how to read chat exports, `--tz` chat exports and agent
    transcripts: given for a kind that says its own (agent transcripts, whose format each file
    tells; email, whose Date headers say their zones; documents), they would be ignored — or
    worse, a `--format` read a folder's other files as that format and stopped at the first."""
    if args.kind == "chat":
        return
    given = [
        flag
        for flag, value, default in (("--format", args.fmt, "auto"), ("--tz", args.tz, None), ("--date-order", args.date_order, "auto"))
        if value != default and not (flag == "--tz" and args.kind == "agent")
    ]
    if given:
        from vaultmind.errors import UsageError

        what = {
            "email": "email: each message's Date header says its zone",
            "document": "documents",
            "agent": "agent transcripts: each file's format is told from it",
        }[args.kind]
        readers = "chat exports and agent transcripts" if given == ["--tz"] else "chat exports"
        raise UsageError(
            f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} for {readers}, not for {what}",
            hint=f"leave {'it' if len(given) == 1 else 'them'} out",
        )


def cmd_ingest(args: argparse.Namespace) -> int:
    from vaultmind.ingest.detect import ingest_paths

    _refuse_chat_flags(args)
    config = config_from_args(args)  # every setting checked before a note is written
    with Progress(enabled=True) as progress:
        report = ingest_paths(
            args.kind,
            args.paths,
            config.vault,
            fmt=args.fmt,
            tz=args.tz or config.ingest_timezone or None,
            progress=progress,
            max_note_bytes=config.max_file_bytes,
            date_order=None if args.date_order == "auto" else args.date_order,
            display_tz=config.ingest_timezone or None,
        )
    try:  # what it left out, and why, for `status` to say later
        keep_warnings(config.state_dir, args.kind, [str(path) for path in args.paths], report.warnings)
    except OSError as exc:
        print(f"vaultmind: could not keep this ingest's warnings for `status`: {exc}", file=sys.stderr)
    sync: dict[str, Any] | None = None
    if report.written or report.unchanged:
        from vaultmind.client import WORK_TIMEOUT_S

        paths, gone = report.to_sync()
        sync = through_daemon_or_local(
            config,
            lambda client: client.call("POST", "/v1/sync", {"paths": paths, "gone": gone}, timeout=WORK_TIMEOUT_S),
            lambda memory: memory.sync_paths(paths, gone=gone).to_dict(),
            progress=True,
            daemon_shows_progress=True,
        )
    result: dict[str, Any] = {
        "written": report.written,
        "unchanged": report.unchanged,
        "renamed": [{"from": old, "to": new} for old, new in report.renamed],
        "kept_user_edited": report.kept_user_edited,
        "kind": args.kind,
        "messages_added": report.messages_added,
        "messages_known": report.messages_known,
        "messages_edited": report.messages_edited,
        "documents_replaced": report.documents_replaced,
        "warnings": report.warnings,
        "local_zone": report.local_zone,
        "local_zone_named": report.local_zone_named,
        "vault_clock": report.vault_clock,
        "sync": sync,
    }
    if args.json:
        emit(result)
    else:
        _print(result)
    return 0


def _print(result: dict[str, Any]) -> None:
    written, unchanged = len(result["written"]), len(result["unchanged"])
    if result.get("kind") == "document":  # documents have no messages: say what was done to them
        head = f"vaultmind: ingested {counted(written + unchanged, 'document')}"
    else:
        added, known = result["messages_added"], result["messages_known"]
        head = f"vaultmind: ingested {counted(added, 'new message')} ({known:,} already known)"
    print(f"{head} — {counted(written, 'note')} written, {unchanged:,} unchanged")
    if result.get("messages_edited"):
        print(f"  messages replaced by their edited text: {result['messages_edited']:,}")
    if result["documents_replaced"]:
        print(f"  documents replaced by a new version: {result['documents_replaced']:,}")
    for path in result["written"][:20]:
        print(f"  wrote {path}")
    if written > 20:
        print(f"  … and {written - 20:,} more")
    for moved in result.get("renamed", ()):
        print(f"  renamed {moved['from']} to {moved['to']} (its file's name, so links to it resolve)")
    went = "the new version went" if result.get("kind") == "document" else "new messages went"
    for path in result["kept_user_edited"]:
        print(f"  {kept_edits_said(path, went)}")
    if result.get("local_zone"):
        said = f"  local times (the export names no zone) read in {result['local_zone']}"
        if not result.get("local_zone_named"):
            said += (
                ", as neither --tz nor [ingest] timezone names a zone: if the export was written in another, set "
                'timezone = "Europe/Berlin" (its zone) under [ingest] in .vaultmind/config.toml, or pass --tz, '
                "before ingesting it (a chat read in one zone refuses an export read in another)"
            )
        print(said)
        clock, zone = result.get("vault_clock") or "UTC", result["local_zone"]
        if result.get("local_zone_named") and zone != clock:  # (--tz reads the export; the vault's zone files the notes)
            print(
                f"  notes are filed by {clock} days and show {clock} times (the vault's clock: [ingest] timezone, "
                f"UTC when unset), not {zone} ones: to file new messages by {zone} days, set timezone = \"{zone}\" "
                "under [ingest] in .vaultmind/config.toml (notes written stay as they are)"
            )
    for warning in result["warnings"]:
        print(f"  warning: {warning}")
    sync = result["sync"]
    if sync is not None and not (sync.get("added") or sync.get("modified")) and sync.get("unchanged"):
        if result["written"]:
            print("  indexed: nothing new (already indexed, as by a running daemon's watcher, or left out by [vault] ignore)")
    elif sync is not None:
        print(
            f"  indexed: +{sync.get('added', 0):,} ~{sync.get('modified', 0):,} notes, "
            f"{counted(sync.get('leaves_written', 0), 'leaf', 'leaves')} in {sync.get('seconds', 0):.2f} s"
        )
    if sync is not None and sync.get("ignored"):
        print(f"  not indexed, left out by the ignore rules ([vault] ignore): {_few(sync['ignored'])}")
    if sync is not None and sync.get("missing"):
        print(f"  not indexed, neither in the vault nor in the index: {_few(sync['missing'])}")


def _few(paths: list[str]) -> str:
    """The first `SYNC_PATHS_SHOWN` of `paths`, then how many more (`--json` lists them all)."""
    more = len(paths) - SYNC_PATHS_SHOWN
    return ", ".join(paths[:SYNC_PATHS_SHOWN]) + (f" and {more:,} more" if more > 0 else "")
