/**
 * The vault's vaultmind daemon as the plugin talks to it: where it listens (the vault's
 * `.vaultmind/daemon.json`, which `vaultmind serve` writes with its port and a fresh bearer
 * token) and what its loopback API answers. Nothing here imports Obsidian: the file reader and
 * the HTTP transport are given, so the same code runs under Node in the tests.
 */

import { bestOfEachNote, relatedQuery } from "./text";

export * from "./text";

export const DAEMON_FILE = ".vaultmind/daemon.json";

/**
 * What a daemon does until it has published its address (opening the index: an upgrade of it may
 * take minutes): `vaultmind serve` rewrites it at least every few seconds and removes it once
 * `daemon.json` is out; one not rewritten for `START_FRESH_MS` is left by a daemon that ended.
 */
export const START_FILE = ".vaultmind/daemon-start.json";
export const START_FRESH_MS = 30_000;

/** "Related memory" searches this many leaves for each note it shows (at most the API's 500). */
export const RELATED_SEARCH_FACTOR = 4;
export const RELATED_SEARCH_MAX = 500;

/** How long a question (and a related-memory search) waits for the daemon's answer, as the CLI's client does. */
export const QUESTION_TIMEOUT_MS = 30_000;

/** The status bar polls the daemon this often while it answers and is ready… */
export const POLL_MS = 60_000;

/**
 * …and this often while it is not running, starting, busy (loading a large change, compacting
 * its index, stopping), so what it does next is seen soon.
 */
export const POLL_WAITING_MS = 5_000;

/** How long a daemon that did not answer in time is given to say, by its health, why (as the CLI's `HEALTH_TIMEOUT_S`). */
export const HEALTH_TIMEOUT_MS = 2_000;

export interface Daemon {
  host: string;
  port: number;
  token: string;
  pid: number;
}

export interface Hit {
  node_id: string;
  node_kind: string;
  level: number;
  content: string;
  score: number;
  breakdown: Record<string, unknown>;
  note_path: string;
  anchor: string | null;
  title: string | null;
  author: string | null;
  link: string;
  wikilink: string;
  time_range: { start: string | null; end: string | null };
  source_refs: string[];
}

export interface Hits {
  hits: Hit[];
  total: number;
  truncated: boolean;
  /** walk's reading of the question: words no note says, misspellings it read past */
  query?: { unknown?: string[]; corrected?: Record<string, string> };
  /** set when the embedding model did not answer: the hits were found without dense search */
  notice?: string;
}

export interface Health {
  pid: number;
  vault: string;
  ready: boolean;
  loading?: boolean;
  /** while it starts: what it does ("reading the vault's notes 1,200/50,000") */
  doing?: string | null;
  /** while a compaction holds the index (every request but status and health waits): its steps */
  compacting?: { done: number; total: number } | null;
}


/** A start record's text, read at `nowMs`: what the daemon does, or null when it is no live record. */
export function parseStart(text: string, nowMs: number): string | null {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return null;
  }
  const fields = (record ?? {}) as Record<string, unknown>;
  const updated = Number(fields.updated) * 1000;
  if (fields.state !== "starting" || !Number.isFinite(updated) || nowMs - updated > START_FRESH_MS) return null;
  return typeof fields.doing === "string" && fields.doing ? fields.doing : "opening the index";
}

export interface Status {
  loading: boolean;
  index: { health: string; notice: string | null } | null;
  notes: { total: number } | null;
  leaves: number | null;
  /**
   * `health`: "ok", "degraded" while a job failed or waits after a failure, "error" when one
   * cannot succeed, "paused" while the daemon's workers are; `notice` says why when Ollama does
   * not answer or the workers are paused
   */
  queue: { depth: number; failed: number; health: string; notice?: string | null } | null;
  /** absent from a status asked during a compaction before the daemon had worked out any */
  problems?: { path: string; kind: string; message: string; indexed?: boolean }[];
}

