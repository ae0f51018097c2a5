"""Regex extractors, NER span cleaning, authors and overlap rules (pure functions)."""

from __future__ import annotations

import random
import time

import pytest

from vaultmind.entities.extract import (
    SOURCE_PRIORITY,
    Span,
    clean_ner_span,
    code_ranges,
    display_of,
    in_ranges,
    merged_ranges,
    ner_kind,
    parse_author,
    regex_spans,
    select_spans,
)
from vaultmind.entities.registry import EntityNote, Registry
from vaultmind.entities.resolve import Mention, resolve_text


def _found(text: str) -> list[tuple[str, str]]:
    return [(s.kind, s.surface) for s in regex_spans(text)]


def test_emails_urls_handles_hashtags_phones() -> None:
    text = (
        "Mail alice@example.com or <bob.stone+x@mail.example.org>. See https://example.com/a_b?x=1, "
        "and (https://ex.org/p). Ping @bob.stone and @alice; #launch #q3-budget (#area/sub) call +353 85 123 4567."
    )
    assert _found(text) == [
        ("email", "alice@example.com"),
        ("email", "bob.stone+x@mail.example.org"),
        ("url", "https://example.com/a_b?x=1"),
        ("url", "https://ex.org/p"),
        ("handle", "@bob.stone"),
        ("handle", "@alice"),
        ("topic", "#launch"),
        ("topic", "#q3-budget"),
        ("topic", "#area/sub"),
        ("phone", "+353 85 123 4567"),
    ]


def test_an_images_url_a_trackers_url_and_a_broken_byte_make_no_entity() -> None:
    """A poster's or a mail's pixel URL, and a tracker's link of kilobytes, are no page anyone
    names: no url entity; a page's URL still is. A name whose last byte was broken (read as
    U+FFFD) is the name without it, from a header or the model's hit."""
    long = "https://longurlmaker.example/go?" + "a=1&" * 60
    text = (
        "Poster: https://m.media-amazon.com/images/M/MV5B@._V1_SX300.jpg and https://t.example/p.PNG?w=1 "
        f"tracked {long} see https://example.com/blade-runner."
    )
    assert _found(text) == [("url", "https://example.com/blade-runner")]
    author = parse_author("\"Юникод запрещен\ufffd\" <unicode@example.com>")
    assert author is not None and author.name == "Юникод запрещен"
    plain = parse_author("Mark Crispin\ufffd")
    assert plain is not None and plain.name == "Mark Crispin"
    for spaced in ('"Ana Smith\t" <ana@example.org>', '"\tAna Smith \ufffd\n" <ana@example.org>', "Ana Smith\ufffd\t"):
        author = parse_author(spaced)
        assert author is not None and author.name == "Ana Smith", spaced  # white space around it too
    leaf = "We met Paul Chambers\ufffd at the club."
    span = clean_ner_span(leaf, leaf.index("Paul"), leaf.index(" at"), "PERSON")
    assert span is not None and span.surface == "Paul Chambers"


def test_a_mention_written_with_a_full_name_is_no_handle() -> None:
    """A chat export writes a mention as the person's name ("@Priya Natarajan", Slack's
    `<@U02PRIYA>` rendered): "@Priya" is not a handle of its own (the name is a person's, for
    NER and the registry); a handle before a capitalised word still is one when it is not a name."""
    assert _found("@Priya Natarajan can you review the rollback?") == []
    assert _found("@priya.n Natarajan said so") == [("handle", "@priya.n")]
    assert _found("thanks @Priya, and @Kai") == [("handle", "@Priya"), ("handle", "@Kai")]


def test_things_that_are_not_entities() -> None:
    text = (
        "# Heading\n## Sub\nissue #123 and #2024-03, a#b, x@y, [[Note#Heading]], "
        "costs $300 on 2024-03-04 at 10:30, tel 555-1234, version 1.2.3, user@localhost"
    )
    assert _found(text) == [("link", "Note")]  # a wikilink is only a candidate for the registry


def test_nothing_inside_code() -> None:
    text = "Ask `@bob` about\n\n```\nmail alice@example.com #tag\n```\n\nbut #real is real"
    assert _found(text) == [("topic", "#real")]


def test_a_stray_backtick_hides_nothing_beyond_its_paragraph() -> None:
    """A code span never crosses a blank line (CommonMark): a lone backtick is a backtick, and
    the paragraphs after it keep their entities."""
    text = "Press the ` key to open the console.\n\nWrite to alice@example.com about #launch.\n\nThen run `make`."
    assert code_ranges(text) == [(text.index("`make`"), len(text) - 1)]
    assert _found(text) == [("email", "alice@example.com"), ("topic", "#launch")]
    spanning = "Run `make\nall` now"  # a span may still cross a line break that is no blank line
    assert code_ranges(spanning) == [(4, 14)]


def test_wikilinks_are_candidates_with_their_alias() -> None:
    spans = regex_spans("See [[entities/person/alice-chen|Alice]] and [[Budget 2024#Q3]] and ![[img.png]].")
    links = [(s.surface, s.value) for s in spans if s.kind == "link"]
    assert links == [
        ("Alice", "entities/person/alice-chen"),
        ("Budget 2024", "Budget 2024"),
        ("img.png", "img.png"),
    ]


