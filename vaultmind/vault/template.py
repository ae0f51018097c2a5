"""`vaultmind init`: lay down a new vault, or add vaultmind to an existing one.

The files come from the vault template shipped with vaultmind (the top-level `vault_template/`
folder of the source tree, installed as the package `vaultmind.vault_template`):

    sources/ summaries/ entities/ README.md    vaultmind's folders, each with a short README
    .vaultmind/config.toml                     every setting, documented, at its default
    .gitignore                                 derived state, Obsidian trash and workspace files
    .obsidian/                                 graph colours, core plugins, callout styles
    Welcome to vaultmind.md                    a tour of the vault (new vaults only)
    .demo/<path>                               the demo memory, written to <path> with demo=True

Nothing existing is ever overwritten: every file is created exclusively (see `vault.atomic`).
"""

from __future__ import annotations

import importlib.resources
import os
import shlex
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from vaultmind.errors import RefuseToClobber, VaultError
from vaultmind.shell import command_line
from vaultmind.vault.atomic import write_atomic
from vaultmind.vault.inner_vaults import NAMED_MOST, OBSIDIAN_DIR, inner_vaults_hint, vaults_inside
from vaultmind.vault.layout import ENTITIES_DIR, SOURCES_DIR, STATE_DIR, SUMMARIES_DIR

TEMPLATE_PACKAGE = "vaultmind.vault_template"
DEMO_DIR = ".demo"
WELCOME_NOTE = "Welcome to vaultmind.md"
GITIGNORE = ".gitignore"

# The lines vaultmind would add to a .gitignore; when one already exists, those it lacks are shown as a hint.
GITIGNORE_LINES: tuple[str, ...] = (
    ".vaultmind/*",
    "!.vaultmind/config.toml",
    ".trash/",
    ".obsidian/workspace*.json",
)

_SKIP_NAMES = frozenset({"__pycache__", "__init__.py", ".DS_Store", "Thumbs.db"})
_TEXT_SUFFIXES = (".md", ".toml", ".json", ".css", ".gitignore", ".txt")

Group = Literal["core", "gitignore", "obsidian", "welcome", "demo"]


@dataclass(frozen=True, slots=True)
class Skipped:
    """A template file that was not written, and why."""

    path: str
    reason: str


@dataclass(slots=True)
class InitReport:
    """What `init_vault` did. Paths are vault-relative POSIX strings, in write order."""

    vault: Path
    created: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    already: bool = False  # the folder already was the vault asked for: nothing was written
    missing: list[str] = field(default_factory=list)  # `already`: the template's files it lacks, not put back
    restorable: list[str] = field(default_factory=list)  # those of `missing` that `init --existing` adds

    def to_dict(self) -> dict[str, Any]:
        return {
            "vault": str(self.vault),
            "already": self.already,
            "created": list(self.created),
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "warnings": list(self.warnings),
            "missing": list(self.missing),
            "restorable": list(self.restorable),
        }


@dataclass(frozen=True, slots=True)
class TemplateFile:
    path: str  # where it goes in the vault
    data: bytes
    group: Group


