"""What a NER hit's capital letters say in its text: whether they are the name's own, or only
its place's (a heading, a sentence's start, a table cell, a label) or an interface's.

The small models take a capitalised word for a name wherever it stands. Dropped here:

- a one-word hit that the same text also writes in lower case ("# Launch sync" over "the
  Tidepool launch"), unless a person's is written as a name too (`_common_word`,
  `_written_as_name`);
- a one-word hit that opens a heading, a callout's title, a table cell or a label ("Owner: Marco
  Ruiz"), unless the text capitalises it inside a sentence too (`_capitalised_by_place`);
- several words that make a whole heading, cell, line or label, each of which the text writes
  in lower case too ("# TODO: Understand Network Diagrams", `_label_phrase`);
- an organization's one-word hit between a determiner and a lower-case noun ("the Pro tier", "a
  paid Pro plan") or opening a table cell before one ("| Press embargo lifts |"), unless the
  text capitalises it inside a sentence elsewhere (`_qualifies_a_noun`; a verb in the past tense
  is no noun: "the Guardian reported");
- the label of a button, a menu or a setting in running text ("choose Send Again from the
  Report ribbon", "via the Inbox Rules feature", `_interface_label`);
- a hit inside a heading over a view the text embeds ("## Albums" over `![[Albums.base]]`,
  "## Last seen" over `![[Movies.base#Last seen]]`, `_titles_a_file`);
- a one-word person's hit that opens a numbered step and takes an object, a number or a
  determiner, or after a preposition a number or an indefinite thing ("12. Bake 10 minutes
  more", "6. Bake on a cookie sheet", "1. [Download this vault](…)"; "1. Dana on the venue" is
  an owner, `_opens_a_step`);
- an organization, a product or a work the sentence says is a date ("Target is still Tuesday 9
  April"; "Acme is Tuesday's sponsor" is none, `_names_a_date`);
- a one-word hit that opens a mail's subject before a lower-case noun ("Subject: Messy part"), as
  one opening a heading (`_capitalised_by_place`);
- a person or an organization that makes a heading with a capitalised word for a document's part
  after it ("# Movie Genre Template", `_names_a_document`);
- a work's hit that opens a quoted sentence ('"Hello Allan! Did you …"') or runs bare across a
  comma ("Like Basic, Digest access …", `_quotes_a_sentence`);
- a one-word hit that opens a wikilink to a note titled by its claim ("[[Calmness is a
  superpower]]"; a person's, only a word for an act or a quality: "[[Writing is telepathy]]",
  `_opens_a_claim`);
- an organization's hit, or a person's that is no full name, inside a heading that is its
  note's title ("# 68 Bits of Unsolicited Advice", "# Brown butter nectarine tart", "# Kyoto",
  `in_note_title`): a document's title names a work at most, and every leaf of a long note
  repeats it as its heading, where the leaf alone cannot tell the title's capitals from a
  name's. A person's page keeps the name it is titled with ("# Steph Ango").

A name the memory knows (an author, an entity note) is still found in these places by the
registry; only the model's guess is dropped.
"""

from __future__ import annotations

import re

from vaultmind.entities.language import FUNCTION_WORDS
from vaultmind.entities.shapes import DOCUMENT_WORDS, MONTHS, WEEKDAYS
from vaultmind.markdown.blocks import atx_heading


def capital_says_nothing(text: str, surface: str, start: int, end: int, kind: str) -> bool:
    """Whether the hit `surface` at `start`–`end` of `text`, read as `kind`, is capitalised by
    its place or by an interface rather than as a name (see the module)."""
    if _common_word(text, surface) and not (kind == "person" and _written_as_name(text, surface, start)):
        return True
    return (
        _weak_guess(text, surface, start, end, kind)
        or _label_phrase(text, surface, start, end)
        or _interface_label(text, surface)
        or _titles_a_file(text, start, end)
        or _opens_a_step(text, surface, start, end, kind)
        or _names_a_date(text, end, kind)
        or _opens_a_claim(text, surface, start, end, kind)
        or _names_a_document(text, start, end, kind)
        or _quotes_a_sentence(text, surface, start, end, kind)
    )


