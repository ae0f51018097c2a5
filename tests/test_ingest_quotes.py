from __future__ import annotations

import json
import re
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest

from tests.conftest import EVALDATA
from vaultmind.ingest.html import html_to_text
from vaultmind.ingest.quotes import cut_footer, cut_quotation, cut_signature, extract_new_text

# --- attributions and separators ------------------------------------------------------------


@pytest.mark.parametrize(
    "attribution",
    [
        "On Mon, Mar 11, 2024 at 9:00 AM, Alice Chen <alice@example.com> wrote:",
        "On Mon, Mar 11, 2024 at 9:00 AM, Alice Chen\n<alice@example.com>\nwrote:",
        "Le 11 mars 2024 à 09:00, Alice <alice@example.fr> a écrit :",
        "Am 11.03.2024 um 09:00 schrieb Alice Chen <alice@example.de>:",
        "El 11 mar 2024, a las 9:00, Alice escribió:",
        "Op 11 mrt. 2024 om 09:00 heeft Alice <alice@example.nl> het volgende geschreven:",
        '11.03.2024, 09:00, "Alice" <alice@example.ru>:',
        '11.03.2024 9:00 пользователь "Alice" <\nalice@example.ru> написал:',
        "Alice Chen <alice@example.com> wrote:",
    ],
)
def test_attribution_and_quote_are_cut(attribution: str) -> None:
    body = f"Sounds good, ship it.\n\n{attribution}\n\n> Shall we ship on Friday?\n> Alice\n"
    assert extract_new_text(body) == "Sounds good, ship it."


@pytest.mark.parametrize(
    "separator",
    [
        "-----Original Message-----\nFrom: Alice\nSent: Monday\nSubject: Plan",
        "----- Ursprüngliche Nachricht -----\nVon: Alice",
        "________________________________\nFrom: Alice Chen <alice@example.com>\n"
        "Sent: Monday, March 11, 2024 9:00 AM\nTo: Bob\nSubject: Plan",
        "*From:* Alice Chen [mailto:alice@example.com]\n*Sent:* Monday, March 11, 2024\n*To:* Bob",
        "Von: Alice Chen <alice@example.de>\nGesendet: Montag, 11. März 2024 09:00\nAn: Bob\nBetreff: Plan",
        "От: Alice <alice@example.ru>\nОтправлено: 11 марта 2024 г.\nКому: Bob",
        "---------- Forwarded message ---------\nFrom: Alice <alice@example.com>",
        "Begin forwarded message:\n\nFrom: Alice <alice@example.com>",
    ],
)
def test_separator_cuts_the_unquoted_original(separator: str) -> None:
    body = f"Sounds good, ship it.\n\n{separator}\n\nShall we ship on Friday?\nAlice\n"
    assert extract_new_text(body) == "Sounds good, ship it."


def test_bottom_posting_keeps_the_reply_below() -> None:
    body = "On 03/11/2024 09:00 AM, Alice wrote:\n> Shall we ship?\n> Friday?\nYes, Friday."
    assert extract_new_text(body) == "Yes, Friday."


def test_inline_reply_keeps_its_context_but_not_the_trailing_quote() -> None:
    body = (
        "> Can you do Tuesday?\n\nYes, Tuesday works.\n\n> And bring the slides?\n\nSure.\n\n"
        "> Thanks,\n> Alice\n> -- \n> Alice Chen, Acme\n"
    )
    assert extract_new_text(body) == (
        "> Can you do Tuesday?\n\nYes, Tuesday works.\n\n> And bring the slides?\n\nSure."
    )


def test_short_quote_kept_long_quote_cut() -> None:
    assert extract_new_text("> Friday?\n\nYes.") == "> Friday?\n\nYes."
    assert extract_new_text("> a\n> b\n> c\n\nYes.") == "Yes."
    assert extract_new_text("Yes.\n\n> one line") == "Yes.\n\n> one line"
    assert extract_new_text("Yes.\n\n> one\n> two") == "Yes."


def test_nothing_new_keeps_the_whole_body() -> None:
    forward = "---------- Forwarded message ---------\nFrom: Alice <alice@example.com>\n\nThe plan."
    assert extract_new_text(forward) == forward
    only_quote = "> just\n> quoted"
    assert extract_new_text(only_quote) == only_quote
    assert extract_new_text("") == ""


def test_not_a_splitter() -> None:
    body = (
        "On your remote host you can run:\n\n    telnet 127.0.0.1 52698\n\n"
        "On Monday the invoice was sent\nand paid on time.\n\nFrom: the accounting team"
    )
    assert extract_new_text(body) == body