@pytest.mark.parametrize(
    ("text", "hit", "kept"),
    [
        ("Relayed over SMTP by smtp.example.com at noon.", "SMTP", None),
        ("Spec: HTTP Authentication, see http://example.com/spec", "HTTP", None),
        ("The HTTP Authentication draft is draft-ietf-http-authentication-00.txt", "HTTP", None),
        ("Send the export as JSON (data.json), not as a table.", "JSON", None),
        ("Lucinda wrote to UNICEF about the group.", "UNICEF", "UNICEF"),  # nothing says it is no name
        ("Lucinda went to an LGBTQ center. LGBTQ organized a march.", "LGBTQ", "LGBTQ"),
    ],
)
def test_an_acronym_the_text_also_writes_in_lower_case_is_no_name(text: str, hit: str, kept: str | None) -> None:
    """The model takes protocols and formats for organizations; where the same text writes the
    acronym in lower case too (an address, a URL, a file name) it is a word of the trade."""
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), "ORG")
    assert (None if span is None else span.surface) == kept


def test_ner_labels_and_cleaning() -> None:
    assert ner_kind("PERSON") == "person" and ner_kind("GPE") == "place" and ner_kind("FAC") == "place"
    assert ner_kind("WORK_OF_ART") == "work" and ner_kind("ORG") == "org"
    for label in ("DATE", "TIME", "CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY", "NORP", "LANGUAGE"):
        assert ner_kind(label) is None
    text = "I met the Fernhill Labs' team and Alice's dog, “Bob”.\nSplit\nname"
    at = text.index
    span = clean_ner_span(text, at("the"), at(" team"), "ORG")
    assert (
        span is not None
        and span.surface == "Fernhill Labs"
        and text[span.start : span.end] == "Fernhill Labs"
    )
    alice = clean_ner_span(text, at("Alice"), at(" dog"), "PERSON")
    assert alice is not None and alice.surface == "Alice"
    bob = clean_ner_span(text, at("“"), at(".\n") + 1, "PERSON")
    assert bob is not None and bob.surface == "Bob"
    assert clean_ner_span(text, at("Split"), len(text), "PERSON") is None  # spans lines
    assert clean_ner_span(text, 0, 1, "PERSON") is None
    assert clean_ner_span("on 2024-03-04", 3, 13, "DATE") is None
    assert clean_ner_span("the SDK and UTC", 4, 7, "ORG") is None  # short acronyms: too noisy
    assert clean_ner_span("NASA", 0, 4, "ORG") is not None
    crumb = "Tidepool runbook › Launch day checklist:"  # a summary's "Title › Heading"
    launch = clean_ner_span(crumb, crumb.index("›"), crumb.index(" day"), "ORG")
    assert launch is not None and launch.surface == "Launch"
    meeting = "# Launch sync\nWeekly sync for the Tidepool launch. Will said he will come."
    assert clean_ner_span(meeting, 2, 8, "PERSON") is None, "written lower case in the same text: a word"
    assert clean_ner_span(meeting, meeting.index("Will"), meeting.index(" said"), "PERSON") is None
    assert clean_ner_span(meeting, 2, 13, "EVENT") is not None, "a name of two words is kept"
    alone = "Launch said hi to the pre-launch team."  # "pre-launch" is no lower-case "launch"
    assert clean_ner_span(alone, 0, 6, "PERSON") is not None


@pytest.mark.parametrize(
    ("text", "word", "kept"),
    [
        ("Called Bill about the water bill.", "Bill", True),  # after a word that takes a person
        ("Lunch with Mark, then we mark the essays.", "Mark", True),
        ("The bill came. I said Bill should pay, and Bill agreed: bill split.", "Bill", True),  # inside sentences twice
        ("Bill paid the water bill.", "Bill", False),  # capitalised once, by its place
        ("# Launch sync\nWeekly sync for the Tidepool launch.", "Launch", False),
        ("Weekly sync. Will said he will come.", "Will", False),
    ],
)
def test_a_one_word_person_written_as_a_name_is_kept(text: str, word: str, kept: bool) -> None:
    """A name the model finds that the text also writes in lower case is kept where the text
    writes it as a name: after "called", "with", "to", or capitalised inside a sentence twice."""
    at = text.index(word)
    span = clean_ner_span(text, at, at + len(word), "PERSON")
    assert (span is not None and span.surface == word) is kept


def test_overlaps_prefer_links_then_regex_then_registry_then_ner() -> None:
    spans = [
        Span(0, 10, "Alice Chen", "person", "ner"),
        Span(0, 5, "Alice", "person", "registry", "person:alice-chen"),
        Span(0, 10, "Alice Chen", "person", "registry", "person:alice-chen"),
        Span(12, 30, "alice@example.com", "email", "regex", "alice@example.com"),
        Span(12, 17, "alice", "person", "ner"),
    ]
    chosen = select_spans(spans)
    assert [(s.source, s.surface) for s in chosen] == [
        ("registry", "Alice Chen"),
        ("regex", "alice@example.com"),
    ]