def _common_word(text: str, surface: str) -> bool:
    """A one-word hit that the same text also writes in lower case as a word of prose ("# Launch
    sync" above "the Tidepool launch"): a word capitalised by its place (a heading, a sentence's
    start), which the small models take for a name. A name written in lower case only in an
    address, a host's name or a file name is no common word ("Hetzner <info@hetzner.example>
    wrote:"); a word before a slash is ("audio/basic"). So is an acronym the text also writes in lower case, in an
    address, a URL or a file name ("SMTP" beside "smtp.example.com", "HTTP" beside "http://…",
    "JSON" beside "data.json"): a protocol's or a format's, not an organization's. A name the
    memory knows (an author, an entity note) is still found there by the registry; only the
    model's guess is dropped."""
    acronym = surface.isalpha() and surface.isupper()
    if " " in surface or not surface[:1].isupper() or not (surface[1:].islower() or acronym):
        return False
    if acronym:  # in a file or host name between hyphens too: "draft-ietf-http-auth.txt"
        return re.search(rf"(?<![^\W_]){re.escape(surface.lower())}(?![^\W_])", text) is not None
    return re.search(rf"(?<![\w.@/-]){re.escape(surface.lower())}(?![\w@-]|\.\w)", text) is not None


# a word after which a capitalised word is someone: "called Bill", "with Bill", "told Bill"
_TO_SOMEONE = re.compile(
    r"(?:^|\W)(?:call|called|calling|phoned|rang|texted|emailed|messaged|met|meet|meeting|asked|ask|told|tell|"
    r"thanked|thank|invited|paid|pay|with|to|from|by|for|and)\s+$",
    re.I,
)
_MID_SENTENCE = r"(?<=[a-z,;:] )"  # a capital after a lower-case word: the word's own, not its place's


def _written_as_name(text: str, surface: str, start: int) -> bool:
    """Whether the text writes a one-word person the model found as a name, though it also
    writes the word in lower case ("Called Bill about the water bill"): right after a word that
    takes a person ("called", "with", "to"), or capitalised inside a sentence twice. A word
    capitalised only by its place ("# Launch sync", "Will said he will come") stays a word."""
    if _TO_SOMEONE.search(text[max(0, start - 12) : start]) is not None:
        return True
    return len(re.findall(rf"{_MID_SENTENCE}{re.escape(surface)}(?![\w-])", text)) >= 2


# where a line's own words begin: after quote, list and task markers ("> - [ ] ", "2. ")
_LINE_HEAD = re.compile(r"[ \t]*(?:>[ \t]*)*(?:(?:[-*+]|\d{1,3}[.)])[ \t]+)?(?:\[[ xX]\][ \t]+)?")
# the title of a heading ("## ") or of a callout ("> [!warning] ")
_TITLE_HEAD = re.compile(r"[ \t]*(?:>[ \t]*)*(?:#{1,6}|\[![\w-]+\][+-]?)[ \t]+")
# the start of a mail's subject, a reply's or a forward's marks in it: "Subject: Re: "
_SUBJECT_HEAD = re.compile(r"[ \t]*(?:>[ \t]*)*Subject:[ \t]+(?:(?:Re|Fwd?|AW|WG|SV):[ \t]*)*", re.I)
_CELL_HEAD = re.compile(r"[ \t]*(?:>[ \t]*)*\|(?:[^|\n]*\|)*[ \t]*")  # the start of a table cell
_FIRST_CELL = re.compile(r"[ \t]*(?:>[ \t]*)*\|[ \t]*")  # … of a row's first cell
_TABLE_RULE = re.compile(r"[ \t]*(?:>[ \t]*)*\|?[ \t]*:?-{3,}")  # the line under a table's header row
# a label: the word, up to three lower-case words, a colon, then a value that is no lower-case
# word ("Owner: Marco Ruiz", "Hire fee: €4,200"); "Marco: launching without …" is someone speaking
_LABEL = re.compile(r"((?:[ \t]+[a-z][\w'’-]*){0,3})[ \t]*(?:\([^()\n]*\))?:[ \t]+(?=[^\sa-z])")
# a heading that goes on with a word that joins the first to lower-case ones: "Tools and
# subscriptions", "Notes on pricing"; a name leads "Noah swimming lessons", "Noah at the pool"
_JOINED_WORDS = re.compile(r"[ \t]+(?:and|or|&|of|for|on|about|vs\.?|versus)[ \t]+[a-z]")
# kinds a table's body names in cells of their own: "| 2 April | Bob |", "| Berlin |"
_IN_TABLES = ("person", "place")
# a label that says who speaks, not what a line is about: "Dana said: we're booked"
_SAYING = frozenset(
    "said says wrote writes asked asks replied replies added adds answered answers told tells mentions notes "
    "thinks thought feels felt suggests proposes reckons explains confirms agrees comments reports argues".split()
)


