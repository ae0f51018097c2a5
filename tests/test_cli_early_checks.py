"""A command refuses what it cannot do before it starts the work: `eval locomo --out` into a
folder that is not there, `query ingest` waiting on a terminal for text nobody types."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from .conftest import run_main, write
from .test_locomo import write_fixture


def test_eval_checks_its_out_file_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_fixture(tmp_path)
    for out, said in ((tmp_path / "no such folder" / "r.jsonl", "the folder for --out does not exist"), (tmp_path, "--out names a folder")):
        code, _, err = run_main(capsys, "eval", "locomo", str(data), "--out", str(out))
        assert code == 2 and said in err, err
        assert "vaultmind eval:" not in err  # no progress: the run did not start


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_query_ingest_without_body_on_a_terminal_says_so(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n')
    monkeypatch.setattr("sys.stdin", _Terminal("typed text that must not be read\n"))
    code, _, err = run_main(capsys, "query", "ingest", "Notes", "--source-id", "n1", "--vault", str(vault))
    assert code == 2 and "reads the document's text from standard input, which is a terminal" in err, err
    assert not (vault / "sources").exists()
    monkeypatch.setattr("sys.stdin", io.StringIO("# Notes\n\nPiped text.\n"))  # piped: read
    code, _, err = run_main(capsys, "query", "ingest", "Notes", "--source-id", "n1", "--vault", str(vault))
    assert code == 0, err
