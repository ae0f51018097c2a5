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
        _message(0, "Lucinda", "The charity race for Mel is on Saturday 20 May at the park."),
        _message(1, "Melissa", "Thanks, Mel! I booked the train to the park for Saturday."),
        _message(2, "Lucinda", "Thank you, Lucinda. Mel will bring the banner for the race."),
        _message(3, "Melissa", "Cheers, Lucinda! The race starts at 9am, Mel runs 10k."),
    ]
    text = extractive_summary(children, 400)
    assert "booked the train" in text and "starts at 9am" in text
    for thanks in ("Thanks, Mel", "Thank you, Lucinda", "Cheers, Lucinda"):
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
        _message(0, "Lucinda", "[image: a poster showing a drawing of a guinea pig]"),
        _message(
            1, "Melissa", "Look what we found at the shelter!\n[image: a photo of a guinea pig in a box]"
        ),
        _message(2, "Lucinda", "We adopted the guinea pig from the shelter on Sunday, her name is Oscar."),
        _message(3, "Melissa", "[image: a photo of a guinea pig eating a carrot]"),
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


def test_a_message_too_short_to_attribute_is_kept_whole_and_says_who_said_it() -> None:
    """Who said it comes on top of the children's length: a summary of one short message is
    not the bare text, which no reader (nor the summary above it) could attribute."""
    for said in ("Deposit paid", "Link:https://example.org/", "See https://example.com/a/long/path/plan.pdf"):
        child = _message(0, "Author 2", said)
        assert extractive_summary([child], output_budget(child.tokens)) == f"Author 2 said: {said}"


def test_a_fragment_leaning_on_the_sentence_before_is_not_news() -> None:
    children = [
        _one_day(0, "Lucinda", "The support group meets every week to share stories."),
        _one_day(1, "Melissa", "I want to help people like me. By telling our stories."),
        _one_day(2, "Lucinda", "I volunteer at the support group."),
        _one_day(3, "Melissa", "I read stories to kids on weekends. And in my free time."),
        _one_day(4, "Lucinda", "Free time is rare, the group helps."),
    ]
    text = extractive_summary(children, 400)
    assert "read stories to kids" in text and "Free time is rare" in text
    assert "By sharing" not in text and "And in my free time" not in text
    # a sentence that opens with a preposition but carries a fact stays
    dated = [*children[:4], _one_day(4, "Lucinda", "By Friday the deposit is paid.")]
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
            "The launch moved to Friday, the press kit is signed off.",
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


def test_a_summary_of_summaries_says_something_of_every_child() -> None:
    # two children keep coming back to one topic; the third's words are said once: its period
    # must still have its say, ahead of more of the topic the others repeat
    counseling = ChildText(
        "s1",
        "2024-05-01: Lucinda said: I am reading up on counseling and mental health work for farmers. "
        "Melissa said: Counseling sounds right for you, mental health support matters.\n\n"
        "2024-05-03: Lucinda said: The counseling course on mental health starts in June.",
        kind="summary",
        time="2024-05-01T09:00:00Z",
    )
    more = ChildText(
        "s2",
        "2024-05-10: Lucinda said: My counseling mentor says mental health work needs patience. "
        "Melissa said: Your counseling plans keep growing, mental health is your thing.",
        kind="summary",
        time="2024-05-10T09:00:00Z",
    )
    camping = ChildText(
        "s3",
        "2024-05-20: Melissa said: We camped by the lake with the kids and roasted marshmallows.",
        kind="summary",
        time="2024-05-20T09:00:00Z",
    )
    text = extractive_summary([counseling, more, camping], 150)
    days = [paragraph.split(":", 1)[0] for paragraph in text.split("\n\n")]
    assert any(day in days for day in ("2024-05-01", "2024-05-03")), text
    assert "2024-05-10" in days and "2024-05-20" in days, text
    assert "2024-05-20: Melissa said: We camped by the lake" in text
    assert text == extractive_summary([counseling, more, camping], 150)


@pytest.mark.parametrize(
    "sentence",
    [
        "By telling our stories, we can grow a kind and welcoming circle of friends and of hope.",
        # its number and date are in the part cut: the fragment left has no fact of its own
        "By telling our stories, we raised 900 dollars for the shelter on 3 May.",
    ],
)
def test_a_sentence_cut_to_fit_is_never_left_a_leaning_fragment(sentence: str) -> None:
    children = [_one_day(0, "Lucinda", sentence), _one_day(1, "Melissa", "Our stories give the group hope.")]
    for budget in (18, 22):  # under the sentence's 23 tokens (who said it is not counted)
        text = extractive_summary(children, budget)
        assert "By telling our stories." not in text, text
        assert text == "Melissa said: Our stories give the group hope."


