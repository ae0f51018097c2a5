"""Walk over a vault of several kinds of source: a question's window orders the notes that
lead, a platform's name is no word the memory lacks, and a section's prose, not its code,
chooses the heading a hit cites."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write, write_slack_day
from vaultmind.ingest.model import SourceBatch
from vaultmind.ingest.writer import write_batches
from vaultmind.markdown.render import Message, SourceMeta
from vaultmind.memory import Memory


def _email(vault: Path, day: str, subject: str, text: str) -> None:
    meta = SourceMeta(kind="email", source_id="mbox:me/inbox", scope="mbox/me", title=subject)
    mail = Message("<a@x>", "old@example.com", f"{day}T09:00:00Z", text, "mid:a@x", subject=subject)
    write_batches(vault, [SourceBatch(meta=meta, messages=(mail,), bucket="thread", note_name=f"{day} {subject}")])


def test_a_note_outside_the_window_never_leads_a_better_hit_inside_it(vault: Path, memory: Memory) -> None:
    write_slack_day(
        vault,
        "2025-01-14",
        [("Dana", "10:00", "Morning all, the deploy went out fine."), ("Marco", "10:05", "Thanks Dana, I wrote the release notes.")],
    )
    write_slack_day(vault, "2025-01-20", [("Priya", "09:00", "Who wrote the onboarding doc?")])
    # it holds every word of the question (its note covers it), but was written in 2012
    _email(vault, "2012-05-02", "Slack channel", "I wrote to the slack channel about the outage, see the channel archive.")
    memory.reindex()
    hits = memory.query("walk", {"query": "who wrote in the slack channel in January 2025?", "limit": 5})["hits"]
    old = next(h for h in hits if h["note_path"].startswith("sources/email/"))
    inside = [h for h in hits if h["breakdown"]["time_factor"] == 1.0]
    assert old["breakdown"]["time_factor"] < 1.0 and old["breakdown"]["note_coverage"] == 1.0
    assert max(h["score"] for h in inside) > old["score"]
    assert hits[0]["score"] == max(h["score"] for h in hits), "the best hit inside the window leads"
    assert hits[0]["note_path"].startswith("sources/chat/slack/")


def test_a_platform_the_memory_holds_is_not_a_word_it_lacks(vault: Path, memory: Memory) -> None:
    write_slack_day(vault, "2025-01-14", [("Dana", "10:00", "The deploy went out fine.")])
    _email(vault, "2025-01-15", "Deploy", "The deploy notes are attached.")
    memory.reindex()
    asked = memory.query("walk", {"query": "what did the slack and email and whatsapp say of the deploy?", "evidence": True})
    # the memory holds Slack messages and emails, whose text never names them; no WhatsApp chat
    assert asked["query"]["unknown"] == ["whatsapp"]
    assert asked["hits"] and asked["hits"][0]["note_path"].startswith("sources/")


def test_a_section_cites_the_heading_whose_prose_answers_not_a_code_comment(vault: Path, memory: Memory) -> None:
    write(
        vault,
        "Wedding.md",
        "# Wedding\n\n## Budget\n\nThe venue deposit is paid.\n\n```python\n# guest list: who owns it? listing below\n"
        "costs = {}\n```\n\n## Guests\n\nMaya keeps the guest list and sends the invites.\n",
    )
    memory.reindex()
    hits = memory.query("walk", {"query": "who owns the guest list?", "limit": 3})["hits"]
    assert hits[0]["note_path"] == "Wedding.md"
    assert hits[0]["anchor"] == "#Wedding#Guests"
