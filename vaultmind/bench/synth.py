"""A deterministic synthetic Obsidian vault for benchmarks: same seed and size, same bytes.

The shape follows real vaults: nested folders (depth 1–4), note sizes lognormal around 2–3 KB
with a long tail (about one 50–200 KB note per thousand), front matter in most notes (tags,
aliases, dates, status, wikilinks inside properties; a few per cent malformed, like an
unreplaced `{{date}}` template), headings, lists, tasks, code fences, callouts, tables, inline
and nested `#tags`, `[[wikilinks]]` (with `|alias`, `#heading`, `#^block`) whose in-degree
follows a power law, `![[embeds]]`, block ids and some accents, CJK and emoji. About
`sources_share` of the notes are vaultmind chat source notes under `sources/chat/…`, rendered
by the same `render_source_note` the chat adapter uses. Words come from a generated
pseudo-English vocabulary with Zipfian frequencies (so BM25 statistics look natural) and a
few hundred names of people, places and organizations reused across notes. A `.obsidian/`
folder, Obsidian's `.trash/` and a few attachments (PNG bytes) are there to be skipped.

Every note is generated from its own random stream (seed, note number), after a global plan
(folders, titles, anchors) drawn from the seed alone; no set or hash order is involved.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import struct
import time
import zlib
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from itertools import accumulate
from pathlib import Path

import numpy as np

from vaultmind.errors import UsageError
from vaultmind.markdown.render import Message, SourceMeta, render_source_note

MANIFEST = ".vaultmind/bench-vault.json"
"""Where the generator records its parameters and counts (inside vaultmind's own folder)."""

Progress = Callable[[str, int, int], None]


def _split(text: str, sep: str | None = None) -> list[str]:
    return text.split(sep)


_FUNCTION_WORDS = _split(
    "the of and to a in is that for it with as was on be by this are from at or have an but not "
    "which we they you all can their has more one will would there been if so what about when "
    "into some could them other than then its only also over after how our most these two may"
)
_ONSETS = _split("b c d f g h j k l m n p r s t v w z br ch cl cr dr fl gr pl pr sh st str th tr")
_VOWELS = _split("a e i o u a e i o ai ea ou io ee")
_CODAS = ["", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ck", "rt", "ng", "x"]
_SUFFIXES = ["", "", "", "", "", "tion", "ing", "ed", "ly", "ment", "ness", "er", "al", "ity"]
_FIRST = _split(
    "Alice Bob Carol Dmitri Elena Farah Gustav Hana Ivan Jamal Keiko Liam Mei Nadia Omar Priya "
    "Quentin Rosa Sven Tomás Uma Viktor Wen Yusuf Zoë José Søren Amélie Björn Chiara Daniel Emma "
    "Felix Grace Hugo Ines Jonas Kofi Lena Marco Nora Oskar Paula Ravi Sara Theo Ugo Vera Willa"
)
_LAST = _split(
    "Chen Stone Raman Ruiz García Müller Nakamura Okafor Kowalski Larsen Haddad Novak Silva "
    "Dubois Rossi Kim Patel Nguyen Schmidt Ivanova Costa Jensen Moreau Tanaka Brennan Fischer "
    "Ahmed Lindqvist O'Neill Herrera Yilmaz Bakker Petrov Santos Wójcik Andersen Mbeki Park"
)
_PLACES = _split(
    "Zürich|São Paulo|Lisbon|Kyoto|東京|Reykjavík|Montréal|Cape Town|Kraków|Oaxaca|Bergen|"
    "Harbor Hall|Fernhill|Marrakesh|Tallinn|Busan|Valparaíso|Göteborg|Hanoi|Nairobi",
    "|",
)
_ORG_SUFFIX = ["Labs", "Inc", "GmbH", "Studio", "Collective", "Foundation", "Partners", "Systems"]
_NON_ASCII = _split(
    "café naïve résumé façade jalapeño smörgåsbord über Ångström Łódź crème brûlée Ελληνικά "
    "Москва 会议记录 学习笔记 データベース 회의록 東京 要点 🚀 ✅ 📌 🎉 🤔 ☕ —"
)
_HEADINGS = _split(
    "Overview|Context|Notes|Ideas|Open questions|Next steps|Decisions|References|Log|Summary|"
    "Action items|Background|Details|Risks|Links|Zusammenfassung|要点|Follow-ups|Draft|Agenda",
    "|",
)
_TOP_FOLDERS = _split(
    "Projects|Areas|Resources|Archive|Meetings|People|Clippings|Reading|Zettelkasten|Work|"
    "Personal|Recherche|メモ|Écrits",
    "|",
)
_STATUSES = ["active", "draft", "done", "someday", "waiting", "archived"]
_LANGS = ["python", "js", "sql", "bash", "rust", ""]
_PLATFORMS = (("slack", 0.6), ("whatsapp", 0.25), ("telegram", 0.15))
_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


@dataclass(slots=True)
class GenStats:
    """What `generate_vault` wrote. Everything but `seconds` is a function of (notes, seed, share)."""

    notes: int = 0
    user_notes: int = 0
    source_notes: int = 0
    messages: int = 0
    folders: int = 0
    other_files: int = 0  # attachments, .obsidian/ and .trash/ files: to be skipped by a scan
    note_bytes: int = 0
    largest_note_bytes: int = 0
    links: int = 0
    malformed_frontmatter: int = 0
    seed: int = 0
    sources_share: float = 0.0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, int | float]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Vocabulary:
    words: list[str]
    array: np.ndarray  # `words` as a numpy object array, for fast sampling
    cum: np.ndarray  # cumulative Zipf weights over `words`, normalised to 1
    names: list[str]  # people, places and organizations
    people: list[str]
    tags: list[str]


def build_vocabulary(seed: int = 0, size: int = 30_000) -> Vocabulary:
    """Pseudo-English words, most frequent first (Zipf s≈1.05), plus names and tags."""
    rng = random.Random(f"vm-synth:{seed}:vocab")
    seen: dict[str, None] = dict.fromkeys(_FUNCTION_WORDS)
    while len(seen) < size:
        syllables = rng.choices((1, 2, 3, 4), weights=(4, 6, 3, 1))[0]
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables))
        word += rng.choice(_CODAS) + rng.choice(_SUFFIXES)
        if len(word) < 3 or word.startswith("vmnonce"):
            continue
        seen.setdefault(word, None)
    words = list(seen)
    head, tail = words[: len(_FUNCTION_WORDS)], words[len(_FUNCTION_WORDS) :]
    tail.sort(key=lambda w: len(w) + rng.random() * 10)  # shorter words tend to be frequent
    words = head + tail
    weights = 1.0 / np.arange(1, len(words) + 1, dtype=np.float64) ** 1.05
    cum = np.cumsum(weights)
    cum /= cum[-1]
    people = [
        f"{first} {last}"
        for first, last in zip(rng.sample(_FIRST * 5, 240), rng.sample(_LAST * 8, 240), strict=True)
    ]
    people = list(dict.fromkeys(people))
    orgs = [f"{rng.choice(tail[:2000]).title()} {rng.choice(_ORG_SUFFIX)}" for _ in range(80)]
    tags = [rng.choice(tail[:3000]) for _ in range(90)]
    tags += [
        f"{p}/{rng.choice(tail[:3000])}" for p in ("project", "area", "type", "status") for _ in range(12)
    ]
    tags += [f"area/{rng.choice(tail[:500])}/{rng.choice(tail[:500])}" for _ in range(10)] + [
        "日本語",
        "lecture-notes",
    ]
    array = np.empty(len(words), dtype=object)
    array[:] = words
    return Vocabulary(words, array, cum, people + _PLACES + orgs, people, list(dict.fromkeys(tags)))


