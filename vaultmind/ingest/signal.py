"""Signal text exports: `[YYYY-MM-DD, HH:MM] Name: text`, continuation lines belong to the
message above (the shape of the common Signal backup-to-text tools).

Parsed by the WhatsApp line parser with the date order fixed to year-month-day; times are local
and read in `tz` (default UTC). The chat's name is the file name.
"""

from __future__ import annotations

from datetime import UTC, tzinfo
from pathlib import Path

from vaultmind.ingest.common import read_text
from vaultmind.ingest.model import SourceBatch
from vaultmind.ingest.whatsapp import parse_line_chat


def parse_signal(path: Path, *, tz: tzinfo = UTC) -> list[SourceBatch]:
    """Parse one Signal text export."""
    name = path.stem.strip() or "signal"
    return parse_line_chat(path, read_text(path), platform="signal", name=name, tz=tz, order="YMD")
