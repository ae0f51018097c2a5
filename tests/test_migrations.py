"""The shipped migrations: each one's text locked (an index that applied a migration never
reads it again), a migration's statements read as SQL reads them, what `status` says of the
schema, and an upgrade that takes seconds said on stderr."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import duckdb
import pytest
from duckdb.sqltypes import DOUBLE

import vaultmind.index.migrate as migrate
import vaultmind.index.opening as opening
from tests.conftest import run_main, write
from vaultmind.index.schema import migrations

# Every shipped migration's name and the sha256 of its text. A new migration appends its line;
# a shipped one is never edited (an index that applied it never reads it again: an edit would
# reach only the indexes created after it) — write a new migration instead.
SHIPPED = (
    ("0001_foundation", "e73a97e68936173a339a0c871eaa675265ff164c93c68c6f42561fb502987451"),
    ("0002_lookup_indexes", "59169286c49c069d693b1eb4c850ff6efed00fc8b0d902a63b6f0a9e68875676"),
    ("0003_entities", "a84327afa3c4452acddc97e93a1353ea66cc45679416a435491eb4f77eea25d7"),
    ("0004_admission_queue", "8b31e0e774d90620b2a247f3c0cd4c12fe225742eb4a3281d102d90cd9cf1605"),
    ("0005_trees", "efc5c8a34ecf48cbce8d86ef5b4a54fac78136a16a57f77e9fec4da4fc6161cd"),
    ("0006_term_df", "f625cbaf5cea495d785c8d510d81c63d3bb3ea3ab2c2441be7cab86a52148148"),
    ("0007_stemmed_terms", "bb8aa0c3aeb9e80a41ce5479bef46f46a913c5b0014244f56ffb8a856330df0b"),
    ("0008_drop_postings_term_index", "54c7e63418785f92070e4c9f6ff098ac8aa5062fe0d21f98d2dae5eb915cc33a"),
    ("0009_drop_term_df", "bc546234143b00673254b571b3c7a387e40d6b811c81b5275caebb9165e193f0"),
    ("0010_note_numbers", "240dfc8925296505916a897dca7137da56b9755bd575ad5849f6ae95de3f8104"),
    ("0011_stop_words_unfolded", "b860b9f832779dfecb8116972dc02d6119fe509a2d16aa839887b911a571bbfa"),
    ("0012_drop_composite_indexes", "616ccd33b2dbd7ff40f58317a5160c6b5d46277fb3b4bbdd1b8747e43d60204b"),
    ("0013_float16_vectors", "3153b88053c0017ad991d1b859c6c1ca2a37b9edaa274916fee1a9b3a802a307"),
    ("0014_irregular_verbs", "79e0479a10e8c82757f956a3a79cec79f6392263b9b931b2d3540852de8ce31c"),
    ("0015_named_compression", "32ce5e22801d4bbf953a564cebcf12aa99e5965006584bddc699fd4cb0a47047"),
    (
        "0016_drop_admission_occurrence_leaf_indexes",
        "720a9a1dd7d995a4f2bfc15492fae19dd0792b63945cd35ab8305d628f402beb",
    ),
    (
        "0017_drop_embeddings_and_leaf_note_indexes",
        "03f8b5e1be7c7f1461fb15a70be6a9233e6a92b8b9c2bd158277835c761541fe",
    ),
    ("0018_note_ctime", "ff262cf441f24c7c3f529e172039eb3c6e9f6c346033b7914e0cd790e7060ae3"),
    ("0019_document_times", "d5b49ead49b1d151f9a83efa17d76de308d348c576f9cc0e03c34cd9debfbefc"),
    ("0020_email_subject_terms", "839471f15ed7a9075c3eea1bc2e163192a7bfdef8a54ee6db19acee91d594068"),
    ("0021_heading_chain_anchors", "00d3e3c8a46c1e94830129820ee7ae6844d64ebaaf87b284f578c26908624c87"),
    ("0022_properties_leaves", "e06adc1d62844b9b336200ed95d8dee26cb80b9e37586cc355cd45c11802f6b5"),
    ("0023_user_note_titles", "4873ecd0cb67ff4887b8bc252c76537ec494ba49ae94671007f9f1e893bb9ad2"),
    ("0024_derived_nouns", "1a40d3bbbca6286ee03b78ce3bdbee91d8b477bf99d3262b14a0f81d9850fccd"),
    ("0025_email_recipients", "592dad8b512f95377c883ac8ca629cc37a35528cda967d34aa8fb4f9e8d10b5e"),
    ("0026_note_inode", "34ddbecedce07d37a9908a3c89ffa35840104d22c5a4142fbca1d54f528ec7e5"),
    ("0027_user_note_dates", "26e5e38c59a237525b51a247e0555922cbda1cb92b756beadc487efea65dc431"),
    ("0028_derived_message_refs", "f4735af94bf2d7ed9ac3779d761e17ae2f3f72ab65c98acaec4c2783cbb88177"),
    ("0029_postings_named_compression", "da22baeb38149f34649b2ba062de51415226a11bbcf3be22848f8af30ab762a6"),
    ("0030_occurrence_reads", "c8e81cbf24056413a5cd9494ccfa9d052df63f87f7a21cd0a02ccabac7917680"),
    ("0031_unclosed_math_and_comments", "99aaefdbb96ed86bc8f1ef0834818c3dc62130211cb143f6d71cc411a353316c"),
    ("0032_section_leaf_ids_by_text", "dec4945af9a0febd8ab05e68b89afcb6c17f2cc3cb326e1d611c8aeef3b24bd3"),
    ("0033_conservative_token_counts", "f909116687d3716eafe4f274ce38d24512a891504a9d7c2645d511176151ccc4"),
    ("0034_word_token_counts", "d6e43f029441645f2400a6600935673b9e2c3d1bd250dcc441f8dfec42af7881"),
    ("0035_front_matter_markdown_links", "b321c07711f4a1b11fa8f11e6eb8d9dadc52276cb73acfa094199aeb425ef649"),
    ("0036_caps_and_cyrillic_token_counts", "09ad7d1df330e2099ae201e2ed86d1ad04e22bfd6cdcb15da0a255e26f53ca84"),
    ("0037_long_texts_embedded_whole", "9f974e31edcd3b2794ff36157584bfac1b3eb3f1c93774bc4240a4cef9daf959"),
    ("0038_compatibility_folded_terms", "cc2882b01bad725f6e008de729e2bcdad1a47ed56d8b524d4b7009190ac5974d"),
    ("0039_full_width_entity_names", "0e0519a0bd6e35d7e980fec93cf74163c91552a7e19a2f1aa42d2fd1c127c355"),
    ("0040_names_hash_read_as_shown", "dc76b67c8f604be668ff80a697fb375d5a707887a194e87d288889fc2d162fb7"),
    ("0041_talks", "22485038b73a2833a13651687d5522e75c1b7c8a11c409d554224834268ed033"),
)


def test_shipped_migrations_are_never_edited_only_appended_to() -> None:
    shipped = [(name, hashlib.sha256(sql.encode()).hexdigest()) for name, sql in migrations()]
    edited = [name for (name, digest), (_, locked) in zip(shipped, SHIPPED, strict=False) if digest != locked]
    assert not edited, f"shipped migrations edited: {edited}; put the change in a new migration"
    assert [name for name, _ in shipped[: len(SHIPPED)]] == [name for name, _ in SHIPPED], (
        "shipped migrations renamed"
    )
    assert shipped[len(SHIPPED) :] == [], "a new migration: append its name and sha256 to SHIPPED"
    assert len(shipped) == len(SHIPPED), "a shipped migration was removed"


def test_a_semicolon_or_double_dash_in_a_migration_s_string_is_the_string_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    quoted = (
        "9999_quoted",
        "-- rebuild: no\n"
        "CREATE TABLE quoted (said VARCHAR); /* a comment; not run */\n"
        "INSERT INTO quoted VALUES ('a; b'), ('<!-- c -->'), ('it''s -- no comment;'); -- a comment; not run\n"
        "INSERT INTO quoted SELECT \"said\" || '!' FROM quoted WHERE said = 'a; b';",
    )
    monkeypatch.setattr(migrate, "migrations", lambda: (*migrations(), quoted))
    con = duckdb.connect()
    migrate.migrate(con)
    said = sorted(row[0] for row in con.execute("SELECT said FROM quoted").fetchall())
    assert said == ["<!-- c -->", "a; b", "a; b!", "it's -- no comment;"]
    assert con.execute("SELECT name FROM migrations ORDER BY seq DESC LIMIT 1").fetchone() == ("9999_quoted",)


@pytest.fixture
def indexed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    vault = tmp_path / "vault"
    write(vault, "a.md", "# A\n\nThe kayak trip.\n")
    assert run_main(capsys, "init", "--existing", str(vault))[0] == 0
    assert run_main(capsys, "reindex", "--vault", str(vault), "--json")[0] == 0
    return vault


def test_status_reports_the_schema_version_the_index_holds(
    indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data, _ = run_main(capsys, "status", "--vault", str(indexed), "--json")
    assert code == 0 and data["index"]["schema_version"] == 1
    assert data["index"]["migration"] == migrations()[-1][0]
    con = duckdb.connect(str(indexed / ".vaultmind" / "index.duckdb"))
    con.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")  # created under another scheme
    con.close()
    code, data, _ = run_main(capsys, "status", "--vault", str(indexed), "--json")
    assert code == 0 and data["index"]["schema_version"] == 7


@pytest.mark.slow
def test_a_migration_that_takes_seconds_is_said_on_stderr(
    indexed: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`status` on an index an older version wrote, whose upgrade's one statement runs 3 s (a
    copy of a large table): the migration is named on stderr while it runs, not a silence."""
    opened = opening.connect

    def connect(path: Path) -> duckdb.DuckDBPyConnection:
        con = opened(path)
        con.create_function(
            "pause", lambda seconds: time.sleep(seconds) or seconds, [DOUBLE], DOUBLE, side_effects=True
        )
        return con

    monkeypatch.setattr(opening, "connect", connect)
    monkeypatch.setattr(migrate, "TICK_S", 0.1)
    monkeypatch.setattr(
        migrate, "migrations", lambda: (*migrations(), ("9999_slow", "-- rebuild: no\nSELECT pause(3.0);"))
    )
    started = time.monotonic()
    code, _, err = run_main(capsys, "status", "--vault", str(indexed))
    elapsed = time.monotonic() - started
    assert code == 0, err
    lines = err.splitlines()
    assert "vaultmind: upgrading the index (migration 9999_slow) 0/1 (0%)" in lines, err
    assert "vaultmind: upgrading the index (migration 9999_slow) 1/1 (100%)" in lines, err
    assert elapsed >= 3.0
    # an upgrade done in less than the progress line's two seconds says nothing
    monkeypatch.setattr(
        migrate, "migrations", lambda: (*migrations(), ("9999_slow", ""), ("9999_quick", "SELECT 1;"))
    )
    code, _, err = run_main(capsys, "status", "--vault", str(indexed))
    assert code == 0 and "upgrading" not in err, err
