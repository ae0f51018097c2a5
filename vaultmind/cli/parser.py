"""The parser of `vaultmind` and of each of its commands, and how a mistake in the arguments is said.

argparse prints a mistake it catches (`--limit 0`, an unknown option, a date it cannot read) as
a usage text on stderr, whatever the command was asked: a script that passed `--json` got JSON
for a mistake found later (`--limit 9999`) and none for these. Here a mistake is raised, and
said once, as JSON on stdout under `--json` and as argparse's usage text otherwise; exit 2
either way.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import NoReturn

from vaultmind.errors import UsageError

USAGE_EXIT = 2  # argparse's, and a UsageError's


class ArgumentMistake(Exception):
    """A mistake in the arguments, with the (sub)command that caught it and what to do."""

    def __init__(self, parser: argparse.ArgumentParser, message: str, hint: str | None = None):
        super().__init__(message)
        self.parser = parser
        self.message = message
        self.hint = hint


class CommandParser(argparse.ArgumentParser):
    """The root parser's class, and so every subcommand's (argparse makes a subparser of its
    parent's class): a mistake is raised as `ArgumentMistake` for `say_mistake`, not printed."""

    def error(self, message: str) -> NoReturn:
        raise ArgumentMistake(self, message)


def wants_json(argv: Sequence[str]) -> bool:
    """Whether `--json` is among the options (not after a `--`, where it would be a value), as
    argparse reads it: written out, or shortened (`--js`; no other option starts so)."""
    words = list(argv)
    options = words[: words.index("--")] if "--" in words else words
    return any(len(word) >= len("--j") and "--json".startswith(word) for word in options)


def say_mistake(mistake: ArgumentMistake, argv: Sequence[str]) -> NoReturn:
    """Say `mistake` as `{"error": …}` on stdout when `--json` was given, else as argparse does
    (the command's usage and the error on stderr, then the hint); exit 2."""
    parser = mistake.parser
    if wants_json(argv):
        hint = mistake.hint or f"`{parser.prog} --help` lists what it takes"
        print(json.dumps({"error": UsageError(mistake.message, hint=hint).to_dict()}, ensure_ascii=False))
    else:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {mistake.message}", file=sys.stderr)
        if mistake.hint:
            print(f"vaultmind: hint: {mistake.hint}", file=sys.stderr)
    sys.exit(USAGE_EXIT)
