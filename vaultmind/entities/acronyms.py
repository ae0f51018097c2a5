"""An acronym the small models read as an organization where the text uses it as a word: a
modifier of a common noun ("the ASCII version", "a MIME compliant reader") or a word of the mail
protocols ("some MIME?", "a MIME-Version misfeature", "in reply to RCPT TO command").

An organization's hit that is an acronym alone (of four letters or more: shorter ones are
dropped before, `extract.clean_ner_span`) is no organization when the text writes it before a
lower-case noun somewhere (`capitals.noun`); one whose first word, or first part before a
hyphen, is a word of the mail protocols (`MAIL_PROTOCOL_WORDS`, a closed list, as the weekdays
are) is none wherever it stands, nor is a name of several words with such a word after its
first, a mail server's or program's name ("Microsoft SMTP Server" in a bounce's table of hops,
`mail_program`). Either keeps its hit when the text also uses the acronym as a
name: with a possessive ("NASA's probe") or before a verb in the past tense or of saying ("NASA
announced", "UNICEF says"). A name the memory knows (an entity note's alias) is still found by
the registry; only the model's guess is dropped.
"""

from __future__ import annotations

import re
from typing import Final

from vaultmind.entities.capitals import noun, said_or_past

MAIL_PROTOCOL_WORDS: Final = frozenset(
    "mime smtp esmtp lmtp imap imap4 pop3 rcpt helo ehlo dkim dmarc uucp mbox".split()
)
"""Words of the mail protocols' own vocabulary, which mails and bounces write in capitals."""

_FIRST_PART = re.compile(r"[^\W_]+")
_WORD_AFTER = re.compile(r"[ \t]+([a-z][\w'’]*)")
_POSSESSIVE = re.compile(r"['’]s(?![\w])")


def acronym_as_word(text: str, surface: str, kind: str) -> bool:
    """Whether an organization's hit `surface` is an acronym the text uses as a word, a
    modifier or a mail protocol's, and never as a name (see the module)."""
    if kind != "org" or (first := _FIRST_PART.match(surface)) is None:
        return False
    if mail_program(surface):  # "Microsoft SMTP Server", "Postfix ESMTP"
        return not any(_as_a_name(text, hit.end()) for hit in re.finditer(re.escape(surface), text))
    acronym = first.group(0)
    if not (acronym.isupper() and acronym[:1].isalpha()):
        return False
    protocol = acronym.lower() in MAIL_PROTOCOL_WORDS
    if not protocol and surface != acronym:
        return False
    uses = [hit.end() for hit in re.finditer(rf"(?<![\w-]){re.escape(acronym)}(?![\w])", text)]
    if any(_as_a_name(text, end) for end in uses):
        return False
    return protocol or any(_modifies(text, end) for end in uses)


def mail_program(surface: str) -> bool:
    """Whether a name of several words has a word of the mail protocols after its first: a mail
    server's or a mail program's name as a mail's transport writes it ("Microsoft SMTP Server",
    "Postfix ESMTP"), no organization's."""
    later = _FIRST_PART.findall(surface)[1:]
    return any(word.isupper() and word.lower() in MAIL_PROTOCOL_WORDS for word in later)


def _modifies(text: str, end: int) -> bool:
    """Whether the acronym ending at `end` stands before a lower-case noun: "ASCII version"."""
    word = _WORD_AFTER.match(text, end)
    return word is not None and noun(word.group(1))


def _as_a_name(text: str, end: int) -> bool:
    """Whether the acronym ending at `end` is used as a name: "NASA's", "NASA announced"."""
    if _POSSESSIVE.match(text, end):
        return True
    word = _WORD_AFTER.match(text, end)
    return word is not None and said_or_past(word.group(1))
