"""What a coding agent writes into the user's turns that the user did not type: the context it
injects, and the marks of its own commands.

Claude Code writes a slash command as a user turn of markup (`<command-name>/model</command-name>
<command-message>…</command-message> <command-args>…</command-args>`), its output as another
(`<local-command-stdout>…`), an interruption as "[Request interrupted by user]", and puts
`<system-reminder>` blocks into turns; Codex CLI sends the repository's AGENTS.md as a user turn
(`# AGENTS.md instructions for <path>` and `<INSTRUCTIONS>…</INSTRUCTIONS>`) with other context
blocks. Kept as the user's words they were searched as such and became the session's title.
Now the injected blocks are dropped, a command is kept as what the user typed (`/review the
login PR`) only when it has arguments, and a turn with nothing else left is no message.

The agent puts its blocks on lines of their own before or after what the user typed, never
inside it: only those are dropped. The same tags among the user's words (a question about a
prompt's `<INSTRUCTIONS>` block, a pasted transcript) are the user's, and kept.
"""

from __future__ import annotations

import re

_INJECTED_TAGS = (
    r"local-command-stdout|local-command-stderr|bash-stdout|bash-stderr|system-reminder"
    r"|recommended_plugins|skills_instructions|permissions instructions"
)
# a block an agent injects, with what it holds; Codex's AGENTS.md: its heading and the
# `<INSTRUCTIONS>` block after it (a block of that name alone is a prompt the user wrote)
_INJECTED_RE = re.compile(
    rf"#[ \t]*AGENTS\.md instructions\b[^\n]*\s*<INSTRUCTIONS>.*?</INSTRUCTIONS>|<({_INJECTED_TAGS})\b[^>]*>.*?</\1>",
    re.DOTALL,
)
_COMMAND_RE = re.compile(r"<(command-name|command-message|command-args)>(.*?)</\1>", re.DOTALL)
# what is left of a turn that was only the agent's: Codex's AGENTS.md heading (older versions
# write it without " for <path>"), Claude Code's mark of an interruption
_LEFT_ALONE_RE = re.compile(r"#\s*AGENTS\.md instructions(?: for [^\n]*)?|\[Request interrupted by user[^\]\n]*\]")


def user_words(text: str) -> str:
    """The words of a user turn the user typed: `text` without the agent's injected blocks at
    its start and end, a slash command that opens it as `/name args` (nothing when it has no
    arguments), and "" for a turn that only marks an interruption or carries AGENTS.md."""
    start, command = _opening(text)
    end = _closing(text, start)
    args = command.get("command-args", "")
    typed = f"{command.get('command-name', '')} {args}".strip() if args else ""
    text = "\n\n".join(part for part in (typed, text[start:end].strip()) if part)
    return "" if _LEFT_ALONE_RE.fullmatch(text) else text


def _opening(text: str) -> tuple[int, dict[str, str]]:
    """Where the user's words start: after the injected blocks and command markup that open
    `text`, up to the end of a line (only space between them; a block followed by words on its
    line is the user's); and that markup's parts (`command-name`, `command-args` …)."""
    start, pos = 0, 0
    command: dict[str, str] = {}  # the parts of the markup up to `start`
    parts: dict[str, str] = {}  # … up to `pos`
    while True:
        pos = _after_space(text, pos)
        found = _INJECTED_RE.match(text, pos) or _COMMAND_RE.match(text, pos)
        if found is None:
            return start, command
        if found.re is _COMMAND_RE:
            parts[found[1]] = found[2].strip()
        pos = found.end()
        if _ends_line(text, pos):
            start, command = pos, dict(parts)


def _closing(text: str, start: int) -> int:
    """Where the user's words end: before the injected blocks that close `text` after `start`,
    from the start of a line (only space between them; a block after words on its line is the
    user's)."""
    end = before = len(text)
    for block in reversed(list(_INJECTED_RE.finditer(text, start))):
        if text[block.end() : before].strip():
            break
        before = block.start()
        if _starts_line(text, before):
            end = before
    return end


def _after_space(text: str, pos: int) -> int:
    """The position of the first character after `pos` that is not white space."""
    return len(text) - len(text[pos:].lstrip())


def _ends_line(text: str, pos: int) -> bool:
    """Whether only space follows `pos` on its line."""
    rest = text[pos:].lstrip(" \t")
    return not rest or rest.startswith(("\n", "\r"))


def _starts_line(text: str, pos: int) -> bool:
    """Whether only space comes before `pos` on its line."""
    before = text[:pos].rstrip(" \t")
    return not before or before.endswith("\n")