def init_vault(path: str | Path, *, demo: bool = False, existing: bool = False) -> InitReport:
    """Create a vault at `path` (which must be missing or empty), or with `existing=True` add
    vaultmind's folders and config to the vault already there.

    A new vault gets the whole template, including the welcome note and Obsidian settings, plus
    the demo memory with `demo=True`. An existing vault gets only what is missing of vaultmind's
    own files; its `.gitignore` and `.obsidian/` are left alone when present, and the welcome
    note and demo are added only with `demo=True` (refused if any of their paths is taken).
    A folder that already is the vault asked for (the set-up line run again, after a Ctrl-C of
    its reindex say) is reported `already`, and nothing is written: a template file it lacks
    (the welcome note the user deleted) is named in `missing`, not put back.
    Raises `RefuseToClobber` before writing anything when the request cannot be honoured.
    """
    files = template_files(demo=demo)
    warnings: list[str] = []
    nested = _nested_refusal(Path(path).expanduser().resolve())
    if nested is not None:  # before anything is written, the folder a new vault needs included
        raise nested
    if existing:
        root = _existing_root(path)
        plan, skipped = _plan_existing(root, files, demo=demo)
        warnings = _folder_warnings(root)
    elif (missing := _already_made(Path(path).expanduser(), files)) is not None:
        root = Path(path).expanduser().resolve()
        restorable = [item.path for item in _plan_existing(root, files, demo=False)[0]] if missing else []
        return InitReport(vault=root, already=True, missing=missing, restorable=restorable)
    else:
        root = _new_root(path, demo=demo)
        plan, skipped = files, []
    for folder in sorted({PurePosixPath(item.path).parent for item in plan}):
        _check_dir(root, folder)  # refuse before writing anything
    report = InitReport(vault=root, skipped=skipped, warnings=warnings)
    for item in plan:
        _ensure_dir(root, PurePosixPath(item.path).parent)
        try:
            write_atomic(root / item.path, item.data, overwrite=False)
        except RefuseToClobber:
            if not existing:
                raise
            # Appeared since we looked (a sync tool, the user): theirs now, leave it.
            report.skipped.append(Skipped(item.path, "appeared while initializing; left unchanged"))
            continue
        report.created.append(item.path)
    return report


def template_files(*, demo: bool = True, root: Traversable | None = None) -> list[TemplateFile]:
    """Every file of the template (`root`, default the shipped one) with its vault path, in a
    stable order, demo files last. Package files (`__init__.py`, `__pycache__`) are left out."""
    files: list[TemplateFile] = []
    demo_prefix = DEMO_DIR + "/"
    for rel, data in _walk(root if root is not None else template_root()):
        if rel.startswith(demo_prefix):
            if demo:
                files.append(TemplateFile(rel[len(demo_prefix) :], data, "demo"))
            continue
        files.append(TemplateFile(rel, data, _group(rel)))
    order = {"core": 0, "gitignore": 1, "obsidian": 2, "welcome": 3, "demo": 4}
    files.sort(key=lambda f: (order[f.group], f.path))
    return files


def template_root() -> Traversable:
    """The template folder: the installed package, else the folder of a source checkout."""
    try:
        return importlib.resources.files(TEMPLATE_PACKAGE)
    except ModuleNotFoundError:
        checkout = Path(__file__).resolve().parents[2] / "vault_template"
        if checkout.is_dir():
            return checkout
        raise VaultError(
            "the vault template is missing from this installation",
            hint="reinstall vaultmind",
        ) from None


def _group(rel: str) -> Group:
    if rel == WELCOME_NOTE:
        return "welcome"
    if rel == GITIGNORE:
        return "gitignore"
    if rel.startswith(OBSIDIAN_DIR + "/"):
        return "obsidian"
    return "core"


def _walk(node: Traversable, prefix: str = "") -> list[tuple[str, bytes]]:
    found: list[tuple[str, bytes]] = []
    for child in node.iterdir():
        name = child.name
        if name in _SKIP_NAMES or name.endswith((".pyc", ".pyo")):
            continue
        rel = prefix + name
        if child.is_dir():
            found.extend(_walk(child, rel + "/"))
        else:
            data = child.read_bytes()
            if name.endswith(_TEXT_SUFFIXES):
                data = data.replace(b"\r\n", b"\n")  # a CRLF checkout still yields LF vaults
            found.append((rel, data))
    return sorted(found)


