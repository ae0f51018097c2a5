"""walk: questions about notes of yours by their date, a verb's doer, and the plan for a window ahead."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.index.lexical import terms
from vaultmind.markdown.note import parse_note, user_note_time
from vaultmind.memory import Memory
from vaultmind.retrieval.evidence import format_evidence
from vaultmind.retrieval.people import introduces, introduction
from vaultmind.retrieval.wording import agent_nouns, hedges, own_writing, vague_times

from .conftest import write, write_chat

MARCH_12 = datetime(2024, 3, 12, 12)


@pytest.mark.parametrize(
    ("path", "front", "when"),
    [
        ("Daily/2024-03-07.md", {}, "2024-03-07T12:00:00Z"),
        ("Daily/2024/03/2024-03-07 Thursday.md", {}, "2024-03-07T12:00:00Z"),
        ("Journal/20240307.md", {}, "2024-03-07T12:00:00Z"),
        ("Ideas.md", {"date": "2024-03-07"}, "2024-03-07T12:00:00Z"),
        ("Ideas.md", {"created": "2024-03-07T09:30"}, "2024-03-07T09:30:00Z"),
        ("Ideas.md", {"created": "2024-03-07 09:30:00+02:00"}, "2024-03-07T07:30:00Z"),
        ("2024-03-08.md", {"date": "2024-03-07"}, "2024-03-07T12:00:00Z"),  # the property wins
        ("2024-03-08.md", {"date": "{{date}}"}, "2024-03-08T12:00:00Z"),  # a template's placeholder: the name
        ("Ideas.md", {"date": "soon"}, None),
        ("2024-03-07 to 2024-03-09.md", {}, None),  # two dates: which one?
        ("2024-02-30.md", {}, None),
        ("Budget 2024.md", {}, None),
        ("Invoice 123456789.md", {}, None),
        ("2024-03.md", {}, None),
    ],
)
def test_a_note_of_yours_is_dated_by_its_property_else_its_file_name(path: str, front: dict[str, str], when: str | None) -> None:
    assert user_note_time(path, front) == when


def test_only_notes_of_yours_take_a_date_from_their_name() -> None:
    daily = parse_note("Daily/2024-03-07.md", "# Thursday\n\nCalled the plumber.\n")
    entity = parse_note("entities/person/2024-03-07.md", "# Someone\n\nA person.\n")
    book = parse_note("Books/Dune.md", "---\nauthor: Frank Herbert\ncreated: 2024-03-07\n---\n")
    assert [leaf.timestamp for leaf in daily.leaves] == ["2024-03-07T12:00:00Z"]
    assert [leaf.timestamp for leaf in entity.leaves] == [None]
    assert [leaf.timestamp for leaf in book.leaves] == ["2024-03-07T12:00:00Z"], "a properties leaf too"


def _notes(vault: Path) -> None:
    write(vault, "Daily/2024-03-07.md", "# Thursday\n\n- Called the plumber about the leaking tap.\n- Paid the gym.\n")
    write(vault, "Ideas/boat rental.md", "---\ndate: 2024-02-20\n---\n# Boat rental\n\nAn app to rent dinghies by the hour.\n")
    write(vault, "Someday.md", "# Someday\n\nLearn to sail a catamaran; visit the plumber museum.\n")
    long = "The staging cluster is back up after the storage migration; the nightly backups ran twice, and the load test moves to Friday morning at nine."
    write_chat(vault, "2024-03-07", [("Bob Stone", "Lunch at noon?"), ("Bob Stone", long)])


def test_a_time_window_finds_a_daily_note_and_leaves_undated_notes_be(vault: Path) -> None:
    _notes(vault)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("What did I note last week?", limit=5, reference_time=MARCH_12)
        first = result["hits"][0]
        assert first["note_path"] == "Daily/2024-03-07.md" and first["breakdown"]["inside"]
        assert first["breakdown"]["author"] == 1.0, "the asker wrote their notes, not Bob's long message"
        assert result["query"]["content_terms"] == [], "'note' asks for the asker's notes, it is not their topic"
        hits = memory.walk("plumber on 7 March", limit=5, reference_time=MARCH_12)["hits"]
        assert hits[0]["note_path"] == "Daily/2024-03-07.md"
        someday = next(h for h in hits if h["note_path"] == "Someday.md")
        assert someday["breakdown"]["time_factor"] == 1.0, "a note without a date is not outside any window"
        times = dict(memory.index.query("SELECT note_path, any_value(ts) FROM leaves GROUP BY note_path"))
        assert times["Someday.md"] is None
        assert times["Ideas/boat rental.md"] == datetime(2024, 2, 20, 12)


def test_a_day_none_of_your_notes_is_dated_in_is_said_so(vault: Path) -> None:
    """"What did I write in my daily note on 11 March?" when the only daily note is of 7 March:
    the answer says none of your notes is dated that day (the day holds a message), in the
    listing's query and the evidence block; "daily" and "note" name your notes, not a topic."""
    _notes(vault)
    write_chat(vault, "2024-03-11", [("Bob Stone", "The load test passed, by the way.")])
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("What did I write in my daily note on 11 March?", limit=3, reference_time=MARCH_12)
        query = result["query"]
        assert query["window_none_yours"] and not query["window_empty"]
        assert query["content_terms"] == ["11", "march"]
        assert "None of your notes is dated inside this window" in format_evidence(result)
        dated = memory.walk("What did I write in my daily note on 7 March?", limit=3, reference_time=MARCH_12)
        assert not dated["query"]["window_none_yours"]
        assert dated["hits"][0]["note_path"] == "Daily/2024-03-07.md"


