"""The evidence block's budget bounds every answer it gives, a question without grounding is
answered in its own words, and the command naming a summary's other refs runs on the vault."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from tests.conftest import write
from vaultmind.index.lexical import terms
from vaultmind.markdown.tokens import approx_tokens
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
        assert approx_tokens(_ungrounded(budget)) <= budget
    assert _ungrounded(20).startswith("No grounding")


def test_a_budget_too_small_for_the_first_item_says_so_within_the_budget() -> None:
    hit = {"content": "The renewal price is 14,200 euros, up from 12,900. " * 4, "wikilink": "[[n#^a]]", "author": "Elena Rossi"}
    for budget in (20, 12, 6, 2):
        said = format_evidence({"hits": [hit, hit], "query": {}}, budget_tokens=budget)
        assert "renewal" not in said and approx_tokens(said) <= budget
    assert format_evidence({"hits": [hit], "query": {}}, budget_tokens=20).startswith("The token budget (20) is too small")
    assert approx_tokens(format_evidence({"hits": [], "query": {}}, budget_tokens=6)) <= 6


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
