"""The read path on a real vault and index: walk, modes, time windows, evidence."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from vaultmind.cli.output import print_hits
from vaultmind.config import load_config
from vaultmind.errors import NotFound, UsageError
from vaultmind.index.lexical import terms
from vaultmind.markdown.tokens import count_tokens
from vaultmind.memory import Memory
from vaultmind.retrieval.evidence import format_evidence
from vaultmind.retrieval.ordering import DIVERSITY_JACCARD, near_duplicate
from vaultmind.retrieval.retold import tells_of
from vaultmind.retrieval.timeparse import parse_time_window
from vaultmind.vault.layout import obsidian_link

from .conftest import write, write_chat, write_slack_day

NOW = datetime(2024, 6, 20, 12, 0)


@pytest.fixture
def mem(vault: Path) -> Memory:
    write_slack_day(
        vault,
        "2024-05-08",
        [
            ("Alice Chen", "09:00", "The quarterly budget review moved to Friday."),
            ("Bob Stone", "09:05", "Fine by me, I will book the large room."),
        ],
    )
    write_slack_day(
        vault,
        "2024-06-12",
        [
            ("Alice Chen", "10:00", "Budget approved: 40k for the new servers."),
            ("Carol Diaz", "10:02", "Great, I'll order the servers from Northwind today."),
        ],
    )
    write(vault, "Notes/Servers.md", "# Servers\n\nWe run everything on two racks in Lisbon.\n")
    config = load_config(vault, embed_provider="static")
    memory = Memory.open(config)
    memory.sync()
    return memory


def test_walk_hit_shape_and_citations(mem: Memory) -> None:
    result = mem.query("walk", {"query": "servers budget approved", "reference_time": NOW.isoformat()})
    assert set(result) >= {"hits", "total", "truncated", "query"}
    top = result["hits"][0]
    assert top["content"] == "Budget approved: 40k for the new servers."
    assert top["node_kind"] == "leaf" and top["level"] == 0
    assert top["tree"] == "slack:acme/general" and top["scope"] == "slack/acme/general"
    assert top["source_refs"] == ["slack://C1/2024-06-12-0"]
    assert top["anchor"].startswith("^m-") and top["link"].startswith(
        "obsidian://open?vault=vault&file=sources"
    )
    assert top["time_range"]["start"] == "2024-06-12T10:00:00Z"
    assert {"lex", "dense", "entity", "graph", "time_factor", "weights"} <= set(top["breakdown"])
    mem.close()


def test_walk_time_window_prefers_leaves_inside_it(mem: Memory) -> None:
    result = mem.query(
        "walk", {"query": "what happened with the budget in May 2024?", "reference_time": NOW.isoformat()}
    )
    assert result["query"]["time_window"]["text"] == "in may 2024"
    top = result["hits"][0]
    assert top["time_range"]["start"].startswith("2024-05-08")
    outside = [
        h
        for h in result["hits"]
        if h["time_range"]["start"] and h["time_range"]["start"].startswith("2024-06")
    ]
    assert all(h["breakdown"]["time_factor"] < 1 for h in outside)
    relative = mem.query("walk", {"query": "budget last week", "reference_time": "2024-06-17T09:00:00"})
    assert relative["query"]["time_window"]["start"] == "2024-06-10T00:00:00Z"
    assert relative["hits"][0]["time_range"]["start"].startswith("2024-06-12")
    mem.close()


def test_walk_reads_last_week_from_the_day_the_question_names(vault: Path) -> None:
    """"Last week, as Dana said on 6 May" is the week before 6 May, not the week before the
    reference time: Dana's message of 6 May ranks first, the same words a month later do not."""
    write_slack_day(vault, "2024-05-06", [("Dana Park", "09:00", "Last week the kiln cracked during the glaze firing.")])
    write_slack_day(vault, "2024-06-17", [("Dana Park", "09:00", "Last week the kiln cracked during the glaze firing again.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What broke last week, as Dana said on 6 May 2024?", limit=5, reference_time=NOW)
        window = result["query"]["time_window"]
        assert (window["start"], window["end"]) == ("2024-04-29T00:00:00Z", "2024-05-07T00:00:00Z")
        assert result["hits"][0]["time_range"]["start"].startswith("2024-05-06")
        later = next(h for h in result["hits"] if h["time_range"]["start"].startswith("2024-06-17"))
        assert later["breakdown"]["time_factor"] < 1.0 == result["hits"][0]["breakdown"]["time_factor"]


def test_a_date_without_its_year_is_the_one_the_memory_holds_it_in(vault: Path) -> None:
    """An archive of 2022 asked in 2024 "what did we decide on 7 March?": the window had been
    7 March 2024, where the memory holds nothing, and the decision did not lead."""
    write_slack_day(vault, "2022-03-04", [("Alice Chen", "09:00", "Let's not decide the venue in chat.")])
    write_slack_day(vault, "2022-03-07", [("Bob Stone", "10:00", "Decided: the harbour venue it is, signed today.")])
    write_slack_day(vault, "2023-03-20", [("Bob Stone", "10:00", "Shall we decide on the catering?"), ("Bob Stone", "10:05", "The offsite is on March 20.")])
    write_slack_day(vault, "2021-03-15", [("Dana Park", "10:00", "Count me in for the pottery class.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What did we decide on 7 March?", limit=5, reference_time=NOW)
        window = result["query"]["time_window"]
        assert (window["start"], window["end"]) == ("2022-03-07T00:00:00Z", "2022-03-08T00:00:00Z")
        assert result["hits"][0]["time_range"]["start"].startswith("2022-03-07")
        month = memory.walk("What did we decide in March?", limit=5, reference_time=NOW)["query"]["time_window"]
        assert month["start"] == "2022-03-01T00:00:00Z", "the March that holds the question's words the most"
        catering = memory.walk("What about the catering in March?", limit=5, reference_time=NOW)["query"]["time_window"]
        assert catering["start"] == "2023-03-01T00:00:00Z"
        anything = memory.walk("What happened in March?", limit=5, reference_time=NOW)["query"]["time_window"]
        assert anything["start"] == "2023-03-01T00:00:00Z", "no word to weigh: the latest March the memory holds"
        said = memory.walk("What did we decide on 7 March 2024?", limit=5, reference_time=NOW)["query"]["time_window"]
        assert said["start"] == "2024-03-07T00:00:00Z", "a year the question names stays"
        dana = memory.walk("What did Dana say in March?", limit=5, reference_time=NOW)
        assert dana["query"]["time_window"]["start"] == "2021-03-01T00:00:00Z", "the March its author spoke in"
        assert dana["hits"][0]["author"] == "Dana Park"
        never = memory.walk("What did we decide on 7 August?", limit=5, reference_time=NOW)["query"]["time_window"]
        assert never["start"] == "2023-08-07T00:00:00Z", "no year holds it: the most recent one, as before"


def test_what_happened_in_a_window_is_told_by_the_messages_that_say_the_most(vault: Path) -> None:
    """"What happened last week?" had ranked the window's messages by their likeness to "what
    happened": chit-chat first. Now the window's messages that say the most lead, and a window
    the memory holds nothing in says so."""
    write_slack_day(
        vault,
        "2024-06-12",
        [
            ("Alice Chen", "09:00", "ok"),
            ("Bob Stone", "09:01", "what happened?"),
            ("Alice Chen", "09:05", "We moved the public launch to 23 April and booked the harbour loft for 120 guests."),
            ("Bob Stone", "09:06", "me too"),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("What happened last week?", limit=5, reference_time=datetime(2024, 6, 17, 9, 0))
        assert "public launch" in result["hits"][0]["content"]
        assert all(h["breakdown"]["dense"] == 0 and h["breakdown"]["lex"] == 0 for h in result["hits"])
        assert result["hits"][0]["breakdown"]["informative"] > result["hits"][-1]["breakdown"]["informative"]
        june = memory.walk("What happened in June?", limit=5, reference_time=datetime(2024, 6, 17, 9, 0))
        assert "public launch" in june["hits"][0]["content"], "the month's own name is no content word"
        assert june["hits"][0]["breakdown"]["informative"] > 0
        empty = memory.walk("What happened yesterday?", limit=5, reference_time=datetime(2024, 6, 17, 9, 0))
        assert empty["hits"] == []
        assert "Nothing in the memory falls inside this window." in format_evidence(empty)


def test_walk_favours_a_message_written_just_after_the_window_it_tells_of(vault: Path) -> None:
    """Asked "What did Dana watch on 1 May?", Dana tells of it the next morning. That message is
    outside the window, but a message within days after it ranks above one from weeks later
    (its words name no time: "last night" would tell of 1 May, and count as inside)."""
    write_slack_day(vault, "2024-05-02", [("Dana Park", "09:00", "I watched the film Arrival, wonderful.")])
    write_slack_day(vault, "2024-05-25", [("Dana Park", "09:00", "I watched the film Arrival again, wonderful.")])
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("Which film did Dana watch on 1 May 2024?", limit=5, reference_time=NOW)["hits"]
        factors = {h["time_range"]["start"][:10]: h["breakdown"]["time_factor"] for h in hits}
        assert factors["2024-05-25"] < factors["2024-05-02"] < 1.0
        assert hits[0]["time_range"]["start"].startswith("2024-05-02")


def test_walk_counts_a_message_that_tells_of_the_window_from_outside_it_as_inside(vault: Path) -> None:
    """Asked what John attended in March, his "a convention together last month", written in
    April, tells of March: it ranks as inside the window, above a March message that shares
    fewer of the question's words. "last week" written in April names April, and a time longer
    than the window ("last year") names none of its days: both stay outside."""
    write_slack_day(vault, "2024-03-20", [("John Park", "09:00", "Colleagues are fun, we had lunch together today.")])
    write_slack_day(vault, "2024-04-18", [("John Park", "09:00", "My colleagues and I attended a convention together last month.")])
    write_slack_day(vault, "2024-04-25", [("John Park", "09:00", "My colleagues and I attended a meetup together last week.")])
    write_slack_day(vault, "2024-05-02", [("John Park", "09:00", "My colleagues and I attended a gala together last year.")])
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("What did John and his colleagues go to in March 2024?", limit=5, reference_time=NOW)["hits"]
        by_day = {h["time_range"]["start"][:10]: h["breakdown"] for h in hits}
        assert by_day["2024-04-18"]["retold"] and by_day["2024-04-18"]["time_factor"] == 1.0
        assert not by_day["2024-04-25"]["retold"] and by_day["2024-04-25"]["time_factor"] < 1.0
        assert not by_day["2024-05-02"]["retold"] and by_day["2024-05-02"]["time_factor"] < 1.0
        assert "convention" in hits[0]["content"], [(h["content"][:40], h["score"]) for h in hits]


def test_a_message_tells_of_the_time_its_own_words_name_read_from_when_it_was_written() -> None:
    """"last month" written in April is March; "next month" written in late February is March
    too (a plan); "yesterday" written on 1 April is 31 March; "last year" is longer than March."""
    march = parse_time_window("in March 2024", NOW)
    assert march is not None
    assert tells_of(march, "We went to a convention last month.", datetime(2024, 4, 18, 9))
    assert tells_of(march, "Booking a trip there next month.", datetime(2024, 2, 28, 9))
    assert tells_of(march, "I ran a 5K yesterday!", datetime(2024, 4, 1, 9))
    assert not tells_of(march, "I ran a 5K yesterday!", datetime(2024, 4, 3, 9))
    assert not tells_of(march, "We renovated a community centre last year.", datetime(2025, 1, 5, 9))
    assert not tells_of(march, "No time named here.", datetime(2024, 4, 18, 9))


def test_walk_is_deterministic_and_sees_new_leaves_immediately(mem: Memory, vault: Path) -> None:
    args = {"query": "servers", "reference_time": NOW.isoformat()}
    assert mem.query("walk", args) == mem.query("walk", args)
    write(vault, "Notes/Fresh.md", "# Fresh\n\nThe zeppelin hangar opens in July.\n")
    mem.sync_paths(["Notes/Fresh.md"])
    hits = mem.query("walk", {"query": "zeppelin hangar"})["hits"]
    assert hits[0]["note_path"] == "Notes/Fresh.md"
    mem.close()


def test_near_duplicates_are_pushed_down(vault: Path) -> None:
    for name in ("a", "b"):
        write(vault, f"{name}.md", "# Copy\n\nThe ferry to Ischia leaves at nine from the old pier.\n")
    write(
        vault,
        "c.md",
        "# Other\n\nThe ferry back from Ischia is at six, weather permitting, and crowded in August.\n",
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.query("walk", {"query": "ferry Ischia"})["hits"]
        paths = [h["note_path"] for h in hits]
        assert paths[1] == "c.md" and {paths[0], paths[2]} == {"a.md", "b.md"}
        assert hits[0]["score"] == hits[2]["score"] > hits[1]["score"], (
            "the copy outscores c but yields to it"
        )
        assert hits[2]["breakdown"].get("near_duplicate") is True


def test_a_hit_that_follows_other_notes_best_hits_says_so(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(
        vault,
        "a.md",
        "# Ferry out\n\nThe ferry to Ischia leaves the old pier at nine.\n\n"
        "# Ferry back\n\nThe ferry from Ischia returns to the old pier at six.\n",
    )
    write(vault, "b.md", "# Trip\n\nThe ferry to Ischia was late and crowded.\n")
    write(vault, "c.md", "# Walk\n\nWe walked along the pier in the evening.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.query("walk", {"query": "ferry Ischia pier"})
    hits = result["hits"]
    assert [h["note_path"] for h in hits] == ["a.md", "b.md", "a.md", "c.md"]
    assert hits[2]["score"] > hits[1]["score"], "a's second section outscores b but follows it"
    assert hits[2]["breakdown"].get("behind_other_notes") is True
    assert not hits[0]["breakdown"].get("behind_other_notes") and not hits[1]["breakdown"].get("behind_other_notes")
    print_hits(result)
    lines = [line for line in capsys.readouterr().out.splitlines() if "(score" in line]
    assert lines[2].endswith("; after the best hits of other notes)") and lines[0].endswith(")")
    assert "after the best hits" not in lines[0] + lines[1]


def test_near_duplicates_are_the_term_sets_of_high_jaccard_similarity() -> None:
    ten = frozenset(f"w{i}" for i in range(10))
    assert near_duplicate(ten | {"x"}, {10: [ten]})  # 10/11
    assert near_duplicate(frozenset(list(ten)[:9]), {10: [ten]})  # 9/10: the threshold itself
    assert not near_duplicate(ten | {"x", "y"}, {10: [ten]})  # 10/12
    assert not near_duplicate(frozenset(), {0: [frozenset()]})
    rng = random.Random(3)
    vocabulary = [f"t{i}" for i in range(30)]
    kept: dict[int, list[frozenset[str]]] = {}
    earlier: list[frozenset[str]] = []
    positives = 0
    for _ in range(400):  # against every kept set, as a pairwise check would
        candidate = frozenset(rng.sample(vocabulary, rng.randint(0, 25)))
        if earlier and rng.random() < 0.5:  # a near copy of an earlier set: one or two terms off
            base = set(rng.choice(earlier))
            for _ in range(rng.randint(1, 2)):
                base.symmetric_difference_update({rng.choice(vocabulary)})
            candidate = frozenset(base)
        earlier.append(candidate)
        pairwise = any(
            candidate and other and len(candidate & other) / len(candidate | other) >= DIVERSITY_JACCARD
            for others in kept.values()
            for other in others
        )
        assert near_duplicate(candidate, kept) == pairwise
        positives += pairwise
        if rng.random() < 0.5:
            kept.setdefault(len(candidate), []).append(candidate)
    assert positives > 20


def test_modes(mem: Memory) -> None:
    source = mem.query("query_source", {"source_id": "slack:acme/general", "since": "2024-06-01"})
    assert [h["content"][:6] for h in source["hits"]] == ["Budget", "Great,"]
    window = mem.query("cover_window", {"start": "2024-05-01", "end": "2024-06-01"})
    assert window["total"] == 2 and all(
        h["time_range"]["start"].startswith("2024-05") for h in window["hits"]
    )
    ids = [h["node_id"] for h in source["hits"]]
    fetched = mem.query("fetch_leaves", {"ids": [ids[1], "missing-id", ids[0]]})
    assert [h["node_id"] for h in fetched["hits"]] == [ids[1], ids[0]]
    assert fetched["missing"] == ["missing-id"]
    shouted = mem.query("fetch_leaves", {"ids": [f" {ids[1].upper()} ", ids[1]]})  # pasted, in capitals
    assert [h["node_id"] for h in shouted["hits"]] == [ids[1]] and shouted["missing"] == []
    with pytest.raises(UsageError, match="a leaf has no children"):
        mem.query("drill_down", {"node_id": ids[0]})
    with pytest.raises(NotFound):
        mem.query("drill_down", {"node_id": "nope"})
    with pytest.raises(UsageError):
        mem.query("walk", {"query": ""})
    with pytest.raises(UsageError):
        mem.query("teleport", {})
    reranked = mem.query("query_source", {"kind": "chat", "query": "ordering hardware"})
    assert reranked["total"] == 4
    mem.close()


def test_evidence_block_cites_and_refuses_without_grounding(mem: Memory) -> None:
    result = mem.query("walk", {"query": "servers Northwind", "evidence": True, "budget_tokens": 200})
    evidence = result["evidence"]
    assert "Northwind" in evidence and "slack://C1/2024-06-12-1" in evidence
    assert "[[sources/chat/slack/acme/general/2024-06-12#^m-" in evidence
    assert len(evidence) / 4 <= 200
    vague = mem.query("walk", {"query": "what is it about?", "evidence": True})
    assert vague["evidence"].startswith("No grounding")
    partly = mem.query("walk", {"query": "Northwind kubernetes autoscaling", "evidence": True})
    assert partly["evidence"].startswith("Not in the memory: kubernetes, autoscaling.\n[1] ")
    assert partly["query"]["unknown"] == ["kubernetes", "autoscaling"]
    assert mem.query("walk", {"query": "Northwind kubernetes"})["query"]["unknown"] == ["kubernetes"], "said without evidence too"
    asking = mem.query("walk", {"query": "how much did we discuss the Northwind servers?", "evidence": True})
    assert asking["evidence"].startswith("[1] "), "asking words (much, discuss) are no missing topic"
    unknown = mem.query("walk", {"query": "tell me about kubernetes", "evidence": True})
    assert unknown["evidence"].startswith("Not in the memory: kubernetes.\nNo grounding"), "'tell' grounds nothing"
    dated = mem.query("walk", {"query": "Northwind on 12 June", "evidence": True, "reference_time": NOW.isoformat()})
    assert not dated["evidence"].startswith("Not in the memory"), "the window's words are the window's"
    said = mem.query("walk", {"query": "What did Alice Chen say about the servers?", "evidence": True})
    assert "say" not in terms(" ".join(str(row[0]) for row in mem.index.query("SELECT text FROM leaves")))
    assert not said["evidence"].startswith("Not in the memory"), "the verb asks for her words: no content"
    mem.close()


def test_yesterday_is_the_asker_s_yesterday(mem: Memory) -> None:
    """At 01:00 on 17 May in UTC+2 (23:00 on the 16th in UTC), "yesterday" is the 16th of the
    asker's calendar: 15 May 22:00 to 16 May 22:00 UTC. A time without an offset is UTC."""
    local = mem.query("walk", {"query": "what did we do yesterday?", "reference_time": "2025-05-17T01:00:00+02:00"})
    window = local["query"]["time_window"]
    assert (window["start"], window["end"]) == ("2025-05-15T22:00:00Z", "2025-05-16T22:00:00Z")
    utc = mem.query("walk", {"query": "what did we do yesterday?", "reference_time": "2025-05-16T23:00:00"})
    window = utc["query"]["time_window"]
    assert (window["start"], window["end"]) == ("2025-05-15T00:00:00Z", "2025-05-16T00:00:00Z")
    mem.close()


def test_a_source_query_refuses_a_reversed_window_and_names_an_unknown_source(mem: Memory) -> None:
    """A reversed window is an error (as `cover_window`'s is), not an empty answer; an unknown
    source id is named, with some known ones; errors name the argument as the caller wrote it."""
    with pytest.raises(UsageError, match="'until' must be after 'since'"):
        mem.query("query_source", {"source_id": "slack:acme/general", "since": "2024-06-28", "until": "2024-04-28"})
    with pytest.raises(NotFound, match="no source with id 'Slack:acme/general'") as caught:
        mem.query("query_source", {"source_id": "Slack:acme/general"})
    assert caught.value.hint is not None and "slack:acme/general" in caught.value.hint
    assert mem.query("query_source", {"source_id": "slack:acme/general", "since": "2030-01-01"})["hits"] == []
    with pytest.raises(UsageError, match=r"^'reference_time' = 'notadate' is not"):
        mem.query("walk", {"query": "budget", "reference_time": "notadate"})
    with pytest.raises(UsageError, match=r"^'budget_tokens' must be a positive integer"):
        mem.query("walk", {"query": "budget", "evidence": True, "budget_tokens": 0})
    mem.close()


def test_the_first_item_is_cut_to_fit_rather_than_give_way_to_weaker_ones() -> None:
    def hit(text: str) -> dict[str, Any]:
        return {"content": text, "wikilink": "[[n#^a]]", "source_refs": ["slack://C1/1"], "author": "Elena Rossi"}

    answer = "The renewal price is 14,200 euros, up from 12,900; it renews on 1 July unless we give notice. " * 3
    result = {"hits": [hit(answer), hit("tent ok"), hit("small")], "query": {}}
    block = format_evidence(result, budget_tokens=120)
    assert block.startswith("[1] Elena Rossi · shortened\nThe renewal price is 14,200 euros") and "tent ok" not in block
    assert block.endswith("…\n   ↳ [[n#^a]] · slack://C1/1\nLeft out for the budget: [2], [3].")
    assert count_tokens(block) <= 120
    whole = format_evidence(result, budget_tokens=200)
    assert "shortened" not in whole and answer.strip() in whole
    tiny = format_evidence(result, budget_tokens=40)  # under MIN_SHORTENED_CHARS of it would fit
    assert tiny.startswith("The token budget (40) is too small: ask with at least ") and "tent ok" not in tiny
    assert count_tokens(tiny) <= 40


def test_a_summary_in_the_evidence_cites_two_refs_and_says_how_to_list_the_rest(capsys: pytest.CaptureFixture[str]) -> None:
    """A summary folds a ref per message: the evidence block, as the listing, shows two, the
    count of the rest and the command that lists them."""
    refs = [f"slack://C1/{i}" for i in range(12)]
    summary = {"content": "The team planned the offsite.", "wikilink": "[[s]]", "node_id": "S7", "source_refs": refs}
    block = format_evidence({"hits": [summary], "query": {}}, budget_tokens=500)
    assert "↳ [[s]] · slack://C1/0 · slack://C1/1 · and 10 more (`vaultmind query drill S7`)" in block
    assert "slack://C1/2" not in block
    print_hits({"hits": [{**summary, "note_path": "summaries/s.md"}], "query": {}})
    assert "slack://C1/1 · and 10 more (`vaultmind query drill S7`)" in capsys.readouterr().out


def test_a_hit_without_text_says_so_in_the_listing(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A hit whose text is empty (an email whose body could not be read) had printed an empty
    line under its note; the listing says "(no text)" (`--json` prints the result as it is)."""
    write(vault, "a.md", "# Ferry\n\nThe ferry to Ischia leaves at nine.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.query("search", {"query": "ferry Ischia"})
    hit = {**result["hits"][0], "content": ""}
    print_hits({**result, "hits": [hit]})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(" 1. a.md") and lines[2] == "    (no text)", lines
    assert all(line.strip() for line in lines)


def test_refs_past_the_listed_ones_of_a_hit_without_a_node_id_are_only_counted() -> None:
    """A hit without a node id has no command to list its refs: the rest is said as a count."""
    refs = [f"slack://C1/{i}" for i in range(5)]
    block = format_evidence({"hits": [{"content": "The team planned the offsite.", "wikilink": "[[s]]", "source_refs": refs}], "query": {}}, budget_tokens=500)
    assert "↳ [[s]] · slack://C1/0 · slack://C1/1 · and 3 more\n" in block + "\n"
    assert "query drill" not in block


def test_a_tight_budget_keeps_the_sentence_that_answers_and_the_first_item_over_a_weaker_one() -> None:
    """Cut to fit, the first item keeps the sentence holding most of the question's words (not
    the greeting above it), and drops its address and `source_ref` before it gives way."""
    mail = (
        "Hi Alice,\n\nHappy to. The Loft is held for you on 9 April.\nHire fee: €4,200 including AV and bar staff.\n"
        "Catering is by Golden Lantern, menu to follow.\nDeposit: €1,500, due by 15 March and non-refundable after "
        "that date.\n\nBest,\nDana"
    )
    first = {
        "content": mail,
        "author": "Dana Whitfield <dana@harborhall.example>",
        "time_range": {"start": "2024-03-06T15:40:00Z", "end": "2024-03-06T15:40:00Z"},
        "wikilink": "[[sources/email/harbor-hall/2024-03-06-harbor-hall-launch-evening#^m-20240306154000-a93d]]",
        "source_refs": ["mid:20240306154000.a93d@harborhall.example"],
    }
    weaker = {"content": "Harbor Hall has the Loft free on the 23rd.", "wikilink": "[[chat#^m-1]]"}
    result = {"hits": [first, weaker], "query": {"content_terms": terms("how much is the Harbor Hall deposit and when is it due")}}
    block = format_evidence(result, budget_tokens=200)
    assert block.startswith("[1] Dana Whitfield <dana@harborhall.example> · 2024-03-06T15:40:00Z · shortened\n… ")
    assert "Deposit: €1,500, due by 15 March and non-refundable" in block
    assert "Hi Alice" not in block and count_tokens(block) <= 200
    compact = format_evidence(result, budget_tokens=160)
    assert compact.startswith("[1] Dana Whitfield · 2024-03-06T15:40:00Z · shortened\n… ")
    assert "Deposit: €1,500, due by 15 March" in compact
    assert "mid:" not in compact and "Loft free" not in compact and count_tokens(compact) <= 160
    assert re.search(r"\nLeft out for the budget: \[2\]( \(\d+ tokens\))?\.$", compact)
    assert format_evidence(result, budget_tokens=120).startswith("The token budget (120) is too small for the first")


def test_evidence_fills_its_budget_past_an_item_too_big_and_says_when_none_fits() -> None:
    """An item larger than what is left of the budget is left out and smaller ones after it
    still come in; when none fits, the block says the budget is too small (not that nothing was
    found). A time window grounds a question, and a window nothing falls in is said to be empty."""
    from vaultmind.retrieval.evidence import is_grounded

    def hit(text: str, start: str | None = None) -> dict[str, Any]:
        return {"content": text, "wikilink": "[[n#^a]]", "time_range": {"start": start, "end": start}}

    result = {"hits": [hit("small one"), hit("x " * 400), hit("small two")], "query": {}}
    block = format_evidence(result, budget_tokens=80)
    assert "[1] " in block and "small one" in block and "[3] " in block and "small two" in block
    assert "x x" not in block and re.search(r"\nLeft out for the budget: \[2\] \(\d+ tokens\)\.$", block)
    assert count_tokens(block) <= 80
    short = format_evidence(result, budget_tokens=52)  # both small items, and the note without sizes
    assert "small two" in short and short.endswith("\nLeft out for the budget: [2].")
    tight = format_evidence(result, budget_tokens=40)  # both small items fit, but not with a note
    assert "small one" in tight and "small two" not in tight
    assert tight.endswith("\nLeft out for the budget: [2], [3].") and count_tokens(tight) <= 40
    assert format_evidence(result, budget_tokens=30).endswith("small one\n   ↳ [[n#^a]]"), "no room for the note"
    too_small = format_evidence(result, budget_tokens=7)
    assert too_small == "Too small.", "the budget bounds the answer that says it is too small"
    window = {"start": "2024-06-19T00:00:00Z", "end": "2024-06-20T00:00:00Z", "text": "yesterday"}
    bare = format_evidence(result, budget_tokens=19)
    headed = format_evidence({"hits": result["hits"], "query": {"time_window": window}}, budget_tokens=19)
    assert headed.startswith("Budget too small: at least ") and headed != bare, "the header counts"
    assert format_evidence({"hits": [], "query": {}}).startswith("No evidence found")
    window = {"start": "2024-06-19T00:00:00Z", "end": "2024-06-20T00:00:00Z", "text": "yesterday"}
    assert is_grounded({"time_window": window}, []) and not is_grounded({}, [])
    outside = {"hits": [hit("harbor survey", "2024-06-18T10:00:00Z")], "query": {"time_window": window}}
    assert "Nothing in the memory falls inside this window" in format_evidence(outside)
    inside = {"hits": [hit("boathouse", "2024-06-19T10:00:00Z")], "query": {"time_window": window}}
    assert "Nothing in the memory" not in format_evidence(inside) and "boathouse" in format_evidence(inside)


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("what did we do last week?", "2024-06-10", "2024-06-17"),
        ("in May 2023", "2023-05-01", "2023-06-01"),
        ("the day before yesterday", "2024-06-18", "2024-06-19"),
        ("3 weeks ago", "2024-05-27", "2024-06-03"),
        ("on 8 May, 2023", "2023-05-08", "2023-05-09"),
        ("last Friday", "2024-06-14", "2024-06-15"),
        ("what is on this Friday?", "2024-06-21", "2024-06-22"),  # asked on a Thursday: this week's
        ("what did we do this Monday?", "2024-06-17", "2024-06-18"),
        ("what are we doing next Friday?", "2024-06-28", "2024-06-29"),  # next week's
        ("early June", "2024-06-01", "2024-06-11"),
        ("in 2022", "2022-01-01", "2023-01-01"),
        ("2024-02-29", "2024-02-29", "2024-03-01"),
        ("yesterday", "2024-06-19", "2024-06-20"),
        # relative words read from the day the question names, up to the end of that day
        ("the leak she fixed last week, as mentioned on March 4, 2024?", "2024-02-26", "2024-03-05"),
        ("what did she bake last Friday on 12 May, 2024?", "2024-05-10", "2024-05-13"),
        ("where was Ravi the week before 14 March 2024?", "2024-03-07", "2024-03-15"),
        ("the bike she bought two weeks before May 20, 2024", "2024-05-06", "2024-05-21"),
        ("three days after 8 May 2023", "2023-05-09", "2023-05-12"),
        # May, a whole month name of three letters, with a preposition or qualifier but no year
        ("what happened in May?", "2024-05-01", "2024-06-01"),
        ("during May", "2024-05-01", "2024-06-01"),
        ("late May", "2024-05-21", "2024-06-01"),
        # ranges of days, a month or year said once serving both ends
        ("what happened between 15 and 17 May?", "2024-05-15", "2024-05-18"),
        ("from May 15 to May 17, 2023", "2023-05-15", "2023-05-18"),
        ("where was Ravi between June 3 and June 9 2024?", "2024-06-03", "2024-06-10"),
        ("between 28 December and 3 January", "2023-12-28", "2024-01-04"),
        ("from 17 to 15 May", "2024-05-15", "2024-05-18"),  # backwards: the same days
        # the weekend we are in or the last one, last night, quarters (without a year the latest)
        ("what did Kai say over the weekend?", "2024-06-15", "2024-06-17"),
        ("what happened last night?", "2024-06-19", "2024-06-20"),
        ("what did we discuss in Q2?", "2024-04-01", "2024-07-01"),
        ("how did Q3 go?", "2023-07-01", "2023-10-01"),
        ("in the first quarter of 2023", "2023-01-01", "2023-04-01"),
        # last/next/this <month>: the latest before this month, the first after it, this year's
        ("what did we do last May?", "2024-05-01", "2024-06-01"),
        ("what did we do last June?", "2023-06-01", "2023-07-01"),  # asked in June: a year ago
        ("what happens next May?", "2025-05-01", "2025-06-01"),
        ("what are the plans for next July?", "2024-07-01", "2024-08-01"),
        ("what did we do this May?", "2024-05-01", "2024-06-01"),
        # "May" with its capital between a determiner and a word is the month: it cannot be searched
        ("What happens on the May bank holiday?", "2024-05-01", "2024-06-01"),
    ],
)
def test_time_expressions(question: str, start: str, end: str) -> None:
    window = parse_time_window(question, NOW)
    assert window is not None
    assert window.start.date().isoformat() == start and window.end.date().isoformat() == end


def test_time_beyond_the_calendar_is_no_window_not_an_error() -> None:
    assert parse_time_window("what happened 99999 years ago?", NOW) is None
    assert parse_time_window("what did we plan 9999 years after 31 December 9999?", NOW) is None
    window = parse_time_window("99999999 years before 1 May 2023", NOW)  # the date alone is left
    assert window is not None and (window.start.isoformat(), window.end.isoformat()) == (
        "2023-05-01T00:00:00",
        "2023-05-02T00:00:00",
    )
    last = parse_time_window("what happened between 1 and 31 December 9999?", NOW)
    assert last is None or last.end.year == 9999, "no range past the calendar's last day"
    assert parse_time_window("what happened in Q4 9999?", NOW) is None, "not the latest Q4"
    first = parse_time_window("the Q1 1850 numbers", NOW)
    assert first is not None and (first.start.year, first.end.month) == (1850, 4)


def test_the_last_march_in_lower_case_is_the_walk_not_the_month(vault: Path) -> None:
    """"How many people came to the last march?" read "last march" as March a year before (and
    had read a bare "march" as this year's): the climate march of September came behind March's
    chores. "march" in lower case after a determiner (and "last" or "next") is the walk;
    "last march" without one, or "March" written with its capital, is still the month."""
    now = datetime(2026, 3, 10, 12)
    for walk in ("how many people came to the last march?", "when is the next march?", "who organised our march?"):
        assert parse_time_window(walk, now) is None, walk
    for month in ("what happened last march?", "what happened in the last March?", "the march in May"):
        assert parse_time_window(month, now) is not None, month
    write_chat(vault, "2025-03-08", [("Tom Reed", "Spring clean done, the garage is empty."), ("Agnes Brown", "People came by for the old bikes.")])
    write_chat(vault, "2025-09-20", [("Agnes Brown", "Great turnout at the climate march today, thousands of people came.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("how many people came to the last march?", reference_time=now.replace(tzinfo=UTC))
        assert result["query"]["time_window"] is None
        assert result["hits"][0]["content"].startswith("Great turnout at the climate march")


def test_a_reference_time_at_the_calendars_edge_is_answered_or_refused_not_a_crash(mem: Memory) -> None:
    edge = mem.query("walk", {"query": "what happened yesterday?", "reference_time": "9999-12-31T23:59:59+00:00"})
    assert edge["query"]["time_window"]["start"] == "9999-12-30T00:00:00Z"
    with pytest.raises(UsageError, match="outside the calendar"):
        mem.query("walk", {"query": "what happened yesterday?", "reference_time": "0001-01-01T00:00:00+14:00"})
    mem.close()


def test_no_time_expression_and_may_the_verb() -> None:
    assert parse_time_window("may I ask who owns the guest list?", NOW) is None
    for verb in ("this may take a while", "what did May say?", "is the may bank holiday on?", "the last may be late"):
        assert parse_time_window(verb, NOW) is None, verb
    assert parse_time_window("who owns the guest list?", NOW) is None
    # a bare month or quarter before a word names a thing: the Q2 budget, written in March, is
    # no message of April to June
    for thing in ("what is in the Q2 budget?", "the Q3 numbers", "who wrote the March newsletter?", "the 2024 taxes"):
        assert parse_time_window(thing, NOW) is None, thing
    assert parse_time_window("the Q2 2024 budget", NOW) is not None, "with its year it is a time"
    assert parse_time_window("what did we spend in Q2 and Q3?", NOW) is not None


def test_summaries_answer_as_nodes_and_drill_down_to_messages(vault: Path) -> None:
    from vaultmind.tree.engine import seal_ready

    day = "2024-05-08"
    write_slack_day(
        vault,
        day,
        [
            (name, f"09:{i:02d}", f"{name} reports progress on the lighthouse restoration, step {i}.")
            for i, name in enumerate(["Alice Chen", "Bob Stone"] * 6)
        ],
        ref="slack://C1/{day}-{back}",
    )
    config = load_config(
        vault,
        embed_provider="none",
        extra={"trees.l0_tokens": 80, "trees.fanout": 2, "trees.summarizer": "fallback"},
    )
    with Memory.open(config) as memory:
        memory.sync()
        report = seal_ready(memory)
        assert report.sealed, "the small budget seals the chat into summaries"
        top = memory.index.query("SELECT id, level FROM summaries ORDER BY level DESC, id LIMIT 1")[0]
        node = memory.query("drill_down", {"node_id": top[0], "depth": 3})
        kinds = {h["node_kind"] for h in node["hits"]}
        assert "leaf" in kinds, "drilling down ends at the messages"
        leaf = next(h for h in node["hits"] if h["node_kind"] == "leaf")
        assert leaf["source_refs"][0].startswith("slack://C1/")
        window = memory.query("cover_window", {"start": "2024-05-08", "end": "2024-05-09"})
        assert any(h["node_kind"] == "summary" for h in window["hits"])
        assert window["uncovered_leaves"] < 12
        hits = memory.query("walk", {"query": "lighthouse restoration progress", "limit": 30})["hits"]
        summary = next(h for h in hits if h["node_kind"] == "summary")
        assert summary["level"] >= 1 and summary["child_ids"] and summary["message_ids"]
        assert summary["note_path"].startswith("summaries/")
        assert summary["title"] == f"#general · 2024-05-08 · summary L{summary['level']}", "not its id"
        other = next(h for h in hits if h["node_id"] != summary["node_id"])
        fetched = memory.query("fetch_leaves", {"ids": [summary["node_id"], "nope", other["node_id"]]})
        assert [h["node_id"] for h in fetched["hits"]] == [summary["node_id"], other["node_id"]]
        assert fetched["missing"] == ["nope"] and fetched["hits"][0]["node_kind"] == "summary"
        by_chunk = memory.query("fetch_leaves", {"ids": [summary["breakdown"]["chunk_id"]]})
        assert [h["node_id"] for h in by_chunk["hits"]] == [summary["node_id"]] and by_chunk["missing"] == []
        block = format_evidence({"hits": [summary], "query": {}})
        span = summary["time_range"]
        assert span["start"] < span["end"] and f"[1] {summary['title']} · {span['start']} – {span['end']}\n" in block
        widest = max((h for h in hits if h["node_kind"] == "summary"), key=lambda h: len(h["source_refs"]))
        backwards = [int(ref.rsplit("-", 1)[1]) for ref in widest["source_refs"]]  # 99, 98, …: against their text
        assert len(backwards) > 2 and backwards == sorted(backwards, reverse=True)  # in the messages' order


def test_a_time_window_weighs_summaries_by_their_range_and_a_question_of_time_alone_by_time(vault: Path) -> None:
    """A summary's leaves take their summary's time range against a question's window (they
    have no time of their own); a question whose only words are its window's ranks the
    window's messages first, not others that use the same words."""
    from vaultmind.tree.engine import seal_ready

    write_slack_day(
        vault,
        "2024-05-08",
        [
            (name, f"09:{i:02d}", f"{name} reports progress on the lighthouse restoration, step {i}.")
            for i, name in enumerate(["Alice Chen", "Bob Stone"] * 6)
        ],
    )
    write_chat(vault, "2024-04-10", [("Carol Diaz", "The boathouse roof is finished.")])  # April holds something
    config = load_config(
        vault, embed_provider="none", extra={"trees.l0_tokens": 64, "trees.fanout": 2, "trees.summarizer": "fallback"}
    )
    with Memory.open(config) as memory:
        memory.sync()
        assert seal_ready(memory).sealed
        memory.sync()

        def summary_factors(question: str) -> set[float]:
            hits = memory.walk(question, limit=40, reference_time=NOW)["hits"]
            return {h["breakdown"]["time_factor"] for h in hits if h["node_kind"] == "summary"}

        assert summary_factors("lighthouse restoration progress in May 2024") == {1.0}
        assert summary_factors("lighthouse restoration progress in April 2024") == {0.35}
        write_slack_day(vault, "2024-06-18", [("Bob Stone", "10:00", "Yesterday was the harbor survey, yesterday all day.")])
        write_slack_day(vault, "2024-06-19", [("Alice Chen", "10:00", "Painted the north wall of the boathouse.")])
        memory.sync()
        first = memory.walk("what did we do yesterday?", limit=5, reference_time=NOW)["hits"][0]
        assert "boathouse" in first["content"] and first["breakdown"]["time_factor"] == 1.0


def test_obsidian_links_quote_every_character_of_vault_note_and_anchor() -> None:
    """Links are quoted in parts (the vault's and notes' names are cached): the same URI as
    quoting the note and its anchor whole, for names with spaces, "#", "%", "&", "/", accents."""
    rng = random.Random(3)
    alphabet = ["a", "Z", " ", "#", "%", "&", "/", "?", "é", "日", "^", "-", "+", "=", ".md", "~"]
    for _ in range(500):
        vault_name = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6)))
        path = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) + rng.choice([".md", ".MD", ""])
        anchor = rng.choice(["", "^m-1", "#Plan & ideas", "^b%20", "Heading é"])
        stem = path[:-3] if path.lower().endswith(".md") else path
        file = stem + ((anchor if anchor.startswith("#") else "#" + anchor) if anchor else "")
        expected = f"obsidian://open?vault={quote(vault_name, safe='')}&file={quote(file, safe='')}"
        assert obsidian_link(vault_name, path, anchor) == expected


def test_the_windows_words_are_not_searched_and_its_leaves_come_first(vault: Path) -> None:
    """"What happened last month?": a message of this month that says "last month" is no match;
    the messages of last month, which share no word with the question, come first."""
    write_slack_day(vault, "2024-05-14", [("Dana Park", "09:00", "The kiln cracked during the glaze firing.")])
    write_slack_day(vault, "2024-05-21", [("Alice Chen", "10:00", "Bob joined the pottery team today.")])
    write_slack_day(vault, "2024-06-12", [("Bob Stone", "11:00", "I paid last month's studio rent, the month before too.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("what happened last month?", reference_time=datetime(2024, 6, 20, 12, 0, tzinfo=UTC))
    assert result["query"]["time_window"]["start"] == "2024-05-01T00:00:00Z"
    assert result["query"]["content_terms"] == sorted(set(terms("happened")))
    days = [h["time_range"]["start"][:10] for h in result["hits"]]
    assert days[:2] == ["2024-05-14", "2024-05-21"] or days[:2] == ["2024-05-21", "2024-05-14"], days
    assert all(h["breakdown"]["lex"] == 0.0 for h in result["hits"]), "no word of the question matches"
    assert all(h["breakdown"]["inside"] for h in result["hits"])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        dated = memory.walk("what is due on July 31?", reference_time=datetime(2024, 6, 20, 12, 0, tzinfo=UTC))
    assert set(terms("July 31")) <= set(dated["query"]["content_terms"]), "words that name a date are searched"


def test_a_question_of_only_unknown_tokens_finds_nothing(vault: Path) -> None:
    """An emoji embeds as zeros with the static model: no leaf is near it, so there is no hit
    (it used to rank every leaf at the same cosine, each claiming a perfect dense match)."""
    write_slack_day(vault, "2024-05-14", [("Dana Park", "09:00", "Cake for Grandma 🎂 on Saturday."), ("Bob Stone", "09:05", "Sure.")])
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        assert memory.walk("🎂")["hits"] == []
        assert memory.search("🎂")["hits"] == []
        assert memory.walk("cake")["hits"][0]["content"].startswith("Cake for Grandma")


def test_a_first_hit_above_a_higher_score_says_its_note_ranked_it(capsys: pytest.CaptureFixture[str]) -> None:
    def hit(path: str, score: float, **flags: Any) -> dict[str, Any]:
        return {"note_path": path, "anchor": "", "score": score, "content": path, "breakdown": flags}

    summary = hit("s.md", 0.5) | {"time_range": {"start": "2024-05-08T09:00:00Z", "end": "2024-05-08T09:10:00Z"}}
    print_hits({"hits": [
        hit("a.md", 0.908, note_evidence=1.31),  # its note covers more of the question
        hit("b.md", 0.913, note_evidence=1.02),
        hit("a.md", 1.2, note_evidence=1.31, behind_other_notes=True),
        summary,
    ]})  # fmt: skip
    out = capsys.readouterr().out
    assert "    2024-05-08T09:00:00Z – 2024-05-08T09:10:00Z\n" in out, "a summary's time range, not its start"
    lines = [line for line in out.splitlines() if "(score" in line]
    assert lines[0].endswith("(score 0.9080; its note's evidence 1.3100)")
    assert lines[1].endswith("(score 0.9130)"), "only hits above higher ones that are not behind others"
    assert lines[2].endswith("; after the best hits of other notes)")


def test_a_window_the_memory_holds_nothing_in_does_not_rank(vault: Path) -> None:
    """"What is due by 10 May?" asked in March reads the window as last May; with nothing
    then, it used to take every dated message down to the outside factor, below undated notes."""
    write_chat(
        vault,
        "2024-03-11",
        [("Helen Okafor", "Approved. Final invoices by 10 May, please."), ("Bob Stone", "Lunch at noon?")],
    )
    write(vault, "notes/reading.md", "# Reading list\n\nA book on invoices and budgets, some day.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("what is due by 10 May?", reference_time=datetime(2024, 3, 12, 10))
    window = result["query"]["time_window"]
    assert window["start"].startswith("2024-05-10"), "no 10 May holds anything: the one to come, read and shown"
    assert result["query"]["window_ahead"] is True
    first = result["hits"][0]
    assert first["author"] == "Helen Okafor" and first["breakdown"]["time_factor"] == 1.0
    assert {h["breakdown"]["time_factor"] for h in result["hits"]} == {1.0}


def test_a_window_still_ahead_is_told_by_what_was_said_of_it_before(vault: Path) -> None:
    """"What will we do in April?" asked in March read last April (a garden message) or, with
    nothing then, ranked nothing at all. A window still to come holds no message yet: what was
    said of it before answers, and the answer says the window is ahead."""
    write_chat(vault, "2023-04-12", [("Mei Chen", "We planted the tomatoes in the back garden today.")])
    write_chat(vault, "2024-03-04", [("Alice Chen", "Target for the public launch is still Tuesday 9 April.")])
    write_chat(
        vault,
        "2024-03-07",
        [("Alice Chen", "Decision: we move the public launch to Tuesday 23 April."), ("Bob Stone", "Lunch at noon?")],
    )
    write_chat(vault, "2024-02-01", [("Bob Stone", "The staging cluster is down again, looking into it now.")])
    asked = datetime(2024, 3, 12, 10)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        coming = memory.walk("What will we do in April?", limit=5, reference_time=asked)
        assert coming["query"]["time_window"]["start"] == "2024-04-01T00:00:00Z"
        assert coming["query"]["window_ahead"] is True
        assert [h["content"] for h in coming["hits"][:2]] == [
            "Decision: we move the public launch to Tuesday 23 April.",
            "Target for the public launch is still Tuesday 9 April.",
        ]
        assert "Nothing in the memory falls inside this window yet" in format_evidence(coming)
        last = memory.walk("What happened in April?", limit=5, reference_time=asked)
        assert last["query"]["time_window"]["start"] == "2023-04-01T00:00:00Z", "an April the memory holds"
        assert last["query"]["window_ahead"] is False and "tomatoes" in last["hits"][0]["content"]
        will = memory.walk("What did Will say in April?", limit=5, reference_time=asked)["query"]
        assert will["time_window"]["start"] == "2023-04-01T00:00:00Z", "Will is a name, and the question asks what was"
        week = memory.walk("What are we doing next week?", limit=5, reference_time=asked)
        assert week["query"]["window_ahead"] is True and week["hits"]
        # nothing searched: the days before the question tell of the week to come, not February
        assert all("2024-02-27" <= h["time_range"]["start"] < "2024-03-12T10" for h in week["hits"])
        assert len(week["hits"]) == 3 and week["hits"][0]["content"].startswith("Decision"), "the latest said first"


def test_the_may_bank_holiday_is_a_day_in_may(vault: Path) -> None:
    """"What happens on the May bank holiday?" read "May" as the verb: no window, and no word
    of the month searched (a stop word), so August's bank holiday came first."""
    write_chat(vault, "2024-03-01", [("Alice Chen", "The office is closed on the bank holiday, 6 May, and we all take the Friday off.")])
    write_chat(vault, "2024-03-04", [("Bob Stone", "Bank holiday in August: the team goes to the coast.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What happens on the May bank holiday?", reference_time=datetime(2024, 3, 12, 10))
    assert result["query"]["time_window"]["start"] == "2024-05-01T00:00:00Z"
    assert result["query"]["window_ahead"] is True
    assert result["hits"][0]["content"].startswith("The office is closed"), [h["content"] for h in result["hits"]]


def test_with_no_word_matched_a_message_naming_a_day_ahead_outranks_the_nearest_vector(vault: Path) -> None:
    """"What happens on the May bank holiday?": no message says "bank holiday", nor can one say
    "May" to the index (a stop word). The nearest vector, a long weekend off, scored in full
    above "the final invoices by 10 May", the one message of the window."""
    write_chat(vault, "2024-03-05", [("Alice Chen", "We should all take a long weekend off work and rest, a real break by the sea."),
                                     ("Bob Stone", "Lunch at noon?")])  # fmt: skip
    write_chat(vault, "2024-03-11", [("Helen Okafor", "Please send me the final invoices by 10 May."), ("Mei Chen", "Dinner on Sunday at ours.")])
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("What happens on the May bank holiday?", reference_time=datetime(2024, 3, 12, 10))["hits"]
    assert hits[0]["content"] == "Please send me the final invoices by 10 May.", [h["content"] for h in hits]
    assert hits[0]["breakdown"]["names_window_day"] and hits[1]["breakdown"]["ungrounded"]


def test_what_was_planned_for_a_month_still_ahead_is_what_was_said_of_it(vault: Path) -> None:
    """"What did we plan for April?" asked in March of a memory begun in March read last April,
    which holds nothing: what was planned for April was said before it, of the coming one.
    "What did we do in April?" still asks of the last one."""
    write_chat(vault, "2024-03-04", [("Alice Chen", "Target for the public launch is still Tuesday 9 April.")])
    write_chat(
        vault,
        "2024-03-07",
        [("Alice Chen", "Decision: we move the public launch to Tuesday 23 April."), ("Bob Stone", "Lunch at noon?")],
    )
    asked = datetime(2024, 3, 12, 10)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        planned = memory.walk("What did we plan for April?", limit=5, reference_time=asked)
        assert planned["query"]["time_window"]["start"] == "2024-04-01T00:00:00Z"
        assert planned["query"]["window_ahead"] is True
        assert planned["hits"][0]["content"].startswith("Decision: we move"), [h["content"] for h in planned["hits"]]
        decided = memory.walk("What did we decide for April?", limit=5, reference_time=asked)["query"]
        assert decided["time_window"]["start"] == "2024-04-01T00:00:00Z"
        done = memory.walk("What did we do in April?", limit=5, reference_time=asked)["query"]
        assert done["time_window"]["start"] == "2023-04-01T00:00:00Z" and done["window_ahead"] is False
        read = memory.walk("What book did we read in April?", limit=5, reference_time=asked)["query"]
        assert read["time_window"]["start"] == "2023-04-01T00:00:00Z", "a book is no plan"
        agreed = memory.walk("What did we agree in April?", limit=5, reference_time=asked)["query"]
        assert agreed["time_window"]["start"] == "2023-04-01T00:00:00Z", "agreed then, not planned for it"


def test_a_thing_named_by_its_quarter_is_no_time_window(vault: Path) -> None:
    """"What is in the Q2 budget?" asked in August read Q2 as April to June: the budget, sent in
    March, was outside it and ranked below the quarter's small talk."""
    write_chat(vault, "2024-03-11", [("Alice Chen", "Here is the budget for Q2: 18,000 euros, ads from 22 April.")])
    write_chat(vault, "2024-05-02", [("Bob Stone", "Q2 is off to a good start, the new hires are in."), ("Mei Chen", "nice")])
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("What is in the Q2 budget?", reference_time=datetime(2024, 8, 1, 9))
    assert result["query"]["time_window"] is None
    assert "18,000" in result["hits"][0]["content"]


def test_the_days_ahead_are_told_by_the_messages_that_name_them(vault: Path) -> None:
    """"What are we doing next week?" ranked the last two weeks' messages by length alone; the
    two that name a day of next week ("Friday 21 March") were 4th and below. "What will we do on
    Friday?" read last Friday. A day begun with nothing in it yet ("today" at breakfast) had no
    hits at all."""
    write_chat(vault, "2025-03-06", [("Will Ash", "Next week I'm at the dentist on Tuesday, so no school run.")])
    write_chat(vault, "2025-03-08", [("Alice Chen", "Change of plan: Lisbon is off, we're going to Porto in April instead, flying 15 April.")])
    write_chat(vault, "2025-03-10", [("May Chen", "Team dinner is on Friday 21 March at Luigi's."), ("Bob Stone", "ok")])
    write_chat(vault, "2025-03-11", [("Bob Stone", "The team meeting moved to Thursday 20 March."),
                                     ("Will Ash", "Bring the cake on Friday, it's Ana's birthday!")])  # fmt: skip
    asked = datetime(2025, 3, 12, 12)  # a Wednesday
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        week = memory.walk("What are we doing next week?", limit=5, reference_time=asked)
        assert (week["query"]["time_window"]["start"], week["query"]["window_ahead"]) == ("2025-03-17T00:00:00Z", True)
        named = {h["content"] for h in week["hits"][:2]}
        assert named == {"The team meeting moved to Thursday 20 March.", "Team dinner is on Friday 21 March at Luigi's."}
        assert all(h["breakdown"]["names_window_day"] for h in week["hits"][:2])
        friday = memory.walk("What will we do on Friday?", limit=5, reference_time=asked)
        assert friday["query"]["time_window"]["start"] == "2025-03-14T00:00:00Z", "the coming Friday"
        for question in ("What time does the cake come on Friday?", "Anything on Friday?"):
            assert memory.walk(question, reference_time=asked)["query"]["time_window"]["start"] == "2025-03-14T00:00:00Z"
        past = memory.walk("What did we eat on Friday?", reference_time=asked)["query"]["time_window"]
        assert past["start"] == "2025-03-07T00:00:00Z", "asked what was: the last one"
        assert friday["hits"][0]["content"].startswith("Bring the cake"), "its own Friday, not the 21st"
        today = memory.walk("What is happening today?", limit=5, reference_time=datetime(2025, 3, 13, 7))
        assert today["query"]["window_ahead"] is True and today["hits"], "begun, nothing in it yet: what was said before"


def test_a_message_names_the_days_it_tells_of_from_when_it_was_written() -> None:
    from vaultmind.retrieval.timeparse import TimeWindow
    from vaultmind.retrieval.windows import names_a_day_in

    week = TimeWindow(datetime(2025, 3, 17), datetime(2025, 3, 24), "next week")  # asked on Wednesday 12 March
    told = {
        ("Team dinner is on Friday 21 March.", datetime(2025, 3, 10, 9)): True,
        ("Next week I'm at the dentist on Tuesday.", datetime(2025, 3, 6, 9)): False,  # that next week was the 10th's
        ("Next week I'm at the dentist.", datetime(2025, 3, 12, 9)): True,
        ("See you next weekend!", datetime(2025, 3, 12, 9)): True,
        ("See you this weekend!", datetime(2025, 3, 12, 9)): False,
        ("Let's meet tomorrow.", datetime(2025, 3, 16, 20)): True,
        ("Dinner on Friday 14 March.", datetime(2025, 3, 10, 9)): False,
        ("Dinner on Friday!", datetime(2025, 3, 18, 9)): True,
    }
    for (text, written), expected in told.items():
        assert names_a_day_in(week, text, written) is expected, text
    sunday = TimeWindow(datetime(2025, 3, 16), datetime(2025, 3, 17), "on sunday")
    assert not names_a_day_in(sunday, "Bin collection is Thursday this week.", datetime(2025, 3, 12, 9)), "a week names no day"
    assert names_a_day_in(sunday, "Brunch on Sunday?", datetime(2025, 3, 12, 9))


def test_the_evidence_says_whether_the_memory_or_only_the_items_miss_the_window() -> None:
    window = {"start": "2024-06-19T00:00:00Z", "end": "2024-06-20T00:00:00Z", "text": "yesterday"}
    hits = [{"content": "harbor survey", "wikilink": "[[n#^a]]", "time_range": {"start": "2024-06-10T10:00:00Z"}}]
    held = format_evidence({"hits": hits, "query": {"time_window": window, "window_empty": False}})
    assert "None of the items below falls inside this window." in held and "Nothing in the memory" not in held
    empty = format_evidence({"hits": hits, "query": {"time_window": window, "window_empty": True}})
    assert "Nothing in the memory falls inside this window" in empty


def test_a_question_s_tense_is_read_from_its_auxiliaries() -> None:
    from vaultmind.retrieval.asked_window import question_tense

    assert question_tense("What will we do in May?") == "future"
    assert question_tense("Will the launch move again?") == "future"
    assert question_tense("where are we going to stay in June?") == "future"
    assert question_tense("what's upcoming in June?") == "future"
    assert question_tense("What did Will say in May?") == "past"
    assert question_tense("What was decided on 7 March?") == "past"
    assert question_tense("When did she plan on going to Paris?") == "past"
    assert question_tense("What is happening in April?") == "present"
    assert question_tense("I'd like to know what's on in April") == "present", "'d is no past"
    assert question_tense("what happened in April?") == "past"
    assert question_tense("Lucinda's party in May") is None


def test_a_hit_on_a_section_cites_the_block_id_of_the_line_that_answers(vault: Path) -> None:
    """A line with its own block id is cited by it: the link opens that line, not the top of
    its section (kept in `breakdown.section_anchor`)."""
    write(
        vault,
        "Work/Long list.md",
        "# Long list\n\n- The snow tyres are stored at Hendrik's garage in Almere. ^tyres\n"
        "- The spare key for the van is in the blue tin\n  on the top shelf. ^vankey\n- Nothing else here.\n",
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        walked = memory.walk("where is the spare van key?")["hits"][0]
        searched = memory.search("snow tyres")["hits"][0]
        other = memory.search("nothing else")["hits"][0]
    assert (walked["anchor"], walked["breakdown"]["section_anchor"]) == ("^vankey", "#Long list")
    assert walked["wikilink"] == "[[Work/Long list#^vankey]]" and walked["link"].endswith("%23%5Evankey")
    assert searched["anchor"] == "^tyres"
    assert other["anchor"] == "#Long list", "a line without a block id: the section"


def test_a_block_id_inside_code_is_never_cited(vault: Path) -> None:
    write(
        vault,
        "Crypto.md",
        "# Crypto\n\nThe key rotation runs monthly. ^rotation\n\n```python\nout = byte ^key\n```\n",
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert memory.search("out byte")["hits"][0]["anchor"] == "#Crypto", "not the ^key of the code line"
        assert memory.search("key rotation")["hits"][0]["anchor"] == "^rotation"


def test_a_shortened_item_fills_its_room_with_the_end_of_the_sentence_before() -> None:
    """When the sentence that answers is short and the one before it long, the room left is
    filled from a word of the one before, not left empty."""
    from vaultmind.retrieval.evidence import excerpt

    text = (
        "OK, let's not decide in chat. Bob, can you write up the migration estimate with the load testing "
        "plan and the staging costs for everyone? We decide at Thursday's launch sync."
    )
    cut = excerpt(text, 100, terms("when is the launch sync"))
    assert cut.startswith("… ") and cut.endswith("We decide at Thursday's launch sync.")
    assert 80 <= len(cut) <= 100 and "for everyone?" in cut
    url = "See https://drive.example/launch/budget/sheet/v2-final-final-really-final. The deposit is due by 15 March."
    assert excerpt(url, 70, terms("when is the deposit due")) == "… The deposit is due by 15 March.", "never from inside a word"


def test_a_word_of_a_name_the_question_resolved_is_not_missing(vault: Path) -> None:
    """"Harbour Hall" resolves (an alias) to the memory's Harbor Hall: "Harbour" had been named
    among the words the memory never mentions."""
    write(vault, "entities/org/harbor-hall.md", '---\nvaultmind: entity\nid: "org:harbor-hall"\nkind: org\n'
          "display_name: Harbor Hall\naliases:\n  - Harbour Hall\n---\n# Harbor Hall\n\nEvent venue on the quay.\n")
    write_slack_day(vault, "2024-03-06", [("Dana Park", "09:00", "The Harbor Hall deposit of 1,500 is due by 15 March.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.query("walk", {"query": "when is the Harbour Hall deposit due?", "evidence": True})
    assert [e["id"] for e in result["query"]["entities"]] == ["org:harbor-hall"]
    assert "Not in the memory" not in result["evidence"]


def test_a_heading_inside_a_section_that_holds_the_question_is_cited(vault: Path) -> None:
    """A section chunked with the headings after it ("Checklist" then "Rollback" and
    "Contacts") is cited at the heading whose part holds the question's words, after the
    section's own anchor (Obsidian reads the chain in note order); where the section's start
    holds them, it stays cited where it starts."""
    write(vault, "Runbook.md", "# Runbook\n\nOwner: Marco Ruiz.\n\n## Checklist\n\n1. Publish the blog post.\n2. Send the newsletter.\n\n"
          "## Rollback\n\nIf purchases fail, hide the paywall.\n\n## Contacts\n\n- Venue: Dana Whitfield, dana@hall.example\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hit = memory.search("venue contact Dana Whitfield")["hits"][0]
        assert hit["note_path"] == "Runbook.md" and hit["anchor"] == "#Runbook#Contacts", hit["anchor"]
        assert hit["wikilink"] == "[[Runbook#Runbook#Contacts]]"
        assert memory.search("what if purchases fail")["hits"][0]["anchor"] == "#Runbook#Rollback"
        assert memory.search("publish the blog post")["hits"][0]["anchor"] == "#Runbook#Checklist"
        assert memory.search("Marco Ruiz")["hits"][0]["anchor"] == "#Runbook"
    write(vault, "Runbook.md", "# Runbook\n\nOwner: Marco Ruiz. ^owner\n\n## Checklist\n\n1. Publish the blog post.\n\n"
          "## Contacts\n\n- Venue: Dana Whitfield, dana@hall.example\n- Budget: 2^10 euros\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()  # a block id elsewhere in the section, a caret in its text: the heading still
        assert memory.search("venue contact Dana Whitfield")["hits"][0]["anchor"] == "#Runbook#Contacts"


def test_a_heading_whose_name_repeats_in_the_section_is_cited_by_its_chain(vault: Path) -> None:
    """A part under the section's second "Notes" (under "Day 2") is cited by the chain that
    reaches it, "#Sync – März#Day 2#Notes" (it was cited at the section's top: a lone "#Notes"
    after it would open the first); the first "Notes" is cited by its name."""
    write(vault, "Work Notes/Sync – März.md", "# Sync – März\n\n## Notes\n\nAgenda and coffee order for the team.\n\n"
          "## Day 2\n\nWorkshop in the big room.\n\n### Notes\n\nThe hydrophone arrived on Tuesday.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hit = memory.search("when did the hydrophone arrive?")["hits"][0]
        assert hit["anchor"] == "#Sync – März#Day 2#Notes", hit["anchor"]
        assert hit["wikilink"] == "[[Work Notes/Sync – März#Sync – März#Day 2#Notes]]"
        assert memory.search("agenda coffee order")["hits"][0]["anchor"] == "#Sync – März#Notes"


def test_a_term_in_a_few_leaves_is_specific_however_small_the_memory(vault: Path) -> None:
    """In a memory of one note whose leaves all repeat its title, "tidepool" is in every leaf:
    near-ubiquitous by share, yet the most specific word the memory has, so it grounds a
    question; in a memory where a word is in a quarter of many leaves, it grounds nothing."""
    from tests.conftest import write
    from vaultmind.retrieval.evidence import SALIENT_FEW, salient_terms

    sections = "\n\n".join(f"## Part {i}\n\nThe tidepool launch plan, step {i}." for i in range(SALIENT_FEW - 1))
    write(vault, "Projects/Tidepool launch.md", f"# Tidepool launch\n\n{sections}\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        df, total = memory.leaves.document_frequency("tidepool")
        assert 0 < df < SALIENT_FEW and df / total > 0.25
        assert salient_terms(memory.leaves, ["tidepool"]) == ["tidepool"]
    for i in range(SALIENT_FEW):  # "tidepool" in more leaves, and more than a quarter of them
        write(vault, f"Notes/t{i}.md", f"The tidepool plan, take {i}.\n")
    write(vault, "Notes/survey.md", "The harbour survey is booked.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        df, total = memory.leaves.document_frequency("tidepool")
        assert df >= SALIENT_FEW and df / total > 0.25
        assert salient_terms(memory.leaves, ["tidepool"]) == []


def test_a_source_query_reordered_by_a_word_puts_the_leaves_that_say_it_first(vault: Path) -> None:
    """`query_source`'s query reordered its leaves by the dense signal alone: of a mailbox's
    messages, "undeliverable" put three Cyrillic and Latin one-liners before the bounce that
    said it (a static model's vector of a rare word is near nothing it should be). The word's
    leaves come first now, lexical and dense fused as `search` fuses them; the rest follow."""
    for name, text in (
        ("Privet", "Превел\n\n123"),
        ("Picture", "Hello\n\nAttachments: Картинка с очень, очень длинным предлинным именем"),
        ("English", "This line is in English\nА эта линия по-русски."),
        (
            "Bounce",
            "Delivery failed 10 attempts: info@example.net\n\nOriginal message follows.\n\nMIME-Version: 1.0\n"
            "From: support@afw.example.com\nSubject: Re: your order\n\n"
            "The message to info@example.net was undeliverable: the mailbox is full.",
        ),
        ("Weather", "Sunny all week, with a breeze from the west."),
    ):
        write(vault, f"Mail/{name}.md", text + "\n")  # as mail reads: no heading naming it
    memory = Memory.open(load_config(vault, embed_provider="static"))
    try:
        memory.sync()
        everything = memory.query("query_source", {"kind": "note"})
        ranked = memory.query("query_source", {"kind": "note", "query": "undeliverable", "limit": 3})
        assert ranked["total"] == everything["total"] == 5  # reordered, never filtered
        assert "undeliverable" in ranked["hits"][0]["content"]
        assert ranked["hits"][0]["breakdown"]["bm25_rank"] == 1
        rest = memory.query("query_source", {"kind": "note", "query": "undeliverable"})
        assert sorted(h["node_id"] for h in rest["hits"]) == sorted(h["node_id"] for h in everything["hits"])
    finally:
        memory.close()


def test_search_says_the_words_the_memory_never_mentions_as_walk_does(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`query search zebrafish` answered unrelated hits with no word that the memory never says
    "zebrafish" (walk's `query.unknown`): a check that an ingest worked "found" other notes."""
    write(vault, "a.md", "# Ferry\n\nThe ferry to Ischia leaves at nine.\n")
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        unknown = memory.query("search", {"query": "zebrafish"})
        known = memory.query("search", {"query": "ferry zebrafish"})
        walked = memory.query("walk", {"query": "ferry zebrafish"})
    assert unknown["query"]["unknown"] == ["zebrafish"]
    assert known["query"]["unknown"] == walked["query"]["unknown"] == ["zebrafish"]
    assert known["hits"][0]["note_path"] == "a.md"
    print_hits(unknown)
    assert capsys.readouterr().out.startswith("not in the memory: zebrafish\n")


def test_the_words_naming_the_sources_are_read_once_per_state_of_the_index(vault: Path) -> None:
    """Each search or walk with a word the memory does not know read every note again for the
    kinds of its sources (a search took twice as long); kept per state of the index, a chat
    ingested since is known at once."""
    write(vault, "a.md", "# Ferry\n\nThe ferry to Ischia leaves at nine.\n")
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        assert memory.query("search", {"query": "ferry chat zebrafish"})["query"]["unknown"] == ["chat", "zebrafish"]
        kept = memory.index.view("source_words")
        assert kept is not None and kept[0] == memory.index.generation
        write_chat(vault, "2024-03-04", [("Bob Stone", "The ferry was late.")])
        memory.sync()
        assert memory.query("search", {"query": "ferry chat zebrafish"})["query"]["unknown"] == ["zebrafish"]
