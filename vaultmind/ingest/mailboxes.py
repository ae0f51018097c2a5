"""Where an email export's messages are: `.eml` files, mbox files (`*.mbox`, or any file
starting with a `From ` line), Maildir folders (with `cur/` and `new/`; Maildir++ subfolders
such as `.Sent` included), and folders holding any of these (walked in name order; hidden
entries skipped). A file of another name is an email when it starts with a header block
(`_header_block`). Each message is read as its raw bytes (`RawMessage`), with what its
mailbox says of its time (an mbox's `From ` line, a Maildir file name) and its file's; a file
cut short inside a message is said (`_cut_warning`, `_cut_in_header`).

The account of a message is named after the path given (`discover`): a folder's name
(everything found inside it shares it), an mbox file's stem, a single `.eml` file's folder,
spelled as `account_name` spells it.
"""

from __future__ import annotations

import hashlib
import mailbox
import re
import shlex
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from email import policy as email_policy
from email.parser import BytesParser
from functools import partial
from pathlib import Path
from typing import Literal

from vaultmind.errors import IngestError
from vaultmind.ingest.chat_formats import detect_chat_format
from vaultmind.ingest.maildates import file_time, from_line_date, maildir_file_time, maildir_name_time
from vaultmind.ingest.mime import MAX_MESSAGE_BYTES
from vaultmind.ingest.model import DatedBy
from vaultmind.ingest.names import ascii_slug, slugify
from vaultmind.ingest.walk import vault_note, vault_notes_skipped, walk_files
from vaultmind.vault.layout import ascii_letters

_FROM_ESCAPE_RE = re.compile(rb"(?m)^>(>*From )")
_HEADER_LINE_RE = re.compile(rb"^([!-9;-~]+)[ \t]*:")  # a header field's name: printable ASCII but a colon (RFC 5322)
_HEAD_BYTES = 64 * 1024  # of a file (or an mbox message) read for its header block: DKIM and ARC signatures run to kilobytes
# headers one of which every message file has (a JSON export's `[{"id":`, a note's `Note:`, has none)
_MAIL_HEADERS = frozenset(
    b"from to cc subject date message-id received return-path delivered-to mime-version sender reply-to".split()
)

Kind = Literal["eml", "mbox", "maildir"]


@dataclass(frozen=True, slots=True)
class Mailbox:
    path: Path
    kind: Kind
    account: str
    earlier_account: str  # the name an earlier vaultmind gave the account (`earlier_account_name`)

    @classmethod
    def named(cls, path: Path, kind: Kind, name: str) -> Mailbox:
        return cls(path, kind, account_name(name), earlier_account_name(name))


@dataclass(frozen=True, slots=True)
class RawMessage:
    file: str  # the .eml, mbox or Maildir folder that holds the message
    where: str  # the message in it: "message 3" (an mbox's third), "message <key>" (a Maildir's); "" for an .eml
    data: bytes
    account: str
    saved: Callable[[], datetime | None]  # the modification time of its file, asked only when nothing else dates it
    envelope: datetime | None = None  # mbox `From ` line, Maildir file name's delivery time
    envelope_from: DatedBy = ""  # which of them
    size: int | None = None  # the whole message's bytes, when `data` is only its start (over the cap)

    @property
    def origin(self) -> str:
        """What a warning names: "inbox.mbox message 3", "Maildir message 1710…", "a.eml"."""
        return f"{self.file} {self.where}" if self.where else self.file



ACCOUNT_MAX = 60


