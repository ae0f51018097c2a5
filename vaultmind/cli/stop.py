"""`vaultmind stop`: stop the vault's daemon from another terminal.

    vaultmind stop [--timeout S] [--vault V] [--json]

The daemon is found as every command finds it: its api (`daemon.json`), else its claim on the
vault while it starts. It is sent SIGTERM, which it takes as Ctrl-C (it finishes the batch in
hand, removes `daemon.json` and lets go of its claim), and the command waits for it to let go.
No daemon is no error: there is nothing to stop.
"""

from __future__ import annotations

import argparse
import os
import signal
import time
from typing import Any

from vaultmind.cli.args import vault_args
from vaultmind.cli.context import resolve_vault
from vaultmind.cli.output import emit
from vaultmind.errors import ConfigError, DaemonError, UsageError

_POLL_S = 0.1


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "stop",
        help="stop the vault's daemon (serve or watch) and wait for it to end",
        description=(
            "Stop the daemon that serves the vault (started by `vaultmind serve` or `watch`, running or still "
            "starting), as Ctrl-C where it runs would, and wait for it to end. Nothing to do when none runs."
        ),
    )
    p.add_argument(
        "--timeout", type=float, default=60.0, help="wait this many seconds at most for it to end (default 60)"
    )
    vault_args(p)
    p.set_defaults(handler=cmd_stop)


def cmd_stop(args: argparse.Namespace) -> int:
    from vaultmind.claim import claim_holder, daemon_pid
    from vaultmind.config import Config, load_config

    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    vault = resolve_vault(args.vault)
    try:
        config = load_config(vault)
    except ConfigError:  # stopping needs only the state folder: a broken config.toml keeps no daemon running
        config = Config(vault=vault.expanduser().resolve())
    pid = daemon_pid(config)
    if pid is None:
        return _said(args, {"stopped": False, "pid": None}, f"vaultmind: no daemon runs for {config.vault}")
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass  # it ended meanwhile
    except PermissionError:
        raise UsageError(
            f"the daemon for {config.vault} (pid {pid}) belongs to another user", hint=f"stop it as that user: kill {pid}"
        ) from None
    deadline = time.monotonic() + args.timeout
    while claim_holder(config) == pid or _still_answers(config, pid):
        if time.monotonic() >= deadline:
            raise DaemonError(
                f"the daemon for {config.vault} (pid {pid}) has not ended within {args.timeout:g} s",
                hint=f"it may be finishing a long batch (see its output); wait, or end it at once: kill -9 {pid}",
            )
        time.sleep(_POLL_S)
    return _said(args, {"stopped": True, "pid": pid}, f"vaultmind: stopped the daemon for {config.vault} (pid {pid})")


def _still_answers(config: Any, pid: int) -> bool:
    """Whether the daemon `pid` still answers on its api (where the vault has no claim: not POSIX)."""
    from vaultmind.client import find_daemon

    running = find_daemon(config)
    return running is not None and running.pid == pid


def _said(args: argparse.Namespace, report: dict[str, Any], line: str) -> int:
    if args.json:
        emit(report)
    else:
        print(line)
    return 0
