// The built main.js loaded as Obsidian loads it (CommonJS, its default export a Plugin given the
// app and the manifest), with the `obsidian` module of test/obsidian-shim.cjs, talking over HTTP
// to a stand-in daemon: the panel and the status bar as a user sees them.
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

const require = createRequire(import.meta.url);
const obsidian = require("./obsidian-shim.cjs");
const PLUGIN = new URL("..", import.meta.url).pathname;
globalThis.window ??= globalThis; // the plugin's timers are window's

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(done, ms = 5000) {
  for (const started = Date.now(); Date.now() - started < ms; await sleep(20)) if (done()) return;
  assert.fail(`not done within ${ms} ms`);
}

const READY = { ok: true, pid: 1, ready: true, loading: false, compacting: null, doing: null };
const STATUS = { loading: false, index: { health: "ok", notice: null }, notes: { total: 3 }, leaves: 9, queue: null, problems: [] };

function hit(note, content = `What ${note} says.`, kind = "leaf") {
  return { node_id: note, node_kind: kind, level: 0, content, score: 1, breakdown: {}, note_path: note, anchor: null, title: note, author: null, link: "", wikilink: "", time_range: { start: null, end: null }, source_refs: [] };
}

/**
 * A vault with two notes and a stand-in daemon serving it: health as `health()`, status as
 * `status()`, searches with six other notes' hits and questions as `answer(query)`; each request
 * kept in `requests` (its path and body).
 */
