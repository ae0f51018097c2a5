"""What an email adds to its thread: quoted replies, signatures and list footers cut.

`extract_new_text(body)` is the one entry point the email adapter uses; the three steps are
public so each can be checked alone:

1. `cut_footer` — mailing-list and notification footers at the end of a message (Mailman's
   `____ / <list> mailing list`, Google Groups' "You received this message because…", GitHub's
   "Reply to this email directly…", an "unsubscribe" / "manage preferences" line that is a link
   or a short link text). Only the tail of the message is searched, and a trigger cuts from the
   start of its paragraph, so a sentence that mentions "unsubscribe" is kept.
2. `cut_quotation` — the quoted parent:
   - an *attribution* ("On <date>, <name> wrote:" over up to three lines, in English, French,
     German, Dutch, Spanish, Portuguese, Italian, Polish, Scandinavian, Czech, Russian,
     Vietnamese; "<date> <name> <addr>:"; "<name> wrote:") followed by `>` lines;
   - a *separator* followed by the unquoted original: "-----Original Message-----" and its
     localized variants, "Forwarded message", "Begin forwarded message:", an Outlook header
     block (`From:` + `Sent:`/`Date:`/`To:`/`Subject:`, also localized and `*bold*`), with the
     rule (`____`, `---`) above it — everything from the separator on is cut;
   - runs of `>` lines: a trailing run of two or more lines, or a run of three or more followed
     by the reply (bottom-posting). A message that answers inline (two or more quote runs each
     followed by new text) keeps its inline quotes as context; only the trailing quote goes.
3. `cut_signature` — a `-- ` signature block at the end, "Sent from my iPhone"-style lines,
   and the contact block under a sign-off + name ("Thanks,\\nAlex\\n+1 555…": the phone/title/
   URL lines go, "Thanks,\\nAlex" stays).

If nothing is left (a bare forward, a reply that only quotes), the whole body is kept: a
message never loses its text because of the cleaning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_MAX_SPLITTER_CHARS = 400
_TAIL_LINES = 14  # non-blank lines at the end searched for footers and signatures
_MAX_SIGNATURE_LINES = 12

# A quoted line of a plain-text mail, not Markdown: unlike `markdown.blocks.QUOTE_RE` (at most
# three spaces before a Markdown quote marker; four make code), any indent of spaces or tabs.
_QUOTE_RE = re.compile(r"^[ \t]*>")
_SEPARATOR_RE = re.compile(r"^[ \t]*(?:[-_=*~—–]\s*){3,}$")
_ORIGINAL_RE = re.compile(
    r"^[ \t>]*[-_=*~ ]{2,}[ \t]*(?:original message|reply message|forwarded message|"
    r"ursprüngliche nachricht|weitergeleitete nachricht|message d'origine|message original|"
    r"message transféré|mensaje original|mensaje reenviado|messaggio originale|"
    r"messaggio inoltrato|oorspronkelijk bericht|doorgestuurd bericht|oprindelig meddelelse|"
    r"videresendt meddelelse|opprinnelig melding|ursprungligt meddelande|"
    r"vidarebefordrat meddelande|mensagem original|mensagem encaminhada|"
    r"wiadomość oryginalna|wiadomość przekazana|původní zpráva|přeposlaná zpráva|"
    r"исходное сообщение|пересылаемое сообщение|переслано)[ \t]*[-_=*~ ]{2,}[ \t]*$",
    re.IGNORECASE,
)
_FORWARD_LINE_RE = re.compile(
    r"^[ \t]*(?:begin forwarded message|anfang der weitergeleiteten nachricht|"
    r"début du message réexpédié|inicio del mensaje reenviado|início da mensagem reencaminhada|"
    r"inizio messaggio inoltrato|begin doorgestuurd bericht)[ \t]*:[ \t]*$",
    re.IGNORECASE,
)
_WROTE = (
    r"(?:wrote|writes|a écrit|schrieb|schreef|geschreven|escribió|escreveu|ha scritto|"
    r"napisał|napisała|skrev|napsal|napsala|написал|написала|пишет|đã viết)"
)
_ON_START = r"^[ \t]*(?:[-—]+[ \t]*)?(?:on|le|am|op|el|em|il|w dniu|den|på|dne|vào|в)\s"
_ON_START_RE = re.compile(_ON_START, re.IGNORECASE)
_ON_WROTE_RE = re.compile(_ON_START + r".{1,300}?" + _WROTE + r"[ \t]*:?[ \t]*[-—]*[ \t]*$", re.IGNORECASE)
_NAME_WROTE_RE = re.compile(r"^[ \t]*\S.{0,300}?\b" + _WROTE + r"[ \t]*:[ \t]*$", re.IGNORECASE)
_DIGIT_OR_ADDRESS_RE = re.compile(r"\d|@")
_ADDRESS_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DATE_RE = re.compile(
    r"\d{1,4}[./-]\d{1,2}[./-]\d{1,4}|\d{1,2}\.?\s+[^\W\d_]{3,}\.?,?\s+\d{4}|"
    r"[^\W\d_]{3,}\.?\s+\d{1,2},?\s+\d{4}",
)
_HEADER_RE = re.compile(
    r"^[ \t]*[*_]{0,2}[ \t]*([^\W\d_][^\W\d_ .-]*(?: [^\W\d_]+)?)[ \t]*[*_]{0,2}[ \t]*:(.*)$"
)
_HEADER_KEYS: dict[str, str] = {}
for _cls, _names in (
    ("from", "from von de van fra från od da от lähettäjä feladó 发件人 寄件者 差出人"),
    ("date", "date sent datum gesendet envoyé enviado inviato verzonden skickat sendt data wysłano "
             "wysłane отправлено дата päivämäärä 发送时间 日期 送信日時"),
    ("to", "to cc an à a para aan til till do кому копия kopie vastaanottaja 收件人 宛先"),
    ("subject", "subject betreff objet asunto assunto oggetto onderwerp emne ämne temat тема aihe "
                "主题 主旨 件名"),
):  # fmt: skip
    for _name in _names.split():
        _HEADER_KEYS.setdefault(_name, _cls)

_MOBILE_RES = (
    re.compile(r"^sent from my [\w'’-]+(?: [\w'’-]+){0,4}[.!]?$", re.IGNORECASE),
    re.compile(
        r"^sent (?:from|with|via|using) (?:mail|outlook|yahoo mail|aol|samsung|mail for windows|"
        r"proton ?mail|sparrow|mailbox|airmail|spark|blackberry|gmail)\b[^\n]{0,60}$",
        re.IGNORECASE,
    ),
    re.compile(r"^get outlook for (?:ios|android)\b[^\n]{0,40}$", re.IGNORECASE),
    re.compile(
        r"^(?:von meinem|envoyé de mon|enviado desde mi|enviado do meu|enviado de meu|"
        r"inviato dal mio|inviato da|verzonden (?:vanaf|met) mijn|skickat från min|sendt fra min|"
        r"wysłane z mojego|отправлено с (?:моего )?|odesláno z)\s*\S[^\n]{0,40}$",
        re.IGNORECASE,
    ),
)
_SIGN_OFF_RE = re.compile(
    r"^(?:thanks|thank you|many thanks|thanks again|cheers|best|best regards|kind regards|"
    r"regards|warm regards|warmly|sincerely|yours|yours truly|all the best|br|brgds|"
    r"viele grüße|beste grüße|liebe grüße|mit freundlichen grüßen|gruß|grüße|cordialement|"
    r"bien à vous|saludos|un saludo|atentamente|abraços|cumprimentos|grazie|saluti|"
    r"cordiali saluti|met vriendelijke groet|groeten|mvh|hälsningar|pozdrawiam|"
    r"с уважением|спасибо)[ \t]*[,.!]*$",
    re.IGNORECASE,
)
_NAME_RE = re.compile(r"^[-–—~ ]*[^\W\d_][\w.'’-]*(?: [^\W\d_][\w.'’-]*){0,3}[ \t]*$")
_CONTACT_RE = re.compile(
    r"\+?\d[\d ().-]{6,}\d|[\w.+-]+@[\w-]+\.[\w.-]+|https?://|www\.|\||"
    r"^(?:tel|phone|mobile|mob|cell|fax|m|t|p|e|w)\b\.?\s*:",
    re.IGNORECASE,
)
_FOOTER_RE = re.compile(  # always a footer
    r"you received this (?:message|email) because you are subscribed|"
    r"to unsubscribe from this (?:group|topic)|you are receiving this because|"
    r"you are receiving this (?:e-?mail|message) because|"
    r"reply to this email directly(?:,| or) view it on",
    re.IGNORECASE,
)
_WEAK_FOOTER_RE = re.compile(  # a footer when the line is a link or a short link text
    r"\bunsubscribe\b|manage (?:your )?(?:email |notification |subscription )?(?:preferences|settings)|"
    r"update your (?:email )?preferences|opt[- ]out",
    re.IGNORECASE,
)
_LINKISH_RE = re.compile(r"https?://|www\.|<[^>]+>|\bclick\b|\bhere\b|\blink\b|\|", re.IGNORECASE)
_MAILMAN_RE = re.compile(r"mailing list|/listinfo|/mailman/", re.IGNORECASE)
_UNDERSCORES_RE = re.compile(r"^[ \t]*_{10,}[ \t]*$")
_SIG_DELIMITER_RE = re.compile(r"^(?:-- ?|--)$")


# --- lines ----------------------------------------------------------------------------------


def _split(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _blank(line: str) -> bool:
    return not line.strip()


def _tidy(lines: Sequence[str]) -> str:
    """Trailing spaces dropped, runs of blank lines collapsed, no blank lines at either end."""
    out: list[str] = []
    for line in lines:
        line = line.rstrip()
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def _tail_start(lines: Sequence[str], count: int) -> int:
    """Index of the first of the last `count` non-blank lines."""
    seen = 0
    for i in range(len(lines) - 1, -1, -1):
        if not _blank(lines[i]):
            seen += 1
            if seen == count:
                return i
    return 0


def _paragraph_start(lines: Sequence[str], i: int) -> int:
    while i > 0 and not _blank(lines[i - 1]):
        i -= 1
    return i


def _back_over_separators(lines: Sequence[str], i: int) -> int:
    """Move a cut point up over blank and rule lines (`____`, `---`, `***`) just above it."""
    while i > 0 and (_blank(lines[i - 1]) or _SEPARATOR_RE.match(lines[i - 1])):
        i -= 1
    return i


# --- footers --------------------------------------------------------------------------------


def _footer_cut(lines: list[str]) -> list[str]:
    start = _tail_start(lines, _TAIL_LINES)
    for i in range(start, len(lines)):
        line = lines[i]
        if _QUOTE_RE.match(line):
            continue
        if _UNDERSCORES_RE.match(line) and any(_MAILMAN_RE.search(x) for x in lines[i + 1 : i + 4]):
            cut = i
        elif _FOOTER_RE.search(line) or (
            _WEAK_FOOTER_RE.search(line) and (_LINKISH_RE.search(line) or len(line.split()) <= 4)
        ):
            cut = _paragraph_start(lines, i)
            if cut > 0 and lines[cut - 1].strip() in ("--", "—", "–"):
                cut -= 1
        else:
            continue
        cut = _back_over_separators(lines, cut)
        if any(not _blank(x) for x in lines[:cut]):
            return lines[:cut]
    return lines


def cut_footer(text: str) -> str:
    """`text` without a mailing-list / notification footer at its end."""
    return "\n".join(_footer_cut(_split(text)))


# --- quotations -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Splitter:
    start: int
    end: int  # exclusive
    strong: bool  # cuts even when no `>` lines follow


def _header_class(line: str) -> str | None:
    m = _HEADER_RE.match(line)
    if m is None or not m.group(2).strip():
        return None
    return _HEADER_KEYS.get(m.group(1).strip().lower())


def _header_block(lines: Sequence[str], i: int) -> int:
    """End (exclusive) of an Outlook-style header block starting at `i`, or `i` if none."""
    classes: list[str] = []
    j = i
    while j < len(lines) and len(classes) < 8:
        cls = _header_class(lines[j])
        if cls is None:
            break
        classes.append(cls)
        j += 1
    if len(classes) < 2 or "from" not in classes:
        return i
    if len(set(classes)) < 2:
        return i
    first_from = lines[i + classes.index("from")]
    if len(classes) < 3 and "@" not in first_from and "date" not in classes:
        return i
    return j


def _find_splitter(lines: Sequence[str], i: int) -> _Splitter | None:
    line = lines[i]
    if _blank(line) or _QUOTE_RE.match(line) or len(line) > _MAX_SPLITTER_CHARS:
        return None
    if _ORIGINAL_RE.match(line) or _FORWARD_LINE_RE.match(line):
        return _Splitter(i, i + 1, True)
    end = _header_block(lines, i)
    if end > i:
        return _Splitter(i, end, True)
    on_start = _ON_START_RE.match(line) is not None
    window: list[str] = []
    for j in range(i, min(i + 3, len(lines))):
        piece = lines[j]
        if _blank(piece) or _QUOTE_RE.match(piece) or (j > i and _header_class(piece)):
            break
        window.append(piece.strip())
        joined = " ".join(window)
        if len(joined) > _MAX_SPLITTER_CHARS:
            break
        found: _Splitter | None = None
        colon = joined.endswith(":")
        if not on_start and not colon:
            continue
        if on_start and _ON_WROTE_RE.match(joined) and _DIGIT_OR_ADDRESS_RE.search(joined):
            found = _Splitter(i, j + 1, True)
        elif not colon or (j > i and not _DIGIT_OR_ADDRESS_RE.search(window[0])):
            continue  # a weak attribution over several lines starts with its date or address
        elif _NAME_WROTE_RE.match(joined) or (
            joined.endswith(":") and _ADDRESS_RE.search(joined) and _DATE_RE.search(joined)
        ):
            found = _Splitter(i, j + 1, False)
        if found is None:
            continue
        first = window[0]
        continued = first.endswith(("<", ",")) or first.count("<") > first.count(">")
        if j > i and not found.strong and not continued:
            # the attribution may start on a later line ("See you at 5.\nBob <b@x.org> wrote:")
            later = _find_splitter(lines, i + 1)
            if later is not None and later.end == found.end:
                return None
        return found
    return None


def _next_nonblank(lines: Sequence[str], i: int) -> int:
    while i < len(lines) and _blank(lines[i]):
        i += 1
    return i


def _quote_run_end(lines: Sequence[str], i: int) -> int:
    """End (exclusive) of the run of `>` lines starting at `i` (blank lines inside included)."""
    end = i
    j = i
    while j < len(lines):
        if _QUOTE_RE.match(lines[j]):
            end = j + 1
        elif not _blank(lines[j]):
            break
        j += 1
    return end


@dataclass(slots=True)
class _Block:
    start: int  # the attribution's first line, or the run's first line
    run_start: int
    end: int  # exclusive
    attributed: bool

    def quoted_lines(self, lines: Sequence[str]) -> int:
        return sum(1 for x in lines[self.run_start : self.end] if _QUOTE_RE.match(x))


def _cut_at_separator(lines: list[str]) -> tuple[list[str], list[_Block]]:
    """Cut at the first separator followed by unquoted text; collect the quote blocks before it."""
    blocks: list[_Block] = []
    i = 0
    while i < len(lines):
        if _QUOTE_RE.match(lines[i]):
            end = _quote_run_end(lines, i)
            blocks.append(_Block(i, i, end, False))
            i = end
            continue
        splitter = _find_splitter(lines, i)
        if splitter is None:
            i += 1
            continue
        after = _next_nonblank(lines, splitter.end)
        if after < len(lines) and _QUOTE_RE.match(lines[after]):
            end = _quote_run_end(lines, after)
            blocks.append(_Block(splitter.start, after, end, True))
            i = end
        elif splitter.strong:
            return lines[: _back_over_separators(lines, splitter.start)], blocks
        else:
            i = splitter.end
    return lines, blocks


def _quotation_cut(lines: list[str]) -> list[str]:
    return _quotation_split(lines)[0]


def _quotation_split(lines: list[str]) -> tuple[list[str], list[str]]:
    """(the lines kept, the lines of the quoted parent cut from them, in order)."""
    whole = lines
    lines, blocks = _cut_at_separator(lines)
    tail = whole[len(lines) :]  # the separator and the original below it
    if not blocks:
        return lines, tail
    trailing: list[_Block] = []
    for block in reversed(blocks):  # at the end, or only more trailing quotes below
        after = _next_nonblank(lines, block.end)
        if after >= len(lines) or (trailing and after == trailing[-1].start):
            trailing.append(block)
        else:
            break
    followed = [b for b in blocks if b not in trailing]
    drop: list[_Block] = [b for b in trailing if b.attributed or b.quoted_lines(lines) >= 2]
    if len(followed) < 2:  # not an inline reply: the quoted parent above the answer goes too
        drop += [b for b in followed if b.attributed or b.quoted_lines(lines) >= 3]
    if not drop:
        return lines, tail
    keep: list[str] = []
    cut: list[str] = []
    cursor = 0
    for block in sorted(drop, key=lambda b: b.start):
        keep.extend(lines[cursor : block.start])
        cut.extend([*lines[block.start : block.end], ""])
        cursor = block.end
    keep.extend(lines[cursor:])
    return keep, cut + tail


def cut_quotation(text: str) -> str:
    """`text` without the quoted parent message(s) (see the module docstring); lines verbatim."""
    lines = _split(text)
    body, signature = _detach_signature(lines)
    return "\n".join(_quotation_cut(body) + signature).strip("\n")


# --- signatures -----------------------------------------------------------------------------


def _detach_signature(lines: list[str]) -> tuple[list[str], list[str]]:
    """Split off a trailing `-- ` signature block (short, no quotes below it)."""
    start = _tail_start(lines, _MAX_SIGNATURE_LINES + 1)
    for i in range(len(lines) - 1, start - 1, -1):
        if _SIG_DELIMITER_RE.match(lines[i].rstrip("\t")):
            below = lines[i + 1 :]
            if any(_QUOTE_RE.match(x) for x in below):
                return lines, []
            if any(_find_splitter(below, k) for k in range(len(below))):
                return lines, []
            return lines[:i], lines[i:]
    return lines, []


def _is_mobile_line(line: str) -> bool:
    text = line.strip()
    return bool(text) and len(text) <= 80 and any(rx.match(text) for rx in _MOBILE_RES)


def _signature_cut(lines: list[str]) -> list[str]:
    lines, _ = _detach_signature(lines)
    # "Sent from my iPhone" and friends at the end
    end = len(lines)
    while True:
        last = end - 1
        while last >= 0 and _blank(lines[last]):
            last -= 1
        if last > 0 and _is_mobile_line(lines[last]) and any(not _blank(x) for x in lines[:last]):
            end = last
            continue
        break
    lines = lines[:end]
    # the contact block under a sign-off and a name
    start = _tail_start(lines, 10)
    for i in range(len(lines) - 3, start - 1, -1):
        if not _SIGN_OFF_RE.match(lines[i].strip()):
            continue
        name = _next_nonblank(lines, i + 1)
        if name >= len(lines) or not _NAME_RE.match(lines[name].strip()) or len(lines[name].strip()) > 40:
            break
        block = [x for x in lines[name + 1 :] if not _blank(x)]
        if (
            block
            and len(block) <= 8
            and all(len(x.strip()) <= 80 and not _QUOTE_RE.match(x) for x in block)
            and any(_CONTACT_RE.search(x.strip()) for x in block)
            and not any(x.strip().endswith(("?", ".")) and len(x.split()) > 6 for x in block)
        ):
            lines = lines[: name + 1]
        break
    return lines


def cut_signature(text: str) -> str:
    """`text` without its signature: `-- ` block, mobile sign-offs, a sign-off's contact block."""
    return _tidy(_signature_cut(_split(text)))


# --- all together ---------------------------------------------------------------------------


def extract_new_text(text: str) -> str:
    """Only what this message adds: footer, quoted parent and signature cut, whitespace tidied.

    When nothing would be left, the (footer-less) body is kept whole instead.
    """
    return split_quoted(text)[0]


def split_quoted(text: str) -> tuple[str, str]:
    """(`extract_new_text(text)`, the quoted parent it cut, lines verbatim and tidied; "" when
    nothing was cut or the body is kept whole)."""
    lines = _split(text)
    without_footer = _footer_cut(lines)
    body, signature = _detach_signature(without_footer)
    kept, cut = _quotation_split(body)
    new = _tidy(_signature_cut(kept + signature))
    if not new:
        return _tidy(without_footer) or _tidy(lines), ""
    return new, _tidy(cut)