/** One line for the status bar and a longer tip from `GET /v1/status`. */
export function describeStatus(status: Status): { text: string; tip: string } {
  const notes = status.notes?.total ?? 0;
  const health = status.index?.health ?? "unknown";
  // a file with a warning (`indexed`: its front matter, its encoding, a conflict copy) is indexed
  // all the same; only the others are "not indexed" (as `vaultmind status` splits them)
  const problems = status.problems ?? [];
  const skipped = problems.filter((problem) => !problem.indexed).length;
  const warned = problems.length - skipped;
  const failed = status.queue?.failed ?? 0;
  const jobs = status.queue?.health ?? "ok";
  const worries = [
    health !== "ok" ? `index ${health}` : "",
    skipped ? `${skipped} file${skipped === 1 ? "" : "s"} not indexed` : "",
    warned ? `${warned} file${warned === 1 ? "" : "s"} with warnings` : "",
    failed ? `${failed} failed job${failed === 1 ? "" : "s"}` : "",
    // jobs not ok with none failed: waiting after a failure (Ollama down: the LLM's work retried
    // later), or the daemon's workers paused
    jobs !== "ok" && !failed ? `background jobs ${jobs}` : "",
  ].filter(Boolean);
  const text = `memory: ${notes.toLocaleString()} notes${worries.length ? " ⚠" : ""}`;
  const tip = [
    `${notes.toLocaleString()} notes, ${(status.leaves ?? 0).toLocaleString()} leaves indexed`,
    ...worries,
    status.index?.notice ?? "",
    status.queue?.notice ?? "",
    worries.length ? "run `vaultmind status` for the details" : "",
  ].filter(Boolean).join("\n");
  return { text, tip };
}

/** The status bar's line, its tip, and when to ask again. */
export interface StatusBar {
  text: string;
  tip: string;
  nextPollMs: number;
}

/**
 * The status bar from the daemon's health and status. Only a daemon that does not answer (no
 * `daemon.json`, nothing listening) is "not running": one slow to answer is "busy", one
 * stopping "stopping…"; an error it answers with is shown as such, and any other error (a bug
 * of the plugin's) is thrown, not taken for a stopped daemon. Whatever passes (a start, a
 * compaction, a large change, a stop, an index file reopened) is looked at again in seconds.
 */
export async function statusBar(client: DaemonClient): Promise<StatusBar> {
  try {
    const health = await client.health();
    return busyBar(health) ?? { ...describeStatus(await client.status()), nextPollMs: POLL_MS };
  } catch (error) {
    if (error instanceof Starting) return startingBar(error.doing);
    if (!(error instanceof VaultmindError)) throw error;
    const tip = error.hint ? `${error.message}: ${error.hint}` : error.message;
    if (error instanceof Busy) return { text: "memory: busy…", tip, nextPollMs: POLL_WAITING_MS };
    if (error.code === "stopping") return { text: "memory: stopping…", tip, nextPollMs: POLL_WAITING_MS };
    if (error.status === 503) return { text: "memory: ⚠", tip, nextPollMs: POLL_WAITING_MS }; // the index file reopens by itself
    if (error.status !== null) return { text: "memory: ⚠", tip, nextPollMs: POLL_MS }; // it answered
    return { text: "memory: not running", tip, nextPollMs: POLL_WAITING_MS };
  }
}

/**
 * The bar of a daemon busy with something its health says — starting, compacting its index
 * file, loading a whole-vault change (a reindex, a large sync) — or null when it is free to
 * say its status. A compaction is read first: a status would answer from its last counts.
 */
function busyBar(health: Health): StatusBar | null {
  if (!health.ready) return startingBar(health.doing ?? "loading the index");
  if (health.compacting) {
    return {
      text: `memory: compacting${steps(health.compacting)}…`,
      tip: `the daemon is compacting its index file${steps(health.compacting)}: questions wait until it is done`,
      nextPollMs: POLL_WAITING_MS,
    };
  }
  if (health.loading) {
    return { text: "memory: loading a change…", tip: `the daemon is ${LOADING}: questions wait until it is done`, nextPollMs: POLL_WAITING_MS };
  }
  return null;
}

function startingBar(doing: string): StatusBar {
  return {
    text: "memory: starting…",
    tip: `the daemon is starting: ${doing}; questions are answered once it is ready`,
    nextPollMs: POLL_WAITING_MS,
  };
}

/** What a daemon whose health says `loading` once it is ready does. */
const LOADING = "loading a whole-vault change (a reindex or a large sync)";

