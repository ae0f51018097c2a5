"""What kind of answer a question asks for, and whether a leaf's text holds one.

A question that starts "When…" (or "Which week / day / year…", "What date…") is answered by a
message that names a time ("yesterday", "last Friday", "9 April", "19:00"); "Where…" (or "Which
cities…", "What country…", "What state…", "Which locations…") by one that names a place (a
capitalised name after a preposition of place, or two capitalised words inside a sentence: "I
booked Golden Lantern"); "Who…" by one that names a person; "How much / how many…" by one that
holds a number; "What book / movie / series…" (a named work or band, team, brand…) by one that
quotes a title or names something with a capital; "What is Helen's email address?" by one that
writes an address (`helen@fernhill.example`); "What is on my to-do list?" (or "What do I need to
do before the launch?") by a note's open task (`- [ ] …`) or tasks a message writes out ("Your
tasks for Monday: call the school, …"). A name after a preposition of place ("from Taiwan") is
no answer to "Who…", unless the memory knows it as a person's ("from Dana"); a message whose
author takes something on ("I'll get the cake") is, its author being the answer. "What time…"
asks for a time of day ("19:00"), "how much is / does…" for a sum of money said with the
question's words, "how long does…" for a length of time ("7 to 9 working days", not "version
1.1") and "how many people…" for a count of people ("table for 9", not "£60 a head")
(`answer_test`).
Among messages that match the question equally well, the one holding that kind of answer is
the likelier evidence. `walk` uses this as one small signal (`answer`) over its strongest
candidates.

A message that only asks ("What pet do you have?") holds no answer at all, whatever the
question: `asking.py` tells such texts, and those that end asking, from statements.

"Why…?" is answered by a text that gives a reason ("because", "due to", "Why: …", "so the
review fits", "since I'm lactose intolerant", "I'd rather move the date than cut Pro"), not
by one that only says what was done in the question's words. A question of an agreement ("what
did we agree with Bob…?", "do Bob and Alice agree…?") is answered by a text that says one was
made ("Deal: …", "Agreed with Bob", "sounds good", "approved"). "Did the budget change…?"
by a sentence that says a change, or none, of what it asks about (`change.py`).

English only, by design small: a few patterns over the question's first words and the leaf's
text, no model. A question of another kind (what, how…) gets no answer signal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from functools import lru_cache
from typing import Literal

from vaultmind.calendar_names import MONTH_ABBREVIATIONS, MONTHS, WEEKDAYS, alternation
from vaultmind.index.lexical import terms
from vaultmind.retrieval.change import change_subject, tells_change

# Words that ask rather than name what is asked about ("how much…", "what happened…", "tell me
# about…"): they ground no question (evidence), one the memory never says is not news, and a
# question of only these and a time window asks about the window alone (walk).
ASKING_WORDS = frozenset(
    terms(
        """how happen happened happening talk talked discuss discussed tell told say said mention
        mentioned know knew think remember summarize summarise summary recap much many everything
        anything something nothing thing things stuff like up new news latest recent recently update
        updates going get got go went do doing did done make made lot lots please show find give list
        explain describe info information detail details"""
    )
)

AnswerKind = Literal["time", "place", "person", "quantity", "title", "address", "task", "reason", "agreement", "change"]

_MONTHS = alternation((*MONTHS, *MONTH_ABBREVIATIONS))
_DAYS = alternation(WEEKDAYS)
_PERIODS = "week|weekend|month|year|morning|afternoon|evening|night|summer|winter|spring|autumn|fall"

# what is still to be done: "what's pending", "what is outstanding", "what's still open", "what is
# still to do", "what remains to be done"
_UNDONE = (
    r"(?:\s+is|['’]s|\s+are)\s+(?:still\s+)?(?:pending|outstanding)|(?:\s+is|['’]s|\s+are)\s+still\s+(?:open|to\s+(?:be\s+)?do(?:ne)?)"
    r"|\s+remains\s+to\s+(?:be\s+)?do(?:ne)?"
)

_QUESTION = (
    # "what is on my to-do list?", "what are my open tasks?": an open task of a note (`- [ ] …`)
    ("task", re.compile(r"\b(?:(?:my|our|open|pending|outstanding|unfinished)\s+(?:tasks?|to-?dos?|action\s+items?)|to-?dos?(?:\s+list)?)\b", re.I)),
    # "what do I need to do before the launch?", "what else should we do?", "what's left to do?",
    # "what's pending for the launch?", "what is still open for Dad's birthday?" (not "what is open
    # on Sunday?", "what's left of the budget?")
    ("task", re.compile(r"^\W*what(?:\s+else)?(?:\s+(?:do|should|must|shall)\s+(?:I|we)\s+(?:still\s+)?(?:(?:need|have)\s+to\s+)?do"
                        rf"|(?:\s+is|['’]s|\s+are)\s+(?:still\s+)?left\s+to\s+do|{_UNDONE})\b", re.I)),
    # "which tasks are due this week?", "what is due tomorrow?", "what's overdue?": tasks by their due dates
    ("task", re.compile(r"^\W*(?:what|which)(?:\s+(?:open\s+)?(?:tasks?|to-?dos?|action\s+items?)\s+(?:are|is)\s+(?:still\s+)?(?:due|open|left)\b"
                        r"|(?:\s+is|['’]s|\s+are)\s+(?:still\s+)?(?:over)?due(?=\s*(?:$|[?.!]|(?:this|next|today|tomorrow|tonight|by|on|in|before|soon|now|first)\b)))", re.I)),
    # "what is Helen's email address?", "email address of Dana": a leaf that writes one
    ("address", re.compile(r"^\W*(?:(?:what|which)\b[^?]*?\b)?e-?mail\s+address(?:es)?\b", re.I)),
    ("time", re.compile(r"^\W*(?:when|since when|what (?:time|date|day|week|weekend|year|month)|which (?:day|date|week|weekend|year|month)|"
                        r"how long ago|in (?:what|which) (?:year|month))\b", re.I)),
    ("place", re.compile(r"^\W*(?:where|(?:in |to )?(?:what|which)(?: [\w-]+)? (?:city|cities|country|countries|"
                         r"town|towns|place|places|island|islands|state|states|region|regions|location|locations))\b", re.I)),
    ("person", re.compile(r"^\W*(?:who|whom|whose)\b", re.I)),
    # "why did we move the launch?", "what was the reason…": a text that gives a reason
    ("reason", re.compile(r"^\W*(?:why|what (?:was|is|were|are) the reasons?|for what reason)\b", re.I)),
    ("quantity", re.compile(r"^\W*(?:how (?:much|many|often|long|old|far)|what (?:price|amount))\b", re.I)),
    ("title", re.compile(r"^\W*(?:what|which)\b(?:\s+[\w'’-]+){0,4}?\s+(?:book|movie|film|show|series|song|album|band|game|novel|podcast|team|artist|author|brand|restaurant)s?\b", re.I)),
    # "what did we agree with Bob…?", "do Bob and Alice agree…?": a text that says one was made
    ("agreement", re.compile(r"\bagree(?:s|d|ments?)?\b", re.I)),
)
OPEN_TASK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[ \]\s.*", re.M)  # a Markdown task not done yet (the line)
# tasks written out in a message: "Your tasks for Monday: call the school, …", "To-do: …"
_TASKS_LISTED = re.compile(r"\b(?:tasks?|to-?dos?|action\s+items?)\b[^.:;!?\n]{0,40}:\s*\w", re.I)
# a reason given: "Why: the migration…", "because…", "so the review fits", "rather move the date than…"
_REASON = re.compile(
    r"\bwhy\s*:|\b(?:because|cause|due to|thanks to|so that|in order to|the reason|reasons?|otherwise|that['’]s why|which is why)\b"
    r"|\bso (?:we|i|the|it|they|that|he|she|you|our|my)\b|\bsince (?:i['’]m|it['’]s|we['’]re|they['’]re|he['’]s|she['’]s)"
    r"|\brather\b[^.!?]{0,60}\bthan\b",
    re.I,
)
# an agreement said: "Deal: …" (opening a sentence: not "no big deal, …"), "Agreed with Bob",
# "it's a deal", "sounds good", "approved"
_AGREEMENT = re.compile(
    r"\b(?:agreed|(?:we|i) agree|(?:it|that)['’]s a deal|approved|sounds good|works for me|fine (?:by|with) me)\b"
    r"|(?:^|[.!?]\s+)\W*deal\s*[:!.,]",
    re.I | re.M,
)
_EMAIL_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_QUOTED = re.compile(r"[\"“][^\"”]{2,}[\"”]")

_TIME_WORDS = f"yesterday|today|tonight|tomorrow|ago|recently|lately|last|next|{_DAYS}|{_MONTHS}"
_TIME_NUMBERS = r"(?:19|20)\d\d|\d{1,2}:\d\d|\d{1,2}(?:st|nd|rd|th)|\d{1,2} ?(?:am|pm)"
_TIME = re.compile(  # matched against lower-cased text: twice as fast as re.I on long texts
    rf"\b(?:{_TIME_WORDS}|this (?:{_PERIODS})|(?:{_PERIODS})s?|{_TIME_NUMBERS})\b"
)
# `_TIME` on an ASCII text, in cheaper parts: a time written in digits (`_time_in_digits`, when
# the text holds a digit), or a word of `_TIME_WORD_SET` (a period's "this" adds nothing: the
# period alone is a match). Same answers (tested); on a message of 320 characters, 50 → 11 µs.
_TIME_WORD_SET = frozenset([*_TIME_WORDS.split("|"), *_PERIODS.split("|"), *(f"{p}s" for p in _PERIODS.split("|"))])
_TIME_NUMBER_AT = re.compile(rf"(?:{_TIME_NUMBERS})\b")  # tried where a run of digits starts a word
_DIGITS = re.compile(r"\d+")
_ASCII_NON_WORD = str.maketrans({chr(c): " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")})
# A capitalised word that does not open a sentence or a line ("ask Marco"); a preposition of
# place before a capitalised word ("in Leeds", "at Harbor Hall").
_PROPER = re.compile(r"(?<=[\w,;)]\s)[A-Z][a-z][\w'’-]*")
_PLACE_WORDS = "at|in|to|from|near|into|around"
_PLACE = re.compile(rf"\b(?:{_PLACE_WORDS})\s+(?:the\s+)?[A-Z][\w'’-]+")
_PLACE_WORD_SET = frozenset(_PLACE_WORDS.split("|"))
_PLACE_NAME = re.compile(r"[A-Z][\w'’-]")  # where the name of a `_PLACE` match can start
# Two capitalised words inside a sentence, with no preposition before them: a place or a venue
# named as an object ("I booked Golden Lantern").
_TWO_NAMES = re.compile(r"(?<=[a-z0-9,;] )[A-Z][a-z'’-]+ [A-Z][a-z'’-]+")
NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    "forty|fifty|hundred|thousand|dozen|once|twice|several|few"
)
_NUMBER = re.compile(rf"[\d€$£¥]|\b(?:{NUMBER_WORDS})\b", re.I)
_NUMBER_WORD_SET = frozenset(NUMBER_WORDS.split("|"))  # `_NUMBER` on an ASCII text: its words
_CLOCK_OR_DATE = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b|\b\d{4}-\d{2}-\d{2}\b")  # "18:30", "2024-03-23"
_CAPITALISED = re.compile(r"[A-Z][a-z]")  # where a `_PROPER` match can start
_WORD_AT = re.compile(r"\w+")
# the author taking something on: "I'll get the cake", "I will ask him", "I can drive" (not any
# "I": in a chat most messages speak in the first person)
_TAKES_ON = re.compile(r"\bI(?:['’]ll|\s+will|\s+shall|\s+can|['’]m\s+going\s+to|\s+am\s+going\s+to)\b")


def answer_kind(question: str) -> AnswerKind | None:
    """The kind of answer the question asks for, from its first words; None for any other."""
    for kind, pattern in _QUESTION:
        if pattern.search(question):
            return kind  # type: ignore[return-value]
    if change_subject(question) is not None:  # "did the budget change…?": a change, or none, said of it
        return "change"
    return None


# the words by which a question names the kind of answer it asks for: "what time", "which year",
# "email address", "how much" — no leaf writes them beside its answer ("19:00", "in 2019", an
# address, "€240")
_KIND_WORDS = re.compile(
    r"^\W*(?:at |in |on )?(?:what|which) (?:time|date|day|year|month)s?\b|\be-?mail address(?:es)?\b"
    r"|^\W*how (?:much|many)\b"
    r"|\b(?:open\s+)?(?:tasks?|to-?dos?|action\s+items?)\b"  # not "list": "my to-do list" may be a note's name
    r"|\b(?:(?:need|have)\s+to|left\s+to)\s+do\b"
    rf"|^\W*what(?:{_UNDONE})\b",
    re.I,
)


def kind_terms(question: str) -> frozenset[str]:
    """The search terms of the words by which the question names the kind of answer it asks
    for ("what time is the dinner?": "time"; "what is Helen's email address?": "email",
    "address"; "how much is the hotel?": "how", "much"): not what it asks about."""
    kind = answer_kind(question)
    if kind not in ("time", "address", "task", "quantity"):
        return frozenset()
    return frozenset(t for m in _KIND_WORDS.finditer(question) for t in terms(m.group(0)))


# "what time is the dinner?", "at what time…": a time of day ("19:00", "7 pm"), not any time
_CLOCK_QUESTION = re.compile(r"^\W*(?:at )?what time\b", re.I)
# … and an hour said bare after "at" where nothing follows that counts ("Thursday at 10, he
# texted", "the review is at 3 on Thursday", "food at 8"; not "at 10 km/h", "at 3 percent")
_CLOCK = re.compile(
    r"\b\d{1,2}[:.]\d\d\b|\b\d{1,2}(?:[:.]\d\d)? ?(?:am|pm|a\.m\.|p\.m\.)|\b(?:noon|midday|midnight)\b"
    r"|\b\d{1,2} ?o'?clock\b|\bat (?:[1-9]|1[0-2])(?= *(?:$|[,;!?)]|\.(?!\d)|(?:on|sharp|tomorrow|today|tonight|and|then)\b))",
    re.I,
)
# "how much is the hotel?", "how much does the load test cost?", "how much did we budget…": a sum
# of money; not "how much time is left?" (a noun after "much" says what is counted)
_MONEY_QUESTION = re.compile(
    r"^\W*how much\s+(?:is|are|was|were|does|do|did|will|would|should|can|could|has|have|had)\b"
    r"|^\W*how much\b.*\b(?:cost|costs|price|prices|pay|paid|spend|spent|budget|budgeted|fee|fees|charge|charged)\b",
    re.I,
)
_AMOUNT = re.compile(
    r"[€$£¥]\s?\d|\d[\d,.]*\s?(?:k\b|m\b|€|eur\b|euros?\b|usd\b|dollars?\b|gbp\b|pounds?\b|bucks\b|quid\b)",
    re.I,
)
# "how long does the migration take?", "how long was the flight?": a length of time ("7 to 9
# working days", "45 minutes", "an hour"), not any number ("version 1.1"); not "how long ago"
_DURATION_QUESTION = re.compile(r"^\W*how long\b(?!\s+ago\b)", re.I)
_DURATION = re.compile(
    rf"\b(?:\d+(?:[.,]\d+)?|an?|half an?|{NUMBER_WORDS})(?:\s+[a-z]+)?\s+"
    r"(?:seconds?|minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|fortnights?|months?|years?|decades?)\b",
    re.I,
)
# "how many people are coming?", "how many guests…", "how many of us…", "how many are coming?":
# a count of people ("table for 9", "nine of us", "up to 120 guests"), not a price or a date
_HEADCOUNT_QUESTION = re.compile(
    r"^\W*how many\s+(?:(?:people|persons|guests|attendees|adults|kids|children|of us)\b|(?:are|were|will be|is)\s+coming\b)",
    re.I,
)
_HEADCOUNT = re.compile(
    rf"\b(?:table|party|booking|reservation|dinner|room)\s+(?:for|of)\s+(?:\d+|{NUMBER_WORDS})\b"
    rf"|\b(?:\d+|{NUMBER_WORDS})\s+(?:of\s+(?:us|them|you)|people|persons|guests|attendees|adults|kids|children|heads)\b",
    re.I,
)
_LINE_OR_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
# a sentence that says a sum of what was said before it: "It's £320 for three nights", "That
# comes to €96", after "Found a hotel in Porto" or "How much is the hotel?"; "She charges £15
# an hour", after "Found a new cleaner"
_SAID_BEFORE = re.compile(
    r"^\W*(?:it|its|it['’]s|that|that['’]s|thats|this|they|they['’]re|these|those|which|he|he['’]s|she|she['’]s)\b", re.I
)


def answer_test(
    question: str, kind: AnswerKind, query_terms: Collection[str], people: frozenset[str] = frozenset()
) -> Callable[[str], bool]:
    """Whether a leaf's text holds the answer `question` asks for, narrower than its kind where
    the question says more: "what time…?" asks for a time of day ("19:00"), which the one
    message that booked the dinner writes among many that name a day; "how much is / does…?"
    for a sum of money written in a sentence with the question's words ("€1,200 for a
    load-testing run" for "how much does the load test cost?"), not "7 to 9 working days, plus
    load testing" nor "The second cluster is another €900" after "the load test is fine"."""
    if kind == "time" and asks_clock(question):
        return names_clock
    if kind == "change":
        subject = change_subject(question) or frozenset()
        return lambda text: tells_change(text, subject)
    if kind == "quantity" and _MONEY_QUESTION.search(question):
        wanted = frozenset(query_terms)
        return lambda text: states_amount(text, wanted)
    if kind == "person" and people:
        return lambda text: names_person(text, people)
    if kind == "title" and people:
        return lambda text: names_title(text, people)
    if kind == "quantity" and _DURATION_QUESTION.search(question):
        return names_duration
    if kind == "quantity" and _HEADCOUNT_QUESTION.search(question):
        return counts_people
    return lambda text: holds_answer(kind, text)