# a determiner, maybe with an adjective, before a word that qualifies the noun after it: "the Pro
# tier", "a paid Pro plan", "our Press kit"
_DETERMINER_BEFORE = re.compile(
    r"(?:^|[^\w-])(?i:the|a|an|our|their|its|his|her|my|your|this|that|these|those)"
    r"(?:[ \t]+[a-z][\w'’-]*)?[ \t]+$"
)
# the lower-case word after it, which must be a noun's, not a function word's: "the Pro tier", not
# "joined the Guardian as an editor", "emailed the Times about it"
_WORD_AFTER = re.compile(r"[ \t]+([a-z][\w'’]*)")
_NOT_A_NOUN = FUNCTION_WORDS | frozenset(
    "a an as at in into onto of off over under upon after before since until till while because though "
    "although unless whether nor yet also too very really still even only again already and or is am be "
    "do does did done may might must shall won't can't isn't wasn't didn't doesn't don't me us it's "
    "itself himself herself themselves ourselves yourself last next every each both either neither "
    "some any no now today yesterday tomorrow soon later once twice instead anyway like via per".split()
) | _SAYING


def _weak_guess(text: str, surface: str, start: int, end: int, kind: str) -> bool:
    """A one-word hit where its capital says nothing (`_capitalised_by_place`, `_qualifies_a_noun`),
    which the text never capitalises inside a sentence either."""
    return (
        " " not in surface
        and _capital_first_only(surface)
        and (_capitalised_by_place(text, start, end, kind) or _qualifies_a_noun(text, start, end, kind))
        and not _named_inside(text, surface, kind)
    )


def _qualifies_a_noun(text: str, start: int, end: int, kind: str) -> bool:
    """Whether an organization's one-word hit stands before a lower-case noun after a determiner
    ("the Pro tier", "a paid Pro plan") or at the start of a table cell ("| Press embargo lifts
    |"): a word naming a kind of thing, a tier's or a plan's name, as often as the
    organization's own ("the Google team"), so weak evidence of one. A function word, a verb of
    saying or a verb in the past tense after it is no noun ("joined the Guardian as an editor",
    "the Times reports", "the Guardian reported"): the organization keeps its hit."""
    if kind != "org" or (word := _WORD_AFTER.match(text, end)) is None or not noun(word.group(1)):
        return False
    line_start = text.rfind("\n", 0, start) + 1
    return (
        _DETERMINER_BEFORE.search(text, max(0, start - 40), start) is not None
        or _CELL_HEAD.fullmatch(text, line_start, start) is not None
    )


# a verb in the past tense: "reported", "announced"; not "need", "speed", "bed"
_PAST_TENSE = re.compile(r"[a-z]{2,}[^e\W]ed")


def noun(word: str) -> bool:
    """Whether a lower-case word after a name may be a noun it qualifies: no function word, no
    verb of saying, no verb in the past tense."""
    return word not in _NOT_A_NOUN and not said_or_past(word)


def said_or_past(word: str) -> bool:
    """Whether a lower-case word after a name is a verb of saying or in the past tense, which a
    name takes as its subject: "the Times reports", "NASA announced"."""
    return word in _SAYING or _PAST_TENSE.fullmatch(word) is not None


# before a hit that is a whole title, cell or line: its marker, a label of its own ("# TODO: "), bold
_LABEL_BEFORE = re.compile(r"(?:[^\W\d_][\w-]*:[ \t]+)?[*_]*$")
# after it: the line's or the cell's end, or the colon of a label ("Sender Address: …")
_WHOLE_AFTER = re.compile(r"[*_]*[ \t]*(?:[:|].*)?")


