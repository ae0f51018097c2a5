from __future__ import annotations

import base64
import hashlib
import random
import uuid

from vaultmind.markdown.chunking import section_leaves
from vaultmind.markdown.tokens import (
    MAX_CHARS_PER_TOKEN,
    count_tokens,
    opening_discount,
    running_quarters,
    token_quarters,
)

PROSE = (
    "We met at the old boathouse on Saturday morning to plan the autumn trip. Maria had already "
    "booked the cabin near the lake, and she wanted everyone to bring warm clothes because the "
    "nights get surprisingly cold in October. Tom offered to drive, but his car only fits four "
    "people, so we agreed that Priya would take the train and meet us at the station. Before we "
    "left, we wrote a short list of groceries, checked the weather forecast, and promised to "
    "send photos to the group when we arrived. Everybody seemed relieved that the planning was "
    "finally finished, although nobody remembered who was supposed to bring the canoe paddles."
)
CHAT = (
    "Alice: hey, are we still on for dinner tomorrow?\n"
    "Bob: yes! I booked the Thai place for 7, hope that's ok\n"
    "Alice: perfect, I'll bring the tickets for the concert too\n"
    "Bob: great, can you also remind Sam? he never reads the group chat lol\n"
    "Alice: sure, I'll text him tonight\n"
)
MAIL = (
    "Hi Dana,\n\nThanks for sending the contract over. I've read it through and everything looks "
    "fine except the cancellation clause in section 4, which seems stricter than what we "
    "discussed on the phone. Could you check with your legal team whether the notice period can "
    "be shortened to two weeks?\n\nBest regards,\nAlice\n\n> On Monday, Dana wrote:\n> Please "
    "find the signed copy attached.\n"
)
LINKS = (
    "## Reading list\n\n- [[Books/Thinking in Systems]] by Donella Meadows, see also "
    "[the summary](https://example.org/notes/thinking-in-systems) and [[Notes on feedback loops]].\n"
    "- Read the [release notes](https://github.com/example/project/releases) before upgrading.\n"
    "- #reading #systems\n"
)
CODE = (
    "def leaf_budget(tokens: int, prefix: str) -> int:\n"
    '    """The tokens left for a leaf\'s text once its heading prefix is in."""\n'
    "    used = count_tokens(prefix) if prefix else 0\n"
    "    return max(MIN_CHUNK_TOKENS, tokens - used)\n"
)
JSON = (
    '{"id": "msg-0042", "user": "U024BE7LH", "ts": "1709542800.000100", "text": "see you at 9", '
    '"reactions": [{"name": "thumbsup", "count": 3}]}'
)
GERMAN = (
    "Die Versicherungsgesellschaft schickte den Jahresabschlussbericht an alle Vertragspartner. "
    "Unsere Mitarbeiterzufriedenheitsumfrage ergab zahlreiche Verbesserungsvorschläge."
)
FRENCH = "Élodie a réservé un hôtel près de la Côte d'Azur ; le séjour coûtera environ trois cents euros."
URL = "https://docs.example.org/guide/install?version=3.12&lang=en#section-4"
CAPS = "PLEASE SEND THE SIGNED LEASE BEFORE FRIDAY"
CAPS_NOTE = (
    "MEETING NOTES: THE BOARD APPROVED THE NEW BUDGET. ACTION ITEMS FOR NASA AND THE FBI ARE DUE ON FRIDAY."
)
RUSSIAN = (
    "Вчера мы встретились в Москве и обсудили поездку в следующем месяце. Договор аренды истекает "
    "в марте, поэтому Анна позвонит хозяйке квартиры."
)
UKRAINIAN = "Вчора ми зустрілися у Києві та обговорили поїздку наступного місяця."
GREEK = "Χθες συναντηθήκαμε στην Αθήνα και συζητήσαμε το ταξίδι του επόμενου μήνα."
HEBREW = "נפגשנו אתמול בתל אביב ודיברנו על הטיול בחודש הבא."
ARABIC = "التقينا أمس في القاهرة وناقشنا رحلة الشهر المقبل."
CAMEL = "runningQuarters = tokenWeights(sectionChunker.bodyText, maxChunkTokens)"
NUMBERS = "Call +44 20 7946 0958 on 2024-03-15 at 09:41 about invoice 58213, total €1,500.00"
IDS = "a3f9c2e17b0d4e6f8a91 6f1e2d3c-4b5a-4978-8e9f-0a1b2c3d4e5f dGhlIHF1aWNrIGJyb3duIGZveA=="
CJK = "我们昨天在北京见面，讨论了下个月的旅行计划。昨日は東京で友達と会いました。어제 서울에서 친구를 만났습니다."
EMOJI = "Great trip 🎉🎉 thanks 🙏 see you soon 😀👍 done ✅"

