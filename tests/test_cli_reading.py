"""The read path's output as a person or an agent reads it: the evidence block's text cut out of
its note, the listing's node ids, and an error's hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_main, write
from vaultmind.cli.main import main
from vaultmind.markdown.standalone import standalone

LAUNCH = """# Tidepool launch

Made by [[fernhill-labs|Fernhill Labs]].

| Who | Role |
| --- | --- |
| [[alice-chen\\|Alice]] | product, launch owner |
| Marco Ruiz | marketing, guest list |

> [!important] Launch moved to 23 April
> The public launch is on Tuesday 23 April. ^launch-date
"""


@pytest.fixture
def launch_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    vault = tmp_path / "v"
    assert main(["init", str(vault)]) == 0
    write(vault, "Projects/Tidepool launch.md", LAUNCH)
    return vault


def test_evidence_reads_a_table_row_and_a_callout_out_of_their_note(
    launch_vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table row came out as "| [[alice-chen\\|Alice]] | product, launch owner |": no header,
    and a link whose escaped pipe no longer opens it once pasted; a callout kept its "> [!…]"
    markers and a paragraph its block id."""
    capsys.readouterr()
    code, out, err = run_main(
        capsys, "query", "walk", "who owns the Tidepool launch?", "--vault", str(launch_vault), "--evidence"
    )
    assert code == 0, err
    evidence = out[out.index("\n[1] ") :]
    text = evidence.splitlines()[2]  # the first item's text, under its head
    assert "Who: [[alice-chen|Alice]]; Role: product, launch owner." in text, evidence
    assert "Who: Marco Ruiz; Role: marketing, guest list." in text, evidence
    assert "Important: Launch moved to 23 April. The public launch is on Tuesday 23 April." in text, evidence
    assert "\\|" not in text and "[!" not in text and "^launch-date" not in text and "| ---" not in text, evidence


GARDEN = "# Garden plan\n\nAlice Chen wants a budget of 200 euros.\n\n## Timeline\n\nPlant the peppers in April.\n"


