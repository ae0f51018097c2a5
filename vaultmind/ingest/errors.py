"""The error an ingest adapter raises for an export it cannot read.

(The lead moves `IngestError` into `vaultmind/errors.py`; import it from here until then.)
"""

from __future__ import annotations

from pathlib import Path

from vaultmind.errors import VaultmindError


class IngestError(VaultmindError):
    """An export is malformed or unsupported; the message names the file and line or record."""

    code = "ingest"


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