def test_authors() -> None:
    bob = parse_author("Bob Stone <bob@example.com>")
    assert bob is not None and (bob.name, bob.email) == ("Bob Stone", "bob@example.com")
    mail = parse_author("alice@example.com")
    assert mail is not None and (mail.name, mail.email) == ("", "alice@example.com")
    handle = parse_author("@priya")
    assert handle is not None and handle.handle == "priya"
    name = parse_author("Alice Chen")
    assert name is not None and (name.name, name.email) == ("Alice Chen", "")
    assert parse_author("") is None and parse_author("unknown") is None and parse_author("1234") is None
    assert display_of("Bob Stone <bob@example.com>") == "Bob Stone"
    assert display_of("Alice") == "Alice"


@pytest.mark.parametrize(
    ("author", "name"),
    [
        ('"Chen, Alice" <alice@example.com>', "Alice Chen"),
        ("Chen, Alice <alice@example.com>", "Alice Chen"),  # as a mail's meta line keeps it
        ("van der Berg, Anna Maria <anna@example.com>", "Anna Maria van der Berg"),
        ("Acme, Inc. <info@example.com>", "Acme, Inc."),
        ("Stone, Jr. <bob@example.com>", "Stone, Jr."),
        ("Chen, Alice", "Chen, Alice"),  # a name without an address is kept as written
    ],
)
def test_a_mail_name_written_surname_first_is_read_in_reading_order(author: str, name: str) -> None:
    parsed = parse_author(author)
    assert parsed is not None and parsed.name == name
    assert parsed.email == ("" if "<" not in author else author[author.index("<") + 1 : -1])
    assert display_of(author) == name


@pytest.mark.parametrize(
    ("text", "word", "label", "kept"),
    [
        ("## Tools and subscriptions\n\nDesign tool: €45", "Tools", "PERSON", False),  # a heading's first word
        ("## Dana\n\nOwns the guest list.", "Dana", "PERSON", True),  # a heading that is a name
        ("> [!warning] Infrastructure\n> Switched off on 30 April.", "Infrastructure", "ORG", False),
        ("| Line | Amount |\n| --- | ---: |\n| Infrastructure | €2,100 |", "Line", "PERSON", False),
        ("| Line | Amount |\n| --- | ---: |\n| Infrastructure | €2,100 |", "Infrastructure", "ORG", False),
        ("| Date | Owner |\n| --- | --- |\n| 2 April | Bob |", "Bob", "PERSON", True),  # a table's body
        ("Owner: Marco Ruiz. Updated 7 March.", "Owner", "ORG", False),  # a label
        ("- Press: Marco Ruiz\n- Venue: Dana", "Press", "ORG", False),
        ("Hire fee: €4,200 including AV.", "Hire", "PERSON", False),  # a label of two words
        ("- Bob: TestFlight beta by 2 April", "Bob", "PERSON", True),  # someone's task
        ("Marco: launching without the tier kills it.", "Marco", "ORG", True),  # someone speaking
        ("Dana said: We're booked for the 23rd.", "Dana", "PERSON", True),  # someone speaking
        ("Bob wrote: Beta by Friday", "Bob", "PERSON", True),
        ("Kofi mentioned: The staging box is full again.", "Kofi", "PERSON", True),  # any verb in -ed
        ("Amara thinks: We should ship on Friday.", "Amara", "PERSON", True),  # a verb of thinking
        ("## Dana and Marco\n\nBoth agreed to the plan.", "Dana", "PERSON", True),  # a heading of names
        ("## Dana, Marco & Bob\n\nBoth agreed.", "Dana", "PERSON", True),
        ("## Tools and subscriptions\n\nDesign tool: €45", "Tools", "PERSON", False),  # not of names
        ("| City | Team |\n|---|---|\n| Berlin | sales |", "Berlin", "GPE", True),  # a place in a table's body
        ("| Berlin | Madrid |\n|---|---|\n| sales | support |", "Berlin", "GPE", False),  # … not its header
        ("| Day | Marco | Dana |\n|---|---|---|\n| Mon | on call | off |", "Marco", "PERSON", True),  # a rota's column
        ("| Who | Role |\n|---|---|\n| [[bob]] | backend |", "Who", "PERSON", False),  # a header's first cell
        ("| Pro | €4 |\n\nThe Pro tier stays in 1.0.", "Pro", "ORG", False),  # a tier's name, not inside
        ("Sailing forecasts, with a paid Pro tier.", "Pro", "ORG", False),  # between a determiner and a noun
        ("Without the Pro tier? I'd rather cut Pro.", "Pro", "ORG", True),  # capitalised inside a sentence
        ("We met the Google team. She works at Google.", "Google", "ORG", True),
        ("We met the Google team.", "Google", "ORG", False),  # weak evidence: found nowhere else
        ("Lunch with the Ramos family.", "Ramos", "PERSON", True),  # a person's is no tier
        ("Target opens a store in Leeds.", "Target", "ORG", True),  # a sentence's start: no weak place
        ("Google is hiring again.", "Google", "ORG", True),
        ("## Noah swimming lessons\n\nTuesdays at five.", "Noah", "PERSON", True),  # a name leads the heading
        ("## Notes on pricing\n\nTwo tiers.", "Notes", "PERSON", False),  # a joining word leads lower case
        ("| Service | Vendor |\n|---|---|\n| Hosting | Hetzner |", "Hetzner", "ORG", True),  # a body's value
        ("| TestFlight | Testers |\n|---|---|\n| beta | 40 |", "TestFlight", "ORG", True),  # its own capital
        ("Content-Type: text/plain; charset=us-ascii", "Content-Type", "ORG", False),  # a mail header's field
    ],
)
def test_a_word_capitalised_by_its_place_is_no_entity(text: str, word: str, label: str, kept: bool) -> None:
    """A one-word hit that stands where every word is capitalised — a heading's or a callout's
    title, a table cell, a label before a colon — is the model's guess on a capital that says
    nothing; a person there is kept where people are written (a heading alone, a table's body,
    before a colon on their own), and any word the text capitalises inside a sentence."""
    at = text.index(word)
    span = clean_ner_span(text, at, at + len(word), label)
    assert (span is not None and span.surface == word) is kept


