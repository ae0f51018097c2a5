#!/usr/bin/env python3
"""Generate the demo memory's source and entity notes in `vault_template/.demo/`.

The demo is a small made-up memory: the Fernhill Labs team getting their app Tidepool ready
for launch in March 2024 (a Slack channel, a DM, two email threads, a runbook), Alice Chen's
family planning a birthday dinner on WhatsApp, and entity notes for the main people and
organizations. The user notes of the demo (`Projects/`, `Meetings/`, …) are written by hand
in `vault_template/.demo/`; this script generates only what vaultmind itself would write. The
source notes are written by vaultmind's own ingest into a temporary vault — the emails from .eml
files, the runbook from a Markdown file (two versions), the chats as their adapters' batches —
so their paths, front matter and bytes are exactly what `vaultmind ingest` writes.

It also re-stamps `vaultmind_body_sha256` of the template's folder READMEs after they are edited.

    python scripts/make_demo_vault.py           write the files
    python scripts/make_demo_vault.py --check   exit 1 if any file is missing or out of date

Output is deterministic: running it twice changes nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TEMPLATE = REPO / "vault_template"
DEMO = TEMPLATE / ".demo"
READMES = ("sources/README.md", "summaries/README.md", "entities/README.md")
GENERATED_DIRS = ("sources", "entities")  # under .demo/: every file there comes from this script

# ---------------------------------------------------------------------------------------------
# Rendering: vaultmind's own ingest, so the demo is byte for byte what `vaultmind ingest` writes
# ---------------------------------------------------------------------------------------------

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # run from a source checkout without installing

from vaultmind.ingest.document import parse_document_paths_with_report  # noqa: E402
from vaultmind.ingest.email import parse_email_paths  # noqa: E402
from vaultmind.ingest.model import SourceBatch  # noqa: E402
from vaultmind.ingest.writer import write_batches, write_documents  # noqa: E402
from vaultmind.markdown.frontmatter import split_frontmatter  # noqa: E402
from vaultmind.markdown.render import Message, SourceMeta, iso_utc, render_note  # noqa: E402


def chat_batch(*, source_id: str, scope: str, title: str, messages: Sequence[Message]) -> SourceBatch:
    """A chat as its adapter reads it (one batch; the writer makes one note per day)."""
    return SourceBatch(meta=SourceMeta(kind="chat", source_id=source_id, scope=scope, title=title), messages=tuple(messages))


def write_eml(folder: Path, name: str, thread: Sequence[Message]) -> None:
    """A thread as the .eml files a mail client exports: each reply answers the one before."""
    folder.mkdir(parents=True, exist_ok=True)
    for n, message in enumerate(thread):
        mail = EmailMessage()
        mail["From"] = message.author
        mail["Date"] = format_datetime(message.timestamp)
        mail["Message-ID"] = f"<{message.message_id}>"
        mail["Subject"] = message.subject or ""
        if n:
            mail["In-Reply-To"] = f"<{thread[n - 1].message_id}>"
            mail["References"] = " ".join(f"<{m.message_id}>" for m in thread[:n])
        mail.set_content(message.text)
        (folder / f"{name}-{n + 1}.eml").write_bytes(bytes(mail))


def write_document(folder: Path, name: str, *, source_ref: str, body: str, modified: datetime) -> Path:
    """A Markdown file as a drive syncs it: its `source_ref` in its front matter, its time as mtime."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(f'---\nsource_ref: "{source_ref}"\n---\n{body}', encoding="utf-8")
    os.utime(path, (modified.timestamp(), modified.timestamp()))
    return path


def render_entity(
    *,
    kind: str,
    slug: str,
    display_name: str,
    aliases: Sequence[str],
    emails: Sequence[str],
    handles: Sequence[str],
    body: str,
) -> str:
    items: list[tuple[str, Any]] = [
        ("vaultmind", "entity"),
        ("id", f"{kind}:{slug}"),
        ("kind", kind),
        ("display_name", display_name),
        ("aliases", list(aliases)),
        ("emails", list(emails)),
        ("handles", list(handles)),
    ]
    return render_note(items, body)


# ---------------------------------------------------------------------------------------------
# The demo memory
# ---------------------------------------------------------------------------------------------