# --- signatures -----------------------------------------------------------------------------


def test_signatures() -> None:
    assert cut_signature("Hi\n\n-- \nAlice Chen\nAcme Corp") == "Hi"
    assert cut_signature("Hi\n\n--\nAlice") == "Hi"
    assert cut_signature("a fix -- not a signature\n\nbye") == "a fix -- not a signature\n\nbye"
    assert cut_signature("Hello\n\nSent from my iPhone") == "Hello"
    assert cut_signature("Hello\n\nSent from my Verizon Wireless BlackBerry") == "Hello"
    assert cut_signature("Hallo\n\nVon meinem iPhone gesendet") == "Hallo"
    assert cut_signature("Hello\n\nGet Outlook for iOS") == "Hello"
    mine = "Hello\n\nSent from my desk, which is easier than my phone."
    assert cut_signature(mine) == mine


def test_sign_off_keeps_the_name_and_drops_the_contact_block() -> None:
    body = "See you then.\n\nThanks,\nAlex Smith\nDirector of Sales | Acme\n+1 555 123 4567\nwww.acme.example"
    assert cut_signature(body) == "See you then.\n\nThanks,\nAlex Smith"
    plain = "See you then.\n\nThanks,\nAlex"
    assert cut_signature(plain) == plain
    prose = "Thanks,\nAlex\nI also wanted to ask whether the budget covers travel to Berlin next month."
    assert cut_signature(prose) == prose


# --- footers --------------------------------------------------------------------------------


def test_mailing_list_and_notification_footers() -> None:
    mailman = "Question?\n\n_______________________________________________\nfoo mailing list\nfoo@lists.example.org\nhttps://lists.example.org/mailman/listinfo/foo"
    assert cut_footer(mailman).rstrip() == "Question?"
    groups = (
        "Answer.\n\n-- \nYou received this message because you are subscribed to the Google Groups "
        '"dev" group.\nTo unsubscribe from this group and stop receiving emails from it, send an email to x.'
    )
    assert extract_new_text(groups) == "Answer."
    github = "LGTM\n\n—\nYou are receiving this because you commented.\nReply to this email directly, view it on GitHub."
    assert extract_new_text(github) == "LGTM"
    newsletter = "Big news inside.\n\nClick here to unsubscribe: https://example.com/u\nManage preferences"
    assert extract_new_text(newsletter) == "Big news inside."


def test_unsubscribe_in_the_message_itself_is_kept() -> None:
    body = "Hi,\n\nPlease unsubscribe me from the list.\n\nBob"
    assert extract_new_text(body) == body
    mid = "I tried to unsubscribe from their newsletter but it failed.\n\nAny idea?\n\nBob"
    assert extract_new_text(mid) == mid
    settings = "Hi,\n\nCan you manage your notification settings so you stop missing pings?\n\nBob"
    assert extract_new_text(settings) == settings


def test_cut_quotation_keeps_lines_verbatim() -> None:
    body = "Hello \n\n-- \nxx\n\nOn Tue, Apr 3, 2012 at 4:55 PM, x wrote:\n\n> Hello\n"
    assert cut_quotation(body) == "Hello \n\n-- \nxx"


def test_long_lines_and_long_quotes() -> None:
    body = "Thanks\n" + ("> " + "ACGT" * 400 + "\n") * 300 + ("On the " + "x" * 390 + "\n") * 3
    assert extract_new_text(body) == "Thanks\n" + ("On the " + "x" * 390 + "\n") * 2 + "On the " + "x" * 390


# --- the reference corpora (read in place when present; never copied) -----------------------

REPLIES = EVALDATA / "email" / "reply-quotes"

