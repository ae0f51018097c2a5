"""`walk` reading answers: the part of a hit that holds the answer a question asks for is
cited, a sum is an answer only where it is said of what is asked, and "why…?" asks for a reason."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from vaultmind.config import load_config
from vaultmind.index.lexical import terms
from vaultmind.memory import Memory
from vaultmind.retrieval.answer_type import states_amount

from .conftest import write, write_chat

AT = datetime(2024, 3, 12, 12)


def test_an_address_is_cited_at_the_heading_that_holds_it(vault: Path) -> None:
    """"What is Dana's email address?": every word left is her name, and she writes in the
    memory (so no search word is left). The runbook section that holds the address among its
    checklist and rollback is cited at its "Contacts", where the address is."""
    write(
        vault,
        "Runbook.md",
        "# Runbook\n\n## Launch day checklist\n\n1. Set the release live in the store.\n2. Buy a subscription on a real device.\n\n"
        "## Rollback\n\nHide the paywall with the remote flag and ship a hotfix.\n\n"
        "## Contacts\n\n- Venue: Dana Whitfield, dana@harborhall.example\n- Finance: Helen Okafor, helen@fernhill.example\n",
    )
    write_chat(vault, "2024-03-06", [("Dana Whitfield", "The Loft is held for you on 9 April."), ("Alice Chen", "Thank you!")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What is Dana's email address?", limit=3, reference_time=AT)
        assert result["query"]["content_terms"] == []
        first = result["hits"][0]
        assert first["note_path"] == "Runbook.md"
        assert first["anchor"].endswith("#Contacts"), first["anchor"]


def test_a_sum_said_of_something_else_in_the_message_is_no_answer(vault: Path) -> None:
    """"How much does the second staging cluster cost?": Bob's "€1,200 for a load-testing run
    on staging" names staging beside a sum, but his next sentence is the one about the second
    cluster, and has no sum; Alice's "The second staging cluster is another €900 a month"
    answers, and comes first."""
    write_chat(
        vault,
        "2024-03-05",
        [
            ("Bob Stone", "Got a minute on the budget? The migration estimate is done."),
            ("Bob Stone", "€1,200 for a load-testing run on staging (two days of bigger instances).\nAnd I'd like to keep the second staging cluster through April."),
            ("Alice Chen", "The whole launch budget is €18,000."),
            ("Alice Chen", "So the load test is fine. The second staging cluster is another €900 a month, though."),
            ("Bob Stone", "We could drop it right after launch week."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("How much does the second staging cluster cost?", limit=3, reference_time=AT)
        hits = result["hits"]
        assert "€900" in hits[0]["content"]
        by_text = {hit["content"][:8]: hit["breakdown"]["answer"] for hit in hits}
        assert by_text["€1,200 f"] is False


def test_a_sum_is_said_of_what_its_sentence_names_not_of_a_signature() -> None:
    """A sentence naming more of the question's words, among them all the sum's sentence
    names, tells what the sum is not about; one naming other words of it (a signature) does
    not."""
    cluster = frozenset(terms("second staging cluster cost"))
    assert not states_amount("€1,200 for a run on staging.\nAnd I'd like to keep the second staging cluster.", cluster)
    assert states_amount("So the load test is fine. The second staging cluster is another €900 a month.", cluster)
    catering = frozenset(terms("catering Harbor Hall"))
    assert states_amount("Catering is quoted separately, about €18 a head.\n\nDana Whitfield\nEvents Manager, Harbor Hall", catering)


def test_a_why_question_puts_a_reason_before_the_bare_statement(vault: Path) -> None:
    """"Why did we move the launch?": the meeting's decision says what was done, in the
    question's words; the project note's line that says it and why ("so the payments migration
    and the store review both fit") comes first, and a chat line that gives no reason does not
    hold the answer."""
    write(
        vault,
        "Meetings/Launch sync.md",
        "---\ndate: 2024-03-07\n---\n# Launch sync\n\n## Decisions\n\n- We move the launch from 9 April to 23 April.\n",
    )
    write(
        vault,
        "Projects/Tidepool.md",
        "# Tidepool\n\n## Timeline\n\nOn 7 March we moved the launch to 23 April, so the payments migration and the store review both fit.\n",
    )
    write_chat(vault, "2024-03-07", [("Alice Chen", "We moved the launch to 23 April."), ("Bob Stone", "Noted.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("Why did we move the launch?", limit=3, reference_time=AT)
        assert result["query"]["answer_kind"] == "reason"
        hits = result["hits"]
        assert hits[0]["note_path"] == "Projects/Tidepool.md"
        assert [hit["breakdown"]["answer"] for hit in hits if hit["note_path"] != "Projects/Tidepool.md"] == [False, False]