ALICE, BOB, PRIYA, MARCO = "Alice Chen", "Bob Stone", "Priya Raman", "Marco Ruiz"
ALICE_MAIL = "Alice Chen <alice@fernhill.example>"
HELEN_MAIL = "Helen Okafor <helen@fernhill.example>"
DANA_MAIL = "Dana Whitfield <dana@harborhall.example>"


def at(day: str, clock: str) -> datetime:
    return datetime.fromisoformat(f"{day}T{clock}").replace(tzinfo=UTC)


def slack(channel_id: str, day: str, rows: Sequence[tuple[str, str, str]]) -> list[Message]:
    """Slack messages: the id is the message `ts`, the ref its permalink."""
    out = []
    for n, (clock, author, text) in enumerate(rows, start=1):
        when = at(day, clock)
        ts = f"{int(when.timestamp())}.{n * 100:06d}"
        ref = f"slack://archives/{channel_id}/p{ts.replace('.', '')}"
        out.append(Message(message_id=ts, author=author, timestamp=when, text=text, source_ref=ref))
    return out


def whatsapp(chat: str, day: str, rows: Sequence[tuple[str, str, str]]) -> list[Message]:
    """WhatsApp messages: a stable hex id derived from chat, time and position."""
    out = []
    for n, (clock, author, text) in enumerate(rows, start=1):
        when = at(day, clock)
        mid = "3EB0" + hashlib.sha1(f"{chat}/{iso_utc(when)}/{n}".encode()).hexdigest()[:16].upper()
        ref = f"whatsapp://{chat}/{mid}"
        out.append(Message(message_id=mid, author=author, timestamp=when, text=text, source_ref=ref))
    return out


def email(subject: str, rows: Sequence[tuple[str, str, str, str, str]]) -> list[Message]:
    """Email messages: (day, clock, From, Message-ID, text); replies get "Re: "."""
    out = []
    for n, (day, clock, sender, mid, text) in enumerate(rows):
        out.append(
            Message(
                message_id=mid,
                author=sender,
                timestamp=at(day, clock),
                text=text,
                source_ref=f"mid:{mid}",
                subject=subject if n == 0 else f"Re: {subject}",
            )
        )
    return out


LAUNCH_0304 = slack(
    "C06TIDE0001",
    "2024-03-04",
    [
        (
            "09:02:11",
            ALICE,
            "Morning all! The launch plan for Tidepool 1.0 is in [[Tidepool launch]]. Target is still Tuesday 9 April.",
        ),
        (
            "09:05:40",
            MARCO,
            "Great. Press kit draft by Friday. I've pencilled in Harbor Hall for the launch evening on the 9th.",
        ),
        (
            "09:07:03",
            PRIYA,
            "Onboarding screens: 4 of 6 done. The empty state of the tide chart still needs work.",
        ),
        (
            "09:15:27",
            BOB,
            "Heads-up: the payments SDK v3 migration is bigger than we thought.\nSubscription renewals on SDK v2 stop working after 1 April, so we can't skip it.",
        ),
        ("09:16:02", BOB, "Realistically I need about 8 more working days."),
        (
            "09:20:45",
            ALICE,
            "That puts us right at the 9th with zero buffer. Could we ship 1.0 without in-app subscriptions and add them in 1.1?",
        ),
        (
            "09:24:18",
            BOB,
            "Technically yes, but the pricing page and the paywall copy assume subscriptions. Marco?",
        ),
        (
            "09:31:56",
            MARCO,
            "Launching without the Pro tier kills the launch story. I'd rather move the date than cut Pro.",
        ),
        (
            "09:33:30",
            ALICE,
            "OK, let's not decide in chat. Bob, can you write up the migration estimate by Wednesday? We decide at Thursday's launch sync.",
        ),
        ("09:34:05", BOB, "Will do."),
        ("09:40:12", PRIYA, "Also: App Store review took 6 days last time. Worth planning for."),
        ("09:41:37", ALICE, "Good point, adding it to the risks."),
    ],
)