@pytest.mark.parametrize(
    ("text", "hit", "label", "kept"),
    [
        ("| Hosting | Hetzner | €40 |", "Hosting | Hetzner", "PERSON", None),  # across a table's cells
        ("The flat is ready-for-sale now.", "ready-for-sale", "WORK_OF_ART", None),  # no capital
        ("Ready-for-sale since May.", "Ready-for-sale", "WORK_OF_ART", None),  # a lower-case compound
        ("DKIM key wgo268xc0ktfylj rotated.", "wgo268xc0ktfylj", "PERSON", None),  # a code
        ("Message T-1311926934 bounced.", "T-1311926934", "ORG", None),  # more digits than letters
        ("Date: Fri, 29 Jul 2011", "Fri", "PERSON", None),  # a weekday
        ("Sent Sat 2 Jul from the office.", "Sat 2 Jul", "ORG", None),
        ("Walked 2 km before work.", "Walked 2 km", "PERSON", None),  # a name ends capitalised
        ("> s=smtp; h=MIME-Version: Message-Id: Date:", "MIME-Version", "ORG", None),  # a header field
        ("t=1; h=Content-Transfer-Encoding: Mime-Version: Date", "Content-Transfer-Encoding: Mime-Version", "ORG", None),
        ("We watched Alien: Covenant twice.", "Alien: Covenant", "WORK_OF_ART", "Alien: Covenant"),
        ("She banks with Bank of America.", "Bank of America", "ORG", "Bank of America"),
        ("Booked the Launch sync room.", "Launch sync", "EVENT", "Launch sync"),  # not a person's
        ("Sun Microsystems made Java.", "Sun Microsystems", "ORG", "Sun Microsystems"),  # a name after all
        ("We met Jean-Luc Picard.", "Jean-Luc Picard", "PERSON", "Jean-Luc Picard"),
        ("She drives a Rolls-Royce.", "Rolls-Royce", "ORG", "Rolls-Royce"),
        ("R2D2 beeped twice.", "R2D2", "PERSON", "R2D2"),
        ("We moved to Office 365 in May.", "Office 365", "PRODUCT", "Office 365"),
        ("I told Auntie Lin about it.", "Lin", "PERSON", "Auntie Lin"),  # a kinship title is the name's
        ("Lunch with Grandma Rose.", "Grandma Rose", "PERSON", "Grandma Rose"),
        ("the Auntie Anne's stand", "Anne", "ORG", "Anne"),  # only a person takes a title in
        ("# TODO: Understand network diagrams", "TODO", "PERSON", None),  # a person in capitals alone
        ("Not found by SMTP address lookup", "SMTP", "PERSON", None),
        ("Lucinda joined LGBTQ last year.", "LGBTQ", "ORG", "LGBTQ"),  # an organization may be
        ("The fix is in dir1/Note now.", "dir1/Note", "ORG", None),  # a path
        ("It speaks HTTP/1.0 only.", "HTTP/1.0", "GPE", None),
        ("Then I moved it to Notes/Archive again.", "Notes/Archive", "PERSON", None),
        ("They played AC/DC all night.", "AC/DC", "ORG", "AC/DC"),  # capitals alone: a name
        ("Then Notes.md was gone.", "Notes.md", "PERSON", None),  # a file name
        ("Read README.md first.", "README.md", "ORG", None),
        ("Booked it on Booking.com again.", "Booking.com", "ORG", "Booking.com"),  # an organization may
        ("We rewrote it in Node.js last year.", "Node.js", "PRODUCT", "Node.js"),
        ("where U_{GEE}(\\beta holds", "U_{GEE}(\\beta", "PERSON", None),  # markup, a formula
        ("Built on Linux x86_64 boxes.", "Linux x86_64", "PERSON", None),
        ("see [dir1](dir1/Note.md) below", "dir1](dir1/Note.md", "ORG", None),
        ("did you?I think so", "you?I", "ORG", None),
    ],
)
def test_a_hit_whose_shape_is_no_name_is_dropped(text: str, hit: str, label: str, kept: str | None) -> None:
    """Whatever its place: a hit across cells, without a capital, a lower-case compound, a code,
    a weekday, an acronym alone, a path, a file name or markup is no name; a person's hit takes
    in the kinship title right before it."""
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), label)
    assert (None if span is None else span.surface) == kept


