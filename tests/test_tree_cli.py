"""`vaultmind tree` and `vaultmind flush` (local path, no daemon), and the tree benchmark's shape."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vaultmind.bench.trees import bench_trees
from vaultmind.cli.main import main
from vaultmind.config import load_config
from vaultmind.errors import ConfigError
from vaultmind.tree import view
from vaultmind.tree.settings import TreeSettings

from .conftest import run_main, write
from .treekit import TREE, chat_day, tokens_of

HOUR_BEFORE_AT = 1_709_550_000  # 2024-03-04T11:00:00Z, an hour before the "now" the flushes pass
LONG_AGO = 1_700_000_000  # 2023-11-14: notes last written then are quiet at any "now" the tests pass
CONFIG = f"""[embeddings]
provider = "none"
[entities]
ner_model = "off"
[admission]
llm = false
[trees]
l0_tokens = {tokens_of(0, 3)}
fanout = 3
summarizer = "fallback"
"""


def test_tree_and_flush_commands(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(vault, ".vaultmind/config.toml", CONFIG)
    chat_day(vault, 0, 0, 10)
    assert main(["flush", "--vault", str(vault), "--at", "2024-03-04T12:00:00Z", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [s["level"] for s in report["sealed"]] == [1, 1, 1, 2] and report["flushed"] == []
    assert main(["tree", "--vault", str(vault), "--json"]) == 0
    (tree,) = json.loads(capsys.readouterr().out)["trees"]
    assert tree == {
        "tree": TREE,
        "title": "#launch",
        "folder": "summaries/slack-fernhill-launch",
        "leaves": 10,
        "buffered_leaves": 1,
        "buffered_tokens": tokens_of(9, 1),
        "gray_leaves": 0,
        "summaries": 4,
        "levels": 2,
        "stale": 0,
        "edited": 0,
    }
    assert main(["tree", TREE, "--vault", str(vault)]) == 0
    out = capsys.readouterr().out
    assert f"level 0 buffer: 1 leaf, {tokens_of(9, 1)}/{tokens_of(0, 3)} tokens" in out
    assert "level 1: 3 summaries; waiting to fold: 0/3" in out and "level 2: 1 summary" in out  # one of a kind in the singular
    assert "  3 children, 3 leaves, " in out
    assert main(["flush", "--vault", str(vault), "--all"]) == 0
    out = capsys.readouterr().out
    assert "1 summary sealed in " in out and "(0 LLM calls, 1 by the fallback summarizer)" in out
    assert "+ L1 summaries/slack-fernhill-launch/L1/" in out and "(1 child, fallback)" in out
    assert main(["tree", "nope", "--vault", str(vault), "--json"]) == 4
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "not_found"


def test_settings_are_validated(tmp_path: Path) -> None:
    assert TreeSettings.from_extra({}) == TreeSettings(3000, 8, 24.0, "auto", "", 120.0, True)
    for bad in ({"trees.fanout": 1}, {"trees.l0_tokens": "many"}, {"trees.user_notes": "yes"}):
        with pytest.raises(ConfigError, match=r"\[trees\]"):
            TreeSettings.from_extra(bad)
    write(tmp_path, ".vaultmind/config.toml", "[trees]\nfanout = 4\nuser_notes = false\n")
    settings = TreeSettings.from_extra(load_config(tmp_path).extra)
    assert settings.fanout == 4 and not settings.user_notes


def test_the_tree_benchmark_reports_seals_and_llm_calls(tmp_path: Path) -> None:
    result = bench_trees(tmp_path / "bench", messages=36, l0_tokens=250, fanout=3)
    assert result["leaves"] == 36 and result["seals"] >= 5
    assert result["seals_per_s"] > 0
    assert result["llm_calls_per_1000_leaves"] == pytest.approx(1000 * result["seals"] / 36, rel=1e-6)
    assert result["llm_calls_per_1000_leaves_max"] == 2 * result["llm_calls_per_1000_leaves"]
    assert result["summaries"] == sum(result["summaries_per_level"].values()) == result["seals"]
    assert result["refresh_full_s"] > 0 and result["refresh_gated_s"] > 0
    assert result["refresh_gated_ratio"] is not None


def test_the_daemon_routes_validate_and_answer(vault: Path) -> None:
    from vaultmind.errors import UsageError
    from vaultmind.memory import Memory
    from vaultmind.tree.view import route_flush, route_tree

    from .treekit import tree_config

    chat_day(vault, 0, 0, 4)
    with Memory.open(tree_config(vault)) as memory:
        memory.sync()
        for body in ({"all": "yes"}, {"max_stale": -1}, {"at": "last tuesday"}):
            with pytest.raises(UsageError):
                route_flush(memory, body)
        with pytest.raises(UsageError):
            route_tree(memory, {"tree": 3})
        report = route_flush(memory, {"all": True})
        assert [s["children"] for s in report["sealed"]] == [3, 1]
        assert route_tree(memory, {"tree": TREE})["levels"] == [
            {"level": 1, "summaries": 2, "stale": 0, "edited": 0}
        ]


def test_tree_takes_a_note_path_as_obsidian_copies_it(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A source note's path, your note's path, a summary note's path (with or without `.md`,
    relative to the vault or to where you stand) name their tree; anything else is an error
    that says what was given."""
    write(vault, ".vaultmind/config.toml", CONFIG)
    day = chat_day(vault, 0, 0, 10)
    write(vault, "Projects/launch plan.md", "# Launch plan\n\nWe book the Harbor Hall for the launch on Friday.\n")
    write(vault, "entities/person/helen-okafor.md", '---\nvaultmind: entity\nid: "person:helen-okafor"\n---\n# Helen\n')
    code, report, _ = run_main(capsys, "flush", "--vault", str(vault), "--at", "2024-03-04T12:00:00Z", "--json")
    assert code == 0
    summary = report["sealed"][-1]["path"]
    for given in (day, day.removesuffix(".md"), summary, summary.removesuffix(".md"), str(vault / day)):
        code, shown, _ = run_main(capsys, "tree", given, "--vault", str(vault), "--json")
        assert (code, shown["tree"]) == (0, TREE), given
    monkeypatch.chdir(vault / "sources")
    code, shown, _ = run_main(capsys, "tree", day.removeprefix("sources/"), "--vault", str(vault), "--json")
    assert (code, shown["tree"]) == (0, TREE)
    code, shown, _ = run_main(capsys, "tree", "Projects/launch plan.md", "--vault", str(vault), "--json")
    assert (code, shown["tree"]) == (0, "notes:Projects")
    code, err, _ = run_main(capsys, "tree", "entities/person/helen-okafor.md", "--vault", str(vault), "--json")
    assert code == 4 and "'entities/person/helen-okafor.md' is an entity note" in err["error"]["message"]
    code, err, _ = run_main(capsys, "tree", "sources/nowhere.md", "--vault", str(vault), "--json")
    assert code == 4
    assert err["error"]["message"] == "'sources/nowhere.md' is neither a tree id nor a note in the vault"


