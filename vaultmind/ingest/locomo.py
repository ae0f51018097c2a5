"""LoCoMo-format conversation files → chat source batches.

A LoCoMo file (Maharana et al., 2024) is a JSON list of samples, or one sample object:

    {"sample_id": "conv-26",
     "conversation": {"speaker_a": "Lucinda", "speaker_b": "Melissa",
                      "session_1_date_time": "1:56 pm on 8 May, 2023",
                      "session_1": [{"speaker": "Lucinda", "dia_id": "D1:1", "text": "…",
                                     "img_url": ["…"], "blip_caption": "a photo of …"}, …],
                      …},
     "qa": […], …}

Each session becomes one chat source note (bucket "whole", note `session-<n>`) of the source
`locomo:<sample_id>` in scope `locomo/<sample_id>`. Each turn becomes one message:

- message id = the turn's `dia_id` (so a leaf maps back to the turn), author = `speaker`;
- text = the turn's text, plus a line `[image: <blip_caption>]` when the turn shared an image;
- time = the session's `date_time` ("1:56 pm on 8 May, 2023", taken as UTC) plus one second
  per turn index within the session, so turns keep their order and get distinct times;
- source ref = `locomo://<sample_id>/<dia_id>`.

A turn without text or image is skipped, as every adapter skips an empty message.

Parsing is pure; errors name the file and the sample (and turn) at fault.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from vaultmind.calendar_names import MONTH_NUMBERS
from vaultmind.errors import IngestError
from vaultmind.ingest.common import load_json
from vaultmind.ingest.model import SourceBatch
from vaultmind.markdown.render import Message, SourceMeta

_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D(\d+):(\d+)")
_DATE_TIME = re.compile(
    r"\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*",
    re.IGNORECASE,
)


def parse_locomo_paths(paths: Iterable[str | Path]) -> list[SourceBatch]:
    """One batch per session of every sample in the given LoCoMo files, in file order."""
    batches: list[SourceBatch] = []
    for path in paths:
        for sample in read_locomo_file(path):
            batches.extend(sample_batches(sample, path=path))
    return batches


_FILE_HINT = "a LoCoMo file is a JSON list of samples or one sample object"


def read_locomo_file(path: str | Path) -> list[dict[str, Any]]:
    """The samples of a LoCoMo JSON file (a list of samples, or one sample object)."""
    file = Path(path)
    if not file.exists() and not file.is_symlink():
        raise IngestError("no such file", path=file, hint="pass the path of a LoCoMo JSON file")
    try:  # (UTF-8 with or without a byte order mark, UTF-16 …, as every export: `common.read_text`)
        data = load_json(file)
    except IngestError as exc:
        raise IngestError(exc.message, path=file, hint=_FILE_HINT) from exc
    samples = data if isinstance(data, list) else [data]
    if not samples:
        raise IngestError("holds no samples (an empty list)", path=file, hint=_FILE_HINT)
    for i, sample in enumerate(samples):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise IngestError(
                f"sample {i} is not a LoCoMo sample (an object with a 'conversation' object)",
                path=file,
                hint=_FILE_HINT,
            )
        if not isinstance(sample.get("sample_id"), str | int) or str(sample["sample_id"]).strip() == "":
            raise IngestError(f"sample {i} has no 'sample_id'", path=file)
    _check_sample_ids(samples, path=file)
    return samples


def _check_sample_ids(samples: list[dict[str, Any]], *, path: Path) -> None:
    """Refuse a repeated sample_id: it names the source (`locomo:<sample_id>`) and the eval's
    results (`<sample_id>:<qa_index>`), so two samples of one id would write over each other's
    notes and share each other's answers."""
    first: dict[str, int] = {}
    for i, sample in enumerate(samples):
        sample_id = str(sample["sample_id"]).strip()
        if sample_id in first:
            raise IngestError(
                f"samples {first[sample_id]} and {i} have the same sample_id {sample_id!r}",
                path=path,
                hint="give every sample its own sample_id",
            )
        first[sample_id] = i


