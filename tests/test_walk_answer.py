"""walk: the kind of answer a question asks for (a time, a place, a name, a number, a title)."""

from __future__ import annotations

import random
from datetime import datetime
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.index.lexical import terms
from vaultmind.memory import Memory
from vaultmind.retrieval import bonuses
from vaultmind.retrieval.answer_type import (
    _NUMBER,
    _PLACE,
    _PROPER,
    _TIME,
    _TWO_NAMES,
    answer_kind,
    answer_test,
    bare_days,
    dated_days,
    holds_answer,
    kind_terms,
    names_clock,
)
from vaultmind.retrieval.asking import asking
from vaultmind.retrieval.negation import negated_terms, puts_off
from vaultmind.retrieval.spelling import joined_words

from .conftest import write, write_chat


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("When did Bob buy the kayak?", "time"),
        ("In which year did they move?", "time"),
        ("Which week did Tim visit Norway?", "time"),
        ("What weekend is the fair?", "time"),
        ("Which time did you like best, the first or the second?", None),
        ("Where is the party?", "place"),
        ("Which locations has the team visited?", "place"),
        ("What state did they drive to?", "place"),
        ("Who owns the guest list?", "person"),
        ("How many guests are coming?", "quantity"),
        ("What is Tim's favourite book series?", "title"),
        ("Which movies did they watch together?", "title"),
        ("What kind of music does Tim like?", None),
        ("What did Alice say about the budget?", None),
        ("Why was the trip cancelled?", "reason"),
        ("What is Helen's email address?", "address"),
        ("What did Helen say in her email?", None),
    ],
)
def test_answer_kind_reads_the_first_words(question: str, kind: str | None) -> None:
    assert answer_kind(question) == kind


def test_holds_answer_per_kind() -> None:
    assert holds_answer("time", "I bought it yesterday.")
    assert holds_answer("time", "See you on Friday at 19:00")
    assert not holds_answer("time", "I bought a kayak.")
    assert holds_answer("place", "We met at Harbor Hall.")
    assert not holds_answer("place", "We met there.")
    assert holds_answer("place", "I booked Golden Lantern, 19:00, table for 9.")
    assert not holds_answer("place", "Golden Lantern is booked.")
    assert holds_answer("person", "Ask Marco, he has it.")
    assert not holds_answer("person", "Ask him. He has it.")
    assert holds_answer("quantity", "Deposit: €1,500.")
    assert holds_answer("quantity", "twelve people said yes")
    assert not holds_answer("quantity", "nobody said yes")
    assert holds_answer("title", 'I finished rereading "the alchemist" last night')
    assert holds_answer("title", "We watched Little Women twice")
    assert not holds_answer("title", "We watched a movie twice.")


def test_a_time_is_found_as_the_one_pattern_finds_it() -> None:
    """The time check splits an ASCII text into words instead of running one long pattern
    over it: on random texts of time words, near misses, digits and separators, the same
    answers as the pattern."""
    pieces = [
        "Yesterday", "today's", "last_week", "lastly", "next", "nextdoor", "may", "Mayday", "weeks", "this week",
        "thisweek", "fall", "autumnal", "ago", "5", "12", "1999", "2024", "20245", "7:30", "7:3", "3rd", "23rd",
        "4th.", "5 pm", "5pm", "5 pmx", "10am", "x5am", "sep", "sept", "septic", "mon", "monday", "é", "année",
        "kayak", "the", "we", "met", "x_2024", "_today", "it'", "-", ",", ".", "'", "(", ")", "?", "\n", "\t", "",
        "yesterday’s", "“today”", "łódź", "añoago", "ago—and", "éweek", "week·", "·", "٥", "19٥٥", "٥:٣٠", "５pm", "Ｍay",
    ]
    rng = random.Random(5)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) + rng.choice(["", " ", " ", "-", "'", "_", ":", "\n"]) for _ in range(rng.randint(0, 9)))
        assert holds_answer("time", text) == (_TIME.search(text.lower()) is not None), text


def test_numbers_names_and_places_are_found_as_their_patterns_find_them() -> None:
    """Numbers (a digit or a number word, in any case), names (a capitalised word after a
    word, a comma, ";" or ")" and a space) and places (a preposition, maybe "the", then a
    capitalised word; or two capitalised words inside a sentence) are found without their patterns' slow parts: the same answers as the
    patterns on random texts."""
    pieces = [
        "One", "TWO", "twelve", "twelves", "fewer", "few", "Several", "once", "x_once", "7", "٣", "€", "$", "ſeven",
        "Ask", "Marco", "marco", "McDonald", "ÉMILE", "Ab", "A", "b", "and", ",", ";", ")", "(", "_", "'", "’", "-",
        "at", "in", "within", "into", "the", "The", "Leeds", "O'Neil", "A1",
        ".", " ", " ", "\t", "\n", "\x1c", "\u00a0", "é",
    ]
    rng = random.Random(11)
    for _ in range(4000):
        text = "".join(rng.choice(pieces) + rng.choice(["", " ", " ", "\n", ",", "\u00a0"]) for _ in range(rng.randint(0, 8)))
        assert holds_answer("quantity", text) == (_NUMBER.search(text) is not None), repr(text)
        assert holds_answer("person", text) == (_PROPER.search(text) is not None), repr(text)
        assert holds_answer("place", text) == ((_PLACE.search(text) or _TWO_NAMES.search(text)) is not None), repr(text)


