from __future__ import annotations

import gc
import hashlib
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from vaultmind import upkeep as upkeep_module
from vaultmind.cli.main import main
from vaultmind.config import Config, load_config
from vaultmind.daemon import Daemon
from vaultmind.entities.ner import NerEngine
from vaultmind.index.store import Index
from vaultmind.ingest.detect import ingest_paths
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory
from vaultmind.retrieval import dense
from vaultmind.tree import summarizers


@pytest.fixture(autouse=True)
def _collector_as_it_was() -> Iterator[None]:
    """A serving memory freezes what it loaded and collects less often (`Memory.serve`, `warm`):
    process-wide settings, put back after each test."""
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


@pytest.fixture(autouse=True)
def _upkeep_at_the_tests_priority(monkeypatch: pytest.MonkeyPatch) -> None:
    """A daemon's background upkeep lowers its thread's priority (`upkeep._lower_priority`):
    on a host whose cores are busy with other work (CI's two, under load) it then gets a few per
    cent of a core, and a test waiting for its seal or its NER pass times out (seen: no seal
    within 120 s). In a test it runs at the test's priority; what it does is unchanged."""
    monkeypatch.setattr(upkeep_module, "_lower_priority", lambda: None)


@pytest.fixture(autouse=True)
def _no_ollama_probe_from_another_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """The `auto` summarizer keeps what it found at a host for 5 minutes, process-wide: a fake
    Ollama of an earlier test on the same port (ports are reused) must not answer for this one."""
    monkeypatch.setattr(summarizers, "_probes", {})


@pytest.fixture(autouse=True)
def _no_embed_outage_from_another_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed embedder is not asked again for questions for a while, process-wide
    (`retrieval.dense.Outages`): a fake Ollama that failed in an earlier test on the same port
    must not leave this one's questions without dense search."""
    monkeypatch.setattr(dense, "OUTAGES", dense.Outages())


EVALDATA = Path(
    os.environ.get("VAULTMIND_EVALDATA", Path(__file__).resolve().parents[2] / "shared" / "evaldata")
)
"""Reference exports and corpora (docs/eval.md), read where they lie: the tests that read them
are skipped when they are absent (`VAULTMIND_EVALDATA` names another place)."""


def migrations_through(monkeypatch: pytest.MonkeyPatch, last: str) -> None:
    """Leave out the migrations after the one named `last`: the index (and the code's idea of
    it) of the version that ended with it, so what one migration does is seen alone. The
    tables this code's syncs write that a later migration creates without a rebuild (who
    talks with whom, 0041) come with the last one kept, as that index had the code of its time."""
    import vaultmind.index.migrate as migrate

    shipped = migrate.migrations()
    assert last in [name for name, _ in shipped], last
    kept = [m for m in shipped if m[0] <= last]
    if last < "0041_talks":
        name, sql = kept[-1]
        talks = dict(shipped)["0041_talks"].replace("-- rebuild: no", "")  # (the kept one's own say stands)
        kept[-1] = (name, sql + "\n" + talks)  # (its statements say IF NOT EXISTS)
    monkeypatch.setattr(migrate, "migrations", lambda: tuple(kept))


def write(vault: Path, rel: str, text: str) -> Path:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def said_in(note: Path) -> list[str]:
    """A chat note's messages as `author: first line of text`, in order."""
    lines = note.read_text(encoding="utf-8").splitlines()
    return [
        f"{head.split(' · ')[0].removeprefix('> [!message] ')}: {text[2:]}"
        for head, text in pairwise(lines)
        if head.startswith("> [!message]")
    ]


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """The command line run in this process: its exit code, what it printed (read as JSON
    when `--json` was given and it printed anything) and its stderr."""
    code = main(list(args))
    out, err = capsys.readouterr()
    data = json.loads(out) if "--json" in args and out.strip() else out
    return code, data, err



