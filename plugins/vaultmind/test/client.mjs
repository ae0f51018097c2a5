// The plugin's API client driven from Node, as the tests drive it against a real daemon:
//   node test/client.mjs VAULT ask "QUESTION" [LIMIT]
//   node test/client.mjs VAULT related NOTE_PATH [LIMIT]
//   node test/client.mjs VAULT status
// Prints one JSON line: {"result": …} (each hit with the `link_text` the panel opens) or {"error": {"message", "hint", "status"}}. The transport
// is Node's fetch and the file reader node:fs, where the plugin uses Obsidian's.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { DaemonClient, VaultmindError, linkText } from "../build/api.mjs";

const [vault, what, arg, limit] = process.argv.slice(2);

async function read(path) {
  try {
    return await readFile(join(vault, path), "utf8");
  } catch (error) {
    if (error.code === "ENOENT") return null;
    throw error;
  }
}

async function send(request) {
  const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body });
  return { status: response.status, text: await response.text() };
}

const client = new DaemonClient(read, send, vault);
const count = Number(limit ?? 5);
try {
  let result;
  if (what === "ask") result = await client.ask(arg, count);
  else if (what === "related") {
    const markdown = await read(arg);
    result = await client.related(arg, arg.replace(/^.*\//, "").replace(/\.md$/, ""), markdown ?? "", count);
  } else if (what === "status") result = { health: await client.health(), status: await client.status() };
  else throw new Error(`unknown request ${what}`);
  for (const hit of result.hits ?? []) hit.link_text = linkText(hit); // what the panel opens
  console.log(JSON.stringify({ result }));
} catch (error) {
  if (!(error instanceof VaultmindError)) throw error;
  console.log(JSON.stringify({ error: { message: error.message, hint: error.hint, status: error.status } }));
}
