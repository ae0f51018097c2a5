"""`vaultmind compact`: give back the space the index file has grown by under churn.

    vaultmind compact [--vault V] [--json]

The index's rows are copied into a new file, which is put in the old one's place
(`index/compact.py`); nothing is derived again and nothing is lost. Through the daemon when
one runs (it holds the index), else here. The daemon also compacts by itself, when idle, once
the file is more than twice what it holds (`upkeep`).
"""

from __future__ import annotations

import argparse
from typing import Any

from vaultmind.cli.args import vault_args
from vaultmind.cli.context import config_from_args, through_daemon_or_local
from vaultmind.cli.output import emit

_MB = 2**20


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "compact",
        help="give back the space the index file grew by (copies it into a new file; nothing is lost)",
        description=(
            "Copy the index into a new file and put it in the old one's place, giving back the space "
            "edits, renames and deletes left unused in it. Every row is kept (vectors, entity and LLM caches, "
            "the admission queue); an interrupted run leaves the old file as it was."
        ),
    )
    vault_args(p)
    p.set_defaults(handler=cmd_compact)


def cmd_compact(args: argparse.Namespace) -> int:
    def remote(client: Any) -> dict[str, Any]:
        from vaultmind.client import WORK_TIMEOUT_S

        result: dict[str, Any] = client.call("POST", "/v1/compact", {}, timeout=WORK_TIMEOUT_S)
        return result

    config = config_from_args(args)
    result = through_daemon_or_local(config, remote, lambda memory: memory.compact(), progress=True)
    if args.json:
        emit(result)
    else:
        before, after = result["before_bytes"] / _MB, result["after_bytes"] / _MB
        print(f"vaultmind: compacted the index of {config.vault}: {before:.1f} MB → {after:.1f} MB")
    return 0
