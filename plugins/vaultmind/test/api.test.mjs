// The API client under Node, its transport answered by the tests: reading daemon.json, link
// texts, the related-memory query and the selection's question, the status bar, a question's timeout.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  Busy, DaemonClient, POLL_MS, POLL_WAITING_MS, START_FILE, START_FRESH_MS, Starting, VaultmindError, describeStatus, hostPort,
  bestOfEachNote, hitTarget, linkText, parseDaemon, relatedQuery, samePath, selectionQuestion, serveCommand, snippet, statusBar,
} from "../build/api.mjs";

/** A client whose daemon.json is `daemon` and whose transport is `answer` (each request also kept in `seen`). */
function clientOf(daemon, answer, timeoutMs) {
  const seen = [];
  const transport = async (request) => {
    seen.push(request);
    return answer(request);
  };
  const client = new DaemonClient(async () => (daemon === null ? null : JSON.stringify(daemon)), transport, "/v", timeoutMs);
  return { client, seen };
}

const READY = { pid: 1, vault: "/v", ready: true };
const STATUS = { loading: false, index: { health: "ok", notice: null }, notes: { total: 3 }, leaves: 9, queue: null, problems: [] };

/** Answers health and status as a daemon does, `status` as the status. */
function daemonAnswering(status) {
  return (request) => ({ status: 200, text: JSON.stringify(request.url.endsWith("/v1/health") ? READY : status) });
}

test("daemon.json gives host, port and token; a broken one is named", () => {
  assert.deepEqual(parseDaemon('{"pid": 7, "port": 8123, "token": "t"}'), { host: "127.0.0.1", port: 8123, token: "t", pid: 7 });
  assert.equal(parseDaemon('{"pid": 7, "port": 8123, "token": "t", "host": "::1"}').host, "::1");
  for (const text of ["", "{", '{"pid": 7, "port": "x", "token": "t"}', '{"pid": 7, "port": 80}', "[]"]) {
    assert.throws(() => parseDaemon(text), (error) => error instanceof VaultmindError && /daemon\.json/.test(error.message));
  }
});

test("a hit opens at its block or heading", () => {
  assert.equal(linkText({ note_path: "sources/chat/a b/2024-03-01.md", anchor: "^m-1" }), "sources/chat/a b/2024-03-01#^m-1");
  assert.equal(linkText({ note_path: "notes/plan.md", anchor: "#Day 2#Notes" }), "notes/plan#Day 2#Notes");
  assert.equal(linkText({ note_path: "Budget.md", anchor: null }), "Budget");
});

test("the related query keeps words, drops front matter, code and markup", () => {
  const query = relatedQuery("Launch plan", "---\ntags: [x]\nsecret: yes\n---\n# Venue\nBook [[harbor-hall|Harbor Hall]] by **Friday** ^b1\n```\ncode words\n```\n");
  assert.equal(query, "Launch plan Venue Book Harbor Hall by Friday");
  assert.ok(relatedQuery("T", "word ".repeat(500)).length <= 600);
});

test("the command to start the daemon is quoted for a shell", () => {
  assert.equal(serveCommand("/home/me/Notes"), "vaultmind serve --vault /home/me/Notes");
  assert.equal(serveCommand("/home/me/My Notes/it's"), `vaultmind serve --vault '/home/me/My Notes/it'"'"'s'`);
});

test("a restarted daemon is found again: a refused request or a 401 reads daemon.json once more", async () => {
  const files = ['{"pid": 1, "port": 1001, "token": "old"}', '{"pid": 2, "port": 1002, "token": "new"}'];
  let reads = 0;
  const seen = [];
  const client = new DaemonClient(
    async (path) => (path === START_FILE ? null : files[Math.min(reads++, files.length - 1)]),
    async (request) => {
      seen.push(`${request.url} ${request.headers.Authorization}`);
      if (request.url.includes(":1001")) return { status: 401, text: '{"error": {"message": "no"}}' };
      return { status: 200, text: '{"pid": 2, "vault": "/v", "ready": true}' };
    },
    "/v",
  );
  assert.equal((await client.health()).pid, 2);
  assert.deepEqual(seen, ["http://127.0.0.1:1001/v1/health Bearer old", "http://127.0.0.1:1002/v1/health Bearer new"]);
  assert.equal(reads, 2);
});