def test_which_week_is_answered_by_the_message_that_says_it(vault: Path) -> None:
    # "Which week…?" asks for a time as "When…?" does: of two messages about the conference,
    # the one that says when leads, though the other holds the question's words as well.
    write_chat(vault, "2024-05-02", [("Tim", "The conference badges came, the conference hall is huge."), ("Ana", "Nice.")])
    write_chat(vault, "2024-05-09", [("Tim", "Last week I went to the conference, the conference was great."), ("Ana", "Cool.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("Which week did Tim go to the conference?", limit=4)
        assert result["query"]["answer_kind"] == "time"
        top = result["hits"][0]
        assert "Last week" in top["content"]
        assert top["breakdown"]["answer"] is True


def test_walk_prefers_the_message_that_holds_the_asked_for_time(vault: Path) -> None:
    # Two messages about the concert match the question alike; only one says when.
    write_chat(
        vault,
        "2024-05-02",
        [
            ("Bob", "The concert tickets arrived, the concert will be loud."),
            ("Alice", "Great, see you there."),
        ],
    )
    write_chat(
        vault,
        "2024-05-03",
        [
            ("Bob", "The concert tickets are for Saturday, the concert starts late."),
            ("Alice", "Perfect."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        when = memory.walk("When is the concert?", limit=4)
        assert when["query"]["answer_kind"] == "time"
        top = when["hits"][0]
        assert "Saturday" in top["content"]
        assert top["breakdown"]["answer"] is True
        other = next(h for h in when["hits"] if "loud" in h["content"])
        assert other["breakdown"]["answer"] is False
        assert top["score"] > other["score"]
        plain = memory.walk("Tell me about the concert", limit=4)
        assert plain["query"]["answer_kind"] is None
        assert not any(h["breakdown"]["answer"] for h in plain["hits"])


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("How lovely! What pet do you keep?", "only"),
        ("Which kayak did you buy?\n[image: a photo of a red kayak]", "only"),
        ("I adopted a dog last week, a beagle. Have you got pets?", "last"),
        ("I adopted a dog last week. Ask me anything?!", None),
        ("I adopted a dog last week.\n[attachment: beagle.jpg]", None),
        ("你养宠物吗？", "only"),
        ("我上周领养了一只小狗。你养宠物吗？", "last"),
        ("¿Tienes mascotas? Yo adopté un perro la semana pasada.", None),
        ("", None),
    ],
)
def test_asking_tells_questions_from_statements(text: str, kind: str | None) -> None:
    assert asking(text) == kind


def test_walk_ranks_the_answer_above_a_short_message_that_asks_the_same(vault: Path) -> None:
    """A short question repeats the question's words and BM25 favours short texts; the message
    that answers it is longer and should still come first."""
    write_chat(
        vault,
        "2024-05-02",
        [("Alice", "Which kayak did you buy?")],
    )
    write_chat(
        vault,
        "2024-05-09",
        [
            ("Bob", "Finally got it: I bought the red kayak from Jorge's shop, a sturdy kayak built for rivers."),
            ("Alice", "Nice."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("Which kayak did Bob buy?", limit=4)["hits"]
        assert "red kayak" in hits[0]["content"]
        asks = next(h for h in hits if h["content"].startswith("Which kayak"))
        assert asks["breakdown"]["asking"] == "only"
        assert hits[0]["breakdown"]["asking"] is None
        short = next(h for h in hits if h["content"] == "Nice.")
        assert short["breakdown"]["length_factor"] < asks["breakdown"]["length_factor"]
        assert asks["breakdown"]["length_factor"] < hits[0]["breakdown"]["length_factor"] <= 1.0


def test_walk_ranks_the_message_that_says_the_words_together_first(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two messages hold every word of the question; the one that says them in the question's
    order ("fourth table tennis tournament") is the one it asks about, though BM25 prefers the
    shorter one that has them apart."""
    write_chat(vault, "2024-05-02", [("Emil", "Tennis table, fourth prize: I won a tournament.")])
    write_chat(
        vault,
        "2024-06-14",
        [("Emil", "I won my fourth table tennis tournament, a long day of matches, pizza and loud friends.")],
    )
    question = "Tell me about Emil winning his fourth table tennis tournament"
    together = "I won my fourth table tennis tournament"
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        monkeypatch.setattr(bonuses, "PHRASE_WEIGHT", 0.0)
        apart = memory.walk(question, limit=2)["hits"]
        assert apart[0]["content"].startswith("Tennis table, fourth prize")  # what the words alone rank first
        monkeypatch.undo()
        hits = memory.walk(question, limit=2)["hits"]
        assert hits[0]["content"].startswith(together)
        # four of the question's five pairs (win fourth, fourth table, …; not tell win)
        assert hits[0]["breakdown"]["phrase"] == 0.8
        assert hits[1]["breakdown"]["phrase"] == 0.0


def test_a_pair_said_with_one_word_between_counts_half(vault: Path) -> None:
    write_chat(
        vault,
        "2024-03-07",
        [
            ("Alice", "Decision: we move the public launch to Tuesday 23 April."),
            ("Bob", "Then I'll move the launch evening too."),
            ("Carol", "The launch needs a move, somehow."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("When did we move the launch?", limit=5)["hits"]
        phrase = {h["content"][:12]: h["breakdown"]["phrase"] for h in hits}
        assert phrase == {"Decision: we": 0.5, "Then I'll mo": 1.0, "The launch n": 0.0}


def test_a_misspelt_word_the_memory_never_holds_is_read_as_the_word_it_does(vault: Path) -> None:
    """"when is the lauch?": no leaf holds "lauch", and the launch's messages were found only by
    their meaning. A real word the memory lacks ("hike") is never changed into one it holds
    ("like"), nor is a misspelt stop word ("waht") read as a content word ("wait")."""
    write_chat(
        vault,
        "2024-03-07",
        [
            ("Alice Chen", "Decision: we move the public launch to Tuesday 23 April."),
            ("Bob Stone", "I like the new date, but we wait for the review."),
            ("Priya Raman", "The received invoices are in the shared folder."),
            ("Mei Chen", "Lunch at the harbour on Friday?"),
            ("Bob Stone", "Sure, noon works for me."),
            ("Alice Chen", "Bring the photo album from your flat."),
            ("Bob Stone", "My wife booked the hotel, turn left after the lift."),
            ("Mei Chen", "She is an aspiring writer; the latter is cheaper. Mr Baker grows crabs."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        launch = memory.walk("when is the lauch?")
        assert launch["query"]["corrected"] == {"lauch": "launch"}
        assert "public launch" in launch["hits"][0]["content"]
        assert memory.walk("where did we go hiking?")["query"]["corrected"] == {}
        assert memory.walk("waht did we decide?")["query"]["corrected"] == {}
        for words in ("wifi password", "a lyft home", "aspirin", "latte", "salted nuts", "bake sale"):
            # real words one slip from words the memory holds ("wife", "left", "aspiring", "latter", …)
            assert memory.walk(f"where is the {words}?")["query"]["corrected"] == {}, words
        assert memory.walk("which invoices were recieved?")["query"]["corrected"] == {"recieved": "received"}
        evidence = memory.query("walk", {"query": "when is the lauch?", "evidence": True})["evidence"]
        assert "Read as: “lauch” → “launch”." in evidence


def test_two_words_the_memory_writes_as_one_find_it(vault: Path) -> None:
    """"what ice cream did we have?" never found the message that says "icecream", nor "how
    often do you work out?" the "workout" one: the lexical search read only the two words. The
    joined word now counts as both; a determiner is never joined ("any way" is no "anyway"). A
    word that no leaf holds and no English word is, made of two that leaves hold, is read as
    them ("roadtrip")."""
    write_chat(
        vault,
        "2024-03-07",
        [
            ("Emil", "Coconut milk icecream with a friend, so good!"),
            ("Jolene", "Ice on the roads today, careful."),
            ("Emil", "The cream van was closed."),
            ("Jolene", "We skated on the ice after lunch."),
            ("Jolene", "My workout is on Mondays and Thursdays with my sister."),
            ("Emil", "Work was long; I stayed out late with the team."),
            ("Jolene", "Anyway, the bike is fixed now."),
            ("Emil", "Which way to the station? Any bus goes there."),
            ("Jolene", "The road trip to the coast was wonderful."),
            ("Emil", "The road is closed, and my trip is off. Leave a note in the book."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        ice = memory.walk("what ice cream did we have?")
        assert "icecream" in ice["hits"][0]["content"]
        assert "workout" in memory.walk("how often do you work out?")["hits"][0]["content"]
        assert joined_words(memory.leaves, "what ice cream did we make?", terms("ice cream make")) == {
            "ice": ("icecream",),
            "cream": ("icecream",),
        }
        assert joined_words(memory.leaves, "is there any way to the station?", terms("any way station")) == {}
        trip = memory.walk("how was the roadtrip?")  # and the other way round: one word read as two
        assert trip["query"]["corrected"] == {"roadtrip": "road trip"}
        assert "coast" in trip["hits"][0]["content"]
        assert memory.walk("where is my notebook?")["query"]["corrected"] == {}, "an English word is never cut"


def test_a_misspelt_name_is_read_as_the_name_the_memory_knows(vault: Path) -> None:
    """"Who is Helen Okafro?" and "what did Whitfeild say?" found nothing of them: names are no
    English words, so a slip in one was never read back. Nor did "what did Whitfield say?" find
    her mail, which never holds her surname: a question about nothing but its author now takes
    that author's messages."""
    write(vault, "entities/person/helen-okafor.md", '---\nvaultmind: entity\nid: "person:helen-okafor"\n'
          "kind: person\ndisplay_name: Helen Okafor\n---\n# Helen Okafor\n\nHead of finance at Fernhill.\n")  # fmt: skip
    write_chat(
        vault,
        "2024-03-07",
        [
            ("Alice Chen", "Helen Okafor approved the budget this morning."),
            ("Dana Whitfield", "The Loft is free on the 23rd; I will hold it until noon."),
            ("Bob Stone", "Great, booking the caterers next."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        helen = memory.walk("Who is Helen Okafro?")
        assert helen["query"]["corrected"] == {"okafro": "okafor"}
        assert "Okafor" in helen["hits"][0]["content"]
        for question in ("What did Whitfeild say?", "what did Whitfield say?"):
            dana = memory.walk(question)
            assert dana["hits"] and dana["hits"][0]["author"] == "Dana Whitfield", question
        assert memory.walk("What did Whitfeild say?")["query"]["corrected"] == {"whitfeild": "whitfield"}
        assert memory.walk("who approved the budgte?")["query"]["corrected"] == {"budgte": "budget"}
        assert memory.walk("what about the Okafors?")["query"]["corrected"] == {}, "a name with an ending is no slip"


@pytest.mark.parametrize(
    ("text", "changes"),
    [
        ("Decision: we move the public launch from Tuesday 9 April to Tuesday 23 April.", True),
        ("The offsite is postponed until further notice.", True),
        ("Update: the venue is now Harbor Hall.", True),
        ("We'll meet at the café instead.", True),
        ("Dinner is cancelled, sorry!", True),
        ("Party postponed again: 26 April.", True),
        ("The launch is back on 8 April.", True),
        ("Target for the launch is still Tuesday 9 April.", False),
        ("The launch evening is at Harbor Hall.", False),
        ("Could we move the BBQ to Sunday 13 April? I'm away on Saturday.", False),  # proposed
        ("Is the meeting postponed?", False),  # asked
        ("The train had no delay.", False),  # denied
        ("Use oat milk instead of cow milk.", False),  # a preference
        ("Let's move the meeting to Friday.", False),  # proposed
        ("Switch to dark mode in settings.", False),  # an instruction
        ("Change of plan: Lisbon is off, we're going to Porto in April, flying 15 April.", True),
        ("Heads up: release 4.2 is delayed to Monday 31 March.", True),  # not cut at "4.2"
        ("Don't forget: the dentist moved to Friday 14 March.", True),
        ("Release slipped to April, sorry.", True),
        ("The meetup is on again for Thursday.", True),
    ],
)
def test_a_message_that_says_what_changed_is_told(text: str, changes: bool) -> None:
    from vaultmind.retrieval.revisions import revises

    assert revises(text) is changes


def test_the_latest_of_several_changes_comes_first_wherever_it_was_said(vault: Path) -> None:
    """Each day of a chat is its own note. A terse change ("Party postponed again: 26 April.")
    scores far below the full first plan and had stayed below it, and the change before it too;
    a proposal ("Could we move…?") had counted as a change."""
    write_chat(vault, "2025-03-01", [("Bob Stone", "The surprise party for Mum is on Saturday 5 April at Anna's place.")])
    write_chat(vault, "2025-03-05", [("Bob Stone", "Update: the surprise party for Mum moved to Saturday 12 April.")])
    write_chat(vault, "2025-03-07", [("Lee Park", "Could we move the surprise party to Sunday 13 April? I'm away.")])
    write_chat(vault, "2025-03-09", [("Bob Stone", "Party postponed again: 26 April."), ("Mei Chen", "ok")])
    # as in any family chat, Mum comes up far more often than the party
    write_chat(vault, "2025-03-02", [("Mei Chen", "Mum called, her knee is better."), ("Bob Stone", "Tell Mum hi!"),
                                     ("Mei Chen", "Mum wants the lasagne recipe."), ("Bob Stone", "Mum's garden looks great")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("When is Mum's party?", limit=5)["hits"]
    days = [h["time_range"]["start"][:10] for h in hits[:3]]
    assert days == ["2025-03-09", "2025-03-05", "2025-03-01"], [(h["content"], h["score"]) for h in hits]
    assert not any(h["breakdown"]["revises"] for h in hits if h["content"].startswith("Could"))


def test_of_a_window_ahead_the_plan_as_it_now_stands_leads(vault: Path) -> None:
    """"What's coming up in April?" put the Lisbon trip, called off since, above the Porto trip
    that replaced it: a change counts for what is said of a window still ahead too."""
    write_chat(vault, "2025-03-03", [("Alice Chen", "In April we're going to Lisbon for a week, flights booked for 14 April, "
                                                    "hotel by the river, and the kids get the whole week off school in April.")])
    write_chat(vault, "2025-03-08", [("Alice Chen", "Change of plan: Lisbon is off, Porto in April, flying 15 April."), ("Bob Stone", "ok")])
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("What's coming up in April?", limit=5, reference_time=datetime(2025, 3, 12, 12))
    assert result["query"]["window_ahead"] is True
    assert result["hits"][0]["content"].startswith("Change of plan"), [h["content"][:30] for h in result["hits"]]
    assert result["hits"][0]["breakdown"]["revises"] == result["hits"][1]["node_id"]


def test_what_changed_is_named_in_the_sentence_that_says_so(vault: Path) -> None:
    """"Small change: the kickoff with Acme Inc. moved to Thursday" had been cut at "Inc.", so
    the change named no kickoff; "Book club moved to Friday" had changed the Friday market."""
    write_chat(vault, "2025-03-03", [("Ana Reyes", "The kickoff with Acme is on Wednesday 19 March at the Leeds office."),
                                     ("Tom Ash", "The Friday market is at Kollwitzplatz, from 9 to 4.")])  # fmt: skip
    write_chat(vault, "2025-03-06", [("Ana Reyes", "Small change: the kickoff with Acme Inc. moved to Thursday 20 March, on Zoom."),
                                     ("Mei Chen", "Book club moved to Friday 21 March at the library.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        kickoff = memory.walk("When is the Acme kickoff?", limit=5)["hits"]
        market = memory.walk("Where is the Friday market?", limit=5)["hits"]
    assert kickoff[0]["content"].startswith("Small change") and kickoff[0]["breakdown"]["revises"]
    assert not any(h["breakdown"]["revises"] for h in market), [(h["content"], h["breakdown"]["revises"]) for h in market]


def test_a_time_word_in_a_things_name_is_what_changed(vault: Path) -> None:
    """"When is the launch evening?": "move the launch evening to the 23rd" changes the launch
    evening, but "evening" was taken for the new time of day, as "Friday" in "book club moved to
    Friday", and the change named too little of the question: the old date stayed first."""
    write_chat(vault, "2024-03-01", [("Alice Chen", "The launch plan is in the doc."), ("Bob Stone", "Launch checklist updated."),
                                     ("Priya Raman", "Launch screens are done."), ("Marco Ruiz", "Launch video next week."),
                                     ("Mei Chen", "Good luck with the launch!")])  # fmt: skip
    write_chat(vault, "2024-03-04", [("Marco Ruiz", "Great. Press kit draft by Friday. I've pencilled in Harbor Hall for the launch evening on the 9th."),
                                     ("Priya Raman", "The launch evening needs a guest list.")])  # fmt: skip
    write_chat(vault, "2024-03-07", [("Alice Chen", "I'm emailing Dana at Harbor Hall to move the launch evening to the 23rd."),
                                     ("Bob Stone", "Then code freeze is Tuesday 16 April.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("When is the launch evening?", limit=5)["hits"]
    assert hits[0]["content"].startswith("I'm emailing Dana"), [(h["content"][:30], h["score"]) for h in hits]
    assert hits[0]["breakdown"]["revises"] == hits[1]["node_id"]


def test_a_change_of_one_thing_does_not_outrank_another_that_shares_a_word(vault: Path) -> None:
    """"Our app launch moved to 23 April" had jumped above "the code freeze for the app is
    Tuesday 16 April" for "when is the code freeze for the app?": they share "app" alone."""
    write_chat(vault, "2024-03-04", [("Bob Stone", "The code freeze for the app is Tuesday 16 April."),
                                     ("Alice Chen", "The launch sync is every Thursday at 14:00.")])  # fmt: skip
    write_chat(vault, "2024-03-09", [("Alice Chen", "Our app launch moved to 23 April, I'd be useless that day."),
                                     ("Bob Stone", "Launch moved again? ok"), ("Mei Chen", "the app looks great")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        freeze = memory.walk("When is the code freeze for the app?", limit=5)["hits"]
        sync = memory.walk("When is the launch sync?", limit=5)["hits"]
    assert freeze[0]["content"].startswith("The code freeze") and not any(h["breakdown"]["revises"] for h in freeze)
    assert sync[0]["content"].startswith("The launch sync"), [h["content"] for h in sync]


def test_a_date_as_it_stands_now_comes_from_the_message_that_changed_it(vault: Path) -> None:
    """"When is the launch?" had ranked the first plan ("still 9 April") above the message that
    moved it ("we move the launch to 23 April"): both share its words and name a date. A
    question about how things stand now favours the message that says what changed; one about
    what was ("when did we plan the launch?") does not."""
    write_chat(
        vault,
        "2024-03-04",
        [("Alice Chen", "Morning all! The plan is in the doc. Target for the launch is still Tuesday 9 April."),
         ("Bob Stone", "Thanks, reading it now.")],
    )  # fmt: skip
    write_chat(
        vault,
        "2024-03-07",
        [("Alice Chen", "Notes from today's sync are in the doc. Summary for anyone who missed it:"),
         ("Alice Chen", "Decision: we move the public launch from Tuesday 9 April to Tuesday 23 April."),
         ("Marco Ruiz", "Got it, I will tell the venue.")],
    )  # fmt: skip
    write_chat(
        vault,
        "2024-03-09",
        [("Bob Stone", "Reminder for the whole team: our weekly lunch moved to Friday at the usual place downstairs, "
                       "and could somebody check that the slides for the board review mention the launch budget?")],
    )  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        now = memory.walk("When is the launch?", limit=5)["hits"]
        assert now[0]["content"].startswith("Decision:") and now[1]["content"].startswith("Morning")
        assert now[0]["breakdown"]["revises"] == now[1]["node_id"], "it names the leaf it changes"
        assert now[0]["score"] > now[1]["score"]
        lunch = next(h for h in now if h["content"].startswith("Reminder"))
        assert lunch["breakdown"]["revises"] is None, "a far weaker change of something else stays where it was"
        before = memory.walk("When did we first plan the launch?", limit=5)["hits"]
        assert before[0]["content"].startswith("Morning"), "a question about what was: as it was"
        assert not any(h["breakdown"]["revises"] for h in before)


def test_an_email_address_is_found_where_it_is_written(vault: Path) -> None:
    """"What is Helen's email address?" asks for an address, which no leaf writes beside the
    words "email address": not for Helen's mails (she wrote them), nor for a note that links
    "her email"."""
    write(vault, "Contacts.md", "# Contacts\n\n- Finance (invoices, deposit): Helen Okafor, helen@fernhill.example\n- Press: Marco Ruiz\n")
    write(vault, "Budget.md", "# Budget\n\nApproved by Helen Okafor on 11 March, see [[Mail from Helen|her email]].\n")
    write_chat(vault, "2024-03-11", [("Helen Okafor", "Approved. I will email the invoices to you by Friday."), ("Alice Chen", "Thanks Helen!")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What is Helen's email address?", limit=3)
        assert result["query"]["answer_kind"] == "address"
        first = result["hits"][0]
        assert "helen@fernhill.example" in first["content"] and first["breakdown"]["answer"]


def test_the_words_that_name_the_kind_of_answer_are_not_searched(vault: Path) -> None:
    """"What time is the dinner?" asks for a time, which the answer writes ("19:30"), not the
    word "time": a message that says "time" and "dinner" is no better match for it."""
    assert kind_terms("What time is the dinner?") == {"time"}
    assert kind_terms("In which year did they move?") == {"year"}
    assert kind_terms("When is the dinner?") == frozenset()
    write_chat(vault, "2024-03-09", [("Daniel Chen", "The dinner took a long time to organise, phew."), ("Mei Chen", "Dinner starts at 19:30, upstairs.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What time is the dinner?", limit=2)
        assert result["query"]["content_terms"] == ["dinner"]
        assert result["hits"][0]["content"] == "Dinner starts at 19:30, upstairs."


def test_how_much_names_the_kind_of_answer_not_its_topic(vault: Path) -> None:
    """"How much is the hotel?" asks for a number ("€240 a night"), which no leaf writes beside
    "how much": a note that says "how we scope" is no match for it (the words "how long",
    "how often" are still searched: "for a long time" may be the answer)."""
    assert kind_terms("How much is the hotel?") == {"how", "much"}
    assert kind_terms("How many guests are coming?") == set(terms("how many"))
    assert kind_terms("How long did the trip take?") == frozenset()
    write(vault, "Reading list.md", "# Reading list\n\n- Shape Up: how we scope projects\n- How to Take Smart Notes\n")
    write_chat(vault, "2024-03-09", [("Mei Chen", "The hotel in Leeds is €240 a night."), ("Alice Chen", "Fine by me.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("How much is the hotel?", limit=2)
        assert result["query"]["content_terms"] == ["hotel"]
        assert result["hits"][0]["content"] == "The hotel in Leeds is €240 a night."


def test_where_finds_the_place_said_in_the_conversation_that_matches(vault: Path) -> None:
    """"Where is Dad's 60th dinner?": the message that matches best ("Ok team, Dad's 60th!")
    names no place; the booking said in the same conversation does ("I booked Golden
    Lantern"), in none of the question's words, and is the first hit, above the best match and
    the other messages that say "dinner" but no place."""
    write_chat(
        vault,
        "2024-03-09",
        [
            ("Daniel Chen", "Ok team, Dad's 60th! He thinks we're just having lunch at home on the 23rd."),
            ("Mei Chen", "He must not find out!! I told him Saturday is for the garden."),
            ("Daniel Chen", "March. Saturday 23 March."),
            ("Daniel Chen", "I booked Golden Lantern, table for 9. Private room upstairs."),
            ("Mei Chen", "Good. The aunts arrive on Friday."),
            ("Alice Chen", "I will bring the photo album."),
            ("Daniel Chen", "Cost split: dinner is about £540 (£60 a head). I'll pay and we settle after."),
            ("Daniel Chen", "Remember: nobody posts anything online until after dinner!"),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:  # the booking is found by its meaning
        memory.sync()
        hits = memory.walk("Where is Dad's 60th dinner?", limit=3)["hits"]
        assert hits[0]["content"].startswith("I booked Golden Lantern") and hits[0]["breakdown"]["topic_answer"]
        assert hits[1]["content"].startswith("Ok team")


def test_tasks_for_a_coming_day_are_the_ones_written_for_it(vault: Path) -> None:
    """"What are my tasks on Monday?" asked on a Saturday is about the coming Monday: the
    message that writes out the tasks "for Monday" (a day it names, as "on Monday") comes
    before the open tasks of a note dated last Monday."""
    assert holds_answer("task", "Your tasks for Monday: call the school, book the dentist.")
    assert not holds_answer("task", "I have too many tasks for tomorrow, honestly.")
    write(vault, "Daily/2024-03-04.md", "# Monday, 4 March\n\nBusy day.\n\n## Tasks\n\n- [ ] Renew the parking permit\n- [ ] Reply to the landlord\n")
    write_chat(vault, "2024-03-08", [("Mei Chen", "Your tasks for Monday: call the school about the trip, and book the dentist."), ("Alice Chen", "Got it.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What are my tasks on Monday?", limit=3, reference_time=datetime(2024, 3, 9, 12))
        assert result["query"]["time_window"]["start"] == "2024-03-11T00:00:00Z"
        first = result["hits"][0]
        assert first["content"].startswith("Your tasks for Monday") and first["breakdown"]["names_window_day"]


def test_a_question_of_ones_tasks_finds_the_open_tasks_of_a_note(vault: Path) -> None:
    """"What are my tasks for tomorrow?" is answered by a note's open tasks (`- [ ] …`), which
    never say "task"; not by a message that does."""
    assert holds_answer("task", "## Tomorrow\n\n- [ ] Call the plumber") and not holds_answer("task", "- [x] Paid the rent")
    assert kind_terms("What are my open tasks?") == {"open", "task"}
    assert answer_kind("What tasks did John do at work?") is None, "someone's tasks: no note's"
    write(vault, "Daily/2024-03-11.md", "# Monday\n\nQuiet day.\n\n## Tomorrow\n\n- [ ] Call the plumber about the tap\n- [x] Pay the rent\n")
    write_chat(vault, "2024-03-11", [("Bob Stone", "I have too many tasks for tomorrow, honestly."), ("Alice Chen", "Same here.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What are my tasks for tomorrow?", limit=3, reference_time=datetime(2024, 3, 12, 12))
        assert result["query"]["answer_kind"] == "task"
        first = result["hits"][0]
        assert first["note_path"] == "Daily/2024-03-11.md" and "Call the plumber" in first["content"]


def test_a_time_of_day_or_a_date_is_no_amount(vault: Path) -> None:
    """"How much is the food at the party?" asks for an amount: the party note's "drinks from
    18:30" or its date is none, and the message that says "£15 a head" answers."""
    assert not holds_answer("quantity", "Drinks from 18:30 on 2024-03-23.")
    assert holds_answer("quantity", "The food is £15 a head, drinks from 18:30.")
    write(vault, "Kate.md", "# Kate\n\nParty on 2024-03-23 from 18:30, with food.\n")
    write_chat(vault, "2024-03-09", [("Mei Chen", "The food at the party is £15 a head."), ("Alice Chen", "Fine by me.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("How much is the food at the party?", limit=2)["hits"]
        assert hits[0]["content"] == "The food at the party is £15 a head."
        assert hits[0]["breakdown"]["answer"] and not hits[1]["breakdown"]["answer"]


def test_what_time_finds_the_time_of_day_said_in_the_conversation_that_matches(vault: Path) -> None:
    """"What time is the dinner?": the messages that say "dinner" name no time of day; the
    booking said in the same conversation does ("19:00") and ranks above the best match and
    the other messages that name only a day ("the 23rd", "Saturday")."""
    assert answer_test("What time is the dinner?", "time", ["dinner"])("I booked Golden Lantern, 19:00, table for 9.")
    assert not answer_test("What time is the dinner?", "time", ["dinner"])("Saturday is for the garden.")
    assert answer_test("When is the dinner?", "time", ["dinner"])("Saturday is for the garden.")
    write_chat(vault, "2024-03-09", [("Daniel Chen", "Ok team, Dad's 60th! He thinks we're just having lunch at home on the 23rd."),
                                     ("Mei Chen", "He must not find out!! I told him Saturday is for the garden."),
                                     ("Daniel Chen", "I booked Golden Lantern, 19:00, table for 9. Private room upstairs."),
                                     ("Mei Chen", "Good. Auntie Lin and Uncle Joe are coming from Leeds, they arrive Friday."),
                                     ("Mei Chen", "Remember: nobody posts anything on Facebook until after dinner!"),
                                     ("Daniel Chen", "Cost split: dinner is about £540 (£60 a head). I'll pay and we settle after.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("What time is the dinner?", limit=3)["hits"]
        booked = [h for h in hits[:2] if "19:00" in h["content"]]
        assert booked and booked[0]["breakdown"]["topic_answer"], [h["content"][:40] for h in hits]


def test_how_much_asks_for_a_sum_said_of_what_it_asks_about(vault: Path) -> None:
    """"How much does the load test cost?" asks for a sum of money said with the load test
    ("€1,200 for a load-testing run"), not a longer message on the load test that counts days
    ("7 to 9 working days, plus load testing"), nor a sum said of something else in the
    sentence after it ("The second cluster is another €900 a month")."""
    holds = answer_test("How much does the load test cost?", "quantity", ["load", "test", "cost"])
    assert holds("€1,200 for a load-testing run on staging.")
    assert not holds("The estimate is done: 7 to 9 working days, plus load testing.")
    assert not holds("So the load test is fine. The second cluster is another €900 a month.")
    assert answer_test("How much time is left?", "quantity", ["left"])("Three days.")  # any number: no sum asked for
    write_chat(vault, "2024-03-05", [("Bob Stone", "Got a minute on the budget? The migration estimate is done: 7 to 9 working days, plus the load test."),
                                     ("Alice Chen", "Sure. What does it need?"),
                                     ("Bob Stone", "€1,200 for a load-testing run on staging (two days of bigger instances). And I'd like to keep the second cluster until the end of April, for the release candidates."),
                                     ("Alice Chen", "So the load test is fine. The second staging cluster is another €900 a month, though.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("How much does the load test cost?", limit=3)["hits"]
        assert hits[0]["content"].startswith("€1,200"), [h["content"][:40] for h in hits]


def test_what_time_of_something_the_memory_gives_only_a_day_for_is_answered_by_the_day(vault: Path) -> None:
    """"What time is the launch?" where no message names a time of day for the launch: the one
    that says its day ("Tuesday 23 April") answers, as it answers "when is the launch?", above
    the messages that name a time of day of other things ("Standup is at 9:30")."""
    write_chat(vault, "2024-03-04", [("Tom Becker", "What time is the standup tomorrow?"),
                                     ("Alice Chen", "Standup is at 9:30 as usual, in the small room."),
                                     ("Sam Patel", "Doors at 7pm, food at 8"),
                                     ("Rose Martin", "Setup starts at noon on the Saturday")])  # fmt: skip
    write_chat(vault, "2024-03-06", [("Jordan Lee", "Hello! Excited to be here, I'm working on the analytics dashboard."),
                                     ("Tom Becker", "When is the launch?"),
                                     ("Alice Chen", "Tuesday 23 April, it's in the product sync notes."),
                                     ("Priya Natarajan", "The new monitoring setup costs $450 a month, I got the quote today.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("What time is the launch?", limit=3)["hits"]
        assert any(h["content"].startswith("Tuesday 23 April") and h["breakdown"]["answer"] for h in hits), [h["content"][:30] for h in hits]
        assert not any(h["breakdown"]["answer"] for h in hits if "9:30" in h["content"])


def test_an_hour_said_after_at_is_a_time_of_day(vault: Path) -> None:
    """"Thursday at 10, he texted me" and "the review is at 3 on Thursday" name a time of day,
    as "10:00" does: "what time is the landlord coming?" asked in the chat is answered by the
    reply that says so, not passed over for a message with "8pm" about something else."""
    assert names_clock("Thursday at 10, he texted me") and names_clock("The review is at 3 on Thursday.")
    assert not names_clock("Driving at 10 km/h") and not names_clock("Prices grew at 3 percent")
    write_chat(vault, "2024-03-10", [("Nell Byrne", "When is the landlord coming?"),
                                     ("Olly Grant", "who knows, he said 2024 haha"),
                                     ("Priti Shah", "Thursday at 10, he texted me"),
                                     ("Priti Shah", "What time is the match on?"),
                                     ("Olly Grant", "kick off 8pm")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("What time is the landlord coming?", limit=3)["hits"]
        assert hits[0]["content"].startswith("Thursday at 10"), [h["content"][:30] for h in hits]


def test_a_sum_said_of_what_the_sentence_before_names_answers_how_much(vault: Path) -> None:
    """"How much is the hotel?": Ana's "It's £320 for three nights" says the hotel's price of
    the hotel her message before named; a sentence that opens by pointing back counts as said
    of the question's words (it had lost its answer to "said in a sentence with the question's
    words", below "Nice! How much is it?"), while a sum said of another thing still does not."""
    holds = answer_test("How much is the hotel?", "quantity", ["hotel"])
    assert holds("It's £320 for three nights, breakfast included.") and holds("Found a hotel. It costs £50.")
    assert not holds("The car is €210.")
    write_chat(vault, "2024-03-09", [("Ana Costa", "Found a hotel in Porto for the trip, right by the river."),
                                     ("Ben Hart", "Nice! How much is it?"),
                                     ("Ana Costa", "It's £320 for three nights, breakfast included."),
                                     ("Ben Hart", "The car rental is sorted. It comes to €210 for the week."),
                                     ("Ana Costa", "We have three full days in Porto, then Lisbon."),
                                     ("Ben Hart", "Museum tickets booked! €18 each.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("How much is the hotel?", limit=3)["hits"]
        priced = [h for h in hits if h["content"].startswith("It's £320")]
        assert priced and priced[0]["breakdown"]["answer"], [h["content"][:30] for h in hits]


def test_when_finds_the_full_date_that_completes_a_bare_day(vault: Path) -> None:
    """"When is Dad's 60th lunch?": the message that matches best says only "on the 23rd"; the
    reply in the same conversation that writes that day with its month ("March. Saturday 23
    March.", in none of the question's words) answers it and comes first, the best match
    right after it; a date of another day ("Our launch moved to 3 April") is not raised."""
    assert bare_days("lunch at home on the 23rd") == {23} and not bare_days("the 23rd of March, right?")
    assert dated_days("March. Saturday 23 March.") == {23} and dated_days("on 2024-04-03 or April 3rd") == {3}
    write_chat(vault, "2024-03-09", [("Daniel Chen", "Ok team, Dad's 60th! He thinks we're just having lunch at home on the 23rd."),
                                     ("Mei Chen", "He must not find out!! I told him Saturday is for the garden."),
                                     ("Alice Chen", "Wait, which month? Our launch moved to 3 April, busy then."),
                                     ("Daniel Chen", "March. Saturday 23 March."),
                                     ("Daniel Chen", "I booked Golden Lantern, table for 9. Private room upstairs.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("When is Dad's 60th lunch?", limit=3)["hits"]
        assert hits[0]["content"] == "March. Saturday 23 March." and hits[0]["breakdown"]["topic_answer"], [h["content"][:30] for h in hits]
        assert hits[1]["content"].startswith("Ok team")


def test_a_message_that_puts_off_what_the_question_asks_about_is_no_answer(vault: Path) -> None:
    """"When did we decide to move the launch?": "OK, let's not decide in chat to move the
    launch" says the question's words, the decision's own, but puts the decision off; the
    message that says it was taken comes first. A question that negates ("why didn't we
    decide…?") asks about what was not done, and keeps such messages."""
    assert negated_terms("OK, let's not decide in chat.") == {"decid"} and negated_terms("We haven't decided") == {"decid"}
    assert not negated_terms("Decision: we move the launch.")
    write_chat(vault, "2024-03-04", [("Marco Ruiz", "Morning all."),
                                     ("Alice Chen", "OK, let's not decide in chat to move the launch. We decide on Thursday."),
                                     ("Bob Stone", "Fine, I'll bring the migration estimate.")])  # fmt: skip
    write_chat(vault, "2024-03-07", [("Alice Chen", "On Thursday we decided to move the launch to 23 April."),
                                     ("Priya Raman", "Noted, I'll tell the App Store contact.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("When did we decide to move the launch?", limit=2)["hits"]
        assert hits[0]["content"].startswith("On Thursday we decided"), [h["content"][:30] for h in hits]
        assert hits[1]["content"].startswith("OK, let's not") and hits[1]["breakdown"]["negated"]
        hits = memory.walk("Why didn't we decide to move the launch?", limit=2)["hits"]
        assert not any(h["breakdown"]["negated"] for h in hits)


def test_a_message_that_puts_off_to_a_time_answers_when_it_is_still_to_be_done(vault: Path) -> None:
    """"When do we decide on the venue?" asks what is still to come: "OK, let's not decide on
    the venue in chat. We decide at Thursday's sync." puts the decision off to Thursday, which
    is the answer, not a denial; it is not scaled down as negated and comes before a message
    that only talks of the venue. "When did we decide on the venue?" asks when it was done, and
    the message that put it off still counts less."""
    assert puts_off("OK, let's not decide on the venue in chat. We decide at Thursday's sync.", frozenset(terms("decide venue")))
    assert not puts_off("OK, let's not decide on the venue in chat.", frozenset(terms("decide venue")))
    assert not puts_off("We decide at Thursday's sync.", frozenset(terms("decide venue")))  # nothing put off
    write_chat(vault, "2024-03-04", [("Marco Ruiz", "Morning all."),
                                     ("Alice Chen", "OK, let's not decide on the venue in chat. We decide at Thursday's sync."),
                                     ("Bob Stone", "Fine, I'll bring the quotes.")])  # fmt: skip
    write_chat(vault, "2024-03-05", [("Priya Raman", "The venue on the quay has a terrace, the venue in town a bigger room."),
                                     ("Bob Stone", "Both venues quoted the same price for the evening.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("When do we decide on the venue?", limit=3)["hits"]
        assert hits[0]["content"].startswith("OK, let's not decide"), [h["content"][:30] for h in hits]
        assert not hits[0]["breakdown"]["negated"] and hits[0]["breakdown"]["answer"]
        hits = memory.walk("When did we decide on the venue?", limit=3)["hits"]
        assert any(h["breakdown"]["negated"] for h in hits), [h["content"][:30] for h in hits]


def test_what_do_i_need_to_do_asks_for_open_tasks(vault: Path) -> None:
    """"What do I need to do before the trip?" asks for tasks, like "what are my open tasks?":
    a note's open task (`- [ ] …`) is the answer, above a note that holds none and says "need"
    ("A guidebook would be nice, no real need"): "need to do" names the kind asked for, and
    is not searched."""
    assert answer_kind("What do I need to do before the trip?") == "task"
    assert answer_kind("What else should we do?") == "task" and answer_kind("What's left to do for the party?") == "task"
    assert answer_kind("What did Alice do before the trip?") is None
    assert kind_terms("What do I need to do before the trip?") == {"need"}
    write(vault, "Porto trip.md", "# Porto trip\n\nWe fly on 3 May for the trip.\n\n- [ ] Renew the passport\n- [x] Book the hotel\n")
    write(vault, "Ideas.md", "# Ideas\n\nFor the trip, a guidebook would be nice, no real need.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("What do I need to do before the trip?", limit=3)["hits"]
        assert "Renew the passport" in hits[0]["content"] and hits[0]["breakdown"]["answer"], [(h["content"][:30], h["score"]) for h in hits]