def test_the_listing_shows_edited_summaries_in_their_own_column_and_says_when_it_is_cut(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(vault, ".vaultmind/config.toml", CONFIG)
    day = vault / chat_day(vault, 0, 0, 10)
    code, report, _ = run_main(capsys, "flush", "--vault", str(vault), "--at", "2024-03-04T12:00:00Z", "--json")
    assert code == 0
    l1 = next(s["path"] for s in report["sealed"] if s["level"] == 1)
    (vault / l1).write_text((vault / l1).read_text(encoding="utf-8") + "My own line.\n", encoding="utf-8")
    for written in (day, vault / l1):  # an hour before that "now": the L2 above them does not wait
        os.utime(written, (HOUR_BEFORE_AT, HOUR_BEFORE_AT))
    assert run_main(capsys, "flush", "--vault", str(vault), "--at", "2024-03-04T12:00:00Z")[0] == 0  # syncs it
    code, out, _ = run_main(capsys, "tree", "--vault", str(vault))
    header, row = out.splitlines()[:2]
    assert header.split()[-3:] == ["STALE", "EDITED", "TITLE"]
    stale, edited = header.index("STALE"), header.index("EDITED")
    assert row[stale : stale + 5].strip() == "0" and row[edited : edited + 6].strip() == "1"  # under their headers
    assert row.split()[-1] == "#launch"
    code, out, _ = run_main(capsys, "tree", TREE, "--vault", str(vault))
    assert "summaries (top level first):" in out
    monkeypatch.setattr(view, "MAX_LISTED", 2)
    code, out, _ = run_main(capsys, "tree", TREE, "--vault", str(vault))
    assert "summaries (top level first, the first 2 of 4: `--json` lists the same):" in out
    assert len([line for line in out.splitlines() if line.startswith("  L") and "children" in line]) == 2


def test_flush_at_says_what_it_takes_and_any_time_is_fine(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(vault, ".vaultmind/config.toml", CONFIG)
    chat_day(vault, 0, 0, 2)
    code, err, _ = run_main(capsys, "flush", "--vault", str(vault), "--at", "yesterday", "--json")
    assert code == 2
    assert err["error"]["message"] == "--at 'yesterday' is not an ISO 8601 time"
    assert "2024-03-04T09:00:00Z" in err["error"]["hint"]
    code, report, _ = run_main(capsys, "flush", "--vault", str(vault), "--at", "0001-01-01T00:00:00", "--json")
    assert code == 0 and report["sealed"] == [] and report["flushed"] == []  # nothing is older than that
    code, report, _ = run_main(capsys, "flush", "--vault", str(vault), "--at", "9999-12-31T23:59:59", "--json")
    assert code == 0 and report["flushed"] == [TREE]


def test_tree_of_a_note_in_summaries_that_is_no_summary_says_so(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(vault, ".vaultmind/config.toml", CONFIG)
    write(vault, "summaries/README.md", "# Summaries\n\nvaultmind writes the summary trees here.\n")
    code, err, _ = run_main(capsys, "tree", "summaries/README.md", "--vault", str(vault), "--json")
    assert code == 4
    assert err["error"]["message"] == "'summaries/README.md' is not a summary note: it belongs to no summary tree"


def test_a_summary_that_cannot_be_written_stops_its_tree_only(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file where a tree's folder goes (or no room, no permission): that seal is reported as
    aborted and the other trees still fold; the command does not fail with a traceback."""
    write(vault, ".vaultmind/config.toml", CONFIG)
    chat_day(vault, 0, 0, 3)
    chat_day(vault, 0, 0, 3, source_id="slack:fernhill/ops", scope="slack/fernhill/ops")
    write(vault, "summaries/slack-fernhill-ops/L1", "a file of yours where the folder goes\n")
    code, report, _ = run_main(capsys, "flush", "--vault", str(vault), "--all", "--json")
    assert code == 0
    assert [s["tree"] for s in report["sealed"]] == [TREE]
    assert report["aborted"]
    for aborted in report["aborted"]:  # tried by each phase of the pass
        assert aborted["tree"] == "slack:fernhill/ops" and "could not be written" in aborted["reason"]
    assert list((vault / "summaries/slack-fernhill-launch/L1").glob("*.md"))
    assert (vault / "summaries/slack-fernhill-ops/L1").read_text() == "a file of yours where the folder goes\n"


def test_flush_with_ollama_and_no_model_seals_and_says_why_in_its_report(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It used to stop with "error: no Ollama chat model configured" and seal nothing."""
    config = CONFIG.replace('summarizer = "fallback"', 'summarizer = "ollama"') + '[ollama]\nchat_model = ""\n'
    write(vault, ".vaultmind/config.toml", config)
    chat_day(vault, 0, 0, 3)
    code, out, _ = run_main(capsys, "flush", "--vault", str(vault), "--all")
    assert code == 0 and "1 summary sealed" in out
    assert "(3 children, fallback: ollama cannot be asked: no Ollama chat model configured; " in out
    assert "set [trees] summarizer_model" in out


def test_tree_without_a_daemon_shows_the_vault_as_it_is_now(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not the index as of the last sync: a summary edited since, or new messages, show."""
    write(vault, ".vaultmind/config.toml", CONFIG)
    chat_day(vault, 0, 0, 3)
    code, report, _ = run_main(capsys, "flush", "--vault", str(vault), "--all", "--json")
    (sealed,) = report["sealed"]
    chat_day(vault, 1, 3, 1)
    path = vault / sealed["path"]
    path.write_text(path.read_text(encoding="utf-8") + "My own line.\n", encoding="utf-8")
    code, listing, _ = run_main(capsys, "tree", "--vault", str(vault), "--json")
    assert code == 0
    (tree,) = listing["trees"]
    assert tree["leaves"] == 4 and tree["buffered_leaves"] == 1 and tree["edited"] == 1


def test_a_stale_summary_is_said_to_be_sealed_again_by_a_command_that_exists(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(vault, ".vaultmind/config.toml", CONFIG)
    day = vault / chat_day(vault, 0, 0, 3)
    os.utime(day, (LONG_AGO, LONG_AGO))  # nothing under the summary is being written
    _, report, _ = run_main(capsys, "flush", "--vault", str(vault), "--all", "--json")
    path = vault / report["sealed"][0]["path"]
    text = path.read_text(encoding="utf-8")
    digest = text.split("children_sha256: ")[1].split("\n")[0].strip('"')
    path.write_text(text.replace(digest, "0" * 64), encoding="utf-8")  # a child changed: stale
    _, tree, _ = run_main(capsys, "tree", TREE, "--vault", str(vault), "--json")
    assert [s["action"] for s in tree["stale"]] == ["re-sealed by the next flush"]
