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

from vaultmind.ingest.mailheaders import NOT_VALID, decode_bytes

UNDECODABLE = "a base64 text part that does not decode (damaged in transfer: export the message again to read it)"
_BASE64_DEFECTS = frozenset({"InvalidBase64LengthDefect", "InvalidBase64PaddingDefect", "InvalidBase64CharactersDefect"})
# C0 controls but tab, line breaks and form feed: bits shifted past the damage hold one in
# about every ten bytes. (Not C1's: text in cp1252 labelled latin-1, a common label, reads as them.)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def undecodable(part: Message, data: bytes, charset: str | None) -> bool:
    """Whether `part`, decoded to `data`, is base64 that does not decode: of a length no base64
    has, or decoded with a defect into bytes that are no text: read as the part's text is read
    (`mailheaders.decode_bytes`: its `charset`, else UTF-8, cp1252, latin-1), not valid in the
    charset it declares, or holding control characters. A padding defect alone on bytes that
    read as text (a missing `=`) is no damage, in any charset or none."""
    defects = {type(d).__name__ for d in part.defects}
    if "InvalidBase64LengthDefect" in defects:
        return True
    if not defects & _BASE64_DEFECTS:
        return False
    text, problem = decode_bytes(data, charset)
    return (problem or "").startswith(NOT_VALID) or _CONTROL_RE.search(text) is not None