@pytest.mark.parametrize(
    ("sentence", "filler"),
    [
        ("Wow, Mel, that sounds awesome!", True),
        ("That sounds great, Lucinda.", True),
        ("Lucinda, that is so amazing!", True),
        ("Wow Maria, that's awesome!", True),
        ("Great, Mel booked the hall.", False),
        ("It is Friday.", False),
        ("Yes, Friday.", False),
        ("No.", False),
        # a word after the comma that names no one of the conversation is the answer
        ("Yes, Paris.", False),
        ("Sure, Acme.", False),
        ("Yes, Dana.", False),
    ],
)
def test_assent_addressed_to_someone_is_still_only_assent(sentence: str, filler: bool) -> None:
    people = frozenset({"mel", "lucinda", "maria"})
    assert says_nothing_alone(sentence, int("Friday" in sentence), people) is filler  # a day is a fact
    if filler:
        children = [
            ChildText("m0", "The pottery class moved to the studio on the hill.", author="Lucinda"),
            ChildText("m1", f"{sentence} I will bring the clay and the glaze for the class.", author="Mel"),
            # a name the summary knows (a fact) still only addresses one of the conversation
            ChildText(
                "m2", "I fire the pots in the kiln.", author="Maria", entities=("Mel", "Lucinda", "Maria")
            ),
        ]
        text = extractive_summary(children, 400)
        assert "bring the clay" in text and sentence not in text, text


def test_an_answer_naming_someone_of_the_conversation_is_assent_to_them() -> None:
    question = _one_day(0, "Dana", "Can you water the plants in the garden while I am away in June?")
    answer = _one_day(1, "Ben", "Yes, Dana. The key to the shed is under the blue pot by the door.")
    assert "Yes, Dana" not in extractive_summary([question, answer], 400)
    stranger = _one_day(0, "Ana", "Who waters the plants in the garden while I am away in June?")
    assert "Yes, Dana" in extractive_summary([stranger, answer], 400)


def test_a_setext_heading_and_a_rule_are_no_sentences() -> None:
    section = (
        "Plans\n=====\n\nThe hall is booked.\n\nNext steps\n----------\n\nSend the invites.\n\n---\n\n* * *\n"
    )
    assert clean_units(section) == ["The hall is booked.", "Send the invites."]
    child = ChildText("d1", section, kind="section", title="Party")
    text = extractive_summary([child], 400)
    assert "=" not in text and "Next steps" not in text and "---" not in text
    assert "The hall is booked." in text and "Send the invites." in text


def test_a_mail_signature_left_in_the_body_stays_out() -> None:
    body = "The venue is confirmed for Friday.\n\n-- \nEv Kontsevoy,\nCo-founder and CEO of Example Inc."
    assert clean_units(body, mail=True) == ["The venue is confirmed for Friday."]
    # in a note, a "--" under a line is a heading's underline, not a signature
    assert clean_units("Kickoff\n--\n\nWe start on Monday.") == ["We start on Monday."]


def test_a_sentence_before_a_name_in_a_child_summary_stays_what_was_said() -> None:
    said = ChildText(
        "s1",
        "2024-05-01: Maria said: Family gives us strength. They bring us joy. John said: The charity "
        "run for the shelter raised 900 dollars on Sunday. Dr. Elena Rossi said: Fine. Foo B. Baz "
        "wrote: The report ships Monday.",
        kind="summary",
        time="2024-05-01T09:00:00Z",
    )
    other = ChildText(
        "s2",
        "2024-05-03: John said: The shelter charity run is planned for every Sunday in June.",
        kind="summary",
        time="2024-05-03T09:00:00Z",
    )
    text = extractive_summary([said, other], 76)
    # what Maria said is no part of John's name; a name's initial and title stay in it
    assert text == (
        "2024-05-01: John said: The charity run for the shelter raised 900 dollars on Sunday. "
        "Foo B. Baz wrote: The report ships Monday.\n\n"
        "2024-05-03: John said: The shelter charity run is planned for every Sunday in June."
    )
    assert "Maria said: Family gives us strength. John said:" in extractive_summary([said, other], 200)


def _said_on_the_1st_and_the_band_on_the_3rd(said_on_the_1st: str) -> list[ChildText]:
    """Two child summaries: what was said on 1 May (the text given), and a sentence of Bob's on 3 May."""
    return [
        ChildText("s1", f"2024-05-01: {said_on_the_1st}", kind="summary", time="2024-05-01T09:00:00Z"),
        ChildText(
            "s2",
            "2024-05-03: Bob Stone said: The band for the garden party plays from 8pm.",
            kind="summary",
            time="2024-05-03T09:00:00Z",
        ),
    ]


def test_a_short_word_before_a_name_is_no_title() -> None:
    children = _said_on_the_1st_and_the_band_on_the_3rd(
        "Alice Chen said: Is the garden party still on the first Friday? No. Bob Stone said: "
        "The garden party moved to Saturday 11 May at noon."
    )
    text = extractive_summary(children, 36)
    assert text == "2024-05-01: Bob Stone said: The garden party moved to Saturday 11 May at noon."
    assert "No. Bob" not in extractive_summary(children, 400)


