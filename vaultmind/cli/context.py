"""Where a command runs: the vault it names, and who answers — the daemon that owns the
index, or the index opened in this process."""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultmind.cli.output import Progress
from vaultmind.errors import ConfigError, UsageError
from vaultmind.shell import command_line

if TYPE_CHECKING:
    from vaultmind.client import DaemonClient
    from vaultmind.held_memory import HeldMemory
    from vaultmind.memory import Memory


STATE_DIR = ".vaultmind"  # `vault.layout.STATE_DIR`, without importing it for every command
# Held while a command's index is open in this process: `vaultmind mcp` answers calls on several
# threads, and two indexes opened at once in one process conflict (their first writes to its tables).
_OPENING = threading.RLock()


def resolve_vault(arg: Path | None) -> Path:
    """The vault a command names: `--vault`, else $VAULTMIND_VAULT, else the vault the current
    folder is in — the nearest folder, from it upwards, that holds `.vaultmind/`. A folder in no
    vault is an error: a command run from a vault's subfolder, or from a home folder, must not
    index it as a vault of its own."""
    named = ""  # where the path came from, when a user may not remember setting it
    if arg is not None:
        vault = arg
    elif os.environ.get("VAULTMIND_VAULT"):
        vault = Path(os.environ["VAULTMIND_VAULT"])
        named = " (from $VAULTMIND_VAULT)"
    else:
        here = Path.cwd()
        found = next((folder for folder in (here, *here.parents) if (folder / STATE_DIR).is_dir()), None)
        if found is None:
            from vaultmind.vault.inner_vaults import inner_vaults_hint, vaults_inside

            inner = vaults_inside(here)  # run from the folder that holds the vault (or several)
            raise UsageError(
                f"{here} is not in a vaultmind vault (no .vaultmind folder here or above)",
                hint=inner_vaults_hint(inner) if inner else "pass --vault PATH, run the command inside a vault, or set one up with "
                "`vaultmind init PATH` (`vaultmind init --existing PATH` for a vault you already have)",
            )
        vault = found
    vault = vault.expanduser()
    if not vault.is_dir():
        problem = "is a file, not a folder" if vault.exists() else "does not exist"
        hint = "pass --vault PATH or run `vaultmind init PATH`"
        raise UsageError(f"vault folder {vault}{named} {problem}", hint=_env_hint(named, hint))
    if not (vault / STATE_DIR).is_dir():  # vaultmind writes into a vault (entity notes, summaries): never unasked
        from vaultmind.vault.template import setup_hint

        hint = setup_hint(vault)
        raise UsageError(f"{vault}{named} is not a vaultmind vault (it has no {STATE_DIR} folder)", hint=_env_hint(named, hint))
    return vault


def _env_hint(named: str, hint: str) -> str:
    """`hint`, led by how to stop $VAULTMIND_VAULT from naming the vault when it did."""
    return f"correct or unset $VAULTMIND_VAULT, or {hint}" if named else hint


def config_from_args(args: argparse.Namespace) -> Any:
    from vaultmind.config import CONFIG_RELPATH, load_config
    from vaultmind.embed.providers import check_provider

    config = load_config(resolve_vault(args.vault))
    try:
        check_feature_settings(config)
        if not os.environ.get("VAULTMIND_EMBED_PROVIDER"):  # else the file did not name it
            check_provider(config.embed_provider)
    except ConfigError as exc:  # the feature modules know the file only by its place in a vault
        if exc.path is None or not Path(exc.path).is_absolute():
            exc.path = str(config.vault / CONFIG_RELPATH)
        raise
    return config


def check_feature_settings(config: Any) -> None:
    """The feature modules' settings, checked by their own parsers when config.toml sets any of
    them, so a bad value stops every command at once instead of failing later in the daemon.
    Nothing is imported for a section the file leaves alone."""
    sections = {key.split(".", 1)[0] for key in config.extra}
    if "trees" in sections:
        from vaultmind.tree.summarizers import summarizer_factory

        summarizer_factory(config)  # the settings, and the summarizer they name
    if "queue" in sections:
        from vaultmind.queue.workers import QueueSettings

        QueueSettings.from_extra(config.extra)
    if "entities" in sections:
        from vaultmind.entities.settings import EntitySettings

        EntitySettings.from_config(config)
    if "admission" in sections:
        from vaultmind.admission.decide import Policy

        Policy.from_extra(config.extra, config.ollama_chat_model)


def through_daemon_or_local(
    config: Any,
    remote: Callable[[Any], Any],
    local: Callable[[Any], Any],
    *,
    progress: bool = False,
    daemon_shows_progress: bool = False,
    held: HeldMemory | None = None,
) -> Any:
    """Run `remote(client)` when a daemon owns the index, else `local(memory)` in-process.

    A daemon that has claimed the vault but not published its address yet (it is opening the
    index) is waited for, up to `STARTING_ADDRESS_S`, whether it is met before the index is
    opened here or while this process waits for the index it holds; if it ends meanwhile, or
    the index is busy without one, the index is opened here, or the command fails busy.
    `progress`: a long command, which shows its progress when it runs here, and says what it
    waits for when the daemon has not answered after `REMOTE_QUIET_S`; `daemon_shows_progress`: the daemon shows this work's progress
    in its own output (a sync, a reindex), so the notice points there. The index is opened
    here by one thread at a time (`_OPENING`). `held`: a long-lived process's memory, kept
    open between its calls (`HeldMemory`), used instead of an index opened for this call.
    """
    from vaultmind.client import find_daemon
    from vaultmind.errors import IndexBusy
    from vaultmind.memory import Memory

    client = find_daemon(config) or _starting_daemon(config)
    if client is not None:
        return _remote(client, remote, config, progress=progress, daemon_shows_progress=daemon_shows_progress)
    try:
        if held is not None:
            with held.memory() as memory, memory.index.replaced_when_broken():
                return local(memory)
        # an upgrade of the index that takes seconds is said whatever the command (`status` too)
        with (
            _OPENING,
            Progress(enabled=progress) as bar,
            Progress() as upgrade,
            Memory.open(config, progress=bar, upgrade=upgrade) as memory,
            memory.index.replaced_when_broken(),  # a damaged file met by any statement: moved aside
        ):
            return local(memory)
    except IndexBusy:  # a daemon may have claimed the vault meanwhile, its index open and its api not up yet
        client = find_daemon(config) or _starting_daemon(config)
        if client is None:
            raise
        return _remote(client, remote, config, progress=progress, daemon_shows_progress=daemon_shows_progress)


