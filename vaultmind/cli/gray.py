"""The gray band on the command line's own path (no daemon): decided by the rules when no LLM answers.

A command run here (`reindex`, `sync`, `flush`) works no queue: the daemon's workers are what
ask Ollama about a gray leaf, and decide it by the rules when none answers
(`importance.without_llm`). Without this step the gray leaves of a vault with no Ollama waited
for a worker that never came: `flush` sealed the summaries past them, and they were never
summarized (or, once a daemon ran, folded into a summary out of time order). So when nothing
at `[ollama] host` can answer (no server, or none with the model), the command decides them
here with the daemon's own functions: a cached answer first, then the rules; the reason says
"LLM not reachable", as the daemon's does. With an Ollama that has the model they wait for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vaultmind.admission.importance import UNREACHABLE, decide_by_rules, policy_of, repair
from vaultmind.errors import by_ctrl_c
from vaultmind.index.tables import has_table
from vaultmind.tree.follow import follow_admission

if TYPE_CHECKING:
    from vaultmind.memory import Memory

PROBE_TIMEOUT_S = 2.0  # asking Ollama for its models: a host that does not answer in this is not there


def decide_gray_without_llm(memory: Memory) -> int:
    """Decide every gray leaf by the rules when no LLM can answer; how many were decided."""
    index = memory.index
    if not has_table(index, "admission"):
        return 0
    if not index.scalar("SELECT count(*) FROM admission WHERE decision = 'gray'"):
        return 0  # the common case: no probe of Ollama
    config = memory.config
    policy = policy_of(config)
    if policy.llm and llm_answers(config.ollama_host, config.ollama_chat_model):
        return 0  # the daemon asks it
    with index.transaction() as con:  # as the daemon's `importance.without_llm`
        repair(con, config)
        decided = decide_by_rules(con, policy, f"{UNREACHABLE} at {config.ollama_host}: admission by rules")
        follow_admission(con, decided)
    return len(decided)


def gray_left(memory: Memory) -> dict[str, Any] | None:
    """The gray leaves still waiting in the trees after a flush here (an Ollama with the model
    answers: the daemon, or `queue --run`, asks it), and what asks it now; None when none waits.
    A flush seals no summary past them: without this, a tree that stops short said nothing of why."""
    from vaultmind.shell import command_line
    from vaultmind.tree.buffers import gray_waiting
    from vaultmind.tree.settings import TreeSettings

    settings = TreeSettings.from_extra(memory.config.extra)
    left = sum(found.count for found in gray_waiting(memory.index, settings).values())
    if not left:
        return None
    run = command_line("queue", "--run", "--vault", memory.config.vault)
    return {"leaves": left, "hint": f"`{run}` asks the LLM now (the daemon does it in the background)"}


def llm_answers(host: str, model: str) -> bool:
    """Whether an Ollama server answers at `host` and has `model`."""
    from vaultmind.llm.ollama_chat import has_model, pulled_models

    try:
        return has_model(pulled_models(host, PROBE_TIMEOUT_S), model)
    except Exception as exc:  # any failure to ask means no answer will come…
        if by_ctrl_c(exc):  # …but Ctrl-C, which a library may have turned into an error of its own
            raise  # (the gray leaves would have been decided "LLM not reachable" for a keypress)
        return False