@lru_cache(maxsize=16_384)
def names_person(text: str, people: frozenset[str]) -> bool:
    """Whether `text` names a person: a capitalised word inside a sentence ("Marco owns the
    guest list", "And LeBron is the man"), but not one a preposition of place names ("from
    Taiwan", "from Bakery Rosa"), unless it is a word of a name of the memory's people
    (`people`, lower case: "from Dana"); or its author taking something on ("I'll get the
    cake", "I will ask him"), which names the author."""
    if _TAKES_ON.search(text) is not None:
        return True
    for found in _proper_words(text):
        before = _word_before(text, found.start())
        if found.group(0).lower() in people or before is None or before[1] not in _PLACE_WORD_SET:
            return True
    return False


def names_title(text: str, people: frozenset[str]) -> bool:
    """Whether `text` names a title: a quoted one, or a capitalised word inside a sentence that
    is no word of a name of the memory's people (`people`, lower case) nor of a time ("Thanks,
    Mel! A photo of the lake from last Friday" names none: in a chat, most messages name the other)."""
    if _QUOTED.search(text) is not None:
        return True
    return any((word := found.group(0).lower()) not in people and word not in _TIME_WORD_SET for found in _proper_words(text))


def asks_narrowly(question: str) -> bool:
    """Whether `question` asks for a time of day ("what time…?"), a count of people ("how many
    people…?"), a length of time ("how long does…?") or a sum of money ("how much is…?"):
    answers few messages hold, often said in words the question does not use ("I booked Golden
    Lantern, 19:00, table for 9"; "She charges £15 an hour" after "Found a new cleaner")."""
    return (
        asks_clock(question)
        or _MONEY_QUESTION.search(question) is not None
        or _HEADCOUNT_QUESTION.search(question) is not None
        or _DURATION_QUESTION.search(question) is not None
    )