# Expected new text of zapier/email-reply-parser's bodies, written from what its test suite
# asserts about the first fragment / the reply: ("exact", text) or ("has"/"lacks", fragments).
ZAPIER: dict[str, list[tuple[str, str]]] = {
    "correct_sig.txt": [("exact", "this is an email with a correct -- signature.")],
    "email_1_1.txt": [("has", "What is the best way to clear a Riak bucket"), ("lacks", "mailing list")],
    "email_1_2.txt": [("has", "Hi,"), ("has", "You can list the keys for the bucket"), ("has", "individually."),
                      ("lacks", "Abhishek Kona wrote"), ("lacks", "mailing list")],
    "email_1_3.txt": [("has", "Oh thanks.\n\nHaving the function would be great."), ("lacks", "Russell Brown"),
                      ("lacks", "mailing list")],
    "email_1_4.txt": [("exact", "Awesome! I haven't had another problem with it.")],
    "email_1_5.txt": [("has", "One: Here's what I've got."), ("has", "for a while.")],
    "email_1_6.txt": [("has", "I get proper rendering as well."), ("lacks", "Corey Donohoe"), ("lacks", "caching")],
    "email_1_7.txt": [("exact", ":+1:")],
    "email_1_8.txt": [("has", "I will reply under this one"), ("has", "and under this."),
                      ("lacks", "Hey there, this is my signature"), ("lacks", "hi there")],
    "email_2_1.txt": [("exact", "Outlook with a reply")],
    "email_2_2.txt": [("exact", "Outlook with a reply directly above line")],
    "email_2_3.txt": [("exact", "Outlook with a reply above headers using unusual format")],
    "email_BlackBerry.txt": [("exact", "Here is another email")],
    "email_bullets.txt": [("has", "test 2 this should list second"), ("has", "- and another"),
                          ("lacks", "Give us an example"), ("lacks", "Joe Smith")],
    "email_gmail.txt": [("exact", "This is a test for inbox replying to a github message.")],
    "email_headers_no_delimiter.txt": [("exact", "And another reply!")],
    "email_iPhone.txt": [("exact", "Here is another email")],
    "email_multi_word_sent_from_my_mobile_device.txt": [("exact", "Here is another email")],
    "email_one_is_not_on.txt": [("has", "Thank, this is really helpful."), ("has", "when I run..."),
                                ("lacks", "Dave Tapley"), ("lacks", "The good news")],
    "email_partial_quote_header.txt": [("has", "On your remote host you can run:"), ("has", "telnet 127.0.0.1 52698"),
                                       ("has", "This should connect to TextMate"), ("lacks", "George Plymale")],
    "email_sent_from_my_not_signature.txt": [("exact", "Here is another email\n\nSent from my desk, is much easier then my mobile phone.")],
    "email_sig_delimiter_in_middle_of_line.txt": [("has", "And here is a fix -- this is not a signature.\n\nkthxbai")],
    "greedy_on.txt": [("has", "On your remote host you can run:"), ("has", "the tunnel is not working."),
                      ("lacks", "George Plymale"), ("lacks", "Reply to this email directly")],
    "pathological.txt": [("has", "I think you're onto something."), ("has", "get back to a computer."),
                         ("lacks", "John Sullivan"), ("lacks", "ATGGAG")],
}  # fmt: skip


def _plain_body(path: Path) -> str:
    msg = message_from_bytes(path.read_bytes(), policy=policy.default)
    assert isinstance(msg, EmailMessage)
    part = msg.get_body(("plain",))
    assert isinstance(part, EmailMessage)
    return str(part.get_content())


def _rate(name: str, results: dict[str, bool]) -> float:
    passed = sum(results.values())
    failed = sorted(k for k, ok in results.items() if not ok)
    print(f"{name}: {passed}/{len(results)} pass" + (f" (failing: {', '.join(failed)})" if failed else ""))
    return passed / len(results)


@pytest.mark.skipif(not (REPLIES / "talon").is_dir(), reason="reply-quote corpus not available")
def test_talon_replies() -> None:
    expected = json.loads((REPLIES / "talon" / "expected_reply_text.json").read_text(encoding="utf-8"))
    quotes_only: dict[str, bool] = {}
    full: dict[str, bool] = {}
    for name, want in expected["standard_replies"].items():
        body = _plain_body(REPLIES / "talon" / "standard_replies" / name)
        quotes_only[name] = cut_quotation(body).strip() == want  # talon keeps signatures
        full[name] = extract_new_text(body) == "Hello"  # vaultmind also drops them
    html: dict[str, bool] = {}
    for name, want in expected["html_replies"].items():
        text = html_to_text((REPLIES / "talon" / "html_replies" / name).read_text(encoding="utf-8"))
        html[name] = re.sub(r"\s", "", extract_new_text(text)) == re.sub(r"\s", "", want)
    rates = (
        _rate("talon plain, quotation cut", quotes_only),
        _rate("talon plain, new text", full),
        _rate("talon html, new text", html),
    )
    assert min(rates) >= 0.9


@pytest.mark.skipif(
    not (REPLIES / "zapier_email_reply_parser").is_dir(), reason="reply-quote corpus not available"
)
def test_zapier_bodies() -> None:
    results: dict[str, bool] = {}
    for name, checks in ZAPIER.items():
        text = (REPLIES / "zapier_email_reply_parser" / name).read_text(encoding="utf-8")
        new = extract_new_text(text)
        results[name] = all(
            (new == want) if how == "exact" else (want in new) if how == "has" else (want not in new)
            for how, want in checks
        )
    assert _rate("zapier bodies, new text", results) >= 0.9
