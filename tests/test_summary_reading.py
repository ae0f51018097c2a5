"""A summary note as a reader opens it in Obsidian: what the notes say, whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import run_main, write

MEETING = """# Launch sync

## Notes

- Bob: the migration takes 7 to 9 working days, plus two days of load testing. Subscription
  renewals on SDK v2 stop working after 1 April, so the migration cannot wait for 1.1.
"""
QUOTE = (
    '# Press\n\nMarco: launching without the Pro tier "kills the launch story"; he prefers moving the date '
    "to late April when the SDK migration and the App Store review and the press embargo and the "
    "launch evening at the harbour all fit together in one calm week of spring before the summer.\n"
)


def _summary_text(vault: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """The body of the one summary `flush --all` seals over the vault's notes."""
    assert run_main(capsys, "init", "--existing", str(vault))[0] == 0
    (vault / ".vaultmind" / "config.toml").write_text(
        '[entities]\nner_model = "off"\n\n[trees]\nsummarizer = "fallback"\n', encoding="utf-8"
    )
    assert run_main(capsys, "reindex", "--vault", str(vault))[0] == 0
    assert run_main(capsys, "flush", "--all", "--vault", str(vault))[0] == 0
    (summary,) = (vault / "summaries").rglob("s-*.md")
    return summary.read_text(encoding="utf-8").split("\n---\n", 1)[1]


def test_a_list_item_wrapped_over_two_lines_is_summarized_whole(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, "Meetings/Launch sync.md", MEETING)
    body = _summary_text(vault, capsys)
    # the item's second sentence starts on its first line: it was cut to "renewals on SDK v2 …"
    assert "Subscription renewals on SDK v2 stop working after 1 April" in body, body


def test_a_sentence_cut_after_a_quotation_still_ends_with_a_full_stop(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, "Press.md", QUOTE)
    body = _summary_text(vault, capsys)
    # too long for the summary, the sentence is cut after the quotation: it was left without its "."
    assert '"kills the launch story"' in body, body
    assert body.rstrip().endswith('story".'), body