def test_a_hits_text_reads_its_headings_without_their_marks(
    launch_vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The listing and the evidence block show a leaf on one line: its headings read as the
    start of what they head ("Timeline: Plant…"). Before, "# Garden plan Alice Chen wants …
    ## Timeline Plant …", the `#` marks run into the sentences."""
    write(launch_vault, "Garden.md", GARDEN)
    capsys.readouterr()
    for evidence in (False, True):
        args = ["query", "walk", "garden budget peppers", "--vault", str(launch_vault)] + (["--evidence"] if evidence else [])
        code, out, err = run_main(capsys, *args)
        assert code == 0, err
        shown = out[out.index("\n[1] ") :].splitlines()[2] if evidence else out.splitlines()[2]
        assert "Garden plan: Alice Chen wants a budget of 200 euros. Timeline: Plant the peppers in April." in shown, out
        assert "#" not in shown.split(), out


def test_standalone_keeps_code_and_plain_lines() -> None:
    """Fenced code stays as written (a pipe or a ">" in it is code); a line without a table's
    rule under it is no table; a wikilink's escaped pipe outside a table is un-escaped too."""
    text = "```sh\n| a | b |\n| - | - |\n> [!note] x\n```\n| not | a table |\nsee [[bob-stone\\|Bob]] ^ref-1\n"
    assert standalone(text).split("\n") == [
        "```sh",
        "| a | b |",
        "| - | - |",
        "> [!note] x",
        "```",
        "| not | a table |",
        "see [[bob-stone|Bob]]",
        "",
    ]


def test_listing_shows_each_hit_s_node_id(launch_vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`explain`, `query drill` and `query leaves` take a hit's node id, which only `--json` showed."""
    capsys.readouterr()
    code, data, err = run_main(capsys, "query", "walk", "Tidepool launch", "--vault", str(launch_vault), "--json")
    assert code == 0, err
    ids = [hit["node_id"] for hit in data["hits"]]
    assert ids
    code, out, err = run_main(capsys, "query", "walk", "Tidepool launch", "--vault", str(launch_vault))
    assert code == 0, err
    assert all(f"    id {node_id}" in out for node_id in ids), out
    code, out, err = run_main(capsys, "query", "leaves", ids[0], "--vault", str(launch_vault))
    assert code == 0 and "Tidepool launch.md" in out, (out, err)


def test_an_error_s_hint_is_on_a_line_of_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error printed as "message (hint)" nested brackets when either had its own."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(capsys, "status")
    assert code != 0 and out == ""
    assert err.splitlines() == [
        f"vaultmind: error: {tmp_path} is not in a vaultmind vault (no .vaultmind folder here or above)",
        "vaultmind: hint: pass --vault PATH, run the command inside a vault, or set one up with "
        "`vaultmind init PATH` (`vaultmind init --existing PATH` for a vault you already have)",
    ], err


def test_query_drill_and_leaves_take_a_unique_prefix_as_explain_does(
    launch_vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`explain` took a unique prefix of a node id; `query drill` and `query leaves` wanted the
    whole id. Now all three resolve it alike, and a prefix of several ids, or of none, is an
    error that says which."""
    write(launch_vault, "People/Guest list.md", "# Guest list\n\nMarco Ruiz called Maria Lopez about the guest list.\n")
    vault = str(launch_vault)
    capsys.readouterr()
    code, data, err = run_main(capsys, "query", "walk", "Tidepool launch guest list", "--vault", vault, "--json")
    assert code == 0, err
    leaf = next(hit["node_id"] for hit in data["hits"] if hit["note_path"] == "Projects/Tidepool launch.md")
    code, data, err = run_main(capsys, "query", "leaves", leaf[:8], "--vault", vault, "--json")
    assert code == 0, err
    assert [hit["node_id"] for hit in data["hits"]] == [leaf] and data["missing"] == []
    code, data, err = run_main(capsys, "explain", leaf[:8], "--vault", vault, "--json")
    assert code == 0 and data["leaf"]["id"] == leaf, err

    code, data, err = run_main(capsys, "query", "drill", "person:marco", "--vault", vault, "--json")
    assert code == 0, err
    assert leaf in [hit["node_id"] for hit in data["hits"]]  # the leaves that mention Marco Ruiz

    for command in (("query", "drill"), ("query", "leaves")):
        code, out, err = run_main(capsys, *command, "person:mar", "--vault", vault)
        assert code == 2 and out == "", err
        assert "'person:mar' is the start of several node ids (person:marco-ruiz, person:maria-lopez)" in err
        code, out, err = run_main(capsys, *command, "zzzzzzzz", "--vault", vault)
        if command == ("query", "drill"):
            assert code == 4 and "no node with id zzzzzzzz, nor one whose id starts with it" in err, err
        else:  # `leaves` lists the ids it found nowhere beside those it found; none found: not found
            assert code == 4 and "not found: zzzzzzzz" in err, (out, err)


TRIP = """# Lake trip

We drove up on Friday morning and stopped twice for coffee on the way, once at the old mill
and once at the bakery in the village square, where the owner told us about the summer market.
The cabin was smaller than the photos suggested but warm, with a wood stove and a porch that
looked over the water; we spent the first evening reading and listening to the rain on the roof.
On Saturday the weather cleared and we walked the long loop around the eastern shore.
The kayak rental at the north jetty closes at dusk, so book the morning slot next time.

## Next time

Some notes on what to change for the next trip, written on the drive home while it was fresh,
before the week took over again and the details of the weekend started to blur together.
- [ ] Renew the fishing permit before May
"""


def test_listing_shows_a_hit_s_text_where_the_question_s_words_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing showed a hit's first 200 characters: a long section's answer further down was
    cut off. It shows the text around the sentence holding the most of the question's words
    (an open-tasks question's: the open task), "…" where it cuts, within the same width."""
    monkeypatch.setenv("VAULTMIND_EMBED_PROVIDER", "none")
    vault = tmp_path / "v"
    assert main(["init", str(vault)]) == 0
    write(vault, "Trips/Lake trip.md", TRIP)
    capsys.readouterr()
    for question, shown in (
        ("when does the kayak rental close?", "The kayak rental at the north jetty closes at dusk"),
        ("what are my open tasks?", "- [ ] Renew the fishing permit before May"),
    ):
        code, out, err = run_main(capsys, "query", "walk", question, "--vault", str(vault))
        assert code == 0, err
        lines = out.splitlines()
        at = next(i for i, line in enumerate(lines) if "Lake trip.md" in line)
        text = next(line for line in lines[at + 1 :] if not line.startswith("    id "))
        assert shown in text and text.startswith("    … "), out
        assert len(text) <= len("    ") + 201, text  # the listing's width: 200 characters and a "…"
