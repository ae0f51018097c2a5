"""`ingest_document`, the memory_tree modes' one write: a document given as text is written as
a source note and indexed at once, through the library, the API (a running daemon) and the CLI."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.conftest import run_main
from vaultmind.client import find_daemon
from vaultmind.errors import UsageError
from vaultmind.markdown.frontmatter import split_frontmatter
from vaultmind.memory import Memory

FERRY = {"title": "Ferry times", "body": "The harbor ferry leaves at 7:40 from pier 3.", "source_id": "agent:ferry"}


def test_a_document_is_written_indexed_and_versioned(vault: Path, memory: Memory) -> None:
    first = memory.query("ingest_document", {**FERRY, "source_ref": "https://ferry.example/times"})
    note = vault / "sources" / "document" / "agent" / "ferry-times.md"
    assert first["ingested"] == {"source_id": "agent:ferry", "note": "sources/document/agent/ferry-times.md", "changed": True, "leaves": 1, "warnings": []}
    [hit] = first["hits"]
    assert "leaves at 7:40 from pier 3" in hit["content"] and hit["source_refs"] == ["https://ferry.example/times"]
    meta = split_frontmatter(note.read_text(encoding="utf-8")).data
    assert (meta["source_id"], meta["version"], meta["title"]) == ("agent:ferry", 1, "Ferry times")
    assert memory.search("ferry pier")["hits"][0]["note_path"] == "sources/document/agent/ferry-times.md"
    again = memory.query("ingest_document", {**FERRY, "source_ref": "https://ferry.example/times"})
    assert again["ingested"]["changed"] is False and split_frontmatter(note.read_text(encoding="utf-8")).data["version"] == 1
    moved = memory.query("ingest_document", {**FERRY, "body": "From May the ferry leaves at 8:10 from pier 5."})
    assert moved["ingested"]["changed"] is True
    assert split_frontmatter(note.read_text(encoding="utf-8")).data["version"] == 2
    [leaf] = memory.query("query_source", {"source_id": "agent:ferry"})["hits"]
    assert "8:10 from pier 5" in leaf["content"], "the old text left the index with its version"


def test_each_argument_is_checked(memory: Memory) -> None:
    with pytest.raises(UsageError, match="'title' must be a non-empty string"):
        memory.query("ingest_document", {**FERRY, "title": " "})
    with pytest.raises(UsageError, match=r"unknown argument 'tags' for ingest_document"):
        memory.query("ingest_document", {**FERRY, "tags": ["x"]})


def test_through_the_running_daemon(vault: Path, daemon: Memory) -> None:
    client = find_daemon(daemon.config)
    assert client is not None
    answer = client.call("POST", "/v1/query", {"mode": "ingest_document", "args": FERRY})
    assert answer["ingested"]["note"] == "sources/document/agent/ferry-times.md"
    assert (vault / answer["ingested"]["note"]).is_file()
    found = client.call("POST", "/v1/search", {"query": "harbor ferry"})
    assert found["hits"][0]["note_path"] == "sources/document/agent/ferry-times.md"


def test_the_command_line_takes_the_text_from_standard_input(
    cli_vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = cli_vault
    monkeypatch.setattr("sys.stdin", io.StringIO("Tickets cost 4 euros at the kiosk.\n"))
    code, out, _ = run_main(capsys, "query", "ingest", "Ferry tickets", "--source-id", "agent:tickets", "--vault", str(vault))
    assert code == 0
    assert out.startswith("vaultmind: sources/document/agent/ferry-tickets.md written (1 leaf)\n")
    code, data, _ = run_main(capsys, "query", "search", "kiosk", "--vault", str(vault), "--json")
    assert data["hits"][0]["note_path"] == "sources/document/agent/ferry-tickets.md"


def test_a_document_whose_write_outlasts_a_questions_timeout_is_waited_for(
    vault: Path, daemon: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large document (a few MB: its leaves embedded and indexed) can take longer than a
    client waits for a question's answer: the agent was told the daemon was busy while its
    document was written. Its write is waited for."""
    import time

    from vaultmind.cli.query import ask
    from vaultmind.client import DaemonClient

    query = daemon.query

    def slow(mode: str, args: dict[str, object]) -> dict[str, object]:
        time.sleep(2.0)  # a write longer than the question's timeout below
        return query(mode, args)

    monkeypatch.setattr(daemon, "query", slow)
    made = DaemonClient.__init__

    def impatient(self: DaemonClient, *args: object, **kwargs: object) -> None:
        made(self, *args, **kwargs)  # type: ignore[arg-type]
        self.timeout = 0.5  # how long a question is waited for, shortened

    monkeypatch.setattr(DaemonClient, "__init__", impatient)
    answer = ask(daemon.config, "ingest_document", dict(FERRY))
    assert answer["ingested"]["note"] == "sources/document/agent/ferry-times.md"


def test_a_title_with_letters_no_accent_makes_names_the_note_in_ascii_and_an_older_name_is_kept(
    vault: Path, memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Straße`, `Łódź`, `Søren` in a title: the note's name spells them `ss`, `l`, `o` (they
    were left out: `strae`, `odz`, `sren`); a document an earlier vaultmind named so keeps its
    note, versioned in place, never written twice."""
    from vaultmind.ingest import names

    closed = {"title": "Sperrung der Straße in Łódź", "body": "Die Lindenstraße ist gesperrt.", "source_id": "agent:closed"}
    with monkeypatch.context() as earlier:  # an earlier vaultmind: letters no accent makes dropped
        earlier.setattr(names, "ascii_letters", lambda text: text)
        old = memory.query("ingest_document", closed)["ingested"]["note"]
    assert old == "sources/document/agent/sperrung-der-strae-in-odz.md"
    new = memory.query("ingest_document", {"title": "Søren's Straße", "body": "He lives there.", "source_id": "agent:soren"})
    assert new["ingested"]["note"] == "sources/document/agent/soren-s-strasse.md"
    again = memory.query("ingest_document", {**closed, "body": "Die Lindenstraße ist wieder offen."})["ingested"]
    assert (again["note"], again["changed"]) == (old, True)
    assert sorted(p.name for p in (vault / "sources/document/agent").glob("*.md")) == [
        "soren-s-strasse.md",
        "sperrung-der-strae-in-odz.md",
    ]
