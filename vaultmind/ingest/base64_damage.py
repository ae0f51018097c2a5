"""An email text part in base64 damaged in transfer, told from one that decodes.

Python's email package decodes base64 as best it can and notes what it met as a defect on
the part: a length no base64 has (characters lost) hands back the raw base64 itself as the
"decoded" bytes, and a padding or character defect may decode into bits shifted past the
damage. Shown as the text, either is a line of base64 or of noise; `mime` reads another
rendering instead, or says the part was not read.
"""

from __future__ import annotations

import re
from email.message import Message

UNDECODABLE = "a base64 text part that does not decode (damaged in transfer: export the message again to read it)"
_BASE64_DEFECTS = frozenset({"InvalidBase64LengthDefect", "InvalidBase64PaddingDefect", "InvalidBase64CharactersDefect"})
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


def undecodable(part: Message, data: bytes, charset: str | None) -> bool:
    """Whether `part`, decoded to `data`, is base64 that does not decode: of a length no base64
    has, or decoded with a defect into bytes that are no text — not valid in its `charset`
    (UTF-8 when it declares none), or holding control characters. A padding defect alone on
    bytes that read as text (a missing `=`) is no damage."""
    defects = {type(d).__name__ for d in part.defects}
    if "InvalidBase64LengthDefect" in defects:
        return True
    if not defects & _BASE64_DEFECTS:
        return False
    try:
        text = data.decode(charset or "utf-8")
    except (LookupError, UnicodeDecodeError):
        return True
    return _CONTROL_RE.search(text) is not None
