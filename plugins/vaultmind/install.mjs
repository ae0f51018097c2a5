// Copies the built plugin into a vault: node install.mjs VAULT
// (VAULT/.obsidian/plugins/vaultmind/: main.js, manifest.json, styles.css). Nothing else is touched.
import { copyFile, mkdir, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
// a relative path is the caller's: `npm run` runs this from the plugin's folder (INIT_CWD is where it was typed)
const given = process.argv[2];
const vault = given && resolve(process.env.INIT_CWD ?? process.cwd(), given);
if (!vault) {
  console.error("usage: node install.mjs VAULT   (build first: npm ci && npm run build)");
  process.exit(2);
}
try {
  await stat(join(vault, ".obsidian"));
} catch {
  console.error(`${vault} has no .obsidian/ folder: open it in Obsidian once, or give the vault's own folder`);
  process.exit(1);
}
try {
  await stat(join(here, "main.js"));
} catch {
  console.error("main.js is not built yet: run `npm ci && npm run build` here first");
  process.exit(1);
}
const target = join(vault, ".obsidian", "plugins", "vaultmind");
await mkdir(target, { recursive: true });
for (const name of ["main.js", "manifest.json", "styles.css"]) {
  await copyFile(join(here, name), join(target, name));
}
console.log(`installed in ${target}: enable "vaultmind" under Settings → Community plugins`);
