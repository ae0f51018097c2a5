"""Words of a time expression that name no time where they stand (`timeparse` reads them):

    the Q2 budget, our March offsite, the 2024 taxes     a month, quarter or year said bare
                                                          between a determiner and a word names
                                                          the thing (`names_a_thing`)
    the last march we went on, our march                 "march" in lower case after a
                                                          determiner is the walk (`a_march`)
    which of the 12 may attend?                          "may" in lower case after a bare
                                                          number is the verb (`a_number_that_may`)
    was Bob late last week?, did Sam arrive early …      early or late said of someone is what
                                                          is asked, not a part of the week (`tardy`)

A question writing its capitals tells the months by them ("the May bank holiday", "our March
offsite": `written`); one whose letters do not line up with its lower-cased text is read
without them.
"""

from __future__ import annotations

import re

_DETERMINERS = r"(?:the|a|an|our|my|your|their|his|her|its)"
DETERMINER = re.compile(rf"\b{_DETERMINERS}\s+$")
_NEXT_WORD = re.compile(r" (?!(?:and|or|to|through|till|until)\b)[a-z]")


def names_a_thing(m: re.Match[str]) -> bool:
    """A month, quarter or year said bare between a determiner and a word ("the Q2 budget", "our
    March offsite", "the 2024 taxes") is a name's first word: the thing, not a window (with a
    preposition or a year it is one: "in Q2", "the Q2 2024 budget"; without the determiner a
    verb may follow: "how did Q3 go?")."""
    return bool(DETERMINER.search(m.string, 0, m.start()) and _NEXT_WORD.match(m.string, m.end()))


_BEFORE_A_MARCH = re.compile(rf"\b{_DETERMINERS}\s+(?:(?:last|next|first|big|whole)\s+)?$")


def a_march(cased: str | None, m: re.Match[str], group: int | str) -> bool:
    """Whether match `m`'s `group` is "march" written in lower case after a determiner (and
    "last", "next" or "first" maybe): the walk ("the last march we went on", "our march"),
    not the month, which a question writing its capitals writes "March"."""
    if m.group(group) != "march" or cased is None or written(cased, m, group, "March"):
        return False
    return bool(_BEFORE_A_MARCH.search(m.string, 0, m.start(group)))


def a_number_that_may(cased: str | None, m: re.Match[str]) -> bool:
    """Whether a `day_month` match `m` without a year is a bare number followed by "may" in lower
    case: the verb ("which of the 12 may attend?", "all 3 may come"), as "may" alone is; a day
    of May is written with its capital, "on" before it, an ordinal ("12th") or "of"."""
    if written(cased, m, 2, "May"):
        return False
    between = m.string[m.end(1) : m.start(2)]
    return not m.group(0).startswith("on ") and between == " "


def written(cased: str | None, m: re.Match[str], group: int | str, word: str) -> bool:
    """Whether the question writes match `m`'s `group` as `word` (its capitals included)."""
    return cased is not None and cased[m.start(group) : m.end(group)] == word


# "was Bob late last week?", "she arrived early this month": early or late said of someone
# (a verb of being or arriving before it, maybe a name between) is what is asked, not a part of
# the week or month
_TARDY = re.compile(
    r"\b(?:am|is|are|was|were|be|been|being|arrive[sd]?|arriving|came|come|comes|coming|got|gets|"
    r"left|leave|leaves|ran|run|runs|running|showed up|turned up)(?: \w+)? $"
)


def tardy(m: re.Match[str]) -> bool:
    """Whether the "early" or "late" that match `m` starts with tells of someone's timing
    (`_TARDY` right before it)."""
    return _TARDY.search(m.string, 0, m.start()) is not None
