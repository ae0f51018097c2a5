"""Signal text exports, two shapes:

- `[YYYY-MM-DD, HH:MM] Name: text` (`.txt`), the shape of the older backup-to-text tools;
- signal-export's (the usual tool for Signal Desktop today): one folder per chat,
  `<chat name>/chat.md`, its lines `[YYYY-MM-DD HH:MM:SS] Name: text`, a blank line after each
  message.

Continuation lines belong to the message above. Parsed by the WhatsApp line parser with the
date order fixed to year-month-day; times are local and read in `tz` (default UTC). The chat's
name is the file name, or its folder's for a file named `chat` or `index` (signal-export names
every chat's file `chat.md`: by the file's name, every chat was one conversation "chat").

A signal-export file's markup is made text before the lines are read, so the message ids hash
what the note shows: the reactions line `(- Alice: 👍 -)` is dropped (reactions are no
messages, as on every platform; a reaction added between two exports gave the message another
id, and a second copy), an attachment `![IMG_1.jpg](./media/…)` — a link into the export,
broken in the vault — reads `[attachment: IMG_1.jpg]`, a sticker `[sticker: 👍]`. The older
shape's text is read as it always was (its notes' ids hash it so).
"""

from __future__ import annotations

import re
from datetime import UTC, tzinfo
from pathlib import Path

from vaultmind.ingest.common import read_text
from vaultmind.ingest.model import SourceBatch
from vaultmind.ingest.whatsapp import parse_line_chat

# signal-export's message line (`Message.to_md`): a space, not a comma, and seconds
SIGNAL_EXPORT_RE = re.compile(r"\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\] [^\n:]{1,80}: ")
_FOLDER_NAMED = ("chat", "_chat", "index")
# signal-export appends `\n(- Name: emoji, … -)` to a message's text, then its attachments
_REACTIONS_RE = re.compile(r"\n\(- .*? -\)([^\n]*)")
_STICKER_LINE_RE = re.compile(r"^\(\( (.*?) \)\)", re.MULTILINE)
_STICKER_RE = re.compile(r"\[([^\]\n]*)\]\(\.\./exported_stickers/[^)\n]*\)")
_ATTACHMENT_RE = re.compile(r"!?\[([^\]\n]*)\]\(\./[^)\n]*\)")


def parse_signal(path: Path, *, tz: tzinfo = UTC) -> list[SourceBatch]:
    """Parse one Signal text export."""
    text = read_text(path)
    first = next((line for line in text.split("\n") if line.strip()), "").lstrip("\ufeff")
    if SIGNAL_EXPORT_RE.match(first):
        text = signal_export_text(text)
    return parse_line_chat(path, text, platform="signal", name=signal_chat_name(path), tz=tz, order="YMD")


def signal_chat_name(path: Path) -> str:
    """The chat's name: the file's, or its folder's for `chat.md` / `index.md` (signal-export
    writes `<chat name>/chat.md`)."""
    stem = path.stem.strip()
    if named_by_folder(path) and path.parent.name.strip():
        stem = path.parent.name.strip()
    return stem or "signal"


def named_by_folder(path: Path) -> bool:
    """Whether `path` is named as signal-export names every chat's file (`chat.md`), its chat
    named by its folder."""
    return path.stem.strip().lower() in _FOLDER_NAMED


def signal_export_text(text: str) -> str:
    """signal-export's markup as text (see the module doc); a line keeps its place (an error
    names the line of the file)."""
    text = _REACTIONS_RE.sub(r"\1\n", text)  # (what follows it joins the text; the line stays, empty)
    text = _STICKER_LINE_RE.sub(r"[sticker: \1]", text)
    text = _STICKER_RE.sub(r"[sticker: \1]", text)
    return _ATTACHMENT_RE.sub(r"[attachment: \1]", text)