test("the status bar counts a file with a warning as indexed, as `vaultmind status` does", () => {
  const status = {
    loading: false, index: { health: "ok", notice: null }, notes: { total: 3 }, leaves: 9, queue: null,
    problems: [
      { path: "a.md", kind: "frontmatter", message: "bad YAML", indexed: true },
      { path: "b.md", kind: "conflict_copy", message: "a copy", indexed: true },
      { path: "big.md", kind: "too_large", message: "over the limit", indexed: false },
    ],
  };
  const { text, tip } = describeStatus(status);
  assert.equal(text, "memory: 3 notes ⚠");
  assert.match(tip, /^1 file not indexed$/m);
  assert.match(tip, /^2 files with warnings$/m);
});

test("an IPv6 daemon host is bracketed in the URLs the client builds", async () => {
  assert.equal(hostPort("::1", 8123), "[::1]:8123");
  assert.equal(hostPort("[::1]", 8123), "[::1]:8123");
  assert.equal(hostPort("127.0.0.1", 8123), "127.0.0.1:8123");
  assert.equal(hostPort("localhost", 8123), "localhost:8123");
  const { client, seen } = clientOf({ pid: 1, port: 8123, token: "t", host: "::1" }, (request) => {
    const url = new URL(request.url); // what Obsidian's requestUrl and fetch parse
    return { status: 200, text: JSON.stringify({ ...READY, host: url.hostname, port: url.port }) };
  });
  const health = await client.health();
  assert.equal(seen[0].url, "http://[::1]:8123/v1/health");
  assert.deepEqual([health.host, health.port], ["[::1]", "8123"]);
  const down = clientOf({ pid: 1, port: 8123, token: "t", host: "::1" }, async () => {
    throw new Error("ECONNREFUSED");
  }).client;
  await assert.rejects(down.health(), (error) => error.message === "vaultmind does not answer at [::1]:8123 (ECONNREFUSED)");
});

test("the related query leaves out front matter and comments, and keeps hyphens within words", () => {
  // front matter alone, with no newline after its closing rule
  assert.equal(relatedQuery("Dune", "---\nBook title: Dune\nrating: 5\n---"), "Dune");
  assert.equal(relatedQuery("Dune", "---\r\nrating: 5\r\n---\r\nA desert planet."), "Dune A desert planet.");
  assert.equal(relatedQuery("Empty", "---\n---\nText"), "Empty Text");
  assert.equal(
    relatedQuery("Call", "Met %%private aside%% Jean-Luc on 2024-03-07 <!-- draft: ask Sam -->about the well-known plan"),
    "Call Met Jean-Luc on 2024-03-07 about the well-known plan",
  );
  assert.equal(relatedQuery("Log", "Seen\n%%\nhidden\n%%\nkept\n%%never closed\nhidden too"), "Log Seen kept");
  assert.equal(relatedQuery("Log", "Seen\n<!--\nnever closed\nhidden"), "Log Seen");
  // rules, list dashes and a dash between words are markup, not words
  assert.equal(relatedQuery("T", "- item one\n---\nA -- B - C\n* [x] done-ish -"), "T item one A B C [x] done-ish");
});

test("a selection over the API's 2,000 characters is cut to its first whole words", () => {
  const selection = "launch venue ".repeat(300); // 3,900 characters
  const question = selectionQuestion(selection);
  assert.ok(question.length <= 2000 && question.length > 1990, `${question.length} characters`);
  assert.ok(selection.startsWith(`${question} `)); // whole words: the cut falls between two
  assert.equal(selectionQuestion("  Which venue\nholds 120 guests?  "), "Which venue holds 120 guests?");
  assert.equal(selectionQuestion("x".repeat(2500)), "x".repeat(2000)); // one long word: its start
  assert.equal(relatedQuery("y".repeat(700), ""), "y".repeat(600));
});