def counts_people(text: str) -> bool:
    """Whether `text` counts people: "table for 9", "nine of us", "up to 120 guests"."""
    return _HEADCOUNT.search(text) is not None


def names_duration(text: str) -> bool:
    """Whether `text` names a length of time: "7 to 9 working days", "45 minutes", "an hour"."""
    return _DURATION.search(text) is not None


def asks_clock(question: str) -> bool:
    """Whether `question` asks for a time of day: "what time is the dinner?"."""
    return _CLOCK_QUESTION.search(question) is not None


def names_clock(text: str) -> bool:
    """Whether `text` names a time of day: "19:00", "7.30 pm", "noon", "at 3 on Thursday"."""
    return _CLOCK.search(text) is not None


@lru_cache(maxsize=16_384)
def states_amount(text: str, query_terms: frozenset[str]) -> bool:
    """Whether a sentence (or line) of `text` writes a sum of money ("€1,200", "40 euros",
    "$5k") and holds one of `query_terms` (any sentence, when there are none): the amount is
    said of what the question asks about. A sentence that opens with a word pointing back
    ("It's £320 for three nights", "That comes to €96") says it of what was said before it,
    in the sentence or message before, which may be the question's words: its sum counts.
    A sum in a sentence whose words of the question another sentence of the text holds, with
    more of them, is said of something else: "€1,200 for a load-testing run on staging. And
    I'd like to keep the second staging cluster through April." does not say what the second
    staging cluster costs (but a signature's "Events Manager, Harbor Hall" takes nothing from
    "Catering is … about €18 a head" for "how much is catering at Harbor Hall?")."""
    if not _AMOUNT.search(text):
        return False
    parts = _LINE_OR_SENTENCE.split(text)
    held = [query_terms.intersection(terms(part)) for part in parts]
    return any(
        _AMOUNT.search(part) is not None
        and (not query_terms or (said and not any(said < other for other in held)) or _SAID_BEFORE.match(part) is not None)
        for part, said in zip(parts, held, strict=True)
    )


