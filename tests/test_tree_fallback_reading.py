"""The fallback summary as a reader sees it: what a chat or a mail says, not its wrapping."""

from __future__ import annotations

import pytest

from vaultmind.tree.fallback import extractive_summary
from vaultmind.tree.filler import says_nothing_alone
from vaultmind.tree.sentences import clean_units
from vaultmind.tree.summarize import ChildText, output_budget


def _message(i: int, author: str, text: str, kind: str = "message") -> ChildText:
    return ChildText(f"m{i}", text, kind=kind, author=author, time=f"2024-05-0{1 + i % 2}T09:0{i}:00Z")


def _one_day(i: int, author: str, text: str) -> ChildText:
    return ChildText(f"m{i}", text, kind="message", author=author, time=f"2024-05-01T09:0{i}:00Z")


def test_a_thanks_with_a_name_is_not_news() -> None:
    children = [
        _message(0, "Caroline", "The charity race for Mel is on Saturday 20 May at the park."),
        _message(1, "Melanie", "Thanks, Mel! I booked the train to the park for Saturday."),
        _message(2, "Caroline", "Thank you, Caroline. Mel will bring the banner for the race."),
        _message(3, "Melanie", "Cheers, Caroline! The race starts at 9am, Mel runs 10k."),
    ]
    text = extractive_summary(children, 400)
    assert "booked the train" in text and "starts at 9am" in text
    for thanks in ("Thanks, Mel", "Thank you, Caroline", "Cheers, Caroline"):
        assert thanks not in text


def test_quoted_text_and_header_lines_left_in_a_mail_stay_out() -> None:
    reply = (
        "The venue is confirmed for Friday 14 June, and the deposit is paid.\n\n"
        "----- Original Message -----\n"
        "From: Bob Stone <bob@example.com>\n"
        "To: alice@example.com\n"
        "Sent: Monday, June 3, 2024 5:44 PM\n"
        "Subject: Venue\n\n"
        "Did the castle answer about the venue deposit for the party?"
    )
    answer = (
        "Great, the caterer wants the final guest count by Tuesday 11 June.\n\n"
        "On Mon, 3 Jun 2024 at 18:02, Alice Chen <alice@example.com> wrote:\n"
        "> The venue castle deposit party answer is here, the party castle venue."
    )
    german = (
        "The band plays from 8pm, the castle agreed to the noise permit.\n\n"
        "--- Am 03.06.2024 um 19:00 schrieb Bob Stone <bob@example.com>:\n"
        "> Castle venue party deposit permit castle band, the band castle question."
    )
    forward = (
        "---------- Forwarded message ----------\n"
        "From: Castle Events <events@castle.example>\n"
        "Date: Tue, 4 Jun 2024 08:00\n"
        "Subject: Booking\n\n"
        "Your booking of the great hall for 80 guests is confirmed.\n\n"
        "Attachments: booking.pdf (application/pdf, 7 KB), hall-plan.png (image/png, 1 MB)"
    )
    children = [
        ChildText(
            "e1", reply, kind="email", author="Alice Chen <alice@example.com>", time="2024-06-03T18:00:00Z"
        ),
        ChildText(
            "e2", answer, kind="email", author="Bob Stone <bob@example.com>", time="2024-06-04T07:00:00Z"
        ),
        ChildText(
            "e4", german, kind="email", author="Alice Chen <alice@example.com>", time="2024-06-04T10:00:00Z"
        ),
        ChildText(
            "e3", forward, kind="email", author="Alice Chen <alice@example.com>", time="2024-06-04T09:00:00Z"
        ),
    ]
    text = extractive_summary(children, 400)
    assert (
        "noise permit" in text
        and "deposit is paid" in text
        and "final guest count" in text
        and "great hall for 80 guests" in text
    )
    for quoted in (
        "Original Message",
        "From:",
        "Subject:",
        "Sent:",
        "wrote: On",
        "castle answer",
        "Forwarded",
        "Attachments",
        "booking.pdf",
    ):
        assert quoted not in text
    assert "party castle venue" not in text and "band castle question" not in text


def test_a_mail_quoting_someone_in_its_own_words_keeps_its_text() -> None:
    own = (
        "Hi team,\n\nBack in 2019 the founder wrote:\n\nWe will never sell ads.\n\n"
        "I think that still holds. The launch moves to 12 May."
    )
    assert clean_units(own, mail=True) == [
        "Hi team,",
        "Back in 2019 the founder wrote:",
        "We will never sell ads.",
        "I think that still holds. The launch moves to 12 May.",
    ]
    # a reply's attribution (a date, a name or an address, "wrote:") still ends the mail
    reply = "The launch moves to 12 May.\n\nOn Monday, 6 May 2024, Ana <ana@example.com> wrote:\n> Any news?"
    assert clean_units(reply, mail=True) == ["The launch moves to 12 May."]


def test_a_header_word_opening_a_mail_line_is_no_header() -> None:
    body = (
        "To: do list below, for the move.\n\nSubject: the budget, which we cut.\n\n"
        "---------- Forwarded message ----------\nFrom: Castle Events\nSubject: Booking\n\n"
        "Date: Tue, 4 Jun 2024 08:00\n\nThe hall is yours."
    )
    assert clean_units(body, mail=True) == [
        "To: do list below, for the move.",
        "Subject: the budget, which we cut.",
        "The hall is yours.",
    ]