/** " (step 3 of 19)", or "" when the compaction has not counted its steps yet. */
function steps(compacting: { done: number; total: number }): string {
  return compacting.total ? ` (step ${compacting.done} of ${compacting.total})` : "";
}

/**
 * Why a daemon did not answer in time, from its health asked then (null: it did not answer
 * that either), as the command line says it (`client._busy_with`): a compaction holds every
 * request but status and health until it is done.
 */
export function busyWith(health: Health | null): string {
  if (health?.ready === false) return `it is starting: ${health.doing ?? "loading the index"}; ask again in a moment`;
  if (health?.compacting) {
    return `it is compacting its index file${steps(health.compacting)}, which holds requests until it is done; ask again in a moment`;
  }
  if (health?.loading) return `it is ${LOADING}, which holds questions until it is done; ask again in a moment`;
  if (health) return "it is running: it may be applying a large change; ask again in a moment";
  return "it may be busy loading the index (after a start or an upgrade) or applying a large change; " +
    "ask again in a moment (`vaultmind status` says what it does)";
}

export interface Request {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
}

export interface Reply {
  status: number;
  text: string;
}

/** Sends one request; rejects only when nothing answered (refused, reset, timed out). */
export type Transport = (request: Request) => Promise<Reply>;

/** A vault-relative file's text, or null when there is no such file. */
export type ReadFile = (path: string) => Promise<string | null>;

/** What went wrong, said for a person: `hint` is what to do about it. */
export class VaultmindError extends Error {
  readonly hint: string | null;
  readonly status: number | null;
  /** the API's error code when the daemon answered with one ("stopping", "index_unavailable", …) */
  readonly code: string | null;

  constructor(message: string, hint: string | null = null, status: number | null = null, code: string | null = null) {
    super(message);
    this.name = "VaultmindError";
    this.hint = hint;
    this.status = status;
    this.code = code;
  }
}

/** A daemon that did not answer in time: running (the connection was taken), only busy; `hint` says with what when its health said. */
export class Busy extends VaultmindError {
  constructor(readonly ms: number, hint: string) {
    super(`vaultmind did not answer within ${ms / 1000} s`, hint);
    this.name = "Busy";
  }
}

/** A daemon starting, before its address is out: its start record's `doing`. */
export class Starting extends VaultmindError {
  constructor(readonly doing: string) {
    super(`vaultmind is starting: ${doing}`, "questions are answered once it is up; ask again in a moment");
    this.name = "Starting";
  }
}

/** The command that starts the daemon for the vault at `vaultPath`, quoted for a shell. */
export function serveCommand(vaultPath: string): string {
  const quoted = /^[\w@%+=:,./-]+$/.test(vaultPath) ? vaultPath : `'${vaultPath.replace(/'/g, `'"'"'`)}'`;
  return `vaultmind serve --vault ${quoted}`;
}

/** `daemon.json`'s text read; a file that is not the daemon's is an error naming it. */
export function parseDaemon(text: string): Daemon {
  let info: unknown;
  try {
    info = JSON.parse(text);
  } catch {
    info = null;
  }
  const fields = (info ?? {}) as Record<string, unknown>;
  const port = Number(fields.port);
  const pid = Number(fields.pid);
  if (typeof fields.token !== "string" || !Number.isInteger(port) || port <= 0 || !Number.isInteger(pid)) {
    throw new VaultmindError(
      `${DAEMON_FILE} is not a daemon's address (it needs pid, port and token)`,
      "stop and start the daemon again: it rewrites the file",
    );
  }
  const host = typeof fields.host === "string" && fields.host ? fields.host : "127.0.0.1";
  return { host, port, token: fields.token, pid };
}

/** `host:port` as a URL writes it: an IPv6 address in brackets (`[::1]:8123`). */
export function hostPort(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  return bare.includes(":") ? `[${bare}]:${port}` : `${bare}:${port}`;
}

/**
 * Whether two absolute paths name the same folder as written: separators and a trailing one
 * aside (the plugin resolves symlinks before it compares, where it can: `main.ts`).
 */
export function samePath(a: string, b: string): boolean {
  const plain = (path: string) => path.replace(/\\/g, "/").replace(/(?<=.)\/+$/, "");
  return plain(a) === plain(b);
}