def _label_phrase(text: str, surface: str, start: int, end: int) -> bool:
    """A hit of several words that is the whole title of a heading or a callout, a table cell, a
    line or a label before its colon ("# TODO: Understand Network Diagrams", "| Inbox Rules |",
    "Sender Address: postmaster@…"), each word of which the text also writes in lower case
    (`_common_word`): words capitalised by their place, as a title or a button is written, not
    a name. A name's words are not all common words ("# Helen Okafor", "## Hetzner Cloud")."""
    words = surface.split()
    if len(words) < 2 or not all(_common_word(text, word) and _in_prose(text, word) for word in words):
        return False
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    head = _LABEL_BEFORE.sub("", text[line_start:start], count=1)
    return _WHOLE_AFTER.fullmatch(text, end, line_end) is not None and any(
        place.fullmatch(head) for place in (_TITLE_HEAD, _CELL_HEAD, _LINE_HEAD)
    )


# the first word of a command's label: "Send Again", "Sign In", "Add Account"
_COMMAND_VERBS = frozenset(
    "send save open close sign log add delete remove edit share reply forward download upload install "
    "update cancel submit search show hide create undo retry".split()
)
# a piece of an interface named right after its label: "the Inbox Rules feature"
_INTERFACE_NOUNS = frozenset(
    "feature button tab menu ribbon option options setting settings dialog pane panel toolbar screen "
    "field icon section suggestion window".split()
)
_NEXT_WORD = re.compile(r"[ \t]+([a-z]+)\b")


def _interface_label(text: str, surface: str) -> bool:
    """A hit of several words that is the label of a button, a menu or a setting in running text,
    capitalised as the interface writes it ("choose Send Again from the Report ribbon", "via the
    Inbox Rules feature"): led by a command's verb (`_COMMAND_VERBS`) whose other words the text
    writes in lower case, or followed, here or anywhere else in the text, by a piece of interface
    (`_INTERFACE_NOUNS`), with a word of it the text writes in lower case ("the Email Admins
    section" makes the line "More Info for Email Admins" a label too). Names keep a word of
    their own: "donated to Save the Children", "the Hetzner Cloud console"."""
    words = surface.split()
    if len(words) < 2 or not all(_capital_first_only(word) for word in words):
        return False
    common = [_common_word(text, word) and _in_prose(text, word) for word in words]
    if words[0].lower() in _COMMAND_VERBS and all(common[1:]):
        return True
    if not any(common):
        return False
    for written in re.finditer(rf"(?<![\w-]){re.escape(surface)}(?![\w-])", text):
        after = _NEXT_WORD.match(text, written.end())
        if after is not None and after.group(1) in _INTERFACE_NOUNS:
            return True
    return False


# a file that is a view of the vault's notes (Obsidian's Bases and canvases), not a photo or a document
_VIEW_FILE = r"\.(?:base|canvas)(?![\w-])"


