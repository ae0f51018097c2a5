"""`vaultmind explain LEAF_ID`: why a leaf is remembered, dropped or waiting.

    vaultmind explain LEAF_ID [--vault V] [--json]

Shows the leaf and its note, its lifecycle state, the admission signals with their weights,
the decision and its reason, the LLM's answer when one was asked, and the queue jobs on it.
LEAF_ID may be a unique prefix (at least 6 characters). Through the daemon's
`POST /v1/explain` when one runs for the vault, else in-process
(`vaultmind.admission.explain.explain_leaf`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from vaultmind.cli.args import vault_args
from vaultmind.cli.context import config_from_args, through_daemon_or_local
from vaultmind.cli.output import emit

if TYPE_CHECKING:
    from vaultmind.memory import Memory


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "explain",
        help="why a leaf is remembered, dropped or waiting: its signals and admission decision",
        description=(
            "Show one leaf, its note, its lifecycle state (pending → admitted → buffered → sealed, or "
            "dropped), the cheap admission signals and weights, the decision with its reason, the LLM's "
            "answer when the leaf was in the gray band, and the jobs working on it."
        ),
    )
    p.add_argument(
        "leaf_id", metavar="LEAF_ID", help="a leaf id (or a unique prefix of at least 6 characters)"
    )
    vault_args(p)
    p.set_defaults(handler=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    config = config_from_args(args)  # a bad setting named with the vault's config file

    def local(memory: Memory) -> dict[str, Any]:
        from vaultmind.admission.explain import explain_leaf

        if memory.index.scalar("SELECT count(*) FROM notes") == 0:
            memory.sync()
        from vaultmind.tree.settings import TreeSettings

        return explain_leaf(memory.index, args.leaf_id, TreeSettings.from_extra(memory.config.extra))

    result = through_daemon_or_local(
        config, lambda c: c.call("POST", "/v1/explain", {"leaf_id": args.leaf_id}), local
    )
    if args.json:
        emit(result)
    else:
        print_explain(result)
    return 0


def print_explain(result: dict[str, Any]) -> None:
    leaf, note = result["leaf"], result["note"]
    where = note["path"] + (
        leaf["anchor"] if leaf["anchor"].startswith("#") else f"#{leaf['anchor']}" if leaf["anchor"] else ""
    )
    print(f"leaf      {leaf['id']}  ({leaf['kind']} {leaf['seq'] + 1} of {where})")  # seq counts from 0
    source = f", {note['source_kind']} {note['source_id']}" if note.get("source_id") else ""
    print(f"note      {note['title']} [{note['kind']}{source}]")
    meta = " · ".join(
        str(x) for x in (leaf.get("author"), leaf.get("timestamp"), leaf.get("source_ref")) if x
    )
    if meta:
        print(f"          {meta}")
    text = " ".join(str(leaf["text"]).split())
    print(f"text      {text[:300]}{'…' if len(text) > 300 else ''}")
    adm = result.get("admission")
    if adm is None:
        print(f"state     {result['state']} — {result.get('why_none', '')}")
        return
    print(f"state     {result['state']}   (pending → admitted → buffered → sealed, or dropped)")
    if result.get("summary"):
        print(f"summary   {result['summary']}")
    print(f"decision  {adm['decision']} — {adm['reason']}")
    print(f"          {result.get('search', '')}")
    signals = adm.get("signals") or {}
    values = signals.get("values")
    if values:
        weights = signals.get("weights", {})
        print(f"score     {adm['score']:.4f} = base {signals.get('base', 0):.4f} + boosts")
        for name, value in values.items():
            print(f"  {name:<13} {value:6.3f}  × {weights.get(name, 0):.2f}")
        boosts = signals.get("boosts", {})
        inter = boosts.get("interaction", {})
        why = ", ".join(inter.get("why", [])) or "none"
        print(f"  {'interaction':<13} +{inter.get('value', 0):.3f}  ({why})")
        prio = boosts.get("priority", {})
        tags = ", ".join("#" + t for t in prio.get("tags", [])) or "none"
        print(f"  {'priority':<13} +{prio.get('value', 0):.3f}  ({tags})")
        ents = signals.get("entities") or []
        more = signals.get("entity_count", len(ents)) - len(ents)
        print(
            f"  words {signals.get('words', 0)}, content words {signals.get('content_words', 0)}, "
            f"entities {signals.get('entity_count', 0)}: {', '.join(ents) or '—'}{' …' if more > 0 else ''}"
        )
    for answer in result.get("llm") or []:
        body = answer["answer"]
        if body.get("importance") is not None:
            said = f"importance {body['importance']}" + (f" — {body['reason']}" if body.get("reason") else "")
        else:
            said = f"no usable answer ({body.get('error', '?')})"
        print(f"llm       {answer['model']} (prompt {answer['prompt_hash']}): {said}")
    for job in result.get("jobs") or []:
        line = f"job       #{job['id']} {job['kind']} {job['status']}, attempts {job['attempts']}"
        if job["status"] == "ready":
            line += f", next try {job['available_at']}"
        if job.get("failure_class"):
            line += f" [{job['failure_class']}] {job.get('last_error') or ''}"
        print(line)
