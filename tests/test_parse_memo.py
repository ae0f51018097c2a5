"""What the per-note work remembers instead of computing again: a registry's answers to link
targets, the matching form of names, the tokens of a section's heading prefix. Each answer is
the one computed afresh (the cold index's rows do not change: tests/test_sync_invariants.py)."""

from __future__ import annotations

import pytest

from vaultmind.entities.ids import name_key, normalize
from vaultmind.entities.registry import NO_MATCH, EntityNote, Match, Registry
from vaultmind.markdown import sections
from vaultmind.markdown.chunking import section_leaves


def _registry() -> Registry:
    return Registry.build(
        [
            EntityNote("person:alex-kim", "person", "Alex Kim", "entities/person/alex-kim.md", ("Alex",)),
            EntityNote("org:acme", "org", "Acme", "entities/org/acme.md", ()),
        ]
    )


def test_a_registry_looks_each_link_target_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up: list[str] = []
    original = Registry._by_link

    def counting(self: Registry, target: str) -> Match:
        looked_up.append(target)
        return original(self, target)

    monkeypatch.setattr(Registry, "_by_link", counting)
    registry = _registry()
    targets = ["entities/person/alex-kim", "Alex Kim", "acme.md", "Nobody", "entities/person/alex-kim", "Nobody"]
    answers = [registry.by_link(t) for t in targets * 3]
    assert looked_up == ["entities/person/alex-kim", "Alex Kim", "acme.md", "Nobody"]
    assert [a.entity_id for a in answers[:6]] == ["person:alex-kim", "person:alex-kim", "org:acme", None, "person:alex-kim", None]
    assert answers == answers[:6] * 3
    assert answers[3] == NO_MATCH
    # a registry built again answers afresh, the same
    assert [_registry().by_link(t) for t in targets] == answers[:6]


def test_name_key_is_normalize_remembered() -> None:
    names = ["  Zoë O'Brien ", "ALEX kim", "Alex  Kim", "", "Ægir", "José-María"]
    before = name_key.cache_info().hits
    assert [name_key(n) for n in names * 2] == [normalize(n) for n in names * 2]
    assert name_key("  Zoë O'Brien ") == "zoe o brien"
    assert name_key.cache_info().hits >= before + len(names)


def test_a_split_sections_heading_prefix_is_counted_once() -> None:
    sections._quarters.cache_clear()
    paragraphs = "\n\n".join(f"Paragraph {i} " + "word " * 30 for i in range(12))
    body = f"# Trip notes\n\n## Day one in the hills\n\n{paragraphs}\n"
    leaves = section_leaves(body, note_key="n.md", budget=100)
    assert len(leaves) > 3
    # every continuation chunk repeats its heading, and the chunks hold the paragraphs in order
    assert leaves[0].text.startswith("# Trip notes\n\n## Day one in the hills\n\n")
    assert all(leaf.text.startswith("## Day one in the hills\n\n") for leaf in leaves[1:])
    assert [int(p.split()[1]) for leaf in leaves for p in leaf.text.split("\n\n") if p.startswith("Paragraph")] == list(
        range(12)
    )
    info = sections._quarters.cache_info()
    assert info.hits > info.misses
