"""Admission: cheap signals, decisions and reasons, the sync deriver, and `vaultmind explain`."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from vaultmind.admission import cues, importance, signals
from vaultmind.admission import decide as decide_module
from vaultmind.admission.decide import Policy, decide
from vaultmind.admission.deriver import META_KEY, load_inputs
from vaultmind.admission.signals import LeafInput, extract_entities, owner_from
from vaultmind.cli.main import main
from vaultmind.config import Config, load_config
from vaultmind.entities import extract
from vaultmind.errors import ConfigError
from vaultmind.index.connection import other_connection
from vaultmind.markdown.render import Message, SourceMeta, render_source_note
from vaultmind.memory import Memory

from .conftest import snapshot_files, write

SUBSTANTIVE = (
    "The Q3 budget review with Carol Diaz moved to Friday 2024-03-08 at 10:00 in the Berlin office; "
    "bring the revenue numbers and the hiring plan."
)
BORDERLINE = "I went hiking yesterday and it was really nice, we saw some deer near the lake"


def leaf(
    text: str, *, author: str = "Bob Stone", participants: Sequence[str] = ("A", "B", "C"), **kw: Any
) -> LeafInput:
    values: dict[str, Any] = {
        "leaf_id": "x",
        "note_path": "sources/chat/slack/acme/general/2024-03-04.md",
        "note_kind": "source",
        "source_kind": "chat",
        "source_id": "slack:acme/general",
        "seq": 1,
        "text": text,
        "content_hash": "h",
        "author": author,
        "participants": tuple(participants),
    }
    values.update(kw)
    return LeafInput(**values)


def chat_note(
    vault: Path, rel: str, messages: Sequence[tuple[str, str, str]], participants: Sequence[str] = ()
) -> None:
    msgs = [
        Message(str(i + 1), author, f"2024-03-04T09:{i:02d}:00Z", text)
        for i, (author, text, _) in enumerate(messages)
    ]
    meta = SourceMeta(
        "chat", "slack:acme/general", "slack/acme/general", "#general · 2024-03-04", tuple(participants)
    )
    write(vault, rel, render_source_note(meta, msgs))


CHAT = "sources/chat/slack/acme/general/2024-03-04.md"
MESSAGES = [
    ("Alice Chen", "ok lol", "dropped"),
    ("Bob Stone", SUBSTANTIVE, "admitted"),
    ("Dan Moe", BORDERLINE, "gray"),
    ("Alice Chen", "Thanks Bob!", "dropped"),
]


FAST = '[entities]\nner_model = "off"\n'  # these tests are about admission: no spaCy model load


def make_config(vault: Path, toml: str = "") -> Config:
    write(vault, ".vaultmind/config.toml", FAST + toml)
    return load_config(vault, embed_provider="none")


@pytest.fixture
def memory(vault: Path) -> Iterator[Memory]:
    with Memory.open(make_config(vault)) as mem:
        yield mem


def admission_rows(memory: Memory) -> list[tuple[Any, ...]]:
    return memory.index.query(
        "SELECT leaf_id, note_path, content_hash, decision, score, reason, stage, signals, llm_importance, llm_model "
        "FROM admission ORDER BY note_path, leaf_id"
    )


# -- signals ---------------------------------------------------------------------------------


def test_entity_proxy_finds_names_dates_numbers_handles_and_skips_sentence_starters() -> None:
    found = extract_entities(
        "Hey Mel! Definitely coming. Lucinda went to New York City on 2023-05-07 at 5pm with @bob, "
        "bob@example.com and #work; it cost $300 for 12 people. See https://example.com/x."
    )
    assert "name:mel" in found and "name:lucinda" in found and "name:new york city" in found
    assert {"date:2023-05-07", "date:5pm", "handle:bob", "email:bob@example.com", "tag:work"} <= set(found)
    assert {"number:$300", "number:12", "url:https://example.com/x"} <= set(found)
    assert "name:hey" not in found and "name:definitely" not in found
    assert extract_entities("ok lol") == ()
    assert "date:yesterday" in extract_entities(BORDERLINE)
    relative = extract_entities("TODAY we plan Next\tWeek; thisweek and nextweekend are not dates")
    assert [e for e in relative if e.startswith("date:")] == ["date:next week", "date:today"]


def test_content_words_are_counted_alike_when_their_cache_overflows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signals._CONTENT_OF, "limit", 8)
    signals._CONTENT_OF.clear()
    texts = ["the harbour boats sailed at dawn", "ok lol hahaha", "a1b2c3d4 deployment of version 7gssu1dirvixlo", ""]
    for text in texts * 2:
        counts = Counter(signals.words_of(text.lower()))
        expected = sum(n for word, n in counts.items() if signals._is_content(word))
        assert signals._content_count(counts) == expected, text
        assert len(signals._CONTENT_OF) <= 8
    signals._CONTENT_OF.clear()


def test_chitchat_is_dropped_with_its_reason() -> None:
    for text in ("ok lol", "Thanks John!", "haha yes", "👍"):
        decision = decide(leaf(text), Policy())
        assert decision.decision == "dropped", text
        assert decision.reason.startswith("tiny chitchat"), decision.reason
        assert decision.stage == "cheap"


def test_substantive_message_with_names_and_dates_is_admitted_without_llm() -> None:
    decision = decide(leaf(SUBSTANTIVE), Policy())
    assert decision.decision == "admitted"
    assert decision.stage == "cheap"
    assert decision.score >= Policy().keep
    assert decision.reason == f"score {decision.score:.2f} >= keep {Policy().keep:.2f}"
    breakdown = decision.signals
    assert "name:carol diaz" in breakdown["entities"] and "date:2024-03-08" in breakdown["entities"]
    assert set(breakdown["values"]) == set(breakdown["weights"])
    assert all(0.0 <= v <= 1.0 for v in breakdown["values"].values())


def test_low_content_chatter_reaches_definite_drop() -> None:
    decision = decide(leaf("Sounds like a great day. Which bit did you like best?"), Policy())
    assert decision.decision == "dropped"
    assert decision.reason.startswith("score ") and "<= drop" in decision.reason


def test_owner_message_direct_messages_and_replies_are_boosted() -> None:
    policy = Policy(owner=owner_from(["Alice Chen", "alice@example.com"]))
    other = decide(leaf(BORDERLINE, author="Dan Moe"), policy)
    mine = decide(leaf(BORDERLINE, author="Alice Chen"), policy)
    by_mail = decide(leaf(BORDERLINE, author="Alice Chen <alice@example.com>"), policy)
    assert other.decision == "gray"
    assert mine.score > other.score and mine.decision == "admitted"
    assert mine.signals["boosts"]["interaction"]["why"] == ["sent"]
    assert by_mail.signals["boosts"]["interaction"]["why"] == ["sent"]
    dm = decide(leaf(BORDERLINE, author="Dan Moe", participants=("Alice Chen", "Dan Moe")), policy)
    assert dm.signals["boosts"]["interaction"]["why"] == ["dm"] and dm.score > other.score
    reply = decide(leaf(BORDERLINE, author="Dan Moe", source_kind="email", subject="Re: hike"), policy)
    assert "reply" in reply.signals["boosts"]["interaction"]["why"]
    mention = decide(leaf(BORDERLINE + ", Alice Chen would love it", author="Dan Moe"), policy)
    assert "mention" in mention.signals["boosts"]["interaction"]["why"]


def test_priority_tag_boosts_and_bypasses_the_chitchat_guard() -> None:
    plain = decide(leaf(BORDERLINE), Policy())
    tagged = decide(leaf(BORDERLINE, tags=("important",)), Policy())
    assert tagged.score == pytest.approx(min(1.0, plain.score + 0.25), abs=1e-3)
    assert tagged.decision == "admitted"
    assert tagged.signals["boosts"]["priority"]["tags"] == ["important"]
    inline = decide(leaf("ok #priority"), Policy())  # "ok" alone is dropped as tiny chitchat
    assert decide(leaf("ok"), Policy()).reason.startswith("tiny chitchat")
    assert inline.decision == "admitted" and inline.signals["boosts"]["priority"]["tags"] == ["priority"]


def test_user_notes_are_always_admitted() -> None:
    decision = decide(leaf("ok", note_kind="user", source_kind=None), Policy())
    assert (decision.decision, decision.reason, decision.stage) == ("admitted", "user note", "user")


def test_llm_switched_off_decides_the_gray_band_by_the_middle() -> None:
    """In the gray band with no LLM, a score at or above the middle of keep and drop is kept,
    one below it dropped."""
    score = decide(leaf(BORDERLINE), Policy(llm=False)).score
    for keep, drop, verdict in ((score + 0.1, score - 0.06, "dropped"), (score + 0.06, score - 0.1, "admitted")):
        policy = Policy(keep=round(keep, 4), drop=round(drop, 4), llm=False)
        decision = decide(leaf(BORDERLINE), policy)
        assert decision.decision == verdict, (score, policy.middle, decision.reason)
        assert decision.stage == "fallback" and "without LLM" in decision.reason
    at = decide(leaf(BORDERLINE), Policy(keep=round(score + 0.05, 4), drop=round(score - 0.05, 4), llm=False))
    assert at.decision == "admitted", "the middle itself is kept"


def test_config_is_validated(vault: Path) -> None:
    with pytest.raises(ConfigError, match="drop < keep"):
        Memory.open(make_config(vault, "[admission]\nkeep = 0.3\ndrop = 0.5\n"))
    with pytest.raises(ConfigError, match="owner"):
        Memory.open(make_config(vault, "[admission]\nowner = [1, 2]\n"))


# -- the deriver, through a real sync ---------------------------------------------------------


def test_sync_writes_one_row_per_source_and_user_leaf(vault: Path, memory: Memory) -> None:
    chat_note(vault, CHAT, MESSAGES)
    write(vault, "Journal.md", "# Journal\n\nok\n")
    write(vault, "summaries/general/L1/s1.md", "---\nvaultmind: summary\n---\nA summary.\n")
    before = snapshot_files(vault)
    memory.sync()
    rows = memory.index.query(
        "SELECT n.kind, l.text, a.decision, a.reason FROM leaves l JOIN notes n ON n.path = l.note_path "
        "LEFT JOIN admission a ON a.leaf_id = l.id AND a.note_path = l.note_path ORDER BY l.note_path, l.seq"
    )
    by_text = {text: (kind, decision, reason) for kind, text, decision, reason in rows}
    for _, text, expected in MESSAGES:
        assert by_text[text][1] == expected, (text, by_text[text])
    assert by_text["# Journal\n\nok"] == ("user", "admitted", "user note")
    assert by_text["A summary."][1] is None  # summaries are vaultmind's output: no admission row
    assert snapshot_files(vault) == before  # admission never writes into the vault
    jobs = memory.index.query("SELECT kind, status FROM jobs")
    assert jobs == [("llm_importance", "ready")]  # exactly one job: the gray leaf


def test_incremental_sync_equals_cold_rebuild(vault: Path) -> None:
    chat_note(vault, CHAT, MESSAGES)
    write(vault, "Journal.md", "# Journal\n\nPlans for #important trips.\n")
    with Memory.open(make_config(vault)) as memory:
        memory.sync()
        chat_note(vault, CHAT, [*MESSAGES[:2], ("Eve", "Lunch with Frank Ocean on Tuesday 12:30", "")])
        write(vault, "sources/chat/slack/acme/general/copy.md", (vault / CHAT).read_text(encoding="utf-8"))
        (vault / "Journal.md").unlink()
        memory.sync()
        incremental = admission_rows(memory)
        memory.reindex()
        assert admission_rows(memory) == incremental
        assert len(incremental) == 6  # 3 messages in each of the two notes


def test_owner_change_recomputes_every_row(vault: Path) -> None:
    chat_note(vault, CHAT, [("Dan Moe", BORDERLINE, "")], participants=("Alice Chen", "Bob Stone", "Dan Moe"))
    with Memory.open(make_config(vault)) as memory:
        memory.sync()
        assert memory.index.scalar("SELECT decision FROM admission") == "gray"
    with Memory.open(make_config(vault, '[admission]\nowner = ["Dan Moe"]\n')) as memory:
        memory.sync()  # nothing changed in the vault, but the policy did
        decision, signals = memory.index.query("SELECT decision, signals FROM admission")[0]
        assert decision == "admitted"
        assert json.loads(signals)["boosts"]["interaction"]["why"] == ["sent"]


# -- explain ------------------------------------------------------------------------------------


def test_explain_shows_signals_and_decision(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chat_note(vault, CHAT, MESSAGES)
    with Memory.open(make_config(vault)) as memory:
        memory.sync()
        chitchat = memory.index.scalar("SELECT id FROM leaves WHERE text = 'ok lol'")
        gray = memory.index.scalar("SELECT id FROM leaves WHERE text = ?", [BORDERLINE])
    assert main(["explain", chitchat, "--vault", str(vault), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["leaf"]["text"] == "ok lol" and data["note"]["path"] == CHAT
    assert data["state"] == "dropped"
    assert data["admission"]["decision"] == "dropped"
    assert data["admission"]["reason"].startswith("tiny chitchat")
    assert data["admission"]["signals"]["words"] == 2
    assert "searchable" in data["search"] and "excluded from summary trees" in data["search"]

    assert main(["explain", gray[:8], "--vault", str(vault)]) == 0  # a unique prefix is enough
    out = capsys.readouterr().out
    assert "state     pending" in out
    assert "decision  gray" in out and "waiting for the LLM" in out
    assert "length" in out and "entities" in out and "interaction" in out
    assert "llm_importance ready" in out

    assert main(["explain", "ffffffffffff", "--vault", str(vault)]) == 4
    assert "no leaf" in capsys.readouterr().err


def test_the_fast_patterns_match_what_their_plain_forms_match() -> None:
    """`_CAP_RUN_RE`, the `#tag` patterns and `_RELATIVE_RE` put their look-behind after the first
    character so that the regex engine tries only where such a character is; they must find the
    same spans as the plain forms with the look-behind (or `\\b`) first."""
    plain_caps = re.compile(rf"(?<![\w'’@#-]){signals._CAP_WORD}(?:[ \t]+{signals._CAP_WORD})*(?![\w'’-])")
    plain_tags = re.compile(r"(?<![\w#&])#([A-Za-z][\w/-]+)")
    plain_entity_tags = re.compile(r"(?<![^\s(])#([\w/-]*[^\W\d][\w/-]*)")
    plain_relative = re.compile(rf"\b(?:yesterday|today|tonight|tomorrow|(?:last|next|this)\s+{signals._UNITS})\b")
    rng = random.Random(3)
    pieces = ["a", "A", "É", "é", " ", "'", "’", "@", "#", "&", "(", "-", "/", "\t", "\n", ".", "1", "_"]
    pieces += ["today", "yesterday", "last", "this", "next", "week", "friday"]
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        for plain, fast in (
            (plain_caps, signals._CAP_RUN_RE),
            (plain_tags, signals._HASHTAG_RE),
            (plain_entity_tags, extract._HASHTAG_RE),
            (plain_relative, signals._RELATIVE_RE),
        ):
            assert [(m.span(), m.groups()) for m in plain.finditer(text)] == [
                (m.span(), m.groups()) for m in fast.finditer(text)
            ], repr(text)


def test_a_models_own_scale_reads_in_order_its_one_the_lowest() -> None:
    """Asked for `importance` from 0 to 1, 1 is the top; a model rating on a 1-10 scale of its
    own (`rating`, `score`) ranks its 1 below its 2, never as the most important."""
    from vaultmind.admission.importance import parse_importance

    assert parse_importance({"importance": 1, "reason": "a plan"}) == (1.0, "a plan")
    assert parse_importance({"importance": 0.7})[0] == 0.7
    for key in ("rating", "score"):
        read = [parse_importance({key: n})[0] for n in range(1, 11)]
        assert read == [n / 10 for n in range(1, 11)], key
        assert parse_importance({key: "1"})[0] == 0.1 and parse_importance({key: 0.9})[0] == 0.9
        assert parse_importance({key: 1.0})[0] == parse_importance({key: "1.0"})[0] == 1.0, "a 0-1 scale's top"


def test_a_decision_writes_its_breakdown_as_the_json_encoder_does() -> None:
    """The breakdown's JSON a cheap decision writes itself (every source leaf's, in the parsing
    workers) is the text `json.dumps(sort_keys=True, ensure_ascii=False)` makes of it."""
    owner = owner_from(["Alice Chen"])
    texts = [
        SUBSTANTIVE, BORDERLINE, "ok lol", "Thanks John!", "👍", "ok #priority",
        'Ping "Zoë Ångström" at zoe@example.com re \\ the Q3 plan\ttomorrow, https://example.com/a?b="c"',
        "Met Jürgen Groß and 李雷 on 2024-03-08; 12 items, 3.5 kg, see #Important and @dan_moe",
        " ".join(f"Person{i} Name{i}" for i in range(20)),  # more entities than the 12 listed
        "I'm pregnant!", "合同已经取消了,我们周五付罚款。",
    ]
    policies = (Policy(), Policy(owner=owner, llm=False), Policy(keep=0.9, drop=0.1))
    written = 0
    for text in texts:
        for policy in policies:
            for author, kw in (("Dan Moe", {}), ("Alice Chen", {"tags": ("important",), "follows_question": True})):
                decision = decide(leaf(text, author=author, **kw), policy)
                expected = json.dumps(decision.signals, sort_keys=True, ensure_ascii=False)
                assert decision.written == expected, text
                assert decision.signals_json() == expected
                written += 1
    assert written == len(texts) * len(policies) * 2
    user = decide(leaf("ok", note_kind="user", source_kind=None), Policy())
    assert user.written is None and user.signals_json() == '{"note": "user"}'


def test_gray_rows_are_decided_each_by_its_own_score_and_only_the_gray_ones(memory: Memory) -> None:
    """The gray band decided in one statement (by rules, or from a cached answer for one content)
    gives each gray row the decision of its own score, the same row twice one decision, and
    leaves every row that is not gray, or of another content, as it was."""
    from vaultmind.admission.importance import apply_answer, decide_by_rules

    policy = Policy.from_extra({}, "m")
    rows = [
        ("a", "n1.md", "h1", "gray", 0.9),
        ("a", "n1.md", "h1", "gray", 0.9),  # the same row twice
        ("b", "n1.md", "h2", "gray", 0.1),
        ("c", "n2.md", "h3", "gray", 0.1),
        ("d", "n2.md", "h4", "admitted", 0.1),
    ]
    with memory.index.transaction() as con:
        for leaf_id, note, digest, decision, score in rows:
            con.execute(
                "INSERT INTO admission VALUES (?, ?, ?, ?, ?, 'cheap says', 'cheap', '{}', NULL, NULL)",
                [leaf_id, note, digest, decision, score],
            )
        assert len(apply_answer(con, "h3", {"importance": 0.95, "reason": "a plan"}, "ollama:m", policy)) == 1
        assert len(decide_by_rules(con, policy, "LLM not reachable")) == 2
        got = con.execute(
            "SELECT leaf_id, content_hash, decision, stage, llm_importance FROM admission ORDER BY ALL"
        ).fetchall()
    assert got == [
        ("a", "h1", "admitted", "fallback", None),
        ("a", "h1", "admitted", "fallback", None),
        ("b", "h2", "dropped", "fallback", None),
        ("c", "h3", "admitted", "llm", 0.95),
        ("d", "h4", "admitted", "cheap", None),
    ]


# -- cues: answers to questions, life events, scripts without spaces ---------------------------


def test_a_short_reply_to_someones_question_is_judged_with_the_question(vault: Path) -> None:
    """"Yes." and "No, keep it." answer the question before them: the decision is admitted, not
    dropped as tiny chitchat; a short reply that does not decide goes to the gray band; a reply
    without content, or the same words with no question before them, are still chitchat."""
    question = "Should we cancel the Harbor Hall contract and take the 18,000 euro penalty?"
    chat_note(vault, CHAT, [
        ("Alice Chen", question, ""),
        ("Bob Stone", "Yes.", "admitted"),
        ("Dan Moe", "No, keep it.", "admitted"),
        ("Alice Chen", "Let me check the budget first", ""),
        ("Bob Stone", "Yes.", "dropped"),  # no question before it
        ("Alice Chen", "Can you call them?", ""),
        ("Alice Chen", "No, keep it.", "dropped"),  # the asker answering herself
        ("Bob Stone", "Dinner tonight?", ""),
        ("Dan Moe", "lol ok", "dropped"),
        ("Bob Stone", "Coming to the party?", ""),
        ("Dan Moe", "Totally! Bye Bob!", "dropped"),  # a name is no content
        ("Bob Stone", "Which room then?", ""),
        ("Dan Moe", "The blue one", "gray"),
    ])  # fmt: skip
    with Memory.open(make_config(vault)) as mem:
        mem.sync()
        rows = mem.index.query(
            "SELECT l.seq, l.text, a.decision, a.reason FROM admission a JOIN leaves l ON l.id = a.leaf_id ORDER BY l.seq"
        )
        # the rows' own read-back (a note decided in the sync's transaction) sees the same questions
        read_back = [entry.follows_question for entry in load_inputs(mem.index.con, [CHAT])]
    assert read_back == [False, True, True, False, False, False, False, False, True, False, True, False, True]
    wanted = ["", "admitted", "admitted", "", "dropped", "", "dropped", "", "dropped", "", "dropped", "", "gray"]
    for (_, text, decision, reason), want in zip(rows, wanted, strict=True):
        if want:
            assert decision == want, (text, reason)
    assert rows[1][3] == "decisive reply to a question: 1 word"
    assert rows[4][3].startswith("tiny chitchat") and rows[8][3].startswith("tiny chitchat")
    assert rows[10][3].startswith("tiny chitchat") and rows[12][3].startswith("short reply to a question")


def test_a_life_event_is_not_chitchat_and_counts_as_important() -> None:
    for text in ("I'm pregnant!", "Mom died this morning.", "We got engaged!", "Grandpa passed away.", "Oma ist gestorben.", "¡Estoy embarazada!"):
        decision = decide(leaf(text), Policy())
        assert decision.decision != "dropped", (text, decision.reason)  # the LLM is asked, at least
        assert decision.signals["boosts"]["life_event"]["value"] == 0.25
    for text in ("I'm pregnant!", "Mom died this morning."):
        assert decide(leaf(text), Policy(llm=False)).decision == "admitted", text
    assert decide(leaf("ok lol"), Policy()).signals["boosts"]["life_event"] == {"value": 0.0, "words": []}
    fired_up = "That talk really fired up my passion for teaching kids"
    assert decide(leaf(fired_up), Policy()).signals["boosts"]["life_event"]["words"] == []
    assert decide(leaf(fired_up + ", and then I got fired"), Policy()).signals["boosts"]["life_event"]["words"] == ["fired"]


def test_a_chinese_or_japanese_sentence_counts_its_content_like_its_english_version() -> None:
    english = decide(leaf("The contract is cancelled, we pay the penalty on Friday."), Policy())
    chinese = decide(leaf("合同已经取消了,我们周五付罚款。"), Policy())
    japanese = decide(leaf("契約はキャンセルされました。金曜日に違約金を払います。"), Policy())
    assert chinese.signals["content_words"] >= 5 and "date:周五" in chinese.signals["entities"]
    assert chinese.decision == "admitted" and chinese.score >= english.score
    assert japanese.score >= english.score
    assert cues.cjk_units(["合同已经取消了", "iphone价格"]) == ["合同", "已经", "取消", "了", "iphone", "价格"]
    assert not signals.is_content_word("我们") and signals.is_content_word("合同")


YES = "leaf_id IN (SELECT id FROM leaves WHERE text = 'Yes.')"


def test_rows_of_an_older_admission_version_are_decided_again(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new admission version (its rules changed) re-decides every stored row on the next sync,
    as a changed setting does: "Yes." stored as chitchat by version 1 becomes the decision it is."""
    chat_note(vault, CHAT, [("Alice Chen", "Should we cancel the contract?", ""), ("Bob Stone", "Yes.", "")])
    with Memory.open(make_config(vault)) as memory:
        memory.sync()
        policy = Policy.from_extra(memory.config.extra, memory.config.ollama_chat_model)
        fingerprint = memory.index.scalar("SELECT value FROM meta WHERE key = ?", [META_KEY])
        monkeypatch.setattr(decide_module, "ADMISSION_VERSION", "1")
        old = policy.fingerprint(importance.PROMPT_HASH)
        monkeypatch.undo()
        assert old != fingerprint
        with other_connection(memory.index.con) as cur:  # what version 1 stored
            cur.execute(f"UPDATE admission SET decision = 'dropped', reason = 'tiny chitchat' WHERE {YES}")
            cur.execute("UPDATE meta SET value = ? WHERE key = ?", [old, META_KEY])
    with Memory.open(make_config(vault)) as memory:
        memory.sync()  # nothing changed in the vault, but the version did
        rows = memory.index.query(f"SELECT decision, reason FROM admission WHERE {YES}")
        assert rows == [("admitted", "decisive reply to a question: 1 word")]
        assert memory.index.scalar("SELECT value FROM meta WHERE key = ?", [META_KEY]) == fingerprint


def test_editing_a_question_decides_the_reply_after_it_again(vault: Path) -> None:
    """A reply's admission goes by the message before it: when that message becomes a question,
    an incremental sync decides the unchanged reply again, as a cold rebuild does."""
    chat_note(vault, CHAT, [("Alice Chen", "Let me check the budget first", ""), ("Bob Stone", "Yes.", "")])
    with Memory.open(make_config(vault)) as memory:
        memory.sync()
        assert memory.index.scalar(f"SELECT decision FROM admission WHERE {YES}") == "dropped"
        chat_note(vault, CHAT, [("Alice Chen", "Should we cancel the contract?", ""), ("Bob Stone", "Yes.", "")])
        memory.sync()
        incremental = admission_rows(memory)
        assert memory.index.scalar(f"SELECT decision FROM admission WHERE {YES}") == "admitted"
        memory.reindex()
        assert admission_rows(memory) == incremental