# a day of the month written with its month ("23 March", "the 23rd of March", "March 23") or in
# an ISO date; and one written bare, as an ordinal ("on the 23rd"), which leaves the month unsaid
_DAY_WITH_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+(?:{_MONTHS})\b|\b(?:{_MONTHS})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b"
    r"|\b(?:19|20)\d\d-\d\d-(\d\d)\b",
    re.I,
)
_ORDINAL_DAY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b", re.I)


def bare_days(text: str) -> frozenset[int]:
    """The days of the month `text` names only as an ordinal, its month unsaid ("lunch at home
    on the 23rd": {23}); none when it writes any day with its month ("the 23rd of March")."""
    if _DAY_WITH_MONTH.search(text) is not None:
        return frozenset()
    return frozenset(day for found in _ORDINAL_DAY.finditer(text) if 1 <= (day := int(found.group(1))) <= 31)


def dated_days(text: str) -> frozenset[int]:
    """The days of the month `text` writes with their month: "Saturday 23 March" → {23}."""
    return frozenset(int(next(g for g in found.groups() if g)) for found in _DAY_WITH_MONTH.finditer(text))


def plain_answer(kind: AnswerKind | None) -> Callable[[str], bool] | None:
    """Whether a text holds the answer of `kind` where a line of it says the answer plainly,
    for the kinds whose answers a line does (an open task, an email address); None for the
    others, whose answers hide in any sentence (a name, a number)."""
    if kind not in ("task", "address"):
        return None
    return lambda text: open_task_of(text) is not None if kind == "task" else holds_answer("address", text)


