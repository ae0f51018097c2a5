"""walk: author names in a question are matched by the author signal, not by content."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from vaultmind.config import load_config
from vaultmind.index.lexical import terms
from vaultmind.memory import Memory
from vaultmind.retrieval.identity import IDENTITY_WEIGHT
from vaultmind.retrieval.people import asked_speakers, author_terms, describes, person_terms, without_words
from vaultmind.retrieval.wording import role_terms

from .conftest import write, write_chat


def _asked(vault: Path, day: str, messages: list[tuple[str, str]], *questions: str) -> list[dict[str, Any]]:
    """Walk's answers to `questions` over one day of chat `messages` (no embedder)."""
    write_chat(vault, day, messages)
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        return [memory.walk(question) for question in questions]


def test_without_words_drops_names_and_possessives() -> None:
    names = frozenset(terms("Emil Jolene"))
    assert without_words("What are Jolene's hobbies?", names) == "What are hobbies?"
    assert without_words("How do Emil and Jolene relax?", names) == "How do and relax?"
    assert without_words("Emil?", names) == "Emil?", "nothing else left: the question stays"
    assert without_words("What did Natalie say?", names) == "What did Natalie say?"


def test_question_naming_an_author_finds_what_they_wrote(vault: Path) -> None:
    write_chat(
        vault,
        "2024-05-02",
        [
            ("Bob Stone", "Alice, the ferry schedule changed again, Alice!"),
            ("Alice Chen", "I took the morning ferry to Ischia and swam all afternoon."),
            ("Bob Stone", "Alice, are you coming to the ferry terminal party?"),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        assert set(terms("Alice Chen Bob Stone")) <= author_terms(memory)
        result = memory.query("walk", {"query": "Where did Alice go by ferry?"})
        (alice,) = terms("Alice")
        assert alice in result["query"]["terms"]
        assert alice not in result["query"]["content_terms"]
        top = result["hits"][0]
        assert top["author"] == "Alice Chen", [h["content"] for h in result["hits"]]
        assert top["breakdown"]["author"] == 1.0
        assert top["breakdown"]["entity"] == 1.0, "her own message involves her as much as a mention"


def test_author_terms_follow_the_index(vault: Path) -> None:
    write_chat(vault, "2024-05-02", [("Bob Stone", "Lunch at noon?")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert "dana" not in author_terms(memory)
        write_chat(vault, "2024-05-03", [("Dana Whitfield", "Sure, noon works.")])
        memory.sync()
        assert {"dana", "whitfield"} <= author_terms(memory)


def test_what_a_named_person_said_comes_before_what_others_said_to_them(vault: Path) -> None:
    said, about = (
        result["hits"]
        for result in _asked(
            vault,
            "2024-03-05",
            [
                ("Bob Stone", "Got a minute on the budget? The migration estimate for the budget is done."),
                ("Alice Chen", "Sure. What do you need?"),
                ("Bob Stone", "Two more weeks of contractors, about 4,000 for the migration."),
                (
                    "Alice Chen",
                    "The whole Q2 launch budget is 18,000: the launch evening at the harbour venue takes 6,500 of "
                    "it, paid ads get 4,000 from late April, and contractors and the load test share what is left over.",
                ),
            ],
            "What did Alice say about the budget?",
            "Alice and the budget",
        )
    )
    assert said[0]["author"] == "Alice Chen" and "18,000" in said[0]["content"], [h["content"] for h in said]
    assert said[0]["breakdown"]["author"] == 1.0
    assert about[0]["author"] == "Bob Stone", "without a verb of saying, the author weighs as any entity"


def test_an_alias_from_the_entity_note_names_the_author(vault: Path) -> None:
    write(
        vault,
        "entities/person/priya-natarajan.md",
        '---\nvaultmind: entity\nid: "person:priya-natarajan"\nkind: person\ndisplay_name: Priya Natarajan\n'
        "aliases:\n  - Natty\n---\n# Priya Natarajan\n",
    )
    by_alias, by_name = _asked(
        vault,
        "2025-06-14",
        [
            ("Kai Mueller", "Rolling back now, the rollback of the primary is under way."),
            ("Priya Natarajan", "Good call. I will write up why we had to roll back."),
        ],
        "What did Natty say about the rollback?",
        "What did Priya say about the rollback?",
    )
    top = by_alias["hits"][0]
    assert top["author"] == "Priya Natarajan" and top["breakdown"]["author"] == 1.0, [h["content"] for h in by_alias["hits"]]
    assert "natti" not in by_alias["query"]["content_terms"], "the alias is the author's, not content"
    assert [h["node_id"] for h in by_alias["hits"]] == [h["node_id"] for h in by_name["hits"]]


def test_a_verb_of_saying_or_from_an_author_asks_for_their_words() -> None:
    authors = frozenset(terms("Alice Chen Elena Rossi"))
    alice, elena = set(terms("Alice")), set(terms("Elena"))
    assert asked_speakers("What did Alice say about the budget?", authors) == (alice, set(terms("say")))
    assert asked_speakers("Which city did Alice recommend?", authors) == (alice, set(terms("recommend")))
    assert asked_speakers("emails from Elena", authors) == (elena, set())
    assert asked_speakers("What did Alice tell Elena?", authors) == (alice, set(terms("tell"))), "not the listener"
    assert asked_speakers("What did Emil say?", authors) == (set(), set()), "not an author of this memory"
    assert asked_speakers("Alice and the budget", authors) == (set(), set())
    assert asked_speakers("emails from alice@example.org", authors) == (alice, set()), "an address: its local part"


def test_the_verb_is_not_searched_when_the_author_is_asked_for(vault: Path) -> None:
    (result,) = _asked(
        vault,
        "2025-06-14",
        [
            ("Bob Stone", "I write the release notes, the write-ahead log notes too."),
            ("Alice Chen", "The venue shortlist: Casa do Rio or the LX Factory loft."),
        ],
        "What did Alice write?",
    )
    assert result["hits"][0]["author"] == "Alice Chen", [h["content"] for h in result["hits"]]
    assert "write" not in result["query"]["content_terms"]


def test_the_speaker_weighs_more_than_the_listener_the_question_names(vault: Path) -> None:
    priya, jonas = (
        result["hits"]
        for result in _asked(
            vault,
            "2025-06-14",
            [
                ("Priya Natarajan", "Jonas, the rollback plan is in the wiki, read it before Friday."),
                ("Jonas Weber", "Priya, the rollback plan needs a second reviewer before Friday."),
            ],
            "What did Priya tell Jonas about the rollback plan?",
            "What did Jonas tell Priya about the rollback plan?",
        )
    )
    assert priya[0]["author"] == "Priya Natarajan" and jonas[0]["author"] == "Jonas Weber"
    assert priya[0]["breakdown"]["speaker"] and not priya[1]["breakdown"]["speaker"]


def test_a_name_that_is_a_stop_word_names_its_author_but_a_month_does_not(vault: Path) -> None:
    may, will, month = _asked(
        vault,
        "2025-06-14",
        [
            ("Bob Stone", "May, Will: got a minute on the budget? The migration estimate for the budget is done."),
            ("May Chen", "The whole Q2 launch budget is 18,000, and the venue takes 6,500 of it."),
            ("Will Park", "I think the budget for ads is too small."),
        ],
        "What did May say about the budget?",
        "What did Will say about the budget?",
        "What happened in May?",
    )
    (january,) = _asked(vault, "2025-01-14", [("Jan Novak", "The roof is leaking over the attic.")], "What did Jan say in January?")
    assert [e["id"] for e in january["query"]["entities"]] == ["person:jan-novak"], "Jan is no month"
    assert [may["hits"][0]["author"], will["hits"][0]["author"]] == ["May Chen", "Will Park"]
    assert may["hits"][0]["breakdown"]["speaker"] and will["hits"][0]["breakdown"]["speaker"]
    assert [e["id"] for e in will["query"]["entities"]] == ["person:will-park"]
    assert month["query"]["entities"] == [], "in May is a month here"


def test_a_name_that_is_a_common_word_is_searched_when_not_written_as_a_name(vault: Path) -> None:
    due, said = _asked(
        vault,
        "2025-03-05",
        [
            ("Bill Turner", "Morning! Coffee later?"),
            ("Ann Lee", "The electricity bill is due on the 20th, 140 euros."),
            ("Bill Turner", "Sure, coffee at ten."),
        ],
        "when is the electricity bill due?",
        "What did Bill say about coffee?",
    )
    assert "bill" in due["query"]["content_terms"]
    assert due["hits"][0]["author"] == "Ann Lee" and due["hits"][0]["breakdown"]["author"] == 0.0
    assert said["hits"][0]["author"] == "Bill Turner" and "bill" not in said["query"]["content_terms"]


def test_last_tuesday_finds_what_happened_that_day_not_what_says_tuesday(vault: Path) -> None:
    write_chat(
        vault,
        "2024-03-05",
        [
            ("Bob Stone", "Got a minute on the budget? The migration estimate is done: 7 to 9 working days."),
            ("Alice Chen", "So the load test is fine. The second staging cluster is another 900 a month."),
        ],
    )
    write_chat(
        vault,
        "2024-03-07",
        [
            ("Alice Chen", "Decision: we move the public launch from Tuesday 9 April to Tuesday 23 April."),
            ("Bob Stone", "Noted, I will tell the press contacts about the new date."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("what happened last Tuesday?", reference_time=datetime(2024, 3, 12, 10, tzinfo=UTC))
    assert result["query"]["content_terms"] == ["happen"]
    assert result["hits"] and all(h["time_range"]["start"].startswith("2024-03-05") for h in result["hits"]), [
        h["content"] for h in result["hits"]
    ]
    assert not any("Tuesday 23 April" in h["content"] for h in result["hits"]), "nor is the question searched"


def test_a_name_written_in_lower_case_names_its_author_when_the_memory_writes_it_as_a_name(vault: Path) -> None:
    """People (and agents relaying them) type "john"; "bill" stays a word where the memory
    writes "the electricity bill"."""
    party, due = _asked(
        vault,
        "2021-12-18",
        [
            ("Jane Doe", "Hello John! Is the garden party on Saturday?"),
            ("John Doe", "Yes, I bring the lemonade and the folding chairs."),
            ("Ann Lee", "The electricity bill is due on the 20th, 140 euros."),
            ("Bill Turner", "Coffee at ten before the party?"),
        ],
        "what did john say about the party?",
        "when is the electricity bill due?",
    )
    assert party["hits"][0]["author"] == "John Doe" and party["hits"][0]["breakdown"]["speaker"]
    assert "john" not in party["query"]["content_terms"]
    assert "bill" in due["query"]["content_terms"] and due["hits"][0]["author"] == "Ann Lee"


def test_a_question_about_nothing_but_its_author_is_not_searched_densely(vault: Path) -> None:
    """"What did John Doe say?": the nearest vectors to "what did say" are noise, and were
    scaled up to a full dense score above John's own messages."""
    write_chat(
        vault,
        "2021-12-18",
        [
            ("John Doe", "Lorem ipsum dolor sit amet."),
            ("Jane Doe", "What do you say we meet on Saturday?"),
            ("Mei Chen", "Did you say something about the garden?"),
            ("John Doe", "See you at the garden party."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("What did John Doe say?")["hits"]
    assert [h["author"] for h in hits[:2]] == ["John Doe", "John Doe"]
    assert all(h["breakdown"]["dense"] == 0 for h in hits)


def test_a_note_answers_for_the_named_speaker_by_their_own_message(vault: Path) -> None:
    """"What did Helen say about the launch budget?": the thread's best match is Alice's mail
    to Helen (the question's words); Helen's reply, the answer, speaks for the thread among the
    first five instead of following five other notes that only share the words."""
    write_chat(
        vault,
        "2024-03-11",
        [
            ("Alice Chen", "Helen, here is the Q2 launch budget: 18,000 in total, the venue takes 6,500."),
            ("Helen Okafor", "Approved, with one condition: the contingency is only spent with my OK."),
        ],
    )
    for n, day in enumerate(("2024-03-04", "2024-03-05", "2024-03-06", "2024-03-07", "2024-03-08")):
        write_chat(vault, day, [("Bob Stone", f"The launch budget sheet {n} is in the drive, the launch budget tab.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("What did Helen say about the launch budget?")["hits"]
    helen = next(k for k, h in enumerate(hits) if h["author"] == "Helen Okafor")
    assert helen < 5 and hits[helen]["breakdown"]["speaker"], [h["author"] for h in hits]


def test_links_and_addresses_are_no_lower_case_use_of_a_name(vault: Path) -> None:
    """`[[bob-stone|Bob]]`, bob@example.com and #bob are no sign that "bob" is a common word."""
    write(vault, "People/bob-stone.md", "# Bob Stone\n\nbob@example.com, #bob, see [[bob-stone|Bob]] and [[bob-stone]].\n")
    (asked,) = _asked(
        vault,
        "2024-03-05",
        [("Bob Stone", "The migration estimate is done: 7 to 9 working days."), ("Alice Chen", "Noted, thanks.")],
        "what did bob say about the migration?",
    )
    assert asked["hits"][0]["author"] == "Bob Stone" and asked["hits"][0]["breakdown"]["speaker"]


def test_with_no_word_matched_a_leaf_of_the_named_person_outranks_the_nearest_vector(vault: Path) -> None:
    """No message holds a content word of the question: the best dense match scores in full
    however weak it is, and had ranked another person's message first."""
    write_chat(
        vault,
        "2024-03-11",
        [
            ("Alice Chen", "Good point, adding it to the risks."),
            ("Bob Stone", "Who takes care of the venue booking?"),
            ("Priya Raman", "I will own the onboarding flow and the usability tests."),
            ("Mei Chen", "He must not find out! I told him Saturday is for the garden."),
        ],
    )
    write_chat(vault, "2024-03-12", [("Helen Okafor", "Approved. Please send me the final invoices by 10 May.")])
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("What is Helen Okafor responsible for?")
    hits = result["hits"]
    assert all(h["breakdown"]["lex"] == 0 for h in hits), "the premise: no word of the question matches"
    assert hits[0]["author"] == "Helen Okafor", [(h["author"], h["breakdown"]["dense"]) for h in hits]
    others = [h for h in hits if h["author"] != "Helen Okafor"]
    assert others and all(h["breakdown"]["ungrounded"] for h in others)
    assert not hits[0]["breakdown"]["ungrounded"]


def test_an_entity_note_is_about_its_own_entity(vault: Path) -> None:
    """"Who is Dana?": Dana's own note never mentions her as an entity (a note does not mention
    itself), and its entity signal had been 0."""
    write(vault, "entities/person/dana-park.md", '---\nvaultmind: entity\nid: "person:dana-park"\nkind: person\n'
          "display_name: Dana Park\naliases:\n  - Dana\n---\n# Dana Park\n\nRuns the pottery studio on Harbour Street.\n")
    write_chat(vault, "2024-03-04", [("Alice Chen", "Dana said the kiln is fixed."), ("Bob Stone", "Great news.")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("Who is Dana?")["hits"]
    own = next(h for h in hits if h["note_path"] == "entities/person/dana-park.md")
    assert own["breakdown"]["entity"] == 1.0


def test_who_someone_is_is_said_first_by_their_own_note(vault: Path) -> None:
    """"Who is Bob?" had ranked Bob's own note, which says who he is, fourth, behind the
    messages that name him. A question about nothing but who or what an entity is puts its own
    note first; any other question about him does not."""
    write(vault, "entities/person/bob-stone.md", '---\nvaultmind: entity\nid: "person:bob-stone"\nkind: person\n'
          "display_name: Bob Stone\naliases:\n  - Bob\n---\n# Bob Stone\n\nBackend engineer at Fernhill. Owns payments, "
          "infrastructure and the App Store submission.\n")  # fmt: skip
    write_chat(
        vault,
        "2024-03-04",
        [
            ("Alice Chen", "Bob, can you write up the migration estimate by Wednesday? Bob knows the payments code best."),
            ("Bob Stone", "Sure, I will post it in the channel tomorrow."),
            ("Priya Raman", "Bob said the staging cluster stays up through April."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        for question in ("Who is Bob?", "who's Bob Stone", "Tell me about Bob", "What do we know about Bob?"):
            hits = memory.walk(question)["hits"]
            assert hits[0]["note_path"] == "entities/person/bob-stone.md", (question, [h["note_path"] for h in hits])
            assert hits[0]["breakdown"]["identity"] > 0
        other = memory.walk("What did Bob say about the staging cluster?")["hits"]
        assert other[0]["note_path"].startswith("sources/") and not any(h["breakdown"]["identity"] for h in other)


def test_what_someone_works_on_is_said_by_their_own_note(vault: Path) -> None:
    """"What does Bob work on?" asks what he does, which his note says ("Backend engineer …
    Owns payments"); "work" is not its topic: his "8 more working days" had come first."""
    assert role_terms("What does Bob work on?") == {"work"}
    assert role_terms("What is Marco's job?") == {"job"}
    assert role_terms("What did Bob say about work?") == set()
    write(vault, "entities/person/bob-stone.md", '---\nvaultmind: entity\nid: "person:bob-stone"\nkind: person\n'
          "display_name: Bob Stone\naliases:\n  - Bob\n---\n# Bob Stone\n\nBackend engineer at Fernhill. Owns payments "
          "and the App Store submission.\n")  # fmt: skip
    write_chat(vault, "2024-03-04", [("Bob Stone", "Realistically I need about 8 more working days."), ("Alice Chen", "OK, noted.")])
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        for question in ("What does Bob work on?", "What is Bob working on?", "What is Bob's job?"):
            hits = memory.walk(question)["hits"]
            assert hits[0]["note_path"] == "entities/person/bob-stone.md", (question, [h["content"] for h in hits])


def test_who_someone_is_is_said_by_the_notes_of_what_they_belong_to(vault: Path) -> None:
    """Dana's own note holds only her name; the venue's note says who she is. Asked "who is
    Dana?", that note had come third, behind mails that only name her."""
    write(vault, "entities/person/dana-whitfield.md", '---\nvaultmind: entity\nid: "person:dana-whitfield"\n'
          "kind: person\ndisplay_name: Dana Whitfield\naliases:\n  - Dana\n---\n# Dana Whitfield\n")  # fmt: skip
    write(vault, "entities/org/harbor-hall.md", '---\nvaultmind: entity\nid: "org:harbor-hall"\nkind: org\n'
          "display_name: Harbor Hall\n---\n# Harbor Hall\n\nEvent venue on the quays. Contact: Dana Whitfield, "
          "events manager. The Loft holds 120 guests.\n")  # fmt: skip
    write_chat(
        vault,
        "2024-03-07",
        [
            ("Alice Chen", "I'm emailing Dana at Harbor Hall to move the launch evening to the 23rd."),
            ("Dana Whitfield", "Hi Alice, the Loft is free on Tuesday 23 April, 18:00 to 23:00. Dana"),
            ("Bob Stone", "Dana confirmed, Dana is great, Dana rocks, thanks Dana."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("Who is Dana Whitfield?")["hits"]
    assert hits[0]["note_path"] == "entities/org/harbor-hall.md", [h["note_path"] for h in hits]
    assert hits[0]["breakdown"]["identity"] > 0


def test_who_someone_is_comes_from_the_note_that_says_it_when_their_own_says_nothing(vault: Path) -> None:
    """Dana's own note is her name alone: the venue's note, the only one that says who she is
    ("Contact: Dana Whitfield, events manager"), comes before the mails she wrote and signed."""
    write(vault, "entities/person/dana-whitfield.md", '---\nvaultmind: entity\nid: "person:dana-whitfield"\n'
          "kind: person\ndisplay_name: Dana Whitfield\naliases:\n  - Dana\n---\n# Dana Whitfield\n")  # fmt: skip
    write(vault, "entities/org/harbor-hall.md", '---\nvaultmind: entity\nid: "org:harbor-hall"\nkind: org\n'
          "display_name: Harbor Hall\n---\n# Harbor Hall\n\nEvent venue on the quays. Contact: Dana Whitfield, "
          "events manager. The Loft holds 120 guests, with catering by the venue and a bar on the terrace.\n")  # fmt: skip
    write_chat(
        vault,
        "2024-03-07",
        [
            ("Alice Chen", "Hi Dana, is the Loft free on 23 April?"),
            ("Dana Whitfield", "Hi Alice, the Loft is free on Tuesday 23 April. I'll hold it until noon. Dana"),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("Who is Dana?")["hits"]
    assert hits[0]["note_path"] == "entities/org/harbor-hall.md", [(h["content"][:30], h["score"]) for h in hits]
    assert hits[0]["breakdown"]["identity"] == IDENTITY_WEIGHT


def test_who_someone_is_is_not_taken_from_notes_that_name_them_in_passing(vault: Path) -> None:
    """Omar's own note is his name alone; his manager's and his company's notes name him in
    passing ("Manages Omar.", "Omar's team sits next to finance"): they say nothing of who he
    is and keep half the identity weight (all of it had put them above the note of yours that
    says it: "my buddy is Omar Said, a data engineer")."""
    write(vault, "entities/person/omar.md", '---\nvaultmind: entity\nid: "person:omar"\nkind: person\n'
          "display_name: Omar\n---\n# Omar\n")  # fmt: skip
    write(vault, "entities/person/priscilla-hart.md", '---\nvaultmind: entity\nid: "person:priscilla-hart"\n'
          "kind: person\ndisplay_name: Priscilla Hart\n---\n# Priscilla Hart\n\nHead of operations at Acme Corp. "
          "Manages Omar.\n")  # fmt: skip
    write(vault, "entities/org/acme-corp.md", '---\nvaultmind: entity\nid: "org:acme-corp"\nkind: org\n'
          "display_name: Acme Corp\n---\n# Acme Corp\n\nAcme Corp is a logistics company in Leeds. Its offices "
          "are on the 4th floor; Omar's team sits next to finance.\n")  # fmt: skip
    write(vault, "Onboarding.md", "# Onboarding at Acme\n\nMy buddy is Omar Said, a data engineer who has been "
          "at Acme for five years. He helps with laptop setup.\n")  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        who = memory.walk("Who is Omar?")["hits"]
        does = memory.walk("What does Omar do?")["hits"]
    for hits in (who, does):
        passing = {h["note_path"]: h["breakdown"]["identity"] for h in hits if h["note_path"].startswith("entities/")}
        assert passing == {
            "entities/person/priscilla-hart.md": IDENTITY_WEIGHT / 2,
            "entities/org/acme-corp.md": IDENTITY_WEIGHT / 2,
            "entities/person/omar.md": 0.0,
        }, passing


@pytest.mark.parametrize(
    ("text", "names", "said"),
    [
        ("Event venue on the quays. Contact: Dana Whitfield, events manager.", ["Dana Whitfield", "Dana"], True),
        ("Contact: [[dana-whitfield|Dana Whitfield]], events manager.", ["Dana Whitfield"], True),
        ("| [[bob-stone\\|Bob]] | backend, payments |", ["Bob Stone", "Bob"], True),
        ("Dana is the events manager.", ["Dana"], True),
        ("Omar (data engineer) helps with laptops.", ["Omar"], True),
        ("Head of operations at Acme Corp. Manages Omar.", ["Omar"], False),
        ("Its offices are on the 4th floor; Omar's team sits next to finance.", ["Omar"], False),
        ("We met Omar, Tom and Grace.", ["Omar"], False),
    ],
)
def test_an_entity_note_describes_a_name_set_off_by_a_description(text: str, names: list[str], said: bool) -> None:
    assert describes(text, names) is said


def test_tell_me_about_someone_is_about_them_not_the_word_tell(vault: Path) -> None:
    """"Tell me about Bob" had searched "tell": "I told him Saturday is for the garden" (Mei's,
    about someone else) came first. Its only words besides the name ask: the leaves about Bob
    that say the most lead. A note of nothing but a name's heading is not about anyone."""
    write(vault, "entities/person/tom-becker.md", '---\nvaultmind: entity\nid: "person:tom-becker"\nkind: person\n'
          "display_name: Tom Becker\n---\n# Tom Becker\n")
    write_chat(
        vault,
        "2024-03-04",
        [
            ("Mei Chen", "He must not find out! I told him Saturday is for the garden."),
            ("Bob Stone", "Heads-up: the payments migration is bigger than we thought, renewals stop after 1 April."),
            ("Bob Stone", "ok"),
            ("Alice Chen", "Tom Becker sends his regards."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("Tell me about Bob")["hits"]
        assert hits[0]["author"] == "Bob Stone" and "migration" in hits[0]["content"]
        assert all(h["breakdown"]["lex"] == 0 and h["breakdown"]["dense"] == 0 for h in hits)
        assert not any("told him" in h["content"] for h in hits[:2])
        tom = memory.walk("Who is Tom Becker?")["hits"]
    heading = [h for h in tom if h["note_path"] == "entities/person/tom-becker.md"]
    assert all(h["breakdown"]["entity"] == 0 for h in heading)


def test_an_entity_note_of_nothing_but_its_heading_is_no_answer(vault: Path) -> None:
    """"Who is Daniel?" showed "# Daniel Chen" first: a heading alone matches the name's words
    at a short leaf's best, and says nothing of him."""
    write(vault, "entities/person/daniel-chen.md", '---\nvaultmind: entity\nid: "person:daniel-chen"\nkind: person\n'
          "display_name: Daniel Chen\n---\n# Daniel Chen\n")  # fmt: skip
    write(vault, "Daily/2024-03-07.md", "# Thursday, 7 March 2024\n\n- Launch sync: we moved the launch to 23 April.\n"
          "- Emailed Dana at Harbor Hall; the Loft is free on the 23rd. Confirm tomorrow morning.\n"
          "- Dad's 60th is Saturday 23 March: Daniel is organizing, I do the cake.\n")  # fmt: skip
    write_chat(vault, "2024-03-09", [("Daniel Chen", "Cost split: dinner is about 540 (60 a head). I'll pay and we settle after."),
                                     ("Mei Chen", "Good.")])  # fmt: skip
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("Who is Daniel?")["hits"]
    assert hits[0]["note_path"] != "entities/person/daniel-chen.md", [h["content"] for h in hits]
    heading = [h for h in hits if h["note_path"] == "entities/person/daniel-chen.md"]
    assert heading and heading[0]["breakdown"]["bare_name"], "still found, behind what says something of him"


def test_a_month_in_the_window_is_no_author_of_that_name(vault: Path) -> None:
    """"What are we doing in May?" had ranked May Chen's latest messages first: the month was
    dropped from the question's entities, but not from its authors."""
    write_chat(vault, "2025-03-01", [("May Chen", "I'm making soup tonight."), ("May Chen", "Anyone seen my keys?")])
    write_chat(vault, "2025-03-05", [("Bob Stone", "In May we fly to Porto for the wedding, 14 May."), ("May Chen", "ok")])
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        result = memory.walk("What are we doing in May?", reference_time=datetime(2025, 3, 12, 12))
    assert result["hits"][0]["content"].startswith("In May we fly"), [h["content"] for h in result["hits"]]
    assert not any(h["breakdown"]["author"] for h in result["hits"])


def test_what_someone_said_comes_latest_first(vault: Path) -> None:
    """"What did Dana say?" ranked her messages at one score, in the order of their ids: of what
    a person said, the latest comes first (it may have changed what came before)."""
    days = ["2024-03-04", "2024-03-06", "2024-03-05", "2024-03-08", "2024-03-07"]
    for n, day in enumerate(days):
        write_chat(
            vault,
            day,
            [
                ("Alice Chen", "Morning, any news from the venue about the evening?"),
                ("Dana Whitfield", f"Update {n}: the Loft is held for you, the contract and the deposit details follow today."),
                ("Alice Chen", "Thanks, that helps a lot."),
            ],
        )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.walk("What did Dana say?", limit=5)["hits"]
    assert [h["time_range"]["start"][:10] for h in hits] == sorted(days, reverse=True)
    assert all(h["author"] == "Dana Whitfield" for h in hits)
    assert hits[0]["breakdown"]["latest"] > hits[1]["breakdown"]["latest"] > 0 == hits[-1]["breakdown"]["latest"]


def test_a_surname_and_a_possessive_without_its_apostrophe_name_their_person(vault: Path) -> None:
    """"What is in Okafors team?" found no Okafor: a surname named no one (only first names
    did), and "Okafors" was no name at all. A surname only one known person has names them,
    and a word ending in "s" that is no English word, whose stem is a name's, is its possessive."""
    write_chat(
        vault,
        "2024-03-08",
        [
            ("Bob Stone", "The team lunch is at noon, the whole team is coming, team!"),
            ("Alice Chen", "Helen Okafor from our finance team will pay the deposit today."),
            ("Helen Okafor", "Deposit paid, the invoice is in the shared folder."),
            ("Mei Chen", "Lovely."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("what is in Okafors team?")
        assert result["query"]["corrected"] == {"okafors": "okafor's"}
        assert [e["id"] for e in result["query"]["entities"]] == ["person:helen-okafor"]
        assert result["hits"][0]["content"].startswith("Helen Okafor from our finance team"), [h["content"] for h in result["hits"]]
        assert memory.walk("What did Chen say?")["query"]["entities"] == [], "the surname of two names neither"


def test_a_name_ending_in_s_is_no_possessive() -> None:
    from vaultmind.retrieval.spelling import possessives

    names = frozenset({"okafor", "jame", "davi", "marcos"})
    assert possessives("Okafors team and okafors desk", names, frozenset()) == {"okafors": "okafor's"}
    assert possessives("what did James Davis and Marcos say?", names, frozenset()) == {}, "words, and a name known"
    assert possessives("Whitfields email", frozenset(), frozenset({"whitfield"})) == {"whitfields": "whitfield's"}
    assert possessives("what about the Okafors?", names, frozenset()) == {}, "a family"


def test_the_speakers_unrelated_message_does_not_take_the_place_of_one_on_the_topic(vault: Path) -> None:
    """Mei never spoke of Facebook: Daniel's message on it answers before her unrelated one,
    which had taken the chat's place among the first hits because she is the speaker asked
    about (her reply to a message on the topic still does: see the test above)."""
    messages = [
        ("Daniel Chen", "Remember: nobody posts anything on Facebook until after dinner!"),
        ("Alice Chen", "I'll get the cake from Bakery Rosa. Black sesame, his favourite."),
        ("Daniel Chen", "I booked Golden Lantern, 19:00, table for 9. Private room upstairs."),
        ("Alice Chen", "Good. Auntie Lin and Uncle Joe are coming from Leeds, they arrive Friday."),
        ("Mei Chen", "I will pay for Auntie's train."),
    ]
    write_chat(vault, "2024-03-09", messages)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("What did Mei say about Facebook?")["hits"]
    assert "Facebook" in hits[0]["content"], [h["content"] for h in hits]
    assert any(h["author"] == "Mei Chen" and h["breakdown"]["speaker"] for h in hits), "hers still follow"


def test_something_of_an_entitys_is_not_asked_of_a_conversation_that_never_involves_them(vault: Path) -> None:
    """"What is in Okafor's team?" had ranked the family chat's "Ok team, Dad's 60th!" (the word,
    and a near vector) above "Helen Okafor from our finance team": a conversation Helen takes no
    part in and never names says nothing of her team."""
    write_chat(
        vault,
        "2024-03-09",
        [
            ("Daniel Chen", "Ok team, Dad's 60th! He thinks we're just having lunch at home on the 23rd."),
            ("Mei Chen", "He must not find out!! I told him Saturday is for the garden."),
            ("Alice Chen", "I'll get the cake from Bakery Rosa. Black sesame, his favourite."),
        ],
    )
    write_chat(
        vault,
        "2024-03-08",
        [
            ("Alice Chen", "Please book the 23rd. Helen Okafor from our finance team will pay the deposit today."),
            ("Dana Whitfield", "Booked. The Loft is yours on the 23rd, 18:00 to 23:00."),
            ("Helen Okafor", "Deposit paid, the invoice is in the shared folder."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("What is in Okafor's team?")["hits"]
        assert hits[0]["content"].startswith("Please book the 23rd. Helen Okafor"), [h["content"] for h in hits]
        family = next(h for h in hits if h["content"].startswith("Ok team"))
        assert family["breakdown"]["ungrounded"]
        asked = memory.walk("What is in the team?")["hits"]
        assert not any(h["breakdown"]["ungrounded"] for h in asked), "no one's team: every conversation may tell"


def test_what_someone_sent_asks_for_their_words(vault: Path) -> None:
    """"What email did Dana send about the Loft?" had ranked Alice's mails to Dana first: "send"
    is a verb of saying, as "write" is, and Dana the speaker."""
    authors = frozenset(terms("Alice Chen Dana Whitfield"))
    dana = set(terms("Dana"))
    assert asked_speakers("What email did Dana send about the Loft?", authors) == (dana, set(terms("send")))
    assert asked_speakers("What did Dana text Alice?", authors) == (dana, set(terms("text")))
    (result,) = _asked(
        vault,
        "2024-03-06",
        [
            ("Alice Chen", "Hi Dana, I'd like to confirm the Loft for our launch evening on 9 April. Could you send the contract?"),
            ("Dana Whitfield", "Happy to. The contract is attached; the hire fee includes AV and bar staff."),
            ("Alice Chen", "Is the Loft free on 23 April instead? We moved the launch, sorry Dana."),
        ],
        "What email did Dana send about the Loft?",
    )
    assert result["hits"][0]["author"] == "Dana Whitfield", [h["content"] for h in result["hits"]]


def test_a_surname_that_is_a_month_names_no_one_alone(vault: Path) -> None:
    """"What did we decide for May?" named Brian May, and "when is the March parade?" Bill
    March (a surname only one person has names them), and "the March release" a
    `person:retro-3-march` read from a meeting's heading: Brian's messages on staging came
    first. A month's or a day's name is written with its capital whatever it means."""
    write(vault, "entities/person/retro-3-march.md", '---\nvaultmind: entity\nid: "person:retro-3-march"\n'
          "kind: person\ndisplay_name: Retro 3 March\n---\n# Retro 3 March\n")  # fmt: skip
    write_chat(
        vault,
        "2026-02-16",
        [
            ("Brian May", "I set up the staging server, the credentials are in the vault."),
            ("Brian May", "Staging is slow today, I am restarting it."),
            ("Dana Whitfield", "We decide for May: the offsite at Harbor Hall, two days."),
            ("Bill March", "I will be in the parade on Saturday, come and watch."),
            ("Dana Whitfield", "The March release ships the billing page."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        for question in ("what did we decide for May?", "when is the March parade?", "what is in the March release?"):
            assert memory.walk(question)["query"]["entities"] == [], question
        assert memory.walk("what did we decide for May?")["hits"][0]["content"].startswith("We decide for May")
        assert [e["id"] for e in memory.walk("What did Bill March say?")["query"]["entities"]] == ["person:bill-march"]


def test_an_entity_note_of_a_few_words_is_an_answer(vault: Path) -> None:
    """An entity note of four terms or fewer kept half its score as a heading alone would:
    "which aunt is a nurse?" ranked a message about another nurse above "# May Chen / My aunt,
    a nurse.", which holds both words. Only a note of no more terms than its name says nothing."""
    write(vault, "entities/person/may-chen.md", '---\nvaultmind: entity\nid: "person:may-chen"\n'
          "kind: person\ndisplay_name: May Chen\n---\n# May Chen\n\nMy aunt, a nurse.\n")  # fmt: skip
    write(vault, "entities/person/tom-reed.md", '---\nvaultmind: entity\nid: "person:tom-reed"\n'
          "kind: person\ndisplay_name: Tom Reed\n---\n# Tom Reed\n")  # fmt: skip
    write_chat(
        vault,
        "2025-06-01",
        [
            ("Agnes Brown", "May Chen is coming on Sunday with a cake."),
            ("Tom Reed", "The nurse at the clinic was kind."),
            ("Tom Reed", "Our aunt sends her love."),
            ("Agnes Brown", "Tom Reed fixed the gate."),
        ],
    )
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        top = memory.walk("which aunt is a nurse?")["hits"][0]
        assert top["content"].startswith("# May Chen"), top["content"]
        assert not top["breakdown"]["bare_name"]
        hits = memory.walk("who is Tom Reed?")["hits"]
        assert [h["breakdown"]["bare_name"] for h in hits if h["content"].startswith("# Tom Reed")] == [True]


def test_the_speakers_reply_a_message_after_the_question_on_the_topic_takes_its_place(vault: Path) -> None:
    """Sam answered Ines's question two messages on, after Marta's "Not me": his reply, which
    holds none of the question's words, had lost the chat's first place to Ines's question."""
    messages = [
        ("Ines", "Morning! Who has the text for the allergen page?"),
        ("Marta", "Not me, I only do the layout"),
        ("Sam", "I'll write it this week"),
        ("Joon", "Stripe test keys arrived, thanks"),
        ("Joon", "My manager wants a demo of the checkout on Friday"),
    ]
    write_chat(vault, "2024-07-03", messages)
    write_chat(vault, "2024-07-08", [("Marta", "Can you text me the photographer's number?"), ("Sam", "07700 900123")])
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        hits = memory.walk("What did Sam say about the allergen page?")["hits"]
    assert hits[0]["content"] == "I'll write it this week", [h["content"] for h in hits]


def test_an_authors_terms_leave_out_a_title_kinship_too() -> None:
    """"Auntie Lin" is Lin (`person:lin`) and "Dr. Elena Rossi" Elena Rossi: the author signal
    matches the name, never the title ("aunti" is no word of hers)."""
    assert person_terms("Auntie Lin") == person_terms("Lin") == frozenset(terms("Lin"))
    assert person_terms("Uncle Bob Stone <bob@acme.example>") == frozenset(terms("Bob Stone"))
    assert person_terms("Dr. Elena Rossi") == frozenset(terms("Elena Rossi"))
    assert person_terms("Auntie") == frozenset(terms("Auntie"))  # a title alone stays


def test_every_speaker_joined_before_the_verb_is_asked_for() -> None:
    authors = frozenset(terms("Alice Chen Bob Stone Carol Diaz"))
    alice, bob, carol = (set(terms(name)) for name in ("Alice", "Bob", "Carol"))
    assert asked_speakers("What did Alice and Bob say about the trip?", authors)[0] == alice | bob
    assert asked_speakers("What did Alice, Carol & Bob say?", authors)[0] == alice | bob | carol
    assert asked_speakers("What did Alice Chen or Bob Stone say?", authors)[0] == set(terms("Alice Chen Bob Stone"))
    assert asked_speakers("Besides the trip and Bob, what did Carol say?", authors)[0] == carol, "not past a word that names no author"
    assert asked_speakers("What did the team and Bob say?", authors)[0] == bob


def test_a_question_naming_two_speakers_finds_both_and_first_what_they_said_to_each_other(vault: Path) -> None:
    write_chat(vault, "2024-05-02", [("Alice Chen", "The trip was fun."), ("Bob Stone", "Fun trip, indeed.")])
    write_chat(
        vault,
        "2024-05-04",
        [
            ("Carol Diaz", "Trip photos from the trip!"),
            ("Alice Chen", "The trip was fun, what a trip."),
            ("Carol Diaz", "The trip, the trip: best trip."),
        ],
    )
    write_chat(vault, "2024-05-05", [("Bob Stone", "My cat is sick."), ("Dan Ro", "Lunch anyone?")])
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        result = memory.walk("What did Alice and Bob say about the trip?")
    top = [(h["author"], h["content"]) for h in sorted(result["hits"], key=lambda h: -h["score"])]
    assert {who for who, _ in top[:3]} == {"Alice Chen", "Bob Stone"}, top
    assert {text for _, text in top[:2]} == {"The trip was fun.", "Fun trip, indeed."}, f"what they said to each other first: {top}"
