"""The admission decision: admitted | dropped | gray, with its score, reason and breakdown.

    base  = Σ weight·signal / Σ weight            (signals.py; weights below)
    score = min(1, base + 0.2·interaction + 0.25·priority + 0.25·life_event)

- user notes are always admitted ("user note": they are the owner's own writing);
- a priority-tagged leaf is never dropped as chitchat;
- tiny chitchat (at most one content word, and no entity but perhaps a name: "ok lol",
  "thanks John!") is dropped whatever its score — unless it names a life event (which also
  boosts the score by 0.25: "I'm pregnant!", "Mom died this morning.");
- a short reply (at most 6 words) right after someone else's question, scored below `keep`, is
  admitted when it opens with a word that decides ("Yes.", "No, keep it.", "Agreed": the
  decision the question asked for), and otherwise goes to the gray band when it has a content
  word or an entity other than a name (see `cues`);
- score >= `keep` → admitted; score <= `drop` → dropped; in between → gray: the LLM is asked
  once (cached by content hash + model + prompt hash) and its importance decides
  (>= `llm_keep` admitted, else dropped). When the LLM is switched off (`admission.llm =
  false`), gave no usable answer, or no Ollama answers at its host (none installed, say), a
  gray leaf is decided by its score against the middle of the band.

Calibration (keep 0.58, drop 0.45). The reference design's constants (keep 0.85, drop 0.15,
neutral 0.5 for absent engagement) could never fire: every chunk went to the LLM. These were
chosen on real conversations, ingested through the real chat adapters, so that definite keep
and definite drop both fire and the gray band — the only place an LLM is consulted — is a
minority:

| data (leaves) | admitted | gray | dropped |
|---|---|---|---|
| LoCoMo dev, 5 conversations (2,760 turns), no owner configured | 43.7 % | 34.0 % | 22.2 % |
| the same, owner = one speaker of each conversation | 67.2 % | 22.4 % | 10.5 % |
| chat-export samples: WhatsApp, Telegram, Signal, Slack (24 messages) | 20.8 % | 16.7 % | 62.5 % |

On LoCoMo the score ranks the turns that its QA cites as evidence above the others (AUC
0.75); 6.0 % of those turns are dropped without an owner, 2.8 % with one — and a dropped
leaf is still searchable. (The chat-export samples are lorem ipsum and randomized text.)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from json.encoder import encode_basestring
from typing import Any, Literal

from vaultmind.admission.cues import SHORT_REPLY_WORDS
from vaultmind.admission.signals import LeafInput, Owner, Signals, compute_signals, owner_from
from vaultmind.errors import ConfigError
from vaultmind.tree.settings import config_number

DecisionKind = Literal["admitted", "dropped", "gray"]
Stage = Literal["user", "cheap", "llm", "fallback"]

WEIGHTS: dict[str, float] = {
    "length": 2.0,
    "content": 1.0,
    "statement": 1.0,
    "variety": 0.5,
    "entities": 1.0,
    "kind_prior": 0.75,
    "source_prior": 0.75,
}
INTERACTION_BOOST = 0.2
PRIORITY_BOOST = 0.25
LIFE_EVENT_BOOST = 0.25

DEFAULT_KEEP = 0.58
DEFAULT_DROP = 0.45
DEFAULT_LLM_KEEP = 0.5
DEFAULT_REASK_PER_PASS = 200
DEFAULT_PRIORITY_TAGS: tuple[str, ...] = (
    "priority",
    "priority_high",
    "priority/high",
    "important",
    "pinned",
    "vaultmind/keep",
)
ADMISSION_VERSION = "2"  # bump when the signals or the formula change: every row is recomputed


@dataclass(frozen=True, slots=True)
class Policy:
    """Admission settings, read once from the config (`[admission]` and `[ollama] chat_model`)."""

    keep: float = DEFAULT_KEEP
    drop: float = DEFAULT_DROP
    llm: bool = True
    llm_keep: float = DEFAULT_LLM_KEEP
    llm_model: str = "ollama:llama3.2"
    owner: Owner = field(default_factory=Owner)
    priority_tags: tuple[str, ...] = DEFAULT_PRIORITY_TAGS
    # how many decisions by rules one pass asks the LLM again (`reask`; no decision's input)
    reask_per_pass: int = DEFAULT_REASK_PER_PASS

    @property
    def middle(self) -> float:
        return round((self.keep + self.drop) / 2, 4)

    def fingerprint(self, prompt: str) -> str:
        """Changes whenever a setting that changes admission rows changes."""
        data = {
            "v": ADMISSION_VERSION,
            "keep": self.keep,
            "drop": self.drop,
            "llm": self.llm,
            "llm_keep": self.llm_keep,
            "model": self.llm_model,
            "owner": list(self.owner.names),
            "tags": sorted(self.priority_tags),
            "prompt": prompt,
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any], chat_model: str) -> Policy:
        keep = _number(extra, "admission.keep", DEFAULT_KEEP)
        drop = _number(extra, "admission.drop", DEFAULT_DROP)
        if not 0.0 <= drop < keep <= 1.0:
            raise ConfigError(
                f"[admission] needs 0 <= drop < keep <= 1, got drop = {drop}, keep = {keep}",
                path=".vaultmind/config.toml",
            )
        llm = extra.get("admission.llm", True)
        if not isinstance(llm, bool):
            raise ConfigError(
                f"[admission] llm = {llm!r} must be true or false", path=".vaultmind/config.toml"
            )
        owner = extra.get("admission.owner", [])
        if not isinstance(owner, list | str) or not all(isinstance(o, str) for o in _as_list(owner)):
            raise ConfigError(
                "[admission] owner must be a list of names, handles and e-mail addresses",
                path=".vaultmind/config.toml",
                hint='e.g. owner = ["Alice Chen", "@alice", "alice@example.com"]',
            )
        tags = extra.get("admission.priority_tags", list(DEFAULT_PRIORITY_TAGS))
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise ConfigError(
                "[admission] priority_tags must be a list of tags", path=".vaultmind/config.toml"
            )
        reask = extra.get("admission.reask_per_pass", DEFAULT_REASK_PER_PASS)
        if isinstance(reask, bool) or not isinstance(reask, int) or reask < 0:
            raise ConfigError(
                f"[admission] reask_per_pass = {reask!r} must be a whole number, 0 or more (0: never ask again)",
                path=".vaultmind/config.toml",
            )
        return cls(
            keep=keep,
            drop=drop,
            llm=llm,
            llm_keep=_number(extra, "admission.llm_keep", DEFAULT_LLM_KEEP),
            llm_model=f"ollama:{chat_model}",
            owner=owner_from(owner),
            priority_tags=tuple(sorted({t.lower().lstrip("#") for t in tags})),
            reask_per_pass=reask,
        )


@dataclass(frozen=True, slots=True)
class Decision:
    decision: DecisionKind
    score: float
    reason: str
    stage: Stage
    signals: dict[str, Any]  # the breakdown, JSON-ready
    llm_importance: float | None = None
    llm_model: str | None = None
    written: str | None = field(default=None, compare=False, repr=False)  # `signals` as JSON, if known

    def signals_json(self) -> str:
        return self.written if self.written is not None else _SIGNALS_JSON.encode(self.signals)


# `json.dumps(..., sort_keys=True, ensure_ascii=False)` without making an encoder per leaf (a
# breakdown holds no cycle to check for)
_SIGNALS_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, check_circular=False)
_WEIGHTS_JSON = _SIGNALS_JSON.encode(WEIGHTS)
_TOTAL_WEIGHT = sum(WEIGHTS.values())


@lru_cache(maxsize=16)
def _thresholds_json(keep: float, drop: float) -> str:
    return _SIGNALS_JSON.encode({"keep": keep, "drop": drop})


_BOOL = {True: "true", False: "false"}


def _strings_json(strings: Sequence[str]) -> str:
    return "[" + ", ".join(map(encode_basestring, strings)) + "]"


def _breakdown_json(
    sig: Signals, base: float, interaction: float, priority: float, life: float, score: float, policy: Policy
) -> str:
    """`_SIGNALS_JSON.encode` of the breakdown `decide_signals` makes, written directly (a third
    of the time: one for every source leaf a sync parses). Its numbers are Python ints and
    finite floats, written by `repr` as the encoder writes them; the same text (tested)."""
    v = sig.values
    return (
        f'{{"answers_question": {_BOOL[sig.answers_question]}, "base": {base!r}, '
        f'"boosts": {{"interaction": {{"signal": {sig.interaction!r}, "value": {interaction!r}, '
        f'"why": {_strings_json(sig.interaction_why)}}}, "life_event": {{"value": {life!r}, '
        f'"words": {_strings_json(sig.life_events)}}}, "priority": {{"tags": {_strings_json(sig.priority_tags)}, '
        f'"value": {priority!r}}}}}, "content_words": {sig.content_words!r}, "decisive": {_BOOL[sig.decisive]}, '
        f'"entities": {_strings_json(sig.entities[:12])}, "entity_count": {len(sig.entities)!r}, '
        f'"score": {score!r}, "thresholds": {_thresholds_json(policy.keep, policy.drop)}, '
        f'"values": {{"content": {v["content"]!r}, "entities": {v["entities"]!r}, "kind_prior": {v["kind_prior"]!r}, '
        f'"length": {v["length"]!r}, "source_prior": {v["source_prior"]!r}, "statement": {v["statement"]!r}, '
        f'"variety": {v["variety"]!r}}}, "weights": {_WEIGHTS_JSON}, "words": {sig.words!r}}}'
    )  # fmt: skip


def admit_user_note() -> Decision:
    return Decision("admitted", 1.0, "user note", "user", {"note": "user"})


def decide(leaf: LeafInput, policy: Policy) -> Decision:
    """The cheap decision for one leaf (no LLM)."""
    if leaf.note_kind == "user":
        return admit_user_note()
    sig = compute_signals(leaf, policy.owner, policy.priority_tags)
    return decide_signals(sig, policy)


def decide_signals(sig: Signals, policy: Policy) -> Decision:
    base = sum(WEIGHTS[k] * sig.values[k] for k in WEIGHTS) / _TOTAL_WEIGHT
    interaction = round(INTERACTION_BOOST * sig.interaction, 4)
    priority = PRIORITY_BOOST if sig.priority_tags else 0.0
    life = LIFE_EVENT_BOOST if sig.life_events else 0.0
    score = round(min(1.0, max(0.0, base + interaction + priority + life)), 4)
    breakdown: dict[str, Any] = {
        "words": sig.words,
        "content_words": sig.content_words,
        "entities": list(sig.entities[:12]),
        "entity_count": len(sig.entities),
        "values": sig.values,
        "weights": WEIGHTS,
        "base": round(base, 4),
        "boosts": {
            "interaction": {
                "value": interaction,
                "signal": sig.interaction,
                "why": list(sig.interaction_why),
            },
            "priority": {"value": priority, "tags": list(sig.priority_tags)},
            "life_event": {"value": life, "words": list(sig.life_events)},
        },
        "answers_question": sig.answers_question,
        "decisive": sig.decisive,
        "score": score,
        "thresholds": {"keep": policy.keep, "drop": policy.drop},
    }
    written = (
        _breakdown_json(sig, breakdown["base"], interaction, priority, life, score, policy)
        if sig.values.keys() == WEIGHTS.keys()
        else None
    )
    names_only = all(e.startswith("name:") for e in sig.entities)
    chitchat = not sig.priority_tags and not sig.life_events and sig.content_words <= 1 and names_only
    if sig.answers_question and sig.words <= SHORT_REPLY_WORDS and score < policy.keep:
        words = _plural(sig.words, "word")
        if sig.decisive:
            return Decision("admitted", score, f"decisive reply to a question: {words}", "cheap", breakdown, written=written)
        names = sum(1 for e in sig.entities if e.startswith("name:"))
        if sig.content_words > names or not names_only:  # a word beyond the names, or a date, a number …
            return _banded(score, breakdown, policy, f"short reply to a question: {words}", written)
    if chitchat:
        what = "no entities" if not sig.entities else "no entity but a name"
        label = "tiny chitchat" if sig.words <= 6 else "chitchat"
        reason = f"{label}: {_plural(sig.words, 'word')}, {sig.content_words} with content, {what}"
        return Decision("dropped", score, reason, "cheap", breakdown, written=written)
    if score >= policy.keep:
        admit = f"score {score:.2f} >= keep {policy.keep:.2f}"
        return Decision("admitted", score, admit, "cheap", breakdown, written=written)
    if score <= policy.drop:
        drop = f"score {score:.2f} <= drop {policy.drop:.2f}"
        return Decision("dropped", score, drop, "cheap", breakdown, written=written)
    band = f"gray band: score {score:.2f} between drop {policy.drop:.2f} and keep {policy.keep:.2f}"
    return _banded(score, breakdown, policy, band, written)


def _banded(score: float, breakdown: dict[str, Any], policy: Policy, band: str, written: str | None) -> Decision:
    """A gray-band decision: waiting for the LLM, or by the middle when it is switched off."""
    if not policy.llm:
        why = "gray band decided without LLM (admission.llm = false)"
        return _by_middle(score, breakdown, policy, why, written)
    return Decision("gray", score, f"{band}; waiting for the LLM", "cheap", breakdown, written=written)


def resolve_gray(
    cheap: Decision, importance: float | None, model: str, policy: Policy, note: str = ""
) -> Decision:
    """The decision for a gray leaf once the LLM answered (`importance` None: no usable answer)."""
    if importance is None:
        why = f"LLM ({model}) gave no usable answer{': ' + note if note else ''}"
        decided = _by_middle(cheap.score, cheap.signals, policy, why)
        return Decision(decided.decision, cheap.score, decided.reason, "fallback", cheap.signals, None, model)
    importance = round(min(1.0, max(0.0, importance)), 4)
    if importance >= policy.llm_keep:
        verdict: DecisionKind = "admitted"
        reason = f"LLM importance {importance:.2f} >= {policy.llm_keep:.2f} ({model})"
    else:
        verdict = "dropped"
        reason = f"LLM importance {importance:.2f} < {policy.llm_keep:.2f} ({model})"
    if note:
        reason += f": {note}"
    return Decision(verdict, cheap.score, reason, "llm", cheap.signals, importance, model)


def by_rules(cheap: Decision, policy: Policy, why: str) -> Decision:
    """A gray leaf decided without the LLM, by its score against the middle of the band (no
    LLM answers: `importance.decide_by_rules`)."""
    return _by_middle(cheap.score, cheap.signals, policy, why)


def _by_middle(
    score: float, breakdown: dict[str, Any], policy: Policy, why: str, written: str | None = None
) -> Decision:
    middle = policy.middle
    if score >= middle:
        admit = f"{why}; score {score:.2f} >= middle {middle:.2f}"
        return Decision("admitted", score, admit, "fallback", breakdown, written=written)
    return Decision("dropped", score, f"{why}; score {score:.2f} < middle {middle:.2f}", "fallback", breakdown, written=written)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _number(extra: Mapping[str, Any], key: str, default: float) -> float:
    return config_number(extra, key, default, (0.0, 1.0))