/** A request that found no daemon at the address it had (refused, or a 401): asked again once, after `locate`. */
const AGAIN = Symbol("again");

/** A client of one vault's daemon. It finds the daemon again when it restarted (new port, token). */
export class DaemonClient {
  private daemon: Daemon | null = null;
  private checked: Daemon | null = null; // the daemon whose health named this vault

  constructor(
    private readonly readFile: ReadFile,
    private readonly transport: Transport,
    private readonly vaultPath: string,
    /** how long a question (or a look at the daemon's health and status) waits for its answer */
    private readonly questionTimeoutMs = QUESTION_TIMEOUT_MS,
    /** the time now, in ms since the epoch (a start record's age) */
    private readonly now: () => number = Date.now,
    /** whether the folder a daemon serves (its health's `vault`) is this vault */
    private readonly isThisVault: (served: string) => boolean | Promise<boolean> = (served) => samePath(served, vaultPath),
  ) {}

  // the status bar looks again only once its last look ends: one never answered would freeze it
  health(): Promise<Health> {
    return this.call("GET", "/v1/health", undefined, this.questionTimeoutMs) as Promise<Health>;
  }

  status(): Promise<Status> {
    return this.call("GET", "/v1/status", undefined, this.questionTimeoutMs) as Promise<Status>;
  }

  /** `walk`: the question answered with cited evidence, best first. */
  ask(question: string, limit: number): Promise<Hits> {
    const body = { mode: "walk", args: { query: question, limit } };
    return this.call("POST", "/v1/query", body, this.questionTimeoutMs) as Promise<Hits>;
  }

  /**
   * Other notes that speak of what the note at `path` speaks of: each one's best leaf, up to
   * `limit` notes; no summary (it restates notes, this one's too). The search asks for several times as many leaves, as the note's own leaves
   * and a long note's many leaves come first and are left out: asked for `limit + 5`, a note of
   * 20 sections showed 5 hits of the 10 set, and another showed one note 5 times.
   */
  async related(path: string, title: string, markdown: string, limit: number): Promise<Hits> {
    const query = relatedQuery(title, markdown);
    if (!query) return { hits: [], total: 0, truncated: false };
    const asked = Math.min(RELATED_SEARCH_MAX, limit * RELATED_SEARCH_FACTOR + 10);
    const found = (await this.call("POST", "/v1/search", { query, limit: asked }, this.questionTimeoutMs)) as Hits;
    // a summary restates notes — the open note's own among them, under a title that names only
    // its folder ("Notes · summary L1"): the notes themselves, each its best leaf, are what is related
    const notes = found.hits.filter((hit) => hit.node_kind !== "summary");
    const hits = bestOfEachNote(notes, path).slice(0, limit);
    return { hits, total: hits.length, truncated: found.truncated || found.hits.length > hits.length };
  }

  /** The daemon's address; a `Starting` while a live start record says it has none yet. */
  private async locate(): Promise<Daemon> {
    const start = await this.readFile(START_FILE);
    const doing = start === null ? null : parseStart(start, this.now());
    if (doing !== null) throw new Starting(doing);
    const text = await this.readFile(DAEMON_FILE);
    if (text === null) {
      throw new VaultmindError(
        "vaultmind is not running for this vault",
        `start it in a terminal: ${serveCommand(this.vaultPath)}`,
      );
    }
    return parseDaemon(text);
  }

  /**
   * `path`'s answer. A daemon found anew (at the first call, after a restart) is asked its
   * health first: one serving another folder — its `daemon.json` came with a copy of this vault
   * made while it ran — is not this vault's, as the command line says (`client.find_daemon`).
   * `timeoutMs`: how long each answer is waited for (else as long as the transport waits).
   */
  private async call(
    method: "GET" | "POST",
    path: string,
    body?: object,
    timeoutMs: number | null = null,
    again = true,
  ): Promise<unknown> {
    const daemon = this.daemon ?? (await this.locate());
    this.daemon = daemon;
    if (this.checked !== daemon) {
      const health = await this.send(daemon, "GET", "/v1/health", undefined, timeoutMs, again);
      if (health === AGAIN) return this.call(method, path, body, timeoutMs, false);
      await this.checkVault(health as Health);
      this.checked = daemon;
      if (method === "GET" && path === "/v1/health") return health;
    }
    const answer = await this.send(daemon, method, path, body, timeoutMs, again);
    return answer === AGAIN ? this.call(method, path, body, timeoutMs, false) : answer;
  }

