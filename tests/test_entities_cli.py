"""`vaultmind entities`: list, show, neighbours, ambiguous; JSON and human output; errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vaultmind.cli.main import main

from .conftest import write


@pytest.fixture
def filled(vault: Path) -> Path:
    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n')
    write(
        vault,
        "entities/person/alice-chen.md",
        "---\nid: person:alice-chen\naliases: [Alice, Alex]\n---\n# Alice Chen\n",
    )
    write(
        vault, "entities/person/alex-kim.md", "---\nid: person:alex-kim\naliases: [Alex]\n---\n# Alex Kim\n"
    )
    write(vault, "notes/a.md", "Alice and @bob planned #launch.\n")
    write(vault, "notes/b.md", "Alice asked @bob again about #launch; Alex too.\n")
    return vault


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["entities", *args])
    return code, capsys.readouterr().out


def test_list_show_neighbours_json(filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "--vault", str(filled), "--json")
    assert code == 0
    data = json.loads(out)
    top = [(e["id"], e["mentions"]) for e in data["entities"]]
    assert top[:3] == [("handle:bob", 2), ("person:alice-chen", 2), ("topic:launch", 2)]
    assert ("person:alex-kim", 0) in top and data["model"] == "off" and data["ner"] is False

    code, out = run(capsys, "list", "--kind", "person", "--limit", "1", "--vault", str(filled), "--json")
    data = json.loads(out)
    assert [e["id"] for e in data["entities"]] == ["person:alice-chen"] and data["truncated"] is True

    code, out = run(capsys, "show", "alice", "--vault", str(filled), "--json")
    shown = json.loads(out)
    assert shown["id"] == "person:alice-chen" and shown["note_path"] == "entities/person/alice-chen.md"
    assert {n["id"]: n["weight"] for n in shown["neighbours"]} == {"handle:bob": 2, "topic:launch": 2}
    assert {o["note_path"] for o in shown["occurrences"]} == {"notes/a.md", "notes/b.md"}
    assert shown["occurrences"][0]["link"].startswith("obsidian://open?vault=vault&file=notes")

    code, out = run(capsys, "neighbours", "#launch", "--vault", str(filled), "--json")
    assert json.loads(out)["id"] == "topic:launch"


def test_human_output(filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "--vault", str(filled))
    assert code == 0 and "person:alice-chen" in out and "[note]" in out and "no NER model" in out
    code, out = run(capsys, "show", "person:alice-chen", "--vault", str(filled))
    assert "Alice Chen (person)" in out and "neighbours" in out and "notes/a.md" in out
    code, out = run(capsys, "neighbours", "person:alice-chen", "--vault", str(filled))
    assert "handle:bob" in out
    code, out = run(capsys, "ambiguous", "--vault", str(filled))
    assert "“alex” → person:alex-kim, person:alice-chen" in out


def test_errors(filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["entities", "show", "--vault", str(filled)]) == 2
    assert main(["entities", "show", "nobody-at-all", "--vault", str(filled)]) == 4
    assert main(["entities", "show", "Alex", "--vault", str(filled)]) == 2  # ambiguous: never guessed
    assert "names several entities" in capsys.readouterr().err
    assert main(["entities", "list", "--kind", "galaxy", "--vault", str(filled)]) == 2
    assert main(["entities", "list", "--limit", "0", "--vault", str(filled)]) == 2


def test_show_takes_a_first_name_when_one_person_has_it(filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A person's first name finds them without an alias; shared by two people, it is named as
    ambiguous, never guessed."""
    for ident, name in (("marco-ruiz", "Marco Ruiz"), ("dana-whitfield", "Dana Whitfield"), ("dana-scully", "Dana Scully")):
        write(filled, f"entities/person/{ident}.md", f"---\nid: person:{ident}\n---\n# {name}\n")
    code, out = run(capsys, "show", "Marco", "--vault", str(filled), "--json")
    assert code == 0 and json.loads(out)["id"] == "person:marco-ruiz"
    assert main(["entities", "show", "Dana", "--vault", str(filled)]) == 2
    err = capsys.readouterr().err
    assert "names several entities" in err and "person:dana-scully" in err and "person:dana-whitfield" in err


