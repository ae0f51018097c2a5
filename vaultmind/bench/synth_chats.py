"""The synthetic vault's chat source notes: channels on Slack, WhatsApp and Telegram, each a
run of days, one note a day rendered by the same `render_source_note` the chat adapter uses."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from vaultmind.bench.synth_notes import NoteWriter
from vaultmind.bench.synth_plan import VaultPlan
from vaultmind.bench.vocabulary import FUNCTION_WORDS, Vocabulary
from vaultmind.markdown.render import Message, SourceMeta, render_source_note

_PLATFORMS = (("slack", 0.6), ("whatsapp", 0.25), ("telegram", 0.15))


@dataclass(frozen=True, slots=True)
class ChatPlan:
    path: str
    meta: SourceMeta
    platform: str
    channel: str  # unique channel key, used in message refs
    code: str  # Slack channel id
    members: tuple[str, ...]
    day: datetime


def plan_chats(count: int, seed: int, vocab: Vocabulary) -> list[ChatPlan]:
    """`count` chat source notes: channels, each with a run of (mostly consecutive) days."""
    rng = random.Random(f"vm-synth:{seed}:chats")
    out: list[ChatPlan] = []
    channel = 0
    while len(out) < count:
        platform = rng.choices([p for p, _ in _PLATFORMS], weights=[w for _, w in _PLATFORMS])[0]
        name = "-".join(
            vocab.words[len(FUNCTION_WORDS) + rng.randrange(3000)] for _ in range(rng.randint(1, 2))
        )
        key = f"{name}-{channel}"
        scope = (
            f"{platform}/{vocab.words[100 + rng.randrange(200)]}/{key}"
            if platform == "slack"
            else f"{platform}/{key}"
        )
        code = "C" + "".join(rng.choices("0123456789ABCDEFGHJKLMNPQRSTUVWXYZ", k=10))
        members = tuple(rng.sample(vocab.people, rng.randint(2, 8)))
        day = datetime(2020, 1, 1, tzinfo=UTC) + timedelta(days=rng.randrange(1500))
        for _ in range(min(count - len(out), rng.randint(1, 40))):
            day += timedelta(days=rng.choice([1, 1, 1, 2, 3, 7]))
            iso = day.date().isoformat()
            title = f"#{name} · {iso}" if platform == "slack" else f"{name.replace('-', ' ').title()} · {iso}"
            meta = SourceMeta("chat", f"{platform}:{scope.split('/', 1)[1]}", scope, title)
            out.append(ChatPlan(f"sources/chat/{scope}/{iso}.md", meta, platform, key, code, members, day))
        channel += 1
    return out


def chat_text(
    seed: int, number: int, chat: ChatPlan, vocab: Vocabulary, plan: VaultPlan
) -> tuple[str, int, int]:
    """(text, messages, links) of one chat source note: one day's conversation."""
    w = NoteWriter(seed, 10_000_000 + number, vocab, plan)
    rng = w.rng
    at = chat.day + timedelta(hours=8, seconds=rng.randrange(3600))
    messages = []
    count = max(1, int(rng.lognormvariate(2.5, 0.7)))
    gap = max(30, 50_000 // count)  # the day's conversation runs from 08:00 to about 22:00
    for seq in range(1, count + 1):
        at += timedelta(seconds=rng.randrange(10, gap))
        epoch = int(at.timestamp())
        if chat.platform == "slack":
            mid, ref = f"{epoch}.{seq:06d}", f"slack://archives/{chat.code}/p{epoch}{seq:06d}"
        elif chat.platform == "whatsapp":
            mid = "3EB0" + "".join(rng.choices("0123456789ABCDEF", k=16))
            ref = f"whatsapp://{chat.channel}/{mid}"
        else:
            mid = str(epoch % 100_000 * 100 + seq)
            ref = f"telegram://{chat.channel}/{mid}"
        text = " ".join(w.sentence(0.04) for _ in range(rng.choice([1, 1, 1, 2, 2, 3])))
        if rng.random() < 0.1:
            text += "\n" + w.sentence()
        messages.append(Message(mid, rng.choice(chat.members), at, text, ref))
    return render_source_note(chat.meta, messages), len(messages), w.links