# (text, tokens of a 32k SentencePiece vocabulary, of a 131k byte-level BPE one, the most the
# estimate may count as a multiple of the larger): measured with both tokenizers
# (docs/vault-format.md)
MEASURED = [
    (PROSE, 132, 129, 1.25),
    (CHAT, 82, 73, 1.25),
    (MAIL, 92, 78, 1.25),
    (LINKS, 89, 70, 1.4),
    (CODE, 70, 60, 1.4),
    (JSON, 76, 76, 1.4),
    (GERMAN, 57, 38, 1.25),
    (FRENCH, 35, 25, 1.25),
    (URL, 27, 22, 1.7),
    (CAPS, 15, 14, 1.7),
    (CAPS_NOTE, 35, 36, 1.7),
    (RUSSIAN, 63, 44, 1.25),
    (UKRAINIAN, 30, 25, 1.25),
    (GREEK, 74, 30, 1.3),
    (HEBREW, 50, 24, 1.3),
    (ARABIC, 42, 15, 1.3),
    (CAMEL, 19, 18, 2.5),
    (NUMBERS, 56, 55, 1.1),
    (IDS, 78, 76, 1.2),
    (CJK, 66, 39, 1.25),
    (EMOJI, 17, 26, 1.3),
]


def test_count_tokens_weights() -> None:
    assert count_tokens("") == 0
    assert count_tokens("word") == 4  # the text's first run of letters: 1 a letter
    assert count_tokens("a word") == 2  # a space before a word: 0; a word's 2nd to 6th letters: 0
    assert count_tokens("x meeting") == 3  # 1 + 1 + its 7th letter on: 0.5 each
    assert count_tokens("x documentation") == 6  # 1 + 1 + 7 letters past the 6th × 0.5, rounded up
    assert count_tokens("    ") == 1  # whitespace opening the text or after whitespace: 0.25 each
    assert count_tokens("x\n\ny") == 4  # a line break: 1
    assert count_tokens("{}();") == 5  # punctuation: 1 each
    assert count_tokens("x ABC") == 3  # an uppercase letter after one in a word, to its 6th: 0.5
    assert count_tokens("x ABCDEFGH") == 7  # 1 + 0 + 1 + 0.5 × 5 + from its 7th letter on 1 each, rounded up
    assert count_tokens("x /ABC") == 5 and count_tokens("x 3ABC") == 6  # after punctuation or a digit: 1
    assert count_tokens("x\nABC") == 5  # and after a line break (a random run of capitals opening a line)
    assert count_tokens("x AbC") == 3  # an uppercase letter after a lowercase one (camelCase): 1
    assert count_tokens("жук") == 2 and count_tokens("x дом") == 3  # Cyrillic after Cyrillic: 0.5
    assert count_tokens("ώρα") == 4 and count_tokens("שלום") == 5  # Greek, Hebrew: 1.25 a character
    assert count_tokens("x /path") == 4  # 1 + 0 + 1 + 1 + a run after punctuation: 0.25 a letter
    assert count_tokens("f3a9") == 5  # a digit after a letter: 1.25; a letter after a digit: 1
    assert count_tokens("x ab3cd") == 6  # 1 + 0 + 1 + 0 + 1.25 + a run after a digit: 1 a letter
    assert count_tokens("2024 7") == 7  # digits 1 each, one after whitespace (or opening) 2
    assert count_tokens("é") == 1 and count_tokens("日本語") == 5 and count_tokens("🙂") == 4  # by UTF-8 bytes