def test_show_takes_a_name_with_its_title(filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """"Dr. Elena Rossi" is person:elena-rossi (a title is no part of an id): her name as
    written finds her."""
    write(filled, "entities/person/elena-rossi.md", "---\nid: person:elena-rossi\n---\n# Elena Rossi\n")
    code, out = run(capsys, "show", "Dr. Elena Rossi", "--vault", str(filled), "--json")
    assert code == 0 and json.loads(out)["id"] == "person:elena-rossi"


def test_one_sender_named_surname_first_or_not_is_one_person(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """"Chen, Alice <…>" (as companies' mail programs write it) and "Alice Chen <…>" are Alice Chen."""
    from vaultmind.ingest.email import parse_email_paths
    from vaultmind.ingest.writer import write_batches

    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n')
    mails = vault.parent / "mails"
    senders = ['"Chen, Alice" <alice@acme.com>', "Alice Chen <alice@acme.com>"]
    for n, sender in enumerate(senders):
        write(
            mails,
            f"{n}.eml",
            f"From: {sender}\nTo: bob@acme.com\nSubject: Note {n}\nDate: Mon, {4 + n} Mar 2024 09:00:00 +0000\n"
            f"Message-ID: <m{n}@acme.com>\n\nThe catering is booked, item {n}.\n",
        )
    write_batches(vault, parse_email_paths([mails]))
    code, out = run(capsys, "list", "--kind", "person", "--vault", str(vault), "--json")
    assert code == 0
    people = {e["id"]: (e["display_name"], e["mentions"]) for e in json.loads(out)["entities"]}
    assert people == {"person:alice-chen": ("Alice Chen", 2)}, people


def test_a_name_found_as_several_kinds_is_listed_as_ambiguous(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`show` refuses a name that is a person and a topic; `ambiguous` says so, with the ids."""
    from .conftest import write_chat

    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n')
    write_chat(vault, "2024-03-11", [("Helen Okafor", "Approved, with one condition.")])
    write(vault, "notes/budget.md", "Budget review with #helen-okafor next week.\n")
    assert main(["entities", "show", "Helen Okafor", "--vault", str(vault)]) == 2
    capsys.readouterr()
    code, out = run(capsys, "ambiguous", "--vault", str(vault), "--json")
    assert code == 0
    [item] = json.loads(out)["ambiguous"]
    assert (item["why"], item["candidates"]) == ("kinds", ["person:helen-okafor", "topic:helen-okafor"])
    code, out = run(capsys, "ambiguous", "--vault", str(vault))
    assert "“Helen Okafor” → person:helen-okafor, topic:helen-okafor (found as several kinds; 2 leaves)" in out


def test_a_first_name_of_a_name_found_as_several_kinds_is_ambiguous(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """"Helen" is the first name of person:helen-okafor, whose whole name is also a topic's:
    refused as "Helen Okafor" is, never the person picked silently."""
    from .conftest import write_chat

    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n')
    write_chat(vault, "2024-03-11", [("Helen Okafor", "Approved, with one condition.")])
    write(vault, "notes/budget.md", "Budget review with #helen-okafor next week.\n")
    assert main(["entities", "show", "Helen", "--vault", str(vault)]) == 2
    err = capsys.readouterr().err
    assert "names several entities: person:helen-okafor, topic:helen-okafor" in err


def test_an_id_merged_into_another_note_shows_that_note(filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(filled, "entities/person/alex-kim.md", "---\nid: person:alex-kim\naliases: [person:alice-chen]\n---\n# Alex Kim\n")
    code, out = run(capsys, "show", "person:alice-chen", "--vault", str(filled), "--json")
    assert code == 0, capsys.readouterr().err
    assert json.loads(out)["id"] == "person:alex-kim"


def test_kind_is_for_list_only_and_the_limits_are_as_said(filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for action in (["show", "Alice"], ["neighbours", "Alice"], ["ambiguous"]):
        assert main(["entities", *action, "--kind", "person", "--vault", str(filled)]) == 2
        assert "takes no --kind" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["entities", "--help"])
    assert "200 for ambiguous" in " ".join(capsys.readouterr().out.split())


def test_an_ambiguous_address_counts_its_mentions(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An address two notes list resolves to neither: its mentions stay the address's, and
    `ambiguous` counts them."""
    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n')
    for ident in ("alice-chen", "alice-kim"):
        write(vault, f"entities/person/{ident}.md", f"---\nid: person:{ident}\nemails: [alice@acme.example]\n---\n# {ident}\n")
    write(vault, "notes/a.md", "Write to alice@acme.example today.\n")
    write(vault, "notes/b.md", "alice@acme.example answered.\n")
    code, out = run(capsys, "ambiguous", "--vault", str(vault), "--json")
    assert code == 0
    [item] = [i for i in json.loads(out)["ambiguous"] if i["name"].startswith("email ")]
    assert (item["name"], item["mentions"]) == ("email alice@acme.example", 2)


def test_the_fix_printed_for_an_alias_of_several_notes_is_to_remove_it(
    filled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "Alex" is in the aliases of two entity notes already: the fix is to remove it from all but
    one, not to add it to one (which the line said before)."""
    code, out = run(capsys, "ambiguous", "--vault", str(filled))
    assert code == 0
    assert "“alex” → person:alex-kim, person:alice-chen (listed in several entity notes" in out, out
    assert "fix: a name listed in several entity notes: remove it from the aliases" in out, out
    assert "add the name to the aliases" not in out and "close to several" not in out, out


def test_show_takes_a_surname_names_a_shared_one_and_points_a_typo_to_the_closest(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """"Okafor" is Helen Okafor (as walk reads it); "Chen", the surname of two, is refused with
    both ids; a typo's error names the closest entities; `--kind people` is person everywhere."""
    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n')
    for slug, name in (("alice-chen", "Alice Chen"), ("daniel-chen", "Daniel Chen"), ("helen-okafor", "Helen Okafor")):
        write(vault, f"entities/person/{slug}.md", f"---\nid: person:{slug}\n---\n# {name}\n")
    write(vault, "notes/a.md", "Alice Chen, Daniel Chen and Helen Okafor met.\n")
    code, out = run(capsys, "show", "Okafor", "--vault", str(vault))
    assert code == 0 and out.startswith("person:helen-okafor — Helen Okafor"), out
    assert main(["entities", "show", "Chen", "--vault", str(vault)]) == 2
    assert "'Chen' names several entities: person:alice-chen, person:daniel-chen" in capsys.readouterr().err
    assert main(["entities", "show", "Alise", "--vault", str(vault)]) == 4
    err = capsys.readouterr().err
    assert "closest: person:alice-chen (Alice Chen)" in err and "vaultmind query entities Alise" in err, err
    assert main(["query", "entities", "Chen", "--kind", "people", "--vault", str(vault), "--json"]) == 0
    assert [h["node_id"] for h in json.loads(capsys.readouterr().out)["hits"]] == ["person:alice-chen", "person:daniel-chen"]


def test_a_name_several_notes_list_is_listed_once_as_what_it_is(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The entity "Chema" of the text (its mentions keep their own id while the name is
    ambiguous) is not listed again as "close to several entity notes", with the wrong fix."""
    from .conftest import write_chat

    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n')
    for slug, name in (("jose-alvarez", "José Álvarez"), ("chema-garcia", "Chema García")):
        write(vault, f"entities/person/{slug}.md", f"---\nid: person:{slug}\naliases: [Chema]\n---\n# {name}\n")
    write_chat(vault, "2024-03-11", [("Chema", "The van is booked."), ("Chema", "The tickets are late.")])
    code, out = run(capsys, "ambiguous", "--vault", str(vault))
    assert code == 0
    assert [line for line in out.splitlines() if line.startswith("  “")] == [
        "  “chema” → person:chema-garcia, person:jose-alvarez (listed in several entity notes; 2 leaves)"
    ], out
