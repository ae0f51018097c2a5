"""Which chat export a file or folder is, by its content rather than its name
(`detect_chat_format`; the rules are listed in `ingest/detect.py`'s docstring). No adapter is
imported: the mail readers ask it too (a chat export given to `ingest email`)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from vaultmind.ingest.errors import IngestError
from vaultmind.ingest.signal import SIGNAL_EXPORT_RE
from vaultmind.ingest.slack import META_FILES
from vaultmind.ingest.whatsapp import HEADER_RE, chat_member
from vaultmind.vault.encoding import decode_text

HEAD_BYTES = 65536
_SIGNAL_RE = re.compile(r"\[\d{4}-\d{2}-\d{2}, \d{1,2}:\d{2}\] ")


def detect_chat_format(path: Path) -> str | None:
    """The chat format of one file or folder, or None when it is not recognised."""
    if path.is_dir():
        return "slack" if any((path / name).is_file() for name in META_FILES) else None
    suffix = path.suffix.lower()
    if suffix == ".zip":
        return _zip_format(path)
    head = _head(path)
    lead = head.lstrip()
    if suffix == ".md":  # signal-export's `<chat>/chat.md`; any other Markdown file is no chat export
        return "signal" if _signal_line(_first_line(head)) else None
    if lead.startswith(("[", "{")) and suffix != ".txt":
        return _meta_platform(path, _json_format(head))
    first = _first_line(head)
    if _SIGNAL_RE.match(first):
        return "signal"
    if HEADER_RE.match(first):
        return "whatsapp"
    return _json_format(head) if lead.startswith(("[", "{")) else None


_TELEGRAM_HTML_NAME_RE = re.compile(r"(?:messages\d*|export_results)\.html?", re.IGNORECASE)
TELEGRAM_HTML_HINT = (
    "in Telegram Desktop, export the chat again with Format: Machine-readable JSON (Export chat "
    "history → Format), then ingest the result.json it writes"
)


def telegram_html(path: Path) -> bool:
    """Whether `path` is a page of Telegram Desktop's HTML export (the export dialog's default):
    `messages.html`, `messages2.html` … (or the whole account's `export_results.html`), its
    page laid out in Telegram's `page_wrap` / `history` blocks. vaultmind reads the JSON export."""
    if not path.is_file() or _TELEGRAM_HTML_NAME_RE.fullmatch(path.name) is None:
        return False
    try:
        head = _head(path)
    except IngestError:
        return False
    return 'class="page_wrap"' in head or 'class="history"' in head


def _first_line(head: str) -> str:
    return next((line for line in head.split("\n") if line.strip()), "").lstrip("\u200e\ufeff")


def _signal_line(line: str) -> bool:
    """Whether `line` starts a Signal message: `[YYYY-MM-DD, HH:MM] ` or signal-export's
    `[YYYY-MM-DD HH:MM:SS] Name: ` (in a `.txt`, the latter is read as WhatsApp, which some
    phones write so)."""
    return _SIGNAL_RE.match(line) is not None or SIGNAL_EXPORT_RE.match(line) is not None


def _meta_platform(path: Path, found: str | None) -> str | None:
    """An Instagram-shaped export is Facebook Messenger's (the same shape) when its path says so:
    a folder of a Facebook download (`facebook-<name>-<date>/…`) or of Messenger's."""
    if found == "instagram" and any(part in name.lower() for name in path.parts for part in ("facebook", "messenger")):
        return "messenger"
    return found


def _head(path: Path) -> str:
    """The start of a file as text, for detection only: UTF-8, or UTF-16 / UTF-32 (a WhatsApp
    `.txt` or a JSON re-saved by Windows Notepad; `vault.encoding.decode_text`); a character cut
    at the end reads as U+FFFD, a binary file as nothing."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(HEAD_BYTES)
    except OSError as exc:
        raise IngestError(f"cannot read: {exc.strerror or exc}", path=path) from exc
    return (decode_text(raw).text or "").replace("\r\n", "\n")


def _zip_format(path: Path) -> str | None:
    """A Slack export's zip, or a WhatsApp chat's (`whatsapp.chat_member`: the rule the
    adapter reads it by)."""
    try:
        with zipfile.ZipFile(path) as archive:
            if any(name.rsplit("/", 1)[-1] in META_FILES for name in archive.namelist()):
                return "slack"
            return "whatsapp" if chat_member(archive) is not None else None
    except (zipfile.BadZipFile, OSError) as exc:
        raise IngestError(f"cannot read the zip: {exc}", path=path) from exc


# a chat's `type` as only Telegram writes it: an export of Telegram Desktop before 2021 has no
# `date_unixtime`, only the local `date`
_TELEGRAM_CHAT_RE = re.compile(
    r'"type"\s*:\s*"(?:personal_chat|bot_chat|saved_messages|private_group|private_supergroup'
    r'|public_supergroup|private_channel|public_channel)"'
)


_LOCOMO_RE = re.compile(r'"(?:sample_id|speaker_a|dia_id)"\s*:|^[\[\s]*\{\s*"qa"\s*:\s*\[')


def _json_format(head: str) -> str | None:
    if _LOCOMO_RE.search(head):  # (a sample's `qa` list may come first, longer than the head)
        return "locomo"
    if re.search(r'"mapping"\s*:\s*\{', head):
        return "chatgpt"
    if '"date_unixtime"' in head or re.search(r'"chats"\s*:\s*\{', head) or _TELEGRAM_CHAT_RE.search(head):
        return "telegram"
    if re.search(r'"ts"\s*:\s*"\d', head) and re.search(r'"type"\s*:\s*"message"', head):
        return "slack"
    role = re.search(r'"role"\s*:\s*"', head)
    author = re.search(r'"author"\s*:\s*"', head)
    if role and (not author or role.start() < author.start()):
        return "agent"
    if re.search(r'"sender_name"\s*:', head) and re.search(r'"timestamp_ms"\s*:', head):
        return "instagram"
    if author:
        return "generic"
    return None
