#!/usr/bin/env node
// `npm run build:agent`: the agent as one JavaScript file, `dist/workspace-agent.mjs`, that runs with plain Node (20 or
// newer) and no node_modules: esbuild bundles agent/main.ts with its dependencies (tar, openpgp, yauzl). Operators
// copy that one file (and Node) to a host: `node workspace-agent.mjs --url … --token …` (docs/running.md, "Agents").
//   --outfile <path>   write it elsewhere
import { chmodSync, mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const at = argv.indexOf("--outfile");
const outfile = resolve(at >= 0 ? argv[at + 1] : join(root, "dist", "workspace-agent.mjs"));
mkdirSync(dirname(outfile), { recursive: true });

const { version } = JSON.parse(await import("node:fs").then((fs) => fs.readFileSync(join(root, "package.json"), "utf8")));
await build({
  entryPoints: [join(root, "agent", "main.ts")],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minify: false,
  legalComments: "inline",
  logLevel: "warning",
  // The bundled CommonJS dependencies (yauzl) require Node's built-ins: give the ES module a `require`.
  banner: {
    js: `// workspace-agent ${version}: built by npm run build:agent from agent/ (one file, no node_modules needed).\nimport { createRequire as __agentRequire } from "node:module";\nconst require = __agentRequire(import.meta.url);`,
  },
});
chmodSync(outfile, 0o755);
console.log(`build:agent: ${outfile} (${Math.round(statSync(outfile).size / 1024)} KiB)`);