def open_task_of(text: str) -> re.Match[str] | None:
    """The first open task of `text` (`- [ ] …`, its line), None when it holds none."""
    return OPEN_TASK.search(text) if "[ ]" in text else None


@lru_cache(maxsize=16_384)
def holds_answer(kind: AnswerKind, text: str) -> bool:
    """Whether `text` holds an answer of that kind (a time, a place, a name, a number)."""
    if kind == "time":
        return names_time(text.lower())
    if kind == "quantity":
        return _names_number(text)
    if kind == "place":
        return _names_place(text)
    if kind == "title":
        return _QUOTED.search(text) is not None or _names_proper(text)
    if kind == "address":
        return "@" in text and _EMAIL_ADDRESS.search(text) is not None
    if kind == "reason":
        return _REASON.search(text) is not None
    if kind == "agreement":
        return _AGREEMENT.search(text) is not None
    if kind == "change":
        return tells_change(text, frozenset())
    if kind == "task":
        return open_task_of(text) is not None or _TASKS_LISTED.search(text) is not None
    return _names_proper(text)


def names_time(lower: str) -> bool:
    """Whether a lower-cased text names a time (`_TIME.search(lower)`). An ASCII text's words as `\\b` bounds
    them are its pieces between the characters that are no word characters (translating
    other texts costs as much as the pattern)."""
    if not lower.isascii():
        return _TIME.search(lower) is not None
    if any(map(lower.__contains__, "0123456789")) and _time_in_digits(lower):
        return True
    return not _TIME_WORD_SET.isdisjoint(lower.translate(_ASCII_NON_WORD).split())


