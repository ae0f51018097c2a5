"""walk: whom a message of a conversation tells of — its author, or the person it is written
to — for a question about one author of the memory (`retrieval/listener.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vaultmind.config import load_config
from vaultmind.memory import Memory
from vaultmind.retrieval.listener import tells_of_listener, tells_of_self

from .conftest import write_chat


def _hits(vault: Path, days: list[tuple[str, list[tuple[str, str]]]], question: str) -> list[dict[str, Any]]:
    """Walk's hits for `question` over chats of `(day, [(author, text)])`, with the bundled
    static embeddings."""
    for day, messages in days:
        write_chat(vault, day, messages)
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        return list(memory.walk(question)["hits"])


def _shown(hits: list[dict[str, Any]]) -> list[tuple[str, str, float]]:
    return [(h["author"], h["content"][:40], h["score"]) for h in hits]


def test_the_named_authors_words_to_their_listener_tell_nothing_of_them(vault: Path) -> None:
    """"Where has Maria made friends?": Maria's "Glad you two are close again. Having friends
    you can call at midnight…" is short and holds the word, but is written of John's
    roommate; her own account of the volunteers she met ranks first. Unscaled (`TO_LISTENER`
    at 1.0), the words to John would rank first."""
    hits = _hits(
        vault,
        [
            (
                "2024-05-02",
                [
                    ("John Park", "My old college roommate and I reconnected last week, it felt like no time had passed."),
                    ("Maria Lopez", "Glad you two are close again. Having friends you can call at midnight makes a big difference."),
                    ("John Park", "It really does."),
                ],
            ),
            (
                "2024-06-12",
                [
                    ("John Park", "How was the shelter this week?"),
                    (
                        "Maria Lopez",
                        "Really good. I made two new friends among the volunteers at the shelter, we have dinner "
                        "every Friday now.",
                    ),
                    ("John Park", "Love that."),
                ],
            ),
        ],
        "Where has Maria made friends?",
    )
    assert hits[0]["author"] == "Maria Lopez" and "volunteers" in hits[0]["content"], _shown(hits)
    written_to_john = next(h for h in hits if "Glad you two" in h["content"])
    assert written_to_john["breakdown"]["to_listener"] and not hits[0]["breakdown"]["to_listener"]


def test_anothers_account_in_the_plural_is_not_the_named_persons(vault: Path) -> None:
    """"When did John take part in a charity run?": Maria's "We ran the charity run…" (no "I"
    in it) tells of her own group's run, as "I ran…" would: it keeps only part of its match
    (`OTHER_AUTHOR`)."""
    hits = _hits(
        vault,
        [
            (
                "2024-05-02",
                [
                    ("John Park", "Hey Maria, how was your week?"),
                    ("Maria Lopez", "Last weekend we ran a charity run for the shelter, the whole team took part."),
                    ("John Park", "That is great, well done!"),
                ],
            ),
            (
                "2024-06-12",
                [
                    ("Maria Lopez", "Any news?"),
                    ("John Park", "On Saturday I ran the neighbourhood charity run, all for the veterans."),
                    ("Maria Lopez", "So proud of you!"),
                ],
            ),
        ],
        "When did John take part in a charity run?",
    )
    marias = next(h for h in hits if h["author"] == "Maria Lopez" and "whole team" in h["content"])
    johns = next(h for h in hits if h["author"] == "John Park" and "veterans" in h["content"])
    assert marias["breakdown"]["other_author"] and not johns["breakdown"]["other_author"], _shown(hits)


def test_tells_of_listener_reads_whom_each_sentence_is_written_to() -> None:
    friends = frozenset({"friend"})
    assert tells_of_listener("Glad you've got that tie back. Friends you can count on matter.", friends)
    assert tells_of_listener("Your friends sound lovely!", friends)
    assert not tells_of_listener("Your friends sound lovely! I miss mine.", friends), "she tells of herself too"
    assert not tells_of_listener("We met great friends there. Glad you came too.", friends), "the first person plural"
    assert not tells_of_listener("Always happy to make friends with you.", friends), "you after a preposition"
    assert not tells_of_listener("A club is worth it if you want friends.", friends), "a condition: anyone"
    assert not tells_of_listener("Glad you came! Friends matter.", friends), "the word is not where it speaks to you"
    assert not tells_of_listener("Glad you came!", friends), "no word of the question"


def test_the_speakers_words_of_themselves_are_not_of_the_person_asked_about(vault: Path) -> None:
    """"What did Arne say about Wilma's store?" asks for Arne's words about Wilma's store: his
    "You picked a great corner for your store", not his account of his own ("I keep my store
    notes…", which holds "store" three times): that one keeps only part of its score
    (`OF_SELF`), and would rank first unscaled. Asked about Arne's own store, his account is
    not scaled."""
    days = [
        (
            "2024-05-02",
            [
                ("Wilma Rossi", "Guess what, I signed the lease for the new clothing store today."),
                ("Arne Baker", "Wow, Wilma! You picked a great corner for your store, the hard work is paying off."),
                ("Wilma Rossi", "Thank you, it means a lot."),
            ],
        ),
        (
            "2024-06-12",
            [
                ("Wilma Rossi", "How is the dance studio going?"),
                ("Arne Baker", "I keep my store notes on a whiteboard, my store plan is taking shape, my store opens in May."),
                ("Wilma Rossi", "Love that."),
            ],
        ),
    ]
    hits = _hits(vault, days, "What did Arne say about Wilma's store?")
    assert hits[0]["author"] == "Arne Baker" and hits[0]["content"].startswith("Wow, Wilma!"), _shown(hits)
    his_own = next(h for h in hits if h["content"].startswith("I keep my store"))
    assert his_own["breakdown"]["of_self"] and not hits[0]["breakdown"]["of_self"]
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        own = memory.walk("What did Arne say about Arne's store?")["hits"]
    assert not any(h["breakdown"]["of_self"] for h in own), _shown(own)


def test_tells_of_self_reads_whom_each_sentence_tells_of() -> None:
    store = frozenset({"store"})
    assert tells_of_self("I keep my store notes on a whiteboard.", store)
    assert not tells_of_self("You picked a great corner for your store.", store), "written to the listener"
    assert not tells_of_self("I love that your store is open!", store), "of the listener's store, in the first person"
    assert not tells_of_self("My store is open. Glad you came!", frozenset({"glad"})), "the word is where it speaks to you"
    assert not tells_of_self("The store is open.", store), "no person"
    assert not tells_of_self("I am tired.", store), "no word of the question"


def test_the_speakers_words_of_the_person_asked_about_are_not_of_self(vault: Path) -> None:
    """Arne's first-person sentences that name Wilma, or speak of her as "her", tell of her
    store, asked about by "what did Arne say about Wilma's store?": not scaled as his own."""
    days = [
        (
            "2024-05-02",
            [
                ("Wilma Rossi", "Guess what, I signed the lease for the new clothing store today."),
                ("Arne Baker", "I love Wilma's new store, she did great."),
                ("Mia Lund", "Did you see it yet?"),
                ("Arne Baker", "I told her the store looks amazing."),
                ("Arne Baker", "I keep my store notes on a whiteboard, my store plan is taking shape."),
            ],
        ),
    ]
    hits = _hits(vault, days, "What did Arne say about Wilma's store?")
    of_self = {h["content"][:20]: h["breakdown"]["of_self"] for h in hits if h["author"] == "Arne Baker"}
    assert of_self == {"I love Wilma's new s": False, "I told her the store": False, "I keep my store note": True}, _shown(hits)


def test_tells_of_self_is_not_of_the_possessor_named_or_referred_to() -> None:
    store, wilma = frozenset({"store"}), [frozenset({"wilma", "rossi"})]
    assert not tells_of_self("I love Wilma's new store, she did great.", store, wilma), "names her"
    assert not tells_of_self("I told her the store looks amazing.", store, wilma), "speaks of her, the one asked about"
    assert tells_of_self("I keep my store notes on a whiteboard.", store, wilma)
    both = [*wilma, frozenset({"mia", "lund"})]
    assert tells_of_self("I told her the store looks amazing.", store, both), "of two people asked about, 'her' is neither named"
    assert not tells_of_self("I told Mia the store looks amazing.", store, both)
