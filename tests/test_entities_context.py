"""What a hit's context says about it: a verb after an organization, a date it is said to be, a
cell it opens, a step's verb, an address that writes it in lower case, a mail's field that holds
an address (pure functions on hand-written text; the model's guess is given)."""

from __future__ import annotations

import pytest

from vaultmind.entities.extract import clean_ner_span, regex_spans


def _kept(text: str, hit: str, label: str) -> tuple[str, str] | None:
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), label)
    return None if span is None else (span.surface, span.kind)


@pytest.mark.parametrize(
    "text",
    [
        "Last night the Guardian reported a leak at the ministry.",
        "The Guardian announced a new editor.",
        "I heard the Guardian published it first.",
    ],
)
def test_an_organization_before_a_verb_in_the_past_tense_is_kept(text: str) -> None:
    """A verb in the past tense after "the Guardian" is no noun the name qualifies (as "the Pro
    tier" is): the organization is the sentence's subject. Words ending in "ed" that are no
    past tense ("speed", "feed") are nouns still."""
    assert _kept(text, "Guardian", "ORG") == ("Guardian", "org")
    assert _kept("Pick the Pro speed option.", "Pro", "ORG") is None
    assert _kept("We read it on the Guardian feed.", "Guardian", "ORG") is None


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("On Tue, 3 May 2022, Hetzner <billing@hetzner.example> wrote:\n> Your invoice is ready", "Hetzner"),
        ("Thanks for choosing Mailgun. Questions? Write to support@mailgun.example", "Mailgun"),
        ("Our servers are rented from Hetzner (see https://hetzner.example/cloud).", "Hetzner"),
    ],
)
def test_a_name_written_in_lower_case_only_in_an_address_is_kept(text: str, hit: str) -> None:
    """An address, a URL or a file name writes names in lower case: that does not make the name a
    common word the text capitalised by its place; a word of prose in lower case still does."""
    assert _kept(text, hit, "ORG") == (hit, "org")
    assert _kept("Launch is near. We plan the launch with care.", "Launch", "ORG") is None


@pytest.mark.parametrize(
    ("text", "hit", "label"),
    [
        ("Morning all! Target is still Tuesday 9 April.", "Target", "ORG"),
        ("Release was 3 May, two weeks late.", "Release", "PRODUCT"),
        ("Deadline will be Fri 5 July.", "Deadline", "WORK_OF_ART"),
    ],
)
def test_a_word_the_text_says_is_a_date_is_no_name(text: str, hit: str, label: str) -> None:
    """"Target is still Tuesday 9 April": an organization, a product or a work is no date; the
    word names a moment, capitalised as its sentence's first. A name beside a date, or a person,
    a place or an event said to be one (a rota, a trip, a holiday), is kept."""
    assert _kept(text, hit, label) is None
    for kept, name, as_ in [
        ("Oracle was Sun's buyer.", "Oracle", "ORG"),
        ("Acme is Tuesday's sponsor.", "Acme", "ORG"),
        ("Google is hiring in April.", "Google", "ORG"),
        ("Acme is 3 decades old this May.", "Acme", "ORG"),
        ("On call: Dana is Tuesday, Marco Wednesday.", "Dana", "PERSON"),
        ("Berlin is 3 May, then Prague.", "Berlin", "GPE"),
        ("Easter is 20 April this year.", "Easter", "EVENT"),
    ]:
        assert _kept(kept, name, as_) is not None, kept


