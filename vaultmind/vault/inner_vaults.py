"""The vaults inside a folder given (or worked in) for a vault, and the hint that names them.

A folder that holds a vault (a clone whose vault is its `vault/`, a folder of several vaults)
is a common place to stand or to point a command at. The hint names every vault found there,
each with the command that takes it: `--vault` for one vaultmind already set up, `init
--existing` for an Obsidian vault it has not.
"""

from __future__ import annotations

import os
from pathlib import Path

from vaultmind.shell import command_line
from vaultmind.vault.layout import STATE_DIR

OBSIDIAN_DIR = ".obsidian"
NAMED_MOST = 5  # of the vaults inside a folder, the hint names this many


def vaults_inside(root: Path, depth: int = 2) -> list[Path]:
    """The folders within `depth` levels under `root` (dot-folders aside) that hold Obsidian's
    settings folder or vaultmind's, nearest first, then by name; not the folders inside those.
    It runs on an error's path (a command given a home folder, or run in one): a folder it may
    not read is passed over, and a file is told from a folder without a look at each."""
    folders = _folders(root)
    found = [folder for folder in folders if is_vault(folder)]
    if depth > 1:
        found += [inner for folder in folders if folder not in found for inner in vaults_inside(folder, depth - 1)]
    return found


def _folders(root: Path) -> list[Path]:
    """The folders right under `root`, dot-folders aside, by name; none when it cannot be listed."""
    try:
        with os.scandir(root) as entries:
            return sorted(Path(entry.path) for entry in entries if not entry.name.startswith(".") and _is_folder(entry))
    except OSError:
        return []


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # (the kind the listing gave; a symlink's target looked at)
    except OSError:
        return False


def inner_vaults_hint(inner: list[Path]) -> str:
    """What to type for the vaults `inner` (not empty): `--vault` with each one vaultmind has set
    up (`vaultmind status --vault A`), `init --existing` with each Obsidian vault it has not."""
    named = inner[:NAMED_MOST]
    made = [vault for vault in named if (vault / STATE_DIR).is_dir()]
    unmade = [vault for vault in named if vault not in made]
    said = []
    if made:
        lines = " or ".join(f"`{command_line('status', vault=vault)}`" for vault in made)
        said.append(f"pass --vault with {_which(made, 'vaultmind vault')} inside it: {lines}")
    if unmade:
        lines = " or ".join(f"`{command_line('init', '--existing', vault)}`" for vault in unmade)
        said.append(f"point at {_which(unmade, 'Obsidian vault' if made else 'vault')} inside it: {lines}")
    more = f" ({len(inner) - len(named)} more vaults are inside it)" if len(inner) > len(named) else ""
    return "; ".join(said) + more


def _which(vaults: list[Path], kind: str) -> str:
    return f"the {kind}" if len(vaults) == 1 else f"one of the {kind}s"


def is_vault(folder: Path) -> bool:
    """Whether `folder` holds Obsidian's settings folder or vaultmind's (a folder it may not look
    into holds neither, as far as it can tell)."""
    return os.path.isdir(folder / OBSIDIAN_DIR) or os.path.isdir(folder / STATE_DIR)
