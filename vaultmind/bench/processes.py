"""Child processes measured from outside: exit code, wall and CPU seconds, and peak RSS of a
process and its descendants (the kernel's `wait4` rusage for a finished child, `/proc/<pid>/status`
for a live one, sampled by a thread)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import IO

from vaultmind.child import python_env


def child_env(embed_provider: str | None) -> dict[str, str]:
    env = python_env()
    if embed_provider:
        env["VAULTMIND_EMBED_PROVIDER"] = embed_provider
    return env


@dataclass(slots=True)
class TreeRun:
    """A finished child process: exit code, wall seconds, stdout, CPU seconds (it and its reaped
    children), peak RSS bytes of its largest process and of its process tree summed, and the
    tree's largest summed PSS (None when not sampled or not known: `pss`)."""

    code: int
    seconds: float
    stdout: bytes
    cpu_s: float
    peak_max: int
    peak_sum: int
    peak_pss: int | None = None


def run_tree_measured(
    cmd: list[str],
    env: dict[str, str],
    stderr: IO[bytes] | int | None,
    *,
    interval_s: float = 0.02,
    with_pss: bool = False,
) -> TreeRun:
    """Run `cmd` to its end, sampling the RSS (and with `with_pss` the PSS) of it and its
    descendants every `interval_s` (Linux `/proc`; elsewhere only the kernel's figure for the
    child, via `wait4`, is known). Where the samples exist they are the figures: `wait4`'s peak
    of a child started by vfork and exec (as `subprocess` starts one) carries the high-water
    mark of its parent at the exec, so a benchmark process larger than its child (after an
    in-process walk) reported its own peak as the child's."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=stderr)
        tree = TreeSampler(proc.pid, interval_s, with_pss=with_pss)
        tree.start()
        try:
            cpu, hwm = _reap(proc) or (0.0, 0)
        finally:
            tree.stop()
        seconds = time.perf_counter() - started
        out.seek(0)
        stdout = out.read()
    if tree.peak_max:  # sampled from /proc: the kernel's figure is not needed, and can mislead
        return TreeRun(proc.returncode, seconds, stdout, cpu, tree.peak_max, tree.peak_sum, tree.peak_pss or None)
    return TreeRun(proc.returncode, seconds, stdout, cpu, hwm, hwm)


class TreeSampler(threading.Thread):
    """Samples the summed RSS of a process and its descendants, and their high-water marks;
    `samples` keeps each sum, [(seconds since the sampler was made, bytes)], and `own` the
    process's own RSS at the same times: they show where a peak falls (start-up, loading,
    queries, a child's work), which the high-water mark alone does not.

    With `with_pss` it also sums the processes' PSS (`proc_pss`) and keeps the largest sum,
    `peak_pss`: the memory the tree costs, each page shared by n of its processes (a library,
    a model file mapped by the daemon and its NER child) counted 1/n in each, so once in the
    sum, where a sum of RSS counts it n times. Reading it costs the kernel a walk of each
    process's page tables, so it is asked for where memory is the figure (`bench_rss`), not
    where CPU time is (`bench_cold`). A sample every `interval_s`: a peak shorter than that
    can be missed."""

    def __init__(self, pid: int, interval_s: float = 0.02, *, with_pss: bool = False):
        super().__init__(name="bench-rss-sampler", daemon=True)
        self.pid = pid
        self.interval_s = interval_s
        self.with_pss = with_pss
        self.peak_pss = 0
        self.peak_sum = 0
        self.peak_max = 0
        self.samples: list[tuple[float, int]] = []
        self.own: list[tuple[float, int]] = []
        self._done = threading.Event()
        self._t0 = time.perf_counter()

    def stop(self) -> None:
        self._done.set()
        self.join()

    def run(self) -> None:
        if not os.path.isdir("/proc"):
            return
        while not self._done.is_set():
            total = own = pss = 0
            for pid in descendants(self.pid):
                hwm, rss = proc_rss(pid)
                total += rss
                own = rss if pid == self.pid else own
                self.peak_max = max(self.peak_max, hwm)
                pss += proc_pss(pid) if self.with_pss else 0
            self.peak_sum = max(self.peak_sum, total)
            self.peak_pss = max(self.peak_pss, pss)
            if total:
                now = time.perf_counter() - self._t0
                self.samples.append((now, total))
                self.own.append((now, own))
            self._done.wait(self.interval_s)


def proc_rss(pid: int) -> tuple[int, int]:
    """(VmHWM, VmRSS) of a process in bytes from `/proc`; (0, 0) once it is gone."""
    return _status_rss(pid) or (0, 0)


SMAPS_ROLLUP = "/proc/{pid}/smaps_rollup"
"""Where a process's PSS is read (Linux 4.14+; not on macOS, older kernels or some containers)."""
NO_PSS = "no /proc/PID/smaps_rollup on this system"


def pss_unknown() -> str | None:
    """Why no process's PSS can be measured here (`NO_PSS`), or None when it can: said beside
    the memory figures, which were a bare "n/a" on a system without it."""
    return None if os.path.exists(SMAPS_ROLLUP.format(pid=os.getpid())) else NO_PSS


def proc_pss(pid: int) -> int:
    """A process's proportional set size in bytes (`SMAPS_ROLLUP`): its private pages and its
    share of each shared one; 0 once it is gone or where unknown (`pss_unknown`)."""
    try:
        with open(SMAPS_ROLLUP.format(pid=pid), encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _status_rss(pid: int) -> tuple[int, int] | None:
    """(VmHWM, VmRSS) of a live process in bytes from `/proc/<pid>/status`; None when it is
    gone or there is no `/proc`."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            fields = dict(line.split(":", 1) for line in fh if ":" in line)
        return int(fields["VmHWM"].split()[0]) * 1024, int(fields["VmRSS"].split()[0]) * 1024
    except (OSError, KeyError, ValueError, IndexError):
        return None


def descendants(root: int) -> list[int]:
    """`root` and every live process below it (from `/proc/*/stat`); `root` alone where there
    is no `/proc` (macOS: its figures are then the kernel's for the child, `peak_rss`)."""
    parent: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return [root]
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            parent[int(name)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    out, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, ppid in parent.items() if ppid in frontier]
        out.extend(frontier)
    return out


def _reap(proc: subprocess.Popen[bytes]) -> tuple[float, int] | None:
    """Wait for a child to end (killed if the wait is interrupted): its CPU seconds (and its
    reaped children's) and peak RSS in bytes, from the kernel's `wait4`; None where there is none."""
    try:
        if not hasattr(os, "wait4"):
            proc.wait()
            return None
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    proc.returncode = os.waitstatus_to_exitcode(status)
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * scale


def peak_rss(pid: int) -> tuple[int | None, int | None]:
    """(VmHWM, VmRSS) of a live process in bytes, from /proc (Linux), else psutil if present;
    (None, None) when it is gone."""
    found = _status_rss(pid)
    if found is not None:
        return found
    try:
        import psutil  # optional (dev extra): only where /proc is missing
    except ImportError:
        return None, None
    try:
        return None, int(psutil.Process(pid).memory_info().rss)
    except psutil.Error:  # gone (NoSuchProcess), or not ours to read (AccessDenied)
        return None, None
