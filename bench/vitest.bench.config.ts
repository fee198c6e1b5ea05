import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// `npm run bench`: the service inside workerd with its local DO and D1, measured (not asserted).
export default defineConfig(async () => ({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      remoteBindings: false,
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: await readD1Migrations("./migrations"),
          ADMIN_TOKEN: "bench-admin-token",
          BLOB_SIGNING_KEY: "bench-key",
          RATE_LIMIT: "0",
        },
      },
    }),
  ],
  define: { __BENCH_SIZES__: JSON.stringify(process.env.BENCH_SIZES ?? "1000,100000") },
  test: {
    include: ["bench/**/*.bench.test.ts"],
    setupFiles: ["./test/apply-migrations.ts"],
    testTimeout: 1_800_000,
    hookTimeout: 1_800_000,
  },
}));
