"""The vault a benchmark runs on: its configuration, the notes vaultmind indexes in it, its
index files, the seed it was generated with."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from vaultmind.bench.synth import read_manifest
from vaultmind.client import find_daemon
from vaultmind.config import DEFAULT_IGNORE, Config, load_config
from vaultmind.errors import UsageError
from vaultmind.index.snapshot_file import SNAPSHOTS
from vaultmind.vault.layout import is_note
from vaultmind.vault.scan import IgnoreRules

# the index, and what is derived from it beside it: a load after `delete_index` is a cold one
_STATE_FILES = ("index.duckdb", "index.duckdb.wal", *SNAPSHOTS)


def vault_config(vault: Path, embed_provider: str | None) -> Config:
    return load_config(vault, embed_provider=embed_provider)


def refuse_running_daemon(vault: Path) -> None:
    """Raise `UsageError` when a vaultmind daemon serves `vault`. Every benchmark that deletes,
    rebuilds or opens the index asks first: deleting a served index left the daemon writing to
    a removed file (its index lost, DuckDB crashing under it), and a `vaultmind reindex` run
    beside it went through the daemon, so its memory was the client's."""
    if find_daemon(vault_config(vault, None)) is not None:
        raise UsageError(f"a vaultmind daemon already runs for {vault}", hint="stop it before benchmarking")


def delete_index(config: Config) -> None:
    for name in _STATE_FILES:
        (config.state_dir / name).unlink(missing_ok=True)


def note_paths(vault: Path, ignore: Sequence[str] = DEFAULT_IGNORE) -> list[str]:
    """Vault-relative paths of the notes vaultmind indexes (sorted), with these ignore rules."""
    rules = IgnoreRules(ignore)
    out: list[str] = []
    for folder, dirs, files in os.walk(vault):
        rel_dir = os.path.relpath(folder, vault).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirs[:] = sorted(d for d in dirs if not rules.ignores_dir(rel_dir + d))
        out.extend(rel_dir + f for f in files if is_note(f) and not rules.ignores_file(rel_dir + f))
    return sorted(out)


def vault_seed(vault: Path) -> int:
    """The seed a synthetic vault was generated with (0 when it records none)."""
    recorded = (read_manifest(vault) or {}).get("seed")
    return recorded if isinstance(recorded, int) else 0
