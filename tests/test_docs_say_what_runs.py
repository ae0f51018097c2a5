"""The docs and the `--help` texts say what the commands do: the JSON keys
docs/architecture.md lists for `status --json`, `reindex --json` and `sync --json` are the keys
those commands print (none missing from the docs, none the code does not write), and an option
that would do nothing where it is given is refused, saying what it goes with."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from .conftest import run_main, write

REPO = Path(__file__).resolve().parents[1]
SECTION = "## What `status --json`, `reindex --json` and `sync --json` say"
MAPS = {"admission.by_stage", "queue.by_kind", "daemon.workers"}  # keyed by stage, job kind, …: one row each


def documented_tables() -> list[set[str]]:
    """The keys of each table of the section, a nested key dotted (`index.health`; a cell's
    `.dropped` after `admission.admitted` is `admission.dropped`)."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert SECTION in text, "architecture.md documents the JSON of status, reindex and sync"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    tables: list[set[str]] = []
    for block in re.split(r"\n(?!\|)", section):
        rows = [row for row in block.splitlines() if row.startswith("| `")]
        if not rows:
            continue
        keys: set[str] = set()
        for row in rows:
            first = row.split("|")[1]
            names = re.findall(r"`([a-z_.]+)`", first)
            parent = names[0].rsplit(".", 1)[0] + "." if "." in names[0] else ""
            keys.update(parent + name[1:] if name.startswith(".") else name for name in names)
        tables.append(keys | {key.rsplit(".", n)[0] for key in keys for n in range(1, key.count(".") + 1)})
    return tables


def printed_keys(data: dict[str, Any], prefix: str = "") -> set[str]:
    """Every key of `data`, nested ones dotted; a list's items and the maps of MAPS not entered."""
    keys: set[str] = set()
    for key, value in data.items():
        name = prefix + key
        keys.add(name)
        if isinstance(value, dict) and name not in MAPS:
            keys |= printed_keys(value, name + ".")
    return keys


@pytest.fixture()
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "static")
    root = tmp_path / "vault"
    write(root, "Projects/Launch.md", "# Launch\n\nWe moved the launch to 23 April, said Alice Chen.\n")
    write(root, "Daily/2024-03-07.md", "# Thursday\n\nCalled Dana Whitfield about the Loft.\n")
    return root


def test_documented_keys_are_the_printed_keys(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status_keys, pass_keys = documented_tables()
    assert run_main(capsys, "init", str(vault), "--existing")[0] == 0
    code, reindexed, _ = run_main(capsys, "reindex", "--vault", str(vault), "--json")
    assert code == 0
    code, synced, _ = run_main(capsys, "sync", "--vault", str(vault), "--json")
    assert code == 0
    code, status, _ = run_main(capsys, "status", "--vault", str(vault), "--json")
    assert code == 0
    assert printed_keys(status) - status_keys == set(), "status --json prints keys the docs do not list"
    undocumented = (printed_keys(reindexed) | printed_keys(synced)) - pass_keys
    assert undocumented == set(), "reindex/sync --json print keys the docs do not list"
    source = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "vaultmind").rglob("*.py"))
    for key in status_keys | pass_keys:  # every key the docs list is one the code writes
        assert f'"{key.rsplit(".", 1)[-1]}"' in source, f"the docs list `{key}`, which nothing writes"


@pytest.mark.parametrize(
    ("given", "partner"),
    [
        (("query", "walk", "when did we move the launch?", "--budget", "300"), "--evidence"),
        (("queue", "--timeout", "5"), "--run"),
    ],
)
def test_an_option_without_its_partner_is_refused(
    vault: Path, capsys: pytest.CaptureFixture[str], given: tuple[str, ...], partner: str
) -> None:
    """`--budget` sizes the evidence block of `--evidence`, `--timeout` bounds `--run`: alone,
    each was accepted and ignored, so a user who gave one got nothing of what they asked."""
    assert run_main(capsys, "init", str(vault), "--existing")[0] == 0
    assert run_main(capsys, "reindex", "--vault", str(vault))[0] == 0
    code, _, err = run_main(capsys, *given, "--vault", str(vault))
    assert code == 2 and f"add {partner}" in err, err
    code, _, err = run_main(capsys, *given, partner, "--vault", str(vault))
    assert code == 0, err