@pytest.mark.parametrize(
    ("text", "hit", "label", "kept"),
    [
        # a heading's whole title (after a label of its own) of words the text writes in lower case
        ("# TODO: Understand Network Diagrams\n\nI try to understand these network diagrams.",
         "Understand Network Diagrams", "ORG", None),
        # a label's words before its colon
        ("Sender Address: postmaster@example.com\n\nThe sender address was wrong.", "Sender Address", "ORG", None),
        ("DNS Error: Domain name not found\n\nno dns record, an error", "DNS Error", "ORG", None),
        # a table cell's whole text
        ("| Inbox Rules | on |\n|---|---|\n| 2 | 3 |\n\nrules of the inbox", "Inbox Rules", "ORG", None),
        ("## Send Again\n\nsend it again", "Send Again", "WORK_OF_ART", None),
        # a name's words are not all written in lower case: it stays
        ("# Helen Okafor\n\nHelen wrote the plan.", "Helen Okafor", "PERSON", "Helen Okafor"),
        ("## Hetzner Cloud\n\nthe cloud bill rose.", "Hetzner Cloud", "ORG", "Hetzner Cloud"),
        # a name written in lower case in an address only is no common word
        ("To: Dan Le\n\nHi dan.le@example.com, le dan", "Dan Le", "PERSON", None),
        ("To: Dan Le\n\nHi dan.le@example.com,", "Dan Le", "PERSON", "Dan Le"),
        # inside a sentence a capitalised phrase is no label
        ("We visited New Market; the new market is big.", "New Market", "GPE", "New Market"),
    ],
)
def test_a_heading_or_label_of_common_words_is_no_name(text: str, hit: str, label: str, kept: str | None) -> None:
    """A hit of several words that is the whole title of a heading, a label before its colon or
    a table cell, each word of which the text also writes in lower case, is a phrase capitalised
    by its place ("Understand Network Diagrams"), not a name."""
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), label)
    assert (None if span is None else span.surface) == kept


@pytest.mark.parametrize(
    ("text", "hit", "label", "kept"),
    [
        # a command's label: its verb, then words the text writes in lower case
        ("In Outlook, open the report and choose Send Again from the Report ribbon. "
         "Try to send it again later.", "Send Again", "PERSON", None),
        # a setting's name before a piece of interface, with a word the text writes in lower case
        ("Forwarding is set by the recipient via the Inbox Rules feature. Check the rules.",
         "Inbox Rules", "ORG", None),
        # … which makes it a label wherever else the text writes it
        ("If you're an email admin, see the Email Admins section below.\n\nMore Info for Email Admins\n"
         "Status code: 550", "Email Admins", "PERSON", None),
        # names keep a word of their own
        ("We donated to Save the Children again, for the children.", "Save the Children", "ORG",
         "Save the Children"),
        ("Open the Hetzner Cloud console; the cloud bill rose.", "Hetzner Cloud", "ORG", "Hetzner Cloud"),
        ("Dana Whitfield wrote the section on pricing.", "Dana Whitfield", "PERSON", "Dana Whitfield"),
        ("We asked Send Grid about it.", "Send Grid", "ORG", "Send Grid"),  # "grid" is never written
    ],
)
def test_an_interface_label_in_a_sentence_is_no_name(text: str, hit: str, label: str, kept: str | None) -> None:
    """A button's, a menu's or a setting's label written as the interface capitalises it, inside
    running text ("choose Send Again", "the Inbox Rules feature"), is no name."""
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), label)
    assert (None if span is None else span.surface) == kept


@pytest.mark.parametrize(
    ("text", "hit", "label", "kept"),
    [
        ("# Title\n\nThis note is embedded. It mentions the word bar.", "Title", "PERSON", None),
        ("# Link\n\nThis notes links to [[Other]].", "Link", "PERSON", None),
        ("# Note\n\nSentence containing foo.", "Sentence", "ORG", None),
        ("Ping YAlzoXESudhug about the deploy.", "YAlzoXESudhug", "PERSON", None),  # random case
        ("Ask McDonald about the deploy.", "McDonald", "PERSON", "McDonald"),
        ("We moved to PostgreSQL in May.", "PostgreSQL", "ORG", "PostgreSQL"),
        ("# Dana\n\nOwns the guest list.", "Dana", "PERSON", "Dana"),
        ("We met Link Wray's band.", "Link Wray", "PERSON", "Link Wray"),  # more than the word
    ],
)
def test_a_document_part_or_a_scrambled_word_alone_is_no_name(
    text: str, hit: str, label: str, kept: str | None
) -> None:
    """A word that names a part of a document, alone ("# Title", "# Link"), and a word of
    letters in random case ("YAlzoXESudhug") are no names, wherever they stand."""
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), label)
    assert (None if span is None else span.surface) == kept


