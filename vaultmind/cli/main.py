"""`vaultmind` command line: parse arguments, call the library, format the answer.

Errors are mapped once here: a friendly one-line message (with the file and what to do) and
an exit code; `--debug` or `VAULTMIND_DEBUG=1` shows the full traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultmind import __version__
from vaultmind.cli.args import vault_args
from vaultmind.cli.bench import add_bench_parser
from vaultmind.cli.context import Handed, config_from_args, through_daemon_or_local
from vaultmind.cli.output import Progress, emit, print_stats, print_status
from vaultmind.cli.parser import ArgumentMistake, CommandParser, say_mistake
from vaultmind.cli.query import add_query_parser
from vaultmind.cli.unknown_args import COMMAND_PARSER, mark_commands, refuse_unknown, with_hint
from vaultmind.errors import INTERRUPTED, CtrlC, IndexBusy, VaultmindError, by_ctrl_c, storage_error
from vaultmind.index.allocator import limit_heap_arenas
from vaultmind.shell import command_line

if TYPE_CHECKING:
    from vaultmind.config import Config
    from vaultmind.memory import Memory
    from vaultmind.starting import StartRecord

Handler = Callable[[argparse.Namespace], int]

COMMAND_MODULES: tuple[str, ...] = (
    "vaultmind.cli.ingest",
    "vaultmind.cli.entities",
    "vaultmind.cli.explain",
    "vaultmind.cli.queue",
    "vaultmind.cli.stop",
    "vaultmind.cli.mcp",
    "vaultmind.cli.tree",
    "vaultmind.cli.eval",
    "vaultmind.cli.doctor",
    "vaultmind.cli.compact",
)
"""Modules adding subcommands: each defines `add_parser(sub)` and its handlers."""


REBUILD_INTERRUPTED = (
    "vaultmind: interrupted; nothing in the vault is lost (it is the record), but the rebuild did not "
    "finish: until one does, the index may hold fewer notes than the vault, or none (status says); "
    "run the same command again (or a sync) to finish"
)
"""Said on Ctrl-C of a reindex, which empties the index's rows before it loads them again."""
DAEMON_GOES_ON = (
    "vaultmind: interrupted; the daemon for {vault} finishes the {work} it was given (`{status}` "
    "shows it); running the same command again joins it rather than starting another"
)
"""Said on Ctrl-C of a reindex, sync or flush the daemon runs: it goes on without its client."""


def main(argv: Sequence[str] | None = None) -> int:
    limit_heap_arenas()  # before any thread: a long-running command keeps less freed memory
    parser = build_parser()
    words = sys.argv[1:] if argv is None else list(argv)
    try:
        args, extra = parser.parse_known_args(words)
        if extra:
            refuse_unknown(args, extra, parser)
    except ArgumentMistake as mistake:
        say_mistake(with_hint(mistake, words, parser), words)
    debug = bool(getattr(args, "debug", False) or os.environ.get("VAULTMIND_DEBUG"))
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:  # a command of subcommands (`query`, `bench`…) given none: its own help
        getattr(args, COMMAND_PARSER, parser).print_help()
        return 2
    with _ctrl_c_recorded():
        return _run(handler, args, debug)


def _run(handler: Handler, args: argparse.Namespace, debug: bool) -> int:
    try:
        code = handler(args)
    except VaultmindError as exc:
        return _interrupted(handler) if by_ctrl_c(exc) else _failed(args, exc, debug)
    except KeyboardInterrupt:
        return _interrupted(handler)
    except BrokenPipeError:  # output piped into `head` and friends
        sys.stderr.close()
        return 0
    except Exception as exc:
        if by_ctrl_c(exc):  # DuckDB turns Ctrl-C inside a query into "Query interrupted"
            return _interrupted(handler)
        storage = storage_error(exc)  # a full disk, said as a person can act on it
        if storage is None:
            raise
        return _failed(args, storage, debug)
    if CtrlC.seen and handler is not cmd_watch and code != 130:  # Ctrl-C a library took for an error
        return _interrupted(handler)  # (the command went on): still the interruption, not a finished run
    return code  # 130: the command said what its interruption kept (`eval`)