  /** Refuses a daemon whose health names another folder than this vault. */
  private async checkVault(health: Health): Promise<void> {
    const served = (health ?? {}).vault;
    if (typeof served === "string" && (await this.isThisVault(served))) return;
    this.daemon = null; // this vault's own, once started, rewrites daemon.json
    throw new VaultmindError(
      "vaultmind is not running for this vault",
      `the daemon in ${DAEMON_FILE} serves ${String(served)} (this vault was copied or moved while it ran); ` +
        `start this vault's in a terminal: ${serveCommand(this.vaultPath)}`,
    );
  }

  /** One request to `daemon`; `AGAIN` when nothing answered there or the token is stale and `again` allows a second try. */
  private async send(
    daemon: Daemon,
    method: "GET" | "POST",
    path: string,
    body: object | undefined,
    timeoutMs: number | null,
    again: boolean,
  ): Promise<unknown> {
    const address = hostPort(daemon.host, daemon.port);
    const request: Request = {
      url: `http://${address}${path}`,
      method,
      headers: { Authorization: `Bearer ${daemon.token}` },
    };
    if (body !== undefined) {
      request.headers["Content-Type"] = "application/json";
      request.body = JSON.stringify(body);
    }
    let reply: Reply;
    try {
      reply = await within(this.transport(request), timeoutMs);
    } catch (error) {
      if (error instanceof Late) {
        const health = path === "/v1/health" ? null : await this.healthAtOnce(daemon, timeoutMs);
        throw new Busy(error.ms, busyWith(health));
      }
      this.daemon = null; // a daemon started since then listens elsewhere
      if (again) return AGAIN;
      throw new VaultmindError(
        `vaultmind does not answer at ${address} (${describe(error)})`,
        `it may have stopped: start it in a terminal: ${serveCommand(this.vaultPath)}`,
      );
    }
    if (reply.status === 401 && again) {
      this.daemon = null; // the daemon restarted with a fresh token
      return AGAIN;
    }
    if (reply.status >= 400) throw answeredError(reply, this.vaultPath);
    try {
      return JSON.parse(reply.text);
    } catch {
      throw new VaultmindError(`vaultmind answered ${method} ${path} with something that is not JSON`);
    }
  }

  /** The daemon's health when it answers within a moment (it is running, only busy), else null. */
  private async healthAtOnce(daemon: Daemon, timeoutMs: number | null): Promise<Health | null> {
    const wait = Math.min(HEALTH_TIMEOUT_MS, timeoutMs ?? HEALTH_TIMEOUT_MS);
    try {
      const health = await this.send(daemon, "GET", "/v1/health", undefined, wait, false);
      return health !== null && typeof health === "object" ? (health as Health) : null;
    } catch {
      return null;
    }
  }
}

/** No reply came within `ms`. */
class Late extends Error {
  constructor(readonly ms: number) {
    super(`no reply within ${ms} ms`);
  }
}

/** `reply`, or a `Late` rejection once `timeoutMs` have passed without it (null: no limit). */
function within<T>(reply: Promise<T>, timeoutMs: number | null): Promise<T> {
  if (timeoutMs === null) return reply;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Late(timeoutMs)), timeoutMs);
    reply.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * The daemon's error answer as the plugin says it. A stopping daemon's hint is the command
 * line's ("run the command again: it then works without the daemon"): the plugin cannot work
 * without it, and says how to start it again.
 */
function answeredError(reply: Reply, vaultPath: string): VaultmindError {
  let error: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(reply.text) as { error?: Record<string, unknown> };
    error = parsed.error ?? {};
  } catch {
    // not the API's error shape: said by its status alone
  }
  const message = typeof error.message === "string" ? error.message : `vaultmind answered HTTP ${reply.status}`;
  const code = typeof error.code === "string" ? error.code : null;
  const hint = code === "stopping"
    ? `questions are answered again once it is started again: ${serveCommand(vaultPath)}`
    : typeof error.hint === "string" ? error.hint : null;
  return new VaultmindError(message, hint, reply.status, code);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