def end_process(proc: subprocess.Popen[str] | subprocess.Popen[bytes]) -> None:
    """Never leave a command or its pipes behind for a later test to trip over: killed if it
    still runs, waited for, its pipes closed."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(60)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()

def snapshot_files(vault: Path) -> dict[str, str]:
    """sha256 of every file outside .vaultmind/ (to prove vaultmind never touched them)."""
    out = {}
    for path in sorted(vault.rglob("*")):
        rel = path.relative_to(vault).as_posix()
        if rel.startswith(".vaultmind") or not path.is_file() or path.is_symlink():
            continue
        out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


DERIVED_QUERIES = {
    "notes": "SELECT path, kind, title, size, sha256, source_id, source_kind, frontmatter, frontmatter_error, aliases, leaf_count FROM notes ORDER BY path",
    "leaves": "SELECT id, note_path, seq, kind, text, content_hash, token_count, term_count, anchor, heading_path, message_id, author, ts, source_ref, mail_to, mail_cc FROM leaves ORDER BY id, note_path",
    "postings": "SELECT term, leaf_id, tf FROM postings ORDER BY term, leaf_id",
    "links": "SELECT src_path, target, kind, heading, block, alias, line FROM links ORDER BY ALL",
    "tags": "SELECT path, tag FROM tags ORDER BY ALL",
    "problems": "SELECT path, kind, message FROM problems ORDER BY ALL",
}


def dump_index(memory: Memory) -> dict[str, list[tuple[object, ...]]]:
    return {name: memory.index.query(sql) for name, sql in DERIVED_QUERIES.items()}


def cold_rows(config: Config, tmp: Path) -> dict[str, list[tuple[object, ...]]]:
    """`dump_index` of a cold rebuild of the vault, in a fresh index in `tmp`."""
    with Memory(config, Index.open(tmp / f"cold-{time.monotonic_ns()}.duckdb"), None) as cold:
        cold.reindex()
        return dump_index(cold)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    return root


@pytest.fixture
def cli_vault(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`vault` as the command line takes it (it holds vaultmind's state folder), which it opens
    with no embedder."""
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    (vault / ".vaultmind").mkdir()
    return vault


@pytest.fixture
def config(vault: Path) -> Config:
    return load_config(vault, embed_provider="none")


@pytest.fixture
def memory(config: Config) -> Iterator[Memory]:
    with Memory.open(config) as mem:
        yield mem


READY_S = 120.0
"""How long a test waits for a daemon to become ready, or for the watcher to apply a save: a
bound for a hung daemon, not a measure (two cores under heavy load take tens of seconds to
start a daemon: its NER child, its first reconcile and load)."""

WAIT_S = 60.0
"""How long a test waits for something the daemon or a thread does soon (a watched save
searchable, a thread ended): generous, as a loaded CI host may be slow, never slower than
this unless something hangs."""


def until(found: Callable[[], object], seconds: float = WAIT_S) -> bool:
    """Whether `found()` came true within `seconds` (asked every 0.1 s)."""
    deadline = time.monotonic() + seconds
    while not found():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def sealed_summaries(vault: Path, seconds: float = 120.0) -> list[Path]:
    """The summary notes under the vault's `summaries/`, once one is written (by a running
    daemon's upkeep), waited for up to `seconds`; [] if none was."""

    def found() -> list[Path]:
        return sorted((vault / "summaries").rglob("*.md")) if (vault / "summaries").exists() else []

    until(found, seconds)
    return found()


@contextmanager
def running_daemon(config: Config, *, ready_s: float = READY_S, join_s: float = WAIT_S) -> Iterator[tuple[Memory, Daemon]]:
    """The vault's daemon running (watcher, API, background work) in a thread, once ready; its
    memory and itself. Stopped, waited for and closed at the end."""
    memory = Memory.open(config)
    runner = Daemon(config, memory)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        assert runner.ready.wait(ready_s), "daemon did not become ready"
        yield memory, runner
    finally:
        runner.stop()
        thread.join(join_s)
        memory.close()


@pytest.fixture
def daemon(vault: Path) -> Iterator[Memory]:
    """The vault's daemon running (watcher, API, background work) in a thread; its memory."""
    with running_daemon(load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)) as (memory, _):
        yield memory