@contextmanager
def _ctrl_c_recorded() -> Iterator[None]:
    """Record Ctrl-C, then raise KeyboardInterrupt as Python does by default.

    Ctrl-C landing inside DuckDB comes out as whatever the statement then fails with:
    "Query interrupted", "KeyboardInterrupt: <EMPTY MESSAGE>", or a catalog error when it
    stopped DuckDB's lookup of an Arrow table among the caller's variables. The record makes
    any of them the interruption it is.
    """
    CtrlC.seen = False  # of this command only: not one run before it in the same process
    Handed.vault = None
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler  # ignored, or someone's own
    ):
        yield
        return

    def record(signum: int, frame: object) -> None:
        CtrlC.seen = True
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGINT, record)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _interrupted(handler: Handler) -> int:
    if Handed.vault is not None:  # the daemon does the work, and finishes it
        work = "rebuild" if handler is cmd_reindex else "work"
        status = command_line("status", "--vault", Handed.vault)
        print(DAEMON_GOES_ON.format(work=work, vault=Handed.vault, status=status), file=sys.stderr)
    else:
        print(REBUILD_INTERRUPTED if handler is cmd_reindex else INTERRUPTED, file=sys.stderr)
    return 130


def _failed(args: argparse.Namespace, exc: VaultmindError, debug: bool) -> int:
    """Report an error as JSON (`--json`) or on stderr, its hint on a line of its own; its exit code."""
    if debug:
        traceback.print_exc()
    if getattr(args, "json", False):
        print(json.dumps({"error": exc.to_dict()}, ensure_ascii=False))
    else:
        print(f"vaultmind: error: {exc.what}", file=sys.stderr)
        if exc.hint:
            print(f"vaultmind: hint: {exc.hint}", file=sys.stderr)
    return exc.exit_code


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="vaultmind",
        description="An Obsidian-vault-native personal memory: index a vault, watch it, and search it with cited evidence.",
    )
    parser.add_argument("--version", action="version", version=f"vaultmind {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks and debug logs")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")

    p = sub.add_parser("init", help="create a vault (or add vaultmind to an existing one)")
    p.add_argument("path", type=Path, help="folder of the vault")
    p.add_argument("--demo", action="store_true", help="also write a small demo memory")
    p.add_argument(
        "--existing",
        action="store_true",
        help="add vaultmind's folders and config to an existing vault; touch nothing else",
    )
    p.add_argument("--json", action="store_true", help="print a JSON report")
    p.set_defaults(handler=cmd_init)

    p = sub.add_parser("reindex", help="rebuild the index from the vault (the index is a cache)")
    vault_args(p)
    p.set_defaults(handler=cmd_reindex)

    p = sub.add_parser("sync", help="bring the index in step with the vault (only what changed)")
    vault_args(p)
    p.set_defaults(handler=cmd_sync)

    p = sub.add_parser("status", help="counts, index health, files skipped or failed and why")
    vault_args(p)
    p.set_defaults(handler=cmd_status)

    add_query_parser(sub, vault_args)

    for name, text in (
        ("watch", "run the daemon in the foreground (the same as serve)"),
        ("serve", "run the daemon in the foreground: watcher + workers + summary trees + loopback API"),
    ):
        p = sub.add_parser(name, help=text, description=DAEMON_DESCRIPTION)
        vault_args(p, json_flag=False)
        p.set_defaults(handler=cmd_watch)

    add_bench_parser(sub)
    for module_name in COMMAND_MODULES:
        module = importlib.import_module(module_name)
        module.add_parser(sub)
    describe_commands(parser)
    mark_commands(parser)
    return parser


DAEMON_DESCRIPTION = (
    "Run the daemon in the foreground until Ctrl-C: the watcher keeps the index in step with every "
    "edit, workers recognise entities and fold leaves into summary trees, and a loopback API "
    "answers query, status, sync and reindex meanwhile (its address and token are in "
    ".vaultmind/daemon.json). `watch` and `serve` are the same command."
)