DM_0305 = slack(
    "D06ALBO0001",
    "2024-03-05",
    [
        (
            "14:02:09",
            BOB,
            "Got a minute on the budget? The migration estimate is done: 7 to 9 working days, plus load testing.",
        ),
        ("14:03:15", ALICE, "Sure. What do you need?"),
        (
            "14:05:48",
            BOB,
            "€1,200 for a load-testing run on staging (two days of bigger instances).\nAnd I'd like to keep the second staging cluster through April.",
        ),
        (
            "14:09:30",
            ALICE,
            "The whole Q2 launch budget is €18,000. The launch evening is €6,500 of that, paid ads are capped at €4,000 and the design contractor is €3,000.",
        ),
        (
            "14:10:52",
            ALICE,
            "So the load test is fine. The second staging cluster is another €900 a month, though.",
        ),
        ("14:12:20", BOB, "We could drop it right after launch week."),
        (
            "14:14:41",
            ALICE,
            "Deal: €1,200 for load testing approved, second cluster until 30 April, then it goes. I'll put both in [[Budget 2024]].",
        ),
        ("14:15:03", BOB, "👍 I'll post the estimate in #launch tomorrow."),
        (
            "14:20:26",
            ALICE,
            "One more thing: if we move the launch, Harbor Hall's deposit is €1,500 and it's non-refundable after 15 March. Keep that in mind for Thursday.",
        ),
        ("14:21:50", BOB, "Noted. Moving the date is still cheaper than shipping broken renewals."),
    ],
)

LAUNCH_0307 = slack(
    "C06TIDE0001",
    "2024-03-07",
    [
        (
            "15:00:04",
            ALICE,
            "Notes from today's launch sync are in [[Meetings/2024-03-07 Launch sync]]. Summary for anyone who missed it:",
        ),
        (
            "15:01:22",
            ALICE,
            "Decision: we move the public launch from Tuesday 9 April to **Tuesday 23 April**.",
        ),
        (
            "15:02:47",
            ALICE,
            "Why: the payments SDK v3 migration (Bob's estimate: 7 to 9 days plus load testing), a buffer for App Store review, and the Pro tier stays in 1.0.",
        ),
        (
            "15:04:10",
            MARCO,
            "I'll move the press embargo to 23 April, 14:00 UTC, and tell the two journalists today.",
        ),
        (
            "15:06:33",
            PRIYA,
            "That gives me time to finish onboarding and run usability tests with 5 sailors from the club.",
        ),
        (
            "15:07:58",
            BOB,
            "Then code freeze is Tuesday 16 April, with the App Store submission the same day.",
        ),
        ("15:10:14", ALICE, "I'm emailing Dana at Harbor Hall to move the launch evening to the 23rd."),
        ("15:12:39", MARCO, "Paid ads start 22 April. Budget stays at €4,000."),
        ("15:20:05", BOB, "The TestFlight beta goes out to 40 testers on 2 April."),
        (
            "16:45:51",
            ALICE,
            "Harbor Hall has the Loft free on the 23rd, 18:00 to 23:00. Confirming tomorrow morning.",
        ),
        ("16:46:20", PRIYA, "🎉"),
        ("16:50:02", MARCO, "Updated the timeline and checklist in the launch runbook."),
        ("17:02:44", BOB, "Is the launch evening still capped at 120 people?"),
        ("17:05:09", ALICE, "Yes, 120. Marco owns the guest list."),
    ],
)

FAMILY_0309 = whatsapp(
    "dads-60th",
    "2024-03-09",
    [
        (
            "10:12:31",
            "Daniel Chen",
            "Ok team, Dad's 60th birthday! He thinks we're just having lunch at home on the 23rd 😄",
        ),
        ("10:14:02", "Mei Chen", "He must not find out!! I told him Saturday is for the garden."),
        (
            "10:15:20",
            ALICE,
            "Wait, the 23rd of March, right? Not April? Our app launch moved to 23 April, I'd be useless that day.",
        ),
        ("10:16:45", "Daniel Chen", "March. Saturday 23 March."),
        ("10:20:11", "Daniel Chen", "I booked Golden Lantern, 19:00, table for 9. Private room upstairs."),
        ("10:22:37", "Mei Chen", "Good. Auntie Lin and Uncle Joe are coming from Leeds, they arrive Friday."),
        (
            "10:25:08",
            ALICE,
            "I'll get the cake from Bakery Rosa. Black sesame, his favourite.\nThey need 5 days' notice, so I'll order on Monday.",
        ),
        (
            "10:26:30",
            "Mei Chen",
            "And please bring the photo album from your flat, the one from Taiwan 1989.",
        ),
        ("10:27:02", ALICE, "Will do 📸"),
        (
            "10:31:19",
            "Daniel Chen",
            "Cost split: dinner is about £540 (£60 a head). I'll pay and we settle after. Cake is on Alice.",
        ),
        ("10:33:41", "Mei Chen", "I will pay for Auntie's train."),
        ("10:40:06", "Daniel Chen", "Remember: nobody posts anything on Facebook until after dinner!"),
    ],
)