def test_count_tokens_is_at_least_what_tokenizers_give_and_close_on_prose() -> None:
    for text, spm, bpe, most in MEASURED:
        assert max(spm, bpe) <= count_tokens(text) <= most * max(spm, bpe), text


def test_english_prose_counts_close_to_tokenizers() -> None:
    """English prose, chat and mail count at most 1.25 times what the larger tokenizer gives
    (they counted about twice as much when every letter weighed half a token)."""
    for text, spm, bpe, _ in MEASURED[:3]:
        assert count_tokens(text) <= 1.25 * max(spm, bpe)
    words = "x" + " meeting" * 100  # a word of seven letters and its space: 1.5 tokens
    assert count_tokens(words) == 151


def test_count_tokens_never_under_counts_code_and_cjk() -> None:
    code = "def f(x):\n    return {k: v for k, v in x.items() if v != None}\n"
    cjk = "记忆是一种能力。" * 10
    for text in (code, cjk):
        assert count_tokens(text) >= (len(text) + 3) // 4  # characters / 4, rounded up
    # common Chinese and Japanese text takes about 1.1 tokens a character in a 32k vocabulary
    assert count_tokens(cjk) >= 1.12 * len(cjk)


def test_count_tokens_never_under_counts_numbers() -> None:
    """Tokenizers that split digits give each digit (and the space before a number) a token:
    dates, times, amounts and ids count a token a digit, not half."""
    rng = random.Random(4)
    numbers = " ".join(str(rng.randrange(10 ** rng.randint(0, 11), 10 ** rng.randint(12, 13))) for _ in range(200))
    for text in (numbers, "2024-03-15 09:41", "+44 20 7946 0958", "€1,500.00 on 15 March"):
        digits_and_spaces = sum(c.isdigit() or c == " " for c in text)
        assert count_tokens(text) >= sum(c.isdigit() for c in text) + text.count(" ") // 2
        assert count_tokens(text) >= digits_and_spaces * 0.9


def test_count_tokens_never_under_counts_hashes_base64_and_uuids() -> None:
    """Random letters and digits break into pieces of one or two characters: a tokenizer
    gives hex about 0.90 tokens a character, a UUID 0.93, base64 0.82 (measured on a 32k
    SentencePiece vocabulary and a 131k BPE one; docs/vault-format.md)."""
    rng = random.Random(7)
    hexes = "\n".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(50))
    uuids = "\n".join(str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(50))
    b64 = "\n".join(base64.b64encode(rng.randbytes(48)).decode() for _ in range(50))
    assert count_tokens(hexes) >= 0.95 * len(hexes)
    assert count_tokens(uuids) >= 0.95 * len(uuids)
    assert count_tokens(b64) >= 0.85 * len(b64)
    for lines, least in ((hexes, 0.9), (uuids, 0.9), (b64, 0.8)):
        for line in lines.splitlines():  # each alone, and after a word, not only on average
            assert count_tokens(line) >= least * len(line)
            assert count_tokens("id " + line) >= least * len(line) + 1


def test_all_caps_and_cyrillic_count_close_to_tokenizers() -> None:
    """ALL-CAPS words and Cyrillic words break into pieces of about two characters, not one a
    character: they counted about twice what tokenizers give when every capital after the
    first, and every Cyrillic character, weighed a token."""
    for text, spm, bpe, _ in MEASURED:
        if text in (CAPS, CAPS_NOTE):
            assert count_tokens(text) <= 1.7 * max(spm, bpe)
        if text in (RUSSIAN, UKRAINIAN):
            assert count_tokens(text) <= 1.25 * max(spm, bpe)