def write_chat(vault: Path, day: str, messages: list[tuple[str, str]]) -> None:
    """A chat source note for one day of `(author, text)` messages, as the chat adapter writes it."""
    meta = SourceMeta(kind="chat", source_id="chat:two", scope="chat/two", title=f"chat {day}")
    msgs = [
        Message(
            message_id=f"{day}-{i}",
            author=author,
            timestamp=f"{day}T10:{i:02d}:00Z",
            text=text,
            source_ref=f"chat://two/{day}-{i}",
        )
        for i, (author, text) in enumerate(messages)
    ]
    write(vault, f"sources/chat/two/{day}.md", render_source_note(meta, msgs))


def write_slack_day(
    vault: Path, day: str, messages: list[tuple[str, str, str]], ref: str = "slack://C1/{day}-{i}"
) -> None:
    """A Slack day note of `(author, HH:MM in UTC, text)` messages; `ref` formats each message's
    source ref from `day`, `i` (its place) and `back` (99 − its place)."""
    meta = SourceMeta(
        kind="chat", source_id="slack:acme/general", scope="slack/acme/general", title=f"#general {day}"
    )
    msgs = [
        Message(
            message_id=f"{day}-{i}",
            author=a,
            timestamp=f"{day}T{t}:00Z",
            text=x,
            source_ref=ref.format(day=day, i=i, back=99 - i),
        )
        for i, (a, t, x) in enumerate(messages)
    ]
    write(vault, f"sources/chat/slack/acme/general/{day}.md", render_source_note(meta, msgs))



class DeepFolders:
    """Trees deeper than Python's recursion limit: made one level after the other
    (`os.makedirs` recurses), and removed deepest first at the end of the test (`shutil.rmtree`,
    and so pytest's clean-up of old temporary folders, recurses too)."""

    def __init__(self) -> None:
        self.roots: list[Path] = []

    def make(self, root: Path, depth: int) -> Path:
        """`root/d/d/…/d`, `depth` folders deep."""
        self.roots.append(root / "d")
        folder = root
        for _ in range(depth):
            folder = folder / "d"
            folder.mkdir()
        return folder

    def remove_later(self, root: Path) -> None:
        self.roots.append(root)

    def remove(self) -> None:
        for root in self.roots:
            folders, found = [root], []
            while folders:
                folder = folders.pop()
                if not folder.is_dir():
                    continue
                found.append(folder)
                for entry in folder.iterdir():
                    if entry.is_dir() and not entry.is_symlink():
                        folders.append(entry)
                    else:
                        entry.unlink()
            for folder in reversed(found):
                folder.rmdir()


@pytest.fixture
def deep_folders() -> Iterator[DeepFolders]:
    deep = DeepFolders()
    yield deep
    deep.remove()


@pytest.fixture
def ner_model() -> str:
    """The installed spaCy package NER loads; a test needing the real model is skipped without one."""
    engine = NerEngine()
    if not engine.available or engine.package is None:
        pytest.skip(engine.status()["message"])
    return engine.package


def chat_ingested_alike(export: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """`export` ingested into two fresh vaults gives byte-identical notes, and once more into
    the first adds, writes and warns of nothing; that vault and its files."""
    a, b = tmp_path / "alike-a", tmp_path / "alike-b"
    a.mkdir()
    b.mkdir()
    ingest_paths("chat", [export], a)
    ingest_paths("chat", [export], b)
    assert snapshot_files(a) == snapshot_files(b)
    before = snapshot_files(a)
    again = ingest_paths("chat", [export], a)
    assert (again.messages_added, again.written, again.warnings) == (0, [], [])
    assert snapshot_files(a) == before
    return a, before


def pool_settings(index: Index) -> tuple[str, int]:
    """DuckDB's memory limit and thread count as they stand (the whole database's)."""
    row = index.con.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchone()
    assert row is not None
    return str(row[0]), int(row[1])

