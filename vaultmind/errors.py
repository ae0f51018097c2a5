"""One error hierarchy. Every error carries a human message and, for files, the path.

Adapters (CLI, HTTP API, MCP) map these once: exit code, JSON envelope, tool error.
"""

from __future__ import annotations

from pathlib import Path


class VaultmindError(Exception):
    """Base of every error vaultmind raises on purpose."""

    exit_code = 1
    code = "error"

    def __init__(self, message: str, *, path: str | Path | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = str(path) if path is not None else None
        self.hint = hint

    def __str__(self) -> str:
        """One line, the hint after the message ("…; hint: …"): a hint in brackets nested the
        brackets of a hint or message that has its own."""
        return f"{self.what}; hint: {self.hint}" if self.hint else self.what

    @property
    def what(self) -> str:
        """The message, after the path it is about."""
        return f"{self.path}: {self.message}" if self.path else self.message

    def to_dict(self) -> dict[str, str | None]:
        return {"code": self.code, "message": self.message, "path": self.path, "hint": self.hint}


class UsageError(VaultmindError):
    """The caller asked for something that cannot be done as asked."""

    exit_code = 2
    code = "usage"


class ConfigError(VaultmindError):
    """`.vaultmind/config.toml` is missing, malformed or holds an invalid value."""

    code = "config"


class VaultError(VaultmindError):
    """The vault folder is missing, not a vault, or cannot be written where vaultmind must."""

    code = "vault"


class RefuseToClobber(VaultError):
    """A write would overwrite something vaultmind does not own."""

    code = "refuse_to_clobber"


class NoteReadError(VaultmindError):
    """A file in the vault could not be read or decoded; it is reported, never fatal."""

    code = "note_read"


class IngestError(VaultmindError):
    """An export could not be ingested; names the file and line or record. Nothing was written."""

    code = "ingest"


class IndexError_(VaultmindError):
    """The DuckDB index failed; the index is a cache and can always be rebuilt."""

    code = "index"


class IndexCorrupt(IndexError_):
    """The index file cannot be opened; it is quarantined and rebuilt."""

    code = "index_corrupt"


class IndexBusy(IndexError_):
    """Another process holds the index (DuckDB allows one writer per file)."""

    exit_code = 3
    code = "index_busy"


class IndexUnavailable(IndexError_):
    """The index's connection was closed on purpose (a compaction, the reopen after a rebuild)
    and could not be opened again yet: retried in the background and by the next request
    (`index.reopening`); nothing is lost meanwhile, the file is whole."""

    exit_code = 3
    code = "index_unavailable"


class EmbedError(VaultmindError):
    """An embedder failed (model missing, Ollama unreachable, bad response)."""

    code = "embed"


class DaemonError(VaultmindError):
    """The running daemon could not be reached or answered with an error."""

    code = "daemon"


class SyncStopped(VaultmindError):
    """A whole-vault sync left off at a batch boundary because its daemon is stopping: the
    batches applied are committed, the next sync applies the rest. Also a compaction given up
    for the same reason (`index.compact`), the index as it was."""

    code = "stopped"


class Unauthorized(VaultmindError):
    """A request to the daemon's API without its bearer token (answered 401)."""

    code = "unauthorized"


class Internal(VaultmindError):
    """vaultmind itself failed while answering an API request (answered 500)."""

    code = "internal"


class NotFound(VaultmindError):
    """A requested note, leaf or resource does not exist."""

    exit_code = 4
    code = "not_found"


_FREE_SPACE = "free some space or fix the disk, then run the command again; the notes are untouched"
_READ_ONLY = (
    "vaultmind keeps its index under the vault's .vaultmind/ folder and must write there: mount "
    "or copy the vault where it can be written, then run the command again; the notes are untouched"
)
_NOT_YOURS = (
    "run vaultmind as the user who owns the vault, or give yourself write access to this file "
    "and its folder, then run the command again"
)

_NO_ACCESS = "give yourself access to this file (or move it out of the way), then run the command again"

_STORAGE_FAILURES = (
    ("No space left on device", "no space left on the device that holds the index", _FREE_SPACE),
    ("Disk quota exceeded", "the disk quota of the device that holds the index is used up", _FREE_SPACE),
    ("Read-only file system", "the index is on a read-only file system", _READ_ONLY),
)


def storage_error(exc: BaseException) -> VaultmindError | None:
    """A full or read-only disk under `.vaultmind/`, or a file there this user may not write,
    as the error a person can act on (DuckDB and the OS report it in their own words, deep in
    a traceback); None for anything else."""
    text = str(exc)
    for words, message, hint in _STORAGE_FAILURES:
        if words in text:
            return VaultmindError(message, hint=f"{hint} ({text})")
    if isinstance(exc, PermissionError):
        under_index = exc.filename is not None and ".vaultmind" in Path(str(exc.filename)).parts
        return VaultError("permission denied", path=exc.filename, hint=_NOT_YOURS if under_index else _NO_ACCESS)
    return None


def index_access_error(exc: BaseException, path: Path) -> VaultmindError | None:
    """The index file at `path` on a read-only file system, or one this user may not write
    (another user's, made read-only), as an error saying so; None for anything else. Such a
    file is sound: it must be left where it is, not moved aside as a broken one."""
    text = str(exc)
    if "Read-only file system" in text:
        return VaultError("the index is on a read-only file system", path=path, hint=f"{_READ_ONLY} ({text})")
    if isinstance(exc, PermissionError) or any(words in text for words in _NOT_PERMITTED):
        return VaultError(
            "the index cannot be written by you (permission denied)",
            path=path,
            hint=f"{_NOT_YOURS}; the index is left as it is ({text})",
        )
    return None


# How the OS refuses a file to this user, as DuckDB quotes it: EACCES, and EPERM (a file made
# immutable, a folder macOS's privacy protection guards, some network or FUSE file systems),
# which Python raises as PermissionError too
_NOT_PERMITTED = ("Permission denied", "Operation not permitted")


INTERRUPTED = (
    "vaultmind: interrupted; nothing is lost (the vault is the record, and what was done is kept): "
    "run the same command again to finish"
)
"""Said on Ctrl-C, so a stopped run is not taken for a finished one (or for a crash)."""


class CtrlC:
    """Whether Ctrl-C came during this command: set by the command line's SIGINT handler,
    read wherever an error may be the interruption in another guise (a DuckDB statement that
    Ctrl-C stopped fails with an error of its own)."""

    seen = False


def by_ctrl_c(exc: BaseException) -> bool:
    """Whether `exc` was caused by Ctrl-C: Ctrl-C was pressed during the command, a
    KeyboardInterrupt is in its chain of causes, or it is the error DuckDB raises in its place
    ("KeyboardInterrupt: <EMPTY MESSAGE>", with nothing chained)."""
    if CtrlC.seen:
        return True
    return any(isinstance(seen, KeyboardInterrupt) or str(seen).startswith("KeyboardInterrupt") for seen in chain(exc))


def chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the errors that caused it, each once."""
    links: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and link not in links:
        links.append(link)
        link = link.__cause__ or link.__context__
    return links
