"""The evidence block's budget bounds every answer it gives, a question without grounding is
answered in its own words, and the command naming a summary's other refs runs on the vault."""

from __future__ import annotations

import hashlib
import re
import shlex
from pathlib import Path
from typing import Any

from tests.conftest import write
from vaultmind.index.lexical import terms
from vaultmind.markdown.tokens import count_tokens
from vaultmind.memory import Memory
from vaultmind.retrieval.evidence import format_evidence, listed_refs

QUESTION = "tell me about kubernetes autoscaling"


def _ungrounded(budget: int, question: str | None = QUESTION) -> str:
    result: dict[str, Any] = {"hits": [], "query": {"terms": sorted(set(terms(QUESTION)))}}
    return format_evidence(result, budget_tokens=budget, grounded=False, unknown=["kubernetes"], question=question)


def test_no_grounding_stays_within_the_budget_and_names_the_words_as_asked() -> None:
    full = _ungrounded(1000)
    assert full.startswith("Not in the memory: kubernetes.\nNo grounding") and "kubernetes, autoscaling" in full
    assert "kubernet," not in full and "autoscal," not in full, "the words as asked, not their stems"
    assert "searched" not in _ungrounded(1000, question=None), "no stems without the question"
    for budget in (40, 20, 8, 3, 1):
        assert count_tokens(_ungrounded(budget)) <= budget
    assert _ungrounded(20).startswith("No grounding")


def test_a_budget_too_small_for_the_first_item_says_so_within_the_budget() -> None:
    hit = {"content": "The renewal price is 14,200 euros, up from 12,900. " * 4, "wikilink": "[[n#^a]]", "author": "Elena Rossi"}
    for budget in (20, 12, 6, 2):
        said = format_evidence({"hits": [hit, hit], "query": {}}, budget_tokens=budget)
        assert "renewal" not in said and count_tokens(said) <= budget
    assert format_evidence({"hits": [hit], "query": {}}, budget_tokens=40).startswith("The token budget (40) is too small")
    assert count_tokens(format_evidence({"hits": [], "query": {}}, budget_tokens=6)) <= 6


def test_the_command_listing_a_summarys_other_refs_names_the_vault(tmp_path: Path) -> None:
    vault = tmp_path / "My Notes"
    refs = [f"slack://C1/{i}" for i in range(5)]
    summary = {"content": "The team planned the offsite.", "wikilink": "[[s]]", "node_id": "s-1f", "source_refs": refs}
    command = f"vaultmind query drill s-1f --vault {shlex.quote(str(vault))}"
    assert listed_refs(summary, vault)[-1] == f"and 3 more (`{command}`)"
    block = format_evidence({"hits": [summary], "query": {}}, budget_tokens=500, vault=vault)
    assert f"and 3 more (`{command}`)" in block


def test_a_walk_asked_for_evidence_names_the_words_as_asked(vault: Path, memory: Memory) -> None:
    """The mode passes the question and the vault to the formatter: the "no grounding" answer
    of a real walk names the words as they were asked (it listed their stems)."""
    write(vault, "garden.md", "# Garden\n\nThe tomatoes need water on Friday.\n")
    memory.sync()
    evidence = memory.query("walk", {"query": "how much is kubernetes autoscaling?", "evidence": True})["evidence"]
    assert "(searched: how, much, kubernetes, autoscaling)" in evidence


def test_the_budget_holds_for_cjk_text_and_hashes() -> None:
    """A budget is in tokens as `count_tokens` counts them, not characters / 4: Chinese text
    (more than a token a character) and a commit hash (close to one) are cut to fit it."""
    chinese = {"content": "我们昨天在北京见面，讨论了下个月的旅行计划。她说公寓的租约在三月到期，需要尽快续签。" * 30, "wikilink": "[[租约#^a]]"}
    commits = {"content": "Deployed " + " ".join(hashlib.sha1(str(i).encode()).hexdigest() for i in range(40)), "wikilink": "[[deploys#^b]]"}
    for hit in (chinese, commits):
        for budget in (1000, 400, 200):
            said = format_evidence({"hits": [hit, hit], "query": {}}, budget_tokens=budget)
            assert "[1]" in said and count_tokens(said) <= budget
    # the whole Chinese note is about 1,100 characters: it fits in len/4 = 275 "tokens" but not in 300
    block = format_evidence({"hits": [chinese], "query": {}}, budget_tokens=300)
    assert "shortened" in block and count_tokens(block) <= 300


