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
"""

from __future__ import annotations

import re

# blocks an agent injects into a user turn, dropped with what they hold
_INJECTED_RE = re.compile(
    r"<(local-command-stdout|local-command-stderr|bash-stdout|bash-stderr|system-reminder|INSTRUCTIONS"
    r"|recommended_plugins|skills_instructions|permissions instructions)\b[^>]*>.*?</\1>",
    re.DOTALL,
)
_COMMAND_RE = re.compile(r"<(command-name|command-message|command-args)>(.*?)</\1>", re.DOTALL)
# what is left of a turn that was only the agent's: Codex's AGENTS.md heading (older versions
# write it without " for <path>"), Claude Code's mark of an interruption
_LEFT_ALONE_RE = re.compile(r"#\s*AGENTS\.md instructions\b[^\n]*|\[Request interrupted by user[^\]\n]*\]")


def user_words(text: str) -> str:
    """The words of a user turn the user typed: `text` without the agent's injected blocks, a
    slash command as `/name args` (nothing when it has no arguments), and "" for a turn that
    only marks an interruption or carries AGENTS.md."""
    text = _INJECTED_RE.sub("", text)
    if "<command-name>" in text:
        parts = {name: value.strip() for name, value in _COMMAND_RE.findall(text)}
        rest = _COMMAND_RE.sub("", text).strip()
        args = parts.get("command-args", "")
        typed = f"{parts.get('command-name', '')} {args}".strip() if args else ""
        text = "\n\n".join(p for p in (typed, rest) if p)
    text = text.strip()
    return "" if _LEFT_ALONE_RE.fullmatch(text) else text
