"""Find a running daemon for a vault and talk to it over its loopback API.

The daemon publishes `.vaultmind/daemon.json` (owner-only) with its pid, port and a fresh
bearer token. A stale file (process gone, port closed) is ignored. A daemon that is still
starting (its first reconcile, loading what queries read: about 20 s at 50,000 notes) answers
once it is ready, so a client waits up to `STARTING_TIMEOUT_S` for it instead of the usual
`timeout`.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from vaultmind.config import Config
from vaultmind.errors import DaemonError, NotFound, UsageError, VaultmindError

DAEMON_FILE = "daemon.json"
STARTING_TIMEOUT_S = 900.0
HEALTH_TIMEOUT_S = 2.0  # a daemon's health answer is waited for this long
# How long a client waits for work whose answer it needs however long it takes (a sync of what an
# ingest wrote, a rebuild, a flush, a document written and indexed): never called "busy".
WORK_TIMEOUT_S = 3600.0
_TOO_LARGE_HINT = "the request is over the daemon's size limit: stop it (`vaultmind stop`) and run the command without it"
# The daemon listens on this machine: a proxy in the environment (HTTP_PROXY) is never asked,
# it would see the bearer token and every question, and cannot reach this machine's loopback.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def daemon_file(config: Config) -> Path:
    return config.state_dir / DAEMON_FILE


class DaemonClient:
    def __init__(self, host: str, port: int, token: str, timeout: float = 30.0):
        host = host.strip("[]")
        self.base = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"  # (an IPv6 address: bracketed)
        self.token = token
        self.timeout = timeout
        self.starting = False  # the daemon said it has not finished starting (`find_daemon`)
        self.loading = False  # the daemon said a whole-vault load (a rebuild) holds its index
        self.pid: int | None = None  # the daemon's process, from daemon.json (`find_daemon`)
        self.doing: str | None = None  # what the daemon said it does while it starts (`find_daemon`)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        data = _encoded(body) if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with _DIRECT.open(request, timeout=timeout or self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            try:
                error = json.loads(exc.read()).get("error", {})
            except (json.JSONDecodeError, AttributeError):
                error = {}
            message = error.get("message") or f"daemon answered HTTP {exc.code}"
            cls: type[VaultmindError] = {400: UsageError, 404: NotFound, 413: UsageError}.get(exc.code, DaemonError)
            hint = error.get("hint") or (_TOO_LARGE_HINT if exc.code == 413 else None)
            raise cls(message, path=error.get("path"), hint=hint) from exc
        except (urllib.error.URLError, OSError) as exc:
            health = self._health() if path != "/v1/health" and _timed_out(exc) else None
            if health is not None:
                raise DaemonError(
                    f"the daemon at {self.base} is busy: no answer to {method} {path} within "
                    f"{timeout or self.timeout:g} s, though it is running",
                    hint=_busy_with(health),
                ) from exc
            raise DaemonError(
                f"cannot reach the daemon at {self.base}: {exc}",
                hint="it may have stopped (see its output); run the command again to work without it",
            ) from exc
        try:
            return json.loads(raw)
        except ValueError as exc:  # another server holds the port a stale daemon.json names
            raise DaemonError(
                f"the server at {self.base} is not a vaultmind daemon: its answer to {method} {path} is not JSON",
                hint="its daemon.json is stale; run the command again to work without it",
            ) from exc

    def _health(self) -> dict[str, Any] | None:
        """The daemon's health check when it answers at once (it is alive, only busy), else None."""
        try:
            health = self.call("GET", "/v1/health", timeout=HEALTH_TIMEOUT_S)
        except DaemonError:
            return None
        return health if isinstance(health, dict) else {}


def _busy_with(health: dict[str, Any]) -> str:
    """What a busy daemon does, as its health check says: compacting its index file (which
    holds every request but `status` and the health check), else most likely a large batch."""
    compacting = health.get("compacting")
    if isinstance(compacting, dict):
        done, total = compacting.get("done"), compacting.get("total")
        steps = f" (step {done} of {total})" if total else ""
        return f"it is compacting its index file{steps}, which holds requests until it is done; ask again in a moment"
    return "it may be applying a large batch of changes (see its output); ask again in a moment"


def _encoded(body: dict[str, Any]) -> bytes:
    """`body` as JSON in UTF-8, not ASCII-escaped (a document's text in another script would take
    up to six times the bytes); escaped when it holds a lone surrogate (an argument's byte that
    was not UTF-8), which the daemon then names as the command would without it."""
    try:
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body).encode()


def _timed_out(exc: BaseException) -> bool:
    reason = getattr(exc, "reason", exc)
    return isinstance(exc, TimeoutError) or isinstance(reason, TimeoutError) or "timed out" in str(exc)


def published(config: Config) -> DaemonClient | None:
    """A client for the daemon whose address `daemon.json` names, when its process runs; not
    asked yet (`find_daemon` asks it)."""
    path = daemon_file(config)
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        pid, port, token = int(info["pid"]), int(info["port"]), str(info["token"])
        host = str(info.get("host", "127.0.0.1"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if pid != os.getpid() and not alive(pid):
        return None
    client = DaemonClient(host, port, token)
    client.pid = pid
    return client


def find_daemon(config: Config) -> DaemonClient | None:
    """A client for the vault's running daemon, or None when none answers."""
    client = published(config)
    if client is None:
        return None
    try:
        health = client.call("GET", "/v1/health", timeout=HEALTH_TIMEOUT_S)
    except VaultmindError:
        return None
    if not isinstance(health, dict) or health.get("ok") is not True:
        return None  # a server that is not vaultmind's (a stale daemon.json's port, reused)
    if not _same_folder(health.get("vault"), config.vault):
        return None  # the daemon of another folder: this vault was copied, or moved, while it ran
    if health.get("ready") is False or health.get("loading"):
        client.starting = health.get("ready") is False
        client.doing = health.get("doing") if isinstance(health.get("doing"), str) else None
        client.loading = bool(health.get("loading"))
        client.timeout = max(client.timeout, STARTING_TIMEOUT_S)
    return client


def _same_folder(served: object, vault: Path) -> bool:
    """Whether the folder a daemon serves (its health's `vault`) is `vault`. A daemon.json that
    came with a vault copied while its daemon ran names the original's daemon; one that moved
    with its vault, a daemon still watching the old path."""
    try:
        return isinstance(served, str) and os.path.samefile(served, vault)
    except OSError:
        return False


def alive(pid: int) -> bool:
    """Whether process `pid` runs (one of another user's counts). Asked without a signal on
    Windows, where `os.kill(pid, 0)` would end the process."""
    if sys.platform == "win32":
        return _alive_on_windows(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _alive_on_windows(pid: int) -> bool:
    import ctypes

    still_active = 259
    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
    handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    if not handle:
        return bool(kernel32.GetLastError() == 5)  # ERROR_ACCESS_DENIED: it runs, as another user
    try:
        code = ctypes.c_ulong()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return True
        return code.value == still_active
    finally:
        kernel32.CloseHandle(handle)