def _titles_a_file(text: str, start: int, end: int) -> bool:
    """A hit inside a heading whose whole title is the name of a view the text embeds or links
    (a `.base` or a `.canvas` file), or of the part of one it shows (`![[Movies.base#Last
    seen]]`): the heading over it ("## Albums" over `![[Albums.base#Artist]]`, "# Podcast
    episodes" over `![[Podcast episodes.base]]`, "## Last seen"), not a name. A photo under its
    person's name is no view: "# Dana" over `![[Dana.jpg]]` stays."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    head = _TITLE_HEAD.match(text, line_start)
    if head is None or head.end() > start:
        return False
    title = text[head.end() : len(text) if line_end < 0 else line_end].strip(" \t*_")
    named = re.escape(title)
    return re.search(rf"(?<![\w-]){named}{_VIEW_FILE}|{_VIEW_FILE}#{named}(?=[\]|])", text) is not None


# the start of a numbered list's item, and of a link's text there: "12. ", "1. ["
_STEP_HEAD = re.compile(r"[ \t]*(?:>[ \t]*)*\d{1,3}[.)][ \t]+\[?")
# what a verb takes and a name is not followed by: a number or a determiner ("Bake 10 minutes",
# "Download this vault"), or after a preposition of place or time a number or an indefinite thing
# ("Bake on a cookie sheet", "Chill for 2 hours"); a person is put on a known thing, a task ("Dana
# on the venue", "Marco for the press kit")
_OBJECT_AFTER = re.compile(
    r"[ \t]+(?:\d|(?:the|a|an|this|that|these|those|it|them|your|my|our|all|each|every|some)(?![\w'’-])"
    r"|(?:on|in|at|for|until|into|onto|over|under)[ \t]+(?:\d|(?:a|an)(?![\w'’-])))"
)


def _opens_a_step(text: str, surface: str, start: int, end: int, kind: str) -> bool:
    """A one-word person's hit that opens an item of a numbered list (a step of a recipe or a
    how-to) and is followed by a number or a determiner, or by a preposition and a number or an
    indefinite article (`_OBJECT_AFTER`: "12. Bake 10 minutes more", "6. Bake on a cookie sheet",
    "1. [Download this vault](…)"): a step's verb at its capital, not a name. "1. Dana books the
    venue", "2. Marco to send the deck" and an owner put on a task ("1. Dana on the venue", "2.
    Marco for the press kit") stay someone's."""
    if kind != "person" or " " in surface:
        return False
    line_start = text.rfind("\n", 0, start) + 1
    return _STEP_HEAD.fullmatch(text, line_start, start) is not None and _OBJECT_AFTER.match(text, end) is not None


# a copula and a date after a hit: "is still Tuesday 9 April", "was 3 May", "will be Fri 5 July"


def _names(names: frozenset[str]) -> str:
    """A pattern of `names` (`shapes.WEEKDAYS`, `shapes.MONTHS`): a whole name in any case
    ("Tuesday", "TUESDAY"), an abbreviation capitalised, maybe with a dot ("Tue", "Sept.")."""
    whole = sorted((n for n in names if not any(o != n and o.startswith(n) for o in names)), key=len, reverse=True)
    short = sorted((n.capitalize() for n in names if n not in whole), key=len, reverse=True)
    return rf"(?:(?i:{'|'.join(whole)})|(?:{'|'.join(short)})\.?)"


_MONTH = _names(MONTHS)
_WEEKDAY = _names(WEEKDAYS)
_IS_A_DATE = re.compile(
    r"[ \t]+(?:is|was|will[ \t]+be)(?:[ \t]+(?:still|now|again|also|probably|then))?[ \t]+(?:on[ \t]+)?"
    rf"(?:{_WEEKDAY}|\d{{1,2}}(?:st|nd|rd|th)?[ \t]+{_MONTH}|{_MONTH}[ \t]+\d{{1,2}})(?![\w'’-])"
)
# the kinds of names that are never a date; a person may be ("Dana is Tuesday" in a rota), a
# place ("Berlin is 3 May" on a trip), an event ("Easter is 20 April")
_NO_DATE_KINDS = ("org", "product", "work")


def _names_a_date(text: str, end: int, kind: str) -> bool:
    """A hit the text says is a date ("Target is still Tuesday 9 April", "Kickoff was 3 May"): a
    word for a moment (a target, a deadline, a release) at its sentence's capital, not the name
    of an organization, a product or a work (`_NO_DATE_KINDS`)."""
    return kind in _NO_DATE_KINDS and _IS_A_DATE.match(text, end) is not None


# the rest of a wikilink's target that makes it a sentence: a verb of being, having or being able,
# then lower-case words to the link's end ("[[Calmness is a superpower]]", "[[Writing is telepathy]]")
_CLAIM_REST = re.compile(
    r"[ \t]+(?:is|are|was|were|has|have|had|can|cannot|will|should|must)(?:[ \t]+[a-z][\w'’,-]*)+[ \t]*(?:[|#]|\]\])"
)
_LINK_PATH = re.compile(r"[^\[\]|#\n]*/")  # the folders before a link's note name: "[[Ideas/Calmness …"
# the ending of a word for an act or a quality, which a claim is about: "Writing", "Calmness"
_ABSTRACT_ENDING = re.compile(r"\w{2,}(?:ing|ness|ity|ism|tion|sion|ment|ship|hood|dom)")