def describe_commands(parser: argparse.ArgumentParser) -> None:
    """Give every command (and query mode, bench action…) without a description of its own the
    line the list of commands shows for it, so that `vaultmind COMMAND --help` says what it does."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for name, command in action.choices.items():
            line = helps.get(name)
            if command.description is None and line:
                command.description = line[:1].upper() + line[1:] + "."
            describe_commands(command)


# -- commands ------------------------------------------------------------------------------


def cmd_init(args: argparse.Namespace) -> int:
    from vaultmind.vault.template import init_vault

    report = init_vault(args.path, demo=args.demo, existing=args.existing)
    if args.json:
        emit(report.to_dict())
    elif report.already:  # the set-up line run again: it goes on to its reindex
        what = "vaultmind vault with the demo" if args.demo else "vaultmind vault"
        print(f"vaultmind: {report.vault} already is a {what}; nothing was written")
        if report.missing:  # deleted since, most likely: never brought back
            print(f"  not there, not put back: {', '.join(report.missing)}")
        if report.restorable:
            print(f"  vaultmind's own files among them ({', '.join(report.restorable)}): `{command_line('init', '--existing', report.vault)}` adds them back")
        print(f"next: {command_line('reindex', '--vault', report.vault)}")
    else:
        data = report.to_dict()
        print(f"vaultmind: vault ready at {report.vault} ({len(report.created)} files created)")
        by_reason: dict[str, list[str]] = {}  # one line per reason ("left alone": each Obsidian file)
        for item in data.get("skipped", []):
            path, reason = (item["path"], item["reason"]) if isinstance(item, dict) else (str(item), "")
            by_reason.setdefault(reason, []).append(path)
        for reason, paths in by_reason.items():
            print(f"  skipped: {', '.join(paths)}" + (f" — {reason}" if reason else ""))
        for warning in data.get("warnings", []):
            print(f"  warning: {warning}")
        print(f"next: {command_line('reindex', '--vault', report.vault)}")
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    return _whole_vault(args, "reindexed", "/v1/reindex", lambda memory: memory.reindex())


def cmd_sync(args: argparse.Namespace) -> int:
    return _whole_vault(args, "synced", "/v1/sync", lambda memory: memory.sync())


# The `enriched` of a whole-vault sync or reindex the daemon ran (its answer has none: entities
# are its background work), so the answer has the key a local run's has
BACKGROUND_ENRICH = {"background": True, "hint": "the daemon recognises entities and writes entity notes in the background"}


def _whole_vault(args: argparse.Namespace, verb: str, route: str, apply: Callable[[Memory], Any]) -> int:
    """`sync` or `reindex` of the whole vault, through the daemon or here; the answer has the
    same keys either way (`enriched`; `notice` when this open moved a broken index aside).
    `seconds` is the whole command's time (opening and upgrading the index, the sync, entity
    recognition and entity notes); `index_seconds` the sync's alone, `enriched.seconds` the
    entities' (a run here)."""

    def local(memory: Memory) -> dict[str, Any]:
        from vaultmind.cli.gray import decide_gray_without_llm

        result: dict[str, Any] = apply(memory).to_dict()
        result["gray_decided_by_rules"] = decide_gray_without_llm(memory)  # no daemon here to do it
        started = time.perf_counter()
        result["enriched"] = {**_enrich_if_small(memory), "seconds": round(time.perf_counter() - started, 3)}
        result.update(memory.counts())
        if memory.index.quarantined:  # this open moved a broken index aside (status says so too)
            result["notice"] = memory.index.quarantined
        return result

    def remote(client: Any) -> dict[str, Any]:
        from vaultmind.client import WORK_TIMEOUT_S

        result: dict[str, Any] = client.call("POST", route, {}, timeout=WORK_TIMEOUT_S)
        result.setdefault("enriched", dict(BACKGROUND_ENRICH))
        result.setdefault("gray_decided_by_rules", 0)  # the daemon's workers decide them
        return result

    config = config_from_args(args)
    started = time.perf_counter()
    result = through_daemon_or_local(config, remote, local, progress=True, daemon_shows_progress=True)
    result["index_seconds"] = result.get("seconds", 0.0)
    result["seconds"] = round(time.perf_counter() - started, 3)
    if result.get("joined") and not args.json:  # (another client's, or this command's before Ctrl-C)
        print("vaultmind: the daemon was already running this; its answer:", file=sys.stderr)
    return _print_stats(args, result, verb, config.vault)


FOREGROUND_NER_TEXTS = 2000  # about 15 s of NER; more is left to the daemon


def _enrich_if_small(memory: Memory) -> dict[str, Any]:
    """Finish NER and entity notes in the foreground when that is quick; otherwise leave it to
    the daemon (`vaultmind serve`), which catches up in the background, and say so."""
    from vaultmind.entities.backfill import entity_deriver, ner_pending

    deriver = entity_deriver(memory)
    pending = ner_pending(memory.index, deriver) if deriver is not None else 0
    if pending > FOREGROUND_NER_TEXTS:
        serve = command_line("serve", "--vault", memory.config.vault)
        return {"ner_deferred": pending, "hint": f"run `{serve}` to recognise entities in the background"}
    return memory.enrich(memory.syncer.progress)