async function daemonFor({ health = () => READY, status = () => STATUS, answer = () => ({ hits: [hit("Budget.md")] }) } = {}) {
  const vault = mkdtempSync(join(tmpdir(), "vaultmind-plugin-"));
  mkdirSync(join(vault, ".vaultmind"));
  writeFileSync(join(vault, "Launch plan.md"), "# Launch plan\n\nWhich venue holds 120 guests?\n");
  writeFileSync(join(vault, "Budget.md"), "# Budget\n\nThe hall costs 900.\n");
  const requests = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const path = request.url;
      requests.push({ path, body: body ? JSON.parse(body) : null });
      const others = Array.from({ length: 6 }, (_, n) => hit(`Other ${n}.md`));
      const answers = {
        "/v1/health": () => ({ ...health(), vault }),
        "/v1/status": status,
        "/v1/search": () => ({ hits: others, total: others.length, truncated: false }),
        "/v1/query": () => answer(JSON.parse(body).args.query),
      };
      const answered = answers[path]();
      response.writeHead(answered.status ?? 200, { "Content-Type": "application/json" });
      response.end(JSON.stringify(answered.body ?? answered));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  writeFileSync(join(vault, ".vaultmind", "daemon.json"), JSON.stringify({ pid: 1, port: server.address().port, token: "t", host: "127.0.0.1" }));
  const stop = async () => {
    rmSync(join(vault, ".vaultmind", "daemon.json"), { force: true });
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { vault, requests, stop };
}

/** The plugin loaded into a fresh app on `vault`, its layout ready, the memory panel open on "Launch plan.md". */
async function pluginOn(vault) {
  const module = { exports: {} };
  const code = readFileSync(join(PLUGIN, "main.js"), "utf8");
  new Function("module", "exports", "require", code)(module, module.exports, (id) => (id === "obsidian" ? obsidian : require(id)));
  const app = new obsidian.App(vault);
  const plugin = new module.exports.default(app, JSON.parse(readFileSync(join(PLUGIN, "manifest.json"), "utf8")));
  plugin.load();
  await until(() => app.workspace.ready.length > 0);
  for (const ready of app.workspace.ready.splice(0)) ready();
  app.workspace.open("Launch plan.md");
  await plugin.openPanel();
  const view = app.workspace.getLeavesOfType("vaultmind-memory")[0].view;
  const related = view.contentEl.find("vaultmind-related")[0];
  const answers = view.contentEl.find("vaultmind-answers")[0];
  const bar = () => app.statusBar.children[0]?.textContent ?? "";
  return { app, plugin, view, related, answers, bar };
}

test("a typed question over 2,000 characters is asked by its first words, and the panel says so", async () => {
  const daemon = await daemonFor();
  const { plugin, view, answers } = await pluginOn(daemon.vault);
  try {
    await view.ask("venue ".repeat(500)); // 3,000 characters
    const asked = daemon.requests.find((r) => r.path === "/v1/query").body.args.query;
    assert.ok(asked.length <= 2000 && asked.length > 1990, `${asked.length} characters`);
    assert.match(answers.textContent, /^Asked its first 333 words: a question is at most 2,000 characters\./);
    assert.equal(answers.find("vaultmind-hit").length, 1);
    await view.ask("x".repeat(2500)); // one long word: its start
    assert.equal(daemon.requests.filter((r) => r.path === "/v1/query").at(-1).body.args.query, "x".repeat(2000));
    assert.match(answers.textContent, /^Asked its first 2,000 characters: a question is at most 2,000 characters\./);
  } finally {
    plugin.unload();
    await daemon.stop();
  }
});

test("changed settings apply to the open panel at once", async () => {
  const daemon = await daemonFor();
  const { plugin, related } = await pluginOn(daemon.vault);
  try {
    await until(() => related.find("vaultmind-hit").length === 6);
    plugin.settings.limit = 3;
    await plugin.saveSettings();
    await until(() => related.find("vaultmind-hit").length === 3);
    plugin.settings.related = false;
    await plugin.saveSettings();
    await until(() => related.children.length === 0);
  } finally {
    plugin.unload();
    await daemon.stop();
  }
});

test("closing the panel just after another note is opened sends no search", async () => {
  const daemon = await daemonFor();
  const { app, plugin, related } = await pluginOn(daemon.vault);
  await until(() => related.find("vaultmind-hit").length > 0);
  app.workspace.open("Budget.md"); // its related memory is searched once the switching settles
  await sleep(100);
  plugin.unload();
  const sent = daemon.requests.length;
  await sleep(1000);
  await daemon.stop();
  assert.deepEqual(daemon.requests.slice(sent).map((r) => r.path), []);
});

test("a question that fails tells the status bar to look again: a stopped daemon is not shown running for a minute", async () => {
  const daemon = await daemonFor();
  const { plugin, view, answers, bar } = await pluginOn(daemon.vault);
  try {
    await until(() => bar() === "memory: 3 notes");
    await daemon.stop();
    await view.ask("Which venue?");
    assert.match(answers.textContent, /vaultmind (is not running for this vault|does not answer)/);
    await until(() => bar() === "memory: not running");
  } finally {
    plugin.unload();
  }
});

test("the status bar during a compaction: its steps, not the plugin's crash", async () => {
  // a compaction's first status, before the daemon worked out any: no problems, notes or queue
  let compacting = { done: 5, total: 19 };
  const first = { vault: "/v", loading: false, index: { health: "compacting", notice: "the index file is being compacted (step 5 of 19)" } };
  const daemon = await daemonFor({ health: () => ({ ...READY, compacting }), status: () => first });
  const { plugin, bar } = await pluginOn(daemon.vault);
  try {
    await until(() => bar() !== "");
    assert.equal(bar(), "memory: compacting (step 5 of 19)…");
    compacting = null;
    await until(() => bar() === "memory: 0 notes ⚠", 20_000); // looked at again in seconds (5), not a minute (a loaded machine delays it)
  } finally {
    plugin.unload();
    await daemon.stop();
  }
});

test("a hit's snippet is cut between characters: no half of an emoji", async () => {
  const daemon = await daemonFor({ answer: () => ({ hits: [hit("emoji.md", `${"x".repeat(319)}😀 and more`)] }) });
  const { plugin, view, answers } = await pluginOn(daemon.vault);
  try {
    await view.ask("emoji");
    const shown = answers.find("vaultmind-hit-text")[0].textContent;
    assert.equal(shown, `${"x".repeat(319)}…`);
    assert.ok(shown.isWellFormed?.() ?? !/[\ud800-\udbff](?![\udc00-\udfff])/.test(shown));
  } finally {
    plugin.unload();
    await daemon.stop();
  }
});
