"""A message whose code block is never closed (a log pasted after "```", cut short): its note
shows the meta line as a hidden comment, not as the code's last line, and reads back as sent."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from .conftest import run_main

TEXT = "Here is the log:\n```\nerror at line 3"


def test_a_code_block_left_open_ends_before_the_meta_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = tmp_path / "deploy.json"
    export.write_text(
        json.dumps(
            {
                "title": "Deploy",
                "messages": [
                    {"id": "1", "author": "Ann", "timestamp": "2024-05-01T10:00:00Z", "text": TEXT},
                    {
                        "id": "2",
                        "author": "Ben",
                        "timestamp": "2024-05-01T10:01:00Z",
                        "text": "The parser broke.",
                    },
                ],
            }
        ),
        encoding="utf-8",
    )
    vault = tmp_path / "vault"
    assert run_main(capsys, "init", str(vault))[0] == 0
    assert run_main(capsys, "ingest", "chat", str(export), "--vault", str(vault))[0] == 0
    (note,) = (vault / "sources" / "chat").rglob("*.md")
    written = note.read_bytes()
    html = MarkdownIt("commonmark").render(written.decode("utf-8"))
    codes = re.findall(r"<code>(.*?)</code>", html, re.S)
    assert codes == ["error at line 3\n"], codes  # the meta line was inside the code block
    code, hits, _ = run_main(
        capsys, "query", "source", "--source-id", "chat:deploy", "--vault", str(vault), "--json"
    )
    assert code == 0 and [h["content"] for h in hits["hits"]] == [TEXT, "The parser broke."]
    code, report, _ = run_main(capsys, "ingest", "chat", str(export), "--vault", str(vault), "--json")
    assert code == 0 and note.read_bytes() == written, report