def _names_number(text: str) -> bool:
    """`_NUMBER.search(text)`: on an ASCII text, a digit or "$", or a word of `_NUMBER_WORD_SET` in any
    case (other texts keep the pattern: under `re.I`, "ſ" is an "s"). 75 → 13 µs on a message of
    320 characters. A time of day or a date is no amount: "drinks from 18:30" does not answer
    "how much is the food?"."""
    if ":" in text or "-" in text:
        text = _CLOCK_OR_DATE.sub(" ", text)
    if not text.isascii():
        return _NUMBER.search(text) is not None
    if any(map(text.__contains__, "0123456789$")):
        return True
    return not _NUMBER_WORD_SET.isdisjoint(text.lower().translate(_ASCII_NON_WORD).split())


def _names_proper(text: str) -> bool:
    """`_PROPER.search(text)`, its look-behind checked only where a capital and a small letter
    meet (a look-behind first keeps the pattern from skipping ahead to where a match can start)."""
    return next(_proper_words(text), None) is not None


def _proper_words(text: str) -> Iterator[re.Match[str]]:
    """The capitalised words of `text` that `_PROPER` matches, each as a match of its word:
    the look-behind checked only where a capital and a small letter meet."""
    for found in _CAPITALISED.finditer(text):
        at = found.start()
        if at >= 2 and text[at - 1].isspace() and (_is_word_char(text[at - 2]) or text[at - 2] in ",;)"):
            yield _WORD_AT.match(text, at) or found