test("a question the daemon does not answer in time ends with a message that says so", async () => {
  const { client, seen } = clientOf({ pid: 1, port: 8123, token: "t" }, () => new Promise(() => {}), 50);
  const started = Date.now();
  await assert.rejects(client.ask("Which venue?", 5), (error) => {
    assert.ok(error instanceof VaultmindError);
    assert.equal(error.message, "vaultmind did not answer within 0.05 s");
    assert.match(error.hint, /busy loading the index/);
    return true;
  });
  assert.ok(Date.now() - started < 5000);
  assert.equal(seen.length, 1); // not asked again: it is running, only slow
  await assert.rejects(client.related("a.md", "Launch", "venue", 5), /did not answer within 0\.05 s/);
  // the status bar's looks too: it looks again only once the last look ended
  await assert.rejects(client.status(), /did not answer within 0\.05 s/);
  await assert.rejects(client.health(), /did not answer within 0\.05 s/);
});

test("the status bar shows jobs degraded while Ollama does not answer, with the queue's notice", () => {
  const notice = "Ollama at http://127.0.0.1:11434 is not reachable: 4 leaves wait for the LLM's admission decision";
  const status = { ...STATUS, queue: { depth: 5, failed: 0, health: "degraded", notice } };
  const { text, tip } = describeStatus(status);
  assert.equal(text, "memory: 3 notes ⚠");
  assert.match(tip, /^background jobs degraded$/m);
  assert.ok(tip.split("\n").includes(notice));
  assert.equal(describeStatus({ ...STATUS, queue: { depth: 0, failed: 0, health: "ok", notice: null } }).text, "memory: 3 notes");
});

test("the status bar: not running only when no daemon answers, and looked at again sooner then", async () => {
  const stopped = await statusBar(clientOf(null, () => assert.fail("no daemon.json: nothing to ask")).client);
  assert.equal(stopped.text, "memory: not running");
  assert.match(stopped.tip, /^vaultmind is not running for this vault: start it in a terminal: vaultmind serve --vault \/v$/);
  assert.equal(stopped.nextPollMs, POLL_WAITING_MS);
  assert.ok(POLL_WAITING_MS <= 5000 && POLL_MS >= 30000);

  const starting = await statusBar(clientOf({ pid: 1, port: 1, token: "t" }, () => ({ status: 200, text: JSON.stringify({ ...READY, ready: false }) })).client);
  assert.deepEqual([starting.text, starting.nextPollMs], ["memory: starting…", POLL_WAITING_MS]);

  const running = await statusBar(clientOf({ pid: 1, port: 1, token: "t" }, daemonAnswering(STATUS)).client);
  assert.deepEqual([running.text, running.nextPollMs], ["memory: 3 notes", POLL_MS]);

  const failing = await statusBar(clientOf({ pid: 1, port: 1, token: "t" }, (request) =>
    request.url.endsWith("/v1/health")
      ? { status: 200, text: JSON.stringify(READY) }
      : { status: 500, text: '{"error": {"message": "the index could not be read"}}' },
  ).client);
  assert.deepEqual([failing.text, failing.tip, failing.nextPollMs], ["memory: ⚠", "the index could not be read", POLL_MS]);

  // a status the plugin cannot read (a bug of its own) is no stopped daemon
  await assert.rejects(statusBar(clientOf({ pid: 1, port: 1, token: "t" }, daemonAnswering(null)).client), TypeError);
});