@pytest.mark.parametrize(
    ("text", "hit", "label", "kept"),
    [
        ("# Paul Chambers\n\n## Albums\n\n![[Albums.base#Artist]]", "Albums", "PERSON", None),
        ("# Podcast episodes\n\n![[Podcast episodes.base]]", "Podcast", "PERSON", None),
        ("# Paul Chambers\n\n## Albums\n\n![[Albums.base#Artist]]", "Paul Chambers", "PERSON", "Paul Chambers"),
        ("## Dana\n\n![[Dana at the party.jpg]]", "Dana", "PERSON", "Dana"),  # the file is not the title
        ("# Dana Whitfield\n\n![[Dana Whitfield.jpg]]", "Dana Whitfield", "PERSON", "Dana Whitfield"),  # a photo
        ("## Launch board\n\n![[Launch board.canvas]]", "Launch", "ORG", None),  # a canvas is a view
        # the heading over the part of a view the text shows
        ("# Movies\n\n## Last seen\n\n![[Movies.base#Last seen]]", "Last", "PERSON", None),
        ("## Dana\n\n![[Movies.base#Dana Whitfield]]", "Dana", "PERSON", "Dana"),  # not the part's whole name
    ],
)
def test_a_heading_over_an_embedded_file_is_no_name(text: str, hit: str, label: str, kept: str | None) -> None:
    """A heading whose whole title is the name of a view the text embeds (a Bases view under
    "## Albums", a canvas) titles that view: the words in it are no name; a photo is no view."""
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), label)
    assert (None if span is None else span.surface) == kept


BOUNCED_HEADERS = """The message could not be delivered.

Received: from HE1EUR01FT040.eop-EUR01.prod.protection.outlook.com
 (2a01:111:f400:7e18::208) by HE1EUR01HT160.eop-EUR01.prod.protection.outlook.com
 15.20.77.10 via Frontend Transport; Fri, 13 Oct 2017 11:10:14 +0000
Received: from mx.example.org (unknown [192.168.13.217])
        by relay.example.eu (Postfix) with SMTP id 749FD11200E
DKIM-Signature: a=rsa-sha256; v=1; c=relaxed/relaxed; d=example.com; s=mx;
 t=1507893012; h=Content-Transfer-Encoding: Mime-Version: Content-Type:
DomainKey-Signature: a=rsa-sha1; c=nofws; d=example.com; s=mx
From: Kirk Douglas <kirk@example.com>
To: Dan Le <dan@example.com>
Subject: Dinner at Harbor Hall

Marco Ruiz booked Harbor Hall.
"""


@pytest.mark.parametrize(
    ("hit", "label", "kept"),
    [
        ("Frontend Transport", "ORG", None),  # folded under Received:
        ("Postfix", "PERSON", None),
        ("Content-Transfer-Encoding", "ORG", None),  # in a signature's list of fields
        ("DomainKey", "ORG", None),  # the field's own name
        ("Kirk Douglas", "PERSON", "Kirk Douglas"),  # the fields that name people stay
        ("Dan Le", "PERSON", "Dan Le"),
        ("Harbor Hall", "FAC", "Harbor Hall"),  # a subject and the body too
        ("Marco Ruiz", "PERSON", "Marco Ruiz"),
    ],
)
def test_a_mail_transport_header_written_out_names_no_one(hit: str, label: str, kept: str | None) -> None:
    """A bounce quotes the returned message's headers: the words of its transport fields
    (`Received:`, `DKIM-Signature:` and the lines folded under them) are servers' and programs',
    not names; `From:`, `To:` and the body still name people."""
    text = BOUNCED_HEADERS
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), label)
    assert (None if span is None else span.surface) == kept


@pytest.mark.parametrize(
    ("text", "hit", "label", "kept"),
    [
        # the model reads the first name as a place and leaves the rest out
        ("Hello\n\nOn 04/02/2012 06:26 PM, Megan One wrote:\n> Hi", "Megan", "GPE", ("Megan One", "person")),
        ("> On Mon, Apr 2, 2012 at 6:26 PM, Megan One <megan@example.com> wrote:", "Megan", "GPE",
         ("Megan One", "person")),
        ("> > On 22 Aug 2015, at 19:21, Adam Renberg <adam@example.com> wrote:", "Adam", "ORG",
         ("Adam Renberg", "person")),
        ("> Marc Slemko wrote:\n> the patch is fine", "Marc Slemko", "PERSON", ("Marc Slemko", "person")),
        # no attribution: the line goes on after "wrote:", or the hit is not the writer's name
        ("We met in Paris, Megan wrote: all fine", "Paris", "GPE", ("Paris", "place")),
        ("On Monday, Berlin wrote: we flew", "Berlin", "GPE", ("Berlin", "place")),
    ],
)
def test_a_reply_attribution_names_its_writer(
    text: str, hit: str, label: str, kept: tuple[str, str] | None
) -> None:
    """"On <date>, <name> wrote:" over a quoted reply names the quoted message's writer: a hit
    that opens the name there is that person, the whole name, whatever the model read."""
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), label)
    assert (None if span is None else (span.surface, span.kind)) == kept