VENUE_SUBJECT = "Tidepool launch evening, 9 April"
VENUE_THREAD = email(
    VENUE_SUBJECT,
    [
        (
            "2024-03-06",
            "10:12:00",
            ALICE_MAIL,
            "20240306101200.7c1e@fernhill.example",
            "Hi Dana,\n\nFollowing Marco's call last week, I'd like to confirm the Loft for our app launch evening on Tuesday 9 April, 18:00 to 23:00, for up to 120 guests.\nCould you send the contract and the deposit details?\n\nThanks,\nAlice",
        ),
        (
            "2024-03-06",
            "15:40:00",
            DANA_MAIL,
            "20240306154000.a93d@harborhall.example",
            "Hi Alice,\n\nHappy to. The Loft is held for you on 9 April.\nHire fee: €4,200 including AV and bar staff. Catering is quoted separately, about €18 a head for canapés.\nDeposit: €1,500, due by 15 March and non-refundable after that date.\n\nBest,\nDana Whitfield\nEvents Manager, Harbor Hall",
        ),
        (
            "2024-03-07",
            "15:25:00",
            ALICE_MAIL,
            "20240307152500.2b8f@fernhill.example",
            "Hi Dana,\n\nChange of plans on our side: we've moved the launch to Tuesday 23 April. Is the Loft free that evening, same times?\nSorry for the shuffle.\n\nAlice",
        ),
        (
            "2024-03-07",
            "16:30:00",
            DANA_MAIL,
            "20240307163000.d415@harborhall.example",
            "Hi Alice,\n\nThe Loft is free on Tuesday 23 April, 18:00 to 23:00. I'll hold it for you until tomorrow at noon.\n\nDana",
        ),
        (
            "2024-03-08",
            "09:05:00",
            ALICE_MAIL,
            "20240308090500.51c0@fernhill.example",
            "Hi Dana,\n\nPlease book the 23rd. Helen Okafor from our finance team will pay the deposit today, and Marco Ruiz owns the guest list.\n\nThank you!\nAlice",
        ),
        (
            "2024-03-08",
            "10:15:00",
            DANA_MAIL,
            "20240308101500.e6a2@harborhall.example",
            "Hi Alice,\n\nConfirmed: the Loft is yours on Tuesday 23 April, 18:00 to 23:00, for up to 120 guests. I've released the 9th.\nSame terms as before; the updated contract is attached.\n\nDana",
        ),
    ],
)

BUDGET_SUBJECT = "Q2 launch budget (€18,000)"
BUDGET_THREAD = email(
    BUDGET_SUBJECT,
    [
        (
            "2024-03-11",
            "08:40:00",
            ALICE_MAIL,
            "20240311084000.90fa@fernhill.example",
            "Hi Helen,\n\nHere is the Q2 launch budget for Tidepool, €18,000 in total:\n\n- Launch evening at Harbor Hall (venue €4,200, catering about €2,300): €6,500\n- Paid ads, from 22 April: €4,000\n- Design contractor: €3,000\n- Infrastructure (load test €1,200, second staging cluster €900 until 30 April): €2,100\n- Press kit and launch video: €1,600\n- Contingency: €800\n\nThe launch moved to 23 April; nothing in the budget changes because of it.\n\nAlice",
        ),
        (
            "2024-03-11",
            "13:05:00",
            HELEN_MAIL,
            "20240311130500.3d77@fernhill.example",
            "Hi Alice,\n\nApproved, with one condition: the contingency is only spent with my OK.\nThe Harbor Hall deposit (€1,500) went out on 8 March.\nPlease send me the final invoices by 10 May.\n\nHelen",
        ),
        (
            "2024-03-11",
            "13:20:00",
            ALICE_MAIL,
            "20240311132000.c08b@fernhill.example",
            "Thanks Helen, will do.\n\nAlice",
        ),
    ],
)

