"""Counts said in words: "1 note", "2 notes" — singular or plural as the count asks."""

from __future__ import annotations


def counted(n: int, word: str, plural: str = "") -> str:
    """`n` and `word`, plural unless `n` is one: "1 note", "2 notes", "1 leaf", "3 leaves"."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {plural or word + 's'}"
