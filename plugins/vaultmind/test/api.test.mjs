// The API client's pure parts: reading daemon.json, link texts, the related-memory query.
import assert from "node:assert/strict";
import { test } from "node:test";
import { DaemonClient, VaultmindError, describeStatus, linkText, parseDaemon, relatedQuery, serveCommand } from "../build/api.mjs";

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
    async () => files[Math.min(reads++, files.length - 1)],
    async (request) => {
      seen.push(`${request.url} ${request.headers.Authorization}`);
      if (request.url.includes(":1001")) return { status: 401, text: '{"error": {"message": "no"}}' };
      return { status: 200, text: '{"pid": 2, "vault": "v", "ready": true}' };
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
