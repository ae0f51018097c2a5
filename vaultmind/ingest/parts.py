"""A chat or email note over the vault's cap on the notes it indexes (`[vault] max_file_mb`)
split into parts: the messages in time order, as many to a note as fit under the cap, the
first part in the note's place and the others in its next free numbered siblings
(`<stem>.2.md`, `<stem>.3.md` …), which later ingests read as the conversation's own notes, so
their messages are known and never written again. A note over the cap would be written but
never indexed: its messages lost to every search."""

from __future__ import annotations

from collections.abc import Sequence

from vaultmind.ingest.held import GENERATED_KEYS
from vaultmind.ingest.names import sibling_path
from vaultmind.ingest.plan import Plan
from vaultmind.markdown.frontmatter import with_user_keys
from vaultmind.markdown.render import Message, SourceMeta, render_source_note

Part = tuple[list[Message], bytes]  # a part's messages and its note's bytes


def note_bytes(plan: Plan, meta: SourceMeta, messages: Sequence[Message], raw: bytes | None) -> bytes:
    """The bytes of the note holding `messages`; with the front matter keys of yours that `raw`
    (the note on disk it replaces) holds."""
    data = render_source_note(meta, messages, plan.zone).encode("utf-8")
    return data if raw is None else with_user_keys(data, raw, GENERATED_KEYS)


def parts_under_cap(plan: Plan, meta: SourceMeta, messages: list[Message], raw: bytes | None, path: str) -> list[Part]:
    """`messages` (in time order) as the notes that hold them, each under the vault's cap (one
    note when they fit, or no cap is set); `raw`: the note on disk the first replaces. A lone
    message over the cap gets a note of its own, said (never left out)."""
    whole = note_bytes(plan, meta, messages, raw)
    cap = plan.note_cap
    if cap is None or len(whole) <= cap:
        return [(messages, whole)]
    parts: list[Part] = []
    rest = messages
    while rest:
        kept = raw if not parts else None
        fits, over = 1, len(rest)  # the most messages whose note fits: at least one
        while fits < over:
            mid = (fits + over + 1) // 2
            if len(note_bytes(plan, meta, rest[:mid], kept)) <= cap:
                fits = mid
            else:
                over = mid - 1
        data = note_bytes(plan, meta, rest[:fits], kept)
        if len(data) > cap:
            plan.report.warnings.append(
                f"{path}: message {rest[0].message_id!r} alone takes {len(data):,} bytes, over this vault's cap of "
                f"{megabytes(cap)} MB a note ([vault] max_file_mb): its note is written but not indexed "
                "(raise max_file_mb in .vaultmind/config.toml)"
            )
        parts.append((rest[:fits], data))
        rest = rest[fits:]
    return parts


def part_paths(plan: Plan, first: str, base: str, count: int) -> list[str]:
    """`first`, then the next `count` - 1 free numbered siblings of `base` (no file there, none
    this ingest writes)."""
    paths = [first]
    n = 2
    while len(paths) < count:
        path = sibling_path(base, n)
        n += 1
        if path != first and path not in plan.claimed and plan.existing(path) is None:
            paths.append(path)
    return paths


def say_split(plan: Plan, paths: Sequence[str], size: int) -> None:
    """Say that a note over the cap was split, and where its parts are."""
    cap = plan.note_cap or 0
    plan.report.warnings.append(
        f"{paths[0]}: its messages take {size:,} bytes, over this vault's cap of {megabytes(cap)} MB a note "
        f"([vault] max_file_mb), which would never be indexed; split into {len(paths)} notes: {', '.join(paths)}"
    )


def megabytes(size: int) -> str:
    """`size` bytes in MB, as a cap on a note is said (`[vault] max_file_mb`)."""
    return f"{size / 2**20:.3g}"
