"""A document that is front matter only (a trip's `start`, `end`, `loc`) keeps its properties
as its text, as a note of yours keeps them as its properties leaf: written, indexed, found."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_main, snapshot_files, write
from vaultmind.markdown.note import parse_note

pytestmark = pytest.mark.usefixtures("cli_vault")  # every test: a vault the command line takes, no embedder


TRIP = "---\nstart: 2024-05-01\nend: 2024-05-07\nloc: Lisbon Alfama\ntags: [travel, family]\n---\n"


def test_a_document_of_properties_only_is_written_indexed_and_found(
    tmp_path: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    write(docs, "Trip to Lisbon.md", TRIP)
    write(docs, "titled.md", "---\ntitle: Only a title\nsource_ref: https://example.org/x\n---\n")
    write(docs, "empty.md", "")
    write(docs, "plain.md", "# Plain\n\nA note with text.\n")
    code, data, err = run_main(capsys, "ingest", "document", str(docs), "--vault", str(vault), "--json")
    assert code == 0, err
    assert len(data["written"]) == 2, data
    skipped = sorted(w.rsplit("/", 1)[-1] for w in data["warnings"] if "no text" in w)
    assert skipped == ["empty.md: no text; skipped", "titled.md: no text; skipped"]

    note = vault / "sources/document/files/docs/Trip to Lisbon.md"
    text = note.read_text(encoding="utf-8")
    body = text.split("\n---\n", 1)[1]
    assert body == "# Trip to Lisbon\n\nstart: 2024-05-01\nend: 2024-05-07\nloc: Lisbon Alfama\ntags: travel, family\n"
    # the lines a note of yours of the same front matter has as its properties leaf
    [leaf] = parse_note("Trip to Lisbon.md", TRIP).leaves
    assert leaf.text.split("\n")[1:] == body.split("\n")[2:-1]

    code, found, err = run_main(capsys, "query", "search", "Alfama", "--vault", str(vault), "--json")
    assert code == 0, err
    assert [hit["note_path"] for hit in found["hits"]] == ["sources/document/files/docs/Trip to Lisbon.md"], found

    before = snapshot_files(vault)
    code, again, err = run_main(capsys, "ingest", "document", str(docs), "--vault", str(vault), "--json")
    assert code == 0 and again["written"] == [], again
    assert snapshot_files(vault) == before
