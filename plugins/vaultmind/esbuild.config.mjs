// Two bundles: main.js, the plugin Obsidian loads (CommonJS, `obsidian` provided by the app),
// and build/api.mjs, the API client alone, which the tests run under Node against a real daemon.
import { build } from "esbuild";

const common = { bundle: true, target: "es2020", logLevel: "warning", legalComments: "none" };

await build({
  ...common,
  entryPoints: ["src/main.ts"],
  outfile: "main.js",
  format: "cjs",
  platform: "browser",
  external: ["obsidian", "electron"],
});

await build({
  ...common,
  entryPoints: ["src/api.ts"],
  outfile: "build/api.mjs",
  format: "esm",
  platform: "neutral",
});