def _new_root(path: str | Path, *, demo: bool = False) -> Path:
    root = Path(path).expanduser()
    if os.path.lexists(root):
        if not root.is_dir():
            raise RefuseToClobber(
                "exists and is not a folder",
                path=root,
                hint="choose another path for the new vault",
            )
        if (root / STATE_DIR).is_dir():  # (one `init` would make is `_already_made`: without the demo asked for)
            raise RefuseToClobber(
                f"is already a vaultmind vault{' without the demo' if demo else ''} (it holds {STATE_DIR}/); "
                "nothing was written",
                path=root,
                hint=f"use it: `{command_line('reindex', vault=Path(path))}` brings its index up to date; "
                f"for a new {'demo ' if demo else ''}vault, name an empty or missing folder",
            )
        if any(root.iterdir()):
            raise RefuseToClobber(
                "folder is not empty; a new vault needs an empty or missing folder",
                path=root,
                hint=setup_hint(Path(path)),
            )
    else:
        try:
            root.mkdir(parents=True)
        except OSError as exc:
            raise VaultError(f"cannot create the vault folder: {exc.strerror}", path=root) from exc
    return root.resolve()


def _already_made(root: Path, files: list[TemplateFile]) -> list[str] | None:
    """The paths of `files` that `root` lacks when it already is the vault `init` would make of
    them (None when it is not): a vaultmind vault (`.vaultmind/`), holding the demo when `files`
    have it (some of its files, as edited since or not). A file it lacks is one the user deleted
    (the welcome note, a demo note): the set-up line run again must go on to its reindex, and
    must not bring back what was deleted; it is named, not written. Any other folder that is
    not empty is refused, as before (a vault without the demo asked for one included)."""
    if not root.is_dir() or not (root / STATE_DIR).is_dir():
        return None
    demo = [item for item in files if item.group == "demo"]
    if demo and not any(os.path.lexists(root / item.path) for item in demo):
        return None
    return [item.path for item in files if not os.path.lexists(root / item.path)]


def _existing_root(path: str | Path) -> Path:
    """The vault folder `init --existing` adds vaultmind to: an existing folder that looks like a
    vault (Obsidian's settings folder, or a Markdown note at any depth), never the file system's
    root or the home folder itself."""
    root = Path(path).expanduser()
    if root.exists() and not root.is_dir():  # (`init FILE`, the hint it had, fails as well)
        raise VaultError(
            "is a file, not a vault folder",
            path=root,
            hint="name a folder, not a file; of the folder holding it: " + setup_hint(root.parent),
        )
    if not root.is_dir():
        raise VaultError("no vault folder here", path=root, hint=f"to create a new vault, run `{command_line('init', root)}`")
    refusal = _existing_refusal(root.resolve(), path)
    if refusal is not None:
        raise refusal
    return root.resolve()


def setup_hint(folder: Path) -> str:
    """What makes the existing folder `folder` a vaultmind vault, as `init` decides it: the
    command every hint gives is one `init` accepts (a hint naming `init --existing` for a
    folder it refused, and `init` naming `--existing` back, sent the user round in a circle)."""
    root = folder.expanduser().resolve()
    refusal = _nested_refusal(root) or _existing_refusal(root, folder)
    if refusal is not None:
        return str(refusal.hint)
    return (
        f"set it up with `{command_line('init', '--existing', folder)}`, which adds vaultmind's "
        "folders and settings and changes nothing else"
    )


def enclosing_vault(root: Path) -> Path | None:
    """The vaultmind vault `root` (resolved) lies inside, if any: the nearest folder above it
    that holds `.vaultmind/`."""
    return next((folder for folder in root.parents if (folder / STATE_DIR).is_dir()), None)


def _nested_refusal(root: Path) -> VaultError | None:
    """Why no vault may be made at `root` (resolved) when it lies inside another: that vault
    already indexes its notes, and vaultmind's folders would be written into the user's vault."""
    outer = enclosing_vault(root)
    if outer is None:
        return None
    return VaultError(
        f"is inside the vaultmind vault {outer}; a vault within a vault is not made",
        path=root,
        hint=f"it lies inside the vault {outer}, which holds its notes: pass `--vault {shlex.quote(str(outer))}` (`{command_line('status', vault=outer)}`), "
        "or run commands inside it",
    )