def sample_batches(sample: Mapping[str, Any], *, path: str | Path) -> list[SourceBatch]:
    """The chat batches of one LoCoMo sample: one per non-empty session, by session number."""
    sample_id = str(sample["sample_id"]).strip()
    conversation = sample["conversation"]
    where = f"sample {sample_id}"
    speakers = tuple(
        str(conversation[key]).strip()
        for key in ("speaker_a", "speaker_b")
        if isinstance(conversation.get(key), str) and conversation[key].strip()
    )
    batches: list[SourceBatch] = []
    seen: dict[str, str] = {}
    for number, turns in sessions(conversation, path=path, where=where):
        key = f"session_{number}"
        raw_time = conversation.get(f"{key}_date_time")
        if not isinstance(raw_time, str):
            raise IngestError(f"{where}, {key}: no '{key}_date_time'", path=path)
        try:
            start = parse_session_time(raw_time)
        except ValueError as exc:
            raise IngestError(f"{where}, {key}: {exc}", path=path) from None
        read = [
            _message(
                turn, sample_id, start + timedelta(seconds=i), path=path, where=f"{where}, {key}, turn {i}"
            )
            for i, turn in enumerate(turns)
        ]
        for i, message in enumerate(read):
            here = f"{key}, turn {i}"
            if message.message_id in seen:
                raise IngestError(
                    f"{where}: dia_id {message.message_id!r} of {here} was already used by {seen[message.message_id]}",
                    path=path,
                    hint="every turn needs its own dia_id",
                )
            seen[message.message_id] = here
        # an empty turn (no text, no image) says nothing: skipped, as every adapter skips an empty message
        messages = tuple(message for message in read if message.text.strip())
        if not messages:
            continue
        names = " and ".join(speakers) if speakers else sample_id
        meta = SourceMeta(
            kind="chat",
            source_id=f"locomo:{sample_id}",
            scope=f"locomo/{sample_id}",
            title=f"{names}, session {number} ({start.date().isoformat()})",
            participants=speakers,
        )
        batches.append(
            SourceBatch(meta=meta, messages=messages, bucket="whole", note_name=f"session-{number}")
        )
    return batches


def sessions(conversation: Mapping[str, Any], *, path: str | Path, where: str) -> list[tuple[int, list[Any]]]:
    """`[(session number, turns)]` of a conversation, by session number."""
    found: list[tuple[int, list[Any]]] = []
    for key, value in conversation.items():
        match = _SESSION_KEY.fullmatch(key)
        if match is None:
            continue
        if not isinstance(value, list):
            raise IngestError(f"{where}, {key}: expected a list of turns", path=path)
        found.append((int(match.group(1)), value))
    found.sort(key=lambda item: item[0])
    return found


def parse_session_time(text: str) -> datetime:
    """`1:56 pm on 8 May, 2023` → 2023-05-08 13:56 UTC (the file gives no time zone)."""
    match = _DATE_TIME.fullmatch(text)
    if match is None:
        raise ValueError(f"date_time {text!r} is not like '1:56 pm on 8 May, 2023'")
    hour, minute, half, day, month_name, year = match.groups()
    month = MONTH_NUMBERS.get(month_name.lower())
    h = int(hour)
    if month is None or not 1 <= h <= 12:
        raise ValueError(f"date_time {text!r} is not like '1:56 pm on 8 May, 2023'")
    h = h % 12 + (12 if half.lower() == "p" else 0)
    try:
        return datetime(int(year), month, int(day), h, int(minute), tzinfo=UTC)
    except ValueError as exc:
        raise ValueError(f"date_time {text!r}: {exc}") from None


def session_of(dia_id: str) -> int | None:
    """The session number of a turn id (`D3:12` → 3), or None when it is not one."""
    match = _DIA_ID.fullmatch(dia_id.strip())
    return int(match.group(1)) if match else None


def _message(turn: Any, sample_id: str, at: datetime, *, path: str | Path, where: str) -> Message:
    if not isinstance(turn, dict):
        raise IngestError(f"{where}: expected an object with speaker, dia_id and text", path=path)
    dia_id = turn.get("dia_id")
    if not isinstance(dia_id, str) or not dia_id.strip():
        raise IngestError(f"{where}: no 'dia_id'", path=path)
    dia_id = dia_id.strip()
    speaker = turn.get("speaker")
    if not isinstance(speaker, str) or not speaker.strip():
        raise IngestError(f"{where} ({dia_id}): no 'speaker'", path=path)
    text = turn.get("text", "")
    if not isinstance(text, str):
        raise IngestError(f"{where} ({dia_id}): 'text' is not a string", path=path)
    caption = turn.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        text = (
            f"{text}\n[image: {' '.join(caption.split())}]"
            if text
            else f"[image: {' '.join(caption.split())}]"
        )
    return Message(
        message_id=dia_id,
        author=speaker.strip(),
        timestamp=at,
        text=text,
        source_ref=f"locomo://{sample_id}/{dia_id}",
    )
