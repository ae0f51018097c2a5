"""WhatsApp's system notices: the lines an export writes without an author ("created group",
"You were added", the encryption notice), in a few languages, and those iOS writes as a
message of the chat itself after a left-to-right mark. A line without an author that is none
of them is no notice (`whatsapp._keep_unknown_lines`)."""

from __future__ import annotations

import re


def is_notice(text: str) -> bool:
    """Whether the text of a line without an author is a notice WhatsApp writes."""
    notice = text.strip()
    return bool(_ENCRYPTED_ANY_RE.search(notice) or _IOS_NOTICE_RE.fullmatch(notice) or _ANDROID_NOTICE_RE.fullmatch(notice))


# the encryption notice, in the languages of the edit marks
_ENCRYPTED_ANY_RE = re.compile(
    r"end-to-end[- ]?(?:encrypt|versleutel)|ende-zu-ende|de extremo a extremo|de bout en bout|ponta a ponta"
    r"|crittografia end-to-end",
    re.I,
)
# Android's notices (a name, then what happened), in English, German, Spanish, French, Italian,
# Portuguese and Dutch; and those that name no one
_ANDROID_NOTICE_RE = re.compile(
    r"(?:[^\n]{1,80}? (?:"
    r"created group\b.*|changed (?:the|this|their|to)\b.*|deleted this group's icon|joined using\b.*|joined"
    r"|pinned a message|(?:un)?blocked this contact\.?|is now an admin|started a call|'s security code changed\.?"
    r"|were added|(?:was|were) removed|turned (?:on|off)\b.*|changed the group\b.*"
    r"|hat (?:die )?Gruppe\b.*|hat .{1,200}(?:hinzugefügt|entfernt|geändert|erstellt)\.?|hat die Gruppe verlassen"
    r"|ist (?:der Gruppe|über)\b.*beigetreten\.?|wurde(?:st)? (?:hinzugefügt|entfernt)"
    r"|creó (?:el )?grupo\b.*|añadió a\b.*|eliminó a\b.*|salió(?: del grupo)?|cambió\b.*|se unió\b.*"
    r"|a créé (?:le )?groupe\b.*|a ajouté\b.*|a retiré\b.*|est parti(?:e)?|a quitté\b.*|a changé\b.*|a rejoint\b.*"
    r"|ha creato (?:il )?gruppo\b.*|ha aggiunto\b.*|ha rimosso\b.*|è uscit[oa]|ha cambiato\b.*|si è unit[oa]\b.*"
    r"|criou (?:o )?grupo\b.*|adicionou\b.*|removeu\b.*|saiu|mudou\b.*|entrou\b.*"
    r"|heeft (?:de )?groep\b.*|heeft .{1,200}(?:toegevoegd|verwijderd|gewijzigd|aangemaakt)|is vertrokken"
    r"|heeft de groep verlaten)"
    r"|(?:missed|verpasster|llamada perdida|appel manqué|chiamata persa|chamada perdida|gemiste)\b.*"
    r"|(?:you|du|te|vous|sei|você|je)\b.{0,40}\b(?:added|hinzugefügt|añadi|ajouté|aggiunt|adicionad|toegevoegd)\b.*"
    r"|(?:your|dein|tu|votre|il tuo|seu|je) (?:security code|sicherheitsnummer|código de seguridad|code de sécurité"
    r"|codice di sicurezza|código de segurança|beveiligingscode)\b.*"
    r"|(?:this|dieser|este|ce|questo|deze) (?:chat|group|gruppe|grupo|groupe|gruppo|groep)\b.*"
    r"|disappearing messages\b.*|messages to this (?:group|chat)\b.*|waiting for this message\b.*)",
    re.I,
)


_IOS_ENCRYPTED_RE = re.compile(r"messages and calls are end-to-end encrypted\b", re.I)
# A whole notice sentence: "Alice added Bob", "Bob left", "Alice changed the subject to …"
_IOS_NOTICE_RE = re.compile(
    r"(?:[^\n]{1,80}? (?:created (?:the |this )?group\b[^\n]*|added [^\n]{1,200}|removed [^\n]{1,200}|left"
    r"|joined using this group's invite link|changed (?:the subject|this group's icon|the group description"
    r"|the group name|the group settings|their phone number)\b[^\n]*|turned (?:on|off) disappearing messages\b[^\n]*"
    r"|is a contact\.?)|your security code with [^\n]+ changed[^\n]*)",
    re.I,
)
_ATTACHED_RE = re.compile(r"<attached:|\bomitted\b|\.\w{2,5}(?:\s|$)")  # a file someone sent


def ios_notice(author: str, body: str, chat: str) -> bool:
    """Whether an iOS line (its text after a left-to-right mark) is a system notice: the
    encryption notice, or a whole notice sentence said by the chat itself (the group, or the
    contact of a chat of two); never a file someone sent."""
    text = body.strip()  # (the line's marks are already stripped)
    if _IOS_ENCRYPTED_RE.match(text):
        return True
    return author == chat and _IOS_NOTICE_RE.fullmatch(text) is not None and not _ATTACHED_RE.search(text)
