"""An argument a command does not take is said by that command: its own usage, the flag that
was probably meant, or that a question of several words goes in quotes; nothing runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import run_main, snapshot_files


@pytest.mark.parametrize(
    ("args", "usage", "hint"),
    [
        (
            ["status", "--jsn"],
            "usage: vaultmind status [-h]",
            "vaultmind: hint: did you mean --json instead of --jsn? (`vaultmind status --help` lists its flags)",
        ),
        (
            ["query", "walk", "launch", "--evidense", "--limt", "3"],
            "usage: vaultmind query walk [-h]",
            "vaultmind: hint: did you mean --evidence instead of --evidense, --limit instead of --limt?",
        ),
        (
            ["query", "walk", "when", "did", "we", "move", "the", "launch?"],
            "usage: vaultmind query walk [-h]",
            'vaultmind: hint: put a question of several words in quotes: vaultmind query walk "when did we move the launch?"',
        ),
        (
            ["query", "window", "--start", "2024-03-07", "--end", "2024-03-08"],
            "usage: vaultmind query window [-h]",
            "vaultmind: hint: START and END are given without flags, in this order: vaultmind query window START END",
        ),
        (
            ["explain", "--leaf-id", "abcdef"],
            "usage: vaultmind explain [-h]",
            "vaultmind: hint: LEAF_ID is given without a flag: vaultmind explain LEAF_ID",
        ),
        (
            ["reindex", "--force"],
            "usage: vaultmind reindex [-h]",
            "vaultmind: hint: `vaultmind reindex --help` lists what it takes",
        ),
    ],
)
def test_an_unknown_argument_is_said_by_its_command_with_what_was_meant(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], usage: str, hint: str
) -> None:
    vault = tmp_path / "v"
    run_main(capsys, "init", "--demo", str(vault))
    before = snapshot_files(vault)
    with pytest.raises(SystemExit) as stop:
        run_main(capsys, *args, "--vault", str(vault))
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert err.startswith(usage), err  # the command's own usage, not the list of commands
    command = usage.removeprefix("usage: ").removesuffix(" [-h]")
    assert f"\n{command}: error: unrecognized arguments: " in err, err
    assert hint in err, err
    assert not (vault / ".vaultmind" / "index.duckdb").exists(), "nothing ran"
    assert snapshot_files(vault) == before


@pytest.mark.parametrize(
    ("args", "usage"),
    [(["query"], "usage: vaultmind query [-h] MODE"), (["bench"], "usage: vaultmind bench [-h] ACTION")],
)
def test_a_command_given_no_subcommand_shows_its_own_help(
    capsys: pytest.CaptureFixture[str], args: list[str], usage: str
) -> None:
    """`vaultmind query` alone printed the list of every command, not query's modes."""
    code, out, _ = run_main(capsys, *args)
    assert code == 2 and out.startswith(usage), out
