"""Where source notes go: the slug of a name, the folder of a scope, the path of a batch's note
and of its numbered siblings."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable

from vaultmind.errors import UsageError
from vaultmind.ingest.errors import IngestError
from vaultmind.ingest.model import SourceBatch
from vaultmind.vault.layout import SOURCES_DIR, ascii_letters, utf8_prefix, windows_safe

SLUG_MAX = 80
# A readable name's longest UTF-8 form: with a sibling's number and `.md` (`.12.md`) its file
# name stays well within the 255 bytes file systems allow (80 CJK characters are 240 bytes).
READABLE_NAME_MAX_BYTES = 240


_SLUG_BAD_RE = re.compile(r"[^a-z0-9._-]+")


_DASH_RUN_RE = re.compile(r"-{2,}")


def slugify(text: str, *, max_len: int = SLUG_MAX) -> str:
    """A file or folder name: lowercase `[a-z0-9._-]`, never empty, at most `max_len` chars.

    Accents are folded (`Café` → `cafe`); other characters become `-` (runs collapsed); leading
    and trailing `-` and `.` are trimmed. A name with nothing left (emoji, CJK) becomes `x-` +
    8 hex of its sha256, an empty one `unknown`; one Windows keeps for a device gets `_` after
    its stem (`con` → `con_`, `nul.txt` → `nul_.txt`: `vault.layout.windows_safe`).
    """
    slug = _ascii_part(text)
    if not slug:
        if not text.strip():
            return "unknown"
        slug = "x-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    return windows_safe(slug[:max_len].rstrip("-.") or "unknown")


def _ascii_part(text: str) -> str:
    """What `slugify` keeps of `text` before its fallbacks: possibly nothing."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return _DASH_RUN_RE.sub("-", _SLUG_BAD_RE.sub("-", folded)).strip("-.")


def ascii_slug(text: str, *, max_len: int = SLUG_MAX) -> str:
    """`slugify(text)` with its Latin letters in ASCII first (`vault.layout.ascii_letters`:
    `Straße` → `strasse`, `Łódź` → `lodz`, where `slugify` alone leaves out the letters no
    accent makes). A text with nothing of Latin script to keep (`会議`, `회의`, `ガイド`) is
    named as `slugify` names it, by the hash of its own characters: `ascii_letters` also drops
    other scripts' marks, which would name `ガイド` as `カイト` is named."""
    latin = ascii_letters(text)
    return slugify(latin if _ascii_part(latin) else text, max_len=max_len)


# characters no file name on some system, or no Obsidian link, may hold; controls
_NAME_BAD_RE = re.compile(r'[*"\\/<>:|?#^\[\]\x00-\x1f\x7f]+')


def readable_name(text: str, *, max_len: int = SLUG_MAX) -> str:
    """A file name as written, made safe, so a wikilink by that name (`[[Note A]]`) finds the note
    in Obsidian: Unicode NFC, case and spaces kept (runs of white space one space); characters a
    file name or a link cannot hold (`* " \\ / < > : | ? # ^ [ ]`, controls) become `-`; leading
    and trailing spaces, `-` and `.` trimmed; at most `max_len` characters and `READABLE_NAME_MAX_BYTES`
    bytes of UTF-8 (cut at a character: 80 emoji would be 320 bytes); a name Windows
    keeps for a device (`CON`, `nul.txt`, `COM1.tar.gz`) with `_` after its stem
    (`vault.layout.windows_safe`). A name with nothing left is `slugify`'s."""
    name = " ".join(_NAME_BAD_RE.sub("-", unicodedata.normalize("NFC", text)).split())
    name = utf8_prefix(name.strip(" -.")[:max_len], READABLE_NAME_MAX_BYTES).rstrip(" -.")
    return windows_safe(name) if name else slugify(text, max_len=max_len)


def readable_folder(text: str) -> str:
    """A document's folder as written, made safe (`readable_name`), so a link by path
    (`[[Meeting Notes/Note A]]`) finds its notes in Obsidian; its slug when the two differ in
    case only (`Notes` → `notes`, where earlier versions put it: Obsidian's links ignore case)."""
    name, slug = readable_name(text), slugify(text)
    return slug if name.casefold() == slug else name


def scope_folder(scope: str) -> str:
    """The folder path of a scope: every `/`-separated segment slugified, its Latin letters in
    ASCII first (`vault.layout.ascii_letters`: `Slack/Acme` → `slack/acme`, `whatsapp/Straße
    Crew` → `whatsapp/strasse-crew`)."""
    return _folder_of(scope, ascii_letters)


def earlier_scope_folder(scope: str) -> str:
    """The folder path an earlier vaultmind gave a scope: letters no accent makes left out
    (`whatsapp/Straße Crew` → `whatsapp/strae-crew`). Its notes stay there (`batch_folder`)."""
    return _folder_of(scope, lambda part: part)


def _folder_of(scope: str, letters: Callable[[str], str]) -> str:
    parts = [slugify(letters(part)) for part in scope.split("/") if part.strip()]
    return "/".join(parts) or "unknown"


def batch_folder(batch: SourceBatch) -> str:
    """Vault-relative folder of a batch's notes: the one its source's notes are in when an earlier
    vaultmind named it otherwise (`SourceBatch.folder`), else its scope's (`scope_folder`)."""
    return batch.folder or f"{SOURCES_DIR}/{batch.meta.kind}/{scope_folder(batch.meta.scope)}"


def batch_folders(batch: SourceBatch) -> tuple[str, ...]:
    """The folders a batch's notes may be in: its own (`batch_folder`), then the one an earlier
    vaultmind gave its scope (`earlier_scope_folder`) when that is another."""
    earlier = f"{SOURCES_DIR}/{batch.meta.kind}/{earlier_scope_folder(batch.meta.scope)}"
    return tuple(dict.fromkeys((batch_folder(batch), earlier)))


def note_path(batch: SourceBatch, day: str | None = None) -> str:
    """Vault-relative path of a batch's note: by `day` (of the vault's zone) for bucket "day",
    else `note_name`."""
    folder = batch_folder(batch)
    if batch.bucket == "day":
        if day is None:
            raise UsageError("a day-bucketed note needs its day")
        return f"{folder}/{day}.md"
    if not batch.note_name:
        raise IngestError(f"batch {batch.meta.source_id!r}: bucket {batch.bucket!r} needs a note_name")
    return f"{folder}/{slugify(batch.note_name)}.md"


def sibling_path(path: str, n: int) -> str:
    """`a/b.md` → `a/b.<n>.md` (n ≥ 2); n = 1 is the path itself."""
    return path if n == 1 else f"{path[:-3]}.{n}.md"


def in_siblings(path: str, base: str) -> bool:
    """Whether `path` is `base` or one of its numbered siblings (`sibling_path`: `<stem>.2.md` …)."""
    stem = base[:-3]
    return path == base or (path.startswith(stem + ".") and path[len(stem) + 1 : -3].isdigit())
