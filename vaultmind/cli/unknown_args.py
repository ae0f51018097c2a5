"""Arguments a command does not take, said by that command.

argparse reports them from the top-level parser ("usage: vaultmind [-h] … COMMAND …", then
"unrecognized arguments: --evidense"), which shows neither the flags the command has nor
why. Here the command that got them says so with its own usage, names the flag that was
probably meant, and says to quote a question typed without quotes. A word argparse took for a
command or a query mode ("invalid choice") gets the command line that was meant: a flag put
before the command's name after it, a question given without its mode after `walk`.
"""

from __future__ import annotations

import argparse
import difflib
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from vaultmind.cli.parser import ArgumentMistake
from vaultmind.shell import command_line
from vaultmind.vault.inner_vaults import is_vault

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
    vault = _vault_as_word(parser, args, extra)
    if vault is not None:  # `vaultmind status ~/Notes`, as `init` takes it
        given = [str(v) for a in _positionals(parser) for v in _as_list(getattr(args, a.dest, None))]
        return f"the vault is given with --vault: {command_line(*parser.prog.split()[1:], *given, vault=Path(vault))}"
    positionals = _positionals(parser)
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


def _vault_as_word(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: Sequence[str]) -> str | None:
    """The word of `extra` that is a folder given for the vault without `--vault`, when the
    command reads `--vault` and got none. After a question, a vault's folder alone: "what about
    notes" typed without quotes in a vault with a `notes/` folder is a question still."""
    if "--vault" not in _long_flags(parser) or getattr(args, "vault", None) is not None:
        return None
    words = [w for w in extra if not w.startswith("-")]
    folders = [w for w in words if Path(w).is_dir()]
    if not folders or (isinstance(getattr(args, "text", None), str) and (len(words) > 1 or not is_vault(Path(folders[0])))):
        return None
    return folders[0]


def _positionals(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not a.option_strings and not isinstance(a, argparse._SubParsersAction)]


def _as_list(value: object) -> list[object]:
    return [] if value is None else list(value) if isinstance(value, list) else [value]


def with_hint(mistake: ArgumentMistake, words: Sequence[str], root: argparse.ArgumentParser) -> ArgumentMistake:
    """`mistake` with the command line that was meant when argparse took a word for a command
    or mode it is not (it has no hint of its own then)."""
    if mistake.hint is None:
        mistake.hint = _choice_hint(mistake, list(words), root)
    return mistake


def _choice_hint(mistake: ArgumentMistake, words: list[str], root: argparse.ArgumentParser) -> str | None:
    """For "invalid choice: 'demo-vault'": `--vault demo-vault` put before the command's name
    (or a query's mode) goes after it; a question given without its mode is asked with `walk`;
    a misspelt command is named; a folder given as the command is the vault of `--vault`."""
    given = next((i for i, word in enumerate(words) if f"invalid choice: {word!r}" in mistake.message), None)
    if given is None:
        return None
    value, before = words[given], words[given - 1] if given else ""
    of_commands = _long_flags_of_commands(root)
    if before in _long_flags_of_commands(root, valued=True):  # `vaultmind --vault V status` (not `--json V status`: V is no value)
        first = next(i for i, word in enumerate(words) if word.startswith("--") and word in of_commands)
        misplaced, rest = words[first : given + 1], _with_mode(words[:first] + words[given + 1 :], root)
        flags = [word for word in misplaced if word in of_commands]
        go = "goes" if len(flags) == 1 else "go"
        return f"{', '.join(flags)} {go} after the command's name: {_flags_after(rest, misplaced)}"
    choices = list(_commands(mistake.parser))
    command = next((i for i in range(given + 1, len(words)) if words[i] in choices), None)
    if command is not None and Path(value).is_dir():  # `vaultmind ~/Notes status`, `vaultmind --json ~/Notes status`
        line = _meant(_with_mode(words[:given] + words[given + 1 :], root), command - 1, of_commands, added=["--vault", value])
        return f"the vault is given with --vault after the command's name: {line}"
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]}? (`{mistake.parser.prog} --help` lists them)"
    if "walk" in choices:  # `vaultmind query "when did we move the launch?"`: the mode forgotten
        return f"a question is asked with a mode first: {_meant([*words[:given], 'walk', *words[given:]], given, of_commands)}"
    if Path(value).is_dir():  # `vaultmind ~/Notes`
        return f"the vault is given with --vault after the command's name: vaultmind COMMAND --vault {shlex.quote(value)}"
    return None


def _with_mode(words: list[str], root: argparse.ArgumentParser) -> list[str]:
    """`words` with `walk` put after the name of a command of modes (`query`) given a question
    without one: the line a hint gives runs as it is, not into the next mistake. It goes right
    after the name, before the mode's flags (`query walk --limit 3 q`): a flag's value is no
    question."""
    commands = _commands(root)
    command = next((i for i, word in enumerate(words) if word in commands), None)
    if command is None:
        return words
    modes = _commands(commands[words[command]])
    rest = words[command + 1 :]
    question = _first_positional(rest, set(_long_flags_of_commands(commands[words[command]], valued=True)))
    if "walk" not in modes or question is None or question in modes:
        return words
    return [*words[: command + 1], "walk", *rest]


def _first_positional(words: list[str], valued: set[str]) -> str | None:
    """The first of `words` that is neither a flag nor a flag's value (`valued`: the flags that
    take one); all after a `--` are."""
    after_value = False
    for i, word in enumerate(words):
        if word == "--":
            return words[i + 1] if i + 1 < len(words) else None
        if after_value or word.startswith("-"):
            after_value = not after_value and word in valued
            continue
        return word
    return None


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """`parser`'s commands (or modes) by name; none for a parser without them."""
    return {name: command for action in parser._actions if isinstance(action, argparse._SubParsersAction) for name, command in action.choices.items()}


def _meant(words: list[str], ahead: int, flags_of_commands: set[str], *, added: Sequence[str] = ()) -> str:
    """The command line of `words`, the commands' flags among its first `ahead` words (before the
    command's name: `vaultmind --json query …`) moved after the rest, with `added`."""
    moved = [word for word in words[:ahead] if word in flags_of_commands]
    kept = [word for i, word in enumerate(words) if i >= ahead or word not in flags_of_commands]
    return _flags_after(kept, [*moved, *added])


def _flags_after(words: list[str], flags: list[str]) -> str:
    """The command line of `words` with `flags` after them, before a `--` (after which all is text)."""
    end = words.index("--") if "--" in words else len(words)
    return command_line(*words[:end], *flags, *words[end:])


def _long_flags(parser: argparse.ArgumentParser, *, valued: bool = False) -> list[str]:
    """`parser`'s long flags; `valued`: only those that take a value (`--vault V`, not `--json`)."""
    return [s for a in parser._actions if not valued or a.nargs != 0 for s in a.option_strings if s.startswith("--")]


def _long_flags_of_commands(parser: argparse.ArgumentParser, *, valued: bool = False) -> set[str]:
    """The flags of `parser`'s commands and theirs (none for a command without commands);
    `valued`: only those that take a value."""
    found: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                found.update(_long_flags(command, valued=valued), _long_flags_of_commands(command, valued=valued))
    return found