def test_a_company_whose_name_ends_in_an_abbreviation_is_its_speaker() -> None:
    children = _said_on_the_1st_and_the_band_on_the_3rd(
        "Alice Chen said: Shipped it to the warehouse on Monday. Acme Inc. wrote: "
        "The invoice of 300 euros is due on 3 June."
    )
    assert extractive_summary(children, 36) == "2024-05-01: Acme Inc. wrote: The invoice of 300 euros is due on 3 June."


def test_what_a_child_summary_says_unattributed_keeps_its_day() -> None:
    # a one-message summary kept whole, a section's summary: said by no one it names, but on a day
    venue = ChildText(
        "s1",
        "2024-05-01: Alice Chen wrote: The venue is confirmed for Friday 14 June, the deposit is paid. "
        "Bob Stone wrote: The caterer needs the guest list by Monday 3 June, and the band wants a stage plan.",
        kind="summary",
        time="2024-05-01T09:00:00Z",
    )
    plan = ChildText(
        "s2",
        "Very long link to the venue plan for the party hall. The plan shows the stage by the garden door.",
        kind="summary",
        time="2024-05-07T09:00:00Z",
    )
    text = extractive_summary([venue, plan], 400)
    paragraphs = text.split("\n\n")
    assert paragraphs[0].startswith("2024-05-01: Alice Chen wrote: The venue is confirmed"), text
    assert paragraphs[-1].startswith("2024-05-07: Very long link to the venue plan"), text


def test_what_no_one_is_named_as_saying_is_never_given_to_the_speaker_before() -> None:
    venue = ChildText(
        "s1",
        "2024-05-01: Alice Chen said: The venue is booked for the party on Friday. Okay, sounds good to me.",
        kind="summary",
        time="2024-05-01T09:00:00Z",
    )
    plan = ChildText(
        "s2",
        "The plan shows the stage by the garden door and the bar.",
        kind="summary",
        time="2024-05-01T10:00:00Z",
    )
    band = ChildText(
        "s3",
        "2024-05-03: Bob Stone said: The band plays from 8pm on Friday. Okay, sounds good to me.",
        kind="summary",
        time="2024-05-03T10:00:00Z",
    )
    assert extractive_summary([venue, plan, band], 400).split("\n\n") == [
        "2024-05-01: Alice Chen said: The venue is booked for the party on Friday.",
        "2024-05-01: The plan shows the stage by the garden door and the bar.",
        "2024-05-03: Bob Stone said: The band plays from 8pm on Friday.",
    ]
    # on one day, undated: a paragraph of its own all the same; so is an authorless message's
    assert extractive_summary([venue, plan], 400) == (
        "Alice Chen said: The venue is booked for the party on Friday.\n\n"
        "The plan shows the stage by the garden door and the bar."
    )
    venue_message = _one_day(
        0, "Alice Chen", "The venue is booked for the party on Friday. Okay, sounds good."
    )
    anonymous = ChildText(
        "m1", "The plan shows the stage by the garden door. Sure, fine.", time="2024-05-01T10:00:00Z"
    )
    assert extractive_summary([venue_message, anonymous], 400) == (
        "Alice Chen said: The venue is booked for the party on Friday.\n\n"
        "The plan shows the stage by the garden door."
    )


@pytest.mark.parametrize(
    ("sentence", "filler"),
    [
        ("Wow, Mel, that sounds awesome!", True),  # Mel: Melissa, by a short form of her name
        ("Hey John, long time no chat!", True),
        ("Hi John, how's it going?", True),
        ("Hey Tim, how's it going there?", True),
        ("Hey Tim, great chatting with you again!", True),
        ("Wow, Mar, that sounds awesome!", False),  # shortens no one's name: an answer
        ("Hey, the hall is ready.", False),
        ("Hey John, the hall is booked.", False),
        ("No.", False),
    ],
)
def test_a_greeting_or_assent_to_a_speaker_by_a_short_form_is_filler(sentence: str, filler: bool) -> None:
    """A sentence that only greets and asks after someone of the conversation, or assents to
    them by a short form of their name, says nothing alone; a greeting with news does."""
    people = frozenset({"melissa", "lucinda", "john", "tim"})
    assert says_nothing_alone(sentence, 0, people) is filler
    if filler:
        children = [
            _one_day(0, "Melissa", "The pottery class moved to the studio on the hill."),
            _one_day(1, "Lucinda", f"{sentence} I will bring the clay and the glaze for the class."),
            _one_day(2, "John", "I fire the pots in the kiln."),
            _one_day(3, "Tim", "The kiln is hot."),
        ]
        text = extractive_summary(children, 400)
        assert "bring the clay" in text and sentence not in text, text