@pytest.mark.parametrize(
    ("text", "hit", "label", "kept"),
    [
        ("## Directions\n\n12. Bake 10 minutes more until light golden.", "Bake", "PERSON", None),
        ("## Get started\n\n1. [Download this vault](https://example.com/vault.zip)", "Download", "PERSON", None),
        ("1. Whisk the eggs.\n2. Fold them in.", "Whisk", "PERSON", None),
        # someone's step: a verb follows the name, not an object
        ("1. Dana books the venue.\n2. Marco sends the deck.", "Dana", "PERSON", "Dana"),
        ("1. Marco to send the deck.", "Marco", "PERSON", "Marco"),
        # a bullet is no step; a name of two words is no verb
        ("- Dana 10 minutes late again.", "Dana", "PERSON", "Dana"),
        ("1. Dana Whitfield 10 minutes late.", "Dana Whitfield", "PERSON", "Dana Whitfield"),
    ],
)
def test_a_numbered_steps_verb_is_no_name(text: str, hit: str, label: str, kept: str | None) -> None:
    """A one-word guess of a person that opens a numbered step and takes an object (a number or
    a determiner) is the step's verb: "12. Bake 10 minutes more"."""
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), label)
    assert (None if span is None else span.surface) == kept


@pytest.mark.parametrize(
    ("text", "hit", "label", "kept"),
    [
        # a note's own label named like a mail's field keeps its names
        ("Received: €500 deposit from Helen Okafor today.", "Helen Okafor", "PERSON", "Helen Okafor"),
        ("## Reading\n\nReferences: the survey by Stanford University.", "Stanford University", "ORG",
         "Stanford University"),
        ("received: from Helen Okafor", "Helen Okafor", "PERSON", "Helen Okafor"),
        # a mail's: its value is a mail's, or another of a mail's fields stands beside it
        ("Received: from localhost (localhost [127.0.0.1])\n by Postfix with SMTP", "Postfix", "PERSON", None),
        ("X-Mailer: Apple Mail\nReceived: from Helen Okafor", "Helen Okafor", "PERSON", None),
        ("References: <a1@mail.example>\n <Stanford@mail.example>", "Stanford", "ORG", None),
    ],
)
def test_only_a_mail_field_written_as_a_mail_writes_it_is_transport(
    text: str, hit: str, label: str, kept: str | None
) -> None:
    """`Received:` and `References:` are common words a note writes as labels of its own: they
    are a mail's transport fields only with a mail's value or beside a mail's other fields."""
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), label)
    assert (None if span is None else span.surface) == kept


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("I read it in the Guardian and liked it.", True),
        ("She emailed the Guardian about the strike.", True),
        ("Priya joined the Guardian as an editor.", True),
        ("Last week the Guardian reports a leak.", True),
        ("Weather data from the Guardian on request.", True),
        ("Sailing forecasts, with the Guardian tier.", False),  # a noun after it: weak evidence
    ],
)
def test_an_organization_before_a_function_word_qualifies_no_noun(text: str, kept: bool) -> None:
    """Only a lower-case noun after a one-word organization makes it qualify that noun ("the Pro
    tier"); a conjunction, a preposition or a verb of saying after it leaves the name its own."""
    at = text.index("Guardian")
    span = clean_ner_span(text, at, at + len("Guardian"), "ORG")
    assert (span is not None and span.surface == "Guardian") is kept


@pytest.mark.parametrize(
    ("text", "hit", "label", "kept"),
    [
        ("Hi Dana,\n\nAcme Corp wrote:\n> Your invoice is ready", "Acme Corp", "ORG", ("Acme Corp", "org")),
        ("> Google Support wrote:\n> We received your request", "Google Support", "ORG",
         ("Google Support", "org")),
        ("> Google Support wrote:\n> We received your request", "Google", "GPE", ("Google Support", "org")),
        ("On Tue, 3 May 2022, Hetzner <info@mail.example> wrote:", "Hetzner", "ORG", ("Hetzner", "org")),
        # a place's reading, or a part of the name read as an organization's, is a person's
        ("On Tue, 3 May 2022, Megan One wrote:", "Megan", "ORG", ("Megan One", "person")),
    ],
)
def test_an_organization_writing_a_reply_stays_an_organization(
    text: str, hit: str, label: str, kept: tuple[str, str]
) -> None:
    """"Acme Corp wrote:" is an organization's attribution: the model's organization, or a name
    ending in an organization's word, is not made a person."""
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), label)
    assert (None if span is None else (span.surface, span.kind)) == kept


@pytest.mark.parametrize(
    ("text", "hit", "kept"),
    [
        ("Below is the data to retrieve the ASCII version of the draft.", "ASCII", None),
        ("Our UNICEF grant report is due. We sent the UNICEF figures too.", "UNICEF", None),
        ("UNICEF announced the grant, and the UNICEF team called.", "UNICEF", "UNICEF"),  # a name too
        ("The NASA probe flew. NASA's budget grew.", "NASA", "NASA"),
        ("I applied to NASA last week.", "NASA", "NASA"),  # no noun after it: a name
        # a word of the mail protocols, wherever it stands
        ('"Hello! Did you ask for some MIME? "', "MIME", None),
        ("Subject: Re: a MIME-Version misfeature", "MIME-Version", None),
        ("(in reply to RCPT TO command)", "RCPT TO", None),
        # … after a name's first word: a mail server's name, unless used as a name too
        ("Hop 4 went from relay.example.net with Microsoft SMTP Server (version=TLS1_2) in 1 sec.",
         "Microsoft SMTP Server", None),
        ("Acme SMTP Relay announced a price cut.", "Acme SMTP Relay", "Acme SMTP Relay"),
    ],
)
def test_an_acronym_used_as_a_word_is_no_organization(text: str, hit: str, kept: str | None) -> None:
    """An acronym before a lower-case noun ("the ASCII version") or a word of the mail protocols
    ("some MIME?", "Microsoft SMTP Server") is no organization, unless the text uses it as a name
    elsewhere ("UNICEF announced", "NASA's budget")."""
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), "ORG")
    assert (None if span is None else span.surface) == kept