def _print_stats(args: argparse.Namespace, result: dict[str, Any], verb: str, vault: Path) -> int:
    if args.json:
        emit(result)
    else:
        print_stats(result, verb, vault)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    def remote(client: Any) -> dict[str, Any]:
        status: dict[str, Any] = client.call("GET", "/v1/status?notice=take")  # the user's: takes a notice
        status["daemon"] = {"running": True, "url": client.base, **status.get("daemon", {})}  # + its counts
        return status

    def local(memory: Memory) -> dict[str, Any]:
        status: dict[str, Any] = memory.status()
        status["daemon"] = {"running": False}
        return status

    config = config_from_args(args)
    # a person is told at once that the daemon is starting; a script (`--json`) waits for its
    # counts, and gets the starting status only when the index stays held without them
    status = None if args.json else _starting_status(config)
    if status is None:
        try:
            status = through_daemon_or_local(config, remote, local)
        except IndexBusy:
            status = _starting_status(config)
            if status is None:
                raise
    if args.json:
        emit(status)
    elif status["daemon"].get("state") == "starting":
        print(f"vault   {status['vault']}")
        print(f"daemon  {status['index']['notice']}")
    else:
        print_status(status)
    return 0


def _starting_status(config: Config) -> dict[str, Any] | None:
    """The status of a daemon that has not published its address yet (its index upgraded, say,
    which may take minutes), said at once from its start record; None when none is starting."""
    from vaultmind.claim import read_start
    from vaultmind.client import find_daemon
    from vaultmind.starting import starting_line

    start = read_start(config)
    if start is None or find_daemon(config) is not None:
        return None
    return {
        "vault": str(config.vault),
        "loading": True,
        "index": {
            "health": "starting",
            "notice": f"the daemon (pid {start['pid']}) is {starting_line(start)}; the index's counts are "
            "shown once its api is up: ask again in a moment",
        },
        "daemon": {"running": True, "state": "starting", **start},
    }


def cmd_watch(args: argparse.Namespace) -> int:
    from vaultmind.claim import daemon_claim
    from vaultmind.starting import StartRecord

    config = config_from_args(args)
    with daemon_claim(config), StartRecord(config) as start:  # a second daemon, even one started at the
        _watch(config, start)  # same moment, is told at once; what it does until its api is up is said
    print(f"vaultmind: stopped watching {config.vault}", file=sys.stderr)
    return 0


def _watch(config: Config, start: StartRecord) -> None:
    from vaultmind.daemon import Daemon
    from vaultmind.memory import Memory
    from vaultmind.privacy import beyond_loopback

    if beyond_loopback(config.host):
        print(
            f"vaultmind: warning: [server] host = {config.host!r} lets other machines reach the API; every request "
            "still needs the token in .vaultmind/daemon.json, but it travels unencrypted (plain HTTP). "
            'Keep host = "127.0.0.1" unless you mean it.',
            file=sys.stderr,
        )
    with Progress(enabled=True) as shown, Memory.open(config, progress=start.telling(shown)) as memory:

        def on_batch(what: str, stats: Any) -> None:
            shown.line.end()  # a catch-up's progress line, rewritten in place, ends first
            if what == "reconcile" and not daemon.batches:
                print(
                    f"vaultmind: watching {config.vault} (api on {config.host}:{daemon.api.port if daemon.api else '?'}); Ctrl-C to stop",
                    file=sys.stderr,
                )
            changed = stats.added + stats.modified + stats.deleted + stats.renamed
            if stats.rebuilt:  # an upgraded index read again: its notes are no new ones
                print(f"vaultmind: {what}: rebuilt {stats.added} notes in {stats.seconds * 1000:.0f} ms", file=sys.stderr)
            elif changed:
                print(
                    f"vaultmind: {what}: +{stats.added} ~{stats.modified} -{stats.deleted} "
                    f"renamed {stats.renamed} in {stats.seconds * 1000:.0f} ms",
                    file=sys.stderr,
                )

        daemon = Daemon(config, memory, on_batch=on_batch, start=start)
        try:
            daemon.run()
        except KeyboardInterrupt:
            daemon.stop()
        except RuntimeError as exc:  # Ctrl-C inside a DuckDB query at start-up: "Query interrupted"
            if not by_ctrl_c(exc):
                raise
            daemon.stop()
