"""`vaultmind tree [TREE_ID]` and `vaultmind flush`: see and fold the summary trees.

    vaultmind tree                     every tree: leaves, what waits in its buffers, summaries, stale
    vaultmind tree "slack:acme/general"  one tree: levels, buffers, stale summaries and why
    vaultmind tree sources/chat/…/2024-03-04.md  the tree of a source note, your note or a summary note
    vaultmind flush [--all] [--at ISO] seal full buffers, re-seal stale summaries, flush quiet sources

Both go through the daemon's API while it runs (`/v1/tree`, `/v1/flush`), else open the index.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from vaultmind.cli.args import vault_args
from vaultmind.cli.context import config_from_args, through_daemon_or_local
from vaultmind.cli.output import emit
from vaultmind.plural import counted
from vaultmind.shell import command_line


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "tree",
        help="show the summary trees: levels, buffers, stale summaries",
        description="Without TREE_ID: every tree with its counts. With it: that tree's levels, what waits "
        "in each buffer and when it seals, and which summaries are stale and why.",
    )
    p.add_argument(
        "tree_id",
        nargs="?",
        default=None,
        metavar="TREE_ID",
        help='a tree id, e.g. "slack:acme/general" or "notes:Projects", or the path of a note in it '
        "(a source note, one of your notes or a summary note, as Obsidian copies it)",
    )
    vault_args(p)
    p.set_defaults(handler=cmd_tree)

    f: argparse.ArgumentParser = sub.add_parser(
        "flush",
        help="fold now: seal full buffers, re-seal stale summaries, flush sources quiet for [trees] flush_after_hours",
        description="Seal every buffer that reached its gate, re-seal stale summaries (bounded), then force-seal "
        "the level-0 buffer of every source quiet for [trees] flush_after_hours. Summaries you edited are kept.",
    )
    f.add_argument("--all", action="store_true", help="seal every waiting level-0 buffer, however recent")
    f.add_argument("--at", default=None, help="what 'now' is, ISO 8601 (default: the current time)")
    f.add_argument(
        "--max-stale", type=int, default=64, help="re-seal at most this many stale summaries (default 64)"
    )
    vault_args(f)
    f.set_defaults(handler=cmd_flush)


def cmd_tree(args: argparse.Namespace) -> int:
    from vaultmind.tree.view import tree_view

    if args.tree_id is not None and Path(args.tree_id).is_file():  # a path from where you stand
        args.tree_id = Path(args.tree_id).resolve().as_posix()

    def local(memory: Any) -> dict[str, Any]:
        memory.sync()  # what it says is stale or edited is the vault's now, as `flush` sees it
        return tree_view(memory, args.tree_id)

    config = config_from_args(args)
    result = through_daemon_or_local(config, lambda c: c.call("POST", "/v1/tree", {"tree": args.tree_id}), local)
    if args.json:
        emit(result)
    elif args.tree_id is None:
        print_trees(result, config.vault)
    else:
        print_tree(result)
    return 0


def cmd_flush(args: argparse.Namespace) -> int:
    from vaultmind.errors import UsageError
    from vaultmind.tree.view import maintain, parse_now

    if args.max_stale < 0:
        raise UsageError("--max-stale must be >= 0")
    now = parse_now(args.at, "--at")

    def local(memory: Any) -> dict[str, Any]:
        from vaultmind.cli.gray import decide_gray_without_llm, gray_left

        memory.sync()
        decided = decide_gray_without_llm(memory)  # no daemon to do it: else the seals went past them
        shown, memory.syncer.progress = memory.syncer.progress, None  # each seal syncs one note: no lines for those
        result = maintain(
            memory, now=now, flush_all=args.all, max_stale=args.max_stale, progress=shown, ner_first=True
        ).to_dict()
        if decided:
            result["gray_decided_by_rules"] = decided
        left = gray_left(memory)
        if left is not None:
            result["gray_waiting"] = left
        return result

    from vaultmind.client import WORK_TIMEOUT_S

    # the daemon's clock is "now" (the same machine's): a retry is the same flush, and joins it
    body = {"all": args.all, "max_stale": args.max_stale, **({"at": now.isoformat()} if args.at is not None else {})}
    result = through_daemon_or_local(
        config_from_args(args),
        lambda c: c.call("POST", "/v1/flush", body, timeout=WORK_TIMEOUT_S),
        local,
        progress=True,
        daemon_shows_progress=True,
    )
    if args.json:
        emit(result)
    else:
        print_report(result)
    return 0


# -- human output ---------------------------------------------------------------------------


def print_trees(result: dict[str, Any], vault: Path) -> None:
    """The trees' listing; the command it names is for `vault`."""
    trees = result["trees"]
    settings = result["settings"]
    if not trees:
        print(f"no trees yet: ingest a source or write notes, then `{command_line('flush', '--vault', vault)}`")
        return
    width = max(len(t["tree"]) for t in trees)
    print(
        f"{'TREE':<{width}}  {'LEAVES':>7}  {'WAITING':>16}  {'SUMMARIES':>9}  {'LEVELS':>6}  {'STALE':>5}  {'EDITED':>6}"
        "  TITLE"
    )
    for t in trees:
        waiting = f"{t['buffered_leaves'] + t.get('gray_leaves', 0)} ({t['buffered_tokens']} tok)"
        print(
            f"{t['tree']:<{width}}  {t['leaves']:>7}  {waiting:>16}  {t['summaries']:>9}  {t['levels']:>6}"
            f"  {t['stale']:>5}  {t['edited']:>6}  {t.get('title', '')}"
        )
    print(
        f"\nlevel 0 seals at {settings['l0_tokens']} tokens, levels above at {settings['fanout']} summaries; "
        f"a source quiet for {settings['flush_after_hours']:g} h is flushed"
    )
    gray = sum(t.get("gray_leaves", 0) for t in trees)
    if gray:
        print(f"WAITING counts {counted(gray, 'leaf', 'leaves')} of the gray band, waiting for an importance decision")