test("a daemon starting before its address is out is starting, with what it does; a record left behind is not", async () => {
  const now = 1_800_000_000_000;
  const doing = "upgrading the index (migration 0035) 3/9";
  const record = (ageMs) => JSON.stringify({ pid: 7, state: "starting", doing, since: (now - 60_000) / 1000, updated: (now - ageMs) / 1000 });
  const clientWith = (start, daemon = null) => new DaemonClient(
    async (path) => (path === START_FILE ? start : daemon),
    async () => assert.fail("no address to ask"),
    "/v",
    1000,
    () => now,
  );
  const starting = await statusBar(clientWith(record(2_000)));
  assert.deepEqual([starting.text, starting.nextPollMs], ["memory: starting…", POLL_WAITING_MS]);
  assert.equal(starting.tip, `the daemon is starting: ${doing}; questions are answered once it is ready`);
  await assert.rejects(clientWith(record(2_000)).ask("when is the launch?", 5), (error) => error instanceof Starting && error instanceof VaultmindError && error.doing === doing);

  const left = await statusBar(clientWith(record(START_FRESH_MS + 1_000)));
  assert.equal(left.text, "memory: not running");
  assert.equal((await statusBar(clientWith("{"))).text, "memory: not running");

  // once its api is up, its health says what it does until it is ready
  const loading = await statusBar(clientOf({ pid: 1, port: 1, token: "t" }, () => ({
    status: 200, text: JSON.stringify({ ...READY, ready: false, doing: "reading the vault's notes 1,200/50,000" }),
  })).client);
  assert.equal(loading.tip, "the daemon is starting: reading the vault's notes 1,200/50,000; questions are answered once it is ready");
});

test("a daemon serving another folder is not this vault's: its daemon.json came with a copy made while it ran", async () => {
  const other = { status: 200, text: JSON.stringify({ ...READY, vault: "/home/me/Notes" }) };
  const { client, seen } = clientOf({ pid: 1, port: 8123, token: "t" }, () => other);
  const bar = await statusBar(client);
  assert.equal(bar.text, "memory: not running");
  assert.equal(bar.nextPollMs, POLL_WAITING_MS);
  assert.match(bar.tip, /serves \/home\/me\/Notes \(this vault was copied or moved while it ran\)/);
  assert.match(bar.tip, /vaultmind serve --vault \/v$/);
  await assert.rejects(client.ask("when is the launch?", 5), /not running for this vault/);
  assert.ok(seen.every((request) => request.url.endsWith("/v1/health")), "nothing but its health asked of it");

  const mine = clientOf({ pid: 1, port: 8123, token: "t" }, daemonAnswering(STATUS));
  assert.equal((await statusBar(mine.client)).text, "memory: 3 notes");
  await statusBar(mine.client);
  assert.deepEqual(mine.seen.map((r) => new URL(r.url).pathname), ["/v1/health", "/v1/status", "/v1/health", "/v1/status"]);
  assert.ok(samePath("/v/", "/v") && samePath("C:\\Notes\\", "C:/Notes") && !samePath("/v2", "/v") && samePath("/", "/"));
  // the plugin's own comparison (symlinks resolved) decides
  const linked = new DaemonClient(async () => '{"pid": 1, "port": 1, "token": "t"}', async () => other, "/v", 1000, Date.now, async (served) => served === "/home/me/Notes");
  assert.equal((await linked.health()).vault, "/home/me/Notes");
});

test("a hit opens its note by path, its block or heading apart: names with # | [ ] ^ stay whole", () => {
  assert.deepEqual(hitTarget({ note_path: "C# tips.md", anchor: "#Pattern matching" }), { path: "C# tips.md", subpath: "#Pattern matching" });
  assert.deepEqual(hitTarget({ note_path: "Projects/Plan | 2024 [draft].md", anchor: "^m-1" }), { path: "Projects/Plan | 2024 [draft].md", subpath: "#^m-1" });
  assert.deepEqual(hitTarget({ note_path: "a^b.md", anchor: null }), { path: "a^b.md", subpath: "" });
  assert.equal(linkText({ note_path: "C# tips.md", anchor: "#Pattern matching" }), "C# tips#Pattern matching"); // a label only
});

