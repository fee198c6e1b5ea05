#!/usr/bin/env node
// `npm run openapi`: writes openapi.json from the routes' zod schemas (the same ones that validate
// requests). The app is bundled for Node with the workerd-only module stubbed; no route runs.
import { build } from "esbuild";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = mkdtempSync(join(tmpdir(), "openapi-"));
try {
  const entry = join(out, "entry.ts");
  writeFileSync(
    entry,
    `import { app } from ${JSON.stringify(join(root, "src/index.ts"))};\n` +
      `import { openApiDocument } from ${JSON.stringify(join(root, "src/jsonapi/openapi.ts"))};\n` +
      `export const doc = openApiDocument(app);\n`,
  );
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    outfile: join(out, "doc.mjs"),
    alias: {
      "cloudflare:workers": join(root, "scripts/stubs/cloudflare-workers.mjs"),
      "cloudflare:sockets": join(root, "scripts/stubs/cloudflare-sockets.mjs"),
    },
    logLevel: "warning",
  });
  const { doc } = await import(pathToFileURL(join(out, "doc.mjs")).href);
  writeFileSync(join(root, "openapi.json"), `${JSON.stringify(doc, null, 2)}\n`);
  console.log(`openapi.json: ${Object.keys(doc.paths).length} paths`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