def _opens_a_claim(text: str, surface: str, start: int, end: int, kind: str) -> bool:
    """A one-word hit that opens a wikilink to a note titled by its claim, a sentence ("- [[Calmness
    is a superpower]]", "[[Notes/Writing is telepathy|…]]"): the title's first word, capitalised
    by its place, not a name. A person's hit is that only when it ends as a word for an act or a
    quality does (`_ABSTRACT_ENDING`: "Writing"): a claim is about someone too ("[[Dana has a new
    job]]"). A link to a name stays one: "[[Dana]]", "[[Dana Whitfield]]", "[[Berlin trip]]"."""
    opened = text.rfind("[[", max(0, start - 200), start)
    if " " in surface or opened < 0 or (kind == "person" and _ABSTRACT_ENDING.fullmatch(surface) is None):
        return False
    folders = text[opened + 2 : start]
    return (not folders or _LINK_PATH.fullmatch(folders) is not None) and _CLAIM_REST.match(text, end) is not None


_TITLE_KINDS = ("person", "org")
# the rest of a heading after a name that makes it a document's title: "# Movie Genre Template"
_DOCUMENT_AFTER = re.compile(r"[ \t]+([A-Z][a-z]+)[ \t*_]*$", re.MULTILINE)


def _names_a_document(text: str, start: int, end: int, kind: str) -> bool:
    """A person's or an organization's hit that makes a heading's title with a capitalised word
    for a part of a document after it (`DOCUMENT_WORDS`: "# Movie Genre Template", "## Weekly
    Review Notes"): the name of a document, of a template, not of someone. "# Steph Ango" and
    "## Dana's notes" stay names."""
    if kind not in _TITLE_KINDS:
        return False
    line_start = text.rfind("\n", 0, start) + 1
    after = _DOCUMENT_AFTER.match(text, end)
    return (
        after is not None
        and after.group(1).lower() in DOCUMENT_WORDS
        and _TITLE_HEAD.fullmatch(text, line_start, start) is not None
    )


# a sentence that goes on after a hit inside a quotation: "Hello Allan! Did you …"
_SENTENCE_ON = re.compile(r"[!?.][ \t]+[^\W\d_]")
_QUOTE_MARKS = frozenset("\"“”'‘’*_")


def _quotes_a_sentence(text: str, surface: str, start: int, end: int, kind: str) -> bool:
    """A work's hit that opens a quotation which goes on as a sentence after it ('"Hello Allan! Did
    you ask …"'), or that runs across a comma written bare, neither quoted nor emphasised ("Like
    Basic, Digest access authentication verifies …"): a sentence's words, not a title. A quoted
    title stays one ('"Who Framed Roger Rabbit?"', '*Eat, Pray, Love*')."""
    if kind != "work":
        return False
    before = text[start - 1 : start]
    if before in ('"', "“"):
        return _SENTENCE_ON.match(text, end) is not None
    return ", " in surface and before not in _QUOTE_MARKS and text[end : end + 1] not in _QUOTE_MARKS


def in_note_title(text: str, start: int, end: int, kind: str, title: str) -> bool:
    """Whether an organization's hit at `start`–`end`, or a person's that is no full name
    (`_full_name`), stands in a heading whose text is `title`, the title of the note the text
    is a leaf of (see the module). The title is the note's, not the leaf's: a later leaf of
    "# 68 Bits of Unsolicited Advice" repeats the heading without the prose that writes "bits
    of unsolicited advice" in lower case."""
    if kind not in _TITLE_KINDS or not title or (kind == "person" and _full_name(text[start:end])):
        return False
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    heading = atx_heading(text[line_start : len(text) if line_end < 0 else line_end])
    return heading is not None and " ".join(heading[1].split()) == " ".join(title.split())


def _full_name(surface: str) -> bool:
    """Two words or more, each capitalised, none a document's part: "Steph Ango", "Paul
    Chambers"; not "Brown", "Genre Template", "Bits of Advice"."""
    words = surface.split()
    return len(words) > 1 and all(w[0].isupper() and w.lower() not in DOCUMENT_WORDS for w in words)


