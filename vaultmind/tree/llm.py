"""The Ollama summarizer: one chat request per seal, checked, retried once, else the fallback.

The prompt folds the children oldest first, each with its author and time (or its note title),
asks for plain prose of at most a number of words derived from the output budget, and forbids
names that are not in the notes. The answer is accepted only if it is prose (not empty, not
JSON, not a refusal, no list items, no "---" rule or front-matter lines; a lone "Summary"
heading is dropped), does not loop on the same sentences (checked before any cut, which would
make a loop fit), fits the budget (cut at a sentence end when it runs over; refused when not
even one sentence fits) and names no one the children do not mention
(`names.unknown_names`). A failed check is retried once with the reason spelled out; a second
failure, a timeout or an unreachable server gives the deterministic fallback summary, recorded
as `summarizer: fallback`. The model and the prompt's hash identify the summarizer
(`ollama:<model>@<12 hex>`), so a prompt change is visible in every note it wrote.

A timeout, an unreachable server or a model it does not have is remembered for the rest of the
pass (one summarizer serves one pass): the seals after it use the fallback without asking, so a
hung server costs one timeout, not one per seal, and one warning says how many fell back. A
summarizer that cannot ask at all (no model set, a timeout that is not positive) is
`Unavailable`: every seal is the fallback's, its report says why.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING

from vaultmind.llm.ollama_chat import (
    ErrorHints,
    LlmCancelled,
    LlmError,
    LlmTimeout,
    LlmUnreachable,
    LlmUnrecoverable,
    OllamaChat,
    prompt_hash,
)
from vaultmind.markdown.render import note_text
from vaultmind.markdown.tokens import count_tokens
from vaultmind.shell import command_line
from vaultmind.tree.fallback import FallbackSummarizer
from vaultmind.tree.names import NAME_ABBREVIATIONS, known_text, unknown_names
from vaultmind.tree.summarize import ChildText, SummaryText

if TYPE_CHECKING:
    from vaultmind.config import Config

log = logging.getLogger(__name__)

SYSTEM_PROMPT = """You fold several notes from one source into one compact summary.
Rules:
- Write at most {words} words of plain prose. No preamble, no headings, no lists, no JSON.
- Keep the key facts, decisions, dates, numbers, and who said or decided what.
- Mention only people, organisations and places that appear in the notes. Never add a name.
- Add nothing that the notes do not say."""

USER_PROMPT = "Notes, oldest first:\n\n{notes}\n\nWrite the summary now."

RETRY_PROMPT = """Your summary was not usable: {reason}
Write it again, following every rule. Names you may use: {allowed}."""

TOKENS_PER_WORD = 1.6  # what `count_tokens` gives an English word with its space, on average
MAX_INPUT_TOKENS = 6000  # children are clipped to share this (estimated) budget
MIN_CHILD_TOKENS = 48

_PREAMBLE_RE = re.compile(
    r"^\s*(?:here(?:'s| is)[^\n:]*:|sure[^\n:]*:|summary\s*:|\*\*summary\*\*\s*:?)\s*", re.IGNORECASE
)
_FENCE_RE = re.compile(r"^```[a-z]*\n?|\n?```$", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"(?<=[.!?…])[\"'”’)\]]*(?=\s|$)")
# A line that only labels the answer ("# Summary", "**Summary:**"): dropped
_LABEL_RE = re.compile(r"^\s*(?:#{1,6}\s*)?[*_]*summary[*_]*\s*:?\s*[*_]*\s*$", re.IGNORECASE)
# A rule, a setext underline or a front-matter fence ("---", "***", "==="): no prose, refused
_RULE_LINE_RE = re.compile(r"^\s*(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|(?:=[ \t]*){3,})$")
_LIST_ITEM_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+\S")
MAX_SAME_SENTENCE = 2
MIN_WORDS_TO_COUNT_REPEATS = 3  # "Yes." or "No." said three times in a chat's summary is no loop
MIN_SENTENCES_FOR_SHARE = 3
MIN_DISTINCT_SHARE = 0.6
MAX_NAME_STOPS = 4
# A full stop after an initial or a title ends no sentence ("Dr. Okafor", "B. Stone")
_NO_END_RE = re.compile(rf"(?:\b[A-ZÀ-Þ]|\b(?:{'|'.join(NAME_ABBREVIATIONS)}))\.$")
_REFUSAL_RE = re.compile(r"^\s*(?:i\s+(?:can(?:no|')t|am unable|'m unable)|as an ai)", re.IGNORECASE)


class OllamaSummarizer:
    name = "ollama"

    def __init__(self, chat: OllamaChat) -> None:
        self._chat = chat
        self._fallback = FallbackSummarizer()
        self._prompt_hash = prompt_hash(SYSTEM_PROMPT, USER_PROMPT, RETRY_PROMPT)
        self._down: LlmError | None = None  # what made the rest of this pass use the fallback
        self._skipped = 0

    @classmethod
    def from_config(cls, config: Config) -> OllamaSummarizer:
        from vaultmind.llm.slots import llm_slots
        from vaultmind.queue.workers import QueueSettings
        from vaultmind.tree.settings import TreeSettings

        settings = TreeSettings.from_extra(config.extra)
        model = settings.summarizer_model or config.ollama_chat_model
        slots = llm_slots(config.vault, QueueSettings.from_extra(config.extra).llm_concurrency)
        return cls(
            OllamaChat(
                model,
                host=config.ollama_host,
                timeout_s=settings.summarizer_timeout_s,
                vault=config.vault,
                slots=slots,  # the queue's LLM jobs count against the same `[queue] llm_concurrency`
                hints=_hints(config),
            )
        )

    @property
    def identity(self) -> str:
        return f"ollama:{self._chat.model}@{self._prompt_hash}"

    @property
    def host(self) -> str:
        return self._chat.host

    @property
    def model(self) -> str:
        return self._chat.model

    def close(self) -> None:
        if self._down is not None and self._skipped:
            log.warning(
                "summarizer: %d more seal(s) used the fallback without asking Ollama (%s)",
                self._skipped,
                self._down.message,
            )
            self._skipped = 0
        self._chat.close()

    def interrupt_on(self, event: threading.Event) -> None:
        """A seal's call in flight ends once `event` is set (the daemon is stopping)."""
        self._chat.interrupt_on(event)

    def __enter__(self) -> OllamaSummarizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def summarize(self, children: Sequence[ChildText], budget_tokens: int) -> SummaryText:
        if budget_tokens <= 0 or not any(c.text.strip() for c in children):
            return self._fallback.summarize(children, budget_tokens)
        if self._down is not None:
            self._skipped += 1
            why = f"ollama failed earlier in this pass: {self._down.message} (asked again next pass)"
            return self._fall_back(children, budget_tokens, 0, why)
        words = max(8, int(budget_tokens / TOKENS_PER_WORD))
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT.format(words=words)},
            {"role": "user", "content": USER_PROMPT.format(notes=format_children(children))},
        ]
        known = known_text(children)
        calls = 0
        reason = ""
        for attempt in range(2):
            calls += 1
            try:
                raw = self._chat.chat(messages, options=_options(messages, budget_tokens))
            except LlmError as exc:  # given up for a stop: the seal writes nothing (quietly)
                level = logging.INFO if isinstance(exc, LlmCancelled) else logging.WARNING
                log.log(level, "summarizer: %s; using the fallback", exc)
                if isinstance(exc, LlmTimeout | LlmUnreachable | LlmUnrecoverable):
                    self._down = exc  # it will not answer the next seal either
                return self._fall_back(children, budget_tokens, calls, f"ollama failed: {exc.message}")
            text, reason = check_answer(raw, budget_tokens, children, known)
            if text is not None:
                return SummaryText(text, self.identity, llm_calls=calls)
            log.info("summarizer: answer refused (%s)%s", reason, "; retrying" if attempt == 0 else "")
            messages += [
                {"role": "assistant", "content": raw},
                {"role": "user", "content": RETRY_PROMPT.format(reason=reason, allowed=_allowed(children))},
            ]
        return self._fall_back(children, budget_tokens, calls, reason)

    def _fall_back(self, children: Sequence[ChildText], budget: int, calls: int, why: str) -> SummaryText:
        result = self._fallback.summarize(children, budget)
        return SummaryText(result.text, result.summarizer, llm_calls=calls, note=why)