test("related memory shows the number set, one hit a note, none of the note's own", async () => {
  const hit = (note, n) => ({ node_id: `${note}-${n}`, note_path: note, anchor: null, content: "x", score: 1 });
  const own = Array.from({ length: 6 }, (_, n) => hit("Long note.md", n));
  const long = Array.from({ length: 5 }, (_, n) => hit("Budget.md", n));
  const others = Array.from({ length: 12 }, (_, n) => hit(`Other ${n}.md`, 0));
  const found = [...own.slice(0, 3), ...long, ...own.slice(3), ...others];
  assert.deepEqual(bestOfEachNote(found, "Long note.md").map((h) => h.note_path).slice(0, 3), ["Budget.md", "Other 0.md", "Other 1.md"]);
  const { client, seen } = clientOf({ pid: 1, port: 1, token: "t" }, (request) =>
    request.url.endsWith("/v1/health") ? { status: 200, text: JSON.stringify(READY) } : { status: 200, text: JSON.stringify({ hits: found, total: found.length, truncated: false }) },
  );
  const related = await client.related("Long note.md", "Long note", "budget and harbor", 10);
  assert.equal(related.hits.length, 10);
  assert.equal(new Set(related.hits.map((h) => h.note_path)).size, 10);
  assert.ok(!related.hits.some((h) => h.note_path === "Long note.md"));
  assert.ok(JSON.parse(seen.at(-1).body).limit >= 40);
});

const DAEMON = { pid: 1, port: 1, token: "t" };

/** Answers health with `health`, and every other request with `other(request)`. */
function healthAnd(health, other) {
  return (request) => (request.url.endsWith("/v1/health") ? { status: 200, text: JSON.stringify(health) } : other(request));
}

test("while the daemon compacts its index the bar says so, with its steps, and looks again in seconds", async () => {
  const compacting = { ...READY, loading: false, compacting: { done: 5, total: 19 } };
  const { client, seen } = clientOf(DAEMON, healthAnd(compacting, () => assert.fail("its status is not asked")));
  const bar = await statusBar(client);
  assert.deepEqual([bar.text, bar.nextPollMs], ["memory: compacting (step 5 of 19)…", POLL_WAITING_MS]);
  assert.match(bar.tip, /compacting its index file \(step 5 of 19\)/);
  assert.ok(seen.every((r) => r.url.endsWith("/v1/health")));
  // a status answered during a compaction before any other was worked out: no problems, notes or queue
  const first = { vault: "/v", loading: false, index: { health: "compacting", notice: "the index file is being compacted (step 5 of 19)" } };
  const shown = await statusBar(clientOf(DAEMON, daemonAnswering(first)).client);
  assert.deepEqual([shown.text, shown.nextPollMs], ["memory: 0 notes ⚠", POLL_MS]);
  assert.match(shown.tip, /^index compacting$/m);
});

test("a daemon loading a whole-vault change (a reindex) is not starting", async () => {
  const bar = await statusBar(clientOf(DAEMON, healthAnd({ ...READY, loading: true, doing: null }, () => assert.fail("no status asked"))).client);
  assert.deepEqual([bar.text, bar.nextPollMs], ["memory: loading a change…", POLL_WAITING_MS]);
  assert.match(bar.tip, /reindex/);
  assert.doesNotMatch(bar.tip, /starting/);
});

test("a daemon slow to say its status is busy, not stopped", async () => {
  const { client } = clientOf(DAEMON, healthAnd(READY, () => new Promise(() => {})), 50);
  const bar = await statusBar(client);
  assert.deepEqual([bar.text, bar.nextPollMs], ["memory: busy…", POLL_WAITING_MS]);
  assert.equal(bar.tip, "vaultmind did not answer within 0.05 s: it is running: it may be applying a large change; ask again in a moment");
  // nothing listening is still "not running"
  const down = clientOf(DAEMON, async () => { throw new Error("ECONNREFUSED"); }).client;
  assert.equal((await statusBar(down)).text, "memory: not running");
});