@pytest.mark.parametrize(
    ("sentence", "filler"),
    [
        ("For the record, I quit.", False),
        ("After lunch I called Dana.", False),
        ("With Priya as the new lead.", True),
        ("And in my free time.", True),
        ("No.", False),  # a refusal is news
        ("Nope.", False),
        ("Sure, fine.", True),
    ],
)
def test_a_sentence_with_its_own_subject_and_verb_is_no_fragment(sentence: str, filler: bool) -> None:
    assert says_nothing_alone(sentence, 0) is filler


def test_a_shared_image_is_not_something_said() -> None:
    children = [
        _message(0, "Caroline", "[image: a photo of a sign with a picture of a guinea pig]"),
        _message(
            1, "Melanie", "Look what we found at the shelter!\n[image: a photo of a guinea pig in a box]"
        ),
        _message(2, "Caroline", "We adopted the guinea pig from the shelter on Sunday, her name is Oscar."),
        _message(3, "Melanie", "[image: a photo of a guinea pig eating a carrot]"),
    ]
    text = extractive_summary(children, 400)
    assert "adopted the guinea pig" in text
    assert "[image" not in text and "photo of" not in text


def test_a_summary_of_summaries_says_who_said_what_and_when() -> None:
    first = ChildText(
        "s1",
        "2024-05-01: Alice Chen said: Okay, sounds good to me. The launch moved to Friday 10 May, "
        "the press kit is signed off.\n\n"
        "2024-05-02: Bob Stone asked: Is that fine for everyone? Alice Chen replied: Fine by me.",
        kind="summary",
        time="2024-05-01T09:00:00Z",
    )
    second = ChildText(
        "s2",
        "Helen Okafor said: Sure, fine. Harbor Hall is booked for 80 guests on Thursday 9 May.",
        kind="summary",
        time="2024-05-03T10:00:00Z",
    )
    text = extractive_summary([first, second], 120)
    paragraphs = {p.split(": ", 1)[0]: p for p in text.split("\n\n")}
    # each day's paragraph says who said its news, though the child said so sentences before
    assert paragraphs["2024-05-01"].startswith("2024-05-01: Alice Chen said: ")
    assert "The launch moved to Friday 10 May" in paragraphs["2024-05-01"]
    assert paragraphs["2024-05-03"].startswith("2024-05-03: Helen Okafor said: ")
    assert "Harbor Hall is booked for 80 guests" in paragraphs["2024-05-03"]


def test_a_message_too_short_to_attribute_is_kept_whole() -> None:
    for said in ("Deposit paid", "Link:https://example.org/", "See https://example.com/a/long/path/plan.pdf"):
        child = _message(0, "Author 2", said)
        assert extractive_summary([child], output_budget(child.tokens)) == said


def test_a_fragment_leaning_on_the_sentence_before_is_not_news() -> None:
    children = [
        _one_day(0, "Caroline", "The support group meets every week to share stories."),
        _one_day(1, "Melanie", "I want to help people like me. By sharing our stories."),
        _one_day(2, "Caroline", "I volunteer at the support group."),
        _one_day(3, "Melanie", "I read stories to kids on weekends. And in my free time."),
        _one_day(4, "Caroline", "Free time is rare, the group helps."),
    ]
    text = extractive_summary(children, 400)
    assert "read stories to kids" in text and "Free time is rare" in text
    assert "By sharing" not in text and "And in my free time" not in text
    # a sentence that opens with a preposition but carries a fact stays
    dated = [*children[:4], _one_day(4, "Caroline", "By Friday the deposit is paid.")]
    assert "By Friday the deposit" in extractive_summary(dated, 400)


def test_a_sentence_that_only_assents_is_not_news() -> None:
    children = [
        _one_day(0, "Ana", "Is the forecast fine for the hike? Sure it is."),
        _one_day(1, "Ben", "Sure, fine."),
        _one_day(2, "Ana", "The hike starts at the old mill, fine weather is sure."),
        _one_day(3, "Ben", "I pack the map and the snacks for the hike."),
        _one_day(
            4, "Ana", "My cousin repaired the old bicycle with a new chain and two tyres from the market."
        ),
    ]
    text = extractive_summary(children, 400)
    assert "starts at the old mill" in text and "pack the map" in text
    assert "Sure, fine" not in text


def test_children_spanning_days_date_the_summary_even_when_one_day_is_kept() -> None:
    children = [
        ChildText(
            "m0",
            "The launch moved to Friday 10 May, the press kit is signed off.",
            kind="message",
            author="Alice Chen",
            time="2024-05-01T09:00:00Z",
        ),
        ChildText(
            "m1",
            "Harbor Hall is booked for 80 guests on Thursday 9 May.",
            kind="message",
            author="Bob Stone",
            time="2024-05-03T10:00:00Z",
        ),
    ]
    budget = output_budget(sum(child.tokens for child in children))
    text = extractive_summary(children, budget)
    assert "\n\n" not in text  # the budget keeps one day's news
    assert text.startswith(("2024-05-01: Alice Chen said: ", "2024-05-03: Bob Stone said: "))
    assert text == extractive_summary(children, budget)