RUNBOOK_REF = "gdrive://file/1TidepoolLaunchRunbook"
RUNBOOK_DRAFT = """# Tidepool 1.0 launch runbook

Owner: Marco Ruiz. First draft, 1 March 2024: the launch is on Tuesday 9 April.
"""
RUNBOOK = """# Tidepool 1.0 launch runbook

Owner: Marco Ruiz. Last updated 7 March 2024, after the launch moved from 9 to 23 April.

## Timeline

| Date | What | Owner |
| --- | --- | --- |
| 2 April | TestFlight beta to 40 testers | Bob Stone |
| 16 April | Code freeze; App Store submission | Bob Stone |
| 22 April | Paid ads start (€4,000 cap) | Marco Ruiz |
| 23 April, 14:00 UTC | Press embargo lifts; Tidepool 1.0 is live | Marco Ruiz |
| 23 April, 18:00 | Launch evening at Harbor Hall, the Loft (120 guests) | Alice Chen |

## Launch day checklist

1. 13:30 UTC: set the release to "Ready for Sale" in App Store Connect.
2. Buy a Pro subscription on a real device and check the receipt (payments SDK v3).
3. 14:00 UTC: publish the blog post and the press kit; send the newsletter.
4. Watch the error dashboard and the subscription funnel for two hours.
5. Post the launch tweet thread and reply to the first reviews.

## Rollback

If subscription purchases fail after launch, hide the paywall with the `pro_enabled` remote
flag (free features keep working) and ship a hotfix. Do not pull the app from sale.

## Contacts

- Venue: Dana Whitfield, Harbor Hall, dana@harborhall.example
- Finance (invoices, deposit): Helen Okafor, helen@fernhill.example
- Press: Marco Ruiz
"""

ENTITIES = [
    dict(
        kind="person",
        slug="alice-chen",
        display_name=ALICE,
        aliases=["Alice", "Ali", "AC"],
        emails=["alice@fernhill.example"],
        handles=["@alice"],
        body="# Alice Chen\n\nProduct lead at [[fernhill-labs|Fernhill Labs]]; runs the [[Tidepool launch]].\n"
        "This is the vault owner's own entity note: add a nickname to `aliases` and vaultmind recognizes it everywhere.\n",
    ),
    dict(
        kind="person",
        slug="bob-stone",
        display_name=BOB,
        aliases=["Bob", "Bobby"],
        emails=["bob@fernhill.example"],
        handles=["@bob.stone"],
        body="# Bob Stone\n\nBackend engineer at [[fernhill-labs|Fernhill Labs]]. Owns payments (the SDK v3 migration),\n"
        "infrastructure and the App Store submission for Tidepool.\n",
    ),
    dict(
        kind="person",
        slug="priya-raman",
        display_name=PRIYA,
        aliases=["Priya"],
        emails=["priya@fernhill.example"],
        handles=["@priya"],
        body="# Priya Raman\n\nProduct designer at [[fernhill-labs|Fernhill Labs]]: onboarding, the tide chart, usability tests\n"
        "with sailors from the club.\n",
    ),
    dict(
        kind="org",
        slug="fernhill-labs",
        display_name="Fernhill Labs",
        aliases=["Fernhill"],
        emails=[],
        handles=["@fernhill"],
        body="# Fernhill Labs\n\nA five-person studio in Dublin that makes Tidepool, a tides, wind and swell app for\n"
        "small-boat sailors.\n",
    ),
    dict(
        kind="org",
        slug="harbor-hall",
        display_name="Harbor Hall",
        aliases=["Harbour Hall", "the Loft"],
        emails=[],
        handles=[],
        body="# Harbor Hall\n\nEvent venue on the quays. Contact: Dana Whitfield, events manager. The Loft holds 120 guests.\n",
    ),
    # Products: without their notes the small NER model takes both names for people.
    dict(
        kind="product",
        slug="tidepool",
        display_name="Tidepool",
        aliases=["Tidepool 1.0"],
        emails=[],
        handles=[],
        body="# Tidepool\n\nFernhill Labs' app: tides, wind and swell for small-boat sailors, with a paid Pro tier.\n"
        "See [[Tidepool launch]].\n",
    ),
    dict(
        kind="product",
        slug="app-store",
        display_name="App Store",
        aliases=["App Store Connect"],
        emails=[],
        handles=[],
        body="# App Store\n\nApple's app store. Tidepool ships through it; review took 6 days last time.\n",
    ),
]