test("a question held up by a compaction says the daemon is compacting, as the command line does", async () => {
  const compacting = { ...READY, compacting: { done: 3, total: 19 } };
  const { client, seen } = clientOf(DAEMON, healthAnd(compacting, () => new Promise(() => {})), 50);
  await assert.rejects(client.ask("Which venue?", 5), (error) => {
    assert.ok(error instanceof Busy && error instanceof VaultmindError);
    assert.equal(error.message, "vaultmind did not answer within 0.05 s");
    assert.equal(error.hint, "it is compacting its index file (step 3 of 19), which holds requests until it is done; ask again in a moment");
    return true;
  });
  assert.equal(seen.filter((r) => r.url.endsWith("/v1/query")).length, 1);
  // a daemon whose health does not answer either: what it may be doing
  const silent = clientOf(DAEMON, () => new Promise(() => {}), 50).client;
  await assert.rejects(silent.ask("Which venue?", 5), (error) => error instanceof Busy && /may be busy/.test(error.hint));
});

test("a daemon stopping or reopening its index file is looked at again in seconds; stopping says how to start it", async () => {
  const stopping = { status: 503, text: JSON.stringify({ error: { code: "stopping", message: "the daemon is stopping", hint: "run the command again in a moment: it then works without the daemon" } }) };
  const bar = await statusBar(clientOf(DAEMON, () => stopping).client);
  assert.deepEqual([bar.text, bar.nextPollMs], ["memory: stopping…", POLL_WAITING_MS]);
  assert.equal(bar.tip, "the daemon is stopping: questions are answered again once it is started again: vaultmind serve --vault /v");
  await assert.rejects(clientOf(DAEMON, () => stopping).client.ask("x", 5), (error) => error.code === "stopping" && !/without the daemon/.test(error.hint));
  const unavailable = { status: 503, text: JSON.stringify({ error: { code: "index_unavailable", message: "the index file was closed", hint: "it is opened again by itself" } }) };
  const reopening = await statusBar(clientOf(DAEMON, healthAnd(READY, () => unavailable)).client);
  assert.deepEqual([reopening.text, reopening.nextPollMs], ["memory: ⚠", POLL_WAITING_MS]);
});

test("related memory lists no summary: it restates notes, the open note's own among them", async () => {
  const leaf = (note) => ({ node_id: note, node_kind: "leaf", note_path: note, anchor: null, content: "x", score: 1 });
  const summary = { node_id: "s1", node_kind: "summary", note_path: "summaries/notes/L1/s-1.md", anchor: null, content: "Launch plan: Which venue holds 120 guests?", score: 2, child_ids: ["Launch plan.md-0"] };
  const found = [summary, leaf("Launch plan.md"), leaf("sources/chat/a.md"), { ...summary, node_id: "s2", note_path: "summaries/notes/L1/s-2.md" }, leaf("Budget.md")];
  const { client } = clientOf(DAEMON, healthAnd(READY, () => ({ status: 200, text: JSON.stringify({ hits: found, total: 5, truncated: false }) })));
  const related = await client.related("Launch plan.md", "Launch plan", "Which venue holds 120 guests?", 10);
  assert.deepEqual(related.hits.map((h) => h.note_path), ["sources/chat/a.md", "Budget.md"]);
});

test("a snippet is cut between two characters, never inside an emoji", () => {
  const text = `${"x".repeat(319)}😀 and more`;
  assert.equal(snippet(text, 320), `${"x".repeat(319)}…`);
  assert.equal(snippet(`${"x".repeat(318)}👩‍👩‍👧 more`, 320), `${"x".repeat(318)}…`); // a family emoji: one character of 8 units
  assert.equal(snippet(`${"x".repeat(318)}e\u0301 more`, 319), `${"x".repeat(318)}…`); // é as e and its accent
  assert.equal(snippet("short 😀", 320), "short 😀");
  assert.equal(snippet("y".repeat(400), 320), `${"y".repeat(320)}…`);
});