def _names_place(text: str) -> bool:
    """`_PLACE.search(text)`, read backwards from where a capitalised name starts: spaces, then
    a preposition of `_PLACE_WORD_SET` (a whole word), or "the", spaces and one; else
    `_TWO_NAMES`."""
    for found in _PLACE_NAME.finditer(text):
        end = found.start()
        before = _word_before(text, end)
        if before is None:
            continue
        start, word = before
        if word in _PLACE_WORD_SET:
            return True
        if word == "the" and (prior := _word_before(text, start)) is not None and prior[1] in _PLACE_WORD_SET:
            return True
    return _TWO_NAMES.search(text) is not None


def _word_before(text: str, end: int) -> tuple[int, str] | None:
    """The whole word (a run of `\\w`) that one or more spaces part from `text[end]`, and where
    it starts; None without such spaces."""
    at = end
    while at and text[at - 1].isspace():
        at -= 1
    if at == end:
        return None
    start = at
    while start and _is_word_char(text[start - 1]):
        start -= 1
    return start, text[start:at]


def _time_in_digits(lower: str) -> bool:
    """Whether a time in digits ("1999", "7:30", "3rd", "5 pm") starts a word of `lower`: at
    the start of a run of digits that no word character precedes."""
    for run in _DIGITS.finditer(lower):
        start = run.start()
        if start and _is_word_char(lower[start - 1]):
            continue
        if _TIME_NUMBER_AT.match(lower, start) is not None:
            return True
    return False


def _is_word_char(char: str) -> bool:
    """Whether `char` is one that `\\w` matches."""
    return char.isalnum() or char == "_"
