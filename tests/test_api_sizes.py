"""What works without a daemon works with one: a large document, and the paths of an `ingest`
of many notes, fit in a request; what is over a limit says which limit and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.client import find_daemon
from vaultmind.config import load_config
from vaultmind.ingest.document import MAX_DOCUMENT_BYTES

from .conftest import run_main, running_daemon, write

# ~1.5 MB of text: over the 1 MiB a request body could be before
_PARAGRAPH = "The atlas launch moved to March, and Lina wrote the budget for the new office in Lisbon.\n\n"
_BIG = "# Minutes\n\n" + _PARAGRAPH * 17_000


@pytest.mark.slow
def test_a_large_document_is_ingested_through_the_daemon_as_without_it(
    vault: Path, daemon: object, capsys: pytest.CaptureFixture[str]
) -> None:
    assert len(_BIG.encode()) > 1_500_000
    code, data, err = run_main(capsys, "query", "ingest", "Minutes", "--source-id", "minutes", "--body", _BIG, "--vault", str(vault), "--json")
    assert code == 0, err
    assert data["ingested"]["changed"] is True
    assert (vault / data["ingested"]["note"]).is_file()


def test_the_paths_of_a_large_ingest_are_taken_by_the_daemon(vault: Path, daemon: object) -> None:
    client = find_daemon(load_config(vault, embed_provider="none"))
    assert client is not None
    paths = [f"sources/chat/whatsapp/a-long-group-name/2024/2024-{i:05d}.md" for i in range(20_000)]
    answer = client.call("POST", "/v1/sync", {"paths": paths, "gone": []}, timeout=600)
    assert len(answer["missing"]) == 20_000  # answered (named as not in the vault), not refused as too large


def test_a_document_over_the_limit_is_refused_naming_it_with_or_without_a_daemon(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n')
    body = "x" * (MAX_DOCUMENT_BYTES + 1)
    said = f"over the {MAX_DOCUMENT_BYTES:,}-byte limit for a document"
    argv = ("query", "ingest", "Huge", "--source-id", "huge", "--body", body, "--vault", str(vault))
    code, _, err = run_main(capsys, *argv)
    assert code == 2 and said in err, err
    with running_daemon(load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)):
        code, _, err = run_main(capsys, *argv)
        assert code == 2 and said in err, err  # the daemon's answer: the same limit named
    assert not (vault / "sources").exists()  # nothing written
