"""The synthetic vault's global plan, drawn from the seed alone before any note is written:
folders nested 1–4 deep, each user note's path, title, headings, block id, kind and aliases, the
power-law order in which notes are linked, and the attachments."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from itertools import accumulate

from vaultmind.bench.vocabulary import ALNUM, FUNCTION_WORDS, HEADINGS, NON_ASCII, TOP_FOLDERS, Vocabulary


@dataclass(slots=True)
class NotePlan:
    path: str  # vault-relative, with .md
    title: str
    headings: tuple[str, str]
    block_id: str
    kind: str  # "note" | "daily" | "template" | "huge"
    created: date
    aliases: list[str] = field(default_factory=list)


@dataclass(slots=True)
class VaultPlan:
    notes: list[NotePlan]
    link_cum: list[float]  # cumulative power-law weights over `popular`
    popular: list[int]  # note numbers, most linked first
    attachments: list[str]


def title_words(rng: random.Random, vocab: Vocabulary, lo: int, hi: int) -> str:
    words = [
        vocab.words[len(FUNCTION_WORDS) + int(rng.random() ** 2 * 6000)] for _ in range(rng.randint(lo, hi))
    ]
    return " ".join(words).capitalize()


def make_plan(notes: int, seed: int, vocab: Vocabulary) -> VaultPlan:
    rng = random.Random(f"vm-synth:{seed}:plan")
    folders = [(name, 1) for name in TOP_FOLDERS]
    for _ in range(max(10, notes // 40)):
        parent, depth = rng.choice([f for f in folders if f[1] < 4] or folders)
        folders.append((f"{parent}/{title_words(rng, vocab, 1, 2)}", depth + 1))
    folder_names = list(dict.fromkeys(f for f, _ in folders))
    folder_cum = list(accumulate(1.0 / (i + 1) ** 0.7 for i in range(len(folder_names))))
    rng.shuffle(folder_names)
    used: dict[str, None] = {}
    plans: list[NotePlan] = []
    base = date(2019, 1, 1)
    daily_day = 0
    for i in range(notes):
        roll = rng.random()
        created = base + timedelta(days=rng.randrange(2200))
        kind = "note"
        if i % 1000 == 137:  # one note in a thousand is 50–200 KB
            kind, folder, title = "huge", "Clippings", f"{title_words(rng, vocab, 2, 5)} (full text)"
        elif roll < 0.14:
            kind, created = "daily", date(2010, 1, 1) + timedelta(days=daily_day)
            daily_day += 1
            folder, title = f"Daily/{created.year}", created.isoformat()
        elif roll < 0.145:
            kind, folder, title = "template", "Templates", f"{title_words(rng, vocab, 1, 2)} template"
        elif roll < 0.20:
            folder = "Meetings/" + str(created.year)
            title = f"{created.isoformat()} {rng.choice(['Sync with', 'Call with', '1-1'])} {rng.choice(vocab.people)}"
        elif roll < 0.24:
            folder, title = "", title_words(rng, vocab, 1, 4)  # vault root
        else:
            folder = rng.choices(folder_names, cum_weights=folder_cum)[0]
            title = title_words(rng, vocab, 1, 5)
            if rng.random() < 0.05:
                title += " " + rng.choice(NON_ASCII[:13])
            elif rng.random() < 0.05:
                title = f"{title} — {rng.choice(vocab.names)}"
        while title.lower() in used:
            title += f" {rng.randint(2, 99)}"
        used[title.lower()] = None
        path = f"{folder}/{title}.md" if folder else f"{title}.md"
        headings = (rng.choice(HEADINGS), rng.choice(HEADINGS))
        block_id = "".join(rng.choices(ALNUM, k=6))
        plan = NotePlan(path, title, headings, block_id, kind, created)
        if rng.random() < 0.15:
            plan.aliases = [title_words(rng, vocab, 1, 3) for _ in range(rng.randint(1, 2))]
        plans.append(plan)
    popular = list(range(notes))
    rng.shuffle(popular)
    link_cum = list(accumulate(1.0 / (i + 1) ** 0.95 for i in range(max(1, notes))))
    attachments = [
        f"attachments/Pasted image {20200101000000 + 7919 * k}.png" for k in range(max(3, notes // 100))
    ]
    return VaultPlan(plans, link_cum, popular, attachments)
