import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig(async () => ({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      remoteBindings: false,
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: await readD1Migrations("./migrations"),
          ADMIN_TOKEN: "test-admin-token",
          BLOB_SIGNING_KEY: "test-blob-signing-key",
          RATE_LIMIT: "0",
          FAULT_INJECTION: "1",
        },
      },
    }),
  ],
  test: {
    include: ["test/**/*.test.ts"],
    silent: "passed-only",
    setupFiles: ["./test/apply-migrations.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 60_000,
  },
}));