@pytest.mark.parametrize(
    ("text", "hit", "label", "kept"),
    [
        ("Content-Type: text/html\nSubject: Messy part\n\nHey", "Messy", "PERSON", None),
        ("Subject: Re: Quarterly figures attached\n\nHi", "Quarterly", "ORG", None),
        ("Subject: Dana said yes\n\nHi", "Dana", "PERSON", "Dana"),  # a verb after it: someone
        ("Subject: Messy part\n\nI asked Messy about it.", "Messy", "PERSON", "Messy"),  # named inside
        ("# Movie Genre Template\n\n![[Movies.base#Genre]]", "Movie Genre", "PERSON", None),
        ("## Acme Review Notes\n\n- done", "Acme Review", "ORG", None),
        ("# Steph Ango\n\nShe writes.", "Steph Ango", "PERSON", "Steph Ango"),
        ("## Steph Ango's notes\n\nShe writes.", "Steph Ango", "PERSON", "Steph Ango"),
    ],
)
def test_a_subject_or_a_documents_title_is_no_name(text: str, hit: str, label: str, kept: str | None) -> None:
    """A mail subject's first word before a lower-case noun is capitalised by its place, as a
    heading's is; a name before a capitalised document's part in a heading ("# Movie Genre
    Template") names a document."""
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), label)
    assert (None if span is None else span.surface) == kept


@pytest.mark.parametrize(
    ("text", "hit", "kept"),
    [
        ('The manager\'s comment:\n"Hello Allan! Did you ask for some help? "', "Hello Allan", None),
        ("   Like Basic, Digest access authentication verifies that both know it.", "Like Basic, Digest", None),
        ('I loved "Who Framed Roger Rabbit?" as a kid.', "Who Framed Roger Rabbit", "Who Framed Roger Rabbit"),
        ("We read *Eat, Pray, Love* last year.", "Eat, Pray, Love", "Eat, Pray, Love"),
        ('We read "Eat, Pray, Love" last year.', "Eat, Pray, Love", "Eat, Pray, Love"),
    ],
)
def test_a_quoted_sentence_is_no_work(text: str, hit: str, kept: str | None) -> None:
    """A work's hit that opens a quotation going on as a sentence, or runs bare across a comma, is
    a sentence's words; a quoted or emphasised title stays a work."""
    at = text.index(hit)
    span = clean_ner_span(text, at, at + len(hit), "WORK_OF_ART")
    assert (None if span is None else span.surface) == kept


def test_a_text_full_of_inline_code_resolves_in_linear_time() -> None:
    """A technical note of 4,000 lines with two code spans each, and a name between them: every
    name outside code is found, nothing inside code, and in well under a second or two (each code
    span was compared with every range found before it, and each name with every range: 16 s)."""
    path = "entities/person/alice-chen.md"
    registry = Registry.build([EntityNote("person:alice-chen", "person", "Alice Chen", path, ("Alice",), paths=(path,))])
    lines = [f"- Call `fn_{i}(x) @bob{i}` then ask Alice Chen about `Alice {i}` #t{i}." for i in range(4000)]
    text = "```\nAlice in a fence `x\n```\n" + "\n".join(lines)
    started = time.thread_time()  # this thread's work, not the time other processes of a loaded host took
    found = resolve_text(registry, text, None)
    seconds = time.thread_time() - started
    first = text.index("Alice Chen")
    assert [m for m in found.mentions if not m.entity_id.startswith("topic:")] == [
        Mention("person:alice-chen", "Alice Chen", first, first + len("Alice Chen"))
    ]  # not the "Alice" in the fence nor those in code, and no handle in code
    assert sorted(m.entity_id for m in found.mentions if m.entity_id.startswith("topic:")) == sorted(
        f"topic:t{i}" for i in range(4000)
    )
    assert seconds < 4, f"{seconds:.1f} s"


def test_overlapping_spans_and_code_ranges_are_decided_as_one_by_one() -> None:
    """`select_spans` and `in_ranges` give what comparing each span with every other gives."""
    rng = random.Random(7)
    for _ in range(300):
        spans = []
        for _ in range(rng.randrange(2, 30)):
            start = rng.randrange(0, 200)
            spans.append(Span(start, start + rng.randrange(1, 25), "x", "person", rng.choice(list(SOURCE_PRIORITY))))
        ranked = sorted(spans, key=lambda s: (SOURCE_PRIORITY[s.source], -(s.end - s.start), s.start, s.kind))
        taken: list[Span] = []
        for span in ranked:
            if all(span.end <= t.start or t.end <= span.start for t in taken):
                taken.append(span)
        assert select_spans(spans) == sorted(taken, key=lambda s: (s.start, s.end))
        ranges = [(s.start, s.end) for s in spans[: len(spans) // 2]]
        for s in spans:
            one_by_one = any(a < s.end and s.start < b for a, b in ranges)
            assert in_ranges(s.start, s.end, merged_ranges(ranges)) is one_by_one