def _existing_refusal(root: Path, given: str | Path) -> VaultError | None:
    """Why `init --existing` refuses the existing folder `root` (resolved; `given` as the user
    typed it), or None when it takes it."""
    if root == Path(root.anchor) or root == Path.home().resolve():
        return VaultError(
            "will not make the file system's root or a home folder a vault",
            path=root,
            hint="name the vault's own folder (the one that holds .obsidian/ or your notes)",
        )
    inner = [] if (root / OBSIDIAN_DIR).is_dir() else vaults_inside(root)
    if inner and not _holds_notes(root, own=True):
        # the folder that holds the vault (a clone whose vault is its `vault/`), given for the
        # vault: all of it would be indexed; a folder of notes of its own is what it says
        names = " and ".join(f"{vault.relative_to(root).as_posix()}/" for vault in inner[:NAMED_MOST])
        return VaultError(
            f"is not an Obsidian vault itself, but {names} inside it {'is' if len(inner) == 1 else 'are'} "
            f"(holding {OBSIDIAN_DIR}/ or {STATE_DIR}/)",
            path=root,
            hint=inner_vaults_hint(inner),
        )
    if not (root / OBSIDIAN_DIR).is_dir() and not _holds_notes(root):
        empty = not any(root.iterdir())
        return VaultError(
            "does not look like a vault: no .obsidian/ folder in it and no Markdown note (.md) in it or any "
            "folder below it",
            path=root,
            hint=f"an empty folder becomes a new vault with `{command_line('init', given)}`"
            if empty
            else "for a new vault, run `vaultmind init NEW_FOLDER` (an empty or missing folder); to make this "
            f"one a vault, open it as a vault in Obsidian first (which adds {OBSIDIAN_DIR}/), then "
            f"`{command_line('init', '--existing', given)}`",
        )
    return None


# a repository's own documents at its top: no notes of a folder of notes
_REPOSITORY_DOCS = frozenset(
    ("readme", "changelog", "changes", "history", "contributing", "license", "licence", "code_of_conduct", "security", "authors")
)


def _holds_notes(root: Path, budget: int = 100_000, *, own: bool = False) -> bool:
    """Whether a Markdown note lies in `root` or any folder below it, dot-folders aside (a vault
    may keep its notes only in `Areas/Work/2024/`), looking at `budget` entries at most, the
    nearest first. `own`: a note of the folder's own — not inside an Obsidian vault within it
    (a folder holding `.obsidian/`), nor a repository's document at its top (`README.md`,
    `LICENSE.md` …)."""
    level, seen = [root], 0
    while level:
        below: list[Path] = []
        for folder in level:
            if own and folder != root and (folder / OBSIDIAN_DIR).is_dir():
                continue
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen > budget:
                    return False
                if entry.name.startswith("."):
                    continue
                if entry.name.lower().endswith(".md") and entry.is_file():
                    if own and folder == root and entry.name[:-3].lower() in _REPOSITORY_DOCS:
                        continue
                    return True
                if entry.is_dir(follow_symlinks=False):
                    below.append(Path(entry.path))
        level = below
    return False


def _plan_existing(
    root: Path, files: list[TemplateFile], *, demo: bool
) -> tuple[list[TemplateFile], list[Skipped]]:
    if demo:
        taken = [f.path for f in files if f.group in ("welcome", "demo") and os.path.lexists(root / f.path)]
        if taken:
            shown = ", ".join(taken[:5]) + (f" and {len(taken) - 5} more" if len(taken) > 5 else "")
            raise RefuseToClobber(
                f"cannot add the demo: {shown} already exist",
                path=root,
                hint="add the demo to an empty folder instead: `vaultmind init --demo NEW_FOLDER`",
            )
    obsidian_owned = os.path.lexists(root / OBSIDIAN_DIR)
    plan: list[TemplateFile] = []
    skipped: list[Skipped] = []
    for f in files:
        if f.group in ("welcome", "demo"):
            if demo:
                plan.append(f)
        elif f.group == "obsidian" and obsidian_owned:
            skipped.append(
                Skipped(
                    f.path,
                    "the vault has its own Obsidian settings; left alone "
                    "(graph colour groups you may add: path:sources, path:summaries, path:entities)",
                )
            )
        elif os.path.lexists(root / f.path):
            missing = _missing_gitignore_lines(root / f.path) if f.group == "gitignore" else ()
            reason = "exists; left unchanged"
            if missing:
                reason += " (vaultmind would add: " + "  ".join(missing) + ")"
            skipped.append(Skipped(f.path, reason))
        else:
            plan.append(f)
    return plan, skipped


