"""`vaultmind doctor`: check what the vault's memory needs and say what to fix.

    vaultmind doctor [--vault V] [--json]

Exit status 0 when nothing failed (warnings allowed), 1 otherwise. Settings that do not read
are a failed check of their own, after which only the checks needing no vault run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any

from vaultmind.cli.args import vault_args
from vaultmind.cli.output import emit
from vaultmind.errors import VaultmindError

_MARK = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}
NAME_WIDTH = 10  # the longest check's name ("embeddings")


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "doctor",
        help="check what the memory needs (index, daemon, models, Ollama, watcher limits, disk) and say what to fix",
        description=(
            "Check the vault's memory part by part — the index, the daemon, the NER model, the embedder, Ollama "
            "(when the settings use it), the system's file-watch limit, free disk — each really used once, and "
            "say what to do about anything wrong. Exit status 1 when a check failed."
        ),
    )
    vault_args(p)
    p.set_defaults(handler=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    from vaultmind.cli.context import config_from_args
    from vaultmind.doctor import Check, failed, run_checks, software

    checks: list[Check] = []
    try:
        config = config_from_args(args)
    except VaultmindError as exc:
        found: Iterable[Check] = [software(), failed("vault", exc)]
    else:
        found = run_checks(config)
    for check in found:
        checks.append(check)
        if not args.json:  # each as it is done: the models take a few seconds to load
            print(f"{_MARK[check.state]}  {check.name:<{NAME_WIDTH}}  {check.detail}", flush=True)
            if check.hint:
                print(f"{'':4}  {'':<{NAME_WIDTH}}  → {check.hint}", flush=True)
    ok = all(check.state != "fail" for check in checks)
    if args.json:
        emit({"ok": ok, "checks": [check.as_dict() for check in checks]})
        return 0 if ok else 1
    counts = {state: sum(check.state == state for check in checks) for state in ("warn", "fail")}
    summary = ", ".join(f"{n} {'warning' if s == 'warn' else 'failure'}{'' if n == 1 else 's'}" for s, n in counts.items() if n)
    print(f"vaultmind doctor: {summary or 'all good'}", file=sys.stderr)
    return 0 if ok else 1
