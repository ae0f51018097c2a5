"""The last ingest's warnings, kept per kind of input (`chat`, `email`, `document`, …) in
`.vaultmind/ingest-warnings.json`, so that `vaultmind status` can say later what an ingest left
out and why (a message without text, a copy of a message left out, a line that could not be
read) after its output has scrolled away or went to a script's log.

Each kind's entry is replaced by its next ingest (one without warnings empties it): the file
holds what the last ingest of each kind said, never a growing log. It is vaultmind's state, not
a note: deleting it forgets the warnings, nothing else. The paths are kept absolute (those the
ingest was given, and the one a warning starts with: "../exports/a.txt: format not recognised"):
typed relative to the folder the ingest ran in, they pointed nowhere from any other.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vaultmind.vault.atomic import folder_locked, write_atomic

FILE_NAME = "ingest-warnings.json"


def keep_warnings(state_dir: Path, kind: str, paths: list[str], warnings: list[str], at: datetime | None = None) -> None:
    """Keep `warnings` as what the last ingest of `kind` (of `paths`) said; raises OSError when
    the file cannot be written. Two ingests ending at once take turns (the folder locked while
    the file is read and written again): neither's entry is lost."""
    with folder_locked(state_dir):
        kept = _read(state_dir)
        kept[kind] = {
            "at": (at or datetime.now(UTC)).isoformat(timespec="seconds"),
            "paths": [from_anywhere(path) for path in paths],
            "warnings": [from_anywhere(warning) for warning in warnings],
        }
        data = json.dumps(kept, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
        write_atomic(state_dir / FILE_NAME, data.encode("utf-8"), overwrite=True)


_IN_FILE = re.compile(r" message \S+\Z")  # "inbox.mbox message 3": a message in the file named (`RawMessage.origin`)


def from_anywhere(text: str) -> str:
    """`text`, a path or a warning led by one ("PATH: what", "PATH message 3: what"), with that
    path absolute when it is relative to the current folder (and there); anything else as it is."""
    path = _IN_FILE.sub("", text.partition(": ")[0])
    if path and not os.path.isabs(path) and os.path.lexists(path):
        return os.path.abspath(path) + text[len(path) :]
    return text


def kept_warnings(state_dir: Path) -> list[dict[str, Any]]:
    """What the last ingest of each kind said, by kind, those without warnings left out:
    `[{kind, at, paths, warnings}]`."""
    return [{"kind": kind, **entry} for kind, entry in sorted(_read(state_dir).items()) if entry.get("warnings")]


def _read(state_dir: Path) -> dict[str, dict[str, Any]]:
    """The file's entries; none when it is missing or unreadable (it is rewritten whole by the
    next ingest), and no entry that is not as `keep_warnings` writes it (a file edited by hand):
    `status` reads each entry's time, paths and warnings."""
    try:
        raw: Any = json.loads((state_dir / FILE_NAME).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    if not isinstance(raw, dict):
        return {}
    return {
        str(kind): entry
        for kind, entry in raw.items()
        if isinstance(entry, dict)
        and isinstance(entry.get("at"), str)
        and isinstance(entry.get("paths"), list)
        and isinstance(entry.get("warnings"), list)
        and all(isinstance(item, str) for item in (*entry["paths"], *entry["warnings"]))
    }
