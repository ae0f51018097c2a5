"""An argument a command does not take is said by that command: its own usage, the flag that
was probably meant, or that a question of several words goes in quotes; nothing runs."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

import pytest

from vaultmind.cli.main import build_parser
from vaultmind.cli.parser import CommandParser

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


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["query", "walk", "x", "--limit", "0"], "argument --limit: 0 is not a positive whole number"),
        (["query", "walk", "x", "--at", "yesterday"], "'yesterday' is not an ISO 8601 date or time"),
        (["query", "walk", "x", "--evidence", "--budget", "0"], "argument --budget: 0 is not a positive"),
        (["query", "walk", "--limit", "3"], "the following arguments are required: text"),
        (["status", "--bogus"], "unrecognized arguments: --bogus"),
        (["statsu"], "invalid choice: 'statsu'"),
    ],
)
@pytest.mark.parametrize("json_flag", ["--json", "--js"])
def test_with_json_a_mistake_in_the_arguments_is_a_json_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], said: str, json_flag: str
) -> None:
    """With `--json`, a mistake argparse caught (`--limit 0`, an unknown option, a date it cannot
    read) was a usage text on stderr, while one found later (`--limit 9999`) was `{"error": …}` on
    stdout: a script had to handle both. Both are JSON now, exit 2 as before; `--json` shortened
    as argparse takes it too (`--js` gave JSON for a later mistake, text for these)."""
    with pytest.raises(SystemExit) as stop:
        run_main(capsys, *args, json_flag, "--vault", str(tmp_path))
    out, err = capsys.readouterr()
    assert stop.value.code == 2
    error = json.loads(out)["error"]
    assert error["code"] == "usage" and said in error["message"], error
    assert error["hint"], error
    assert not err.startswith("usage:"), err


def test_every_command_parses_with_the_one_parser_class() -> None:
    """The root parser and every (sub)command's are of the class that says a mistake as JSON."""

    def parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return [parser] + [p for sub in subs for child in sub.choices.values() for p in parsers(child)]

    every = parsers(build_parser())
    assert len(every) > 20 and all(type(p) is CommandParser for p in every)


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["--json", "status"], "vaultmind status reads --json only after its name and before any `--`"),
        (["status", "--", "--json"], "vaultmind status reads --json only after its name and before any `--`"),
        (["--json"], "--json goes after a command's name: vaultmind COMMAND --json"),
    ],
)
def test_a_flag_given_where_it_is_not_read_is_said_so_not_taken_for_a_misspelling(
    capsys: pytest.CaptureFixture[str], args: list[str], hint: str
) -> None:
    """`vaultmind --json status` was told "did you mean --json instead of --json?", and
    `vaultmind --json` "did you mean --version"."""
    with pytest.raises(SystemExit) as stop:
        run_main(capsys, *args)
    out, err = capsys.readouterr()
    assert stop.value.code == 2
    said = json.loads(out)["error"]["hint"] if out else err
    assert hint in said and "did you mean" not in said, said


def test_json_after_a_double_dash_is_text_so_the_mistake_is_said_as_text(capsys: pytest.CaptureFixture[str]) -> None:
    """After `--`, `--json` is a value, not the flag: the mistake is said as argparse says it."""
    with pytest.raises(SystemExit) as stop:
        run_main(capsys, "query", "walk", "--limit", "0", "--", "--json")
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == ""
    assert err.startswith("usage: vaultmind query walk") and "--limit: 0 is not a positive" in err, err


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["status", "{v}"], "the vault is given with --vault: vaultmind status --vault {v}"),
        (["reindex", "{v}"], "the vault is given with --vault: vaultmind reindex --vault {v}"),
        (["--vault", "{v}", "status"], "--vault goes after the command's name: vaultmind status --vault {v}"),
        (["--json", "--vault", "{v}", "status"], "--json, --vault go after the command's name: vaultmind status --json --vault {v}"),
        (["query", "--vault", "{v}", "walk", "x"], "--vault goes after the command's name: vaultmind query walk x --vault {v}"),
        (
            ["query", "when did we move the launch?", "--vault", "{v}"],
            "a question is asked with a mode first: vaultmind query walk 'when did we move the launch?' --vault {v}",
        ),
        (["query", "serch", "x"], "did you mean search?"),
        (
            ["--json", "query", "when did we move the launch?", "--vault", "{v}"],
            "a question is asked with a mode first: vaultmind query walk 'when did we move the launch?' --vault {v} --json",
        ),
        (["{v}", "status"], "the vault is given with --vault after the command's name: vaultmind status --vault {v}"),
        (
            ["--vault", "{v}", "query", "when did we move the launch?"],
            "--vault goes after the command's name: vaultmind query walk 'when did we move the launch?' --vault {v}",
        ),
        (["{v}", "query", "launch"], "the vault is given with --vault after the command's name: vaultmind query walk launch --vault {v}"),
    ],
)
def test_a_vault_or_question_where_a_command_or_mode_belongs_gets_the_command_line_meant(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], hint: str
) -> None:
    """`vaultmind status demo-vault` (the vault as `init` takes it), `--vault` put before the
    command or mode, or the mode forgotten: argparse's "unrecognized arguments" or "invalid
    choice" came with no hint (or one to read `--help`)."""
    monkeypatch.chdir(tmp_path)
    run_main(capsys, "init", "--demo", "demo-vault")
    with pytest.raises(SystemExit) as stop:
        run_main(capsys, *(a.format(v="demo-vault") for a in args))
    out, err = capsys.readouterr()
    assert stop.value.code == 2
    said = json.loads(out)["error"]["hint"] if "--json" in args else err
    assert hint.format(v="demo-vault") in said, said