def _missing_gitignore_lines(gitignore: Path) -> tuple[str, ...]:
    """The lines of `GITIGNORE_LINES` an existing `.gitignore` does not hold (all of them when it
    cannot be read): what the hint says vaultmind would add, never a line already there."""
    try:
        held = {line.strip() for line in gitignore.read_text(encoding="utf-8", errors="replace").splitlines()}
    except OSError:
        return GITIGNORE_LINES
    return tuple(line for line in GITIGNORE_LINES if line not in held)


def _folder_warnings(root: Path) -> list[str]:
    """Things about vaultmind's folders in an existing vault that the user should know."""
    warnings: list[str] = []
    inner = [] if (root / OBSIDIAN_DIR).is_dir() else vaults_inside(root)[:NAMED_MOST]
    for inner_vault in inner:  # (a folder of notes of its own: `_existing_root` took it)
        kind, marker = ("an Obsidian", OBSIDIAN_DIR) if (inner_vault / OBSIDIAN_DIR).is_dir() else ("a vaultmind", STATE_DIR)
        warnings.append(
            f"{inner_vault.relative_to(root).as_posix()}/ inside is {kind} vault of its own (it holds {marker}/); "
            "its notes are indexed with this folder's"
        )
    names = {p.name for p in root.iterdir()}
    for folder in (SOURCES_DIR, SUMMARIES_DIR, ENTITIES_DIR):
        twins = sorted(n for n in names if n.lower() == folder and n != folder)
        if twins:
            warnings.append(
                f"{twins[0]}/ differs from vaultmind's {folder}/ only by case; "
                "on a case-sensitive disk both appear in Obsidian"
            )
        if folder in names and (root / folder).is_dir():
            foreign = [
                p for p in (root / folder).rglob("*.md") if p.name != "README.md" and not _is_generated(p)
            ]
            if foreign:
                warnings.append(
                    f"{folder}/ already holds {len(foreign)} note(s) vaultmind did not write "
                    f"(e.g. {foreign[0].relative_to(root).as_posix()}); vaultmind treats notes there as its own kind"
                )
    return warnings


def _is_generated(path: Path) -> bool:
    """True when the note's front matter carries a `vaultmind:` key (a cheap look at the top)."""
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    if not head.startswith(b"---"):
        return False
    end = head.find(b"\n---", 3)
    front = head[: end if end != -1 else len(head)]
    return any(line.startswith(b"vaultmind:") for line in front.splitlines())


def _check_dir(root: Path, rel: PurePosixPath) -> None:
    """Refuse if a folder on the way to `root/rel` is a file or a link leading out of the vault."""
    current = root
    for part in rel.parts:
        current = current / part
        if not os.path.lexists(current):
            return
        _check_existing_dir(root, current)


def _ensure_dir(root: Path, rel: PurePosixPath) -> None:
    """Create `root/rel` folder by folder, never passing through a link leading out of the vault."""
    current = root
    for part in rel.parts:
        current = current / part
        try:
            current.mkdir()
        except FileExistsError:
            _check_existing_dir(root, current)


def _check_existing_dir(root: Path, folder: Path) -> None:
    if folder.is_symlink() and not folder.resolve().is_relative_to(root):
        raise VaultError(
            "is a symbolic link leading out of the vault; vaultmind will not write through it",
            path=folder,
        )
    if not folder.is_dir():
        raise RefuseToClobber("exists and is not a folder; vaultmind needs a folder here", path=folder)
