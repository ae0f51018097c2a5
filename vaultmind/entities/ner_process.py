"""The NER model in a child process, for a long-running process (`NerEngine.isolate`).

spaCy and an English model take ~110 MB once loaded, and a Python process never gives imported
modules back. A daemon needs the model only in bursts (the texts of saves, the catch-up after a
large import) and reads questions without it (`entities.query`). So it runs the model in a
child process: started on the first texts (Python, spaCy and the model: about 2 s), it answers
batch after batch and is stopped once it has had nothing to do for `IDLE_S`, which gives its
memory back to the system. The spans are the model's own, the same as in process (the same
package, the same batches).

One JSON line each way, on the child's stdin and stdout: a list of texts in,
`{"spans": [[[start, end, label], …], …]}` or `{"failed": message}` out. The child leaves when
its stdin closes (the parent stopped it, or died). A child that dies mid-batch is replaced once;
a second death in a row, a model that cannot load or a child that cannot start raises
`ModelFailed`, and the engine reports NER as unavailable with that reason (`status`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence

from vaultmind.child import python_command, python_env
from vaultmind.entities.ner import ModelFailed, ModelStopped, NerEngine, RawSpan

log = logging.getLogger(__name__)

IDLE_S = 60.0  # a child with no texts for this long is stopped
STOP_WAIT_S = 5.0  # for a stopped child to leave before it is killed
INTERRUPT_WAIT_S = 0.5  # for an interrupted child to leave after SIGTERM before it is killed


class ModelProcess:
    """The parent's side: one child at a time, started on demand, stopped when idle."""

    def __init__(self, package: str, batch: int, idle_s: float | None = None):
        self.package = package
        self.batch = batch
        self.idle_s = IDLE_S if idle_s is None else idle_s
        self.started = 0  # children started so far
        self._holds = 0  # `hold`s in force: the child is not idle, more texts are coming
        self._holds_lock = threading.Lock()
        self._lock = threading.Lock()  # one batch at a time; the idle watcher takes it to stop
        self._child: subprocess.Popen[str] | None = None
        self._last = 0.0  # when the last batch was answered (monotonic)
        self._watcher: threading.Thread | None = None
        self._interrupted = threading.Event()  # `interrupt`: no child from now on

    @property
    def pid(self) -> int | None:
        """The running child's process id (None: no child now)."""
        child = self._child
        return child.pid if child is not None and child.poll() is None else None

    def analyze(self, texts: Sequence[str]) -> list[list[RawSpan]]:
        """The spans of each of `texts`, found by the child (started if there is none)."""
        request = json.dumps(list(texts)) + "\n"
        with self._lock:
            reply = self._ask(request) or self._ask(request)  # a child that died: once more
            self._last = time.monotonic()
            if not reply:
                raise ModelFailed("the NER process exited twice while running the model")
            answer = json.loads(reply)
            if "failed" in answer:
                self._stop_child()
                raise ModelFailed(str(answer["failed"]))
            self._watch()
        return [[(int(s), int(e), str(label)) for s, e, label in spans] for spans in answer["spans"]]

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Keep the child while held: a catch-up waits up to a minute for a pause in saves
        between its batches, as long as `idle_s`, and the child was stopped as idle in that
        wait and started again (spaCy and the model loaded anew) for the next batch. Its idle
        time counts from the end of the hold."""
        with self._holds_lock:
            self._holds += 1
        try:
            yield
        finally:
            with self._holds_lock:
                self._holds -= 1
                self._last = max(self._last, time.monotonic())

    def stop(self) -> None:
        """Stop the child now (the next batch starts another)."""
        with self._lock:
            self._stop_child()

    def interrupt(self) -> None:
        """Stop now, from any thread and without the batch lock: a daemon that is stopping
        must not wait for a child that is still loading spaCy (tens of seconds on a busy host)
        or running a batch. The child is terminated, then killed if it has not left within
        `INTERRUPT_WAIT_S`; the batch in hand raises `ModelStopped` (its texts stay without a
        result, which the next start finds pending) and no other child is started."""
        self._interrupted.set()
        child = self._child
        if child is None or child.poll() is not None:
            return
        with contextlib.suppress(OSError):
            child.terminate()
        try:
            child.wait(INTERRUPT_WAIT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                child.kill()

    def _ask(self, request: str) -> str:
        """The child's reply line to `request` ("" when the child died)."""
        if self._interrupted.is_set():
            raise ModelStopped("the NER process was stopped")
        child = self._child if self._child is not None and self._child.poll() is None else self._start()
        if self._interrupted.is_set():  # interrupted while it started: `interrupt` may not have seen it
            self._stop_child(wait_s=0.0)
            raise ModelStopped("the NER process was stopped")
        assert child.stdin is not None and child.stdout is not None
        try:
            child.stdin.write(request)
            child.stdin.flush()
            return child.stdout.readline()
        except (OSError, ValueError):
            self._stop_child()
            return ""

    def _start(self) -> subprocess.Popen[str]:
        self._stop_child()
        try:
            self._child = subprocess.Popen(
                python_command("-m", "vaultmind.entities.ner_process", self.package, str(self.batch)),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                env=python_env(),
            )
        except OSError as exc:  # no interpreter to run, no processes left
            raise ModelFailed(f"cannot start the NER process ({sys.executable}): {exc}") from exc
        self.started += 1
        log.info("NER: model %s started in process %d", self.package, self._child.pid)
        return self._child

    def _stop_child(self, wait_s: float = STOP_WAIT_S) -> None:
        child = self._child
        if child is None:
            return
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):  # a pipe to a child that died
                    stream.close()
        try:
            child.wait(wait_s)  # its stdin closed: it leaves
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        self._child = None

    def _watch(self) -> None:
        """Make sure a thread stops the child once it has been idle for `idle_s`."""
        if self._watcher is not None and self._watcher.is_alive():
            return
        self._watcher = threading.Thread(target=self._stop_when_idle, name="vaultmind-ner-idle", daemon=True)
        self._watcher.start()

    def _stop_when_idle(self) -> None:
        while True:
            with self._lock:
                if self._child is None:
                    return
                left = self.idle_s if self._holds else self._last + self.idle_s - time.monotonic()
                if left <= 0:
                    log.info("NER: stopping the model's process after %.0f s without texts", self.idle_s)
                    self._stop_child()
                    return
            time.sleep(left)


def main(argv: Sequence[str] | None = None) -> int:
    """The child: `python -m vaultmind.entities.ner_process PACKAGE BATCH`."""
    package, batch = argv if argv is not None else sys.argv[1:]
    # Ctrl-C in a terminal reaches the whole process group: the daemon stops this process (it
    # closes its stdin), which would otherwise print a KeyboardInterrupt traceback over it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    engine = NerEngine(package, batch=int(batch))
    replies, sys.stdout = sys.stdout, sys.stderr  # anything else printed stays out of the replies
    for line in sys.stdin:
        texts = json.loads(line)
        nlp = engine.model()
        reply = {"failed": engine.status()["message"]} if nlp is None else {"spans": engine.run(nlp, texts)}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
