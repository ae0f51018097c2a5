"""An index this user may not write (another user's, or made read-only) is sound: every command
says so, naming the file and what to do, and leaves it where it is — it is not moved aside
as a broken one and replaced by an empty index."""

from __future__ import annotations

import pytest

from tests.unprivileged import can_drop_privileges, run_unprivileged

NOT_WRITABLE_SCENARIO = """
import contextlib, hashlib, io, json, os
from vaultmind.cli.main import main

os.environ["VAULTMIND_EMBED_PROVIDER"] = "none"


def run(*args):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([*args, "--vault", str(vault)])
    return code, err.getvalue()


assert main(["init", str(vault)]) == 0
(vault / "badgers.md").write_text("# Badgers\\n\\nThe badger digs at night.\\n")
state = vault / ".vaultmind"
index = state / "index.duckdb"
assert run("reindex")[0] == 0
digest = hashlib.sha256(index.read_bytes()).hexdigest()
index.chmod(0o444)
state.chmod(0o555)  # nor can a lock file be made beside it
out = {"index": str(index), "lock": str(state / "daemon.lock")}
for name, args in (("status", ["status"]), ("query", ["query", "walk", "badger"]), ("serve", ["serve"])):
    out[name] = run(*args)
state.chmod(0o755)
out["same_index"] = hashlib.sha256(index.read_bytes()).hexdigest() == digest
out["state"] = sorted(p.name for p in state.iterdir())
print(json.dumps(out))
"""


@pytest.mark.skipif(not can_drop_privileges(), reason="needs setpriv to drop root privileges")
def test_an_index_you_may_not_write_is_named_and_left_where_it_is() -> None:
    out = run_unprivileged(NOT_WRITABLE_SCENARIO)
    for name in ("status", "query"):
        code, err = out[name]
        assert code == 1, err
        assert (
            f"vaultmind: error: {out['index']}: the index cannot be written by you (permission denied)" in err
        ), err
        assert (
            "vaultmind: hint: run vaultmind as the user who owns the vault, or give yourself write access"
            in err
        )
        assert "the index is left as it is" in err and "Traceback" not in err
    code, err = out["serve"]
    assert code == 1 and f"vaultmind: error: {out['lock']}: permission denied" in err, err
    assert "Traceback" not in err
    assert out["same_index"], "the index was left as it was"
    assert "quarantine" not in out["state"], out["state"]


def test_a_permission_error_outside_the_index_asks_for_access_not_for_the_vaults_owner() -> None:
    """A file under `.vaultmind/` the user may not write is the vault's owner's to fix; an export
    the user may not read is not (the hint spoke of write access to every file)."""
    from vaultmind.errors import storage_error

    inside = storage_error(PermissionError(13, "Permission denied", "/v/.vaultmind/daemon.lock"))
    outside = storage_error(PermissionError(13, "Permission denied", "/exports/chat.json"))
    assert inside is not None and outside is not None
    assert "run vaultmind as the user who owns the vault" in str(inside.hint)
    assert "owns the vault" not in str(outside.hint) and "give yourself access to this file" in str(outside.hint)
