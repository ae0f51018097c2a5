"""The read path's edges, the same in every mode: a time without an offset, the hit shape, the
caps on `limit` and on the ids `fetch_leaves` takes, `drill_down` on a leaf, "when did I
last …?" answered latest first and "when did I first …?" earliest first."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vaultmind.config import MAX_LIMIT, load_config
from vaultmind.errors import ConfigError, NotFound, UsageError
from vaultmind.memory import Memory

from .conftest import run_main, write, write_chat, write_slack_day

REPO = Path(__file__).resolve().parents[1]


def _machine_clock(monkeypatch: pytest.MonkeyPatch, zone: str) -> Iterator[None]:
    """This process on a machine whose clock is `zone`'s, until the test ends."""
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        yield
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.fixture
def tokyo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process on a machine whose clock is Tokyo's (UTC+9, no summer time)."""
    yield from _machine_clock(monkeypatch, "Asia/Tokyo")


@pytest.fixture
def berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process on a machine whose clock is Berlin's (UTC+1, UTC+2 in summer)."""
    yield from _machine_clock(monkeypatch, "Europe/Berlin")


def test_a_time_without_an_offset_is_the_askers_clock_time_in_every_command(
    cli_vault: Path, tokyo: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """In Tokyo, `query window 2024-06-12T18:30 2024-06-12T19:30` is 09:30–10:30 UTC, as `walk
    --at 2024-06-13T08:00` is 23:00 UTC the day before: every time the command line is given
    without an offset is read on this machine's clock (an API client's is UTC, as before)."""
    vault = cli_vault
    write_slack_day(vault, "2024-06-12", [("Alice Chen", "10:00", "Budget approved for the servers."), ("Carol Diaz", "10:40", "Servers ordered.")])
    _, window, _ = run_main(capsys, "query", "window", "2024-06-12T18:30", "2024-06-12T19:30", "--vault", str(vault), "--json")
    assert [h["content"] for h in window["hits"]] == ["Budget approved for the servers."]
    _, source, _ = run_main(capsys, "query", "source", "--kind", "chat", "--since", "2024-06-12T19:01", "--vault", str(vault), "--json")
    assert [h["content"] for h in source["hits"]] == ["Servers ordered."]
    _, until, _ = run_main(capsys, "query", "source", "--kind", "chat", "--until", "2024-06-12T19:01", "--vault", str(vault), "--json")
    assert [h["content"] for h in until["hits"]] == ["Budget approved for the servers."]
    _, day, _ = run_main(capsys, "query", "window", "2024-06-12", "2024-06-13", "--vault", str(vault), "--json")
    assert day["total"] == 2, "a date is the asker's day: from midnight in Tokyo"
    _, walked, _ = run_main(capsys, "query", "walk", "what happened yesterday?", "--at", "2024-06-13T08:00", "--vault", str(vault), "--json")
    assert walked["query"]["time_window"]["start"] == "2024-06-11T15:00:00Z", "--at: the same rule"
    with Memory.open(load_config(vault, embed_provider="none")) as memory:  # the API: UTC, in every mode
        assert memory.query("cover_window", {"start": "2024-06-12T09:30", "end": "2024-06-12T10:30"})["total"] == 1
        asked = memory.query("walk", {"query": "what happened yesterday?", "reference_time": "2024-06-13T08:00"})
        assert asked["query"]["time_window"]["start"] == "2024-06-12T00:00:00Z"
    with pytest.raises(SystemExit):
        run_main(capsys, "query", "window", "--help")
    assert "this machine's time zone" in capsys.readouterr().out


def test_without_a_reference_time_each_end_of_a_window_is_at_the_machines_offset_then(vault: Path, berlin: None) -> None:
    """On a Berlin clock, March 2024 runs from midnight at UTC+1 to midnight at UTC+2 (summer
    time from 31 March): the window was turned into UTC by today's offset alone, an hour off at
    one end whatever the season."""
    write_chat(vault, "2024-03-07", [("Dana", "We meet at Harbor Hall for the launch.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        window = memory.query("walk", {"query": "what happened between 1 March and 1 April 2024?"})["query"]["time_window"]
        assert (window["start"], window["end"]) == ("2024-02-29T23:00:00Z", "2024-04-01T22:00:00Z")
        fixed = memory.query("walk", {"query": "what happened between 1 March and 1 April 2024?", "reference_time": "2024-06-01T12:00:00+02:00"})
        assert fixed["query"]["time_window"]["start"] == "2024-02-29T22:00:00Z", "an offset given is the offset used"


def _shape(hit: dict[str, Any]) -> dict[str, str]:
    """Each key of a hit and the JSON type of its value (null counted apart)."""
    return {key: type(value).__name__ for key, value in hit.items()}


def test_every_hit_has_one_shape_and_the_docs_describe_it(vault: Path) -> None:
    """An entity without an entity note has "" for its note path and links, as a leaf hit's
    strings are (not null); the docs' hit shape names every key and every node kind."""
    write_chat(vault, "2024-06-12", [("Dana Whitfield", "I sent Northwind the contract."), ("Bob Stone", "Thanks Dana Whitfield.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        leaf = memory.query("walk", {"query": "Northwind contract"})["hits"][0]
        entity = memory.query("search_entities", {"query": "Dana Whitfield"})["hits"][0]
    assert entity["node_kind"] == "entity" and entity["note_path"] == entity["link"] == entity["wikilink"] == ""
    common = {key: kind for key, kind in _shape(leaf).items() if key not in ("author", "message_id")}  # null when unknown
    assert {key: _shape(entity)[key] for key in common} == common
    doc = (REPO / "docs" / "vault-format.md").read_text(encoding="utf-8")
    section = doc.split("## The hit shape", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"`(\w+)`", section))
    assert set(leaf) | set(entity) <= documented
    for kind in ("leaf", "summary", "entity"):
        assert f'`"{kind}"`' in section, kind


def test_a_limit_above_the_cap_is_an_error_that_names_it(vault: Path) -> None:
    write_slack_day(vault, "2024-06-12", [("Alice Chen", "10:00", "Budget approved for the servers.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert len(memory.query("walk", {"query": "budget", "limit": MAX_LIMIT})["hits"]) == 1
        for mode, args in [
            ("walk", {"query": "budget"}),
            ("search", {"query": "budget"}),
            ("search_entities", {"query": "alice"}),
            ("query_source", {"kind": "chat"}),
            ("cover_window", {"start": "2024-06-01", "end": "2024-07-01"}),
        ]:
            with pytest.raises(UsageError, match=f"limit must be at most {MAX_LIMIT} \\(given {MAX_LIMIT + 1}\\)"):
                memory.query(mode, {**args, "limit": MAX_LIMIT + 1})
    write(vault, ".vaultmind/config.toml", f"[search]\nlimit = {MAX_LIMIT + 1}\n")
    with pytest.raises(ConfigError, match=f"at most {MAX_LIMIT}"):
        load_config(vault)


def test_fetch_leaves_takes_at_most_the_cap_of_ids(vault: Path) -> None:
    write_slack_day(vault, "2024-06-12", [("Alice Chen", "10:00", "Budget approved for the servers.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        leaf = memory.query("query_source", {"kind": "chat"})["hits"][0]["node_id"]
        many = [leaf, *(f"missing-{i}" for i in range(MAX_LIMIT - 1))]
        assert memory.query("fetch_leaves", {"ids": [*many, leaf]})["total"] == 1, "the cap counts different ids"
        with pytest.raises(UsageError, match=f"fetch_leaves takes at most {MAX_LIMIT} ids \\(given {MAX_LIMIT + 1}\\)"):
            memory.query("fetch_leaves", {"ids": [*many, "missing-last"]})


def test_drill_down_on_a_leaf_says_it_has_no_children_and_names_its_summary(vault: Path) -> None:
    """A leaf has no children: the error says so and names the summary folding it, from which
    drill_down lists it; a leaf no summary folds yet names its tree. A summary's chunk stands
    for its summary."""
    from vaultmind.tree.engine import seal_ready

    write_chat(vault, "2024-05-08", [(name, f"{name} reports progress on the lighthouse, step {i}.") for i, name in enumerate(["Alice Chen", "Bob Stone"] * 6)])
    config = load_config(vault, embed_provider="none", extra={"trees.l0_tokens": 64, "trees.fanout": 2, "trees.summarizer": "fallback"})
    with Memory.open(config) as memory:
        memory.sync()
        leaf = memory.query("query_source", {"source_id": "chat:two"})["hits"][0]["node_id"]
        with pytest.raises(UsageError, match=f"{leaf} is a leaf, and a leaf has no children") as unsealed:
            memory.query("drill_down", {"node_id": leaf})
        assert unsealed.value.hint is not None and "no summary folds it yet (its tree: chat:two)" in unsealed.value.hint
        assert seal_ready(memory).sealed
        memory.sync()
        parent = memory.index.scalar("SELECT id FROM summaries WHERE list_contains(children, ?)", [leaf])
        with pytest.raises(UsageError, match="a leaf has no children") as sealed:
            memory.query("drill_down", {"node_id": leaf})
        assert sealed.value.hint is not None and f"vaultmind query drill {parent}" in sealed.value.hint
        assert leaf in [h["node_id"] for h in memory.query("drill_down", {"node_id": parent})["hits"]]
        chunk = memory.index.scalar(
            "SELECT min_by(l.id, l.seq) FROM leaves l JOIN summaries s ON s.note_path = l.note_path WHERE s.id = ?", [parent]
        )
        by_chunk = memory.query("drill_down", {"node_id": chunk})["hits"]
        assert [h["node_id"] for h in by_chunk] == [h["node_id"] for h in memory.query("drill_down", {"node_id": parent})["hits"]]


def _sam_writes(vault: Path, days: dict[str, str]) -> None:
    """One Slack day of Sam Lee's for each day of `days`, holding its message at 09:00."""
    for day, text in days.items():
        write_slack_day(vault, day, [("Sam Lee", "09:00", text)])


def _walk(memory: Memory, question: str, at: str) -> list[dict[str, Any]]:
    return list(memory.query("walk", {"query": question, "reference_time": at})["hits"])


def _days(hits: list[dict[str, Any]]) -> list[str]:
    return [h["time_range"]["start"][:10] for h in hits]


def test_the_last_time_something_happened_is_answered_latest_first(vault: Path) -> None:
    """"When did I last email Dana?" (or "did my team last…") puts the latest message that says
    it first, though an earlier one says it more; "last week" stays a window, not this order."""
    _sam_writes(
        vault,
        {
            "2024-03-04": "Emailed Dana the contract, then emailed Dana the annex. Dana emailed back.",
            "2024-04-15": "I emailed Dana about the invoice.",
            "2024-05-20": "Emailed Dana the signed copy.",
            "2024-06-12": "Dana is on holiday until July.",
        },
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        at = "2024-06-20T12:00:00Z"
        for question in ("when did I last email Dana?", "what was the last time I emailed Dana?", "when did my team last email Dana?"):
            hits = _walk(memory, question, at)
            assert _days(hits[:3]) == ["2024-05-20", "2024-04-15", "2024-03-04"], question
            assert hits[0]["breakdown"]["latest"] > 0
        then = _walk(memory, "when did I last email Dana?", "2024-05-01T12:00:00Z")
        assert _days(then[:1]) == ["2024-04-15"], "the last time as of the question's time"
        plain = _walk(memory, "when did I email Dana?", at)
        assert _days(plain[:1]) == ["2024-03-04"], "without 'last', the best match"
        week = memory.query("walk", {"query": "what did I email Dana last week?", "reference_time": "2024-05-27T12:00:00Z"})
        assert week["query"]["time_window"]["text"] == "last week"
        assert all(h["breakdown"]["latest"] == 0 for h in week["hits"])


def test_the_first_time_something_happened_is_answered_earliest_first(vault: Path) -> None:
    """"When did I first email Dana?" puts the earliest message that says it first, though a
    later one says it more; "first" as an adjective of a thing ("her first email") orders
    nothing."""
    _sam_writes(
        vault,
        {
            "2024-03-04": "Emailed Dana the contract.",
            "2024-04-15": "Emailed Dana the invoice, then emailed Dana the annex. Dana emailed back.",
            "2024-05-20": "Emailed Dana the signed copy.",
            "2024-06-12": "Dana is on holiday until July.",
        },
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        at = "2024-06-20T12:00:00Z"
        for question in ("when did I first email Dana?", "when was the first time I emailed Dana?", "what did I initially email Dana?"):
            hits = _walk(memory, question, at)
            assert _days(hits[:3]) == ["2024-03-04", "2024-04-15", "2024-05-20"], question
            assert hits[0]["breakdown"]["latest"] > 0
        plain = _walk(memory, "when did I email Dana?", at)
        assert _days(plain[:1]) == ["2024-04-15"], "without 'first', the best match"
        for question in ("what did Dana say in her first email?", "what was in Dana's first email?"):
            assert all(h["breakdown"]["latest"] == 0 for h in _walk(memory, question, at)), question


def test_fetch_leaves_lists_missing_ids_as_given_and_finding_none_is_not_found(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`missing` holds the ids as the caller sent them (a client matches them against its own);
    an answer with none of the ids found is a not-found error (exit code 4), as an unknown id is
    to `drill_down`, with a hint for an id written as a name."""
    write(vault, ".vaultmind/config.toml", '[embeddings]\nprovider = "none"\n[entities]\nner_model = "off"\n')
    write(vault, "entities/person/alice-chen.md", "---\nid: person:alice-chen\n---\n# Alice Chen\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        found = memory.query("fetch_leaves", {"ids": ["Person:Alice Chen", "ORG:Nowhere-Ltd", "PERSON:alice-chen"]})
        assert [h["node_id"] for h in found["hits"]] == ["person:alice-chen"]
        assert found["missing"] == ["Person:Alice Chen", "ORG:Nowhere-Ltd"]
        with pytest.raises(NotFound, match="not found: Person:Alice Chen") as none:
            memory.query("fetch_leaves", {"ids": ["Person:Alice Chen"]})
        assert "query entities" in str(none.value)
    code, _, err = run_main(capsys, "query", "leaves", "ORG:Nowhere-Ltd", "--vault", str(vault))
    assert code == 4 and "not found: ORG:Nowhere-Ltd" in err, err


def test_query_source_takes_the_tree_a_hit_names_for_a_folder_of_your_notes(vault: Path) -> None:
    """A hit of your notes names its tree `notes:<top folder>` (`notes:/` at the vault's root):
    `query_source` takes it back, for more from the same folder; an unknown one is named, with
    the trees of your notes among the known ids."""
    write(vault, "Meetings/2024-06-10.md", "# Standup\n\nThe kayak order is late.\n")
    write(vault, "Meetings/2024-06-11.md", "# Standup\n\nThe kayak arrived.\n")
    write(vault, "Journal/today.md", "# Today\n\nWent kayaking.\n")
    write(vault, "inbox.md", "# Inbox\n\nCall the shop.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        tree = memory.query("walk", {"query": "kayak arrived"})["hits"][0]["tree"]
        assert tree == "notes:Meetings"
        listed = memory.query("query_source", {"source_id": tree})
        assert sorted(h["note_path"] for h in listed["hits"]) == ["Meetings/2024-06-10.md", "Meetings/2024-06-11.md"]
        root = memory.query("query_source", {"source_id": "notes:/", "kind": "note"})
        assert [h["note_path"] for h in root["hits"]] == ["inbox.md"]
        with pytest.raises(UsageError, match="source notes:Journal is of kind note, not chat"):
            memory.query("query_source", {"source_id": "notes:Journal", "kind": "chat"})
        with pytest.raises(NotFound, match="no source with id 'notes:Nowhere'") as caught:
            memory.query("query_source", {"source_id": "notes:Nowhere"})
        assert caught.value.hint is not None and "notes:Meetings" in caught.value.hint