def test_own_writing_verbs_are_the_askers() -> None:
    assert own_writing("What did I write on Thursday?") == {"write"}
    assert own_writing("What is in my daily note?") == set(terms("daily note"))
    assert own_writing("What is in my journal?") == {"journal"}
    assert own_writing("what have I noted about the boat?") == {"note"}
    assert own_writing("What did Bob write about the boat?") == set()
    assert own_writing("Where is the note about the boat?") == set()


def test_a_hedge_is_how_sure_the_asker_is() -> None:
    assert hedges("Would Lucinda likely pursue writing?") == {"like"}, "the stemmer reads 'likely' as 'like'"
    assert hedges("What might Bob probably need, perhaps?") == set(terms("probably perhaps"))
    assert hedges("Would Tim likely like the book?") == set(), "the second 'like' is asked"
    assert hedges("What does Alice like?") == set()


def test_likely_is_not_searched_as_like(vault: Path) -> None:
    """"Would Alice likely enjoy a boat trip?" asks about boats and trips: "likely" says how sure
    the asker is, and searched as "like" (its stem) it had matched "I'd like a coffee." as well
    as the boat trip. "What would Alice like…?" still asks for what she likes."""
    write_chat(vault, "2024-03-01", [("Alice", "I'd like a coffee, I like it strong."),
                                     ("Bob", "Sure, one strong coffee coming up."),
                                     ("Alice", "Booked a boat trip round the bay for Sunday!")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("Would Alice likely enjoy a boat trip?", limit=3, reference_time=MARCH_12)
        assert "like" not in result["query"]["content_terms"], result["query"]
        assert result["hits"][0]["content"].startswith("Booked a boat trip")
        coffee = [h for h in result["hits"] if h["content"].startswith("I'd like a coffee")]
        assert all(h["breakdown"]["lex"] == 0 for h in coffee), [h["breakdown"]["lex"] for h in coffee]
        liked = memory.walk("What would Alice like to drink?", limit=3, reference_time=MARCH_12)
        assert "like" in liked["query"]["content_terms"]
        assert liked["hits"][0]["content"].startswith("I'd like a coffee")


def test_a_vague_time_is_the_askers() -> None:
    assert vague_times("What class did Lucinda take recently?") == {"recent"}
    assert vague_times("Would Melissa go on another road trip soon?") == {"soon"}
    assert vague_times("What is Tim currently reading, lately?") == set(terms("currently lately"))
    assert vague_times("What was the most recent workshop, recently?") == set(), "'recent' is asked"
    assert vague_times("What workshop did Lucinda attend?") == set()


def test_recently_is_not_searched(vault: Path) -> None:
    """"What workshop did Alice attend recently?" asks about a workshop: "recently" places it
    in the asker's time, and a message's own "recently" ("Recently I've just been attending
    meetings…") is of the day it was written. Searched, it had put that message above the
    workshop's; it is left out of the lexical and the dense query."""
    write_chat(vault, "2024-03-01", [("Alice", "Recently I've just been attending meetings, so much recently!"),
                                     ("Bob", "Hang in there.")])  # fmt: skip
    write_chat(vault, "2024-03-05", [("Bob", "How was your week?"),
                                     ("Alice", "I went to a pottery workshop with my sister, we made two bowls.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("What workshop did Alice attend recently?", limit=3, reference_time=MARCH_12)
        assert "recent" not in result["query"]["content_terms"], result["query"]
        assert result["hits"][0]["content"].startswith("I went to a pottery workshop"), [h["content"][:30] for h in result["hits"]]
        alone = memory.walk("What did Alice do recently?", limit=3, reference_time=MARCH_12)
        assert "recent" in alone["query"]["content_terms"], "nothing else to search: kept"
        asking = memory.walk("What happened lately?", limit=3, reference_time=MARCH_12)
        assert "late" in asking["query"]["content_terms"], "nothing else asked but 'what happened': kept"


def test_last_asking_for_the_latest_time_is_the_askers() -> None:
    assert vague_times("When did I last email Dana?") == {"last"}
    assert vague_times("When was Bob Stone last here?") == {"last"}
    assert vague_times("When was the last time we talked about the budget?") == set(terms("last time"))
    assert vague_times("Did we meet last week?") == set(), "a window"
    assert vague_times("When did the last meeting happen?") == set(), "a thing's adjective"


def test_the_last_time_is_not_searched(vault: Path) -> None:
    """"When was the last time we talked about the budget?" asks about the budget: "the last
    time" asks for the latest, and a message's own "last time" ("Review took 6 days last time")
    is of another time. Searched, it had put that message first."""
    write_chat(vault, "2024-03-04", [("Priya", "Also: App Store review took 6 days last time. Worth planning for, last time was close."),
                                     ("Alice", "Good point, adding it to the risks.")])  # fmt: skip
    write_chat(vault, "2024-03-05", [("Bob", "Got a minute on the budget? The migration estimate is done."),
                                     ("Alice", "The whole launch budget is eighteen thousand euros.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("When was the last time we talked about the budget?", limit=3, reference_time=MARCH_12)
        assert "last" not in result["query"]["content_terms"] and "time" not in result["query"]["content_terms"]
        assert "budget" in result["hits"][0]["content"], [h["content"][:30] for h in result["hits"]]
        assert sum("budget" in h["content"] for h in result["hits"]) == 2

def test_an_adverb_before_the_verb_of_saying_keeps_the_speaker(vault: Path) -> None:
    """"When did Bob last mention the migration?" asks for Bob's words, as "what did Bob
    mention…?" does: not Alice's message that names Bob beside the migration."""
    write_chat(vault, "2024-03-04", [("Bob Stone", "Heads-up: the payments migration is bigger than we thought."),
                                     ("Alice Chen", "Bob, can you write up the migration estimate by Wednesday? Bob, the migration matters.")])  # fmt: skip
    write_chat(vault, "2024-03-05", [("Bob Stone", "The estimate is done: 7 to 9 working days for the migration.")])
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("When did Bob last mention the migration?", limit=3, reference_time=MARCH_12)
        assert [h["author"] for h in result["hits"][:2]] == ["Bob Stone", "Bob Stone"], [h["content"][:30] for h in result["hits"]]
        assert result["hits"][0]["breakdown"]["speaker"]

def test_a_speaker_named_beside_your_notes_is_still_the_speaker(vault: Path) -> None:
    """"What did Kate say about the party in my notes?": "my notes" names where, not who spoke;
    Kate is still the speaker (her messages, "say" not searched), as she is without them. Only
    a verb of the asker's own writing ("what did I write to Kate?") makes her whom it was to."""
    write(vault, "Party.md", "# Surprise party for Gran\n\nThe party is a secret: Gran must not find out.\n")
    write_chat(vault, "2024-03-01", [("Dad", "Where shall we do Gran's party? I like the idea of a surprise."),
                                     ("Kate", "Booked! The Rose and Crown back room, Saturday 24 May, from 19:00."),
                                     ("Dad", "Your tasks for Saturday: Kate collects the cake, I bring the speakers.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        for question in ("What did Kate say about the party?", "What did Kate say about the party in my notes?"):
            result = memory.walk(question, limit=3, reference_time=MARCH_12)
            assert "say" not in result["query"]["content_terms"], result["query"]
            kate = [h for h in result["hits"] if h["author"] == "Kate"]
            assert kate and kate[0]["breakdown"]["speaker"], [(h["author"], h["content"][:30]) for h in result["hits"]]
        to_kate = memory.walk("What did I write to Kate?", limit=3, reference_time=MARCH_12)
        assert not any(h["breakdown"]["speaker"] for h in to_kate["hits"])


def _runbook(vault: Path) -> None:
    write(vault, "Runbooks/Launch runbook.md", "# Launch runbook\n\nOwner: Priya Raman.\n\n## Steps\n\n1. Cut the release.\n")
    write(vault, "Runbooks/Backup runbook.md", "# Backup runbook\n\nRestore from the nightly snapshot; we own the bucket.\n")
    write_chat(vault, "2024-03-07", [("Bob Stone", "The runbook needs a rollback section."), ("Alice Chen", "Later, I'm late.")])


def test_who_owns_finds_the_owner(vault: Path) -> None:
    """'own' and 'owner' stem apart: a who-question's verb is searched with its agent noun when a
    leaf holds it."""
    _runbook(vault)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        first = memory.walk("Who owns the launch runbook?", limit=3, reference_time=MARCH_12)["hits"][0]
        assert "Owner: Priya" in first["content"]
        first = memory.walk("Who owns the runbook?", limit=3, reference_time=MARCH_12)["hits"][0]
        assert "Owner: Priya" in first["content"]
        assert agent_nouns(memory.leaves, "Who owns the runbook?", ["own", "runbook"]) == {"own": ("owner",)}
        assert agent_nouns(memory.leaves, "Who is late?", ["late"]) == {}, "no verb: 'later' is no doer of 'late'"
        assert agent_nouns(memory.leaves, "Who's late?", ["late"]) == {}
        assert agent_nouns(memory.leaves, "Which runbook do we own?", ["runbook", "own"]) == {}, "only a who-question's verb"


def test_a_plan_for_a_window_ahead_is_searched_by_its_word(vault: Path) -> None:
    """'What is the May plan?' asked in March: May is still ahead, and "plan" stays searched
    (it had been dropped as a word that only asks about the window), finding a plan written
    before the days that lead up to May — when it names a day of May (a plan of another time
    is none of its)."""
    write_chat(vault, "2024-01-20", [("Alice Chen", "Plan for the bank holiday on 6 May: repaint the shed.")])
    write_chat(vault, "2024-01-21", [("Bob Stone", "Change of plans: the launch moves to 23 April.")])
    write_chat(vault, "2024-03-08", [("Bob Stone", "Lunch at noon?"), ("Alice Chen", "Sure, the usual place.")])
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("What is the May plan?", limit=3, reference_time=MARCH_12)
        assert result["query"]["window_ahead"]
        assert "repaint the shed" in result["hits"][0]["content"]
        assert all("Change of plans" not in hit["content"] for hit in result["hits"])


def test_a_dated_note_of_yours_outside_the_window_is_not_taken_down(vault: Path) -> None:
    """A note's date lets a window find it; a note begun long before (a `created` stamp, a
    dated title that is no journal) still says what holds now, as when it had no time."""
    write(vault, "Notes/Gym log.md", "---\ncreated: 2021-01-03T08:12:44\n---\n# Gym log\n\nSquat 1RM is 110 kg. Deadlift 140 kg.\n")
    write(vault, "Notes/2023-01-01 Tax rules.md", "# Tax rules\n\nThe home-office allowance is €6 per day, capped at €1,260 per year.\n")
    write(vault, "Daily/2025-05-07.md", "# Wednesday\n\n- Skipped the gym, too tired.\n- Sorted the tax receipts for the office.\n")
    write_chat(vault, "2025-05-06", [("Bob Stone", "The allowance for the trip is fine, I'll claim it next week.")])
    may = datetime(2025, 5, 20, 12)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        gym = memory.walk("How much do I squat at the gym this year?", limit=5, reference_time=may)["hits"]
        assert gym[0]["note_path"] == "Notes/Gym log.md", [h["note_path"] for h in gym]
        assert gym[0]["breakdown"]["time_factor"] == 1.0 and not gym[0]["breakdown"]["inside"]
        tax = memory.walk("What is the home-office allowance in 2025?", limit=5, reference_time=may)["hits"]
        assert tax[0]["note_path"] == "Notes/2023-01-01 Tax rules.md", [h["note_path"] for h in tax]
        week = memory.walk("What did I note this month?", limit=5, reference_time=may)["hits"]
        assert week[0]["note_path"] == "Daily/2025-05-07.md", "a window still finds the note of its days"


def test_what_i_wrote_to_someone_is_not_their_writing(vault: Path) -> None:
    """"What did I write to Paul?" asks for the asker's words to him: Paul is no author of them,
    and his name is what they hold (it had been read as "what did Paul say?")."""
    write_chat(
        vault,
        "2025-06-03",
        [
            ("Paul Grant", "The landlord agreed to renew the lease for two years at 1,150 a month."),
            ("Sam Kim", "Thanks Paul, I'll sign on Monday."),
            ("Paul Grant", "Great, I will send the papers."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("What did I write to Paul?", limit=5, reference_time=datetime(2025, 6, 7, 12))
        assert result["hits"][0]["content"].startswith("Thanks Paul"), [h["content"] for h in result["hits"]]
        assert all(h["breakdown"]["author"] == 0.0 for h in result["hits"]), "Paul wrote none of what was asked"


def test_a_note_of_yours_dated_ahead_leaves_the_window_ahead(vault: Path) -> None:
    """A note dated for a day to come (a party's `date:`) is not something said in its window:
    the window is still ahead, told of by what was said before it."""
    write_chat(
        vault,
        "2025-06-05",
        [
            ("Jonas Weber", "Asking for the winter already: are we doing something?"),
            ("Clara Nunes", "Year-end party is at my place, 20 December from 19:00"),
            ("Marta Silva", "I work at the bakery until 18:00 that day, I'll come later"),
        ],
    )
    write(vault, "Party.md", "---\ndate: 2025-12-20\n---\n# Party ideas\n\nBring mulled wine and the board games.\n")
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("What is happening in December?", limit=5, reference_time=datetime(2025, 6, 7, 12))
        assert result["query"].get("window_ahead"), result["query"]
        contents = [h["content"] for h in result["hits"]]
        assert contents[0].startswith("Year-end party is at my place"), contents


def test_who_someone_is_is_found_where_a_message_or_document_says_it(vault: Path) -> None:
    """"What is Helen's role?" and "who is Helen?" with no note of hers: the mail that says
    "Helen Okafor from our finance team" and the runbook's "Finance (invoices, deposit): Helen
    Okafor" say who she is, above her own mail and one that thanks her ("Thanks Helen, will do"
    only addresses her)."""
    assert introduces("Please book it. Helen Okafor from our finance team will pay.", ["Helen"])
    assert introduces("- Finance (invoices, deposit): Helen Okafor, helen@fernhill.example", ["Helen Okafor"])
    assert introduces("Helen, our CFO, said no.", ["Helen"])
    assert not introduces("Thanks Helen, will do.", ["Helen"])
    assert not introduces("Thanks, Helen, the budget is fine.", ["Helen"])
    assert introduces("Thanks! Helen, our CFO, said yes.", ["Helen"])
    assert not introduces("Approved by Helen Okafor on 11 March.", ["Helen Okafor"])
    write(vault, "Runbook.md", "# Launch runbook\n\n## Checklist\n\n1. Ship the release.\n2. Watch the dashboard for two hours.\n\n"
                               "## Contacts\n\n- Venue: Dana Whitfield, Harbor Hall\n- Finance (invoices, deposit): Helen Okafor, helen@fernhill.example\n")  # fmt: skip
    write_chat(vault, "2024-03-08", [("Alice Chen", "Please book the 23rd. Helen Okafor from our finance team will pay the deposit today."),
                                     ("Helen Okafor", "Approved, with one condition: the contingency is only spent with my OK."),
                                     ("Alice Chen", "Thanks Helen, will do."),
                                     ("Helen Okafor", "Also, the budget for the launch evening is fixed now.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        for question in ("What is Helen's role?", "Who is Helen?"):
            hits = memory.walk(question, limit=4, reference_time=MARCH_12)["hits"]
            first = {h["content"].split(".")[0][:30] for h in hits[:2]}
            assert any("finance team" in h["content"] or "Finance (" in h["content"] for h in hits[:1]), first
            said = [h for h in hits if h["breakdown"]["identity"] > 0]
            assert len(said) == 2 and not any(h["content"].startswith("Thanks") for h in said), first


def test_a_sentence_that_says_who_someone_is_beats_a_contacts_line_in_a_long_section(vault: Path) -> None:
    """"Who is Helen?" with no note of hers: the mail that says "Helen Okafor from our finance
    team" comes before a long runbook section whose last lines only label her ("Finance:
    Helen Okafor"), though both say who she is: that line is little of what the section says."""
    assert introduction("Please book it. Helen Okafor from our finance team will pay.", ["Helen"]) == 1.0
    assert 0 < introduction("Ship the release and watch the dashboard for two hours.\n- Finance: Helen Okafor", ["Helen Okafor"]) < 0.5
    write(vault, "Runbook.md", "# Launch runbook\n\n## Launch day\n\n"
                               "1. Set the release to Ready for Sale and check the receipt of a Pro subscription on a real device.\n"
                               "2. Publish the blog post and the press kit, send the newsletter, post the launch thread.\n"
                               "3. Watch the error dashboard and the subscription funnel for two hours after the launch.\n"
                               "4. If purchases fail, hide the paywall with the remote flag and ship a hotfix the same day.\n"
                               "5. Reply to the first reviews in the store and thank the beta testers by mail in the evening.\n"
                               "6. Check the crash reports the next morning and write up what went wrong for the retro.\n"
                               "- Venue: Dana Whitfield, Harbor Hall, dana@harborhall.example\n"
                               "- Finance (invoices, deposit): Helen Okafor, helen@fernhill.example\n- Press: Marco Ruiz\n")  # fmt: skip
    write_chat(vault, "2024-03-08", [("Alice Chen", "Please book the 23rd. Helen Okafor from our finance team will pay the deposit today, ask Helen for the invoice."),
                                     ("Helen Okafor", "Approved, with one condition: the contingency is only spent with my OK.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("Who is Helen?", limit=3, reference_time=MARCH_12)["hits"]
        assert "finance team" in hits[0]["content"], [h["content"][:40] for h in hits]
        runbook = next(h for h in hits if "## Launch day" in h["content"])
        assert 0 < runbook["breakdown"]["identity"] < hits[0]["breakdown"]["identity"]


def test_someone_introduced_by_first_name_is_found_when_their_note_is_a_heading(vault: Path) -> None:
    """"What is Sam's role?" of Sam Patel, whose note holds only his name: Lena's "This is Sam
    from legal" says who he is, by the name the question uses, above his own messages; "Sam
    from legal" introduces him as "Helen from our finance team" does, "from home" does not."""
    assert introduces("This is Sam from legal, he's helping with the venue contract", ["Sam"])
    assert not introduces("I heard from Sam from home today.", ["Sam"])
    write(vault, "entities/person/sam-patel.md", "---\nvaultmind: entity\nid: \"person:sam-patel\"\nkind: person\n"
                                                 "display_name: Sam Patel\naliases: []\n---\n# Sam Patel\n")  # fmt: skip
    write_chat(vault, "2024-03-01", [("Lena Hoffmann", "Hi all! Party planning for Jo's 40th starts now"),
                                     ("Lena Hoffmann", "This is Sam from legal, he's helping with the venue contract"),
                                     ("Sam Patel", "Hi everyone, happy to help"),
                                     ("Sam Patel", "Doors at 7pm, food at 8"),
                                     ("Sam Patel", "Contract signed, deposit of £100 paid")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("What is Sam's role?", limit=3, reference_time=MARCH_12)["hits"]
        assert hits[0]["content"].startswith("This is Sam from legal"), [h["content"][:30] for h in hits]
        assert hits[0]["breakdown"]["identity"] > 0
