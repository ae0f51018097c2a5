"""Search terms (stemmed; an index from before rebuilds them) and notes kept out of answers."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from vaultmind.admission.signals import WORD_RE
from vaultmind.config import load_config
from vaultmind.index.lexical import split_words, terms, words
from vaultmind.index.schema import derived_tables, migrations, rebuilds
from vaultmind.memory import Memory

from .conftest import write

_REFERENCE_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def test_ascii_words_split_as_the_word_pattern_finds_them() -> None:
    pieces = ["don't", "a''b", "x_'y", "\x1cgap", "'quoted'", "rock'n'roll", "snake_case", "a1b2", "x--y", "it's.", "''", "'", "Tab\tEnd",
              "URL/path?q=1", "e-mail", "#tag", "[[Link|alias]]", "3.14", "O'Neil's", "ÉTÉ", "日本語", "’curly’"]  # fmt: skip
    rng = random.Random(7)
    for _ in range(500):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert words(text) == _REFERENCE_WORD.findall(text.lower()), text
        low = text.lower().replace("’", "'")  # as the admission signals split a text
        assert split_words(low, WORD_RE) == WORD_RE.findall(low), text


def test_word_forms_share_a_term() -> None:
    assert terms("painted") == terms("painting") == terms("paints") == terms("paint")
    assert terms("She signed up") == terms("sign up")
    assert terms("the agencies") == terms("agency")
    assert terms("Café déjà vu") == ["café", "déjà", "vu"], "non-ASCII words are not stemmed"
    assert terms("東京タワー") == ["東京", "京タ", "タワ", "ワー"]


def test_irregular_past_forms_share_their_verbs_term() -> None:
    assert terms("I won my fourth tournament") == terms("win fourth tournament")
    assert terms("went") == terms("go") == terms("gone") and terms("bought") == terms("buying")
    assert terms("I saw a saw") == terms("saw saw") != terms("see see"), "ambiguous forms are left alone"
    assert terms("I won't") != terms("win"), "a contraction is no past form"


def test_goes_is_the_term_of_go() -> None:
    assert terms("she goes hiking") == terms("go hiking") == terms("went hiking"), "the stemmer alone makes 'goe'"
    assert terms("heroes echoes") == terms("hero echo"), "other -oes plurals were never the stemmer's trouble"


def test_the_noun_of_an_act_shares_its_verbs_term() -> None:
    assert terms("Decision: the decisions") == terms("decide decided") == ["decid", "decid"]
    assert terms("the payment") == terms("paid") and terms("analyse") == terms("analysis") == terms("analyzed")
    assert terms("the movement") != terms("move"), "a noun as often something else is left alone"


def test_a_stop_word_is_dropped_before_its_plural_is_folded() -> None:
    assert terms("What does he do?") == [], "'does' is a stop word, not the plural of 'doe'"
    assert terms("Emil does pottery") == terms("Emil pottery")


@pytest.mark.parametrize(
    ("text", "other", "question"),
    [
        ("We were painting the fence all weekend.", "The fence is white.", "who painted it"),
        # an irregular past meets the base form a question asks in
        ("I won my fourth table tennis tournament on Friday!", "The tournament starts at noon.", "did he win"),
        # the noun of an act meets its verb
        ("Decision: we move the public launch to 23 April.", "The public launch is in April.", "when did we decide"),
    ],
)
def test_a_query_finds_other_forms_of_its_words(vault: Path, text: str, other: str, question: str) -> None:
    write(vault, "notes/match.md", text + "\n")
    write(vault, "notes/other.md", other + "\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        hits = memory.search(question, limit=5)["hits"]
        assert [h["note_path"] for h in hits] == ["notes/match.md"]


def test_an_index_from_before_stemming_rebuilds_its_terms(vault: Path) -> None:
    write(vault, "notes/art.md", "We were painting the fence all weekend.\n")
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        # Make it look like an index written before the stemming migration: unstemmed terms.
        memory.index.con.execute("UPDATE postings SET term = 'painting' WHERE term = 'paint'")
        memory.index.con.execute("DELETE FROM migrations WHERE name >= '0007_stemmed_terms'")  # and later ones
        _without_later_columns(memory)
        memory.index.checkpoint()
    with Memory.open(config) as memory:
        assert memory.index.get_meta("needs_rebuild") == "1"
        memory.sync()
        assert memory.index.get_meta("needs_rebuild") is None
        assert memory.index.scalar("SELECT count(*) FROM postings WHERE term = 'painting'") == 0
        assert [h["note_path"] for h in memory.search("painted", limit=5)["hits"]] == ["notes/art.md"]


def _without_later_columns(memory: Memory) -> None:
    """The leaves table as it was before migration 0025 added the recipients' columns (0015,
    run again, makes the table anew with the columns of its time)."""
    con = memory.index.con
    for (name,) in con.execute("SELECT index_name FROM duckdb_indexes() WHERE table_name = 'leaves'").fetchall():
        con.execute(f"DROP INDEX {name}")  # (0015 makes them again)
    for column in ("mail_to", "mail_cc"):
        con.execute(f"ALTER TABLE leaves DROP COLUMN {column}")


def test_an_index_with_a_term_df_table_drops_it(vault: Path) -> None:
    """Migration 0009 drops `term_df` (no reader left) and changes no derived row, so it asks
    for no rebuild (`-- rebuild: no`); 0010 numbers the notes and does. A reindex no longer
    empties the table that is gone."""
    shipped = dict(migrations())
    assert not rebuilds(shipped["0009_drop_term_df"]) and rebuilds(shipped["0010_note_numbers"])
    assert "term_df" not in derived_tables() and "postings" in derived_tables()
    write(vault, "notes/art.md", "We were painting the fence all weekend.\n")
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        leaves = memory.index.query("SELECT id, text FROM leaves ORDER BY id")
        memory.index.con.execute("CREATE TABLE term_df (term VARCHAR NOT NULL, df INTEGER NOT NULL)")
        memory.index.con.execute("DELETE FROM migrations WHERE name >= '0009_drop_term_df'")
        _without_later_columns(memory)
        memory.index.checkpoint()
    with Memory.open(config) as memory:
        assert "term_df" not in memory.index.tables
        assert memory.index.get_meta("needs_rebuild") == "1"  # for 0010
        memory.sync()
        assert memory.index.query("SELECT id, text FROM leaves ORDER BY id") == leaves
        assert [h["note_path"] for h in memory.search("painted", limit=5)["hits"]] == ["notes/art.md"]
        memory.reindex()
        assert memory.index.query("SELECT id, text FROM leaves ORDER BY id") == leaves


def test_a_readme_note_is_indexed_but_never_answers(vault: Path) -> None:
    write(vault, "Welcome.md", "---\nvaultmind: readme\n---\n# Welcome\n\nAsk: where is the fence paint? See [[art]].\n")
    write(vault, "notes/art.md", "The fence paint is in the shed. #diy\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        assert memory.index.scalar("SELECT count(*) FROM notes WHERE path = 'Welcome.md'") == 1
        assert memory.index.scalar("SELECT count(*) FROM leaves WHERE note_path = 'Welcome.md'") == 0
        assert memory.index.scalar("SELECT count(*) FROM links WHERE src_path = 'Welcome.md'") == 1
        hits = memory.walk("where is the fence paint?", limit=5)["hits"]
        assert [h["note_path"] for h in hits] == ["notes/art.md"]
