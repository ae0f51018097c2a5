/**
 * The vault's vaultmind daemon as the plugin talks to it: where it listens (the vault's
 * `.vaultmind/daemon.json`, which `vaultmind serve` writes with its port and a fresh bearer
 * token) and what its loopback API answers. Nothing here imports Obsidian: the file reader and
 * the HTTP transport are given, so the same code runs under Node in the tests.
 */

export const DAEMON_FILE = ".vaultmind/daemon.json";

/** Longest text sent as a question for "related memory" (the API refuses a question over 2,000 characters). */
export const RELATED_QUERY_CHARS = 600;

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
}

export interface Health {
  pid: number;
  vault: string;
  ready: boolean;
  loading?: boolean;
}

export interface Status {
  loading: boolean;
  index: { health: string; notice: string | null } | null;
  notes: { total: number } | null;
  leaves: number | null;
  queue: { depth: number; failed: number; health: string } | null;
  problems: { path: string; kind: string; message: string; indexed?: boolean }[];
}

/** One line for the status bar and a longer tip from `GET /v1/status`. */
export function describeStatus(status: Status): { text: string; tip: string } {
  const notes = status.notes?.total ?? 0;
  const health = status.index?.health ?? "unknown";
  // a file with a warning (`indexed`: its front matter, its encoding, a conflict copy) is indexed
  // all the same; only the others are "not indexed" (as `vaultmind status` splits them)
  const skipped = status.problems.filter((problem) => !problem.indexed).length;
  const warned = status.problems.length - skipped;
  const failed = status.queue?.failed ?? 0;
  const worries = [
    health !== "ok" ? `index ${health}` : "",
    skipped ? `${skipped} file${skipped === 1 ? "" : "s"} not indexed` : "",
    warned ? `${warned} file${warned === 1 ? "" : "s"} with warnings` : "",
    failed ? `${failed} failed job${failed === 1 ? "" : "s"}` : "",
  ].filter(Boolean);
  const text = `memory: ${notes.toLocaleString()} notes${worries.length ? " ⚠" : ""}`;
  const tip = [
    `${notes.toLocaleString()} notes, ${(status.leaves ?? 0).toLocaleString()} leaves indexed`,
    ...worries,
    status.index?.notice ?? "",
    worries.length ? "run `vaultmind status` for the details" : "",
  ].filter(Boolean).join("\n");
  return { text, tip };
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

  constructor(message: string, hint: string | null = null, status: number | null = null) {
    super(message);
    this.name = "VaultmindError";
    this.hint = hint;
    this.status = status;
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

/**
 * The link text Obsidian opens for a hit: its note and the block (`^m-…`, written `#^m-…` in a
 * link) or heading (`#Heading`) it sits under, as docs/vault-format.md writes anchors.
 */
export function linkText(hit: Pick<Hit, "note_path" | "anchor">): string {
  const anchor = hit.anchor ?? "";
  return hit.note_path.replace(/\.md$/i, "") + (anchor && !anchor.startsWith("#") ? `#${anchor}` : anchor);
}

/**
 * A search text for "memory related to this note": its title, headings and first words, the
 * front matter, code, links' brackets and markup left out.
 */
export function relatedQuery(title: string, markdown: string): string {
  const body = markdown
    .replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n/, "")
    .replace(/```[\s\S]*?```/g, " ")
    .replace(/!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]/g, (_, target: string, alias?: string) => alias ?? target)
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\^[\w-]+\s*$/gm, "")
    .replace(/[#>*_`~=|-]+/g, " ");
  const words = `${title} ${body}`.split(/\s+/).filter(Boolean);
  let text = "";
  for (const word of words) {
    if (text.length + word.length + 1 > RELATED_QUERY_CHARS) break;
    text = text ? `${text} ${word}` : word;
  }
  return text;
}

/** A client of one vault's daemon. It finds the daemon again when it restarted (new port, token). */
export class DaemonClient {
  private daemon: Daemon | null = null;

  constructor(
    private readonly readFile: ReadFile,
    private readonly transport: Transport,
    private readonly vaultPath: string,
  ) {}

  health(): Promise<Health> {
    return this.call("GET", "/v1/health") as Promise<Health>;
  }

  status(): Promise<Status> {
    return this.call("GET", "/v1/status") as Promise<Status>;
  }

  /** `walk`: the question answered with cited evidence, best first. */
  ask(question: string, limit: number): Promise<Hits> {
    return this.call("POST", "/v1/query", { mode: "walk", args: { query: question, limit } }) as Promise<Hits>;
  }

  /** Leaves of other notes that speak of what the note at `path` speaks of. */
  async related(path: string, title: string, markdown: string, limit: number): Promise<Hits> {
    const query = relatedQuery(title, markdown);
    if (!query) return { hits: [], total: 0, truncated: false };
    const found = (await this.call("POST", "/v1/search", { query, limit: limit + 5 })) as Hits;
    const hits = found.hits.filter((hit) => hit.note_path !== path).slice(0, limit);
    return { hits, total: hits.length, truncated: found.truncated || found.hits.length > limit };
  }

  private async locate(): Promise<Daemon> {
    const text = await this.readFile(DAEMON_FILE);
    if (text === null) {
      throw new VaultmindError(
        "vaultmind is not running for this vault",
        `start it in a terminal: ${serveCommand(this.vaultPath)}`,
      );
    }
    return parseDaemon(text);
  }

  private async call(method: "GET" | "POST", path: string, body?: object, again = true): Promise<unknown> {
    const daemon = this.daemon ?? (await this.locate());
    this.daemon = daemon;
    const request: Request = {
      url: `http://${daemon.host}:${daemon.port}${path}`,
      method,
      headers: { Authorization: `Bearer ${daemon.token}` },
    };
    if (body !== undefined) {
      request.headers["Content-Type"] = "application/json";
      request.body = JSON.stringify(body);
    }
    let reply: Reply;
    try {
      reply = await this.transport(request);
    } catch (error) {
      this.daemon = null; // a daemon started since then listens elsewhere
      if (again) return this.call(method, path, body, false);
      throw new VaultmindError(
        `vaultmind does not answer at ${daemon.host}:${daemon.port} (${describe(error)})`,
        `it may have stopped: start it in a terminal: ${serveCommand(this.vaultPath)}`,
      );
    }
    if (reply.status === 401 && again) {
      this.daemon = null; // the daemon restarted with a fresh token
      return this.call(method, path, body, false);
    }
    if (reply.status >= 400) throw answeredError(reply);
    try {
      return JSON.parse(reply.text);
    } catch {
      throw new VaultmindError(`vaultmind answered ${method} ${path} with something that is not JSON`);
    }
  }
}

function answeredError(reply: Reply): VaultmindError {
  let error: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(reply.text) as { error?: Record<string, unknown> };
    error = parsed.error ?? {};
  } catch {
    // not the API's error shape: said by its status alone
  }
  const message = typeof error.message === "string" ? error.message : `vaultmind answered HTTP ${reply.status}`;
  const hint = typeof error.hint === "string" ? error.hint : null;
  return new VaultmindError(message, hint, reply.status);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
