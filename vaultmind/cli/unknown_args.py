"""Arguments a command does not take, said by that command.

argparse reports them from the top-level parser ("usage: vaultmind [-h] … COMMAND …", then
"unrecognized arguments: --evidense"), which shows neither the flags the command has nor
why. Here the command that got them says so with its own usage, names the flag that was
probably meant, and says to quote a question typed without quotes.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence
from typing import NoReturn

from vaultmind.cli.parser import ArgumentMistake

COMMAND_PARSER = "command_parser"
"""The namespace attribute naming the (sub)command that parsed the arguments."""


def mark_commands(parser: argparse.ArgumentParser) -> None:
    """Make every command and subcommand record itself in the namespace as `command_parser`;
    the innermost one parsed is left there (argparse copies a subcommand's namespace last)."""
    parser.set_defaults(**{COMMAND_PARSER: parser})
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                mark_commands(command)


def refuse_unknown(args: argparse.Namespace, extra: Sequence[str], fallback: argparse.ArgumentParser) -> NoReturn:
    """Raise the mistake of `extra`, for the command that got them, with what was meant."""
    parser: argparse.ArgumentParser = getattr(args, COMMAND_PARSER, None) or fallback
    raise ArgumentMistake(parser, f"unrecognized arguments: {' '.join(extra)}", unknown_hint(parser, args, extra))


def unknown_hint(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: Sequence[str]) -> str:
    """Where a flag goes when it was given where none is read (before the command's name, after
    a `--`) and the flag a misspelt one stands for; else that an argument goes without a flag,
    else how to pass a question of several words."""
    flags = _long_flags(parser)
    given = [w.split("=", 1)[0] for w in dict.fromkeys(extra) if w.startswith("-") and w != "--"]
    misplaced = [w for w in given if w in flags]
    of_commands = [w for w in given if w not in flags and w in _long_flags_of_commands(parser)]
    meant = [
        f"{close[0]} instead of {w}"
        for w in given
        if w not in misplaced and w not in of_commands
        for close in [difflib.get_close_matches(w, flags, n=1, cutoff=0.6)]
        if close
    ]
    said = []
    if misplaced:  # `vaultmind --json status`, `vaultmind status -- --json`
        said.append(f"{parser.prog} reads {', '.join(misplaced)} only after its name and before any `--`")
    if of_commands:  # `vaultmind --json`
        said.append(f"{', '.join(of_commands)} goes after a command's name: {parser.prog} COMMAND {of_commands[0]}")
    if meant:
        said.append("did you mean " + ", ".join(meant) + "?")
    if said:
        return "; ".join(said) + f" (`{parser.prog} --help` lists its flags)"
    positionals = [
        a for a in parser._actions if not a.option_strings and not isinstance(a, argparse._SubParsersAction)
    ]
    named = {a.dest.lower() for a in positionals} | {str(a.metavar).lower() for a in positionals if a.metavar}
    flagged = [w.lstrip("-").split("=", 1)[0].replace("-", "_") for w in extra if w.startswith("-")]
    if any(name.lower() in named for name in flagged):  # `query window --start X --end Y`
        names = [str(a.metavar or a.dest.upper()) for a in positionals]
        if len(names) == 1:
            return f"{names[0]} is given without a flag: {parser.prog} {names[0]}"
        listed = ", ".join(names[:-1]) + f" and {names[-1]}"
        return f"{listed} are given without flags, in this order: {parser.prog} {' '.join(names)}"
    words = [w for w in extra if not w.startswith("-")]
    text = getattr(args, "text", None)
    if words and isinstance(text, str):
        return f'put a question of several words in quotes: {parser.prog} "{" ".join([text, *words])}"'
    return f"`{parser.prog} --help` lists what it takes"


def _long_flags(parser: argparse.ArgumentParser) -> list[str]:
    return [s for a in parser._actions for s in a.option_strings if s.startswith("--")]


def _long_flags_of_commands(parser: argparse.ArgumentParser) -> set[str]:
    """The flags of `parser`'s commands and theirs (none for a command without commands)."""
    found: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                found.update(_long_flags(command), _long_flags_of_commands(command))
    return found