def _in_prose(text: str, word: str) -> bool:
    """Whether the text writes a word in lower case as a word of prose, not only in an address or
    a file name ("dan.le@example.com" does not make "Dan Le" common words); an acronym is a
    protocol's wherever it is written in lower case ("DNS" beside "no-dns", `_common_word`)."""
    if word.isupper():
        return True
    return re.search(rf"(?<![\w.@/-]){re.escape(word.lower())}(?![\w@/-]|\.\w)", text) is not None


def _capital_first_only(word: str) -> bool:
    """A word written as any word is at a sentence's start ("Infrastructure", "Content-Type"):
    the capital of "TestFlight" or "DKIM" inside the word is the name's own, wherever it stands."""
    return all(not any(ch.isupper() for ch in part[1:]) for part in word.split("-"))


def _capitalised_by_place(text: str, start: int, end: int, kind: str) -> bool:
    """Whether a word stands where any word is capitalised, which makes the model's guess weak
    evidence: the first word of a heading, a callout's title or a table cell ("## Tools and
    subscriptions", "| Infrastructure | €2,100 |"), and the first word of a label ("Owner:
    Marco Ruiz", "Hire fee: €4,200"). A person is named alone in a heading, a table's body or
    before a colon all the time ("## Dana", "## Dana and Marco", "| 2 April | Beta | Bob |",
    "Bob: beta by Friday"), so a person's hit is weak only in a heading that goes on in lower
    case, the first cell of a table's header row ("| Line | Amount |"; the columns after it are
    people's in a rota, "| Week | Anna | Ben |") and a label of several words that is no verb
    of saying or thinking ("Dana said:", "Kofi mentioned:", "Amara thinks:" are someone
    speaking); a place too is named in a table's body ("| Berlin | sales |"), and an
    organization in a body cell after the first ("| Hosting | Hetzner | €40 |": the first
    cell names the line, "| Infrastructure | €2,100 |"). A heading "goes on in lower case"
    when a joining word leads lower-case ones ("Tools and subscriptions", "Notes on pricing"),
    not when a name leads them ("Noah swimming lessons"). The first word of a sentence is no
    weak place: "Target opens a store" cannot be told from "Google is hiring" without a
    dictionary (one the sentence says is a date can: `_names_a_date`)."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    head, rest = text[line_start:start], text[end:line_end]
    person = kind == "person"
    if _SUBJECT_HEAD.fullmatch(head):  # "Subject: Messy part"
        return (word := _WORD_AFTER.match(text, end)) is not None and noun(word.group(1))
    if _TITLE_HEAD.fullmatch(head):
        return not person or _JOINED_WORDS.match(rest) is not None
    if _CELL_HEAD.fullmatch(head):
        header = _TABLE_RULE.match(text, line_end + 1) is not None
        first = _FIRST_CELL.fullmatch(head) is not None
        if kind == "org":
            return header or first
        return kind not in _IN_TABLES or (header and (not person or first))
    if _LINE_HEAD.fullmatch(head):
        label = _LABEL.match(rest)
        return label is not None and (not person or _labels_a_thing(label.group(1)))
    return False


def _labels_a_thing(words: str) -> bool:
    """Whether the lower-case words between a person's hit and a colon make it a label of a
    thing ("Hire fee:"), not someone speaking ("Dana said:", "Bob wrote:")."""
    said = words.split()
    return bool(said) and said[0] not in _SAYING and not said[0].endswith("ed")  # "Kofi mentioned:"


def _named_inside(text: str, surface: str, kind: str) -> bool:
    """Whether the text also capitalises the word inside a sentence (after a lower-case word or
    a comma): there the capital is the word's own ("than cut Pro"), so it names something; an
    organization's between a determiner and a noun ("the Pro tier", `_qualifies_a_noun`) does not,
    nor one opening a mail's subject after its colon ("Subject: Messy part")."""
    return any(
        not _qualifies_a_noun(text, hit.start(), hit.end(), kind)
        and _SUBJECT_HEAD.fullmatch(text, text.rfind("\n", 0, hit.start()) + 1, hit.start()) is None
        for hit in re.finditer(rf"{_MID_SENTENCE}{re.escape(surface)}(?![\w-])", text)
    )