@pytest.mark.parametrize(
    "args",
    [
        ["--vault", "demo-vault", "query", "launch"],
        ["--json", "--vault", "demo-vault", "query", "launch"],
        ["demo-vault", "query", "launch"],
        ["--vault", "demo-vault", "query", "--limit", "3", "launch"],
        ["demo-vault", "query", "--json", "launch"],
    ],
)
def test_the_command_line_a_hint_gives_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """`vaultmind --vault V query "q"` (the vault before the command, the mode left out) was told
    to move `--vault` (`vaultmind query q --vault V`), and that line to add the mode: one mistake
    after another. The line the hint gives is the whole one, and it runs; the mode goes right
    after `query`, never between a flag and its value (`query --limit walk 3 launch`)."""
    monkeypatch.chdir(tmp_path)
    run_main(capsys, "init", "--demo", "demo-vault")
    with pytest.raises(SystemExit):
        run_main(capsys, *args)
    out, err = capsys.readouterr()
    said = json.loads(out)["error"]["hint"] if "--json" in args else err.split("vaultmind: hint: ", 1)[1]
    line = shlex.split(said.split(": ", 1)[1])
    assert line[:3] == ["vaultmind", "query", "walk"], said
    code, _, err = run_main(capsys, *line[1:])
    assert code == 0, err


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["query", "walk", "what", "about", "notes", "--vault", "demo-vault"], 'in quotes: vaultmind query walk "what about notes"'),
        (["query", "walk", "what", "about", "notes"], 'in quotes: vaultmind query walk "what about notes"'),
        (["query", "walk", "budget", "demo-vault"], "the vault is given with --vault: vaultmind query walk budget --vault demo-vault"),
        (["status", "notes", "--vault", "demo-vault"], "`vaultmind status --help` lists what it takes"),
        (["notes", "status"], "the vault is given with --vault after the command's name: vaultmind status --vault notes"),
        (["--json", "notes", "status"], "the vault is given with --vault after the command's name: vaultmind status --json --vault notes"),
        (["query", "--json", "notes", "--vault", "demo-vault"], "did you mean entities?"),
    ],
)
def test_a_word_that_is_a_folder_is_taken_for_the_vault_only_where_it_can_be_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], hint: str
) -> None:
    """A question's word that names a folder ("what about notes" unquoted, in a vault with a
    `notes/` folder) was taken for the vault: the hint dropped the question and gave `--vault
    notes`, also when `--vault` was given. `--json notes status` was told to put --json after
    the command, as if `notes` were its value, and `notes status` got "did you mean entities?"."""
    monkeypatch.chdir(tmp_path)
    run_main(capsys, "init", "--demo", "demo-vault")
    (tmp_path / "notes").mkdir()
    with pytest.raises(SystemExit) as stop:
        run_main(capsys, *args)
    out, err = capsys.readouterr()
    assert stop.value.code == 2
    said = json.loads(out)["error"]["hint"] if "--json" in args else err
    assert hint in said, said
    assert "--vault notes" in hint or "--vault notes" not in said, said
    assert "--json goes after" not in said, said
