declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** An empty D1 database of the tests alone (vitest.config.ts), for the store-upgrade test. */
    UPGRADE_DB: D1Database;
    /** The stand-in read replica of the consistency tests (test/replica-double.ts). */
    REPLICA_DB: D1Database;
  }
}
