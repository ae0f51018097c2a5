"""walk: which of several messages that match a question ranks first (the weights and the
rules between the signals)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vaultmind.config import load_config
from vaultmind.embed.base import averages_words
from vaultmind.embed.ollama import OllamaEmbedder
from vaultmind.embed.static import StaticEmbedder
from vaultmind.memory import Memory
from vaultmind.retrieval.signals import WEIGHTS, signal_weights

from .conftest import write_chat


def _hits(vault: Path, days: list[tuple[str, list[tuple[str, str]]]], question: str) -> list[dict[str, Any]]:
    """Walk's hits for `question` over chats of `(day, [(author, text)])`, with the bundled
    static embeddings (the dense signal takes part)."""
    for day, messages in days:
        write_chat(vault, day, messages)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        return list(memory.walk(question)["hits"])


def test_the_named_persons_own_match_outranks_the_nearest_vector(vault: Path) -> None:
    """Bob's short "I will do my research" is the nearest vector to "what did Alice research?"
    and holds its word; Alice's own messages hold it too. The dense signal must not outweigh
    who the question is about."""
    hits = _hits(
        vault,
        [
            (
                "2024-05-02",
                [
                    ("Alice Chen", "Morning! Busy week."),
                    ("Bob Stone", "Same here."),
                    ("Alice Chen", "I spent the weekend researching adoption agencies, it has been a dream of mine for years."),
                    ("Bob Stone", "That is wonderful news."),
                ],
            ),
            (
                "2024-05-09",
                [
                    ("Bob Stone", "How are things?"),
                    ("Alice Chen", "Yep! Do your research first and find a good agency or a lawyer, they help with the paperwork."),
                    ("Bob Stone", "Thanks, I will do my research before I start."),
                ],
            ),
        ],
        "What did Alice research?",
    )
    nearest = next(h for h in hits if h["author"] == "Bob Stone" and "research" in h["content"])
    assert nearest["breakdown"]["dense"] == 1.0, "the fixture's point: Bob's message is the nearest vector"
    assert hits[0]["author"] == "Alice Chen", [(h["author"], h["content"][:40], h["score"]) for h in hits]


def test_anothers_account_of_their_own_life_is_not_the_named_persons(vault: Path) -> None:
    """"When did John take part in a 5K charity run?": Maria's "I ran a 5K charity run" says
    every word of it and is the nearest vector, but tells of her run; John's own message on
    his charity run is the answer."""
    hits = _hits(
        vault,
        [
            (
                "2024-05-02",
                [
                    ("John Park", "Hey Maria, how was your week?"),
                    (
                        "Maria Lopez",
                        "On Sunday I did a 5K charity run for the shelter, the crowd along the way was wonderful.",
                    ),
                    ("John Park", "That is great, well done!"),
                ],
            ),
            (
                "2024-06-12",
                [
                    ("Maria Lopez", "Any news?"),
                    ("John Park", "On Saturday I ran our neighbourhood charity run, all for the veterans."),
                    ("Maria Lopez", "So proud of you!"),
                ],
            ),
        ],
        "When did John take part in a 5K charity run?",
    )
    assert hits[0]["author"] == "John Park" and "veterans" in hits[0]["content"], [
        (h["author"], h["content"][:40], h["score"]) for h in hits
    ]
    marias = next(h for h in hits if h["author"] == "Maria Lopez" and "5K" in h["content"])
    assert marias["breakdown"]["lex"] == 1.0, "the fixture's point: hers holds every word"
    assert marias["breakdown"]["other_author"] and not hits[0]["breakdown"]["other_author"]


def test_a_message_that_asks_about_the_questions_words_tells_nothing_of_them(vault: Path) -> None:
    """"What activities does Mel enjoy?": Mel's "Anything you enjoy in summer, any fun
    activities?" holds both words, but only in what she asks Bob; her message that says what
    she did ranks first."""
    hits = _hits(
        vault,
        [
            (
                "2024-05-02",
                [
                    ("Bob Stone", "I finally finished the big report at work."),
                    (
                        "Mel Tan",
                        "That's great news, Bob! Love seeing your dedication. Anything you enjoy in summer, any fun activities?",
                    ),
                    ("Bob Stone", "Mostly sleeping in."),
                ],
            ),
            (
                "2024-05-09",
                [
                    ("Bob Stone", "How was your weekend?"),
                    (
                        "Mel Tan",
                        "I booked a pottery class yesterday and we took the kids camping too. "
                        "I enjoy activities like these, they calm me down.",
                    ),
                    ("Bob Stone", "Sounds lovely."),
                ],
            ),
        ],
        "What activities does Mel enjoy?",
    )
    assert "pottery" in hits[0]["content"], [(h["content"][:40], h["score"], h["breakdown"]["asking"]) for h in hits]
    asked = next(h for h in hits if "any fun activities" in h["content"])
    assert asked["breakdown"]["asking"] == "only", "its statements hold none of the question's words"


def test_asks_about_reads_what_a_message_asks_apart_from_what_it_states() -> None:
    from vaultmind.index.lexical import terms
    from vaultmind.retrieval.asking import asks_about

    wanted = frozenset(terms("activities enjoy"))
    assert asks_about("Love seeing your dedication. Any fun activities you enjoy?", wanted)
    assert not asks_about("I enjoy pottery. Any fun activities you like?", wanted), "it states one of them"
    assert not asks_about("Any plans for the weekend?", wanted), "it asks nothing of them"
    assert not asks_about("Any news?\n[image: kids enjoying activities at the park]", wanted), "a caption states"


def test_a_long_questions_words_outweigh_the_nearest_vector(vault: Path) -> None:
    """A question of ten searched words: the message that says most of them ("the office
    party: I used a summer recipe to make ice cream with milk"), in a long message about a
    long day, is the answer; a short one that shares three words and is its nearest vector
    ("Vegan coconut milk treats…") is not. A static vector of ten words is their blurred mean:
    the dense signal weighs less (`DENSE_TERMS` / terms), a short question's keeps its weight."""
    chatter = ["Morning! Busy week.", "Same here, how are things?", "The train was late again today.", "My sister moved to Lisbon last spring."]
    answer = (
        "Long day. Meetings all morning, the dentist at noon, train delays, then the party: I used a summer recipe"
        " to make ice cream with milk. Then emails until midnight and the cat was sick."
    )
    days = [
        ("2024-05-02", [("Ann" if i % 2 == 0 else "Ben", text) for i, text in enumerate([*chatter, "I finally fixed the bike chain."])] + [("Ann", answer)]),
        (
            "2024-05-09",
            [("Ann" if i % 2 == 0 else "Ben", text) for i, text in enumerate(["Did you watch the football match?", "The garden needs rain badly.", "We booked the flights for October."])]
            + [("Ann", "Vegan coconut milk treats are the best desserts.")],
        ),
    ]
    hits = _hits(vault, days, "Which recipe was used to make the vegan ice cream with coconut milk for the summer party?")
    nearest = next(h for h in hits if h["content"].startswith("Vegan coconut"))
    assert nearest["breakdown"]["dense"] == 1.0, "the fixture's point: the short message is the nearest vector"
    assert hits[0]["content"].startswith("Long day."), [(h["content"][:40], h["score"], h["breakdown"]["weights"]["dense"]) for h in hits]
    assert hits[0]["breakdown"]["weights"]["dense"] < 0.5
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        short = memory.walk("Which vegan desserts?")["hits"]
    assert short[0]["breakdown"]["weights"]["dense"] == 0.5


def test_only_a_model_that_averages_words_weighs_a_long_questions_vector_less() -> None:
    """The static model's vector of a long question is the mean of its words' rows, so its
    weight falls with the terms; a model that reads words in their context (Ollama's, e5)
    keeps the full weight (scaled, e5's LoCoMo figures fell)."""
    static, contextual = StaticEmbedder(), OllamaEmbedder("nomic-embed-text")
    assert averages_words(static) and not averages_words(contextual) and not averages_words(None)
    assert signal_weights({}, 10, averages_words(static))["dense"] == WEIGHTS["dense"] * 4 / 10
    assert signal_weights({}, 10, averages_words(contextual))["dense"] == WEIGHTS["dense"]
    assert signal_weights({}, 3, averages_words(static))["dense"] == WEIGHTS["dense"]


def test_a_message_that_wishes_for_recommendations_asks_for_them(vault: Path) -> None:
    """"What book recommendations has Jolene given?": Emil's "Which novels do you like? I'm
    always open to some new book recommendations." holds both words, but in what he asks and in
    a wish to be told, not an account; Jolene's message naming the book she recommends ranks
    first."""
    hits = _hits(
        vault,
        [
            (
                "2024-05-02",
                [
                    ("Jolene Lee", "I finally finished the first draft of my screenplay."),
                    (
                        "Emil Ford",
                        "Oh nice, good for you! Which novels do you like? I'm always open to some new book recommendations.",
                    ),
                    ("Jolene Lee", "Mostly fantasy, to be honest."),
                ],
            ),
            (
                "2024-05-09",
                [
                    ("Emil Ford", "How was your weekend?"),
                    ("Jolene Lee", "Quiet. My recommendation for you: Little Women, the book I love most."),
                    ("Emil Ford", "Thanks, I will pick it up."),
                ],
            ),
        ],
        "What book recommendations has Jolene given to Emil?",
    )
    assert "Little Women" in hits[0]["content"], [(h["content"][:40], h["score"], h["breakdown"]["asking"]) for h in hits]
    wished = next(h for h in hits if "always open to" in h["content"])
    assert wished["breakdown"]["asking"] == "only", "its one statement holds none of the question's words"


def test_a_request_is_a_wish_to_be_told_or_advised_by_the_listener() -> None:
    from vaultmind.retrieval.asking import asking, requests

    assert requests("I'm always open to some new book recommendations.")
    assert requests("I could use some tips!")
    assert requests("I'd love to hear about your trip!")
    assert requests("I'd love to see the shots you got!")
    assert not requests("I'd love to see Japan someday."), "a wish of one's own"
    assert not requests("I need to get some advice from my coach."), "advice sought elsewhere"
    assert not requests("Tell me how you like it!"), "a closing, not read as a request"
    assert asking("Loved the film last night. I could use some recommendations!") == "last"
    assert asking("Any good films lately? I'm open to suggestions.") == "only"


def test_a_wish_is_a_request_only_as_the_main_clause() -> None:
    """A wish phrase inside a statement that tells something done, or in the middle of a
    clause, asks nothing: the request is the sentence's main clause."""
    from vaultmind.retrieval.asking import asking, requests

    assert asking("I'd love to hear more about pottery, so I booked a class for Saturday.") is None
    assert not requests("I'd love to hear more about pottery, and we signed up for a class.")
    assert not requests("My sister said I'd love to hear the band live.")
    assert requests("Oh wow, I'd love to hear about it, it sounds fun!")
    assert requests("The trip sounds great, and I'd love to hear about it!")