def test_a_long_item_past_the_budget_left_is_given_as_its_passage_that_answers() -> None:
    """A long email is one item: when it does not fit in what the items above it left, the
    passage holding the question's words is given, marked shortened, with its citation, rather
    than the item dropped; an item holding none of them is still left out and named."""
    points = " ".join(f"Point {n}: about the agenda of the committee meeting." for n in range(60))
    mail = {
        "content": points + " Finally, the spare key for the boathouse is hidden under the blue flower pot.",
        "wikilink": "[[sources/email/committee#^m-1]]",
        "author": "Ana",
    }
    first = {"content": "The boathouse opens at nine on Saturdays.", "wikilink": "[[boathouse#^a]]"}
    other = {"content": "agenda " * 300, "wikilink": "[[agenda#^b]]"}
    query = {"content_terms": terms("where is the spare key for the boathouse")}
    block = format_evidence({"hits": [first, mail, other], "query": query}, budget_tokens=200)
    assert block.startswith("[1] \nThe boathouse opens at nine")
    assert "[2] Ana · shortened\n… " in block and "spare key for the boathouse is hidden under the blue flower pot" in block
    assert "↳ [[sources/email/committee#^m-1]]" in block and "Point 1:" not in block
    assert block.endswith("\nLeft out for the budget: [3].") and count_tokens(block) <= 200
    assert "Left out for the budget: [2]" in format_evidence({"hits": [first, mail], "query": {}}, budget_tokens=200)


def test_a_code_blocks_lines_stay_lines_in_the_evidence(vault: Path, memory: Memory) -> None:
    """A fenced block's lines are kept apart in an item (they were joined into one line: read as
    shell, every command fell inside the `# comment` above it); the prose around stays one line."""
    write(
        vault,
        "Runbooks/Kangaroo.md",
        "# Kangaroo\n\nTo roll back the kangaroo service,\nrun:\n\n```sh\n# stop traffic first\n./kangaroo drain --all\n"
        "./kangaroo rollback --to previous\n```\n\nThen check the dashboards.\n",
    )
    memory.sync()
    evidence = memory.query("walk", {"query": "how do I roll back the kangaroo service?", "evidence": True})["evidence"]
    assert "# stop traffic first\n./kangaroo drain --all\n./kangaroo rollback --to previous\n```" in evidence
    assert "To roll back the kangaroo service, run:" in evidence


def test_a_code_block_left_open_is_closed_in_its_item(vault: Path, memory: Memory) -> None:
    """A note whose last code block is never closed (it runs to the note's end, as in Obsidian):
    its item closes it, so the citation and the items after it are not read as part of the code."""
    write(
        vault,
        "Runbooks/Wombat.md",
        "# Wombat\n\nTo restart the wombat queue, run:\n\n~~~~sh\n./wombat restart --queue\n./wombat status\n",
    )
    memory.sync()
    evidence = memory.query("walk", {"query": "how do I restart the wombat queue?", "evidence": True})["evidence"]
    assert "~~~~sh\n./wombat restart --queue\n./wombat status\n~~~~\n   ↳ [[Runbooks/Wombat" in evidence


def test_the_least_budget_a_too_small_answer_names_is_accepted() -> None:
    """The size "budget too small" asks for was worked out apart from the cut (its "…" marks,
    its passage): asked with it, the answer was the same refusal. Asked with it now, the block
    holds the first item."""
    hit = {
        "content": "The Tidepool launch is on 23 April; the launch evening is at Harbor Hall, the upstairs room, from 7 pm.",
        "wikilink": "[[Projects/Tidepool launch#Dates]]",
        "author": "Marco Ruiz",
    }
    result = {"hits": [hit, hit], "query": {"content_terms": ["tidepool", "launch", "evening"]}}
    asked = []
    for budget in range(20, 90):
        said = format_evidence(result, budget_tokens=budget)
        found = re.search(r"at least (\d+)", said)
        if said.startswith("The token budget") and found is not None:
            asked.append(int(found.group(1)))
    assert asked, "some budgets are too small"
    for least in set(asked):
        assert format_evidence(result, budget_tokens=least).startswith("[1] "), least