def test_an_organization_opening_a_cell_that_goes_on_in_lower_case_is_weak() -> None:
    """"| Press embargo lifts |": the cell's first word qualifies a noun, as after "the"; a cell
    that is the name alone ("| Hetzner |") or whose organization acts ("| Acme signed |") keeps it."""
    rows = "| 23 April, 14:00 UTC | Press embargo lifts; Tidepool is live | Marco Ruiz |\n"
    assert _kept(rows, "Press", "ORG") is None
    assert _kept("| Hosting | Hetzner | €40 |\n", "Hetzner", "ORG") == ("Hetzner", "org")
    assert _kept("| 2 May | Acme signed the contract | Dana |\n", "Acme", "ORG") == ("Acme", "org")


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("## Method\n\n6. Bake on a cookie sheet 30 minutes until a deep gold.", None),
        ("## Method\n\n3. Chill for 2 hours.", None),
        ("## Method\n\n4. Place in an airtight tin.", None),
        ("## Owners\n\n1. Dana on the venue\n2. Marco for the press kit\n", ("Dana", "person")),
        ("## Owners\n\n1. Dana on the venue\n2. Marco for the press kit\n", ("Marco", "person")),
        ("## Plan\n\n1. Dana at home, Marco on site.", ("Dana", "person")),
        ("## Plan\n\n2. Marco to send the deck", ("Marco", "person")),
    ],
)
def test_a_steps_verb_before_a_preposition_and_its_object_is_no_name(
    text: str, kept: tuple[str, str] | None
) -> None:
    """"6. Bake on a cookie sheet": the step's verb takes a number or an indefinite thing after a
    preposition; a name before a task ("1. Dana on the venue"), a place ("1. Dana at home") or an
    infinitive ("2. Marco to send") stays someone's."""
    hit = kept[0] if kept else text.split("\n")[-1].split()[1]
    assert _kept(text, hit, "PERSON") == kept


@pytest.mark.parametrize(
    ("hit", "label"), [("Calmness", "ORG"), ("Writing", "PERSON"), ("Ideas", "ORG")]
)
def test_the_first_word_of_a_link_to_a_claim_is_no_name(hit: str, label: str) -> None:
    """A note titled by its claim ("[[Calmness is a superpower]]") is linked with the title's
    capital; a link to a name ("[[Dana]]", "[[Berlin trip]]") keeps it."""
    text = (
        "Evergreen notes:\n\n- [[Calmness is a superpower]]\n- [[Notes/Writing is telepathy|telepathy]]\n"
        "- [[Ideas can be wrong]]\n\nSee [[Dana]] before the [[Berlin trip]]."
    )
    assert _kept(text, hit, label) is None
    assert _kept(text, "Dana", "PERSON") == ("Dana", "person")
    assert _kept(text, "Berlin", "GPE") == ("Berlin", "place")
    news = "News:\n\n- [[Dana has a new job]]\n- [[Oracle is a database company]]\n"
    assert _kept(news, "Dana", "PERSON") == ("Dana", "person"), "a claim is about someone too"
    assert _kept(news, "Oracle", "ORG") is None


def test_a_person_does_not_open_with_an_acronym() -> None:
    """"DNS Error: Domain name not found" is a mail's line, read as someone; initials open a name."""
    text = "Technical details of permanent failure:\nDNS Error: Domain name not found\n\nThanks, JR Smith"
    assert _kept(text, "DNS Error", "PERSON") is None
    assert _kept(text, "JR Smith", "PERSON") == ("JR Smith", "person")


def test_a_messages_id_in_a_quoted_header_is_no_address() -> None:
    """A bounce quotes the returned message's header: its id and its list's unsubscribe robot are
    written as addresses between angle brackets, no one's; the people's addresses stay."""
    text = (
        "----- Original message -----\n"
        "Message-ID: <CAKsfaBUUGqVZiaM@mail.gmail.com>\n"
        "References: <a1.x@mail.example>\n <a2.y@mail.example>\n"
        "List-Unsubscribe: <mailto:u+mq6tmjtj@list.example>\n"
        "From: Megan One <megan@example.com>\n"
        "To: bob@example.com\n\n"
        "References: alice@example.com (ask her for the paper)"
    )
    found = [s.surface for s in regex_spans(text) if s.kind == "email"]
    assert found == ["megan@example.com", "bob@example.com", "alice@example.com"]


def test_a_messages_id_in_any_case_or_quoted_is_no_address() -> None:
    """Mails write their fields' names in any case ("Message-id:", "In-reply-to:"), and a reply
    quotes them after "> ": the ids there are no one's addresses either."""
    text = (
        "Message-id: <5f1c.abc@mail.example>\n"
        "In-reply-to: <CAKsfaB.x@mail.gmail.com>\n"
        "From: Dana <dana@example.com>\n\n"
        "Dana wrote:\n"
        "> Message-ID: <r2.q@mail.example>\n"
        "> references: <r1.q@mail.example>\n"
        "> From: Marco <marco@example.com>\n"
    )
    found = [s.surface for s in regex_spans(text) if s.kind == "email"]
    assert found == ["dana@example.com", "marco@example.com"]
