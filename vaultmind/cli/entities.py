"""`vaultmind entities [list | show ID | neighbours ID | ambiguous]`: the entity graph.

    vaultmind entities [list] [--kind K] [--limit N] [--json] [--vault V]
    vaultmind entities show ID|NAME [--limit N]
    vaultmind entities neighbours ID|NAME [--limit N]
    vaultmind entities ambiguous [--limit N]

Through the daemon's `POST /v1/entities` when one runs for the vault, else in-process (the
library call is `vaultmind.entities.read.entities_request`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from vaultmind.cli.args import vault_args
from vaultmind.cli.context import resolve_vault, through_daemon_or_local
from vaultmind.cli.output import emit
from vaultmind.errors import UsageError

if TYPE_CHECKING:
    from vaultmind.memory import Memory


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "entities",
        help="people, organizations, topics… found in the vault, and who appears with whom",
        description=(
            "List the entities vaultmind knows (from entity notes and found in leaves), show one with "
            "its strongest neighbours (the leaves naming both, and the messages in which one replies to "
            "or mails the other) and latest mentions, or list names that fit several entities (those "
            "are reported, never guessed)."
        ),
    )
    p.add_argument(
        "action", nargs="?", default="list", choices=("list", "show", "neighbours", "ambiguous"),
        help="list (default), show ID, neighbours ID, ambiguous",
    )  # fmt: skip
    p.add_argument("ident", nargs="?", metavar="ID", help="an entity id (person:alice-chen) or name (Alice)")
    p.add_argument(
        "--kind",
        default=None,
        help="list only this kind (person, org, place, product, event, work, topic, email, handle, url, phone)",
    )
    p.add_argument(
        "--limit", type=int, default=None, help="number of rows (default 50; 20 for show, 200 for ambiguous)"
    )
    vault_args(p)
    p.set_defaults(handler=cmd_entities)


def cmd_entities(args: argparse.Namespace) -> int:
    from vaultmind.config import load_config

    if args.limit is not None and args.limit <= 0:
        raise UsageError("--limit must be a positive number")
    if args.action in ("show", "neighbours") and not args.ident:
        raise UsageError(f"`vaultmind entities {args.action}` needs an entity id or name")
    if args.action in ("list", "ambiguous") and args.ident:
        raise UsageError(
            f"`vaultmind entities {args.action}` takes no ID", hint="use `show ID` or `neighbours ID`"
        )
    if args.kind and args.action != "list":
        raise UsageError(f"`vaultmind entities {args.action}` takes no --kind", hint="--kind filters `list`")
    body: dict[str, Any] = {"action": args.action, "limit": args.limit}
    if args.ident:
        body["id"] = args.ident
    if args.kind:
        body["kind"] = args.kind
    config = load_config(resolve_vault(args.vault))

    def local(memory: Memory) -> dict[str, Any]:
        from vaultmind.entities.read import entities_request
        from vaultmind.entities.tables import META_SIGNATURE, get_meta

        with memory.index.lock:
            derived = get_meta(memory.index.con, META_SIGNATURE) is not None
        if not derived:
            memory.sync()
        return entities_request(memory.index, body, vault_name=memory.vault_name)

    result = through_daemon_or_local(config, lambda c: c.call("POST", "/v1/entities", body), local)
    if args.json:
        emit(result)
    elif args.action == "list":
        _print_list(result)
    elif args.action == "show":
        _print_show(result)
    elif args.action == "neighbours":
        _print_neighbours(result)
    else:
        _print_ambiguous(result)
    return 0


def _print_list(result: dict[str, Any]) -> None:
    rows = result["entities"]
    if not rows:
        print("vaultmind: no entities yet")
    else:
        width = max(len(r["id"]) for r in rows)
        print(f"{'leaves':>7}  {'id':<{width}}  name")
        for r in rows:
            note = "  [note]" if r["note_path"] else ""
            print(f"{r['mentions']:>7}  {r['id']:<{width}}  {r['display_name']}{note}")
    if result.get("truncated"):
        print(f"… {result['total'] - len(rows):,} more (--limit)")
    if not result.get("ner"):
        print("note: no NER model was used; people and organizations come from entity notes and regex only")


def _print_neighbours(result: dict[str, Any]) -> None:
    items = result["neighbours"]
    print(f"{result['id']}: {result['total']} neighbours")
    if items:
        print(f"  {'leaves':>6}  {'talks':>5}  (leaves naming both; messages one writes to the other)")
    for n in items:
        print(f"  {n['weight']:>6}  {n['talks']:>5}  {n['id']}  {n['display_name']}")
    if result.get("truncated"):
        print(f"  … {result['total'] - len(items):,} more (--limit)")


def _print_show(e: dict[str, Any]) -> None:
    print(f"{e['id']} — {e['display_name']} ({e['kind']})")
    if e.get("note_path"):
        print(f"  note: {e['note_path']}")
    for key in ("aliases", "emails", "handles"):
        if e.get(key):
            print(f"  {key}: {', '.join(e[key])}")
    when = ""
    if e.get("first_seen"):
        when = f", {e['first_seen'][:10]} … {e['last_seen'][:10]}"
    print(f"  mentioned in {e['mentions']} leaves of {e.get('notes', 0)} notes{when}")
    if e.get("neighbours"):
        print("  neighbours (leaves together, talks):")
        for n in e["neighbours"]:
            print(f"    {n['weight']:>5}  {n['talks']:>5}  {n['id']}  {n['display_name']}")
    if e.get("occurrences"):
        print("  latest mentions:")
        for o in e["occurrences"]:
            ts = (o["ts"] or "")[:16].replace("T", " ")
            print(
                f"    {ts:<16}  {o['note_path']}{o['anchor'] and '#' + o['anchor'].lstrip('#')}  “{o['surface']}”"
            )


_AMBIGUITY_WHY = {
    "registry": "listed in several entity notes",
    "fuzzy": "close to several entity notes",
    "kinds": "found as several kinds",
}
_AMBIGUITY_FIX = {
    "registry": "a name listed in several entity notes: remove it from the aliases (emails, handles) of all "
    "but the note it means",
    "fuzzy": "a name close to several entity notes: add it to the aliases of the entity note it means",
    "kinds": "a name found as several kinds: ask for the one meant by its id (`vaultmind entities show <id>`), "
    "or write an entity note of the right kind with the name in its aliases",
}
"""What to do about each kind of ambiguity `entities ambiguous` lists, printed once per kind listed."""


def _print_ambiguous(result: dict[str, Any]) -> None:
    items = result["ambiguous"]
    if not items and not result.get("problems"):
        print("vaultmind: no ambiguous names")
    for item in items:
        why = _AMBIGUITY_WHY.get(item["why"], item["why"])
        print(
            f"  “{item['name']}” → {', '.join(item['candidates'])} ({why}; {item.get('mentions', 0)} leaves)"
        )
    if result.get("truncated"):
        print(f"  … {result['total'] - len(items):,} more (--limit)")
    for problem in result.get("problems", []):
        print(f"  problem: {problem}")
    for why in dict.fromkeys(item["why"] for item in items):
        if why in _AMBIGUITY_FIX:
            print(f"fix: {_AMBIGUITY_FIX[why]}")