def _hints(config: Config) -> ErrorHints:
    """What the hints of the summarizer's errors name: its `[trees]` settings, and how its
    summaries are written again once they are fixed (`docs/trees.md`)."""
    return ErrorHints(
        model="[trees] summarizer_model",
        timeout="[trees] summarizer_timeout_s",
        then=f"`{command_line('flush', vault=config.vault)}` (a summary the fallback wrote is written by the model "
        "once you delete it)",
    )


class Unavailable:
    """`[trees] summarizer = "ollama"` that cannot ask (no model set, a timeout that is not
    positive): every seal is the fallback's, and says why; the trees never wait for it."""

    name = "ollama"

    def __init__(self, why: LlmError) -> None:
        self._fallback = FallbackSummarizer()
        hint = f"; {why.hint}" if why.hint else ""
        self._note = f"ollama cannot be asked: {why.message}{hint}"
        log.warning("summarizer: %s; every seal uses the fallback", self._note)

    @property
    def identity(self) -> str:
        return self._fallback.identity

    def summarize(self, children: Sequence[ChildText], budget_tokens: int) -> SummaryText:
        result = self._fallback.summarize(children, budget_tokens)
        return SummaryText(result.text, result.summarizer, note=self._note)


def format_children(children: Sequence[ChildText]) -> str:
    """The children as numbered notes, each clipped to its share of `MAX_INPUT_TOKENS`."""
    cap = max(MIN_CHILD_TOKENS, MAX_INPUT_TOKENS // max(1, len(children)))
    parts = []
    for i, child in enumerate(children, start=1):
        head: list[str] = []
        if child.author:
            head.append(child.author)
        if child.time:
            head.append(child.time[:16].replace("T", " "))
        if child.title:
            head.append(child.title)
        parts.append(f"[{i}] " + " · ".join(head) + "\n" + _clip_tokens(child.text.strip(), cap))
    return "\n\n".join(parts)


def check_answer(
    raw: str, budget_tokens: int, children: Sequence[ChildText], known: str
) -> tuple[str | None, str]:
    """(the usable summary, "") or (None, why it was refused). Line breaks come out as `\n`
    (a model's `\r\n` too): summary notes are LF-only, and their body hash is of that text."""
    text = _FENCE_RE.sub("", note_text(raw).strip()).strip()
    text = _PREAMBLE_RE.sub("", text).strip()
    lines = [line for line in text.split("\n") if not _LABEL_RE.match(line)]  # "# Summary" says nothing
    if any(_RULE_LINE_RE.match(line) for line in lines):
        return None, "it had lines of only dashes, stars or equals signs; write plain prose, no front matter or rules"
    if any(_LIST_ITEM_RE.match(line) for line in lines):
        return None, "it was a list; write whole sentences in paragraphs, no list items"
    text = "\n".join(line.lstrip("#").strip() if line.lstrip().startswith("#") else line for line in lines)
    text = text.strip()
    if not text or len(re.findall(r"[^\W\d_]{2,}", text)) < 3:
        return None, "it was empty or had no words"
    if text[0] in "{[" or _REFUSAL_RE.match(text):
        return None, "it was not a summary in plain prose"
    if repeats_itself(text):  # before the cut, which would make a loop fit the budget
        return None, "it repeated the same sentences over and over; say each thing once"
    if count_tokens(text) > budget_tokens:
        text = _cut_at_sentence(text, budget_tokens)
        if not text:
            return None, f"it was longer than the {int(budget_tokens / TOKENS_PER_WORD)} words allowed"
    unknown = unknown_names(text, children, known)
    if unknown:
        return None, "it names " + ", ".join(unknown[:8]) + ", who or which the notes never mention"
    return text, ""


def repeats_itself(text: str) -> bool:
    """An answer looping on what it said (a small model's usual failure): a sentence of
    MIN_WORDS_TO_COUNT_REPEATS words or more said more than MAX_SAME_SENTENCE times, or, from
    MIN_SENTENCES_FOR_SHARE sentences on, fewer than MIN_DISTINCT_SHARE of them distinct. Case,
    spacing and punctuation aside; a title's full stop ends no sentence ("Dr. Okafor")."""
    said = [" ".join(re.findall(r"\w+", sentence.casefold())) for sentence in _sentences(text)]
    said = [sentence for sentence in said if sentence]
    if not said:
        return False
    counts = Counter(said)
    if any(n > MAX_SAME_SENTENCE and len(s.split()) >= MIN_WORDS_TO_COUNT_REPEATS for s, n in counts.items()):
        return True
    return len(said) >= MIN_SENTENCES_FOR_SHARE and len(counts) < MIN_DISTINCT_SHARE * len(said)


def _sentences(text: str) -> list[str]:
    """`text` cut at its sentence ends, but for those after an initial or a title, up to
    MAX_NAME_STOPS in one sentence ("Mr. J. R. R. Tolkien"): a loop on "… Plan B." stays a loop."""
    ends = [0, *(m.end() for m in _SENTENCE_END_RE.finditer(text)), len(text)]
    out: list[str] = []
    carried, stops = "", 0
    for a, b in pairwise(ends):
        piece = carried + text[a:b]
        if stops < MAX_NAME_STOPS and _NO_END_RE.search(piece.rstrip()):
            carried, stops = piece, stops + 1
        else:
            out.append(piece)
            carried, stops = "", 0
    return [*out, carried] if carried else out


def _cut_at_sentence(text: str, budget: int) -> str:
    """The longest run of `text`'s first sentences within `budget` (`_sentences`: not after
    "Dr.", which would end it on a title); "" when not even the first fits."""
    best = kept = ""
    for sentence in _sentences(text):
        kept += sentence
        if count_tokens(kept) > budget:
            break
        best = kept
    return best.strip()


def _clip_tokens(text: str, cap: int) -> str:
    if count_tokens(text) <= cap:
        return text
    words = text.split()
    lo, hi = 0, len(words)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(" ".join(words[:mid])) <= cap - 1:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]) + " …"


def _allowed(children: Sequence[ChildText]) -> str:
    names: dict[str, None] = {}
    for child in children:
        if child.author:
            names.setdefault(child.author, None)
        for entity in child.entities:
            names.setdefault(entity, None)
    return ", ".join(list(names)[:30]) or "only the names written in the notes"


def _options(messages: Sequence[dict[str, str]], budget_tokens: int) -> dict[str, int]:
    prompt = sum(count_tokens(m["content"]) for m in messages)
    ctx = 2048
    while ctx < prompt + budget_tokens + 256 and ctx < 16384:
        ctx *= 2
    return {"num_ctx": ctx, "num_predict": budget_tokens + 32}
