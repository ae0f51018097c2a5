"""An error names what the user set, as they set it: the environment variable rather than the
file's setting, the command line's flag rather than the API's argument; a limit a value must
keep is in the help; a loopback address of either family works."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.cli.main import build_parser
from vaultmind.client import find_daemon
from vaultmind.config import load_config
from vaultmind.mcp_server import tool_definition
from vaultmind.retrieval.modes import MAX_DEPTH

from .conftest import run_main, running_daemon, write


def _vault(vault: Path) -> None:
    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n')
    write(vault, "boat.md", "# Boat\n\nWe bought the red kayak from Harbor Sports on 3 May.\n")


def test_errors_name_the_environment_variable_and_the_flags(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _vault(vault)
    code, _, err = run_main(capsys, "query", "source", "--since", "yesterday-ish", "--vault", str(vault))
    assert code == 2 and "'since' (--since on the command line) = 'yesterday-ish'" in err, err
    code, _, err = run_main(capsys, "query", "window", "2024-01-01", "soon", "--vault", str(vault))
    assert code == 2 and "'end' (END on the command line) = 'soon'" in err, err
    code, out, err = run_main(capsys, "query", "leaves", "abc", "--vault", str(vault))
    assert "not found: abc (an id prefix needs at least 6 characters)" in out + err
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "bogus")
    code, _, err = run_main(capsys, "query", "walk", "kayak", "--vault", str(vault))
    assert code != 0 and "unknown embeddings provider 'bogus' (from $VAULTMIND_EMBED_PROVIDER)" in err, err
    assert "set $VAULTMIND_EMBED_PROVIDER to one of" in err and "[embeddings] provider" not in err


def test_the_drill_depths_limit_is_in_the_help_and_the_tools_schema() -> None:
    drill = build_parser()._subparsers._group_actions[0].choices["query"]  # type: ignore[union-attr]
    help_text = drill._subparsers._group_actions[0].choices["drill"].format_help()
    assert f"at most {MAX_DEPTH}" in " ".join(help_text.split())
    depth = tool_definition()["inputSchema"]["properties"]["depth"]
    assert depth["maximum"] == MAX_DEPTH and f"at most {MAX_DEPTH}" in depth["description"]


def test_a_daemon_on_the_ipv6_loopback_serves_its_commands(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _vault(vault)
    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n[server]\nhost = "::1"\n')
    config = load_config(vault, debounce_ms=50, step_ms=20)
    with running_daemon(config):
        client = find_daemon(config)
        assert client is not None and client.base.startswith("http://[::1]:")
        code, data, err = run_main(capsys, "status", "--vault", str(vault), "--json")
        assert code == 0 and data["daemon"]["running"] is True, err


def test_bench_generate_names_its_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(capsys, "bench", "generate", str(tmp_path / "g"), "--notes", "0")
    assert code == 2 and "--notes must be at least 1, got 0" in err, err
    code, _, err = run_main(capsys, "bench", "generate", str(tmp_path / "g"), "--sources-share", "1.5")
    assert code == 2 and "--sources-share must be between 0 and 1, got 1.5" in err, err


@pytest.mark.parametrize(
    ("args", "said", "hint"),
    [
        (["source"], "'source_id' (--source-id on the command line) or 'kind' (--kind on the command line) is needed", None),
        (["source", "--kind", "pets"], "'kind' (--kind on the command line) = 'pets' is not a kind of source (kinds: chat,", None),
        (
            ["source", "--kind", "chat", "--since", "2024-03-08", "--until", "2024-03-07"],
            "'until' (--until on the command line) must be after 'since' (--since on the command line)",
            "until is excluded: for the one day 2024-03-08, give since 2024-03-08 and until 2024-03-09",
        ),
        (
            ["window", "2024-03-07", "2024-03-07"],
            "'end' (END on the command line) must be after 'start' (START on the command line)",
            "end is excluded: for the one day 2024-03-07, give start 2024-03-07 and end 2024-03-08",
        ),
    ],
)
def test_a_query_mode_refuses_in_the_command_lines_words(
    vault: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str, hint: str | None
) -> None:
    """`query source`, `query window`: the API's function names ("query_source needs…",
    "cover_window needs start < end") were said, and asking for one day as `2024-03-07
    2024-03-07` got no word of the end being excluded."""
    _vault(vault)
    code, _, err = run_main(capsys, "query", *args, "--vault", str(vault))
    assert code == 2 and said in err, err
    assert "query_source" not in err and "cover_window" not in err, err
    if hint is not None:
        assert f"vaultmind: hint: {hint}" in err, err


def test_query_entities_refuses_an_empty_name_as_a_name(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`query entities ''` said "'query' must be a non-empty string": the API's argument."""
    _vault(vault)
    with pytest.raises(SystemExit) as stop:
        run_main(capsys, "query", "entities", " ", "--vault", str(vault))
    err = capsys.readouterr().err
    assert stop.value.code == 2 and 'the name is empty; give a name, alias, email or handle, e.g. "Alice Chen"' in err, err
    assert "'query'" not in err, err


def test_a_value_said_back_is_not_taken_for_an_argument(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`query entities x --kind end` said "unknown entity kind 'end' (END on the command line)":
    the value given, which is also the name of `query window`'s argument, was marked as one."""
    _vault(vault)
    code, _, err = run_main(capsys, "query", "entities", "x", "--kind", "end", "--vault", str(vault))
    assert code == 2 and "unknown entity kind 'end' (kinds:" in err and "on the command line" not in err, err