def held_memory(config: Any) -> HeldMemory:
    """The memory `vaultmind mcp` keeps open between its calls while no daemon runs, opened
    by one thread at a time with the others of this process (`_OPENING`)."""
    from vaultmind.held_memory import HeldMemory

    def opened() -> Memory:
        from vaultmind.memory import Memory

        with Progress() as upgrade:  # an upgrade of the index that takes seconds is said
            return Memory.open(config, upgrade=upgrade)

    return HeldMemory(config, opened, _OPENING)


def _starting_daemon(config: Any) -> DaemonClient | None:
    """The client of a daemon that holds the vault's claim but has no address yet, once it
    publishes one; None when no daemon holds the claim, or it ends or stays silent meanwhile."""
    from vaultmind.claim import await_address, claim_holder, read_start
    from vaultmind.starting import starting_line

    pid = claim_holder(config)
    if pid is None:
        return None
    busy = _busy_or_silent(config)
    if busy is not None:
        return busy
    start = read_start(config)
    state = starting_line(start) if start is not None else "starting"
    print(
        f"vaultmind: the daemon for {config.vault} (pid {pid}) is {state}; waiting for its api to come up "
        f"(up to {STARTING_ADDRESS_S:g} s)…",
        file=sys.stderr,
        flush=True,
    )
    return await_address(config, STARTING_ADDRESS_S, holding=lambda: claim_holder(config) == pid)


def _busy_or_silent(config: Any) -> DaemonClient | None:
    """The vault's daemon has published its address and runs, holding the vault, yet its health
    check got no answer (`find_daemon` found none). A daemon busy on a loaded machine answers
    within a few seconds: asked again for up to `BUSY_GRACE_S`, its client then. One that stays
    silent is a `DaemonError` said at once, with how to stop it (it was called "starting", waited
    for 60 s, and the command then failed on the index it holds)."""
    from vaultmind.client import find_daemon, published
    from vaultmind.doctor import held_by_daemon
    from vaultmind.errors import DaemonError

    held = held_by_daemon(config)
    if held is None or held.state != "warn":  # none, or starting (no address yet): waited for
        return None
    deadline = time.monotonic() + BUSY_GRACE_S
    while time.monotonic() < deadline:
        time.sleep(0.5)
        answered = find_daemon(config)
        if answered is not None:
            return answered
    client = published(config)
    stop = command_line("stop", "--vault", config.vault)
    raise DaemonError(
        f"the daemon for {config.vault} (pid {held.pid}{f', {client.base}' if client else ''}) does not answer "
        "its health check",
        hint=f"it may be busy with a large change (its output says): ask again in a moment; if it stays silent, "
        f"stop it: `{stop}` (or `kill {held.pid}`)",
    )


def _remote(
    client: DaemonClient,
    remote: Callable[[Any], Any],
    config: Any,
    *,
    progress: bool = False,
    daemon_shows_progress: bool = False,
) -> Any:
    """`remote(client)`, saying so first when the daemon has not finished starting or is loading
    the whole vault (its answer then waits for that). A long command (`progress`) that the
    daemon has not answered after `REMOTE_QUIET_S` says what it waits for: where the work's
    progress shows when the daemon shows it, else that it waits for the daemon's answer."""
    if client.loading and not client.starting:
        print(
            f"vaultmind: the daemon for {config.vault} is loading the whole vault into its index "
            "(a rebuild); waiting for it…",
            file=sys.stderr,
            flush=True,
        )
    elif client.starting:
        print(
            f"vaultmind: the daemon for {config.vault} is still starting ({client.doing or 'reconciling the vault and loading its index'}); "
            "waiting for it…",
            file=sys.stderr,
            flush=True,
        )
    if not progress:
        return remote(client)
    if daemon_shows_progress:
        Handed.vault = config.vault
        said = f"vaultmind: the daemon at {client.base} is doing this; its progress shows in its own output…"
    else:
        said = (
            f"vaultmind: waiting for the daemon at {client.base} to answer; it may be busy loading its "
            "index or applying changes to the vault…"
        )
    notice = threading.Timer(REMOTE_QUIET_S, lambda: print(said, file=sys.stderr, flush=True))
    notice.daemon = True
    notice.start()
    try:
        return remote(client)
    finally:
        notice.cancel()


class Handed:
    """The vault whose daemon this command handed long work to (a reindex, a sync, a flush),
    if it did: that work goes on in the daemon when the command is interrupted, which Ctrl-C
    must say (`cli/main.py`), not that it was left unfinished."""

    vault: Path | None = None


REMOTE_QUIET_S = 2.0  # a command through the daemon silent longer than this says what it waits for
BUSY_GRACE_S = 6.0  # a daemon whose health check got no answer is asked again this long before it is said silent
STARTING_ADDRESS_S = 60.0  # a command waits this long at most for a starting daemon's address
