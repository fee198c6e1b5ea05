import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig(async () => ({
  test: {
    projects: [
      {
        // Behaviour tests: inside workerd, against the real Worker, DOs and D1.
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            remoteBindings: false,
            miniflare: {
              // A second, empty database for the store-upgrade test (test/api/organizations.upgrade.test.ts): it applies
              // the migrations before 0016, writes rows as the previous code did, then applies the rest.
              // And a stand-in read replica for the consistency tests (test/replica-double.ts).
              d1Databases: { UPGRADE_DB: "upgrade-test", REPLICA_DB: "replica-test" },
              bindings: {
                TEST_MIGRATIONS: await readD1Migrations("./migrations"),
                ADMIN_TOKEN: "test-admin-token",
                BLOB_SIGNING_KEY: "test-blob-signing-key",
                VARIABLES_ENCRYPTION_KEY: "test-variables-encryption-key",
                STATE_ENCRYPTION_KEY: "test-state-encryption-key",
                RATE_LIMIT: "0",
                FAULT_INJECTION: "1",
                EXPOSE_HOPS: "1",
                AGENT_TOKEN: "test-agent-token",
                // No test reads HashiCorp's releases: the tests of the sync give it a source of their own.
                TERRAFORM_RELEASES_URL: "",
              },
            },
          }),
        ],
        // `npm run fuzz` raises the number of generated inputs per endpoint.
        define: { __FUZZ_RUNS__: JSON.stringify(process.env.FUZZ_RUNS ?? "100"), __FUZZ_SEED__: JSON.stringify(process.env.FUZZ_SEED ?? "") },
        test: {
          name: "workers",
          include: ["test/**/*.test.ts"],
          exclude: ["test/node/**"],
          setupFiles: ["./test/apply-migrations.ts", "./test/no-network.ts"],
          silent: "passed-only",
          testTimeout: 60_000,
          hookTimeout: 60_000,
          teardownTimeout: 60_000,
        },
      },
      {
        // Tooling checks that need Node (e.g. validating the OpenAPI document with a standard validator).
        test: { name: "node", include: ["test/node/**/*.test.ts"], environment: "node" },
      },
    ],
  },
}));
