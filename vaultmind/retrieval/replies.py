"""The reply to a message that asks the question itself.

In a conversation, "how many are coming?" asked by Mei is answered by the next message,
"Nine of us, with Auntie Lin and Uncle Joe." Asked of the memory, the same question matches
Mei's message best, which holds no answer (`asking.asking` scales it down), and the reply
earns only context: a message that says "coming" without a number ("Auntie Lin and Uncle Joe
are coming on Friday") outranked it. A message that asks what the question asks (a question of
the same kind of answer, holding all the question's words) and the reply after it by someone
else that holds that kind of answer are question and answer: the reply takes the place the
asking message would have had as a statement. The reply is the first message after the
question by someone else, passing over those that joke or decline, those laughed at (the
message after them opens laughing) and those the asker asks again after ("Seriously, where?"):
when it holds no answer, the question went unanswered, and no later message is lifted for
holding a number or a name.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from vaultmind.index.lexical import terms
from vaultmind.retrieval.answer_type import AnswerKind, answer_kind

_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_CLAUSE = re.compile(r"[:,;]\s*|\s[-–—]\s")  # "Party planning: how many are coming?"

Message = tuple[str, str | None, str]  # (id, author, text) of a leaf after the one that asks

# a reply that laughs ("somewhere in London lol", "he said 2024 haha", "why, are you buying? 😂")
# or declines ("Not me, mine is broken since May", "No idea, ask Priti", "who knows")
_LAUGH = r"(?:lol|lmao|rofl|haha\w*|hehe\w*|jk)\b|[\U0001F602\U0001F923\U0001F606\U0001F61C\U0001F61D]"
_NO_ANSWER = re.compile(
    rf"\b{_LAUGH}"
    r"|^\W*(?:no idea|not me|who knows|dunno|idk|no clue|not sure|don'?t know)\b",
    re.I,
)
# a message that opens laughing ("haha very funny", "😂 good one"): what it answers was a joke
_LAUGHS = re.compile(rf"^\W*(?:{_LAUGH})", re.I)


def no_answer(text: str) -> bool:
    """Whether a reply jokes or declines, whatever kind of word it holds: "somewhere in London
    lol" names a place and "Not me, mine is broken since May" a name, and neither is where
    brunch is or who brings the speaker. The reply after it may be the answer."""
    return _NO_ANSWER.search(text) is not None


def asks_the_question(text: str, kind: AnswerKind, query_terms: Collection[str]) -> bool:
    """Whether a question of `text` (a sentence ending "?", or a clause of one) asks for the
    same kind of answer and holds every one of `query_terms`: "Party planning: how many are
    coming?" for "how many are coming?"."""
    wanted = set(query_terms)
    return bool(wanted) and _asks_kind(text, kind, wanted)


def _asks_kind(text: str, kind: AnswerKind, wanted: Collection[str] = ()) -> bool:
    """Whether a question of `text` (a sentence ending "?", or a clause of one) holding every
    term of `wanted` asks for that kind of answer."""
    for sentence in _SENTENCES.split(text):
        sentence = sentence.strip()
        if not sentence.endswith("?") or not set(wanted) <= set(terms(sentence)):
            continue
        starts = [0, *(m.end() for m in _CLAUSE.finditer(sentence))]
        if any(answer_kind(sentence[at:]) == kind for at in starts):
            return True
    return False


def first_reply(author: str, following: Sequence[Message], kind: AnswerKind | None = None) -> str | None:
    """The id of the message of `following` (those after a message by `author` that asks, in
    order) that replies to it: the first by someone else that neither jokes nor declines
    (`no_answer`) and that nobody laughs at (the next message, by another, opens laughing:
    "Buckingham Palace, obviously" then "haha very funny") nor the asker asks again after
    (the next message, the asker's, asks the same `kind` of question: "Buckingham Palace,
    obviously" then "Seriously, where?" — a joke nobody marked nor laughed at, which the
    asker did not take for the answer); the asker's own messages between are passed over.
    None when the conversation leaves its note first. Whatever the reply says, it is the
    reply: when it holds no answer, the question went unanswered, and a later message about
    something else ("The train leaves at 9") is not its answer."""
    for k, (leaf_id, who, text) in enumerate(following):
        if who is None:
            return None
        if who == author or no_answer(text):
            continue
        after = following[k + 1] if k + 1 < len(following) else None
        if after is not None and after[1] not in (None, who) and _LAUGHS.match(after[2]) is not None:
            continue
        if after is not None and after[1] == author and kind is not None and _asks_kind(after[2], kind):
            continue
        return leaf_id
    return None


def answered_replies(
    final: dict[str, tuple[float, float]],
    asked: Mapping[str, float],
    answers: Collection[str],
    conversation: Mapping[str, tuple[str | None, Sequence[Message]]],
    *,
    margin: float,
    kind: AnswerKind | None = None,
) -> dict[str, str]:
    """For each message of `asked` (its id → the factor its asking scaled it by) that asks the
    question, its reply (`first_reply` over `conversation`: the asker's author and the messages
    after it) rises to the asking message's score as a statement, plus `margin`, when it holds
    the answer (of `answers`, ids of `final`). Returns each reply's id → the id of the message
    it answers."""
    if not asked or not answers:
        return {}
    replied: dict[str, str] = {}
    for asker, factor in sorted(asked.items(), key=lambda item: -final[item[0]][0] / item[1]):
        author, following = conversation.get(asker, (None, ()))
        reply = first_reply(author, following, kind) if author is not None else None
        if reply is None or reply not in answers or reply in replied:
            continue
        value, time_factor = final[reply]
        lifted = final[asker][0] / factor + margin
        if lifted > value:
            final[reply] = (lifted, time_factor)
            replied[reply] = asker
    return replied