def test_count_tokens_never_under_counts_random_capitals_or_other_scripts() -> None:
    """A random run of capitals (a key, a code) takes about 0.68 tokens a character: past a
    word's 6th letter, and after punctuation or a digit, a capital still weighs a token. Greek,
    Hebrew and Arabic take a token a character and more in a 32k vocabulary (they counted a
    token a character, under it, when they weighed as accented Latin)."""
    rng = random.Random(11)
    for _ in range(200):
        word = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(rng.randint(8, 24)))
        assert count_tokens("id " + word) >= 0.7 * len(word) + 1
        assert count_tokens("id:" + word) >= 0.95 * len(word)
    for text in (GREEK, HEBREW, ARABIC):
        assert count_tokens(text) >= 1.2 * (len(text) - text.count(" "))


def test_count_tokens_counts_emoji_by_their_bytes() -> None:
    """An emoji outside a vocabulary falls back to a token a byte: four."""
    emoji = "🎉🙏😀👍🔥🚀🤖📅💡🥳"
    assert count_tokens(emoji) == 4 * len(emoji) == len(emoji.encode())


CUT_TEXTS = (
    "abc",
    "ab1c",
    "a 12",
    "x\n3",
    "hex f3a9 ok",
    "the documentation",
    "see /path/to/notes, then",
    "Hello, 世界 meeting",
    "x  ab3cdefgh",
)


def test_token_quarters_are_at_most_the_sum_of_their_parts() -> None:
    a, b = "Hello, 世界 ", "documents(x) + 1\n"
    running = running_quarters(a + b)
    assert token_quarters(a + b) == running[-1]
    # b opens with a run of letters, which weighs less after a space than opening a text
    # (1 + 0 × 5 + 0.5 × 3 against 1 a letter): the whole counts less than its parts
    assert token_quarters(a + b) == token_quarters(a) + token_quarters(b) - opening_discount(a + b, len(a), running)
    assert opening_discount(a + b, len(a), running) == 4 * 9 - (4 + 0 * 5 + 2 * 3)
    for text in CUT_TEXTS:
        for cut in range(len(text) + 1):
            assert token_quarters(text) <= token_quarters(text[:cut]) + token_quarters(text[cut:])


def test_running_quarters_are_token_quarters_of_every_prefix() -> None:
    text = "Hello, world!\n\tcode();  日本語 é 🙂\r\nend_ 2024-03-15 f3a9 ALL caps documentation /path\ud800"
    for whole in (text, *CUT_TEXTS):
        running = running_quarters(whole)
        assert running.tolist() == [token_quarters(whole[:i]) for i in range(len(whole) + 1)]
        for start in range(len(whole)):  # any span: a difference plus what its opening saves
            for end in range(start, len(whole) + 1):
                expected = token_quarters(whole[start:end])
                assert int(running[end] - running[start]) + opening_discount(whole, start, running, end) == expected
    assert running_quarters("").tolist() == [0]
    rng = random.Random(5)  # short texts are summed by bytes, long ones (and running counts) by numpy
    pieces = ["a", "Z", " ", "  ", "\n", "3", "-", "?", "é", "日", "🙂", "\ud800", "word", "meeting", "Documentation"]
    for _ in range(500):
        whole = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 120)))
        assert token_quarters(whole) == running_quarters(whole)[-1], whole


def test_no_token_holds_more_than_max_chars_per_token() -> None:
    """The densest text, six-letter words after a space, holds `MAX_CHARS_PER_TOKEN`
    characters a token; hard splits and the evidence block's excerpts rely on the bound."""
    dense = "x" + " abcdef" * 300
    assert count_tokens(dense) == 1 + 300
    assert len(dense) <= MAX_CHARS_PER_TOKEN * count_tokens(dense)
    rng = random.Random(3)
    alphabet = "ab Ab1.\n é日"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60)))
        assert len(text) <= MAX_CHARS_PER_TOKEN * (count_tokens(text) + 1)


def test_english_leaves_hold_the_text_their_budget_intends() -> None:
    """A leaf of English prose holds about as much text as its budget in real tokens: 20
    paragraphs of about 130 tokens each in leaves of 512 are 6 leaves, not twice as many."""
    body = "\n\n".join([PROSE] * 20) + "\n"
    leaves = section_leaves(body, note_key="prose.md", budget=512)
    assert len(leaves) <= 7
    assert all(leaf.token_count <= 512 for leaf in leaves)