def ingested(work: Path) -> dict[str, str]:
    """The demo's source notes, by path under `.demo/`: written by vaultmind's ingest into a
    fresh vault in `work`, from export files (emails, the runbook) and adapter batches (chats)."""
    vault, exports = work / "vault", work / "exports"
    vault.mkdir()
    write_batches(
        vault,
        [
            chat_batch(
                source_id="slack:fernhill/launch",
                scope="slack/fernhill/launch",
                title="#launch",
                messages=[*LAUNCH_0304, *LAUNCH_0307],
            ),
            chat_batch(
                source_id="slack:fernhill/dm-alice-bob",
                scope="slack/fernhill/dm-alice-bob",
                title="Alice Chen & Bob Stone",
                messages=DM_0305,
            ),
            chat_batch(
                source_id="whatsapp:dads-60th", scope="whatsapp/dads-60th", title="Dad's 60th", messages=FAMILY_0309
            ),
        ],
    )
    mailbox = exports / "mail" / "fernhill"  # the folder's name is the account
    write_eml(mailbox, "venue", VENUE_THREAD)
    write_eml(mailbox, "budget", BUDGET_THREAD)
    write_batches(vault, parse_email_paths([mailbox]))
    # the runbook's two versions: the first draft, then the text after the launch moved
    for n, (body, modified) in enumerate(
        [(RUNBOOK_DRAFT, at("2024-03-01", "10:00:00")), (RUNBOOK, at("2024-03-07", "16:50:00"))], start=1
    ):
        drive = exports / f"v{n}" / "drive"
        write_document(drive, "tidepool-launch-runbook", source_ref=RUNBOOK_REF, body=body, modified=modified)
        write_documents(vault, parse_document_paths_with_report([drive])[0])
    return {
        path.relative_to(vault).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted((vault / "sources").rglob("*.md"))
    }


def demo_files() -> dict[str, str]:
    """Every generated demo note, by path under `.demo/`."""
    with tempfile.TemporaryDirectory(prefix="vaultmind-demo-") as work:
        files = ingested(Path(work))
    for e in ENTITIES:
        files[f"entities/{e['kind']}/{e['slug']}.md"] = render_entity(**e)  # type: ignore[arg-type]
    return files


# ---------------------------------------------------------------------------------------------
# README hashes
# ---------------------------------------------------------------------------------------------


def stamp_body_hash(text: str) -> str:
    """A vaultmind-owned README re-rendered with `vaultmind_body_sha256` matching its body."""
    front = split_frontmatter(text)
    if front.error or front.data.get("vaultmind") != "readme":
        raise ValueError(f"not a vaultmind README: {front.error or front.data}")
    return render_note([("vaultmind", "readme")], front.body)


def wanted() -> dict[Path, str]:
    out = {DEMO / rel: text for rel, text in demo_files().items()}
    for rel in READMES:
        path = TEMPLATE / rel
        out[path] = stamp_body_hash(path.read_text(encoding="utf-8"))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="only check that the files are up to date")
    args = parser.parse_args(argv)
    files = wanted()
    stale = (
        sorted(p for d in GENERATED_DIRS for p in (DEMO / d).rglob("*") if p.is_file() and p not in files)
        if DEMO.is_dir()
        else []
    )
    changed = [p for p, text in files.items() if not p.is_file() or p.read_bytes() != text.encode("utf-8")]
    if args.check:
        for p in changed:
            print(f"out of date: {p.relative_to(REPO)}")
        for p in stale:
            print(f"not generated: {p.relative_to(REPO)}")
        return 1 if changed or stale else 0
    for p in changed:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(files[p].encode("utf-8"))
        print(f"wrote {p.relative_to(REPO)}")
    for p in stale:
        p.unlink()
        print(f"removed {p.relative_to(REPO)}")
        for folder in p.parents:  # the folders it leaves empty go with it
            if folder == DEMO or any(folder.iterdir()):
                break
            folder.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
