"""The text of one synthetic user note, from its own random stream: front matter (a few per
cent malformed), headings, paragraphs, lists, tasks, code fences, callouts, tables, `#tags`,
`[[wikilinks]]` to the plan's notes (with `|alias`, `#heading`, `#^block`), embeds and block
ids."""

from __future__ import annotations

import random
from datetime import timedelta

import numpy as np

from vaultmind.bench.synth_plan import NotePlan, VaultPlan, title_words
from vaultmind.bench.vocabulary import ALNUM, HEADINGS, NON_ASCII, Vocabulary

_STATUSES = ["active", "draft", "done", "someday", "waiting", "archived"]


_LANGS = ["python", "js", "sql", "bash", "rust", ""]


class NoteWriter:
    """Text of one note, drawn from its own random stream."""

    def __init__(self, seed: int, number: int, vocab: Vocabulary, plan: VaultPlan):
        self.rng = random.Random(f"vm-synth:{seed}:note:{number}")
        self.np = np.random.default_rng([seed, number, 7])
        self.vocab = vocab
        self.plan = plan
        self.pool: list[str] = []
        self.links = 0

    def words(self, k: int) -> list[str]:
        if len(self.pool) < k:
            idx = np.searchsorted(self.vocab.cum, self.np.random(max(1024, 2 * k)))
            self.pool.extend(self.vocab.array[idx].tolist())
        out = self.pool[-k:]
        del self.pool[-k:]
        return out

    def link(self, embed: bool = False) -> str:
        rng = self.rng
        self.links += 1
        if rng.random() < 0.05:
            return f"[[{title_words(rng, self.vocab, 1, 3)}]]"  # unresolved, as in real vaults
        number = self.plan.popular[
            rng.choices(range(len(self.plan.popular)), cum_weights=self.plan.link_cum)[0]
        ]
        target = self.plan.notes[number]
        name = target.path[:-3] if rng.random() < 0.05 else target.title
        roll = rng.random()
        if embed:
            return f"![[{name}]]"
        if roll < 0.15:
            return f"[[{name}|{' '.join(self.words(rng.randint(1, 3)))}]]"
        if roll < 0.23:
            return f"[[{name}#{target.headings[0]}]]"
        if roll < 0.28:
            return f"[[{name}#^{target.block_id}]]"
        return f"[[{name}]]"

    def sentence(self, link_p: float = 0.08) -> str:
        rng = self.rng
        words = self.words(rng.randint(5, 20))
        roll = rng.random()
        if roll < 0.15:
            words.insert(rng.randrange(len(words)), rng.choice(self.vocab.names))
        elif roll < 0.18:
            words.insert(rng.randrange(len(words)), "#" + rng.choice(self.vocab.tags))
        elif roll < 0.21:
            words.insert(rng.randrange(len(words)), rng.choice(NON_ASCII))
        elif roll < 0.24:
            pos = rng.randrange(len(words))
            words[pos] = f"**{words[pos]}**" if roll < 0.22 else f"`{words[pos]}`"
        elif roll < 0.245:
            words.append(f"([source](https://example.com/{words[0]}/{rng.randint(1, 9999)}))")
        if rng.random() < link_p:
            words.insert(rng.randrange(len(words) + 1), self.link())
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice(".....?!")

    def paragraph(self, lo: int = 2, hi: int = 6) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(lo, hi)))

    def block(self) -> str:
        rng = self.rng
        kind = rng.choices(range(10), weights=(45, 14, 6, 4, 5, 6, 3, 3, 2, 1))[0]
        if kind == 0:
            return self.paragraph()
        if kind in (1, 2, 3):
            lines = []
            for n in range(1, rng.randint(3, 8) + 1):
                indent = "\t" if n > 1 and rng.random() < 0.2 else ""
                marker = ("- ", f"- [{'x' if rng.random() < 0.4 else ' '}] ", f"{n}. ")[kind - 1]
                lines.append(indent + marker + self.sentence(0.12).rstrip("."))
            return "\n".join(lines)
        if kind == 4:
            lang = rng.choice(_LANGS)
            body = [
                f"{w} = {rng.choice(['[[not a link]]', '#not-a-tag', '42', repr(w)])}"
                for w in self.words(rng.randint(2, 10))
            ]
            return f"```{lang}\n" + "\n".join(body) + "\n```"
        if kind == 5:
            head = f"> [!{rng.choice(['note', 'tip', 'warning', 'info', 'quote', 'todo'])}]{rng.choice(['', '-', '+'])} "
            return head + " ".join(self.words(3)).capitalize() + "\n> " + self.paragraph(1, 3)
        if kind == 6:
            cols = [w.capitalize() for w in self.words(rng.randint(2, 4))]
            rows = ["| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]
            for _ in range(rng.randint(2, 6)):
                rows.append("| " + " | ".join(" ".join(self.words(rng.randint(1, 3))) for _ in cols) + " |")
            return "\n".join(rows)
        if kind == 7:
            return "> " + self.paragraph(1, 3)
        if kind == 8:
            if rng.random() < 0.5:
                return f"![[{rng.choice(self.plan.attachments).rsplit('/', 1)[1]}]]"
            return self.link(embed=True)
        return "---"

    def body(self, note: NotePlan, target: int) -> str:
        rng = self.rng
        parts: list[str] = []
        if rng.random() < 0.4:
            parts.append(f"# {note.title}")
        parts.append(self.paragraph(1, 4))
        size = sum(len(p) + 2 for p in parts)
        planned = list(note.headings)
        anchor_done = False
        while size < target:
            if planned or rng.random() < 0.25:
                level = "###" if not planned and rng.random() < 0.3 else "##"
                parts.append(f"{level} {planned.pop(0) if planned else rng.choice(HEADINGS)}")
                size += len(parts[-1]) + 2
            text = self.block()
            if not text.startswith(("```", "|", ">", "!", "-", "1.", "\t")):  # a paragraph
                if not anchor_done:
                    text += f" ^{note.block_id}"  # the block other notes link to with #^id
                    anchor_done = True
                elif rng.random() < 0.05:
                    text += f" ^{''.join(rng.choices(ALNUM, k=6))}"
            parts.append(text)
            size += len(text) + 2
        return "\n\n".join(parts) + "\n"


def _frontmatter(w: NoteWriter, note: NotePlan) -> tuple[str, bool]:
    rng = w.rng
    if note.kind == "template":
        return (
            '---\ncategories:\n  - "[[Templates]]"\ncreated: {{date}}\ntitle: {{title}}\ntags:\n  - template\n---\n',
            True,
        )
    if rng.random() < 0.15:
        return "", False
    lines = ["---", f"created: {note.created.isoformat()}"]
    if rng.random() < 0.3:
        lines.append(
            f"updated: {note.created + timedelta(days=rng.randint(0, 400))}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00"
        )
    tags = rng.sample(w.vocab.tags, rng.randint(0, 4))
    if tags and rng.random() < 0.3:
        lines.append(f"tags: [{', '.join(tags)}]")
    elif tags:
        lines += ["tags:"] + [f"  - {t}" for t in tags]
    if note.aliases:
        lines += ["aliases:"] + [f"  - {a}" for a in note.aliases]
    if rng.random() < 0.5:
        lines.append(f"status: {rng.choice(_STATUSES)}")
    if rng.random() < 0.3:
        lines += ["categories:", f'  - "{w.link()}"']
    if rng.random() < 0.25:
        lines += ["people:"] + [f'  - "[[{p}]]"' for p in rng.sample(w.vocab.people, rng.randint(1, 3))]
    if rng.random() < 0.1:
        lines.append(f"rating: {rng.randint(1, 5)}")
    malformed = rng.random() < 0.03
    if malformed:
        lines.append(
            rng.choice(
                [
                    "date: {{date}}",
                    'title: "unclosed quote',
                    "topics:\n\t- tabbed",
                    "due: {{date:YYYY-MM-DD}}",
                ]
            )
        )
    return "\n".join(lines) + "\n---\n", malformed


def note_text(seed: int, number: int, vocab: Vocabulary, plan: VaultPlan) -> tuple[str, int, bool]:
    note = plan.notes[number]
    w = NoteWriter(seed, number, vocab, plan)
    if note.kind == "huge":
        target = int(w.rng.uniform(50_000, 200_000))
    elif note.kind == "template":
        target = 200
    else:
        target = int(min(45_000, max(60, w.rng.lognormvariate(7.7, 0.85))))  # median ≈ 2.2 KB
    fm, malformed = _frontmatter(w, note)
    return fm + w.body(note, target), w.links, malformed