def bench_queries(seed: int = 0, count: int = 40) -> list[str]:
    """A fixed set of queries drawn from the vault's vocabulary: common, mid, rare, names."""
    vocab = build_vocabulary(seed)
    rng = random.Random(f"vm-synth:{seed}:queries")
    content = vocab.words[len(_FUNCTION_WORDS) :]
    queries: list[str] = []
    for i in range(count):
        kind = i % 5
        if kind == 0:
            queries.append(rng.choice(content[:200]))
        elif kind == 1:
            queries.append(" ".join(rng.sample(content[:3000], 2)))
        elif kind == 2:
            queries.append(" ".join(rng.sample(content[200:20000], 3)))
        elif kind == 3:
            queries.append(rng.choice(vocab.names))
        else:
            queries.append(
                f"{rng.choice(vocab.people)} {rng.choice(content[:1000])} {rng.choice(content[:5000])}"
            )
    return queries


# -- the global plan ---------------------------------------------------------------------------


@dataclass(slots=True)
class _NotePlan:
    path: str  # vault-relative, with .md
    title: str
    headings: tuple[str, str]
    block_id: str
    kind: str  # "note" | "daily" | "template" | "huge"
    created: date
    aliases: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Plan:
    notes: list[_NotePlan]
    link_cum: list[float]  # cumulative power-law weights over `popular`
    popular: list[int]  # note numbers, most linked first
    attachments: list[str]


