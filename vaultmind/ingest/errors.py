"""Building ingest errors that say where: `line 12: …` or `record 3: …`.

`IngestError` itself lives in the one hierarchy (`vaultmind.errors`) and is re-exported here.
"""

from __future__ import annotations

from pathlib import Path

from vaultmind.errors import IngestError

__all__ = ["IngestError", "NotAnExport", "ingest_error"]


class NotAnExport(IngestError):
    """A file that is no export of the format it was read as at all (a README, an agent's
    settings beside its transcripts), not a malformed one: skipped, said, when found in a
    folder walked."""


def ingest_error(
    path: str | Path,
    message: str,
    *,
    line: int | None = None,
    record: int | None = None,
    hint: str | None = None,
) -> IngestError:
    """An `IngestError` whose message says where: `line 12: …` or `record 3: …`."""
    where = f"line {line}: " if line is not None else f"record {record}: " if record is not None else ""
    return IngestError(where + message, path=path, hint=hint)
