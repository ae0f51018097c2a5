"""Read one note's bytes safely: size cap, stable against concurrent writes, decoded leniently."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, replace
from pathlib import Path

from vaultmind.model import FileStat, Problem
from vaultmind.vault.encoding import DecodedText, decode_text

# what a path whose read failed keeps: its rows, when it has any (it may never have been indexed)
KEPT = "what the index held of it, if anything, is kept"
_READ_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class ReadResult:
    stat: FileStat | None  # None: the file is gone
    data: bytes | None  # None: not read (see problem)
    problem: Problem | None = None
    keep_rows: bool = False  # True: we could not observe the file; keep what the index has


def read_note(root: Path, rel: str, max_bytes: int) -> ReadResult:
    """Read `rel` under `root`, re-reading if it changes underneath us."""
    abs_path = root / rel
    for _ in range(_READ_ATTEMPTS):
        try:
            before = os.stat(abs_path)
            if before.st_size > max_bytes:
                stat = FileStat(rel, before.st_size, before.st_mtime_ns, before.st_ctime_ns, before.st_ino)
                mb = max_bytes / (1024 * 1024)
                return ReadResult(
                    stat,
                    None,
                    Problem(
                        rel,
                        "too_large",
                        f"{before.st_size:,} bytes is over the {mb:g} MB cap; not indexed "
                        "(raise [vault] max_file_mb or add it to [vault] ignore)",
                    ),
                )
            with open(abs_path, "rb") as fh:
                # the size just seen, +1 to notice growth (a larger read allocates its whole size)
                data = fh.read(before.st_size + 1)
            after = os.stat(abs_path)
        except FileNotFoundError:
            return ReadResult(None, None)
        except PermissionError as exc:
            return ReadResult(
                None, None, Problem(rel, "unreadable", f"permission denied ({exc.strerror}); {KEPT}"), True
            )
        except OSError as exc:
            kind = "symlink_loop" if exc.errno == errno.ELOOP else "unreadable"
            return ReadResult(None, None, Problem(rel, kind, f"cannot read ({exc.strerror}); {KEPT}"), True)
        if (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns) and len(data) == after.st_size:
            return ReadResult(FileStat(rel, after.st_size, after.st_mtime_ns, after.st_ctime_ns, after.st_ino), data)
    return ReadResult(
        None,
        None,
        Problem(rel, "changed_while_reading", "kept changing while being read; will retry on the next change"),
        True,
    )


def decode_note(rel: str, data: bytes) -> tuple[str | None, Problem | None]:
    """Text of a note, or None for binary content (`vault.encoding.decode_text`). UTF-16 and
    UTF-32 text (what Windows Notepad saves as "Unicode") is indexed and reported: Obsidian
    reads notes as UTF-8. East Asian text in a legacy code page (GB18030, Big5, Shift JIS, EUC-JP,
    EUC-KR) and European text in an 8-bit one (Windows-1251, KOI8-R, Windows-1252 …, four words
    or more) are read in it; other non-UTF-8 text is decoded with replacement characters; all are
    reported. A few stray NUL bytes in text (a sync tool's glitch, a paste) do not make it
    binary: they are indexed as replacement characters (a NUL would end a string in some tools,
    and is what the Markdown parser masks spans with) and reported. The note itself is never
    rewritten."""
    decoded = decode_text(data)
    if decoded.text is None:
        return None, Problem(rel, "binary", "looks like a binary file (NUL or control bytes), not Markdown; skipped")
    problem = _encoding_problem(rel, decoded)
    nuls = decoded.text.count("\x00")
    if not nuls:
        return decoded.text, problem
    line = decoded.text.count("\n", 0, decoded.text.index("\x00")) + 1
    said = (
        f"{nuls} stray NUL byte{'s' if nuls > 1 else ''} (the first on line {line}), indexed as �; "
        "the file is left as it is — delete them in an editor that shows them"
    )
    if problem is None:
        return decoded.text.replace("\x00", "\ufffd"), Problem(rel, "nul_bytes", said)
    return decoded.text.replace("\x00", "\ufffd"), replace(problem, message=f"{problem.message}; {said}")


def _encoding_problem(rel: str, decoded: DecodedText) -> Problem | None:
    """What `status` says of a note's encoding: UTF-16 or UTF-32, a legacy code page, or not valid UTF-8."""
    if decoded.wide:
        name = decoded.encoding[:6].upper()  # "UTF-16", "UTF-32"
        lossy = "" if decoded.bad_byte is None else f" (byte {decoded.bad_byte} is not {name}: replaced)"
        message = f"{name} text{lossy}; indexed, but Obsidian reads notes as UTF-8 — re-save it as UTF-8 to see it there"
        return Problem(rel, name.lower().replace("-", ""), message)
    if decoded.legacy:
        lossy = "" if decoded.bad_byte is None else f" (byte {decoded.bad_byte} is not {decoded.name}: replaced)"
        message = f"{decoded.name} text, not UTF-8{lossy}; indexed, but Obsidian reads notes as UTF-8 — re-save it as UTF-8 to see it there"
        return Problem(rel, "not_utf8", message)
    if decoded.bad_byte is not None:
        return Problem(
            rel,
            "not_utf8",
            f"not valid UTF-8 (byte {decoded.bad_byte}); indexed with replacement characters — re-save it as UTF-8",
        )
    return None
