"""Run a scenario as an unprivileged user, so permission checks apply even when tests run as root.

Root reads any file regardless of its mode, which would make tests of "a file that cannot be
read keeps its index rows" vacuous. When the test process is root, the scenario runs in a
child process as `nobody` (via setpriv) in a world-accessible temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def can_drop_privileges() -> bool:
    return os.geteuid() != 0 or shutil.which("setpriv") is not None


def run_unprivileged(script: str) -> Any:
    """Run `script` (Python; receives `vault: Path`, must print one JSON line) without root."""
    base = Path(tempfile.mkdtemp(prefix="vaultmind-unpriv-"))
    try:
        os.chmod(base, 0o777)
        vault = base / "vault"
        vault.mkdir()
        os.chmod(vault, 0o777)
        code = f"from pathlib import Path\nvault = Path({str(vault)!r})\n" + textwrap.dedent(script)
        cmd = [sys.executable, "-c", code]
        if os.geteuid() == 0:
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", *cmd]
        env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(base)}
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=base)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(base)], check=False)
        shutil.rmtree(base, ignore_errors=True)