def print_tree(result: dict[str, Any]) -> None:
    title = f" “{result['title']}”" if result.get("title") else ""
    print(f"tree {result['tree']}{title}  ({result['folder']}/, {counted(result['leaves'], 'leaf', 'leaves')})")
    for buf in result["buffers"]:
        if buf["level"] == 0:
            span = f", {buf['oldest']} – {buf['newest']}" if buf.get("oldest") else ""
            print(
                f"  level 0 buffer: {counted(buf['items'], 'leaf', 'leaves')}, {buf['tokens']}/{buf['seals_at_tokens']} tokens{span}"
            )
            if buf.get("gray"):
                print(f"  and {counted(buf['gray'], 'leaf', 'leaves')} waiting for an importance decision (gray band)")
    for level in result["levels"]:
        buf = next((b for b in result["buffers"] if b["level"] == level["level"]), None)
        extra = []
        if level["stale"]:
            extra.append(f"{level['stale']} stale")
        if level["edited"]:
            extra.append(f"{level['edited']} edited by you")
        waiting = f"; waiting to fold: {buf['items']}/{buf['seals_at_count']}" if buf else ""
        note = f" ({', '.join(extra)})" if extra else ""
        print(f"  level {level['level']}: {counted(level['summaries'], 'summary', 'summaries')}{note}{waiting}")
    if result["stale"]:
        print("\nstale:")
        for s in result["stale"]:
            print(f"  L{s['level']} {s['path']}: {s['why']} — {s['action']}")
    if result.get("edited"):
        print("\nedited by you (kept as you wrote them):")
        for s in result["edited"]:
            why = f": {s['why']}" if s["why"] else ""
            print(f"  L{s['level']} {s['path']}{why}")
    if result["summaries"]:
        total = sum(level["summaries"] for level in result["levels"])
        shown = len(result["summaries"])
        cut = f", the first {shown} of {total}: `--json` lists the same" if result.get("truncated") else ""
        print(f"\nsummaries (top level first{cut}):")
        for s in result["summaries"]:
            flags = "".join([" [stale]" if s["stale"] else "", " [edited]" if s["user_edited"] else ""])
            span = f"{s['time_start']} – {s['time_end']}" if s["time_start"] else "no time range"
            print(
                f"  L{s['level']} {s['path']}  {counted(s['children'], 'child', 'children')}, "
                f"{counted(s['leaves'], 'leaf', 'leaves')}, {span}, "
                f"{s['summarizer']}{flags}"
            )


def print_report(result: dict[str, Any]) -> None:
    if result.get("joined"):  # asked while the same flush ran (a retry after Ctrl-C): its report
        print("vaultmind: the daemon was already running this flush; its report:")
    decided = result.get("gray_decided_by_rules")
    if decided:
        print(
            f"vaultmind: {counted(decided, 'message', 'messages')} waiting for an importance decision "
            "decided by rules: no LLM answers"
        )
    waited = result.get("waited_for")
    if waited is not None:  # the daemon's background pass was sealing: what you waited for
        print(
            f"vaultmind: waited for the daemon's background pass, which sealed "
            f"{counted(len(waited['sealed']), 'summary', 'summaries')} in {waited['seconds']:.2f} s "
            f"({counted(waited['llm_calls'], 'LLM call')}, {waited['fallbacks']} by the fallback summarizer)"
        )
        for s in waited["sealed"]:
            print(f"  + L{s['level']} {s['path']} ({counted(s['children'], 'child', 'children')}, {s['summarizer']})")
    sealed = result["sealed"]
    then = "then " if waited is not None else ""
    print(f"vaultmind: {then}{counted(len(sealed), 'summary', 'summaries')} sealed in {result['seconds']:.2f} s", end="")
    print(f" ({counted(result['llm_calls'], 'LLM call')}, {result['fallbacks']} by the fallback summarizer)")
    for s in sealed:
        why = f": {s['note']}" if s.get("note") else ""  # why it fell back
        print(f"  + L{s['level']} {s['path']} ({counted(s['children'], 'child', 'children')}, {s['summarizer']}{why})")
    for s in result["unsealed"]:
        print(f"  - L{s['level']} {s['path']} (stale, folded again)")
    for s in result.get("refreshed", ()):
        print(f"  ~ L{s['level']} {s['path']} (entity links or title updated)")
    for s in result.get("waiting", ()):
        print(f"  … L{s['level']} {s['path']}: stale, waits for the edits below it to settle (until {s['until']})")
    for s in result["kept"]:
        print(f"  = {s['path']}: {s['reason']}")
    for a in result["aborted"]:
        print(f"  ! {a['tree']} level {a['level']}: {a['reason']}")
    if result["flushed"]:
        print(f"  flushed: {', '.join(result['flushed'])}")
    gray = result.get("gray_waiting")
    if gray:  # a flush seals no summary past them
        print(
            f"  {counted(gray['leaves'], 'leaf', 'leaves')} wait for the LLM's importance decision, and the "
            f"leaves after them in their trees with them: {gray['hint']}"
        )