def _title_words(rng: random.Random, vocab: Vocabulary, lo: int, hi: int) -> str:
    words = [
        vocab.words[len(_FUNCTION_WORDS) + int(rng.random() ** 2 * 6000)] for _ in range(rng.randint(lo, hi))
    ]
    return " ".join(words).capitalize()


def _make_plan(notes: int, seed: int, vocab: Vocabulary) -> _Plan:
    rng = random.Random(f"vm-synth:{seed}:plan")
    folders = [(name, 1) for name in _TOP_FOLDERS]
    for _ in range(max(10, notes // 40)):
        parent, depth = rng.choice([f for f in folders if f[1] < 4] or folders)
        folders.append((f"{parent}/{_title_words(rng, vocab, 1, 2)}", depth + 1))
    folder_names = list(dict.fromkeys(f for f, _ in folders))
    folder_cum = list(accumulate(1.0 / (i + 1) ** 0.7 for i in range(len(folder_names))))
    rng.shuffle(folder_names)
    used: dict[str, None] = {}
    plans: list[_NotePlan] = []
    base = date(2019, 1, 1)
    daily_day = 0
    for i in range(notes):
        roll = rng.random()
        created = base + timedelta(days=rng.randrange(2200))
        kind = "note"
        if i % 1000 == 137:  # one note in a thousand is 50–200 KB
            kind, folder, title = "huge", "Clippings", f"{_title_words(rng, vocab, 2, 5)} (full text)"
        elif roll < 0.14:
            kind, created = "daily", date(2010, 1, 1) + timedelta(days=daily_day)
            daily_day += 1
            folder, title = f"Daily/{created.year}", created.isoformat()
        elif roll < 0.145:
            kind, folder, title = "template", "Templates", f"{_title_words(rng, vocab, 1, 2)} template"
        elif roll < 0.20:
            folder = "Meetings/" + str(created.year)
            title = f"{created.isoformat()} {rng.choice(['Sync with', 'Call with', '1-1'])} {rng.choice(vocab.people)}"
        elif roll < 0.24:
            folder, title = "", _title_words(rng, vocab, 1, 4)  # vault root
        else:
            folder = rng.choices(folder_names, cum_weights=folder_cum)[0]
            title = _title_words(rng, vocab, 1, 5)
            if rng.random() < 0.05:
                title += " " + rng.choice(_NON_ASCII[:13])
            elif rng.random() < 0.05:
                title = f"{title} — {rng.choice(vocab.names)}"
        while title.lower() in used:
            title += f" {rng.randint(2, 99)}"
        used[title.lower()] = None
        path = f"{folder}/{title}.md" if folder else f"{title}.md"
        headings = (rng.choice(_HEADINGS), rng.choice(_HEADINGS))
        block_id = "".join(rng.choices(_ALNUM, k=6))
        plan = _NotePlan(path, title, headings, block_id, kind, created)
        if rng.random() < 0.15:
            plan.aliases = [_title_words(rng, vocab, 1, 3) for _ in range(rng.randint(1, 2))]
        plans.append(plan)
    popular = list(range(notes))
    rng.shuffle(popular)
    link_cum = list(accumulate(1.0 / (i + 1) ** 0.95 for i in range(max(1, notes))))
    attachments = [
        f"attachments/Pasted image {20200101000000 + 7919 * k}.png" for k in range(max(3, notes // 100))
    ]
    return _Plan(plans, link_cum, popular, attachments)


# -- text ----------------------------------------------------------------------------------------


class _Writer:
    """Text of one note, drawn from its own random stream."""

    def __init__(self, seed: int, number: int, vocab: Vocabulary, plan: _Plan):
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
            return f"[[{_title_words(rng, self.vocab, 1, 3)}]]"  # unresolved, as in real vaults
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
            words.insert(rng.randrange(len(words)), rng.choice(_NON_ASCII))
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

    def body(self, note: _NotePlan, target: int) -> str:
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
                parts.append(f"{level} {planned.pop(0) if planned else rng.choice(_HEADINGS)}")
                size += len(parts[-1]) + 2
            text = self.block()
            if not text.startswith(("```", "|", ">", "!", "-", "1.", "\t")):  # a paragraph
                if not anchor_done:
                    text += f" ^{note.block_id}"  # the block other notes link to with #^id
                    anchor_done = True
                elif rng.random() < 0.05:
                    text += f" ^{''.join(rng.choices(_ALNUM, k=6))}"
            parts.append(text)
            size += len(text) + 2
        return "\n\n".join(parts) + "\n"


def _frontmatter(w: _Writer, note: _NotePlan) -> tuple[str, bool]:
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


def _note_text(seed: int, number: int, vocab: Vocabulary, plan: _Plan) -> tuple[str, int, bool]:
    note = plan.notes[number]
    w = _Writer(seed, number, vocab, plan)
    if note.kind == "huge":
        target = int(w.rng.uniform(50_000, 200_000))
    elif note.kind == "template":
        target = 200
    else:
        target = int(min(45_000, max(60, w.rng.lognormvariate(7.7, 0.85))))  # median ≈ 2.2 KB
    fm, malformed = _frontmatter(w, note)
    return fm + w.body(note, target), w.links, malformed


@dataclass(frozen=True, slots=True)
class _ChatPlan:
    path: str
    meta: SourceMeta
    platform: str
    channel: str  # unique channel key, used in message refs
    code: str  # Slack channel id
    members: tuple[str, ...]
    day: datetime


def _plan_chats(count: int, seed: int, vocab: Vocabulary) -> list[_ChatPlan]:
    """`count` chat source notes: channels, each with a run of (mostly consecutive) days."""
    rng = random.Random(f"vm-synth:{seed}:chats")
    out: list[_ChatPlan] = []
    channel = 0
    while len(out) < count:
        platform = rng.choices([p for p, _ in _PLATFORMS], weights=[w for _, w in _PLATFORMS])[0]
        name = "-".join(
            vocab.words[len(_FUNCTION_WORDS) + rng.randrange(3000)] for _ in range(rng.randint(1, 2))
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
            out.append(_ChatPlan(f"sources/chat/{scope}/{iso}.md", meta, platform, key, code, members, day))
        channel += 1
    return out


def _chat_text(
    seed: int, number: int, chat: _ChatPlan, vocab: Vocabulary, plan: _Plan
) -> tuple[str, int, int]:
    """(text, messages, links) of one chat source note: one day's conversation."""
    w = _Writer(seed, 10_000_000 + number, vocab, plan)
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


# -- files ---------------------------------------------------------------------------------------


def _png(rng: random.Random) -> bytes:
    """A valid 1×1 PNG followed by padding, like a pasted screenshot's worth of bytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = zlib.compress(b"\x00" + bytes(rng.randrange(256) for _ in range(3)))
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", raw)
    )
    return (
        png + chunk(b"tEXt", b"Comment\x00" + rng.randbytes(rng.randrange(200, 4000))) + chunk(b"IEND", b"")
    )


_OBSIDIAN_FILES = {
    ".obsidian/app.json": '{\n  "alwaysUpdateLinks": false,\n  "newFileLocation": "folder",\n  "attachmentFolderPath": "attachments"\n}\n',
    ".obsidian/appearance.json": '{\n  "cssTheme": "Minimal",\n  "baseFontSize": 16\n}\n',
    ".obsidian/core-plugins.json": '[\n  "file-explorer",\n  "global-search",\n  "graph",\n  "backlink",\n  "daily-notes",\n  "templates"\n]\n',
    ".obsidian/community-plugins.json": '[\n  "dataview"\n]\n',
    ".obsidian/plugins/dataview/manifest.json": '{\n  "id": "dataview",\n  "version": "0.5.66"\n}\n',
    ".obsidian/plugins/dataview/main.js": "'use strict';\n"
    + "module.exports = function plugin() { return 42; };\n" * 200,
    ".obsidian/workspace.json": '{\n  "main": {"type": "split", "children": []},\n  "lastOpenFiles": []\n}\n',
    ".trash/Old idea.md": "---\ntags: [trash]\n---\nA deleted note in Obsidian's trash: to be skipped.\n",
    ".trash/Scratch.md": "Scratch text that was deleted.\n",
}


_CHUNK = 1000
_PARALLEL_FROM = 4000  # below this many notes, worker start-up costs more than it saves


@dataclass(slots=True)
class _Part:
    """Counts of one chunk of notes, written by one worker."""

    notes: int = 0
    messages: int = 0
    note_bytes: int = 0
    largest: int = 0
    links: int = 0
    malformed: int = 0


_worker_state: tuple[Path, int, Vocabulary, _Plan, list[_ChatPlan]] | None = None


def _init_worker(root: Path, user_notes: int, sources: int, seed: int) -> None:
    global _worker_state
    vocab = build_vocabulary(seed)
    _worker_state = (
        root,
        seed,
        vocab,
        _make_plan(user_notes, seed, vocab),
        _plan_chats(sources, seed, vocab),
    )


def _write_chunk(kind: str, lo: int, hi: int) -> _Part:
    """Generate and write notes lo..hi-1 of one kind ("user" or "chat"); the worker's state
    comes from `_init_worker`, so any split of the work gives the same bytes."""
    assert _worker_state is not None
    root, seed, vocab, plan, chats = _worker_state
    part = _Part()
    made: set[str] = set()
    for number in range(lo, hi):
        if kind == "user":
            path = plan.notes[number].path
            text, links, malformed = _note_text(seed, number, vocab, plan)
            part.malformed += malformed or plan.notes[number].kind == "template"
        else:
            path = chats[number].path
            text, messages, links = _chat_text(seed, number, chats[number], vocab, plan)
            part.messages += messages
        data = text.encode("utf-8")
        folder = path.rpartition("/")[0]
        if folder and folder not in made:
            os.makedirs(root / folder, exist_ok=True)
            made.add(folder)
        with open(root / path, "wb") as fh:
            fh.write(data)
        part.notes += 1
        part.note_bytes += len(data)
        part.largest = max(part.largest, len(data))
        part.links += links
    return part


def generate_vault(
    root: str | Path,
    notes: int,
    seed: int = 0,
    *,
    sources_share: float = 0.2,
    workers: int | None = None,
    progress: Progress | None = None,
) -> GenStats:
    """Write a synthetic vault of `notes` Markdown notes (user notes + chat source notes) to
    `root`, which must be missing or empty. Same arguments, same bytes, whatever `workers`
    (processes; default: one per core for large vaults)."""
    global _worker_state
    started = time.perf_counter()
    if notes < 1 or not 0.0 <= sources_share <= 1.0:
        raise UsageError("notes must be >= 1 and sources_share between 0 and 1")
    root = Path(root).resolve()
    if root.exists() and any(root.iterdir()):
        raise UsageError(f"{root} is not empty", path=root, hint="generate into a new or empty folder")
    root.mkdir(parents=True, exist_ok=True)
    sources = round(notes * sources_share)
    user_notes = notes - sources
    jobs = [("user", lo, min(lo + _CHUNK, user_notes)) for lo in range(0, user_notes, _CHUNK)]
    jobs += [("chat", lo, min(lo + _CHUNK, sources)) for lo in range(0, sources, _CHUNK)]
    if workers is None:
        workers = min(os.cpu_count() or 1, 4) if notes >= _PARALLEL_FROM else 1
    stats = GenStats(seed=seed, sources_share=sources_share)
    parts: list[_Part] = []
    done = 0
    if workers <= 1:
        _init_worker(root, user_notes, sources, seed)
        try:
            for job in jobs:
                parts.append(_write_chunk(*job))
                done += job[2] - job[1]
                if progress:
                    progress("generate", done, notes)
        finally:
            _worker_state = None
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker,
                                 initargs=(root, user_notes, sources, seed)) as pool:  # fmt: skip
            futures = {pool.submit(_write_chunk, *job): job for job in jobs}
            for future in as_completed(futures):
                parts.append(future.result())
                job = futures[future]
                done += job[2] - job[1]
                if progress:
                    progress("generate", done, notes)
    vocab = build_vocabulary(seed)
    plan = _make_plan(user_notes, seed, vocab)
    rng = random.Random(f"vm-synth:{seed}:files")
    files = [(rel, _png(rng)) for rel in plan.attachments]
    files += [(rel, text.encode("utf-8")) for rel, text in _OBSIDIAN_FILES.items()]
    for rel, data in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    stats.user_notes = user_notes
    stats.source_notes = sources
    stats.notes = notes
    stats.messages = sum(p.messages for p in parts)
    stats.note_bytes = sum(p.note_bytes for p in parts)
    stats.largest_note_bytes = max((p.largest for p in parts), default=0)
    stats.links = sum(p.links for p in parts)
    stats.malformed_frontmatter = sum(p.malformed for p in parts)
    stats.other_files = len(files)
    folders = {n.path.rpartition("/")[0] for n in plan.notes}
    stats.folders = len(folders | {c.path.rpartition("/")[0] for c in _plan_chats(sources, seed, vocab)})
    manifest = {
        "generator": "vaultmind.bench.synth",
        **{k: v for k, v in stats.to_dict().items() if k != "seconds"},
    }
    (root / MANIFEST).parent.mkdir(exist_ok=True)
    (root / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    stats.seconds = time.perf_counter() - started
    return stats


def read_manifest(vault: str | Path) -> dict[str, object] | None:
    """The generator's record of a synthetic vault, or None for any other vault."""
    try:
        data = json.loads((Path(vault) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("generator") == "vaultmind.bench.synth" else None