def account_name(name: str) -> str:
    """The account a mailbox's name (an address, a folder, an mbox file) names, as a tree id and
    a folder spell it: its Latin letters in ASCII (`names.ascii_slug`: `jürgen@exämple.de` →
    `jurgen-example.de`, `strauß@straße.de` → `strauss-strasse.de`, `łukasz@gdańsk.pl` →
    `lukasz-gdansk.pl`). Letters of other scripts cannot be spelled so: a name holding any
    (`会議@例え.jp`) ends in 8 hex of its sha256 (`jp-…`), so two such accounts never share
    one name; one with nothing Latin at all is the hash alone (`x-…`)."""
    stem = _account_stem(name)
    slug = ascii_slug(stem, max_len=ACCOUNT_MAX)
    if slug.startswith("x-") or not _other_script_letters(ascii_letters(stem)):
        return slug
    digest = hashlib.sha256(stem.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{slug[: ACCOUNT_MAX - 9].rstrip('-.')}-{digest}"


def earlier_account_name(name: str) -> str:
    """The account an earlier vaultmind named after `name` (letters no accent makes, and other
    scripts, left out: `strau-strae.de`): a vault whose mail of the account is filed under it
    keeps it (`matching.as_earlier`)."""
    return slugify(_account_stem(name), max_len=ACCOUNT_MAX)


def _account_stem(name: str) -> str:
    return name.removesuffix(".mbox").removesuffix(".mbx").lstrip(".")


def _other_script_letters(text: str) -> bool:
    """Whether `text` holds a letter that is not ASCII (`vault.layout.ascii_letters` has spelled
    the Latin ones)."""
    return any(not ch.isascii() and ch.isalpha() for ch in text)


def _is_maildir(folder: Path) -> bool:
    return (folder / "cur").is_dir() and (folder / "new").is_dir()


def _sniff(path: Path) -> Kind | None:
    try:
        with path.open("rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError:
        return None
    text = head.lstrip(b"\xef\xbb\xbf\r\n")
    if text.startswith(b"From "):
        return "mbox"
    return "eml" if _header_block(text, cut=len(head) == _HEAD_BYTES) else None


def _header_block(text: bytes, *, cut: bool) -> bool:
    """Whether `text` starts as an email does: header lines (and their folded continuations) up
    to a blank line, one of them a header every message has (From, Date, Subject, Received…).
    `cut`: `text` is the start of a longer file (its last line may be cut short)."""
    lines = text.split(b"\n")
    names: set[bytes] = set()
    for n, line in enumerate(lines[:-1] if cut else lines):
        line = line.rstrip(b"\r")
        if not line:
            break
        if n and line.startswith((b" ", b"\t")):
            continue
        match = _HEADER_LINE_RE.match(line)
        if match is None:
            return False
        names.add(match.group(1).lower())
    return bool(names & _MAIL_HEADERS)


def mail_file_kind(path: Path) -> Kind | None:
    """"eml" or "mbox" for an email file (by its suffix, else its first lines), else None."""
    suffix = path.suffix.lower()
    if suffix == ".eml":
        return "eml"
    if suffix in (".mbox", ".mbx"):
        return "mbox"
    return _sniff(path)


def discover(paths: Sequence[Path], warnings: list[str], *, vault: Path | None = None) -> list[Mailbox]:
    """The mailboxes of `paths`; `vault`: the vault written to, whose own notes a folder given
    may hold (said in one line, not each as "not an email file")."""
    boxes: list[Mailbox] = []
    notes: list[Path] = []  # the vault's own notes found in a folder given

    def walk(folder: Path, account: Mailbox) -> None:
        if _is_maildir(folder):
            boxes.append(replace(account, path=folder, kind="maildir"))
            return
        for entry in walk_files(folder, warnings, whole=_is_maildir):
            if vault_note(entry, vault):
                notes.append(entry)
                continue
            kind = "maildir" if entry.is_dir() else mail_file_kind(entry)
            if kind is None:
                warnings.append(f"{entry}: not an email file (.eml, mbox); skipped")
            else:
                boxes.append(replace(account, path=entry, kind=kind))

    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            walk(path, Mailbox.named(path, "maildir", path.resolve().name))
        elif path.is_file():
            kind = mail_file_kind(path)
            if kind is None:
                chat = detect_chat_format(path)
                if chat is not None:  # a chat export given to `ingest email`
                    raise IngestError(
                        f"not an email file: a {chat} chat export",
                        path=path,
                        hint=f"ingest it with `vaultmind ingest chat {shlex.quote(str(path))}`",
                    )
                raise IngestError(
                    "not an email file",
                    path=path,
                    hint="give .eml files, mbox files, Maildir folders or folders of them",
                )
            name = path.stem if kind == "mbox" else path.resolve().parent.name
            boxes.append(Mailbox.named(path, kind, name))
        else:
            raise IngestError("no such file or folder", path=path)
    if notes:
        warnings.append(vault_notes_skipped(notes, "emails"))
    return boxes


def _read_mbox(box: Mailbox, warnings: list[str]) -> Iterator[RawMessage]:
    try:
        mbox = mailbox.mbox(box.path, create=False)
    except (OSError, mailbox.Error) as exc:
        warnings.append(f"{box.path}: cannot open the mbox ({exc}); skipped")
        return
    read: tuple[int, bytes, bytes, int | None] | None = None  # the message read last: its number, From line, the rest, its size when over the cap
    last_key = None
    try:
        for n, key in enumerate(mbox.iterkeys(), start=1):
            before, last_key = last_key, key
            try:
                with mbox.get_file(key, from_=True) as fh:
                    data = fh.read(MAX_MESSAGE_BYTES + 1)
            except (OSError, KeyError, mailbox.Error) as exc:
                warnings.append(f"{box.path} message {n}: unreadable ({exc}); skipped")
                continue
            first, _, rest = data.partition(b"\n")
            # (a file cut short ends in a line cut short: a header block cut there is one still)
            cut = len(rest) > _HEAD_BYTES or (bool(rest) and not rest.endswith(b"\n"))
            if read is not None and not _header_block(rest[:_HEAD_BYTES], cut=cut):
                # a line of the body starting "From " that its writer left unescaped: no message;
                # the blank line above it, which the split took as the separator's, put back
                gap = b"\n" if _blank_between(mbox, before, key) else b""
                read = (read[0], read[1], read[2] + gap + first + b"\n" + rest, read[3])
                continue
            if read is not None:
                yield _mbox_message(box, *read)
            read = (n, first, rest, _size(mbox, key) if len(data) > MAX_MESSAGE_BYTES else None)
        if read is not None and _cut_in_header(read[2]):
            warnings.append(
                f"{box.path} message {read[0]}: the file ends inside its header (cut short?); skipped — "
                "ingest the whole file to read it"
            )
        elif read is not None:
            if read[3] is None and _unterminated(read[2]):  # (no line break at its end says nothing: many mboxes so end)
                warnings.append(_cut_warning(f"{box.path} message {read[0]}", read[2]))
            yield _mbox_message(box, *read)
    finally:
        mbox.close()


def _offsets(mbox: mailbox.mbox, key: object) -> tuple[int, int] | None:
    """Where message `key` starts and stops in the mbox (Python's mbox keeps each message's
    offsets in its table of contents), None when unknown."""
    toc = getattr(mbox, "_toc", None)
    span = toc.get(key) if isinstance(toc, dict) else None
    return (int(span[0]), int(span[1])) if span is not None else None


def _size(mbox: mailbox.mbox, key: object) -> int | None:
    """The bytes message `key` takes in the mbox, None when unknown."""
    span = _offsets(mbox, key)
    return None if span is None else span[1] - span[0]


def _blank_between(mbox: mailbox.mbox, before: object, key: object) -> bool:
    """Whether the mbox split message `key` from message `before` at a blank line, which neither
    holds."""
    earlier, this = _offsets(mbox, before), _offsets(mbox, key)
    if earlier is None or this is None:
        return True  # (the usual mbox: a blank line before every "From ")
    return this[0] > earlier[1]


# a header block's multipart boundary: `Content-Type: multipart/mixed;` and, maybe on a folded
# line below it, `boundary="…"` (unquoted, it ends at white space: a boundary never does)
_BOUNDARY_RE = re.compile(
    rb'^content-type:[ \t]*multipart/[^\n]*(?:\n[ \t][^\n]*)*?\bboundary=(?:"([^"\r\n]+)"|([^";\s]+))',
    re.IGNORECASE | re.MULTILINE,
)


def _unterminated(data: bytes) -> bool:
    """Whether a multipart message's closing boundary (`--<boundary>--`) never comes: its file
    cut short. The top level's is enough (a cut file loses it first), and found without
    parsing the message. It is the one sound sign of a body cut short: a last line without a
    line break is how many whole mboxes and `.eml` files end, and its words cannot tell ("…
    forty thou" cut, "Thanks" whole); a whole copy ingested later completes a message cut so
    (`revisions.complete_email`)."""
    text = data.replace(b"\r\n", b"\n")
    found = _BOUNDARY_RE.search(text.split(b"\n\n", 1)[0])
    return found is not None and b"--" + (found.group(1) or found.group(2)) + b"--" not in text


def _cut_warning(where: str, data: bytes) -> str:
    """What to say of a message cut in its body (`where`: its file, and its number in an mbox):
    it is read as far as it goes."""
    headers = BytesParser(policy=email_policy.compat32).parsebytes(data, headersonly=True)
    mid = " ".join(str(headers.get("Message-ID") or "").split())
    return (
        f"{where}{' ' + mid if mid else ''}: the file ends inside its body (cut short?); "
        "its text is kept as far as it goes — check the file, and ingest a whole copy before this one "
        "if you have it (a message once written keeps its text)"
    )


def _cut_in_header(rest: bytes) -> bool:
    """Whether the last message of an mbox (`rest`: below its `From ` line) ends inside its
    header block: no blank line, and the file's last line cut short (a download or copy cut
    off). Read, it was a message of its headers only, a line of them for its text."""
    return bool(rest) and not rest.endswith(b"\n") and b"\n\n" not in rest.replace(b"\r\n", b"\n")


def _mbox_message(box: Mailbox, n: int, first: bytes, rest: bytes, size: int | None) -> RawMessage:
    """The `n`th message of an mbox: its `From ` line `first`, and `rest` (its start only when its
    `size` is over the cap)."""
    rest = _FROM_ESCAPE_RE.sub(rb"\1", rest)  # mboxo/mboxrd: ">From " was "From "
    saved = partial(file_time, box.path)  # the mbox's: when its last message was added
    return RawMessage(str(box.path), f"message {n}", rest, box.account, saved, from_line_date(first), "from-line", size)


def _read_maildir(box: Mailbox, warnings: list[str]) -> Iterator[RawMessage]:
    try:
        root = mailbox.Maildir(box.path, factory=None, create=False)
        folders = [(box.path, root)]
        for name in sorted(root.list_folders()):
            folders.append((box.path / f".{name}", root.get_folder(name)))
    except (OSError, mailbox.Error) as exc:
        warnings.append(f"{box.path}: cannot open the Maildir ({exc}); skipped")
        return
    for folder_path, folder in folders:
        for key in sorted(folder.iterkeys()):
            try:
                data = folder.get_bytes(key)
            except (OSError, KeyError, mailbox.Error) as exc:
                warnings.append(f"{folder_path} message {key}: unreadable ({exc}); skipped")
                continue
            saved = maildir_file_time(folder, key)
            yield RawMessage(str(folder_path), f"message {key}", data, box.account, saved, maildir_name_time(key), "file-name")


def box_bytes(box: Mailbox) -> int:
    """The bytes `box`'s files take (a Maildir's, every file below it): what reading it reads,
    for progress (0 for what cannot be read: its warning comes as it is read)."""
    try:
        if box.kind != "maildir":
            return box.path.stat().st_size
        return sum(entry.stat().st_size for entry in box.path.rglob("*") if entry.is_file())
    except OSError:
        return 0


def read_messages(box: Mailbox, warnings: list[str]) -> Iterator[RawMessage]:
    if box.kind == "mbox":
        yield from _read_mbox(box, warnings)
    elif box.kind == "maildir":
        yield from _read_maildir(box, warnings)
    else:
        try:
            size = box.path.stat().st_size
            with box.path.open("rb") as fh:  # a message over the cap is read to it (`parse_message`)
                data = fh.read(MAX_MESSAGE_BYTES + 1)
        except OSError as exc:
            warnings.append(f"{box.path}: unreadable ({exc.strerror or exc}); skipped")
            return
        # a byte order mark or blank lines before the headers (a message saved by Notepad, pasted
        # into a file) are no part of it: the parser would read the headers as body
        data = data.removeprefix(b"\xef\xbb\xbf").lstrip(b"\r\n")
        over = size > MAX_MESSAGE_BYTES
        if not over and _unterminated(data):  # (an .eml may well end without a line break: that says nothing)
            warnings.append(_cut_warning(str(box.path), data))
        yield RawMessage(str(box.path), "", data, box.account, partial(file_time, box.path), size=size if over else None)
